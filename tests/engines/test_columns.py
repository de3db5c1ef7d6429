"""Relations given as columns (engines/columns.py): every engine reads them as the set of tuples
they hold, and the python engine's bulk encoding of integer columns gives the same model."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.strategies import examples

from nablog.engines import get_engine
from nablog.engines.columns import Columns
from nablog.engines.encoding import decode_facts
from nablog.lang import parse

from ..strategies import base_facts, stratified_programs


def as_columns(rows: set[tuple], arity: int, form: str, repeat: bool) -> Columns:
    """``rows`` as columns: int64 numpy or pyarrow arrays where a column holds only integers,
    object arrays otherwise; with ``repeat`` the first row is given twice."""
    listed = sorted(rows, key=repr)
    if repeat and listed:
        listed.append(listed[0])
    columns = []
    for i in range(arity):
        values = [row[i] for row in listed]
        if all(type(v) is int for v in values):
            columns.append(pa.array(values, type=pa.int64()) if form == "arrow" else np.array(values, dtype=np.int64))
        else:
            columns.append(np.array(values, dtype=object))
    return Columns(columns)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs(), base_facts(), st.sampled_from(["numpy", "arrow"]), st.booleans())
def test_columns_give_the_model_of_their_tuples(program, facts, form, repeat):
    given_as_columns = {p: as_columns(rows, len(next(iter(rows))), form, repeat) if rows and len(next(iter(rows))) else rows for p, rows in facts.items()}
    expected = decode_facts(get_engine("python").evaluate(program, facts))
    assert decode_facts(get_engine("python").evaluate(program, given_as_columns)) == expected
    assert decode_facts(get_engine("clingo").evaluate(program, given_as_columns)) == expected


TC = parse("tc(X,Y) :- e(X,Y). tc(X,Y) :- e(X,Z), tc(Z,Y).")


def test_integer_columns_are_encoded_in_bulk_and_read_as_a_set():
    edges = Columns([np.array([1, 2, 1, 3]), pa.chunked_array([[2, 3], [2, 4]])])
    assert edges.arity == 2 and len(edges) == 3 and (1, 2) in edges and (2, 1) not in edges
    assert edges.int_columns() is not None
    model = get_engine("python").evaluate(TC, {"e": edges})
    assert sorted(model["tc"]) == [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
    assert sorted(model["e"]) == [(1, 2), (2, 3), (3, 4)]


def test_strings_and_integers_beyond_64_bits_are_read_value_by_value():
    big = np.array([2**63, 1], dtype=np.uint64)
    assert Columns([big]).int_columns() is None
    model = get_engine("python").evaluate(TC, {"e": Columns([np.array(["a", "b"]), np.array([2**64 - 1, 7], dtype=np.uint64)])})
    assert sorted(model["tc"], key=repr) == [("a", 2**64 - 1), ("b", 7)]


def test_bad_columns_are_refused_clearly():
    with pytest.raises(ValueError, match="equally long"):
        Columns([np.array([1, 2]), np.array([1])])
    with pytest.raises(ValueError, match="at least one column"):
        Columns([])
    with pytest.raises(TypeError, match="not a nablog constant: 1.5"):
        get_engine("python").evaluate(TC, {"e": Columns([np.array([1.5]), np.array([2])])})


def test_commits_to_a_database_built_from_columns_keep_facts_and_model_in_step():
    # Found by review: ``rows -= dele`` on a read-only Columns rebound a local name and the
    # commit's change to the facts was lost while the model took it.
    from nablog import Database

    db = Database.from_text("p(X) :- e(X, Y). #base e/2.", {"e": Columns([np.array([1, 2]), np.array([5, 6])])})
    db.commit(insert=["e(3, 7)"])
    assert set(db.facts["e"]) == {(1, 5), (2, 6), (3, 7)}
    db.commit(delete=["e(1, 5)"])
    db.commit(insert=["e(1, 5)"], delete=["e(3, 7)"])
    assert set(db.facts["e"]) == {(1, 5), (2, 6)}
    assert set(db.model()["p"]) == {(1,), (2,)}
