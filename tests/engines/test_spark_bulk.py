"""Bulk work on Spark: materialize to Parquet, propagate a batch of changes, check constraints; their CLI."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.strategies import examples

from nablog.cli import main
from nablog.engines import get_engine
from nablog.engines.encoding import decode_facts
from nablog.engines.violations import find_violations
from nablog.lang import parse

from nablog.transforms.flatten import flatten

from ..strategies import BASE, base_facts, rich_facts, rich_programs, stratified_programs

pytestmark = pytest.mark.spark

PROGRAM = """
tc(X,Y) :- e(X,Y).
tc(X,Y) :- e(X,Z), tc(Z,Y).
src(X) :- e(X,_), not e(_,X).
far(X,Y) :- tc(X,Y), not e(X,Y).
reaches4 :- tc(_,4).
#constraint no_cycle :- tc(X,X).
#constraint small :- tc(X,Y), Y > 3.
#constraint known :- e(X,_), not node(X).
#require reaches4.
"""


def parquet_rows(directory: Path) -> set[tuple]:
    """A Parquet directory's rows as constants (mixed columns are struct<int, str>)."""
    import pyarrow.parquet as pq

    table = pq.read_table(directory)
    out = set()
    for row in table.to_pylist():
        out.add(tuple(v if not isinstance(v, dict) else (v["int"] if v["int"] is not None else v["str"]) for v in row.values()))
    return out


def write_csv(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(",".join(f'"{v}"' if isinstance(v, str) else str(v) for v in row) + "\n" for row in rows))


@pytest.fixture
def database(tmp_path):
    (tmp_path / "p.lp").write_text(PROGRAM)
    write_csv(tmp_path / "data" / "e.csv", [(1, 2), (2, 3), (3, 4), (4, "x")])
    write_csv(tmp_path / "data" / "node.csv", [(1,), (2,), (3,)])
    return tmp_path


def test_materialize_writes_each_derived_relation_as_parquet(database, spark_engine, capsys):
    out = database / "out"
    assert main(["materialize", str(database / "p.lp"), "--data", str(database / "data"), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    facts = {"e": {(1, 2), (2, 3), (3, 4), (4, "x")}, "node": {(1,), (2,), (3,)}}
    expected = get_engine("python").evaluate(parse(PROGRAM), facts)
    assert summary["relations"] == {"far": 6, "reaches4": 1, "src": 1, "tc": 10}
    for pred in ("tc", "src", "far"):
        assert parquet_rows(out / pred) == set(expected[pred])
    import pyarrow.parquet as pq

    schema = pq.read_schema(next((out / "tc").glob("*.parquet")))
    assert schema.names == ["c0", "c1"]
    assert str(schema.field("c0").type) == "int64"
    assert str(schema.field("c1").type) == "struct<int: int64, str: string>"  # 2, 3, 4 and "x"
    manifest = json.loads((out / "_nablog.json").read_text())
    assert manifest["relations"]["reaches4"] == {"arity": 0, "rows": 1, "types": []}
    assert manifest["relations"]["tc"]["types"] == ["long", "mixed"]
    assert not [p for p in out.iterdir() if p.name.startswith(".nablog-tmp-")]


def test_materialize_is_atomic_when_a_write_fails(database, spark_engine, monkeypatch):
    import nablog.engines.spark.relations as spark_io

    out = database / "out"
    args = ["materialize", str(database / "p.lp"), "--data", str(database / "data"), "--out", str(out)]
    assert main(args) == 0
    before = {p.name: parquet_rows(p) for p in out.iterdir() if p.is_dir()}
    manifest = (out / "_nablog.json").read_text()
    write_csv(database / "data" / "e.csv", [(7, 8)])
    written = []
    real = spark_io._write_frame

    def failing(frame, path):
        if written:  # the second relation: simulate a crash half-way through the output
            raise OSError("disk full")
        written.append(path)
        real(frame, path)

    monkeypatch.setattr(spark_io, "_write_frame", failing)
    with pytest.raises(OSError, match="disk full"):
        spark_io.write_relations(spark_engine, out, _model_relations(spark_engine, database))
    assert written  # one relation was written before the failure
    assert {p.name: parquet_rows(p) for p in out.iterdir() if p.is_dir()} == before
    assert (out / "_nablog.json").read_text() == manifest
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == ["._nablog.json.crc"]


def _model_relations(engine, database):
    from nablog.engines.spark.relations import read_relations

    with engine.running():
        model = engine.run(parse(PROGRAM), read_relations(engine, [database / "data"]))
        return {p: model.relations[p] for p in model.derived}


def test_reading_parquet_types_nulls_and_mixed_columns(tmp_path, spark_engine):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nablog.engines.spark.relations import read_relations

    data = tmp_path / "data"
    data.mkdir()
    mixed = pa.array([{"int": 5, "str": None}, {"int": None, "str": "5"}, None], pa.struct([("int", pa.int64()), ("str", pa.string())]))
    pq.write_table(pa.table({"a": pa.array([1, None, 3], pa.int32()), "b": pa.array(["x", None, "z"]), "m": mixed}), data / "r.parquet")
    relations = read_relations(spark_engine, [data])
    assert relations["r"].types == ("mixed", "string", "mixed")
    with spark_engine.running():
        run = spark_engine.run(parse("s(X, Y, Z) :- r(X, Y, Z). n(X) :- r(X, _, _), X > 2."), relations)
        got = run.collect()
    # A null is "", like an empty CSV field.
    assert got["s"] == {(1, "x", 5), ("", "", "5"), (3, "z", "")}
    assert got["n"] == {(3,), ("",)}


@pytest.mark.parametrize("recompute_share", [0.25, 2.0], ids=["afresh-when-over-deletion-grows", "always-dred"])
@settings(max_examples=examples(4), deadline=None, suppress_health_check=list(HealthCheck))
@given(stratified_programs(), base_facts(max_rows=6), base_facts(max_rows=3), base_facts(max_rows=3))
def test_bulk_propagation_equals_recomputation_and_diff(spark_engine, recompute_share, program, facts, insert, delete):
    from nablog.engines.spark.relations import relation_from_rows
    from nablog.engines.spark.bulk import propagate

    python = get_engine("python")
    before = python.evaluate(program, facts)
    new_facts = {p: (facts[p] - delete.get(p, set())) | (insert.get(p, set()) - delete.get(p, set())) for p in facts}
    after = decode_facts(python.evaluate(program, new_facts))
    derived = program.derived
    with spark_engine.running():
        rel = lambda rows, pred: relation_from_rows(spark_engine, rows, BASE[pred] if pred in BASE else program.signatures[pred])  # noqa: E731
        result = propagate(
            spark_engine,
            program,
            {p: rel(rows, p) for p, rows in facts.items()},
            {p: rel(set(before[p]), p) for p in derived},
            {p: rel(rows, p) for p, rows in insert.items()},
            {p: rel(rows, p) for p, rows in delete.items()},
            recompute_share=recompute_share,
        )
        gained, lost = result.collect()
        new_model = {p: _collect(spark_engine, result.relations[p]) for p in derived}
    old = decode_facts(before)
    assert new_model == {p: after[p] for p in derived}
    assert gained == {p: after[p] - old[p] for p in after if after[p] - old[p]}
    assert lost == {p: old[p] - after[p] for p in after if old[p] - after[p]}


def _collect(engine, relation):
    from nablog.engines.spark.types import rows_of_arrow

    if not relation.arity:
        return {()} if relation.frame.count() else set()
    return rows_of_arrow(relation.frame.toArrow(), relation.types)


def test_materialize_with_model_propagates_changes_and_writes_the_deltas(database, spark_engine, capsys):
    out, new = database / "out", database / "new"
    data = str(database / "data")
    assert main(["materialize", str(database / "p.lp"), "--data", data, "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote 4 relations to {out} in ")
    write_csv(database / "ins" / "e.csv", [(4, 5), (5, 1)])
    write_csv(database / "del" / "e.csv", [(2, 3), (9, 9)])  # (9, 9) is not there: no change
    args = ["materialize", str(database / "p.lp"), "--data", data, "--model", str(out), "--insert", str(database / "ins")]
    assert main([*args, "--delete", str(database / "del"), "--out", str(new), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    # What nablog propagate (the python engine's DRed) says about the same update:
    assert main(["propagate", str(database / "p.lp"), "+e(4,5). +e(5,1). -e(2,3). -e(9,9).", "--data", data, "--json"]) == 0
    update = json.loads(capsys.readouterr().out)
    expected_plus: dict[str, set] = {}
    expected_minus: dict[str, set] = {}
    for key, target in (("insert", expected_plus), ("delete", expected_minus)):
        for text in update[key]:
            atom = parse(text + ".").rules[0].head[0]
            target.setdefault(atom.pred, set()).add(tuple(atom.args))
    assert summary["inserted"] == {p: len(rows) for p, rows in expected_plus.items()}
    assert summary["deleted"] == {p: len(rows) for p, rows in expected_minus.items()}
    for pred, rows in expected_plus.items():
        if rows != {()}:
            assert parquet_rows(new / f"ins__{pred}") == rows
    for pred, rows in expected_minus.items():
        if rows != {()}:
            assert parquet_rows(new / f"del__{pred}") == rows
    facts = {"e": {(1, 2), (3, 4), (4, "x"), (4, 5), (5, 1)}, "node": {(1,), (2,), (3,)}}
    recomputed = get_engine("python").evaluate(parse(PROGRAM), facts)
    for pred in ("tc", "src", "far"):
        assert parquet_rows(new / pred) == set(recomputed[pred])


@settings(max_examples=examples(6), deadline=None, suppress_health_check=list(HealthCheck))
@given(stratified_programs(), base_facts(max_rows=6))
def test_bulk_check_counts_and_lists_like_the_python_checker(spark_engine, program, facts):
    from nablog.engines.spark.bulk import check

    # The generated rules' heads become denials: every derivation is a violation instance.
    constraints = "\n".join(f"#constraint c{i} :- {', '.join(map(str, r.body))}." for i, r in enumerate(program.rules))
    full = parse(str(program) + "\n" + constraints + "\n#require p3.")
    python = get_engine("python")
    expected = find_violations(full, python.evaluate(full, facts), python)
    with spark_engine.running():
        model = spark_engine.run(full, facts)
        found = check(spark_engine, full, model).violations
    assert [(v.constraint, v.count, v.witnesses, v.bindings) for v in found] == [
        (v.constraint, v.count, v.witnesses, v.bindings) for v in expected
    ]


values = st.one_of(st.integers(-3, 3), st.sampled_from(["a", "b", "B"]))
fd_denials = st.lists(
    st.tuples(st.sets(st.integers(0, 3), min_size=1, max_size=2), st.integers(0, 3), st.sampled_from(["<", ">", "!="])).filter(
        lambda d: d[1] not in d[0]
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=examples(6), deadline=None, suppress_health_check=list(HealthCheck))
@given(fd_denials, st.sets(st.tuples(values, values, st.integers(0, 2), values), max_size=25), st.integers(1, 4))
def test_functional_dependencies_counted_from_group_sizes_equal_the_python_checker(spark_engine, denials, rows, limit):
    from nablog.engines.spark.bulk import check

    lines = []
    for i, (key, value, op) in enumerate(denials):
        first = [f"K{j}" if j in key else ("V1" if j == value else "_") for j in range(4)]
        second = [f"K{j}" if j in key else ("V2" if j == value else "_") for j in range(4)]
        lines.append(f"#constraint fd{i} :- r({', '.join(first)}), r({', '.join(second)}), V1 {op} V2.")
    program = parse("\n".join(lines) + "\n#base r/4.")
    python = get_engine("python")
    expected = find_violations(program, python.evaluate(program, {"r": rows}), python)
    with spark_engine.running():
        found = check(spark_engine, program, spark_engine.run(program, {"r": rows}), limit=limit).violations
    assert [(v.constraint, v.count, v.witnesses, v.bindings) for v in found] == [
        (v.constraint, v.count, v.witnesses[:limit], v.bindings[:limit]) for v in expected
    ]


TAX = """
#constraint fd_zip_city :- tax(N1, Z, C1), tax(N2, Z, C2), C1 < C2.
#constraint fk_zip :- tax(_, Z, _), Z != "", not zips(Z).
"""


def test_check_engine_spark_counts_fds_and_foreign_keys_and_writes_witnesses(tmp_path, spark_engine, capsys):
    (tmp_path / "tax.lp").write_text(TAX)
    rows = [("ann", "01907", "SWAMPSCOTT"), ("bob", "01907", "LYNN"), ("cy", "01907", "LYNN"), ("di", "89140", "LAS VEGAS"), ("ed", "", "X")]
    write_csv(tmp_path / "data" / "tax.csv", rows)
    write_csv(tmp_path / "data" / "zips.csv", [("89140",), ("99999",)])
    base = ["check", str(tmp_path / "tax.lp"), "--data", str(tmp_path / "data")]
    assert main([*base, "--json"]) == 1
    python = json.loads(capsys.readouterr().out)
    witnesses = tmp_path / "witnesses"
    assert main([*base, "--json", "--engine", "spark", "--witnesses", str(witnesses)]) == 1
    spark = json.loads(capsys.readouterr().out)
    assert spark == python
    assert [(v["constraint"], v["count"]) for v in spark["violations"]] == [("fd_zip_city", 2), ("fk_zip", 3)]
    # One row per instance, one column per variable: C1 < C2 puts LYNN first.
    assert parquet_rows(witnesses / "fd_zip_city") == {
        ("bob", "01907", "LYNN", "ann", "SWAMPSCOTT"),
        ("cy", "01907", "LYNN", "ann", "SWAMPSCOTT"),
    }
    import pyarrow.parquet as pq

    assert pq.read_schema(next((witnesses / "fd_zip_city").glob("*.parquet"))).names == ["N1", "Z", "C1", "N2", "C2"]
    assert main([*base, "--engine", "spark", "--limit", "1"]) == 1
    text = capsys.readouterr().out
    assert text.startswith("inconsistent: 2 of 2 constraints violated\n")
    assert "fk_zip: 3 violations\n" in text and "    ... and 2 more (--limit N, or --json for all)\n" in text


def test_bulk_command_mistakes_are_one_clear_error(database, spark_engine, capsys):
    lp, data = str(database / "p.lp"), str(database / "data")
    assert main(["materialize", lp, "--data", data, "--out", str(database / "o"), "--insert", data]) == 2
    assert capsys.readouterr().err.startswith("error: --insert and --delete need --model")
    assert main(["materialize", lp, "--data", str(database / "missing"), "--out", str(database / "o")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert main(["materialize", lp, "--out", str(database / "o"), "--strict"]) == 2
    assert "error: predicate e/2 has no rules, no facts and no #base declaration" in capsys.readouterr().err
    assert main(["check", lp, "--data", data, "--witnesses", str(database / "w")]) == 2
    assert capsys.readouterr().err.startswith("error: --witnesses needs --engine spark")
    (database / "e.csv").write_text("1,2\n")
    args = ["materialize", lp, "--data", data, "--model", str(database / "nowhere"), "--insert", str(database / "e.csv"), "--out", str(database / "o")]
    assert main(args) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_bulk_paths_read_a_relation_without_data_as_empty_with_a_warning(database, spark_engine, capsys):
    lp = str(database / "p.lp")
    assert main(["materialize", lp, "--out", str(database / "o"), "--json"]) == 0
    captured = capsys.readouterr()
    assert "warning: predicate e/2 has no rules, no facts and no #base declaration: it is read as an empty relation" in captured.err
    assert all(rows == 0 for rows in json.loads(captured.out)["relations"].values())
    assert main(["check", lp, "--engine", "spark"]) == 1  # only #require reaches4 fails on no edges
    captured = capsys.readouterr()
    assert "warning: predicate e/2" in captured.err and captured.out.startswith("inconsistent: 1 of 4 constraints violated\n")


def test_program_facts_join_the_data_and_undeclared_relations_are_empty(tmp_path, spark_engine, capsys):
    (tmp_path / "p.lp").write_text(
        "e(7, 8).\n#base banned/1.\nreach(X,Y) :- e(X,Y).\nreach(X,Y) :- e(X,Z), reach(Z,Y).\n"
        "#constraint not_banned :- e(X,_), banned(X).\n#constraint no_loop :- reach(X,X).\n"
    )
    write_csv(tmp_path / "data" / "e.csv", [(8, "a"), ("a", 9)])
    args = ["--data", str(tmp_path / "data")]
    assert main(["materialize", str(tmp_path / "p.lp"), *args, "--out", str(tmp_path / "out"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["relations"] == {"reach": 6}
    assert parquet_rows(tmp_path / "out" / "reach") == {(7, 8), (7, "a"), (7, 9), (8, "a"), (8, 9), ("a", 9)}
    assert main(["check", str(tmp_path / "p.lp"), *args, "--engine", "spark"]) == 0
    assert capsys.readouterr().out == "consistent: 2 constraints hold\n"


def test_check_over_parquet_data_with_several_violated_denials(tmp_path, spark_engine, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    # Columns read from Parquet are non-nullable on Spark (a null is ""), and the instances of
    # several denials travel in one result where each denial's columns are null in the others' rows.
    (tmp_path / "data").mkdir()
    pq.write_table(pa.table({"c0": pa.array([1, 2, 2], pa.int64()), "c1": pa.array(["a", "b", None])}), tmp_path / "data" / "r.parquet")
    (tmp_path / "p.lp").write_text("#constraint two :- r(X, Y), r(X, Z), Y < Z.\n#constraint big :- r(X, _), X > 1.\n")
    base = ["check", str(tmp_path / "p.lp"), "--data", str(tmp_path / "data"), "--json"]
    assert main(base) == 1
    python = json.loads(capsys.readouterr().out)
    assert main([*base, "--engine", "spark"]) == 1
    assert json.loads(capsys.readouterr().out) == python == {
        "consistent": False,
        "violations": [
            {"constraint": "two", "count": 1, "witnesses": [["r(2, \"\")", "r(2, b)"]]},
            {"constraint": "big", "count": 2, "witnesses": [["r(2, \"\")"], ["r(2, b)"]]},
        ],
    }


@pytest.mark.slow
@settings(max_examples=examples(1), deadline=None, suppress_health_check=list(HealthCheck))
@given(rich_programs(), rich_facts(max_rows=4), rich_facts(max_rows=2), rich_facts(max_rows=2))
def test_bulk_propagation_through_arithmetic_and_aggregates_equals_recomputation(spark_engine, program, facts, insert, delete):
    # A component that computes is evaluated afresh and diffed (issue 13).
    test_bulk_propagation_equals_recomputation_and_diff.hypothesis.inner_test(spark_engine, 2.0, flatten(program), facts, insert, delete)


def test_bulk_check_of_a_denial_with_a_count(spark_engine):
    from nablog.engines.spark.bulk import check

    program = parse("dept(a). dept(b). works(e1, a). works(e2, a). works(e3, b).\n#constraint big :- dept(D), N = #count{E : works(E, D)}, N > 1.")
    with spark_engine.running():
        found = check(spark_engine, program, spark_engine.run(program, {})).violations
    expected = find_violations(program, get_engine("python").evaluate(program, {}), get_engine("python"))
    assert [(v.constraint, v.count, v.bindings) for v in found] == [(v.constraint, v.count, v.bindings) for v in expected]
    assert [(v.constraint, v.count) for v in found] == [("big", 1)]
