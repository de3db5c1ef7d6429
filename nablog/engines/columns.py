"""Relations handed to an engine as columns (numpy or pyarrow arrays), read as sets of tuples.

Data that is columnar already (a numpy program's arrays, pyarrow's CSV and Parquet readers) would
otherwise become one Python tuple per row, only for the python engine to take the tuples apart
again: on the 37,221 WordNet edges that is about 10 ms, a quarter of the whole closure
(bench/materialize.py). :class:`Columns` keeps the arrays: the python engine numbers integer
columns in bulk (:meth:`~nablog.engines.encoding.ConstantDictionary.encoding`, one sort of them
all), and every other reader (the clingo and Spark engines, ``in``, iteration) sees a read-only
set of tuples, built once on first use.

>>> rel = Columns([np.array([1, 2, 1]), np.array([5, 6, 5])])
>>> rel.arity, len(rel), sorted(rel), (2, 6) in rel
(2, 2, [(1, 5), (2, 6)], True)
>>> Columns([np.array(["a", "b"]), np.array([1, 2])]).int_columns() is None
True
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence, Set

import numpy as np

INT = np.int64


class Columns(Set):
    """A relation given as equally long columns, one per argument (duplicate rows count once).

    A column is anything ``numpy.asarray`` reads: a numpy array, a pyarrow ``Array`` or
    ``ChunkedArray`` without nulls, a list. Values become constants as ``tolist`` gives them:
    Python ints and strs are nablog's constants; anything else (floats, bools, nulls) is refused
    by the engine that reads it, as in rows of tuples.
    """

    __slots__ = ("columns", "arity", "_rows")

    def __init__(self, columns: Sequence):
        arrays = [np.asarray(c) for c in columns]
        if not arrays:
            raise ValueError("a relation given as columns needs at least one column")
        lengths = {len(a) for a in arrays}
        if len(lengths) > 1 or any(a.ndim != 1 for a in arrays):
            raise ValueError(f"columns of a relation must be one-dimensional and equally long (lengths {sorted(lengths)})")
        self.columns = arrays
        self.arity = len(arrays)
        self._rows: frozenset[tuple] | None = None

    def int_columns(self) -> list[np.ndarray] | None:
        """The columns as int64 arrays when every one holds integers within 64 bits; else None."""
        out = []
        for a in self.columns:
            if a.dtype.kind == "u" and a.dtype.itemsize == 8 and len(a) and a.max() > np.iinfo(INT).max:
                return None
            if a.dtype.kind not in "iu":
                return None
            out.append(a.astype(INT, copy=False))
        return out

    @property
    def rows(self) -> frozenset[tuple]:
        """The distinct rows as Python tuples (built on first use)."""
        if self._rows is None:
            self._rows = frozenset(zip(*(a.tolist() for a in self.columns)))
        return self._rows

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)

    def __contains__(self, row: object) -> bool:
        return row in self.rows

    def __repr__(self) -> str:
        return f"Columns(arity={self.arity}, rows={len(self.columns[0])})"

    __hash__ = None  # type: ignore[assignment]
