"""The `spark` engine: perfect models of stratified programs on Spark DataFrames, in few large rounds.

Relations are DataFrames with columns ``c0, c1, ...`` typed per column (see
:mod:`nablog.engines.spark.types`): ``long`` when every value is an integer, ``string`` when every
value is a string, and a ``struct<s: string, i: long>`` for columns holding both, whose ordering
in Spark is exactly nablog's (integers before strings, strings by code point). Types are inferred
for derived relations before evaluation, so the rules compile to joins of like-typed columns, and
nothing needs a dictionary of all constants in the driver: data read by the executors stays there.

Components of the dependency graph run in the order of :func:`~nablog.engines.plan.component_plans`.
A non-recursive component is one ``distinct`` union of its rules. A recursive component runs in one
of two ways:

- **partitioned fixpoint, inside one job** (:mod:`nablog.engines.spark.fixpoint`): when every
  recursive rule passes one head argument unchanged from its recursive body literals (``tc(X,Y) :-
  tc(X,Z), e(Z,Y).`` keeps ``X``; ``tc(X,Y) :- e(X,Z), tc(Z,Y).`` keeps ``Y``) and the other
  relations the recursive rules read are small, the relation falls apart into independent
  fixpoints, one per value of that argument. The exit tuples are hash-partitioned on it, the small
  relations are broadcast, and each task runs the whole semi-naive fixpoint of its partition with
  the embedded columnar engine. One Spark job instead of one per round: on a transitive closure
  of 10.8 M pairs that is 1 job instead of ~20 rounds of 1-3 s each.
- **semi-naive rounds** otherwise (same generation, non-linear recursion, large side relations):
  each recursive rule once per recursive body literal taken as the delta; new tuples found by
  ``distinct`` plus an anti-join against the full relation (set semantics); small relations
  broadcast in joins by their exact row counts. Each round checkpoints its deltas, so the plan does
  not grow with the number of rounds, and a recursive relation is the union of its deltas,
  consolidated every :data:`MAX_PIECES` rounds, the consolidated pieces being released at once.

Squaring (``tc := tc ∪ tc∘tc``) was measured and rejected as the general way to cut rounds: it
needs log(depth) rounds but derives |tc| × (average reach) tuples instead of |tc| × (average
out-degree), 1,000 times more on the dense closures of the benchmark.

Checkpoints are ``localCheckpoint`` (executor storage, no files) unless a checkpoint directory is
given (``checkpoint_dir`` or ``NABLOG_CHECKPOINT_DIR``; on a cluster it must be shared storage such
as ``hdfs://``): nothing else is written anywhere during an evaluation.

pyspark is imported only when the engine runs; one SparkSession per process is shared by every
engine (see :func:`spark_session`).

>>> from nablog.lang import parse
>>> model = SparkEngine().evaluate(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y)."),
...                                {"e": {(1, 2), (2, 3)}})  # doctest: +SKIP
>>> sorted(model["p"])  # doctest: +SKIP
[(1, 2), (1, 3), (2, 3)]
"""


from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ...lang import NablogError, Program, Rule, analyze, base_part, separate_facts
from ...transforms.flatten import flatten
from ..base import Model, prepare
from .evaluation import Round, SparkModel, _Evaluation
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


__all__ = ["Relation", "Round", "SparkEngine", "SparkModel"]
