"""View updates through arithmetic equal a brute-force enumeration whose every candidate state is
evaluated by clingo itself, and through aggregates (clingo grounds the whole relevant program, see
nablog.solver.whole); the methods that cannot are refused with a clear message."""

from __future__ import annotations

import itertools

import clingo
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nablog import Database
from nablog.lang import Atom, NablogError, parse
from nablog.repair.tables import repair

from ..strategies import examples, rich_facts, rich_programs

FRESH = "new1"
BASE = ("b", "c")  # both unary

VIEWS = [
    "p(Y) :- b(X), Y = X + {k}.",
    "p(Y) :- b(X), Y = X * {k}.",
    "p(X) :- b(X), c(Y), X + Y = {k}.",
    "p(X) :- b(X), not c(X + {k}).",
    "p(X \\ 2) :- c(X), X > {k}.",
]
USES = ["q :- p(X), X > {k}.", "q :- p(X), c(X).", "q :- b(X), not p(X - {k})."]
DENIALS = ["", ":- b(X), c(Y), X = Y + {k}.", ":- c(X), X * X > {k}."]


def clingo_model(text: str) -> set[str]:
    control = clingo.Control(["--warn=none"])
    control.add("base", [], text)
    control.ground([("base", [])])
    with control.solve(yield_=True) as handle:
        for model in handle:
            return {str(s) for s in model.symbols(atoms=True)}
    return set()  # a denial is violated: no model


def brute_force(rules: str, facts: dict[str, set], request: tuple[str, str] | None, universe: list | dict, most: int | None = None) -> set:
    """The subset-minimal change sets (of at most ``most`` changes) over ``universe`` (or per base
    relation, ``universe[p]``) after which every constraint and the request (if any) hold."""
    changes = [("-" if (v,) in facts[p] else "+", p, v) for p in BASE for v in (universe[p] if isinstance(universe, dict) else universe)]
    sign, atom = request or ("+", "ok")
    minimal: list[int] = []
    sizes = range(len(changes) + 1 if most is None else most + 1)
    masks = (sum(1 << i for i in chosen) for size in sizes for chosen in itertools.combinations(range(len(changes)), size))
    for mask in masks:
        if any(m & mask == m for m in minimal):
            continue
        new = {p: {r[0] for r in rows} for p, rows in facts.items()}
        for i, (s, p, v) in enumerate(changes):
            if mask >> i & 1:
                (new[p].add if s == "+" else new[p].discard)(v)
        text = rules + "\n" + " ".join(f"{p}({v})." if isinstance(v, int) else f'{p}("{v}").' for p, vs in new.items() for v in vs)
        text += "\nok."
        model = clingo_model(text)
        if "ok" not in model:
            continue  # a constraint fails
        if (atom in model) != (sign == "+"):
            continue
        minimal.append(mask)
    out = set()
    for m in minimal:
        chosen = [changes[i] for i in range(len(changes)) if m >> i & 1]
        out.add((frozenset(str(Atom(p, (v,))) for s, p, v in chosen if s == "+"), frozenset(str(Atom(p, (v,))) for s, p, v in chosen if s == "-")))
    return out


@st.composite
def cases(draw):
    k = draw(st.integers(0, 2))
    rules = [draw(st.sampled_from(VIEWS)).format(k=k), draw(st.sampled_from(USES)).format(k=draw(st.integers(0, 2)))]
    denial = draw(st.sampled_from(DENIALS)).format(k=draw(st.integers(0, 4)))
    facts = {p: {(v,) for v in draw(st.sets(st.integers(0, 2), max_size=2))} for p in BASE}
    sign = draw(st.sampled_from("+-"))
    # An insertion through q may need a computed value of p outside the candidate constants
    # (q :- p(X), X > 0 with p(Y) :- b(X), Y = X + 1: inserting b(1) makes p(2)); candidates are
    # the constants in use plus fresh ones, so such realizations are not searched: insertions are
    # requested on p, whose arguments are the request's.
    pred = draw(st.sampled_from(["p", "q"])) if sign == "-" else "p"
    atom = "q" if pred == "q" else f"p({draw(st.integers(0, 3))})"
    return "\n".join(rules + ([denial] if denial else [])), facts, (sign, atom)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_view_updates_through_arithmetic_equal_brute_force(case):
    rules, facts, (sign, atom) = case
    db = Database(parse("#base b/1, c/1.\n" + rules), facts)
    if db.violations():
        return  # propose repairs first; the oracle here assumes a consistent start
    proposal = db.propose(f"{sign}{atom}.", candidates="herbrand", max_fresh=1)
    # A family stands for its members (two that differ in one value fold too).
    got = {(frozenset(map(str, r.insert)), frozenset(map(str, r.delete))) for p in proposal for r in p.members()}
    program = parse(rules)
    used = program.constants() | {v for rows in facts.values() for row in rows for v in row}
    used |= {int(atom[2:-1])} if atom.startswith("p(") else set()
    universe = sorted((v for v in used if isinstance(v, int))) + [FRESH]
    expected = brute_force(rules, facts, (sign, atom), universe)
    # Every realization over the constants in use (plus a fresh one) is found ...
    assert expected <= got
    # ... and every other one nablog finds uses a value the search computed (X - 2 for a
    # negated p(X - 2), say): it is one of brute force's once that value is in the universe.
    for extra in got - expected:
        values = {int(a[2:-1]) for a in extra[0] | extra[1] if a[2:-1].lstrip("-").isdigit()}
        assert extra in brute_force(rules, facts, (sign, atom), sorted(set(universe[:-1]) | values) + [FRESH])


def test_aggregates_are_refused_by_the_transform_and_tableaux_methods():
    db = Database.from_text("dept(a). works(e1, a). c(D, N) :- dept(D), N = #count{E : works(E, D)}.")
    for method in ("transform", "tableaux", "tableaux-materialized"):
        with pytest.raises(NablogError, match=rf"the {method} method does not handle aggregates yet") as error:
            db.propose("-c(a, 1).", method=method)
        assert "use --method asp" in str(error.value)


def test_repair_through_an_aggregate_constraint():
    big = Database.from_text(
        "dept(a). dept(b). works(e1, a). works(e2, a). works(e3, a). works(e4, b). works(e5, b)."
        "#constraint two :- dept(D), N = #count{E : works(E, D)}, N > 1. #protect works(e1, a)."
    )
    result = repair(big.rules, big.model(), limit=20)
    assert (result.status, result.case) == ("complete", "general, through aggregates (the program grounded whole)")
    # A violated instance shows its aggregate over the instance's group.
    assert [str(f) for f in result.falsifiers.falsifiers()] == [
        ":- dept(a), N = #count{E : works(E, a)}, N > 1.",
        ":- dept(b), N = #count{E : works(E, b)}, N > 1.",
    ]
    assert [t.lines() for t in result] == [
        ["-dept(a)", "-dept(b)"],
        ["-dept(a)", "-works(e4, b)"],
        ["-dept(a)", "-works(e5, b)"],
        ["-dept(b)", "-works(e2, a)", "-works(e3, a)"],
        ["-works(e2, a)", "-works(e3, a)", "-works(e4, b)"],
        ["-works(e2, a)", "-works(e3, a)", "-works(e5, b)"],
    ]
    assert [t.lines() for t in repair(big.rules, big.model(), limit=20, policy="min-card")] == [t.lines() for t in result][:3]
    # A required count is met by insertions over the values in use and the program's constants.
    need = Database.from_text("dept(a). works(e1, a). #require ok. ok :- dept(D), N = #count{E : works(E, D)}, N >= 2.")
    assert [t.lines() for t in repair(need.rules, need.model(), limit=20)] == [["+works(2, a)"], ["+dept(2)", "+works(2, 2)", "+works(e1, 2)"]]


DEPARTMENTS = """
dept(d1). dept(d2). works(e1, d1). works(e2, d2). works(e3, d2).
size(D, N) :- dept(D), N = #count{E : works(E, D)}.
#constraint small :- dept(D), N = #count{E : works(E, D)}, N > 2.
"""


def test_a_count_view_is_updated_through_its_group():
    db = Database.from_text(DEPARTMENTS)
    proposal = db.propose("+size(d1, 2).", families=False)
    assert proposal.status == "complete"
    # Candidate employees: works' first column, the request's constants, one new constant (the
    # second would only rename it).
    assert [r.changes.lines() for r in proposal] == [["+works(2, d1)"], ["+works(d1, d1)"], ["+works(e2, d1)"], ["+works(e3, d1)"], ["+works(new1, d1)"]]
    assert [r.side_effects.lines() for r in proposal][0] == ["-size(d1, 1)"]
    assert proposal[4].fresh == ("new1",)
    # A realization that uses every new constant leaves room for others that need more.
    one = db.propose("+size(d1, 2).", max_fresh=1, families=False)
    assert (one.status, one.message) == ("bounded", "5 minimal realizations (bounded: a realization uses every new constant (max_fresh=1): others may need more)")
    assert db.propose("+size(d1, 2).", max_fresh=0).status == "complete"
    folded = db.propose("+size(d1, 2).")
    assert [r.changes.lines() for r in folded] == [["+works(D, d1)"]] and len(folded[0].family) == 5
    deleted = db.propose("-size(d2, 2).")
    assert [(r.changes.lines(), r.side_effects.lines()) for r in deleted] == [
        (["-dept(d2)"], []),
        (["-works(D, d2)"], ["+size(d2, 1)"]),  # e2 or e3: a family, they differ in the employee only
    ]
    assert deleted[1].family.bindings == (("e2",), ("e3",))


def test_a_request_against_an_aggregate_constraint_names_it():
    db = Database.from_text(DEPARTMENTS)
    proposal = db.propose("+size(d2, 3).")
    assert (proposal.status, len(proposal), proposal.reasons) == ("complete", 0, ["constraint small"])
    assert proposal.message == "no realization: the request contradicts constraint small"


def test_protect_holds_through_aggregates():
    db = Database.from_text(DEPARTMENTS + "#protect dept/1, works(e3, d2).")
    assert [r.changes.lines() for r in db.propose("-size(d2, 2).")] == [["-works(e2, d2)"]]
    blocked = Database.from_text(DEPARTMENTS + "#protect works/2.")
    proposal = blocked.propose("+size(d1, 2).")
    assert (len(proposal), proposal.reasons) == (0, ["protected fact works(2, d1)", "protected fact works(d1, d1)", "protected fact works(e2, d1)", "protected fact works(e3, d1)", "protected fact works(new1, d1)", "protected fact works(new2, d1)"])


AGGREGATE_VIEWS = [
    "p(N) :- N = #count{X : b(X)}.",
    "p(S) :- S = #sum{X : b(X)}.",
    "p(X) :- c(X), #count{Y : b(Y), Y != X} = {k}.",
    "p(X) :- c(X), #max{Y : b(Y)} > X.",
    "p(X) :- c(X), N = #count{Y : b(Y), Y > X}, N >= {k}.",
]
AGGREGATE_USES = ["q :- p(X), X > {k}.", "q :- p(X), c(X).", "q :- c(X), not p(X).", "q :- #sum{X : p(X)} > {k}."]
AGGREGATE_DENIALS = ["", ":- #count{X : c(X)} > {k}.", ":- b(X), c(Y), #min{Z : b(Z)} = Y + {k}."]


@st.composite
def aggregate_cases(draw):
    rules = [draw(st.sampled_from(AGGREGATE_VIEWS)).replace("{k}", str(draw(st.integers(0, 2)))), draw(st.sampled_from(AGGREGATE_USES)).replace("{k}", str(draw(st.integers(0, 2))))]
    denial = draw(st.sampled_from(AGGREGATE_DENIALS)).replace("{k}", str(draw(st.integers(0, 2))))
    facts = {p: {(v,) for v in draw(st.sets(st.integers(0, 2), max_size=2))} for p in BASE}
    sign = draw(st.sampled_from("+-"))
    atom = draw(st.sampled_from(["q", f"p({draw(st.integers(0, 3))})"]))
    return "\n".join(rules + ([denial] if denial else [])), facts, (sign, atom)


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(aggregate_cases())
def test_view_updates_through_aggregates_equal_brute_force(case):
    """Every realization of up to three changes over the constants in use and one new constant, as
    clingo evaluates each candidate state, and no other one."""
    rules, facts, (sign, atom) = case
    db = Database(parse("#base b/1, c/1.\n" + rules), facts)
    if db.violations():
        return  # the oracle assumes a consistent start
    proposal = db.propose(f"{sign}{atom}.", candidates="herbrand", max_fresh=1, families=False)
    got = {(frozenset(map(str, r.insert)), frozenset(map(str, r.delete))) for r in proposal if r.size <= 3}
    used = {v for rows in db.python_model().values() for row in rows for v in row} | parse(rules).constants()
    used |= {int(atom[2:-1])} if atom.startswith("p(") else set()
    universe = sorted(v for v in used if isinstance(v, int)) + [FRESH]
    assert got == brute_force(rules, facts, (sign, atom), universe, most=3)


def test_the_transform_method_refuses_arithmetic():
    db = Database.from_text("n(1). d(X, Y) :- n(X), Y = X * 2.")
    with pytest.raises(NablogError, match="the transform method does not handle arithmetic"):
        db.propose("+d(2, 4).", method="transform")
    assert [str(r.insert[0]) for r in db.propose("+d(2, 4).")] == ["n(2)"]


AGGREGATE_CONSTRAINTS = [
    ":- #count{X : b(X)} > {k}.",
    ":- c(X), #count{Y : b(Y), Y < X} >= {k}.",
    ":- c(X), not p(X).",
    ":- c(X), X < {k}, not p(X).",  # the constant is a candidate value: insertions correct it too
    ":- p(X), c(X).",
    ":- not q.\nq :- #sum{X : b(X)} >= {k}.",
]


@st.composite
def repair_cases(draw):
    rules = [draw(st.sampled_from(AGGREGATE_VIEWS)).replace("{k}", str(draw(st.integers(0, 2))))]
    rules.append(draw(st.sampled_from(AGGREGATE_CONSTRAINTS)).replace("{k}", str(draw(st.integers(0, 2)))))
    facts = {p: {(v,) for v in draw(st.sets(st.integers(0, 2), max_size=3))} for p in BASE}
    return "\n".join(rules), facts


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(repair_cases())
def test_repairs_through_aggregates_equal_brute_force(case):
    """Every correction table of up to three changes over each relation's values and the program's
    constants (no new constants in a repair), as clingo evaluates each state, and no other one."""
    rules, facts = case
    db = Database(parse("#base b/1, c/1.\n" + rules), facts)
    result = repair(db.rules, db.model(), limit=1000)
    got = {(frozenset(l[1:] for l in t.lines() if l[0] == "+"), frozenset(l[1:] for l in t.lines() if l[0] == "-")) for t in result if len(t.lines()) <= 3}
    constants = {v for v in parse(rules).constants() if isinstance(v, int)}
    universe = {p: sorted({r[0] for r in facts[p]} | constants) for p in BASE}
    assert got == brute_force(rules, facts, None, universe, most=3)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rich_programs(), rich_facts(max_rows=3), st.data())
def test_single_changes_through_generated_aggregate_programs_equal_clingo(program, facts, data):
    """On generated programs with aggregates, arithmetic, intervals and ∄-negation (the engines'
    strategies): the realizations of one change are exactly the single base changes over every
    constant after which clingo's model (nablog's clingo engine) meets the request."""
    from hypothesis import assume

    from nablog.engines.clingo import ClingoEngine
    from nablog.lang import BaseDeclaration
    from nablog.solver.whole import has_aggregates

    from ..strategies import BASE as RICH_BASE, RICH_DERIVED

    assume(has_aggregates(program))
    db = Database(program.with_statements([BaseDeclaration(tuple(RICH_BASE.items()))]), facts)
    model = db.python_model()
    pred, arity = data.draw(st.sampled_from(RICH_DERIVED))
    present = sorted(model.get(pred, ()), key=str)
    values = sorted({v for rows in model.values() for row in rows for v in row} | db.rules.constants(), key=str)
    if present and data.draw(st.booleans()):
        sign, row = "-", data.draw(st.sampled_from(present))
    else:
        sign, row = "+", tuple(data.draw(st.sampled_from(values + [9])) for _ in range(arity))
    assume((row in model.get(pred, ())) != (sign == "+"))  # (else nothing is to change)
    request = f"{sign}{Atom(pred, row)}."
    proposal = db.propose(request, candidates="herbrand", max_fresh=0, families=False)
    got = {(tuple(map(str, r.insert)), tuple(map(str, r.delete))) for r in proposal if r.size == 1}
    universe = sorted(set(values) | set(row), key=str)
    base = {p: {tuple(r) for r in model.get(p, ())} for p in RICH_BASE}
    expected = set()
    for p, n in RICH_BASE.items():
        for candidate in itertools.product(universe, repeat=n):
            changed = {q: set(rows) for q, rows in base.items()}
            (changed[p].discard if candidate in base[p] else changed[p].add)(candidate)
            after = ClingoEngine().evaluate(db.rules, changed)
            if (row in after.get(pred, ())) == (sign == "+"):
                atom = str(Atom(p, candidate))
                expected.add(((), (atom,)) if candidate in base[p] else ((atom,), ()))
    assert got == expected
