"""Bulk materialization on Spark: the perfect model of a program over relations on Spark, every derived relation written to Parquet.

:func:`materialize` evaluates with :meth:`SparkEngine.run` and writes each derived relation to
``OUT/<relation>/`` (:func:`~nablog.engines.spark.relations.write_relations`, atomically);
:func:`materialize_files` is its form over files (``nablog materialize``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ...lang import NablogWarning, Program
from .engine import SparkEngine
from .evaluation import Round
from .inputs import Progress, read_job
from .relations import write_relations
from .types import Relation


@dataclass
class Materialized:
    """What :func:`materialize` wrote: rows per relation, the steps of the evaluation, the time."""

    out: str
    rows: dict[str, int]
    rounds: list[Round]
    seconds: float


def materialize(
    engine: SparkEngine,
    program: Program,
    relations: Mapping[str, Relation | Iterable[tuple]],
    out: str | Path,
    progress: Progress | None = None,
) -> Materialized:
    """Compute the perfect model of ``program`` over ``relations`` and write every derived relation
    to ``OUT/<relation>/`` (Parquet, columns ``c0, c1, ...``), atomically."""
    start = time.perf_counter()
    with engine.running():
        model = engine.run(program, relations, progress)
        derived = {p: model.relations[p] for p in model.derived}
        if progress:
            progress(f"writing {len(derived)} relation{'s' if len(derived) != 1 else ''} to {out}")
        entries = write_relations(engine, out, derived)
    return Materialized(str(out), {p: e["rows"] for p, e in entries.items()}, model.rounds, time.perf_counter() - start)


def materialize_files(
    files: Iterable[str],
    data: Iterable[str],
    out: str,
    *,
    master: str | None = None,
    checkpoint_dir: str | None = None,
    header: bool | None = None,
    progress: Progress | None = None,
    strict: bool = False,
    warn: Callable[[NablogWarning], None] | None = None,
) -> Materialized:
    """:func:`materialize` over program files and ``--data`` paths (see :mod:`.relations`)."""
    program, engine, relations = read_job(files, data, master, checkpoint_dir, header, strict, warn)
    return materialize(engine, program, relations, out, progress)


__all__ = ["Materialized", "materialize", "materialize_files"]
