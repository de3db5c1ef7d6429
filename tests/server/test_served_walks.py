"""A commit through `nablog serve` does each step once (issue 23): a transaction's atoms are parsed
once (on the server; the client sends text), an /apply's request once (in the search, not again
when the chosen realization is written), and the store is read once per commit — counted over a
real HTTP client against the application served on a loopback port in this process (the search
of /apply runs in a forked child, which counts into the same file)."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn

import nablog.database as database_module
import nablog.io.factsfile as factsfile
import nablog.lang.delta as delta_module
from nablog import Database
from nablog.client import Client
from nablog.server.app import create_app

EXAMPLES = Path(__file__).resolve().parents[2] / "nablog" / "examples"


@pytest.fixture
def counted(tmp_path, monkeypatch):
    """Parses of a request's text, parses of a fact's text and reads of a facts file, each a line
    ``KIND PID`` in one file (the forked search's lines land there too)."""
    log = tmp_path / "counts"
    parse_request, parse_fact, read_text = delta_module._parse, database_module._parse_fact, factsfile.read_text

    def note(kind: str) -> None:
        with open(log, "a") as f:
            f.write(f"{kind} {os.getpid()}\n")

    def counting_parse(text, source):
        note("request")
        return parse_request(text, source)

    def counting_fact(text):
        note("fact")
        return parse_fact(text)

    def counting_read(path):
        note("read")
        return read_text(path)

    monkeypatch.setattr(delta_module, "_parse", counting_parse)
    monkeypatch.setattr(database_module, "_parse_fact", counting_fact)
    monkeypatch.setattr(factsfile, "read_text", counting_read)

    def counts() -> dict[str, list[bool]]:
        """Each kind's events, True for those of this process (False: the search's child)."""
        out: dict[str, list[bool]] = {"request": [], "fact": [], "read": []}
        for line in log.read_text().splitlines() if log.exists() else ():
            kind, pid = line.split()
            out[kind].append(int(pid) == os.getpid())
        log.unlink(missing_ok=True)
        return out

    return counts


@pytest.fixture
def served(tmp_path):
    """The chairs example (facts in the program file) served on a loopback port; a client."""
    program = tmp_path / "chairs.lp"
    shutil.copy(EXAMPLES / "chairs.lp", program)
    db = Database.from_files(program)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(create_app(db, "token"), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the server did not start within 20 s"
    yield db, Client(f"http://127.0.0.1:{sock.getsockname()[1]}", token="token", timeout=30)
    server.should_exit = True
    thread.join(10)
    sock.close()


def test_a_transaction_through_the_server_parses_each_atom_once_and_reads_the_store_once(served, counted):
    db, client = served
    counted()  # what loading and starting took is not the commit's
    assert client.commit(["staff_group(aravindan, infor2)"], ["staff_group(aravindan, infor1)"]) == 1
    counts = counted()
    assert counts == {"request": [], "fact": [True, True], "read": [True]}
    assert db.query("staff_group(aravindan, G)") == [("aravindan", "infor2")]


def test_an_apply_through_the_server_parses_its_request_once_and_reads_the_store_once(served, counted):
    db, client = served
    counted()
    answer = client.apply("+staff_chair(aravindan, gerhard).", pick=1, version=0)
    assert answer["version"] == 1 and answer["insert"] == ["staff_chair(aravindan, gerhard)", "staff_group(aravindan, infor2)"]
    counts = counted()
    # parsed once, in the search's child; the server writes the realization it sent back,
    # checked against that parsed request, and reads the file once, in the commit
    assert counts == {"request": [False], "fact": [], "read": [True]}
    assert db.query("staff_chair(aravindan, gerhard)") == [("aravindan", "gerhard")]
