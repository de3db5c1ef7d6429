"""The `asp` method: clingo guesses among the candidate changes and enumerates the subset-minimal ones.

The ground problem of :mod:`nablog.solver.ground` becomes a small propositional program: one
choice atom ``ch(K)`` per candidate change, ``x(I)`` for each atom that may change (a candidate
base fact is true when inserted, or when not deleted; a derived atom by its ground rule
instances), the request and the constraints as integrity constraints. Domain heuristics
``#heuristic ch(K). [1,false]`` with ``--heuristic=Domain --enum-mode=domRec`` make clingo
enumerate exactly the models whose set of changes is subset-minimal. The program goes to clingo's
backend as ground statements (``AspProblem.text`` shows it in clingo's language): parsing and
grounding it as text took half the time of a repair of 50,000 rows.

Each constraint, required atom and protected fact is guarded by a switch (an external atom), so
when no model exists, switching them off one by one finds a minimal set that stands in the way.

With ``weights`` (candidate index to ``(weight, priority)``) the same program gets a
``#minimize`` statement and enumeration yields the change sets of least total weight instead
(``--opt-mode=optN``; priorities compare lexicographically, higher first): weight 1 everywhere
gives the cardinality-minimal ones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping

import clingo

from .ground import GroundAtom, GroundProblem


@dataclass
class Enumeration:
    """How the search ended, and for an unsatisfiable problem what stands in the way."""

    status: str = "complete"  # complete | stopped | timeout | unsatisfiable
    core: list[str] = field(default_factory=list)
    cost: list[int] = field(default_factory=list)  # with weights: the least cost, per priority (highest first)


class AspProblem:
    """A ground problem as a clingo program, with named switches for the explanation of failure."""

    def __init__(self, problem: GroundProblem, weights: Mapping[int, tuple[int, int]] | None = None, deadline: float | None = None):
        self.problem = problem
        self.deadline = deadline  # building the program observes it too (raises Late)
        self.weights = dict(weights) if weights else None
        self.atom_ids: dict[GroundAtom, int] = {}
        self.switches: list[str] = []  # name of each on(I) switch
        # The program as ground statements over atom ids (x) and switch ids (on), handed to
        # clingo's backend: clingo parsing and grounding its text cost more than solving it.
        self.choices: list[tuple[int, bool, int | None]] = []  # (x of the atom, inserted?, switch of a protected fact)
        self.rules: list[tuple[int, list[int], list[int]]] = []  # (x of the head, positive, negative)
        self.constraints: list[tuple[int, list[int], list[int]]] = []  # (switch, positive x, negative x)
        for sign, a in problem.candidates:
            protected = self._switch(f"protected fact {_show(a)}") if (sign, a) in problem.protected else None
            self.choices.append((self._id(a), sign == "+", protected))
        for i, (head, pos, neg) in enumerate(problem.rules):
            _check(deadline, i)
            self.rules.append((self._id(head), [self._id(b) for b in pos], [self._id(b) for b in neg]))
        for name, a in problem.require_true:
            self.constraints.append((self._switch(_requirement_name(name, a, True)), [], [self._id(a)]))
        for name, a in problem.require_false:
            self.constraints.append((self._switch(_requirement_name(name, a, False)), [self._id(a)], []))
        named: dict[str, int] = {}
        for i, (name, pos, neg) in enumerate(problem.denials):
            _check(deadline, i)
            if name not in named:
                named[name] = self._switch(f"constraint {name}")
            self.constraints.append((named[name], [self._id(b) for b in pos], [self._id(b) for b in neg]))
        # (switch, values already true, x of the atoms of each other value): at most one value.
        self.at_most_one: list[tuple[int, int, list[list[int]]]] = []
        for name, values in problem.at_most_one:
            if name not in named:
                named[name] = self._switch(f"constraint {name}")
            certain = sum(1 for c, _ in values if c)
            self.at_most_one.append((named[name], certain, [[self._id(a) for a in live] for c, live in values if not c]))

    @property
    def text(self) -> str:
        """The program in clingo's language (for reading; the solver gets it through the backend)."""
        lines: list[str] = []
        for k, (x, inserted, protected) in enumerate(self.choices):
            lines.append(f"{{ch({k})}}.")
            lines.append(f"x({x}) :- ch({k})." if inserted else f"x({x}) :- not ch({k}).")
            lines.append(f"#heuristic ch({k}). [1,false]")
            if protected is not None:
                lines.append(f":- ch({k}), on({protected}).")
        for head, pos, neg in self.rules:
            body = [f"x({b})" for b in pos] + [f"not x({b})" for b in neg]
            lines.append(f"x({head}) :- {', '.join(body)}." if body else f"x({head}).")
        for switch, pos, neg in self.constraints:
            body = [f"x({b})" for b in pos] + [f"not x({b})" for b in neg]
            lines.append(f":- {', '.join(body + [f'on({switch})'])}.")
        for g, (switch, certain, groups) in enumerate(self.at_most_one):
            for v, atoms in enumerate(groups):
                lines += [f"y({g},{v}) :- x({a})." for a in atoms]
            elements = "; ".join(f"y({g},{v})" for v in range(len(groups)))
            lines.append(f":- {2 - certain} {{ {elements} }}, on({switch}).")
        if self.weights:
            terms = [f"{w}@{p},{k} : ch({k})" for k, (w, p) in sorted(self.weights.items()) if w]
            if terms:
                lines.append("#minimize { " + "; ".join(terms) + " }.")
        lines.append("#show ch/1.")
        return "\n".join(lines)

    def _id(self, a: GroundAtom) -> int:
        if a not in self.atom_ids:
            self.atom_ids[a] = len(self.atom_ids)
        return self.atom_ids[a]

    def _switch(self, name: str) -> int:
        self.switches.append(name)
        return len(self.switches) - 1

    def _control(self, minimal: bool, off: set[int] = frozenset(), enumerate_all: bool = False) -> clingo.Control:
        """A control holding the program, with every switch on except those in ``off``.

        Switches are externals with fixed values, not solve assumptions: clingo 5.8 reports some
        satisfiable programs as unsatisfiable under assumptions on externals.
        """
        args = ["--warn=none"]
        if minimal and self.weights:
            # Core-guided optimization (usc) proves optima of repair-sized problems in well under a
            # second where branch-and-bound does not finish (1,000 hospital rows: 0.4 s vs > 20 s).
            args += ["--heuristic=Domain", "--opt-mode=optN", "--opt-strategy=usc", "0"]
        elif minimal and self.problem.candidates:  # (with no candidate, domRec only warns)
            args += ["--heuristic=Domain", "--enum-mode=domRec", "0"]
        elif enumerate_all:
            # Deciding changes false first keeps the search near small change sets.
            args += ["--heuristic=Domain", "0"]
        control = clingo.Control(args)
        with control.backend() as backend:
            x = [backend.add_atom() for _ in range(len(self.atom_ids))]
            on = [backend.add_atom() for _ in self.switches]
            for i, atom in enumerate(on):
                backend.add_external(atom, clingo.TruthValue.False_ if i in off else clingo.TruthValue.True_)
            choice = []
            for k, (a, inserted, protected) in enumerate(self.choices):
                ch = backend.add_atom(clingo.Function("ch", [clingo.Number(k)]))
                choice.append(ch)
                backend.add_rule([ch], choice=True)
                backend.add_rule([x[a]], [ch] if inserted else [-ch])
                backend.add_heuristic(ch, clingo.HeuristicType.False_, 1, 0, [])
                if protected is not None:
                    backend.add_rule([], [ch, on[protected]])
            for i, (head, pos, neg) in enumerate(self.rules):
                _check(self.deadline, i)
                backend.add_rule([x[head]], [x[b] for b in pos] + [-x[b] for b in neg])
            for i, (switch, pos, neg) in enumerate(self.constraints):
                _check(self.deadline, i)
                backend.add_rule([], [x[b] for b in pos] + [-x[b] for b in neg] + [on[switch]])
            for switch, certain, groups in self.at_most_one:
                ys = []
                for atoms in groups:
                    y = backend.add_atom()
                    for a in atoms:
                        backend.add_rule([y], [x[a]])
                    ys.append((y, 1))
                too_many = backend.add_atom()
                backend.add_weight_rule([too_many], 2 - certain, ys)
                backend.add_rule([], [too_many, on[switch]])
            if self.weights:
                by_priority: dict[int, list[tuple[int, int]]] = {}
                for k, (w, p) in sorted(self.weights.items()):
                    if w:
                        by_priority.setdefault(p, []).append((choice[k], w))
                for p, literals in by_priority.items():
                    backend.add_minimize(p, literals)
        return control

    def enumerate(self, accept: Callable[[frozenset[int]], bool], timeout: float | None = None) -> Enumeration:
        """Stream every subset-minimal change set to ``accept`` until it returns False (status
        ``stopped``), the ``timeout`` passes (``timeout``) or there are no more (``complete``)."""
        result = Enumeration()
        deadline = None if timeout is None else time.monotonic() + timeout
        control = self._control(minimal=True)
        count = 0
        best: frozenset[int] | None = None
        for change_set, proven in self._models(control, deadline, result):
            if not proven:
                best = change_set  # optimization goes on; the last one seen is the best so far
                continue
            count += 1
            if not accept(change_set):
                result.status = "stopped"
                break
        if count == 0 and result.status == "timeout" and best is not None:
            accept(best)  # the best change set found before the timeout, not proven optimal
            count = 1
        if count == 0 and result.status == "complete":
            result.status = "unsatisfiable"
            result.core = self.explain_failure(deadline)
        return result

    def by_size(self, deadline: float | None = None) -> Iterator[tuple[int, list[frozenset[int]], str]]:
        """The subset-minimal change sets level by level, smallest first: ``(size, change sets of
        that size, status)``, status ``complete`` for a finished level and ``timeout``, with no
        change set, for the level the deadline cut short (then the generator ends).

        A cut level's change sets are dropped, not given: the solver finds a level's change sets in
        its own order, so those found before the deadline need not be the first of the level in
        the documented order (by atoms), and a listing that took them would not be a prefix of the
        complete answer (``--pick N`` would name another realization with a longer timeout). What
        is given is the smallest levels, whole.

        Iterative deepening by size: a change set of exactly ``k`` changes that contains no smaller
        one found so far is subset-minimal, because each of its proper subsets that realizes the
        request contains a minimal one of fewer changes, which was found and is blocked. So no
        minimality heuristic is needed, and ``--limit N`` gets the N smallest. A level with no
        change set ends the search once no larger change set exists.
        """
        control = self._control(minimal=True)
        n = len(self.choices)
        at_least: dict[int, int] = {}
        with control.backend() as backend:
            chs = [backend.add_atom(clingo.Function("ch", [clingo.Number(k)])) for k in range(n)]

        def ge(backend, k: int) -> int:
            if k not in at_least:
                at_least[k] = backend.add_atom()
                backend.add_weight_rule([at_least[k]], k, [(c, 1) for c in chs])
            return at_least[k]

        k = 0
        while k <= n:
            with control.backend() as backend:
                level = backend.add_atom()
                backend.add_external(level, clingo.TruthValue.True_)
                backend.add_rule([], [level, ge(backend, k + 1)])
            result = Enumeration()
            found = [change_set for change_set, _ in self._models(control, deadline, result)]
            if result.status == "timeout":
                yield k, [], "timeout"  # the level's change sets found so far are not its first
                return
            with control.backend() as backend:
                backend.add_external(level, clingo.TruthValue.False_)
                for change_set in found:  # no later change set may contain one of these
                    backend.add_rule([], [chs[c] for c in sorted(change_set)])
            if found:
                yield k, found, "complete"
            else:
                with control.backend() as backend:
                    larger = backend.add_atom()
                    backend.add_external(larger, clingo.TruthValue.True_)
                    backend.add_rule([], [larger, -ge(backend, k + 1)])
                any_larger = self._first(control, deadline)
                with control.backend() as backend:
                    backend.add_external(larger, clingo.TruthValue.False_)
                if any_larger is None:
                    yield k, [], "timeout"
                    return
                if not any_larger:
                    return
            k += 1

    def _first(self, control: clingo.Control, deadline: float | None) -> bool | None:
        """Whether the control has a model; None at the deadline. (It enumerates every model, so
        the search stops at the first.)"""
        with control.solve(yield_=True, async_=True) as handle:
            handle.resume()
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if remaining is not None and not handle.wait(remaining):
                handle.cancel()
                return None
            found = handle.model() is not None
            handle.cancel()
            return found

    def _models(self, control: clingo.Control, deadline, result: Enumeration) -> Iterator[frozenset[int]]:
        with control.solve(yield_=True, async_=True) as handle:
            while True:
                if deadline is not None and time.monotonic() >= deadline:
                    handle.cancel()
                    result.status = "timeout"
                    return
                handle.resume()
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                if remaining is None:
                    while not handle.wait(0.2):  # in slices, so that Ctrl-C reaches Python
                        pass
                elif not handle.wait(remaining):
                    handle.cancel()
                    result.status = "timeout"
                    return
                model = handle.model()
                if model is None:
                    return
                if self.weights:
                    result.cost = list(model.cost)
                proven = not self.weights or model.optimality_proven
                yield frozenset(s.arguments[0].number for s in model.symbols(shown=True)), proven

    def satisfiable(self, off: set[int], deadline: float | None = None) -> bool | None:
        """Whether some change set satisfies everything except the switches in ``off``."""
        control = self._control(minimal=False, off=off)
        with control.solve(async_=True) as handle:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if remaining is not None and not handle.wait(remaining):
                handle.cancel()
                return None
            return handle.get().satisfiable

    def explain_failure(self, deadline: float | None = None) -> list[str]:
        """A minimal set of switches (request atoms, constraints, protected facts) that together
        admit no change set; empty when even the request alone cannot be met by the candidates."""
        everything = set(range(len(self.switches)))
        requests = {i for i, name in enumerate(self.switches) if name.startswith("request")}
        if self.satisfiable(everything - requests, deadline) is False:
            return sorted(self.switches[i] for i in requests)
        core = set(everything)
        # Deletion-based shrinking: drop each switch whose absence keeps the problem unsatisfiable.
        for i in sorted(everything - requests):
            trial = core - {i}
            if self.satisfiable(everything - trial, deadline) is False:
                core = trial
        kinds = ("request", "constraint", "required", "protected")
        return sorted((self.switches[i] for i in core), key=lambda name: (kinds.index(name.split()[0]), name))


class Late(Exception):
    """The deadline passed while the clingo program was being built."""


def _check(deadline: float | None, i: int) -> None:
    if deadline is not None and i % 4096 == 4095 and time.monotonic() >= deadline:
        raise Late()


def _requirement_name(name: str, a: GroundAtom, true: bool) -> str:
    if name == "request":
        return f"request {'+' if true else '-'}{_show(a)}"
    return f"required atom {name}"


def _show(a: GroundAtom) -> str:
    from ..lang import Atom

    return str(Atom(a[0], a[1]))
