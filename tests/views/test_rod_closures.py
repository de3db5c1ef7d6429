"""Rederivation on Demand over transitive closures (transforms/closure.py) and continued runs
(LivePlan.resume): every mode equals recomputation; a continued run equals a run over the union."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from nablog.engines import PythonEngine
from nablog.lang import Program, parse
from nablog.views.live import LivePlan, Relation, Unsupported
from tests.strategies import base_facts, examples, stratified_programs
from tests.views.test_monitor import assert_modes_agree

STEPS = ["e(X,Y)", "e(X,W), e(W,Y)", "p0(X,Y)", "e(X,Y), X != Y"]
USES = "u1(X) :- f(X), not c(X, X). u2(Y) :- c(1, Y). u3(X) :- f(X), c(Y, X). u4(X, Y) :- c(X, Y), not p2(X, Y)."


def closure_rules(step: str, shape: str) -> str:
    """``c`` the closure of ``step`` (over X, Y; W local) written in ``shape``."""
    if shape == "nonlinear":
        return f"c(X,Y) :- {step}. c(X,Y) :- c(X,Z), c(Z,Y)."
    if shape == "right":
        return f"c(X,Y) :- {step}. c(X,Y) :- {step.replace('Y', 'Z')}, c(Z,Y)."
    return f"c(X,Y) :- {step}. c(X,Y) :- c(X,Z), {step.replace('X', 'Z')}."


@st.composite
def closure_programs(draw) -> Program:
    """Generated rules (p0..p3, negation and recursion) with a closure c over one of STEPS, in one
    of the three shapes, and rules asking c with each adornment (bb under not, bf, fb, ff)."""
    program = draw(stratified_programs())
    text = closure_rules(draw(st.sampled_from(STEPS)), draw(st.sampled_from(["left", "right", "nonlinear"])))
    return program + parse(text + " " + USES)


VIEWS = ["c", "u1", "u2", "u3", "u4", "p0", "p3"]


def test_the_three_shapes_are_closures():
    from nablog.transforms.closure import closures

    for step in STEPS:
        for shape in ("left", "right", "nonlinear"):
            assert closures(parse(closure_rules(step, shape)))["c"].form == shape, (step, shape)


@settings(max_examples=examples(15), deadline=None)
@given(closure_programs(), base_facts(), st.lists(st.tuples(base_facts(max_rows=3), base_facts(max_rows=3)), min_size=1, max_size=3))
def test_closures_all_modes_equal_recomputation(program, facts, commits):
    """rod (closures asked in their linear forms, Q and M continued) = materialized = dred =
    recomputation, commit after commit, with and without the state kept between commits."""
    assert_modes_agree(program, VIEWS, facts, commits)


@settings(max_examples=examples(40), deadline=None)
@given(st.one_of(stratified_programs(), closure_programs()), base_facts(), base_facts(max_rows=4))
def test_a_continued_run_equals_a_run_over_the_union(program, first, more):
    """LivePlan.resume after base rows join (some under not: those heads evaluated again) gives
    the model of the union, and reports exactly the rows each relation gained."""
    try:
        plan = LivePlan(program)
    except Unsupported:
        assume(False)
    env = plan.run({p: Relation(rows) for p, rows in first.items()})
    before = {p: set(env[p]) for p in env}
    gained = plan.resume(env, {p: rows - first[p] for p, rows in more.items()})
    want = PythonEngine().evaluate(program, {p: first[p] | more[p] for p in first})
    for pred in program.derived:
        assert set(env[pred]) == set(want.get(pred, ())), pred
        assert set(gained.get(pred, ())) == set(env[pred]) - before.get(pred, set()), pred


def test_resume_continues_a_closure_and_evaluates_a_negation_again():
    program = parse("c(X,Y) :- e(X,Y). c(X,Y) :- e(X,Z), c(Z,Y). out(X) :- n(X), not c(1, X).")
    plan = LivePlan(program)
    env = plan.run({"e": Relation({(1, 2)}), "n": Relation({(2,), (3,), (4,)})})
    assert sorted(env["out"]) == [(3,), (4,)]
    gained = plan.resume(env, {"e": [(2, 3), (1, 2)]})
    assert sorted(gained["e"]) == [(2, 3)] and sorted(gained["c"]) == [(1, 3), (2, 3)]
    assert sorted(env["c"]) == [(1, 2), (1, 3), (2, 3)] and sorted(env["out"]) == [(4,)]
