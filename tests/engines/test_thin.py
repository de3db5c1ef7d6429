"""Thin semi-naive rounds run tuple at a time (nablog/engines/thin.py): the same model, rounds and
changes as the columnar rounds, and clingo's model, on chains, on Soufflé's independent_body3
shape, and on generated programs with every switch between the two paths forced."""

import pytest
from hypothesis import HealthCheck, given, settings

import nablog.engines.thin as thin
from nablog.engines import get_engine
from nablog.engines.encoding import decode_facts
from nablog.lang import NablogError, parse

from ..strategies import base_facts, examples, rich_facts, rich_programs, stratified_programs
from . import test_agreement, test_language

SOUFFLE = "b(X+1) :- a(X), X < {n}. a(X) :- b(X), c(Y), d(Y)."
CHAIN = "r(X) :- s(X). r(Y) :- r(X), e(X,Y)."


def rounds_taken(monkeypatch) -> list:
    """Replace ThinRounds.run by one that records the rounds it ran (first, last)."""
    taken = []
    run = thin.ThinRounds.run

    def recording(self, delta, rounds):
        last, left = run(self, delta, rounds)
        taken.append((rounds, last))
        return last, left

    monkeypatch.setattr(thin.ThinRounds, "run", recording)
    return taken


def test_independent_body3_runs_tuple_at_a_time_to_the_bound(monkeypatch):
    taken = rounds_taken(monkeypatch)
    facts = {"b": {(0,)}, "c": {(1,), (2,)}, "d": {(2,), (3,)}}
    model = decode_facts(get_engine("python").evaluate(parse(SOUFFLE.format(n=3000)), facts))
    assert model["a"] == {(i,) for i in range(3001)} and model["b"] == model["a"]
    assert taken == [(0, 6002)]  # every round after the exit rules (a and b alternate; the last finds nothing)
    assert decode_facts(get_engine("clingo").evaluate(parse(SOUFFLE.format(n=3000)), facts)) == model
    # No c(Y), d(Y) in common: no a, and b(0) only.
    model = decode_facts(get_engine("python").evaluate(parse(SOUFFLE.format(n=3000)), {**facts, "d": {(3,)}}))
    assert not model.get("a") and model["b"] == {(0,)}


def test_a_chain_enters_once_its_thin_rounds_paid_for_indexing_the_edges(monkeypatch):
    taken = rounds_taken(monkeypatch)
    n = 2000
    model = get_engine("python").evaluate(parse(CHAIN), {"e": {(i, i + 1) for i in range(n)}, "s": {(0,)}})
    assert len(model["r"]) == n + 1 and (n,) in model["r"]
    # 2,000 edges and r's 5 tuples by then cost 4.01 columnar rounds (ROW_COST): entered before
    # round 5, run to r(2000) in round 2000 and the round 2001 that finds nothing.
    assert taken == [(4, n + 1)]


def test_a_round_that_widens_goes_back_to_columns(monkeypatch):
    # A chain that fans out to 100 successors at node 50: the round after is not thin.
    taken = rounds_taken(monkeypatch)
    edges = {(i, i + 1) for i in range(50)} | {(50, 100 + j) for j in range(100)} | {(100 + j, 300 + j) for j in range(100)} | {(399, 400), (400, 401)}
    model = decode_facts(get_engine("python").evaluate(parse(CHAIN), {"e": edges, "s": {(0,)}}))
    assert decode_facts(get_engine("clingo").evaluate(parse(CHAIN), {"e": edges, "s": {(0,)}}))["r"] == model["r"]
    assert len(model["r"]) == 51 + 200 + 2
    assert taken[0] == (0, 51)  # left at the round that derived the 100 successors
    # Rounds 52 (r(300..399)) and 53 (r(400)) in columns; round 54 too, as 504 tuples cost just
    # over one columnar round to index; then back for round 55, which finds nothing.
    assert taken[1:] == [(54, 55)]


def test_a_round_with_too_many_bindings_is_redone_in_columns(monkeypatch):
    monkeypatch.setattr(thin, "THIN_WORK", 5)
    taken = rounds_taken(monkeypatch)
    facts = {"b": {(0,)}, "c": {(i,) for i in range(10)}, "d": {(i,) for i in range(10)}}
    model = decode_facts(get_engine("python").evaluate(parse(SOUFFLE.format(n=20)), facts))
    assert model["a"] == {(i,) for i in range(21)}
    # A round deriving a visits 21 bindings (b, c, d): each goes back to columns at once; the
    # thin path runs the rounds deriving b, one an entry.
    assert taken[0] == (0, 0) and taken[1:] == [(k, k + 1) for k in range(1, 42, 2)]  # the last finds nothing


def test_an_unbounded_recursion_stops_at_the_count_of_computed_integers(monkeypatch):
    monkeypatch.setattr("nablog.engines.compute.MAX_COMPUTED", 5000)
    with pytest.raises(NablogError, match="computed more than 5,000 new integers"):
        get_engine("python").evaluate(parse("n(0). n(X+1) :- n(X)."), {})


def _forced(monkeypatch, mode: str) -> None:
    if mode == "columns":
        monkeypatch.setattr(thin, "THIN_DELTA", -1)
    elif mode == "at-once":
        monkeypatch.setattr(thin, "ROW_COST", 0)
        monkeypatch.setattr(thin, "THIN_DELTA", 10**9)
    else:  # in and out: one tuple a round is thin, a round of five bindings is too many
        monkeypatch.setattr(thin, "ROW_COST", 0)
        monkeypatch.setattr(thin, "THIN_DELTA", 1)
        monkeypatch.setattr(thin, "THIN_WORK", 5)


MODES = ["columns", "at-once", "in-and-out"]


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(stratified_programs(), base_facts(), base_facts(max_rows=3), base_facts(max_rows=3))
def test_every_path_agrees_with_clingo_and_recomputation(monkeypatch, mode, program, facts, insert, delete):
    _forced(monkeypatch, mode)
    test_agreement.test_python_agrees_with_clingo.hypothesis.inner_test(program, facts)
    test_agreement.test_update_from_a_model_equals_evaluation_from_scratch.hypothesis.inner_test(program, facts, insert, delete)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rich_programs(), rich_facts(), rich_facts(max_rows=2), rich_facts(max_rows=2))
def test_every_path_computes_as_clingo_does(monkeypatch, mode, program, facts, insert, delete):
    _forced(monkeypatch, mode)
    test_language.test_python_clingo_engine_and_clingo_agree.hypothesis.inner_test(program, facts)
    test_agreement.test_update_from_a_model_equals_evaluation_from_scratch.hypothesis.inner_test(program, facts, insert, delete)
