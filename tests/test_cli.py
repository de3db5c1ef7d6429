"""The `nablog` command: exact outputs, JSON formats and exit statuses."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nablog.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "nablog" / "examples"
CHAIRS = str(EXAMPLES / "chairs.lp")
PATHS = str(EXAMPLES / "paths.lp")


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_query_json_prints_the_derived_relations(capsys):
    status, out, err = run(capsys, "query", PATHS, "--json")
    assert status == 0 and err == ""
    assert json.loads(out) == {
        "aux": [],
        "h": [[1, 3]],
        "ic1": [[]],
        "ic2": [[]],
        "p": [[1, 2], [1, 3], [1, 4], [2, 3]],
    }


def test_query_json_with_an_atom_prints_matching_rows(capsys):
    status, out, _ = run(capsys, "query", CHAIRS, "staff_chair(X, matthias)", "--json")
    assert status == 0
    assert json.loads(out) == [["aravindan", "matthias"], ["delhibabu", "matthias"]]


def test_query_table(capsys):
    status, out, _ = run(capsys, "query", CHAIRS, "staff_chair(X, Y)")
    assert status == 0
    assert out == "staff_chair (2 rows)\n  aravindan  matthias\n  delhibabu  matthias\n\n"


@pytest.mark.parametrize("engine", ["python", "clingo"])
def test_query_engines_agree(capsys, engine):
    _, out, _ = run(capsys, "query", PATHS, "--json", "--engine", engine)
    assert json.loads(out)["p"] == [[1, 2], [1, 3], [1, 4], [2, 3]]


def test_check_consistent(capsys):
    status, out, _ = run(capsys, "check", CHAIRS)
    assert (status, out) == (0, "consistent: 2 constraints hold\n")


def test_check_reports_violations_and_exits_1(capsys, tmp_path):
    extra = tmp_path / "more.lp"
    extra.write_text("group_chair(infor1, gerhard).\n")
    status, out, _ = run(capsys, "check", CHAIRS, str(extra), "--json")
    assert status == 1
    assert json.loads(out) == {
        "consistent": False,
        "violations": [
            {
                "constraint": "one_chair_per_group",
                "count": 2,
                "witnesses": [
                    ["group_chair(infor1, gerhard)", "group_chair(infor1, matthias)"],
                    ["group_chair(infor1, matthias)", "group_chair(infor1, gerhard)"],
                ],
            },
            {
                "constraint": "one_group_per_chair",
                "count": 2,
                "witnesses": [
                    ["group_chair(infor1, gerhard)", "group_chair(infor2, gerhard)"],
                    ["group_chair(infor2, gerhard)", "group_chair(infor1, gerhard)"],
                ],
            },
        ],
    }


def test_check_table_names_unnamed_denials_and_failed_requirements(capsys, tmp_path):
    program = tmp_path / "p.lp"
    program.write_text("e(1, 1).\n:- e(X, X).\nok :- e(2, _).\n#require ok.\n")
    status, out, _ = run(capsys, "check", str(program))
    assert status == 1
    assert out == (
        "inconsistent: 2 of 2 constraints violated\n\n"
        f"{program}:2: 1 violation\n  :- e(X, X).\n    e(1, 1)\n\n"
        "ok: 1 violation\n  #require ok.\n    (the required atom does not hold)\n\n"
    )


def test_user_errors_exit_2_with_the_message_on_stderr(capsys, tmp_path):
    program = tmp_path / "bad.lp"
    program.write_text("p(X) :- q(Y).\n")
    status, out, err = run(capsys, "query", str(program))
    assert status == 2 and out == ""
    assert err.startswith(f"error: unsafe rule: variable X in the head does not occur in a positive body literal\n  --> {program}:1:3\n")


def test_unknown_predicate_in_a_query_exits_2(capsys):
    status, _, err = run(capsys, "query", CHAIRS, "staff_char(X, Y)")
    assert status == 2
    assert err.splitlines()[0] == "error: unknown predicate staff_char/2 in the query"
    assert err.splitlines()[-1] == "hint: did you mean staff_chair?"


def test_explain_prints_strata_and_writes_dot(capsys, tmp_path):
    dot = tmp_path / "deps.dot"
    status, out, _ = run(capsys, "explain", PATHS, "--dot", str(dot))
    assert status == 0
    assert out.startswith("strata:\n  0: aux, e, ic1, p\n  1: h, ic2\n")
    assert "  p -> p\n" in out and "  aux -> ic2  (negative)\n" in out
    text = dot.read_text()
    assert text.startswith("digraph dependencies {") and '"aux" -> "ic2" [style=dashed, label="not"];' in text


def test_version_and_help_run_as_a_real_process():
    done = subprocess.run([sys.executable, "-m", "nablog.cli", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("nablog ")
    done = subprocess.run([sys.executable, "-m", "nablog.cli", "query", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--engine" in done.stdout


def test_every_command_of_the_parser_has_the_function_that_runs_it():
    from nablog.cli import COMMANDS, build_parser

    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.dest == "command"]
    assert sorted(subparsers.choices) == sorted(COMMANDS)


@pytest.mark.parametrize("method", ["incremental", "rules", "maintenance", "rod"])
def test_propagate_seed_001_example_2_exact_differentials(capsys, method):
    graph = str(EXAMPLES / "graph.lp")
    assert main(["propagate", graph, "-edge(b, c).", "+edge(h, d).", "--json", "--method", method]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "insert": ["closure(h, c)", "closure(h, d)", "closure(h, g)", "edge(h, d)"],
        "delete": ["closure(a, c)", "closure(a, g)", "closure(b, c)", "closure(b, g)", "edge(b, c)"],
    }


def test_propagate_refuses_to_change_a_view_directly(capsys):
    assert main(["propagate", str(EXAMPLES / "graph.lp"), "+closure(a, a)."]) == 2
    assert capsys.readouterr().err.splitlines()[0] == "error: closure is a view: an update changes base facts only"


def test_explain_prints_transformed_rules(capsys):
    assert main(["explain", str(EXAMPLES / "graph.lp"), "--rules", "normalized"]) == 0
    assert capsys.readouterr().out == (
        "closure(X, Y) :- edge(X, Y).\n"
        "closure(X, Y) :- aux1__closure(X, Y).\n"
        "aux1__closure(X, Y) :- aux2__closure(X, Y, Z).\n"
        "aux2__closure(X, Y, Z) :- edge(X, Z), closure(Z, Y).\n"
    )
    assert main(["explain", str(EXAMPLES / "graph.lp"), "--rules", "up"]) == 0
    assert "ins__closure(X, Y) :- ins__edge(X, Y), not closure(X, Y).\n" in capsys.readouterr().out
    assert main(["explain", str(EXAMPLES / "graph.lp"), "--rules", "vu"]) == 0
    assert "vu_ins__edge(X, Y) ; vu_ins__aux1__closure(X, Y) :- vu_ins__closure(X, Y).\n" in capsys.readouterr().out


def test_a_request_may_start_with_a_deletion_without_spaces_and_come_after_the_options(capsys, tmp_path):
    # argparse alone reads -edge(a,b). as an unknown option and rejects a request after --data.
    program = tmp_path / "g.lp"
    program.write_text("edge(a,b). edge(b,c).\npath(X,Y) :- edge(X,Y).\npath(X,Y) :- edge(X,Z), path(Z,Y).\n")
    data = tmp_path / "data"
    data.mkdir()
    expected = {"insert": [], "delete": ["edge(a, b)", "path(a, b)", "path(a, c)"]}
    for argv in (
        ["propagate", str(program), "-edge(a,b).", "--json"],
        ["propagate", str(program), "--data", str(data), "-edge(a,b).", "--json"],
        ["propagate", "--json", str(program), "--", "-edge(a,b)."],
    ):
        assert main(argv) == 0
        assert json.loads(capsys.readouterr().out) == expected


def test_a_long_request_and_an_update_option_without_spaces(capsys, tmp_path):
    program = tmp_path / "g.lp"
    program.write_text("#base e/2.\n#constraint c :- e(X, Y), e(Y, X).\n")
    # Over 255 bytes and no slash: no file system accepts it as a name, so it is a request.
    request = " ".join(f"+e(x{i},y)." for i in range(40))
    assert main(["propagate", str(program), request, "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["insert"]) == 40
    assert main(["explain", str(program), "--simplify", "+e(a,b)."]) == 0
    assert "e(b, a)" in capsys.readouterr().out
    assert main(["explain", str(program), "--simplify", "-e(a,b)."]) == 0  # argparse alone: "expected one argument"
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["check", str(program), "--limit", "-1"])
    assert "must be 0 or more" in capsys.readouterr().err


def test_an_empty_base_relation_warns_and_goes_on_unless_strict(capsys, tmp_path):
    program = tmp_path / "emp.lp"
    program.write_text("dept(a).\nsize(D, N) :- dept(D), N = #count{E : works(E, D)}.\n")
    status, out, err = run(capsys, "query", str(program), "size(D, N)")
    assert status == 0 and "a" in out and "0" in out
    assert err == (
        "warning: predicate works/2 has no rules, no facts and no #base declaration: it is read as an empty relation\n"
        f"  --> {program}:2:39\n"
        "   |\n"
        " 2 | size(D, N) :- dept(D), N = #count{E : works(E, D)}.\n"
        "   |                                       ^\n"
        "hint: declare it with '#base works/2.' if it is a base relation without facts yet\n"
    )
    status, out, err = run(capsys, "check", str(program), "--strict")
    assert status == 2 and out == "" and err.startswith("error: predicate works/2 has no rules, no facts and no #base declaration\n")


@pytest.mark.parametrize(
    "option, message",
    [
        (["--timeout", "inf"], "argument --timeout: must be a finite number of seconds above 0, not inf (leave --timeout out to search without one)"),
        (["--timeout", "nan"], "argument --timeout: must be a finite number of seconds above 0, not nan (leave --timeout out to search without one)"),
        (["--timeout", "-5"], "argument --timeout: must be a finite number of seconds above 0, not -5 (leave --timeout out to search without one)"),
        (["--timeout", "0"], "argument --timeout: must be a finite number of seconds above 0, not 0 (leave --timeout out to search without one)"),
        (["--limit", "0"], "argument --limit: must be 1 or more (leave --limit out for every realization)"),
    ],
)
def test_bounds_that_bound_nothing_are_refused(capsys, option, message):
    with pytest.raises(SystemExit) as info:
        main(["propose", CHAIRS, "+staff_chair(aravindan, gerhard).", *option])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(message)


def test_apply_verifies_a_substituted_new_constant_before_writing(tmp_path, capsys):
    path = tmp_path / "chairs.lp"
    path.write_text(Path(CHAIRS).read_text())
    original = path.read_text()
    status, out, err = run(capsys, "apply", str(path), "+staff_chair(aravindan, gerhard).", "--pick", "3", "--set", "new1=infor1")
    assert status == 2
    assert err.splitlines() == [
        "error: the changes violate constraint one_chair_per_group: group_chair(infor1, gerhard), group_chair(infor1, matthias)",
        "hint: choose another value for the new constants, or propose again",
    ]
    assert path.read_text() == original
    assert not (tmp_path / ".nablog").exists()
    status, out, err = run(capsys, "apply", str(path), "+staff_chair(aravindan, gerhard).", "--pick", "3", "--set", "new1=infor3")
    assert status == 0 and "+group_chair(infor3, gerhard)" in out


def test_a_family_is_one_row_in_json_and_a_member_is_applied_by_its_value(tmp_path, capsys):
    path = tmp_path / "chairs.lp"
    path.write_text(Path(CHAIRS).read_text())
    request = "+staff_chair(aravindan, gerhard)."
    status, out, err = run(capsys, "propose", str(path), request, "--candidates", "herbrand", "--json", "--stream")
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[-1] == {"status": "complete", "message": "3 minimal realizations (1 of them family of 5 members)"}
    family = rows[1]["realization"]
    assert family["insert"] == ["group_chair(D, gerhard)", "staff_group(aravindan, D)"]
    assert family["family"]["members"] == [["aravindan"], ["delhibabu"], ["gerhard"], ["matthias"], ["new1"]]
    status, out, err = run(capsys, "apply", str(path), request, "--candidates", "herbrand", "--pick", "2")
    assert status == 2 and err.splitlines()[0] == "error: a family of realizations is not one change"
    status, out, err = run(capsys, "apply", str(path), request, "--candidates", "herbrand", "--pick", "2", "--set", "D=new1", "--set", "new1=infor3")
    assert status == 0
    assert out.splitlines()[:4] == ["applied:", "  +group_chair(infor3, gerhard)", "  +staff_chair(aravindan, gerhard)", "  +staff_group(aravindan, infor3)"]


def test_explain_prints_seed_001_maintenance_and_rod_rules(capsys):
    assert main(["explain", str(EXAMPLES / "graph.lp"), "--rules", "maintenance"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "minus__closure(X, Y) :- del__closure(X, Y), not ins__closure(X, Y), not red__closure(X, Y)." in out
    assert main(["explain", str(EXAMPLES / "graph.lp"), "--rules", "rod"]) == 0
    assert "m_bb__closure(X, Y) :- ins__closure(X, Y)." in capsys.readouterr().out.splitlines()


MEDIATOR = """b(X) :- X >= 0, X <= 1 ||.
h1 :- || b(X).
d0(X) :- || b(X).
d0(X) :- X >= 1, X <= 5 || h1.
"""


@pytest.mark.parametrize(
    "method, view",
    [
        # Straight Delete keeps the atoms in derivation order: d0(9), inserted last, stays last
        ("incremental", ["b(X) :- X <= 1, X >= 0.", "d0(X) :- X <= 1, X >= 0.", "d0(X) :- X = 9."]),
        ("stdel", ["b(X) :- X <= 1, X >= 0.", "d0(X) :- X <= 1, X >= 0.", "d0(X) :- X = 9."]),
        # Extended DRed narrows d0 by P_OUT (d0(X) <- 1 <= X <= 5) and rederives d0(1) inside it
        (
            "dred",
            [
                "b(X) :- X <= 1, X >= 0.",
                "d0(X) :- X <= 1, X >= 0, not(X <= 5, X >= 1, V1 <= 1, V1 >= 0).",
                "d0(X) :- X = 9.",
                "d0(X) :- X <= 1, X <= 5, X >= 0, X >= 1, V1 <= 1, V1 >= 0.",
            ],
        ),
        # recomputation derives the inserted fact d0(9) in the first round
        ("recompute", ["b(X) :- X <= 1, X >= 0.", "d0(X) :- X = 9.", "d0(X) :- X <= 1, X >= 0."]),
    ],
)
def test_propagate_method_reaches_each_deletion_method_of_a_mediated_view(capsys, tmp_path, method, view):
    program = tmp_path / "mediator.lp"
    program.write_text(MEDIATOR)
    assert main(["propagate", str(program), "+d0(X) || X = 9.", "-h1.", "--method", method, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"view": view}


def test_propagate_method_of_the_other_kind_of_program_is_refused(capsys, tmp_path):
    program = tmp_path / "mediator.lp"
    program.write_text(MEDIATOR)
    assert main(["propagate", str(program), "-h1.", "--method", "rules"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: 'rules' is not a deletion method of mediated views",
        "hint: choose stdel (Straight Delete), dred (Extended DRed) or recompute",
    ]
    assert main(["propagate", str(EXAMPLES / "graph.lp"), "-edge(b, c).", "--method", "dred"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: dred maintains mediated views",
        "hint: this program has no constrained rule: choose incremental, rules, maintenance or rod",
    ]
