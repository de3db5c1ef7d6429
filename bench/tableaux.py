"""Benchmark: seed 003's update tableaux against explanations-then-hitting-sets, and the four methods.

1. **Deletion with exponentially many explanations.** Closure over a layered DAG: a source ``s``,
   ``k`` layers of width ``w``, a sink ``t``, every edge between consecutive layers:

       tc(X, Y) :- e(X, Y).   tc(X, Y) :- e(X, Z), tc(Z, Y).

   ``-tc(s, t)`` has ``wᵏ`` explanations (the paths) and its realizations are the minimal edge
   cuts. Measured per size, each in its own process (time and peak memory): the update tableau
   streaming its first 100 minimal realizations (``tableaux``, Algorithms 3, 4, the tableau alone),
   the materialized variant's first 100 branches (Algorithms 5, 6 as written: no minimality test),
   ``Database.propose`` with ``method="tableaux"`` and ``"asp"`` and ``limit=100`` (nablog's
   whole answer, with its verification of every realization), and the peer: enumerate every
   explanation (kernel), then PySAT's Hitman for the first 100 minimal hitting sets.
2. **Insertion through a join and a projection with constraints.** Seed 003's Example 1 scaled:
   N staff in N/10 groups, one chair per group, a group has one chair and a chair one group;
   insert ``staff_chair(p0, c1)``. Every method answers in full; times as ratios against ``asp``.
3. **Agreement.** On instances small enough for clingo, the four methods' realization sets.

Run:  .venv/bin/python bench/tableaux.py [--quick] [--dag 10x4,10x5,10x6] [--staff 1000,10000] [--timeout S]
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import environment, print_table, run_child, save_results  # noqa: E402

from nablog import Database, parse  # noqa: E402

TC = "tc(X,Y) :- e(X,Y). tc(X,Y) :- e(X,Z), tc(Z,Y)."
CHAIRS = """
staff_chair(X,Y) :- staff_group(X,Z), group_chair(Z,Y).
#constraint one_chair :- group_chair(G,X), group_chair(G,Y), X != Y.
#constraint one_group :- group_chair(G,X), group_chair(H,X), G != H.
"""
FIRST = 100
TIMEOUT = 600  # the methods' own limit inside a child; the child is killed at --timeout anyway


def layered_dag(w: int, k: int) -> set[tuple[str, str]]:
    layers = [["s"]] + [[f"n{i}_{j}" for j in range(w)] for i in range(k)] + [["t"]]
    return {(x, y) for a, b in zip(layers, layers[1:]) for x in a for y in b}


def chairs(n: int) -> dict[str, set]:
    """Seed 003's Example 1 scaled: n staff in n/10 groups, one chair per group."""
    groups = max(2, n // 10)
    return {
        "staff_group": {(f"p{i}", f"g{i % groups}") for i in range(n)},
        "group_chair": {(f"g{g}", f"c{g}") for g in range(groups)},
    }


CHAIRS_REQUEST = "+staff_chair(p0, c1)."


# -- measurements, each in a child process ---------------------------------------------------------


def child(kind: str, args: list[str]) -> dict:
    t0 = time.perf_counter()
    if kind.startswith("dag-"):
        w, k = map(int, args)
        db = Database(parse(TC), {"e": layered_dag(w, k)})
        db.python_model()
        request = "-tc(s,t)."
    else:
        n = int(args[0])
        db = Database(parse(CHAIRS), chairs(n))
        db.python_model()
        request = CHAIRS_REQUEST
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    count = 0
    if kind in ("dag-tableaux", "dag-materialized"):
        from nablog.solver.tableaux import request_tableau

        tableau = request_tableau(db.rules, db.facts, db.python_model(), request, materialized=kind == "dag-materialized")
        count = sum(1 for _ in itertools.islice(tableau.realizations(), FIRST))
    elif kind == "dag-peer":
        from pysat.examples.hitman import Hitman

        from nablog.lang import Atom
        from nablog.tableaux.explanations import kernels

        explanations = kernels(db.rules, db.python_model(), Atom("tc", ("s", "t")), limit=None)
        ids: dict = {}
        family = [[ids.setdefault(a, len(ids) + 1) for a in k] for k in explanations]
        with Hitman(bootstrap_with=family, htype="sorted") as hitman:
            for _ in range(FIRST):
                hs = hitman.get()
                if hs is None:
                    break
                hitman.block(hs)
                count += 1
    else:
        method = kind.split(":", 1)[1]
        proposal = db.propose(request, method=method, limit=FIRST if kind.startswith("dag") else None, timeout=TIMEOUT)
        count = len(proposal)
    elapsed = time.perf_counter() - t0
    return {"seconds": elapsed, "load": load, "count": count, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure(kind: str, args: list[str], timeout: float) -> dict:
    run = run_child([sys.executable, __file__, "--child", kind, *args], timeout)
    if run.status != "ok":
        return {"status": run.status, "error": run.error, "peak_mb": run.peak_mb}
    return {"status": "ok", **run.report, "peak_mb": run.peak_mb}


def fmt(m: dict, key: str = "seconds") -> str:
    if m.get("status") != "ok":
        return m.get("status", "?")
    return f"{m[key]:.2f}"


def ratio(a: dict, b: dict) -> str:
    if a.get("status") == "ok" and b.get("status") == "ok" and b["seconds"] > 0:
        return f"{a['seconds'] / b['seconds']:.1f}x"
    if a.get("status") == "timeout" and b.get("status") == "ok":
        return f"> {a.get('limit', 0) / max(b['seconds'], 1e-9):.0f}x"
    return "-"


# -- the sections ---------------------------------------------------------------------------------


def dag_section(sizes: list[tuple[int, int]], timeout: float, peer_max: int) -> dict:
    rows, data = [], {}
    for w, k in sizes:
        args = [str(w), str(k)]
        got = {}
        for kind in ("dag-tableaux", "dag-materialized", "dag-propose:tableaux", "dag-propose:asp", "dag-peer"):
            if kind == "dag-peer" and w**k > peer_max:
                got[kind] = {"status": "skipped"}
                continue
            got[kind] = measure(kind, args, timeout) | {"limit": timeout}
        data[f"{w}x{k}"] = got
        t, mat, tp, ap, peer = (got[k] for k in ("dag-tableaux", "dag-materialized", "dag-propose:tableaux", "dag-propose:asp", "dag-peer"))
        per = "-"
        if t.get("status") == "ok" and mat.get("status") == "ok" and t["count"] and mat["count"]:
            per = f"{(mat['seconds'] / mat['count']) / (t['seconds'] / t['count']):.2f}"
        rows.append([
            f"{w}x{k}", f"{w**k:,}", fmt(t), f"{t.get('peak_mb', 0):.0f}", fmt(mat), per, fmt(tp), fmt(ap), fmt(peer),
            f"{peer.get('peak_mb', 0):.0f}" if peer.get("status") == "ok" else "-", ratio(peer, t),
        ])
    print_table(
        f"deletion -tc(s,t) over a layered DAG: first {FIRST} minimal realizations (seconds; peak MB)",
        ["w x k", "explanations", "tableau", "MB", "materialized", "mat/min per real.", "propose tableaux", "propose asp", "peer: kernels+Hitman", "peer MB", "peer/tableau"],
        rows,
    )
    return data


def insertion_section(sizes: list[int], timeout: float) -> dict:
    rows, data = [], {}
    methods = ("asp", "tableaux", "tableaux-materialized", "transform")
    for n in sizes:
        got = {m: measure(f"chairs-propose:{m}", [str(n)], timeout) | {"limit": timeout} for m in methods}
        data[str(n)] = got
        asp = got["asp"]
        rows.append([f"{n:,}"] + [f"{fmt(got[m])} ({got[m].get('count', '-')})" for m in methods] + [ratio(got[m], asp) for m in methods[1:]])
    print_table(
        f"insertion {CHAIRS_REQUEST} through a join and a projection with two constraints (seconds (realizations))",
        ["staff", *methods, "tableaux/asp", "materialized/asp", "transform/asp"],
        rows,
    )
    return data


def agreement_section() -> dict:
    cases = [
        ("layered DAG 3x2", Database(parse(TC), {"e": layered_dag(3, 2)}), "-tc(s,t)."),
        ("Example 1 scaled, 40 staff", Database(parse(CHAIRS), chairs(40)), CHAIRS_REQUEST),
        (
            "seed 003 Example 1",
            Database.from_files(Path(__file__).resolve().parent.parent / "nablog" / "examples" / "chairs.lp"),
            "+staff_chair(aravindan, gerhard).",
        ),
    ]
    rows, data = [], {}
    for name, db, request in cases:
        sets = {m: {(r.insert, r.delete) for r in db.propose(request, method=m, timeout=120)} for m in ("asp", "transform", "tableaux", "tableaux-materialized")}
        same = len({frozenset(s) for s in sets.values()}) == 1
        rows.append([name, request, str(len(sets["asp"])), "identical" if same else "DIFFER: " + json.dumps({m: len(s) for m, s in sets.items()})])
        data[name] = {m: len(s) for m, s in sets.items()} | {"identical": same}
    print_table("the four methods on instances small enough for clingo", ["instance", "request", "realizations", "sets"], rows)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--dag", default="10x3,10x4,10x5,10x6", help="w x k sizes, comma-separated")
    parser.add_argument("--staff", default="1000,10000", help="sizes of the scaled Example 1 (staff)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per measurement")
    parser.add_argument("--peer-max", type=float, default=1e6, help="largest number of explanations the peer is run on")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1:])))
        return
    if args.quick:
        args.dag, args.staff, args.timeout = "4x3,10x3,10x4", "200", 120
    dag = [tuple(int(x) for x in s.split("x")) for s in args.dag.split(",") if s]
    staff = [int(s) for s in args.staff.split(",") if s]
    results = {"environment": environment()}
    results["dag"] = dag_section(dag, args.timeout, int(args.peer_max))  # type: ignore[arg-type]
    results["insertion"] = insertion_section(staff, args.timeout)
    results["agreement"] = agreement_section()
    print(f"\nsaved to {save_results('tableaux', results)}")
    print("(figures are from a shared machine: compare the ratios within a run, not across runs)")


if __name__ == "__main__":
    main()
