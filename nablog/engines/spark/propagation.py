"""Bulk update propagation on Spark: a stored model brought up to date after a batch of base insertions and deletions (seed 002's induced update).

:func:`propagate` computes the induced update of seed 002 (Def. 2) of a batch of base insertions
and deletions from a stored model, component by component, as seed 002's update propagation
rules prescribe and in the design of :meth:`PythonEngine.update` (DRed): the deletion rules of R∆
(Def. 4) evaluated over the old state over-delete; the effectiveness test against the new state
(``not new__p``) rederives what still has a derivation; the insertion rules of R∆ over the new
state (R∆τ, Def. 5) add, semi-naively. A negated literal whose relation gained tuples propagates
like a deletion and one that lost tuples like an insertion (the difference case of Def. 4). The
result equals recomputation followed by a diff. :func:`propagate_files` is its form over files
(``nablog materialize --model``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import reduce
from typing import TYPE_CHECKING

from ...lang import Atom, Literal, NablogError, NablogWarning, Program, Rule, analyze, base_part, separate_facts
from ...transforms.flatten import flatten
from .. import compute
from ..plan import ComponentPlan, component_plans
from .engine import SparkEngine
from .evaluation import Round, _Evaluation
from .inputs import Progress, read_job
from .relations import read_relations, write_relations
from .types import ColumnType, Relation, count_rows, infer_types, join, meet, rows_of_arrow

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

INSERT_PREFIX, DELETE_PREFIX = "ins__", "del__"
"""Deltas are written as ``OUT/ins__<relation>/`` and ``OUT/del__<relation>/`` (seed 002's ∆+/∆− names)."""

RECOMPUTE_SHARE = 0.25
"""When over-deletion has removed more than this share of a component's tuples, the component is
evaluated afresh and diffed instead: deleting a tuple of a closure over a strongly connected graph
over-deletes most of it (three OpenFlights routes: 10 rounds, 10.8 million tuples, then as many to
rederive: 229 s, where evaluating the closure afresh takes 13 s)."""


@dataclass
class Propagation:
    """The new state of every relation, and per changed relation the tuples it gained and lost."""

    relations: dict[str, Relation]
    derived: list[str]
    gained: dict[str, Relation]
    lost: dict[str, Relation]
    rounds: list[Round] = field(default_factory=list)

    def collect(self) -> tuple[dict[str, set[tuple]], dict[str, set[tuple]]]:
        """The induced update as Python sets: (gained, lost) per relation that changed."""
        return (
            {p: rows_of_arrow(r.frame.toArrow(), r.types) if r.arity else {()} for p, r in self.gained.items()},
            {p: rows_of_arrow(r.frame.toArrow(), r.types) if r.arity else {()} for p, r in self.lost.items()},
        )


def propagate(
    engine: SparkEngine,
    program: Program,
    base: Mapping[str, Relation],
    model: Mapping[str, Relation],
    insert: Mapping[str, Relation] | None = None,
    delete: Mapping[str, Relation] | None = None,
    progress: Progress | None = None,
    recompute_share: float = RECOMPUTE_SHARE,
) -> Propagation:
    """Bring a stored model up to date after base insertions and deletions (see the module
    docstring); call it inside ``engine.running()``.

    A component whose over-deletion removes more than ``recompute_share`` of its tuples is
    evaluated afresh and diffed instead (:data:`RECOMPUTE_SHARE`; above 1, never).

    ``base`` holds the base relations before the change, ``model`` the derived relations of
    their perfect model (as :func:`materialize` wrote them); ``insert``/``delete`` the changes of
    base relations (for a predicate with rules and facts, of its stored part ``base__p``).
    Inserting a present tuple or deleting an absent one changes nothing (seed 002, Def. 1).
    """
    rules, facts = separate_facts(program, {})
    only_rules = Program(tuple(s for s in rules.statements if isinstance(s, Rule)))
    analysis = analyze(only_rules)
    flat = flatten(only_rules)  # negation-local variables as engines read them
    if flat is not only_rules:
        only_rules, analysis = flat, analyze(flat)
    derived = only_rules.derived
    ev = engine.evaluation(progress=progress)
    target = lambda p: base_part(p) if p in derived else p  # noqa: E731
    insert = {target(p): r for p, r in (insert or {}).items()}
    delete = {target(p): r for p, r in (delete or {}).items()}
    given = {target(p): r for p, r in base.items()}
    for pred, rows in facts.items():
        if pred not in given:
            given[pred] = _rows_relation(engine, ev, rows)
    for pred in derived:
        if pred not in model:
            raise NablogError(
                f"the stored model has no relation {pred}",
                hint="materialize the model with this program first (nablog materialize ... --out DIR)",
            )
    for pred, arity in only_rules.signatures.items():
        if pred not in derived and pred not in given:
            given[pred] = _rows_relation(engine, ev, (), arity)
    # Types: base relations widen to hold their insertions; derived ones to what the new base
    # types infer (a stored model typed narrower is widened, never the other way).
    base_types = {p: tuple(r.types) for p, r in given.items()}
    for pred, rel in insert.items():
        have = base_types.get(pred, (None,) * rel.arity)
        base_types[pred] = tuple(join(a, b) for a, b in zip(have, rel.types))
    types = dict(base_types)
    for pred, kinds in infer_types(only_rules.rules, base_types).items():
        stored = model[pred].types
        types[pred] = tuple(join(a, b) for a, b in zip(kinds, stored))
    ev.types.update(types)
    for pred, rel in given.items():
        ev.set(pred, Relation(ev.cast(rel, types[pred]), types[pred], rel.size))
    for pred in derived:
        rel = model[pred]
        ev.set(pred, Relation(ev.cast(rel, types[pred]), types[pred], rel.size))
    old: dict[str, Relation] = {}
    gained: dict[str, Relation] = {}
    lost: dict[str, Relation] = {}

    def record(pred: str, before: Relation, plus: Relation | None, minus: Relation | None) -> None:
        plus_n = plus.size if plus is not None else 0
        minus_n = minus.size if minus is not None else 0
        if plus_n or minus_n:
            old[pred] = before
            if plus_n:
                gained[pred] = plus  # type: ignore[assignment]
            if minus_n:
                lost[pred] = minus  # type: ignore[assignment]

    for pred in sorted(set(insert) | set(delete)):
        before = ev.relation(pred)
        kinds = types[pred]
        ins = _fit(ev, insert[pred], kinds) if pred in insert else None
        dele = _fit(ev, delete[pred], kinds) if pred in delete else None
        plus = None
        if ins is not None:
            frame = ins.frame.distinct()
            if dele is not None:
                frame = _minus(ev, frame, dele)
            plus = _stored(ev, _minus(ev, frame, before), kinds)
        minus = _stored(ev, _intersect(ev, dele.frame.distinct(), before), kinds) if dele is not None else None
        after = before.frame
        if minus is not None and minus.size:
            after = _minus(ev, after, minus)
        if plus is not None and plus.size:
            after = after.union(plus.frame)
        if (plus is not None and plus.size) or (minus is not None and minus.size):
            ev.set(pred, Relation(ev.checkpoint(after), kinds))
        record(pred, before, plus, minus)
    strata = analysis.stratum
    ev.strata = max(strata.values(), default=0) + 1
    for plan in component_plans(only_rules, analysis):
        inputs = _inputs(plan)
        if not inputs & set(old):
            continue
        before = {p: ev.relation(p) for p in plan.predicates}
        plus, minus = _maintain(
            ev,
            plan,
            {p: gained[p] for p in inputs if p in gained},
            {p: lost[p] for p in inputs if p in lost},
            {p: old[p] for p in inputs if p in old},
            strata.get(plan.predicates[0], 0),
            recompute_share,
        )
        for pred in plan.predicates:
            record(pred, before[pred], plus.get(pred), minus.get(pred))
    order = [p for plan in component_plans(only_rules, analysis) for p in plan.predicates]
    return Propagation(dict(ev.relations), order, gained, lost, ev.rounds)


def _rows_relation(engine: SparkEngine, ev: _Evaluation, rows, arity: int | None = None) -> Relation:
    rows = set(map(tuple, rows))
    if arity is None:
        arity = len(next(iter(rows))) if rows else 0
    return ev.relation_from_rows(rows, arity)


def _inputs(plan: ComponentPlan) -> set[str]:
    rules = list(plan.exit_rules) + [r for r, _ in plan.recursive_rules]
    return {b.atom.pred for r in rules for b in r.body if isinstance(b, Literal)} - set(plan.predicates)


def _columns(arity: int) -> list[str]:
    return [f"c{i}" for i in range(arity)]


def _minus(ev: _Evaluation, frame: DataFrame, other: Relation) -> DataFrame:
    """Rows of ``frame`` (typed like ``other``) that are not in ``other``."""
    if other.size == 0:
        return frame
    return ev.anti_join(frame, other.frame, other.size, other.types, _columns(other.arity))


def _intersect(ev: _Evaluation, frame: DataFrame, other: Relation) -> DataFrame:
    """Rows of ``frame`` (typed like ``other``) that are in ``other``."""
    return ev.semi_join(frame, other.frame, other.size, other.types, _columns(other.arity))


def _stored(ev: _Evaluation, frame: DataFrame, types: tuple[ColumnType, ...]) -> Relation:
    """A frame checkpointed and counted: one job, and its lineage is cut."""
    stored = ev.checkpoint(frame)
    return Relation(stored, types, count_rows(stored))


def _fit(ev: _Evaluation, rel: Relation, types: tuple[ColumnType, ...]) -> Relation:
    """A relation in the column types ``types``: wider columns are narrowed to the rows that fit,
    narrower ones widened; a column sharing no value with its target type keeps no row."""
    from pyspark.sql import functions as F

    if rel.arity != len(types):
        raise NablogError(
            f"a change has {rel.arity} columns but the relation it changes has {len(types)}",
            hint="every row of a relation has one value per argument",
        )
    if tuple(rel.types) == tuple(types):
        return rel
    columns, conditions = [], []
    for i, (have, want) in enumerate(zip(rel.types, types)):
        if have is None:
            return Relation(ev.empty(types), types, 0)
        if meet(have, want) is None:
            return Relation(ev.empty(types), types, 0)
        value, keep = ev.convert(F.col(f"c{i}"), have, want)
        columns.append(value.alias(f"c{i}"))
        if keep is not None:
            conditions.append(keep)
    frame = rel.frame.filter(reduce(lambda a, b: a & b, conditions)) if conditions else rel.frame
    return Relation(frame.select(*columns), types)


def _restricted(rule: Rule, position: int) -> Rule:
    """The rule with body literal ``position`` read positively (its instances are those where the
    negated atom is one of the changed tuples); the negation itself is still checked in the state
    the rule is evaluated in (with ``_``, another tuple may still match)."""
    literal = rule.body[position]
    if literal.positive:
        return rule
    body = list(rule.body)
    body[position] = Literal(literal.atom, True)
    return Rule(rule.head, (*body, literal), rule.loc)


def _maintain(
    ev: _Evaluation,
    plan: ComponentPlan,
    gained: Mapping[str, Relation],
    lost: Mapping[str, Relation],
    old: Mapping[str, Relation],
    stratum: int,
    recompute_share: float = RECOMPUTE_SHARE,
) -> tuple[dict[str, Relation], dict[str, Relation]]:
    """Bring one component up to date after its inputs gained and lost tuples (DRed, see the
    module docstring, or afresh when over-deletion grows past ``recompute_share`` of it); return
    the tuples each member gained and lost.

    ``old`` holds the previous state of every changed input (``ev`` holds the new state of the
    lower components and, until this returns, the old state of this one).
    """
    members = plan.predicates
    rules = list(plan.exit_rules) + [r for r, _ in plan.recursive_rules]
    before = {p: ev.relation(p) for p in members}
    if any(compute.has_computation(r) for r in rules):
        # Aggregates and arithmetic: a changed group is recomputed with the whole component
        # (over-deletion has no rules for a count that went down).
        return _afresh(ev, plan, before, stratum)

    def old_state(pred: str) -> Relation:
        if pred in old:
            return old[pred]
        return before[pred] if pred in before else ev.relation(pred)

    def derive(positive: Mapping[str, Relation], negative: Mapping[str, Relation], read) -> dict[str, list[DataFrame]]:
        """Heads of rule instances with one literal restricted to a change: a positive literal to
        the tuples in ``positive``, a negated one (read positively) to those in ``negative``."""
        out: dict[str, list[DataFrame]] = {}
        for rule in rules:
            for i, element in enumerate(rule.body):
                if not isinstance(element, Literal):
                    continue
                delta = (positive if element.positive else negative).get(element.atom.pred)
                if delta is None or not delta.size:
                    continue
                frame = ev.rule(_restricted(rule, i), i, delta, read)
                if frame is not None:
                    out.setdefault(rule.head[0].pred, []).append(frame)
        return out

    # (1) over-delete: every tuple with a derivation that used a lost (or newly negated) tuple,
    # evaluated over the old state (seed 002, Def. 4: the ∆− rules read the old state).
    start = time.perf_counter()
    removed: dict[str, list[Relation]] = {p: [] for p in members}
    frontier = {
        p: _stored(ev, _intersect(ev, reduce(_union, frames).distinct(), before[p]), ev.types[p])
        for p, frames in derive(lost, gained, old_state).items()
    }
    number = 0
    total = sum(before[p].size or 0 for p in members)
    while any(f.size for f in frontier.values()):
        number += 1
        ev.note(Round(stratum, members, "deletions", number, sum(f.size or 0 for f in frontier.values()), time.perf_counter() - start))
        start = time.perf_counter()
        for p, f in frontier.items():
            if f.size:
                removed[p].append(f)
        if sum(r.size or 0 for p in members for r in removed[p]) > recompute_share * total:
            return _afresh(ev, plan, before, stratum)
        derived = derive({p: f for p, f in frontier.items() if f.size}, {}, old_state)
        frontier = {}
        for p, frames in derived.items():
            candidates = _intersect(ev, reduce(_union, frames).distinct(), before[p])
            so_far = _union_relations(ev, removed[p], p)
            frontier[p] = _stored(ev, _minus(ev, candidates, so_far) if so_far.size else candidates, ev.types[p])
    gone = {p: _union_relations(ev, removed[p], p) for p in members}
    # (2) remove them
    for p in members:
        if gone[p].size:
            ev.set(p, Relation(ev.checkpoint(_minus(ev, before[p].frame, gone[p])), ev.types[p]))
    # (3) rederive what still has a derivation in the new state (the ``not new__p`` test), and
    # (4) insert what the gained tuples derive over the new state, continuing semi-naively.
    seeds = derive(gained, lost, ev.relation)
    for rule in rules:
        head = rule.head[0]
        if gone[head.pred].size:
            guard = Literal(Atom(f"nablog_removed__{head.pred}", head.args), True)
            frame = ev.rule(Rule(rule.head, (guard, *rule.body), rule.loc), 0, gone[head.pred])
            if frame is not None:
                seeds.setdefault(head.pred, []).append(frame)
    added = ev.fixpoint(plan, stratum, seeds=seeds, track=True) if any(seeds.values()) else {}
    plus: dict[str, Relation] = {}
    minus: dict[str, Relation] = {}
    for p in members:
        came = added.get(p)
        went = gone[p]
        if came is not None and came.size:
            plus[p] = _stored(ev, _minus(ev, came.frame, went), ev.types[p]) if went.size else came
            minus[p] = _stored(ev, _minus(ev, went.frame, came), ev.types[p]) if went.size else went
        else:
            minus[p] = went
    return plus, minus


def _afresh(ev: _Evaluation, plan: ComponentPlan, before: Mapping[str, Relation], stratum: int) -> tuple[dict[str, Relation], dict[str, Relation]]:
    """The component evaluated afresh over the new state of the components below it, and what
    each member gained and lost against ``before``."""
    ev.component(plan, stratum)
    plus: dict[str, Relation] = {}
    minus: dict[str, Relation] = {}
    for p in plan.predicates:
        after = ev.relation(p)
        plus[p] = _stored(ev, _minus(ev, after.frame, before[p]), ev.types[p])
        minus[p] = _stored(ev, _minus(ev, before[p].frame, after), ev.types[p])
    return plus, minus


def _union(a: DataFrame, b: DataFrame) -> DataFrame:
    return a.union(b)


def _union_relations(ev: _Evaluation, relations: list[Relation], pred: str) -> Relation:
    """Disjoint relations as one (sizes add up)."""
    types = ev.types[pred]
    if not relations:
        return Relation(ev.empty(types), types, 0)
    return Relation(reduce(_union, [r.frame for r in relations]), types, sum(r.size or 0 for r in relations))


@dataclass
class Propagated:
    """What :func:`propagate_files` wrote: rows per relation of the new model, and the sizes of
    the induced update per relation."""

    out: str
    rows: dict[str, int]
    inserted: dict[str, int]
    deleted: dict[str, int]
    rounds: list[Round]
    seconds: float


def propagate_files(
    files: Iterable[str],
    data: Iterable[str],
    model_dir: str,
    insert: Iterable[str],
    delete: Iterable[str],
    out: str,
    *,
    master: str | None = None,
    checkpoint_dir: str | None = None,
    header: bool | None = None,
    progress: Progress | None = None,
    strict: bool = False,
    warn: Callable[[NablogWarning], None] | None = None,
) -> Propagated:
    """Read the base relations (``data``), the stored model (``model_dir``, as ``nablog materialize``
    wrote it) and the changes (``insert``/``delete`` paths, read like data), propagate, and write
    the new model's derived relations plus ``ins__<relation>``/``del__<relation>`` for every
    relation that changed to ``out``, atomically."""
    start = time.perf_counter()
    program, engine, base = read_job(files, data, master, checkpoint_dir, header, strict, warn)
    model = read_relations(engine, [model_dir], header)
    insert_rel = read_relations(engine, insert, header) if insert else {}
    delete_rel = read_relations(engine, delete, header) if delete else {}
    rules, _ = separate_facts(program, {})
    known = set(rules.signatures) | set(base) | {base_part(p) for p in rules.derived}
    for pred in [*insert_rel, *delete_rel]:
        if pred in rules.derived and base_part(pred) not in base and pred not in base:
            raise NablogError(
                f"{pred} is a view: an update changes base facts only",
                hint=f"change the base relations {pred} is defined from (nablog propose finds how)",
            )
        if pred not in known:
            raise NablogError(f"the change names relation {pred}, which the program and the data do not have", hint="check the file names of the change")
    with engine.running():
        result = propagate(engine, program, base, model, insert_rel, delete_rel, progress)
        written = {p: result.relations[p] for p in result.derived}
        for pred, rel in result.gained.items():
            written[INSERT_PREFIX + pred] = rel
        for pred, rel in result.lost.items():
            written[DELETE_PREFIX + pred] = rel
        if progress:
            progress(f"writing {len(written)} relations to {out}")
        entries = write_relations(engine, out, written)
    return Propagated(
        out,
        {p: entries[p]["rows"] for p in result.derived},
        {p: entries[INSERT_PREFIX + p]["rows"] for p in result.gained},
        {p: entries[DELETE_PREFIX + p]["rows"] for p in result.lost},
        result.rounds,
        time.perf_counter() - start,
    )


__all__ = ["DELETE_PREFIX", "INSERT_PREFIX", "RECOMPUTE_SHARE", "Propagated", "Propagation", "propagate", "propagate_files"]
