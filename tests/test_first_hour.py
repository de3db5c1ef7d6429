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
