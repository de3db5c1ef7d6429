"""The python engine: delta evaluation from a model, and columnar corner cases."""

from hypothesis import given, settings
from hypothesis import strategies as st

from nablog.engines import PythonEngine, get_engine
from nablog.engines.encoding import decode_facts
from nablog.engines.violations import find_violations
from nablog.lang import parse

from ..strategies import base_facts, examples, stratified_programs

# The seed papers' models are checked on every engine in tests/test_seed_models.py.


def test_split_predicate_with_facts_and_rules_updates_through_its_base_part():
    program = parse("p(X) :- q(X). p(7). q(1).")
    engine = PythonEngine()
    model = engine.evaluate(program, {"q": {(2,)}})
    assert decode_facts(model) == {"q": {(1,), (2,)}, "p": {(1,), (2,), (7,)}, "base__p": {(7,)}}
    after = engine.update(program, model, insert={"p": {(9,)}}, delete={"p": {(7,)}, "q": {(1,)}})
    assert decode_facts(after) == {"q": {(2,)}, "p": {(2,), (9,)}, "base__p": {(9,)}}


def test_update_through_negation_recomputes_the_negated_stratum():
    program = parse("r(X) :- e(X, _), not s(X). s(X) :- f(X).")
    engine = PythonEngine()
    model = engine.evaluate(program, {"e": {(1, 2), (3, 4)}, "f": {(1,)}})
    assert sorted(model["r"]) == [(3,)]
    after = engine.update(program, model, insert={"f": {(3,)}}, delete={"f": {(1,)}})
    assert sorted(after["r"]) == [(1,)]


def test_wide_relations_that_do_not_pack_into_one_key():
    # 5 columns over more than 2^12 constants cannot pack into 62 bits: rows are compared as bytes.
    rows = {(i, i + 1, i + 2, i + 3, f"s{i}") for i in range(5000)}
    program = parse("w(A,B,C,D,E) :- v(A,B,C,D,E), A < 10. w(A,B,C,D,E) :- v(A,B,C,D,E), A < 5.")
    model = PythonEngine().evaluate(program, {"v": rows})
    assert set(model["w"]) == {r for r in rows if r[0] < 10}
    assert len(model["w"]) == 10


def test_comparisons_follow_the_order_of_constants():
    program = parse('lt(X, Y) :- v(X), v(Y), X < Y. big(X) :- v(X), X >= "a".')
    model = PythonEngine().evaluate(program, {"v": {(2,), (-1,), ("a",), ("B",)}})
    assert list(model["big"]) == [("a",)]
    assert list(model["lt"]) == [(-1, 2), (-1, "B"), (-1, "a"), (2, "B"), (2, "a"), ("B", "a")]


def test_bare_identifier_and_quoted_string_are_one_constant():
    program = parse('hit(X) :- v(X), X = infor1. also(X) :- v(X), X = "infor1".')
    model = PythonEngine().evaluate(program, {"v": {("infor1",), ("infor2",)}})
    assert list(model["hit"]) == list(model["also"]) == [("infor1",)]


@settings(max_examples=examples(40), deadline=None)
@given(stratified_programs(), base_facts(max_rows=6), st.integers(0, 3))
def test_limited_violations_are_the_first_instances_of_the_full_list(program, facts, limit):
    # Every generated rule body becomes a denial; python and clingo models both give the order.
    constraints = "\n".join(f"#constraint c{i} :- {', '.join(map(str, r.body))}." for i, r in enumerate(program.rules))
    full = parse(str(program) + "\n" + constraints)
    for engine in (PythonEngine(), get_engine("clingo")):
        model = engine.evaluate(full, facts)
        everything = find_violations(full, model, engine)
        assert find_violations(full, model, engine, limit=limit) == [v.first(limit) for v in everything]
        assert [v.witnesses for v in everything] == [v.witnesses for v in find_violations(full, model, get_engine("clingo"))]
