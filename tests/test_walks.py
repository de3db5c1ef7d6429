"""The main job's walk does each step once: a request is parsed once from argv to the solver and
the write, `apply --pick N` searches for the N smallest realizations only, and a commit reads each
store once."""

import pytest

import nablog.lang.delta as delta_module
from nablog import Database
from nablog.cli import main
from nablog.engines import PythonEngine
import nablog.io.factsfile as factsfile
from nablog.state import State
from tests.test_apply import REQUEST, chairs  # noqa: F401  (the chairs example copied to a temporary directory)
import nablog.solver


@pytest.fixture
def counted(monkeypatch):
    """Calls of the request parser (by text) and reads of a facts file's text, counted."""
    parses: list[str] = []
    loads: list[str] = []
    parse, read = delta_module._parse, factsfile.read_text

    def counting_parse(text, source):
        parses.append(text)
        return parse(text, source)

    def counting_read(path):
        loads.append(str(path))
        return read(path)

    monkeypatch.setattr(delta_module, "_parse", counting_parse)
    monkeypatch.setattr(factsfile, "read_text", counting_read)
    return parses, loads


def test_apply_parses_the_request_once_and_reads_the_store_once_per_commit(chairs, counted, capsys):
    parses, loads = counted
    db_loads_before_commit = []

    real_commit = State.commit

    def commit(self, delta, request):
        db_loads_before_commit.append(len(loads))
        return real_commit(self, delta, request)

    State.commit = commit
    try:
        assert main(["apply", str(chairs), REQUEST, "--pick", "1"]) == 0
    finally:
        State.commit = real_commit
    assert "+staff_group(aravindan, infor2)" in capsys.readouterr().out
    assert parses == [REQUEST]
    # The commit reads the file once (its true changes, and the new text staged from what it
    # read), not twice.
    assert len(db_loads_before_commit) == 1
    assert len(loads) - db_loads_before_commit[0] == 1


def test_apply_pick_searches_for_the_picked_number_of_realizations(chairs, monkeypatch, capsys):
    limits = []
    real = nablog.solver.propose

    def spy(*args, **kwargs):
        limits.append(kwargs.get("limit"))
        return real(*args, **kwargs)

    monkeypatch.setattr(nablog.solver, "propose", spy)  # what Database.propose calls
    assert main(["apply", str(chairs), REQUEST, "--pick", "2"]) == 0
    assert limits == [2]
    # The second smallest of the whole proposal (seed 003, Example 1's (b) has three changes,
    # (a) one, (c) three: sorted by size then atoms, realization 2 is (b)) is what was applied.
    out = capsys.readouterr().out
    assert "+group_chair(infor1, gerhard)" in out and "-group_chair(infor1, matthias)" in out


def test_apply_pick_past_the_proposal_names_the_whole_proposal(chairs, capsys):
    # the search for 7 finds all 3 (status complete), so the message counts the whole proposal
    assert main(["apply", str(chairs), REQUEST, "--pick", "7"]) != 0
    assert capsys.readouterr().err == "error: --pick 7 is out of range: the proposal has 3 realizations\nhint: pick a number from 1 to 3\n"


def test_apply_of_a_proposed_realization_checks_the_request_it_was_proposed_for(chairs, counted):
    parses, _ = counted
    db = Database.from_files(chairs)
    proposal = db.propose(REQUEST)
    assert all(r.request is proposal.request for r in proposal)
    db.apply(proposal[0], request=REQUEST)
    assert parses == [REQUEST]


def test_a_commit_computes_its_induced_update_once(chairs, monkeypatch):
    # The constraint check (the chairs' one_chair) and the commit share one incremental update of
    # the model: 1 pass, not 2. Its answer is the induced update a fresh evaluation gives.
    db = Database.from_files(chairs)
    before = db.model()
    passes = []
    update = PythonEngine.update

    def counting(self, *args, **kwargs):
        passes.append(1)
        return update(self, *args, **kwargs)

    monkeypatch.setattr(PythonEngine, "update", counting)
    _, induced = db.commit(["staff_group(aravindan, infor2)"], ["staff_group(aravindan, infor1)"])
    assert len(passes) == 1
    after = PythonEngine().evaluate(db.rules, db.facts)
    assert sorted(induced.lines()) == sorted(
        [f"+{p}({', '.join(map(str, r))})" for p in after for r in set(after[p]) - set(before.get(p, ()))]
        + [f"-{p}({', '.join(map(str, r))})" for p in before for r in set(before[p]) - set(after.get(p, ()))]
    )


def _sqlite_graph(tmp_path, monkeypatch, edges: int, rules: str):
    """A database over a SQLite table ``edge`` of a chain of ``edges``; the tables read whole
    from then on (by name) are counted in the list returned beside it."""
    import sqlite3

    from nablog.io.sqlitedb import SqliteDatabase

    db_path = tmp_path / "graph.db"
    with sqlite3.connect(db_path) as con:
        con.execute("CREATE TABLE edge (a, b)")
        con.executemany("INSERT INTO edge VALUES (?, ?)", [(i, i + 1) for i in range(edges)])
    program = tmp_path / "graph.lp"
    program.write_text(rules)
    db = Database.from_files(program, data=[db_path])
    reads = []
    read = SqliteDatabase._read
    monkeypatch.setattr(SqliteDatabase, "_read", lambda self, *args, **kwargs: reads.append(args[1].name) or read(self, *args, **kwargs))
    return db, reads


def test_a_commit_to_sqlite_reads_no_table_whole(tmp_path, monkeypatch):
    # The true changes and the staged statements cost the change (a lookup, an insert or a
    # delete per row), not the table: the commit reads no table whole (issue 23, the server's
    # commit cost), and the undo log and the table hold exactly the true changes.
    import sqlite3

    db, reads = _sqlite_graph(tmp_path, monkeypatch, 200, "path(X, Y) :- edge(X, Y).\npath(X, Z) :- edge(X, Y), path(Y, Z).\n")
    db_path = tmp_path / "graph.db"
    _, induced = db.commit(["edge(500, 501)", "edge(3, 4)"], ["edge(0, 1)", "edge(900, 901)"])
    assert reads == []
    assert db.stores.entries()[-1]["changes"] == {"graph.db": {"edge": {"insert": [[500, 501]], "delete": [[0, 1]]}}}
    with sqlite3.connect(db_path) as con:
        assert sorted(con.execute("SELECT a, b FROM edge")) == sorted([(i, i + 1) for i in range(1, 200)] + [(500, 501)])
    assert "-path(0, 200)" in induced.lines() and "+path(500, 501)" in induced.lines()


def test_undo_reads_no_store_whole(chairs, counted):
    # A file comes back byte for byte when its digest says it is as the commit left it: its
    # rows are not read to check that again (issue 23: undo read the store whole).
    _, loads = counted
    db = Database.from_files(chairs)
    db.apply(db.propose(REQUEST)[0], request=REQUEST)
    before = len(loads)
    assert db.undo().lines() == ["-staff_chair(aravindan, gerhard)", "-staff_group(aravindan, infor2)"]
    assert len(loads) == before
    assert Database.from_files(chairs).query("staff_group(aravindan, G)") == [("aravindan", "infor1")]


def test_an_sqlite_undo_reads_no_table_and_refuses_rows_changed_since(tmp_path, monkeypatch):
    # Undone row by row, the inverse is staged (statements run and rolled back): its true
    # changes must be the whole inverse, else a row was changed since and nothing is written.
    import sqlite3

    from nablog.lang import NablogError

    db, reads = _sqlite_graph(tmp_path, monkeypatch, 20, "path(X, Y) :- edge(X, Y).\n")
    db_path, program = tmp_path / "graph.db", tmp_path / "graph.lp"
    db.commit(["edge(500, 501)"], ["edge(0, 1)"])
    assert db.undo().lines() == ["+edge(0, 1)", "+path(0, 1)", "-edge(500, 501)", "-path(500, 501)"]
    assert reads == []
    with sqlite3.connect(db_path) as con:
        assert sorted(con.execute("SELECT a, b FROM edge")) == [(i, i + 1) for i in range(20)]
    db.commit(["edge(600, 601)"], [])
    with sqlite3.connect(db_path) as con:
        con.execute("DELETE FROM edge WHERE a = 600")  # another writer takes the row back
    with pytest.raises(NablogError, match="^error: cannot undo: edge in graph.db changed after the change being undone"):
        Database.from_files(program, data=[db_path]).undo()
    assert len(Database.from_files(program, data=[db_path]).stores.entries()) == 1


def test_a_commit_parses_a_facts_file_once(chairs, monkeypatch):
    # The .lp file's text is read and parsed once per commit: the edit is made where that parse
    # put the facts, and the edited text is not parsed again (issue 23).
    db = Database.from_files(chairs)
    proposal = db.propose(REQUEST)
    parses = []
    parse = factsfile.parse_statements
    monkeypatch.setattr(factsfile, "parse_statements", lambda text, source: parses.append(source) or parse(text, source))
    db.apply(proposal[0], request=REQUEST)
    assert parses == [str(chairs)]
    assert "staff_group(aravindan, infor2)." in chairs.read_text()
