"""The `transform` method: seed 002's Algorithm 1, alternating VU and UP phases breadth-first.

The rules are normalized (§2.2) and transformed once into the view-update rules R∇ (Def. 9) and
the VU transition rules R∇τ (Def. 10). A request becomes VU seeds (Def. 8); then, round by round:

1. **VU phase** — R ∪ R∇ over the current state: definite VU rules are evaluated to a fixpoint
   with the python engine; a disjunctive rule instance whose head holds nowhere yet opens one
   branch per alternative. Each completed branch is a model of the disjunctive program; branches
   that are supersets of others are dropped, so the branches are the minimal models (the perfect
   model state in DNF rather than the paper's CNF: realizations are read off branches, and every
   example here has few of them).
2. **UP phase** — requests on base relations become base updates (Def. 10, case 4); their induced
   update (Def. 2) is computed by update propagation; contradictions (case 1) close a branch as
   ``false``; violated constraints ask for repairs (case 2; a violated denial asks for one of its
   literals to change, a disjunction resolved in the next VU phase); the compensation rules of
   case 3 turn side effects into new requests.
3. A branch whose updates satisfy the request and every constraint, with no new request, is a
   realization; rounds stop at the first that has realizations (``get_realizations``), when no
   branch asks for anything new, or at the round bound. One new constant per round serves the
   projections (§4.1).

By default the rounds go on until no branch asks for anything new, so the method returns every
minimal realization the ``asp`` method finds (for seed 003's Example 1, all three; tests check it
against ``asp`` and brute force). ``exhaustive=False`` stops at the *first* round that has
realizations, as the paper writes it: those are minimal, but realizations needing more rounds of
repair are not looked for (Example 1: only the one-fact realization). Each change set is verified
on the real database before it is shown; one that is not a realization is dropped and counted in
the message, one that is not minimal is shrunk to its minimal realizing subsets.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Set
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ..engines import PythonEngine
from ..engines.lookup import ModelIndex
from ..engines.violations import find_violations
from ..lang import Atom, Constant, Denial, Literal, Program, Requirement, Rule, Var, constant_sort_key
from ..transforms import normalize, view_update_rules
from ..transforms.propagation import DEL, INS
from ..transforms.view_update import VU_DEL, VU_INS, view_update_transitions
from .ground import _fresh_name
from .request import Request

Signed = tuple[str, str, tuple]  # ("+"/"-", predicate, arguments)


@dataclass
class Branch:
    """One alternative: the VU requests so far, disjunctions still to resolve, and the changes."""

    requests: frozenset[Signed]
    pending: tuple[tuple[Signed, ...], ...] = ()
    changes: frozenset[Signed] = frozenset()


@dataclass
class Outcome:
    change_sets: list[frozenset[Signed]] = field(default_factory=list)
    status: str = "complete"
    rounds: int = 0
    fresh: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class Algorithm1:
    """Seed 002, Algorithm 1 over one database state."""

    def __init__(
        self,
        rules: Program,
        facts: Mapping[str, Set],
        model: Mapping[str, Set],
        *,
        herbrand: bool = False,
        max_fresh: int = 2,
        max_rounds: int = 10,
        max_branches: int = 5_000,
        protected: Iterable = (),
        exhaustive: bool = True,
    ):
        self.rules = rules
        self.only_rules = Program(tuple(s for s in rules.statements if isinstance(s, Rule)))
        self.normalized = normalize(self.only_rules)
        self.derived = set(self.normalized.derived)
        self.engine = PythonEngine()
        self.facts = facts
        self.model = model
        self.normal_model = self.engine.evaluate(self.normalized, facts)
        self.index = ModelIndex(self.normal_model)
        self.herbrand = herbrand
        self.max_fresh, self.max_rounds, self.max_branches = max_fresh, max_rounds, max_branches
        self.exhaustive = exhaustive
        self.protected_relations = {p for p in protected if isinstance(p, str)}
        self.protected_facts = {p for p in protected if not isinstance(p, str)}
        self.denials = [(name, c) for name, c in rules.named_constraints() if isinstance(c, Denial)]
        self.requirements = [c for c in rules.constraints if isinstance(c, Requirement)]
        self.request_constants: set = set()

    # -- the transformed rules for a round -----------------------------------------------------------

    def _domain(self, fresh: list[str]) -> dict[tuple[str, int], list[Constant]]:
        """Candidate constants for existential variables of projections (seed 002, Def. 9.5)."""
        domain: dict[tuple[str, int], list[Constant]] = {}
        universe = sorted(self.index.constants() | set(self.rules.constants()) | self.request_constants, key=constant_sort_key) if self.herbrand else None
        for rule in self.normalized.rules:
            lits = [b for b in rule.body if isinstance(b, Literal)]
            if len(lits) != 1 or not lits[0].positive:
                continue
            q = lits[0].atom
            head_vars = set(rule.head[0].variables())
            for i, t in enumerate(q.args):
                if isinstance(t, Var) and t not in head_vars:
                    if universe is not None:
                        values = universe
                    else:
                        values = sorted(self._meets(q.pred, i), key=constant_sort_key)
                    domain[(q.pred, i)] = [v for v in values if v not in fresh] + fresh[:-1]
        return domain

    def _meets(self, pred: str, position: int) -> set:
        """Values already in the attribute positions an auxiliary column stands for: those of the
        positions it meets through rule heads and bodies, each position visited once (through
        recursion — ``p(X, Y) :- e(X, Z), p(Z, Y).`` — the positions meet themselves)."""
        values: set = set()
        seen, todo = {(pred, position)}, [(pred, position)]
        while todo:
            pred, position = todo.pop()
            values |= self.index.values(pred, position)
            if pred not in self.derived:
                continue
            for rule in self.normalized.rules:
                if rule.head[0].pred != pred:
                    continue
                var = rule.head[0].args[position]
                for b in rule.body:
                    if isinstance(b, Literal):
                        for j, t in enumerate(b.atom.args):
                            if t == var and (b.atom.pred, j) not in seen:
                                seen.add((b.atom.pred, j))
                                todo.append((b.atom.pred, j))
        return values

    # -- the algorithm ------------------------------------------------------------------------------

    def rounds(self, request: Request, deadline: float | None = None) -> Generator[tuple[list[frozenset[Signed]], tuple[str, ...]], None, Outcome]:
        """Run the algorithm, yielding after each round the change sets it found that no change
        set found so far is inside (sorted by size, then text), with the new constants in use;
        the :class:`Outcome` at the end. Without ``exhaustive`` the rounds stop at the first that
        finds one, so what is yielded is what the run finds; with it, a later round may find a
        smaller set inside one yielded earlier (the caller verifies and shrinks each)."""
        outcome = Outcome()
        yielded: set[frozenset[Signed]] = set()
        self.request_constants = {v for _, a in request.atoms() for v in a.args}
        seeds = frozenset(("+", a.pred, tuple(a.args)) for a in request.insert) | frozenset(
            ("-", a.pred, tuple(a.args)) for a in request.delete
        )
        frontier = [Branch(seeds)]
        found: list[frozenset[Signed]] = []
        seen: set[frozenset[Signed]] = set()
        for round_ in range(1, self.max_rounds + 1):
            outcome.rounds = round_
            if len(outcome.fresh) < self.max_fresh:
                outcome.fresh.append(_fresh_name(len(outcome.fresh) + 1, self.index.constants()))
            elif self._has_projections() and not any("new constant" in n for n in outcome.notes):
                outcome.notes.append(f"round {round_} needs a new constant for a projection, but max_fresh={self.max_fresh} are in use")
            vu = view_update_rules(self.normalized, self._domain(outcome.fresh), fresh=outcome.fresh[-1] if outcome.fresh else "new")
            definite = Program(tuple(r for r in vu.rules if len(r.head) == 1))
            disjunctive = [r for r in vu.rules if len(r.head) > 1]
            transitions = view_update_transitions(self.normalized.with_statements(self.requirements), vu)
            compensation = Program(tuple(r for r in transitions.rules if r.head[0].pred.startswith((VU_INS, VU_DEL))))
            next_frontier: list[Branch] = []
            for branch in frontier:
                if _expired(deadline):
                    outcome.status = "timeout"
                    break
                models = self._vu_phase(branch, definite, disjunctive, outcome, deadline)
                for model in models:
                    if _expired(deadline):
                        outcome.status = "timeout"
                        break
                    result = self._up_phase(model, request, compensation)
                    if result is None:
                        continue  # false: a contradiction
                    changes, new_requests, repairs, consistent = result
                    if consistent and not new_requests and not repairs:
                        found.append(changes)
                    elif new_requests or repairs:
                        key = model.requests | new_requests
                        if key not in seen:
                            seen.add(key)
                            next_frontier.append(Branch(model.requests | new_requests, repairs, changes))
                if outcome.status == "timeout" or _expired(deadline):
                    outcome.status = "timeout"
                    break
            new_sets = [c for c in set(found) if c not in yielded and not any(o < c for o in found)]
            if new_sets:
                yielded.update(new_sets)
                yield sorted(new_sets, key=lambda c: (len(c), sorted(map(str, c)))), tuple(outcome.fresh)
            if outcome.status == "timeout":
                break
            if found and not self.exhaustive:
                break
            if not next_frontier:
                break
            if len(next_frontier) > self.max_branches:
                outcome.status = "bounded"
                outcome.notes.append(f"more than {self.max_branches} branches")
                next_frontier = next_frontier[: self.max_branches]
            frontier = next_frontier
        else:
            outcome.status = "bounded"
            outcome.notes.append(f"{self.max_rounds} rounds without a fixpoint")
        if outcome.notes and outcome.status == "complete":
            outcome.status = "bounded"
        minimal = [c for c in set(found) if not any(o < c for o in found)]
        outcome.change_sets = sorted(minimal, key=lambda c: (len(c), sorted(map(str, c))))
        return outcome

    def _has_projections(self) -> bool:
        return any(k[0] for k in self._domain([]))  # some projection has an existential variable

    def _state(self, changes: frozenset[Signed]):
        """The current state: the normalized model after the branch's base changes."""
        if not changes:
            return self.normal_model, {}, {}
        insert: dict[str, set] = {}
        delete: dict[str, set] = {}
        for sign, pred, args in changes:
            (insert if sign == "+" else delete).setdefault(pred, set()).add(args)
        return self.engine.update(self.normalized, self.normal_model, insert=insert, delete=delete, changes=True)

    def _vu_phase(self, branch: Branch, definite: Program, disjunctive: list[Rule], outcome: Outcome, deadline: float | None = None):
        """The minimal models of R ∪ R∇ over the branch's current state, from its requests (those
        found by ``deadline``: the choices branch exponentially, so the walk stops there too)."""
        state, _, _ = self._state(branch.changes)
        triggers = Program(
            tuple(Rule((Atom(f"choice__{k}", tuple(dict.fromkeys(v for h in r.head for v in h.variables()))),), r.body) for k, r in enumerate(disjunctive))
        )
        done: list[frozenset[Signed]] = []
        stack = [(branch.requests, branch.pending)]
        while stack and not _expired(deadline):
            requests, pending = stack.pop()
            requests = self._closure(requests, definite, state)
            if requests is None:
                continue
            choices = [alt for alt in pending if not any(a in requests for a in alt)]
            choices += self._open_choices(requests, triggers, disjunctive, state)
            if not choices:
                if not any(d <= requests for d in done):
                    done = [d for d in done if not requests <= d] + [requests]
                continue
            first = choices[0]
            rest = tuple(c for c in pending if c is not first)
            for alternative in first:
                if _contradicts(alternative, requests):
                    continue
                stack.append((requests | {alternative}, rest))
        return [Branch(r, (), branch.changes) for r in done]

    def _closure(self, requests: frozenset[Signed], definite: Program, state) -> frozenset[Signed] | None:
        model = self.engine.evaluate(definite, _with_requests(state, requests))
        out = set(requests)
        for name, rows in model.items():
            if name.startswith(VU_INS):
                out.update(("+", name[len(VU_INS):], r) for r in rows)
            elif name.startswith(VU_DEL):
                out.update(("-", name[len(VU_DEL):], r) for r in rows)
        if any(("-" if s == "+" else "+", p, a) in out for s, p, a in out):
            return None  # R∇τ case 1: false
        return frozenset(out)

    def _open_choices(self, requests, triggers: Program, disjunctive: list[Rule], state):
        if not disjunctive:
            return []
        model = self.engine.evaluate(triggers, _with_requests(state, requests))
        out = []
        for k, rule in enumerate(disjunctive):
            head_vars = tuple(dict.fromkeys(v for h in rule.head for v in h.variables()))
            triggers = [b.atom for b in rule.body if isinstance(b, Literal) and b.positive and b.atom.pred.startswith(VU_INS) and all(not isinstance(t, Var) or t in head_vars for t in b.atom.args)]
            for row in model.get(f"choice__{k}", ()):
                binding = dict(zip(head_vars, row))
                # An insertion is not its own support: through `p(X) :- p(X).` the alternative
                # +p(1) of the request +p(1) would satisfy the disjunction, and the minimal model
                # {+p(1)} (no base change) would hide the one inserting b(1) (issue 29).
                own = {_signed(t, binding) for t in triggers}
                alternatives = tuple(a for a in (_signed(h, binding) for h in rule.head) if a not in own)
                if not any(a in requests for a in alternatives):
                    out.append(alternatives)
        return out

    def _up_phase(self, branch: Branch, request: Request, compensation: Program):
        """Base updates of a branch, their induced update, repairs and compensations (Def. 10)."""
        changes = set(branch.changes)
        for sign, pred, args in branch.requests:
            if pred in self.derived:
                continue
            present = args in self.normal_model.get(pred, ())
            if (sign == "+") == present:
                # Already as asked in the original state: undo an earlier opposite change, if any.
                changes.discard(("-" if sign == "+" else "+", pred, args))
                continue
            if pred in self.protected_relations or Atom(pred, args) in self.protected_facts or (pred, args) in self.protected_facts:
                return None
            changes.add((sign, pred, args))
        changes = frozenset(changes)
        if any(("-" if s == "+" else "+", p, a) in changes for s, p, a in changes):
            return None
        state, gained, lost = self._state(changes)
        holds = all(tuple(a.args) in state.get(a.pred, ()) for a in request.insert) and not any(
            tuple(a.args) in state.get(a.pred, ()) for a in request.delete
        )
        new_requests: set[Signed] = set()
        repairs: list[tuple[Signed, ...]] = []
        for c in self.requirements:
            if tuple(c.atom.args) not in state.get(c.atom.pred, ()):
                new_requests.add(("+", c.atom.pred, tuple(c.atom.args)))  # case 2
        for v in find_violations(self.rules.with_statements(()), _user_state(state, self.rules), self.engine):
            for binding in v.bindings:
                denial = dict(self.denials).get(v.constraint)
                if denial is None:
                    continue
                repairs.append(tuple(_repair(b, binding) for b in denial.body if isinstance(b, Literal) and _ground_ok(b, binding)))
        # Case 3: requests that relied on a fact whose change is a side effect ask to compensate it.
        facts = {p: rows for p, rows in self.normal_model.items()}
        for sign, pred, args in branch.requests:
            facts.setdefault((VU_INS if sign == "+" else VU_DEL) + pred, set()).add(args)
        for pred, rows in gained.items():
            facts[INS + pred] = rows
        for pred, rows in lost.items():
            facts[DEL + pred] = rows
        derived = self.engine.evaluate(compensation, {p: (set(r) if p.startswith("vu_") else r) for p, r in facts.items()})
        for name, rows in derived.items():
            for r in rows:
                s = ("+", name[len(VU_INS):], r) if name.startswith(VU_INS) else ("-", name[len(VU_DEL):], r)
                if name.startswith(("vu_ins__", "vu_del__")) and s not in branch.requests:
                    new_requests.add(s)
        consistent = holds and not repairs and not any(
            tuple(c.atom.args) not in state.get(c.atom.pred, ()) for c in self.requirements
        )
        return changes, frozenset(new_requests), tuple(repairs), consistent


def _expired(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() > deadline


def _with_requests(state: Mapping[str, Set], requests: Iterable[Signed]) -> dict[str, Set]:
    """The state with the VU requests as facts of ``vu_ins__p``/``vu_del__p``."""
    facts: dict[str, Set] = dict(state)
    for sign, pred, args in requests:
        name = (VU_INS if sign == "+" else VU_DEL) + pred
        if not isinstance(facts.get(name), set):
            facts[name] = set()
        facts[name].add(args)  # type: ignore[union-attr]
    return facts


def _user_state(state, rules: Program):
    """The normalized state restricted to the program's own predicates (no auxiliaries)."""
    keep = set(rules.signatures)
    return {p: r for p, r in state.items() if p in keep or p.startswith("base__")}


def _repair(literal: Literal, binding: dict) -> Signed:
    args = tuple(binding[t] if isinstance(t, Var) else t for t in literal.atom.args)
    return ("-" if literal.positive else "+", literal.atom.pred, args)


def _ground_ok(literal: Literal, binding: dict) -> bool:
    return all(not isinstance(t, Var) or t in binding for t in literal.atom.args)


def _signed(atom: Atom, binding: dict) -> Signed:
    args = tuple(binding[t] if isinstance(t, Var) else t for t in atom.args)
    if atom.pred.startswith(VU_INS):
        return ("+", atom.pred[len(VU_INS):], args)
    return ("-", atom.pred[len(VU_DEL):], args)


def _contradicts(alternative: Signed, requests: Iterable[Signed]) -> bool:
    sign, pred, args = alternative
    return ("-" if sign == "+" else "+", pred, args) in requests
