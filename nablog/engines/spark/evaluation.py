"""Rules on Spark DataFrames: one evaluation's typed relations, each rule as joins, components by semi-naive rounds.

:class:`_Evaluation` holds a typed :class:`~nablog.engines.spark.types.Relation` for every relation
computed so far and compiles each rule into joins of like-typed columns. A non-recursive component
is one ``distinct`` union of its rules; a recursive one runs in one job when the engine's
``one_job`` can (:mod:`nablog.engines.spark.fixpoint`), else in semi-naive rounds: each recursive
rule once per recursive body literal taken as the delta; new tuples found by ``distinct`` plus an
anti-join against the full relation (set semantics); small relations broadcast in joins by their
exact row counts. Each round checkpoints its deltas, so the plan does not grow with the number of
rounds, and a recursive relation is the union of its deltas, consolidated every
:data:`MAX_PIECES` rounds, the consolidated pieces being released at once.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING, Any

from ...lang import Analysis, Atom, Comparison, Literal, NablogError, Program, Rule, Var
from . import compute as computing
from ..plan import ComponentPlan, body_order, component_plans
from .relations import relation_from_rows
from .session import SessionOwner
from .types import (
    LONG,
    MIXED,
    ColumnType,
    Relation,
    constant_type,
    count_rows,
    infer_types,
    literal_column,
    meet,
    rows_of_arrow,
    spark_type,
    type_rank,
    var_types,
    widen_column,
)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

BROADCAST_BYTES = 64 << 20
"""A relation whose estimated size is at most this many bytes is broadcast in joins (a copy per
executor: a self-join of a 50,000-row table then needs no shuffle, which halves the time of a
functional dependency check)."""

BROADCAST_ROW_OVERHEAD = 64
"""Bytes a broadcast row costs beyond its values, in the estimate of :data:`BROADCAST_BYTES`."""

MAX_PIECES = 8
"""A recursive relation is kept as a union of at most this many checkpointed deltas."""

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Round:
    """One step of an evaluation, for progress reports and benchmarks.

    ``method`` is ``rules`` (a non-recursive component), ``rounds`` (one semi-naive round),
    ``partitioned`` (a whole fixpoint in one job; ``round`` is then the number of rounds the
    deepest partition needed, when the workers reported it) or ``deletions`` (one round of
    over-deletion in update propagation). ``new`` is the number of tuples found (None when not
    counted), ``seconds`` the wall time of the step.
    """

    stratum: int
    component: tuple[str, ...]
    method: str
    round: int
    new: int | None
    seconds: float

    def describe(self, strata: int) -> str:
        what = ", ".join(self.component)
        if self.method == "rules":
            return f"stratum {self.stratum + 1}/{strata}: {what}"
        new = "" if self.new is None else f", {self.new:,} new tuples"
        if self.method == "partitioned":
            depth = f" ({self.round} rounds in the deepest partition)" if self.round else ""
            return f"stratum {self.stratum + 1}/{strata}: {what}: fixpoint in one job{depth}{new}, {self.seconds:.1f} s"
        if self.method == "deletions":
            return f"stratum {self.stratum + 1}/{strata}: {what}: over-deletion round {self.round}, {self.new or 0:,} tuples, {self.seconds:.1f} s"
        return f"stratum {self.stratum + 1}/{strata}: {what}: round {self.round}{new}, {self.seconds:.1f} s"


@dataclass
class SparkModel:
    """The result of :meth:`SparkEngine.run`: every relation as a :class:`Relation`.

    ``derived`` names the relations defined by rules, in evaluation order; ``rounds`` records each
    step of the evaluation. ``evaluation`` can evaluate further rules over the model (the bulk
    constraint checks do).
    """

    relations: dict[str, Relation]
    derived: list[str]
    rounds: list[Round]
    evaluation: _Evaluation
    program: Program
    analysis: Analysis

    def collect(self, preds: Iterable[str] | None = None) -> dict[str, set[tuple]]:
        """Relations as Python sets of tuples of constants (all derived ones by default)."""
        return self.evaluation.collect(list(self.derived if preds is None else preds))


class _Evaluation:
    """The state of one evaluation: a typed :class:`Relation` for every relation computed so far."""

    def __init__(
        self,
        spark: SparkSession,
        engine: SessionOwner,
        progress: Callable[[str], None] | None = None,
        one_job: Callable[[_Evaluation, ComponentPlan, int], bool] | None = None,
    ):
        """``one_job`` evaluates a recursive component in one job when it can (False: it cannot);
        the engine passes :func:`~nablog.engines.spark.fixpoint.one_job` unless told otherwise."""
        from pyspark.sql import functions as F

        self.spark = spark
        self.engine = engine
        self.F = F
        self.checkpoint, self.release = engine.checkpointer(spark)
        self.relations: dict[str, Relation] = {}
        self.types: dict[str, tuple[ColumnType, ...]] = {}
        self.order: list[str] = []
        self.rounds: list[Round] = []
        self.progress = progress
        self.strata = 1
        self.one_job = one_job

    # -- relations ------------------------------------------------------------------------------

    def set(self, pred: str, relation: Relation) -> None:
        self.relations[pred] = relation
        self.types[pred] = relation.types

    def empty(self, types: tuple[ColumnType, ...]) -> DataFrame:
        F = self.F
        return self.spark.range(0).select(*[F.lit(None).cast(spark_type(t)).alias(f"c{i}") for i, t in enumerate(types)])

    def relation_from_rows(self, rows: Iterable[tuple], arity: int) -> Relation:
        return relation_from_rows(self.engine, rows, arity, self.checkpoint)

    def load_rows(self, pred: str, rows: Iterable[tuple], arity: int) -> None:
        self.set(pred, self.relation_from_rows(rows, arity))

    def relation(self, pred: str) -> Relation:
        """A relation with its exact row count (counted on first use when not yet known)."""
        rel = self.relations.get(pred)
        if rel is None:
            raise NablogError(f"relation {pred} is unknown to the spark evaluation", hint="this is a bug in nablog")
        if rel.size is None:
            rel.size = count_rows(rel.frame)
        return rel

    def cast(self, rel: Relation, types: tuple[ColumnType, ...]) -> DataFrame:
        """The relation's frame with every column widened to ``types`` (each at least as wide)."""
        F = self.F
        if tuple(rel.types) == tuple(types):
            return rel.frame
        return rel.frame.select(*[self.widen(F.col(f"c{i}"), a, b).alias(f"c{i}") for i, (a, b) in enumerate(zip(rel.types, types))])

    def small(self, size: int | None, types: Iterable[ColumnType]) -> bool:
        # A broadcast row costs far more than its values: the collected copy, then the hashed
        # relation built from it (row header, hash map entry, pointers). Counting 64 bytes of
        # overhead keeps two broadcasts of a million pairs each, which fail a 4 GB local heap,
        # out of one plan (update propagation on OpenFlights' 10.8-million-pair closure did).
        width = sum(8 if t == LONG else 32 for t in types)
        return size is not None and size * (width + BROADCAST_ROW_OVERHEAD) <= BROADCAST_BYTES

    # -- typed values ---------------------------------------------------------------------------

    def literal(self, value, column_type: ColumnType) -> Column:
        """A constant as a value of a column of ``column_type`` (which must be able to hold it)."""
        return literal_column(value, column_type)

    def widen(self, column: Column, have: ColumnType, want: ColumnType) -> Column:
        """A column of type ``have`` as values of type ``want`` (``have`` ≤ ``want``)."""
        return widen_column(column, have, want)

    def narrow(self, column: Column, have: ColumnType, want: ColumnType) -> tuple[Column, Column | None]:
        """A column of type ``have`` as values of type ``want`` (``want`` ≤ ``have``), with the
        filter that keeps the rows whose value is of type ``want`` (None: all are)."""
        if have == want:
            return column, None
        assert have == MIXED, (have, want)
        if want == LONG:
            return column.getField("i"), column.getField("s").isNull()
        return column.getField("s"), column.getField("s").isNotNull()

    def convert(self, column: Column, have: ColumnType, want: ColumnType) -> tuple[Column, Column | None]:
        """``have`` to ``want`` in whichever direction; the types must share values."""
        if have == want or want == MIXED:
            return self.widen(column, have, want), None
        return self.narrow(column, have, want)

    def equals_constant(self, column: Column, have: ColumnType, value) -> Column | bool:
        """``column = value``, or False when no value of the column's type can equal it."""
        kind = constant_type(value)
        if have is None or (have != MIXED and have != kind):
            return False
        return column == self.literal(value, have)

    # -- the program ----------------------------------------------------------------------------

    def run(self, program: Program, analysis: Analysis) -> None:
        """Infer the types of the derived relations, then evaluate every component in order."""
        base_types = {p: r.types for p, r in self.relations.items()}
        self.types.update(infer_types(program.rules, base_types))
        plans = component_plans(program, analysis)
        self.strata = max((analysis.stratum.get(p, 0) for plan in plans for p in plan.predicates), default=0) + 1
        for plan in plans:
            self.component(plan, analysis.stratum.get(plan.predicates[0], 0))
            self.order.extend(plan.predicates)

    def note(self, step: Round) -> None:
        self.rounds.append(step)
        if self.progress is not None:
            self.progress(step.describe(self.strata))

    def component(self, plan: ComponentPlan, stratum: int = 0) -> None:
        """Compute the relations of one component, every lower component being done.

        A non-recursive relation is left uncounted (and unmaterialized) until a later rule reads
        it, so relations nothing reads cost no job before the final collection.
        """
        if plan.recursive_rules:
            if self.one_job is not None and self.one_job(self, plan, stratum):
                return
            self.fixpoint(plan, stratum)
            return
        start = time.perf_counter()
        for pred in plan.predicates:
            types = self.types[pred]
            parts = [self.rule(r) for r in plan.exit_rules if r.head[0].pred == pred]
            found = [p for p in parts if p is not None]
            if found:
                self.set(pred, Relation(self.checkpoint(reduce(_union, found).distinct()), types))
            else:
                self.set(pred, Relation(self.empty(types), types, 0))
        self.note(Round(stratum, plan.predicates, "rules", 0, None, time.perf_counter() - start))

    def fixpoint(
        self,
        plan: ComponentPlan,
        stratum: int = 0,
        seeds: dict[str, list[DataFrame]] | None = None,
        track: bool = False,
    ) -> dict[str, Relation]:
        """Semi-naive rounds: round 0 runs the exit rules (or, given ``seeds``, takes those
        candidate tuples, the component's relations being set already), later rounds the
        recursive rules on the deltas of the round before.

        A relation of the component is the union of the deltas of the rounds so far; the union
        is checkpointed into one piece before it exceeds :data:`MAX_PIECES` pieces, which bounds
        the plan without copying the relation every round, and the pieces it replaces are
        released. With ``track`` every delta is kept and their union per predicate returned
        (what update propagation needs); otherwise the result is empty.
        """
        preds = plan.predicates
        pieces: dict[str, list[DataFrame]] = {p: [] for p in preds}
        owned: set[int] = set()  # pieces this fixpoint made, which it may release
        added: dict[str, list[Relation]] = {p: [] for p in preds}
        if seeds is None:
            for pred in preds:
                self.set(pred, Relation(self.empty(self.types[pred]), self.types[pred], 0))
            candidates: dict[str, list[DataFrame]] = {p: [] for p in preds}
            for rule in plan.exit_rules:
                part = self.rule(rule)
                if part is not None:
                    candidates[rule.head[0].pred].append(part)
        else:
            candidates = {p: list(seeds.get(p, [])) for p in preds}
            pieces = {p: [self.relation(p).frame] for p in preds}
        number = 0
        while True:
            start = time.perf_counter()
            delta: dict[str, Relation] = {}
            for pred in preds:
                if not candidates[pred]:
                    continue
                found = reduce(_union, candidates[pred]).distinct()
                full = self.relation(pred)
                if full.size:
                    found = self.anti_join(found, full.frame, full.size, full.types, [f"c{i}" for i in range(full.arity)])
                new = self.checkpoint(found)
                # The one job of the round for this relation: it computes and stores the delta.
                n = count_rows(new)
                if n:
                    delta[pred] = Relation(new, self.types[pred], n)
            total = sum(d.size or 0 for d in delta.values())
            if number or total:
                self.note(Round(stratum, preds, "rounds", number, total, time.perf_counter() - start))
            if not delta:
                return {p: self._union_all(rels, p) for p, rels in added.items() if rels}
            number += 1
            computing.check_rounds([r for r, _ in plan.recursive_rules], number, self._derived_bytes(preds, delta))
            for pred, new in delta.items():
                if len(pieces[pred]) >= MAX_PIECES:
                    merged = self.checkpoint(reduce(_union, pieces[pred]), eager=True)
                    if not track:
                        for piece in pieces[pred]:
                            if id(piece) in owned:
                                self.release(piece)
                    pieces[pred] = [merged]
                    owned.add(id(merged))
                pieces[pred].append(new.frame)
                owned.add(id(new.frame))
                if track:
                    added[pred].append(new)
                size = (self.relations[pred].size or 0) + (new.size or 0)
                self.set(pred, Relation(reduce(_union, pieces[pred]), self.types[pred], size))
            candidates = {p: [] for p in preds}
            for rule, positions in plan.recursive_rules:
                for position in positions:
                    pred = rule.body[position].atom.pred  # type: ignore[union-attr]
                    if pred in delta:
                        part = self.rule(rule, position, delta[pred])
                        if part is not None:
                            candidates[rule.head[0].pred].append(part)

    def _derived_bytes(self, preds, delta: dict[str, Relation]) -> int:
        """The component's tuples so far with this round's, at 8 bytes a value (the memory budget's measure)."""
        total = 0
        for pred in preds:
            rows = (self.relations[pred].size or 0) + (delta[pred].size or 0 if pred in delta else 0)
            total += rows * 8 * max(1, self.relations[pred].arity)
        return total

    def _union_all(self, rels: list[Relation], pred: str) -> Relation:
        sizes = [r.size for r in rels]
        total = None if any(s is None for s in sizes) else sum(sizes)  # type: ignore[misc]
        return Relation(reduce(_union, [r.frame for r in rels]), self.types[pred], total)

    # -- rules ----------------------------------------------------------------------------------

    def rule(
        self,
        rule: Rule,
        start: int | None = None,
        delta: Relation | None = None,
        read: Callable[[str], Relation] | None = None,
    ) -> DataFrame | None:
        """The head tuples one rule derives (typed as the head relation), or None when they are
        known to be none.

        With ``start``, the literal at that body position is read from ``delta`` (and joined
        first); every other literal reads ``read(pred)`` (the current relation by default).
        """
        F = self.F
        read = read or self.relation
        sources: dict[int, Relation] = {}
        for i, element in enumerate(rule.body):
            if isinstance(element, Literal):
                sources[i] = delta if (i == start and delta is not None) else read(element.atom.pred)
        types = var_types(rule, {i: s.types for i, s in sources.items()}, self.types)
        if types is None:
            return None
        position = {id(b): i for i, b in enumerate(rule.body)}
        names: dict[Var, str] = {}
        frame: DataFrame | None = None
        frame_size: int | None = None
        frame_types: list[ColumnType] = []
        columns: list[str] = []
        for element in body_order(rule, start):
            if computing.computes(element, names):
                if frame is None:
                    frame = self.unit()
                frame, bound = computing.step(self, frame, element, names, types)
                frame_size = None
                if bound is not None:
                    columns, frame_types = columns + [names[bound]], frame_types + [types[bound]]
                continue
            if isinstance(element, Comparison):
                condition = self.comparison(element, names, types)
                if condition is False:
                    return None
                if condition is True:
                    continue
                if frame is None:
                    frame, frame_size = self.unit(), 1
                frame = frame.filter(condition)
                continue
            source = sources[position[id(element)]]
            if element.positive:
                if source.size == 0:
                    return None
                bound = self.bind(element.atom, source, names, types)
                if bound is None:
                    return None
                right, right_columns = bound
                right_types = [types[v] for v in _vars_of(element.atom)]
                if frame is None:
                    # A literal without variables is a test: one matching row is enough.
                    frame = right if right_columns else right.limit(1)
                    frame_size, columns, frame_types = source.size, right_columns, right_types
                    continue
                shared = [c for c in right_columns if c in columns]
                if len(shared) == len(right_columns):
                    # Nothing new to bind: a semi-join keeps each binding once, however many rows match.
                    frame = self.semi_join(frame, right, source.size, right_types, shared)
                else:
                    frame = self.join(frame, frame_size, frame_types, right, source.size, right_types, shared)
                    frame_size = None
                    fresh = [(c, t) for c, t in zip(right_columns, right_types) if c not in columns]
                    columns = columns + [c for c, _ in fresh]
                    frame_types = frame_types + [t for _, t in fresh]
            else:
                if frame is None:
                    frame, frame_size = self.unit(), 1
                source = read(element.atom.pred) if source.size is None else source
                if source.size == 0:
                    continue
                against = self.bind_negated(element.atom, source, names, types)
                if against is None:
                    continue  # no tuple of the relation can match: the negation holds everywhere
                right, right_columns = against
                frame = self.anti_join(frame, right, source.size, [types[v] for v in _vars_of(element.atom)], right_columns)
        if frame is None:
            frame = self.unit()
        head = rule.head[0]
        if not head.args:
            # A 0-ary head only asks whether some binding exists.
            return frame.select().limit(1)
        head_types = self.types[head.pred]
        out = []
        for i, (term, want) in enumerate(zip(head.args, head_types)):
            if isinstance(term, Var):
                value = self.widen(F.col(names[term]), types[term], want)
            else:
                value = self.literal(term, want)
            out.append(value.alias(f"c{i}"))
        return frame.select(*out)

    def unit(self) -> DataFrame:
        """One row, no columns: the bindings of an empty body."""
        return self.spark.range(1).select()

    def bind(self, atom: Atom, source: Relation, names: dict[Var, str], types: dict[Var, ColumnType]) -> tuple[DataFrame, list[str]] | None:
        """Bindings of the variables of a positive literal from its relation: constants and
        repeated variables become filters, ``_`` is projected away, each variable becomes a column
        named for the rule, narrowed to the variable's type. None when nothing can match."""
        matched = self._matching(atom, source, types, self.narrow)
        if matched is None:
            return None
        frame, seen = matched
        for var in seen:
            names.setdefault(var, f"v{len(names)}")
        return frame.select(*[value.alias(names[v]) for v, value in seen.items()]), [names[v] for v in seen]

    def bind_negated(self, atom: Atom, source: Relation, names: dict[Var, str], types: dict[Var, ColumnType]) -> tuple[DataFrame, list[str]] | None:
        """The tuples a negated literal rules out, as bindings of its (already bound) variables in
        the variables' types; None when no tuple of the relation can match the literal."""

        def convert(column: Column, have: ColumnType, want: ColumnType) -> tuple[Column, Column | None] | None:
            # None: the column holds no value of the variable's type.
            return None if meet(have, want) is None else self.convert(column, have, want)

        matched = self._matching(atom, source, types, convert)
        if matched is None:
            return None
        frame, seen = matched
        return frame.select(*[value.alias(names[v]) for v, value in seen.items()]), [names[v] for v in seen]

    def _matching(
        self,
        atom: Atom,
        source: Relation,
        types: dict[Var, ColumnType],
        cast: Callable[[Column, ColumnType, ColumnType], tuple[Column, Column | None] | None],
    ) -> tuple[DataFrame, dict[Var, Column]] | None:
        """The rows of ``source`` an atom matches, filtered once, with each variable's value as
        ``cast`` makes it of the variable's type; None when no row can match."""
        F = self.F
        conditions: list[Column] = []
        seen: dict[Var, Column] = {}
        for i, term in enumerate(atom.args):
            column, have = F.col(f"c{i}"), source.types[i]
            if not isinstance(term, Var):
                test = self.equals_constant(column, have, term)
                if test is False:
                    return None
                conditions.append(test)  # type: ignore[arg-type]
                continue
            if term.name == "_":
                continue
            cast_value = cast(column, have, types[term])
            if cast_value is None:
                return None
            value, keep = cast_value
            if keep is not None:
                conditions.append(keep)
            if term in seen:
                conditions.append(value == seen[term])
            else:
                seen[term] = value
        frame = source.frame
        if conditions:
            # One filter, not one per condition: every DataFrame operation is a round trip to
            # the JVM and an analysis of the plan, which on wide relations costs more than the data.
            frame = frame.filter(reduce(operator.and_, conditions))
        return frame, seen

    def comparison(self, element: Comparison, names: dict[Var, str], types: dict[Var, ColumnType]) -> Column | bool:
        """A filter column, or a bool when the outcome does not depend on the values."""
        if not isinstance(element.left, Var) and not isinstance(element.right, Var):
            return element.holds(element.left, element.right)
        sides = [(t, types[t]) if isinstance(t, Var) else (t, constant_type(t)) for t in (element.left, element.right)]
        (left, lt), (right, rt) = sides
        if lt != rt and MIXED not in (lt, rt):
            # An integer and a string: never equal, and integers come first.
            return _COMPARE[element.op](type_rank(lt), type_rank(rt))
        common = MIXED if lt != rt else lt
        values = [
            self.widen(self.F.col(names[t]), have, common) if isinstance(t, Var) else self.literal(t, common)
            for t, have in ((left, lt), (right, rt))
        ]
        return _COMPARE[element.op](values[0], values[1])

    def join(
        self,
        left: DataFrame,
        left_size: int | None,
        left_types: list[ColumnType],
        right: DataFrame,
        right_size: int | None,
        right_types: list[ColumnType],
        on: list[str],
    ) -> DataFrame:
        F = self.F
        small_left, small_right = self.small(left_size, left_types), self.small(right_size, right_types)
        if small_right and (not small_left or right_size <= left_size):  # type: ignore[operator]
            right = F.broadcast(right)
        elif small_left:
            # A small delta joined with a large relation: ship the delta, leave the relation in place.
            left = F.broadcast(left)
        return left.join(right, on=on, how="inner") if on else left.crossJoin(right)

    def semi_join(self, left: DataFrame, right: DataFrame, right_size: int | None, right_types, on: list[str]) -> DataFrame:
        """Rows of ``left`` with a match in ``right`` on the columns ``on`` (any row of right when empty)."""
        F = self.F
        if not on:
            return left.join(F.broadcast(right.limit(1)), F.lit(True), "left_semi")
        if self.small(right_size, right_types):
            right = F.broadcast(right)
        return left.join(right, on=on, how="left_semi")

    def anti_join(self, left: DataFrame, right: DataFrame, right_size: int | None, right_types, on: list[str]) -> DataFrame:
        """Rows of ``left`` with no match in ``right`` on the columns ``on`` (all of them when empty)."""
        F = self.F
        if not on:
            # No shared column: either every row goes or none does; one row of right decides.
            return left.join(F.broadcast(right.limit(1)), F.lit(True), "left_anti")
        if self.small(right_size, right_types):
            right = F.broadcast(right)
        return left.join(right, on=on, how="left_anti")

    # -- results --------------------------------------------------------------------------------

    def collect(self, preds: list[str]) -> dict[str, set[tuple]]:
        """Relations as Python sets of tuples of constants, each relation by one Arrow transfer."""
        out: dict[str, set[tuple]] = {}
        for pred in preds:
            rel = self.relations[pred]
            if rel.size == 0:
                out[pred] = set()
            elif rel.arity == 0:
                out[pred] = {()} if count_rows(rel.frame) else set()
            else:
                out[pred] = rows_of_arrow(rel.frame.toArrow(), rel.types)
        return out


def _vars_of(atom: Atom) -> list[Var]:
    """The distinct named variables of an atom, in order (the columns :meth:`_Evaluation.bind` makes)."""
    return list(dict.fromkeys(t for t in atom.args if isinstance(t, Var) and t.name != "_"))



def _union(a: DataFrame, b: DataFrame) -> DataFrame:
    return a.union(b)
