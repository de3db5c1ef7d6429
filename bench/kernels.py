"""Kernel benchmark: the four inner loops of the python engine's fixpoint on numpy, polars, pyarrow compute and DuckDB.

A semi-naive round of the python engine does four things to packed int64 keys (one per tuple):

- **sort** the round's derived keys (they come out of a join in probe order);
- **dedup**: drop equal neighbours of the sorted keys;
- **member**: which derived keys the relation holds already, the relation being sorted runs
  (`nablog/engines/runs.py`) and the derived keys sorted;
- **merge** two sorted runs of disjoint keys into one.

Each kernel is timed on each library in this process (fastest of ``--repeat``), on the sizes of a
middle round of the benchmark's closures, and printed as a ratio to numpy. A library that is not
installed is left out. Conversions to and from the library's own arrays are included: the engine
holds numpy arrays, so a kernel that needs a copy pays for it.

Run ``python bench/kernels.py --help`` for the options.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from common import print_table, save_results


def _numpy_kernels() -> dict[str, Callable]:
    from nablog.engines.encoding import member, merge_sorted, sorted_unique

    return {
        "sort": np.sort,
        "dedup": sorted_unique,
        "member": member,
        "merge": merge_sorted,
    }


def _numpy_insert_kernels() -> dict[str, Callable]:
    """The merge nablog used before: insert the second run at its ``searchsorted`` positions."""
    return {"merge": lambda a, b: np.insert(a, np.searchsorted(a, b), b)}


def _arrow_kernels() -> dict[str, Callable]:
    import pyarrow as pa
    import pyarrow.compute as pc

    return {
        "sort": lambda k: pc.sort_indices(pa.array(k)).to_numpy(),
        "dedup": lambda k: pc.unique(pa.array(k)).to_numpy(),
        "member": lambda run, probe: pc.is_in(pa.array(probe), value_set=pa.array(run)).to_numpy(zero_copy_only=False),
        "merge": lambda a, b: pc.sort_indices(pa.chunked_array([a, b])).to_numpy(),
    }


def _polars_kernels() -> dict[str, Callable]:
    import polars as pl

    return {
        "sort": lambda k: pl.Series(k).sort().to_numpy(),
        "dedup": lambda k: pl.Series(k).unique(maintain_order=True).to_numpy(),
        "member": lambda run, probe: pl.Series(probe).is_in(pl.Series(run).implode()).to_numpy(),
        "merge": lambda a, b: pl.DataFrame({"k": a}).merge_sorted(pl.DataFrame({"k": b}), key="k")["k"].to_numpy(),
    }


def _duckdb_kernels() -> dict[str, Callable]:
    import duckdb

    connection = duckdb.connect()
    connection.execute("SET threads TO 2")

    def query(sql: str, **arrays: np.ndarray) -> np.ndarray:
        for name, values in arrays.items():
            connection.register(name, {"k": values})
        out = connection.execute(sql).fetchnumpy()
        return next(iter(out.values()))

    return {
        "sort": lambda k: query("SELECT k FROM keys ORDER BY k", keys=k),
        "dedup": lambda k: query("SELECT DISTINCT k FROM keys ORDER BY k", keys=k),
        "member": lambda run, probe: query("SELECT p.k IN (SELECT k FROM run) FROM probe p", run=run, probe=probe),
        "merge": lambda a, b: query("SELECT k FROM (SELECT k FROM a UNION ALL SELECT k FROM b) ORDER BY k", a=a, b=b),
    }


LIBRARIES = {"numpy": _numpy_kernels, "numpy insert": _numpy_insert_kernels, "polars": _polars_kernels, "pyarrow": _arrow_kernels, "duckdb": _duckdb_kernels}


def inputs(relation: int, derived: int, seed: int = 0) -> dict[str, tuple]:
    """Arguments of each kernel: a relation of ``relation`` keys in a sorted run, and ``derived``
    keys from a join (unsorted, a tenth repeated, half of them in the relation)."""
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 1 << 40, int(relation * 1.3)))
    rng.shuffle(keys)
    run = np.sort(keys[:relation])
    fresh = keys[relation : relation + derived // 2]
    found = rng.choice(run, derived - len(fresh))
    joined = np.concatenate([fresh, found])
    joined[: derived // 10] = joined[derived // 10 : 2 * (derived // 10)]
    rng.shuffle(joined)
    probe = np.unique(joined)
    half = np.sort(keys[relation : 2 * relation])[: relation // 2]
    return {
        "sort": (joined,),
        "dedup": (np.sort(joined),),
        "member": (run, probe),
        "merge": (run[::2].copy(), half),
    }


def best_seconds(function: Callable, arguments: tuple, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        function(*arguments)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relation", type=int, default=2_500_000, help="keys in the relation's run (default %(default)s)")
    parser.add_argument("--derived", type=int, default=200_000, help="keys a round derives (default %(default)s)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    args_of = inputs(args.relation, args.derived)
    seconds: dict[str, dict[str, float]] = {}
    for library, kernels in LIBRARIES.items():
        try:
            available = kernels()
        except ImportError as error:
            print(f"{library}: not installed ({error})")
            continue
        seconds[library] = {name: best_seconds(f, args_of[name], args.repeat) for name, f in available.items()}
    base = seconds["numpy"]
    rows = []
    for kernel in args_of:
        for library, times in seconds.items():
            if kernel in times:
                rows.append([kernel, library, f"{times[kernel] * 1000:.2f}", f"{times[kernel] / base[kernel]:.2f}x"])
    title = f"Fixpoint kernels: relation run {args.relation:,} keys, {args.derived:,} derived keys per round"
    print_table(title, ["kernel", "library", "ms", "x numpy"], rows)
    path = save_results("kernels", {"arguments": vars(args), "seconds": seconds})
    print(f"Results: {path}")


if __name__ == "__main__":
    main()
