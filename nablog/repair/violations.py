"""Falsifiers and potential corrections (seed 004, Def. 5.1), grouped per constraint with counts.

``Falsifiers(D, Σ)`` are the ground instances of the denials in Σ that hold in D: each is reported
with its witness facts (the positive database literals of the instance), the ground atoms it
needs to stay false (its negated literals) and, for a negated literal with ``_`` (``not q(X, _)``:
no ``q`` with first value X at all), the pattern of the missing fact. Its potential corrections are
the complements of those literals: delete a witness, insert a fact that the instance needs absent.

Denials of the functional-dependency shape (:func:`nablog.lang.fd_shape`) are not
evaluated by a self-join — whose size is the sum of the squares of the group sizes — but by
grouping the relation on the left-hand side: a group whose tuples carry more than one right-hand
value is one :class:`FdConflict`, and its falsifiers (one per pair of tuples from different
classes) are produced only when they are asked for. Everything else goes to
:func:`nablog.engines.violations.find_violations` on the chosen engine.

>>> from nablog.lang import parse, separate_facts
>>> from nablog.engines import PythonEngine
>>> rules, facts = separate_facts(parse('''
...     #constraint no_bigamy :- m1(X, Y), m1(X, Z), Y != Z.
...     m1(a, b). m1(a, c). m1(d, e).'''))
>>> found = find_falsifiers(rules, PythonEngine().evaluate(rules, facts))
>>> [(v.name, v.count, len(v.groups)) for v in found]
[('no_bigamy', 2, 1)]
>>> [str(f) for f in found.falsifiers()]
[':- m1(a, b), m1(a, c), b != c.', ':- m1(a, c), m1(a, b), c != b.']
>>> sorted(correction_text(c) for c in found.potential_corrections())
['-m1(a, b)', '-m1(a, c)']
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field, fields, replace
from typing import Iterable, Iterator, Mapping

from ..engines import Engine, PythonEngine
from ..engines.encoding import EncodedRelation
from ..engines.violations import Violation, find_violations, name_anonymous
from ..lang import Atom, Comparison, Constant, Denial, Literal, Program, Requirement, Var, row_sort_key
from ..lang.ast import Aggregate, AggregateElement, BinOp, Interval, UnaryOp
from ..lang.delta import GroundAtom, SignedAtom
from .constraints import ConstraintInfo, FdShape, constraint_infos

FEW_GROUPS = 16  # changed groups of a functional dependency looked up by scanning, not by an index

Correction = SignedAtom
"""``("-", atom)`` deletes a fact, ``("+", atom)`` inserts one: a literal of a correction table."""


def correction_text(c: Correction) -> str:
    return f"{c[0]}{Atom(c[1][0], c[1][1])}"


@dataclass(frozen=True)
class Falsifier:
    """One violated ground instance of a constraint (seed 004, Def. 5.1).

    ``positive`` are its witness facts (true), ``negative`` the ground atoms under ``not`` (false),
    ``missing`` the patterns of negated literals with ``_`` (None at the ``_`` positions: no fact
    matching them exists), ``comparisons`` its ground built-in literals (true).
    """

    constraint: str
    positive: tuple[GroundAtom, ...]
    negative: tuple[GroundAtom, ...] = ()
    missing: tuple[tuple[str, tuple], ...] = ()
    comparisons: tuple[Comparison, ...] = ()
    # Aggregates and the comparisons on their values, under the instance's binding: shown, not
    # corrected (a repair through them grounds the program whole, see nablog.solver.whole).
    aggregates: tuple[Aggregate | Comparison, ...] = ()

    def corrections(self) -> list[Correction]:
        """Its ground potential corrections: delete a witness or insert a negated atom (a missing
        fact gets fresh values when a correction table is built)."""
        return [("-", a) for a in self.positive] + [("+", a) for a in self.negative]

    def __str__(self) -> str:
        parts = [str(Atom(p, a)) for p, a in self.positive]
        parts += [f"not {Atom(p, a)}" for p, a in self.negative]
        parts += [f"not {Atom(p, tuple(Var('_') if v is None else v for v in pattern))}" for p, pattern in self.missing]
        parts += [str(c) for c in self.comparisons]
        parts += [str(a) for a in self.aggregates]
        return ":- " + ", ".join(parts) + "."


@dataclass
class FdConflict:
    """Tuples of ``pred`` that agree on the left-hand side ``key`` of a functional-dependency-shaped
    denial and carry more than one right-hand value: ``classes`` maps each value (sorted in the
    order of constants) to its tuples. Every pair of tuples from two classes violates the denial."""

    constraint: str
    shape: FdShape
    key: tuple
    classes: tuple[tuple[Constant, tuple[tuple, ...]], ...]

    @property
    def count(self) -> int:
        sizes = [len(rows) for _, rows in self.classes]
        pairs = (sum(sizes) ** 2 - sum(s * s for s in sizes)) // 2
        return pairs if self.shape.strict else 2 * pairs

    @property
    def rows(self) -> list[tuple]:
        return [r for _, rows in self.classes for r in rows]

    def pairs(self) -> Iterator[tuple[tuple, tuple]]:
        """(first, second) tuples of each violated instance: the first atom's tuple first."""
        for i, (_, low) in enumerate(self.classes):
            for _, high in self.classes[i + 1 :]:
                for s in low:
                    for t in high:
                        if not self.shape.strict:
                            yield (s, t)
                            yield (t, s)
                        elif self.shape.swapped:
                            yield (t, s)
                        else:
                            yield (s, t)

    def falsifiers(self, denial: Denial) -> Iterator[Falsifier]:
        cmp = next(b for b in denial.body if isinstance(b, Comparison))
        rhs = self.shape.rhs
        for s, t in self.pairs():
            left, right = (s[rhs], t[rhs])
            values = {denial_first_var(denial, rhs): left, denial_second_var(denial, rhs): right}
            ground = Comparison(cmp.op, values.get(cmp.left, cmp.left), values.get(cmp.right, cmp.right))
            yield Falsifier(self.constraint, ((self.shape.pred, s), (self.shape.pred, t)), (), (), (ground,))


def denial_first_var(denial: Denial, position: int) -> Var:
    return next(b for b in denial.body if isinstance(b, Literal)).atom.args[position]  # type: ignore[return-value]


def denial_second_var(denial: Denial, position: int) -> Var:
    return [b for b in denial.body if isinstance(b, Literal)][1].atom.args[position]  # type: ignore[return-value]


@dataclass
class ConstraintViolations:
    """The violations of one constraint: its falsifiers (or, for a functional-dependency shape,
    its conflict groups) and the number of violated ground instances."""

    info: ConstraintInfo
    falsifier_list: list[Falsifier] = field(default_factory=list)
    groups: list[FdConflict] = field(default_factory=list)
    violation: Violation | None = None  # from find_violations, when it was evaluated there

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def trusted(self) -> bool:
        return self.info.trusted

    @property
    def count(self) -> int:
        if self.groups:
            return sum(g.count for g in self.groups)
        return len(self.falsifier_list)

    def falsifiers(self) -> Iterator[Falsifier]:
        yield from self.falsifier_list
        for g in self.groups:
            yield from g.falsifiers(self.info.constraint)  # type: ignore[arg-type]

    def to_violation(self) -> Violation:
        """The same report ``nablog check`` gives for this constraint (witnesses sorted alike)."""
        if self.violation is not None:
            return self.violation
        denial = self.info.constraint
        assert isinstance(denial, Denial)
        body = name_anonymous(denial.body)
        atoms = [b.atom for b in body if isinstance(b, Literal) and b.positive]
        instances = []
        for g in self.groups:
            for s, t in g.pairs():
                binding: dict[Var, Constant] = {}
                for atom, row in zip(atoms, (s, t)):
                    binding.update((v, x) for v, x in zip(atom.args, row) if isinstance(v, Var))
                instances.append(((Atom(g.shape.pred, s), Atom(g.shape.pred, t)), binding))
        instances.sort(key=lambda w: [(a.pred, row_sort_key(a.args)) for a in w[0]])
        return Violation(self.name, str(denial), len(instances), tuple(w for w, _ in instances), tuple(b for _, b in instances))


class Falsifiers:
    """``Falsifiers(D, Σ)`` grouped per constraint, in program order (only violated constraints).

    Iterating gives the :class:`ConstraintViolations`; :meth:`falsifiers` every violated ground
    instance; :meth:`potential_corrections` seed 004's ``PotentialCorrections(D, Σ)``.
    """

    def __init__(self, violated: list[ConstraintViolations]):
        self.violated = violated

    def __iter__(self) -> Iterator[ConstraintViolations]:
        return iter(self.violated)

    def __len__(self) -> int:
        return len(self.violated)

    def __bool__(self) -> bool:
        return bool(self.violated)

    @property
    def count(self) -> int:
        return sum(v.count for v in self.violated)

    def falsifiers(self) -> Iterator[Falsifier]:
        for v in self.violated:
            yield from v.falsifiers()

    def potential_corrections(self) -> set[Correction] | None:
        """``PotentialCorrections(D, Σ)``: the complement of every database literal of every
        falsifier; None (seed 004's ⊥) when some falsifier has no database literal to change."""
        out: set[Correction] = set()
        for v in self.violated:
            for g in v.groups:
                out.update(("-", (g.shape.pred, r)) for r in g.rows)
            for f in v.falsifier_list:
                if not (f.positive or f.negative or f.missing):
                    return None
                out.update(f.corrections())
        return out

    def violations(self) -> list[Violation]:
        """As :meth:`nablog.Database.violations` reports them (``nablog check --json``)."""
        return [v.to_violation() for v in self.violated]


def find_falsifiers(
    program: Program,
    model: Mapping[str, Set],
    engine: Engine | None = None,
    *,
    infos: list[ConstraintInfo] | None = None,
    changes: tuple[Mapping[str, Set], Mapping[str, Set]] | None = None,
    only: Iterable[str] | None = None,
) -> Falsifiers:
    """``Falsifiers(D, Σ)`` for the constraints of ``program`` (seed 004, Def. 5.1) over ``model``.

    Parameters
    ----------
    program : Program
        Rules and constraints (facts separated out).
    model : mapping
        The perfect model of the database (every base and derived relation).
    engine : Engine, optional
        Evaluates the constraints that are not of functional-dependency shape (python by default;
        spark for large data).
    infos : list of ConstraintInfo, optional
        :func:`constraint_infos` of ``program``, when the caller has it.
    changes : (gained, lost), optional
        Only instances that use a changed tuple (see ``find_violations``); functional-dependency
        shapes then only look at the groups of the changed tuples.
    only : names, optional
        Check only these constraints.

    Examples
    --------
    >>> from nablog.lang import parse
    >>> program = parse("#constraint fk :- r(X), not s(X, _). #base r/1, s/2.")
    >>> [str(f) for f in find_falsifiers(program, {"r": {(1,), (2,)}, "s": {(1, 5)}}).falsifiers()]
    [':- r(2), not s(2, _).']
    """
    engine = engine or PythonEngine()
    infos = infos if infos is not None else constraint_infos(program)
    wanted = set(only) if only is not None else None
    selected = [c for c in infos if wanted is None or c.name in wanted]
    by_name: dict[str, ConstraintViolations] = {}
    general = [c for c in selected if c.fd is None]
    if general:
        # Each constraint keeps its name (an unnamed denial is known by where it was written).
        sub = Program(
            tuple(
                c.constraint if isinstance(c.constraint, Requirement) else Denial(c.constraint.body, c.name, c.constraint.loc)
                for c in general
            )
        )
        info_of = {c.name: c for c in general}
        for v in find_violations(sub, model, engine, changes):
            info = info_of[v.constraint]
            cv = ConstraintViolations(info, [_falsifier(info, b) for b in v.bindings])
            cv.violation = Violation(v.constraint, str(info.constraint), v.count, v.witnesses, v.bindings)
            by_name[info.name] = cv
    for c in selected:
        if c.fd is None:
            continue
        groups = fd_conflicts(c, model, changes)
        if groups:
            by_name[c.name] = ConstraintViolations(c, [], groups)
    return Falsifiers([by_name[c.name] for c in selected if c.name in by_name])


def fd_conflicts(info: ConstraintInfo, model: Mapping[str, Set], changes=None) -> list[FdConflict]:
    """The conflict groups of a functional-dependency-shaped denial, by grouping its relation on
    the left-hand side (with ``changes``: only the groups of tuples that were gained)."""
    shape = info.fd
    assert shape is not None
    rows = model.get(shape.pred, ())
    lhs, rhs = shape.lhs, shape.rhs
    if changes is not None:
        gained = changes[0].get(shape.pred, ())
        keys = {tuple(r[i] for i in lhs) for r in gained}
        if not keys:
            return []
        from ..engines.lookup import ModelIndex

        # Only the groups of the gained tuples: a scan of the key columns per group when they
        # are few, an index otherwise; never the whole relation in Python.
        patterns = [tuple(key[lhs.index(i)] if i in lhs else None for i in range(shape.arity)) for key in keys]
        if isinstance(rows, EncodedRelation) and len(patterns) <= FEW_GROUPS:
            rows = [r for pattern in patterns for r in rows.select(pattern)]
        else:
            index = ModelIndex({shape.pred: rows})
            rows = [r for pattern in patterns for r in index.match(shape.pred, pattern)]
    groups: dict[tuple, dict[Constant, list[tuple]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[i] for i in lhs), {}).setdefault(row[rhs], []).append(row)
    out = []
    for key, classes in groups.items():
        if len(classes) > 1:
            ordered = sorted(classes.items(), key=lambda kv: row_sort_key((kv[0],)))
            out.append(FdConflict(info.name, shape, key, tuple((v, tuple(sorted(rs, key=row_sort_key))) for v, rs in ordered)))
    out.sort(key=lambda g: row_sort_key(g.key))
    return out


def _falsifier(info: ConstraintInfo, binding: Mapping[Var, Constant]) -> Falsifier:
    constraint = info.constraint
    if isinstance(constraint, Requirement):
        return Falsifier(info.name, (), ((constraint.atom.pred, tuple(constraint.atom.args)),))
    body = name_anonymous(constraint.body)
    positive, negative, missing, comparisons, aggregates = [], [], [], [], []
    for b in body:
        if isinstance(b, Comparison) and all(v in binding for v in b.variables()):
            comparisons.append(Comparison(b.op, _value(b.left, binding), _value(b.right, binding)))
        elif isinstance(b, (Aggregate, Comparison)):
            aggregates.append(_bound(b, binding))
        elif b.positive:
            positive.append((b.atom.pred, tuple(_value(t, binding) for t in b.atom.args)))
        else:
            pattern = tuple(None if isinstance(t, Var) and t.name == "_" else _value(t, binding) for t in b.atom.args)
            (missing if None in pattern else negative).append((b.atom.pred, pattern))
    return Falsifier(info.name, tuple(positive), tuple(negative), tuple(missing), tuple(comparisons), tuple(aggregates))


def _value(term, binding):
    return binding[term] if isinstance(term, Var) else term


def _bound(element, binding):
    """An aggregate or comparison with the variables of ``binding`` replaced by their values (its
    local variables stay)."""
    if isinstance(element, (Var, BinOp, UnaryOp, Interval)):
        if isinstance(element, Var):
            return binding.get(element, element)
        return replace(element, **{f.name: _bound(getattr(element, f.name), binding) for f in fields(element) if f.name != "op"})
    if isinstance(element, Comparison):
        return Comparison(element.op, _bound(element.left, binding), _bound(element.right, binding))
    if isinstance(element, Literal):
        return Literal(Atom(element.atom.pred, tuple(_bound(t, binding) for t in element.atom.args)), element.positive)
    if isinstance(element, Aggregate):
        elements = tuple(AggregateElement(tuple(_bound(t, binding) for t in e.terms), tuple(_bound(c, binding) for c in e.condition)) for e in element.elements)
        return Aggregate(element.function, elements, element.op, _bound(element.bound, binding))
    return element


__all__ = [
    "ConstraintViolations", "Correction", "Falsifier", "Falsifiers", "FdConflict", "correction_text", "fd_conflicts",
    "find_falsifiers",
]
