"""``nablog serve postgresql://… --notify``: another SQL client's commit reaches a subscriber over
HTTP (server-sent events) through the triggers nablog installs and LISTEN/NOTIFY; a rolled-back
transaction sends nothing. A real server process, a real second client (psycopg), a real HTTP
client; every wait is bounded."""

import re
import signal
import subprocess
import sys
import time

import pytest

from nablog.client import Client

from .conftest import new_database, run_script

MUSIC = """
CREATE TABLE artist (artistid INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE album (albumid INTEGER PRIMARY KEY, title TEXT NOT NULL, artistid INTEGER NOT NULL REFERENCES artist (artistid));
CREATE VIEW album_info AS SELECT al.albumid, al.title, ar.name FROM album al JOIN artist ar ON al.artistid = ar.artistid;
INSERT INTO artist VALUES (1, 'AC/DC'), (2, 'Accept');
INSERT INTO album VALUES (1, 'For Those', 1), (2, 'Balls', 2);
"""


def serving(url: str, directory) -> tuple[subprocess.Popen, str, list[str]]:
    process = subprocess.Popen([sys.executable, "-m", "nablog.cli", "serve", url, "--notify", "--port", "0"],
                               cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        if found:
            return process, found.group(0), lines
    process.kill()
    raise AssertionError(f"the server did not announce its address: {lines}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def take(stream, n: int) -> list:
    out = []
    for message in stream:
        out.append(message)
        if len(out) == n:
            break
    return out


def test_another_clients_commit_reaches_a_subscriber(postgres, tmp_path):
    import psycopg

    url = new_database("postgres", postgres, tmp_path)
    run_script(url, MUSIC)
    process, address, lines = serving(url, tmp_path)
    try:
        assert "pushing other clients' commits to subscribers (triggers on 2 tables)" in lines
        # A URL is no path: the new token is kept in the directory the server was started in.
        assert f"write token in {tmp_path / '.nablog' / 'token'}" in lines
        stream = Client(address, timeout=30).subscribe("album_info(I, T, N)", idle=20)
        messages = iter(stream)
        assert take(messages, 2) == [{"version": 0, "snapshot": [[1, "For Those", "AC/DC"], [2, "Balls", "Accept"]]},
                                     {"version": 0, "snapshot_complete": True}]
        with psycopg.connect(url, autocommit=True) as other:
            with other.transaction():
                other.execute("INSERT INTO album VALUES (3, 'Restless', 2)")
                other.execute("UPDATE artist SET name = 'ACDC' WHERE artistid = 1")
            with pytest.raises(psycopg.errors.UniqueViolation), other.transaction():  # rolled back: nothing to tell
                other.execute("INSERT INTO album VALUES (4, 'Lost', 2)")
                other.execute("INSERT INTO album VALUES (4, 'Twice', 2)")
            other.execute("DELETE FROM album WHERE albumid = 2")
        # One or two messages (the notifications of the two commits may come in one batch).
        answer = {(1, "For Those", "AC/DC"), (2, "Balls", "Accept")}
        expected = {(1, "For Those", "ACDC"), (3, "Restless", "Accept")}
        seen = []
        while answer != expected and len(seen) < 2:
            [message] = take(messages, 1)
            seen.append(message)
            answer = (answer - {tuple(r) for r in message["minus"]}) | {tuple(r) for r in message["plus"]}
        assert answer == expected, seen
        assert seen[0]["plus"] == [[1, "For Those", "ACDC"], [3, "Restless", "Accept"]]
        assert all(4 not in row for m in seen for row in m["plus"])  # the rolled-back rows were never told
        stream.close()
        assert Client(address, timeout=30).query("album_info(I, T, N)") == [[1, "For Those", "ACDC"], [3, "Restless", "Accept"]]
    finally:
        stop(process)


def test_notify_needs_postgresql(tmp_path):
    from nablog.lang import NablogError
    from nablog.sql.notify import install
    from nablog.sql.store import SqlStore

    url = new_database("sqlite", None, tmp_path)
    run_script(url, MUSIC)
    with pytest.raises(NablogError, match=r"--notify needs PostgreSQL \(LISTEN/NOTIFY\)"):
        install(SqlStore(url))
