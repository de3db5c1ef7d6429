"""View updates over programs with aggregates: the relevant program goes to clingo whole.

The goal-directed search of :mod:`nablog.solver.ground` grounds rule instances itself and does not
see through an aggregate (which instances a ``#count`` reads depends on every tuple of its group).
Here clingo grounds the program instead, aggregates natively: the rules the request and the
constraints depend on, over base relations that may change — every current fact of such a relation
stays unless its choice ``ch(K)`` deletes it, and every candidate fact (the active domain of each
column, the constants of the program and the request, ``max_fresh`` new constants; every constant
with ``candidates="herbrand"``) appears if its choice inserts it. The request, the constraints and
``#protect`` are integrity constraints behind switches ``on(I)``, as in :mod:`nablog.solver.asp`,
whose enumeration (smallest first, subset-minimal) and explanation of failure serve unchanged.

User predicates are renamed ``u_p`` so that they never meet ``ch``, ``on`` or ``x_violated``.
"""

from __future__ import annotations

import itertools
from collections.abc import Set
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping

import clingo

from ..engines.base import prepare
from ..engines.clingo import clingo_atom, clingo_rule
from ..lang import Atom, Literal, NablogError, Program, Requirement, Rule, constant_sort_key
from ..lang.ast import Aggregate, AggregateElement, BaseDeclaration, body_atoms
from .asp import AspProblem, _requirement_name, _show
from .ground import Bounds, GroundAtom, GroundProblem, _fresh_name
from .request import Request

PREFIX = "u_"


def has_aggregates(program: Program) -> bool:
    """Whether a rule or a denial of the program uses an aggregate."""
    return any(isinstance(b, Aggregate) for s in (*program.rules, *program.denials) for b in s.body)


@dataclass
class WholeProblem(GroundProblem):
    """A view-update problem as one non-ground clingo program (``program``) over the choices of
    ``candidates`` and the switches named in ``switch_names``."""

    program: str = ""
    switch_names: list[str] = field(default_factory=list)


def whole_problem(
    rules: Program,
    model: Mapping[str, Set],
    base: Iterable[str],
    request: Request,
    *,
    herbrand: bool = False,
    max_fresh: int = 2,
    protect: Iterable[GroundAtom | str] = (),
    universe: Iterable = (),
    bounds: Bounds | None = None,
) -> WholeProblem:
    """The program, candidates and switches for ``request`` (see the module docstring)."""
    bounds = bounds or Bounds()
    base = set(base)
    universe = universe if isinstance(universe, Set) else set(universe)
    named = rules.named_constraints()
    relevant = _relevant(rules, {a.pred for _, a in request.atoms()} | {a.pred for _, c in named for a in _constraint_atoms(c)})
    protected_relations = {p for p in protect if isinstance(p, str)}
    protected_facts = {p for p in protect if not isinstance(p, str)}
    problem = WholeProblem()
    problem.fresh = [_fresh_name(i + 1, universe) for i in range(max_fresh)]
    extra = set(rules.constants()) | {v for _, a in request.atoms() for v in a.args}

    arities = dict(rules.signatures)
    candidates: list[tuple[str, GroundAtom]] = []
    for pred in sorted(relevant & base):
        rows = model.get(pred, ())
        arity = arities.setdefault(pred, len(next(iter(rows))) if len(rows) else 0)
        current = {tuple(r) for r in rows}
        candidates += [("-", (pred, row)) for row in current]
        if herbrand:
            domains = [sorted(set(universe) | extra, key=constant_sort_key)] * arity
        else:
            domains = [sorted({r[i] for r in current} | extra, key=constant_sort_key) for i in range(arity)]
        domains = [d + problem.fresh for d in domains]
        size = 1
        for d in domains:
            size *= len(d)
        if size > bounds.max_goals:
            raise NablogError(
                f"too many candidate facts ({size:,}) of {pred} for a view update through aggregates",
                hint=f"protect {pred} (#protect {pred}/{arity}.), lower --max-fresh, or use candidates='attribute'",
            )
        candidates += [("+", (pred, row)) for row in itertools.product(*domains) if row not in current]
    problem.candidates = sorted(candidates, key=lambda c: (c[1][0], [constant_sort_key(v) for v in c[1][1]], c[0]))

    switches: list[str] = []

    def switch(name: str) -> int:
        switches.append(name)
        return len(switches) - 1

    lines: list[str] = []
    for k, (sign, (pred, row)) in enumerate(problem.candidates):
        fact = clingo_atom(Atom(PREFIX + pred, row))
        lines += [f"{{ch({k})}}.", f"{fact} :- {'' if sign == '+' else 'not '}ch({k}).", f"#heuristic ch({k}). [1,false]"]
        if pred in protected_relations or (pred, row) in protected_facts:
            problem.protected.add((sign, (pred, row)))
            lines.append(f":- ch({k}), on({switch(f'protected fact {_show((pred, row))}')}).")
    # Denials become rules of x_violated(I), so that they are flattened (∄-negation) as rules are.
    statements: list = [_renamed(r) for r in rules.rules if not r.is_fact() and any(h.pred in relevant for h in r.head)]
    statements.append(BaseDeclaration(tuple((PREFIX + p, arities[p]) for p in sorted(relevant & base))))
    checks: list[str] = []
    for i, (name, c) in enumerate(named):
        on = switch(f"required atom {name}" if isinstance(c, Requirement) else f"constraint {name}")
        if isinstance(c, Requirement):
            checks.append(f":- not {clingo_atom(_atom(c.atom))}, on({on}).")
        else:
            statements.append(Rule((Atom("x_violated", (i,)),), _body(c.body), c.loc))
            checks.append(f":- x_violated({i}), on({on}).")
    for sign, a in request.atoms():
        on = switch(_requirement_name("request", (a.pred, tuple(a.args)), sign == "+"))
        checks.append(f":- {'not ' if sign == '+' else ''}{clingo_atom(_atom(a))}, on({on}).")
    lines += [clingo_rule(r) for r in prepare(Program(tuple(statements)), {}).program.rules]
    lines += checks
    if switches:
        lines.append(f"#external on(0..{len(switches) - 1}).")
    lines.append("#show ch/1.")
    problem.program = "\n".join(lines)
    problem.switch_names = switches
    return problem


class WholeAsp(AspProblem):
    """:class:`AspProblem`'s enumeration and explanation over a :class:`WholeProblem`."""

    def __init__(self, problem: WholeProblem, deadline: float | None = None, weights: Mapping[int, tuple[int, int]] | None = None):
        self.problem = problem
        self.deadline = deadline
        self.weights = dict(weights) if weights else None
        self.switches = problem.switch_names
        self.choices = problem.candidates  # (by_size counts them)

    @property
    def text(self) -> str:
        return self.problem.program

    def _control(self, minimal: bool, off: set[int] = frozenset(), enumerate_all: bool = False) -> clingo.Control:
        args = ["--warn=none"]
        program = self.problem.program
        if minimal and self.weights:
            args += ["--heuristic=Domain", "--opt-mode=optN", "--opt-strategy=usc", "0"]
            terms = [f"{w}@{p},{k} : ch({k})" for k, (w, p) in sorted(self.weights.items()) if w]
            program += "\n#minimize { " + "; ".join(terms) + " }." if terms else ""
        elif minimal and self.problem.candidates:
            args += ["--heuristic=Domain", "--enum-mode=domRec", "0"]
        elif enumerate_all:
            args += ["--heuristic=Domain", "0"]
        control = clingo.Control(args)
        control.add("base", [], program)
        control.ground([("base", [])])
        for i in range(len(self.switches)):
            control.assign_external(clingo.Function("on", [clingo.Number(i)]), i not in off)
        return control

    def by_size(self, deadline: float | None = None):
        """As :meth:`AspProblem.by_size`; a change set that uses every new constant marks the
        problem bounded (a larger one might need one more)."""
        fresh = set(self.problem.fresh)
        for size, change_sets, status in super().by_size(deadline):
            for change_set in change_sets:
                used = {v for k in change_set for v in self.problem.candidates[k][1][1] if v in fresh}
                if fresh and used == fresh and not self.problem.bounded:
                    self.problem.bounded.append(f"a realization uses every new constant (max_fresh={len(fresh)}): others may need more")
            yield size, change_sets, status


def asp_problem(problem: GroundProblem, deadline: float | None = None, weights: Mapping[int, tuple[int, int]] | None = None) -> AspProblem:
    """The clingo problem that enumerates ``problem``'s change sets."""
    if isinstance(problem, WholeProblem):
        return WholeAsp(problem, deadline, weights)
    return AspProblem(problem, weights, deadline=deadline)


def _relevant(rules: Program, start: set[str]) -> set[str]:
    """The predicates ``start`` depends on, through rules (aggregates included), and ``start``."""
    by_head: dict[str, list[Rule]] = {}
    for r in rules.rules:
        for h in r.head:
            by_head.setdefault(h.pred, []).append(r)
    out, todo = set(), list(start)
    while todo:
        pred = todo.pop()
        if pred in out:
            continue
        out.add(pred)
        todo += [a.pred for r in by_head.get(pred, ()) for a, _, _ in body_atoms(r.body)]
    return out


def _constraint_atoms(c) -> Iterable[Atom]:
    return (c.atom,) if isinstance(c, Requirement) else (a for a, _, _ in body_atoms(c.body))


def _atom(a: Atom) -> Atom:
    return Atom(PREFIX + a.pred, a.args, a.loc)


def _body(body) -> tuple:
    out = []
    for b in body:
        if isinstance(b, Literal):
            b = Literal(_atom(b.atom), b.positive)
        elif isinstance(b, Aggregate):
            b = replace(b, elements=tuple(AggregateElement(e.terms, _body(e.condition)) for e in b.elements))
        out.append(b)
    return tuple(out)


def _renamed(rule: Rule) -> Rule:
    return Rule(tuple(map(_atom, rule.head)), _body(rule.body), rule.loc)
