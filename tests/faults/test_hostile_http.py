"""Hostile requests to `nablog serve` (issue 24, faults 2 and 3): huge bodies, bodies shorter than
their Content-Length, proposals without the token. Real sockets on 127.0.0.1, bounded in time."""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

from nablog.client import Client  # noqa: E402
from tests.server.test_server import EXAMPLES, Served  # noqa: E402


@pytest.fixture
def hostile(tmp_path):
    shutil.copy(EXAMPLES / "graph.lp", tmp_path / "graph.lp")
    server = Served(tmp_path, "--read-timeout", "1", "--max-body", "100000")
    yield server
    server.stop()


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _raw(server: Served, head: str, body: bytes = b"", seconds: float = 20) -> tuple[int, dict]:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=seconds) as s:
        s.sendall(head.encode() + b"\r\n" + body)
        data = b""
        while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < int(dict(
            line.split(": ", 1) for line in data.partition(b"\r\n\r\n")[0].decode().split("\r\n")[1:]
        ).get("content-length", "0")):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    status = int(data.split(b" ", 2)[1])
    return status, json.loads(data.partition(b"\r\n\r\n")[2] or b"{}")


def _post(server: Served, path: str, length: int, token: bool = True) -> str:
    auth = f"Authorization: Bearer {server.token}\r\n" if token else ""
    return f"POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {length}\r\n"


def test_a_body_past_the_bound_is_refused_with_413_and_memory_stays_flat(hostile):
    before = _rss(hostile.process.pid)
    assert _raw(hostile, _post(hostile, "/transactions", 50_000_000))[0] == 413  # by its Content-Length
    host, port = hostile.url.removeprefix("http://").split(":")
    # Chunked, no length given: refused once the bound is passed, the rest never read.
    with socket.create_connection((host, int(port)), timeout=20) as s:
        s.sendall(f"POST /transactions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {hostile.token}\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        status = None
        try:
            for _ in range(500):  # up to 50 MB in 100 kB chunks
                s.sendall(b"186a0\r\n" + b"x" * 100_000 + b"\r\n")
        except OSError:
            pass
        s.settimeout(20)
        answer = s.recv(65536)
        status = int(answer.split(b" ", 2)[1])
    assert status == 413
    assert _rss(hostile.process.pid) - before < 30_000_000
    assert hostile.client().commit(insert=["edge(a, z)"]) == 1


def test_a_body_shorter_than_its_content_length_times_out_with_408(hostile):
    began = time.monotonic()
    status, answer = _raw(hostile, _post(hostile, "/transactions", 1000), b'{"insert": []')
    assert status == 408 and "did not arrive within 1 s" in answer["error"]
    assert time.monotonic() - began < 10
    assert hostile.client().version() == 0
    hostile.stop()
    output = hostile.process.stdout.read()
    assert "Traceback" not in output, output


def test_proposals_need_the_token_and_a_bounded_deadline(hostile):
    assert _raw(hostile, _post(hostile, "/propose", 2, token=False), b"{}")[0] == 401
    assert _raw(hostile, "GET /version HTTP/1.1\r\nHost: x\r\n")[0] == 200
    body = json.dumps({"request": "+closure(a, f).", "timeout": 100000}).encode()
    status, answer = _raw(hostile, _post(hostile, "/propose", len(body)), body)
    assert status == 400 and "longer than this server allows (300 s)" in answer["error"]
    body = json.dumps({"request": "+closure(a, f)."}).encode()
    status, answer = _raw(hostile, _post(hostile, "/propose", len(body)), body)
    assert status == 200 and answer["version"] == 0
    # A proposal answers for the state it searched (a child process's copy of that version).
    assert hostile.client().commit(insert=["edge(b, f)"]) == 1
    answer = hostile.client().propose("+closure(a, f).")
    assert answer["version"] == 1 and answer["message"] == "the request already holds: nothing to change"


# -- fault 2: one long /propose blocked everyone -------------------------------------------------

INCONSISTENT = """closure(X, Y) :- edge(X, Y).
closure(X, Y) :- edge(X, Z), closure(Z, Y).
#constraint acyclic :- closure(X, X).
"""


def _inconsistent_graph(path: Path) -> None:
    """60 nodes, 90 random edges with cycles: ``+closure(n0, n11).`` searches past a minute."""
    import random

    rng = random.Random(1)
    edges = sorted({(rng.randrange(60), rng.randrange(60)) for _ in range(90)})
    path.write_text(INCONSISTENT + "".join(f"edge(n{a}, n{b}).\n" for a, b in edges))


def _tree_cpu(pid: int) -> float:
    """CPU seconds used so far by process ``pid`` and its live children."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(entry.name) == pid or int(fields[1]) == pid:  # fields[1] is the parent's pid
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _idle_soon(pid: int, message: str, seconds: float = 10) -> None:
    """Wait, at most ``seconds``, for the server and its children to use under 20% of a core."""
    deadline = time.monotonic() + seconds
    while _busy(pid, 0.5) > 0.2:
        assert time.monotonic() < deadline, message


def _busy(pid: int, seconds: float = 1.0) -> float:
    """The share of one core the server and its children used over ``seconds``."""
    before = _tree_cpu(pid)
    time.sleep(seconds)
    return (_tree_cpu(pid) - before) / seconds


@pytest.mark.slow
def test_readers_and_writers_never_wait_for_a_long_proposal_and_a_left_one_stops(tmp_path):
    """Fault 2: ``/propose +closure(n0, n11).`` on an inconsistent database held the database
    lock: ``/query`` and ``/transactions`` timed out after 10 s, and the search went on at full
    CPU for minutes after its client hung up."""
    _inconsistent_graph(tmp_path / "graph.lp")
    server = Served(tmp_path, "--deadline", "120")
    try:
        host, port = server.url.removeprefix("http://").split(":")
        body = json.dumps({"request": "+closure(n0, n11)."}).encode()
        proposer = socket.create_connection((host, int(port)), timeout=10)
        proposer.sendall(_post(server, "/propose", len(body)).encode() + b"\r\n" + body)
        time.sleep(0.5)  # the search is under way
        client = Client(server.url, token=server.token, timeout=1.5)
        for _ in range(3):
            began = time.monotonic()
            assert ["n0", "n1"] in client.query("closure(n0, Y)")
            version = client.commit(insert=["edge(z1, z2)"]) if _ == 0 else client.version()
            assert time.monotonic() - began < 1.5
        assert version == 1 and client.query("closure(z1, Y)") == [["z1", "z2"]]
        assert select.select([proposer], [], [], 0)[0] == [], "the proposal answered: it was not in flight"
        proposer.close()  # the client leaves: its search stops soon
        _idle_soon(server.process.pid, "the proposal kept running after its client left")
        # The page's streamed proposal likewise: readers go on, the stop button stops it.
        streamer = socket.create_connection((host, int(port)), timeout=10)
        streamer.sendall(_post(server, "/propose/stream", len(body)).encode() + b"\r\n" + body)
        time.sleep(0.5)
        began = time.monotonic()
        assert ["z1", "z2"] in client.query("closure(z1, Y)") and client.commit(insert=["edge(z2, z3)"]) == 2
        assert time.monotonic() - began < 1.5
        assert b"realization" not in streamer.recv(65536)  # the head; the search goes on
        streamer.close()
        _idle_soon(server.process.pid, "the streamed proposal kept running after its client left")
        assert client.version() == 2
    finally:
        server.stop()
    output = server.process.stdout.read()
    assert "Traceback" not in output, output

