"""Mediated views (seed 000) against a ground evaluator written here: every method, both operators,
after every step of generated update sequences (issue 30).

The programs are generated as data, printed for nablog and evaluated here by brute force: each
clause's variables range over the atoms below it or over a bounded box of integers, comparisons and
domain calls are Python tests, and a deletion adds its pattern to every clause then defining the
predicate as an instance the clause may no longer derive (seed 000 eq. (4)); an insertion is a new
clause. Every variable the generator writes is bound by a body atom, a domain call or bounds
inside the box, so all instances lie in the box and the enumeration is exact. Recursion only passes
constants of ground atoms and head variables unchanged (``e(X, Z), q(Z, Y)``, ``q(Y, X)``), so
every fixpoint is finite.

For each of ``stdel``, ``dred`` and ``recompute`` under ``T_P`` and ``W_P`` the test checks the kept
view (the ground instances of every predicate), query patterns with constants and repeated
variables (``ground()`` and the constrained atoms of ``query()``) and ``contains()``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from nablog.lang import Var, parse_statements
from nablog.views.constraints import Domains
from nablog.views.mediated import MediatedView
from tests.strategies import examples

BOX = range(0, 6)
OPS = {"=": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
ARITY = {"e": 2, "b": 1, "d": 1, "k": 2, "p": 1, "q": 2, "h": 0, "r": 1, "s": 1}
METHODS = ("stdel", "dred", "recompute")


# -- programs as data -------------------------------------------------------------------------------


def is_var(t) -> bool:
    return isinstance(t, str)


@dataclass(frozen=True)
class Cmp:
    op: str
    left: object
    right: object

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


@dataclass(frozen=True)
class In:
    """``in(term, s:function(args))``"""

    term: object
    function: str
    args: tuple

    def __str__(self) -> str:
        return f"in({self.term}, s:{self.function}({', '.join(map(str, self.args))}))"


@dataclass
class Clause:
    head: tuple  # (pred, args)
    constraints: tuple = ()
    body: tuple = ()
    deleted: list = field(default_factory=list)  # (pattern args, comparisons) of later deletions

    def text(self) -> str:
        head = atom_text(self.head)
        if not self.constraints and not self.body:
            return f"{head}."
        return f"{head} :- {', '.join(map(str, self.constraints))} || {', '.join(atom_text(b) for b in self.body)}."


def names(c: Cmp | In) -> set[str]:
    return {t for t in ((c.left, c.right) if isinstance(c, Cmp) else (c.term, *c.args)) if is_var(t)}


def atom_text(atom: tuple) -> str:
    pred, args = atom
    return f"{pred}({', '.join(map(str, args))})" if args else pred


# -- the independent evaluator --------------------------------------------------------------------


def holds(c, theta: dict, answers: dict) -> bool:
    value = lambda t: theta[t] if is_var(t) else t  # noqa: E731
    if isinstance(c, Cmp):
        return OPS[c.op](value(c.left), value(c.right))
    return value(c.term) in answers[c.function](*(value(a) for a in c.args))


def match(args: tuple, row: tuple, theta: dict) -> dict | None:
    out = dict(theta)
    for t, v in zip(args, row):
        if is_var(t):
            if out.setdefault(t, v) != v:
                return None
        elif t != v:
            return None
    return out


def fire(clause: Clause, model: dict, answers: dict):
    thetas = [{}]
    for pred, args in clause.body:
        thetas = [m for theta in thetas for row in model.get(pred, ()) if (m := match(args, row, theta)) is not None]
    rest = sorted({v for c in clause.constraints for v in names(c)} | {a for a in clause.head[1] if is_var(a)})
    for theta in thetas:
        free = [v for v in rest if v not in theta]
        for values in itertools.product(BOX, repeat=len(free)):
            full = {**theta, **dict(zip(free, values))}
            if all(holds(c, full, answers) for c in clause.constraints):
                row = tuple(full[t] if is_var(t) else t for t in clause.head[1])
                if not any(excluded(row, pattern, conds, answers) for pattern, conds in clause.deleted):
                    yield row


def excluded(row: tuple, pattern: tuple, conds: tuple, answers: dict) -> bool:
    theta = match(pattern, row, {})
    return theta is not None and all(holds(c, theta, answers) for c in conds)


def least_model(clauses: list[Clause], answers: dict) -> dict[str, set[tuple]]:
    model: dict[str, set[tuple]] = {p: set() for p in ARITY}
    changed = True
    while changed:
        changed = False
        for clause in clauses:
            for row in list(fire(clause, model, answers)):
                if row not in model[clause.head[0]]:
                    model[clause.head[0]].add(row)
                    changed = True
    return model


# -- generators ---------------------------------------------------------------------------------------

const = st.integers(BOX.start, BOX.stop - 1)
bound = st.integers(BOX.start - 1, BOX.stop)


@st.composite
def comparison(draw, var: str):
    return Cmp(draw(st.sampled_from(sorted(OPS))), var, draw(bound))


@st.composite
def conditions(draw, names: list[str], most: int = 1):
    """Up to ``most`` comparisons of a variable with a constant, or of two variables."""
    out = []
    for _ in range(draw(st.integers(0, most))):
        if len(names) > 1 and draw(st.booleans()):
            a, b = draw(st.permutations(names))[:2]
            out.append(Cmp(draw(st.sampled_from(["<", "<=", "!=", "="])), a, b))
        else:
            out.append(draw(comparison(draw(st.sampled_from(names)))))
    return tuple(out)


@st.composite
def ranged(draw, var: str):
    """Bounds that keep ``var`` inside the box."""
    lo = draw(const)
    hi = draw(st.integers(lo, BOX.stop - 1))
    return (Cmp(">=", var, lo), Cmp("<=", var, hi))


@st.composite
def programs(draw) -> list[Clause]:
    C = lambda *a, **k: Clause(*a, **k)  # noqa: E731
    out = [C(("e", (x, y))) for x, y in sorted(draw(st.sets(st.tuples(const, const), min_size=1, max_size=5)))]
    out += [C(("b", ("X",)), draw(ranged("X")) + draw(conditions(["X"]))) for _ in range(draw(st.integers(1, 2)))]
    out.append(C(("d", ("X",)), (In("X", "f", ()),)))
    out.append(C(("k", ("X", "Y")), (In("Y", "g", ("X",)),), (("e", ("X", "Z")),)))
    templates = {
        "p": [
            lambda: C(("p", ("X",)), draw(conditions(["X"])), (("b", ("X",)),)),
            lambda: C(("p", ("X",)), draw(conditions(["X", "Y"])), (("e", ("X", "Y")), ("p", ("Y",)))),
            lambda: C(("p", ("X",)), (), (("d", ("X",)),)),
            lambda: C(("p", ("X",)), (Cmp("<", "X", "Y"),), (("k", ("X", "Y")),)),
            lambda: C(("p", ("X",)), (In("X", "f", ()),), (("e", ("X", "X")),)),
        ],
        "q": [
            lambda: C(("q", ("X", "Y")), (), (("e", ("X", "Y")),)),
            lambda: C(("q", ("X", "Y")), draw(conditions(["Y"])), (("e", ("X", "Z")), ("q", ("Z", "Y")))),
            lambda: C(("q", ("X", "Y")), (), (("q", ("Y", "X")),)),
            lambda: C(("q", ("X", "X")), draw(conditions(["X"])), (("p", ("X",)),)),
            lambda: C(("q", ("X", draw(const))), (), (("b", ("X",)),)),
        ],
        "h": [
            lambda: C(("h", ()), (), (("p", ("X",)), ("b", ("X",)))),
            lambda: C(("h", ()), draw(conditions(["X"])), (("q", ("X", "X")),)),
            lambda: C(("h", ()), (), (("b", ("Y",)),)),
        ],
        "r": [
            lambda: C(("r", ("X",)), (), (("h", ()), ("b", ("X",)))),
            lambda: C(("r", ("X",)), draw(conditions(["X", "Y"])), (("q", ("X", "Y")), ("p", ("Y",)))),
            lambda: C(("r", ("X",)), (In("X", "f", ()),), (("q", ("X", "X")),)),
            lambda: C(("r", ("Y",)), (In("Z", "g", ("X",)), Cmp("<", "Y", "Z")), (("e", ("X", "X")), ("p", ("Y",)))),
            lambda: C(("r", ("X",)), (Cmp("=", "X", draw(const)),), (("b", ("Y",)),)),
        ],
        "s": [
            lambda: C(("s", ("X",)), draw(conditions(["X"])), (("r", ("X",)),)),
            lambda: C(("s", ("X",)), (), (("r", ("X",)), ("q", ("X", draw(const))))),
            lambda: C(("s", ("X",)), (), (("e", ("Y", "X")), ("s", ("Y",)))),
        ],
    }
    for pred in ("p", "q", "h", "r", "s"):
        chosen = draw(st.lists(st.integers(0, len(templates[pred]) - 1), min_size=1 if pred in "pq" else 0, max_size=3))
        out += [templates[pred][k]() for k in chosen]
    return out


@st.composite
def answers(draw) -> dict:
    f = frozenset(draw(st.sets(const, max_size=4)))
    g = {x: frozenset(draw(st.sets(const, max_size=3))) for x in BOX}
    return {"f": lambda: f, "g": lambda x: g.get(x, frozenset())}


@st.composite
def pattern(draw, pred: str) -> tuple:
    """Arguments for a pattern of ``pred``: variables (maybe repeated) and constants."""
    return tuple(draw(st.one_of(st.sampled_from(["X", "Y"]), const)) for _ in range(ARITY[pred]))


@st.composite
def steps(draw):
    kind = draw(st.sampled_from(["delete", "delete", "insert", "domains"]))
    if kind == "domains":
        return ("domains", draw(answers()))
    pred = draw(st.sampled_from(sorted(ARITY)))
    args = draw(pattern(pred))
    if kind == "insert" and pred == "e":  # e stays ground: it binds the arguments of domain calls
        args = tuple(draw(const) for _ in args)
    names = sorted({a for a in args if is_var(a)})
    if kind == "delete":
        return ("delete", pred, args, draw(conditions(names, most=2)) if names else ())
    conds = tuple(c for v in names for c in draw(ranged(v))) + (draw(conditions(names)) if names else ())
    return ("insert", pred, args, conds)


def update_text(pred: str, args: tuple, conds: tuple) -> str:
    atom = atom_text((pred, args))
    return f"{atom} || {', '.join(map(str, conds))}" if conds else atom


# -- the check ----------------------------------------------------------------------------------------


def assert_view(view: MediatedView, model: dict, patterns: list[tuple], probes: list[tuple], label: str) -> None:
    for pred, arity in ARITY.items():
        if not any(c.head.pred == pred for c in view.clauses):
            continue
        over = ", ".join("XYZW"[:arity])
        rows, complete = view.ground(f"{pred}({over})" if arity else pred)
        assert complete and set(rows) == model[pred], (label, pred, sorted(rows), sorted(model[pred]))
        for row in model[pred]:
            assert view.contains(atom_text((pred, row))), (label, pred, row)
        for row in probes:
            if len(row) == arity and row not in model[pred]:
                assert not view.contains(atom_text((pred, row))), (label, pred, row)
    for pred, args in patterns:
        if not any(c.head.pred == pred for c in view.clauses):
            continue
        expected = {row for row in model[pred] if match(args, row, {}) is not None}
        rows, complete = view.ground(atom_text((pred, args)))
        assert complete and set(rows) == expected, (label, "ground", pred, args, sorted(rows), sorted(expected))
        names = list(dict.fromkeys(a for a in args if is_var(a)))
        found = set()
        for atom, constraint in view.query(atom_text((pred, args))):
            solutions, complete = view.solver.solutions(constraint, tuple(Var(n) for n in names))
            assert complete
            for values in solutions:
                theta = dict(zip(names, values))
                found.add(tuple(theta[a] if is_var(a) else a for a in args))
        assert found == expected, (label, "query", pred, args, sorted(found), sorted(expected))


@settings(max_examples=examples(12), deadline=None)
@given(programs(), answers(), st.lists(steps(), min_size=1, max_size=3), st.data())
def test_every_method_equals_the_enumerated_least_model(program, first, sequence, data):
    current = {"answers": first}
    domains = Domains()
    domains.register("s", f=lambda: current["answers"]["f"](), g=lambda x: current["answers"]["g"](x))
    text = "\n".join(c.text() for c in program)
    statements = parse_statements(text)
    views = {(op, m): MediatedView(statements, domains, operator=op) for op in ("T", "W") for m in METHODS}
    clauses = [Clause(c.head, c.constraints, c.body) for c in program]
    patterns = [(p, data.draw(pattern(p))) for p in data.draw(st.lists(st.sampled_from(sorted(ARITY)), max_size=4))]
    probes = data.draw(st.lists(st.tuples(const) | st.tuples(const, const) | st.just(()), max_size=6))
    model = least_model(clauses, current["answers"])
    for (op, m), view in views.items():
        assert_view(view, model, patterns, probes, f"{op}_P fresh")
    for k, step in enumerate(sequence):
        if step[0] == "domains":
            current["answers"] = step[1]
            for (op, m), view in views.items():
                work = view.external_change()
                assert op == "T" or work == 0
        elif step[0] == "delete":
            _, pred, args, conds = step
            if not any(c.head[0] == pred for c in clauses):
                continue
            for c in clauses:
                if c.head[0] == pred:
                    c.deleted.append((args, conds))
            for (op, m), view in views.items():
                view.delete(update_text(pred, args, conds), method=m)
        else:
            _, pred, args, conds = step
            clauses.append(Clause((pred, args), conds))
            for view in views.values():
                view.insert(update_text(pred, args, conds))
        model = least_model(clauses, current["answers"])
        for (op, m), view in views.items():
            assert_view(view, model, patterns, probes, f"{op}_P {m} after step {k + 1} {step[:2]}")
