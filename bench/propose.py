"""Benchmark: proposal time for view-update requests as the database grows, deletions and insertions.

Deletion (``--workload deletion``): an org chart of N employees (a tree, fan-out 8) with the chain of command as a recursive view:

    reports_to(X, Y) :- manager(X, Y).
    reports_to(X, Z) :- manager(X, Y), reports_to(Y, Z).
    #constraint one_manager :- manager(X, Y), manager(X, Z), Y != Z.
    #constraint no_cycle :- reports_to(X, X).

The request deletes one chain-of-command fact low in the tree (an employee and the manager of
their manager): its realizations touch a few dozen facts whatever N is. nablog's ``asp`` method is
measured against a baseline in the same run that grounds the whole database with clingo, with a
choice to delete every base fact, and enumerates subset-minimal change sets (what a solver does
without goal-directed relevance).

Insertion (``--workload insertion``, issue 16): an org chart of employees in departments (100
per department), ``manager(E, H) :- emp_dept(E, D), dept_head(D, H).``, a key on employees and one
head per department, read from CSV files written under a temporary directory. The request
``+manager(e5, h77).`` has two 2-change realizations, one 3-change realization with a new
department, and one 4-change realization per other department, shown as one family. Each size runs
in a child process (peak memory measured); figures: time to the first realization, to the first
10 rows, to all of them (families folded), the same for a second request ``+manager(e6, h78).`` on
the same database, against a whole-database clingo baseline in the same run (every base fact may be
deleted, e5 may join any department and h77 head any; clingo enumerates the subset-minimal change
sets).

What is done before the first request is shown apart, as load+state+tables, and is not in the
request's times: *load* reads the CSV files and evaluates the model; *state* checks the constraints;
*tables* is ``Database.prepare()``, which builds the tables every request over the state reads —
the lookup table of the constants, the classes of interchangeable values (a signature pass over the
relations the program reads), an index of each such relation on each position, and the join indexes
the verifier's maintenance probes (by one trial deletion per relation). With ``--lazy`` it is not
called and the first request builds them (as a one-shot command line does). ``--workload insertion-recursive`` adds the chain of
command: heads are employees of the parent department (a tree, fan-out 10) and the request is
``+reports_to(e5, h77).`` through ``reports_to(E, H) :- manager(E, H). reports_to(E, H) :-
manager(E, M), reports_to(M, H).``

The recursive request's realizations are many (one per person who reports to h77, per place on
e5's chain of command; and larger ones without end): it is answered by bound lookups (see
nablog/solver/demand.py and ``supported_first``) with status ``bounded``; ``--propose-timeout``
gives each proposal a timeout, so that "all" is what was listed by then.

Loading (``--workload loading``, issue 29): the org chart's ``emp_dept`` (N rows) as CSV and as
Parquet, read by nablog's store into facts (*read*) and encoded into the python engine's
relations (*encode*: the model of a program without rules), each beside DuckDB's ``read_csv`` /
``read_parquet`` of the same file into a table, in the same process (medians of ``--repeats``).

Run:  .venv/bin/python bench/propose.py [--workload deletion|insertion|insertion-recursive|loading]
          [--sizes 10000 100000 1000000] [--baseline-timeout 120] [--repeats 3] [--lazy]
          [--propose-timeout 60]
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
import statistics
import sys
import tempfile
import time
from pathlib import Path

import clingo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nablog import Database, parse  # noqa: E402
from bench.common import print_table, run_child  # noqa: E402

ORG_RULES = """
#columns emp_dept(emp, dept).
#columns dept_head(dept, head).
manager(E, H) :- emp_dept(E, D), dept_head(D, H).
#key emp_dept: emp.
#constraint one_head :- dept_head(D, X), dept_head(D, Y), X != Y.
"""
CHAIN_RULES = """
reports_to(E, H) :- manager(E, H).
reports_to(E, H) :- manager(E, M), reports_to(M, H).
"""
PER_DEPARTMENT = 100
INSERTION_REQUEST = {"insertion": "+manager(e5, h77).", "insertion-recursive": "+reports_to(e5, h77)."}
WARM_REQUEST = {"insertion": "+manager(e6, h78).", "insertion-recursive": "+reports_to(e6, h78)."}
AFTER_COMMIT_REQUEST = {"insertion": "+manager(e7, h79).", "insertion-recursive": "+reports_to(e7, h79)."}


def write_org_chart(n: int, directory: Path, recursive: bool = False) -> Path:
    """An org chart of about ``n`` base facts as CSV files and a program in ``directory``: employee
    ``e<i>`` in department ``d<i mod D>``, department ``d<k>`` headed by ``h<k>`` (D = n/100). With
    ``recursive``, head ``h<k>`` is also an employee of the parent department ``d<(k-1)//10>``."""
    departments = max(1, n // PER_DEPARTMENT)
    employees = n - departments - (departments - 1 if recursive else 0)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "emp_dept.csv", "w") as f:
        f.write("emp,dept\n")
        f.writelines(f"e{i},d{i % departments}\n" for i in range(employees))
        if recursive:
            f.writelines(f"h{k},d{(k - 1) // 10}\n" for k in range(1, departments))
    with open(directory / "dept_head.csv", "w") as f:
        f.write("dept,head\n")
        f.writelines(f"d{k},h{k}\n" for k in range(departments))
    program = directory / "org.lp"
    program.write_text(ORG_RULES + (CHAIN_RULES if recursive else ""))
    return program


def _timed(db: Database, request: str, timeout: float | None, first_only: bool = False):
    """Propose ``request`` streamed and iterate it: wall and CPU seconds at each realization (at
    the first only, with ``first_only``), wall and CPU seconds to its end, and the handle. The
    clocks start before ``propose``: preparing the request counts."""
    wall: list[float] = []
    cpu: list[float] = []
    t0, c0 = time.perf_counter(), time.process_time()
    handle = db.propose(request, timeout=timeout, stream=True)
    for _ in handle:
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        if first_only:
            break
    return wall, cpu, time.perf_counter() - t0, time.process_time() - c0, handle


def insertion_child(workload: str, n: int, directory: str, lazy: bool = False, timeout: float | None = None) -> dict:
    """In a child process: load the org chart, then time one proposal, row by row (with
    ``timeout``, each proposal is given that many seconds: status ``timeout`` with what it found)."""
    program = Path(directory) / "org.lp"
    t0 = time.perf_counter()
    db = Database.from_files(program, data=[directory])
    db.python_model()
    load = time.perf_counter() - t0
    t0 = time.perf_counter()
    db.violations()  # the state's own work: checked once, kept for every request
    state = time.perf_counter() - t0
    t0 = time.perf_counter()
    if not lazy:
        db.prepare()  # the tables every request over this state reads (see the module docstring)
    tables = time.perf_counter() - t0
    # Wall and CPU seconds: on a shared machine a request of milliseconds mostly waits for a core.
    times, cpu, total, total_cpu, proposal = _timed(db, INSERTION_REQUEST[workload], timeout)  # each realization as soon as it is verified
    proposal = proposal.get()
    # A second request on the same database, as in a server or a session.
    warm, warm_cpu, warm_total, _, _ = _timed(db, WARM_REQUEST[workload], timeout)
    # The first request after a commit (a new employee of d3): the state's tables are carried
    # through the commit's changes, not built again (issue 29).
    db.commit([f"emp_dept(e{n + 1}, d3)"])
    after, after_cpu, _, _, _ = _timed(db, AFTER_COMMIT_REQUEST[workload], timeout, first_only=True)
    return {
        "after_commit_first": after[0] if after else None,
        "after_commit_first_cpu": after_cpu[0] if after_cpu else None,
        "first_cpu": cpu[0] if cpu else None,
        "all_cpu": total_cpu,
        "warm_first_cpu": warm_cpu[0] if warm_cpu else None,
        "warm_first": warm[0] if warm else None,
        "warm_all": warm_total,
        "load": load,
        "state": state,
        "tables": tables,
        "first": times[0] if times else None,
        "tenth": times[min(9, len(times) - 1)] if times else None,
        "all": total,
        "rows": len(proposal),
        "members": sum(len(r.family) if r.family else 1 for r in proposal),
        "families": sum(1 for r in proposal if r.family),
        "status": proposal.status,
        "shown": [r.changes.lines() for r in proposal],
    }


def insertion_baseline_child(workload: str, directory: str, timeout: float) -> dict:
    """Whole-database clingo: every base fact may be deleted, e5 may join any department and h77
    head any; enumerate subset-minimal change sets (domRec)."""
    import csv

    t0 = time.perf_counter()
    lines = []
    for pred in ("emp_dept", "dept_head"):
        with open(Path(directory) / f"{pred}.csv") as f:
            rows = csv.reader(f)
            next(rows)
            lines.extend(f"{pred}({a},{b})." for a, b in rows)
    recursive = workload == "insertion-recursive"
    goal = ":- not reports_to(e5,h77)." if recursive else ":- not manager(e5,h77)."
    program = "\n".join(lines) + f"""
dept(D) :- dept_head(D, _).
{{ del_e(E, D) }} :- emp_dept(E, D).
{{ del_h(D, H) }} :- dept_head(D, H).
{{ ins_e(e5, D) }} :- dept(D).
{{ ins_h(D, h77) }} :- dept(D).
#heuristic del_e(E, D) : emp_dept(E, D). [1,false]
#heuristic del_h(D, H) : dept_head(D, H). [1,false]
#heuristic ins_e(E, D) : dept(D), E = e5. [1,false]
#heuristic ins_h(D, H) : dept(D), H = h77. [1,false]
ed(E, D) :- emp_dept(E, D), not del_e(E, D).
ed(E, D) :- ins_e(E, D).
dh(D, H) :- dept_head(D, H), not del_h(D, H).
dh(D, H) :- ins_h(D, H).
manager(E, H) :- ed(E, D), dh(D, H).
:- ed(E, D1), ed(E, D2), D1 != D2.
:- dh(D, X), dh(D, Y), X != Y.
{"reports_to(E, H) :- manager(E, H). reports_to(E, H) :- manager(E, M), reports_to(M, H)." if recursive else ""}
{goal}
#show del_e/2. #show del_h/2. #show ins_e/2. #show ins_h/2.
"""
    control = clingo.Control(["--heuristic=Domain", "--enum-mode=domRec", "0", "--warn=none"])
    control.add("base", [], program)
    control.ground([("base", [])])
    ground = time.perf_counter() - t0
    models, first = 0, None
    with control.solve(yield_=True, async_=True) as handle:
        while True:
            handle.resume()
            if not handle.wait(max(0.0, timeout - (time.perf_counter() - t0))):
                handle.cancel()
                return {"ground": ground, "first": first, "all": None, "models": models}
            if handle.model() is None:
                break
            models += 1
            first = first or time.perf_counter() - t0
    return {"ground": ground, "first": first, "all": time.perf_counter() - t0, "models": models}


def _median_run(runs: list) -> "object":
    """One child's run standing for several: each time the median over the runs that finished,
    the peak memory the largest; the first run that failed when any did."""
    failed = [r for r in runs if r.status != "ok"]
    if failed:
        return failed[0]
    report = dict(runs[0].report)
    for key, value in report.items():
        if isinstance(value, float):
            found = [r.report[key] for r in runs if r.report.get(key) is not None]
            report[key] = statistics.median(found) if found else None
    return replace(runs[0], report=report, peak_mb=max(r.peak_mb for r in runs))


def run_insertion(args) -> int:
    seconds = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    rows, saved = [], []
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="nablog-org-") as tmp:
            write_org_chart(n, Path(tmp), recursive=args.workload == "insertion-recursive")
            me = [sys.executable, __file__]
            # Times of a few milliseconds on a shared machine: the median of --repeats children.
            runs = [run_child(me + ["--child", args.workload, str(n), tmp] + (["--lazy"] if args.lazy else []) + ([f"--propose-timeout={args.propose_timeout}"] if args.propose_timeout else []), args.timeout) for _ in range(args.repeats)]
            ours = _median_run(runs)
            if n <= args.baseline_max:
                base = run_child(me + ["--baseline-child", args.workload, str(n), tmp, str(args.baseline_timeout)], args.baseline_timeout + 60)
            else:
                base = None
        r = ours.report
        b = base.report if base and base.status == "ok" else {}
        if ours.status != "ok":
            rows.append([f"{n:,}", ours.status, "-", "-", "-", "-", f"{ours.peak_mb:.0f}", "-", "-", "-", ours.error])
            continue
        if base is None:
            shown, ratio = "skipped", "-"
        elif b.get("all") is not None:
            shown, ratio = f"{b['all']:.2f}", f"{b['all'] / r['all']:.1f}x"
        else:
            shown = f">{args.baseline_timeout:.0f} ({b.get('models', 0)} found)" if b else base.status
            ratio = f">{args.baseline_timeout / r['all']:.0f}x" if b else "-"
        rows.append([
            f"{n:,}", seconds(r["first"]), seconds(r["tenth"]), seconds(r["all"]), f"{seconds(r['warm_first'])}/{seconds(r['warm_all'])}", f"{r['load']:.1f}+{r['state']:.2f}+{r['tables']:.2f}",
            f"{ours.peak_mb:.0f}", f"{r['rows']} ({r['members']:,})", r["status"], shown, ratio,
        ])
        saved.append({"n": n, "nablog": r, "peak_mb": ours.peak_mb, "baseline": b or (base.status if base else None)})
        print(f"n={n:,}: {json.dumps({k: v for k, v in r.items() if k != 'shown'})}, peak {ours.peak_mb:.0f} MB, baseline {shown}", flush=True)
    print_table(
        f"{args.workload}: {INSERTION_REQUEST[args.workload]} on the org chart (seconds, medians of {args.repeats} processes; families folded; rows (members); tables {'built by the first request' if args.lazy else 'prepared before it'})",
        ["base facts", "first", "first 10", "all", "2nd request first/all", "load+state+tables", "peak MB", "rows", "status", "clingo all", "clingo/nablog"],
        rows,
    )
    if len(saved) > 1 and saved[0]["nablog"]["first"] and saved[-1]["nablog"]["first"]:
        first, last = saved[0]["nablog"], saved[-1]["nablog"]
        if first.get("after_commit_first_cpu") and last.get("after_commit_first_cpu"):
            print(f"\nfirst realization after a commit, largest vs smallest: {last['after_commit_first'] / first['after_commit_first']:.2f}x (CPU {last['after_commit_first_cpu'] / first['after_commit_first_cpu']:.2f}x: {first['after_commit_first_cpu'] * 1000:.0f} vs {last['after_commit_first_cpu'] * 1000:.0f} ms) (target 2x)")
        print(f"\ntime to the first realization, largest vs smallest: {last['first'] / first['first']:.2f}x (CPU {last['first_cpu'] / first['first_cpu']:.2f}x: {first['first_cpu'] * 1000:.1f} vs {last['first_cpu'] * 1000:.1f} ms), second request {last['warm_first'] / first['warm_first']:.2f}x (CPU {last['warm_first_cpu'] / first['warm_first_cpu']:.2f}x) (target 2x); largest: first {last['first']:.2f} s (target 1 s), all {last['all']:.2f} s (target 5 s), peak {saved[-1]['peak_mb']:.0f} MB (target 2048)")
    if saved:
        print("rows of the largest:", *saved[-1]["nablog"]["shown"], sep="\n  ")
    return 0

RULES = """
reports_to(X, Y) :- manager(X, Y).
reports_to(X, Z) :- manager(X, Y), reports_to(Y, Z).
#constraint one_manager :- manager(X, Y), manager(X, Z), Y != Z.
#constraint no_cycle :- reports_to(X, X).
"""
FANOUT = 8


def org_chart(n: int) -> set[tuple[int, int]]:
    """manager(e, boss) for employees 1..n-1 of a tree rooted at employee 0."""
    return {(e, (e - 1) // FANOUT) for e in range(1, n)}


def local_request(n: int) -> str:
    """Delete that the last employee reports to their manager's manager."""
    e = n - 1
    grand = ((e - 1) // FANOUT - 1) // FANOUT
    return f"-reports_to({e}, {grand})."


def time_nablog(n: int, repeats: int) -> dict:
    facts = {"manager": org_chart(n)}
    t0 = time.perf_counter()
    db = Database(parse(RULES), facts)
    db.python_model()
    load = time.perf_counter() - t0
    request = local_request(n)
    # The first request also checks the constraints of the current state and builds lookup
    # indexes; both belong to the state and are kept for later requests.
    t0 = time.perf_counter()
    db.propose(request)
    first = time.perf_counter() - t0
    times, proposal = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        proposal = db.propose(request)
        times.append(time.perf_counter() - t0)
    assert proposal is not None
    return {
        "load": load,
        "first": first,
        "propose": statistics.median(times),
        "realizations": len(proposal),
        "candidates": proposal.candidates,
        "status": proposal.status,
        "lines": [r.changes.lines() for r in proposal],
    }


def time_baseline(n: int, timeout: float) -> dict:
    """Ground everything with a choice over every base fact and enumerate minimal change sets."""
    e = n - 1
    grand = ((e - 1) // FANOUT - 1) // FANOUT
    facts = "\n".join(f"manager({a},{b})." for a, b in sorted(org_chart(n)))
    program = f"""
{facts}
{{ del(X, Y) }} :- manager(X, Y).
#heuristic del(X, Y) : manager(X, Y). [1,false]
m(X, Y) :- manager(X, Y), not del(X, Y).
r(X, Y) :- m(X, Y).
r(X, Z) :- m(X, Y), r(Y, Z).
:- m(X, Y), m(X, Z), Y != Z.
:- r(X, X).
:- r({e}, {grand}).
#show del/2.
"""
    t0 = time.perf_counter()
    control = clingo.Control(["--heuristic=Domain", "--enum-mode=domRec", "0", "--warn=none"])
    control.add("base", [], program)
    control.ground([("base", [])])
    models = 0
    with control.solve(yield_=True, async_=True) as handle:
        while True:
            handle.resume()
            if not handle.wait(max(0.0, timeout - (time.perf_counter() - t0))):
                handle.cancel()
                return {"time": None, "models": models}
            if handle.model() is None:
                break
            models += 1
    return {"time": time.perf_counter() - t0, "models": models}


def loading_child(directory: str, repeats: int) -> dict:
    """Seconds to load ``emp_dept`` from CSV and from Parquet: nablog's store (read), the python
    engine's encoding of the facts (encode), and DuckDB into a table; medians of ``repeats``."""
    import duckdb

    from nablog.engines import PythonEngine
    from nablog.io import open_source

    out: dict = {}
    for kind in ("csv", "parquet"):
        path = Path(directory) / kind / f"emp_dept.{kind}"
        reads, encodes, peers, cpu = [], [], [], []
        for _ in range(repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            facts = open_source(path, header=True).load() if kind == "csv" else open_source(path).load()
            t1 = time.perf_counter()
            PythonEngine().evaluate(parse(""), facts)
            t2, c2 = time.perf_counter(), time.process_time()
            reads.append(t1 - t0)
            encodes.append(t2 - t1)
            cpu.append(c2 - c0)
            con = duckdb.connect()
            t0 = time.perf_counter()
            con.sql(f"CREATE TABLE t AS SELECT * FROM read_{kind}('{path}')")
            peers.append(time.perf_counter() - t0)
            rows = con.sql("SELECT count(*) FROM t").fetchall()[0][0]
            con.close()
            assert rows == len(facts["emp_dept"]), (rows, len(facts["emp_dept"]))
        out[kind] = {"read": statistics.median(reads), "encode": statistics.median(encodes), "cpu": statistics.median(cpu), "duckdb": statistics.median(peers), "rows": rows}
    return out


def run_loading(args) -> int:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rows = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory(prefix="nablog-load-") as tmp:
            write_org_chart(n, Path(tmp) / "csv")
            table = pacsv.read_csv(Path(tmp) / "csv" / "emp_dept.csv", convert_options=pacsv.ConvertOptions(column_types={"emp": pa.string(), "dept": pa.string()}))
            (Path(tmp) / "parquet").mkdir()
            pq.write_table(table, Path(tmp) / "parquet" / "emp_dept.parquet")
            run = run_child([sys.executable, __file__, "--loading-child", tmp, str(args.repeats)], args.timeout)
        if run.status != "ok":
            rows.append([f"{n:,}", run.status, "-", "-", "-", "-", "-", "-", "-", run.error])
            continue
        for kind, r in run.report.items():
            total = r["read"] + r["encode"]
            rows.append([f"{r['rows']:,}", kind, f"{r['read']:.2f}", f"{r['encode']:.2f}", f"{total:.2f}", f"{r['cpu']:.2f}", f"{r['duckdb']:.2f}", f"{total / r['duckdb']:.1f}x", f"{r['cpu'] / r['duckdb']:.1f}x", f"{run.peak_mb:.0f}"])
    print_table(
        f"loading emp_dept into the python engine vs DuckDB into a table (seconds, medians of {args.repeats}; target python/duckdb <= 2x)",
        ["rows", "file", "nablog read", "encode", "nablog total", "nablog CPU", "duckdb", "nablog/duckdb", "CPU/duckdb", "peak MB"],
        rows,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        rest = argv[4:]
        timeout = next((float(a.split("=", 1)[1]) for a in rest if a.startswith("--propose-timeout=")), None)
        print(json.dumps(insertion_child(argv[1], int(argv[2]), argv[3], lazy="--lazy" in rest, timeout=timeout)))
        return 0
    if argv[:1] == ["--loading-child"]:
        print(json.dumps(loading_child(argv[1], int(argv[2]))))
        return 0
    if argv[:1] == ["--baseline-child"]:
        print(json.dumps(insertion_baseline_child(argv[1], argv[3], float(argv[4]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("deletion", "insertion", "insertion-recursive", "loading"), default="deletion")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for each insertion child")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3, help="deletion: timed requests per size; insertion: children per size (medians shown)")
    parser.add_argument("--propose-timeout", type=float, default=None, help="seconds for each insertion proposal (status timeout with what it found)")
    parser.add_argument("--baseline-timeout", type=float, default=120.0)
    parser.add_argument("--baseline-max", type=int, default=100_000, help="largest size given to the baseline")
    parser.add_argument("--lazy", action="store_true", help="insertion: do not prepare the state's tables before the first request (it builds them)")
    args = parser.parse_args(argv)
    if args.workload == "loading":
        return run_loading(args)
    if args.workload != "deletion":
        return run_insertion(args)

    rows = []
    for n in args.sizes:
        ours = time_nablog(n, args.repeats)
        base = time_baseline(n, args.baseline_timeout) if n <= args.baseline_max else {"time": None, "models": None, "skipped": True}
        rows.append((n, ours, base))
        shown = "skipped" if base.get("skipped") else ("timeout" if base["time"] is None else f"{base['time']:.2f} s")
        print(
            f"n={n:>9,}: propose {ours['propose']:.3f} s ({ours['realizations']} realizations, "
            f"{ours['candidates']} candidates), first request {ours['first']:.2f} s, model {ours['load']:.1f} s, baseline {shown}",
            flush=True,
        )

    print()
    print(f"{'base facts':>12} {'propose s':>10} {'vs first':>9} {'baseline s':>11} {'baseline/nablog':>16} {'realizations':>13} {'status':>9}")
    first = rows[0][1]["propose"]
    for n, ours, base in rows:
        if base.get("skipped"):
            b, ratio = "skipped", "-"
        elif base["time"] is None:
            b, ratio = f">{args.baseline_timeout:.0f}", f">{args.baseline_timeout / ours['propose']:.0f}x"
        else:
            b, ratio = f"{base['time']:.2f}", f"{base['time'] / ours['propose']:.1f}x"
        print(f"{n - 1:>12,} {ours['propose']:>10.3f} {ours['propose'] / first:>8.2f}x {b:>11} {ratio:>16} {ours['realizations']:>13} {ours['status']:>9}")
    largest = rows[-1][1]["propose"]
    print()
    print(f"target: the largest database within 2x of the smallest ({largest / first:.2f}x) and under 1 s ({largest:.3f} s)")
    print("realizations of the largest:", rows[-1][1]["lines"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
