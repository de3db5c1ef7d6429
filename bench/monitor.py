"""Benchmark: view monitoring (seed 001) — recomputation vs materialized vs RoD vs DRed, and
commit-to-subscriber latency.

1. Seed 001 §5's shape: a module/procedure database (283 modules, 1,630 procedures, import and
   defined-in links, lines of code) with four views — ``based_on`` (recursive: the modules a
   module depends on), ``prefixed`` (procedures with a name prefix imported by a module),
   ``small`` (imported procedures under 10 lines), ``deep`` (procedures imported directly or
   indirectly) — and one inserted import link. Per view: the time to compute the differentials
   by recomputation (both models evaluated and compared), ``materialized`` (Algorithm 1 over the
   kept model), ``rod`` (Algorithm 2, no view kept) and ``dred``; ratios against recomputation.
2. Transitive closure under a stream of single-edge inserts and deletes on random graphs (a
   directed G(n, p), G(5000, 0.001) by default: one giant strongly connected component, 24.7 M
   closure pairs; a sparse random graph; a small sparse graph the pydbsp peer can load), with 1,
   10 and 100 subscribers: the time from calling ``commit`` to the last subscriber holding its
   message (p50, p99), per mode. One database per mode: its kept state is built once, by the
   first subscription, and serves the streams of 1, 10 and 100 subscribers (the peers' stream
   each time, undone untimed after each, so the counts time the same commits on the same graph). Sparse graphs: subscribers to
   ``closure(X, Y)``, modes materialized, rod and dred. G(n, p): subscriber i asks
   ``closure(h_i, Y)`` (a whole-view snapshot of 24.7 M pairs costs ~40 s and 4 GB a
   subscriber), materialized only (``--gnp-rod`` adds rod), and one insert commit is profiled
   (cProfile). The peers on the same stream are recomputation (the closure evaluated afresh and
   diffed as sorted key arrays) and pydbsp's incremental stratified Datalog
   (``IncrementalDatalogStratified``: push the change, ``saturate``), run by bench/pydbsp_peer.py
   in a child process with the interpreter given by ``--pydbsp-python`` (pydbsp needs Python
   3.12 or newer; make a venv, e.g. ``python3.12 -m venv /work/pydbsp-venv &&
   /work/pydbsp-venv/bin/pip install pydbsp``). The child's final closure size is checked
   against nablog's. Each graph's tables are printed as soon as it is done.
3. For G(n, p) and a probe graph G(1600, p): the sizes Algorithm 1's rules derive for one insert
   and one delete over the kept state (``ins__``, ``del__``, ``red__`` against the net
   ``plus__``/``minus__``): the cause of its latency there.

G(5000, 0.001) needs ~5 GB (the kept closure, ~180 bytes a pair).

The machine is shared by several developers: figures are noisy; compare the ratios.

Run:  .venv/bin/python bench/monitor.py [--quick] [--gnp-nodes 5000] [--gnp-rod] [--sparse-edges 10000]
          [--pydbsp-python /work/pydbsp-venv/bin/python] [--pydbsp-timeout 120] [--pydbsp-edges 1000]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import tempfile
import statistics
import sys
import time
from pathlib import Path
from typing import Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nablog import Database, parse  # noqa: E402
from nablog.engines import PythonEngine  # noqa: E402
from nablog.lang import Delta, separate_facts  # noqa: E402
from nablog.views.live import Relation  # noqa: E402
from nablog.views.monitor import Monitor  # noqa: E402

from common import environment, print_table, run_child, save_results  # noqa: E402

MODULES = """
based_on(X, Y) :- import(X, P), defined_in(P, Y).
based_on(X, Y) :- based_on(X, Z), based_on(Z, Y).
prefixed(M, P) :- import(M, P), prefix(P, p1).
small(M, P) :- import(M, P), lines(P, N), N < 10.
deep(M, P) :- import(M, P).
deep(M, P) :- based_on(M, M2), import(M2, P).
"""
CLOSURE = "closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y)."
MODES = ("materialized", "rod", "dred")


def module_facts(seed: int = 1) -> dict[str, set[tuple]]:
    """283 modules and 1,630 procedures, each defined in one module; each module imports a few
    procedures, mostly from modules 'below' it (so dependencies are deep but not one big cycle)."""
    rng = random.Random(seed)
    modules = [f"m{i}" for i in range(283)]
    procedures = [f"p{i}" for i in range(1630)]
    defined = {(p, modules[rng.randrange(len(modules))]) for p in procedures}
    home = dict(defined)
    imports = set()
    for i, m in enumerate(modules):
        for _ in range(rng.randint(1, 4)):
            p = rng.choice(procedures)
            if int(home[p][1:]) < i or rng.random() < 0.02:
                imports.add((m, p))
    return {
        "import": imports,
        "defined_in": defined,
        "prefix": {(p, f"p{p[1]}") for p in procedures},
        "lines": {(p, rng.randint(1, 200)) for p in procedures},
    }


def timed(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def kept_time(monitor: Monitor, facts: dict, change: dict, model, repeats: int, expected) -> float:
    """The best time of the commit with the monitor's state kept between numbered commits, as
    under a database: the link inserted at even versions (timed), deleted again at odd ones."""
    with_link = {**facts, **{p: facts[p] | rows for p, rows in change.items()}}
    link = Delta.of_rows(change)
    monitor.differentials(facts, link, model=model, version=0)  # builds the kept state
    monitor.differentials(with_link, link.inverse(), version=1)
    best = float("inf")
    for k in range(repeats):
        start = time.perf_counter()
        got = monitor.differentials(facts, link, version=2 + 2 * k)
        best = min(best, time.perf_counter() - start)
        assert got == expected, monitor.mode
        monitor.differentials(with_link, link.inverse(), version=3 + 2 * k)
    return best


def section_5(repeats: int) -> list[list[str]]:
    rules, _ = separate_facts(parse(MODULES))
    facts = module_facts()
    engine = PythonEngine()
    model = engine.evaluate(rules, facts)
    change = {"import": {("m282", "p0")}}
    rows = []
    for view in ("based_on", "prefixed", "small", "deep"):
        monitors = {mode: Monitor(rules, [view], mode) for mode in (*MODES, "recompute")}
        expected = monitors["recompute"].differentials(facts, Delta.of_rows(change), model=model)
        times = {}
        for mode, monitor in monitors.items():
            assert monitor.differentials(facts, Delta.of_rows(change), model=model) == expected, mode
            if mode == "recompute":
                # The peer: evaluate the old and the new model from scratch and compare.
                times[mode] = timed(lambda: (engine.evaluate(monitor.rules, facts), monitor.differentials(facts, Delta.of_rows(change), model=None)), repeats)
            else:
                times[mode] = kept_time(Monitor(rules, [view], mode), facts, change, model, repeats, expected)
        size = len(model.get(view, ()))
        rows.append(
            [view, f"{size:,}", "{}/{}".format(*expected.count(view)), f"{times['recompute'] * 1000:.1f}"]
            + [f"{times[m] * 1000:.1f} ({times['recompute'] / times[m]:.1f}x)" for m in MODES]
        )
    return rows


def gnp(nodes: int, p: float, seed: int = 3) -> set[tuple[int, int]]:
    rng = random.Random(seed)
    count = int(nodes * (nodes - 1) * p)
    edges = set()
    while len(edges) < count:
        a, b = rng.randrange(nodes), rng.randrange(nodes)
        if a != b:
            edges.add((a, b))
    return edges


def sparse(edges: int, seed: int = 5) -> set[tuple[int, int]]:
    """``edges`` random edges i -> j, i < j, over 2·edges nodes: a sparse DAG."""
    rng = random.Random(seed)
    nodes = 2 * edges
    out = set()
    while len(out) < edges:
        a, b = sorted(rng.sample(range(nodes), 2))
        out.add((a, b))
    return out


def stream(edges: set, count: int, seed: int = 11) -> list[tuple[str, tuple[int, int]]]:
    """Alternating single-edge inserts (new edges between existing nodes) and deletes."""
    rng = random.Random(seed)
    nodes = sorted({x for e in edges for x in e})
    current = set(edges)
    out = []
    for i in range(count):
        if i % 2 == 0:
            while True:
                a, b = sorted(rng.sample(nodes, 2))
                if (a, b) not in current:
                    break
            current.add((a, b))
            out.append(("insert", (a, b)))
        else:
            e = rng.choice(sorted(current))
            current.discard(e)
            out.append(("delete", e))
    return out


def subscribed_streams(edges: set, mode: str, counts: tuple[int, ...], commits: int, query) -> Iterator[tuple[int, dict[str, list[float]], set]]:
    """One database per mode, its kept state built once (by the first subscription) and reused:
    subscribers are added up to each of ``counts`` (subscriber i asks ``query(i)``), then the same
    stream of ``commits`` single-edge commits (the peers' stream) is timed, and undone untimed, so
    that every subscriber count times the same commits on the same graph. Yields the count, per
    kind of operation the commit-to-last-subscriber times (seconds) and the committing thread's
    CPU time per commit (``cpu``: wall time less what the shared machine's scheduler gave other
    processes), and the database."""
    db = Database.from_text(CLOSURE + "\n#base edge/2.", facts={"edge": edges})
    db.model()
    got: list[float] = []
    subscribed = 0
    ops = stream(edges, commits)
    for count in counts:
        while subscribed < count:
            db.subscribe(query(subscribed), mode=mode, callback=lambda m: got.append(time.perf_counter()))
            subscribed += 1
        out: dict[str, list[float]] = {"insert": [], "delete": [], "cpu insert": [], "cpu delete": [], "messages": []}
        for kind, (a, b) in ops:
            del got[:]
            atom = f"edge({a}, {b})"
            start, cpu = time.perf_counter(), time.thread_time()
            db.commit([atom] if kind == "insert" else [], [atom] if kind == "delete" else [])
            out["cpu " + kind].append(time.thread_time() - cpu)
            out[kind].append((max(got) if got else time.perf_counter()) - start)
            out["messages"].append(len(got))
        for kind, (a, b) in reversed(ops):
            atom = f"edge({a}, {b})"
            db.commit([atom] if kind == "delete" else [], [atom] if kind == "insert" else [])
        yield count, out, db


def closure_pairs(model) -> np.ndarray:
    """The closure of an evaluated model as sorted int64 keys a * 2^32 + b (decoded ids: two
    evaluations may number constants differently)."""
    rel = model["closure"]
    values = np.asarray(rel.dictionary.values, dtype=np.int64)
    a, b = (values[c] for c in rel.columns())
    return np.sort((a << 32) | b)


def recompute_latency(edges: set, ops: list, clock=time.perf_counter) -> dict[str, list[float]]:
    """The recomputation peer: per commit, the new closure evaluated afresh and compared with the
    old one (both as sorted key arrays: a Python set of 24.7 M pairs costs more than the
    evaluation); seconds of ``clock``."""
    engine = PythonEngine()
    rules = parse(CLOSURE)
    current = set(edges)
    old = closure_pairs(engine.evaluate(rules, {"edge": current}))
    out: dict[str, list[float]] = {"insert": [], "delete": []}
    for kind, e in ops:
        start = clock()
        current = current | {e} if kind == "insert" else current - {e}
        new = closure_pairs(engine.evaluate(rules, {"edge": current}))
        np.setxor1d(old, new, assume_unique=True)
        old = new
        out[kind].append(clock() - start)
    return out


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def pydbsp_latency(python: str, edges: set, ops: list, timeout: float) -> dict:
    """The pydbsp peer on the same graph and stream, in a child process (bench/pydbsp_peer.py)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as job:
        json.dump({"edges": sorted(edges), "ops": ops, "limit": timeout}, job)
        job.flush()
        run = run_child([python, str(Path(__file__).with_name("pydbsp_peer.py")), job.name], timeout)
    if run.status != "ok":
        return {"error": f"{run.status}: {run.error}" + (" (loading the graph)" if run.status == "timeout" else "")}
    return run.report


def final_closure(edges: set, ops: list) -> int:
    current = set(edges)
    for kind, e in ops:
        current = current | {e} if kind == "insert" else current - {e}
    return len(PythonEngine().evaluate(parse(CLOSURE), {"edge": current})["closure"])


def closure_section(name: str, edges: set, ops: list, recompute_ops: int, args, modes: tuple[str, ...], query, dense: bool = False) -> tuple[list[list[str]], list[list[str]], list[list[str]]]:
    """The latency rows of one graph (per kind, mode and subscriber count), its targets rows, and
    (``dense``) what the rules derive for one insert and one delete over the kept state."""
    start = time.perf_counter()
    size = len(PythonEngine().evaluate(parse(CLOSURE), {"edge": edges})["closure"])
    print(f"{name}: {len(edges):,} edges, closure {size:,} pairs (one evaluation {time.perf_counter() - start:.1f} s), "
          f"{args.commits} single-edge commits per subscriber count", flush=True)
    base = recompute_latency(edges, ops[:recompute_ops])
    peer = pydbsp_latency(args.pydbsp_python, edges, ops, args.pydbsp_timeout) if args.pydbsp_python else {"error": "not run (no --pydbsp-python)"}
    if "closure" in peer:
        assert peer["closure"] == final_closure(edges, ops), "pydbsp and nablog disagree on the closure"
    if "error" in peer:
        print(f"  pydbsp on {name}: {peer['error']}", flush=True)
    measured: dict[tuple[str, int], dict] = {}
    over: list[list[str]] = []
    for mode in modes:
        start, cpu = time.perf_counter(), time.process_time()
        for count, lat, db in subscribed_streams(edges, mode, (1, 10, 100), args.commits, query):
            measured[(mode, count)] = lat
            print(f"  {mode}, {count} subscriber(s): {sum(lat['messages'])} messages; insert p50 {statistics.median(lat['insert']) * 1000:.2f} ms, "
                  f"delete p50 {statistics.median(lat['delete']) * 1000:.2f} ms ({time.perf_counter() - start:.0f} s wall, {time.process_time() - cpu:.0f} s CPU so far)", flush=True)
            if dense and mode == "materialized" and count == 1 and args.profile_insert:
                profile_insert(db, edges, lat)
        if dense and mode == "materialized":
            over = overestimates(name, subscriber_monitor(db), set(db.facts["edge"]))
        del db
        gc.collect()
    rows, p50s = [], {}
    for kind in ("insert", "delete"):
        r50 = statistics.median(base[kind])
        d50 = statistics.median(peer[kind]) if peer.get(kind) else None
        rows.append([name, kind, "recompute", "1", f"{r50 * 1000:.2f}", f"{pct(base[kind], 0.99) * 1000:.2f}", "", "", "", "1.0x", f"{d50 / r50:.1f}x" if d50 else "-"])
        if d50:
            rows.append([name, kind, "pydbsp", "1", f"{d50 * 1000:.2f}", f"{pct(peer[kind], 0.99) * 1000:.2f}", "", "", "", f"{r50 / d50:.1f}x", "1.0x"])
        elif "error" in peer:
            rows.append([name, kind, "pydbsp", "1", "-", "-", "", "", "", "-", "-", f"  {peer['error']}"])
        for mode in modes:
            for subs in (1, 10, 100):
                lat, cpu = measured[(mode, subs)][kind], measured[(mode, subs)]["cpu " + kind]
                p50, p99 = statistics.median(lat), pct(lat, 0.99)
                p50s[(kind, mode, subs)] = p50
                rows.append([name, kind, mode, str(subs), f"{p50 * 1000:.2f}", f"{p99 * 1000:.2f}", f"{p99 / p50:.1f}", f"{statistics.median(cpu) * 1000:.2f}",
                             f"{pct(cpu, 0.99) / statistics.median(cpu):.1f}", f"{r50 / p50:.0f}x", f"{d50 / p50:.0f}x" if d50 else "-"])
    targets = []
    for kind, bound in (("insert", 5.0), ("delete", 50.0)):
        m = p50s[(kind, "materialized", 1)]
        rod = f"{p50s[(kind, 'rod', 1)] / m:.1f}x (<= 3)" if "rod" in modes else "not run"
        targets.append([name, kind, f"{m * 1000:.2f} ms (<= {bound:g})", f"{pct(measured[('materialized', 1)][kind], 0.99) / m:.1f}x (<= 10)", rod,
                        f"{(p50s[(kind, 'materialized', 100)] / m - 1) * 100:+.0f}% (<= +20%)"])
    return rows, targets, over


def profile_insert(db: Database, edges: set, lat: dict) -> None:
    """One insert commit under cProfile (after the timed stream), by the committing thread's CPU
    time: where its time goes (the maintenance rules' generated bodies show as ``<live plan>``)."""
    import cProfile
    import io
    import pstats

    present = {x for e in edges for x in e}
    a, b = min(present), max(present)
    profiler = cProfile.Profile(time.thread_time)  # CPU time: wall time on a loaded machine is mostly waiting
    profiler.enable()
    db.commit([f"edge({a}, {b})"], [])
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(12)
    print(f"  one insert commit edge({a}, {b}) under cProfile (insert p50 above: {statistics.median(lat['insert']) * 1000:.2f} ms):", flush=True)
    print("\n".join("    " + line for line in text.getvalue().splitlines() if line.strip()), flush=True)
    db.commit([], [f"edge({a}, {b})"])


def overestimates(name: str, monitor: Monitor, edges: set) -> list[list[str]]:
    """What Algorithm 1's rules derive for one insert and one delete of a stream from ``edges``
    over ``monitor``'s kept state (which it may re-level: call it last), against the net change:
    the idle insertions (Iᵢ) and the deletion candidates a dense closure costs."""
    state = monitor._live[1]
    ops = stream(edges, 2)
    rows = []
    for kind in ("insert", "delete"):
        edge = next(e for k, e in ops if k == kind)
        start = time.perf_counter()
        env = monitor._run_layer(monitor._plans[0], monitor._deletions[0], {**state, ("ins__edge" if kind == "insert" else "del__edge"): Relation({edge})})
        took = time.perf_counter() - start
        counts = {p: len(env.get(p + "closure", ())) for p in ("ins__", "del__", "red__", "plus__", "minus__")}
        rows.append([name, kind, f"{len(state['closure']):,}", *(f"{counts[p]:,}" for p in counts), f"{took * 1000:.1f}"])
    return rows


def kept_monitor(edges: set) -> Monitor:
    """A materialized monitor of the closure over ``edges`` with its kept state built."""
    model = PythonEngine().evaluate(parse(CLOSURE), {"edge": edges})
    monitor = Monitor(parse(CLOSURE), ["closure"], "materialized")
    monitor.warm({"edge": edges}, model, 0)
    return monitor


def subscriber_monitor(db: Database) -> Monitor:
    """The materialized monitor serving ``db``'s subscriptions."""
    return next(m for (mode, _), m in db.state.hub._monitors.items() if mode == "materialized")


def probe_stream(name: str, edges: set, commits: int) -> list[list[str]]:
    """Commit to subscriber on a dense closure, ``materialized``, 1 subscriber to the whole view:
    p50 and p99 per kind against the issue's targets."""
    _, lat, _ = next(subscribed_streams(edges, "materialized", (1,), commits, lambda i: "closure(X, Y)"))
    rows = []
    for kind, bound in (("insert", 5.0), ("delete", 50.0)):
        p50 = statistics.median(lat[kind]) * 1000
        rows.append([name, kind, str(len(lat[kind])), f"{p50:.2f}", f"{pct(lat[kind], 0.99) * 1000:.2f}", f"<= {bound:g}", "met" if p50 <= bound else "missed"])
    return rows


def probe(args, results: dict) -> None:
    """Only the probe graph: what the rules derive for one insert and one delete, then a stream."""
    name = f"G({args.probe_gnp_nodes}, {args.gnp_p:g})"
    edges = gnp(args.probe_gnp_nodes, args.gnp_p)
    over = overestimates(name, kept_monitor(edges), edges)
    table("materialized on a dense closure, one commit: tuples the rules derive vs the net change (ms: the rules alone)", OVER, over)
    rows = probe_stream(name, edges, args.probe_commits)
    table("commit -> subscriber, materialized, 1 subscriber (ms)", ["graph", "op", "commits", "p50", "p99", "target p50", ""], rows)
    results["overestimates"], results["probe"] = over, rows
    print(f"saved {save_results('monitor', results)}")


def table(title: str, headers: list[str], rows: list[list[str]]) -> None:
    """Print a table as soon as its part is done."""
    print_table(title, headers, rows)
    sys.stdout.flush()


LATENCY = ["graph", "op", "mode", "subscribers", "p50", "p99", "p99/p50", "cpu p50", "cpu p99/p50", "vs recompute", "vs pydbsp"]
TARGETS = ["graph", "op", "materialized p50", "p99 / p50", "rod / materialized", "100 subscribers"]
OVER = ["graph", "op", "closure", "ins__", "del__", "red__", "plus__", "minus__", "ms"]


def rod_against_materialized(args, results: dict) -> None:
    """``--section-5-only`` / ``--probe-rod``: Rederivation on Demand against the materialized
    monitor (the issue's target: rod within 3x). §5's views: the best time of the inserted link
    (state kept between commits, ``--repeats`` times ×50) per mode and the ratio. With
    ``--probe-rod`` also: the sparse closure stream (p50 per kind, 1 subscriber), and rod on
    G(``--probe-gnp-nodes``, p) against recomputation (:func:`rod_against_recomputation`)."""
    rules, _ = separate_facts(parse(MODULES))
    facts = module_facts()
    model = PythonEngine().evaluate(rules, facts)
    change = {"import": {("m282", "p0")}}
    rows = []
    for view in ("based_on", "prefixed", "small", "deep"):
        expected = Monitor(rules, [view], "recompute").differentials(facts, Delta.of_rows(change), model=model)
        best = {}
        for mode in ("materialized", "rod"):
            cpu = time.process_time()
            best[mode] = kept_time(Monitor(rules, [view], mode), facts, change, model, args.repeats * 50, expected)
            best[mode + " cpu"] = time.process_time() - cpu
        rows.append([view, f"{best['materialized'] * 1000:.3f}", f"{best['rod'] * 1000:.3f}", f"{best['rod'] / best['materialized']:.1f}x",
                     f"{best['materialized cpu']:.2f}/{best['rod cpu']:.2f}"])
    print_table("§5 shape, one inserted import link: best ms per commit (state kept); rod / materialized (target <= 3x); CPU s of each whole measurement",
                ["view", "materialized", "rod", "rod / mat", "cpu s mat/rod"], rows)
    results["rod_section_5"] = rows
    if args.probe_rod:
        edges = sparse(args.sparse_edges)
        rows = []
        p50 = {}
        for mode in ("materialized", "rod"):
            _, lat, _ = next(subscribed_streams(edges, mode, (1,), args.commits, lambda i: "closure(X, Y)"))
            for kind in ("insert", "delete"):
                p50[mode, kind] = statistics.median(lat[kind])
                rows.append([f"sparse {args.sparse_edges:,}", kind, mode, f"{p50[mode, kind] * 1000:.3f}", f"{statistics.median(lat['cpu ' + kind]) * 1000:.3f}",
                             f"{p50[mode, kind] / p50['materialized', kind]:.1f}x"])
        print_table("rod against materialized on a sparse closure: commit -> subscriber p50, ms; cpu = committing thread", ["graph", "op", "mode", "wall", "cpu", "vs materialized"], rows)
        results["rod_probe"] = rows
        if args.probe_gnp_nodes:
            results["rod_dense"] = rod_against_recomputation(args)
    print(f"saved {save_results('monitor', results)}")


def recompute_both(edges: set, ops: list) -> dict[str, list[float]]:
    """The recomputation a monitor keeping no model does, per commit: the old and the new closure
    evaluated afresh and compared as sorted key arrays (CPU seconds of this thread)."""
    engine, rules, current = PythonEngine(), parse(CLOSURE), set(edges)
    out: dict[str, list[float]] = {"insert": [], "delete": []}
    for kind, e in ops:
        start = time.thread_time()
        new = current | {e} if kind == "insert" else current - {e}
        np.setxor1d(closure_pairs(engine.evaluate(rules, {"edge": current})), closure_pairs(engine.evaluate(rules, {"edge": new})), assume_unique=True)
        current = new
        out[kind].append(time.thread_time() - start)
    return out


def rod_against_recomputation(args) -> list[list[str]]:
    """rod on the dense closure of G(``--probe-gnp-nodes``, p), 1 subscriber to the whole view,
    against recomputation on the same stream, in CPU seconds of the committing thread: the
    issue's target is rod never slower than recomputing (a deletion there rederives most of the
    closure tuple at a time; rod stops past its budget and recomputes: views/monitor.py,
    ROD_SHARE). Two peers: both models evaluated (what rod, keeping no model, must do) and the
    old closure kept as sorted keys (one evaluation; the peer of the latency tables)."""
    name = f"G({args.probe_gnp_nodes}, {args.gnp_p:g})"
    edges = gnp(args.probe_gnp_nodes, args.gnp_p)
    commits = min(args.probe_commits, 10)
    ops = stream(edges, commits)
    both = recompute_both(edges, ops)
    start = time.thread_time()
    kept = recompute_latency(edges, ops, time.thread_time)
    _, lat, _ = next(subscribed_streams(edges, "rod", (1,), commits, lambda i: "closure(X, Y)"))
    rows = []
    for kind in ("insert", "delete"):
        rod, b, k = (statistics.median(x) for x in (lat["cpu " + kind], both[kind], kept[kind]))
        rows.append([name, kind, str(len(lat[kind])), f"{rod * 1000:.0f}", f"{max(lat['cpu ' + kind]) * 1000:.0f}", f"{b * 1000:.0f}", f"{rod / b:.2f}x",
                     f"{k * 1000:.0f}", f"{rod / k:.2f}x", "met" if rod <= b else "missed"])
    print_table(f"rod on a dense closure against recomputation, 1 subscriber to closure(X, Y): CPU ms per commit, p50 (max), target rod <= recomputation ({time.thread_time() - start:.0f} s CPU)",
                ["graph", "op", "commits", "rod", "rod max", "both evaluated", "rod / both", "old kept", "rod / kept", "target"], rows)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small graphs and few commits (a minute)")
    parser.add_argument("--gnp-nodes", type=int, default=5000)
    parser.add_argument("--gnp-p", type=float, default=0.001)
    parser.add_argument("--gnp-rod", action="store_true", help="also stream rod on G(n, p) (materialized only by default)")
    parser.add_argument("--gnp-recompute", type=int, default=4, help="commits the recomputation peer runs on G(n, p) (one evaluation each)")
    parser.add_argument("--sparse-edges", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=40, help="single-edge commits per mode and subscriber count")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-profile-insert", dest="profile_insert", action="store_false", help="skip profiling one insert commit on G(n, p)")
    parser.add_argument("--probe-gnp-nodes", type=int, default=1600, help="also run one insert and one delete of Algorithm 1 on G(this, p) (0: none)")
    parser.add_argument("--probe-commits", type=int, default=20, help="single-edge commits streamed (materialized, 1 subscriber) on the probe graph")
    parser.add_argument("--probe-only", action="store_true", help="run only the G(--probe-gnp-nodes, p) probe: the rules' sizes and the commit stream")
    parser.add_argument("--section-5-only", action="store_true", help="only rod against materialized on §5's views (rod_against_materialized)")
    parser.add_argument("--probe-rod", action="store_true", help="with --section-5-only: also the sparse closure stream, and rod on G(--probe-gnp-nodes, p) against recomputation (up to 10 commits)")
    parser.add_argument("--pydbsp-python", help="a Python (3.12+) with pydbsp installed: run the pydbsp peer with it")
    parser.add_argument("--pydbsp-edges", type=int, default=1000, help="edges of the small sparse graph pydbsp can load")
    parser.add_argument("--pydbsp-timeout", type=float, default=240.0, help="seconds the pydbsp child may take per graph")
    args = parser.parse_args()
    if args.quick:
        args.gnp_nodes, args.sparse_edges, args.pydbsp_edges, args.commits, args.repeats, args.probe_gnp_nodes = 600, 2000, 300, 10, 1, 0
    results = {"environment": environment()}
    if args.probe_only:
        probe(args, results)
        return
    if args.section_5_only or args.probe_rod:
        rod_against_materialized(args, results)
        return
    rows = section_5(args.repeats)
    table(
        "seed 001 §5 shape: 283 modules, 1,630 procedures, one inserted import link (ms, state kept between commits; ratio = recompute / mode)",
        ["view", "rows", "+/-", "recompute", *MODES],
        rows,
    )
    results["section_5"] = rows
    closure_rows, target_rows, over_rows = [], [], []
    nodes = lambda edges: sorted({x for e in edges for x in e})  # noqa: E731
    graphs = [
        (f"G({args.gnp_nodes}, {args.gnp_p:g})", gnp(args.gnp_nodes, args.gnp_p), True),
        (f"sparse {args.sparse_edges:,} edges", sparse(args.sparse_edges), False),
        (f"sparse {args.pydbsp_edges:,} edges", sparse(args.pydbsp_edges), False),
    ]
    for name, edges, dense in graphs:
        ops = stream(edges, args.commits)
        if dense:
            # Per-node answers: a whole-view snapshot of a dense closure (24.7 M pairs on
            # G(5000, 0.001)) costs ~40 s and 4 GB per subscriber.
            heads = nodes(edges)
            query = lambda i, heads=heads: f"closure({heads[i * len(heads) // 100]}, Y)"  # noqa: E731
            modes = ("materialized", "rod") if args.gnp_rod else ("materialized",)
            recompute_ops = args.gnp_recompute
        else:
            query, modes, recompute_ops = (lambda i: "closure(X, Y)"), MODES, max(4, args.commits // 5)
        rows, targets, over = closure_section(name, edges, ops, recompute_ops, args, modes, query, dense)
        shape = "closure(h, Y), h one node per subscriber" if dense else "closure(X, Y)"
        table(f"{name}, subscribers to {shape}: commit -> last subscriber holds its message (ms; cpu: the committing thread's CPU time; ratios = peer p50 / p50)", LATENCY, rows)
        table(f"{name} targets: materialized p50 (1 subscriber), its p99 / p50, rod / materialized p50, 100 subscribers vs 1", TARGETS, targets)
        if over:
            table(f"{name}, Algorithm 1 over the kept state, one commit: tuples its rules derive vs the net change (ms: the rules alone)", OVER, over)
        closure_rows += rows
        target_rows += targets
        over_rows += over
    if args.probe_gnp_nodes:
        edges = gnp(args.probe_gnp_nodes, args.gnp_p)
        over = overestimates(f"G({args.probe_gnp_nodes}, {args.gnp_p:g})", kept_monitor(edges), edges)
        table("Algorithm 1 on the probe graph, one commit: tuples its rules derive vs the net change (ms: the rules alone)", OVER, over)
        over_rows += over
    results["closure"] = closure_rows
    results["targets"] = target_rows
    results["overestimates"] = over_rows
    print(f"saved {save_results('monitor', results)}")


if __name__ == "__main__":
    main()
