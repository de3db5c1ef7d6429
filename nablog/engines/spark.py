"""The `spark` engine: perfect models of stratified programs on Spark DataFrames, semi-naive per component.

Constants are encoded in the driver to dense integer ids that preserve the order of constants
(:class:`~nablog.engines.encoding.ConstantDictionary`), so every relation is a DataFrame of
``LongType`` columns ``c0, c1, ...`` and comparisons are comparisons of ids; a 0-ary relation is a
DataFrame with no columns and zero or one row. Components of the dependency graph run in the
order of :func:`~nablog.engines.plan.component_plans`: a non-recursive component is one
``distinct`` union of its rules, a recursive one iterates semi-naively (each recursive rule once
per recursive body literal taken as the delta, new tuples found by ``distinct`` plus an anti-join
against the full relation).

Each round checkpoints its deltas, so the plan does not grow with the number of rounds, and
costs one single-stage Spark job per relation of the component that got candidates: the job that
counts a delta is the one that computes and stores it (the checkpoints are lazy). A recursive
relation is the union of its deltas, consolidated every few rounds. Every relation a rule reads
has an exact row count (base relations from the driver, recursive ones by adding up the deltas,
the others counted when first read), so relations known to be empty skip rules, and relations
known to be small are broadcast in joins.

pyspark is imported only when the engine runs; one SparkSession per process is shared by every
engine (see :func:`spark_session`).

>>> from nablog.lang import parse
>>> model = SparkEngine().evaluate(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y)."),
...                                {"e": {(1, 2), (2, 3)}})  # doctest: +SKIP
>>> sorted(model["p"])  # doctest: +SKIP
[(1, 2), (1, 3), (2, 3)]
"""

from __future__ import annotations

import atexit
import operator
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import reduce
from importlib.util import find_spec
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..lang import Atom, Comparison, Literal, NablogError, Program, Rule, Var
from .base import Model, prepare
from .encoding import ConstantDictionary
from .plan import ComponentPlan, body_order, component_plans

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
"""The log4j2 configuration the driver JVM starts with: errors only, no banner."""

DEFAULT_SHUFFLE_PARTITIONS = 4
"""Spark's default of 200 shuffle partitions is almost three times slower on a small machine."""

BROADCAST_BYTES = 8 << 20
"""A relation whose estimated size is at most this many bytes is broadcast in joins."""

MAX_PIECES = 8
"""A recursive relation is kept as a union of at most this many checkpointed deltas."""

LOCAL_ROWS = 10_000
"""Base relations with more rows are checkpointed once, so that their rows are not shipped
inside the plan of every job that reads them."""

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

_session: SparkSession | None = None
_session_lock = threading.Lock()


def _require_pyspark() -> None:
    if find_spec("pyspark") is None:
        raise NablogError("the spark engine needs pyspark", hint="pip install 'nablog[spark]'")


def _is_local(master: str) -> bool:
    return master == "local" or master.startswith(("local[", "local-cluster["))


def spark_session(master: str | None = None, *, shuffle_partitions: int = DEFAULT_SHUFFLE_PARTITIONS) -> SparkSession:
    """The process's one SparkSession, started on first use and shared by every caller.

    Parameters
    ----------
    master:
        Spark master URL; when None, the environment variable ``SPARK_MASTER``, else ``local[*]``.
        Asking for a master other than the one the running session uses is an error: a process
        has one SparkContext.
    shuffle_partitions:
        ``spark.sql.shuffle.partitions`` for a session started by this call (engines set it
        again for each evaluation, since it is a runtime option).

    A local session binds the driver to the loopback interface (``SPARK_LOCAL_IP`` is set to
    127.0.0.1 unless already set), has no web UI and no progress bar, and logs errors only
    (:data:`LOG_CONFIG`). A session the caller stopped is replaced by a new one.

    Raises
    ------
    NablogError
        When pyspark is not installed, or ``master`` differs from the running session's master.
    """
    global _session
    _require_pyspark()
    with _session_lock:
        if _session is not None and _session.sparkContext._jsc is not None:
            running = _session.sparkContext.master
            if master is not None and master != running:
                raise NablogError(
                    f"a Spark session with master {running} is already running in this process; "
                    f"cannot start one with master {master}",
                    hint="use one Spark master per process (set SPARK_MASTER before the first Spark evaluation)",
                )
            return _session
        from pyspark.sql import SparkSession

        url = master or os.environ.get("SPARK_MASTER") or "local[*]"
        # Python workers (only needed if Spark ever runs Python code) use this interpreter.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            SparkSession.builder.master(url)
            .appName("nablog")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}")
            .config("spark.cleaner.referenceTracking.cleanCheckpoints", "true")
        )
        if _is_local(url):
            # Containers and laptops on changing networks often have no resolvable host name;
            # a cluster needs the driver reachable from executors, so only local sessions pin it.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        _session = session
        return session


_default_checkpoint_dir: str | None = None


def _temporary_checkpoint_dir() -> str:
    global _default_checkpoint_dir
    if _default_checkpoint_dir is None:
        _default_checkpoint_dir = tempfile.mkdtemp(prefix="nablog-checkpoints-")
        atexit.register(shutil.rmtree, _default_checkpoint_dir, True)
    return _default_checkpoint_dir


class SparkEngine:
    """Evaluates stratified programs on Apache Spark (local by default, a cluster by master URL).

    Parameters
    ----------
    master:
        Spark master URL; None means ``SPARK_MASTER`` or ``local[*]`` (see :func:`spark_session`).
    checkpoint_dir:
        Where checkpoints are written. When neither this nor the environment variable
        ``NABLOG_CHECKPOINT_DIR`` is given, a local session uses ``localCheckpoint`` (executor
        storage, no files) and a cluster session writes to a temporary directory, which must
        then be on storage every node sees: give a directory on a cluster.
    shuffle_partitions:
        ``spark.sql.shuffle.partitions`` while this engine evaluates.

    Examples
    --------
    >>> from nablog.lang import parse
    >>> program = parse("r(X) :- s(X), p. p :- q(X). s(1). s(2). q(a).")
    >>> sorted(SparkEngine().evaluate(program, {})["r"])  # doctest: +SKIP
    [(1,), (2,)]
    """

    name = "spark"

    def __init__(
        self,
        master: str | None = None,
        checkpoint_dir: str | None = None,
        shuffle_partitions: int = DEFAULT_SHUFFLE_PARTITIONS,
    ):
        _require_pyspark()
        if shuffle_partitions < 1:
            raise NablogError(
                f"shuffle_partitions must be at least 1, not {shuffle_partitions}",
                hint="about twice the number of cores is a good start",
            )
        self.master = master
        self.checkpoint_dir = checkpoint_dir
        self.shuffle_partitions = shuffle_partitions

    @property
    def session(self) -> SparkSession:
        """The shared SparkSession (started on first use)."""
        return spark_session(self.master, shuffle_partitions=self.shuffle_partitions)

    def evaluate(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> Model:
        """The perfect model of ``program`` over ``facts``: every relation as a set of tuples.

        Base relations are returned as given (the program's facts merged in); derived relations
        are computed on Spark and collected in one job at the end.
        """
        prepared = prepare(program, facts)
        spark = self.session
        constants = chain(
            program.constants(),
            (value for rows in prepared.facts.values() for row in rows for value in row),
        )
        dictionary = ConstantDictionary.build(constants)
        with _settings(spark, self._options()):
            run = _Evaluation(spark, dictionary, prepared.arities, self._checkpointer(spark))
            for pred, rows in prepared.facts.items():
                run.load(pred, rows)
            plans = component_plans(prepared.program, prepared.analysis)
            for plan in plans:
                run.component(plan)
            derived = run.collect([p for plan in plans for p in plan.predicates])
        model: Model = {}
        for pred in prepared.arities:
            if pred in derived:
                model[pred] = derived[pred]
            else:
                model[pred] = set(prepared.facts.get(pred, ()))
        return model

    def _options(self) -> dict[str, str]:
        return {
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            # Adaptive execution runs every shuffle and broadcast of a plan as a job of its own
            # and re-plans after each; on the many small plans of an iteration that doubles the
            # cost of a round (measured: 16 rounds of a chain, 7.1 s with it, 4.0 s without). Its
            # main gain, broadcasting what turns out small, is covered by the exact row counts.
            "spark.sql.adaptive.enabled": "false",
        }

    def _checkpointer(self, spark: SparkSession) -> Callable[[DataFrame], DataFrame]:
        directory = self.checkpoint_dir or os.environ.get("NABLOG_CHECKPOINT_DIR")
        if directory is None and _is_local(spark.sparkContext.master):
            # Lazy: the plan is cut at once, the rows are stored by the next job that needs them,
            # so a round costs one job, not one per checkpoint.
            return lambda df: df.localCheckpoint(eager=False)
        spark.sparkContext.setCheckpointDir(directory or _temporary_checkpoint_dir())
        return lambda df: df.checkpoint(eager=True)


class _Evaluation:
    """The state of one evaluation: a DataFrame and, where known, the exact row count of every relation."""

    def __init__(
        self,
        spark: SparkSession,
        dictionary: ConstantDictionary,
        arities: dict[str, int],
        checkpoint: Callable[[DataFrame], DataFrame],
    ):
        from pyspark.sql import functions as F

        self.spark = spark
        self.F = F
        self.dictionary = dictionary
        self.arities = arities
        self.checkpoint = checkpoint
        self.frames: dict[str, DataFrame] = {}
        self.sizes: dict[str, int | None] = {}

    # -- relations ------------------------------------------------------------------------------

    def empty(self, arity: int) -> DataFrame:
        F = self.F
        return self.spark.range(0).select(*[F.lit(0).cast("long").alias(c) for c in _columns(arity)])

    def load(self, pred: str, rows: set[tuple]) -> None:
        """Make a base relation a DataFrame of ids."""
        import pyarrow as pa

        arity = self.arities[pred]
        if arity == 0:
            frame = self.spark.range(1 if rows else 0).select()
        elif not rows:
            frame = self.empty(arity)
        else:
            ids = self.dictionary.encode_rows(rows, arity)
            table = pa.Table.from_arrays([pa.array(ids[:, i]) for i in range(arity)], names=_columns(arity))
            frame = self.spark.createDataFrame(table)
            if len(rows) > LOCAL_ROWS:
                frame = self.checkpoint(frame)
        self.frames[pred] = frame
        self.sizes[pred] = len(rows)

    def relation(self, pred: str) -> tuple[DataFrame, int]:
        """A relation and its exact row count (counted on first use when not yet known)."""
        if pred not in self.frames:
            # A relation with neither facts nor rules: empty.
            self.frames[pred] = self.empty(self.arities[pred])
            self.sizes[pred] = 0
        size = self.sizes[pred]
        if size is None:
            size = self.sizes[pred] = _count(self.frames[pred])
        return self.frames[pred], size

    def small(self, size: int | None, width: int) -> bool:
        return size is not None and size * (8 * width + 16) <= BROADCAST_BYTES

    # -- components -----------------------------------------------------------------------------

    def component(self, plan: ComponentPlan) -> None:
        """Compute the relations of one component, every lower component being done.

        A non-recursive relation is left uncounted (and unmaterialized) until a later rule reads
        it, so relations nothing reads cost no job before the final collection.
        """
        if plan.recursive_rules:
            self.fixpoint(plan)
            return
        for pred in plan.predicates:
            parts = [self.rule(r) for r in plan.exit_rules if r.head[0].pred == pred]
            found = [p for p in parts if p is not None]
            if found:
                self.frames[pred] = self.checkpoint(reduce(_union, found).distinct())
                self.sizes[pred] = None
            else:
                self.frames[pred] = self.empty(self.arities[pred])
                self.sizes[pred] = 0

    def fixpoint(self, plan: ComponentPlan) -> None:
        """Semi-naive iteration: round 0 runs the exit rules, later rounds the recursive rules on deltas.

        A relation of the component is the union of the deltas of the rounds so far; the union
        is checkpointed into one piece every :data:`MAX_PIECES` rounds, which bounds the plan
        without copying the relation every round.
        """
        preds = plan.predicates
        pieces: dict[str, list[DataFrame]] = {p: [] for p in preds}
        for pred in preds:
            self.frames[pred] = self.empty(self.arities[pred])
            self.sizes[pred] = 0
        candidates: dict[str, list[DataFrame]] = {p: [] for p in preds}
        for rule in plan.exit_rules:
            part = self.rule(rule)
            if part is not None:
                candidates[rule.head[0].pred].append(part)
        while True:
            delta: dict[str, tuple[DataFrame, int]] = {}
            for pred in preds:
                if not candidates[pred]:
                    continue
                found = reduce(_union, candidates[pred]).distinct()
                full, size = self.frames[pred], self.sizes[pred]
                if size:
                    found = self.anti_join(found, full, size, _columns(self.arities[pred]))
                new = self.checkpoint(found)
                # The one job of the round for this relation: it computes and stores the delta.
                n = _count(new)
                if n:
                    delta[pred] = (new, n)
            if not delta:
                return
            for pred, (new, n) in delta.items():
                pieces[pred].append(new)
                if len(pieces[pred]) > MAX_PIECES:
                    pieces[pred] = [self.checkpoint(reduce(_union, pieces[pred]))]
                self.frames[pred] = reduce(_union, pieces[pred])
                self.sizes[pred] = (self.sizes[pred] or 0) + n
            candidates = {p: [] for p in preds}
            for rule, positions in plan.recursive_rules:
                for position in positions:
                    pred = rule.body[position].atom.pred  # type: ignore[union-attr]
                    if pred in delta:
                        part = self.rule(rule, position, delta[pred])
                        if part is not None:
                            candidates[rule.head[0].pred].append(part)

    # -- rules ----------------------------------------------------------------------------------

    def rule(
        self, rule: Rule, start: int | None = None, delta: tuple[DataFrame, int] | None = None
    ) -> DataFrame | None:
        """The head tuples one rule derives, or None when they are known to be none.

        With ``start``, the literal at that body position is read from ``delta`` (and joined
        first); every other literal reads the current relation.
        """
        F = self.F
        names: dict[Var, str] = {}
        frame: DataFrame | None = None
        frame_size: int | None = None
        columns: list[str] = []
        first = True
        for element in body_order(rule, start):
            if isinstance(element, Comparison):
                condition = self.comparison(element, names)
                if condition is False:
                    return None
                if condition is True:
                    continue
                if frame is None:
                    frame, frame_size = self.unit(), 1
                frame = frame.filter(condition)
                continue
            assert isinstance(element, Literal)
            if element.positive:
                if first and delta is not None:
                    source, size = delta
                else:
                    source, size = self.relation(element.atom.pred)
                first = False
                if size == 0:
                    return None
                right, right_columns = self.literal(element.atom, source, names)
                if frame is None:
                    # A literal without variables is a test: one matching row is enough.
                    frame = right if right_columns else right.limit(1)
                    frame_size, columns = size, right_columns
                    continue
                shared = [c for c in right_columns if c in columns]
                if len(shared) == len(right_columns):
                    # Nothing new to bind: a semi-join keeps each binding once, however many rows match.
                    frame = self.semi_join(frame, right, size, shared)
                else:
                    frame = self.join(frame, frame_size, len(columns), right, size, len(right_columns), shared)
                    frame_size = None
                    columns = columns + [c for c in right_columns if c not in columns]
            else:
                source, size = self.relation(element.atom.pred)
                if frame is None:
                    frame, frame_size = self.unit(), 1
                if size == 0:
                    continue
                right, right_columns = self.literal(element.atom, source, names)
                frame = self.anti_join(frame, right, size, right_columns)
        if frame is None:
            frame = self.unit()
        head = rule.head[0]
        if not head.args:
            # A 0-ary head only asks whether some binding exists.
            return frame.select().limit(1)
        out = []
        for i, term in enumerate(head.args):
            value = F.col(names[term]) if isinstance(term, Var) else F.lit(self.dictionary.ids[term]).cast("long")
            out.append(value.alias(f"c{i}"))
        return frame.select(*out)

    def unit(self) -> DataFrame:
        """One row, no columns: the bindings of an empty body."""
        return self.spark.range(1).select()

    def literal(self, atom: Atom, source: DataFrame, names: dict[Var, str]) -> tuple[DataFrame, list[str]]:
        """Bindings of the variables of ``atom`` from its relation: constants and repeated variables
        become filters, ``_`` is projected away, each variable becomes a column named for the rule."""
        F = self.F
        conditions = []
        selected: list[str] = []
        seen: dict[Var, str] = {}
        for i, term in enumerate(atom.args):
            column = f"c{i}"
            if not isinstance(term, Var):
                conditions.append(F.col(column) == F.lit(self.dictionary.ids[term]))
            elif term.name == "_":
                continue
            elif term in seen:
                conditions.append(F.col(column) == F.col(seen[term]))
            else:
                seen[term] = column
                selected.append(column)
        for condition in conditions:
            source = source.filter(condition)
        variables = list(seen)
        for var in variables:
            names.setdefault(var, f"v{len(names)}")
        return source.select(*[F.col(seen[v]).alias(names[v]) for v in variables]), [names[v] for v in variables]

    def comparison(self, element: Comparison, names: dict[Var, str]) -> Column | bool:
        """A filter column, or a bool when both sides are constants."""
        if not isinstance(element.left, Var) and not isinstance(element.right, Var):
            return element.holds(element.left, element.right)
        left, right = (
            self.F.col(names[t]) if isinstance(t, Var) else self.F.lit(self.dictionary.ids[t])
            for t in (element.left, element.right)
        )
        return _COMPARE[element.op](left, right)

    def join(
        self,
        left: DataFrame,
        left_size: int | None,
        left_width: int,
        right: DataFrame,
        right_size: int | None,
        right_width: int,
        on: list[str],
    ) -> DataFrame:
        F = self.F
        small_left, small_right = self.small(left_size, left_width), self.small(right_size, right_width)
        if small_right and (not small_left or right_size <= left_size):  # type: ignore[operator]
            right = F.broadcast(right)
        elif small_left:
            # A small delta joined with a large relation: ship the delta, leave the relation in place.
            left = F.broadcast(left)
        return left.join(right, on=on, how="inner") if on else left.crossJoin(right)

    def semi_join(self, left: DataFrame, right: DataFrame, right_size: int | None, on: list[str]) -> DataFrame:
        """Rows of ``left`` with a match in ``right`` on the columns ``on`` (any row of right when empty)."""
        F = self.F
        if not on:
            return left.join(F.broadcast(right.limit(1)), F.lit(True), "left_semi")
        if self.small(right_size, len(on)):
            right = F.broadcast(right)
        return left.join(right, on=on, how="left_semi")

    def anti_join(self, left: DataFrame, right: DataFrame, right_size: int | None, on: list[str]) -> DataFrame:
        """Rows of ``left`` with no match in ``right`` on the columns ``on`` (all of them when empty)."""
        F = self.F
        if not on:
            # No shared column: either every row goes or none does; one row of right decides.
            return left.join(F.broadcast(right.limit(1)), F.lit(True), "left_anti")
        if self.small(right_size, len(on)):
            right = F.broadcast(right)
        return left.join(right, on=on, how="left_anti")

    # -- results --------------------------------------------------------------------------------

    def collect(self, preds: list[str]) -> dict[str, set[tuple]]:
        """Decode the given relations into Python sets of tuples of constants, in one Spark job."""
        F = self.F
        out: dict[str, set[tuple]] = {p: set() for p in preds}
        wanted = [p for p in preds if self.sizes.get(p) != 0 and p in self.frames]
        if not wanted:
            return out
        width = max(self.arities[p] for p in wanted)
        parts = []
        for k, pred in enumerate(wanted):
            arity = self.arities[pred]
            padding = [F.lit(-1).cast("long").alias(f"c{i}") for i in range(arity, width)]
            parts.append(self.frames[pred].select(F.lit(k).alias("t"), *[F.col(c) for c in _columns(arity)], *padding))
        table = reduce(_union, parts).toArrow()
        tags = table.column("t").to_numpy()
        columns = [table.column(c).to_numpy() for c in _columns(width)]
        order = np.argsort(tags, kind="stable")
        bounds = np.searchsorted(tags[order], np.arange(len(wanted) + 1))
        for k, pred in enumerate(wanted):
            rows = order[bounds[k] : bounds[k + 1]]
            arity = self.arities[pred]
            if arity == 0:
                out[pred] = {()} if len(rows) else set()
                continue
            decoded = [self.dictionary.decode_column(columns[i][rows]) for i in range(arity)]
            out[pred] = set(zip(*decoded))
        return out


def _columns(arity: int) -> list[str]:
    return [f"c{i}" for i in range(arity)]


@contextmanager
def _settings(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
    """Set runtime options of the shared session for the duration of one evaluation."""
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _count(frame: DataFrame) -> int:
    """The number of rows, by a single-stage job.

    ``DataFrame.count`` plans an aggregate through a shuffle into one partition (two stages) and
    records an SQL execution; counting the rows of the physical plan's RDD is one stage with no
    bookkeeping, several times cheaper on the small deltas of a round (measured here: 0.04 s
    against 0.2-0.4 s).
    """
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:  # Spark Connect has no JVM handle
        return frame.count()
    return int(jdf.queryExecution().toRdd().count())


def _union(a: DataFrame, b: DataFrame) -> DataFrame:
    return a.union(b)
