"""Point lookups in a model: the tuples of a relation that match given values at given positions.

Goal-directed reasoning (view updating, relevance, propagation) asks many small questions of a
large model — "which ``staff_group(aravindan, Z)`` hold?" — and must not scan relations to
answer them. ``ModelIndex`` builds, per relation and set of bound positions, a sorted index once
(``argsort`` of packed keys for the python engine's columnar relations, a dict for plain sets)
and answers each lookup with a binary search.

>>> index = ModelIndex({"e": {(1, 2), (1, 3), (2, 3)}})
>>> sorted(index.match("e", (1, None)))
[(1, 2), (1, 3)]
>>> index.contains("e", (2, 3)), index.contains("e", (3, 3)), index.contains("zzz", (1,))
(True, False, False)
"""

from __future__ import annotations

from collections.abc import Set
from typing import Iterator, Mapping

import numpy as np

from .encoding import INT, EncodedRelation, fits_in_key, pack, row_view, sorted_unique

Pattern = tuple  # constants, with None at the free positions


class ModelIndex:
    """Lookups by bound positions over a model (relation name to set of tuples); read-only."""

    def __init__(self, model: Mapping[str, Set]):
        self.model = model
        self._indexes: dict[tuple[str, tuple[int, ...]], object] = {}
        self._values: dict[tuple[str, int], set] = {}
        self._constants: set | None = None
        self._used: dict | None = None
        # Tables other rooms derive from this model (view updating's classes of interchangeable
        # values, say): the model never changes, so they are built once and kept with it.
        self.tables: dict = {}

    def carry(self, tables: Mapping, commits: list[tuple[Mapping[str, Set], Mapping[str, Set]]]) -> None:
        """Keep the tables of an earlier state, brought up to this model through the commits
        since (each commit's gained and lost tuples, in order) instead of built again: a table
        with a ``maintained(gained, lost)`` method gives the table of the state after one commit
        (None: build it again when asked); any other table is dropped."""
        for key, table in tables.items():
            for gained, lost in commits:
                maintained = getattr(table, "maintained", None)
                table = None if maintained is None else maintained(gained, lost)
                if table is None:
                    break
            if table is not None:
                self.tables[key] = table

    def contains(self, pred: str, row: tuple) -> bool:
        rel = self.model.get(pred)
        return rel is not None and row in rel

    def size(self, pred: str) -> int:
        rel = self.model.get(pred)
        return 0 if rel is None else len(rel)

    def match(self, pred: str, pattern: Pattern) -> Iterator[tuple]:
        """The tuples of ``pred`` equal to ``pattern`` at its non-None positions."""
        rel = self.model.get(pred)
        if rel is None or not len(rel):
            return iter(())
        bound = tuple(i for i, v in enumerate(pattern) if v is not None)
        if len(bound) == len(pattern):
            return iter((pattern,)) if pattern in rel else iter(())
        if not bound:
            return iter(rel)
        index = self._indexes.get((pred, bound))
        if index is None:
            index = self._indexes[(pred, bound)] = _build(rel, bound)
        values = tuple(pattern[i] for i in bound)
        if isinstance(index, dict):
            return iter(index.get(values, ()))
        return index.lookup(values)

    def values(self, pred: str, position: int) -> set:
        """The distinct values at one position of a relation (its active domain there)."""
        key = (pred, position)
        if key not in self._values:
            rel = self.model.get(pred)
            if rel is None or not len(rel):
                self._values[key] = set()
            elif isinstance(rel, EncodedRelation):
                self._values[key] = set(rel.dictionary.decode_column(sorted_unique(rel.columns()[position])))
            else:
                self._values[key] = {row[position] for row in rel}
        return self._values[key]

    def constants(self) -> set:
        """Every constant of the model: its active domain, the values some tuple holds (a
        dictionary also keeps the constants of tuples since deleted — an undone commit's, say —
        and those must not count)."""
        if self._constants is None:
            out: set = set()
            for dictionary, used in self._used_codes().values():
                out.update(dictionary.decode_column(np.flatnonzero(used)))
            for rel in self.model.values():
                if not isinstance(rel, EncodedRelation):
                    for row in rel:
                        out.update(row)
            self._constants = out
        return self._constants

    def has_constant(self, value: object) -> bool:
        """Whether some tuple of the model holds ``value`` (one lookup per dictionary, not a set
        of every constant: that is a second at 1e6 facts)."""
        for dictionary, used in self._used_codes().values():
            code = dictionary.id(value)
            if code is not None and code < len(used) and used[code]:
                return True
        plain = any(not isinstance(rel, EncodedRelation) for rel in self.model.values())
        return plain and value in self.constants()

    def _used_codes(self) -> dict[int, tuple[object, np.ndarray]]:
        """For each dictionary of the model's columnar relations, which of its codes a tuple holds."""
        if self._used is None:
            self._used = {}
            for rel in self.model.values():
                if isinstance(rel, EncodedRelation) and len(rel) and rel.arity:
                    dictionary, used = self._used.setdefault(id(rel.dictionary), (rel.dictionary, np.zeros(len(rel.dictionary), dtype=bool)))
                    for column in rel.columns():
                        used[column] = True
        return self._used


class _SortedIndex:
    """A columnar relation sorted on the bound positions; lookups decode only the matching rows."""

    def __init__(self, rel: EncodedRelation, bound: tuple[int, ...]):
        self.rel = rel
        self.bound = bound
        self.columns = rel.columns()
        size = len(rel.dictionary)
        keyed = [self.columns[i] for i in bound]
        self.packed = fits_in_key(size, len(bound))
        keys = pack(keyed, size) if self.packed else row_view(np.stack(keyed, axis=1))
        self.order = np.argsort(keys, kind="stable")
        self.keys = keys[self.order]

    def lookup(self, values: tuple) -> Iterator[tuple]:
        d = self.rel.dictionary
        ids = [d.id(v) for v in values]
        if any(i is None for i in ids):
            return iter(())
        probe_cols = [np.array([i], INT) for i in ids]
        if self.packed:
            probe = pack(probe_cols, len(d))
        else:
            probe = row_view(np.stack(probe_cols, axis=1))
        lo = int(np.searchsorted(self.keys, probe, "left")[0])
        hi = int(np.searchsorted(self.keys, probe, "right")[0])
        if lo == hi:
            return iter(())
        rows = self.order[lo:hi]
        decoded = [d.decode_column(c[rows]) for c in self.columns]
        return iter(zip(*decoded))


def _build(rel: Set, bound: tuple[int, ...]):
    if isinstance(rel, EncodedRelation):
        return _SortedIndex(rel, bound)
    index: dict[tuple, list[tuple]] = {}
    for row in rel:
        index.setdefault(tuple(row[i] for i in bound), []).append(row)
    return index
