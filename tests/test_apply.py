"""Applying realizations: write-back to every kind of fact store, atomicity, staleness, undo, CLI."""

import json
import os
import pty
import select
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from nablog import Database, NablogError
from nablog.cli import main

EXAMPLES = Path(__file__).resolve().parent.parent / "nablog" / "examples"
RULES = """staff_chair(X, Y) :- staff_group(X, Z), group_chair(Z, Y).
#constraint one_chair :- group_chair(G, X), group_chair(G, Y), X != Y.
#constraint one_group :- group_chair(G, X), group_chair(H, X), G != H.
"""
REQUEST = "+staff_chair(aravindan, gerhard)."


@pytest.fixture
def chairs(tmp_path):
    path = tmp_path / "chairs.lp"
    shutil.copy(EXAMPLES / "chairs.lp", path)
    return path


def test_apply_rewrites_a_mixed_program_file_keeping_rules_and_comments(chairs):
    original = chairs.read_text()
    db = Database.from_files(chairs)
    update = db.apply(db.propose(REQUEST)[1], request=REQUEST)
    assert update.lines() == [
        "+group_chair(infor1, gerhard)",
        "+staff_chair(aravindan, gerhard)",
        "+staff_chair(delhibabu, gerhard)",
        "-group_chair(infor1, matthias)",
        "-group_chair(infor2, gerhard)",
        "-staff_chair(aravindan, matthias)",
        "-staff_chair(delhibabu, matthias)",
    ]
    text = chairs.read_text()
    assert [line for line in original.splitlines() if not line.startswith("group_chair")] == [
        line for line in text.splitlines() if not line.startswith("group_chair")
    ]
    assert Database.from_files(chairs).query("group_chair(G, C)") == [("infor1", "gerhard")]
    assert db.query("staff_chair(X, gerhard)") == [("aravindan", "gerhard"), ("delhibabu", "gerhard")]
    assert db.undo().lines() == [
        "+group_chair(infor1, matthias)",
        "+group_chair(infor2, gerhard)",
        "+staff_chair(aravindan, matthias)",
        "+staff_chair(delhibabu, matthias)",
        "-group_chair(infor1, gerhard)",
        "-staff_chair(aravindan, gerhard)",
        "-staff_chair(delhibabu, gerhard)",
    ]
    assert Database.from_files(chairs).facts == Database.from_text(original).facts
    assert db.undo() is None


def test_apply_writes_csv_directories(tmp_path):
    (tmp_path / "rules.lp").write_text(RULES)
    data = tmp_path / "data"
    data.mkdir()
    (data / "group_chair.csv").write_text("group,chair\ninfor1,matthias\ninfor2,gerhard\n")
    (data / "staff_group.csv").write_text("person,group\ndelhibabu,infor1\naravindan,infor1\n")
    db = Database.from_files(tmp_path / "rules.lp", data=[data])
    db.apply(db.propose(REQUEST)[0])
    # Untouched rows keep their order; the new row comes last.
    assert (data / "staff_group.csv").read_text() == "person,group\ndelhibabu,infor1\naravindan,infor1\naravindan,infor2\n"
    assert sorted(p.name for p in data.iterdir()) == [".nablog", "group_chair.csv", "staff_group.csv"]  # .nablog: header decisions


def test_apply_writes_sqlite_in_one_transaction(tmp_path):
    (tmp_path / "rules.lp").write_text(RULES)
    path = tmp_path / "chairs.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE group_chair (g TEXT, c TEXT)")
        con.execute("CREATE TABLE staff_group (p TEXT, g TEXT)")
        con.executemany("INSERT INTO group_chair VALUES (?, ?)", [("infor1", "matthias"), ("infor2", "gerhard")])
        con.executemany("INSERT INTO staff_group VALUES (?, ?)", [("delhibabu", "infor1"), ("aravindan", "infor1")])
    db = Database.from_files(tmp_path / "rules.lp", data=[path])
    db.apply(db.propose(REQUEST)[1])
    with sqlite3.connect(path) as con:
        assert sorted(con.execute("SELECT * FROM group_chair")) == [("infor1", "gerhard")]


def test_a_stale_realization_is_refused(chairs):
    db = Database.from_files(chairs)
    realization = db.propose(REQUEST)[0]
    time.sleep(0.01)
    chairs.write_text(chairs.read_text() + "staff_group(someone, infor2).\n")
    with pytest.raises(NablogError) as info:
        db.apply(realization)
    assert str(info.value) == (
        "error: the data changed since this realization was proposed\n"
        "hint: propose again to get realizations for the current data"
    )
    assert "aravindan, infor2" not in chairs.read_text()


def test_a_failed_write_leaves_the_file_intact(chairs, monkeypatch):
    original = chairs.read_text()
    db = Database.from_files(chairs)
    realization = db.propose(REQUEST)[1]

    replace = os.replace

    def crash(source, target):
        if os.fspath(target) == os.fspath(chairs):
            raise OSError(28, "No space left on device")
        replace(source, target)

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(NablogError) as info:
        db.apply(realization)
    assert str(info.value).splitlines()[0] == f"error: cannot replace {chairs}: No space left on device"
    assert chairs.read_text() == original
    assert [p.name for p in chairs.parent.iterdir() if p.name != "chairs.lp"] == [".nablog"]
    state = chairs.parent / ".nablog"
    assert sorted(p.name for p in state.iterdir()) == ["lock", "undo"]  # no journal, no history entry, no version: the number is part of the commit
    assert list((state / "undo").iterdir()) == []  # no saved version left


def test_cli_propose_json(chairs, capsys):
    assert main(["propose", str(chairs), REQUEST, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "complete"
    assert report["realizations"][0] == {
        "insert": ["staff_group(aravindan, infor2)"],
        "delete": [],
        "side_effects": {"insert": [], "delete": []},
        "fresh": [],
    }
    assert report["realizations"][1]["side_effects"] == {
        "insert": ["staff_chair(delhibabu, gerhard)"],
        "delete": ["staff_chair(aravindan, matthias)", "staff_chair(delhibabu, matthias)"],
    }


def test_cli_deletion_request_written_with_a_leading_minus(chairs, capsys):
    assert main(["propose", str(chairs), "-staff_chair(delhibabu, matthias).", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [r["delete"] for r in report["realizations"]] == [["group_chair(infor1, matthias)"], ["staff_group(delhibabu, infor1)"]]


def test_cli_apply_pick_with_a_value_for_the_new_constant_then_undo(chairs, capsys):
    original = chairs.read_text()
    assert main(["apply", str(chairs), REQUEST, "--pick", "3", "--set", "new1=infor3"]) == 0
    assert "group_chair(infor3, gerhard)." in chairs.read_text()
    assert main(["undo", str(chairs)]) == 0
    assert chairs.read_text() == original
    out = capsys.readouterr().out
    assert out.endswith("undone:\n  +group_chair(infor2, gerhard)\n  -group_chair(infor3, gerhard)\n  -staff_chair(aravindan, gerhard)\n  -staff_group(aravindan, infor3)\n")


def test_cli_apply_pick_out_of_range(chairs, capsys):
    assert main(["apply", str(chairs), REQUEST, "--pick", "9"]) == 2
    assert capsys.readouterr().err.startswith("error: --pick 9 is out of range: the proposal has 3 realizations")


def test_cli_interactive_refuses_without_a_terminal(chairs, capsys, monkeypatch):
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False)
    assert main(["apply", str(chairs), REQUEST, "--interactive"]) == 2
    assert "--pick N" in capsys.readouterr().err


def _read_until(fd: int, marker: bytes, buffer: bytearray, timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while marker not in buffer:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"timed out waiting for {marker!r}; screen so far:\n{buffer.decode(errors='replace')}")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            buffer.extend(chunk)
    index = buffer.index(marker) + len(marker)
    seen = buffer[:index].decode(errors="replace")
    del buffer[:index]
    return seen


def test_interactive_apply_through_a_pseudo_terminal(chairs):
    pid, fd = pty.fork()
    if pid == 0:  # the child runs the command on the pseudo-terminal
        os.environ["COLUMNS"] = "140"
        os.execv(sys.executable, [sys.executable, "-m", "nablog.cli", "apply", str(chairs), REQUEST, "--interactive"])
    buffer = bytearray()
    screen = _read_until(fd, b"choose> ", buffer)
    assert "3 minimal realizations" in screen
    assert "[1] 1 change" in screen and "[2] 3 changes" in screen and "[3] 3 changes" in screen
    os.write(fd, b"i 2\n")
    screen = _read_until(fd, b"choose> ", buffer)
    assert "+staff_chair(delhibabu, gerhard)" in screen
    os.write(fd, b"3\n")
    _read_until(fd, b"(Enter keeps new1)> ", buffer)
    os.write(fd, b"infor9\n")
    screen = _read_until(fd, b"apply these changes? [y/N] ", buffer)
    assert "+group_chair(infor9, gerhard)" in screen and "+staff_group(aravindan, infor9)" in screen
    os.write(fd, b"y\n")
    screen = _read_until(fd, b"undo with", buffer)
    assert "applied:" in screen
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert Database.from_files(chairs).query("group_chair(G, gerhard)") == [("infor9", "gerhard")]


def test_undo_keeps_facts_that_were_there_before_apply(tmp_path):
    program = tmp_path / "prog.lp"
    program.write_text("r(X) :- q(X, Y), s(Y).\nq(1, b).\ns(c).\n#base q/2.\n")
    db = Database.from_files(program)
    realization = next(r for r in db.propose("+r(2).") if r.fresh).substitute({"new1": "c"})
    assert db.apply(realization).lines() == ["+q(2, c)", "+r(2)"]  # s(c) was there already
    db.undo()
    assert Database.from_files(program).facts == {"q": {(1, "b")}, "s": {("c",)}}


def test_in_memory_databases_refuse_stale_realizations_too():
    db = Database.from_text("p(X) :- a(X). p(X) :- b(X). #base a/1. #base b/1. #constraint one :- a(X), b(X).")
    proposal = db.propose("+p(1).")
    db.apply(proposal[0])
    with pytest.raises(NablogError) as info:
        db.apply(proposal[1])
    assert str(info.value).splitlines()[0] == "error: the data changed since this realization was proposed"


def test_split_predicates_report_each_change_once():
    db = Database.from_text("p(X) :- q(X). p(5). q(1). #base q/1.")
    assert db.apply(db.propose("+p(2).")[0]).lines() == ["+p(2)"]


def test_the_chooser_shows_a_family_as_one_column_and_asks_for_its_value(monkeypatch):
    import io

    # The columns fit the terminal's width: pinned, or a worker without a terminal (xdist) gets 80.
    monkeypatch.setenv("COLUMNS", "100")

    from nablog.interactive import choose, columns

    db = Database.from_files(EXAMPLES / "chairs.lp")
    proposal = db.propose("+staff_chair(aravindan, gerhard).", candidates="herbrand")
    answers = iter(["2", "infor7", "2", "new1", "infor3", "y"])
    out = io.StringIO()
    chosen = choose(proposal, lambda current: current, lambda prompt: (out.write(prompt), next(answers))[1], out)
    text = out.getvalue()
    assert "[2] 3 changes × 5 (a family)" in text
    # The condition is wrapped in its column, whole.
    column = [line.split("|")[1].strip() for line in columns(proposal.realizations[:3], 1, 100)[4:9]]
    assert column == ["where D any value or a new", "one, without group_chair(D,", "gerhard) or", "staff_group(aravindan, D)", "now (5 values)"]
    assert "no member has D=infor7" in text
    assert chosen.changes.lines() == ["+group_chair(infor3, gerhard)", "+staff_group(aravindan, infor3)", "-group_chair(infor2, gerhard)"]
    assert chosen.family is None


def test_the_chooser_iterates_the_handle_and_shows_its_first_page_before_the_search_ends(monkeypatch):
    # Streaming is iteration: the chooser asks the handle for a page (and one more, to see an
    # end), so the first page is on the screen while the rest of the search has not run; picking
    # a later number runs the search on to it, and leaving stops it.
    import io

    from nablog.interactive import choose
    from nablog.solver.realization import Verifier
    from nablog.tableaux.explanations import layered_dag

    monkeypatch.setenv("COLUMNS", "100")
    db = Database.from_text("tc(X, Y) :- e(X, Y). tc(X, Y) :- e(X, Z), tc(Z, Y).", {"e": layered_dag(3, 3)})
    whole = db.propose("-tc(s, t).", families=False)
    assert len(whole) > 20
    verified = []
    realizes = Verifier.realizes
    monkeypatch.setattr(Verifier, "realizes", lambda self, *changes: verified.append(changes) or realizes(self, *changes))
    handle = db.propose("-tc(s, t).", families=False, stream=True)
    at_prompts = []
    answers = iter(["9", "y"])
    out = io.StringIO()

    def read(prompt):
        at_prompts.append(len(verified))
        out.write(prompt)
        return next(answers)

    chosen = choose(handle, lambda current: current, read, out)
    text = out.getvalue()
    assert text.startswith("request: -tc(s, t).\n\n[1] 3 changes")
    assert "showing 1-3 of 4 found so far (searching)" in text
    assert at_prompts[0] == 4 and at_prompts[1] == 10  # a page and one more; then on to number 9 and one more
    assert chosen.changes.lines() == whole[8].changes.lines()
    with pytest.raises(RuntimeError, match="cancelled"):
        handle.get()  # leaving the chooser stopped the search
