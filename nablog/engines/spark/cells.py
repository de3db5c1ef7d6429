"""Cell repair's aggregations on Spark: the groups violating functional dependencies and the co-occurrence counts behind candidate domains.

A relation goes to Spark once as integer codes (:class:`CodedRelation`: one ``long`` column per
attribute, each value numbered by its first appearance, as :class:`nablog.repair.candidates.Statistics`
numbers them, a ``double`` weight per row, and the row's position), so every aggregation is over
narrow integer columns and its answer comes back as a few Arrow arrays:

- :meth:`CodedRelation.violating_groups`: per functional dependency X → A, the rows of each
  X-group holding more than one A value (``groupBy(X).agg(countDistinct(A))``, joined back to its
  rows; every dependency of the relation in one action): violation detection, in the order
  :func:`nablog.repair.cells._fd_groups` gives;
- :meth:`CodedRelation.pair`: the weighted count of every pair of values of two columns
  (one job per column A: its pairs with every other column B exploded,
  ``groupBy(B, b, a).agg(sum(w))``), from which the candidate values of a cell — the values most
  often seen with its row's other values — and their naive-Bayes scores are read
  (:mod:`nablog.repair.candidates`); the per-cell scoring of the few implicated cells stays on the
  driver, over these counts.

Both give exactly what the Python engine computes (tests/repair/test_cells.py compares them on a
slice of tax).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .session import spark_session


class CodedRelation:
    """A relation's rows on Spark as integer codes, with row weights (1 when not given)."""

    def __init__(self, rows: Sequence[tuple], width: int, weights: np.ndarray | None = None, session=None):
        import pyarrow as pa

        self.n = len(rows)
        self.width = width
        columns = {"row": pa.array(np.arange(self.n, dtype=np.int64))}
        self.sizes: list[int] = []
        for i in range(width):
            index: dict = {}
            codes = np.fromiter((index.setdefault(row[i], len(index)) for row in rows), dtype=np.int64, count=self.n)
            self.sizes.append(max(len(index), 1))
            columns[f"c{i}"] = pa.array(codes)
        columns["w"] = pa.array(np.ones(self.n) if weights is None else np.asarray(weights, dtype=float))
        spark = session or spark_session()
        self.frame = spark.createDataFrame(pa.table(columns))
        self._pairs: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def violating_groups(self, dependencies: Sequence[tuple[Sequence[int], int]]) -> list[list[list[int]]]:
        """For each dependency ``(lhs, rhs)``, the row numbers of each group of ``lhs`` holding
        more than one ``rhs`` value, groups in the order of their key codes (column by column),
        rows ascending. All dependencies in one Spark action (a job costs seconds on a small
        machine whatever its size): each one's violating rows, tagged with its number and key."""
        from pyspark.sql import functions as F

        parts = []
        for k, (lhs, rhs) in enumerate(dependencies):
            keys = [f"c{i}" for i in lhs]
            bad = self.frame.groupBy(*keys).agg(F.countDistinct(f"c{rhs}").alias("n")).where("n > 1").select(*keys)
            rows = self.frame.join(F.broadcast(bad), on=keys)
            parts.append(rows.select(F.lit(k).alias("fd"), F.array(*keys).alias("key"), "row"))
        if not parts:
            return []
        union = parts[0]
        for part in parts[1:]:
            union = union.unionByName(part)
        table = union.toArrow()
        which = table.column("fd").to_numpy()
        flat = table.column("key").combine_chunks().flatten().to_numpy()
        row_all = table.column("row").to_numpy()
        offsets = np.concatenate([[0], np.cumsum(np.array([len(dependencies[k][0]) for k in which], dtype=np.int64))])
        out = []
        for k, (lhs, _) in enumerate(dependencies):
            mine = np.flatnonzero(which == k)
            if not len(mine):
                out.append([])
                continue
            width = len(lhs)
            key = np.stack([flat[offsets[mine] + j] for j in range(width)])
            row = row_all[mine]
            order = np.lexsort([row] + [key[j] for j in reversed(range(width))])
            key, row = key[:, order], row[order]
            change = np.zeros(len(row), dtype=bool)
            change[1:] = (key[:, 1:] != key[:, :-1]).any(axis=0)
            out.append([part.tolist() for part in np.split(row, np.flatnonzero(change))])
        return out

    def pair(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The weighted count of each pair of values of columns A and B, as
        :meth:`nablog.repair.candidates.Statistics.pair` gives it: the sorted keys
        ``b_code * |A| + a_code``, their counts, and the offset of each b code's first key.
        The first question about A counts A's pairs with every other column in one job (a cell's
        candidates are scored against all of its row's other values)."""
        if (a, b) not in self._pairs:
            self._count_pairs(a)
        return self._pairs[(a, b)]

    def _count_pairs(self, a: int) -> None:
        from pyspark.sql import functions as F

        others = [b for b in range(self.width) if b != a]
        pairs = F.explode(F.array(*(F.struct(F.lit(b).alias("b"), F.col(f"c{b}").alias("v")) for b in others))).alias("p")
        table = (
            self.frame.select(F.col(f"c{a}").alias("a"), "w", pairs)
            .groupBy("p.b", "p.v", "a")
            .agg(F.sum("w").alias("n"))
            .toArrow()
        )
        which = table.column("b").to_numpy()
        values = table.column("v").to_numpy()
        codes = table.column("a").to_numpy()
        counts = table.column("n").to_numpy().astype(float)
        na = self.sizes[a]
        for b in others:
            mine = which == b
            keys = values[mine] * na + codes[mine]
            order = np.argsort(keys, kind="stable")
            unique = keys[order]
            self._pairs[(a, b)] = (unique, counts[mine][order], np.searchsorted(unique, np.arange(self.sizes[b] + 1) * na))


__all__ = ["CodedRelation"]
