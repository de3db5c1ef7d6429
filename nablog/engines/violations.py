"""Constraint checking over a model: every violated denial instance and every failed requirement.

A denial ``:- body.`` is checked by evaluating the rule ``violation__i(V1..Vn) :- body.`` over
the model, where V1..Vn are the body's variables (each ``_`` of a positive literal gets its own
name, so an instance fixes every witness fact); each derived tuple is one violated ground instance.

>>> from nablog.lang import parse
>>> from nablog.engines import get_engine
>>> program = parse(":- e(X, X). #require ok.")
>>> [(v.constraint, v.count, [str(a) for a in v.witnesses[0]]) for v in find_violations(program, {"e": {(1, 1), (1, 2)}}, get_engine("python"))]
[('<string>:1', 1, ['e(1, 1)']), ('ok', 1, [])]
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Set
from dataclasses import dataclass
from typing import Mapping

from ..lang import Atom, Literal, Program, Requirement, Rule, Var, row_sort_key
from ..lang.ast import Aggregate
from ..lang.delta import VIOLATION_PREFIX
from .base import Engine
from .encoding import EncodedRelation



@dataclass(frozen=True)
class Violation:
    """A violated constraint: its name, its text, how many ground instances hold, and their witnesses.

    ``witnesses`` lists, per violated ground instance, the positive body atoms of the instance
    (the facts that together violate the denial), sorted; a failed requirement has one empty
    witness. ``bindings`` gives each instance's variable values, in the order of ``witnesses``.
    """

    constraint: str
    text: str
    count: int
    witnesses: tuple[tuple[Atom, ...], ...]
    bindings: tuple[dict, ...] = ()

    def first(self, limit: int) -> "Violation":
        """The same violation listing only its first ``limit`` instances."""
        return Violation(self.constraint, self.text, self.count, self.witnesses[:limit], self.bindings[:limit])

    def to_json(self) -> dict:
        return {
            "constraint": self.constraint,
            "count": self.count,
            "witnesses": [[str(a) for a in w] for w in self.witnesses],
        }


def find_violations(
    program: Program,
    model: Mapping[str, Set],
    engine: Engine,
    changes: tuple[Mapping[str, Set], Mapping[str, Set]] | None = None,
    limit: int | None = None,
) -> list[Violation]:
    """Each violated constraint of ``program`` in ``model``, in program order.

    With ``changes = (gained, lost)`` — what the model gained and lost since a state in which
    no constraint was violated — only denial instances using a changed tuple are evaluated
    (they are the only ones that can hold now), with the engine's ``evaluate_delta``; a denial
    with an aggregate is evaluated in full.
    With ``limit``, each violation lists the first ``limit`` instances only (its count stays
    exact): grounding hundreds of thousands of witnesses costs more than finding them.
    """
    rules: list[Rule] = []
    checks = []
    out: list[Violation] = []
    for i, (name, c) in enumerate(program.named_constraints()):
        if isinstance(c, Requirement):
            if tuple(c.atom.args) not in model.get(c.atom.pred, ()):
                out.append(Violation(name, str(c), 1, ((),), ({},)))
            continue
        body = name_anonymous(c.body)
        variables = tuple(dict.fromkeys(v for b in body if isinstance(b, Literal) and b.positive for v in b.variables()))
        head = Atom(f"{VIOLATION_PREFIX}{i}", variables)
        rules.append(Rule((head,), body))
        witness_atoms = tuple(b.atom for b in body if isinstance(b, Literal) and b.positive)
        checks.append((i, name, c, head.pred, variables, witness_atoms))
    # A denial with an aggregate can hold anew with no changed tuple in its own literals (a
    # group's count changed): it is evaluated in full; the others from the changes only.
    whole = [r for r in rules if any(isinstance(b, Aggregate) for b in r.body)] if changes is not None else rules
    by_change = [r for r in rules if changes is not None and r not in whole]
    found = {}
    if by_change:
        found.update(engine.evaluate_delta(Program(tuple(by_change)), model, *changes))  # type: ignore[attr-defined]
    if whole:
        found.update(engine.evaluate(Program(tuple(whole)), model))
    for i, name, c, pred, variables, witness_atoms in checks:
        rows = found.get(pred, ())
        if not len(rows):
            continue
        # Instances sorted by their witness atoms are sorted by their variables in order of
        # first occurrence (where two first differ is some variable's first occurrence), which
        # is the order of the head's columns: the python engine's relations are in it already.
        if isinstance(rows, EncodedRelation):
            ordered = rows.first(len(rows) if limit is None else limit)
        else:
            ordered = sorted(rows, key=row_sort_key)[:limit]
        grounders = [_grounder(a, variables) for a in witness_atoms]
        witnesses = tuple(tuple(g(row) for g in grounders) for row in ordered)
        out.append(Violation(name, str(c), len(rows), witnesses, tuple(dict(zip(variables, row)) for row in ordered)))
    order = {name: i for i, (name, _) in enumerate(program.named_constraints())}
    return sorted(out, key=lambda v: order[v.constraint])


def name_anonymous(body):
    """Give each ``_`` of a positive literal its own variable, so ground instances include it."""
    counter = iter(range(1, 1_000_000))
    out = []
    for b in body:
        if isinstance(b, Literal) and b.positive and any(isinstance(t, Var) and t.name == "_" for t in b.atom.args):
            args = tuple(Var(f"_Anon{next(counter)}") if isinstance(t, Var) and t.name == "_" else t for t in b.atom.args)
            b = Literal(Atom(b.atom.pred, args, b.atom.loc), True)
        out.append(b)
    return tuple(out)


def _grounder(atom: Atom, variables: tuple[Var, ...]) -> Callable[[tuple], Atom]:
    """A function from an instance's row of variable values to ``atom`` grounded by it
    (an atom of only variables is a selection of the row: the common case, made cheap)."""
    position = {v: i for i, v in enumerate(variables)}
    if all(isinstance(t, Var) for t in atom.args):
        pick = operator.itemgetter(*[position[t] for t in atom.args]) if atom.args else (lambda row: ())
        if len(atom.args) == 1:
            return lambda row: Atom(atom.pred, (pick(row),))
        return lambda row: Atom(atom.pred, pick(row))
    parts = [(True, position[t]) if isinstance(t, Var) else (False, t) for t in atom.args]
    return lambda row: Atom(atom.pred, tuple(row[x] if is_var else x for is_var, x in parts))


__all__ = ["Violation", "find_violations", "name_anonymous"]
