"""The embedded `python` engine: columnar semi-naive evaluation over integer-encoded constants.

Relations are sorted unique id rows (packed into int64 keys where they fit). A rule body is
evaluated as a sequence of sort-based joins: the relation joined next is indexed once on its bound
columns (sorted keys plus ``searchsorted``, cached while the relation is unchanged), so a recursive
rule probes a fixed index every round. Negation is an anti-join, comparisons are vectorised filters
on order-preserving ids. Each strongly connected component runs semi-naively: every recursive rule
is evaluated once per recursive body literal with that literal restricted to the last round's new
tuples (the delta). A relation the fixpoint grows is kept as a few sorted runs merged
geometrically (:mod:`nablog.engines.runs`): the round's derived tuples are deduplicated against
the runs (by binary search, or in a deep fixpoint by a key set first) and become a run, so no
round rewrites the whole relation.

``update`` continues from a given model: components untouched by the change keep their relations,
components that only grow continue semi-naively from the inserted tuples, and the rest are
recomputed over the new lower strata.

>>> from nablog.lang import parse
>>> model = PythonEngine().evaluate(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y)."),
...                                 {"e": {(1, 2), (2, 3)}})
>>> sorted(model["p"])
[(1, 2), (1, 3), (2, 3)]
>>> sorted(PythonEngine().update(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y)."), model,
...                              insert={"e": {(3, 4)}})["p"])
[(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
"""

from __future__ import annotations

import itertools
from collections.abc import Set
from typing import Callable, Iterable, Mapping

import numpy as np

from ..lang import Literal, Program, base_part
from ..lang.ast import body_atoms
from . import compute, groups
from .algebra import difference, intersection, restricted, union_disjoint
from .base import Model, Prepared, prepare, relation_arity
from .columns import Columns
from .dictionary import STR_ROWS, str_array
from .encoding import ConstantDictionary, EncodedRelation, int_rows
from .evaluator import Evaluator, rules_of
from .plan import ComponentPlan, component_plans
from .runs import RoundCost


class PythonEngine:
    """Semi-naive bottom-up evaluation in-process; no start-up cost. See the module docstring."""

    name = "python"

    def __init__(self, progress: Callable[[str], None] | None = None, profile: Callable[[RoundCost], None] | None = None):
        """``progress`` receives a line per component and round; ``profile`` a
        :class:`~nablog.engines.runs.RoundCost` per semi-naive round (join, dedup, merge seconds)."""
        self.progress = progress
        self.profile = profile

    def evaluate(self, program: Program, facts: Mapping[str, Iterable[tuple]], rounds: dict | None = None) -> Model:
        """The perfect model: every base and derived relation as a set of tuples.

        ``rounds``, a dict, receives per derived predicate a list of ``(round, tuples)``: the
        tuples first derived in that semi-naive round (a component's exit rules are its first
        round; rounds are numbered on from one component to the next), as encoded relations over
        the model's dictionary. A tuple of round k has a derivation from derived tuples of
        rounds below k only, which is what a recursive view's levels need (seed 001 §3.2;
        ``nablog.views.deletions``).

        >>> from nablog.lang import parse
        >>> found = {}
        >>> _ = PythonEngine().evaluate(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y)."),
        ...                             {"e": {(1, 2), (2, 3), (3, 4)}}, rounds=found)
        >>> [(k, sorted(rows)) for k, rows in found["p"]]
        [(0, [(1, 2), (2, 3), (3, 4)]), (1, [(1, 3), (2, 4)]), (2, [(1, 4)])]
        """
        prepared = prepare(program, facts)
        evaluator = self._evaluator(prepared, prepared.facts.values(), prepared.facts.values())
        evaluator.profile = self.profile
        if rounds is not None:
            evaluator.rounds = {}
        for pred, rows in prepared.facts.items():
            evaluator.rels[pred] = evaluator.encode(rows, prepared.arities[pred])
        plans = component_plans(prepared.program, prepared.analysis)
        for i, plan in enumerate(plans):
            if self.progress:
                evaluator.progress = _reporter(self.progress, f"component {i + 1}/{len(plans)} ({', '.join(plan.predicates)})")
            evaluator.run_component(plan)
        if rounds is not None:
            rounds.update({p: [(k, evaluator.current(rows)) for k, rows in found] for p, found in evaluator.rounds.items()})
        return _model(evaluator, prepared)

    def update(
        self,
        program: Program,
        model: Mapping[str, Set],
        insert: Mapping[str, Iterable[tuple]] | None = None,
        delete: Mapping[str, Iterable[tuple]] | None = None,
        *,
        changes: bool = False,
    ) -> Model | tuple[Model, Model, Model]:
        """The model after inserting and deleting base facts, computed from the model before.

        With ``changes=True`` also return, per relation that changed, the tuples it gained and
        the tuples it lost (the induced update, seed 002 Def. 2), as ``(model, gained, lost)``.

        ``model`` is the perfect model of ``program`` over some base facts (as ``evaluate``
        returns it); ``insert``/``delete`` change base relations. Components whose inputs did not
        change keep their relations; the others are maintained incrementally, stratum by stratum
        (delete and rederive, then semi-naive insertion; see ``Evaluator.maintain``), so the work
        follows the change, not the size of the model.
        """
        # Stored facts of a predicate that also has rules live in its base part (seed 002 §2.1).
        derived = program.derived
        target = lambda p: base_part(p) if p in derived else p  # noqa: E731
        insert = {target(p): set(map(tuple, rows)) for p, rows in (insert or {}).items()}
        delete = {target(p): set(map(tuple, rows)) for p, rows in (delete or {}).items()}
        # Naming the model's base relations keeps the bridging rules of split predicates.
        prepared = prepare(program, {**{p: () for p in model if p not in derived}, **insert})
        evaluator = self._evaluator(prepared, [*model.values(), *insert.values(), *delete.values()], model.values())
        arities = prepared.arities
        signatures = prepared.program.signatures
        for pred, rows in model.items():
            if pred not in signatures and not insert.get(pred):
                arities[pred] = relation_arity(rows)
            evaluator.rels[pred] = evaluator.encode(rows, arities[pred])
        for pred in delete:
            arities.setdefault(pred, relation_arity(delete[pred]))
        # Per changed relation: its old value, the tuples it gained and the tuples it lost.
        old: dict[str, EncodedRelation] = {}
        gained: dict[str, EncodedRelation] = {}
        lost: dict[str, EncodedRelation] = {}

        def record(pred: str, before: EncodedRelation, plus: EncodedRelation, minus: EncodedRelation) -> None:
            if len(plus) or len(minus):
                old[pred], gained[pred], lost[pred] = before, plus, minus

        for pred in set(insert) | set(delete):
            before = evaluator.relation(pred)
            ins = EncodedRelation.from_rows(evaluator.d, insert.get(pred, ()), arities[pred])
            dele = EncodedRelation.from_rows(evaluator.d, delete.get(pred, ()), arities[pred])
            # Only the (small) changes are compared with the (large) relation.
            plus = difference(difference(ins, dele), before)
            minus = intersection(dele, before)
            evaluator.rels[pred] = union_disjoint(difference(before, minus), plus)
            record(pred, before, plus, minus)
        for plan in component_plans(prepared.program, prepared.analysis):
            inputs = _inputs(plan)
            if not inputs & set(old):
                continue
            before = {p: evaluator.relation(p) for p in plan.predicates}
            current = evaluator.current
            if any(compute.has_computation(r) for r in rules_of(plan)):
                # Aggregates and arithmetic: the groups a change touches are recounted (groups.py);
                # where that does not apply (recursion), the component is evaluated afresh and diffed.
                by_groups = groups.maintain(
                    evaluator,
                    plan,
                    {p: current(gained[p]) for p in inputs if p in gained},
                    {p: current(lost[p]) for p in inputs if p in lost},
                    {p: current(old[p]) for p in inputs if p in old},
                )
                if by_groups is not None:
                    for pred in plan.predicates:
                        record(pred, before[pred], by_groups[0][pred], by_groups[1][pred])
                    continue
                evaluator.run_component(plan)
                for pred in plan.predicates:
                    now, then = evaluator.relation(pred), evaluator.current(before[pred])
                    record(pred, then, difference(now, then), difference(then, now))
                continue
            plus, minus = evaluator.maintain(
                plan,
                {p: current(gained[p]) for p in inputs if p in gained},
                {p: current(lost[p]) for p in inputs if p in lost},
                {p: current(old[p]) for p in inputs if p in old},
            )
            for pred in plan.predicates:
                record(pred, before[pred], plus.get(pred, EncodedRelation.empty(evaluator.d, arities[pred])), minus[pred])
        if changes:
            return _model(evaluator, prepared), gained, lost
        return _model(evaluator, prepared)

    def evaluate_delta(
        self,
        program: Program,
        model: Mapping[str, Set],
        gained: Mapping[str, Set],
        lost: Mapping[str, Set],
    ) -> Model:
        """The heads derived by rule instances over ``model`` that use a changed tuple: a positive
        literal on a tuple in ``gained``, or a negated one on a tuple in ``lost``.

        For non-recursive rules over relations of a model that changed by ``gained``/``lost``,
        these are exactly the instances that hold now but did not before the change; this is how
        constraints are re-checked after an update without evaluating them over everything.
        """
        prepared = prepare(program, {})
        evaluator = self._evaluator(prepared, [*model.values(), *gained.values(), *lost.values()], model.values())
        arities = prepared.arities
        for pred, rows in model.items():
            arities.setdefault(pred, relation_arity(rows))
            evaluator.rels[pred] = evaluator.encode(rows, arities[pred])
        encoded = {
            sign: {p: evaluator.encode(rows, arities.get(p, relation_arity(rows))) for p, rows in changed.items()}
            for sign, changed in (("+", gained), ("-", lost))
        }
        current = lambda i, atom: evaluator.relation(atom.pred)  # noqa: E731
        instances = []
        for rule in prepared.program.rules:
            for i, b in enumerate(rule.body):
                if isinstance(b, Literal):
                    delta = encoded["+" if b.positive else "-"].get(b.atom.pred)
                    if delta is not None and len(delta):
                        instances.append(restricted(rule, i, delta, current))
        derived = evaluator.derive(instances)
        return {h.pred: derived.get(h.pred, EncodedRelation.empty(evaluator.d, arities[h.pred])) for r in prepared.program.rules for h in r.head}

    @staticmethod
    def _evaluator(prepared: Prepared, relations: Iterable[Iterable[tuple]], encoded: Iterable[Set]) -> Evaluator:
        """An evaluator whose dictionary covers the program and the data: the dictionary of an
        already encoded model, extended by the constants it lacks (see ``Evaluator.encode``)."""
        constants = set(prepared.program.constants())
        existing = {r.dictionary for r in encoded if isinstance(r, EncodedRelation)}
        arrays: dict[int, tuple[Iterable[tuple], np.ndarray]] = {}
        texts: dict[int, tuple[Iterable[tuple], tuple[object, int]]] = {}  # rows of strings, as pyarrow arrays
        for rows in relations:
            if not isinstance(rows, EncodedRelation):
                if existing:
                    array = None
                elif isinstance(rows, Columns):
                    ints = rows.int_columns()  # numbered in bulk, no tuple made (columns.py)
                    array = np.stack(ints, axis=1) if ints is not None else None
                else:
                    array = int_rows(rows) if isinstance(rows, (set, frozenset)) else None
                if array is None and not existing:
                    text = _string_rows(rows)
                    if text is not None:
                        texts[id(rows)] = (rows, text)
                        continue
                if array is None:
                    constants.update(itertools.chain.from_iterable(rows))
                else:
                    arrays[id(rows)] = (rows, array)
        if len(existing) == 1:
            d = next(iter(existing))
            extended, remap = d.extended(constants)
            return Evaluator(extended, prepared.arities, None if extended is d else (d, remap))
        for d in existing:
            constants.update(d.values)
        d, ids = ConstantDictionary.encoding(constants, [a.ravel() for _, a in arrays.values()], [t for _, (t, _) in texts.values()])
        evaluator = Evaluator(d, prepared.arities)
        evaluator.int_rows = {key: (rows, i.reshape(a.shape)) for (key, (rows, a)), i in zip(arrays.items(), ids)}
        evaluator.int_rows.update({key: (rows, i.reshape(-1, arity)) for (key, (rows, (_, arity))), i in zip(texts.items(), ids[len(arrays) :])})
        return evaluator


def _string_rows(rows) -> tuple[object, int] | None:
    """Rows whose every value is a string, as one pyarrow array of their values row by row and
    the arity, when there are enough of them to number in bulk (:data:`STR_ROWS`); else None."""
    if not isinstance(rows, (set, frozenset)) or not rows:
        return None
    arity = len(next(iter(rows)))
    if not arity or len(rows) * arity < STR_ROWS:
        return None
    flat = list(itertools.chain.from_iterable(rows))
    if len(flat) != len(rows) * arity:
        return None  # rows of several widths: the general path reports them
    array = str_array(flat)
    return None if array is None else (array, arity)


def _reporter(progress: Callable[[str], None], label: str) -> Callable[[int, int], None]:
    progress(label)
    return lambda rounds, size: progress(f"{label}: round {rounds}, {size:,} new tuples")




def _inputs(plan: ComponentPlan) -> set[str]:
    return {atom.pred for rule in rules_of(plan) for atom, _, _ in body_atoms(rule.body)} - set(plan.predicates)


def _model(evaluator: Evaluator, prepared: Prepared) -> Model:
    return {pred: evaluator.relation(pred) for pred in sorted(set(prepared.arities) | set(evaluator.rels))}
