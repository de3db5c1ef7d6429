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


_EMPTY: frozenset = frozenset()

GroundAtom = tuple[str, tuple]
"""A ground atom as the ground problems, the tableaux and repair hold it: ``(pred, args)``."""
SignedAtom = tuple[str, GroundAtom]
"""One change of a change set, ``("+" | "-", ground atom)``: a hitting set's element (seed 003),
a correction literal (seed 004). A set of them is what a :class:`Delta` holds as atoms; the
tableaux and repair keep the signed form because they work literal by literal (membership,
subsets, a change's complement), where a Delta's two sides would be split and joined again."""

KEPT_EFFECTS = 1_000
"""A delta computed later (:meth:`Delta.later`, a realization's side effects) of at most this many
atoms is kept once computed; a larger one is counted, and computed whenever asked for."""


class Delta:
    """Ground atoms to make true (``insert``) and false (``delete``); no atom in both.

    Build one from atoms, with :meth:`parse`, :meth:`from_json`, or :meth:`of_rows` (relation
    name to rows). Deltas are values: equal when their sets are, hashable, immutable.

    A delta is held in the form it was made in, and each form is read without building the
    others: atoms; rows per relation (:meth:`of_rows` — a commit's change, read as rows by the
    stores, the constraint check, the monitors and the model: :meth:`rows`, :meth:`by_relation`);
    relations as the engine gives them, not copied (:meth:`of_relations` — an induced update,
    seed 002 Def. 2, of a million tuples costs no Python object until its atoms are asked for;
    :meth:`count` and ``len`` never make them); or a function computing it when first asked
    (:meth:`later` — a realization's side effects: kept once computed when it has at most
    :data:`KEPT_EFFECTS` atoms, else computed again each time, so that printing every realization
    of a proposal holds one realization's side effects at a time).

    >>> Delta.of_rows({"e": {(1, 2)}}, {"e": {(2, 3)}}).lines()
    ['+e(1, 2)', '-e(2, 3)']
    >>> Delta.of_rows({"e": {(1, 2)}}) == Delta.parse("+e(1, 2).")
    True
    """

    __slots__ = ("_insert", "_delete", "_rows", "_omit", "_later", "_counts")

    def __init__(self, insert: Iterable[Atom] = _EMPTY, delete: Iterable[Atom] = _EMPTY) -> None:
        insert = insert if isinstance(insert, frozenset) else frozenset(insert)
        delete = delete if isinstance(delete, frozenset) else frozenset(delete)
        both = insert & delete
        if both:
            atom = min(both, key=lambda a: (a.pred, row_sort_key(a.args)))
            raise QueryError(
                f"a change both inserts and deletes {atom}",
                atom.loc,
                "a fact cannot be made true and false at once; drop one of the two",
            )
        _fill(self, insert, delete, None)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a Delta is a value: build a new one")

    def __reduce__(self):
        known = self._known()
        if known._rows is not None:
            return (Delta._of_held, (known._relations(),))
        return (Delta, (known._insert, known._delete))

    # -- building -------------------------------------------------------------------------------

    @classmethod
    def of_rows(cls, insert: Mapping[str, Iterable[tuple]] = {}, delete: Mapping[str, Iterable[tuple]] = {}) -> "Delta":
        """The delta inserting and deleting the given rows, relation name to rows (held as rows)."""
        rows: dict[str, tuple[frozenset, frozenset]] = {}
        for p, r in insert.items():
            ins = r if isinstance(r, frozenset) else frozenset(map(tuple, r))
            if ins:
                rows[p] = (ins, _EMPTY)
        for p, r in delete.items():
            dele = r if isinstance(r, frozenset) else frozenset(map(tuple, r))
            if dele:
                ins = rows.get(p, (_EMPTY,))[0]
                both = ins & dele
                if both:
                    raise QueryError(
                        f"a change both inserts and deletes {Atom(p, min(both, key=row_sort_key))}",
                        None,
                        "a fact cannot be made true and false at once; drop one of the two",
                    )
                rows[p] = (ins, dele)
        return cls._of_held(dict(sorted(rows.items())))

    @classmethod
    def of_relations(cls, gained: Mapping[str, Set], lost: Mapping[str, Set], omit: Iterable[tuple] = ()) -> "Delta":
        """The delta of the rows relations ``gained`` and ``lost`` (relation name to a set of rows
        each, disjoint: as the python engine reports an update), held as they are, without the
        ``(pred, row)`` pairs of ``omit`` (which leaves the relations uncopied).

        >>> effects = Delta.of_relations({"p": {(1,), (2,)}}, {"q": {(3,)}}, omit=[("p", (1,))])
        >>> effects.count(), effects.lines()
        ((1, 1), ['+p(2)', '-q(3)'])
        """
        rows = {p: (gained.get(p, _EMPTY), lost.get(p, _EMPTY)) for p in sorted(set(gained) | set(lost))}
        delta = cls._of_held({p: c for p, c in rows.items() if len(c[0]) or len(c[1])})
        if omit:
            object.__setattr__(delta, "_omit", frozenset(omit))
        return delta

    @classmethod
    def later(cls, compute: Callable[[], "Delta"], counts: tuple[int, int] | None = None) -> "Delta":
        """The delta ``compute()`` gives, computed when first asked for; ``counts`` (atoms
        inserted, deleted), when given, answer :meth:`count`, ``len`` and ``bool`` without it."""
        delta = cls._of_held({})
        object.__setattr__(delta, "_later", compute)
        object.__setattr__(delta, "_counts", counts)
        return delta

    @classmethod
    def _of_held(cls, rows: dict[str, tuple]) -> "Delta":
        """A delta holding ``rows`` (relation name to non-empty (inserted, deleted) rows, sorted by
        name, no row in both) as they are."""
        delta = cls.__new__(cls)
        _fill(delta, None, None, rows)
        return delta

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

    # -- the forms it is held in ----------------------------------------------------------------

    @property
    def computed(self) -> bool:
        """Whether the delta is held (not computed when asked for: :meth:`later`)."""
        return self._later is None

    def _known(self) -> "Delta":
        """This delta when it is held, else the delta ``later`` computes (then held, if small)."""
        later = self._later
        if later is None:
            return self
        done = later()._known()
        counts = done.count()
        if sum(counts) > KEPT_EFFECTS:
            # Not kept: its counts are, so that ``bool`` before ``lines()`` (how every printer
            # asks) computes it once, not twice.
            object.__setattr__(self, "_counts", counts)
        else:
            # Fields first, ``_later`` last: a thread that sees it cleared sees them all; two
            # threads asking at once compute the same delta twice, which is harmless.
            _fill(self, done._insert, done._delete, done._rows, done._omit)
            object.__setattr__(self, "_later", None)
        return done

    def _relations(self) -> dict[str, tuple[Set, Set]]:
        """Relation name to (rows inserted, rows deleted), relations with a change only, by name
        (the omitted rows left out: those relations copied once)."""
        known = self._known()
        if known._rows is None:
            out: dict[str, tuple[set, set]] = {}
            for a in known._insert:
                out.setdefault(a.pred, (set(), set()))[0].add(tuple(a.args))
            for a in known._delete:
                out.setdefault(a.pred, (set(), set()))[1].add(tuple(a.args))
            object.__setattr__(known, "_rows", {p: (frozenset(i), frozenset(d)) for p, (i, d) in sorted(out.items())})
        elif known._omit:
            omit = known._omit
            rows = {}
            for p, (i, d) in known._rows.items():
                if any(o[0] == p for o in omit):
                    i, d = frozenset(r for r in i if (p, r) not in omit), frozenset(r for r in d if (p, r) not in omit)
                if i or d:
                    rows[p] = (i, d)
            object.__setattr__(known, "_rows", rows)
            object.__setattr__(known, "_omit", _EMPTY)
        return known._rows

    def _ordered(self, sign: int) -> list[Atom]:
        """The inserted (``sign`` 0) or deleted (1) atoms in the order of :meth:`atoms`, made from
        held relations without sorting what is in order already (columnar relations)."""
        known = self._known()
        if known._rows is None:
            return [a for s, a in known.atoms() if (s == "-") == bool(sign)]
        out = []
        omit = known._omit
        for pred, changes in known._rows.items():
            rows = changes[sign]
            ordered = rows if hasattr(rows, "dictionary") else sorted(rows, key=row_sort_key)
            if omit and any(o[0] == pred for o in omit):
                ordered = [row for row in ordered if (pred, row) not in omit]
            out.extend(Atom(pred, tuple(row)) for row in ordered)
        return out

    @property
    def insert(self) -> frozenset[Atom]:
        """The atoms made true."""
        return self._atom_set(0)

    @property
    def delete(self) -> frozenset[Atom]:
        """The atoms made false."""
        return self._atom_set(1)

    def _atom_set(self, sign: int) -> frozenset[Atom]:
        known = self._known()
        name = ("_insert", "_delete")[sign]
        if getattr(known, name) is None:
            object.__setattr__(known, name, frozenset(known._ordered(sign)))
        return getattr(known, name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Delta):
            return NotImplemented
        mine, theirs = self._known(), other._known()
        if mine._rows is None and theirs._rows is None:
            return mine._insert == theirs._insert and mine._delete == theirs._delete
        return _frozen(mine._relations()) == _frozen(theirs._relations())

    def __hash__(self) -> int:
        return hash(frozenset(_frozen(self._relations()).items()))

    def __repr__(self) -> str:
        if self._later is not None and self._counts is None:
            return "Delta(not computed)"
        plus, minus = self.count()
        if self._later is None and plus + minus <= 20:
            return f"Delta.parse({str(self)!r})"
        return f"Delta(+{plus}, -{minus})"

    # -- reading --------------------------------------------------------------------------------

    def count(self, pred: str | None = None) -> tuple[int, int]:
        """How many atoms (of ``pred``, or of every predicate) are inserted and deleted."""
        if self._later is not None:
            if pred is None and self._counts is not None:
                return self._counts
            return self._known().count(pred)
        if self._rows is None:
            return (sum(1 for a in self._insert if pred is None or a.pred == pred), sum(1 for a in self._delete if pred is None or a.pred == pred))
        counts = [0, 0]
        for p, changes in self._rows.items():
            if pred is None or p == pred:
                for sign in (0, 1):
                    counts[sign] += len(changes[sign]) - sum(1 for q, row in self._omit if q == p and row in changes[sign])
        return counts[0], counts[1]

    def __bool__(self) -> bool:
        return len(self) > 0

    def __len__(self) -> int:
        return sum(self.count())

    def atoms(self) -> list[tuple[str, Atom]]:
        """``("+", atom)`` and ``("-", atom)`` pairs: insertions first, then by predicate and
        arguments in the order of constants."""
        known = self._known()
        if known._rows is not None:
            return [("+", a) for a in known._ordered(0)] + [("-", a) for a in known._ordered(1)]
        signed = [("+", a) for a in known._insert] + [("-", a) for a in known._delete]
        return sorted(signed, key=_atom_key)

    def lines(self) -> list[str]:
        """One ``+atom`` / ``-atom`` per change, in the order of :meth:`atoms`."""
        return [f"{sign}{atom}" for sign, atom in self.atoms()]

    def __str__(self) -> str:
        return " ".join(f"{line}." for line in self.lines())

    @property
    def predicates(self) -> set[str]:
        return set(self._relations())

    def rows(self, relation: str) -> tuple[Set, Set]:
        """The rows inserted into and deleted from ``relation`` (empty when it does not change).

        >>> Delta.parse("+e(1, 2). -e(3, 4).").rows("e")
        (frozenset({(1, 2)}), frozenset({(3, 4)}))
        """
        return self._relations().get(relation, (_EMPTY, _EMPTY))

    def by_relation(self) -> dict[str, tuple[Rows, Rows]]:
        """Relation name to (rows inserted, rows deleted), sorted by name: sets of the caller's own.

        >>> Delta.parse("+e(1, 2). -e(3, 4). +f(a).").by_relation()
        {'e': ({(1, 2)}, {(3, 4)}), 'f': ({('a',)}, set())}
        """
        return {p: (set(i), set(d)) for p, (i, d) in self._relations().items()}

    def sides(self) -> tuple[dict[str, Rows], dict[str, Rows]]:
        """The rows inserted and the rows deleted, each relation name to a set of the caller's
        own (as engines take a change: ``update(..., insert=, delete=)``).

        >>> Delta.parse("+e(1, 2). -e(3, 4). +f(a).").sides()
        ({'e': {(1, 2)}, 'f': {('a',)}}, {'e': {(3, 4)}, 'f': set()})
        """
        rows = self.by_relation()
        return {p: c[0] for p, c in rows.items()}, {p: c[1] for p, c in rows.items()}

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

    def _rows_form(self) -> dict[str, tuple[Set, Set]] | None:
        """The rows per relation when the delta is held as rows (its operations then keep to
        rows, making no atom), else None."""
        known = self._known()
        return known._relations() if known._rows is not None else None

    def inverse(self) -> "Delta":
        """¬U (seed 004, Def. 2.2): insertions become deletions and deletions insertions; applied
        after this delta's real changes, it restores the facts as they were."""
        rows = self._rows_form()
        if rows is not None:
            return Delta._of_held({p: (d, i) for p, (i, d) in rows.items()})
        return Delta(self.delete, self.insert)

    def compose(self, other: "Delta") -> "Delta":
        """U ∘ V (seed 004, Def. 2.2): the union of both, without complementary pairs.

        >>> print(Delta.parse("+p(1). -q(2).").compose(Delta.parse("+q(2). +r(3).")))
        +p(1). +r(3).
        """
        if self._rows_form() is not None or other._rows_form() is not None:
            mine, theirs = self._relations(), other._relations()
            out = {}
            for p in mine.keys() | theirs.keys():
                (i1, d1), (i2, d2) = mine.get(p, (_EMPTY, _EMPTY)), theirs.get(p, (_EMPTY, _EMPTY))
                ins, dele = i1 | i2, d1 | d2
                if ins - dele or dele - ins:
                    out[p] = (ins - dele, dele - ins)
            return Delta._of_held(dict(sorted(out.items())))
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
        rows = self._rows_form()
        if rows is not None:
            return Delta.of_rows(
                {p: frozenset(r for r in i if r not in facts.get(p, ())) for p, (i, _) in rows.items()},
                {p: frozenset(r for r in d if r in facts.get(p, ())) for p, (_, d) in rows.items()},
            )

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
        rows = self._rows_form()
        if rows is not None:
            return _renamed(rows, lambda p: SPLIT_PREFIX + p if p in split else p)

        def rename(a: Atom) -> Atom:
            return Atom(SPLIT_PREFIX + a.pred, a.args, a.loc) if a.pred in split else a

        return Delta(frozenset(map(rename, self.insert)), frozenset(map(rename, self.delete)))

    def shown(self) -> "Delta":
        """The delta as users see it: ``base__p`` is written ``p`` (the inverse of :meth:`stored`).

        >>> print(Delta.parse("+base__p(1). +e(2).").shown())
        +e(2). +p(1).
        """
        rows = self._rows_form()
        if rows is not None:
            return _renamed(rows, shown_name)
        return Delta(frozenset(map(shown_atom, self.insert)), frozenset(map(shown_atom, self.delete)))


def induced_update(gained: Mapping[str, Set], lost: Mapping[str, Set], preds: Iterable[str] | None = None, omit: Iterable[tuple] = ()) -> Delta:
    """Seed 002, Def. 2, from what each relation gained and lost: over ``preds`` (default every
    relation but internal ones), without the ``(pred, row)`` pairs of ``omit``."""
    keep = set(preds) if preds is not None else set(gained) | set(lost)

    def shown(pred: str) -> bool:
        # The stored facts of a split predicate `p` (in `base__p`) show in the view `p` itself.
        return pred in keep and not pred.startswith((VIOLATION_PREFIX, SPLIT_PREFIX))

    return Delta.of_relations(
        {p: rows for p, rows in gained.items() if shown(p) and len(rows)},
        {p: rows for p, rows in lost.items() if shown(p) and len(rows)},
        omit,
    )


def _fill(delta: Delta, insert, delete, rows, omit: frozenset = _EMPTY) -> None:
    object.__setattr__(delta, "_insert", insert)
    object.__setattr__(delta, "_delete", delete)
    object.__setattr__(delta, "_rows", rows)
    object.__setattr__(delta, "_omit", omit)
    object.__setattr__(delta, "_later", None)
    object.__setattr__(delta, "_counts", None)


def _frozen(rows: Mapping[str, tuple[Set, Set]]) -> dict[str, tuple[frozenset, frozenset]]:
    return {p: (i if isinstance(i, frozenset) else frozenset(i), d if isinstance(d, frozenset) else frozenset(d)) for p, (i, d) in rows.items()}


def _renamed(rows: Mapping[str, tuple[Set, Set]], rename: Callable[[str], str]) -> Delta:
    """The delta of ``rows`` with each relation renamed (relations meeting under one name merged)."""
    out: dict[str, tuple[Set, Set]] = {}
    for p, (i, d) in rows.items():
        name = rename(p)
        if name in out:
            i, d = frozenset(out[name][0]) | frozenset(i), frozenset(out[name][1]) | frozenset(d)
        out[name] = (i, d)
    return Delta._of_held(dict(sorted(out.items())))


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


__all__ = ["GroundAtom", "KEPT_EFFECTS", "SignedAtom", "SPLIT_PREFIX", "VIOLATION_PREFIX", "Delta", "induced_update", "shown_atom", "shown_name", "substitute_atom"]
