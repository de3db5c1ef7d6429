"""The python and clingo engines compute the same perfect model on generated stratified programs."""

import pytest
from hypothesis import HealthCheck, given, settings
from tests.strategies import examples

from nablog.engines import get_engine
from nablog.engines.encoding import decode_facts

from ..strategies import base_facts, stratified_programs


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs(), base_facts())
def test_python_agrees_with_clingo(program, facts):
    expected = get_engine("clingo").evaluate(program, facts)
    assert decode_facts(get_engine("python").evaluate(program, facts)) == decode_facts(expected)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs(), base_facts(), base_facts(max_rows=3), base_facts(max_rows=3))
def test_update_from_a_model_equals_evaluation_from_scratch(program, facts, insert, delete):
    engine = get_engine("python")
    before = engine.evaluate(program, facts)
    after, gained, lost = engine.update(program, before, insert=insert, delete=delete, changes=True)
    new_facts = {p: (facts[p] - delete.get(p, set())) | (insert.get(p, set()) - delete.get(p, set())) for p in facts}
    expected = decode_facts(engine.evaluate(program, new_facts))
    assert decode_facts(after) == expected
    # The reported changes are exactly the induced update (seed 002, Def. 2).
    old = decode_facts(before)
    for pred in set(expected) | set(old):
        assert set(gained.get(pred, ())) == expected.get(pred, set()) - old.get(pred, set()), pred
        assert set(lost.get(pred, ())) == old.get(pred, set()) - expected.get(pred, set()), pred


@pytest.mark.spark
@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs(), base_facts(max_rows=5))
def test_spark_agrees_with_python_and_clingo(spark_engine, program, facts):
    expected = decode_facts(get_engine("python").evaluate(program, facts))
    assert decode_facts(get_engine("clingo").evaluate(program, facts)) == expected
    assert decode_facts(spark_engine.evaluate(program, facts)) == expected


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(stratified_programs(), base_facts(), base_facts(max_rows=3), base_facts(max_rows=3))
def test_update_with_patched_relations_and_chunked_joins_everywhere(monkeypatch, program, facts, insert, delete):
    # Patching starts at 50,000 tuples and joins are chunked at 2 million rows; force both so
    # that those paths run on small data.
    import nablog.engines.algebra as algebra
    import nablog.engines.evaluator as evaluator

    monkeypatch.setattr(algebra, "PATCH_MIN", 0)
    monkeypatch.setattr(algebra, "PATCH_RATIO", 1)
    monkeypatch.setattr(evaluator, "CHUNK_ROWS", 2)
    test_update_from_a_model_equals_evaluation_from_scratch.hypothesis.inner_test(program, facts, insert, delete)


@pytest.mark.parametrize("bitmap_bytes", [0, 1 << 22], ids=["bloom-filter", "bitmap"])
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(stratified_programs(), base_facts(), base_facts(max_rows=3), base_facts(max_rows=3))
def test_key_sets_and_binary_searches_everywhere(monkeypatch, bitmap_bytes, program, facts, insert, delete):
    # Fixpoints deduplicate by key sets from round 4 on relations of 65,536 tuples, in batches of
    # 2 M keys, and joins on one column read id_starts when the dictionary is small: force key
    # sets (bitmap or Bloom filter) from the first round, tiny batches, and binary searches for
    # every join, on small data.
    import nablog.engines.evaluator as evaluator
    import nablog.engines.joins as joins
    import nablog.engines.keysets as keysets

    monkeypatch.setattr(evaluator, "HASH_ROUND", 1)
    monkeypatch.setattr(evaluator, "HASH_MIN", 0)
    monkeypatch.setattr(joins, "STARTS_MIN", -(10**9))
    monkeypatch.setattr(evaluator, "DEDUP_KEYS", 3)  # heads deduplicated (and new ones compacted) every 3 keys
    monkeypatch.setattr(keysets, "BITMAP_BYTES", bitmap_bytes)
    monkeypatch.setattr(keysets, "BITMAP_BITS_PER_KEY", 16 if bitmap_bytes else 0)
    test_python_agrees_with_clingo.hypothesis.inner_test(program, facts)
    test_update_from_a_model_equals_evaluation_from_scratch.hypothesis.inner_test(program, facts, insert, delete)
