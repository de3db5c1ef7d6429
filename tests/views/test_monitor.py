"""Seed 001: maintenance rules, RoD and the layered procedure give the differentials of recomputation."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

import nablog.views.monitor as monitor_room

from nablog.engines import PythonEngine
from nablog.lang import Delta, parse
from nablog.transforms.maintenance import maintenance_rules
from nablog.transforms.rod import rod
from nablog.views.live import LivePlan, Relation
from nablog.views.monitor import MODES, Monitor, true_changes
from tests.strategies import DERIVED, base_facts, examples, stratified_programs

CLOSURE_TEXT = "closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y)."
CLOSURE = parse(CLOSURE_TEXT)
# Figure 2 (a) of seed 001, with a small independent subgraph G0 (nodes 1..4) standing for edge0.
G0 = {(1, 2), (2, 3), (3, 4)}
FIGURE_2 = {("f", "e"), ("e", "d"), ("e", "a"), ("a", "b"), ("d", "c"), ("b", "c"), ("c", "g")} | G0


def commit_of(insert, delete) -> Delta:
    """The delta of a commit inserting and deleting these rows per relation (a row in both is
    deleted: a delta holds no row both ways)."""
    delete = {p: set(map(tuple, rows)) for p, rows in delete.items()}
    return Delta.of_rows({p: set(map(tuple, rows)) - delete.get(p, set()) for p, rows in insert.items()}, delete)


def test_example_2_layers_and_result_materialized():
    """Example 2: the maintenance rules over the materialized closure; G0's closure is untouched."""
    monitor = Monitor(CLOSURE, ["closure"], "materialized")
    plus, minus = monitor.differentials({"edge": FIGURE_2}, Delta.parse("+edge(h, d). -edge(b, c).")).rows("closure")
    assert plus == {("h", "d"), ("h", "c"), ("h", "g")}
    assert minus == {("a", "c"), ("a", "g"), ("b", "c"), ("b", "g")}


def test_example_4_rod_rederives_only_the_relevant_part():
    """Example 4: RoD rederives the part of closure around the change, not G0's closure."""
    monitor = Monitor(CLOSURE, ["closure"], "rod")
    assert monitor._plans is not None  # evaluated over the kept base relations (views/live.py)
    seen = {}
    run = monitor._query_plan.run

    def spy(env, **options):  # Q's state, continued in place by resume until the commit ends
        seen.update(out := run(env, **options))
        return out

    monitor._query_plan.run = spy
    change = monitor.differentials({"edge": FIGURE_2}, Delta.parse("+edge(h, d). -edge(b, c)."))
    assert change.lines() == ["+closure(h, c)", "+closure(h, d)", "+closure(h, g)", "-closure(a, c)", "-closure(a, g)", "-closure(b, c)", "-closure(b, g)"]
    answers = {row for pred, rows in seen.items() if pred.startswith("a_") and pred.endswith("__closure") for row in rows}
    assert answers and not any(x in (1, 2, 3) for x, _ in answers)


def test_rod_past_its_budget_recomputes_the_same_differentials():
    """Example 4 with rod's budget at 3 rows: the commit stops rederiving and recomputes (both
    models by the column engine), with the same answer; the model's size is learnt from it."""
    facts = {"edge": FIGURE_2}
    monitor = Monitor(CLOSURE, ["closure"], "rod")
    monitor.warm(facts, PythonEngine().evaluate(CLOSURE, facts), 0)
    assert monitor._rod_rows == len(PythonEngine().evaluate(CLOSURE, facts)["closure"]) == 25
    recomputed = []
    with patch.object(monitor_room, "ROD_SHARE", 10**9), patch.object(monitor_room, "ROD_FLOOR", 3), \
            patch.object(Monitor, "_recomputed", lambda self, *a, _r=Monitor._recomputed: recomputed.append(1) or _r(self, *a)):
        change = monitor.differentials(facts, Delta.parse("+edge(h, d). -edge(b, c)."), version=0)
    assert recomputed == [1]
    assert change.lines() == ["+closure(h, c)", "+closure(h, d)", "+closure(h, g)", "-closure(a, c)", "-closure(a, g)", "-closure(b, c)", "-closure(b, g)"]
    assert monitor._rod_rows == 25 + 3 - 4
    # The kept base relations followed the commit: the next one (in budget) undoes it exactly.
    after = {"edge": (FIGURE_2 - {("b", "c")}) | {("h", "d")}}
    assert monitor.differentials(after, Delta.parse("-edge(h, d). +edge(b, c)."), version=1) == change.inverse()


def test_negation_layers():
    """§4.2: an insertion into a negated relation deletes from the view, a deletion inserts."""
    rules = parse("reach(X,Y) :- e(X,Y). reach(X,Y) :- e(X,Z), reach(Z,Y). cut(X) :- n(X), not reach(a, X).")
    facts = {"e": {("a", "b")}, "n": {("b",), ("c",)}}
    for mode in MODES:
        change = Monitor(rules, ["cut"], mode).differentials(facts, Delta.parse("+e(b, c). +e(a, c). -e(a, b).")).rows("cut")
        assert (mode, *change) == (mode, {("b",)}, {("c",)})


def test_rod_program_asks_like_figure_3():
    text = str(rod(CLOSURE))
    assert "m_bf__closure(Z) :- del__edge(X, Z)." in text
    assert "m_bb__closure(X, Y) :- ins__closure(X, Y)." in text
    assert "m_bf__closure(Z) :- ins__edge(X, Z)." in text


def test_maintenance_rules_for_negation():
    rules = maintenance_rules(parse("p(X) :- q(X), not r(X)."))
    assert "del__p(X) :- q(X), ins__r(X)." in str(rules)
    assert "ins__p(X) :- new__q(X), del__r(X)." in str(rules)
    assert "red__p(X) :- del__p(X), new__q(X), not new__r(X)." in str(rules)


def test_insertions_already_in_the_closure_derive_nothing_further():
    """(Iᵢ) with only_new: an edge inserted into a cycle (whose closure has every pair) gives
    no ins__closure tuple (all are old), where Algorithm 1 as written derives anc(0) x desc(3),
    36; both give no net change."""
    from nablog.engines import PythonEngine
    from nablog.views.live import LivePlan, Relation

    edges = {(i, (i + 1) % 6) for i in range(6)}
    closure = set(PythonEngine().evaluate(CLOSURE, {"edge": edges})["closure"])
    sizes = {}
    for only_new in (False, True):
        env = LivePlan(maintenance_rules(CLOSURE, only_new=only_new)).run(
            {"edge": Relation(edges), "closure": Relation(closure), "ins__edge": Relation({(0, 3)})}
        )
        assert not len(env["plus__closure"]) and not len(env["minus__closure"])
        sizes[only_new] = len(env["ins__closure"])
    assert sizes == {False: 36, True: 0}


def test_tied_join_orders_are_both_planned_and_the_smaller_relation_probed_first():
    """(R) red__closure(X,Y) :- del__closure(X,Y), new__edge(X,Z), new__closure(Z,Y): from
    new__closure(Z,Y), del__closure (shares Y) and new__edge (shares Z) tie; with del__closure
    big, the order probing new__edge first is chosen."""
    from nablog.views.live import LivePlan, Relation, cheapest

    plan = LivePlan(maintenance_rules(CLOSURE))
    (starts, _), = [r for heads, rules in plan.strata for r in rules if r[1][0].pred == "red__closure" and len(r[1][0].positives) == 3]
    orders = [o for o in starts if o[0].steps[0][1] == "new__closure"][0]
    assert sorted(o.positives for o in orders) == [("new__closure", "del__closure", "new__edge"), ("new__closure", "new__edge", "del__closure")]
    env = {"del__closure": Relation({(x, y) for x in range(30) for y in range(30)}), "new__edge": Relation({(1, 2)})}
    assert cheapest(orders, env).positives == ("new__closure", "new__edge", "del__closure")


def _deleted(monitor, facts, delete):
    """``del__`` of the monitor's first layer for one deletion, over its kept state at version 0."""
    from nablog.views.live import Relation

    monitor.warm(facts, facts, 0)
    state, (layer, compiled) = monitor._live[1], monitor.layers[0]
    env = {**{p: state[p] for p in monitor._inputs[0] if p in state}, **{"del__" + p: Relation(rows) for p, rows in delete.items()}}
    return monitor._run_layer(monitor._plans[0], monitor._deletions[0], env)


def test_a_cycle_cut_off_from_its_start_is_deleted_whole():
    """reach(a) has a second derivation, reach(c), edge(c, a), through the cycle a -> b -> c -> a
    it starts: deleting start(a), every tuple's only other support goes through itself. A check
    against the old state minus the tuples deleted so far would keep reach(a) by reach(c) (not yet
    deleted) and never delete the cycle; the levels make it deleted whole, and nothing else."""
    program = parse("reach(X) :- start(X). reach(Y) :- reach(X), edge(X, Y).")
    facts = {"start": {("a",), ("z",)}, "edge": {("a", "b"), ("b", "c"), ("c", "a"), ("z", "y")}}
    model = PythonEngine().evaluate(program, facts)
    for version in (None, 0):
        change = Monitor(program, ["reach"], "materialized").differentials(facts, Delta.parse("-start(a)."), model=model, version=version)
        assert change.lines() == ["-reach(a)", "-reach(b)", "-reach(c)"]
    assert sorted(_deleted(Monitor(program, ["reach"], "materialized"), {**facts, **model}, {"start": {("a",)}})["del__reach"]) == [("a",), ("b",), ("c",)]


def test_a_deleted_cycle_edge_deletes_only_what_it_cut():
    """The closure of the cycle a -> b -> c -> a (all 9 pairs) without edge (c, a): the 6 pairs
    ending in a or leaving c or b towards b/a are deleted and nothing else is, where (Dᵢ) as
    written delete all 9 and (R) rederives 3; (a, b), (b, c) and (a, c) are checked and stay."""
    facts = {"edge": {("a", "b"), ("b", "c"), ("c", "a")}}
    model = PythonEngine().evaluate(CLOSURE, facts)
    monitor = Monitor(CLOSURE, ["closure"], "materialized")
    env = _deleted(monitor, {**facts, **model}, {"edge": {("c", "a")}})
    gone = [("a", "a"), ("b", "a"), ("b", "b"), ("c", "a"), ("c", "b"), ("c", "c")]
    assert sorted(env["del__closure"]) == sorted(env["minus__closure"]) == gone
    assert not len(env["red__closure"]) and not len(env["plus__closure"])
    written = LivePlan(maintenance_rules(CLOSURE)).run({**{p: Relation(rows) for p, rows in {**facts, **model}.items()}, "del__edge": Relation({("c", "a")})})
    assert len(written["del__closure"]) == 9 and len(written["red__closure"]) == 3


def test_a_check_that_scans_its_own_relation():
    """(R) red__r(X) :- del__r(X), new__t(X), new__r(Y) reads new__r with nothing bound: the
    check scans the tuples below the candidate's level (found by the property test)."""
    program = parse("r(X) :- s(X). r(X) :- t(X), r(Y).")
    for start, gone in (({("a",)}, ["-r(a)", "-r(b)"]), ({("a",), ("c",)}, ["-r(a)"])):
        facts = {"s": start, "t": {("b",)}}
        change = Monitor(program, ["r"], "materialized").differentials(facts, Delta.parse("-s(a)."), version=0)
        assert change.lines() == gone


def test_levels_follow_the_commits():
    """A stream of numbered deletes and inserts on a cyclic graph: each commit's differentials
    equal recomputation's, the rederived and inserted tuples getting levels above every other."""
    import random

    rng = random.Random(7)
    nodes = range(8)
    edges = {(a, b) for a in nodes for b in nodes if a != b and rng.random() < 0.25}
    engine = PythonEngine()
    monitor = Monitor(CLOSURE, ["closure"], "materialized")
    for version in range(40):
        model = engine.evaluate(CLOSURE, {"edge": edges})
        edge = (rng.choice(nodes), rng.choice(nodes))
        insert, delete = ({"edge": {edge}}, {}) if edge not in edges else ({}, {"edge": {edge}})
        got = monitor.differentials({"edge": edges}, commit_of(insert, delete), model=model if version == 0 else None, version=version)
        edges = (edges | insert.get("edge", set())) - delete.get("edge", set())
        new = set(engine.evaluate(CLOSURE, {"edge": edges})["closure"])
        assert got.rows("closure") == (frozenset(new - set(model["closure"])), frozenset(set(model["closure"]) - new))
        assert set(monitor._levels["closure"]) == new


def test_the_kept_state_from_the_engine_rounds_equals_the_tuple_at_a_time_build():
    """Built from one column-engine evaluation, a recursive layer's kept relation holds the rows
    of the tuple-at-a-time build, each at LEVEL_GAP times its BFS distance less one (the round
    that first derives it), with the index its join orders probe; commits then agree."""
    from nablog.views.deletions import LEVEL_GAP
    from nablog.views.live import Levelled

    edges = {(i, i + 1) for i in range(6)} | {(6, 3)}  # a chain into a cycle 3 -> 4 -> 5 -> 6 -> 3
    model = PythonEngine().evaluate(CLOSURE, {"edge": edges})
    built = {build: Monitor(CLOSURE, ["closure"], "materialized", build=build) for build in ("engine", "tuples")}
    states = {build: m._live_state(0, model) for build, m in built.items()}
    engine, tuples = states["engine"]["closure"], states["tuples"]["closure"]
    assert isinstance(engine, Levelled) and isinstance(tuples, Levelled)
    assert set(engine) == set(tuples) == set(model["closure"])

    def distance(a, b):  # of the shortest path of one edge or more
        frontier, seen, k = {y for x, y in edges if x == a}, set(), 1
        while b not in frontier:
            seen |= frontier
            frontier = {y for x, y in edges if x in frontier} - seen
            k += 1
        return k

    assert {row: engine[row] for row in engine} == {(a, b): (distance(a, b) - 1) * LEVEL_GAP for a, b in engine}
    assert set(engine.indexes) == {(0,)} and engine.lookup((0,), (5,)) == {(5, 6), (5, 3), (5, 4), (5, 5)}
    assert built["engine"]._levels.last == max(engine.rows.values())
    for version, (ins, dele) in enumerate([({"edge": {(0, 4)}}, {}), ({}, {"edge": {(6, 3)}}), ({"edge": {(6, 3)}}, {"edge": {(2, 3)}})]):
        got = {build: m.differentials({"edge": edges}, commit_of(ins, dele), version=version) for build, m in built.items()}
        assert got["engine"] == got["tuples"]
        edges = (edges - dele.get("edge", set())) | ins.get("edge", set())
        assert set(states["engine"]["closure"]) == set(PythonEngine().evaluate(CLOSURE, {"edge": edges})["closure"])


def test_levelled_from_columns_indexes_equal_the_lazily_built_ones():
    """Indexes built column-wise (one and two bound positions) hold the buckets a Relation builds
    row by row, over the very row objects of the dict; levels follow the rounds given."""
    import numpy as np

    from nablog.views.live import Levelled

    values = ["a", "b", "c", 7]
    rounds = [(0, [np.array([0, 1, 0]), np.array([1, 2, 2]), np.array([3, 3, 0])]), (1024, [np.array([1, 0]), np.array([0, 1]), np.array([3, 0])])]
    rel = Levelled.from_columns(values, rounds, [(0,), (0, 2)])
    rows = {("a", "b", 7): 0, ("b", "c", 7): 0, ("a", "c", "a"): 0, ("b", "a", 7): 1024, ("a", "b", "a"): 1024}
    assert rel.rows == rows
    plain = Relation(rows)
    for where in [(0,), (0, 2)]:
        plain.lookup(where, ())
        assert rel.indexes[where] == plain.indexes[where]
        assert all(next(iter(bucket)) is next(r for r in rel.rows if r == next(iter(bucket))) for bucket in rel.indexes[where].values())
    assert Levelled.from_columns(values, [], [(0,)]).indexes == {(0,): {}}


def test_engine_rounds_are_bfs_distances_and_number_on_across_components():
    """``evaluate(rounds=)``: a closure pair's round is its shortest path's length less one; a
    component evaluated after another numbers its rounds after the other's."""
    program = parse(CLOSURE_TEXT + " far(X) :- closure(0, X).")
    found = {}
    PythonEngine().evaluate(program, {"edge": {(0, 1), (1, 2), (2, 0), (2, 3)}}, rounds=found)
    assert [(k, sorted(rows)) for k, rows in found["closure"]] == [
        (0, [(0, 1), (1, 2), (2, 0), (2, 3)]),
        (1, [(0, 2), (1, 0), (1, 3), (2, 1)]),
        (2, [(0, 0), (0, 3), (1, 1), (2, 2)]),
    ]
    assert [(k, sorted(rows)) for k, rows in found["far"]] == [(4, [(0,), (1,), (2,), (3,)])]


def _apply(facts, ins, dele):
    out = {p: set(rows) for p, rows in facts.items()}
    for p, rows in dele.items():
        out[p] = out.get(p, set()) - rows
    for p, rows in ins.items():
        out[p] = out.get(p, set()) | rows
    return out


VIEWS = [p for p, _ in DERIVED]


@settings(max_examples=examples(8), deadline=None)
@given(stratified_programs(), base_facts(), st.lists(st.tuples(base_facts(max_rows=3), base_facts(max_rows=3)), min_size=1, max_size=3))
def test_all_modes_equal_recomputation(program, facts, commits):
    """Every mode gives recompute-and-diff's differentials, commit after commit, and their
    composition replayed on the first answer is the last answer (seed 001, Theorems 1 and 2)."""
    assert_modes_agree(program, VIEWS, facts, commits)


@settings(max_examples=examples(8), deadline=None)
@given(stratified_programs(), base_facts(), st.lists(st.tuples(base_facts(max_rows=3), base_facts(max_rows=3)), min_size=1, max_size=3), st.integers(0, 8))
def test_rod_recomputing_past_its_budget_equals_recomputation(program, facts, commits, floor):
    """rod with a budget of ``floor`` rows a commit (ski rental: past it, the commit recomputes),
    commit after commit, gives recompute-and-diff's differentials."""
    engine = PythonEngine()
    with patch.object(monitor_room, "ROD_SHARE", 10**9), patch.object(monitor_room, "ROD_FLOOR", floor):
        monitor = Monitor(program, VIEWS, "rod")
        monitor.warm(facts, engine.evaluate(program, facts), 0)
        current = facts
        for version, (insert, delete) in enumerate(commits):
            expected = Monitor(program, VIEWS, "recompute").differentials(current, commit_of(insert, delete), model=engine.evaluate(program, current))
            assert monitor.differentials(current, commit_of(insert, delete), version=version) == expected
            current = _apply(current, *true_changes(current, insert, delete))


def assert_modes_agree(program, views: list[str], facts, commits) -> None:
    """The property of :func:`test_all_modes_equal_recomputation` for ``views`` of ``program``."""
    VIEWS = views
    monitors = {mode: Monitor(program, VIEWS, mode) for mode in MODES}
    # Numbered commits: each monitor keeps its state (relations in place, the model) between them.
    kept = {mode: Monitor(program, VIEWS, mode) for mode in ("materialized", "rod", "dred")}
    # The kept state built tuple at a time instead of from the column engine's rounds.
    kept["materialized, built by tuples"] = Monitor(program, VIEWS, "materialized", build="tuples")
    engine = PythonEngine()
    first = engine.evaluate(program, facts)
    replayed = {v: set(first.get(v, ())) for v in VIEWS}
    current = facts
    for version, (insert, delete) in enumerate(commits):
        model = engine.evaluate(program, current)
        got = {mode: m.differentials(current, commit_of(insert, delete), model=model) for mode, m in monitors.items()}
        for mode in MODES:
            assert got[mode] == got["recompute"], mode
        for mode, m in kept.items():
            assert m.differentials(current, commit_of(insert, delete), model=model if version == 0 else None, version=version) == got["recompute"], f"{mode}, kept"
        ins, dele = true_changes(current, insert, delete)
        current = _apply(current, ins, dele)
        for v in VIEWS:
            plus, minus = got["rod"].rows(v)
            assert not (plus & replayed[v]) and minus <= replayed[v]
            replayed[v] = (replayed[v] - minus) | plus
    last = engine.evaluate(program, current)
    assert replayed == {v: set(last.get(v, ())) for v in VIEWS}
