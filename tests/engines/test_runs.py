"""Log-structured relations (engines/runs.py): a relation grown by sorted runs answers every
question the engine asks exactly as the plain relation with the same tuples, and deep recursions
evaluated through it agree with brute force."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import examples

from nablog.engines import PythonEngine
from nablog.engines.encoding import ConstantDictionary, EncodedRelation
from nablog.engines import keysets
from nablog.engines.runs import GROWTH, RoundCost, RunRelation, key_runs
from nablog.lang import parse

pairs = st.tuples(st.integers(0, 30), st.integers(0, 30))


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.sets(pairs, max_size=40), min_size=1, max_size=12), st.sets(pairs, max_size=30))
def test_a_relation_grown_by_runs_is_the_union_of_its_deltas(batches, probes):
    d = ConstantDictionary.build(range(31))
    rel = EncodedRelation.from_rows(d, batches[0], 2)
    held = set(batches[0])
    for batch in batches[1:]:
        new = batch - held
        rel = RunRelation.grown(rel, EncodedRelation.from_rows(d, new, 2).keys)
        held |= new
        runs = key_runs(rel)
        # Each run is sorted, they are disjoint, and each is at least GROWTH times the next.
        assert all(np.all(r[1:] > r[:-1]) for r in runs)
        assert all(len(a) >= GROWTH * len(b) for a, b in zip(runs, runs[1:]))
        assert len(rel) == len(held)
    probe = EncodedRelation.from_rows(d, probes, 2)
    assert rel.contains_keys(probe.keys).tolist() == [row in held for row in probe]
    assert all((row in rel) == (row in held) for row in probes)
    assert list(rel) == sorted(held)


def test_a_deep_closure_reports_join_dedup_and_merge_per_round():
    chain = {(i, i + 1) for i in range(60)}
    costs: list[RoundCost] = []
    model = PythonEngine(profile=costs.append).evaluate(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y)."), {"e": chain})
    assert len(model["p"]) == 60 * 61 // 2
    assert [c.round for c in costs] == list(range(1, 61))
    assert [c.delta for c in costs] == [60 - r for r in range(1, 61)]
    assert all(c.join >= 0 and c.dedup >= 0 and c.merge >= 0 for c in costs)
    assert costs[0].describe().startswith("p round 1: 59 new, join ")


@settings(max_examples=examples(60), deadline=None)
@given(st.sets(pairs, max_size=60))
def test_closures_through_runs_match_brute_force(edges):
    program = parse("p(X,Y) :- e(X,Y). p(X,Y) :- p(X,Z), p(Z,Y). q(X) :- p(X,X). r(X,Y) :- p(X,Y), not p(Y,X).")
    model = PythonEngine().evaluate(program, {"e": edges})
    closure = set(edges)
    while True:
        more = {(x, w) for x, y in closure for z, w in closure if y == z} - closure
        if not more:
            break
        closure |= more
    assert set(model["p"]) == closure
    assert set(model["q"]) == {(x,) for x, y in closure if x == y}
    assert set(model["r"]) == {(x, y) for x, y in closure if (y, x) not in closure}


@settings(max_examples=examples(30), deadline=None)
@given(st.sampled_from([0, 1 << 22]), st.integers(0, 2**32), st.lists(st.integers(1, 1500), min_size=1, max_size=8))
def test_a_relation_deduplicated_by_a_key_set_answers_membership_exactly(bitmap_bytes, seed, sizes):
    # A bitmap (small key space) or a Bloom filter (forced, and rebuilt larger as it fills: it
    # starts with room for 2,048 keys) must never lose a key, and the runs stay the union.
    old, keysets.BITMAP_BYTES = keysets.BITMAP_BYTES, bitmap_bytes
    per_key, keysets.BITMAP_BITS_PER_KEY = keysets.BITMAP_BITS_PER_KEY, 16 if bitmap_bytes else 0
    try:
        rng = np.random.default_rng(seed)
        space = 2000
        d = ConstantDictionary.build(range(space))
        universe = np.unique(rng.integers(0, space * space, 2 * sum(sizes) + 6000))
        rng.shuffle(universe)  # distinct keys in random order
        rel = RunRelation.keyed(EncodedRelation(d, 2, np.sort(universe[: sizes[0]]), None))
        taken = sizes[0]
        for n in sizes[1:]:
            new = np.sort(universe[taken : taken + n])
            taken += n
            assert not rel.contains_keys(new).any()
            rel = RunRelation.grown(rel, new, merge=False)
            assert len(rel) == taken and (rel.seen is not None) and rel.seen.exact == (bitmap_bytes > 0)
        held = universe[:taken]
        probe = np.concatenate([held, universe[taken : taken + 3000]])
        assert rel.contains_keys(probe).tolist() == [True] * taken + [False] * (len(probe) - taken)
        assert rel.keys.tolist() == sorted(held.tolist())
    finally:
        keysets.BITMAP_BYTES, keysets.BITMAP_BITS_PER_KEY = old, per_key
