"""Encoded relations: extending a dictionary in place of re-encoding, and the small-change paths
of wide relations, checked against plain Python sets."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.strategies import examples

from nablog.engines import PythonEngine
from nablog.engines.dictionary import SEARCHED_SHARE
from nablog.engines.encoding import SCANNED_ROWS, ConstantDictionary, EncodedRelation, fits_in_key
from nablog.engines.algebra import FEW_ROWS, difference, union_disjoint
from nablog.lang import parse

constants = st.one_of(st.integers(-50, 50), st.text("abcXY", max_size=3))


@settings(max_examples=examples(200), deadline=None)
@given(st.sets(constants, max_size=30), st.sets(constants, max_size=10), st.integers(1, 3))
def test_an_extended_dictionary_encodes_like_one_built_from_scratch(old, new, arity):
    d = ConstantDictionary.build(old)
    extended, remap = d.extended(new)
    assert extended.values == ConstantDictionary.build(old | new).values
    assert [extended.values[remap[i]] for i in range(len(d))] == d.values
    values = sorted(old, key=repr)
    rows = {tuple(values[(i * 7 + j) % len(values)] for j in range(arity)) for i in range(len(values))} if values else set()
    moved = EncodedRelation.from_rows(d, rows, arity).remapped(extended, remap)
    fresh = EncodedRelation.from_rows(extended, rows, arity)
    assert list(moved) == list(fresh) and set(moved) == rows



@settings(max_examples=examples(100), deadline=None)
@given(st.sets(constants, max_size=30), st.lists(st.sets(constants, max_size=4), min_size=1, max_size=12), st.lists(constants, max_size=8))
def test_a_dictionary_extended_again_and_again_looks_up_like_one_rebuilt(old, additions, probes):
    # Extending carries the lookup table (ids through the id map, the added values listed) for
    # THROUGH_DEPTH extensions, then builds its own: every step gives the ids of a rebuild, for
    # values present and absent, and decodes through the carried objects array.
    d = ConstantDictionary.build(old)
    d.ids  # the lookup table of the first dictionary is built, as a model's is when read much
    d.decode_column(np.arange(len(d), dtype=np.int64))
    every = set(old)
    for new in additions:
        d, _ = d.extended(new)
        every |= new
        rebuilt = ConstantDictionary.build(every)
        assert d.values == rebuilt.values
        for v in list(every) + probes:
            assert d.id(v) == rebuilt.id(v), v
        assert d.decode_column(np.arange(len(d), dtype=np.int64)) == rebuilt.values
        rows = [(v,) for v in sorted(every, key=repr)][:3]
        assert d.encode_rows(rows, 1).ravel().tolist() == [rebuilt.id(r[0]) for r in rows]


def test_extending_a_large_dictionary_does_not_build_its_lookup_table_again():
    d = ConstantDictionary.build([f"c{i:04}" for i in range(1000)] + [f"x{i}" for i in range(10)])
    assert d.ids["c0005"] == 5
    e, _ = d.extended(["new1"])
    assert (e.id("new1"), e.id("c0005"), e.id("x0"), e.id("zzz")) == (1000, 5, 1001, None)
    assert e._ids is None  # answered through d's table and the id map


@settings(max_examples=examples(100), deadline=None)
@given(st.sets(constants, max_size=60), st.lists(constants, max_size=40))
def test_values_looked_up_one_at_a_time_are_searched_then_hashed(values, probes):
    # The first len/SEARCHED_SHARE lookups search the sorted values (no table of ids built: a
    # request asking about a few constants of a large state), later ones build the table; both
    # answer as the table does, for values present and absent.
    d = ConstantDictionary.build(values)
    table = dict(zip(d.values, range(len(d))))
    for i, v in enumerate(probes + list(values)):
        assert d.id(v) == table.get(v), v
        assert (d._ids is None) == (i * SEARCHED_SHARE < len(d)), i


def test_a_few_lookups_in_a_large_dictionary_build_no_table():
    d = ConstantDictionary.build(list(range(500)) + [f"s{i}" for i in range(500)])
    assert [d.id(v) for v in (0, 499, "s0", "s99", 500, "t", -1)] == [0, 499, 500, 999, None, None, None]
    assert d._ids is None


# 12 columns over 100 constants do not pack into one key: rows are kept as sorted id rows.
WIDE = 12
wide_rows = st.lists(st.integers(0, 3), min_size=WIDE, max_size=WIDE).map(lambda r: tuple(r[:-1]) + (r[-1] * 25,))


@settings(max_examples=examples(60), deadline=None)
@given(st.sets(wide_rows, min_size=FEW_ROWS + 1, max_size=150), st.sets(wide_rows, max_size=FEW_ROWS))
def test_few_rows_added_to_or_removed_from_a_wide_relation_keep_it_sorted(many, few):
    d = ConstantDictionary.build(range(100))
    assert not fits_in_key(len(d), WIDE)
    big = EncodedRelation.from_rows(d, many, WIDE)
    small = EncodedRelation.from_rows(d, few, WIDE)
    expected = {
        "big - small": many - few,
        "small - big": few - many,
        "big + small": many | few,
    }
    got = {
        "big - small": difference(big, small),
        "small - big": difference(small, big),
        "big + small": union_disjoint(big, difference(small, big)),
    }
    for name, rel in got.items():
        rebuilt = EncodedRelation.from_rows(d, expected[name], WIDE)
        assert set(rel) == expected[name], name
        assert np.array_equal(np.stack(rel.columns(), 1), np.stack(rebuilt.columns(), 1)), name


@settings(max_examples=examples(30), deadline=None)
@given(st.sets(wide_rows, min_size=SCANNED_ROWS + 1, max_size=SCANNED_ROWS + 60), st.lists(wide_rows, max_size=40))
def test_membership_in_a_large_wide_relation_equals_the_set_of_its_rows(rows, probes):
    # Past SCANNED_ROWS an unpacked relation answers by binary search over a sorted copy of its
    # rows (OpenFlights' routes: a scan per probe cost 10 s of a proposal, issue 31).
    d = ConstantDictionary.build(range(100))
    rel = EncodedRelation.from_rows(d, rows, WIDE)
    assert not rel.packed
    for probe in [*probes, *list(rows)[:20], (101,) * WIDE, (0,) * (WIDE - 1)]:
        assert (probe in rel) == (probe in rows), probe


def test_an_update_with_a_new_constant_moves_a_wide_model_to_the_extended_dictionary():
    program = parse("big(A, B, C, D, E, F, G) :- t(A, B, C, D, E, F, G), A > 2.")
    rows = {(i, i + 1, i + 2, f"c{i}", f"d{i}", i * 3, f"g{i}") for i in range(300)}
    engine = PythonEngine()
    model = engine.evaluate(program, {"t": rows})
    new = (5, 6, 7, "new", "d5", 15, "g5")
    after = engine.update(program, model, insert={"t": {new}}, delete={"t": {(4, 5, 6, "c4", "d4", 12, "g4")}})
    expected = (rows | {new}) - {(4, 5, 6, "c4", "d4", 12, "g4")}
    assert set(after["t"]) == expected
    assert set(after["big"]) == {r for r in expected if r[0] > 2}
    assert after["t"].dictionary is not model["t"].dictionary and "new" in after["t"].dictionary.ids


def test_select_scans_the_bound_columns():
    d = ConstantDictionary.build([1, 2, "a", "b"])
    rel = EncodedRelation.from_rows(d, {(1, "a", 2), (1, "b", 2), (2, "a", 1)}, 3)
    assert rel.select((1, None, 2)) == [(1, "a", 2), (1, "b", 2)]
    assert rel.select((None, "a", None)) == [(1, "a", 2), (2, "a", 1)]
    assert rel.select(("zzz", None, None)) == []


@settings(max_examples=examples(100), deadline=None)
@given(st.sets(st.tuples(constants, constants), max_size=30), st.sets(st.integers(-1000, 1000), max_size=5))
def test_a_relation_rekeyed_lazily_to_grown_dictionaries_keeps_its_tuples_and_indexes(rows, computed):
    from nablog.engines.rekey import Rekeyed, rekeyed

    d = ConstantDictionary.build(v for row in rows for v in row)
    rel = EncodedRelation.from_rows(d, rows, 2)
    # An index on the second column, as the python engine keeps it (sorted keys, order, columns, starts).
    cols = rel.columns()
    order = np.argsort(cols[1], kind="stable")
    rel.indexes[((1,), (), ())] = (cols[1][order], order, cols, None)
    missing = np.array(sorted(set(computed) - set(d.values)), dtype=np.int64)
    e, remap = d.extended_ints(missing)
    f, remap2 = e.extended_ints(np.array([10**6], dtype=np.int64))  # a second growth, composed
    moved = rekeyed(rekeyed(rel, e, remap), f, remap2)
    assert isinstance(moved, Rekeyed) and len(moved) == len(rows)
    assert set(moved) == rows and set(f.decode_column(np.arange(len(f)))) == set(d.values) | set(computed) | {10**6}
    keys, order, cols, _ = moved.indexes[((1,), (), ())]
    assert (np.diff(keys) >= 0).all() and keys.tolist() == cols[1][order].tolist()
    assert sorted(zip(*(f.decode_column(c) for c in cols)), key=repr) == sorted(rows, key=repr)


# -- strings numbered in bulk (issue 29) ----------------------------------------------------------

from hypothesis import HealthCheck  # noqa: E402

from nablog.engines.dictionary import STR_ROWS, str_array  # noqa: E402

_TEXTS = st.one_of(st.sampled_from(["", "a", "B", "é", "\U0001f600", "a\x00b", "10", "ß", "Z"]), st.text(max_size=3))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sets(st.one_of(st.integers(-5, 5), _TEXTS), max_size=6), st.lists(st.lists(_TEXTS, max_size=8), max_size=3), st.lists(st.lists(st.integers(-3, 9), max_size=5), max_size=2))
def test_strings_numbered_by_pyarrow_as_one_at_a_time(constants, texts, ints):
    # The oracle: the dictionary of every value built one Python object at a time.
    arrays = [str_array(t) for t in texts]
    if any(a is None for a in arrays):  # a lone surrogate: not UTF-8, numbered one at a time
        return
    d, ids = ConstantDictionary.encoding(constants, [np.array(i, dtype=np.int64) for i in ints], arrays)
    oracle = ConstantDictionary.build(set(constants).union(*texts, *ints))
    assert d.values == oracle.values
    assert [i.tolist() for i in ids] == [[oracle.id(v) for v in values] for values in ints + texts]


def test_a_model_of_string_rows_numbered_in_bulk_equals_the_one_of_plain_rows():
    rows = {(f"e{i}", f"d{i % 7}") for i in range(STR_ROWS)}
    program = parse("m(E, H) :- ed(E, D), dh(D, H).")
    facts = {"ed": rows, "dh": {(f"d{k}", k) for k in range(7)}}
    bulk = PythonEngine().evaluate(program, facts)
    assert set(bulk["m"]) == {(e, int(d[1:])) for e, d in rows}
    assert set(bulk["ed"]) == rows
