"""Integer encoding of constants, order-preserving, and columnar relations that read as sets of tuples.

Engines work on dense integer ids: ``ConstantDictionary`` numbers the constants in the order of
DESIGN.md (integers before strings, strings by code point), so comparing ids compares constants.
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

import bisect
import itertools
from collections.abc import Iterable, Iterator, Set
from typing import Mapping

import numpy as np

from ..lang import Constant

INT = np.int64
CACHED_COLUMN_VALUES = 4_000_000
"""A packed relation keeps its unpacked columns when they hold at most this many values (32 MB)."""
SMALL_LOOKUP = 64
"""Encoding at most this many values (the rows of a change) searches the sorted values instead of
building the dictionary of ids, which costs a Python dict of every constant (10 ms at 50,000)."""
THROUGH_DEPTH = 8
"""A dictionary extended from one with a lookup table looks values up through it (and its id map)
instead of building a table of its own over every constant (0.1 s at 1,000,000): at most this
many extensions deep, then the table is built once."""
_KEY_BITS = 62


class ConstantDictionary:
    """A bijection between constants and ids ``0..n-1`` that preserves the order of constants."""

    def __init__(self, values: list[Constant] | None, ints: np.ndarray | None = None, strs: list[str] | None = None):
        # values None: the integers ``ints`` then the strings ``strs``, listed on first use (a
        # dictionary grown by computed sums is often only read through its integers).
        self._values = values
        self._strs = strs
        self._ids: dict[Constant, int] | None = None
        # A dictionary made by ``extended`` from one whose lookup is built answers through it:
        # (that dictionary, its id map, positions of the added values, the added values' ids).
        self._through: tuple[ConstantDictionary, np.ndarray, np.ndarray, dict[Constant, int]] | None = None
        self._depth = 0  # how many such steps a lookup takes
        self._array: np.ndarray | None = None
        self._identity: np.ndarray | None = None
        # The integer constants (the first ids) as int64, or False when one does not fit.
        self._ints: np.ndarray | bool | None = ints

    @property
    def values(self) -> list[Constant]:
        """The constants in id order."""
        if self._values is None:
            self._values = self._ints.tolist() + self._strs  # type: ignore[union-attr, operator]
        return self._values

    @property
    def ids(self) -> dict[Constant, int]:
        """Constant to id (built on first use: bulk encoding of integers does not need it)."""
        if self._ids is None:
            self._ids = dict(zip(self.values, range(len(self.values))))
            self._through = None
        return self._ids

    @classmethod
    def build(cls, constants: Iterable[Constant]) -> "ConstantDictionary":
        return cls.encoding(constants)[0]

    @classmethod
    def encoding(cls, constants: Iterable[Constant], int_arrays: Iterable[np.ndarray] = ()) -> tuple["ConstantDictionary", list[np.ndarray]]:
        """The dictionary of ``constants`` and of the integers in ``int_arrays`` (int64 arrays, as
        :func:`int_rows` reads them), and the ids of each array's values: integers are numbered in
        bulk, by one sort of them all, not one Python object at a time.

        >>> d, ids = ConstantDictionary.encoding(["x", 5], [np.array([7, 3, 7])])
        >>> d.values, ids[0].tolist()
        ([3, 5, 7, 'x'], [2, 0, 2])
        """
        unique = set(constants)
        ints = [c for c in unique if type(c) is int]
        strs = [c for c in unique if type(c) is str]
        if len(ints) + len(strs) != len(unique):
            bad = next(c for c in unique if type(c) not in (int, str))
            raise TypeError(f"not a nablog constant: {bad!r} ({type(bad).__name__})")
        # Integers before strings, each in its natural order (strings by code point).
        strs.sort()
        arrays = list(int_arrays)
        if arrays:
            try:
                given = np.asarray(ints, dtype=INT)
            except OverflowError:  # a constant of the program beyond 64 bits
                d = cls.build(unique.union(*(a.tolist() for a in arrays)))
                return d, [d.encode_rows(a.tolist(), 1).ravel() for a in arrays]
            # Integers come first in the order of constants, so strings do not move their ids.
            sorted_ints, inverse = np.unique(np.concatenate([given, *arrays]), return_inverse=True)
            ends = np.cumsum([len(given)] + [len(a) for a in arrays])
            return cls(sorted_ints.tolist() + strs, sorted_ints), [inverse[a:b] for a, b in zip(ends, ends[1:])]
        ints.sort()
        return cls(ints + strs), []

    def int_values(self) -> np.ndarray | None:
        """The integer constants (the first ids, in order) as int64; None when one does not fit."""
        if self._ints is None:
            n = bisect.bisect_left(self.values, True, key=lambda v: type(v) is str)
            try:
                self._ints = np.array(self.values[:n], dtype=INT)
            except OverflowError:
                self._ints = False
        return None if self._ints is False else self._ints  # type: ignore[return-value]

    def extended(self, constants: Iterable[Constant]) -> tuple["ConstantDictionary", np.ndarray]:
        """This dictionary with ``constants`` added, and the map from old ids to new ones.

        The map is increasing, so rows re-encoded through it keep their order: a relation moves
        to the new dictionary by one vectorized lookup, without decoding or sorting.

        >>> d = ConstantDictionary.build([1, "b", "d"])
        >>> e, remap = d.extended(["c", 0, "b"])
        >>> e.values, remap.tolist()
        ([0, 1, 'b', 'c', 'd'], [1, 2, 4])
        """
        constants = set(constants)
        added = ConstantDictionary.build(c for c in constants if not self._has(c, len(constants))).values
        if not added:
            # Every update without new constants asks for this (1 ms at 1,000,000): kept, read-only.
            if self._identity is None:
                self._identity = np.arange(len(self), dtype=INT)
                self._identity.flags.writeable = False
            return self, self._identity
        n_ints = bisect.bisect_left(self.values, True, key=lambda v: type(v) is str)
        # Where each added constant goes among the old ones (both lists are sorted).
        positions = np.array(
            [
                bisect.bisect_left(self.values, v, 0, n_ints) if type(v) is int else bisect.bisect_left(self.values, v, n_ints)
                for v in added
            ],
            dtype=INT,
        )
        old_ids = np.arange(len(self.values), dtype=INT)
        remap = old_ids + np.searchsorted(positions, old_ids, side="right")
        # A few constants into many (a change's new constants): the old values are copied by
        # slices, and their integers as an array, not one object at a time (3 ms at 50,000).
        values: list[Constant] = []
        start = 0
        for at, value in zip(positions.tolist(), added):
            values += self.values[start:at]
            values.append(value)
            start = at
        values += self.values[start:]
        ints = None
        if isinstance(self._ints, np.ndarray):
            new_ints = [(at, v) for at, v in zip(positions.tolist(), added) if type(v) is int]
            try:
                ints = np.insert(self._ints, [at for at, _ in new_ints], np.array([v for _, v in new_ints], dtype=INT))
            except OverflowError:
                ints = None
        grown = ConstantDictionary(values, ints)
        if (self._ids is not None or self._through is not None) and self._depth < THROUGH_DEPTH:
            # Carry the lookup: an old value's id is its old id mapped, an added one's is listed.
            grown._through = (self, remap, positions, {v: int(at) + k for k, (at, v) in enumerate(zip(positions.tolist(), added))})
            grown._depth = self._depth + 1
        return grown, remap

    def extended_ints(self, added: np.ndarray) -> tuple["ConstantDictionary", np.ndarray]:
        """:meth:`extended` for integers none of which is in the dictionary yet, as a sorted
        int64 array (what arithmetic computes): one merge of arrays, no dictionary of ids.

        >>> d = ConstantDictionary.build([1, 5, "b"])
        >>> e, remap = d.extended_ints(np.array([0, 3]))
        >>> e.values, remap.tolist(), e.int_values().tolist()
        ([0, 1, 3, 5, 'b'], [1, 3, 4], [0, 1, 3, 5])
        """
        ints = self.int_values()
        if ints is None:  # an integer beyond 64 bits: the general path
            return self.extended(added.tolist())
        positions = np.searchsorted(ints, added)
        old_ids = np.arange(len(self.values), dtype=INT)
        remap = old_ids + np.searchsorted(positions, old_ids, side="right")
        merged = np.empty(len(ints) + len(added), dtype=INT)
        merged[remap[: len(ints)]] = ints
        merged[positions + np.arange(len(added), dtype=INT)] = added
        # Integers come first: the strings keep their order after them.
        return ConstantDictionary(None, merged, self.values[len(ints) :] if self._values is not None else self._strs), remap

    def __len__(self) -> int:
        return len(self._values) if self._values is not None else len(self._ints) + len(self._strs)  # type: ignore[arg-type]

    def id(self, value: Constant) -> int | None:
        if self._ids is None and self._through is not None:
            base, remap, _, added = self._through
            i = added.get(value)
            if i is not None:
                return i
            i = base.id(value)
            return None if i is None else int(remap[i])
        return self.ids.get(value)

    def encode_rows(self, rows: Iterable[tuple], arity: int) -> np.ndarray:
        """Rows as an (n, arity) array of ids (integers looked up in bulk when :func:`int_rows`
        reads them, by binary search in the dictionary's integers)."""
        array = int_rows(rows, arity) if isinstance(rows, (set, frozenset, list, tuple)) else None
        if array is not None:
            ints = self.int_values()
            if ints is not None and len(ints):
                ids = np.searchsorted(ints, array)
                np.minimum(ids, len(ints) - 1, out=ids)
                if (ints[ids] == array).all():
                    return ids
        if self._ids is None and len(rows) * arity <= SMALL_LOOKUP:
            flat = [self._search(v) for row in rows for v in row]
            return np.asarray(flat, dtype=INT).reshape(-1, arity) if arity else np.zeros((len(flat), 0), INT)
        if self._ids is None and self._through is not None and len(rows) * arity * 16 <= len(self):
            flat = [self.id_of(v) for row in rows for v in row]
            return np.asarray(flat, dtype=INT).reshape(-1, arity) if arity else np.zeros((len(flat), 0), INT)
        ids = self.ids
        flat = [ids[v] for row in rows for v in row]
        return np.asarray(flat, dtype=INT).reshape(-1, arity) if arity else np.zeros((len(flat), 0), INT)

    def _has(self, value: Constant, among: int) -> bool:
        """Whether ``value`` is in the dictionary; searched when few values are asked about and
        the dictionary of ids is not built yet (see :data:`SMALL_LOOKUP`)."""
        if self._through is not None and self._ids is None:
            return self.id(value) is not None
        if self._ids is not None or among > SMALL_LOOKUP or type(value) not in (int, str):
            return value in self.ids
        try:
            self._search(value)
        except KeyError:
            return False
        return True

    def id_of(self, value: Constant) -> int:
        """The id of a value of the dictionary (KeyError for another)."""
        i = self.id(value)
        if i is None:
            raise KeyError(value)
        return i

    def _search(self, value: Constant) -> int:
        """The id of ``value`` by binary search in the sorted values (KeyError when absent)."""
        ints = self.int_values()
        n = len(ints) if ints is not None else bisect.bisect_left(self.values, True, key=lambda v: type(v) is str)
        if type(value) is int:
            i = bisect.bisect_left(self.values, value, 0, n)
        else:
            i = bisect.bisect_left(self.values, value, n)
        if i < len(self.values) and type(self.values[i]) is type(value) and self.values[i] == value:
            return i
        raise KeyError(value)

    def decode_column(self, column: np.ndarray) -> list[Constant]:
        if self._values is None:
            # Integers from their array, strings from their list: the values are not listed.
            ints = self._ints
            out = np.empty(len(column), dtype=object)
            small = column < len(ints)  # type: ignore[arg-type]
            out[small] = ints[column[small]].tolist()  # type: ignore[index]
            out[~small] = [self._strs[i] for i in (column[~small] - len(ints)).tolist()]  # type: ignore[arg-type, index]
            return out.tolist()
        if self._array is None and self._through is not None:
            # Through the dictionary it grew from: an id less the added ids below it is the old
            # id (the map is increasing); no objects array of every value is made.
            base, _, _, added = self._through
            new_ids = np.array(sorted(added.values()), dtype=INT)
            below = np.searchsorted(new_ids, column)
            is_added = np.zeros(len(column), dtype=bool)
            if len(new_ids):
                is_added = new_ids[np.minimum(below, len(new_ids) - 1)] == column
            out = np.empty(len(column), dtype=object)
            out[~is_added] = base.decode_column((column - below)[~is_added])
            values = {i: v for v, i in added.items()}
            out[is_added] = [values[i] for i in column[is_added].tolist()]
            return out.tolist()
        if self._array is None:
            self._array = np.array(self.values, dtype=object)
        return self._array[column].tolist()


def int_rows(rows: Set | list | tuple, arity: int | None = None) -> np.ndarray | None:
    """``rows`` as an (n, arity) int64 array when every value is a Python ``int`` within 64 bits;
    None otherwise (strings, larger integers, rows of other widths: encode them value by value).

    Reading a column of integers through ``numpy.fromiter`` instead of a dictionary lookup per
    value is what makes encoding the edges of a graph cheap (the small-job cost of the engine).

    >>> int_rows({(1, 2)}).tolist(), int_rows([(1, "a")]), int_rows([(True, 2)])
    ([[1, 2]], None, None)
    """
    n = len(rows)
    if not n:
        return None
    if arity is None:
        arity = len(next(iter(rows)))
    if not arity:
        return None
    try:
        flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=INT)
    except (TypeError, ValueError, OverflowError):
        return None
    if len(flat) != n * arity or set(map(type, itertools.chain.from_iterable(rows))) != {int}:
        return None  # ragged rows, or bools and other int-like values nablog does not accept
    return flat.reshape(n, arity)


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
        return bool((self._rows == np.array(ids, INT)).all(axis=1).any())

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
