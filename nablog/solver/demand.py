"""Which atoms of request-only predicates the relevance search must follow: magic sets over possible states.

A predicate whose atoms are read only by positive body literals of rules defining such predicates
(no constraint, required atom or negation reads them) matters only through the request: in
``reports_to(E, H) :- manager(E, M), reports_to(M, H).``, moving one department head changes the
chain of command of every employee below, but only the atoms on a derivation of
``reports_to(e5, h77)`` can change the answer. Propagating every possible change (seed 002's UP
phase) made millions of atoms possible at 1e4 facts; here possible changes of such predicates are
followed only into *demanded* atoms.

Demand is the magic-set idea (seed 002 §5 names magic sets as the way to improve its rules; seed
001 uses them for rederivation on demand) over the possible state: a requested or goal atom is
demanded; for a demanded atom (or pattern, with ``None`` at unbound places) each rule body is
walked in binding order (sideways information passing): a literal whose variables are all bound
is demanded as an atom, whatever its value; a literal that binds variables is demanded as a
pattern, and each of its rows that is true or may become true — now or later — continues the walk.
So every atom in a rule instance that is possible once all changes are propagated is demanded
(no literal has to be possible before it is demanded), and a demanded atom's possible changes are
exactly those full propagation gives it: changes found before it was demanded are recomputed from
its rule instances when it becomes demanded. The ground problem stays exact for every subset of
its candidates.
"""

from __future__ import annotations

from typing import Iterator, Protocol

from ..lang import Atom, Comparison, Literal, Rule, Var
from .bindings import GroundAtom, _ground, _order, _pattern, _unify, through_comparison
from .possible import PossibleState


class Search(Protocol):
    """What demand reads of the relevance search it serves (:class:`nablog.solver.ground.Relevance`):
    its rules by head, its possible state, its rule instances, and the way it records a possible
    change. Stated here, so that this module does not import the search that imports it."""

    by_head: dict[str, list[Rule]]
    state: PossibleState

    def possible_instances(self, body, binding: dict) -> Iterator[dict]: ...

    def current_instances(self, body, binding: dict) -> Iterator[dict]: ...

    def _add(self, sign: str, a: GroundAtom) -> bool: ...

PLUS, MINUS = "+", "-"


def request_only(program_rules: list[Rule], read_by_constraints: set[str], derived: set[str]) -> set[str]:
    """The derived predicates read only by positive body literals of rules whose heads are such
    predicates (the greatest such set), and by no constraint or required atom.

    >>> from nablog.lang import parse
    >>> rules = parse("m(E, H) :- e(E, D), h(D, H). r(E, H) :- m(E, H). r(E, H) :- m(E, M), r(M, H). s(X) :- r(X, X), not m(X, X).").rules
    >>> sorted(request_only(rules, set(), {"m", "r", "s"}))
    ['r', 's']
    >>> sorted(request_only(rules[:3], set(), {"m", "r"}))
    ['m', 'r']
    """
    kept = set(derived) - read_by_constraints
    changed = True
    while changed:
        changed = False
        for rule in program_rules:
            heads_kept = all(h.pred in kept for h in rule.head)
            for b in rule.body:
                if isinstance(b, Literal) and b.atom.pred in kept and (not b.positive or not heads_kept):
                    kept.discard(b.atom.pred)
                    changed = True
    return kept


class Demand:
    """The demanded atoms and patterns of request-only predicates, for one relevance search."""

    def __init__(self, relevance: Search, predicates: set[str]):
        self.relevance = relevance
        self.predicates = predicates
        # pred -> bound positions -> the values at them that are demanded
        self.patterns: dict[str, dict[tuple[int, ...], set[tuple]]] = {}
        # pred -> bound positions -> values -> walks waiting for rows: (rule, order, step, binding)
        self.waiting: dict[str, dict[tuple[int, ...], dict[tuple, list]]] = {}
        self.queue: list[tuple[str, tuple]] = []

    def ask(self, a: GroundAtom) -> None:
        """Demand an atom (a goal or a requested atom)."""
        if a[0] in self.predicates:
            self.queue.append(a)

    def demanded(self, a: GroundAtom) -> bool:
        patterns = self.patterns.get(a[0])
        if not patterns:
            return False
        args = a[1]
        return any(tuple(args[i] for i in positions) in values for positions, values in patterns.items())

    def may_match(self, head: Atom, binding: dict) -> bool:
        """Whether a ground instance of ``head`` extending ``binding`` may be demanded: some
        demanded pattern has a place the binding leaves open, or matches its values."""
        for positions, values in self.patterns.get(head.pred, {}).items():
            key = []
            for i in positions:
                term = head.args[i]
                if isinstance(term, Var):
                    term = binding.get(term)
                    if term is None:
                        return True
                key.append(term)
            if tuple(key) in values:
                return True
        return False

    def serve(self) -> None:
        """Register the queued demands: walk their rules and recompute their possible changes."""
        while self.queue:
            if self.relevance._tick():
                return  # past the deadline: the problem is marked partial
            pred, pattern = self.queue.pop()
            if self._covered(pred, pattern):
                continue
            positions = tuple(i for i, v in enumerate(pattern) if v is not None)
            self.patterns.setdefault(pred, {}).setdefault(positions, set()).add(tuple(pattern[i] for i in positions))
            for rule in self.relevance.by_head.get(pred, ()):
                for head in rule.head:
                    if head.pred != pred:
                        continue
                    binding = _unify_pattern(head, pattern)
                    if binding is None:
                        continue
                    self._walk(rule, _order(rule.body, binding, None), 0, binding)
                    self._recompute(rule, head, binding)

    def row_added(self, a: GroundAtom) -> None:
        """A row true or possibly true now: walks waiting on its pattern go on."""
        tables = self.waiting.get(a[0])
        if not tables:
            return
        for positions, table in list(tables.items()):
            for rule, order, step, binding in list(table.get(tuple(a[1][i] for i in positions), ())):
                extended = _unify(order[step].atom, a[1], binding)
                if extended is not None:
                    self._walk(rule, order, step + 1, extended)

    def _covered(self, pred: str, pattern: tuple) -> bool:
        bound = {i for i, v in enumerate(pattern) if v is not None}
        for positions, values in self.patterns.get(pred, {}).items():
            if set(positions) <= bound and tuple(pattern[i] for i in positions) in values:
                return True
        return False

    def _walk(self, rule: Rule, order: tuple, step: int, binding: dict) -> None:
        """Demand the literals of one rule body from ``step`` on, in binding order."""
        if self.relevance._tick():
            return
        state = self.relevance.state
        while step < len(order):
            element = order[step]
            if isinstance(element, Comparison):
                passed = list(through_comparison(element, binding, undecided=True))
                if passed == [binding]:
                    step += 1
                    continue
                for extended in passed:
                    self._walk(rule, order, step + 1, extended)
                return
            pattern = _pattern(element.atom, binding)
            pred = element.atom.pred
            if pred in self.predicates:
                self.queue.append((pred, pattern))
            if not element.positive or None not in pattern:
                step += 1  # bound (or negated, never a request-only predicate): demanded, whatever its value
                continue
            positions = tuple(i for i, v in enumerate(pattern) if v is not None)
            table = self.waiting.setdefault(pred, {}).setdefault(positions, {})
            table.setdefault(tuple(pattern[i] for i in positions), []).append((rule, order, step, binding))
            for row in list(state.match_possible(pred, pattern)):
                extended = _unify(element.atom, row, binding)
                if extended is not None:
                    self._walk(rule, order, step + 1, extended)
            return

    def _recompute(self, rule: Rule, head, binding: dict) -> None:
        """The possible changes of newly demanded heads of one rule: what propagation skipped
        while they were not demanded (an instance possibly true with a literal that may become
        true, or true now with one that may become false)."""
        relevance, state = self.relevance, self.relevance.state
        for full in relevance.possible_instances(rule.body, binding):
            if relevance._tick():
                return
            h = _ground(head, full)
            if not state.now(h) and any(_moves(state, b, full, True) for b in rule.body if isinstance(b, Literal)):
                relevance._add(PLUS, h)
        for full in relevance.current_instances(rule.body, binding):
            if relevance._tick():
                return
            h = _ground(head, full)
            if state.now(h) and any(_moves(state, b, full, False) for b in rule.body if isinstance(b, Literal)):
                relevance._add(MINUS, h)


def _moves(state, literal: Literal, binding: dict, toward_true: bool) -> bool:
    """Whether a literal under a binding may become true (or false) by the candidate changes."""
    pattern = _pattern(literal.atom, binding)
    gains = literal.positive == toward_true  # the atom must gain (else lose)
    rows: Iterator[tuple] = iter((pattern,)) if None not in pattern else (state.match_possible(literal.atom.pred, pattern) if gains else state.match_now(literal.atom.pred, pattern))
    for row in rows:
        a = (literal.atom.pred, row)
        if (state.may_gain(a) if gains else state.may_lose(a)):
            return True
    return False


def _unify_pattern(head, pattern: tuple) -> dict | None:
    """The binding that unifies a rule head with a pattern at its bound places."""
    bound = [i for i, v in enumerate(pattern) if v is not None]
    return _unify(Atom(head.pred, tuple(head.args[i] for i in bound)), tuple(pattern[i] for i in bound), {})
