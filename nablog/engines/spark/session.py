"""The spark engine's session: the process's one SparkSession, its runtime options, and how lineage is cut.

Everything else in :mod:`nablog.engines.spark` reaches Spark through what this module gives:
:func:`spark_session`, :func:`runtime_options` for one evaluation, and :func:`checkpointer`.
The modules below the engine know it only as a :class:`SessionOwner`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ...lang import NablogError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

LOG_CONFIG = Path(__file__).with_name("log4j2.properties")
"""The log4j2 configuration the driver JVM starts with: errors only, no banner."""

DEFAULT_SHUFFLE_PARTITIONS = 4
"""Spark's default of 200 shuffle partitions is almost three times slower on a small machine."""

DEFAULT_DRIVER_MEMORY = "4g"
"""The heap of a local session's JVM (which runs the tasks), unless ``SPARK_DRIVER_MEMORY`` says otherwise."""


_session: SparkSession | None = None
_session_lock = threading.Lock()


class SessionOwner(Protocol):
    """What the modules below the engine need of it: the session, how it checkpoints, how
    finely it shuffles (:class:`~nablog.engines.spark.SparkEngine` is one)."""

    shuffle_partitions: int

    @property
    def session(self) -> SparkSession: ...

    def checkpointer(self, spark: SparkSession) -> tuple[Callable[..., DataFrame], Callable[[DataFrame], None]]: ...


def require_pyspark() -> None:
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
        ``spark://host:7077`` (standalone), ``yarn`` and ``k8s://https://host:443`` work like any
        Spark application (``spark-submit`` options can be given as ``PYSPARK_SUBMIT_ARGS`` or in
        ``spark-defaults.conf``). Asking for a master other than the one the running session uses
        is an error: a process has one SparkContext.
    shuffle_partitions:
        ``spark.sql.shuffle.partitions`` for a session started by this call (engines set it
        again for each evaluation, since it is a runtime option).

    A local session binds the driver to the loopback interface (``SPARK_LOCAL_IP`` is set to
    127.0.0.1 unless already set), has no web UI and no progress bar, and logs errors only
    (:data:`LOG_CONFIG`). A cluster session ships the ``nablog`` package to the executors (they
    need Python with numpy and pyarrow, like any PySpark job that runs Python code). A session the
    caller stopped is replaced by a new one.

    Raises
    ------
    NablogError
        When pyspark is not installed, or ``master`` differs from the running session's master.
    """
    global _session
    require_pyspark()
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
        # Python workers (the partitioned fixpoint runs Python code in tasks) use this interpreter.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = (
            SparkSession.builder.master(url)
            .appName("nablog")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}")
            .config("spark.cleaner.referenceTracking.cleanCheckpoints", "true")
            # Spark 4's PushDownLeftSemiAntiJoin fails an internal assertion ("phase optimization
            # failed") on some anti-joins under an aggregate that negation produces (found by the
            # bulk propagation property test); the rule only moves anti-joins, so leaving it out
            # changes plans, never answers.
            .config("spark.sql.optimizer.excludedRules", "org.apache.spark.sql.catalyst.optimizer.PushDownLeftSemiAntiJoin")
        )
        if _is_local(url):
            # Containers and laptops on changing networks often have no resolvable host name;
            # a cluster needs the driver reachable from executors, so only local sessions pin it.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
            if not os.environ.get("SPARK_DRIVER_MEMORY") and "driver-memory" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
                # A local session's executor is the driver JVM; Spark's default heap of 1 GB
                # spills a closure of ten million pairs to disk. The heap grows only as needed.
                builder = builder.config("spark.driver.memory", DEFAULT_DRIVER_MEMORY)
        try:
            session = builder.getOrCreate()
        except Exception as error:  # the JVM did not start, or the master is unreachable
            raise NablogError(
                f"cannot start a Spark session with master {url}: {_first_line(error)}",
                hint="check that Java 17 is installed and the master URL is reachable (spark://host:7077, yarn, k8s://...)",
            ) from None
        session.sparkContext.setLogLevel("ERROR")
        if not _is_local(url):
            _ship_package(session)
        _session = session
        return session


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _ship_package(session: SparkSession) -> None:
    """Make ``nablog`` importable on the executors of a cluster: the partitioned fixpoint runs
    nablog's columnar engine inside tasks. The package is zipped once per process."""
    package = Path(__file__).resolve().parents[2]
    target = Path(tempfile.mkdtemp(prefix="nablog-pyfiles-")) / "nablog.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in package.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, Path("nablog") / path.relative_to(package))
    session.sparkContext.addPyFile(str(target))



def checkpointer(spark: SparkSession, directory: str | None) -> tuple[Callable[..., DataFrame], Callable[[DataFrame], None]]:
    """How lineage is cut: a function ``(frame, eager=False) -> frame`` and one that releases a
    checkpointed frame's storage. ``directory`` (else ``NABLOG_CHECKPOINT_DIR``) makes reliable
    checkpoints there; without either they are ``localCheckpoint`` (executor storage, no files)."""
    directory = directory or os.environ.get("NABLOG_CHECKPOINT_DIR")
    if directory is None:
        # Lazy: the plan is cut at once, the rows are stored by the next job that needs them,
        # so a round costs one job, not one per checkpoint.
        from pyspark import StorageLevel

        # Serialized rows (pyspark's MEMORY_AND_DISK is the serialized level) take a third
        # of the memory of row objects, which matters for relations of millions of tuples.
        level = StorageLevel.MEMORY_AND_DISK
        return (lambda df, eager=False: df.localCheckpoint(eager=eager, storageLevel=level)), _release_local
    spark.sparkContext.setCheckpointDir(directory)
    # Reliable checkpoints are files, written by a job of their own: always eager. The
    # context cleaner removes them once unreferenced (spark.cleaner.referenceTracking.cleanCheckpoints).
    return (lambda df, eager=False: df.checkpoint(eager=True)), lambda df: None


def _release_local(frame: DataFrame) -> None:
    """Drop the executor blocks of a ``localCheckpoint``: the frame must not be used afterwards.

    Without this the blocks stay until the JVM's garbage collector notices the frame is gone,
    which on a long fixpoint means every consolidated copy of a relation stays in memory.
    """
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:
        return
    plan = jdf.queryExecution().analyzed()
    if plan.getClass().getSimpleName() == "LogicalRDD":
        plan.rdd().unpersist(False)


@contextmanager
def runtime_options(spark: SparkSession, settings: dict[str, str]) -> Iterator[None]:
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
