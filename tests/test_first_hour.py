"""What a new user hits in the first hour (issue 32): the command's usage and help, bad input that
must be refused where it is, with a hint and without writing anything."""

from pathlib import Path

import pytest

from nablog.cli import build_parser, main

EXAMPLES = Path(__file__).resolve().parent.parent / "nablog" / "examples"
CHAIRS = str(EXAMPLES / "chairs.lp")


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def usage(command: str) -> str:
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[command]
    return " ".join(sub.format_usage().split())


@pytest.mark.parametrize(
    "command, tail",
    [
        ("propose", "FILE... REQUEST"),
        ("apply", "FILE... REQUEST"),
        ("propagate", "FILE... REQUEST"),
        ("query", "FILE... [ATOM]"),
        ("check", "FILE..."),
        ("undo", "FILE..."),
        ("explain", "FILE..."),
        ("commit", "URL CHANGE..."),
    ],
)
def test_usage_lines_show_the_files_then_the_request_once(command, tail):
    line = usage(command)
    assert line.endswith(tail), line
    assert "[FILE" not in line and "REQUEST ...]" not in line


def test_undo_has_no_options_that_do_nothing(capsys):
    line = usage("undo")
    assert "--engine" not in line and "--master" not in line and "--strict" not in line
    with pytest.raises(SystemExit):
        main(["undo", CHAIRS, "--engine", "clingo"])
    assert "unrecognized arguments: --engine" in capsys.readouterr().err


def test_explain_tableau_reads_data(capsys, tmp_path):
    program = tmp_path / "t.lp"
    program.write_text("p :- a, e.\n#base a/0, e/0.\n")
    data = tmp_path / "facts.lp"
    data.write_text("a. e.\n")
    status, out, err = run(capsys, "explain", str(program), "--data", str(data), "--tableau", "-p.")
    assert status == 0, err
    assert "HS = {-a}" in out and "HS = {-e}" in out


REQUEST = "+staff_chair(aravindan, gerhard)."


def chairs_copy(tmp_path: Path) -> str:
    path = tmp_path / "chairs.lp"
    path.write_text(Path(CHAIRS).read_text())
    return str(path)


def test_a_request_without_a_sign_says_so(capsys):
    status, out, err = run(capsys, "propose", CHAIRS, "staff_chair(aravindan, gerhard).")
    assert status == 2 and out == ""
    assert err.startswith("error: the request 'staff_chair(aravindan, gerhard).' says neither + (insert) nor - (delete)")
    assert "hint: write '+staff_chair(aravindan, gerhard).' to insert it or '-staff_chair(aravindan, gerhard).' to delete it" in err


def test_a_negative_max_fresh_names_the_flag(capsys):
    with pytest.raises(SystemExit) as info:
        main(["propose", CHAIRS, REQUEST, "--max-fresh", "-1"])
    assert info.value.code == 2
    assert "argument --max-fresh: must be 0 or more, not -1" in capsys.readouterr().err


def test_set_without_a_value_says_what_to_write_and_writes_nothing(capsys, tmp_path):
    path = chairs_copy(tmp_path)
    status, out, err = run(capsys, "apply", path, REQUEST, "--pick", "3", "--set", "new1")
    assert status == 2
    assert err == "error: --set new1: no value given\nhint: write --set new1=VALUE\n"
    assert Path(path).read_text() == Path(CHAIRS).read_text() and not (tmp_path / ".nablog" / "history.json").exists()
    status, out, err = run(capsys, "apply", path, REQUEST, "--pick", "3", "--set", "D=x")
    assert status == 2 and err.startswith("error: --set D=x: D is not a new constant of this realization\nhint: its new constants are new1")


@pytest.mark.parametrize("command", [["propose", REQUEST], ["repair"]])
def test_protecting_a_relation_the_program_lacks_is_refused(capsys, command):
    status, out, err = run(capsys, command[0], CHAIRS, *command[1:], "--protect", "staff_grup")
    assert status == 2 and out == ""
    assert err == "error: --protect staff_grup: the program has no relation staff_grup\nhint: did you mean staff_group?\n"
    status, out, err = run(capsys, command[0], CHAIRS, *command[1:], "--protect", "staff_group(a)")
    assert status == 2 and err == "error: --protect staff_group(a): staff_group has arity 2\nhint: write staff_group with 2 arguments\n"
    status, _, err = run(capsys, command[0], CHAIRS, *command[1:], "--protect", "staff_group")
    assert status == 0, err


def test_a_misspelt_body_predicate_is_an_error_on_the_command_line(capsys, tmp_path):
    path = tmp_path / "p.lp"
    path.write_text("edge(1, 2).\npath(X, Y) :- egde(X, Y).\n")
    status, out, err = run(capsys, "query", str(path))
    assert status == 2 and out == ""
    assert err.startswith("error: predicate egde/2 has no rules, no facts and no #base declaration\n  --> ")
    assert "hint: did you mean edge?" in err


@pytest.mark.parametrize("argv", [["check"], ["query"], ["propose", "+r(e1)."]])
def test_read_only_and_failing_commands_write_nothing_into_the_data_directory(capsys, tmp_path, argv):
    program = tmp_path / "p.lp"
    program.write_text("r(E) :- emp(E, D).\n")
    data = tmp_path / "data"
    data.mkdir()
    (data / "emp.csv").write_text("e,d\ne1,d1\ne2,d2\n")
    status, _, err = run(capsys, argv[0], str(program), *argv[1:], "--data", str(data))
    assert status in (0, 1), err
    assert sorted(p.name for p in data.iterdir()) == ["emp.csv"]
    (data / "bad.csv").write_text("1,2\n3\n")
    status, _, err = run(capsys, argv[0], str(program), *argv[1:], "--data", str(data))
    assert status == 2 and "row 2 of bad.csv has 1 field, expected 2" in err
    assert sorted(p.name for p in data.iterdir()) == ["bad.csv", "emp.csv"]


def test_camel_case_file_names_hold_snake_case_relations_that_rules_can_name(capsys, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "Album.csv").write_text("AlbumId,Title,ArtistId\n1,Rock,1\n2,Jazz,2\n")
    (data / "InvoiceLine.csv").write_text("InvoiceLineId,TrackId\n1,7\n2,8\n")
    program = tmp_path / "p.lp"
    program.write_text(":- album(A, T, X), album(B, T, Y), A != B.\n:- invoice_line(I, T), not album(T, _, _), T < 3.\ntitled(T) :- album(_, T, _).\n")
    status, out, err = run(capsys, "query", str(program), "--data", str(data), "--json")
    assert status == 0, err
    assert __import__("json").loads(out)["titled"] == [["Jazz"], ["Rock"]]
    assert f"{data / 'Album.csv'} (relation album): the first line (AlbumId,Title,ArtistId) is read as a header" in err
    (data / "Dup.csv").write_text("1,1\n")
    (data / "dup.csv").write_text("2,2\n")
    status, _, err = run(capsys, "check", str(program), "--data", str(data))
    assert status == 2 and "relation dup is stored twice" in err


def test_a_one_row_file_whose_first_line_names_the_columns_has_a_header(capsys, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "emp.csv").write_text("e,d\ne1,d1\n")
    program = tmp_path / "p.lp"
    program.write_text("#columns emp(e, d).\nmanager(E, D) :- emp(E, D).\n")
    status, out, err = run(capsys, "query", str(program), "--data", str(data), "--json")
    assert status == 0, err
    assert __import__("json").loads(out) == {"manager": [["e1", "d1"]]}
    assert "the first line names the #columns of emp: read as a header" in err
    program.write_text("manager(E, D) :- emp(E, D).\n")  # without #columns: one row, no evidence
    status, out, _ = run(capsys, "query", str(program), "--data", str(data), "--json")
    assert __import__("json").loads(out) == {"manager": [["e", "d"], ["e1", "d1"]]}


@pytest.mark.spark
def test_spark_check_json_says_when_it_holds_fewer_witnesses_than_the_count(capsys, tmp_path, spark_engine, monkeypatch):
    import json

    import nablog.engines.spark as spark

    monkeypatch.setattr(spark, "WITNESS_CAP", 1)
    (tmp_path / "p.lp").write_text("r(1). r(2). r(3).\n#constraint big :- r(X), X > 1.\n")
    status, out, _ = run(capsys, "check", str(tmp_path / "p.lp"), "--engine", "spark", "--json")
    assert status == 1
    [violation] = json.loads(out)["violations"]
    assert violation["count"] == 2 and len(violation["witnesses"]) == 1
    assert violation["witnesses_complete"] is False
    assert violation["note"] == "the first 1 witnesses of 2; --witnesses DIR writes all 2 to Parquet"


def test_repair_out_keeps_the_input_row_order(capsys, tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    (data / "t.csv").write_text("k,v\nz,1\na,2\nm,3\nm,4\nb,5\n")
    program = tmp_path / "p.lp"
    program.write_text("#columns t(k, v).\n#fd t: k -> v.\n")
    status, _, err = run(capsys, "repair", str(program), "--data", str(data), "--out", str(tmp_path / "out"))
    assert status == 0, err
    assert (tmp_path / "out" / "t.csv").read_text() == "k,v\nz,1\na,2\nm,3\nb,5\n"


@pytest.mark.parametrize("command", ["check", "repair"])
def test_long_witness_lines_are_cut_unless_full(capsys, tmp_path, command):
    wide = ", ".join(f'"{"v" * 30}{i}"' for i in range(12))
    program = tmp_path / "p.lp"
    program.write_text(f"w(1, {wide}). w(2, {wide}).\n:- w(X, {', '.join('_' for _ in range(12))}), X > 1.\n")
    status, out, _ = run(capsys, command, str(program))
    assert status in (0, 1)
    lines = out.splitlines()
    assert max(map(len, lines)) <= 160 and any(line.endswith(" … (--full)") for line in lines), out
    status, out, _ = run(capsys, command, str(program), "--full")
    assert "(--full)" not in out and any(len(line) > 400 for line in out.splitlines())


def test_many_side_effects_are_summarised_and_full_lists_them(tmp_path, capsys):
    # Issue 32: about 200 side-effect lines per realization at 1e6 facts. Past 20, a count per
    # view and the first 10; --full prints them all.
    program = tmp_path / "p.lp"
    program.write_text("v(X, Y) :- b(X), c(Y).\n" + "".join(f"c(c{i:02}).\n" for i in range(30)) + "b(0).\n")
    status, out, _ = run(capsys, "propose", str(program), "+v(1, c00).", "--limit", "1")
    lines = out.splitlines()
    assert status == 0 and lines[3:6] == ["[1] 1 change:", "      +b(1)", "    side effects on views:"]
    assert lines[6:8] == ["      29 in all: +v 29", "      +v(1, c01)"]
    assert lines[16:18] == ["      +v(1, c10)", "      ... and 19 more (--full prints them all)"]
    status, out, _ = run(capsys, "propose", str(program), "+v(1, c00).", "--limit", "1", "--full")
    assert [line.strip() for line in out.splitlines()[6:35]] == [f"+v(1, c{i:02})" for i in range(1, 30)]
