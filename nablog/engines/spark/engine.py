"""The spark engine itself: a program and its relations in, the perfect model out (on Spark DataFrames).

How it evaluates (typed columns, the partitioned fixpoint, semi-naive rounds, checkpoints) is told
in :mod:`nablog.engines.spark`; this module holds :class:`SparkEngine`, the object that starts the
session, sets its runtime options and hands a program to an evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ...lang import NablogError, Program, Rule, analyze, base_part, separate_facts
from ...transforms.flatten import flatten
from ..base import Model, prepare
from .evaluation import SparkModel, _Evaluation
from .fixpoint import one_job
from .relations import union
from .session import DEFAULT_SHUFFLE_PARTITIONS, checkpointer, require_pyspark, runtime_options, spark_session
from .types import Relation

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class SparkEngine:
    """Evaluates stratified programs on Apache Spark (local by default, a cluster by master URL).

    Parameters
    ----------
    master:
        Spark master URL; None means ``SPARK_MASTER`` or ``local[*]`` (see :func:`spark_session`).
    checkpoint_dir:
        Where checkpoints are written. When neither this nor the environment variable
        ``NABLOG_CHECKPOINT_DIR`` is given, checkpoints are ``localCheckpoint`` (kept by the
        executors, no files). On a cluster, a directory must be shared storage (``hdfs://...``).
    shuffle_partitions:
        ``spark.sql.shuffle.partitions`` while this engine evaluates.
    partitioned:
        Whether recursive components that allow it run as a partitioned fixpoint in one job
        (the default); False forces semi-naive rounds everywhere.

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
        partitioned: bool = True,
    ):
        require_pyspark()
        if shuffle_partitions < 1:
            raise NablogError(
                f"shuffle_partitions must be at least 1, not {shuffle_partitions}",
                hint="about twice the number of cores is a good start",
            )
        self.master = master
        self.checkpoint_dir = checkpoint_dir
        self.shuffle_partitions = shuffle_partitions
        self.partitioned = partitioned

    @property
    def session(self) -> SparkSession:
        """The shared SparkSession (started on first use)."""
        return spark_session(self.master, shuffle_partitions=self.shuffle_partitions)

    def evaluate(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> Model:
        """The perfect model of ``program`` over ``facts``: every relation as a set of tuples.

        Base relations are returned as given (the program's facts merged in); derived relations
        are computed on Spark and brought back through Arrow at the end.
        """
        prepared = prepare(program, facts)
        with self.running() as spark:
            run = self.evaluation(spark)
            for pred, rows in prepared.facts.items():
                run.load_rows(pred, rows, prepared.arities[pred])
            for pred, arity in prepared.arities.items():
                if pred not in prepared.facts and pred not in prepared.program.derived:
                    run.load_rows(pred, (), arity)
            run.run(prepared.program, prepared.analysis)
            derived = run.collect(run.order)
        model: Model = {}
        for pred in prepared.arities:
            model[pred] = derived[pred] if pred in derived else set(prepared.facts.get(pred, ()))
        return model

    def run(
        self,
        program: Program,
        relations: Mapping[str, Relation | Iterable[tuple]],
        progress: Callable[[str], None] | None = None,
    ) -> SparkModel:
        """The perfect model of ``program`` over base relations on Spark, left on Spark.

        ``relations`` maps base relation names to :class:`Relation` objects (DataFrames read by
        :mod:`nablog.engines.spark.relations`) or to Python rows. Facts written in the program are added.
        A relation given for a predicate that also has rules becomes its stored part ``base__p``
        (seed 002 §2.1). ``progress`` receives one line per stratum and per round.

        Call it inside :meth:`running` when the model is used afterwards (its runtime options
        then stay set); the relations stay valid for as long as the session runs.
        """
        rules, facts = separate_facts(program, {})
        analysis = analyze(rules)
        flat = flatten(rules)  # atoms of variables and constants only, as prepare() gives every engine
        if flat is not rules:
            rules, analysis = flat, analyze(flat)
        derived = rules.derived
        spark = self.session
        run = self.evaluation(spark, progress)
        given: dict[str, Relation | Iterable[tuple]] = {}
        for pred, value in relations.items():
            given[base_part(pred) if pred in derived else pred] = value
        signatures = dict(rules.signatures)
        for pred, rows in facts.items():
            value = given.get(pred)
            if isinstance(value, Relation):
                given[pred] = union(self, value, run.relation_from_rows(rows, value.arity))
            else:
                given[pred] = set(rows) | set(value or ())
        for pred, value in given.items():
            if isinstance(value, Relation):
                run.set(pred, value)
            else:
                rows = value if isinstance(value, (set, frozenset)) else set(map(tuple, value))
                arity = signatures.get(pred, len(next(iter(rows))) if rows else 0)
                run.load_rows(pred, rows, arity)
        only_rules = Program(tuple(s for s in rules.statements if isinstance(s, Rule)))
        # Relations with neither data nor facts are empty (those of constraints and #base too).
        for pred, arity in rules.signatures.items():
            if pred not in derived and pred not in run.relations:
                run.load_rows(pred, (), arity)
        run.run(only_rules, analysis)
        return SparkModel(dict(run.relations), list(run.order), run.rounds, run, only_rules, analysis)

    @contextmanager
    def running(self) -> Iterator[SparkSession]:
        """The session with this engine's runtime options set, restored afterwards."""
        spark = self.session
        with runtime_options(spark, self._options()):
            yield spark

    def _options(self) -> dict[str, str]:
        return {
            "spark.sql.shuffle.partitions": str(self.shuffle_partitions),
            # Adaptive execution runs every shuffle and broadcast of a plan as a job of its own
            # and re-plans after each; on the many small plans of an iteration that doubles the
            # cost of a round (measured: 16 rounds of a chain, 7.1 s with it, 4.0 s without). Its
            # main gain, broadcasting what turns out small, is covered by the exact row counts.
            "spark.sql.adaptive.enabled": "false",
            # Constraint propagation infers filters from every operator's constraints; on the
            # unions of many typed rule bodies it costs planning time and, in Spark 4.3, fails
            # outright (NoSuchElementException in Union.rewriteConstraints for some unions of
            # struct comparisons). The engine places its filters itself.
            "spark.sql.constraintPropagation.enabled": "false",
            # The engine broadcasts by exact row counts (``small``); Spark's own choice rests on
            # estimates that checkpointed relations carry over from the plans they cut, and a
            # filter's estimate can make millions of rows look small enough to broadcast.
            "spark.sql.autoBroadcastJoinThreshold": "-1",
        }

    def checkpointer(self, spark: SparkSession) -> tuple[Callable[..., DataFrame], Callable[[DataFrame], None]]:
        """How this engine cuts lineage: a function ``(frame, eager=False) -> frame`` and one that
        releases a checkpointed frame's storage (see :func:`~nablog.engines.spark.session.checkpointer`)."""
        return checkpointer(spark, self.checkpoint_dir)

    def evaluation(self, spark: SparkSession | None = None, progress: Callable[[str], None] | None = None) -> _Evaluation:
        """A fresh evaluation state on this engine (recursive components in one job when allowed)."""
        return _Evaluation(spark or self.session, self, progress, one_job if self.partitioned else None)



__all__ = ["SparkEngine"]
