"""A recursive component's whole fixpoint in one Spark job: partitioned on an argument the recursion keeps.

When every recursive rule of a component passes one argument of its head unchanged from all its
recursive body literals, tuples with different values in that argument never meet: the relation is
the union of independent fixpoints, one per value. ``tc(X,Y) :- tc(X,Z), e(Z,Y).`` keeps ``X`` (the
closure of each source), ``tc(X,Y) :- e(X,Z), tc(Z,Y).`` keeps ``Y``, mutual recursion such as
``odd(X,Y) :- c(X,Z), even(Z,Y). even(X,Y) :- c(X,Z), odd(Z,Y).`` keeps ``Y`` in both.

Then the exit tuples (computed on Spark by the exit rules) are hash-partitioned on that argument,
the other relations the recursive rules read are broadcast (they must be small:
:data:`FIXPOINT_SIDE_ROWS`), and each task runs the semi-naive fixpoint of its
partition with nablog's columnar engine (:class:`~nablog.engines.python.PythonEngine`) over ids of a
dictionary of its own values. The result is checkpointed once. A depth-20 closure costs one job
instead of twenty rounds of a few seconds each, and the work is that of semi-naive evaluation:
every derivation once, no duplicates from squaring.

>>> from nablog.lang import parse
>>> from nablog.engines.plan import component_plans
>>> from nablog.lang import analyze
>>> program = parse("tc(X,Y) :- e(X,Y). tc(X,Y) :- e(X,Z), tc(Z,Y).")
>>> plan = component_plans(program, analyze(program))[0]
>>> partition_keys(plan, {"tc": ("long", "long")})
{'tc': 1}
>>> program = parse("sg(X,Y) :- e(P,X), e(P,Y). sg(X,Y) :- e(A,X), sg(A,B), e(B,Y).")
>>> print(partition_keys(component_plans(program, analyze(program))[0], {"sg": ("long", "long")}))
None
"""

from __future__ import annotations

import functools
import itertools
import re
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...lang import Atom, Literal, Program, Rule, Var
from .. import compute
from ..plan import ComponentPlan
from .evaluation import Round, _Evaluation
from .types import (
    Relation,
    LONG,
    MIXED,
    STRING,
    ColumnType,
    arrow_type,
    constant_type,
    join,
    spark_type,
)

if TYPE_CHECKING:
    import pyarrow as pa


FIXPOINT_SIDE_ROWS = 5_000_000
"""The partitioned fixpoint broadcasts the relations the recursive rules read besides the
component itself; above this many rows in all it is not used (each task would hold them)."""

SEED_PREFIX = "nablog_seed__"
"""Names of the exit tuples inside a task: ``p(V..) :- nablog_seed__p(V..).`` starts the fixpoint."""

MAX_KEY_CHOICES = 4096


def one_job(ev: _Evaluation, plan: ComponentPlan, stratum: int) -> bool:
    """Evaluate a recursive component as one partitioned job when its recursion keeps an argument
    and its side relations are small; False (nothing done) otherwise."""
    if any(compute.has_computation(r) for r in plan.exit_rules + tuple(r for r, _ in plan.recursive_rules)):
        return False  # the partitioned job evaluates plain joins only
    keys = partition_keys(plan, ev.types)
    return keys is not None and run_partitioned(ev, plan, keys, stratum)


def partition_keys(plan: ComponentPlan, types: Mapping[str, tuple[ColumnType, ...]]) -> dict[str, int] | None:
    """An argument position per predicate of the component that every recursive rule keeps
    (see the module docstring), or None when there is none."""
    preds = plan.predicates
    arities = [len(types[p]) for p in preds]
    if not all(arities):
        return None
    choices = itertools.product(*(range(a) for a in arities))
    for choice in itertools.islice(choices, MAX_KEY_CHOICES):
        keys = dict(zip(preds, choice))
        if all(_keeps(rule, keys) for rule, _ in plan.recursive_rules):
            return keys
    return None


def _keeps(rule: Rule, keys: Mapping[str, int]) -> bool:
    if len(rule.head) != 1:
        return False
    head = rule.head[0]
    kept = head.args[keys[head.pred]]
    if not isinstance(kept, Var) or kept.name == "_":
        return False
    for element in rule.body:
        if isinstance(element, Literal) and element.atom.pred in keys:
            if not element.positive or element.atom.args[keys[element.atom.pred]] != kept:
                return False
    return True


@dataclass(frozen=True)
class _Task:
    """What each task needs to know, shipped with the function."""

    preds: tuple[str, ...]
    types: dict[str, tuple[ColumnType, ...]]
    rules: tuple[Rule, ...]
    sides: dict[str, tuple[ColumnType, ...]]
    truths: dict[str, bool]  # 0-ary relations the recursive rules read: whether they hold
    constants: tuple


def run_partitioned(ev: _Evaluation, plan: ComponentPlan, keys: dict[str, int], stratum: int) -> bool:
    """Evaluate a recursive component as one partitioned job; False (nothing done) when the
    relations to broadcast are too large, so that the caller runs semi-naive rounds instead."""
    from pyspark.sql import functions as F

    start = time.perf_counter()
    preds = plan.predicates
    members = set(preds)
    side_names = sorted(
        {b.atom.pred for rule, _ in plan.recursive_rules for b in rule.body if isinstance(b, Literal)} - members
    )
    sides = {name: ev.relation(name) for name in side_names}
    if sum(r.size or 0 for r in sides.values() if r.arity) > FIXPOINT_SIDE_ROWS:
        return False
    exits: dict[str, list] = {p: [] for p in preds}
    for rule in plan.exit_rules:
        part = ev.rule(rule)
        if part is not None:
            exits[rule.head[0].pred].append(part)
    key_type: ColumnType = None
    for pred in preds:
        key_type = join(key_type, ev.types[pred][keys[pred]])
    if key_type is None or not any(exits.values()):
        for pred in preds:
            ev.set(pred, Relation(ev.empty(ev.types[pred]), ev.types[pred], 0))
        ev.note(Round(stratum, preds, "partitioned", 0, 0, time.perf_counter() - start))
        return True
    # One frame for all members: a tag, the partitioning value in one type, and each member's columns.
    parts = []
    for idx, pred in enumerate(preds):
        for frame in exits[pred]:
            columns = [F.lit(idx).cast("int").alias("t")]
            columns.append(ev.widen(F.col(f"c{keys[pred]}"), ev.types[pred][keys[pred]], key_type).alias("k"))
            for m, other in enumerate(preds):
                for j, kind in enumerate(ev.types[other]):
                    value = F.col(f"c{j}") if m == idx else F.lit(None).cast(spark_type(kind))
                    columns.append(value.alias(f"p{m}_c{j}"))
            parts.append(frame.select(*columns))
    combined = functools.reduce(lambda a, b: a.union(b), parts)
    spark = ev.spark
    shipped = {}
    truths = {}
    for name, rel in sides.items():
        if rel.arity == 0:
            truths[name] = bool(rel.size)
        else:
            shipped[name] = _ipc_bytes(rel.frame.toArrow())
    broadcast = spark.sparkContext.broadcast(shipped)
    constants = set()
    for rule, _ in plan.recursive_rules:
        for element in rule.body:
            constants.update(t for t in _terms(element) if not isinstance(t, Var))
        constants.update(t for t in rule.head[0].args if not isinstance(t, Var))
    task = _Task(
        preds,
        {p: ev.types[p] for p in preds},
        tuple(rule for rule, _ in plan.recursive_rules),
        {name: sides[name].types for name in shipped},
        truths,
        tuple(sorted(constants, key=lambda c: (constant_type(c), c))),
    )
    schema = _output_schema(task)
    partitions = max(ev.engine.shuffle_partitions, 4 * spark.sparkContext.defaultParallelism)
    solved = _map_in_arrow(combined.repartition(partitions, "k"), functools.partial(_solve, task=task, sides=broadcast), schema)
    result = ev.checkpoint(solved, eager=True)
    sizes = {idx: 0 for idx in range(len(preds))}
    depth = 0
    for row in result.groupBy("t").agg(F.count(F.lit(1)).alias("n"), F.max("r").alias("r")).collect():
        if row["t"] < 0:
            depth = max(depth, row["r"] or 0)
        else:
            sizes[row["t"]] = row["n"]
    broadcast.unpersist()
    for idx, pred in enumerate(preds):
        frame = result.filter(F.col("t") == idx).select(*[F.col(f"p{idx}_c{j}").alias(f"c{j}") for j in range(len(ev.types[pred]))])
        ev.set(pred, Relation(frame, ev.types[pred], sizes[idx]))
    ev.note(Round(stratum, preds, "partitioned", depth, sum(sizes.values()), time.perf_counter() - start))
    return True


def _terms(element):
    if isinstance(element, Literal):
        return element.atom.args
    return (element.left, element.right)


def _ipc_bytes(table: pa.Table) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _output_schema(task: _Task):
    from pyspark.sql.types import IntegerType, StructField, StructType

    fields = [StructField("t", IntegerType(), False), StructField("r", IntegerType(), True)]
    for m, pred in enumerate(task.preds):
        fields.extend(StructField(f"p{m}_c{j}", spark_type(kind), True) for j, kind in enumerate(task.types[pred]))
    return StructType(fields)


def _map_in_arrow(frame, function, schema):
    """``DataFrame.mapInArrow`` without its check for pandas, which Arrow functions do not use
    (pyspark's public method builds the function through ``pandas_udf``, which insists on pandas)."""
    try:
        import pandas  # noqa: F401
    except ImportError:
        from pyspark.sql import DataFrame
        from pyspark.sql.udf import UserDefinedFunction
        from pyspark.util import PythonEvalType

        udf = UserDefinedFunction(function, returnType=schema, evalType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
        column = udf(*[frame[c] for c in frame.columns])
        return DataFrame(frame._jdf.mapInArrow(column._jc, False, None), frame.sparkSession)
    return frame.mapInArrow(function, schema)


# -- inside a task ----------------------------------------------------------------------------------


class _Codec:
    """Order-preserving ids for the values of one task: its integers, then its strings."""

    def __init__(self, ints: np.ndarray, strings: pa.Array):
        from ..encoding import ConstantDictionary

        self.ints = ints
        self.strings = strings
        self.n = len(ints)
        self.dictionary = ConstantDictionary(ints.tolist() + strings.to_pylist())

    @classmethod
    def of(cls, columns: list[tuple[pa.Array, ColumnType]], constants: tuple) -> _Codec:
        import pyarrow as pa
        import pyarrow.compute as pc

        from ..encoding import sorted_unique

        ints = [np.array([c for c in constants if isinstance(c, int)], dtype=np.int64)]
        strings = [pa.array([c for c in constants if isinstance(c, str)], pa.string())]
        for column, kind in columns:
            if kind == LONG:
                ints.append(column.to_numpy(zero_copy_only=False).astype(np.int64, copy=False))
            elif kind == STRING:
                strings.append(column)
            elif kind == MIXED:
                s, i = column.field("s"), column.field("i")
                strings.append(s.drop_null())
                ints.append(i.drop_null().to_numpy(zero_copy_only=False).astype(np.int64, copy=False))
        unique_ints = sorted_unique(np.concatenate(ints))
        unique_strings = pc.unique(pa.chunked_array(strings, pa.string()))
        if isinstance(unique_strings, pa.ChunkedArray):
            unique_strings = unique_strings.combine_chunks()
        unique_strings = unique_strings.take(pc.sort_indices(unique_strings))
        return cls(unique_ints, unique_strings)

    def encode(self, column: pa.Array, kind: ColumnType) -> np.ndarray:
        import pyarrow.compute as pc

        if kind == LONG or kind is None:  # None: an empty column, typed long on Spark
            return np.searchsorted(self.ints, column.to_numpy(zero_copy_only=False)).astype(np.int64)
        if kind == STRING:
            return pc.index_in(column, value_set=self.strings).to_numpy(zero_copy_only=False).astype(np.int64) + self.n
        s, i = column.field("s"), column.field("i")
        is_string = s.is_valid().to_numpy(zero_copy_only=False)
        ids = np.empty(len(column), dtype=np.int64)
        ids[is_string] = pc.index_in(s.filter(is_string), value_set=self.strings).to_numpy(zero_copy_only=False) + self.n
        ids[~is_string] = np.searchsorted(self.ints, i.filter(~is_string).to_numpy(zero_copy_only=False))
        return ids

    def decode(self, ids: np.ndarray, kind: ColumnType) -> pa.Array:
        import pyarrow as pa
        import pyarrow.compute as pc

        if kind == LONG or kind is None:
            return pa.array(self.ints[ids], pa.int64())
        if kind == STRING:
            return self.strings.take(pa.array(ids - self.n))
        is_int = ids < self.n
        ints = pa.array(self.ints[np.where(is_int, ids, 0)] if self.n else np.zeros(len(ids), np.int64), pa.int64(), mask=~is_int)
        if len(self.strings):
            taken = self.strings.take(pa.array(np.where(is_int, 0, ids - self.n)))
            strings = pc.if_else(pa.array(is_int), pa.scalar(None, pa.string()), taken)
        else:
            strings = pa.nulls(len(ids), pa.string())
        return pa.StructArray.from_arrays([strings, ints], names=["s", "i"])


def _solve(batches: Iterator[pa.RecordBatch], task: _Task, sides) -> Iterator[pa.RecordBatch]:
    """The fixpoint of one partition: its exit tuples in, every tuple of the component out (plus a
    row tagged -1 that reports how many rounds the partition needed)."""
    import pyarrow as pa

    from ..encoding import EncodedRelation
    from ..python import PythonEngine

    received = [b for b in batches if b.num_rows]
    if not received:
        return
    table = pa.Table.from_batches(received).combine_chunks()
    tables = {name: pa.ipc.open_stream(data).read_all().combine_chunks() for name, data in sides.value.items()}
    tags = table.column("t").to_numpy()
    own: dict[str, list[pa.Array]] = {}
    for m, pred in enumerate(task.preds):
        mine = pa.array(tags == m)
        own[pred] = [_chunk(table.column(f"p{m}_c{j}")).filter(mine) for j in range(len(task.types[pred]))]
    columns: list[tuple[pa.Array, ColumnType]] = []
    for pred in task.preds:
        columns.extend(zip(own[pred], task.types[pred]))
    for name, side in tables.items():
        columns.extend((_chunk(side.column(j)), kind) for j, kind in enumerate(task.sides[name]))
    codec = _Codec.of(columns, task.constants)
    facts = {}
    rules = list(task.rules)
    for pred in task.preds:
        kinds = task.types[pred]
        encoded = [codec.encode(column, kind) for column, kind in zip(own[pred], kinds)]
        facts[SEED_PREFIX + pred] = EncodedRelation.from_columns(codec.dictionary, encoded, len(kinds))
        args = tuple(Var(f"V{j}") for j in range(len(kinds)))
        rules.append(Rule((Atom(pred, args),), (Literal(Atom(SEED_PREFIX + pred, args)),)))
    for name, side in tables.items():
        kinds = task.sides[name]
        encoded = [codec.encode(_chunk(side.column(j)), kind) for j, kind in enumerate(kinds)]
        facts[name] = EncodedRelation.from_columns(codec.dictionary, encoded, len(kinds))
    for name, holds in task.truths.items():
        facts[name] = EncodedRelation.from_columns(codec.dictionary, [], 0, 1 if holds else 0)
    depth = [0]

    def progress(message: str) -> None:
        found = re.search(r": round (\d+),", message)
        if found:
            depth[0] = max(depth[0], int(found.group(1)))

    model = PythonEngine(progress=progress).evaluate(Program(tuple(rules)), facts)
    for m, pred in enumerate(task.preds):
        relation = model[pred]
        n = len(relation)
        if not n:
            continue
        ids = relation.columns()
        for begin in range(0, n, 1 << 19):
            end = min(n, begin + (1 << 19))
            arrays = [pa.array(np.full(end - begin, m, np.int32)), pa.nulls(end - begin, pa.int32())]
            for other_m, other in enumerate(task.preds):
                for j, kind in enumerate(task.types[other]):
                    if other_m == m:
                        arrays.append(codec.decode(ids[j][begin:end], kind))
                    else:
                        arrays.append(pa.nulls(end - begin, arrow_type(kind)))
            yield pa.RecordBatch.from_arrays(arrays, schema=_arrow_schema(task))
    yield pa.RecordBatch.from_arrays(
        [pa.array([-1], pa.int32()), pa.array([depth[0]], pa.int32())]
        + [pa.nulls(1, arrow_type(kind)) for pred in task.preds for kind in task.types[pred]],
        schema=_arrow_schema(task),
    )


def _chunk(column) -> pa.Array:
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        return column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return column


def _arrow_schema(task: _Task) -> pa.Schema:
    import pyarrow as pa

    fields = [pa.field("t", pa.int32(), False), pa.field("r", pa.int32())]
    for m, pred in enumerate(task.preds):
        fields.extend(pa.field(f"p{m}_c{j}", arrow_type(kind)) for j, kind in enumerate(task.types[pred]))
    return pa.schema(fields)
