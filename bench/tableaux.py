"""Benchmark: seed 003's update tableaux against explanations-then-hitting-sets, and the four methods.

1. **Deletion with exponentially many explanations.** Closure over a layered DAG: a source ``s``,
   ``k`` layers of width ``w``, a sink ``t``, every edge between consecutive layers:

       tc(X, Y) :- e(X, Y).   tc(X, Y) :- e(X, Z), tc(Z, Y).

   ``-tc(s, t)`` has ``wᵏ`` explanations (the paths) and its realizations are the minimal edge
   cuts. Measured per size, each in its own process (wall and CPU time, peak memory): the update
   tableau streaming its first 100 minimal realizations (``tableaux``, Algorithms 3, 4, from the
   request to the 100th certified realization), the materialized variant's stream of minimal
   realizations (``tableaux-materialized``: branches shrunk to minimal ones), its first 100
   branches as written (Algorithms 5, 6: no minimality test, hitting sets possibly non-minimal),
   ``Database.propose`` with each method and ``limit=100`` (nablog's whole answer, every
   realization verified on the database), and the peer: enumerate every explanation (kernel),
   then PySAT's Hitman for the first 100 minimal hitting sets.
2. **Insertion through joins and projections with constraints**, every method with ``limit=100``
   (time to the first realization and to the answer; asp folds families, the others list each
   member): seed 003's Example 1 scaled (1,000 staff in 100 groups, a group has one chair and a
   chair one group, ``+staff_chair(p0, c1)``, answered in full); the org chart of
   ``bench/propose.py`` (``manager(E, H) :- emp_dept(E, D), dept_head(D, H).``, a key and one
   head per department, ``+manager(e5, h77).``) at 10⁴–10⁶ facts; and Mondial
   (``/work/shared/data/mondial``, ~10⁴ facts): ``member_continent(O, K) :- is_member(C, O),
   on_continent(C, K).`` with two inclusion constraints, inserting a continent for the largest
   organization without a European member.
3. **Agreement.** On instances small enough for clingo, the four methods' realization sets.
4. **--limit.** ``propose(method="tableaux", limit=N)`` deepens by size (branches closed past k
   changes, k = 1, 2, …) until the N smallest are found; measured against the whole enumeration
   (what a limit cost before) on the DAGs, the scaled chairs and the org chart, with the literals
   the tableau put on branches: on instances whose smallest realizations are large, the passes
   below that size are the price.

Run:  .venv/bin/python bench/tableaux.py [--quick] [--dag 10x4,10x5,10x6] [--org 10000,100000,1000000]
          [--timeout S] [--sections dag,insertion,agreement,limit] [--limit-on dag:10x3,chairs:1000,org:10000]
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
from nablog.tableaux.explanations import layered_dag  # noqa: E402

TC = "tc(X,Y) :- e(X,Y). tc(X,Y) :- e(X,Z), tc(Z,Y)."
CHAIRS = """
staff_chair(X,Y) :- staff_group(X,Z), group_chair(Z,Y).
#constraint one_chair :- group_chair(G,X), group_chair(G,Y), X != Y.
#constraint one_group :- group_chair(G,X), group_chair(H,X), G != H.
"""
FIRST = 100
TIMEOUT = 600  # the methods' own limit inside a child; the child is killed at --timeout anyway


def chairs(n: int) -> dict[str, set]:
    """Seed 003's Example 1 scaled: n staff in n/10 groups, one chair per group."""
    groups = max(2, n // 10)
    return {
        "staff_group": {(f"p{i}", f"g{i % groups}") for i in range(n)},
        "group_chair": {(f"g{g}", f"c{g}") for g in range(groups)},
    }


CHAIRS_REQUEST = "+staff_chair(p0, c1)."
MONDIAL_RULES = """
member_continent(O, K) :- is_member(C, O), on_continent(C, K).
#constraint member_is_country :- is_member(C, O), not country(C).
#constraint continent_exists :- on_continent(C, K), not continent(K).
"""
METHODS = ("asp", "tableaux", "tableaux-materialized", "transform")
AGREEMENT_TIMEOUT = 120  # per method and instance: a timeout is shown as such, not as agreement


def mondial() -> tuple[Database, str]:
    """Mondial's memberships and continents, and a request inserting a continent for the largest
    organization without a European member."""
    import csv
    from collections import defaultdict

    from common import shared_data

    def rows(table: str, *cols: str) -> set[tuple]:
        with open(shared_data() / "mondial" / "csv" / f"{table}.csv", newline="") as f:
            return {tuple(r[c] for c in cols) for r in csv.DictReader(f) if all(r[c] for c in cols)}

    members, continents = rows("isMember", "Country", "Organization"), rows("encompasses", "Country", "Continent")
    on: dict[str, set] = defaultdict(set)
    for c, k in continents:
        on[c].add(k)
    by_org: dict[str, set] = defaultdict(set)
    for c, o in members:
        by_org[o].add(c)
    _, org = max((len(cs), o) for o, cs in by_org.items() if not any("Europe" in on[c] for c in cs))
    facts = {"is_member": members, "on_continent": continents, "country": rows("Country", "Code"), "continent": rows("Continent", "Name")}
    return Database(parse(MONDIAL_RULES), facts), f'+member_continent("{org}", "Europe").'


def insertion_database(workload: str, n: int) -> tuple[Database, str]:
    if workload == "chairs":
        return Database(parse(CHAIRS), chairs(n)), CHAIRS_REQUEST
    if workload == "mondial":
        return mondial()
    import shutil
    import tempfile

    from propose import INSERTION_REQUEST, write_org_chart

    directory = Path(tempfile.mkdtemp(prefix="nablog-tableaux-org-"))
    try:
        db = Database.from_files(write_org_chart(n, directory), data=[str(directory)])
        db.python_model()
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return db, INSERTION_REQUEST["insertion"]


# -- measurements, each in a child process ---------------------------------------------------------


def child(kind: str, args: list[str]) -> dict:
    if kind.startswith("limit:"):
        return limit_child(kind, args)
    t0 = time.perf_counter()
    if kind.startswith("dag-"):
        w, k = map(int, args)
        db = Database(parse(TC), {"e": layered_dag(w, k)})
        request = "-tc(s,t)."
    else:
        db, request = insertion_database(args[0], int(args[1]))
    db.python_model()
    db.violations()  # the state's own work, kept between requests
    load = time.perf_counter() - t0
    from nablog.solver.tableaux import request_tableau  # (its import is not the method's time)

    t0, c0 = time.perf_counter(), time.process_time()
    count, first, build = 0, [], None
    if kind in ("dag-tableaux", "dag-materialized", "dag-as-written"):
        tableau = request_tableau(db.rules, db.facts, db.python_model(), request, materialized=kind != "dag-tableaux")
        build = time.process_time() - c0  # the relevant ground problem and the clause set
        stream = tableau.realizations() if kind == "dag-as-written" else tableau.minimal_realizations()
        count = sum(1 for _ in itertools.islice(stream, FIRST))
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
        limit = None if args[0] == "chairs" else FIRST
        proposal = db.propose(request, method=method, limit=limit, timeout=TIMEOUT, stream=True)
        for _ in proposal:
            first.append(time.perf_counter() - t0)
        proposal = proposal.get()
        count = len(proposal)
        if proposal.status == "timeout":
            count = f"{count} (timeout)"
    return {
        "seconds": time.perf_counter() - t0,
        "cpu": time.process_time() - c0,
        "first": first[0] if first else None,
        "build_cpu": build,
        "load": load,
        "count": count,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def limit_child(kind: str, args: list[str]) -> dict:
    """``propose`` with one method and a limit (or none: ``all``), and the work its tableau did:
    literals put on branches over every pass of the deepening."""
    from unittest import mock

    from nablog.solver import tableaux

    _, method, limit = kind.split(":")
    if args[0] == "dag":
        db, request = Database(parse(TC), {"e": layered_dag(int(args[1]), int(args[2]))}), "-tc(s,t)."
    else:
        db, request = insertion_database(args[0], int(args[1]))
    db.python_model()
    db.violations()
    made = []
    original = tableaux.update_tableau

    def keep(*a, **k):
        made.append(original(*a, **k))
        return made[-1]

    t0, c0 = time.perf_counter(), time.process_time()
    with mock.patch.object(tableaux, "update_tableau", keep):
        proposal = db.propose(request, method=method, limit=None if limit == "all" else int(limit), timeout=TIMEOUT, families=False)
    return {
        "seconds": time.perf_counter() - t0,
        "cpu": time.process_time() - c0,
        "count": len(proposal),
        "answer": proposal.status,
        "sizes": sorted({r.size for r in proposal}),
        "steps": sum(t.tableau.steps for t in made),
    }


def measure(kind: str, args: list[str], timeout: float) -> dict:
    run = run_child([sys.executable, __file__, "--child", kind, *args], timeout)
    if run.status != "ok":
        return {"status": run.status, "error": run.error, "peak_mb": run.peak_mb, "limit": timeout}
    return {"status": "ok", **run.report, "peak_mb": run.peak_mb, "limit": timeout}


def fmt(m: dict, key: str = "seconds") -> str:
    if m.get("status") != "ok":
        return m.get("status", "?")
    return "-" if m.get(key) is None else f"{m[key]:.2f}"


def ratio(a: dict, b: dict, key: str = "seconds") -> str:
    if a.get("status") == "ok" and b.get("status") == "ok" and b[key] > 0:
        return f"{a[key] / b[key]:.1f}x"
    if a.get("status") == "timeout" and b.get("status") == "ok":
        return f"> {a['limit'] / max(b[key], 1e-9):.0f}x"
    return "-"


def per_realization(a: dict, b: dict) -> str:
    """``a``'s CPU time per realization over ``b``'s: the enumeration's, past building the
    tableau (the same ground problem and clauses for both: a fixed cost, not per realization)."""
    if a.get("status") == "ok" and b.get("status") == "ok" and a["count"] and b["count"]:
        spent = lambda m: m["cpu"] - (m.get("build_cpu") or 0)  # noqa: E731
        return f"{(spent(a) / a['count']) / (spent(b) / b['count']):.2f}"
    return "-"


# -- the sections ---------------------------------------------------------------------------------

DAG_KINDS = ("dag-tableaux", "dag-materialized", "dag-as-written", "dag-propose:tableaux", "dag-propose:tableaux-materialized", "dag-propose:asp", "dag-peer")


def dag_section(sizes: list[tuple[int, int]], timeout: float, peer_max: int) -> dict:
    rows, data = [], {}
    for w, k in sizes:
        args = [str(w), str(k)]
        got = {}
        for kind in DAG_KINDS:
            if kind == "dag-peer" and w**k > peer_max:
                got[kind] = {"status": "skipped"}
                continue
            got[kind] = measure(kind, args, timeout)
            print(f"  {w}x{k} {kind}: {json.dumps(got[kind])}", flush=True)
        data[f"{w}x{k}"] = got
        t, mat, raw, tp, mp, ap, peer = (got[x] for x in DAG_KINDS)
        rows.append([
            f"{w}x{k}", f"{w**k:,}", f"{fmt(t)} / {fmt(t, 'cpu')}", fmt(t, "build_cpu"), f"{t.get('peak_mb', 0):.0f}",
            fmt(mat, "cpu"), per_realization(mat, t), per_realization(raw, t),
            fmt(tp, "cpu"), fmt(mp, "cpu"), fmt(ap, "cpu"),
            f"{fmt(peer)} / {fmt(peer, 'cpu')}", f"{peer.get('peak_mb', 0):.0f}" if peer.get("status") == "ok" else "-",
            ratio(peer, t, "cpu") if peer.get("status") == "ok" else ratio(peer, t),
        ])
    print_table(
        f"deletion -tc(s,t) over a layered DAG: first {FIRST} minimal realizations (seconds: wall / CPU, or CPU; peak MB; per realization: CPU past building the tableau)",
        ["w x k", "explanations", "tableau", "of it building", "MB", "materialized", "mat/min per real.", "as written/min per real.",
         "propose tableaux", "propose materialized", "propose asp", "peer: kernels+Hitman", "peer MB", "peer/tableau (CPU)"],
        rows,
    )
    return data


def insertion_section(workloads: list[tuple[str, int]], timeout: float) -> dict:
    rows, data = [], {}
    for workload, n in workloads:
        got = {m: measure(f"ins-propose:{m}", [workload, str(n)], timeout) for m in METHODS}
        for m in METHODS:
            print(f"  {workload} {n} {m}: {json.dumps(got[m])}", flush=True)
        data[f"{workload}-{n}"] = got
        asp = got["asp"]
        facts = "~10,500" if workload == "mondial" else f"{n + max(2, n // 10):,}" if workload == "chairs" else f"{n:,}"
        rows.append(
            [workload, facts]
            + [f"{fmt(got[m], 'first')} / {fmt(got[m])} ({got[m].get('count', '-')})" for m in METHODS]
            + [ratio(got[m], asp) for m in METHODS[1:]]
        )
    print_table(
        f"insertion through a join and a projection with constraints, first {FIRST} realizations "
        "(chairs: all): seconds to the first / to the answer (realizations; asp folds families)",
        ["workload", "facts", *METHODS, "tableaux/asp", "materialized/asp", "transform/asp"],
        rows,
    )
    return data


LIMITS = ("1", "10", "100")


def limit_section(instances: list[list[str]], timeout: float) -> dict:
    """``--limit N`` with the tableaux method (deepening by size) against the whole enumeration,
    which is what ``propose`` did before for any limit: CPU seconds and the ratio, and the
    literals the tableau put on branches."""
    rows, data = [], {}
    for args in instances:
        name = f"DAG {args[1]}x{args[2]}" if args[0] == "dag" else f"{args[0]} {int(args[1]):,}"
        got = {limit: measure(f"limit:tableaux:{limit}", args, timeout) for limit in ("all", *LIMITS)}
        for limit, m in got.items():
            print(f"  {name} limit {limit}: {json.dumps(m)}", flush=True)
        data[name] = got
        full = got["all"]
        sizes = full.get("sizes") or ["-"]
        row = [name, f"{full.get('count', '-')} ({full.get('answer', '-')})", f"{sizes[0]}..{sizes[-1]}", f"{fmt(full, 'cpu')} ({full['steps']:,})" if "steps" in full else fmt(full, "cpu")]
        for limit in LIMITS:
            m = got[limit]
            row.append(f"{fmt(m, 'cpu')} ({m['steps']:,})" if "steps" in m else fmt(m, "cpu"))
            row.append(f"{m['cpu'] / full['cpu']:.2f}" if m.get("status") == full.get("status") == "ok" else ratio(m, full, "cpu"))
        rows.append(row)
    print_table(
        "--limit with the tableaux method, deepening by size, against the whole enumeration (CPU seconds (literals on branches); ratio limited / all)",
        ["instance", "realizations", "sizes", "all", *(x for n in LIMITS for x in (f"limit {n}", f"{n}/all"))],
        rows,
    )
    return data


def agreement_section() -> dict:
    example_2 = "p :- a, e. q :- a, f. p :- b, f. q :- b, e. p :- q. q :- a. #base b/0. a. e. f. :- b."
    cases = [
        ("seed 003 Example 1", Database.from_files(Path(__file__).resolve().parent.parent / "nablog" / "examples" / "chairs.lp"), "+staff_chair(aravindan, gerhard)."),
        ("seed 003 Example 2", Database.from_text(example_2), "-p."),
        ("layered DAG 3x2", Database(parse(TC), {"e": layered_dag(3, 2)}), "-tc(s,t)."),
        ("Example 1 scaled, 200 staff", Database(parse(CHAIRS), chairs(200)), CHAIRS_REQUEST),
        ("org chart, 1,000 facts", *insertion_database("org", 1000)),
        ("Mondial memberships", *mondial()),
    ]
    rows, data = [], {}
    for name, db, request in cases:
        sets, counts = {}, {}
        for m in METHODS:
            t0 = time.perf_counter()
            proposal = db.propose(request, method=m, timeout=AGREEMENT_TIMEOUT)
            # asp folds families: compared member by member
            sets[m] = {(x.insert, x.delete) for r in proposal for x in r.members()}
            counts[m] = f"{len(sets[m])}" + ("" if proposal.status == "complete" else f" ({proposal.status})")
            print(f"  {name} {m}: {counts[m]} in {time.perf_counter() - t0:.1f} s", flush=True)
        same = len({frozenset(s) for s in sets.values()}) == 1
        rows.append([name, request, counts["asp"], "identical" if same else "DIFFER: " + json.dumps(counts)])
        data[name] = counts | {"identical": same}
    print_table("the four methods on instances small enough for clingo (realizations, families unfolded)", ["instance", "request", "realizations", "sets"], rows)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--dag", default="10x3,10x4,10x5,10x6,10x7", help="w x k sizes, comma-separated")
    parser.add_argument("--org", default="10000,100000,1000000", help="org chart sizes (facts)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per measurement")
    parser.add_argument("--peer-max", type=float, default=1e6, help="largest number of explanations the peer is run on")
    parser.add_argument("--sections", default="dag,insertion,agreement,limit", help="which sections to run")
    parser.add_argument("--limit-on", default="dag:3x3,dag:4x2,chairs:1000,org:10000,org:100000", help="instances of the limit section")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1:])))
        return
    if args.quick:
        args.dag, args.org, args.timeout = "4x3,10x3,10x4", "10000", 120
    dag = [tuple(int(x) for x in s.split("x")) for s in args.dag.split(",") if s]
    workloads = [("chairs", 1000), *(("org", int(n)) for n in args.org.split(",") if n), ("mondial", 0)]
    sections = args.sections.split(",")
    results = {"environment": environment()}
    if "dag" in sections:
        results["dag"] = dag_section(dag, args.timeout, int(args.peer_max))  # type: ignore[arg-type]
    if "insertion" in sections:
        results["insertion"] = insertion_section(workloads, args.timeout)
    if "agreement" in sections:
        results["agreement"] = agreement_section()
    if "limit" in sections:
        instances = [[kind, *size.split("x")] for kind, size in (x.split(":") for x in args.limit_on.split(",") if x)]
        results["limit"] = limit_section(instances, args.timeout)
    print(f"\nsaved to {save_results('tableaux', results)}")
    print("(figures are from a shared machine: compare the ratios within a run, not across runs)")


if __name__ == "__main__":
    main()
