"""The possible state of a relevance search: the current model plus the atoms that may become true
(``plus``) or false (``minus``) for some subset of the candidate changes, with the lookups the
search makes on both (seed 002, Def. 10: propagation over possible states)."""

from __future__ import annotations

from typing import Iterator

from ..engines.encoding import EncodedRelation, sorted_unique
from ..engines.lookup import ModelIndex
from .bindings import GroundAtom

PLUS, MINUS = "+", "-"

SMALL_RELATION = 100_000
"""Rows up to which a relation the search reads often is copied once as Python tuples (see
:meth:`PossibleState._small_relation`), and past which a domain's size is estimated from the
relation instead of listed (``Relevance._domain_estimate``)."""


class PossibleState:
    """The current model plus the atoms that may become true (plus) or false (minus)."""

    def __init__(self, index: ModelIndex):
        self.index = index
        self.plus: dict[str, set[tuple]] = {}
        self.minus: dict[str, set[tuple]] = {}
        self._plus_by: dict[tuple[str, tuple[int, ...]], dict[tuple, list[tuple]]] = {}
        self._rows: dict[str, set[tuple]] = {}  # small relations as Python tuples
        self._asked: dict[str, int] = {}
        self._values: dict[tuple[str, int], set] = {}
        self._now_by: dict[tuple[str, tuple[int, ...]], dict[tuple, list[tuple]]] = {}

    def now(self, a: GroundAtom) -> bool:
        if self._small_relation(a[0]):
            return a[1] in self._rows[a[0]]
        return self.index.contains(a[0], a[1])

    def _small_relation(self, pred: str) -> bool:
        """Whether ``pred`` is held as Python tuples here: a columnar relation answers one lookup
        in about 0.1 ms, too slow for the tens of thousands a family of candidates asks; a
        relation of up to :data:`SMALL_RELATION` rows is copied once instead — once it has been
        asked a tenth as many questions as it has rows (copying a row costs about a tenth of a
        lookup), so that a search folded to a few questions copies nothing."""
        rows = self._rows.get(pred)
        if rows is not None:
            return True
        asked = self._asked[pred] = self._asked.get(pred, 0) + 1
        size = self.index.size(pred)
        if size <= SMALL_RELATION and asked * 10 >= size:
            self._rows[pred] = set(self.index.match(pred, (None,) * self._arity(pred)))
            return True
        return False

    def values(self, pred: str, position: int) -> set:
        """The distinct values at one position of a relation now. (``ModelIndex.values`` decodes
        through an object array of the whole dictionary: about a second at 1e6 constants.)"""
        key = (pred, position)
        if key not in self._values:
            rel = self.index.model.get(pred)
            if isinstance(rel, EncodedRelation) and len(rel):
                ids = sorted_unique(rel.columns()[position])
                self._values[key] = {rel.dictionary.values[i] for i in ids.tolist()}
            else:
                self._values[key] = self.index.values(pred, position)
        return self._values[key]

    def _arity(self, pred: str) -> int:
        rel = self.index.model.get(pred)
        if rel is None or not len(rel):
            return 0
        return len(next(iter(rel)))

    def _match_small(self, pred: str, pattern: tuple) -> Iterator[tuple]:
        bound = tuple(i for i, v in enumerate(pattern) if v is not None)
        if len(bound) == len(pattern):
            return iter((pattern,) if pattern in self._rows[pred] else ())
        index = self._now_by.get((pred, bound))
        if index is None:
            index = self._now_by[(pred, bound)] = {}
            for row in self._rows[pred]:
                index.setdefault(tuple(row[i] for i in bound), []).append(row)
        return iter(index.get(tuple(pattern[i] for i in bound), ()))

    def may_gain(self, a: GroundAtom) -> bool:
        return a[1] in self.plus.get(a[0], ())

    def may_lose(self, a: GroundAtom) -> bool:
        return a[1] in self.minus.get(a[0], ())

    def fixed(self, a: GroundAtom) -> bool:
        return not (self.may_gain(a) or self.may_lose(a))

    def possibly_true(self, a: GroundAtom) -> bool:
        return self.now(a) or self.may_gain(a)

    def possibly_false(self, a: GroundAtom) -> bool:
        return not self.now(a) or self.may_lose(a)

    def certainly_true(self, a: GroundAtom) -> bool:
        return self.now(a) and not self.may_lose(a)

    def add(self, sign: str, a: GroundAtom) -> bool:
        target = self.plus if sign == PLUS else self.minus
        rows = target.setdefault(a[0], set())
        if a[1] in rows:
            return False
        rows.add(a[1])
        if sign == PLUS:
            for (pred, bound), index in self._plus_by.items():
                if pred == a[0]:
                    index.setdefault(tuple(a[1][i] for i in bound), []).append(a[1])
        return True

    def match_possible(self, pred: str, pattern: tuple) -> Iterator[tuple]:
        """Tuples of ``pred`` that are true now or may become true, matching ``pattern``."""
        yield from self.match_now(pred, pattern)
        plus = self.plus.get(pred)
        if not plus:
            return
        bound = tuple(i for i, v in enumerate(pattern) if v is not None)
        key = (pred, bound)
        index = self._plus_by.get(key)
        if index is None:
            index = self._plus_by[key] = {}
            for row in plus:
                index.setdefault(tuple(row[i] for i in bound), []).append(row)
        yield from index.get(tuple(pattern[i] for i in bound), ())

    def match_now(self, pred: str, pattern: tuple) -> Iterator[tuple]:
        if self._small_relation(pred):
            return self._match_small(pred, pattern)
        return self.index.match(pred, pattern)
