"""The spark engine: exact models, worked out by hand, for each construct of the language."""

import re
import subprocess
import sys

import pytest

from nablog.lang import NablogError, parse

spark = pytest.mark.spark


def model_of(engine, text, facts=None):
    return engine.evaluate(parse(text), facts or {})


@spark
def test_relations_come_back_as_plain_sets(spark_engine):
    # The seed papers' models on every engine: tests/test_seed_models.py.
    model = model_of(spark_engine, "p(X,Y) :- e(X,Y). aux :- p(X,X). e(1,2).")
    assert model == {"e": {(1, 2)}, "p": {(1, 2)}, "aux": set()}
    assert all(type(rows) is set for rows in model.values())


@spark
def test_transitive_closure_linear_nonlinear_and_mutual_recursion(spark_engine):
    # 1 -> 2 -> 3 -> 4 -> 2: everything reachable from 1 and the cycle 2, 3, 4 reaching itself.
    edges = {(1, 2), (2, 3), (3, 4), (4, 2)}
    closure = {(1, 2), (1, 3), (1, 4)} | {(x, y) for x in (2, 3, 4) for y in (2, 3, 4)}
    model = model_of(
        spark_engine,
        """
        lin(X,Y) :- e(X,Y).
        lin(X,Y) :- e(X,Z), lin(Z,Y).
        non(X,Y) :- e(X,Y).
        non(X,Y) :- non(X,Z), non(Z,Y).
        odd(X,Y) :- c(X,Y).
        odd(X,Y) :- c(X,Z), even(Z,Y).
        even(X,Y) :- c(X,Z), odd(Z,Y).
        """,
        {"e": edges, "c": {(1, 2), (2, 3), (3, 4)}},
    )
    assert model["lin"] == closure
    assert model["non"] == closure
    # Paths of odd and of even length along the chain 1 -> 2 -> 3 -> 4.
    assert model["odd"] == {(1, 2), (2, 3), (3, 4), (1, 4)}
    assert model["even"] == {(1, 3), (2, 4)}


@spark
def test_negation_with_anonymous_variables_constants_and_repeated_variables(spark_engine):
    model = model_of(
        spark_engine,
        """
        node(X) :- e(X,_).
        node(Y) :- e(_,Y).
        source(X) :- node(X), not e(_,X).
        sink(X) :- node(X), not e(X,_).
        lonely(X) :- n(X), not e(X,_), not e(_,X).
        noloop(X) :- node(X), not e(X,X).
        not_to_3(X) :- node(X), not e(X,3).
        quiet :- node(X), not e(_,_).
        none_missing(X) :- node(X), not absent(X).
        """,
        {"e": {(1, 2), (2, 3), (5, 5)}, "n": {(1,), (4,)}},
    )
    assert model["node"] == {(1,), (2,), (3,), (5,)}
    assert model["source"] == {(1,)}
    assert model["sink"] == {(3,)}
    assert model["lonely"] == {(4,)}
    assert model["noloop"] == {(1,), (2,), (3,)}
    assert model["not_to_3"] == {(1,), (3,), (5,)}
    assert model["quiet"] == set()
    # A relation with neither facts nor rules is empty, and is part of the model.
    assert model["absent"] == set()
    assert model["none_missing"] == model["node"]


@spark
def test_comparisons_order_integers_before_strings_and_strings_by_code_point(spark_engine):
    # The order of the values of v: -3 < 1 < 10 < "10" < "B" < "a" < "b".
    values = {(-3,), (1,), (10,), ("10",), ("B",), ("a",), ("b",)}
    model = model_of(
        spark_engine,
        """
        big(X) :- v(X), X > 5.
        low(X) :- v(X), X < "B".
        mid(X) :- v(X), X >= 1, X <= a.
        ne(X) :- v(X), X != 10.
        eq(X) :- v(X), X = "10".
        ordered(X,Y) :- w(X,Y), X < Y.
        same(X,Y) :- w(X,Y), X = Y.
        always :- 1 < "a".
        never :- "a" < 1.
        guarded(X) :- v(X), 2 < 3, X <= 1.
        """,
        {"v": values, "w": {(1, "a"), ("a", 1), (2, 3), (3, 2), ("b", "a"), ("a", "b"), (5, 5)}},
    )
    assert model["big"] == {(10,), ("10",), ("B",), ("a",), ("b",)}
    assert model["low"] == {(-3,), (1,), (10,), ("10",)}
    assert model["mid"] == {(1,), (10,), ("10",), ("B",), ("a",)}
    assert model["ne"] == values - {(10,)}
    assert model["eq"] == {("10",)}
    assert model["ordered"] == {(1, "a"), (2, 3), ("a", "b")}
    assert model["same"] == {(5, 5)}
    assert model["always"] == {()}
    assert model["never"] == set()
    assert model["guarded"] == {(-3,), (1,)}


@spark
def test_zero_ary_predicates(spark_engine):
    program = """
        p :- q(X).
        r(X) :- s(X), p.
        t(X) :- s(X), not p.
        u :- not p.
        w :- p, not u.
        g(X) :- s(X), f.
        f.
    """
    model = model_of(spark_engine, program, {"q": {(7,)}, "s": {(1,), (2,)}})
    assert model == {
        "p": {()},
        "q": {(7,)},
        "r": {(1,), (2,)},
        "s": {(1,), (2,)},
        "t": set(),
        "u": set(),
        "w": {()},
        "f": {()},
        "g": {(1,), (2,)},
    }
    model = model_of(spark_engine, program, {"s": {(1,), (2,)}})
    assert model == {
        "p": set(),
        "q": set(),
        "r": set(),
        "s": {(1,), (2,)},
        "t": {(1,), (2,)},
        "u": {()},
        "w": set(),
        "f": {()},
        "g": {(1,), (2,)},
    }


@spark
def test_constants_in_heads_and_in_body_atoms(spark_engine):
    model = model_of(
        spark_engine,
        """
        p(X, 1) :- q(X).
        city("New York", X) :- q(X).
        k(a) :- q(_).
        at3(X) :- e(X, 3).
        from1(Y) :- e(1, Y).
        """,
        {"q": {("x",), (2,)}, "e": {(1, 3), (2, 3), (1, 4), (3, 1)}},
    )
    assert model["p"] == {("x", 1), (2, 1)}
    assert model["city"] == {("New York", "x"), ("New York", 2)}
    assert model["k"] == {("a",)}
    assert model["at3"] == {(1,), (2,)}
    assert model["from1"] == {(3,), (4,)}


@spark
def test_repeated_variables(spark_engine):
    model = model_of(
        spark_engine,
        """
        loop(X) :- e(X,X).
        diag(X,X) :- s(X).
        all_same(X) :- t(X,X,X).
        ends(X,Y) :- t(X,Y,X).
        """,
        {
            "e": {(1, 1), (1, 2), ("a", "a")},
            "s": {(1,), ("b",)},
            "t": {(1, 1, 1), (1, 2, 1), (2, 2, 1), ("a", 1, "a")},
        },
    )
    assert model["loop"] == {(1,), ("a",)}
    assert model["diag"] == {(1, 1), ("b", "b")}
    assert model["all_same"] == {(1,)}
    assert model["ends"] == {(1, 1), (1, 2), ("a", 1)}


@spark
def test_cross_product_of_literals_sharing_no_variable(spark_engine):
    model = model_of(
        spark_engine,
        """
        pairs(X,Y) :- a(X), b(Y).
        ordered(X,Y) :- a(X), a(Y), X < Y.
        """,
        {"a": {(1,), (2,)}, "b": {("x",), ("y",)}},
    )
    assert model["pairs"] == {(1, "x"), (1, "y"), (2, "x"), (2, "y")}
    assert model["ordered"] == {(1, 2)}


@spark
def test_facts_and_rules_of_one_predicate(spark_engine):
    model = model_of(spark_engine, "p(1). p(X) :- q(X). r(X) :- p(X), not q(X).", {"q": {(2,)}, "p": {(3,)}})
    assert model["p"] == {(1,), (2,), (3,)}
    assert model["r"] == {(1,), (3,)}
    assert model["base__p"] == {(1,), (3,)}


@spark
def test_written_checkpoints_give_the_same_model(tmp_path):
    from nablog.engines.spark import SparkEngine

    engine = SparkEngine(checkpoint_dir=str(tmp_path))
    model = model_of(engine, "p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y).", {"e": {(1, 2), (2, 3), (3, 4)}})
    assert model["p"] == {(1, 2), (2, 3), (3, 4), (1, 3), (2, 4), (1, 4)}
    assert any(tmp_path.iterdir())


@spark
def test_one_session_per_process(spark_engine):
    from nablog.engines.spark.session import LOG_CONFIG, spark_session

    session = spark_engine.session
    assert spark_session() is session
    conf = session.sparkContext.getConf()
    assert LOG_CONFIG.as_uri() in conf.get("spark.driver.extraJavaOptions")
    assert conf.get("spark.ui.enabled") == "false"
    assert session.conf.get("spark.sql.shuffle.partitions") == "4"
    running = session.sparkContext.master
    other = "local[1]" if running != "local[1]" else "local[2]"
    with pytest.raises(NablogError, match=r"already running in this process"):
        spark_session(other)


def test_missing_pyspark_is_a_nablog_error(monkeypatch):
    import nablog.engines.spark as spark_module

    monkeypatch.setattr(spark_module.session, "find_spec", lambda name: None)
    with pytest.raises(NablogError) as info:
        spark_module.SparkEngine()
    assert info.value.message == "the spark engine needs pyspark"
    assert info.value.hint == "pip install 'nablog[spark]'"


def test_importing_the_engine_does_not_import_pyspark():
    code = "import sys, nablog, nablog.engines.spark; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- typed columns, the partitioned fixpoint and the rounds ------------------------------------------


@spark
def test_columns_are_typed_and_mixed_columns_join_compare_and_negate_across_types(spark_engine):
    model = model_of(
        spark_engine,
        """
        ints(X) :- n(X).
        both(X) :- m(X).
        meet(X) :- n(X), m(X).
        strs(X) :- m(X), not n(X), X > 5.
        none(X) :- n(X), s(X).
        below(X, Y) :- m(X), n(Y), X < Y.
        neq(X) :- m(X), not s(X).
        """,
        {"n": {(1,), (7,), (10,)}, "m": {(1,), ("a",), (10,), ("7",)}, "s": {("a",), ("b",)}},
    )
    assert model["meet"] == {(1,), (10,)}
    assert model["strs"] == {("a",), ("7",)}  # strings come after every integer
    assert model["none"] == set()  # an integer column meets a string column nowhere
    assert model["below"] == {(1, 7), (1, 10)}
    assert model["neq"] == {(1,), (10,), ("7",)}


@spark
def test_partitioned_fixpoint_runs_kept_argument_recursion_in_one_job(spark_engine):
    from nablog.engines.spark import SparkEngine

    text = """
        right(X,Y) :- e(X,Y).
        right(X,Y) :- right(X,Z), e(Z,Y), not blocked(Y).
        left(X,Y) :- e(X,Y), X != "b".
        left(X,Y) :- e(X,Z), left(Z,Y).
        odd(X,Y) :- e(X,Y).
        odd(X,Y) :- e(X,Z), even(Z,Y).
        even(X,Y) :- e(X,Z), odd(Z,Y).
        cycle(X) :- right(X,X).
    """
    # 1 -> a -> 2 -> "b" -> 1: a cycle through integers and strings; "b" is blocked as a target.
    facts = {"e": {(1, "a"), ("a", 2), (2, "b"), ("b", 1), (3, 1)}, "blocked": {("b",)}}
    messages: list[str] = []
    with spark_engine.running():
        run = spark_engine.run(parse(text), facts, progress=messages.append)
        methods = {step.component: step.method for step in run.rounds}
        model = run.collect()
    assert methods[("right",)] == methods[("left",)] == methods[("even", "odd")] == "partitioned"
    pattern = r"stratum \d+/\d+: right: fixpoint in one job \(\d+ rounds in the deepest partition\), 13 new tuples, \d+\.\d s"
    assert sum(1 for m in messages if re.fullmatch(pattern, m)) == 1, messages
    # right: paths whose nodes after the first edge are never "b".
    assert model["right"] == {
        (1, "a"), (1, 2), ("a", 2), (2, "b"), (2, 1), (2, "a"), (2, 2), ("b", 1), ("b", "a"), ("b", 2), (3, 1), (3, "a"), (3, 2)
    }
    # left: paths whose last edge does not leave "b" (so only 3 reaches 1).
    nodes = [1, "a", 2, "b"]
    cycle = {(x, y) for x in nodes for y in nodes}
    assert model["left"] == {(x, y) for x in [*nodes, 3] for y in ["a", 2, "b"]} | {(3, 1)}
    assert model["odd"] | model["even"] == cycle | {(3, y) for y in nodes}
    assert model["cycle"] == {(2,)}
    rounds_only = SparkEngine(partitioned=False).evaluate(parse(text), facts)
    assert {p: rounds_only[p] for p in model} == model


@spark
def test_rounds_beyond_the_piece_limit_keep_the_model_exact():
    from nablog.engines.spark import SparkEngine
    from nablog.engines.spark.evaluation import MAX_PIECES

    # Same generation over two chains from one root, 0 -> 1 -> 2 ... and 0 -> "b1" -> "b2" ...:
    # not partitionable, and cousins at depth i take round i-1, so the iteration runs past
    # MAX_PIECES rounds and consolidates (and releases) pieces as it goes.
    depth = MAX_PIECES + 4
    edges = {(i, i + 1) for i in range(depth)} | {(0, "b1")} | {(f"b{i}", f"b{i + 1}") for i in range(1, depth)}
    engine = SparkEngine()
    with engine.running():
        run = engine.run(parse("sg(X,Y) :- e(P,X), e(P,Y). sg(X,Y) :- e(A,X), sg(A,B), e(B,Y)."), {"e": edges})
        steps = [s for s in run.rounds if s.component == ("sg",)]
        model = run.collect()
    assert {s.method for s in steps} == {"rounds"}
    assert re.fullmatch(r"stratum 1/1: sg: round 3, 2 new tuples, \d+\.\d s", steps[3].describe(1))
    # Round 0: siblings (all of depth 1, and each node with itself below); then one depth a round.
    assert [s.new for s in steps] == [4 + 2 * (depth - 1)] + [2] * (depth - 1) + [0]
    levels = [{i, f"b{i}"} for i in range(1, depth + 1)]
    assert model["sg"] == {(x, y) for level in levels for x in level for y in level}


RECURSIVE_TEMPLATES = {
    "exit": ["r(X,Y) :- e(X,Y).", "r(X,Y) :- e(X,Y), X < Y.", "r(X,X) :- f(X).", 'r(X,"a") :- f(X), X != 2.'],
    "right": ["r(X,Y) :- r(X,Z), e(Z,Y).", "r(X,Y) :- r(X,Z), e(Z,Y), not f(Y).", "r(X,Y) :- r(X,Z), e(Z,Y), Z != Y.", 'r(X,Y) :- r(X,Z), e(Z,Y), Y < "b".'],
    "left": ["r(X,Y) :- e(X,Z), r(Z,Y).", "r(X,Y) :- e(X,Z), r(Z,Y), not f(X).", "r(X,Y) :- e(X,Z), r(Z,Y), X >= 0."],
    "top": ["s(X) :- e(X,_), not r(X,X).", "t(X,Y) :- r(X,Y), not e(X,Y).", "u :- r(_, 1).", "w(X) :- f(X), not r(_, X)."],
}


@pytest.mark.spark
def test_spark_agrees_with_python_and_clingo_on_recursion_over_mixed_columns(spark_engine):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from nablog.engines import get_engine
    from nablog.engines.encoding import decode_facts

    from ..strategies import base_facts, examples

    @st.composite
    def programs(draw):
        rules = draw(st.lists(st.sampled_from(RECURSIVE_TEMPLATES["exit"]), min_size=1, max_size=2, unique=True))
        family = draw(st.sampled_from(["right", "left", "both"]))
        for name in (["right", "left"] if family == "both" else [family]):
            rules += draw(st.lists(st.sampled_from(RECURSIVE_TEMPLATES[name]), min_size=1, max_size=2, unique=True))
        rules += draw(st.lists(st.sampled_from(RECURSIVE_TEMPLATES["top"]), max_size=2, unique=True))
        return parse("\n".join(rules))

    @settings(max_examples=examples(8), deadline=None, suppress_health_check=list(HealthCheck))
    @given(programs(), base_facts(max_rows=7))
    def agree(program, facts):
        expected = decode_facts(get_engine("python").evaluate(program, facts))
        assert decode_facts(get_engine("clingo").evaluate(program, facts)) == expected
        assert decode_facts(spark_engine.evaluate(program, facts)) == expected

    agree()


@spark
def test_integers_beyond_64_bits_are_a_clear_error(spark_engine):
    with pytest.raises(NablogError, match=r"holds integers in 64 bits; 9223372036854775808 does not fit"):
        model_of(spark_engine, "p(X) :- q(X).", {"q": {(2**63,)}})
