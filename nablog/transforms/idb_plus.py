"""IDB+: the ground IDB transformed with respect to the least Herbrand model (seed 003, Def. 23).

When the view is materialized, the least Herbrand model ``S`` is at hand. Transforming the ground
rule instances with respect to ``S`` (Def. 12) leaves an instance with a body atom outside ``S``
with that atom in its body, where no branch of an update tableau ever holds it: only the
instances true in the model matter, and IDB+ keeps exactly those, transformed. Every model of
IDB+ with a delete request is then a rational hitting set without a minimality test (Def. 24,
Lemma 5–7; Algorithms 5, 6).

Seed 003, Example 2 (``b`` is not in the model, so ``p ← b ∧ f`` and ``q ← b ∧ e`` drop out):

>>> from nablog.lang import parse
>>> idb = parse("p :- a, e. q :- a, f. p :- b, f. q :- b, e. p :- q. q :- a.")
>>> model = {"a": {()}, "e": {()}, "f": {()}, "p": {()}, "q": {()}}
>>> print(idb_plus(idb, model))
neg__a ; neg__e :- neg__p.
neg__a ; neg__f :- neg__q.
neg__q :- neg__p.
neg__a :- neg__q.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Mapping

from ..lang import AnalysisError, Atom, Literal, Program, Rule
from .idb_transform import transform_wrt


def holds(atom: Atom, model: Mapping[str, Set]) -> bool:
    return tuple(atom.args) in model.get(atom.pred, ())


def require_ground(rule: Rule, what: str) -> None:
    if not all(a.is_ground() for a in rule.head) or any(True for b in rule.body for _ in b.variables()):
        raise AnalysisError(f"{what} is defined on ground rules: {rule}", rule.loc, "ground the relevant instances first (nablog.solver.ground)")


def true_instances(program: Program, model: Mapping[str, Set]) -> Program:
    """The ground rules whose body holds in ``model``."""
    out = []
    for rule in program.rules:
        if rule.is_fact():
            continue
        require_ground(rule, "IDB+")
        if all(holds(b.atom, model) == b.positive for b in rule.body if isinstance(b, Literal)):
            out.append(rule)
    return Program(tuple(out))


def idb_plus(program: Program, model: Mapping[str, Set]) -> Program:
    """IDB+ of ground rules with respect to the least Herbrand model ``model`` (Def. 23)."""
    kept = true_instances(program, model)
    return transform_wrt(kept, [Atom(p, row) for p, rows in model.items() for row in rows])


__all__ = ["idb_plus", "require_ground", "true_instances"]
