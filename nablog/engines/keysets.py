"""Sets of packed keys that answer membership without binary search, for deduplicating deep recursion.

A semi-naive round must drop the derived tuples its relation holds already. Searching them in the
relation's sorted runs (:mod:`nablog.engines.runs`) is a chain of dependent cache misses per key
and per run: on the deep closure of a sparse graph (136 rounds) that search, and merging the runs
so that there are few, was most of the time. A :class:`KeySet` answers the same question with a
few independent gathers per key, vectorized: a bitmap over the whole key space when it is small
(a dense graph's closure: 5,000 constants give 25 M keys, 3 MB), else a Bloom filter that rules
out almost every key not in the relation (a deep recursion derives mostly new tuples), so that
only the few others are searched in the runs. An exact open-addressing hash table was measured
too: its inserts cost 90-160 ns a key in numpy (a probe loop of ~18 vectorized steps per batch),
more than the searches it saved.

>>> bitmap, bloom = KeySet.new(100), KeySet.new(10 ** 12, 10)
>>> for keys in (bitmap, bloom):
...     _ = keys.add(np.array([3, 7, 12], dtype=np.int64))
...     _ = keys.add(np.array([2], dtype=np.int64))
>>> bitmap.contains(np.array([7, 8, 2])).tolist(), bloom.contains(np.array([7, 8, 2])).tolist(), len(bloom)
([True, False, True], [True, False, True], 4)
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

INT = np.int64
BITMAP_BYTES = 4 << 20
"""A bitmap this large (a key space of 32 M keys) is always kept; beyond, a bitmap when it takes
at most :data:`BITMAP_BITS_PER_KEY` bits per expected key, else a Bloom filter, whose memory
follows the relation rather than the key space."""
BITMAP_BITS_PER_KEY = 16
"""A filter takes 32 to 128 bits per key: a bitmap of at most 16 is smaller, exact, and its keys
cost one gather each, no hashing and no rebuilding as it fills (same generation on a 16,000-node
tree: 256 M possible keys, 25.6 M derived; the filter's adds were a third of the fixpoint)."""
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the high bits of key × 2^64/φ
_ONE, _LOW, _SIX = np.uint64(1), np.uint64(63), np.uint64(6)


class KeySet(ABC):
    """Membership of non-negative int64 keys; :meth:`add` inserts and says which were new. An
    ``exact`` set answers membership; an inexact one only rules keys out (the others must be
    searched)."""

    exact: bool
    space: int
    size: int

    @staticmethod
    def new(space: int, expected: int = 0) -> "KeySet":
        """An empty set for keys below ``space``, with room for about ``expected`` keys."""
        out = Bitmap(space) if KeySet.exact_for(space, expected) else Filter(expected)
        out.space = space
        return out

    @staticmethod
    def exact_for(space: int, expected: int = 0) -> bool:
        """Whether :meth:`new` makes an exact set (a bitmap) for these keys."""
        return space <= max(8 * BITMAP_BYTES, BITMAP_BITS_PER_KEY * expected)

    def full(self, more: int) -> bool:
        """Whether adding ``more`` keys calls for a larger set (built again from the keys)."""
        return False

    @abstractmethod
    def contains(self, keys: np.ndarray) -> np.ndarray:
        """Per key: False where it is surely absent (a bitmap is exact; a filter may say True)."""

    @abstractmethod
    def add(self, keys: np.ndarray) -> None:
        """Insert sorted distinct ``keys``, none of them in the set yet."""

    def __len__(self) -> int:
        return self.size


class Bitmap(KeySet):
    """One bit per possible key."""

    exact = True

    def __init__(self, space: int):
        self.bits = np.zeros((space + 7) >> 3, dtype=np.uint8)
        self.size = 0

    def contains(self, keys: np.ndarray) -> np.ndarray:
        return (self.bits[keys >> 3] >> (keys & 7).astype(np.uint8)) & 1 == 1

    def add(self, keys: np.ndarray) -> None:
        if len(keys):
            # Several keys may share a byte: OR their bits together per byte (keys are sorted).
            byte = keys >> 3
            starts = np.flatnonzero(np.concatenate([[True], byte[1:] != byte[:-1]]))
            bit = np.left_shift(1, keys & 7).astype(np.uint8)
            self.bits[byte[starts]] |= np.bitwise_or.reduceat(bit, starts)
            self.size += len(keys)


class Filter(KeySet):
    """A blocked Bloom filter: two bits per key, both in one 64-bit word (one random memory access
    per key, not one per bit), 32 to 256 bits per key (about 0.5% false positives); :meth:`contains`
    may say True for a key never added. Its memory follows the number of keys, not the key space."""

    exact = False

    def __init__(self, expected: int = 0):
        self.size = 0
        words = max(1 << 10, 1 << (max(expected, 1) // 2).bit_length())
        self.words = np.zeros(words, dtype=np.uint64)
        self.shift = np.uint64(64 - (words.bit_length() - 1))

    def _locate(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each key's word, and its two bits there (from the low bits of the same hash)."""
        h = keys.view(np.uint64) * _GOLDEN
        bits = np.left_shift(_ONE, h & _LOW)
        bits |= np.left_shift(_ONE, (h >> _SIX) & _LOW)
        return (h >> self.shift).view(INT), bits

    def contains(self, keys: np.ndarray) -> np.ndarray:
        word, bits = self._locate(keys)
        return self.words[word] & bits == bits

    def add(self, keys: np.ndarray) -> None:
        word, bits = self._locate(keys)
        while len(word):
            # A word assigned for several keys keeps one of the writes: the others go again.
            self.words[word] |= bits
            missing = self.words[word] & bits != bits
            word, bits = word[missing], bits[missing]
        self.size += len(keys)

    def full(self, more: int) -> bool:
        """Whether ``more`` keys would pass 32 bits per key (false positives would rise)."""
        return 32 * (self.size + more) > 64 * len(self.words)
