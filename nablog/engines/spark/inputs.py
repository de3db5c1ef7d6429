"""What every bulk job on Spark reads first: the program files, an engine, the ``--data`` relations, and a warning per undefined relation."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ...lang import NablogWarning, Program, empty_base_relations, parse_files, separate_facts
from .engine import SparkEngine
from .relations import read_relations
from .types import Relation

Progress = Callable[[str], None]
"""Receives one line per stratum, per round and per file step of a bulk job."""


def read_job(
    files: Iterable[str],
    data: Iterable[str],
    master: str | None,
    checkpoint_dir: str | None,
    header: bool | None,
    strict: bool,
    warn: Callable[[NablogWarning], None] | None,
) -> tuple[Program, SparkEngine, dict[str, Relation]]:
    """The program of ``files``, an engine on ``master``, and the base relations of the ``data``
    paths (see :mod:`.relations`), checked with :func:`check_defined`."""
    program = parse_files(list(files))
    engine = SparkEngine(master=master, checkpoint_dir=checkpoint_dir)
    relations = read_relations(engine, data, header)
    check_defined(program, relations, strict, warn)
    return program, engine, relations


def check_defined(program: Program, relations: Mapping[str, object], strict: bool, warn: Callable[[NablogWarning], None] | None) -> None:
    """Every body predicate without rules, facts, data or a ``#base`` line is an empty relation,
    with one warning each passed to ``warn`` (an error when ``strict``), as the Database gives them."""
    rules, facts = separate_facts(program, {})
    for warning in empty_base_relations(rules, set(facts) | set(relations), strict):
        if warn is not None:
            warn(warning)


__all__ = ["Progress", "check_defined", "read_job"]
