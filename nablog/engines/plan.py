"""Evaluation plans shared by the engines: the order in which a rule body is joined and filtered.

A plan starts from one positive literal (the delta literal in semi-naive evaluation, else the most
selective one), joins the others greedily by shared variables, and places every comparison and
negated literal as soon as its variables are bound, so filters run on the smallest frames.

>>> from nablog.lang import parse
>>> rule = parse("p(X, Y) :- e(X, Z), p(Z, Y), not q(Y), X < Y.").rules[0]
>>> [str(e) for e in body_order(rule, start=1)]
['p(Z, Y)', 'not q(Y)', 'e(X, Z)', 'X < Y']
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..lang import Analysis, Comparison, Literal, Program, Rule, Var


def body_order(rule: Rule, start: int | None = None) -> list[Literal | Comparison]:
    """The body of ``rule`` in evaluation order; ``start`` is the index of the first positive literal.

    The order is computed once per rule and start (each semi-naive round asks again for the same
    rules), as body positions, so that the elements returned are this rule's own objects."""
    return [rule.body[i] for i in _body_positions(rule, start)]


@lru_cache(maxsize=4096)
def _body_positions(rule: Rule, start: int | None) -> tuple[int, ...]:
    return tuple(_position_of(rule, element) for element in _body_order(rule, start))


def _position_of(rule: Rule, element) -> int:
    return next(i for i, b in enumerate(rule.body) if b is element)


def _body_order(rule: Rule, start: int | None) -> list[Literal | Comparison]:
    positives = [i for i, b in enumerate(rule.body) if isinstance(b, Literal) and b.positive]
    filters = [b for b in rule.body if not (isinstance(b, Literal) and b.positive)]
    if not positives:
        return list(filters)
    if start is None:
        # Most constants first (most selective), then source order.
        start = max(positives, key=lambda i: (_constant_count(rule.body[i]), -i))
    order: list[Literal | Comparison] = []
    bound: set[Var] = set()
    remaining = [i for i in positives if i != start]
    pending = list(filters)

    def take(element: Literal | Comparison) -> None:
        order.append(element)
        bound.update(v for v in element.variables() if v.name != "_")
        ready = [f for f in pending if all(v in bound or v.name == "_" for v in f.variables())]
        for f in ready:
            pending.remove(f)
            order.append(f)

    take(rule.body[start])  # type: ignore[arg-type]
    while remaining:
        # Prefer literals that share variables with what is bound (avoid cross products).
        best = max(remaining, key=lambda i: (_shared(rule.body[i], bound), _constant_count(rule.body[i]), -i))
        remaining.remove(best)
        take(rule.body[best])  # type: ignore[arg-type]
    order.extend(pending)  # only reachable for unsafe rules, which analysis rejects
    return order


def _constant_count(element) -> int:
    return sum(1 for t in element.atom.args if not isinstance(t, Var))


def _shared(element, bound: set[Var]) -> int:
    return sum(1 for v in set(element.variables()) if v in bound)


@dataclass(frozen=True)
class ComponentPlan:
    """How to evaluate one strongly connected component of the dependency graph.

    ``exit_rules`` use no predicate of the component in their body and run once; each entry of
    ``recursive_rules`` is a rule with the body positions of its literals on the component, which
    semi-naive evaluation takes in turn as the delta literal.
    """

    predicates: tuple[str, ...]
    exit_rules: tuple[Rule, ...]
    recursive_rules: tuple[tuple[Rule, tuple[int, ...]], ...]


def component_plans(program: Program, analysis: Analysis) -> list[ComponentPlan]:
    """The derived components of a stratified program in evaluation order."""
    by_head: dict[str, list[Rule]] = {}
    for rule in program.rules:
        for head in rule.head:
            by_head.setdefault(head.pred, []).append(rule)
    plans = []
    for component in analysis.components:
        rules = [r for p in component for r in by_head.get(p, [])]
        if not rules:
            continue
        members = set(component)
        exit_rules, recursive = [], []
        for rule in dict.fromkeys(rules):  # a rule appears once even if it had several heads
            positions = tuple(
                i
                for i, b in enumerate(rule.body)
                if isinstance(b, Literal) and b.positive and b.atom.pred in members
            )
            if positions:
                recursive.append((rule, positions))
            else:
                exit_rules.append(rule)
        plans.append(ComponentPlan(tuple(component), tuple(exit_rules), tuple(recursive)))
    return plans
