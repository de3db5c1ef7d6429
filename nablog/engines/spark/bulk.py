"""Bulk work on Spark, one module a job: materialize a model to Parquet, propagate a batch of base changes, check every constraint.

Three operations over relations that stay on Spark, and their file-level forms used by the
command line (``nablog materialize``, ``nablog materialize --model``, ``nablog check --engine spark``):

- :func:`materialize` (:mod:`.materialization`): the perfect model (:meth:`SparkEngine.run`),
  each derived relation written to ``OUT/<relation>/`` as Parquet.
- :func:`propagate` (:mod:`.propagation`): the induced update of seed 002 (Def. 2) of a batch of
  base insertions and deletions, computed from a stored model component by component (DRed).
- :func:`check` (:mod:`.checking`): every constraint over the model, violated instances counted
  exactly, witnesses to Parquet and the first few to the caller.

What the file-level forms share (the program, an engine, the ``--data`` relations, the warnings
for undefined relations) is :mod:`.inputs`. This module gathers the three jobs' names; the
package :mod:`nablog.engines.spark` gives them too.
"""

from __future__ import annotations

from .checking import WITNESS_CAP, Checked, check, check_files
from .materialization import Materialized, materialize, materialize_files
from .propagation import DELETE_PREFIX, INSERT_PREFIX, RECOMPUTE_SHARE, Propagated, Propagation, propagate, propagate_files

__all__ = [
    "DELETE_PREFIX",
    "INSERT_PREFIX",
    "RECOMPUTE_SHARE",
    "WITNESS_CAP",
    "Checked",
    "Materialized",
    "Propagated",
    "Propagation",
    "check",
    "check_files",
    "materialize",
    "materialize_files",
    "propagate",
    "propagate_files",
]
