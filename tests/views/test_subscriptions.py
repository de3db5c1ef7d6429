"""Transactions, versions and subscriptions through the Python API (seed 001's monitoring service)."""

from __future__ import annotations

import pytest

from nablog import Database
from nablog.lang import NablogError
from nablog.views.monitor import MODES
from nablog.views.subscriptions import SubscriptionClosed

GRAPH = """closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y).
lonely(X) :- node(X), not closure(X, _).
edge(f,e). edge(e,d). edge(e,a). edge(a,b). edge(d,c). edge(b,c). edge(c,g).
node(a). node(g). node(h).
"""


def drain(sub):
    out = []
    while True:
        try:
            out.append(sub.get(timeout=0))
        except (TimeoutError, SubscriptionClosed):
            return out


def replay(messages):
    answer = set()
    for m in messages:
        if "snapshot" in m:
            answer = {tuple(r) for r in m["snapshot"]}
        elif "plus" in m:
            assert not {tuple(r) for r in m["plus"]} & answer and {tuple(r) for r in m["minus"]} <= answer
            answer = (answer - {tuple(r) for r in m["minus"]}) | {tuple(r) for r in m["plus"]}
    return answer


@pytest.mark.parametrize("mode", MODES)
def test_example_2_as_a_subscription(mode):
    db = Database.from_text(GRAPH)
    sub = db.subscribe("closure(X, Y)", mode=mode)
    with db.transaction() as t:
        t.delete("edge(b, c)")
        t.insert("edge(h, d)")
    messages = drain(sub)
    assert [m["version"] for m in messages] == [0, 0, 1]
    assert messages[1] == {"version": 0, "snapshot_complete": True}
    assert messages[2] == {
        "version": 1,
        "plus": [["h", "c"], ["h", "d"], ["h", "g"]],
        "minus": [["a", "c"], ["a", "g"], ["b", "c"], ["b", "g"]],
    }


@pytest.mark.parametrize("mode", MODES)
def test_patterns_negation_and_sequences(mode):
    db = Database.from_text(GRAPH)
    pattern = db.subscribe("closure(h, Y)", mode=mode)
    lonely = db.subscribe("lonely(X)", mode=mode)
    assert drain(lonely)[0] == {"version": 0, "snapshot": [["g"], ["h"]]}
    drain(pattern)
    commits = [(["edge(h, d)"], []), ([], ["edge(d, c)"]), (["edge(g, h)"], ["edge(h, d)"]), ([], ["edge(g, h)"]), ([], [])]
    for insert, delete in commits:
        db.commit(insert, delete)
    got = drain(pattern)
    assert got == [
        {"version": 1, "plus": [["h", "c"], ["h", "d"], ["h", "g"]], "minus": []},
        {"version": 2, "plus": [], "minus": [["h", "c"], ["h", "g"]]},
        {"version": 3, "plus": [], "minus": [["h", "d"]]},
    ]
    assert [m["version"] for m in drain(lonely)] == [1, 3, 4]
    assert db.version == 5


def test_replayed_messages_equal_the_final_answer():
    db = Database.from_text(GRAPH)
    subs = {mode: db.subscribe("closure(X, Y)", mode=mode) for mode in MODES}
    for i, (ins, dele) in enumerate([("edge(g, f)", "edge(e, d)"), ("edge(c, a)", "edge(f, e)"), ("edge(f, e)", "edge(g, f)")]):
        db.commit([ins], [dele])
    final = set(db.query("closure(X, Y)"))
    for mode, sub in subs.items():
        assert replay(drain(sub)) == final, mode


def test_callback_and_apply_is_a_commit():
    db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1).")
    seen = []
    db.subscribe("p(X)", callback=seen.append)
    db.apply(db.propose("+p(1).")[0])
    assert seen[-1] == {"version": 1, "plus": [[1]], "minus": []}


def test_a_slow_subscriber_is_told_it_fell_behind():
    db = Database.from_text("e(1).")
    sub = db.subscribe("e(X)", buffer=3)
    for i in range(2, 6):
        db.commit([f"e({i})"])
    assert drain(sub) == [{"version": 2, "error": "fell behind", "hint": "subscribe again for a new snapshot"}]
    assert sub.closed
    db.commit(["e(9)"])  # the writer is never blocked


def test_commit_refuses_views_unknown_relations_and_variables():
    db = Database.from_text(GRAPH)
    with pytest.raises(NablogError, match="closure is a view"):
        db.commit(["closure(a, a)"])
    with pytest.raises(NablogError, match="unknown base relation edgee/2"):
        db.commit(["edgee(a, b)"])
    with pytest.raises(NablogError, match="not ground"):
        db.commit([], ["edge(a, X)"])
    with pytest.raises(NablogError, match="edge has arity 2"):
        db.commit(["edge(a)"])
    assert db.version == 0


def test_versions_continue_across_restarts(tmp_path):
    program = tmp_path / "graph.lp"
    program.write_text(GRAPH)
    db = Database.from_files(program)
    with db.transaction() as t:
        t.insert("edge(h, a)")
    assert t.version == 1 and "edge(h, a)." in program.read_text()
    again = Database.from_files(program)
    assert again.version == 1 and again.commit([], ["edge(h, a)"])[0] == 2


def test_a_commit_cannot_insert_and_delete_one_fact():
    db = Database.from_text(GRAPH)
    with pytest.raises(NablogError, match="both inserts and deletes edge"):
        db.commit(["edge(a, z)"], ["edge(a, z)"])


def test_a_failing_callback_does_not_fail_the_commit():
    db = Database.from_text("e(1).")

    def broken(message):
        if "plus" in message:
            raise RuntimeError("subscriber bug")

    sub = db.subscribe("e(X)", callback=broken)
    assert db.commit(["e(2)"])[0] == 1
    assert sub.closed and db.query("e(X)") == [(1,), (2,)]
