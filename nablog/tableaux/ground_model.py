"""The values of a ground view-update problem's atoms after a change set, computed on demand.

An update tableau (:mod:`nablog.tableaux.update`) asks, for each finished branch, whether its
hitting set realizes the request and whether each change is needed (the strong minimality test,
seed 003, Def. 15, 19): thousands of states per request. A state is the current model (the
materialized view) plus the changes; only the atoms a change reaches are re-evaluated, stratum by
stratum (least fixpoint inside recursion), and only the checks (request, required atoms,
constraint instances, functional-dependency groups) an atom moving the failing way can break
are re-checked.
"""

from __future__ import annotations

import itertools
from typing import Iterable

import networkx as nx

from ..lang.delta import GroundAtom, SignedAtom


def show(atom: GroundAtom) -> str:
    from ..lang import Atom

    return str(Atom(atom[0], atom[1]))


class GroundModel:
    """Evaluates the ground problem under a set of changes: the atoms' values after the update."""

    def __init__(self, problem, current: Iterable[GroundAtom] = ()):
        self.problem = problem
        self.candidate = {a: sign for sign, a in problem.candidates}
        self.instances: dict[GroundAtom, list[int]] = {}
        graph = nx.DiGraph()
        for i, (head, pos, neg) in enumerate(problem.rules):
            self.instances.setdefault(head, []).append(i)
            graph.add_node(head)
            for b in (*pos, *neg):
                if b not in self.candidate:
                    graph.add_edge(b, head)
        for _, a in (*problem.require_true, *problem.require_false):
            if a not in self.candidate:
                graph.add_node(a)
        for _, pos, neg in problem.denials:
            graph.add_nodes_from(a for a in (*pos, *neg) if a not in self.candidate)
        for _, values in at_most_one(problem):
            graph.add_nodes_from(a for _, atoms in values for a in atoms if a not in self.candidate)
        condensation = nx.condensation(graph)
        members = condensation.graph["mapping"]
        groups: dict[int, list[GroundAtom]] = {}
        for atom, c in members.items():
            groups.setdefault(c, []).append(atom)
        self.order = [groups[c] for c in nx.topological_sort(condensation)]
        position = {c: i for i, c in enumerate(nx.topological_sort(condensation))}
        self.component = {atom: position[c] for atom, c in members.items()}
        # Whom each atom's value feeds: candidates included, so a change finds what it touches.
        self.feeds: dict[GroundAtom, set[GroundAtom]] = {}
        self.uses: dict[GroundAtom, list[int]] = {}  # the instances reading an atom
        for i, (head, pos, neg) in enumerate(problem.rules):
            for b in (*pos, *neg):
                self.feeds.setdefault(b, set()).add(head)
                self.uses.setdefault(b, []).append(i)
        self.recursive = [self._is_recursive(k) for k in range(len(self.order))]
        self._reach: dict[GroundAtom, frozenset[GroundAtom]] = {}
        self.current = set(current)
        self.now = self._evaluate({a: sign == "-" for a, sign in self.candidate.items()}, range(len(self.order)))
        # The checks (request and required atoms, denial instances) each atom takes part in, and
        # those failing now: a change set re-checks only what it reaches; with thousands of
        # denial instances a full scan per state was 75% of an insertion's time (1,000 staff).
        self.checks: list[tuple] = (
            [("true", name, a) for name, a in problem.require_true]
            + [("false", name, a) for name, a in problem.require_false]
            + [("denial", name, pos, neg) for name, pos, neg in problem.denials]
            + [self._group(name, values) for name, values in at_most_one(problem)]
        )
        # watch[a][v]: the checks a can start failing by a becoming v (True or False).
        self.watch: dict[GroundAtom, tuple[list[int], list[int]]] = {}
        for k, check in enumerate(self.checks):
            if check[0] == "denial":
                becoming = [(b, True) for b in check[2]] + [(c, False) for c in check[3]]
            elif check[0] == "one":
                becoming = [(a, True) for _, atoms in check[2] for a in atoms]
            else:
                becoming = [(check[2], check[0] == "false")]
            for a, v in becoming:
                self.watch.setdefault(a, ([], []))[v].append(k)
        self.failing_now = [k for k, check in enumerate(self.checks) if self._fails(check, self.now)]
        # Without negation, undoing a deletion only makes atoms true: which single undos of a
        # deleting change set fail a check is one pass over the atoms (see undo_failures).
        self.positive = not any(neg for _, _, neg in problem.rules) and not any(check[0] == "one" or (check[0] == "denial" and check[3]) for check in self.checks)

    def _evaluate(self, value: dict[GroundAtom, bool], components) -> dict[GroundAtom, bool]:
        """Recompute the given components (indices into ``order``, ascending) in place."""
        for k in components:
            value.update(self.fixpoint(k, lambda b: value.get(b, False)))
        return value

    def fixpoint(self, k: int, outside) -> dict[GroundAtom, bool]:
        """The least fixpoint of component ``k``, reading the atoms below it with ``outside``."""
        component = self.order[k]
        value = {a: False for a in component}
        rules = self.problem.rules
        grew = True
        while grew:
            grew = False
            for a in component:
                if value[a]:
                    continue
                for i in self.instances.get(a, ()):
                    _, pos, neg = rules[i]
                    if all(value[b] if b in value else outside(b) for b in pos) and not any(outside(c) for c in neg):
                        value[a] = grew = True
                        break
        return value

    def values(self, changes: Iterable[SignedAtom]) -> "_Values":
        """Truth values of the problem's atoms after ``changes`` (stratified, least fixpoint),
        computed on demand: an atom no change reaches keeps its current value, and a derived
        atom outside recursion is true as soon as one of its instances is."""
        changed = {a: sign == "+" for sign, a in changes}
        reached: set[GroundAtom] = set(changed)
        for a in changed:
            reached |= self.reach(a)
        return _Values(self, changed, reached)

    def undone(self, base: "_Values", undo: Iterable[SignedAtom]) -> "_Values":
        """The values after ``base``'s changes less ``undo``, evaluated from ``base``'s state:
        only the atoms the undone changes reach are recomputed (the others keep their value
        there), and only the checks failing there or reached are re-checked. Shrinking a hitting
        set asks this once per change; from the current model each ask recomputed everything
        the whole set reaches."""
        if base.failing is None:
            self.failing(base)  # the checks failing there, once (read by _failing)
        atoms = {a for _, a in undo}
        own = self.reach(next(iter(atoms))) if len(atoms) == 1 else frozenset().union(*map(self.reach, atoms))
        return _Undone(self, base.changed, base.reached, own, base, atoms | base.undone if isinstance(base, _Undone) else atoms)

    def reach(self, a: GroundAtom) -> frozenset[GroundAtom]:
        """The atoms whose value may depend on ``a``'s, once per atom (a change set's reach is
        the union of its changes'; walking the graph for each state was a third of a deletion's
        minimality tests)."""
        found = self._reach.get(a)
        if found is None:
            seen, todo = {a}, [a]
            while todo:
                for head in self.feeds.get(todo.pop(), ()):
                    if head not in seen:
                        seen.add(head)
                        todo.append(head)
            found = self._reach[a] = frozenset(seen)
        return found

    def _is_recursive(self, k: int) -> bool:
        component = self.order[k]
        if len(component) > 1:
            return True
        a = component[0]
        return any(a in self.problem.rules[i][1] or a in self.problem.rules[i][2] for i in self.instances.get(a, ()))

    @staticmethod
    def _fails(check: tuple, value) -> bool:
        kind, get = check[0], value.get
        if kind == "denial":  # the common case, in loops: thousands per change set
            for b in check[2]:
                if not get(b, False):
                    return False
            for c in check[3]:
                if get(c, False):
                    return False
            return True
        if kind == "one":
            return len(GroundModel.holding(check, value)) > 1
        return not get(check[2], False) if kind == "true" else get(check[2], False)

    def _group(self, name: str, values: list) -> tuple:
        """An at-most-one check: the group's values, which value each atom stands for, and the
        atoms true now (a group can have a value per key of the whole relation)."""
        of = {a: v for v, (_, atoms) in enumerate(values) for a in atoms}
        return ("one", name, values, of, tuple(a for a in of if self.now.get(a, False)))

    @staticmethod
    def holding(check: tuple, value) -> list[tuple[GroundAtom, ...]]:
        """The dependent values of an at-most-one group that hold, each as its true atoms (none
        for a value that holds whatever changes), in the group's order."""
        _, _, values, of, true_now = check
        if isinstance(value, _Values):  # only atoms true now or moved can be true
            maybe = set(true_now) | {a for a in value.reached if a in of}
        else:
            maybe = of.keys()
        true: dict[int, list[GroundAtom]] = {v: [] for v, (certain, _) in enumerate(values) if certain}
        for a in maybe:
            if value.get(a, False):
                true.setdefault(of[a], []).append(a)
        return [tuple(sorted(true[v], key=values[v][1].index)) for v in sorted(true)]

    def failing(self, value) -> list[tuple]:
        """The checks failing in a state, in the problem's order: for the values after a change
        set, those failing now that it does not reach and those it reaches that fail."""
        if not isinstance(value, _Values):
            return [c for c in self.checks if self._fails(c, value)]
        if value.failing is None:
            value.failing = self._failing(value)
        return value.failing

    def _failing(self, value: "_Values") -> list[tuple]:
        # Those failing in the state it starts from are re-checked; another can only start
        # failing when one of its atoms takes a new value in the direction that fails it.
        if isinstance(value, _Undone):
            before, start, moved = value.base.get, value.base.failing_ks, value.own
        else:
            before, start, moved = self.now.get, self.failing_now, value.reached
        ks = {k for k in start if self._fails(self.checks[k], value)}
        watched = self.watch.keys()
        for a in ([a for a in watched if a in moved] if len(watched) < len(moved) else [a for a in moved if a in watched]):  # the changes and what they reach
            new = value.get(a)
            if new != before(a, False):
                ks.update(k for k in self.watch[a][new] if k not in ks and self._fails(self.checks[k], value))
        value.failing_ks = sorted(ks)
        return [self.checks[k] for k in value.failing_ks]

    def failures(self, value) -> list[str]:
        """What fails in a state: request atoms, required atoms, violated constraint instances."""
        return [describe(check) for check in self.failing(value)]

    def realizes(self, changes: Iterable[SignedAtom]) -> bool:
        return not self.failing(self.values(changes))

    def minimality(self, hs: frozenset[SignedAtom]) -> tuple[tuple | None, str]:
        """The strong minimality test (Def. 15, 19) of a realizing change set: ``(certificate,
        "")`` when every change ``s`` is needed — undoing it alone fails, the failure is its
        certificate — and, up to six changes, no smaller subset realizes the request either
        (with negation, undoing two changes can succeed where undoing each fails); else
        ``(None, why)``. The same subsets as ``Verifier.minimal`` re-checks on the whole
        database, so a certified realization needs no re-check (tests/solver: they agree)."""
        certificate = []
        for s in sorted(hs, key=change_key):
            undone = self.failing(self.values(hs - {s}))
            if not undone:
                return None, f"fails the minimality test: {s[0]}{show(s[1])} is not needed"
            certificate.append((s, describe(undone[0]) + " without it"))
        smaller = self._smaller(hs)
        if smaller is not None:
            return None, f"is not minimal: {show_set(smaller)} realizes the request"
        return tuple(certificate), ""

    def _smaller(self, hs: frozenset[SignedAtom], state: "_Values | None" = None) -> frozenset[SignedAtom] | None:
        """Up to six changes, a realizing subset with two or more changes fewer (the smallest);
        given ``hs``'s ``state``, each subset is evaluated from it (:meth:`undone`)."""
        if len(hs) <= 6:
            for size in range(len(hs) - 1):
                for subset in itertools.combinations(sorted(hs, key=change_key), size):
                    value = self.values(subset) if state is None else self.undone(state, hs.difference(subset))
                    if not self.failing(value):
                        return frozenset(subset)
        return None

    def undo_failures(self, state: "_Values", order: list[SignedAtom]) -> list[tuple | None] | None:
        """For a realizing set of deletions ``order`` whose state is ``state``, over a problem
        without negation: for each change, a check that fails when it alone is undone (None: it
        is not needed) — every removal evaluated at once from the hitting set's state. Each atom
        false there gets the set (a bit mask over ``order``) of the undos that make it true: a
        base atom its own undo, a derived one the union over its instances of the intersection
        over their bodies (a fixpoint inside recursion); an atom true there stays true under
        every undo, one no change reaches stays false. None when this does not apply (an
        insertion, negation, an at-most-one group) or the derivations are too deep to follow."""
        if not self.positive or any(sign != "-" for sign, _ in order):
            return None
        everything = (1 << len(order)) - 1
        bit = {a: 1 << k for k, (_, a) in enumerate(order)}
        memo: dict[GroundAtom, int] = {}
        rules = self.problem.rules

        def body_true(i: int) -> int:
            both = everything
            for b in rules[i][1]:
                both &= made_true(b)
                if not both:
                    break
            return both

        def made_true(a: GroundAtom) -> int:
            found = memo.get(a)
            if found is not None:
                return found
            if a in bit:
                memo[a] = bit[a]
                return bit[a]
            if state.get(a):
                memo[a] = everything
                return everything
            if a not in state.reached or a not in self.instances:
                memo[a] = 0
                return 0
            k = self.component[a]
            if not self.recursive[k]:
                memo[a] = 0  # (acyclic: never read before it is set)
                union = 0
                for i in self.instances[a]:
                    union |= body_true(i)
                    if union == everything:
                        break
                memo[a] = union
                return union
            # A recursive component: the least fixpoint of the masks (each bit its own undo).
            component = self.order[k]
            for b in component:
                memo[b] = everything if state.get(b) else 0
            grew = True
            while grew:
                grew = False
                for b in component:
                    if memo[b] == everything:
                        continue
                    union = memo[b]
                    for i in self.instances.get(b, ()):
                        union |= body_true(i)
                    if union != memo[b]:
                        memo[b], grew = union, True
            return memo[a]

        failing: list[tuple | None] = [None] * len(order)
        try:
            for check in self.checks:
                if check[0] == "false":
                    mask = made_true(check[2])
                elif check[0] == "denial":
                    mask = everything
                    for b in check[2]:
                        mask &= made_true(b)
                        if not mask:
                            break
                else:
                    continue  # a required atom: undoing a deletion cannot make it false
                for k in range(len(order)):
                    if mask >> k & 1 and failing[k] is None:
                        failing[k] = check
        except RecursionError:
            return None
        return failing

    def shrink(self, hs: frozenset[SignedAtom]) -> tuple[frozenset[SignedAtom], tuple]:
        """A minimal realization inside a realizing change set, with its certificate: changes not
        needed are dropped one at a time until a pass drops none (its failures are then the
        certificate), and up to six changes the smallest realizing subset is taken."""
        state = self.values(hs)
        while True:
            order = sorted(hs, key=change_key)
            at_once = self.undo_failures(state, order)
            if at_once is not None:
                # Without negation a set of deletions is minimal when each undo alone fails.
                unneeded = next((s for s, check in zip(order, at_once) if check is None), None)
                if unneeded is None:
                    return hs, tuple((s, describe(check) + " without it") for s, check in zip(order, at_once))
                hs, state = hs - {unneeded}, self.undone(state, (unneeded,))
                continue
            needed, dropped = [], False
            for s in sorted(hs, key=change_key):
                without = self.undone(state, (s,))
                undone = self.failing(without)
                if undone:
                    needed.append((s, undone[0]))
                else:
                    hs, dropped, state = hs - {s}, True, without
            if dropped:
                continue
            smaller = self._smaller(hs, state)
            if smaller is None:
                return hs, tuple((s, describe(check) + " without it") for s, check in needed)
            hs, state = smaller, self.values(smaller)


class _Values:
    """The atoms' values after a set of changes, computed when asked (see GroundModel.values)."""

    def __init__(self, model: GroundModel, changed: dict[GroundAtom, bool], reached: set[GroundAtom]):
        self.model = model
        self.changed = changed
        self.reached = reached
        self.memo: dict[GroundAtom, bool] = {}
        self.failing: list[tuple] | None = None  # GroundModel.failing, once asked
        self.failing_ks: list[int] = []  # their indices into GroundModel.checks

    def get(self, a: GroundAtom, default: bool = False) -> bool:
        if a in self.changed:
            return self.changed[a]
        if a not in self.reached:
            return self.model.now.get(a, default)
        if a in self.memo:
            return self.memo[a]
        try:
            return self._compute(a)
        except RecursionError:  # a very deep chain of derivations: evaluate it all at once
            full = dict(self.model.now)
            full.update(self.changed)
            self.model._evaluate(full, sorted({self.model.component[b] for b in self.reached if b in self.model.component}))
            self.memo = full
            return full.get(a, default)

    def _compute(self, a: GroundAtom) -> bool:
        model = self.model
        k = model.component[a]
        rules = model.problem.rules
        if not model.recursive[k]:
            result = False
            instances = model.instances.get(a, ())
            if not model.now.get(a, False) and len(instances) > len(self.reached):
                # False now, so every instance is: only one reading a moved atom can hold now
                # (an insertion through a join has an instance per join value to rule out).
                instances = sorted({i for b in self.reached for i in model.uses.get(b, ()) if rules[i][0] == a})
            for i in instances:
                _, pos, neg = rules[i]
                if all(self.get(b) for b in pos) and not any(self.get(c) for c in neg):
                    result = True
                    break
            self.memo[a] = result
            return result
        # A recursive component: its least fixpoint, with the atoms below it asked for.
        value = model.fixpoint(k, self.get)
        self.memo.update(value)
        return value[a]


class _Undone(_Values):
    """The values after a state's changes less some (see GroundModel.undone): atoms the undone
    changes do not reach (``own``) keep their value in the state ``base``. ``reached`` stays
    every atom that may differ from the current model (the at-most-one checks read it)."""

    def __init__(self, model: GroundModel, changed: dict[GroundAtom, bool], reached: set[GroundAtom], own: set[GroundAtom], base: _Values, undone: set[GroundAtom]):
        super().__init__(model, changed, reached)  # (changed: base's, less the undone)
        self.own = own
        self.base = base
        self.undone = undone  # base facts back at their current value

    def get(self, a: GroundAtom, default: bool = False) -> bool:
        if a in self.undone:
            return self.model.now.get(a, default)
        if a in self.changed:
            return self.changed[a]
        if a not in self.own:
            return self.base.get(a, default)
        if a in self.memo:
            return self.memo[a]
        try:
            return self._compute(a)
        except RecursionError:  # a very deep chain: these changes evaluated from the current model
            plain = self.model.values([("+" if v else "-", b) for b, v in self.changed.items() if b not in self.undone])
            self.memo = _Everything(plain)
            return plain.get(a, default)


class _Everything(dict):
    """A memo answering every atom from a plain state (an _Undone past Python's recursion)."""

    def __init__(self, values: _Values):
        super().__init__()
        self.values = values

    def __contains__(self, a) -> bool:
        return True

    def __getitem__(self, a) -> bool:
        return self.values.get(a)


def change_key(change: SignedAtom):
    from ..lang import constant_sort_key

    sign, (pred, args) = change
    return (pred, tuple(constant_sort_key(v) for v in args), sign)


def show_set(changes: Iterable[SignedAtom]) -> str:
    return "{" + ", ".join(f"{s}{show(a)}" for s, a in sorted(changes, key=change_key)) + "}"


def describe(check: tuple) -> str:
    """A failing check of GroundModel.checks in words."""
    kind, name = check[0], check[1]
    if kind == "true":
        return f"{show(check[2])} does not hold" if name == "request" else f"required {show(check[2])} does not hold"
    if kind == "false":
        return f"{show(check[2])} holds again" if name == "request" else f"{show(check[2])} holds"
    return f"constraint {name} is violated"


def at_most_one(problem) -> list:
    """A ground problem's functional-dependency groups (``GroundProblem.at_most_one``)."""
    return getattr(problem, "at_most_one", [])


__all__ = ["SignedAtom", "GroundAtom", "GroundModel", "change_key", "describe", "show", "show_set"]
