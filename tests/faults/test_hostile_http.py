"""Hostile requests to `nablog serve` (issue 24, faults 2 and 3): huge bodies, bodies shorter than
their Content-Length, proposals without the token. Real sockets on 127.0.0.1, bounded in time."""

from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

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
