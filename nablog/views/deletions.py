"""The deletions of a recursive layer, each checked for a well-founded rederivation before it propagates.

Algorithm 1's (Dᵢ) rules delete every tuple with *some* derivation through a deleted tuple and (R)
derives most of them again: one edge (c, d) deleted from a dense transitive closure deletes
anc(c) × desc(d) — 1.04 M tuples on G(1600, 0.001), 24.7 M on G(5000, 0.001), for a net change of
a few. This computes ``del__p`` for a layer of recursive rules instead as the Backward/Forward
algorithm does (Motik, Nenov, Piro, Horrocks, "Incremental update of datalog materialisation: the
backward/forward algorithm", AAAI 2015; a candidate is checked before it is deleted), with its
well-founded check made local by a *level* per tuple, as in "delete-rederive with eager
rederivation": a candidate of level k stays if (R) derives it for that one tuple over the new
lower layers and the layer's old tuples of level below k not deleted so far; otherwise it is
deleted and the (Dᵢ) rules propagate it forward, over the old state as written.

Levels: every tuple of the layer has a derivation whose body tuples of the layer have lower
levels (initially the order in which a semi-naive evaluation derived them; a tuple rederived or
inserted by a commit gets the next level after every level given, in the order (R) and (Iᵢ) added
it to ``new__p``; a tuple that stays keeps its level). Candidates are taken lowest level first.

Why exact. The rest of Algorithm 1 — (N1), (R), (Iᵢ), (E1), (E2) — gives the differentials of
seed 001 Theorem 1 for *any* ``del__p`` ⊆ old that contains old \\ new (a tuple of ``p`` without
``del__p`` is then in the new model, and (R)/(Iᵢ) over the new state reach every other new tuple by
induction on its derivation; DRed's overestimate is one such set, this is a smaller one). So two
things must hold: (a) a tuple that stays is in the new model, (b) every tuple of old \\ new is
deleted. By induction on levels: a tuple u of old \\ new has a derivation of lower level that the
commit broke, either at a changed tuple of a lower layer or base relation (then u is a first
candidate, from the (Dᵢ) rule of that literal), or at a tuple b of the layer in old \\ new of lower
level — deleted, by induction, before any candidate of level above it is taken, and its (Dᵢ)
propagation makes u a candidate then. So when a candidate of level k is taken, every tuple of old
\\ new below k has been deleted: the tuples its check may use are in the new model (a), and u's
own check cannot succeed (b). Cyclic support is excluded by the strict levels: a tuple of a cycle
cut off from its base is never proved by the tuples of the cycle above it. Negation stays as
§4.2 gives it: layers are strata, a negated literal reads a lower layer's new state.

On a dense closure one deleted edge then checks the pairs (c, y), y in desc(d), each by c's other
successors, and deletes only the pairs whose every shorter path went through (c, d).

The cycle a -> b -> c -> a reached from start(a), which is deleted: reach(a) has a second
derivation, reach(c), edge(c, a), but reach(c) is of a higher level, so the cycle goes whole:

>>> from nablog.lang import parse
>>> layer = parse("reach(X) :- start(X). reach(Y) :- reach(X), edge(X, Y).")
>>> env = {"start": Relation({("a",)}), "edge": Relation({("a", "b"), ("b", "c"), ("c", "a")}),
...        "reach": Relation({("a",), ("b",), ("c",)}), "del__start": Relation({("a",)})}
>>> sorted(Deletions(layer).run(env, {"reach": {("a",): 1, ("b",): 2, ("c",): 3}})["del__reach"])
[('a',), ('b',), ('c',)]
"""

from __future__ import annotations

import heapq

from ..lang import Literal, Program
from ..transforms.maintenance import deletion_rules, rederivation_rule
from ..transforms.propagation import DEL, INS, NEW
from .live import NewState, Relation, bodies_from, cheapest, chosen, probes

_EMPTY = Relation()
LEVEL_GAP = 1024  # levels of a build: round * LEVEL_GAP, room to re-level between two rounds


def recursive(layer: Program) -> bool:
    """Whether a rule of ``layer`` reads a predicate the layer defines."""
    heads = set(layer.derived)
    return any(isinstance(b, Literal) and b.positive and b.atom.pred in heads for r in layer.rules for b in r.body)


class _Below:
    """``new__q`` in a check: the old ``q`` without the tuples deleted so far, below a level."""

    __slots__ = ("old", "deleted", "levels", "below")

    def __init__(self, old: Relation, deleted: Relation, levels: dict):
        self.old, self.deleted, self.levels, self.below = old, deleted, levels, 0

    def __len__(self) -> int:
        return len(self.old)

    def __contains__(self, row: tuple) -> bool:
        return row in self.old and row not in self.deleted and self.levels[row] < self.below

    def __iter__(self):
        return (r for r in self.old if r not in self.deleted and self.levels[r] < self.below)

    def lookup(self, positions: tuple[int, ...], key: tuple) -> list[tuple]:
        return [r for r in self.old.lookup(positions, key) if r not in self.deleted and self.levels[r] < self.below]


class Deletions:
    """``del__p`` for the predicates of one recursive layer, planned once: the (Dᵢ) rules from a
    changed literal of a lower layer (the first candidates), those from a literal of the layer
    (propagation, keyed by its predicate) and (R) from ``del__p`` (the check)."""

    def __init__(self, layer: Program):
        self.heads = frozenset(layer.derived)
        self.first: list[list] = []
        self.propagate: dict[str, list[list]] = {}
        self.check: dict[str, list[list]] = {}
        self.lower: set[str] = set()
        for rule in layer.rules:
            if rule.is_fact():
                continue
            literals = [i for i, b in enumerate(rule.body) if isinstance(b, Literal)]
            for i, d in zip(literals, deletion_rules(rule)):
                start = sum(1 for b in d.body[:i] if isinstance(b, Literal) and b.positive)
                b = rule.body[i]
                if b.positive and b.atom.pred in self.heads:
                    self.propagate.setdefault(b.atom.pred, []).append(bodies_from(d, start))
                else:
                    self.first.append(bodies_from(d, start))
                    self.lower.add(b.atom.pred)
            self.check.setdefault(rule.head[0].pred, []).append(bodies_from(rederivation_rule(rule), 0))
        self.lower |= {b.atom.pred for r in layer.rules for b in r.body if isinstance(b, Literal)} - self.heads

    def probes(self, sizes: "dict[str, int] | None" = None) -> set[tuple[str, tuple[int, ...]]]:
        """The indexes the checks and propagations look up (``new__r`` as ``r``); with ``sizes``
        (of the kept relations) only those of the join orders :meth:`run` takes with them."""
        virtual = {NEW + p: p for p in self.heads | self.lower}
        groups = [bodies for group in (*self.propagate.values(), *self.check.values(), self.first) for bodies in group]
        return probes(chosen(groups, sizes, virtual), virtual)

    def run(self, env: dict, levels: dict[str, dict]) -> dict[str, Relation]:
        """``del__p`` per predicate of the layer: ``env`` holds the old state and the lower
        layers' ``ins__``/``del__``; ``levels[p]`` the level of each old tuple of ``p``."""
        deleted = {p: Relation() for p in self.heads}
        kept: dict[str, set] = {p: set() for p in self.heads}
        old = {**env, **{DEL + p: deleted[p] for p in self.heads}}
        heap: list = []
        count = 0

        def push(pred: str, rows) -> None:
            nonlocal count
            level, done, gone = levels[pred], kept[pred], deleted[pred]
            for row in rows:
                if row not in done and row not in gone:
                    count += 1
                    heapq.heappush(heap, (level[row], count, pred, row))

        for bodies in self.first:
            if len(env.get(bodies[0].steps[0][1], _EMPTY)):
                body = cheapest(bodies, old)
                push(body.pred[len(DEL):], body.solutions(old, None))
        if not heap:  # a commit that only inserts
            return {DEL + p: rows for p, rows in deleted.items()}
        check = {DEL + p: deleted[p] for p in self.heads}
        below = {p: _Below(env.get(p, _EMPTY), deleted[p], levels[p]) for p in self.heads}
        check.update({NEW + p: view for p, view in below.items()})
        for r in self.lower:
            view = check[NEW + r] = NewState(env.get(r, _EMPTY), env.get(DEL + r, _EMPTY))
            view.added = env.get(INS + r, _EMPTY)
        # One join order per rule for the whole run: they differ from the second relation on,
        # whose size one commit's deletions hardly change.
        checks = {p: [cheapest(bodies, check).solutions for bodies in group] for p, group in self.check.items()}
        propagations = {p: [(b.pred[len(DEL):], b.solutions) for b in (cheapest(bodies, old) for bodies in group)] for p, group in self.propagate.items()}
        while heap:
            level, _, pred, row = heapq.heappop(heap)
            if row in kept[pred] or row in deleted[pred]:
                continue
            for view in below.values():
                view.below = level
            first = [row]
            if any(solutions(check, first) for solutions in checks[pred]):
                kept[pred].add(row)  # in the new model, for good: see the module docstring
                continue
            deleted[pred].add(row)
            for head, solutions in propagations.get(pred, ()):
                push(head, solutions(old, first))
        return {DEL + p: rows for p, rows in deleted.items()}


__all__ = ["Deletions", "recursive"]
