"""Interleaved A/B of two commits: the same benchmark commands on both trees, alternated, in CPU seconds.

Each revision is checked out (``git archive``) into a temporary directory and each command runs
there as a child process with ``PYTHONPATH`` at that tree, alternating A, B, A, B, ... so that the
load of a shared machine falls on both alike; the figure is the child's user + system CPU time
(``RUSAGE_CHILDREN``), not wall time, which waits for a core. Printed per command: each side's
median and every run, and B/A.

Issue 23's table (bench/README.md): ``A`` is the commit before the issue's first change.

Run:  .venv/bin/python bench/ab.py A_REV B_REV [--rounds 2] [--orgchart 100000]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

COMMANDS = {
    "propose (deletion, 1e4)": ["bench/propose.py", "--sizes", "10000", "--repeats", "1"],
    "propagate": ["bench/propagate.py", "--repeats", "1"],
    "monitor (--quick, 10 commits)": ["bench/monitor.py", "--quick", "--commits", "10", "--repeats", "1", "--no-profile-insert", "--probe-gnp-nodes", "0"],
}


def checkout(rev: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def cpu_of(argv: list[str], tree: Path, cwd: Path | None = None) -> float:
    """CPU seconds (user + system) of one child run of ``argv`` with nablog from ``tree``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(argv, cwd=cwd or tree, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed in {tree}:\n{done.stderr[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def orgchart_commands(tree: Path, data: Path, work: Path) -> dict[str, callable]:
    """``propose --limit 1`` and ``apply --pick 1`` of ``+manager(e5, h77).`` on the org chart in
    ``data`` (apply runs on a fresh copy each time: it writes)."""
    nablog = [sys.executable, "-m", "nablog.cli"]
    request = "+manager(e5, h77)."

    def propose() -> float:
        return cpu_of([*nablog, "propose", str(data / "org.lp"), "--data", str(data), request, "--limit", "1"], tree)

    def apply() -> float:
        copy = work / "apply"
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(data, copy)
        return cpu_of([*nablog, "apply", str(copy / "org.lp"), "--data", str(copy), request, "--pick", "1"], tree)

    return {"org chart: propose --limit 1": propose, "org chart: apply --pick 1": apply}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each command on each side, interleaved")
    parser.add_argument("--orgchart", type=int, default=100_000, help="facts of the org chart (0: skip it)")
    parser.add_argument("--only", nargs="*", default=None, help="run only these commands (names as printed)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "bench"))
    from propose import write_org_chart  # the generator bench/propose.py's insertion workload uses

    with tempfile.TemporaryDirectory(prefix="nablog-ab-") as tmp:
        root = Path(tmp)
        trees = {"A": checkout(args.a, root / "A"), "B": checkout(args.b, root / "B")}
        runs: dict[str, dict[str, callable]] = {
            name: {side: (lambda argv=argv, tree=tree: cpu_of([sys.executable, *argv], tree)) for side, tree in trees.items()}
            for name, argv in COMMANDS.items()
        }
        if args.orgchart:
            data = root / "org"
            write_org_chart(args.orgchart, data)
            per_side = {side: orgchart_commands(tree, data, root / side) for side, tree in trees.items()}
            for name in per_side["A"]:
                runs[f"{name} ({args.orgchart:.0e} facts)"] = {side: per_side[side][name] for side in trees}
        if args.only:
            runs = {k: v for k, v in runs.items() if any(k.startswith(o) for o in args.only)}
        results: dict[str, dict[str, list[float]]] = {name: {"A": [], "B": []} for name in runs}
        for name, sides in runs.items():
            for _ in range(args.rounds):
                for side in ("A", "B"):
                    results[name][side].append(sides[side]())
            a, b = (statistics.median(results[name][s]) for s in ("A", "B"))
            print(f"{name:<44} A {a:7.2f} s  B {b:7.2f} s  B/A {b / a:5.2f}   runs A {results[name]['A']}  B {results[name]['B']}", flush=True)
        print(f"\nA = {args.a}, B = {args.b}; CPU seconds (user + system) of each child, median of {args.rounds}, interleaved A, B.")
        print(f"| command | A s | B s | B/A |\n|---|---:|---:|---:|")
        for name, sides in results.items():
            a, b = statistics.median(sides["A"]), statistics.median(sides["B"])
            print(f"| {name} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
