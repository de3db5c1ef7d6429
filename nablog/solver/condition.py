"""Family conditions: which values a family's variables take, as facts of the current database, simplified with z3 and put in words.

Every member of a family is a change (seed 002, Def. 7): each atom it inserts does not hold now
and each it deletes does. Those literals, and a variable's differences from the constants of its
columns in the pattern, are the *candidate conjuncts*; the ones every member meets are kept. Over
the current database they describe a set of bindings; when that set is the members but for a few
values of the parameter, those values are excluded by name and the condition is *exact*: the
values meeting it are exactly the members (issue 16: "D any department other than e5's current
one whose head is not h77").

z3 then drops each conjunct the others imply — given the constraints (they hold now: keys and
functional dependencies above all) and what the database says about the constants named — so
``D not d5`` goes when "D is not e5's department" already says it, and "h77 does not head D"
when "D's head V1 is not h77" does. The result is equivalent to the unsimplified condition on
every database that agrees with the current one on the named constants and meets the
constraints, so on the current one (tests/solver/test_condition.py checks both, by z3 and by
enumeration).

>>> from nablog import Database
>>> from nablog.solver.family import Family
>>> from nablog.lang import Atom, Var
>>> db = Database.from_text("#columns ed(emp, dept). #columns dh(dept, head). m(E, H) :- ed(E, D), dh(D, H). #key ed: emp. #key dh: dept.",
...     {"ed": {("e1", "d1"), ("e2", "d2")}, "dh": {(f"d{i}", f"h{i}") for i in range(1, 6)}})
>>> D, V = Var("D"), Var("V1")
>>> pattern = ((Atom("dh", (D, "h2")), Atom("ed", ("e1", D))), (Atom("dh", (D, V)), Atom("ed", ("e1", "d1"))))
>>> family = Family(pattern, (D, V), D, (("d3", "h3"), ("d4", "h4"), ("d5", "h5")))
>>> print(family_condition(family, db.rules, ModelIndex(db.python_model())))
D any dept other than e1's current dept, whose head V1 is not h2 (3 values)
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
import z3

from ..engines.encoding import INT, EncodedRelation, pack
from ..engines.lookup import ModelIndex
from ..lang import Atom, Comparison, Denial, Literal, Program, Var, constant_sort_key, fd_shape, format_constant
from .family import Family

SHOWN_EXCEPTIONS = 10
"""Most values of the parameter a condition excludes by name; with more it is not exact."""

DOMAIN_LIMIT = 200_000
"""Most bindings enumerated to decide whether a condition is exact."""

Z3_TIMEOUT_MS = 2_000


@dataclass(frozen=True)
class Conjunct:
    """One literal of a condition: ``holds`` (the atom holds now), ``absent`` (it does not) or
    ``differs`` (``variable`` takes none of ``values``)."""

    kind: str
    atom: Atom | None = None
    variable: Var | None = None
    values: tuple = ()

    def variables(self) -> set[Var]:
        if self.kind == "differs":
            return {self.variable}
        return {t for t in self.atom.args if isinstance(t, Var)}

    def meets(self, bindings: Sequence[dict], index: ModelIndex) -> np.ndarray:
        """Which of the bindings meet it over the current database (one vectorized probe)."""
        if self.kind == "differs":
            excluded = set(self.values)
            return np.fromiter((b[self.variable] not in excluded for b in bindings), bool, len(bindings))
        rows = [tuple(b[t] if isinstance(t, Var) else t for t in self.atom.args) for b in bindings]
        found = _contains(index, self.atom.pred, rows)
        return found if self.kind == "holds" else ~found

    def __str__(self) -> str:
        if self.kind == "differs":
            return f"{self.variable} not " + ", ".join(format_constant(v) for v in self.values)
        return f"{self.atom} holds now" if self.kind == "holds" else f"{self.atom} does not hold now"

    def to_json(self) -> dict:
        if self.kind == "differs":
            return {"kind": "differs", "variable": self.variable.name, "values": [format_constant(v) for v in self.values]}
        return {"kind": self.kind, "atom": str(self.atom)}


Column = tuple[str, int]  # (relation, position)


@dataclass(frozen=True)
class Condition:
    """The values of a family's variables: ``conjuncts`` over the current database, each variable
    ranging over the values now in its ``domains`` columns (none: over every constant), plus the
    ``new`` values (fresh constants) the members take. ``exact``: the bindings meeting it are
    exactly the members."""

    variables: tuple[Var, ...]
    domains: tuple[tuple[Column, ...], ...]
    conjuncts: tuple[Conjunct, ...]
    new: tuple = ()
    exact: bool = True
    count: int = 0
    text: str = ""
    drafted: tuple[Conjunct, ...] = field(default=(), compare=False, repr=False)  # before z3 simplified it
    program_constants: frozenset = field(default=frozenset(), compare=False, repr=False)  # "every constant" has them too

    def __str__(self) -> str:
        return self.text

    def values(self, k: int, index: ModelIndex) -> set:
        """The values the ``k``-th variable ranges over (without the new ones)."""
        if not self.domains[k]:
            return index.constants() | self.program_constants
        return set().union(*(index.values(p, i) for p, i in self.domains[k]))

    def to_json(self) -> dict:
        return {
            "domains": {v.name: [f"{p}/{i + 1}" for p, i in d] or "any" for v, d in zip(self.variables, self.domains)},
            "conjuncts": [c.to_json() for c in self.conjuncts],
            "new": [format_constant(v) for v in self.new],
            "exact": self.exact,
        }


def family_condition(family: Family, rules: Program, index: ModelIndex, fresh: Iterable = (), consistent: bool = True, shown: Callable[[Atom], Atom] = lambda a: a, deadline: float | None = None) -> Condition:
    """The condition on ``family``'s variables, simplified and worded (see the module's text).
    ``fresh`` names the new constants of the problem; ``consistent``: the database meets every
    constraint now (then they serve z3 as axioms); ``shown`` gives an atom's name for the user.
    Past the ``deadline`` (a ``time.monotonic()`` value) z3 drops no more conjuncts: the
    condition stays exact, only wordier."""
    variables = family.variables
    members = set(family.bindings)
    fresh = set(fresh)
    keys = _keys(rules)
    domains = _domains(family, index, fresh)
    # An orbit's members are images of one another under automorphisms fixing the pattern's
    # constants: what the first meets, all do.
    checked = [dict(zip(variables, b)) for b in (family.bindings[:1] if family.interchangeable else family.bindings)]
    candidates = [c for c in _candidates(family) if c.meets(checked, index).all()]
    new = tuple(sorted({v for b in members for v in b if v in fresh}, key=constant_sort_key))
    draft = Condition(variables, domains, tuple(candidates), new, True, len(members), program_constants=frozenset(rules.constants()))
    matches = satisfying(draft, index, limit=len(members) + DOMAIN_LIMIT)
    exact = matches is not None and members <= matches
    if exact:
        others = matches - members
        excluded = {b[0] for b in others}
        if others and (len(excluded) > SHOWN_EXCEPTIONS or any(b[0] in excluded for b in members)):
            exact = False
        elif others:
            candidates.append(Conjunct("differs", variable=family.parameter, values=tuple(sorted(excluded, key=constant_sort_key))))
    if not exact:
        first = ", ".join(format_constant(b[0]) for b in family.bindings[:3])
        names = ", ".join(v.name for v in variables)
        text = f"{names}: {len(members):,} values ({family.parameter} = {first}{', …' if len(members) > 3 else ''})"
        return replace(draft, exact=False, text=text, drafted=draft.conjuncts)
    ordered = sorted(candidates, key=lambda c: _wordiness(c, family.parameter, keys, rules))
    if deadline is not None and time.monotonic() >= deadline:
        conjuncts = ordered
    else:
        conjuncts = Background(rules, index, _named(candidates, family), consistent).simplify(ordered, deadline)
    conjuncts = [c if c.atom is None else Conjunct(c.kind, shown(c.atom)) for c in conjuncts]
    condition = replace(draft, conjuncts=tuple(conjuncts), drafted=tuple(candidates))
    return replace(condition, text=render(condition, family.parameter, keys, rules))


def _domains(family: Family, index: ModelIndex, fresh: set) -> tuple[tuple[Column, ...], ...]:
    """Per variable, the columns it takes in the pattern, when every member's (not new) value is
    now in one of them; else () for every constant."""
    atoms = family.pattern[0] + family.pattern[1]
    out = []
    for k, v in enumerate(family.variables):
        columns = tuple(sorted({(a.pred, i) for a in atoms for i, t in enumerate(a.args) if t == v}))
        values = set().union(*(index.values(p, i) for p, i in columns))
        taken = {b[k] for b in family.bindings} - fresh
        out.append(columns if taken <= values else ())
    return tuple(out)


def _wordiness(c: Conjunct, parameter: Var, keys: dict, rules: Program) -> int:
    """The order in which z3 tries to drop conjuncts, least readable first: the parameter's
    excluded values ("D not d5"), then literals with no phrase of their own, then those worded
    through a key ("other than e5's current dept"), then another variable's excluded values
    ("whose head V1 is not h77")."""
    if c.kind == "differs":
        return 0 if c.variable == parameter else 3
    return 2 if _other_than(c, parameter, keys, rules) is not None else 1


def _candidates(family: Family) -> list[Conjunct]:
    """Necessary for any change of the pattern's shape: deleted atoms hold, inserted ones do not,
    and a variable differs from the constants the pattern has in its columns."""
    insert, delete = family.pattern
    out: list[Conjunct] = []
    for a in insert + delete:
        if not any(isinstance(t, Var) for t in a.args):
            continue
        for v in family.variables:
            columns = {(b.pred, i) for b in insert + delete for i, t in enumerate(b.args) if t == v}
            values = {t for b in insert + delete for i, t in enumerate(b.args) if (b.pred, i) in columns and not isinstance(t, Var)}
            if values and not any(c.kind == "differs" and c.variable == v for c in out):
                out.append(Conjunct("differs", variable=v, values=tuple(sorted(values, key=constant_sort_key))))
    out += [Conjunct("absent", a) for a in insert if any(isinstance(t, Var) for t in a.args)]
    out += [Conjunct("holds", a) for a in delete if any(isinstance(t, Var) for t in a.args)]
    return out


def satisfying(condition: Condition, index: ModelIndex, limit: int = DOMAIN_LIMIT) -> set | None:
    """Every binding of the condition's variables (each over its domain and the new values) that
    meets its conjuncts over the current database; None when more than ``limit`` are tried."""
    variables = condition.variables
    bound_by = [c.atom for c in condition.conjuncts if c.kind == "holds"]
    bound = {t for a in bound_by for t in a.args if isinstance(t, Var)}
    free = [v for v in variables if v not in bound]
    ranges = [sorted(condition.values(variables.index(v), index) | set(condition.new), key=constant_sort_key) for v in free]
    if _product_size(ranges) > limit:
        return None
    bindings = []
    for binding in _join(bound_by, {}, index):
        for values in itertools.product(*ranges):
            bindings.append({**binding, **dict(zip(free, values))})
            if len(bindings) > limit:
                return None
    keep = np.ones(len(bindings), bool)
    for c in sorted((c for c in condition.conjuncts if c.kind != "holds"), key=lambda c: c.kind != "differs"):
        left = np.flatnonzero(keep)
        keep[left] = c.meets([bindings[i] for i in left], index)
    domains = [None if not d else condition.values(k, index) for k, d in enumerate(condition.domains)]
    out: set = set()
    for i in np.flatnonzero(keep).tolist():
        row = tuple(bindings[i][v] for v in variables)
        if all(d is None or v in d or v in condition.new for v, d in zip(row, domains)):
            out.add(row)
    return out


def _contains(index: ModelIndex, pred: str, rows: list[tuple]) -> np.ndarray:
    """Which rows are tuples of ``pred`` now: one vectorized probe of an encoded relation (a
    membership test per row cost 40 µs at 1e6 facts, seconds for a family of 10,000)."""
    rel = index.model.get(pred)
    if rel is None or not len(rel) or not rows:
        return np.zeros(len(rows), bool)
    if isinstance(rel, EncodedRelation) and rel.packed and rel.arity:
        ids = rel.dictionary.ids
        columns = [np.fromiter((ids.get(r[j], -1) for r in rows), INT, len(rows)) for j in range(rel.arity)]
        known = np.logical_and.reduce([c >= 0 for c in columns])
        probe = pack([np.where(known, c, 0) for c in columns], len(rel.dictionary))
        return rel.contains_keys(probe) & known
    return np.fromiter((row in rel for row in rows), bool, len(rows))


def _product_size(ranges) -> int:
    size = 1
    for r in ranges:
        size *= len(r)
    return size


def _join(atoms, binding: dict, index: ModelIndex) -> Iterator[dict]:
    if not atoms:
        yield binding
        return
    a, rest = atoms[0], atoms[1:]
    pattern = tuple(binding.get(t) if isinstance(t, Var) else t for t in a.args)
    for row in index.match(a.pred, pattern):
        extended = dict(binding)
        if all(extended.setdefault(t, v) == v for t, v in zip(a.args, row) if isinstance(t, Var)):
            yield from _join(rest, extended, index)


def _named(conjuncts: Sequence[Conjunct], family: Family) -> set:
    named = {t for a in family.pattern[0] + family.pattern[1] for t in a.args if not isinstance(t, Var)}
    for c in conjuncts:
        named |= set(c.values) if c.kind == "differs" else {t for t in c.atom.args if not isinstance(t, Var)}
    return named


class Background:
    """What z3 may assume: the constraints as axioms (when the database meets them now) and, for
    the relations of the conjuncts, whether each tuple of named constants holds now; one solver,
    questions asked with push/pop."""

    NAMED_TUPLES = 4_000  # most facts about named constants told to z3

    def __init__(self, rules: Program, index: ModelIndex, named: set, consistent: bool):
        self.sort = z3.DeclareSort("Value")
        self.index = index
        self.rules = rules
        self.named = sorted(named | {t for _, c in rules.named_constraints() for t in _constants(c)}, key=constant_sort_key)
        self.constants = {v: z3.Const(f"c{i}", self.sort) for i, v in enumerate(self.named)}
        self.relations: dict[tuple[str, int], z3.FuncDeclRef] = {}
        self.solver = z3.Solver()
        self.solver.set("timeout", Z3_TIMEOUT_MS)
        if len(self.constants) > 1:
            self.solver.add(z3.Distinct(*self.constants.values()))
        self.told: set[tuple[str, int]] = set()
        if consistent:
            for _, c in rules.named_constraints():
                axiom = self._axiom(c)
                if axiom is not None:
                    self.solver.add(axiom)

    def relation(self, pred: str, arity: int) -> z3.FuncDeclRef:
        if (pred, arity) not in self.relations:
            self.relations[(pred, arity)] = z3.Function(f"{pred}/{arity}", *([self.sort] * arity), z3.BoolSort())
        return self.relations[(pred, arity)]

    def tell(self, pred: str, arity: int) -> None:
        """Whether each tuple of named constants is a fact of ``pred`` now (a few thousand at most:
        fewer facts only make fewer conjuncts provably redundant)."""
        if (pred, arity) in self.told:
            return
        self.told.add((pred, arity))
        if len(self.named) ** arity > self.NAMED_TUPLES:
            return
        r = self.relation(pred, arity)
        for row in itertools.product(self.named, repeat=arity):
            atom = r(*(self.constants[v] for v in row))
            self.solver.add(atom if self.index.contains(pred, row) else z3.Not(atom))

    def formula(self, c: Conjunct, variables: dict) -> z3.BoolRef:
        term = lambda t: variables.setdefault(t, z3.Const(t.name, self.sort)) if isinstance(t, Var) else self.constants[t]  # noqa: E731
        if c.kind == "differs":
            return z3.And(*[term(c.variable) != self.constants[v] for v in c.values])
        self.tell(c.atom.pred, c.atom.arity)
        atom = self.relation(c.atom.pred, c.atom.arity)(*map(term, c.atom.args))
        return atom if c.kind == "holds" else z3.Not(atom)

    def implies(self, premises: Sequence[Conjunct], conclusion: Sequence[Conjunct]) -> bool:
        """Whether the premises entail every conclusion (unknown within the timeout: no)."""
        variables: dict = {}
        given = [self.formula(c, variables) for c in premises]
        goal = z3.And(*[self.formula(c, variables) for c in conclusion])
        self.solver.push()
        try:
            self.solver.add(*given)
            self.solver.add(z3.Not(goal))
            return self.solver.check() == z3.unsat
        finally:
            self.solver.pop()

    def equivalent(self, first: Sequence[Conjunct], second: Sequence[Conjunct]) -> bool:
        return self.implies(first, second) and self.implies(second, first)

    def simplify(self, conjuncts: Sequence[Conjunct], deadline: float | None = None) -> list[Conjunct]:
        """Drop, in order, each conjunct the remaining ones imply; a ``holds`` conjunct is kept
        (it says what its variables stand for). Past the ``deadline`` the rest are kept."""
        kept = list(conjuncts)
        for c in list(conjuncts):
            if c.kind == "holds":
                continue
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.solver.set("timeout", max(1, min(Z3_TIMEOUT_MS, int(remaining * 1000))))
            rest = [d for d in kept if d is not c]
            if self.implies(rest, [c]):
                kept = rest
        return kept

    def _axiom(self, constraint) -> z3.BoolRef | None:
        """A denial as ``∀ vars: ¬ body``, when its body is atoms and ``=``/``!=``."""
        if not isinstance(constraint, Denial):
            return None
        positive = _positive_vars(constraint)
        if any(isinstance(b, Literal) and not b.positive and any(isinstance(t, Var) and (t.name == "_" or t not in positive) for t in b.atom.args) for b in constraint.body):
            return None  # a variable only under negation is existential there: not a plain ∀
        variables: dict = {}
        anonymous = itertools.count()

        def term(t):
            if isinstance(t, Var):
                key = Var(f"_{next(anonymous)}") if t.name == "_" else t
                return variables.setdefault(key, z3.Const(f"x{len(variables)}", self.sort))
            if t in self.constants:
                return self.constants[t]
            raise _NotPlain

        # A functional dependency's V1 < V2 only picks one of two symmetric pairs: it reads as !=.
        fd = fd_shape(constraint) is not None
        parts = []
        try:
            for b in constraint.body:
                if isinstance(b, Literal):
                    atom = self.relation(b.atom.pred, b.atom.arity)(*map(term, b.atom.args))
                    parts.append(atom if b.positive else z3.Not(atom))
                elif isinstance(b, Comparison) and (b.op in ("=", "!=") or fd):
                    left, right = term(b.left), term(b.right)
                    parts.append(left == right if b.op == "=" else left != right)
                else:
                    return None
        except _NotPlain:
            return None
        body = z3.And(*parts) if parts else z3.BoolVal(True)
        return z3.ForAll(list(variables.values()), z3.Not(body)) if variables else z3.Not(body)


class _NotPlain(Exception):
    """A constraint term that is not a variable or a constant."""


def _positive_vars(denial: Denial) -> set:
    return {t for b in denial.body if isinstance(b, Literal) and b.positive for t in b.atom.args if isinstance(t, Var)}


def _constants(constraint) -> set:
    out = set()
    for b in getattr(constraint, "body", ()):
        terms = b.atom.args if isinstance(b, Literal) else (b.left, b.right) if isinstance(b, Comparison) else ()
        out |= {t for t in terms if isinstance(t, (int, str))}
    return out


def _keys(rules: Program) -> dict[str, list[tuple[tuple[int, ...], int]]]:
    """Per relation, its functional dependencies as (determining positions, determined position)."""
    out: dict[str, list] = {}
    for _, c in rules.named_constraints():
        shape = fd_shape(c) if isinstance(c, Denial) else None
        if shape is not None:
            out.setdefault(shape.pred, []).append((shape.lhs, shape.rhs))
    return out


def _column(rules: Program, pred: str, i: int) -> str | None:
    names = rules.column_names.get(pred)
    return names[i] if names and i < len(names) else None


def _domain_name(domain: tuple[Column, ...], rules: Program) -> str:
    """"dept" for columns all named dept, "value" for every constant, else the columns."""
    if not domain:
        return "value"
    names = {_column(rules, p, i) for p, i in domain}
    if len(names) == 1 and None not in names:
        return names.pop()
    return "value of " + " or ".join(f"{p}/{i + 1}" for p, i in domain)


def render(condition: Condition, parameter: Var, keys: dict, rules: Program) -> str:
    """The condition in words: the parameter's domain and what excludes values of it, then each
    other variable as what a key determines ("whose head V1 is not h77"), the rest literally."""
    domain = {v: _domain_name(d, rules) for v, d in zip(condition.variables, condition.domains)}
    left = list(condition.conjuncts)
    differs = {c.variable: c for c in left if c.kind == "differs"}
    text = f"{parameter} any {domain[parameter]}" + (" or a new one" if condition.new else "")
    excluded: list[str] = []
    clauses: list[str] = []
    for c in list(left):
        phrase = _other_than(c, parameter, keys, rules)
        if phrase is not None:
            excluded.append(phrase)
            left.remove(c)
    if parameter in differs:
        excluded.append(", ".join(format_constant(v) for v in differs[parameter].values))
        left.remove(differs[parameter])
    for c in list(left):
        phrase = _whose(c, parameter, keys, rules)
        if phrase is not None:
            named = c.atom.args[phrase[1]]
            clauses.append(f"whose {phrase[0]} {named}" + (" is not " + ", ".join(format_constant(v) for v in differs[named].values) if named in differs else ""))
            left.remove(c)
            if named in differs:
                left.remove(differs[named])
    if excluded:
        text += " other than " + " and ".join(excluded)
    absent = [str(c.atom) for c in left if c.kind == "absent"]
    clauses += [f"with {c.atom} now" if c.kind == "holds" else str(c) for c in left if c.kind != "absent"]
    if absent:
        clauses.append("without " + " or ".join(absent) + " now")
    if clauses:
        text += ", " + ", ".join(clauses)
    return text + f" ({condition.count:,} value{'' if condition.count == 1 else 's'})"


def _other_than(c: Conjunct, parameter: Var, keys: dict, rules: Program) -> str | None:
    """``not ed(e5, D)`` with a key emp → dept: "e5's current dept"."""
    if c.kind != "absent":
        return None
    for lhs, rhs in keys.get(c.atom.pred, ()):
        args = c.atom.args
        column = _column(rules, c.atom.pred, rhs)
        if column and args[rhs] == parameter and all(not isinstance(args[i], Var) for i in lhs) and sum(isinstance(t, Var) for t in args) == 1:
            owner = " ".join(format_constant(args[i]) for i in lhs)
            return f"{owner}'s current {column}"
    return None


def _whose(c: Conjunct, parameter: Var, keys: dict, rules: Program) -> tuple[str, int] | None:
    """``dh(D, V1)`` with a key dept → head: ("head", position of V1)."""
    if c.kind != "holds":
        return None
    args = c.atom.args
    for lhs, rhs in keys.get(c.atom.pred, ()):
        column = _column(rules, c.atom.pred, rhs)
        if column and isinstance(args[rhs], Var) and args[rhs] != parameter and all(args[i] == parameter or not isinstance(args[i], Var) for i in lhs) and parameter in args:
            if sum(1 for t in args if t == args[rhs]) == 1:
                return column, rhs
    return None
