"""Minimal hitting sets of a family of sets (seed 003, Def. 6), enumerated one by one.

A hitting set of ``S`` takes at least one element of every non-empty member of ``S`` and only
elements of ``⋃S``; it is minimal when no proper subset is one. Seed 003's Algorithm 1 revises by
a hitting set of all explanations; the update tableaux of Algorithms 3–6 find the same sets
without listing the explanations (Lemma 2–4). This module is the explicit route, used for
explanations named to the user and as the baseline the tableaux are measured against.

The enumeration is the minimal-hitting-set search of Murakami & Uno (MMCS): grow a set by an
element of an unhit member with fewest candidates, keep the set only while each of its elements
is the sole hitter of some member (its *critical* members), and never reconsider, below a
branch, the elements its left siblings tried. Every minimal hitting set comes out exactly once,
in polynomial space.

>>> sorted(sorted(h) for h in minimal_hitting_sets([{1, 2}, {2, 3}, {3, 4}]))
[[1, 3], [2, 3], [2, 4]]
>>> list(minimal_hitting_sets([]))
[frozenset()]

References
----------
K. Murakami, T. Uno. Efficient algorithms for dualizing large-scale hypergraphs. Discrete
Applied Mathematics 170 (2014) 83–94. Seed 003, Def. 6, Lemma 3.
"""

from __future__ import annotations

import itertools
from typing import Hashable, Iterable, Iterator


def minimal_hitting_sets(family: Iterable[Iterable[Hashable]]) -> Iterator[frozenset]:
    """Yield every minimal hitting set of ``family`` (empty members are ignored, Def. 6)."""
    sets = list(dict.fromkeys(frozenset(s) for s in family if s))
    containing: dict[Hashable, list[int]] = {}
    for i, s in enumerate(sets):
        for e in s:
            containing.setdefault(e, []).append(i)
    hit_count = [0] * len(sets)
    chosen: list[Hashable] = []

    def critical_ok() -> bool:
        # Every chosen element must be the only chosen hitter of some member.
        for e in chosen:
            if not any(hit_count[i] == 1 for i in containing[e]):
                return False
        return True

    def search(candidates: set) -> Iterator[frozenset]:
        unhit = [i for i in range(len(sets)) if hit_count[i] == 0]
        if not unhit:
            yield frozenset(chosen)
            return
        target = min(unhit, key=lambda i: len(sets[i] & candidates))
        options = sorted(sets[target] & candidates, key=repr)
        remaining = candidates - set(options)
        for e in options:
            chosen.append(e)
            for i in containing[e]:
                hit_count[i] += 1
            if critical_ok():
                yield from search(set(remaining))
            for i in containing[e]:
                hit_count[i] -= 1
            chosen.pop()
            remaining.add(e)

    yield from search(set(containing))


def is_hitting_set(candidate: Iterable[Hashable], family: Iterable[Iterable[Hashable]]) -> bool:
    """Whether ``candidate`` is a hitting set of ``family`` (Def. 6)."""
    h = set(candidate)
    members = [set(s) for s in family if s]
    return h <= set().union(*members) and all(h & s for s in members)


def brute_force_minimal_hitting_sets(family: Iterable[Iterable[Hashable]]) -> set[frozenset]:
    """Every minimal hitting set by trying every subset of ``⋃family`` (the test oracle)."""
    members = [frozenset(s) for s in family if s]
    universe = sorted(set().union(*members), key=repr) if members else []
    found: list[frozenset] = []
    for size in range(len(universe) + 1):
        for subset in itertools.combinations(universe, size):
            h = frozenset(subset)
            if not any(f <= h for f in found) and is_hitting_set(h, members):
                found.append(h)
    return set(found)


__all__ = ["brute_force_minimal_hitting_sets", "is_hitting_set", "minimal_hitting_sets"]
