"""Materialization benchmark: recursive views on nablog's engines against clingo and DuckDB, same run.

Every (engine, graph) cell runs in fresh child processes: one idle (modules imported, engine
ready, input edges built, nothing evaluated) and one evaluating the view (repeated when quick), so
the peak memory of the second minus the first is what the evaluation itself needed. The python
engine and DuckDB are handed the same input, two int64 numpy arrays (the python engine as
``Columns``, DuckDB as a registered frame copied into a table inside the timed region); clingo and
Spark get a Python set of tuples. See bench/README.md.

Run ``python bench/materialize.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from common import ChildRun, shared_data, environment, print_table, run_child, save_results

PROGRAMS = {
    "tc": "tc(X,Y) :- e(X,Y). tc(X,Y) :- e(X,Z), tc(Z,Y).",
    "sg": "sg(X,Y) :- e(P,X), e(P,Y), X != Y. sg(X,Y) :- e(A,X), sg(A,B), e(B,Y).",
    # Thin deep recursion: one new tuple a round, n rounds (the bound n is the workload's size).
    "reach": "r(X) :- s(X). r(Y) :- r(X), e(X,Y).",
    "ib3": "b(X+1) :- a(X), X < {n}. a(X) :- b(X), c(Y), d(Y).",  # Soufflé's test independent_body3
}
VIEW_OF = {"tc": "tc", "sg": "sg", "reach": "r", "ib3": "a"}
FACTS = {"reach": {"s": {(0,)}}, "ib3": {"b": {(0,)}, "c": {(1,), (2,)}, "d": {(2,), (3,)}}}
"""Facts besides the edges ``e`` (ib3 reads no edges)."""
SQL = {
    "tc": "WITH RECURSIVE tc(x,y) AS (SELECT * FROM e UNION SELECT e.x, tc.y FROM e JOIN tc ON e.y = tc.x) "
    "SELECT count(*) FROM tc",
    "sg": "WITH RECURSIVE sg(x,y) AS (SELECT e1.y, e2.y FROM e e1 JOIN e e2 ON e1.x = e2.x WHERE e1.y <> e2.y "
    "UNION SELECT e1.y, e2.y FROM e e1 JOIN sg ON e1.x = sg.x JOIN e e2 ON sg.y = e2.x) SELECT count(*) FROM sg",
}
DUCKDB_THREADS = 2
ENGINES = ("python", "clingo", "spark", "duckdb")
PEER = "duckdb"
PEERS = {"thin": "clingo"}  # the peer of a table, when not DuckDB (see bench/README.md)
SEED = 0
DATA = shared_data()
GNP_P = 0.001
GNP_SIZES = (1000, 2000, 3000, 4000, 5000)
SPARK_MAX_GNP = 2000
TARGET = 1.5
SHAPES = {  # the summary's rows: shape -> (table, workload label)
    "dense G(5000, 0.001)": ("tc-gnp", "G(5000, 0.001)"),
    "email-Eu-core": ("tc-real", "email-Eu-core"),
    "WordNet hypernyms": ("tc-real", "WordNet hypernyms"),
    "sparse 1e5 (deep)": ("tc-sparse", "100,000 edges"),
    "sparse 1e4": ("tc-sparse", "10,000 edges"),
    "same generation, tree 4,000": ("sg-tree", "tree 4,000"),
}
REPEAT_BELOW = 30.0
TABLES = {
    "tc-gnp": "Transitive closure on random graphs G(n, 0.001)",
    "tc-sparse": "Transitive closure on sparse random graphs (as many nodes as edges: mean out-degree 1)",
    "sg-tree": "Same generation on random recursive trees (parent of node i uniform among 0..i-1)",
    "sg-gnp": "Same generation on random graphs G(n, 0.001)",
    "tc-real": "Transitive closure on real graphs (../shared/data)",
    "thin": "Thin deep recursion: one new tuple a round (a chain; Soufflé's independent_body3), against clingo",
}
THIN_SIZES = (10_000, 100_000, 1_000_000)


@dataclass(frozen=True)
class Workload:
    """One view over one graph: ``graph`` names the generator or loader, ``params`` its arguments."""

    table: str
    label: str
    view: str
    graph: str
    params: tuple = ()
    expected: int | None = None
    spark: bool = False  # whether spark runs it by default (deep recursion is slow on Spark)


# -- graphs (edge lists as two int64 arrays) --------------------------------------------------------


def random_cells(rng: np.random.Generator, nodes: int, edges: int) -> tuple[np.ndarray, np.ndarray]:
    """``edges`` distinct directed edges between distinct nodes, drawn uniformly."""
    cells = rng.choice(nodes * (nodes - 1), size=edges, replace=False)
    src, rest = np.divmod(cells, nodes - 1)
    return src, rest + (rest >= src)  # skip the diagonal


def gnp(n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Erdős–Rényi G(n, p), directed, without self-loops."""
    rng = np.random.default_rng(SEED)
    return random_cells(rng, n, int(rng.binomial(n * (n - 1), p)))


def sparse(edges: int, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """A uniform random directed graph with exactly ``edges`` edges on ``nodes`` nodes."""
    return random_cells(np.random.default_rng(SEED), nodes, edges)


def tree(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A random recursive tree: edges parent -> child, the parent of node i uniform among 0..i-1."""
    child = np.arange(1, n, dtype=np.int64)
    parent = (np.random.default_rng(SEED).random(n - 1) * child).astype(np.int64)
    return parent, child


def wordnet() -> tuple[np.ndarray, np.ndarray]:
    """WN18RR ``_hypernym`` edges (synset -> its hypernym) of all three splits; offsets as integers."""
    pairs = []
    for split in ("train", "valid", "test"):
        with open(DATA / "wn18rr" / f"{split}.txt") as f:
            pairs.extend((int(h), int(t)) for h, r, t in (line.split() for line in f) if r == "_hypernym")
    edges = np.array(sorted(set(pairs)), dtype=np.int64)
    return edges[:, 0], edges[:, 1]


def email() -> tuple[np.ndarray, np.ndarray]:
    """SNAP email-Eu-core: one ``src dst`` pair per line."""
    edges = np.array((DATA / "email-eu-core" / "email-Eu-core.txt").read_text().split(), dtype=np.int64)
    edges = np.unique(edges.reshape(-1, 2), axis=0)
    return edges[:, 0], edges[:, 1]


def chain(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The path 0 -> 1 -> ... -> n."""
    return np.arange(n, dtype=np.int64), np.arange(1, n + 1, dtype=np.int64)


def no_edges(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(0, np.int64), np.zeros(0, np.int64)


GRAPHS = {"gnp": gnp, "sparse": sparse, "tree": tree, "wordnet": wordnet, "email": email, "chain": chain, "none": no_edges}


def workloads(sizes: tuple[int, ...], quick: bool) -> list[Workload]:
    """Every workload, in the order the tables print."""
    sparse_edges = (10_000,) if quick else (10_000, 100_000)
    tree_nodes = (4000,) if quick else (4000, 8000, 16000)
    sg_sizes = (1000,) if quick else (1000, 2000, 3000)
    return [
        *(Workload("tc-gnp", f"G({n}, {GNP_P})", "tc", "gnp", (n, GNP_P), spark=n <= SPARK_MAX_GNP) for n in sizes),
        *(Workload("tc-sparse", f"{m:,} edges", "tc", "sparse", (m, m), spark=m <= 10_000) for m in sparse_edges),
        *(Workload("sg-tree", f"tree {n:,}", "sg", "tree", (n,), spark=n <= 4000) for n in tree_nodes),
        *(Workload("sg-gnp", f"G({n}, {GNP_P})", "sg", "gnp", (n, GNP_P), spark=n <= 1000) for n in sg_sizes),
        Workload("tc-real", "WordNet hypernyms", "tc", "wordnet", expected=262_055, spark=True),
        Workload("tc-real", "email-Eu-core", "tc", "email", expected=793_283, spark=True),
        *(Workload("thin", f"chain {n:,}", "reach", "chain", (n,), expected=n + 1) for n in THIN_SIZES[: 2 if quick else 3]),
        *(Workload("thin", f"independent_body3 {n:,}", "ib3", "none", (n,), expected=n + 1) for n in THIN_SIZES[: 2 if quick else 3]),
    ]


# -- the child: evaluate one view with one engine -----------------------------------------------------

Timing = tuple[int | None, float | None, float | None]
"""Derived tuples, wall seconds and CPU seconds of this process (None for an idle child)."""


class Stopwatch:
    """Wall and CPU time (all threads of this process) of a ``with`` block."""

    def __enter__(self) -> "Stopwatch":
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self._wall
        self.cpu_seconds = time.process_time() - self._cpu


def child(engine: str, workload: Workload, idle: bool, profile: bool = False) -> dict:
    """Build the input, ready the engine, and (unless ``idle``) time the evaluation of the view.
    With ``profile`` (python engine) the report also lists each semi-naive round's costs."""
    src, dst = GRAPHS[workload.graph](*workload.params)
    rounds: list[dict] = []
    merged: dict[str, float] = {}
    if engine == PEER:
        count, seconds, cpu_seconds = run_duckdb(engine, workload.view, src, dst, idle)
    else:
        bound = workload.params[0] if workload.params else 0
        count, seconds, cpu_seconds = run_nablog(engine, workload.view, src, dst, idle, rounds if profile else None, merged, bound)
    report = {"edges": len(src), "count": count, "seconds": seconds, "cpu_seconds": cpu_seconds}
    if profile:
        report["rounds"] = rounds
        report.update(merged)
    return report


def run_nablog(engine: str, view: str, src: np.ndarray, dst: np.ndarray, idle: bool, rounds: list | None = None, merged: dict | None = None, bound: int = 0) -> Timing:
    """Time one evaluation; with ``rounds`` (python engine) also record each semi-naive round and,
    in ``merged``, the seconds a reader needing one sorted array would then pay (``final_merge``)."""
    from nablog.engines import get_engine
    from nablog.lang import parse

    options = {}
    if rounds is not None and engine == "python":
        options["profile"] = lambda cost: rounds.append(asdict(cost))
    evaluator = get_engine(engine, **options)
    if engine == "spark":
        evaluator.session  # start the JVM before the clock
    program = parse(PROGRAMS[view].replace("{n}", str(bound)))
    facts: dict = dict(FACTS.get(view, {}))
    if engine == "python" and view != "ib3":
        # The same two int64 arrays DuckDB is handed (see run_duckdb), as columns: no tuple made.
        from nablog.engines.columns import Columns

        facts["e"] = Columns([src, dst])
    elif view != "ib3":
        facts["e"] = set(zip(src.tolist(), dst.tolist()))  # what clingo and Spark read
    if idle:
        return None, None, None
    with Stopwatch() as clock:
        relation = evaluator.evaluate(program, facts)[VIEW_OF[view]]
        count = len(relation)
    if rounds is not None and merged is not None and engine == "python":
        with Stopwatch() as merge:
            relation.keys  # merges the runs a fixpoint left (RunRelation.settled), if any
        merged["final_merge"] = merge.seconds
    return count, clock.seconds, clock.cpu_seconds


def run_duckdb(engine: str, view: str, src: np.ndarray, dst: np.ndarray, idle: bool) -> Timing:
    import duckdb

    connection = duckdb.connect()
    connection.execute(f"SET threads TO {DUCKDB_THREADS}")
    if idle:
        return None, None, None
    with Stopwatch() as clock:
        connection.register("edges", {"x": src, "y": dst})
        connection.execute("CREATE TABLE e AS SELECT * FROM edges")
        (count,) = connection.execute(SQL[view]).fetchone()
    return count, clock.seconds, clock.cpu_seconds


# -- the parent: run the cells, print the tables ------------------------------------------------------


@dataclass
class Cell:
    """One engine on one workload: its idle child and evaluating children, or why it did not run."""

    workload: Workload
    engine: str
    idle: ChildRun | None = None
    runs: list[ChildRun] = field(default_factory=list)
    skipped: str = ""

    @property
    def ok(self) -> bool:
        return any(r.status == "ok" for r in self.runs)

    @property
    def failure(self) -> ChildRun | None:
        """The child that failed, when no evaluating child succeeded."""
        return None if self.ok else (self.runs or [self.idle])[-1]

    @property
    def count(self) -> int | None:
        return self._best.report["count"] if self.ok else None

    @property
    def seconds(self) -> float | None:
        """The fastest successful run."""
        return self._best.report["seconds"] if self.ok else None

    @property
    def peak_mb(self) -> float | None:
        """The largest peak of the successful runs."""
        return max(r.peak_mb for r in self.runs if r.status == "ok") if self.ok else None

    @property
    def net_mb(self) -> float | None:
        """Peak memory above the idle child's: what evaluating the view took."""
        if not self.ok or self.idle is None or self.idle.status != "ok":
            return None
        return max(self.peak_mb - self.idle.peak_mb, 0.0)

    @property
    def _best(self) -> ChildRun:
        return min((r for r in self.runs if r.status == "ok"), key=lambda r: r.report["seconds"])

    def to_json(self) -> dict:
        return {
            "workload": asdict(self.workload),
            "engine": self.engine,
            "skipped": self.skipped,
            "idle": asdict(self.idle) if self.idle else None,
            "runs": [asdict(r) for r in self.runs],
            "seconds": self.seconds,
            "peak_mb": self.peak_mb,
            "net_mb": self.net_mb,
            "count": self.count,
        }


def measure(engine: str, workload: Workload, args: argparse.Namespace) -> Cell:
    """Run the idle child of one cell, then the evaluating child: again, up to ``--repeat`` times,
    while it takes less than :data:`REPEAT_BELOW` seconds."""
    argv = [sys.executable, __file__, "--child", engine, json.dumps(asdict(workload)), *(["--profile"] if args.profile else [])]
    whole_group = engine == "spark"  # the JVM is a separate process
    print(f"  {workload.label}: {engine} ...", end="", file=sys.stderr, flush=True)
    cell = Cell(workload, engine, run_child([*argv, "--idle"], args.timeout, whole_group))
    if cell.idle.status == "ok":
        while len(cell.runs) < args.repeat:
            run = run_child(argv, args.timeout, whole_group)
            cell.runs.append(run)
            if run.status != "ok" or run.report["seconds"] >= REPEAT_BELOW:
                break
    shown = f"{cell.seconds:.2f} s" if cell.ok else f"{cell.failure.status}: {cell.failure.error}"
    print(f" {shown}", file=sys.stderr, flush=True)
    return cell


def run_table(table: str, cases: list[Workload], engines: list[str], unavailable: dict[str, str], args) -> list[Cell]:
    """Measure every engine on every workload of one table, then print the table."""
    print(f"{TABLES[table]}", file=sys.stderr, flush=True)
    cells = []
    for workload in cases:
        for engine in engines:
            if engine in unavailable:
                cells.append(Cell(workload, engine, skipped=unavailable[engine]))
            elif table == "thin" and engine in ("duckdb", "spark"):
                cells.append(Cell(workload, engine, skipped="not run: a million recursive steps; the peer here is clingo"))
            elif engine == "spark" and not (workload.spark or args.spark_everywhere):
                cells.append(Cell(workload, engine, skipped="not run by default: too slow; --spark-everywhere"))
            else:
                cells.append(measure(engine, workload, args))
    headers = [f"x {PEERS[table]}" if h == "x DuckDB" else "mem x clingo" if h == "mem x DuckDB" and table in PEERS else h for h in HEADERS]
    print_table(TABLES[table], headers, [row(cell, cells) for cell in cells])
    for workload in cases:
        check_counts(workload, [c for c in cells if c.workload == workload])
    return cells


HEADERS = ["graph", "edges", "engine", "seconds", "x DuckDB", "peak MB", "idle MB", "net MB", "MB/M tuples", "mem x DuckDB", "derived tuples"]


def row(cell: Cell, cells: list[Cell]) -> list[str]:
    """One line of a table; ratios are against DuckDB on the same workload. A cell that did not
    run ends the line with a note instead of figures."""
    name = PEERS.get(cell.workload.table, PEER)
    peer = next((c for c in cells if c.workload == cell.workload and c.engine == name), None)
    edges = next((c.idle.report["edges"] for c in cells if c.workload == cell.workload and c.idle and c.idle.status == "ok"), None)
    head = [cell.workload.label, _int(edges), cell.engine]
    if cell.skipped:
        return [*head, f"n/a ({cell.skipped})"]
    if not cell.ok:
        failed = cell.failure
        where = "idle child " if failed is cell.idle else ""
        return [*head, f"{where}{failed.status} ({failed.error[:100]})"]
    net = cell.net_mb
    return [
        *head,
        f"{cell.seconds:.2f}",
        _ratio(cell.seconds, peer.seconds if peer else None),
        f"{cell.peak_mb:,.0f}",
        f"{cell.idle.peak_mb:,.0f}",
        f"{net:,.0f}",
        f"{net / (cell.count / 1e6):,.1f}" if cell.count else "",
        _ratio(net, peer.net_mb if peer else None),
        _int(cell.count),
    ]


def _ratio(value: float | None, peer: float | None) -> str:
    if value is None or not peer:
        return ""
    return f"{value / peer:.2f}x"


def _int(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def check_counts(workload: Workload, cells: list[Cell]) -> None:
    """Complain loudly when engines disagree on the number of derived tuples, or miss the expected one."""
    counts = {c.engine: c.count for c in cells if c.ok}
    wrong = {e: n for e, n in counts.items() if workload.expected is not None and n != workload.expected}
    if len(set(counts.values())) > 1 or wrong:
        shown = ", ".join(f"{e} {n:,}" for e, n in counts.items())
        expected = f" (expected {workload.expected:,})" if workload.expected is not None else ""
        print(f"!!! MISMATCH on {workload.label}: {shown}{expected}")
    elif workload.expected is not None and counts:
        print(f"{workload.label}: {workload.expected:,} derived tuples, as expected, on {', '.join(counts)}")


def summary(cells: list[Cell]) -> str:
    """The key target, one line per shape of recursion (:data:`SHAPES`): the python engine's time
    and memory over DuckDB's on the same graph in this run."""
    lines = [f"Key target, python engine / DuckDB per shape (goal: time <= {TARGET:g}x, memory <= 1x):"]
    for shape, (table, label) in SHAPES.items():
        mine = next((c for c in cells if (c.workload.table, c.workload.label, c.engine) == (table, label, "python")), None)
        peer = next((c for c in cells if (c.workload.table, c.workload.label, c.engine) == (table, label, PEER)), None)
        if not (mine and peer and mine.ok and peer.ok):
            lines.append(f"  {shape}: n/a (not run)")
            continue
        ratio = mine.seconds / peer.seconds
        memory = f"memory {mine.net_mb / peer.net_mb:.2f}x" if peer.net_mb and peer.net_mb > 0 else "memory n/a"
        lines.append(
            f"  {shape}: python {mine.seconds:.2f} s / DuckDB {peer.seconds:.2f} s = {ratio:.2f}x "
            f"({'met' if ratio <= TARGET else 'MISSED'}); {memory}"
        )
    lines.append("Thin deep recursion, python engine / clingo (goal: <= 1x):")
    for cell in cells:
        if cell.workload.table != "thin" or cell.engine != "python":
            continue
        peer = next((c for c in cells if c.workload == cell.workload and c.engine == "clingo"), None)
        if not (cell.ok and peer and peer.ok):
            lines.append(f"  {cell.workload.label}: n/a (not run)")
            continue
        ratio = cell.seconds / peer.seconds
        lines.append(f"  {cell.workload.label}: python {cell.seconds:.2f} s / clingo {peer.seconds:.2f} s = {ratio:.2f}x ({'met' if ratio <= 1 else 'MISSED'})")
    return "\n".join(lines)


def profile_lines(cells: list[Cell]) -> list[str]:
    """Per python cell, the fastest run's semi-naive rounds: join, dedup and merge seconds each."""
    lines = []
    for cell in cells:
        if cell.engine != "python" or not cell.ok:
            continue
        rounds = cell._best.report.get("rounds") or []
        total = {k: sum(r[k] for r in rounds) for k in ("join", "dedup", "merge")}
        lines.append(
            f"{cell.workload.table} {cell.workload.label}: {len(rounds)} rounds, join {total['join']:.3f} s, "
            f"dedup {total['dedup']:.3f} s, merge {total['merge']:.3f} s, other {cell.seconds - sum(total.values()):.3f} s; "
            f"merging the runs left for readers would add {cell._best.report.get('final_merge', 0.0):.3f} s"
        )
        for r in rounds:
            lines.append(
                f"  round {r['round']:>4}: {r['delta']:>10,} new  join {r['join']:.4f}  dedup {r['dedup']:.4f}  "
                f"merge {r['merge']:.4f}  runs {r['runs']}"
            )
    return lines


def spark_unavailable() -> str | None:
    """Why the spark engine cannot run here, or None when it can."""
    try:
        from nablog.engines import get_engine

        get_engine("spark")
    except Exception as error:  # any failure to import or construct it means: no spark column
        return f"{type(error).__name__}: {error}"
    return None


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default=",".join(ENGINES), help="comma-separated subset of %(default)s")
    parser.add_argument("--sizes", help="comma-separated n for the G(n, 0.001) closures (default 1000,...,5000)")
    parser.add_argument("--tables", default=",".join(TABLES), help="comma-separated subset of %(default)s")
    parser.add_argument("--quick", action="store_true", help="small sizes only: a smoke run of a few minutes")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per child process (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help=f"runs of a cell that takes under {REPEAT_BELOW:g} s; the fastest counts (default %(default)s)")
    parser.add_argument("--spark-everywhere", action="store_true", help="also run spark on the cases it is too slow for")
    parser.add_argument("--profile", action="store_true", help="print the python engine's join/dedup/merge seconds per semi-naive round")
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "WORKLOAD"), help=argparse.SUPPRESS)
    parser.add_argument("--idle", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.engines = _choices(args.engines, ENGINES, parser)
    args.tables = _choices(args.tables, tuple(TABLES), parser)
    default_sizes = GNP_SIZES[:2] if args.quick else GNP_SIZES
    args.sizes = tuple(int(n) for n in args.sizes.split(",")) if args.sizes else default_sizes
    return args


def _choices(text: str, allowed: tuple[str, ...], parser: argparse.ArgumentParser) -> list[str]:
    chosen = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in chosen if t not in allowed]
    if unknown:
        parser.error(f"unknown {', '.join(unknown)}; choose from {', '.join(allowed)}")
    return chosen


def _load(env: dict) -> str:
    return "/".join(f"{x:.1f}" for x in env["load_average"])


def main(argv: list[str] | None = None) -> None:
    args = parse_arguments(argv)
    if args.child:
        child_main(*args.child, idle=args.idle, profile=args.profile)
    else:
        benchmark(args)


def child_main(engine: str, spec: str, idle: bool, profile: bool = False) -> None:
    """The child process: print the report of one engine on one workload as a JSON line."""
    fields = json.loads(spec)
    workload = Workload(**{**fields, "params": tuple(fields["params"])})
    print(json.dumps(child(engine, workload, idle, profile)))


def benchmark(args: argparse.Namespace) -> None:
    """Measure the chosen cells, print a table per workload family and the summary, save JSON."""
    unavailable = {"spark": reason} if "spark" in args.engines and (reason := spark_unavailable()) else {}
    start = environment()
    print(f"Engines: {', '.join(args.engines)}; DuckDB {DUCKDB_THREADS} threads; timeout {args.timeout:g} s per child; "
          f"{start['cpus']} CPUs, load average {_load(start)} at start.")
    cases = [w for w in workloads(args.sizes, args.quick) if w.table in args.tables]
    if "spark" in args.engines and not args.spark_everywhere:
        print("spark is slow on deep recursion; by default it runs only where it finishes within the timeout: "
              + ", ".join(f"{w.view} {w.label}" for w in cases if w.spark) + " (--spark-everywhere for the rest).")
    cells: list[Cell] = []
    for table in args.tables:
        cells += run_table(table, [w for w in cases if w.table == table], args.engines, unavailable, args)
    end = environment()
    print(f"\nLoad average {_load(end)} at the end (other processes on the machine skew the seconds).")
    if args.profile:
        print("\nPer-round costs of the python engine (fastest run of each cell):")
        print("\n".join(profile_lines(cells)))
    print(summary(cells))
    path = save_results("materialize", {
        "environment": {"start": start, "end": end},
        "arguments": {k: v for k, v in vars(args).items() if k not in ("child", "idle")},
        "cells": [c.to_json() for c in cells],
    })
    print(f"Results: {path}")


if __name__ == "__main__":
    main()
