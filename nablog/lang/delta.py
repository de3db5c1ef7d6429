"""Delta: ground facts to insert and facts to delete — the one change type of nablog.

A request (seed 002, Def. 6), a realization's changes (Def. 7), an induced update (Def. 2), a
correction table (seed 004, Def. 2.4) and what a commit writes to the fact stores are all a pair
of sets of ground atoms: those to make true (``insert``) and those to make false (``delete``).
:class:`Delta` is that pair; it parses and prints the ``+p(1). -q(a).`` notation, converts to
and from JSON and from rows per relation, substitutes values for new constants, inverts and
composes, and translates between a predicate's shown name ``p`` and the base relation
``base__p`` holding the stored facts of a predicate that also has rules (seed 002 §2.1).

>>> d = Delta.parse("+staff_group(aravindan, infor3). -staff_group(aravindan, infor1).")
>>> print(d)
+staff_group(aravindan, infor3). -staff_group(aravindan, infor1).
>>> print(d.inverse())
+staff_group(aravindan, infor1). -staff_group(aravindan, infor3).
>>> d.to_json()
{'insert': ['staff_group(aravindan, infor3)'], 'delete': ['staff_group(aravindan, infor1)']}
>>> Delta.from_json(d.to_json()) == d
True
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from typing import Callable

from .ast import Atom, Constant, constant_sort_key, row_sort_key
from .errors import Loc, NablogSyntaxError, QueryError, Source
from .parser import parse_atom

SPLIT_PREFIX = "base__"
"""The base relation ``base__p`` holds the stored facts of a predicate ``p`` that also has rules."""

VIOLATION_PREFIX = "violation__"
"""A derived relation ``violation__c`` holds the instances violating constraint ``c`` (never shown)."""

Rows = set[tuple[Constant, ...]]


def _atom_key(signed: tuple[str, Atom]) -> tuple:
    sign, atom = signed
    return (sign == "-", atom.pred, row_sort_key(atom.args))


@dataclass(frozen=True)
class Delta:
    """Ground atoms to make true (``insert``) and false (``delete``); no atom in both.

    Build one from atoms, with :meth:`parse`, :meth:`from_json`, or :meth:`of_rows` (relation
    name to rows). Deltas are values: equal when their sets are, hashable, immutable.

    >>> Delta.of_rows({"e": {(1, 2)}}, {"e": {(2, 3)}}).lines()
    ['+e(1, 2)', '-e(2, 3)']
    """

    insert: frozenset[Atom] = field(default_factory=frozenset)
    delete: frozenset[Atom] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not isinstance(self.insert, frozenset):
            object.__setattr__(self, "insert", frozenset(self.insert))
        if not isinstance(self.delete, frozenset):
            object.__setattr__(self, "delete", frozenset(self.delete))
        both = self.insert & self.delete
        if both:
            atom = min(both, key=lambda a: (a.pred, row_sort_key(a.args)))
            raise QueryError(
                f"a change both inserts and deletes {atom}",
                atom.loc,
                "a fact cannot be made true and false at once; drop one of the two",
            )

    # -- building -------------------------------------------------------------------------------

    @classmethod
    def of_rows(cls, insert: Mapping[str, Iterable[tuple]] = {}, delete: Mapping[str, Iterable[tuple]] = {}) -> "Delta":
        """The delta inserting and deleting the given rows, relation name to rows."""
        return cls(
            frozenset(Atom(p, tuple(r)) for p, rows in insert.items() for r in rows),
            frozenset(Atom(p, tuple(r)) for p, rows in delete.items() for r in rows),
        )

    @classmethod
    def parse(cls, text: str, source: str = "<request>") -> "Delta":
        """Parse ``+atom. -atom. ...``; every atom must be ground and carry a sign.

        The period after an atom may be left out when the next one starts with its sign.

        >>> print(Delta.parse("-p(1)  +q(a, 2)"))
        +q(a, 2). -p(1).
        """
        return _parse(text, source)

    @classmethod
    def from_json(cls, data: Mapping) -> "Delta":
        """The inverse of :meth:`to_json` (and of :meth:`to_rows_json`, whichever ``data`` is).

        >>> Delta.from_json({"e": {"insert": [[1, "a b"]], "delete": []}}).lines()
        ['+e(1, "a b")']
        """
        if set(data) <= {"insert", "delete"} and all(isinstance(v, list) and all(isinstance(a, str) for a in v) for v in data.values()):
            ins = [parse_atom(a, "<json>") for a in data.get("insert", ())]
            dele = [parse_atom(a, "<json>") for a in data.get("delete", ())]
            return cls(frozenset(ins), frozenset(dele))
        return cls.of_rows(
            {p: [tuple(r) for r in c.get("insert", ())] for p, c in data.items()},
            {p: [tuple(r) for r in c.get("delete", ())] for p, c in data.items()},
        )

    # -- reading --------------------------------------------------------------------------------

    def atoms(self) -> list[tuple[str, Atom]]:
        """``("+", atom)`` and ``("-", atom)`` pairs: insertions first, then by predicate and
        arguments in the order of constants."""
        signed = [("+", a) for a in self.insert] + [("-", a) for a in self.delete]
        return sorted(signed, key=_atom_key)

    def lines(self) -> list[str]:
        """One ``+atom`` / ``-atom`` per change, in the order of :meth:`atoms`."""
        return [f"{sign}{atom}" for sign, atom in self.atoms()]

    def __str__(self) -> str:
        return " ".join(f"{line}." for line in self.lines())

    def __bool__(self) -> bool:
        return bool(self.insert or self.delete)

    def __len__(self) -> int:
        return len(self.insert) + len(self.delete)

    @property
    def predicates(self) -> set[str]:
        return {a.pred for a in self.insert} | {a.pred for a in self.delete}

    def by_relation(self) -> dict[str, tuple[Rows, Rows]]:
        """Relation name to (rows inserted, rows deleted).

        >>> Delta.parse("+e(1, 2). -e(3, 4). +f(a).").by_relation()
        {'e': ({(1, 2)}, {(3, 4)}), 'f': ({('a',)}, set())}
        """
        out: dict[str, tuple[Rows, Rows]] = {}
        for a in self.insert:
            out.setdefault(a.pred, (set(), set()))[0].add(tuple(a.args))
        for a in self.delete:
            out.setdefault(a.pred, (set(), set()))[1].add(tuple(a.args))
        return dict(sorted(out.items()))

    def to_json(self) -> dict:
        """``{"insert": [atom text...], "delete": [...]}``, in the order of :meth:`atoms`."""
        atoms = self.atoms()
        return {"insert": [str(a) for s, a in atoms if s == "+"], "delete": [str(a) for s, a in atoms if s == "-"]}

    def to_rows_json(self) -> dict:
        """``{relation: {"insert": [[value...]...], "delete": [...]}}``: values as JSON ints and
        strings, exact for every constant (no parsing on the way back).

        >>> Delta.parse('+e(1, "x\\\\ty").').to_rows_json()
        {'e': {'insert': [[1, 'x\\ty']], 'delete': []}}
        """
        return {
            p: {"insert": [list(r) for r in sorted(ins, key=row_sort_key)], "delete": [list(r) for r in sorted(dele, key=row_sort_key)]}
            for p, (ins, dele) in self.by_relation().items()
        }

    # -- operations -----------------------------------------------------------------------------

    def inverse(self) -> "Delta":
        """¬U (seed 004, Def. 2.2): insertions become deletions and deletions insertions; applied
        after this delta's real changes, it restores the facts as they were."""
        return Delta(self.delete, self.insert)

    def compose(self, other: "Delta") -> "Delta":
        """U ∘ V (seed 004, Def. 2.2): the union of both, without complementary pairs.

        >>> print(Delta.parse("+p(1). -q(2).").compose(Delta.parse("+q(2). +r(3).")))
        +p(1). +r(3).
        """
        ins = self.insert | other.insert
        dele = self.delete | other.delete
        return Delta(ins - dele, dele - ins)

    def then(self, other: "Delta") -> "Delta":
        """This delta followed by ``other``: the change applying both in turn makes (``other``
        wins where they disagree).

        >>> print(Delta.parse("+p(1). -q(2).").then(Delta.parse("+q(2). -p(1).")))
        +q(2). -p(1).
        """
        return Delta((self.insert - other.delete) | other.insert, (self.delete - other.insert) | other.delete)

    def substitute(self, values: Mapping[str, Constant]) -> "Delta":
        """The same changes with string constants (new ones, ``new1``…) replaced by ``values``.

        >>> print(Delta.parse("+p(new1, a).").substitute({"new1": 7}))
        +p(7, a).
        """
        return Delta(frozenset(substitute_atom(a, values) for a in self.insert), frozenset(substitute_atom(a, values) for a in self.delete))

    def real(self, facts: Mapping[str, Iterable[tuple]]) -> "Delta":
        """Only the true changes (seed 002, Def. 1) against stored ``facts``: inserting a stored
        fact or deleting an absent one changes nothing and is dropped.

        >>> Delta.parse("+e(1). +e(2). -e(3). -e(4).").real({"e": {(1,), (3,)}}).lines()
        ['+e(2)', '-e(3)']
        """
        def stored(a: Atom) -> bool:
            return tuple(a.args) in facts.get(a.pred, ())

        return Delta(frozenset(a for a in self.insert if not stored(a)), frozenset(a for a in self.delete if stored(a)))

    def apply_to(self, facts: Mapping[str, Iterable[tuple]]) -> dict[str, Rows]:
        """The relations this delta changes, as they are after it (other relations left out).

        >>> Delta.parse("+e(2). -e(1).").apply_to({"e": {(1,), (3,)}})
        {'e': {(2,), (3,)}}
        """
        return {p: (set(facts.get(p, ())) - dele) | ins for p, (ins, dele) in self.by_relation().items()}

    # -- split predicates (seed 002 §2.1) -------------------------------------------------------

    def stored(self, derived: Iterable[str]) -> "Delta":
        """The delta on stored relations: a predicate with rules names its facts ``base__p``.

        >>> print(Delta.parse("+p(1). +e(2).").stored({"p"}))
        +base__p(1). +e(2).
        """
        split = set(derived)

        def rename(a: Atom) -> Atom:
            return Atom(SPLIT_PREFIX + a.pred, a.args, a.loc) if a.pred in split else a

        return Delta(frozenset(map(rename, self.insert)), frozenset(map(rename, self.delete)))

    def shown(self) -> "Delta":
        """The delta as users see it: ``base__p`` is written ``p`` (the inverse of :meth:`stored`).

        >>> print(Delta.parse("+base__p(1). +e(2).").shown())
        +e(2). +p(1).
        """
        return Delta(frozenset(map(shown_atom, self.insert)), frozenset(map(shown_atom, self.delete)))


KEPT_EFFECTS = 1_000
"""A realization's side effects of at most this many atoms are kept; larger ones are counted,
and computed whenever asked for, without being kept (:meth:`Verifier.effects`)."""


class Update:
    """Ground atoms that appear (``insert``) and disappear (``delete``), sorted.

    Built from atoms, or lazily from relations (``gained``/``lost``: predicate to tuples, as the
    python engine reports an induced update), so that a million-tuple update costs no Python
    objects until its atoms are asked for; ``count`` and ``len`` never build them. ``omit`` names
    ``(pred, row)`` pairs of those relations that are not part of the update (a request's own
    atoms, which are not its side effects), so that leaving them out copies no relation.

    With ``later``, a function returning the update, nothing is computed until it is asked for;
    ``counts``, when given with it, answers ``count()``, ``len`` and ``bool`` without computing
    it. What ``later`` returns is kept when it has at most :data:`KEPT_EFFECTS` atoms (then
    ``computed`` is true); a larger update is computed again each time it is asked for, so that
    printing every realization of a proposal holds one realization's side effects at a time.
    ``lines()``, ``to_json()`` and ``delta`` compute it once for both of their halves.
    """

    def __init__(
        self,
        insert: Iterable[Atom] = (),
        delete: Iterable[Atom] = (),
        *,
        gained=None,
        lost=None,
        omit: Iterable[tuple] = (),
        later: Callable[[], "Update"] | None = None,
        counts: tuple[int, int] | None = None,
    ):
        self._insert = tuple(insert) if gained is None else None
        self._delete = tuple(delete) if lost is None else None
        self._gained = gained or {}
        self._lost = lost or {}
        self._omit = frozenset(omit)
        self._later = later
        self._counts = counts

    @property
    def computed(self) -> bool:
        """Whether the update is held (not computed when asked for)."""
        return self._later is None

    def _known(self) -> "Update":
        """This update when it is held, else the update ``later`` computes (held if small)."""
        later = self._later
        if later is None:
            return self
        done = later()._known()
        counts = done.count()
        if sum(counts) > KEPT_EFFECTS:
            # Not kept: its counts are, so that ``bool`` before ``lines()`` (how every printer
            # asks) computes it once, not twice.
            self._counts = counts
        else:
            # Fields first, ``_later`` last: a thread that sees it cleared sees them all; two
            # threads asking at once compute the same update twice, which is harmless.
            self._insert, self._delete, self._gained, self._lost, self._omit = done._insert, done._delete, done._gained, done._lost, done._omit
            self._later = None
        return done

    def _atoms(self, relations: Mapping[str, Set]) -> tuple[Atom, ...]:
        out = []
        omit = self._omit
        for pred in sorted(relations):
            rows = relations[pred]
            # Columnar relations iterate in the order of constants already.
            ordered = rows if hasattr(rows, "dictionary") else sorted(rows, key=lambda r: tuple(constant_sort_key(v) for v in r))
            shown = shown_name(pred)
            if any(o[0] == pred for o in omit):
                ordered = [row for row in ordered if (pred, row) not in omit]
            out.extend(Atom(shown, row) for row in ordered)
        return tuple(out)

    @property
    def insert(self) -> tuple[Atom, ...]:
        known = self._known()
        if known._insert is None:
            known._insert = known._atoms(known._gained)
        return known._insert

    @property
    def delete(self) -> tuple[Atom, ...]:
        known = self._known()
        if known._delete is None:
            known._delete = known._atoms(known._lost)
        return known._delete

    def count(self, pred: str | None = None) -> tuple[int, int]:
        """How many atoms (of ``pred``, or of every predicate) appear and disappear."""
        if self._later is not None:
            if pred is None and self._counts is not None:
                return self._counts
            return self._known().count(pred)

        def size(atoms, relations):
            if atoms is not None:
                return sum(1 for a in atoms if pred is None or a.pred == pred)
            return sum(len(rows) for p, rows in relations.items() if pred is None or p == pred) - sum(
                1 for p, row in self._omit if (pred is None or p == pred) and row in relations.get(p, ())
            )

        return size(self._insert, self._gained), size(self._delete, self._lost)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __len__(self) -> int:
        return sum(self.count())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Update):
            return False
        mine, theirs = self._known(), other._known()
        return (mine.insert, mine.delete) == (theirs.insert, theirs.delete)

    def __hash__(self) -> int:
        known = self._known()
        return hash((known.insert, known.delete))

    def __repr__(self) -> str:
        if self._later is not None and self._counts is None:
            return "Update(not computed)"
        plus, minus = self.count()
        return f"Update(+{plus}, -{minus})"

    def to_json(self) -> dict:
        known = self._known()
        return {"insert": [str(a) for a in known.insert], "delete": [str(a) for a in known.delete]}

    def lines(self) -> list[str]:
        known = self._known()
        return [f"+{a}" for a in known.insert] + [f"-{a}" for a in known.delete]

    @property
    def delta(self) -> Delta:
        """The same change as a :class:`~nablog.lang.Delta`."""
        known = self._known()
        return Delta(frozenset(known.insert), frozenset(known.delete))



def induced_update(gained: Mapping[str, Set], lost: Mapping[str, Set], preds: Iterable[str] | None = None, omit: Iterable[tuple] = ()) -> Update:
    """Seed 002, Def. 2, from what each relation gained and lost: over ``preds`` (default every
    relation but internal ones), without the ``(pred, row)`` pairs of ``omit``."""
    keep = set(preds) if preds is not None else set(gained) | set(lost)

    def shown(pred: str) -> bool:
        # The stored facts of a split predicate `p` (in `base__p`) show in the view `p` itself.
        return pred in keep and not pred.startswith((VIOLATION_PREFIX, SPLIT_PREFIX))

    return Update(
        gained={p: rows for p, rows in gained.items() if shown(p) and len(rows)},
        lost={p: rows for p, rows in lost.items() if shown(p) and len(rows)},
        omit=omit,
    )


def substitute_atom(atom: Atom, values: Mapping[str, Constant]) -> Atom:
    """``atom`` with each string argument named in ``values`` replaced by its value."""
    return Atom(atom.pred, tuple(values.get(v, v) if isinstance(v, str) else v for v in atom.args), atom.loc)


def shown_name(pred: str) -> str:
    """``p`` for the split base relation ``base__p``; other names unchanged."""
    return pred[len(SPLIT_PREFIX):] if pred.startswith(SPLIT_PREFIX) else pred


def shown_atom(atom: Atom) -> Atom:
    return Atom(shown_name(atom.pred), atom.args, atom.loc) if atom.pred.startswith(SPLIT_PREFIX) else atom


# -- parsing -----------------------------------------------------------------------------------


def _parse(text: str, source: str) -> Delta:
    src = Source(source, text)
    inserts: list[Atom] = []
    deletes: list[Atom] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        sign = text[pos]
        if sign not in "+-":
            raise NablogSyntaxError(
                f"expected '+' or '-' before a request atom, found {text[pos]!r}",
                _loc(src, pos),
                "write insertions as +p(1, 2). and deletions as -q(a).",
            )
        end = _statement_end(text, pos + 1)
        chunk = text[pos + 1 : end]
        try:
            atom = parse_atom(chunk, source)
        except NablogSyntaxError as error:
            column = error.column or 1
            raise NablogSyntaxError(error.message, _loc(src, pos + column), error.hint) from None
        atom = Atom(atom.pred, atom.args, _loc(src, pos + 1))
        if not atom.is_ground():
            var = next(atom.variables(), None)
            if var is None:  # no variable, yet not constants: arithmetic or an interval
                raise QueryError(
                    f"the request atom {atom} holds a computed term",
                    atom.loc,
                    "a request names facts: write each argument as a constant, e.g. +p(3). instead of +p(1+2).",
                )
            raise QueryError(
                f"the request atom {atom} is not ground: {var} has no value",
                atom.loc,
                "a request names ground facts; query first to find the values, e.g. nablog query FILES 'p(X)'",
            )
        (inserts if sign == "+" else deletes).append(atom)
        pos = end + 1
    if not inserts and not deletes:
        raise QueryError("the request is empty", hint="write insertions as +p(1, 2). and deletions as -q(a).")
    both = set(inserts) & set(deletes)
    if both:
        atom = sorted(both, key=str)[0]
        raise QueryError(
            f"the request both inserts and deletes {atom}",
            atom.loc,
            "a fact cannot be made true and false at once; drop one of the two",
        )
    return Delta(frozenset(inserts), frozenset(deletes))


def _statement_end(text: str, pos: int) -> int:
    """Index of the '.' ending the atom that starts at ``pos`` (outside quoted strings), or len."""
    in_string = False
    i = pos
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == ".":
            return i
        elif c in "+-" and i > pos and text[i - 1].isspace() and not text[i + 1 : i + 2].isdigit():
            return i - 1  # the next signed atom starts; the period was left out
        i += 1
    return len(text)


def _loc(source: Source, pos: int) -> Loc:
    line = source.text.count("\n", 0, pos) + 1
    column = pos - (source.text.rfind("\n", 0, pos) + 1) + 1
    return Loc(source, line, column)


__all__ = ["KEPT_EFFECTS", "SPLIT_PREFIX", "VIOLATION_PREFIX", "Delta", "Update", "induced_update", "shown_atom", "shown_name", "substitute_atom"]
