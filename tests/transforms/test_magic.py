"""Magic-set rewriting: the same answers as full evaluation, goal-directed, stratified."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.strategies import examples

from nablog import Database
from nablog.cli import main
from nablog.engines import PythonEngine
from nablog.lang import Atom, Var, parse, parse_atom, stratify
from nablog.transforms.magic import magic_sets

from ..strategies import CONSTANTS, DERIVED, base_facts, stratified_programs

CHAIN = "p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y). " + " ".join(f"e({i},{i + 1})." for i in range(30))


def answers(program, facts, query: Atom, magic: bool) -> set[tuple]:
    """The rows of the query's predicate matching it, by full evaluation or by the rewriting."""
    if magic:
        rewrite = magic_sets(program, query)
        rows = PythonEngine().evaluate(rewrite.program, facts).get(rewrite.answer.pred, set())
    else:
        rows = PythonEngine().evaluate(program, facts).get(query.pred, set())
    out = set()
    for row in rows:
        binding: dict = {}
        if all(
            (t == v) if not isinstance(t, Var) else (t.name == "_" or binding.setdefault(t, v) == v)
            for t, v in zip(query.args, row)
        ):
            out.add(tuple(row))
    return out


def test_recursion_computes_only_what_the_query_needs():
    program = parse(CHAIN)
    rewrite = magic_sets(program, parse_atom("p(25, Y)"))
    model = PythonEngine().evaluate(rewrite.program, {})
    # 5 start nodes (25..29) instead of 30: 15 paths, not the 465 of the whole closure.
    assert len(model["a_bf__p"]) == 15
    assert len(PythonEngine().evaluate(program, {})["p"]) == 465
    assert answers(program, {}, parse_atom("p(25, Y)"), True) == {(25, y) for y in range(26, 31)}


def test_bound_second_argument_follows_the_recursion_backwards():
    program = parse(CHAIN)
    rewrite = magic_sets(program, parse_atom("p(X, 3)"))
    # The recursive call p(Z, Y) is taken first (its Y is bound) and asks nothing new.
    assert [str(r) for r in rewrite.program.rules if not r.is_fact() or r.head[0].pred != "e"] == [
        "m_fb__p(3).",
        "a_fb__p(X, Y) :- m_fb__p(Y), e(X, Y).",
        "a_fb__p(X, Y) :- m_fb__p(Y), a_fb__p(Z, Y), e(X, Z).",
    ]
    assert answers(program, {}, parse_atom("p(X, 3)"), True) == {(0, 3), (1, 3), (2, 3)}


def test_negation_that_would_recurse_through_magic_falls_back_to_full_evaluation():
    # s is called under `not` after q; q depends on s: the goal-directed program would have
    # s -> m_s -> not q -> q -> s. The rewrite evaluates q (and s) in full instead.
    program = parse(
        "p(X) :- t(X), not q(X), s(X, Y). q(X) :- s(X, Y), u(Y). s(X, Y) :- r(X, Y). "
        "t(1). t(2). t(3). r(1, 5). r(2, 6). r(3, 7). u(6)."
    )
    rewrite = magic_sets(program, parse_atom("p(X)"))
    assert rewrite.full == frozenset({"q", "s"})
    assert "not stratified" in rewrite.note and "recursion through negation" in rewrite.note
    stratify(rewrite.program)
    assert answers(program, {}, parse_atom("p(X)"), True) == {(1,), (3,)}


def test_queries_on_base_predicates_and_facts_of_derived_ones():
    program = parse("p(X) :- e(X). p(9). e(1). e(2).")
    assert answers(program, {}, parse_atom("p(9)"), True) == {(9,)}
    assert answers(program, {}, parse_atom("e(X)"), True) == {(1,), (2,)}
    assert answers(program, {}, parse_atom("p(X)"), True) == {(1,), (2,), (9,)}


def test_database_query_and_cli_magic(capsys, tmp_path):
    path = tmp_path / "chain.lp"
    path.write_text(CHAIN)
    db = Database.from_text(CHAIN)
    assert db.query("p(28, Y)", magic=True) == [(28, 29), (28, 30)]
    assert db.state._model is None  # the whole model was never computed
    assert main(["query", str(path), "p(28, Y)", "--magic", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [[28, 29], [28, 30]]
    assert main(["query", str(path), "--magic"]) == 2
    assert "--magic needs a query atom" in capsys.readouterr().err


@st.composite
def queries(draw):
    pred, arity = draw(st.sampled_from(DERIVED))
    args = tuple(draw(st.one_of(st.sampled_from(CONSTANTS), st.sampled_from([Var("X"), Var("Y"), Var("X")]))) for _ in range(arity))
    return Atom(pred, args)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs(), base_facts(), queries())
def test_magic_answers_equal_full_evaluation(program, facts, query):
    rewrite = magic_sets(program, query)
    stratify(rewrite.program)  # the rewritten program is always stratified
    assert answers(program, facts, query, True) == answers(program, facts, query, False)
