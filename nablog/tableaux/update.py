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
under it, :mod:`nablog.tableaux.ground_model`); the *strong minimality test* (Def. 15, 16 for
deletions; Def. 19, 20 for insertions) then closes a branch unless every change ``s`` is needed:
undoing ``s`` alone makes the request or a constraint fail again, and that failure is ``s``'s
certificate. The *materialized* variant
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

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from .ground_model import SignedAtom, GroundAtom, GroundModel, change_key, show, show_set
from .hyper import Branch, Clause, HyperTableau, Node


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


def complement(literal) -> Goal | None:
    if isinstance(literal, Goal):
        return Goal("-" if literal.sign == "+" else "+", literal.atom)
    return None


@dataclass(frozen=True)
class TableauRealization:
    """A hitting set read off an accepted branch, with each change's certificate (Def. 15, 19)."""

    changes: frozenset[SignedAtom]
    certificate: tuple[tuple[SignedAtom, str], ...] = ()
    branch: tuple = ()

    def lines(self) -> list[str]:
        return [f"{sign}{show(a)}" for sign, a in sorted(self.changes, key=change_key)]

    def reason(self) -> str:
        if not self.certificate:
            return ""
        return "; ".join(f"{sign}{show(a)}: {why}" for (sign, a), why in self.certificate)


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
        for sign, a in sorted(p.protected, key=change_key):
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

    def hitting_set(self, branch: Branch) -> frozenset[SignedAtom]:
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
            return f"HS = {show_set(hs)} fails: {failures[0]} (unfounded support)"
        if self.materialized:
            result = TableauRealization(hs, (), branch.literals)
        else:
            certificate, why_not = self.model.minimality(hs)
            if certificate is None:
                return f"HS = {show_set(hs)} {why_not}"
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

    def _change(self, literal) -> int:
        """1 for a literal of HS(b) (a base change), else 0: the cost bounded by ``max_size``."""
        return 1 if isinstance(literal, Goal) and (literal.sign, literal.atom) in self.candidates else 0

    @property
    def cut(self) -> bool:
        """Whether the last exploration left out a branch for asking more than ``max_size`` changes."""
        return getattr(self.tableau, "cut", False)

    def realizations(self, stop: Callable[[], bool] | None = None, max_size: int | None = None) -> Iterator[TableauRealization]:
        """The accepted hitting sets, streamed depth-first (each once; the materialized variant's
        may include non-minimal ones, see :meth:`minimal_realizations`). With ``max_size``, a
        branch is closed as soon as its hitting set would exceed that many changes: HS(b) only
        grows along a branch, so every accepted hitting set of at most ``max_size`` changes is
        still found."""
        found: list[TableauRealization] = []
        seen: set[frozenset[SignedAtom]] = set()
        for _ in self.tableau.branches(lambda b: self._check(b, found.append), stop=stop, budget=max_size, cost=self._change):
            result = found.pop()
            if result.changes in seen:
                continue
            seen.add(result.changes)
            yield result

    def minimal_realizations(self, stop: Callable[[], bool] | None = None, max_size: int | None = None) -> Iterator[TableauRealization]:
        """The subset-minimal realizations, streamed: the branches' own for the minimality-test
        variant; for the materialized one each branch's hitting set shrunk to a minimal one
        inside it (each once). By Lemma 5 every minimal realization is some branch's hitting
        set, so both give every minimal realization and nothing else — with ``max_size``, every
        one of at most that many changes and none larger."""
        if not self.materialized:
            yield from self.realizations(stop, max_size)
            return
        found: list[frozenset[SignedAtom]] = []
        for result in self.realizations(stop, max_size):
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
                last["note"] = f"HS = {show_set(r.changes)}: {what}"
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


__all__ = ["Goal", "TableauRealization", "UpdateTableau", "Use"]
