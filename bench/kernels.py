"""Kernel benchmark: the four inner loops of the python engine's fixpoint on numpy, polars, pyarrow compute and DuckDB.

A semi-naive round of the python engine does four things to packed int64 keys (one per tuple):

- **sort** the round's derived keys (they come out of a join in probe order);
- **dedup**: drop equal neighbours of the sorted keys;
- **member**: which derived keys the relation holds already, the relation being sorted runs
  (`nablog/engines/runs.py`) and the derived keys sorted; ``member, new`` the same when nine in
  ten derived keys are new (a deep recursion, where each tuple is derived about once);
- **merge** two sorted runs of disjoint keys into one;
- **ranges**: for each binding of a join, the range of the relation's sorted keys whose first
  column equals the binding's value.

The python engine itself does the last two without searching where it can: ``numpy, no search``
is a Bloom filter of the run (``nablog/engines/keysets.py``, built beforehand as the fixpoint
maintains it) that rules keys out before the survivors are searched, and ``id_starts`` offsets
(``nablog/engines/encoding.py``) that give each range by two gathers.

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
        "member, new": member,
        "merge": merge_sorted,
        "ranges": lambda first, size, probe: (np.searchsorted(first, probe, "left"), np.searchsorted(first, probe, "right")),
    }


def _numpy_no_search_kernels() -> dict[str, Callable]:
    from nablog.engines.encoding import id_starts, member
    from nablog.engines.keysets import Filter

    filters: dict[int, Filter] = {}
    starts: dict[int, np.ndarray] = {}

    def filtered_member(run: np.ndarray, probe: np.ndarray) -> np.ndarray:
        if id(run) not in filters:  # maintained by the fixpoint as the run grows: not timed
            filters[id(run)] = Filter(2 * len(run))
            filters[id(run)].add(run)
        maybe = filters[id(run)].contains(probe)
        which = np.flatnonzero(maybe)
        maybe[which] = member(run, probe[which])
        return maybe

    def ranges(first: np.ndarray, size: int, probe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if id(first) not in starts:  # cached with the relation: not timed
            starts[id(first)] = id_starts(first, size)
        offsets = starts[id(first)]
        return offsets[probe], offsets[probe + 1]

    return {"member": filtered_member, "member, new": filtered_member, "ranges": ranges}


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


LIBRARIES = {"numpy": _numpy_kernels, "numpy, no search": _numpy_no_search_kernels, "numpy insert": _numpy_insert_kernels, "polars": _polars_kernels, "pyarrow": _arrow_kernels, "duckdb": _duckdb_kernels}


def inputs(relation: int, derived: int, seed: int = 0) -> dict[str, tuple]:
    """Arguments of each kernel: a relation of ``relation`` keys in a sorted run, and ``derived``
    keys from a join (unsorted, a tenth repeated, half of them in the relation; a deep recursion
    derives mostly new keys, which a filter rules out at once)."""
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
    size = max(relation // 8, 1)  # constants of a graph with 8 edges a node: the first column of e(X, Y)
    first = np.sort(rng.integers(0, size, relation))
    return {
        "sort": (joined,),
        "dedup": (np.sort(joined),),
        "member": (run, probe),
        "member, new": (run, np.sort(np.concatenate([fresh, found[: len(found) // 10]]))),
        "merge": (run[::2].copy(), half),
        "ranges": (first, size, rng.integers(0, size, derived)),
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
                rows.append([kernel, library, f"{times[kernel] * 1000:.2f}", f"{times[kernel] / base[kernel]:.3g}x"])
    title = f"Fixpoint kernels: relation run {args.relation:,} keys, {args.derived:,} derived keys per round"
    print_table(title, ["kernel", "library", "ms", "x numpy"], rows)
    path = save_results("kernels", {"arguments": vars(args), "seconds": seconds})
    print(f"Results: {path}")


if __name__ == "__main__":
    main()
