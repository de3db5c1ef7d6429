"""The commit protocol (nablog.io.Stores): a commit killed at every step of the protocol, for every
kind of store and for mixed stores, leaves the data wholly old or wholly new after recovery; check
works; undo restores it exactly. Also: concurrent writers, external edits, undo's safety."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nablog import Database, NablogError
from nablog.io import Stores
from nablog.lang import Delta

RULES = """staff_chair(X, Y) :- staff_group(X, Z), group_chair(Z, Y).
#constraint one_chair :- group_chair(G, X), group_chair(G, Y), X != Y.
#constraint one_group :- group_chair(G, X), group_chair(H, X), G != H.
#base office/2.
"""
GROUPS = [("infor1", "matthias"), ("infor2", "gerhard")]
STAFF = [("delhibabu", "infor1"), ("aravindan", "infor1")]
OFFICES = [("matthias", "r1"), ("gerhard", "r2")]
# A realization touching every relation (issue 15, case 1: two CSV files in one apply).
CHANGE = "+group_chair(infor3, gerhard). -group_chair(infor2, gerhard). +staff_group(aravindan, infor3). -staff_group(aravindan, infor1). +office(aravindan, r3). -office(gerhard, r2)."

KILLED = {"commits": 0, "states": 0}  # reported by test_zz_counts


def _csv(path: Path, header: str, rows) -> None:
    path.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in rows))


def _sqlite(path: Path, table: str, rows) -> None:
    with sqlite3.connect(path) as con:
        con.execute(f"CREATE TABLE {table} (a TEXT, b TEXT)")
        con.executemany(f"INSERT INTO {table} VALUES (?, ?)", rows)
    con.close()


def _facts(rows, pred) -> str:
    return "".join(f"{pred}({a}, {b}).\n" for a, b in rows)


def setup_lp(root: Path):
    (root / "db.lp").write_text(RULES + _facts(GROUPS, "group_chair") + _facts(STAFF, "staff_group") + _facts(OFFICES, "office"))
    return [root / "db.lp"], []


def setup_csv(root: Path):
    (root / "rules.lp").write_text(RULES)
    data = root / "data"
    data.mkdir()
    _csv(data / "group_chair.csv", "group,chair", GROUPS)
    _csv(data / "staff_group.csv", "person,group", STAFF)
    _csv(data / "office.csv", "person,room", OFFICES)
    return [root / "rules.lp"], [data]


def setup_sqlite(root: Path):
    (root / "rules.lp").write_text(RULES)
    for table, rows in [("group_chair", GROUPS), ("staff_group", STAFF), ("office", OFFICES)]:
        _sqlite(root / "chairs.db", table, rows)
    return [root / "rules.lp"], [root / "chairs.db"]


def setup_parquet(root: Path):
    (root / "rules.lp").write_text(RULES)
    data = root / "data"
    data.mkdir()
    for table, rows in [("group_chair", GROUPS), ("staff_group", STAFF), ("office", OFFICES)]:
        pq.write_table(pa.table({"a": [r[0] for r in rows], "b": [r[1] for r in rows]}), data / f"{table}.parquet")
    return [root / "rules.lp"], [data]


def setup_mixed(root: Path):
    (root / "rules.lp").write_text(RULES + _facts(GROUPS, "group_chair"))
    data = root / "data"
    data.mkdir()
    _csv(data / "staff_group.csv", "person,group", STAFF)
    _sqlite(root / "offices.db", "office", OFFICES)
    return [root / "rules.lp"], [data, root / "offices.db"]


SETUPS = {"lp": setup_lp, "csv": setup_csv, "sqlite": setup_sqlite, "parquet": setup_parquet, "mixed": setup_mixed}


def snapshot(root: Path) -> dict:
    """Every data file's bytes (a SQLite database by its rows), the undo log aside; fails on leftovers."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if ".nablog" in rel.parts or path.is_dir():
            continue
        assert not path.name.endswith(".tmp"), f"temporary file left behind: {rel}; {sorted(str(p.relative_to(root)) for p in root.rglob('*'))}"
        if path.name.endswith("-journal"):
            # SQLite's own: a writer killed inside its transaction leaves one; SQLite rolls a hot
            # one back when the rows below are read, and ignores one killed before its header
            # was written (found by tests/faults/test_campaign.py). The rows are what counts.
            continue
        if path.suffix == ".db":
            with sqlite3.connect(path) as con:
                out[str(rel)] = {t: sorted(con.execute(f"SELECT * FROM {t}")) for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            con.close()
        else:
            out[str(rel)] = path.read_bytes()
    return out


def open_db(root: Path, paths, data) -> Database:
    return Database.from_files(*paths, data=data)


def run_apply(root: Path, paths, data, fault=None) -> None:
    db = open_db(root, paths, data)
    db.stores.fault = fault
    db.apply(Delta.parse(CHANGE), request="test")


def run_commit(root: Path, paths, data, fault=None) -> None:
    """A numbered commit (``Database.commit``): ``.nablog/version`` goes in the same journal."""
    db = open_db(root, paths, data)
    db.stores.fault = fault
    assert db.commit(Delta.parse(CHANGE))[0] == db.version


def killed_at(root: Path, paths, data, step: int, run=run_apply) -> int:
    """Run ``run`` (the apply) in a child process killed (os._exit, no cleanup) at protocol step ``step``."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        seen = [0]

        def fault(name):
            if seen[0] == step:
                os._exit(77)
            seen[0] += 1

        try:
            run(root, paths, data, fault)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def steps_of(tmp_path: Path, kind: str, run=run_apply) -> list[str]:
    root = tmp_path / "count"
    root.mkdir()
    paths, data = SETUPS[kind](root)
    names: list[str] = []
    run(root, paths, data, names.append)
    return names


@pytest.mark.parametrize("kind", sorted(SETUPS))
def test_a_commit_killed_at_every_step_is_wholly_old_or_wholly_new(tmp_path, kind):
    steps = steps_of(tmp_path, kind)
    assert {"begin", "journal", "check", "commit record", "cleanup"} <= set(steps)
    assert len([s for s in steps if s.startswith(("stage", "sqlite"))]) >= 1
    old_root, new_root = tmp_path / "old", tmp_path / "new"
    old_root.mkdir()
    new_root.mkdir()
    SETUPS[kind](old_root)
    run_apply(new_root, *SETUPS[kind](new_root))
    old, new = snapshot(old_root), snapshot(new_root)
    assert old != new
    boundary = steps.index("commit record")
    for k in range(len(steps)):
        root = tmp_path / f"k{k}"
        root.mkdir()
        paths, data = SETUPS[kind](root)
        assert killed_at(root, paths, data, k) == 77, steps[k]
        KILLED["commits"] += 1
        db = open_db(root, paths, data)  # recovers
        state = snapshot(root)
        # Killed before the commit record is written it is wholly old, from then on wholly new.
        assert state == (new if k >= boundary else old), f"killed at {steps[k]!r}"
        assert not (root / ".nablog" / "journal.json").exists()
        assert db.violations() == []  # check works
        if k >= boundary:
            assert db.undo() is not None
            assert snapshot(root) == old, f"killed at {steps[k]!r}: undo is not exact"
        assert db.undo() is None  # nothing more (no partial or empty entry)
        KILLED["states"] += 2 if k >= boundary else 1




@pytest.mark.parametrize("kind", ["lp", "mixed"])
def test_a_numbered_commit_killed_at_every_step_keeps_its_version_with_the_data(tmp_path, kind):
    """Issue 11: the version number subscribers resume from is written in the commit's own journal,
    so after a kill at any step the data and ``.nablog/version`` are both old (version 1, the one
    commit before) or both new (version 2) — never new data under an old number or the reverse."""
    steps = steps_of(tmp_path, kind, run_commit)
    assert "stage version" in steps
    boundary = steps.index("commit record")
    old_root, new_root = tmp_path / "old", tmp_path / "new"
    old_root.mkdir()
    new_root.mkdir()
    paths, data = SETUPS[kind](old_root)
    open_db(old_root, paths, data).commit(["office(someone, r9)"])
    paths, data = SETUPS[kind](new_root)
    open_db(new_root, paths, data).commit(["office(someone, r9)"])
    run_commit(new_root, paths, data)
    old, new = snapshot(old_root), snapshot(new_root)
    assert old != new
    for k in range(len(steps)):
        root = tmp_path / f"k{k}"
        root.mkdir()
        paths, data = SETUPS[kind](root)
        open_db(root, paths, data).commit(["office(someone, r9)"])  # version 1, committed whole
        assert killed_at(root, paths, data, k, run_commit) == 77, steps[k]
        KILLED["commits"] += 1
        db = open_db(root, paths, data)  # recovers
        expected = (new, 2) if k >= boundary else (old, 1)
        assert (snapshot(root), db.version) == expected, f"killed at {steps[k]!r}"
        assert not [p.name for p in (root / ".nablog").iterdir() if p.name.endswith(".tmp")]
        assert db.commit(["office(other, r8)"])[0] == expected[1] + 1
        assert open_db(root, paths, data).version == expected[1] + 1
        KILLED["states"] += 1


def test_a_commit_killed_after_its_commit_record_is_rolled_forward_from_any_working_directory(tmp_path):
    """Issue 15: ``nablog apply rules.lp --data data`` names its data relative to its working
    directory. Its journal recorded the staged files so (``data/.office.csv.<tag>.tmp``), and a
    recovery run from another directory found none of them: killed between the commit record and
    the renames, the undo log was rolled forward but the data was not, its temporary files left
    behind (the random-kill test's rare failure). The journal now names files by absolute path."""
    steps = steps_of(tmp_path, "csv")
    boundary = steps.index("commit record")
    old_root, new_root = tmp_path / "old", tmp_path / "new"
    for root in (old_root, new_root):
        root.mkdir()
    setup_csv(old_root)
    run_apply(new_root, *setup_csv(new_root))
    old, new = snapshot(old_root), snapshot(new_root)
    for k in range(boundary, len(steps)):
        root = tmp_path / f"k{k}"
        root.mkdir()
        setup_csv(root)
        here = os.getcwd()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child, in the database's directory, with relative paths
            os.chdir(root)
            seen = [0]

            def fault(name):
                if seen[0] == k:
                    os._exit(77)
                seen[0] += 1

            try:
                run_apply(Path("."), [Path("rules.lp")], [Path("data")], fault)
            except BaseException:
                os._exit(1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 77, steps[k]
        assert os.getcwd() == here and here != str(root)
        KILLED["commits"] += 1
        db = open_db(root, [root / "rules.lp"], [root / "data"])  # recovers, from another directory
        assert snapshot(root) == new, f"killed at {steps[k]!r}"
        assert not (root / ".nablog" / "journal.json").exists()
        assert db.undo() is not None
        assert snapshot(root) == old, f"killed at {steps[k]!r}: undo is not exact"
        KILLED["states"] += 2


def test_two_concurrent_applies_one_wins_the_other_is_refused(tmp_path):
    """Issue 15, case 7: two applies computed on the same data never merge into one state."""
    paths, data = setup_csv(tmp_path)
    first = Database.from_files(*paths, data=data)
    second = Database.from_files(*paths, data=data)
    a = first.propose("+staff_chair(aravindan, gerhard).")
    b = second.propose("+staff_chair(delhibabu, gerhard).")
    results = []

    def run(db, change):
        try:
            db.apply(change)
            results.append("applied")
        except NablogError as e:
            results.append(str(e))

    threads = [threading.Thread(target=run, args=(first, a[0])), threading.Thread(target=run, args=(second, b[0]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results)[0] == "applied" and "the data changed since" in sorted(results)[1]
    assert Database.from_files(*paths, data=data).violations() == []
    assert len(first.stores.entries()) == 1


def test_a_second_writer_waits_then_is_refused_clearly(tmp_path):
    paths, data = setup_csv(tmp_path)
    holder = Stores(paths, [])
    waiting = []
    other = Stores(paths, [], lock_timeout=0.8, on_wait=waiting.append)
    with holder.locked():
        with pytest.raises(NablogError) as info:
            other.commit(Delta.parse("+office(x, y)."))
    assert "another nablog command (process %d) is writing this database; gave up after 0.8 s" % os.getpid() in str(info.value)
    assert waiting and "waiting for another nablog command" in waiting[0]
    assert other.commit(Delta.parse("+office(x, y).")).lines() == ["+office(x, y)"]


def test_an_external_edit_between_propose_and_apply_is_caught_never_overwritten(tmp_path):
    paths, data = setup_csv(tmp_path)
    db = Database.from_files(*paths, data=data)
    proposal = db.propose("+staff_chair(aravindan, gerhard).")
    staff = data[0] / "staff_group.csv"
    with open(staff, "a") as f:  # an in-place edit, same second, by another program
        f.write("kim,infor2\n")
    edited = staff.read_bytes()
    with pytest.raises(NablogError, match="changed since"):
        db.apply(proposal[0])
    assert staff.read_bytes() == edited


def test_an_apply_that_changes_nothing_records_nothing(tmp_path):
    paths, data = setup_csv(tmp_path)
    db = Database.from_files(*paths, data=data)
    assert db.apply(Delta.parse("+staff_group(aravindan, infor1). -staff_group(nobody, infor9).")).lines() == []
    assert db.stores.entries() == []
    assert not (tmp_path / ".nablog" / "history.json").exists()


def test_undo_touches_only_the_stores_of_its_database(tmp_path):
    """Issue 15, case 9: a history entry naming a file outside the database is refused."""
    paths, data = setup_csv(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.csv"
    outside.write_text("a,b\n")
    log = tmp_path / ".nablog" / "history.json"
    log.parent.mkdir()
    log.write_text(json.dumps([{"request": "", "changes": {str(outside): {"outside": {"insert": [["a", "b"]], "delete": []}}}}]))
    db = Database.from_files(*paths, data=data)
    with pytest.raises(NablogError, match="not a store of this database"):
        db.undo()
    assert outside.read_text() == "a,b\n"


def test_a_stale_undo_is_refused_and_forget_is_the_way_out(tmp_path, capsys):
    from nablog.cli import main

    paths, data = setup_csv(tmp_path)
    db = Database.from_files(*paths, data=data)
    db.apply(Delta.parse("+staff_group(kim, infor2)."))
    staff = data[0] / "staff_group.csv"
    staff.write_text(staff.read_text() + "lee,infor1\n")
    args = [str(p) for p in paths] + ["--data", str(data[0])]
    assert main(["undo", *args]) == 2
    err = capsys.readouterr().err
    assert "cannot undo: data/staff_group.csv changed after the change being undone" in err
    assert "nablog undo --forget" in err
    assert main(["undo", "--forget", *args]) == 0
    assert "the data is unchanged" in capsys.readouterr().out
    assert "lee,infor1" in staff.read_text() and "kim,infor2" in staff.read_text()
    assert main(["undo", *args]) == 0
    assert capsys.readouterr().out == "nothing to undo\n"
    assert list((tmp_path / ".nablog" / "undo").iterdir()) == []  # the saved versions went with the entry


def test_repair_out_is_one_commit(tmp_path):
    from nablog.repair.output import write_repair
    from nablog.repair.tables import CorrectionTable
    from nablog.lang import parse

    out = tmp_path / "out"
    program = parse("m(a, b). m(a, c). #constraint fd :- m(X, Y), m(X, Z), Y != Z.")
    facts = {"m": {("a", "b"), ("a", "c")}}
    table = CorrectionTable(delete=(parse("m(a, c).").rules[0].head[0],))
    written = write_repair(out, program, facts, table)
    assert sorted(p.name for p in written) == ["corrections.csv", "m.csv"]
    assert (out / "m.csv").read_text() == "a,b\n"
    assert not (out / ".nablog" / "journal.json").exists()


def test_sqlite_hot_journal_left_by_a_killed_writer_is_rolled_back_on_open(tmp_path):
    """Issue 15, case 5: after a writer is killed inside its transaction every command still works."""
    path = tmp_path / "t.db"
    rows = [(i, f"value {i}" * 20) for i in range(3000)]
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (a, b)")
        con.executemany("INSERT INTO t VALUES (?, ?)", rows)
    con.close()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child, killed in the middle of its transaction
        con = sqlite3.connect(path, isolation_level=None)
        con.execute("PRAGMA cache_size = 1")  # pages spill to the file before COMMIT
        con.execute("BEGIN IMMEDIATE")
        con.execute("DELETE FROM t WHERE a % 2 = 0")
        con.execute("UPDATE t SET b = 'x'")
        os._exit(9)
    os.waitpid(pid, 0)
    assert Path(f"{path}-journal").stat().st_size > 0  # a hot journal
    from nablog.io import SqliteDatabase

    assert SqliteDatabase(path).load()["t"] == set(rows)


def test_sqlite_locked_by_another_writer_is_waited_for_then_reported(tmp_path, monkeypatch, capsys):
    from nablog.io import sqlitedb

    monkeypatch.setattr(sqlitedb, "BUSY_TIMEOUT", 1.0)
    path = tmp_path / "t.db"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (a)")
    con.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(NablogError, match="locked by another connection"):
            sqlitedb.SqliteDatabase(path).write({"t": {(1,)}})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "waiting for another program writing" in capsys.readouterr().err
    sqlitedb.SqliteDatabase(path).write({"t": {(1,)}})
    assert sqlitedb.SqliteDatabase(path).load()["t"] == {(1,)}


def test_applies_killed_at_random_moments_leave_old_or_new_and_no_temporary_files(tmp_path):
    """Issue 15, cases 1 and 7: the CLI apply of a realization touching two CSV files, killed
    (SIGKILL) at random moments; the next command finds the data wholly old or wholly new."""
    import random
    import signal
    import subprocess
    import sys
    import time

    from tests.strategies import examples

    rng = random.Random(7)
    argv = ["rules.lp", "--data", "data"]
    request = ["+staff_chair(aravindan, gerhard).", "--pick", "3", "--set", "new1=infor3"]
    code = "import sys; from nablog.cli import main; sys.exit(main(sys.argv[1:]))"
    old_root, new_root = tmp_path / "old", tmp_path / "new"
    for root in (old_root, new_root):
        root.mkdir()
        setup_csv(root)
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", code, "apply", *argv, *request], cwd=new_root, check=True, capture_output=True, timeout=120)
    duration = time.monotonic() - began
    old, new = snapshot(old_root), snapshot(new_root)
    seen = set()
    for trial in range(examples(8)):
        root = tmp_path / f"t{trial}"
        root.mkdir()
        setup_csv(root)
        process = subprocess.Popen([sys.executable, "-c", code, "apply", *argv, *request], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.0) * duration)
        process.send_signal(signal.SIGKILL)
        process.wait(60)
        KILLED["commits"] += 1
        journal = root / ".nablog" / "journal.json"
        left = journal.read_text() if journal.exists() else None
        db = Database.from_files(root / "rules.lp", data=[root / "data"])  # recovers
        state = snapshot(root)  # fails on a temporary file left behind
        assert state in (old, new), left
        seen.add("new" if state == new else "old")
        if state == new:
            assert db.undo() is not None
            assert snapshot(root) == old, "after undo"
        assert db.undo() is None
        KILLED["states"] += 1


def test_zz_counts(capsys):
    with capsys.disabled():
        print(f"\n[issue 15] commits killed: {KILLED['commits']}, states checked after recovery: {KILLED['states']}")
    assert KILLED["commits"] > 0


def test_an_apply_parses_the_program_file_a_fixed_number_of_times(tmp_path, monkeypatch):
    """Issue 15, item 7: not k+3 times for k changed relations — once to open, once under the
    lock (issue 23: the rewritten text is not parsed again to verify it; the property test of
    tests/io/test_factsfile.py checks the edit)."""
    import nablog.io.factsfile as factsfile
    import nablog.lang.program as program

    paths, data = setup_lp(tmp_path)
    calls = []
    for module in (factsfile, program):
        original = module.parse_statements
        monkeypatch.setattr(module, "parse_statements", lambda *a, original=original, **k: calls.append(1) or original(*a, **k))
    db = Database.from_files(*paths)
    db.apply(Delta.parse(CHANGE))
    assert len(calls) == 2


def test_a_data_directory_keeps_the_version_numbered_before_the_version_joined_the_journal(tmp_path, monkeypatch):
    # Found by review: a database read from a data directory only kept its number beside the
    # directory (../.nablog/version); numbering must continue from there, not restart at 1.
    data = tmp_path / "data"
    data.mkdir()
    (data / "e.csv").write_text("1,2\n")
    (tmp_path / ".nablog").mkdir()
    (tmp_path / ".nablog" / "version").write_text("7\n")
    monkeypatch.chdir(tmp_path)
    db = Database.from_files(data=["data"])
    assert db.version == 7
    db.commit(["e(3,4)"])
    assert Database.from_files(data=["data"]).version == 8
    assert (data / ".nablog" / "version").read_text().strip() == "8"
