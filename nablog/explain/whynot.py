"""Why a fact does not hold: for each rule whose head matches it, where each attempt at an instance fails.

A rule can derive ``p(t)`` when its head unifies with ``p(t)``. Its body is evaluated with the
head's values bound, in the order :mod:`nablog.explain.instances` uses; every partial instance
that cannot be extended ends at one body element, the one that *fails* under that binding:

- a positive literal no fact matches (``e(2, Z)``: no ``e`` row starts with 2; or ``e(2, 3)``
  missing) — a ground missing atom of a view is explained in turn, to a depth;
- a negated literal whose atom is present (``not r(1)`` with ``r(1)`` in the model);
- a comparison that is false, or an aggregate whose guard does not hold (its value is given).

This is the why-not provenance of Chapman and Jagadish (*Why Not?*, SIGMOD 2009) and of
Soufflé's ``explainnegation``, read off the model without asking the user for the bindings: each
failing element is named with the values its partial instance had, and nothing that holds is
named. The smallest changes that would make the fact hold are a view-update request away
(``nablog why … --fix`` is ``nablog propose … '+p(t).'``).

>>> from nablog.database import Database
>>> db = Database.from_text("p(X) :- q(X), not r(X). q(1). r(1). q(2).")
>>> print(db.why("p(1)").text())
p(1) does not hold
rule <string>:1  p(1) :- q(1), not r(1).
└─ not r(1)  present
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from ..lang import Atom, Comparison, Literal, Rule
from .instances import Failure, aggregate_value, failures, ground_element, ground_rule
from .proofs import Explainer, location_key

ATTEMPTS = 10
"""Failing partial instances shown per rule."""


@dataclass(frozen=True)
class Fails:
    """One failing body element: the literal as its partial instance grounds it, what is wrong
    (``missing``, ``present``, ``false``), the partial instance, and, for a missing ground atom of a
    view, why that does not hold either (``cut`` when the depth left it out)."""

    literal: str
    reason: str
    instance: str
    why_not: tuple["RuleFails", ...] = ()
    cut: bool = False
    element: object = field(default=None, compare=False, repr=False)  # the ground body element

    def to_json(self) -> dict:
        out = {"literal": self.literal, "reason": self.reason, "instance": self.instance, "why_not": [r.to_json() for r in self.why_not]}
        if self.cut:
            out["cut"] = True
        return out


@dataclass(frozen=True)
class RuleFails:
    """A rule whose head matches the atom, and where each attempt at an instance fails."""

    rule: Rule
    instance: str
    fails: tuple[Fails, ...]

    @property
    def where(self) -> str:
        loc = self.rule.loc
        return f"{loc.source.name}:{loc.line}" if loc is not None else "<generated>"

    def to_json(self) -> dict:
        return {"rule": self.where, "instance": self.instance, "fails": [f.to_json() for f in self.fails]}


def why_not(explainer: Explainer, atom: Atom, depth: int | None = 3, attempts: int = ATTEMPTS) -> tuple[RuleFails, ...]:
    """Per rule that could derive ``atom`` (which does not hold), its failing elements (see the
    module docstring), explaining missing ground atoms of views ``depth`` levels down."""
    return _why_not(explainer, atom, depth, attempts, frozenset([atom]))


def _why_not(explainer: Explainer, atom: Atom, depth: int | None, attempts: int, path: frozenset) -> tuple[RuleFails, ...]:
    out = []
    for rule in explainer.by_head.get(atom.pred, ()):
        found = failures(rule, explainer.index, atom, attempts)
        if not found or found[0].element is None:
            continue  # the head does not match, or (never, as the atom does not hold) an instance holds
        original = explainer.originals.get(location_key(rule), rule)
        head_binding = found[0].values() if len(found) == 1 else _common(found)
        fails: dict[str, Fails] = {}
        for failure in found:
            item = _fails(explainer, rule, original, failure, depth, attempts, path)
            fails.setdefault(item.literal, item)
        out.append(RuleFails(rule, str(ground_rule(original, head_binding)), tuple(fails.values())))
    return tuple(out)


def _common(found: list[Failure]) -> dict:
    """The values every partial instance agrees on (those of the head, at least)."""
    first = found[0].values()
    return {v: c for v, c in first.items() if all(f.values().get(v) == c for f in found[1:])}


def _fails(explainer: Explainer, rule: Rule, original: Rule, failure: Failure, depth, attempts, path) -> Fails:
    binding = failure.values()
    element = failure.element
    instance = str(ground_rule(original, binding))
    if isinstance(element, Literal):
        literal = ground_element(element, binding)
        pattern = literal.atom
        if not element.positive:
            return Fails(str(literal), "present", instance, element=literal)
        ground = pattern.is_ground() and all(a != "_" for a in pattern.args)
        nested: tuple[RuleFails, ...] = ()
        cut = False
        if ground and pattern.pred in explainer.derived and pattern not in path:
            if depth is not None and depth <= 1:
                cut = bool(explainer.by_head.get(pattern.pred))
            else:
                nested = _why_not(explainer, pattern, None if depth is None else depth - 1, attempts, path | {pattern})
        return Fails(str(literal), "missing", instance, nested, cut, literal)
    if isinstance(element, Comparison):
        ground = ground_element(element, binding)
        return Fails(str(ground), "false", instance, element=ground)
    computed = aggregate_value(element, binding, explainer.index)
    shown = ground_element(element, binding)
    value = f"is {computed.value}" if computed.value is not None else ("#sup (no elements)" if element.function == "min" else "#inf (no elements)")
    return Fails(str(shown), f"false: the aggregate {value}", instance, element=shown)


# -- showing it -----------------------------------------------------------------------------------


def why_not_text(why) -> str:
    lines = [f"{why.atom} does not hold"]
    if not why.why_not:
        lines.append("it is not a base fact, and no rule's head matches it")
    for rules in why.why_not:
        lines.extend(_rule_lines(rules, ""))
    return "\n".join(lines)


def _rule_lines(rules: RuleFails, prefix: str) -> Iterator[str]:
    yield f"{prefix}rule {rules.where}  {rules.instance}"
    for i, fails in enumerate(rules.fails):
        last = i == len(rules.fails) - 1
        branch, more = ("└─ ", "   ") if last else ("├─ ", "│  ")
        context = f"  in {fails.instance}" if fails.instance != rules.instance else ""
        cut = "  … (cut: ask why not for it)" if fails.cut else ""
        yield f"{prefix}{branch}{fails.literal}  {fails.reason}{context}{cut}"
        for nested in fails.why_not:
            yield from _rule_lines(nested, prefix + more + "  ")


def why_not_items(why) -> Iterator[tuple[int, str, int | None]]:
    """(number, label, parent number) for every box of a why-not picture, depth first."""
    counter = iter(range(1 << 62))
    root = next(counter)
    yield root, f"{why.atom}\ndoes not hold", None
    stack = [(r, root) for r in reversed(why.why_not)]
    while stack:
        item, parent = stack.pop()
        number = next(counter)
        if isinstance(item, RuleFails):
            yield number, f"rule {item.where}\n{item.instance}", parent
            stack.extend((f, number) for f in reversed(item.fails))
        else:
            yield number, f"{item.literal}\n{item.reason}", parent
            stack.extend((r, number) for r in reversed(item.why_not))


__all__ = ["ATTEMPTS", "Fails", "RuleFails", "why_not", "why_not_items", "why_not_text"]
