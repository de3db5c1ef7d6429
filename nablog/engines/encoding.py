"""Relations of encoded constants: rows of ids packed into sortable int64 keys, and relations that read as sets of tuples.

Constants are ids of a :class:`~nablog.engines.dictionary.ConstantDictionary` (re-exported here),
whose order is the order of constants. A row of ids packs into one int64 key that sorts like the
row (:func:`pack`, :func:`unpack`), and the kernels on sorted keys (:func:`sorted_unique`,
:func:`member`, :func:`merge_sorted`, :func:`id_starts`) are the inner loops of the engines.
``EncodedRelation`` keeps a relation as sorted unique rows of ids and behaves as a read-only set
of tuples of constants; it decodes lazily, so a 25-million-tuple model costs numpy arrays, not
Python tuples. Iteration yields tuples in the order of constants.

>>> d = ConstantDictionary.build(["b", 3, "a", 3])
>>> d.values
[3, 'a', 'b']
>>> rel = EncodedRelation.from_rows(d, [(3, "a"), ("b", "a"), (3, "a")], arity=2)
>>> list(rel), len(rel), (3, "a") in rel, ("zzz", 1) in rel
([(3, 'a'), ('b', 'a')], 2, True, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Set
from typing import Mapping

import numpy as np

from .dictionary import INT, SMALL_LOOKUP, THROUGH_DEPTH, ConstantDictionary, int_rows

CACHED_COLUMN_VALUES = 4_000_000
"""A packed relation keeps its unpacked columns when they hold at most this many values (32 MB)."""
_KEY_BITS = 62


def key_base(size: int) -> int:
    return max(size, 1)


def fits_in_key(size: int, arity: int) -> bool:
    """Whether ``arity`` columns of ids below ``size`` pack into one int64 key."""
    return arity == 0 or key_base(size) ** arity < (1 << _KEY_BITS)


def pack(columns: list[np.ndarray], size: int) -> np.ndarray:
    """Pack id columns into int64 keys that sort like the rows; requires :func:`fits_in_key`."""
    if not columns:
        return np.zeros(0, INT)
    base = key_base(size)
    key = columns[0].astype(INT, copy=True)
    for col in columns[1:]:
        key *= base
        key += col
    return key


def unpack(keys: np.ndarray, size: int, arity: int) -> list[np.ndarray]:
    base = key_base(size)
    cols: list[np.ndarray] = []
    rest = keys
    for _ in range(arity - 1):
        # A floor division by a scalar is vectorized (libdivide), divmod is not: 10x slower.
        high = rest // base
        col = high * base
        np.subtract(rest, col, out=col)
        cols.append(col)
        rest = high
    cols.append(rest)
    return cols[::-1]


def column(keys: np.ndarray, size: int, arity: int, position: int) -> np.ndarray:
    """One column of packed keys (what :func:`unpack` gives at ``position``, without the others)."""
    base = key_base(size)
    col = keys // base ** (arity - 1 - position) if position < arity - 1 else keys
    if position == 0:
        return col
    high = col // base
    high *= base
    return np.subtract(col, high, out=high)


def id_starts(ids: np.ndarray, size: int) -> np.ndarray:
    """For sorted ids below ``size``, where each id's run starts: ``ids[starts[v]:starts[v + 1]]``
    are the ids equal to v. Joining on one column then costs two gathers per probe instead of two
    binary searches (which mispredict and miss the cache on unsorted probes: 30-100 times slower).

    >>> id_starts(np.array([0, 0, 2]), 4).tolist()
    [0, 2, 2, 3, 3]
    """
    starts = np.zeros(size + 1, INT)
    np.cumsum(np.bincount(ids, minlength=size), out=starts[1:])
    return starts


def sorted_unique(keys: np.ndarray, owned: bool = False) -> np.ndarray:
    """Sorted distinct values; sort plus neighbour comparison (numpy.unique is slow here).
    With ``owned`` the caller hands ``keys`` over: they are sorted in place, not copied first."""
    if len(keys) < 2:
        return np.sort(keys)
    if owned:
        keys.sort()
    else:
        keys = np.sort(keys)
    keep = np.empty(len(keys), dtype=bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def member(sorted_keys: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """Boolean mask: which probe values occur in ``sorted_keys`` (sort and searchsorted, no isin)."""
    if len(sorted_keys) == 0:
        return np.zeros(len(probe), dtype=bool)
    pos = np.searchsorted(sorted_keys, probe)
    np.minimum(pos, len(sorted_keys) - 1, out=pos)
    return sorted_keys[pos] == probe


def merge_sorted(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The sorted union of two sorted arrays with no value in common.

    A stable sort of the two concatenated is numpy's timsort, which finds the two runs and merges
    them in linear time: 3.4 times faster than inserting ``b`` at its ``searchsorted`` positions
    for halves of 2.5 million keys, 1.3 times for 200 thousand into 4.8 million (bench/kernels.py).
    """
    if len(a) == 0:
        return b
    if len(b) == 0:
        return a
    merged = np.concatenate([a, b])
    merged.sort(kind="stable")  # in place: one copy of the keys fewer
    return merged


def row_view(rows: np.ndarray) -> np.ndarray:
    """View (n, k) id rows as n opaque scalars, for set operations on rows too wide to pack."""
    rows = np.ascontiguousarray(rows, dtype=INT)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


SCANNED_ROWS = 256
"""Unpacked relations up to this many rows answer membership by a scan; larger ones by a sorted copy."""


class EncodedRelation(Set):
    """A read-only set of tuples of constants stored as sorted unique id rows.

    ``keys`` holds packed int64 keys when the arity and dictionary allow it; otherwise rows are
    compared as opaque byte strings. Either way ``columns()`` gives one id array per argument.
    """

    __slots__ = ("dictionary", "arity", "_keys", "_rows", "indexes")

    def __init__(self, dictionary: ConstantDictionary, arity: int, keys: np.ndarray | None, rows: np.ndarray | None):
        self.dictionary = dictionary
        self.arity = arity
        self._keys = keys
        self._rows = rows
        # Sorted indexes on bound columns, built on demand by the engine; a relation never
        # changes, so they stay valid for as long as it lives.
        self.indexes: dict = {}

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_columns(cls, dictionary: ConstantDictionary, columns: list[np.ndarray], arity: int, n: int | None = None) -> "EncodedRelation":
        if arity == 0:
            count = n if n is not None else 0
            return cls(dictionary, 0, np.zeros(min(count, 1), INT), None)
        if fits_in_key(len(dictionary), arity):
            return cls(dictionary, arity, sorted_unique(pack(columns, len(dictionary)), owned=True), None)
        rows = np.stack(columns, axis=1).astype(INT, copy=False)
        return cls(dictionary, arity, None, unique_rows(rows))

    @classmethod
    def from_rows(cls, dictionary: ConstantDictionary, rows: Iterable[tuple], arity: int) -> "EncodedRelation":
        rows = list(rows)
        if arity == 0:
            return cls(dictionary, 0, np.zeros(min(len(rows), 1), INT), None)
        array = dictionary.encode_rows(rows, arity)
        return cls.from_columns(dictionary, [array[:, i] for i in range(arity)], arity)

    @classmethod
    def empty(cls, dictionary: ConstantDictionary, arity: int) -> "EncodedRelation":
        return cls.from_columns(dictionary, [np.zeros(0, INT)] * arity, arity, 0)

    def remapped(self, dictionary: ConstantDictionary, remap: np.ndarray) -> "EncodedRelation":
        """This relation over ``dictionary``, given the increasing map of ids from
        :meth:`ConstantDictionary.extended`; rows keep their order, so nothing is sorted."""
        if self.arity == 0:
            return EncodedRelation(dictionary, 0, self.keys, None)
        columns = [remap[c] for c in self.columns()]
        if fits_in_key(len(dictionary), self.arity):
            return EncodedRelation(dictionary, self.arity, pack(columns, len(dictionary)), None)
        return EncodedRelation(dictionary, self.arity, None, np.stack(columns, axis=1))

    # -- access ---------------------------------------------------------------------------------

    @property
    def packed(self) -> bool:
        return self._keys is not None

    @property
    def keys(self) -> np.ndarray:
        assert self._keys is not None
        return self._keys

    def columns(self) -> list[np.ndarray]:
        if self.arity == 0:
            return []
        if self._keys is not None:
            cached = self.indexes.get("columns")
            if cached is not None:
                return list(cached)
            columns = unpack(self._keys, len(self.dictionary), self.arity)
            if len(self._keys) * self.arity <= CACHED_COLUMN_VALUES:
                # A relation never changes: its unpacked columns are kept like its indexes (every
                # rule reading it unpacks them otherwise, a third of a 67,000-row group-by).
                for column in columns:
                    column.flags.writeable = False
                self.indexes["columns"] = tuple(columns)
            return columns
        assert self._rows is not None
        return [self._rows[:, i] for i in range(self.arity)]

    def __len__(self) -> int:
        return len(self._keys) if self._keys is not None else len(self._rows)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[tuple]:
        if self.arity == 0:
            return iter([()] * len(self))
        decoded = [self.dictionary.decode_column(c) for c in self.columns()]
        return iter(zip(*decoded))

    def __contains__(self, row: object) -> bool:
        if not isinstance(row, tuple) or len(row) != self.arity:
            return False
        if self.arity == 0:
            return len(self) > 0
        ids = [self.dictionary.id(v) for v in row]  # type: ignore[arg-type]
        if any(i is None for i in ids):
            return False
        if self.packed:
            probe = pack([np.array([i], INT) for i in ids], len(self.dictionary))  # type: ignore[misc]
            return bool(self.contains_keys(probe)[0])
        assert self._rows is not None
        if len(self._rows) <= SCANNED_ROWS:
            return bool((self._rows == np.array(ids, INT)).all(axis=1).any())
        # Rows too wide to pack: a scan per probe made view updates over OpenFlights' 67,663
        # nine-column routes spend 10 s in membership tests (issue 31); the rows as opaque
        # scalars, sorted once and kept like an index, answer by binary search.
        keys = self.indexes.get("rows")
        if keys is None:
            keys = self.indexes["rows"] = np.sort(row_view(self._rows))
        probe = row_view(np.array([ids], INT))
        at = int(np.searchsorted(keys, probe)[0])
        return at < len(keys) and keys[at] == probe[0]

    def first(self, n: int) -> list[tuple]:
        """The first ``n`` tuples in the order of constants, decoding only those.

        >>> EncodedRelation.from_rows(ConstantDictionary.build([1, 2, "a"]), [(2,), ("a",), (1,)], 1).first(2)
        [(1,), (2,)]
        """
        if self.arity == 0:
            return [()] * min(n, len(self))
        return list(zip(*(self.dictionary.decode_column(c[:n]) for c in self.columns())))

    def select(self, pattern: tuple) -> list[tuple]:
        """The tuples equal to ``pattern`` at its non-None positions, by one scan of the bound
        columns: cheaper than building an index (``lookup.ModelIndex``) for a few lookups.

        >>> d = ConstantDictionary.build([1, 2, "a"])
        >>> EncodedRelation.from_rows(d, [(1, "a"), (2, "a"), (1, 2)], arity=2).select((1, None))
        [(1, 2), (1, 'a')]
        """
        columns = self.columns()
        mask = np.ones(len(self), dtype=bool)
        for column, value in zip(columns, pattern):
            if value is not None:
                i = self.dictionary.id(value)
                if i is None:
                    return []
                mask &= column == i
        rows = np.flatnonzero(mask)
        return list(zip(*(self.dictionary.decode_column(c[rows]) for c in columns)))

    def contains_keys(self, probe: np.ndarray) -> np.ndarray:
        """Which packed keys are tuples of this (packed) relation."""
        return member(self.keys, probe)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(arity={self.arity}, size={len(self)})"

    __hash__ = None  # type: ignore[assignment]


class PatchedRelation(EncodedRelation):
    """A large packed relation with a few tuples added and removed, copied only when needed.

    Incremental maintenance changes a few tuples of relations with millions: building each new
    relation would copy all of it. A patched relation keeps the old one (``base``) with the sorted
    keys added (``plus``, none in base) and removed (``minus``, all in base); membership, size and
    range lookups read the three, and ``keys`` materializes the result on first use.
    """

    __slots__ = ("base", "plus", "minus")

    def __init__(self, base: EncodedRelation, plus: np.ndarray, minus: np.ndarray):
        super().__init__(base.dictionary, base.arity, None, None)
        self.base, self.plus, self.minus = base, plus, minus

    @classmethod
    def of(cls, rel: EncodedRelation, add: np.ndarray, remove: np.ndarray) -> "PatchedRelation":
        """``rel`` with sorted keys ``add`` (absent) added and ``remove`` (present) removed."""
        if isinstance(rel, PatchedRelation) and rel._keys is None:
            in_plus = member(rel.plus, remove)
            plus = merge_sorted(rel.plus[~member(remove[in_plus], rel.plus)], add)
            return cls(rel.base, plus, merge_sorted(rel.minus, remove[~in_plus]))
        return cls(rel, add, remove)

    @property
    def packed(self) -> bool:
        return True

    @property
    def keys(self) -> np.ndarray:
        if self._keys is None:
            kept = self.base.keys
            if len(self.minus):
                kept = np.delete(kept, np.searchsorted(kept, self.minus))
            self._keys = merge_sorted(kept, self.plus)
        return self._keys

    def columns(self) -> list[np.ndarray]:
        return unpack(self.keys, len(self.dictionary), self.arity)

    def __len__(self) -> int:
        return len(self.base) - len(self.minus) + len(self.plus)

    def contains_keys(self, probe: np.ndarray) -> np.ndarray:
        if self._keys is not None:
            return member(self._keys, probe)
        return (self.base.contains_keys(probe) & ~member(self.minus, probe)) | member(self.plus, probe)


def lex_range(rows: np.ndarray, probe) -> tuple[int, int]:
    """The rows equal to ``probe`` in lexicographically sorted ``rows``, as a range ``lo:hi``;
    when there are none, ``lo`` is where ``probe`` would be inserted. Narrows column by column
    with binary searches: O(arity · log n), for probing a few rows of a wide relation.

    >>> lex_range(np.array([[1, 2], [1, 5], [3, 0]]), (1, 5)), lex_range(np.array([[1, 2], [1, 5], [3, 0]]), (2, 0))
    ((1, 2), (2, 2))
    """
    lo, hi = 0, len(rows)
    for c, value in enumerate(probe):
        column = rows[lo:hi, c]
        lo, hi = lo + int(np.searchsorted(column, value, "left")), lo + int(np.searchsorted(column, value, "right"))
        if lo == hi:
            break
    return lo, hi


def unique_rows(rows: np.ndarray) -> np.ndarray:
    if len(rows) == 0:
        return rows.reshape(0, rows.shape[1])
    order = np.lexsort(rows.T[::-1])
    rows = rows[order]
    keep = np.ones(len(rows), dtype=bool)
    keep[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    return rows[keep]


def decode_facts(facts: Mapping[str, Set]) -> dict[str, set[tuple]]:
    """Materialize every relation as a Python set of tuples."""
    return {pred: set(rows) for pred, rows in facts.items()}


__all__ = [
    "CACHED_COLUMN_VALUES",
    "INT",
    "SMALL_LOOKUP",
    "THROUGH_DEPTH",
    "ConstantDictionary",
    "EncodedRelation",
    "PatchedRelation",
    "column",
    "decode_facts",
    "fits_in_key",
    "id_starts",
    "int_rows",
    "key_base",
    "lex_range",
    "member",
    "merge_sorted",
    "pack",
    "row_view",
    "sorted_unique",
    "unique_rows",
    "unpack",
]
