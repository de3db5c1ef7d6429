"""`nablog serve` through real HTTP clients on 127.0.0.1: the stable core, tokens, errors, resume,
concurrency and a crash mid-commit. Every loop is bounded in count and time."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from nablog import Database  # noqa: E402
from nablog.client import Client, ClientError, TooOld  # noqa: E402
from nablog.server.app import FELL_BEHIND, Listener  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "nablog" / "examples"


class Served:
    """A `nablog serve` subprocess on a free loopback port; stopped by the fixture."""

    def __init__(self, directory: Path, *extra: str, program: str = "graph.lp"):
        self.directory = directory
        self.process = subprocess.Popen(
            [sys.executable, "-m", "nablog.cli", "serve", program, "--port", "0", *extra],
            cwd=directory,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 30
        self.url = None
        while self.url is None and time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server exited: {self.process.wait()}")
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if found:
                self.url = found.group(0)
        assert self.url, "the server did not announce its address"
        token_file = directory / ".nablog" / "token"
        self.token = token_file.read_text().strip() if token_file.exists() else None

    def client(self, token: str | None = "default") -> Client:
        return Client(self.url, token=self.token if token == "default" else token, timeout=30)

    def stop(self, sig=signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


@pytest.fixture
def served(tmp_path):
    shutil.copy(EXAMPLES / "graph.lp", tmp_path / "graph.lp")
    server = Served(tmp_path)
    yield server
    server.stop()


def take(stream, n, seconds=20):
    out = []
    deadline = time.monotonic() + seconds
    for message in stream:
        out.append(message)
        if len(out) == n or time.monotonic() > deadline:
            break
    return out


def replay(messages):
    answer = None
    for m in messages:
        if "snapshot" in m:
            answer = {tuple(r) for r in m["snapshot"]}
        elif "plus" in m:
            plus, minus = {tuple(r) for r in m["plus"]}, {tuple(r) for r in m["minus"]}
            assert not plus & answer and minus <= answer, m
            answer = (answer - minus) | plus
    return answer


def test_the_stable_core_over_http(served):
    client = served.client()
    stream = client.subscribe("closure(h, X)", idle=20)
    first = take(iter(stream), 2)
    assert first == [{"version": 0, "snapshot": []}, {"version": 0, "snapshot_complete": True}]
    body = json.dumps({"insert": ["edge(h, d)"], "delete": ["edge(b, c)"]}).encode()
    request = urllib.request.Request(served.url + "/transactions", body, {"Authorization": f"Bearer {served.token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert json.loads(answer.read()) == {"version": 1}
    assert client.commit(delete=["edge(d, c)"]) == 2
    assert take(iter(stream), 2) == [
        {"version": 1, "plus": [["h", "c"], ["h", "d"], ["h", "g"]], "minus": []},
        {"version": 2, "plus": [], "minus": [["h", "c"], ["h", "g"]]},
    ]
    stream.close()
    assert client.query("closure(h, X)") == [["h", "d"]]
    assert "edge(h, d)." in (served.directory / "graph.lp").read_text()


def test_raw_event_stream_has_versions_as_ids(served):
    with urllib.request.urlopen(served.url + "/subscribe?query=closure(a,X)", timeout=10) as stream:
        lines = [stream.readline().decode().rstrip("\n") for _ in range(6)]
    assert lines == [
        "id: 0",
        'data: {"version":0,"snapshot":[["a","b"],["a","c"],["a","g"]]}',
        "",
        "event: snapshot_complete",
        'data: {"version":0}',
        "",
    ]


def test_writes_need_the_token_and_bad_requests_are_located(served):
    with pytest.raises(ClientError) as info:
        served.client(token=None).commit(insert=["edge(a, z)"])
    assert info.value.status == 401
    with pytest.raises(ClientError) as info:
        served.client(token="wrong").commit(insert=["edge(a, z)"])
    assert info.value.status == 401
    client = served.client()
    with pytest.raises(ClientError) as info:
        client.commit(insert=["edge(a"])
    assert info.value.status == 400 and info.value.message.splitlines()[:2] == [
        "error: expected ',' or ')' in the argument list, found end of input",
        "  --> <query>:1:7",
    ]
    with pytest.raises(ClientError) as info:
        client.commit(insert=["closure(a, a)"])
    assert info.value.status == 400 and info.value.message.startswith("error: closure is a view")
    with pytest.raises(ClientError) as info:
        client.query("nosuch(X)")
    assert info.value.status == 400 and "unknown predicate nosuch/1" in info.value.message
    with pytest.raises(ClientError) as info:
        client._request("POST", "/transactions", {"insert": "edge(a,b)"})
    assert info.value.status == 400
    assert client.version() == 0  # nothing was committed


def test_reads_need_the_token_when_a_token_file_is_given(tmp_path):
    shutil.copy(EXAMPLES / "graph.lp", tmp_path / "graph.lp")
    (tmp_path / "token").write_text("s3cret\n")
    server = Served(tmp_path, "--token-file", "token")
    try:
        with pytest.raises(ClientError) as info:
            Client(server.url).query("edge(X, Y)")
        assert info.value.status == 401
        assert len(Client(server.url, token="s3cret").query("edge(X, Y)")) == 7
    finally:
        server.stop()


def test_reconnect_resumes_without_loss_or_repetition(served):
    client = served.client()
    stream = client.subscribe("closure(X, Y)", idle=20)
    got = take(iter(stream), 2)
    client.commit(insert=["edge(h, a)"])
    got += take(iter(stream), 1)
    stream.close()  # the subscriber goes away; commits go on
    client.commit(delete=["edge(a, b)"])
    client.commit(insert=["edge(z, z)"])
    resumed = client.subscribe("closure(X, Y)", since=stream.last_version, idle=20)
    later = take(iter(resumed), 2)
    assert [m["version"] for m in later] == [2, 3]
    resumed.close()
    assert replay(got + later) == {tuple(r) for r in client.query("closure(X, Y)")}
    with pytest.raises(TooOld):
        # A channel made now starts at version 3: the history cannot reach back to 1.
        next(iter(client.subscribe("closure(a, Y)", since=1, idle=20)))
    with pytest.raises(ClientError) as info:
        next(iter(client.subscribe("closure(a, Y)", since=99, idle=20)))
    assert info.value.status == 400


def test_a_listener_over_its_bound_is_told_it_fell_behind():
    listener = Listener(since=0, bound=2)
    for v in (1, 2, 3, 4):
        listener.offer({"version": v, "plus": [], "minus": []})
    items = [listener.queue.get_nowait() for _ in range(listener.queue.qsize())]
    assert [m if m is FELL_BEHIND else m["version"] for m in items] == [1, 2, FELL_BEHIND]


@pytest.mark.parametrize("commits", [150, pytest.param(500, marks=pytest.mark.slow)])
def test_fifty_subscribers_three_writers(tmp_path, commits):
    """Every subscriber's messages, replayed on its snapshot, give the final answer; versions
    strictly increase; nothing lost, duplicated or out of order. (500 commits take about a
    minute on a loaded 2-core machine: each commit writes three files with fsync and computes
    the differentials in three modes; the 150-commit case runs by default.)"""
    nodes = [f"n{i}" for i in range(12)]
    (tmp_path / "graph.lp").write_text("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y).\n#base edge/2.\n")
    server = Served(tmp_path)
    try:
        modes = ["materialized", "rod", "dred"]
        queries = ["closure(X, Y)", "closure(n0, Y)", "edge(X, Y)"]
        results: list[tuple[str, list]] = [None] * 50  # type: ignore[list-item]
        ready = threading.Barrier(51, timeout=60)

        def subscriber(i: int) -> None:
            query = queries[i % len(queries)]
            stream = server.client().subscribe(query, mode=modes[i % len(modes)], idle=30 + commits * 0.5)
            got = []
            for message in stream:
                got.append(message)
                if message.get("snapshot_complete"):
                    ready.wait()
                if any("stop" in r for r in message.get("plus", ())):
                    break
            stream.close()
            results[i] = (query, got)

        threads = [threading.Thread(target=subscriber, args=(i,)) for i in range(50)]
        for t in threads:
            t.start()
        ready.wait()
        versions: list[int] = []
        errors: list[BaseException] = []

        def writer(seed: int) -> None:
            try:
                write(seed)
            except BaseException as e:  # reported by the assertion below
                errors.append(e)

        def write(seed: int) -> None:
            rng = random.Random(seed)
            client = server.client()
            for _ in range(commits // 3 + (seed < commits % 3)):
                a, b = rng.sample(nodes, 2)
                c, d = a, b
                while (c, d) == (a, b):
                    c, d = rng.sample(nodes, 2)
                versions.append(client.commit(insert=[f"edge({a}, {b})"], delete=[f"edge({c}, {d})"]))

        writers = [threading.Thread(target=writer, args=(seed,)) for seed in range(3)]
        for t in writers:
            t.start()
        for t in writers:
            t.join(30 + commits * 0.5)
        assert not any(t.is_alive() for t in writers), "the writers did not finish in time"
        assert not errors, errors
        assert sorted(versions) == list(range(1, commits + 1))
        # The last commit changes every subscribed answer: its row tells subscribers to stop.
        client = server.client()
        client.commit(insert=["edge(n0, stop)", "edge(stop, n0)"])
        for t in threads:
            t.join(120)
        finals = {q: {tuple(r) for r in client.query(q)} for q in queries}
        for query, got in results:
            numbers = [m["version"] for m in got if "plus" in m]
            assert numbers == sorted(set(numbers)) and numbers[-1] == commits + 1 and numbers[0] > got[0]["version"]
            assert replay(got) == finals[query]
    finally:
        server.stop()


def test_killed_mid_commit_restarts_consistent_with_versions_continuing(tmp_path):
    (tmp_path / "graph.lp").write_text("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y).\n#base edge/2.\n")
    server = Served(tmp_path)
    acked: list[tuple[int, int]] = []
    stop = threading.Event()

    def writer() -> None:
        client = server.client()
        for i in range(10_000):
            if stop.is_set():
                return
            try:
                acked.append((i, client.commit(insert=[f"edge(n{i}, n{i + 1})"])))
            except (OSError, ClientError):
                return

    thread = threading.Thread(target=writer)
    thread.start()
    deadline = time.monotonic() + 30
    while len(acked) < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.stop(signal.SIGKILL)  # with a commit in flight, most likely
    stop.set()
    thread.join(30)
    assert acked and os.path.exists(tmp_path / "graph.lp")
    db = Database.from_files(tmp_path / "graph.lp")  # the stores parse: each write was atomic
    edges = set(db.facts.get("edge", set()))
    last_i, last_version = acked[-1]
    assert {(f"n{i}", f"n{i + 1}") for i, _ in acked} <= edges <= {(f"n{i}", f"n{i + 1}") for i in range(last_i + 2)}
    assert db.version >= last_version
    again = Served(tmp_path)
    try:
        client = again.client()
        assert client.version() == db.version
        assert client.commit(insert=["edge(x, y)"]) == db.version + 1
    finally:
        again.stop()


def test_propose_and_apply_over_http_is_a_commit_like_any_other(tmp_path):
    (tmp_path / "graph.lp").write_text("p(X) :- q(X), not r(X). q(1). q(2). r(1). r(2).\n")
    server = Served(tmp_path)
    try:
        client = server.client()
        stream = client.subscribe("p(X)", idle=20)
        take(iter(stream), 2)
        proposal = client.propose("+p(1).")
        assert proposal["version"] == 0 and [(r["insert"], r["delete"]) for r in proposal["realizations"]] == [([], ["r(1)"])]
        with pytest.raises(ClientError) as info:
            client.apply("+p(1).", pick=1, version=5)
        assert info.value.status == 400 and "is at version 0, not 5" in info.value.message
        applied = client.apply("+p(1).", pick=1, version=0)
        assert applied == {"version": 1, "insert": ["p(1)"], "delete": ["r(1)"]}
        assert take(iter(stream), 1) == [{"version": 1, "plus": [[1]], "minus": []}]
        stream.close()
    finally:
        server.stop()


def test_watch_and_commit_on_the_command_line(served):
    token = str(served.directory / ".nablog" / "token")
    watch = subprocess.Popen(
        [sys.executable, "-m", "nablog.cli", "watch", served.url, "closure(h, X)", "--count", "3"], stdout=subprocess.PIPE, text=True
    )
    try:
        lines = [watch.stdout.readline()]  # the snapshot: the subscription is live from here on
        done = subprocess.run(
            [sys.executable, "-m", "nablog.cli", "commit", served.url, "+edge(h, d).", "--token-file", token],
            capture_output=True, text=True, timeout=30,
        )
        assert done.returncode == 0 and json.loads(done.stdout) == {"version": 1}
        watch.wait(timeout=30)  # it stops after --count 3 messages; what it prints fits the pipe
        # Read through the buffer readline filled: communicate(timeout=...) reads the raw pipe and
        # loses a line readline had already buffered (the snapshot mark, when it came early).
        rest = watch.stdout.read()
    finally:
        watch.kill()
    assert [json.loads(line) for line in lines + rest.splitlines()] == [
        {"version": 0, "snapshot": []},
        {"version": 0, "snapshot_complete": True},
        {"version": 1, "plus": [["h", "c"], ["h", "d"], ["h", "g"]], "minus": []},
    ]
    bad = subprocess.run(
        [sys.executable, "-m", "nablog.cli", "commit", served.url, "+closure(a, a).", "--token-file", token], capture_output=True, text=True, timeout=30
    )
    assert bad.returncode == 2 and bad.stderr.startswith(f"error: {served.url}: closure is a view")


def _post(server, path: str, body: dict):
    """POST ``body`` to the endpoint ``path`` of an in-process server; (status, JSON answer)."""
    import asyncio

    from starlette.requests import Request

    data = json.dumps(body).encode()

    async def receive():
        return {"type": "http.request", "body": data, "more_body": False}

    async def ask():
        scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"authorization", b"Bearer token")], "query_string": b""}
        response = await getattr(server, path.strip("/"))(Request(scope, receive))
        return response.status_code, json.loads(response.body)

    return asyncio.run(ask())


def test_apply_searches_once_apart_and_writes_the_realization_it_chose(tmp_path, monkeypatch):
    # /apply searches in a child process (holding no lock) for the picked realization, then
    # re-verifies it against its request and basis and writes it in the server: one search, never
    # in the server's process.
    from nablog.server.app import create_app

    calls = tmp_path / "calls"
    propose = Database.propose

    def noted(self, *args, **kwargs):
        with open(calls, "a") as f:
            f.write(f"{os.getpid()} {kwargs.get('limit')}\n")
        return propose(self, *args, **kwargs)

    monkeypatch.setattr(Database, "propose", noted)
    db = Database.from_text((EXAMPLES / "chairs.lp").read_text())
    server = create_app(db, "token").state.server
    status, answer = _post(server, "/apply", {"request": "+staff_chair(aravindan, gerhard).", "pick": 2})
    assert (status, answer["version"]) == (200, 1)
    assert answer["insert"][:2] == ["group_chair(infor1, gerhard)", "staff_chair(aravindan, gerhard)"] and "group_chair(infor1, matthias)" in answer["delete"]
    searches = calls.read_text().splitlines()
    assert len(searches) == 1 and searches[0].split()[0] != str(os.getpid()) and searches[0].split()[1] == "2"
    assert db.query("group_chair(infor1, X)") == [("infor1", "gerhard")]


def test_apply_refuses_a_realization_whose_data_changed_during_its_search(monkeypatch):
    # A commit landing between the search (on version 0) and the write makes the realization's
    # basis stale: re-verified against it, it is refused, and nothing is written.
    from nablog.server.app import create_app

    db = Database.from_text((EXAMPLES / "chairs.lp").read_text())
    apply = Database.apply

    def after_a_commit(self, change, request=""):
        self.commit(["staff_group(delhibabu, infor2)"])
        return apply(self, change, request)

    monkeypatch.setattr(Database, "apply", after_a_commit)
    server = create_app(db, "token").state.server
    from nablog.lang import NablogError

    with pytest.raises(NablogError, match="^error: the data changed since this realization was proposed"):  # the app answers it 400
        _post(server, "/apply", {"request": "+staff_chair(aravindan, gerhard).", "pick": 1})
    assert db.version == 1 and db.query("staff_chair(aravindan, gerhard)") == []
