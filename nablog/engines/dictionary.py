"""Integer ids for constants, order-preserving: the dictionary every engine encodes constants with.

Engines work on dense integer ids: ``ConstantDictionary`` numbers the constants in the order of
DESIGN.md (integers before strings, strings by code point), so comparing ids compares constants.
It grows by :meth:`~ConstantDictionary.extended` with an increasing map of old ids to new ones
(relations move to the grown dictionary without sorting), and reads integers in bulk
(:func:`int_rows`) rather than one Python object at a time.

>>> d = ConstantDictionary.build(["b", 3, "a", 3])
>>> d.values, d.id("a"), d.decode_column(np.array([2, 0]))
([3, 'a', 'b'], 1, ['b', 3])
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Set

import numpy as np

from ..lang import Constant

INT = np.int64
"""The type of ids (and of the keys packed from them)."""
SMALL_LOOKUP = 64
"""Encoding at most this many values (the rows of a change) searches the sorted values instead of
building the dictionary of ids, which costs a Python dict of every constant (10 ms at 50,000)."""
SEARCHED_SHARE = 16
"""Values are looked up one at a time (``id``) by binary search in the sorted values until
1/SEARCHED_SHARE of the dictionary's size have been, then through the dictionary of ids, built
then: a request asking about a few hundred constants of a 10^6-constant state no longer builds it
(0.5 s of a first request's 1.1 s CPU, issue 29), and many lookups pay for it."""
THROUGH_DEPTH = 8
"""A dictionary extended from one with a lookup table looks values up through it (and its id map)
instead of building a table of its own over every constant (0.1 s at 1,000,000): at most this
many extensions deep, then the table is built once."""


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
        # Values looked up one at a time by binary search so far (see SEARCHED_SHARE).
        self._searched = 0

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
    def encoding(cls, constants: Iterable[Constant], int_arrays: Iterable[np.ndarray] = (), str_arrays: Iterable = ()) -> tuple["ConstantDictionary", list[np.ndarray]]:
        """The dictionary of ``constants``, of the integers in ``int_arrays`` (int64 arrays, as
        :func:`int_rows` reads them) and of the strings in ``str_arrays`` (pyarrow string arrays,
        as :func:`str_array` reads them), and the ids of each array's values (the int arrays',
        then the string arrays'): integers are numbered in bulk, by one sort of them all, and
        strings by pyarrow (one sort of the distinct strings, UTF-8 byte order being code point
        order, and a hash lookup per value), not one Python object at a time.

        >>> d, ids = ConstantDictionary.encoding(["x", 5], [np.array([7, 3, 7])])
        >>> d.values, ids[0].tolist()
        ([3, 5, 7, 'x'], [2, 0, 2])
        >>> d, ids = ConstantDictionary.encoding(["x", 5], [], [str_array(["b", "é", "b", "a"])])
        >>> d.values, ids[0].tolist()
        ([5, 'a', 'b', 'x', 'é'], [2, 4, 2, 1])
        """
        unique = set(constants)
        ints = [c for c in unique if type(c) is int]
        strs = [c for c in unique if type(c) is str]
        if len(ints) + len(strs) != len(unique):
            bad = next(c for c in unique if type(c) not in (int, str))
            raise TypeError(f"not a nablog constant: {bad!r} ({type(bad).__name__})")
        # Integers before strings, each in its natural order (strings by code point).
        texts = list(str_arrays)
        text_ids: list[np.ndarray] = []
        if texts:
            strs, text_ids = _numbered_strings(strs, texts)
        else:
            strs.sort()
        arrays = list(int_arrays)
        if arrays:
            try:
                given = np.asarray(ints, dtype=INT)
            except OverflowError:  # a constant of the program beyond 64 bits
                d = cls.build(unique.union(*(a.tolist() for a in arrays), strs))
                offset = bisect.bisect_left(d.values, True, key=lambda v: type(v) is str)
                return d, [d.encode_rows([(v,) for v in a.tolist()], 1).ravel() for a in arrays] + [i + offset for i in text_ids]
            # Integers come first in the order of constants, so strings do not move their ids.
            sorted_ints, inverse = np.unique(np.concatenate([given, *arrays]), return_inverse=True)
            ends = np.cumsum([len(given)] + [len(a) for a in arrays])
            return cls(sorted_ints.tolist() + strs, sorted_ints), [inverse[a:b] for a, b in zip(ends, ends[1:])] + [i + len(sorted_ints) for i in text_ids]
        ints.sort()
        return cls(ints + strs), [i + len(ints) for i in text_ids]

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
        if self._ids is None and self._searched * SEARCHED_SHARE < len(self) and type(value) in (int, str):
            self._searched += 1
            try:
                return self._search(value)
            except KeyError:
                return None
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


STR_ROWS = 4096
"""Rows of strings with at least this many values are numbered by pyarrow (:func:`str_array`)."""


def str_array(values: list):
    """``values`` as one pyarrow string array when every one is a Python ``str`` that UTF-8
    encodes (no lone surrogate); None otherwise (number them one at a time).

    >>> str_array(["a", "b"]).to_pylist(), str_array(["a", 1]), str_array(["\\ud800"])
    (['a', 'b'], None, None)
    """
    import pyarrow as pa

    try:
        return pa.array(values, pa.large_string())
    except (pa.ArrowException, TypeError, ValueError, UnicodeError):
        return None


def _numbered_strings(strs: list[str], arrays: list) -> tuple[list[str], list[np.ndarray]]:
    """The sorted distinct strings of ``strs`` and of the pyarrow ``arrays``, and each array's
    positions among them: one hash pass numbers the values in order of appearance
    (``dictionary_encode``), one sort of the distinct ones ranks them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = pc.dictionary_encode(pa.concat_arrays([pa.array(strs, pa.large_string()), *arrays]))
    distinct = encoded.dictionary
    order = pc.sort_indices(distinct).to_numpy()
    rank = np.empty(len(order), INT)
    rank[order] = np.arange(len(order), dtype=INT)
    ids = rank[encoded.indices.to_numpy(zero_copy_only=False)]
    ends = np.cumsum([len(strs)] + [len(a) for a in arrays])
    return distinct.take(order).to_pylist(), [ids[a:b] for a, b in zip(ends, ends[1:])]


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


__all__ = ["INT", "SEARCHED_SHARE", "SMALL_LOOKUP", "THROUGH_DEPTH", "ConstantDictionary", "int_rows"]
