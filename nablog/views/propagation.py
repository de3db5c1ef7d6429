"""Update propagation: the induced update (seed 002, Def. 2) of a change of base facts.

Two ways, equal on every input (tests check both against the difference of the two models):

- ``incremental`` (default): the python engine maintains the model stratum by stratum — delete
  and rederive, then semi-naive insertion — reading only the tuples the change touches. This is
  the set-oriented evaluation of R∆ ∪ R∆τ with binding-driven queries of the old and new state:
  over-deletion evaluates the ∆− rules over the old state, rederivation is the ``not new__p``
  effectiveness test, insertion evaluates the ∆+ rules over the new state.
- ``rules``: the paper's rules evaluated literally: normalize, build R∆ ∪ R∆τ, and evaluate them
  over the old model and the seeds ``ins__b``/``del__b`` (the new state is materialized). Slower;
  it shows the transformation at work, and serves as a check.
- ``maintenance`` and ``rod``: seed 001's maintenance rules (Algorithm 1) over the kept model, or
  Rederivation on Demand (Algorithm 2) reading base facts only, layer by layer (Algorithm 3; see
  :mod:`nablog.views.monitor`).

>>> from nablog.lang import parse, separate_facts
>>> rules, facts = separate_facts(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y). e(1,2). e(2,3)."))
>>> print(propagate(rules, facts, insert={"e": {(3, 4)}}, delete={"e": {(1, 2)}}).lines())
['+e(3, 4)', '+p(2, 4)', '+p(3, 4)', '-e(1, 2)', '-p(1, 2)', '-p(1, 3)']
"""

from __future__ import annotations

from collections.abc import Set
from typing import Iterable, Mapping

from ..engines import PythonEngine
from ..engines.base import relation_arity
from ..engines.compute import refuse_computation
from ..lang import Program, Rule, base_part
from ..lang.delta import Delta, induced_update
from ..transforms import normalize, propagation_rules, transition_rules
from ..transforms.propagation import DEL, INS

METHODS = ("incremental", "rules", "maintenance", "rod")


def propagate(
    rules: Program,
    facts: Mapping[str, Iterable[tuple]],
    insert: Mapping[str, Iterable[tuple]] | None = None,
    delete: Mapping[str, Iterable[tuple]] | None = None,
    *,
    model: Mapping[str, Set] | None = None,
    method: str = "incremental",
) -> Delta:
    """The atoms, base and derived, that appear and disappear when base facts change.

    ``rules`` and ``facts`` are the database (facts separated out); ``model`` is its current
    perfect model if known. Insertions of facts already present and deletions of absent ones
    change nothing (only true updates propagate, seed 002 Def. 1).
    """
    engine = PythonEngine()
    insert = {p: set(map(tuple, rows)) for p, rows in (insert or {}).items()}
    delete = {p: set(map(tuple, rows)) for p, rows in (delete or {}).items()}
    if model is None:
        model = engine.evaluate(rules, facts)
    if method == "incremental":
        _, gained, lost = engine.update(rules, model, insert=insert, delete=delete, changes=True)
        return induced_update(gained, lost)
    if method in ("maintenance", "rod"):
        return _by_monitor(rules, facts, insert, delete, model, "materialized" if method == "maintenance" else "rod")
    if method != "rules":
        from ..lang import NablogError

        raise NablogError(f"unknown propagation method {method!r}", hint="choose " + ", ".join(METHODS))
    return _by_rules(rules, facts, insert, delete)


def _by_monitor(rules: Program, facts, insert, delete, model, mode: str) -> Delta:
    """Seed 001's differentials of every view, plus the true base changes."""
    from .monitor import Monitor, true_changes

    derived = rules.derived
    stored = lambda p: base_part(p) if p in derived else p  # noqa: E731
    insert = {stored(p): rows for p, rows in insert.items()}
    delete = {stored(p): rows for p, rows in delete.items()}
    ins, dele = true_changes(facts, insert, delete)
    changes = Monitor(rules, sorted(derived), mode).differentials(facts, Delta.of_rows(ins, dele), model=None if mode == "rod" else model, real=True)
    gained = {**ins, **{p: c[0] for p, c in changes.by_relation().items()}}
    lost = {**dele, **{p: c[1] for p, c in changes.by_relation().items()}}
    return induced_update(gained, lost)


def _by_rules(rules: Program, facts, insert, delete) -> Delta:
    engine = PythonEngine()
    derived = rules.derived
    only_rules = Program(tuple(s for s in rules.statements if isinstance(s, Rule)))
    refuse_computation(only_rules.rules, "propagation by rules (seed 002's R∆)", "use method incremental, which evaluates a component with them afresh and diffs it")
    normalized = normalize(only_rules)
    old = engine.evaluate(normalized, facts)
    seeds: dict[str, set[tuple]] = {}
    for pred, rows in insert.items():
        stored = base_part(pred) if pred in derived else pred
        seeds[INS + stored] = {r for r in rows if r not in old.get(stored, ())} - delete.get(pred, set())
    for pred, rows in delete.items():
        stored = base_part(pred) if pred in derived else pred
        seeds[DEL + stored] = {r for r in rows if r in old.get(stored, ())}
    arities = {p: relation_arity(r) for p, r in old.items() if len(r)}
    for changes in (insert, delete):
        for pred, rows in changes.items():
            for row in rows:
                arities.setdefault(base_part(pred) if pred in derived else pred, len(row))
    arities.update(normalized.signatures)
    base = [(p, arities.get(p, 0)) for p in set(old) | set(arities) if p not in normalized.derived]
    for pred, arity in base:
        seeds.setdefault(INS + pred, set())
        seeds.setdefault(DEL + pred, set())
    program = propagation_rules(normalized) + transition_rules(normalized, base)
    result = engine.evaluate(program, {**old, **seeds})
    # Auxiliary predicates of the normalization are not part of the answer.
    shown = (set(old) | set(only_rules.signatures)) - (set(normalized.signatures) - set(only_rules.signatures) - set(facts))
    gained = {p: result.get(INS + p, set()) for p in shown}
    lost = {p: result.get(DEL + p, set()) for p in shown}
    return induced_update(gained, lost)


__all__ = ["METHODS", "propagate"]
