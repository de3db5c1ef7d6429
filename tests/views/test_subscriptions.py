"""Transactions, versions and subscriptions through the Python API (seed 001's monitoring service)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nablog import Database
from nablog.lang import NablogError, Var
from nablog.views.monitor import MODES
from nablog.views.subscriptions import SubscriptionClosed
from tests.strategies import DERIVED, base_facts, examples, stratified_programs

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


def test_subscribers_of_one_query_share_its_snapshot_and_each_gets_its_messages():
    """Two subscribers of one query at one version get the same snapshot object (computed once);
    a later commit still reaches each, and a subscriber after it gets the new answer."""
    db = Database.from_text("\n".join(line for line in GRAPH.splitlines() if not line.startswith(("lonely", "node"))))
    first, second = db.subscribe("closure(e, Y)"), db.subscribe("closure(e, Y)")
    one, two = first.get(timeout=0), second.get(timeout=0)
    assert one["snapshot"] is two["snapshot"]
    assert one == {"version": 0, "snapshot": [["e", "a"], ["e", "b"], ["e", "c"], ["e", "d"], ["e", "g"]]}
    db.commit(["edge(g, h)"])
    for sub in (first, second):
        assert drain(sub) == [{"version": 0, "snapshot_complete": True}, {"version": 1, "plus": [["e", "h"]], "minus": []}]
    third = db.subscribe("closure(e, Y)")
    assert third.get(timeout=0)["snapshot"] == [["e", "a"], ["e", "b"], ["e", "c"], ["e", "d"], ["e", "g"], ["e", "h"]]
    assert db.state._pending[0] == {"edge": {("g", "h")}}  # read from the monitor's kept closure: the model is not caught up


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


@settings(max_examples=examples(10), deadline=None)
@given(stratified_programs(), base_facts(), st.sampled_from(MODES), st.lists(st.tuples(base_facts(max_rows=3), base_facts(max_rows=3)), min_size=1, max_size=4))
def test_commits_with_a_subscriber_keep_answers_and_model_exact(program, facts, mode, commits):
    """Monitors keep their own state between commits and the database maintains its model only
    when read: after every commit each subscriber's replayed messages, the induced update and the
    model all equal recomputation (python engine) from the current facts."""
    from nablog.engines import PythonEngine
    from nablog.lang import Atom, Delta, parse

    db = Database(program + parse("#base e/2. #base f/1. #base g/0."), {p: set(r) for p, r in facts.items()})
    subs = {v: db.subscribe(Atom(v, tuple(Var(f"V{i}") for i in range(n))), mode=mode) for v, n in DERIVED}
    messages = {v: [] for v in subs}
    engine = PythonEngine()
    before = engine.evaluate(db.rules, {p: set(r) for p, r in db.facts.items()})
    for k, (insert, delete) in enumerate(commits):
        atoms = lambda rows: frozenset(Atom(p, r) for p, rs in rows.items() for r in rs)  # noqa: E731
        version, update = db.commit(Delta(atoms(insert) - atoms(delete), atoms(delete)))
        assert version == k + 1
        after = engine.evaluate(db.rules, {p: set(r) for p, r in db.facts.items()})
        for v, _ in DERIVED:
            assert {a.args for a in update.insert if a.pred == v} == set(after[v]) - set(before[v]), v
            assert {a.args for a in update.delete if a.pred == v} == set(before[v]) - set(after[v]), v
        if k % 2:  # reading the model catches it up; the next commits continue from it
            assert {p: set(db.model()[p]) for p, _ in DERIVED} == {p: set(after[p]) for p, _ in DERIVED}
        before = after
    for v, sub in subs.items():
        assert replay(drain(sub)) == set(before[v]), v
    assert {p: set(db.model()[p]) for p, _ in DERIVED} == {p: set(before[p]) for p, _ in DERIVED}


def test_a_dropped_database_frees_its_subscriptions_state():
    """Subscribing must not pin the process heap (gc.freeze is for `nablog serve` only): a dropped
    database's hub and monitors, kept state included, are collected."""
    import gc
    import weakref

    db = Database.from_text("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y). edge(a,b). edge(b,c).")
    sub = db.subscribe("closure(X, Y)")
    hub = weakref.ref(db.state.hub)
    del db, sub
    gc.collect()
    assert hub() is None
