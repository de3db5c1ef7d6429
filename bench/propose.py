"""Benchmark: proposal time for a request with a local relevant part, as the database grows.

An org chart of N employees (a tree, fan-out 8) with the chain of command as a recursive view:

    reports_to(X, Y) :- manager(X, Y).
    reports_to(X, Z) :- manager(X, Y), reports_to(Y, Z).
    #constraint one_manager :- manager(X, Y), manager(X, Z), Y != Z.
    #constraint no_cycle :- reports_to(X, X).

The request deletes one chain-of-command fact low in the tree (an employee and the manager of
their manager): its realizations touch a few dozen facts whatever N is. nablog's ``asp`` method is
measured against a baseline in the same run that grounds the whole database with clingo, with a
choice to delete every base fact, and enumerates subset-minimal change sets (what a solver does
without goal-directed relevance).

Run:  .venv/bin/python bench/propose.py [--sizes 10000 100000 1000000] [--baseline-timeout 120]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import clingo

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nablog import Database, parse  # noqa: E402

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-timeout", type=float, default=120.0)
    parser.add_argument("--baseline-max", type=int, default=100_000, help="largest size given to the baseline")
    args = parser.parse_args(argv)

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
