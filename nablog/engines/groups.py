"""Incremental maintenance of a component with aggregates: only the groups a change touches are recounted.

Evaluating such a component afresh after a one-row change costs as much as the first evaluation
(every group recounted). Here, for a non-recursive component (aggregates are stratified, so a
rule with an aggregate is never recursive through it):

- *touched groups* of an aggregate are the values of its group variables (those it shares with
  the rest of the rule) in element bindings that use a changed tuple: bindings that disappeared
  are found over the old state (a lost positive tuple, a gained negated one), bindings that
  appeared over the new state (the reverse);
- the candidates to delete are the heads derived over the old state by instances through a
  changed outer literal (as in DRed, seed 002 Def. 4) or in a touched group; the candidates to
  insert, the same over the new state;
- a candidate to delete is lost unless it is derived again over the new state (rederivation with
  the head bound), a candidate to insert is gained unless it was there.

Every tuple of the old relation that is not in the new one was derived by an instance that lost
a literal or whose aggregate value changed, i.e. whose group is touched; and symmetrically for
gained tuples, so the result is exact (the property tests compare it with evaluation afresh).
Counts and sums of the touched groups are recomputed, not adjusted: a touched group costs its
size, an untouched one nothing. When a group variable is bound only outside the aggregate's
condition (``#count{E : works(E, D2), D2 < D}``), its touched groups cannot be read off the
changed bindings, and :func:`maintain` answers None: the caller evaluates the component afresh.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..lang import Atom, Literal, Rule, Var
from ..lang.ast import Aggregate
from .algebra import difference, head_restricted, restricted, union_all
from .encoding import EncodedRelation
from .plan import ComponentPlan

if TYPE_CHECKING:
    from .evaluator import Evaluator

_GROUPS = "__touched_groups"


def maintain(
    ev: Evaluator,
    plan: ComponentPlan,
    gained: Mapping[str, EncodedRelation],
    lost: Mapping[str, EncodedRelation],
    old: Mapping[str, EncodedRelation],
) -> tuple[dict[str, EncodedRelation], dict[str, EncodedRelation]] | None:
    """The tuples each member of ``plan`` gains and loses after its inputs changed (``old`` holds
    the previous relation of every changed input; ``ev`` the new state below the component and
    the old state of the component); None when this method does not apply (see the docstring)."""
    if plan.recursive_rules:
        return None
    rules = plan.exit_rules
    touched = {}  # (rule index, aggregate position) -> group variables
    for r, rule in enumerate(rules):
        for i, element in enumerate(rule.body):
            if isinstance(element, Aggregate):
                groups = _group_variables(rule, element)
                if groups is None:
                    return None
                touched[(r, i)] = groups
    members = plan.predicates
    before = {p: ev.relation(p) for p in members}
    new_rels = dict(ev.rels)
    old_rels = {**new_rels, **old}

    def in_state(rels: dict, instances) -> dict[str, EncodedRelation]:
        # Aggregate conditions read ev.rels: the state is swapped in while these instances run.
        saved = ev.rels
        ev.rels = {p: ev.current(rel) for p, rel in rels.items()}
        try:
            return ev.derive(instances)
        finally:
            current = {p: ev.current(rel) for p, rel in saved.items()}
            ev.rels = current

    state = lambda i, atom: ev.relation(atom.pred)  # noqa: E731  (whichever state is swapped in)
    candidates = {}
    for sign, rels, positive, negative in (("-", old_rels, lost, gained), ("+", new_rels, gained, lost)):
        instances = []
        for r, rule in enumerate(rules):
            for i, element in enumerate(rule.body):
                if isinstance(element, Literal):
                    delta = (positive if element.positive else negative).get(element.atom.pred)
                    if delta is not None and len(delta):
                        instances.append(restricted(rule, i, delta, state))
                elif isinstance(element, Aggregate):
                    groups = touched[(r, i)]
                    keys = _touched(ev, element, groups, old_rels, new_rels, gained, lost, in_state)
                    if keys is not None:
                        guard = Literal(Atom(_GROUPS, tuple(groups)))
                        instances.append((Rule(rule.head, (guard, *rule.body), rule.loc), 0, _reading(keys, state)))
        candidates[sign] = in_state(rels, instances)
    plus: dict[str, EncodedRelation] = {}
    minus: dict[str, EncodedRelation] = {}
    for pred in members:
        arity = ev.arities[pred]
        was = ev.current(before[pred])
        dropped = ev.current(candidates["-"].get(pred, EncodedRelation.empty(ev.d, arity)))
        dropped = difference(dropped, difference(dropped, was))  # only tuples that were there
        again = in_state(new_rels, [head_restricted(rule, head, dropped, state) for rule in rules for head in rule.head if head.pred == pred])
        was, dropped = ev.current(was), ev.current(dropped)
        minus[pred] = difference(dropped, ev.current(again.get(pred, EncodedRelation.empty(ev.d, arity))))
        added = ev.current(candidates["+"].get(pred, EncodedRelation.empty(ev.d, arity)))
        plus[pred] = difference(added, was)
        ev.rels[pred] = union_all(ev.d, arity, [difference(was, ev.current(minus[pred])), ev.current(plus[pred])])
    return {p: ev.current(r) for p, r in plus.items()}, {p: ev.current(r) for p, r in minus.items()}


def _group_variables(rule: Rule, agg: Aggregate) -> list[Var] | None:
    """The variables an aggregate shares with the rest of its rule (an assigned guard excluded);
    None when one of them is not bound by a positive literal of every element's condition."""
    elsewhere = {v for a in rule.head for v in a.variables()} | {v for b in rule.body if b is not agg for v in b.variables()}
    inner = {v for e in agg.elements for v in e.variables()}
    groups = sorted((v for v in inner & elsewhere if v.name != "_"), key=lambda v: v.name)
    if agg.op == "=" and isinstance(agg.bound, Var) and agg.bound not in inner:
        groups = [v for v in groups if v != agg.bound]
    for element in agg.elements:
        positive = {v for c in element.condition if isinstance(c, Literal) and c.positive for v in c.variables()}
        if not set(groups) <= positive:
            return None
    return groups


def _touched(ev, agg: Aggregate, groups: list[Var], old_rels, new_rels, gained, lost, in_state) -> EncodedRelation | None:
    """The group keys whose element bindings changed (None: none did)."""
    state = lambda i, atom: ev.relation(atom.pred)  # noqa: E731
    found = []
    for rels, positive, negative in ((old_rels, lost, gained), (new_rels, gained, lost)):
        instances = []
        for element in agg.elements:
            rule = Rule((Atom(_GROUPS, tuple(groups)),), element.condition)
            for j, c in enumerate(element.condition):
                if isinstance(c, Literal):
                    delta = (positive if c.positive else negative).get(c.atom.pred)
                    if delta is not None and len(delta):
                        instances.append(restricted(rule, j, delta, state))
        if instances:
            ev.arities[_GROUPS] = len(groups)
            try:
                found.extend(in_state(rels, instances).values())
            finally:
                del ev.arities[_GROUPS]
    if not found:
        return None
    return union_all(ev.d, len(groups), [ev.current(f) for f in found])


def _reading(keys: EncodedRelation, state):
    return lambda i, atom: keys if i == 0 else state(i, atom)


__all__ = ["maintain"]
