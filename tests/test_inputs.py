"""Inputs never break the tool (issue 15, point 10 and item 6): each case of the issue as a
regression test, and a bounded mutation fuzzer over the parser and the command line that accepts
only a located error or an answer — never a traceback, an internal error or a hang."""

from __future__ import annotations

import random
import signal
import shutil
from contextlib import contextmanager
from pathlib import Path

import pytest

from nablog import Database, NablogError
from nablog.cli import main
from nablog.lang import NablogSyntaxError, parse
from tests.strategies import examples

EXAMPLES = Path(__file__).resolve().parent.parent / "nablog" / "examples"
FUZZED = {"parser": 0, "cli": 0}


def error_of(argv, capsys) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse's usage errors
        code = exit.code
    out, err = capsys.readouterr()
    return code, out, err


# -- the numbered cases --------------------------------------------------------------------------


def test_an_integer_of_more_than_4300_digits_is_a_located_error():
    with pytest.raises(NablogSyntaxError) as info:
        parse("p(1).\np(" + "7" * 5000 + ").")
    assert info.value.lineno == 2 and "integer of 5000 digits is too long" in str(info.value)
    assert len(str(info.value)) < 600  # the line is shown cut, not whole


def test_a_huge_arity_is_a_located_error():
    with pytest.raises(NablogSyntaxError, match=r"arity 99999999999999999999 is too large") as info:
        parse("#base p/99999999999999999999.")
    assert info.value.column == 9


@pytest.mark.parametrize("opening", ["(", "-", "|"])
def test_a_term_nested_past_the_limit_is_a_located_error_not_a_recursion_error(opening):
    # Found by the mutation fuzzer: 500 opening parentheses ended in RecursionError.
    with pytest.raises(NablogSyntaxError, match="terms nested more than 100 deep") as info:
        parse("p(1).\np(" + opening * 500 + "1).")
    assert (info.value.lineno, info.value.column) == (2, 103)
    assert parse("p(" + "(" * 100 + "1" + ")" * 100 + ").") == parse("p(1).")


@pytest.mark.parametrize("separator", ["\f", "\v", "\u2028", "\x1c", "\u0085"])
def test_the_line_shown_is_the_line_an_editor_shows(separator):
    text = f"% a comment{separator}with a break character\np(X) :- q(Y).\n"
    with pytest.raises(NablogError) as info:
        Database.from_text(text)
    assert info.value.lineno == 2 and " 2 | p(X) :- q(Y)." in str(info.value)


def test_crlf_and_cr_count_as_one_line_break():
    for newline in ("\r\n", "\r"):
        with pytest.raises(NablogError) as info:
            parse(f"p(1).{newline}p(2).{newline}p(3) q.")
        assert info.value.lineno == 3 and info.value.column == 6


def test_a_dangling_symlink_in_a_data_directory_is_reported(tmp_path, capsys):
    (tmp_path / "r.lp").write_text("p(X) :- e(X).\n")
    data = tmp_path / "d"
    data.mkdir()
    (data / "e.csv").write_text("1\n")
    (data / "gone.csv").symlink_to(tmp_path / "nowhere.csv")
    code, out, err = error_of(["check", str(tmp_path / "r.lp"), "--data", str(data)], capsys)
    assert code == 2 and "gone.csv: a symbolic link to" in err and "which does not exist" in err
    assert "consistent" not in out


def test_a_long_offending_csv_value_is_abbreviated(tmp_path, capsys):
    (tmp_path / "r.lp").write_text("p(X) :- e(X, Y).\n")
    data = tmp_path / "d"
    data.mkdir()
    (data / "e.csv").write_text('a,b\n"' + "x" * 1_000_000 + '"junk,c\n', encoding="utf-8")
    code, _, err = error_of(["check", str(tmp_path / "r.lp"), "--data", str(data), "--no-header"], capsys)
    assert code == 2 and "malformed CSV in row 2" in err
    assert len(err) < 2000


def test_every_command_accepts_its_atom_or_request_after_the_options(tmp_path, capsys):
    chairs = tmp_path / "chairs.lp"
    shutil.copy(EXAMPLES / "chairs.lp", chairs)
    code, out, _ = error_of(["query", str(chairs), "--engine", "python", "staff_chair(X, matthias)", "--json"], capsys)
    assert code == 0 and out == '[["aravindan", "matthias"], ["delhibabu", "matthias"]]\n'
    code, out, _ = error_of(["propose", str(chairs), "--limit", "1", "+staff_chair(aravindan, gerhard)."], capsys)
    assert code == 0 and "request: +staff_chair(aravindan, gerhard)." in out and "1 minimal realization" in out
    code, _, err = error_of(["query", str(chairs), "staff_chair(X, Y)", "--bogus"], capsys)
    assert code == 2 and "unrecognized arguments: --bogus" in err


@pytest.mark.parametrize("command", ["propagate", "propose", "apply"])
def test_a_request_naming_an_unknown_predicate_is_refused_by_every_command(tmp_path, capsys, command):
    chairs = tmp_path / "chairs.lp"
    shutil.copy(EXAMPLES / "chairs.lp", chairs)
    before = chairs.read_bytes()
    extra = ["--pick", "1"] if command == "apply" else []
    code, _, err = error_of([command, str(chairs), "+staff_grop(aravindan, infor2).", *extra], capsys)
    assert code == 2 and "unknown predicate staff_grop/2 in the request" in err and "did you mean staff_group?" in err
    assert chairs.read_bytes() == before


# -- the mutation fuzzer -------------------------------------------------------------------------

SEEDS = [(EXAMPLES / name).read_text(encoding="utf-8") for name in ("chairs.lp", "graph.lp", "paths.lp", "hospital.lp")]
PIECES = [
    "\x00", "\r", "\r\n", "\f", "\v", "\u2028", "\t", '"', "\\", "%", "%*", "*%", ".", ",", ":-", "(", ")", "not ",
    "#base", "#columns", "#constraint", "#fd", "#key", "#fk", "_", "X", "é", "日", "😀", "-", "99999999999999999999",
    "9" * 4400, "a" * 5000, "(" * 2000, ")" * 2000, "p(" * 500, "=", "!=", "<", "/", ";", "|", "->",
]


def mutate(text: str, rng: random.Random) -> str:
    """A few random character and token edits, sometimes a long line or deep nesting."""
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(text) + 1)
        kind = rng.random()
        if kind < 0.3:
            text = text[:i] + rng.choice(PIECES) + text[i:]
        elif kind < 0.55:
            text = text[:i] + text[i + rng.randint(1, 8):]
        elif kind < 0.75:
            text = text[:i] + chr(rng.choice([rng.randrange(32, 127), rng.randrange(0, 32), rng.randrange(128, 0x3000)])) + text[i + 1:]
        elif kind < 0.9:
            j = rng.randrange(len(text) + 1)
            a, b = sorted((i, j))
            text = text[:b] + text[a:b] + text[b:]  # duplicate a span
        else:
            text = text[:i] + text[i:i + 40] * rng.randint(50, 400) + text[i:]  # a long line
    return text


@contextmanager
def deadline(seconds: float):
    def expired(signum, frame):
        raise TimeoutError("no answer in time: a hang")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_mutated_programs_give_a_located_error_or_an_answer():
    rng = random.Random(15)
    for n in range(examples(400)):
        text = mutate(rng.choice(SEEDS), rng)
        FUZZED["parser"] += 1
        with deadline(20):
            try:
                db = Database.from_text(text)
                db.model()
                db.violations()
            except NablogError as error:
                rendered = str(error)
                assert rendered.startswith("error: "), (n, text[:200])
                if isinstance(error, NablogSyntaxError):
                    assert error.lineno is not None and error.column is not None, (n, rendered)
                assert len(rendered) < 3000, (n, "message too long")


def test_mutated_command_lines_give_an_error_or_an_answer(tmp_path, capsys):
    rng = random.Random(1515)
    for name in ("chairs.lp", "graph.lp"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    requests = ["+staff_chair(aravindan, gerhard).", "-edge(b, c).", "+edge(h, d).", "-staff_group(delhibabu, infor1)."]
    commands = [
        lambda r: ["check", str(tmp_path / "chairs.lp")],
        lambda r: ["query", str(tmp_path / "graph.lp"), mutate("closure(X, c)", rng)],
        lambda r: ["propose", str(tmp_path / "chairs.lp"), r, "--limit", "2"],
        lambda r: ["propagate", str(tmp_path / "graph.lp"), r],
        lambda r: ["explain", str(tmp_path / "graph.lp")],
    ]
    for n in range(examples(120)):
        request = mutate(rng.choice(requests), rng) if rng.random() < 0.8 else rng.choice(requests)
        argv = rng.choice(commands)(request)
        if rng.random() < 0.2:
            argv.insert(rng.randrange(1, len(argv) + 1), rng.choice(["--json", "--engine", "--limit", "-x", "--data", "--", "--no-header"]))
        FUZZED["cli"] += 1
        with deadline(20):
            code, out, err = error_of(argv, capsys)
        assert code in (0, 1, 2), (argv, code, err)
        assert "internal error" not in err and "Traceback" not in err, (argv, err)
        if code == 2 and err and not err.startswith("usage:"):
            assert err.startswith("error: "), (argv, err[:300])


def test_zz_fuzz_inputs(capsys):
    with capsys.disabled():
        print(f"\n[issue 15] fuzz inputs: {FUZZED['parser']} mutated programs, {FUZZED['cli']} mutated command lines")
    assert sum(FUZZED.values()) > 0
