"""Correction tables: shorthands, falsifiers, minimal repairs against brute force, maintenance
against recomputation, the command line (batch and interactive)."""

import itertools
import json
import os
import pty
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import examples

from nablog.cli import main
from nablog.engines import PythonEngine
from nablog.engines.violations import find_violations
from nablog.lang import AnalysisError, parse, separate_facts
from nablog.repair import CorrectionTable, find_falsifiers, repair
from nablog.repair.maintain import Maintainer
from nablog.repair.verify import VerifiedTable, verify_interactively
from tests.test_apply import _read_until

ENGINE = PythonEngine()

EXAMPLE_5_1 = """
#constraint g12 :- m1(X, Y), m2(X, Z), Y != Z.
#constraint g1 :- m1(X, Y), m1(X, Z), Y != Z.
#constraint g2 :- m2(X, Y), m2(X, Z), Y != Z.
#trusted g1, g2.
m1(a, b). m2(a, c). m2(d, e).
"""


def database(text, facts=None):
    rules, facts = separate_facts(parse(text), facts)
    return rules, facts, ENGINE.evaluate(rules, facts)


# -- shorthands and falsifiers ----------------------------------------------------------------------


def test_fd_key_and_fk_shorthands_find_their_violations():
    rules, _, model = database(
        """
        #columns person(name, zip, city).
        #fd person: zip -> city.
        #key person: name.
        #fk person: zip -> zips: 1.
        #base zips/1.
        person(ann, "01907", swampscott). person(bob, "01907", lynn). person(ann, "02139", cambridge).
        person(cy, "", nowhere). zips("01907").
        """
    )
    found = find_falsifiers(rules, model)
    assert [(v.name, v.count) for v in found] == [
        ("fd_person__zip__city", 1),
        ("key_person__name__zip", 1),
        ("key_person__name__city", 1),
        ("fk_person__zip__zips", 1),
    ]
    assert [str(f) for f in found.falsifiers()] == [
        ':- person(bob, "01907", lynn), person(ann, "01907", swampscott), lynn < swampscott.',
        ':- person(ann, "01907", swampscott), person(ann, "02139", cambridge), "01907" < "02139".',
        ':- person(ann, "02139", cambridge), person(ann, "01907", swampscott), cambridge < swampscott.',
        ':- person(ann, "02139", cambridge), not zips("02139"), "02139" != "".',
    ]


def test_fd_fast_path_reports_exactly_what_check_reports():
    rules, _, model = database(":- r(X, Y, _), r(X, Z, _), Y != Z. r(1, a, p). r(1, b, q). r(1, b, r). r(2, c, s).")
    assert find_falsifiers(rules, model).violations() == find_violations(rules, model, ENGINE)


@settings(max_examples=examples(60), deadline=None)
@given(st.sets(st.tuples(st.integers(0, 2), st.sampled_from(["a", "b", 3]), st.integers(0, 1)), max_size=8), st.sampled_from(["<", "!=", ">"]))
def test_fd_fast_path_equals_the_self_join(rows, op):
    rules, _, model = database(f":- r(X, Y, _), r(X, Z, _), Y {op} Z. #base r/3.", {"r": rows})
    assert find_falsifiers(rules, model).violations() == find_violations(rules, model, ENGINE)


def test_unknown_column_is_a_located_error_with_a_hint():
    with pytest.raises(AnalysisError) as info:
        parse("#columns tax(zip, city).\n#fd tax: zipcode -> city.").constraints
    assert str(info.value) == (
        "error: #fd: tax has no column zipcode\n"
        "  --> <string>:2:1\n"
        "   |\n"
        " 2 | #fd tax: zipcode -> city.\n"
        "   | ^\n"
        "hint: did you mean zip?"
    )


def test_trusted_must_name_a_constraint(tmp_path, capsys):
    (tmp_path / "db.lp").write_text("#constraint one :- p(X), q(X).\n#trusted onee.\np(1). q(1).\n")
    assert main(["repair", str(tmp_path / "db.lp")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: #trusted names onee, but the program has no constraint of that name\n")
    assert err.rstrip().endswith("hint: did you mean one?")


def test_a_missing_arity_names_the_fix(tmp_path, capsys):
    (tmp_path / "db.lp").write_text("#fd tax: 8 -> 6.\n")
    assert main(["check", str(tmp_path / "db.lp")]) == 2
    assert "hint: declare its columns, e.g. '#columns tax(a, b, c).', or its arity with '#base tax/3.'" in capsys.readouterr().err


# -- minimal correction tables against brute force ---------------------------------------------------

VALUES = [1, 2, 3]
PROGRAMS = [
    # consistently signed: an FD, a key-like denial with a built-in, a foreign key into s
    "#fd r: 1 -> 2.\n#fk r: 2 -> s: 1.\n:- r(X, Y), X > Y, s(X).\n#base r/2, s/1.",
    # not consistently signed: inserting a parent s(Y) may violate the denial on s
    "#fd r: 1 -> 2.\n#fk r: 2 -> s: 1.\n:- s(X), t(X).\n:- r(X, Y), t(Y), X = Y.\n#base r/2, s/1, t/1.",
]


def brute_force_tables(rules, facts):
    """Every subset-minimal correction table over deletions of facts and insertions of s(v)."""
    model = ENGINE.evaluate(rules, facts)
    candidates = [("-", (p, row)) for p, rows in sorted(facts.items()) for row in sorted(rows)]
    candidates += [("+", ("s", (v,))) for v in VALUES if (v,) not in facts.get("s", set())]
    consistent = []
    for size in range(len(candidates) + 1):
        for subset in itertools.combinations(candidates, size):
            chosen = set(subset)
            if any(c <= chosen for c in consistent):
                continue
            new = {p: set(rows) for p, rows in facts.items()}
            for sign, (p, row) in subset:
                (new.setdefault(p, set()).add if sign == "+" else new[p].discard)(row)
            if not find_violations(rules, ENGINE.evaluate(rules, new), ENGINE):
                consistent.append(chosen)
    del model
    return sorted(consistent, key=lambda s: (len(s), sorted(map(str, s))))


facts_strategy = st.fixed_dictionaries(
    {
        "r": st.sets(st.tuples(st.sampled_from(VALUES), st.sampled_from(VALUES)), max_size=4),
        "s": st.sets(st.tuples(st.sampled_from(VALUES)), max_size=2),
        "t": st.sets(st.tuples(st.sampled_from(VALUES)), max_size=2),
    }
)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PROGRAMS), facts_strategy)
def test_enumerated_minimal_tables_equal_brute_force(text, facts):
    rules, facts = separate_facts(parse(text), {p: rows for p, rows in facts.items() if f"{p}/" in text})
    model = ENGINE.evaluate(rules, facts)
    result = repair(rules, model, limit=1000)
    expected = brute_force_tables(rules, facts)
    found = [frozenset(t.corrections()) for t in result]
    assert len(found) == len(expected) and set(found) == set(map(frozenset, expected))
    assert result.status == "complete"
    # cardinality-minimal: exactly the smallest of them
    smallest = {frozenset(t) for t in expected if len(t) == len(expected[0])}
    assert {frozenset(t.corrections()) for t in repair(rules, model, policy="min-card", limit=1000)} == smallest


def test_trust_weights_change_the_least_trusted_source():
    rules, _, model = database(EXAMPLE_5_1)
    assert [t.lines() for t in repair(rules, model, policy="trust=m1:3,m2:1")] == [["-m2(a, c)"]]
    assert [t.lines() for t in repair(rules, model, policy="trust=m1:1,m2:3")] == [["-m1(a, b)"]]


def test_a_missing_parent_is_inserted_with_fresh_values():
    rules, _, model = database("#fk r: 2 -> s: 1.\n#base s/2.\nr(1, x). r(2, x). r(3, y). s(y, 9).")
    result = repair(rules, model, limit=10)
    assert [t.lines() for t in result] == [["+s(x, new1)"], ["-r(1, x)", "-r(2, x)"]]
    assert result[0].fresh == ("new1",)


def test_independent_conflicts_are_solved_as_separate_components():
    rules, _, model = database(":- r(X, Y), r(X, Z), Y != Z. r(1, a). r(1, b). r(2, a). r(2, b). r(3, c).")
    result = repair(rules, model, limit=10)
    assert result.components == 2
    assert [t.lines() for t in result] == [
        ["-r(1, a)", "-r(2, a)"],
        ["-r(1, a)", "-r(2, b)"],
        ["-r(1, b)", "-r(2, a)"],
        ["-r(1, b)", "-r(2, b)"],
    ]


def test_views_in_constraints_go_through_the_rules():
    rules, _, model = database("anc(X, Y) :- e(X, Y). anc(X, Y) :- e(X, Z), anc(Z, Y). :- anc(X, X). e(1, 2). e(2, 1). e(2, 3).")
    result = repair(rules, model, limit=10)
    assert result.case == "general, over views"
    assert [t.lines() for t in result] == [["-e(1, 2)"], ["-e(2, 1)"]]


def test_protected_relations_can_make_a_repair_impossible():
    rules, _, model = database(EXAMPLE_5_1 + "#protect m1/2, m2/2.")
    result = repair(rules, model)
    assert (result.status, result.tables) == ("unsatisfiable", [])
    assert result.reasons == ["constraint g12", "protected fact m1(a, b)", "protected fact m2(a, c)"]


# -- maintenance against recomputation ---------------------------------------------------------------

updates = st.lists(
    st.tuples(st.sampled_from("+-"), st.sampled_from(["m1", "m2"]), st.sampled_from("ab"), st.sampled_from("xyz")),
    min_size=1,
    max_size=6,
)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(updates)
def test_incremental_maintenance_equals_recomputation(sequence):
    text = "#constraint g12 :- m1(X, Y), m2(X, Z), Y != Z.\n#fd m1: 1 -> 2.\n#fd m2: 1 -> 2.\n#base m1/2, m2/2.\nm2(a, x)."
    rules, facts = separate_facts(parse(text))
    maintainer = Maintainer(rules, facts, keep_recent=False)
    for sign, pred, husband, wife in sequence:
        atom = (pred, (husband, wife))
        rows = facts.setdefault(pred, set())
        if (sign == "+") == (atom[1] in rows):
            continue  # not an update (Def. 2.3)
        (rows.add if sign == "+" else rows.discard)(atom[1])
        step = maintainer.update(f"{sign}{pred}({husband}, {wife}).")
        recomputed = repair(rules, ENGINE.evaluate(rules, facts), limit=1000)
        assert step.table.corrections() in [t.corrections() for t in recomputed]


def _example_5_1_maintained_from(table: str) -> Maintainer:
    """Example 5.1's database with one of its two minimal tables (which one a solver finds first
    is its own choice)."""
    rules, facts = separate_facts(parse(EXAMPLE_5_1))
    sign, pred, args = table[0], table[1:3], tuple(table[4:-1].split(", "))
    return Maintainer(rules, facts, table=CorrectionTable.of({(sign, (pred, args))}))


def test_a_deletion_from_a_consistently_signed_database_needs_no_check():
    maintainer = _example_5_1_maintained_from("-m1(a, b)")
    step = maintainer.update("-m2(d, e).")
    assert (step.checks, step.falsifiers, step.table.lines()) == ([], None, ["-m1(a, b)"])


def test_a_source_update_that_does_what_the_table_did_is_dropped_from_it():
    maintainer = _example_5_1_maintained_from("-m1(a, b)")
    assert maintainer.current_table().lines() == ["-m1(a, b)"]
    step = maintainer.update("-m1(a, b).")
    assert step.dropped == [("-", ("m1", ("a", "b")))]
    assert step.table.lines() == []


# -- the command line ----------------------------------------------------------------------------------


@pytest.fixture
def marriages(tmp_path):
    path = tmp_path / "m.lp"
    path.write_text(EXAMPLE_5_1)
    return path


def test_cli_repair_json(marriages, capsys):
    assert main(["repair", str(marriages), "--enumerate", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "consistent": True,
        "violations": [{"constraint": "g12", "count": 1, "witnesses": [["m1(a, b)", "m2(a, c)"]]}],
        "repairs": [{"insert": [], "delete": ["m1(a, b)"]}, {"insert": [], "delete": ["m2(a, c)"]}],
    }


def test_cli_repair_writes_the_repaired_relations_and_the_table(marriages, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["repair", str(marriages), "--out", str(out), "--policy", "trust=m1:2"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".nablog", "corrections.csv", "m1.csv", "m2.csv"]  # .nablog: the commit lock
    assert (out / "m2.csv").read_text() == "d,e\n"
    assert (out / "corrections.csv").read_text() == 'op,relation,fact\ndelete,m2,"m2(a, c)"\n'
    report = capsys.readouterr().out
    assert "g12: 1 violation\n" in report and "-m2(a, c)   removes 1 of g12" in report


def test_cli_repair_exit_status_says_whether_the_result_is_consistent(marriages, capsys):
    assert main(["repair", str(marriages), "--protect", "m1", "--protect", "m2"]) == 1
    assert "no correction table" in capsys.readouterr().out


def test_cli_explain_simplify(tmp_path, capsys):
    (tmp_path / "m.lp").write_text(EXAMPLE_5_1)
    assert main(["explain", str(tmp_path / "m.lp"), "--simplify", "+m1(a, c)."]) == 0
    assert capsys.readouterr().out == (
        "update: +m1(a, c).\n"
        "before the update (seed 004 §3: Optimize(After^U(Γ)), assuming the database is consistent now):\n"
        "  #constraint g12 :- m2(a, Z), Z != c.\n"
        "after the update (seed 004 §4, (2): in the updated state, with the trusted constraints):\n"
        "  #constraint g12 :- m2(a, Z), Z != c.\n"
    )


def test_verification_asks_deciding_facts_and_keeps_the_answers(marriages, tmp_path):
    rules, _, model = database(EXAMPLE_5_1)
    table = VerifiedTable(tmp_path / "verified.csv")
    answers = iter(["y", "n"])
    asked = []

    def read(prompt):
        asked.append(prompt)
        return next(answers)

    import io

    verified = verify_interactively(rules, model, table, read, io.StringIO())
    assert asked == ["is m1(a, b) true? [y/n, q to stop] ", "is m2(a, c) true? [y/n, q to stop] "]
    assert verified == {("m1", ("a", "b")): True, ("m2", ("a", "c")): False}
    assert (tmp_path / "verified.csv").read_text() == 'fact,verdict\n"m1(a, b)",true\n"m2(a, c)",false\n'
    assert [t.lines() for t in repair(rules, model, verified=verified, limit=5)] == [["-m2(a, c)"]]


def test_interactive_repair_through_a_pseudo_terminal(marriages, tmp_path):
    verified = tmp_path / "verified.csv"
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.executable, [sys.executable, "-m", "nablog.cli", "repair", str(marriages), "--interactive", "--verified", str(verified)])
    buffer = bytearray()
    screen = _read_until(fd, b"[y/n, q to stop] ", buffer)
    assert "2 alternative correction tables; 1 change m1(a, b)" in screen
    os.write(fd, b"y\n")
    screen = _read_until(fd, b"[y/n, q to stop] ", buffer)
    assert "is m2(a, c) true?" in screen
    os.write(fd, b"n\n")
    screen = _read_until(fd, b"-m2(a, c)", buffer)
    assert "every change of the correction table is verified." in screen
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert verified.read_text() == 'fact,verdict\n"m1(a, b)",true\n"m2(a, c)",false\n'


@pytest.mark.spark
def test_spark_finds_the_same_violations_and_tables(spark_engine):
    text = EXAMPLE_5_1 + "#fd m1: 1 -> 2.\n#fk m1: 2 -> w: 1.\n#base w/1.\nm1(a, d). w(b).\n"
    rules, facts, model = database(text)
    on_spark = spark_engine.evaluate(rules, facts)
    assert find_falsifiers(rules, on_spark, spark_engine).violations() == find_falsifiers(rules, model).violations()
    expected = [t.lines() for t in repair(rules, model, limit=5)]
    assert [t.lines() for t in repair(rules, on_spark, engine=spark_engine, limit=5)] == expected
    assert expected == [["-m1(a, b)", "-m1(a, d)"], ["-m1(a, d)", "-m2(a, c)"], ["+w(d)", "-m1(a, b)", "-m2(a, c)"]]
