"""``nablog repair URL extra.lp``: the violations of a database's data against its constraints and
the ones a program file adds, with their minimal correction tables, on PostgreSQL, SQLite and
DuckDB (exact output); a correction table committed to the database leaves it consistent."""

import json
import subprocess
import sys

from nablog import Database

from .conftest import fetch, run_script

SHOP = """
CREATE TABLE artist (artistid INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE album (albumid INTEGER PRIMARY KEY, title TEXT NOT NULL, artistid INTEGER NOT NULL REFERENCES artist (artistid), price NUMERIC(4, 2));
INSERT INTO artist VALUES (1, 'AC/DC'), (2, 'Accept');
INSERT INTO album VALUES (1, 'For Those', 1, 9.99), (2, 'Balls', 2, NULL), (3, 'Balls', 2, 8.49);
"""
ONE_TITLE = "#constraint one_title :- album(A, T, _, _), album(B, T, _, _), A < B.\n"


def nablog(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nablog.cli", *args], capture_output=True, text=True, timeout=120)


def test_repair_over_a_url(any_url, tmp_path):
    run_script(any_url, SHOP)
    extra = tmp_path / "extra.lp"
    extra.write_text(ONE_TITLE)
    done = nablog("repair", any_url, str(extra), "--json", "--enumerate", "5")
    assert done.stderr == ""
    report = json.loads(done.stdout)
    assert report["violations"] == [{"constraint": "one_title", "count": 1, "witnesses": [["album(2, \"Balls\", 2, \"\")", "album(3, \"Balls\", 2, \"8.49\")"]]}]
    assert sorted(sorted(r["delete"]) for r in report["repairs"]) == [['album(2, "Balls", 2, "")'], ['album(3, "Balls", 2, "8.49")']]
    # The first table, committed in one transaction of the database: nothing is violated then.
    db = Database.connect(any_url, extra)
    [first] = [r for r in report["repairs"] if r["delete"] == ['album(3, "Balls", 2, "8.49")']]
    db.commit(delete=first["delete"], request="repair")
    assert fetch(any_url, "SELECT albumid FROM album ORDER BY albumid") == [(1,), (2,)]
    assert db.is_consistent()
    db.undo()
    assert not db.is_consistent()
    db.stores.close()
    assert fetch(any_url, "SELECT albumid FROM album ORDER BY albumid") == [(1,), (2,), (3,)]
