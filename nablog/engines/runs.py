"""Log-structured relations: a growing relation kept as a few sorted runs, merged geometrically.

A semi-naive fixpoint adds each round's new tuples (the delta) to the relation it grows. Merging
every delta into one sorted array copies the whole relation every round: on a deep recursion
(136 rounds for the closure of a sparse graph of 10⁵ edges) that copying, not the join, is the
cost. A :class:`RunRelation` instead keeps the relation as sorted runs of packed keys, disjoint,
each at least :data:`GROWTH` times the size of the next; a delta becomes a new run, and the last
two runs are merged while that ratio fails (a binary counter, as in a log-structured merge tree).
Each tuple is then copied O(log rounds) times instead of once per round, and the relation has at
most log_GROWTH(size) runs. The same runs answer what the engine asks of a relation during the
fixpoint: membership (deduplicating a delta, by binary search in each run), prefix ranges (joins
and anti-joins on leading columns, run by run), and the size. Anything else (columns, an index on
other columns, iteration) merges the runs once, on first use, and keeps the result.

A large fixpoint also keeps a key set of the relation (:meth:`RunRelation.keyed`,
:mod:`nablog.engines.keysets`), so that deduplicating a round does not search every run: an
exact bitmap answers alone (the runs then wait unmerged for the end of the fixpoint), a Bloom
filter rules out the new keys and the few others are searched (runs then wait unmerged up to
:data:`MAX_RUNS`, and the smaller half merges). When the fixpoint ends the relation keeps at most
:data:`MAX_RUNS` runs (:meth:`RunRelation.settled`): counting, membership and joins on leading
columns read them; the first reader that needs one sorted array merges them, once.

>>> from nablog.engines.encoding import ConstantDictionary, EncodedRelation
>>> d = ConstantDictionary.build(range(10))
>>> rel = EncodedRelation.from_rows(d, [(1, 2), (2, 3)], 2)
>>> for new in ([(3, 4)], [(1, 3), (2, 4)], [(1, 4)]):
...     rel = RunRelation.grown(rel, EncodedRelation.from_rows(d, new, 2).keys)
>>> [len(run) for run in rel.runs], len(rel), (2, 4) in rel, (4, 1) in rel
([5, 1], 6, True, False)
>>> sorted(rel)
[(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .encoding import INT, EncodedRelation, PatchedRelation, key_base, member, merge_sorted, unpack
from .keysets import KeySet

GROWTH = 2
"""Each run holds at least this many times the tuples of the next, when membership searches the
runs (measured on the deep closures of bench/materialize.py: 2 and 4 within noise; 8 and more
probe too many runs per round)."""
MAX_RUNS = 16
"""Runs kept behind a Bloom filter before the smaller half of them is merged into one (see
:meth:`RunRelation.grown`), and left to the readers of a relation whose fixpoint ended (see
:meth:`RunRelation.settled`)."""
SORT_MERGE_RUNS = 4
"""Merging more runs than this is one plain sort of them all (numpy's vectorized quicksort, about
8 ns a key whatever the number of runs), not timsort's merge of the runs it finds (faster for two
runs, 6 times slower for 136: bench/kernels.py)."""


class RunRelation(EncodedRelation):
    """A packed relation stored as sorted runs of disjoint keys (see the module)."""

    __slots__ = ("runs", "seen")

    def __init__(self, base: EncodedRelation, runs: list[np.ndarray], seen: KeySet | None = None):
        super().__init__(base.dictionary, base.arity, None, None)
        self.runs = runs
        # A key set of the runs, when kept (see keyed): when exact, the runs are not merged while
        # the relation grows, unless rules also join it (``merge``).
        self.seen = seen

    @classmethod
    def grown(cls, rel: EncodedRelation, new: np.ndarray, merge: bool = True) -> "RunRelation":
        """``rel`` with the sorted keys ``new`` (none of them in ``rel``) added; ``rel`` is unchanged
        (a key set moves to the new relation: ``rel`` searches its own runs again)."""
        runs = list(rel.runs) if isinstance(rel, RunRelation) else ([rel.keys] if len(rel) else [])
        runs.append(new)
        seen = rel.seen if isinstance(rel, RunRelation) else None
        if seen is not None:
            rel.seen = None
            if seen.full(len(new)):
                seen = KeySet.new(seen.space, 4 * sum(len(run) for run in runs))
                for run in runs:
                    seen.add(run)
            else:
                seen.add(new)
        if merge or seen is None:
            while len(runs) > 1 and len(runs[-2]) < GROWTH * len(runs[-1]):
                last = runs.pop()
                runs[-1] = merge_sorted(runs[-1], last)
        elif not seen.exact and len(runs) > MAX_RUNS:
            # Behind a filter only its few false positives (and true repeats) search the runs, so
            # runs may be many: merging the smaller half when they pass MAX_RUNS copies each
            # tuple about log_8(rounds) times, where a binary counter copies it log_2(rounds) times
            # (the merges were 40% of the closure of a sparse graph of 10^5 edges, 136 rounds).
            runs = compacted(runs, len(runs) // 2 + 1)
        return cls(rel, runs, seen)

    @classmethod
    def keyed(cls, rel: EncodedRelation, exact_only: bool = False) -> "RunRelation":
        """``rel`` (packed, of positive arity) with a :class:`~nablog.engines.keysets.KeySet` of its
        keys, for a fixpoint that deduplicates many rounds against it; with ``exact_only``, only
        if the set is an exact bitmap (``rel`` is returned as it is otherwise)."""
        if isinstance(rel, RunRelation) and rel.seen is not None:
            return rel
        runs = key_runs(rel)
        space = key_base(len(rel.dictionary)) ** rel.arity
        if runs is None or (exact_only and not KeySet.exact_for(space, 2 * len(rel))):
            return rel  # type: ignore[return-value]
        seen = KeySet.new(space, 2 * len(rel))
        for run in runs:
            seen.add(run)
        return cls(rel, list(runs), seen)

    def settled(self) -> "RunRelation":
        """This relation at the end of its fixpoint: the key set is let go, and the runs stay for
        the readers that take runs (membership, the size, joins on leading columns) unless they
        are more than :data:`MAX_RUNS` (merged into one); anything else merges them on first use.
        A benchmark that only counts the tuples never pays that merge: see bench/README.md."""
        self.seen = None
        if len(self.runs) > MAX_RUNS:
            self.runs = [_merged(self.runs)]
        return self

    @property
    def packed(self) -> bool:
        return True

    @property
    def keys(self) -> np.ndarray:
        if self._keys is None:
            merged = _merged(self.runs)
            self._keys = merged
            self.runs = [merged] if len(merged) else []  # one copy, not the runs and their merge
        return self._keys

    def columns(self) -> list[np.ndarray]:
        return unpack(self.keys, len(self.dictionary), self.arity)

    def __len__(self) -> int:
        return sum(len(run) for run in self.runs)

    def contains_keys(self, probe: np.ndarray) -> np.ndarray:
        if self.seen is not None:
            maybe = self.seen.contains(probe)
            if self.seen.exact:
                return maybe
            # Only the keys the filter could not rule out are searched in the runs.
            which = np.flatnonzero(maybe)
            maybe[which] = self._search(probe[which])
            return maybe
        return self._search(probe)

    def _search(self, probe: np.ndarray) -> np.ndarray:
        found = np.zeros(len(probe), dtype=bool)
        for run in self.runs:
            found |= member(run, probe)
        return found


def _merged(runs: list[np.ndarray]) -> np.ndarray:
    """The sorted union of disjoint sorted runs: one sort of them all, not one merge per run."""
    if len(runs) < 2:
        return runs[0] if runs else np.zeros(0, INT)
    merged = np.concatenate(runs)
    merged.sort(kind="stable" if len(runs) <= SORT_MERGE_RUNS else None)  # see SORT_MERGE_RUNS
    return merged


def compacted(runs: list[np.ndarray], count: int) -> list[np.ndarray]:
    """``runs`` with the ``count`` smallest merged into one (runs are disjoint: any may merge).

    >>> [r.tolist() for r in compacted([np.array([1, 5, 9]), np.array([2]), np.array([0, 7])], 2)]
    [[1, 5, 9], [0, 2, 7]]
    """
    smallest = set(sorted(range(len(runs)), key=lambda i: len(runs[i]))[:count])
    return [run for i, run in enumerate(runs) if i not in smallest] + [_merged([runs[i] for i in sorted(smallest)])]


def key_runs(rel: EncodedRelation) -> list[np.ndarray] | None:
    """The sorted key arrays whose disjoint union is ``rel`` (one for a plain packed relation),
    or None when the relation is not a union of sorted runs (a patch with removals pending)."""
    if isinstance(rel, RunRelation):
        return rel.runs
    if isinstance(rel, PatchedRelation) and rel._keys is None:
        return None
    return [rel.keys]


@dataclass
class RoundCost:
    """Where one semi-naive round of one component spent its time (``PythonEngine(profile=...)``).

    ``join`` evaluates the rule bodies over the delta, ``dedup`` removes the derived tuples the
    relation holds already (and the duplicates among them), ``merge`` adds the new ones to it.
    """

    component: tuple[str, ...]
    round: int
    delta: int = 0
    join: float = 0.0
    dedup: float = 0.0
    merge: float = 0.0
    runs: int = 0

    def describe(self) -> str:
        return (
            f"{', '.join(self.component)} round {self.round}: {self.delta:,} new, join {self.join:.4f} s, "
            f"dedup {self.dedup:.4f} s, merge {self.merge:.4f} s, {self.runs} runs"
        )


@dataclass
class Stopwatches:
    """Seconds spent per kind of work since the last :meth:`take` (join, dedup, merge)."""

    seconds: dict[str, float] = field(default_factory=lambda: {"join": 0.0, "dedup": 0.0, "merge": 0.0})

    def add(self, kind: str, start: float) -> float:
        now = time.perf_counter()
        self.seconds[kind] += now - start
        return now

    def take(self) -> dict[str, float]:
        taken, self.seconds = self.seconds, {"join": 0.0, "dedup": 0.0, "merge": 0.0}
        return taken
