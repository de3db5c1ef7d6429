"""The deletions of a recursive layer, each checked for a well-founded proof before it propagates, and their rederivation.

Algorithm 1's (Dᵢ) rules delete every tuple with *some* derivation through a deleted tuple and (R)
derives most of them again: one edge (c, d) deleted from a dense transitive closure deletes
anc(c) × desc(d) — 1.04 M tuples on G(1600, 0.001), 24.7 M on G(5000, 0.001), for a net change of
a few. This computes ``del__p`` for a layer of recursive rules instead as the Backward/Forward
algorithm does (Motik, Nenov, Piro, Horrocks, "Incremental update of datalog materialisation: the
backward/forward algorithm", AAAI 2015): a candidate is checked by a bounded backward proof before
it is deleted, its well-founded check made local by a *level* per tuple; then (R) runs as a
worklist over the deleted tuples (``red__p``), forward from each tuple rederived.

Levels: every tuple of the layer has a derivation whose body tuples of the layer have strictly
lower levels. A build gives ``round * LEVEL_GAP`` (or numbers tuples in derivation order,
``LEVEL_GAP`` apart); a tuple inserted by a commit gets a level above every level given, in the
order it was derived, a tuple rederived one ``LEVEL_GAP`` above the layer's tuples it was
rederived from; a tuple that stays keeps its level, or gets a lower one when a proof re-levels it
(below). Candidates are taken lowest level first.

The check of a candidate u of level k (the proof, bounded). u stays if a derivation of it exists
whose body tuples are tuples of the new lower layers and tuples of the layer not deleted so far,
each of them either of level below k (a *leaf*) or itself so proved, to depth ``DEPTH`` (rule
applications, u's own included) and trying at most ``TRIES`` derivations beyond the first pass
over u's own. The tuples proved inside such a proof (never u's ancestors in it: no cycles) are
*re-levelled downwards*: with m the highest leaf level and H the height of u's proof, a tuple of
height h gets m + h·⌊(k − m)/H⌋ — above its leaves and the tuples it was proved from, below u.
When no integer fits (levels too crowded), or the bound is reached, u is deleted: its
rederivation by (R) follows, so the bound costs time, never exactness.

Why exact. The rest of Algorithm 1 — (N1), (R), (Iᵢ), (E1), (E2) — gives the differentials of
seed 001 Theorem 1 for *any* ``del__p`` ⊆ old that contains old \\ new (a tuple of ``p`` without
``del__p`` is then in the new model, and (R)/(Iᵢ) over the new state reach every other new tuple by
induction on its derivation; DRed's overestimate is one such set, this is a smaller one). So two
things must hold: (a) a tuple that stays is in the new model, (b) every tuple of old \\ new is
deleted. (b) by induction on levels: a tuple u of old \\ new has a derivation of lower level that
the commit broke, either at a changed tuple of a lower layer or base relation (then u is a first
candidate, from the (Dᵢ) rule of that literal), or at a tuple b of the layer in old \\ new of
lower level — deleted, by induction, before any candidate of level above it is taken, and its
(Dᵢ) propagation makes u a candidate then. Re-levelling never moves a tuple of old \\ new (it
moves only tuples it proves to be in the new model), so the induction's levels are fixed. (a):
when a candidate of level k is taken every tuple of old \\ new below k has been deleted, so a leaf
(level below k, not deleted) is in the new model, and so is every tuple proved from leaves and new
lower tuples, u among them. Only a proof ending in strictly lower levels keeps a tuple: a tuple
of a cycle cut off from its base is never proved by the tuples of the cycle above it. The levels
stay well-founded: a re-levelled tuple has its proof below its new level, and lowering a body
tuple's level keeps every derivation through it below its head. Negation stays as §4.2 gives it:
layers are strata, a negated literal reads a lower layer's new state.

(R) as a worklist: every deleted tuple is checked once for a derivation over the new state so far
(the new lower layers, the tuples not deleted, the tuples rederived), stopping at the first (the
compiled body is a generator, views/live.py); each tuple rederived is numbered and propagated
forward by the (Dᵢ) bodies read over the new state, rederiving the deleted tuples they reach. That
is (R)'s least fixpoint over the new state without the layer's insertions; a commit that may also
insert into the layer (``inserting``) runs (R) again with them (views/monitor.py).

The cycle a -> b -> c -> a reached from start(a), which is deleted: reach(a) has a second
derivation, reach(c), edge(c, a), but reach(c) is of a higher level, so the cycle goes whole:

>>> from nablog.lang import parse
>>> layer = parse("reach(X) :- start(X). reach(Y) :- reach(X), edge(X, Y).")
>>> env = {"start": Relation({("a",)}), "edge": Relation({("a", "b"), ("b", "c"), ("c", "a")}),
...        "reach": Relation({("a",), ("b",), ("c",)}), "del__start": Relation({("a",)})}
>>> out = Deletions(layer).run(env, {"reach": {("a",): 1024, ("b",): 2048, ("c",): 3072}})
>>> sorted(out["del__reach"]), sorted(out["red__reach"])
([('a',), ('b',), ('c',)], [])
"""

from __future__ import annotations

import heapq
from typing import Callable

from ..lang import Literal, Program
from ..transforms.maintenance import RED, deletion_rules, rederivation_rule
from ..transforms.propagation import DEL, INS, NEW
from .live import Relation, bodies_from, cheapest, chosen, derivations, probes

LEVEL_GAP = 1024
"""Levels a build gives are ``round * LEVEL_GAP``: room for re-levelling between two rounds."""

DEPTH = 3
"""Rule applications in a candidate's proof, its own included (views/deletions.py docstring)."""

TRIES = 64
"""Derivations a candidate's deeper proof may try before it is deleted and rederived instead."""

_EMPTY = Relation()


def recursive(layer: Program) -> bool:
    """Whether a rule of ``layer`` reads a predicate the layer defines."""
    heads = set(layer.derived)
    return any(isinstance(b, Literal) and b.positive and b.atom.pred in heads for r in layer.rules for b in r.body)


class Deletions:
    """``del__p`` and ``red__p`` for the predicates of one recursive layer, planned once: the
    (Dᵢ) rules from a changed literal of a lower layer (the first candidates), those from a literal
    of the layer (propagation, keyed by its predicate) and (R) from ``del__p`` (the proofs)."""

    def __init__(self, layer: Program):
        self.heads = frozenset(layer.derived)
        self.first: list[list] = []
        self.propagate: dict[str, list[list]] = {}
        self.check: dict[str, list[list]] = {}
        self.lower: set[str] = set()
        # The changes of lower relations that may insert into the layer: (Iᵢ)'s deltas.
        self.inserting: set[str] = set()
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
                    self.inserting.add((INS if b.positive else DEL) + b.atom.pred)
            self.check.setdefault(rule.head[0].pred, []).append(bodies_from(rederivation_rule(rule), 0))
        self.lower |= {b.atom.pred for r in layer.rules for b in r.body if isinstance(b, Literal)} - self.heads
        # Each order of (R) as a generator of its derivations, with the layer's tuples it used.
        layer_new = {NEW + p for p in self.heads}
        self._derivations = {id(b): derivations(b, layer_new) for group in self.check.values() for bodies in group for b in bodies}
        # Each order of a propagation as a generator of heads with the layer's tuples they used.
        layer_old = self.heads | {DEL + p for p in self.heads}
        self._forward = {id(b): derivations(b, layer_old, with_head=True) for group in self.propagate.values() for bodies in group for b in bodies}

    def probes(self, sizes: "dict[str, int] | None" = None) -> set[tuple[str, tuple[int, ...]]]:
        """The indexes the checks and propagations look up (``new__r`` as ``r``); with ``sizes``
        (of the kept relations) only those of the join orders :meth:`run` takes with them."""
        virtual = {NEW + p: p for p in self.heads | self.lower}
        groups = [bodies for group in (*self.propagate.values(), *self.check.values(), self.first) for bodies in group]
        return probes(chosen(groups, sizes, virtual), virtual)

    def run(self, env: dict, levels, number: "dict[str, Callable[..., None]] | None" = None) -> dict[str, Relation]:
        """``del__p`` and ``red__p`` per predicate ``p`` of the layer: ``env`` holds the old state
        and the lower layers' ``ins__``/``del__``; ``levels[p]`` maps each old tuple of ``p`` to its
        level (read and re-levelled in place); ``number[p]``, when given, is called with each
        tuple rederived, in the order of its rederivation, and the highest level of the layer's
        tuples it was rederived from (None: none), to give it a level above that."""
        run = _Run(self, env, levels)
        if run.heap:
            run.delete()
            run.rederive(number or {})
        return {**{DEL + p: Relation(rows) for p, rows in run.deleted.items()}, **{RED + p: rows for p, rows in run.red.items()}}


def _rows(relation):
    """The set (or mapping) a relation keeps its rows in, for membership without a method call."""
    return getattr(relation, "rows", relation)


class _Visible:
    """A relation seen without the rows of ``hidden`` (a set) and with those of ``added``: the
    layer's tuples not deleted (then: or rederived), or a lower layer's new state. Like
    :class:`~nablog.views.live.NewState`, with membership on the raw sets: checks are most of a
    delete's time."""

    __slots__ = ("old", "rows", "hidden", "added", "more")

    def __init__(self, old, hidden: set, added=_EMPTY):
        self.old, self.rows, self.hidden, self.added, self.more = old, _rows(old), hidden, added, _rows(added)

    def __len__(self) -> int:
        return len(self.old) + len(self.added)

    def __contains__(self, row: tuple) -> bool:
        return (row in self.rows and row not in self.hidden) or row in self.more

    def __iter__(self):
        yield from (r for r in self.old if r not in self.hidden)
        yield from self.added

    def lookup(self, positions: tuple[int, ...], key: tuple):
        found = self.old.lookup(positions, key)
        hidden = self.hidden
        if hidden:
            found = [r for r in found if r not in hidden]
        if self.more:
            return [*found, *self.added.lookup(positions, key)]
        return found


class _Run:
    """One commit's deletions of a layer: the candidates, the proofs, then (R)."""

    def __init__(self, plan: Deletions, env: dict, levels):
        self.plan = plan
        heads = plan.heads
        self.maps = {p: _rows(levels[p]) for p in heads}  # row -> level (a Levelled relation's own dict)
        self.deleted: dict[str, set] = {p: set() for p in heads}
        self.red = {p: Relation() for p in heads}
        self.order: list[tuple[str, tuple]] = []  # the deletions, in order
        self.kept: dict[str, set] = {p: set() for p in heads}
        self.heap: list = []
        self.count = 0
        self.old = {**env, **{DEL + p: self.deleted[p] for p in heads}}
        for bodies in plan.first:
            if len(env.get(bodies[0].steps[0][1], _EMPTY)):
                body = cheapest(bodies, self.old)
                self.push(body.pred[len(DEL):], body.solutions(self.old, None))
        if not self.heap:  # a commit that only inserts
            return
        # The layer's tuples not deleted (then: or rederived) and the lower layers' new state;
        # ``new`` shows them under the old names, for the (Dᵢ) bodies read forward in (R).
        self.gone: dict[str, set] = {p: set() for p in heads}
        self.check = {DEL + p: self.deleted[p] for p in heads}
        self.new = {}
        for p in heads:
            self.check[NEW + p] = self.new[p] = _Visible(env.get(p, _EMPTY), self.gone[p])
        for r in plan.lower:
            self.check[NEW + r] = self.new[r] = _Visible(env.get(r, _EMPTY), _rows(env.get(DEL + r, _EMPTY)), env.get(INS + r, _EMPTY))
        # One join order per rule for the whole run: they differ from the second relation on,
        # whose size one commit's deletions hardly change.
        self.checks = {}
        for p, group in plan.check.items():
            self.checks[p] = []
            for bodies in group:
                generate, used = plan._derivations[id(cheapest(bodies, self.check))]
                preds = tuple(u[len(NEW):] for u in used)
                self.checks[p].append((generate, preds, tuple(self.maps[u] for u in preds)))
        self.propagations = {p: [(b.pred[len(DEL):], b.solutions) for b in (cheapest(bodies, self.old) for bodies in group)] for p, group in plan.propagate.items()}
        self.forward = {}
        for p, group in plan.propagate.items():
            self.forward[p] = []
            for bodies in group:
                body = cheapest(bodies, self.old)
                generate, used = plan._forward[id(body)]
                self.forward[p].append((body.pred[len(DEL):], generate, tuple(self.maps[u.removeprefix(DEL)] for u in used)))

    def push(self, pred: str, rows) -> None:
        level, done, gone = self.maps[pred], self.kept[pred], self.deleted[pred]
        for row in rows:
            if row not in done and row not in gone:
                self.count += 1
                heapq.heappush(self.heap, (level[row], self.count, pred, row))

    def delete(self) -> None:
        """The candidates, lowest level first: each proved (kept) or deleted and propagated."""
        heap, kept, deleted = self.heap, self.kept, self.deleted
        while heap:
            level, _, pred, row = heapq.heappop(heap)
            if row in kept[pred] or row in deleted[pred]:
                continue
            if self.proved(pred, row, level):
                kept[pred].add(row)  # in the new model, for good: see the module docstring
                continue
            deleted[pred].add(row)
            self.gone[pred].add(row)  # both until (R) takes rows out of gone
            self.order.append((pred, row))
            first = [row]
            for head, solutions in self.propagations.get(pred, ()):
                self.push(head, solutions(self.old, first))

    def proved(self, pred: str, row: tuple, k: int) -> bool:
        """Whether ``row`` has a derivation from leaves (level below ``k``), or else a bounded
        proof from them (re-levelling the tuples proved in it)."""
        deeper = []
        first = [row]
        for generate, preds, maps in self.checks[pred]:
            if len(maps) == 1:  # most rules: one literal of the layer (a linear recursion)
                lv = maps[0]
                for rows in generate(self.check, first):
                    if lv[rows[0]] < k:
                        return True
                    if len(deeper) < TRIES:
                        deeper.append((preds, maps, rows))
                continue
            for rows in generate(self.check, first):
                if all(lv[r] < k for lv, r in zip(maps, rows)):
                    return True
                if len(deeper) < TRIES:
                    deeper.append((preds, maps, rows))
        # Lowest non-leaf first: the nearest to a leaf (on a closure, the shortest way round).
        deeper.sort(key=lambda d: max(lv[r] for lv, r in zip(d[1], d[2])))
        budget = [TRIES]
        for preds, maps, rows in deeper:
            proof: dict = {}
            found = self._body(preds, maps, rows, k, DEPTH - 1, ((pred, row),), proof, budget)
            if found is not None and self._relevel(proof, found, k):
                return True
            if budget[0] <= 0:
                break
        return False

    def _body(self, preds: tuple, maps: tuple, rows: tuple, k: int, depth: int, path: tuple, proof: dict, budget: list) -> "tuple[int, int | None] | None":
        """One derivation's body proved below ``k`` with ``depth`` rule applications left:
        (height, highest leaf level) or None; each tuple it proves goes to ``proof`` (keyed by
        predicate and row: its height)."""
        height, top = 0, None
        for pred, lv, r in zip(preds, maps, rows):
            level = lv[r]
            if level < k:  # a leaf
                top = level if top is None else max(top, level)
                continue
            node = (pred, r)
            if node in path:  # no tuple proved through itself
                return None
            if node not in proof:
                found = self._prove(pred, r, k, depth, path, proof, budget)
                if found is None:
                    return None
                if found[1] is not None:
                    top = found[1] if top is None else max(top, found[1])
            height = max(height, proof[node])
        return height, top

    def _prove(self, pred: str, row: tuple, k: int, depth: int, path: tuple, proof: dict, budget: list) -> "tuple[int, int | None] | None":
        """A proof of ``row`` (not deleted, of level ``k`` or above) with ``depth`` rule
        applications, trying derivations while ``budget`` lasts: (height, highest leaf) or None."""
        if depth <= 0:
            return None
        node = (pred, row)
        inner = (*path, node)
        first = [row]
        mark = len(proof)
        for generate, preds, maps in self.checks[pred]:
            for rows in generate(self.check, first):
                budget[0] -= 1
                if budget[0] < 0:
                    return None
                found = self._body(preds, maps, rows, k, depth - 1, inner, proof, budget)
                if found is not None:
                    proof[node] = found[0] + 1
                    return found[0] + 1, found[1]
                while len(proof) > mark:  # a derivation that fails leaves nothing proved
                    proof.popitem()
        return None

    def _relevel(self, proof: dict, found: tuple, k: int) -> bool:
        """The tuples proved get levels between their proof's highest leaf m and the candidate's
        ``k``: m + h·⌊(k − m)/H⌋ for height h, H the candidate's; False when no integer fits."""
        height, top = found[0] + 1, found[1]
        if top is None:  # proved from lower layers alone
            top = k - height * LEVEL_GAP
        gap = (k - top) // height
        if gap < 1:
            return False
        for (pred, row), h in proof.items():
            self.maps[pred][row] = top + h * gap
            self.kept[pred].add(row)
        return True

    def rederive(self, number: dict) -> None:
        """(R) as a worklist: each deleted tuple with a derivation over the new state so far is
        rederived, given a level ``LEVEL_GAP`` above the highest of the layer's tuples in that
        derivation (``number[p](row, level)``: near its rounds, not above every level, so that later
        proofs may still use it as a leaf), and propagated forward to the deleted tuples it derives."""
        todo: list[tuple[str, tuple]] = []

        def again(pred: str, row: tuple, maps: tuple, rows: tuple) -> None:
            self.gone[pred].discard(row)
            self.red[pred].add(row)
            if pred in number:
                number[pred](row, max((lv[r] for lv, r in zip(maps, rows)), default=None))
            todo.append((pred, row))

        for pred, row in self.order:
            if row not in self.gone[pred]:
                continue
            for generate, _, maps in self.checks[pred]:
                rows = next(generate(self.check, [row]), None)
                if rows is not None:
                    again(pred, row, maps, rows)
                    break
            while todo:
                p, r = todo.pop()
                first = [r]
                for head, generate, maps in self.forward.get(p, ()):
                    gone = self.gone[head]
                    for h, *rows in generate(self.new, first):
                        if h in gone:
                            again(head, h, maps, rows)


__all__ = ["DEPTH", "Deletions", "LEVEL_GAP", "TRIES", "recursive"]
