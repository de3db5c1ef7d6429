"""Benchmark: one `nablog serve` shared by many clients (issue 24) — writers, subscribers and
readers on loopback, idle and while a long `/propose` runs, and memory under a body flood.

The database: seed 001's graph example grown to ``--edges`` edges (default 1e5) in SQLite —
chains of ten edges (``c{k}_0 -> ... -> c{k}_10``) and a small random graph with cycles under
``#constraint acyclic :- closure(X, X).``, so the database is inconsistent and the proposal
``+closure(n0, n11).`` searches until its deadline (the request of the fault campaign).

Per phase (``idle``, then ``propose`` with that proposal running, sent with ``"timeout":
--propose-seconds``):

- ``--writers`` processes (default 8) each send ``--transactions`` (default 100) transactions
  ``POST /transactions``: insert ``edge(h{j}, c{k}_0)`` (and every third one deletes the writer's
  previous insertion); commits/s over the phase and the commit's p50/p99 round trip;
- ``--subscribers`` SSE streams (default 20), subscriber ``j`` on ``closure(h{j}, Y)`` (in one
  process, a thread each): the time from sending a commit to its subscriber holding the message
  (p50/p99; the clock is CLOCK_MONOTONIC, shared by the processes), and exactness: each
  stream's snapshot and differentials replayed equal ``/query``'s final answer;
- one reader process: ``GET /query?atom=closure(h0, Y)`` back to back, p50/p99.

Then the flood: a 50 MB body declared by Content-Length, and 50 MB sent chunked without one;
the server's resident size is sampled every 10 ms; the peak over idle is reported.

The issue's targets, printed as met or missed: with the proposal running, commit and query p99
within 2x of idle; the flood's peak within 100 MB of idle.

The machine is shared by several developers: figures are noisy; compare the ratios.

Run:  nice -n 10 .venv/bin/python bench/server.py [--edges 100000] [--writers 8] [--transactions 100]
          [--subscribers 20] [--propose-seconds 60] [--quick]
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import random
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import print_table, save_results  # noqa: E402
from nablog.client import Client  # noqa: E402

RULES = """closure(X, Y) :- edge(X, Y).
closure(X, Y) :- edge(X, Z), closure(Z, Y).
#constraint acyclic :- closure(X, X).
"""
LONG_REQUEST = "+closure(n0, n11)."
TOKEN = "bench-token"
TIMEOUT = 300.0  # seconds any one request may take before the benchmark calls it failed


def build(root: Path, edges: int, seed: int = 1) -> None:
    """graph.lp (the rules) and graph.db (the edges): chains plus the small cyclic graph."""
    rng = random.Random(seed)
    cyclic = sorted({(f"n{rng.randrange(60)}", f"n{rng.randrange(60)}") for _ in range(90)})
    rows = list(cyclic)
    k = 0
    while len(rows) < edges:
        rows.extend((f"c{k}_{i}", f"c{k}_{i + 1}") for i in range(10))
        k += 1
    (root / "graph.lp").write_text(RULES)
    (root / "token").write_text(TOKEN + "\n")
    with sqlite3.connect(root / "graph.db") as con:
        con.execute("CREATE TABLE edge (a TEXT, b TEXT)")
        con.executemany("INSERT INTO edge VALUES (?, ?)", rows[:edges])
    con.close()


def chains(edges: int) -> int:
    return max(1, (edges - 90) // 10)


class Server:
    """`nablog serve` over the benchmark's database, on a free loopback port."""

    def __init__(self, root: Path, max_deadline: float):
        command = [sys.executable, "-m", "nablog.cli", "serve", "graph.lp", "--data", "graph.db", "--port", "0",
                   "--token-file", "token", "--max-deadline", str(max_deadline)]
        self.process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        began = time.monotonic()
        self.url = None
        while self.url is None:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the server exited: {self.process.wait()}")
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if found:
                self.url = found.group(0)
        self.started = time.monotonic() - began
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()  # drain its log

    def rss(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(20)


# -- the clients (child processes) -------------------------------------------------------------


def writer(url: str, w: int, transactions: int, subscribers: int, edges: int, start, out) -> None:
    client = Client(url, token=TOKEN, timeout=TIMEOUT)
    rng = random.Random(w)
    records, errors, previous = [], 0, None
    start.wait()
    for i in range(transactions):
        j = rng.randrange(subscribers)
        inserted = f"edge(h{j}, c{rng.randrange(chains(edges))}_0)"
        delete = [previous[1]] if previous and i % 3 == 2 else []
        sent = time.monotonic()
        try:
            version = client.commit(insert=[inserted], delete=delete)
        except Exception:
            errors += 1
            continue
        answered = time.monotonic()
        touched = {j} | ({previous[0]} if delete else set())
        records.append((version, sent, answered, sorted(touched)))
        previous = None if delete else (j, inserted)
    out.put(("writer", records, errors))


def reader(url: str, stop, out) -> None:
    client = Client(url, token=TOKEN, timeout=TIMEOUT)
    times, errors = [], 0
    while not stop.is_set():
        sent = time.monotonic()
        try:
            client.query("closure(h0, Y)")
        except Exception:
            errors += 1
            continue
        times.append(time.monotonic() - sent)
        time.sleep(0.005)
    out.put(("reader", times, errors))


def subscribers(url: str, count: int, ready, stop, out) -> None:
    """``count`` SSE streams, a thread each: (j, version, received) per differential, and each
    stream's replayed answer."""
    received: list[tuple[int, int, float]] = []
    answers: dict[int, set] = {}
    failures: list[str] = []
    up = threading.Semaphore(0)

    def follow(j: int) -> None:
        client = Client(url, token=TOKEN)
        stream = client.subscribe(f"closure(h{j}, Y)", idle=1.0)
        answer: set = set()
        try:
            while True:
                try:
                    for message in stream:
                        now = time.monotonic()
                        if "snapshot" in message:
                            answer = {tuple(r) for r in message["snapshot"]}
                        elif "snapshot_complete" in message:
                            up.release()
                        else:
                            plus, minus = {tuple(r) for r in message["plus"]}, {tuple(r) for r in message["minus"]}
                            if plus & answer or not minus <= answer:
                                failures.append(f"h{j}: message {message['version']} does not fit the answer")
                            answer = (answer - minus) | plus
                            received.append((j, message["version"], now))
                except TimeoutError:
                    if stop.is_set():
                        return
        except Exception as e:  # the stream broke: reported as inexact
            failures.append(f"h{j}: {e}")
        finally:
            answers[j] = answer
            stream.close()

    threads = [threading.Thread(target=follow, args=(j,), daemon=True) for j in range(count)]
    for t in threads:
        t.start()
    for _ in threads:
        up.acquire(timeout=TIMEOUT)
    ready.set()
    for t in threads:
        t.join(TIMEOUT)
    out.put(("subscribers", received, {j: sorted(a) for j, a in answers.items()}, failures))


# -- one phase ------------------------------------------------------------------------------------


def percentiles(values: list[float]) -> tuple[float, float]:
    if not values:
        return float("nan"), float("nan")
    ordered = sorted(values)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def phase(url: str, args, propose: bool) -> dict:
    context = mp.get_context("fork")
    out = context.Queue()
    start, stop, ready = context.Event(), context.Event(), context.Event()
    listening = context.Process(target=subscribers, args=(url, args.subscribers, ready, stop, out))
    listening.start()
    ready.wait(TIMEOUT)
    proposal: dict = {}
    if propose:
        def long_proposal() -> None:
            began = time.monotonic()
            try:
                answer = Client(url, token=TOKEN, timeout=args.propose_seconds + 60)._request("POST", "/propose", {"request": LONG_REQUEST, "timeout": args.propose_seconds})
                proposal["realizations"] = len(answer.get("realizations", []))
            except Exception as e:
                proposal["error"] = str(e)
            proposal["seconds"] = time.monotonic() - began

        thread = threading.Thread(target=long_proposal, daemon=True)
        thread.start()
        time.sleep(2.0)  # the search is under way
    readers = context.Process(target=reader, args=(url, stop, out))
    readers.start()
    writers = [context.Process(target=writer, args=(url, w, args.transactions, args.subscribers, args.edges, start, out)) for w in range(args.writers)]
    for p in writers:
        p.start()
    began = time.monotonic()
    start.set()
    commits, errors = [], 0
    for _ in writers:
        _, records, failed = out.get(timeout=TIMEOUT * 2)
        commits.extend(records)
        errors += failed
    seconds = time.monotonic() - began
    if propose:
        proposal["running when the writers were done"] = thread.is_alive()
    time.sleep(1.5)  # the last differentials arrive
    stop.set()
    got = {}
    for _ in range(2):
        item = out.get(timeout=TIMEOUT)
        got[item[0]] = item[1:]
    for p in [*writers, readers, listening]:
        p.join(TIMEOUT)
    query_times, query_errors = got["reader"]
    received, answers, failures = got["subscribers"]
    arrival = {(j, v): t for j, v, t in received}
    latencies, missing = [], 0
    for version, sent, _, touched in commits:
        for j in touched:
            if (j, version) in arrival:
                latencies.append(arrival[(j, version)] - sent)
    client = Client(url, token=TOKEN, timeout=TIMEOUT)
    exact = sum(1 for j in range(args.subscribers) if sorted(map(tuple, client.query(f"closure(h{j}, Y)"))) == answers.get(j)) if not failures else 0
    versions = sorted(v for v, *_ in commits)
    gapless = versions == list(range(versions[0], versions[0] + len(versions))) if versions else False
    if propose:
        thread.join(TIMEOUT)
    round_trips = [answered - sent for _, sent, answered, _ in commits]
    return {
        "phase": "propose running" if propose else "idle",
        "commits": len(commits),
        "commit errors": errors,
        "commits/s": len(commits) / seconds,
        "commit p50/p99": percentiles(round_trips),
        "subscriber p50/p99": percentiles(latencies),
        "differentials": len(latencies),
        "query p50/p99": percentiles(query_times),
        "queries": len(query_times),
        "query errors": query_errors,
        "exact subscribers": exact,
        "failures": failures[:5],
        "versions without gaps": gapless,
        "proposal": proposal,
        "seconds": seconds,
    }


# -- the flood ------------------------------------------------------------------------------------


def flood(server: Server, megabytes: int = 50) -> dict:
    host, port = server.url.removeprefix("http://").split(":")
    idle = server.rss()
    peak = [idle]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], server.rss())
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    statuses = []
    head = f"POST /transactions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
    chunk = b"x" * (1 << 20)
    for declared in (True, False):
        with socket.create_connection((host, int(port)), timeout=60) as s:
            s.sendall((head + (f"Content-Length: {megabytes << 20}\r\n\r\n" if declared else "Transfer-Encoding: chunked\r\n\r\n")).encode())
            try:
                for _ in range(megabytes):
                    s.sendall(chunk if declared else b"100000\r\n" + chunk + b"\r\n")
            except OSError:
                pass  # the server answered and closed: the rest is never read
            try:
                statuses.append(int(s.recv(65536).split(b" ", 2)[1]))
            except (OSError, IndexError, ValueError):
                statuses.append(0)
    stop.set()
    sampler.join()
    return {"idle MB": idle / 2**20, "peak MB": peak[0] / 2**20, "over idle MB": (peak[0] - idle) / 2**20, "statuses": statuses}


# -- main ---------------------------------------------------------------------------------------


def ms(pair: tuple[float, float]) -> str:
    return f"{pair[0] * 1000:.0f} / {pair[1] * 1000:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--transactions", type=int, default=100)
    parser.add_argument("--subscribers", type=int, default=20)
    parser.add_argument("--propose-seconds", type=float, default=60.0)
    parser.add_argument("--quick", action="store_true", help="1e4 edges, 4 writers x 20, 5 subscribers, a 20 s proposal")
    args = parser.parse_args()
    if args.quick:
        args.edges, args.writers, args.transactions, args.subscribers, args.propose_seconds = 10_000, 4, 20, 5, 20.0
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        build(root, args.edges)
        server = Server(root, 3600.0)  # the longest proposal the benchmark may ask for
        try:
            print(f"server up in {server.started:.1f} s over {args.edges} edges; {args.writers} writers x {args.transactions}, {args.subscribers} subscribers", flush=True)
            results = [phase(server.url, args, propose=False)]
            # The proposal must outlast the load it is measured under: past the idle phase's length.
            idle_seconds = results[0]["commits"] / results[0]["commits/s"] if results[0]["commits"] else 0
            args.propose_seconds = max(args.propose_seconds, round(1.5 * idle_seconds + 10))
            results.append(phase(server.url, args, propose=True))
            # The proposal's work must end with its deadline: the server idles again.
            flooded = flood(server)
        finally:
            server.stop()
    rows = [[r["phase"], str(r["commits"]) + (f" ({r['commit errors']} failed)" if r["commit errors"] else ""), f"{r['commits/s']:.0f}",
             ms(r["commit p50/p99"]), ms(r["subscriber p50/p99"]), ms(r["query p50/p99"]) + (f" ({r['query errors']} failed)" if r["query errors"] else ""),
             f"{r['exact subscribers']}/{args.subscribers}", "yes" if r["versions without gaps"] else "no"] for r in results]
    print_table(f"nablog serve, {args.edges} edges: {args.writers} writers x {args.transactions} transactions, {args.subscribers} subscribers",
                ["phase", "commits", "commits/s", "commit p50/p99 ms", "commit->subscriber p50/p99 ms", "/query p50/p99 ms", "exact subscribers", "versions gapless"], rows)
    proposal = results[1]["proposal"]
    print(f"the long proposal ({LONG_REQUEST}, deadline {args.propose_seconds:g} s): {proposal}")
    print(f"flood of 50 MB bodies: statuses {flooded['statuses']}, resident {flooded['idle MB']:.0f} MB idle, peak {flooded['peak MB']:.0f} MB")
    idle, busy = results
    targets = [
        ("commit p99 with the proposal running within 2x of idle", busy["commit p50/p99"][1] <= 2 * idle["commit p50/p99"][1],
         f"{busy['commit p50/p99'][1] * 1000:.0f} ms vs {idle['commit p50/p99'][1] * 1000:.0f} ms idle"),
        ("/query p99 with the proposal running within 2x of idle", busy["query p50/p99"][1] <= 2 * idle["query p50/p99"][1],
         f"{busy['query p50/p99'][1] * 1000:.0f} ms vs {idle['query p50/p99'][1] * 1000:.0f} ms idle"),
        ("flood peak within 100 MB of idle", flooded["over idle MB"] <= 100, f"+{flooded['over idle MB']:.0f} MB"),
        ("every subscriber exact", all(r["exact subscribers"] == args.subscribers for r in results), ", ".join(f"{r['exact subscribers']}/{args.subscribers}" for r in results)),
    ]
    for name, met, figures in targets:
        print(f"target {'met   ' if met else 'MISSED'}: {name} ({figures})")
    save_results("server", {"args": vars(args), "phases": results, "flood": flooded, "targets": [(n, m, f) for n, m, f in targets]})


if __name__ == "__main__":
    main()
