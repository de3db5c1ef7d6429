"""Update tableaux (seed 003, Def. 14, 24): hyper tableaux whose open branches are base updates.

The clause set is built from a *ground problem*: the relevant ground rule instances of a
view-update request (``nablog.solver.ground.Relevance`` finds them; every atom outside them keeps
its current value), so nothing is grounded over the whole Herbrand base. Its literals are goals
on the state after the update: ``+a`` (``a`` must hold) and ``-a`` (``a`` must not hold — the
paper's ``¬a``); ``+a`` and ``-a`` are complementary. For each derived atom ``a`` with ground
instances ``r1 … rk``:

- deletion, IDB* (Def. 12, 13): ``-b1 ∨ … ∨ +c1 ∨ … ← -a`` for each instance
  ``a ← b1, …, not c1, …`` — one body literal must fail; the request ``-A`` is the only fact, so
  the tableau is focused on it;
- insertion, IDB** with the magic-set reading (Def. 17, 18): ``use(r1) ∨ … ∨ use(rk) ← +a``, and
  ``+b ← use(r)``, ``-c ← use(r)`` for each literal of ``r`` — some instance must hold, called
  top-down from the request ``+A``;
- a protected base fact may not change: ``← +b`` (or ``← -b``);
- constraints (denial instances ``-b1 ∨ … ∨ +c1 ∨ …``, required atoms ``+a``) are held back and
  added when a finished branch violates them: the ``V ≠ ∅`` loop of Algorithms 3–6.

The hitting set of an open finished branch (Def. 14) is the set of base changes it asks for:
``+b`` for a base fact absent now, ``-b`` for one present now. A finished branch is accepted when
its hitting set makes the request and every constraint hold (the ground program is evaluated
under it); the *strong minimality test* (Def. 15, 16 for deletions; Def. 19, 20 for insertions)
then closes a branch unless every change ``s`` is needed: undoing ``s`` alone makes the request
or a constraint fail again, and that failure is ``s``'s certificate. The *materialized* variant
(Def. 23–26, Algorithms 5, 6) transforms only the rule instances true in the current model
(IDB+, the least Herbrand model kept as a materialized view) and runs no minimality test.

Seed 003, Example 2: delete ``p`` from ``p ← a ∧ e. q ← a ∧ f. p ← b ∧ f. q ← b ∧ e. p ← q.
q ← a.`` with EDB ``a, e, f`` and ``← b`` (the ground problem written by hand; only ``-a``):

>>> from types import SimpleNamespace as Problem
>>> problem = Problem(
...     candidates=[("-", ("a", ())), ("-", ("e", ())), ("-", ("f", ())), ("+", ("b", ()))],
...     protected=set(),
...     rules=[(("p", ()), (("a", ()), ("e", ())), ()), (("q", ()), (("a", ()), ("f", ())), ()),
...            (("p", ()), (("b", ()), ("f", ())), ()), (("q", ()), (("b", ()), ("e", ())), ()),
...            (("p", ()), (("q", ()),), ()), (("q", ()), (("a", ()),), ())],
...     denials=[("ic", (("b", ()),), ())],
...     require_true=[], require_false=[("request", ("p", ()))])
>>> tableau = UpdateTableau(problem, current={("a", ()), ("e", ()), ("f", ()), ("p", ()), ("q", ())})
>>> [r.lines() for r in tableau.realizations()]
[['-a']]
>>> print(tableau.tree())
-p
  -q
    -a
      -b
        [open, finished] HS = {-a}: minimal (-a: p holds again without it)
      -f
        -b  [closed: HS = {-a, -f} fails the minimality test: -f is not needed]
        -e  [closed: HS = {-a, -e, -f} fails the minimality test: -e is not needed]

References
----------
Seed 003 (Delhibabu & Behrend), Def. 11–20, 23–26, Algorithms 3–6; C. Aravindan, P. Baumgartner,
A rational and efficient algorithm for view deletion in databases, ILPS 1997.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import networkx as nx

from .hyper import Branch, Clause, HyperTableau, Node

GroundAtom = tuple[str, tuple]
Change = tuple[str, GroundAtom]  # ("+" | "-", atom)


@dataclass(frozen=True)
class Goal:
    """A literal of an update tableau: ``+a`` (a must hold after the update) or ``-a`` (must not)."""

    sign: str
    atom: GroundAtom

    def __str__(self) -> str:
        return self.sign + show(self.atom)


@dataclass(frozen=True)
class Use:
    """The choice of ground rule instance ``index`` to derive its head (the insertion side)."""

    index: int
    text: str

    def __str__(self) -> str:
        return f"use {self.text}"


def show(atom: GroundAtom) -> str:
    from ..lang import Atom

    return str(Atom(atom[0], atom[1]))


def complement(literal) -> Goal | None:
    if isinstance(literal, Goal):
        return Goal("-" if literal.sign == "+" else "+", literal.atom)
    return None


@dataclass(frozen=True)
class TableauRealization:
    """A hitting set read off an accepted branch, with each change's certificate (Def. 15, 19)."""

    changes: frozenset[Change]
    certificate: tuple[tuple[Change, str], ...] = ()
    branch: tuple = ()

    def lines(self) -> list[str]:
        return [f"{sign}{show(a)}" for sign, a in sorted(self.changes, key=_change_key)]

    def reason(self) -> str:
        if not self.certificate:
            return ""
        return "; ".join(f"{sign}{show(a)}: {why}" for (sign, a), why in self.certificate)


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

    def values(self, changes: Iterable[Change]) -> "_Values":
        """Truth values of the problem's atoms after ``changes`` (stratified, least fixpoint),
        computed on demand: an atom no change reaches keeps its current value, and a derived
        atom outside recursion is true as soon as one of its instances is."""
        changed = {a: sign == "+" for sign, a in changes}
        reached: set[GroundAtom] = set(changed)
        for a in changed:
            reached |= self.reach(a)
        return _Values(self, changed, reached)

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
        # Those failing now are re-checked; another can only start failing when one of its
        # atoms takes a new value in the direction that fails it.
        ks = {k for k in self.failing_now if self._fails(self.checks[k], value)}
        for a in value.reached & self.watch.keys():  # the changes and what they reach
            new = value.get(a)
            if new != self.now.get(a, False):
                ks.update(k for k in self.watch[a][new] if k not in ks and self._fails(self.checks[k], value))
        return [self.checks[k] for k in sorted(ks)]

    def failures(self, value) -> list[str]:
        """What fails in a state: request atoms, required atoms, violated constraint instances."""
        return [describe(check) for check in self.failing(value)]

    def realizes(self, changes: Iterable[Change]) -> bool:
        return not self.failing(self.values(changes))

    def minimality(self, hs: frozenset[Change]) -> tuple[tuple | None, str]:
        """The strong minimality test (Def. 15, 19) of a realizing change set: ``(certificate,
        "")`` when every change ``s`` is needed — undoing it alone fails, the failure is its
        certificate — and, up to six changes, no smaller subset realizes the request either
        (with negation, undoing two changes can succeed where undoing each fails); else
        ``(None, why)``. The same subsets as ``Verifier.minimal`` re-checks on the whole
        database, so a certified realization needs no re-check (tests/solver: they agree)."""
        certificate = []
        for s in sorted(hs, key=_change_key):
            undone = self.failing(self.values(hs - {s}))
            if not undone:
                return None, f"fails the minimality test: {s[0]}{show(s[1])} is not needed"
            certificate.append((s, describe(undone[0]) + " without it"))
        smaller = self._smaller(hs)
        if smaller is not None:
            return None, f"is not minimal: {_show_set(smaller)} realizes the request"
        return tuple(certificate), ""

    def _smaller(self, hs: frozenset[Change]) -> frozenset[Change] | None:
        """Up to six changes, a realizing subset with two or more changes fewer (the smallest)."""
        if len(hs) <= 6:
            for size in range(len(hs) - 1):
                for subset in itertools.combinations(sorted(hs, key=_change_key), size):
                    if self.realizes(subset):
                        return frozenset(subset)
        return None

    def shrink(self, hs: frozenset[Change]) -> tuple[frozenset[Change], tuple]:
        """A minimal realization inside a realizing change set, with its certificate: changes not
        needed are dropped one at a time until a pass drops none (its failures are then the
        certificate), and up to six changes the smallest realizing subset is taken."""
        while True:
            certificate, dropped = [], False
            for s in sorted(hs, key=_change_key):
                undone = self.failing(self.values(hs - {s}))
                if undone:
                    certificate.append((s, describe(undone[0]) + " without it"))
                else:
                    hs, dropped = hs - {s}, True
            if dropped:
                continue
            smaller = self._smaller(hs)
            if smaller is None:
                return hs, tuple(certificate)
            hs = smaller


class _Values:
    """The atoms' values after a set of changes, computed when asked (see GroundModel.values)."""

    def __init__(self, model: GroundModel, changed: dict[GroundAtom, bool], reached: set[GroundAtom]):
        self.model = model
        self.changed = changed
        self.reached = reached
        self.memo: dict[GroundAtom, bool] = {}
        self.failing: list[tuple] | None = None  # GroundModel.failing, once asked

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


class UpdateTableau:
    """The update tableau of a ground problem (see the module docstring).

    Parameters
    ----------
    problem
        A ground problem: ``candidates`` (sign, atom), ``protected``, ``rules`` (head, positive
        body, negative body), ``denials`` (name, positive, negative), ``require_true`` and
        ``require_false`` (name, atom; the name ``"request"`` marks the request).
    current : set of ground atoms
        The atoms of the problem true in the current model (the materialized view).
    materialized : bool
        Algorithms 5, 6: IDB+ clauses and no minimality test.
    """

    def __init__(self, problem, current: Iterable[GroundAtom] = (), materialized: bool = False):
        self.problem = problem
        self.current = set(current)
        self.materialized = materialized
        self.model = GroundModel(problem, self.current)
        self.candidates = set(problem.candidates)
        self.held_back: set[Clause] = set()
        self.deferred: dict[GroundAtom, list[int]] = {}  # IDB+: instances false now, added when needed
        self.tableau = HyperTableau(self._clauses(), complement)

    # -- the clause set ------------------------------------------------------------------------------

    def _instance_text(self, i: int) -> str:
        head, pos, neg = self.problem.rules[i]
        body = [show(b) for b in pos] + [f"not {show(c)}" for c in neg]
        return f"{show(head)} :- {', '.join(body)}" if body else show(head)

    def _deletion_clause(self, i: int) -> Clause:
        head, pos, neg = self.problem.rules[i]
        return Clause(tuple(Goal("-", b) for b in pos) + tuple(Goal("+", c) for c in neg), (Goal("-", head),), f"IDB*: {self._instance_text(i)}")

    def _clauses(self) -> Iterator[Clause]:
        p = self.problem
        for name, a in p.require_true:
            if name == "request":
                yield Clause((Goal("+", a),), (), f"request +{show(a)}")
        for name, a in p.require_false:
            if name == "request":
                yield Clause((Goal("-", a),), (), f"request -{show(a)}")
        for sign, a in sorted(p.protected, key=_change_key):
            yield Clause((), (Goal(sign, a),), f"protected {show(a)}")
        for head, indices in self.model.instances.items():
            uses = tuple(Use(i, self._instance_text(i)) for i in indices)
            yield Clause(uses, (Goal("+", head),), f"IDB**: {show(head)} needs one of its instances")
            for i in indices:
                _, pos, neg = p.rules[i]
                for b in pos:
                    yield Clause((Goal("+", b),), (uses[indices.index(i)],), f"magic: {self._instance_text(i)}")
                for c in neg:
                    yield Clause((Goal("-", c),), (uses[indices.index(i)],), f"magic: {self._instance_text(i)}")
                if self.materialized and not self._true_now(i):
                    self.deferred.setdefault(head, []).append(i)
                else:
                    yield self._deletion_clause(i)
        # A derived atom with no instance cannot be made true.
        for a in {a for _, a in p.require_true} | {b for _, pos, neg in p.rules for b in (*pos, *neg)}:
            if a not in self.model.instances and a not in self.model.candidate:
                yield Clause((), (Goal("+", a),), f"{show(a)} has no rule instance")

    def _true_now(self, i: int) -> bool:
        _, pos, neg = self.problem.rules[i]
        return all(b in self.current for b in pos) and not any(c in self.current for c in neg)

    # -- branches --------------------------------------------------------------------------------------

    def hitting_set(self, branch: Branch) -> frozenset[Change]:
        """HS(b) (Def. 14): the base changes the branch asks for."""
        return frozenset((g.sign, g.atom) for g in branch.literals if isinstance(g, Goal) and (g.sign, g.atom) in self.candidates)

    def _check(self, branch: Branch, accepted: Callable[[TableauRealization], None] | None = None):
        """The V ≠ ∅ loop and the minimality test for a finished branch: a held-back clause it
        violates, a reason to close it, or None to accept it."""
        hs = self.hitting_set(branch)
        value = self.model.values(hs)
        on_branch = set(branch.literals)
        missing = self._violated_clause(value, on_branch)
        if missing is not None:
            return missing
        failures = self.model.failures(value)
        if failures:
            return f"HS = {_show_set(hs)} fails: {failures[0]} (unfounded support)"
        if self.materialized:
            result = TableauRealization(hs, (), branch.literals)
        else:
            certificate, why_not = self.model.minimality(hs)
            if certificate is None:
                return f"HS = {_show_set(hs)} {why_not}"
            result = TableauRealization(hs, certificate, branch.literals)
        if accepted is not None:
            accepted(result)
        return None

    def _violated_clause(self, value: dict, on_branch: set) -> Clause | None:
        """A clause of the set not yet in the tableau that this state violates."""
        p = self.problem
        for check in self.model.failing(value):
            kind, name = check[0], check[1]
            if kind == "true" and name != "request":
                clause = Clause((Goal("+", check[2]),), (), f"required {show(check[2])}")
                if clause not in self.held_back:
                    self.held_back.add(clause)
                    return clause
            elif kind in ("denial", "one"):
                # An at-most-one group stands for its pairwise denial instances: the one of the
                # first two values holding here is added.
                pos, neg = (check[2], check[3]) if kind == "denial" else (sum(self.model.holding(check, value)[:2], ()), ())
                # The literals this branch asked to change are its body: the clause then applies
                # only to branches making the same changes (a clause applicable everywhere would
                # split every later branch); the unconditional clause is the fallback when the
                # violation comes about otherwise.
                failing = [Goal("-", b) for b in pos] + [Goal("+", c) for c in neg]
                asked = tuple(g for g in failing if complement(g) in on_branch)
                conditional = Clause(tuple(g for g in failing if complement(g) not in asked), tuple(complement(g) for g in asked), f"constraint {name}")
                for clause in (conditional, Clause(tuple(failing), (), f"constraint {name}")):
                    if clause not in self.held_back:
                        self.held_back.add(clause)
                        return clause
        for head, indices in self.deferred.items():
            if Goal("-", head) in on_branch and value.get(head, False):
                for i in list(indices):
                    _, pos, neg = p.rules[i]
                    if all(value.get(b, False) for b in pos) and not any(value.get(c, False) for c in neg):
                        indices.remove(i)
                        return self._deletion_clause(i)
        return None

    def realizations(self, stop: Callable[[], bool] | None = None) -> Iterator[TableauRealization]:
        """The accepted hitting sets, streamed depth-first (each once; the materialized variant's
        may include non-minimal ones, see :func:`minimal_family`)."""
        found: list[TableauRealization] = []
        seen: set[frozenset[Change]] = set()
        for _ in self.tableau.branches(lambda b: self._check(b, found.append), stop=stop):
            result = found.pop()
            if result.changes in seen:
                continue
            seen.add(result.changes)
            yield result

    def minimal_realizations(self, stop: Callable[[], bool] | None = None) -> Iterator[TableauRealization]:
        """The subset-minimal realizations, streamed: the branches' own for the minimality-test
        variant; for the materialized one each branch's hitting set shrunk to a minimal one
        inside it (each once). By Lemma 5 every minimal realization is some branch's hitting
        set, so both give every minimal realization and nothing else."""
        if not self.materialized:
            yield from self.realizations(stop)
            return
        found: list[frozenset[Change]] = []
        for result in self.realizations(stop):
            # One containing a realization found already is not minimal, and (Lemma 5) every
            # minimal one inside it is some branch's own hitting set: skipped without a test.
            if any(f <= result.changes for f in found):
                continue
            changes, certificate = self.model.shrink(result.changes)
            if changes not in found:
                found.append(changes)
                yield TableauRealization(changes, certificate, result.branch)

    def tree(self, limit: int | None = None) -> str:
        """The update tableau as an indented tree, each finished branch with HS(b) and its verdict."""
        root = self._record(limit)
        return "\n".join(_tree_lines(root, 0))

    def dot(self, limit: int | None = None) -> str:
        return self.tableau.dot(self._annotating_check(), limit)

    def _annotating_check(self):
        def check(branch: Branch):
            verdict = self._check(branch)
            return verdict

        return check

    def _record(self, limit: int | None) -> Node:
        root = Node(None)
        seen = [0]
        last: dict = {}

        def check(branch: Branch):
            accepted: list[TableauRealization] = []
            verdict = self._check(branch, accepted.append)
            if accepted:
                r = accepted[0]
                what = "accepted" if self.materialized else "minimal (" + "; ".join(
                    f"{s[0]}{show(s[1])}: {why}" for s, why in r.certificate) + ")"
                last["note"] = f"HS = {_show_set(r.changes)}: {what}"
            return verdict

        for _ in self.tableau.branches(check, record=root, stop=lambda: limit is not None and seen[0] >= limit):
            seen[0] += 1
            _annotate_last(root, last.pop("note", ""))
        return root


def _annotate_last(root: Node, note: str) -> None:
    node = root
    while node.children:
        node = node.children[-1]
    node.status, node.note = "open", note


def _tree_lines(node: Node, depth: int) -> Iterator[str]:
    for child in node.children:
        line = "  " * depth + str(child.literal)
        if child.status == "closed":
            line += f"  [closed: {child.note.removeprefix('closed: ')}]" if child.note else "  [closed]"
        yield line
        if child.status == "open":
            yield "  " * (depth + 1) + f"[open, finished] {child.note}".rstrip()
        yield from _tree_lines(child, depth + 1)


def _change_key(change: Change):
    from ..lang import constant_sort_key

    sign, (pred, args) = change
    return (pred, tuple(constant_sort_key(v) for v in args), sign)


def _show_set(changes: Iterable[Change]) -> str:
    return "{" + ", ".join(f"{s}{show(a)}" for s, a in sorted(changes, key=_change_key)) + "}"


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


def minimal_family(sets: Iterable[frozenset]) -> list[frozenset]:
    """The subset-minimal members of a family (Lemma 3: the minimal hitting sets among the
    branches' hitting sets), in their first order."""
    family = list(dict.fromkeys(sets))
    return [s for s in family if not any(o < s for o in family)]


__all__ = ["Goal", "GroundModel", "TableauRealization", "UpdateTableau", "Use", "minimal_family"]
