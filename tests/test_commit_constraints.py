"""Constraints hold at every commit (issue 24, fault 1): through the Python API, over HTTP (409)
and on the command line; an inconsistent database accepts commits that add no violation."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nablog import Database
from nablog.lang import ConstraintError

LOOPS = """closure(X, Y) :- edge(X, Y).
closure(X, Y) :- edge(X, Z), closure(Z, Y).
#constraint no_self_loop :- edge(X, X).
#constraint acyclic :- closure(X, X).
edge(a, b). edge(b, c).
"""


def test_a_commit_adding_a_violation_is_refused_naming_constraint_and_witnesses(tmp_path):
    (tmp_path / "g.lp").write_text(LOOPS)
    db = Database.from_files(tmp_path / "g.lp")
    with pytest.raises(ConstraintError) as info:
        db.commit(["edge(c, c)", "edge(c, a)"])
    assert [(v.constraint, v.count) for v in info.value.violations] == [("no_self_loop", 1), ("acyclic", 3)]
    assert [str(a) for a in info.value.violations[0].witnesses[0]] == ["edge(c, c)"]
    assert "no_self_loop (1 new instance: edge(c, c))" in str(info.value)
    assert (tmp_path / "g.lp").read_text() == LOOPS and db.version == 0 and not (tmp_path / ".nablog" / "history.json").exists()
    assert db.query("edge(X, Y)") == [("a", "b"), ("b", "c")]
    assert db.commit(["edge(c, d)"])[0] == 1
    with pytest.raises(ConstraintError):
        with db.transaction() as t:
            t.insert("edge(d, a)")
    assert Database.from_files(tmp_path / "g.lp").violations() == []


def test_an_inconsistent_database_accepts_a_commit_adding_no_violation():
    db = Database.from_text(LOOPS + "edge(z, z).")
    assert [v.constraint for v in db.violations()] == ["no_self_loop", "acyclic"]
    assert db.commit(["edge(c, d)"], ["edge(a, b)"])[0] == 1
    assert [(v.constraint, v.count) for v in db.violations()] == [("no_self_loop", 1), ("acyclic", 1)]
    with pytest.raises(ConstraintError) as info:
        db.commit(["edge(y, y)"])
    assert [str(w[0]) for v in info.value.violations for w in v.witnesses] == ["edge(y, y)", "closure(y, y)"]
    assert db.commit([], ["edge(z, z)"])[0] == 2 and db.violations() == []


def test_requirements_and_aggregate_denials_count_only_new_failures():
    db = Database.from_text("e(1). e(2). ok :- e(1).\n#require ok.\n#constraint few :- #count{X : e(X)} > 2.")
    with pytest.raises(ConstraintError, match="ok"):
        db.commit([], ["e(1)"])
    with pytest.raises(ConstraintError, match="few"):
        db.commit(["e(3)"])
    assert db.commit(["e(3)"], ["e(2)"])[0] == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from("abc"), st.sampled_from("abc")), max_size=8))
def test_a_commit_is_accepted_exactly_when_it_adds_no_violated_instance(changes):
    """Oracle: the violated instances of the state after, found from scratch, against before."""
    db = Database.from_text(LOOPS)
    for insert, x, y in changes:
        atom = f"edge({x}, {y})"
        before = {(v.constraint, w) for v in db.violations() for w in v.witnesses}
        after_db = Database.from_text(LOOPS)
        after_db.state.facts = {"edge": (set(db.facts["edge"]) | {(x, y)}) if insert else (set(db.facts["edge"]) - {(x, y)})}
        after = {(v.constraint, w) for v in after_db.violations() for w in v.witnesses}
        try:
            db.commit([atom] if insert else [], [] if insert else [atom])
            assert after <= before
        except ConstraintError as e:
            assert not after <= before
            assert {(v.constraint, w) for v in e.violations for w in v.witnesses} == after - before


def test_a_transaction_breaking_a_constraint_gets_409_over_http(tmp_path):
    from tests.server.test_server import Served

    (tmp_path / "graph.lp").write_text(LOOPS)
    server = Served(tmp_path)
    try:
        request = urllib.request.Request(
            server.url + "/transactions",
            data=json.dumps({"insert": ["edge(b, b)", "edge(c, a)"]}).encode(),
            headers={"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=30)
        assert info.value.code == 409
        body = json.loads(info.value.read())
        assert body["error"].startswith("error: the change would violate no_self_loop")
        assert body["violations"][0] == {"constraint": "no_self_loop", "count": 1, "witnesses": [["edge(b, b)"]]}
        assert body["violations"][1]["constraint"] == "acyclic"
        client = server.client()
        assert client.version() == 0 and len(client.query("edge(X, Y)")) == 2
        assert client.commit(insert=["edge(c, d)"]) == 1
    finally:
        server.stop()
    assert Database.from_files(tmp_path / "graph.lp").violations() == []
