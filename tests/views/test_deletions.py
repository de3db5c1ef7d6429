"""Checked deletions of a recursive layer (views/deletions.py): bounded proofs, re-levelling, (R) as a worklist, levels well-founded."""

from __future__ import annotations

import itertools
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from nablog.engines import PythonEngine
from nablog.lang import Comparison, Delta, Var, parse
from nablog.views.deletions import LEVEL_GAP, Deletions
from nablog.views.live import Relation
from nablog.views.monitor import Monitor, true_changes
from tests.strategies import DERIVED, base_facts, examples, stratified_programs
from tests.views.test_monitor import _apply, commit_of

CLOSURE = parse("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y).")


def _distances(edges: set) -> dict[tuple, int]:
    """Shortest path length per pair of the closure: the round a semi-naive build derives it in."""
    out = {}
    for start in {a for a, _ in edges}:
        frontier, depth = {start}, 0
        while frontier:
            depth += 1
            frontier = {b for a, b in edges if a in frontier} - {y for (x, y) in out if x == start}
            out.update({(start, y): depth for y in frontier})
    return out


def _run(edges: set, delete: set, insert: set = frozenset()) -> tuple[dict, dict]:
    """Deletions over the closure of ``edges`` with build levels (round · LEVEL_GAP): its output
    and the levels after it; rederived tuples numbered above every level."""
    closure = _distances(edges)
    levels = {"closure": {pair: d * LEVEL_GAP for pair, d in closure.items()}}
    top = [max(levels["closure"].values())]

    def number(row, floor=None):
        level = levels["closure"][row] = (top[0] if floor is None else floor) + LEVEL_GAP
        top[0] = max(top[0], level)

    env = {"edge": Relation(edges), "closure": Relation(closure), "del__edge": Relation(delete), "ins__edge": Relation(insert)}
    return Deletions(CLOSURE).run(env, levels, {"closure": number}), levels["closure"]


def test_a_proof_of_depth_3_keeps_the_tuple_and_re_levels_the_tuples_it_proves():
    """c -> d -> y and c -> z1 -> z2 -> z3 -> y; edge (c, d) deleted: (c, y), of round 2, has
    no derivation from a tuple of a lower round ((z1, y) is of round 3), but (z1, y) <- (z2, y)
    <- (z3, y) of round 1 proves it to depth 3: only (c, d) is deleted, and (z1, y), (z2, y) get
    levels between (z3, y)'s and (c, y)'s."""
    edges = {("c", "d"), ("d", "y"), ("c", "z1"), ("z1", "z2"), ("z2", "z3"), ("z3", "y")}
    out, levels = _run(edges, {("c", "d")})
    assert sorted(out["del__closure"]) == [("c", "d")] and not len(out["red__closure"])
    assert levels[("z3", "y")] < levels[("z2", "y")] < levels[("z1", "y")] < levels[("c", "y")] == 2 * LEVEL_GAP
    assert levels[("z2", "y")] == LEVEL_GAP + 341 and levels[("z1", "y")] == LEVEL_GAP + 2 * 341


def test_a_proof_deeper_than_3_falls_back_to_delete_and_rederive():
    """One step longer (z1 .. z4): (c, y) needs a proof of depth 4; it is deleted and (R)
    rederives it, a level above the pair it was rederived from ((z1, y), of round 4): round 5;
    the differential is still only (c, d)."""
    edges = {("c", "d"), ("d", "y"), ("c", "z1"), ("z1", "z2"), ("z2", "z3"), ("z3", "z4"), ("z4", "y")}
    out, levels = _run(edges, {("c", "d")})
    assert sorted(out["del__closure"]) == [("c", "d"), ("c", "y")] and sorted(out["red__closure"]) == [("c", "y")]
    assert levels[("c", "y")] == 5 * LEVEL_GAP
    monitor = Monitor(CLOSURE, ["closure"], "materialized")
    assert monitor.differentials({"edge": edges}, Delta.parse("-edge(c, d)."), version=0).lines() == ["-closure(c, d)"]


def test_a_tuple_is_never_proved_through_itself():
    """x -> d -> y and the cycle x -> z -> x; edge (d, y) deleted: (x, y)'s other derivation
    goes through (z, y), of a higher round, whose only derivation is through (x, y) itself: the
    proof may not use it, and x and z lose y."""
    edges = {("x", "d"), ("d", "y"), ("x", "z"), ("z", "x")}
    out, _ = _run(edges, {("d", "y")})
    assert sorted(out["del__closure"]) == [("d", "y"), ("x", "y"), ("z", "y")] and not len(out["red__closure"])


def test_rederived_tuples_are_propagated_forward():
    """0 -> 1 -> 2 -> 3 -> 4 and a longer way 0 -> 5 -> 6 -> 7 -> 8 -> 1: deleting (0, 1)
    deletes (0, 1..4) (each proof needs depth 5 or more) and (R) rederives all four, each a
    level above the pair of its derivation ((5, y), rounds 4..7)."""
    edges = {(0, 1), (1, 2), (2, 3), (3, 4), (0, 5), (5, 6), (6, 7), (7, 8), (8, 1)}
    out, levels = _run(edges, {(0, 1)})
    assert set(out["del__closure"]) == set(out["red__closure"]) == {(0, 1), (0, 2), (0, 3), (0, 4)}
    assert [levels[(0, y)] for y in (1, 2, 3, 4)] == [5 * LEVEL_GAP, 6 * LEVEL_GAP, 7 * LEVEL_GAP, 8 * LEVEL_GAP]


def test_the_numbering_of_insertions_follows_their_derivations():
    """(N3) new__p0 :- ins__p0 copies ins__p0 in the order of a set: p0(0, 1), derived from
    p0(0, 2) in this commit, was numbered below it (a level not above the tuple it was derived
    from: levels no longer well-founded). Levels are now given where each row is derived, in
    ins__p0 and red__p0."""
    program = parse("p0(0, X) :- f(2), e(X, Y). p0(0, 1) :- p0(Y, X), e(X, Y), f(X), not g.")
    monitor = Monitor(program, ["p0"], "materialized")
    change = monitor.differentials({"e": set(), "f": {(2,)}, "g": {()}}, Delta.parse("+e(2, 0). -g."), version=0)
    assert change.lines() == ["+p0(0, 1)", "+p0(0, 2)"]
    assert monitor._levels["p0"][(0, 2)] < monitor._levels["p0"][(0, 1)]


def test_a_mixed_commit_rederives_through_the_layers_insertions():
    """a -> b -> c; one commit deletes (a, b) and inserts a -> e -> c: (a, c) is deleted, and its
    only new derivation goes through (e, c), a tuple new to closure (ins__, not in the worklist's
    state): (R) runs again with the insertions, and (a, c) stays."""
    edges = {("a", "b"), ("b", "c")}
    monitor = Monitor(CLOSURE, ["closure"], "materialized")
    change = monitor.differentials({"edge": edges}, Delta.parse("+edge(a, e). +edge(e, c). -edge(a, b)."), version=0)
    assert change.lines() == ["+closure(a, e)", "+closure(e, c)", "-closure(a, b)"]
    change = monitor.differentials({"edge": edges - {("a", "b")} | {("a", "e"), ("e", "c")}}, Delta.parse("+edge(a, b). -edge(e, c)."), version=1)
    assert change.lines() == ["+closure(a, b)", "-closure(e, c)"]
    _well_founded_closure(monitor, edges - {("e", "c")} | {("a", "e")})


def _well_founded_closure(monitor: Monitor, edges: set) -> None:
    """Every closure pair is an edge or has a successor pair of strictly lower level."""
    levels = monitor._levels["closure"]
    closure = set(PythonEngine().evaluate(CLOSURE, {"edge": edges})["closure"])
    assert set(levels) == closure
    for x, y in closure:
        assert (x, y) in edges or any(levels.get((z, y), levels[(x, y)]) < levels[(x, y)] for a, z in edges if a == x), (x, y)


def test_streams_of_deletes_inserts_and_mixed_commits_on_small_dense_graphs():
    """Numbered commits on random graphs of 9 nodes (cycles, many shortest paths): single-edge
    deletes, inserts, and mixed commits of 1-3 changes each; every commit's differentials equal
    recomputation's and the levels stay well-founded (re-levelled and rederived tuples included)."""
    engine = PythonEngine()
    for seed in range(12):
        rng = random.Random(seed)
        nodes = range(9)
        edges = {(a, b) for a in nodes for b in nodes if a != b and rng.random() < 0.3}
        monitor = Monitor(CLOSURE, ["closure"], "materialized")
        for version in range(30):
            pairs = [(rng.choice(nodes), rng.choice(nodes)) for _ in range(rng.choice((1, 1, 2, 3)))]
            insert = {e for e in pairs if e not in edges}
            delete = {e for e in pairs if e in edges}
            old = set(engine.evaluate(CLOSURE, {"edge": edges})["closure"])
            got = monitor.differentials({"edge": edges}, Delta.of_rows({"edge": insert}, {"edge": delete}), version=version)
            edges = (edges | insert) - delete
            new = set(engine.evaluate(CLOSURE, {"edge": edges})["closure"])
            assert got.rows("closure") == (frozenset(new - old), frozenset(old - new)), (seed, version)
            _well_founded_closure(monitor, edges)


# -- levels well-founded on generated programs (an oracle by grounding, independent of the plans)


def _bind(args, row, env) -> dict | None:
    env = dict(env)
    for a, v in zip(args, row):
        if isinstance(a, Var):
            if a.name == "_":
                continue
            if env.setdefault(a, v) != v:
                return None
        elif a != v:
            return None
    return env


def _derives(rule, row, model, levels, layer, domain) -> bool:
    """Whether ``rule`` derives ``row`` from ``model`` with every positive literal of ``layer``
    matched by a tuple of strictly lower level (all bindings over ``domain`` tried)."""
    head = _bind(rule.head[0].args, row, {})
    if head is None:
        return False
    free = sorted({v for b in rule.body for v in b.variables() if v.name != "_" and v not in head}, key=str)
    for values in itertools.product(domain, repeat=len(free)):
        env = {**head, **dict(zip(free, values))}
        ok = True
        for b in rule.body:
            if isinstance(b, Comparison):
                value = lambda t: env[t] if isinstance(t, Var) else t  # noqa: E731
                try:
                    ok = b.holds(value(b.left), value(b.right))
                except TypeError:
                    ok = False
            else:
                matches = [r for r in model.get(b.atom.pred, ()) if _bind(b.atom.args, r, env) is not None]
                if b.positive and b.atom.pred in layer:
                    matches = [r for r in matches if levels[b.atom.pred][r] < levels[rule.head[0].pred][row]]
                ok = bool(matches) == b.positive
            if not ok:
                break
        if ok:
            return True
    return False


@settings(max_examples=examples(30), deadline=None)
@given(stratified_programs(), base_facts(), st.lists(st.tuples(base_facts(max_rows=3), base_facts(max_rows=3)), min_size=1, max_size=4))
def test_levels_stay_well_founded_on_generated_programs(program, facts, commits):
    """After each numbered commit every tuple of a recursive layer has a derivation in the new
    model whose tuples of the layer have strictly lower levels (checked by grounding the rules
    over the constants), and the levelled tuples are the model's."""
    engine = PythonEngine()
    views = [p for p, _ in DERIVED]
    monitor = Monitor(program, views, "materialized")
    current = facts
    for version, (insert, delete) in enumerate(commits):
        monitor.differentials(current, commit_of(insert, delete), model=engine.evaluate(program, current) if version == 0 else None, version=version)
        current = _apply(current, *true_changes(current, insert, delete))
        model = engine.evaluate(program, current)
        domain = {v for rows in model.values() for r in rows for v in r} | set(program.constants())
        for (layer, _), d in zip(monitor.layers, monitor._deletions):
            if d is None:
                continue
            for pred in layer.derived:
                assert set(monitor._levels[pred]) == set(model.get(pred, ())), pred
                for row in model.get(pred, ()):
                    assert any(_derives(r, row, model, monitor._levels, set(layer.derived), domain) for r in layer.rules if r.head[0].pred == pred), (pred, row)
