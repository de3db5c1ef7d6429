"""The `tableaux` and `tableaux-materialized` methods: seed 003's Algorithms 3–6 on the ground problem.

The relevant ground problem (:mod:`nablog.solver.ground`, the same candidates and bounds as the
``asp`` method) becomes an update tableau (:mod:`nablog.tableaux.update`). ``tableaux`` streams
each branch that passes the strong minimality test as soon as it is found (Algorithms 3, 4);
``tableaux-materialized`` builds the tableau over the rule instances true in the current model
(IDB+, Algorithms 5, 6) without the test, so its branches' hitting sets may include non-minimal
ones: they are collected and only the subset-minimal ones are kept (Lemma 3), which means its
realizations come once the tableau is complete.
"""

from __future__ import annotations

import time
from typing import Callable

from ..engines.lookup import ModelIndex
from ..tableaux.update import UpdateTableau, minimal_family
from .ground import GroundProblem


def problem_atoms(problem: GroundProblem) -> set:
    atoms = {a for _, a in problem.candidates}
    for head, pos, neg in problem.rules:
        atoms.add(head)
        atoms.update(pos)
        atoms.update(neg)
    for _, pos, neg in problem.denials:
        atoms.update(pos)
        atoms.update(neg)
    atoms.update(a for _, a in problem.require_true)
    atoms.update(a for _, a in problem.require_false)
    return atoms


def update_tableau(problem: GroundProblem, index: ModelIndex, materialized: bool = False) -> UpdateTableau:
    """The update tableau of a ground problem over the current model behind ``index``."""
    current = {a for a in problem_atoms(problem) if index.contains(a[0], a[1])}
    return UpdateTableau(problem, current, materialized=materialized)


def enumerate_realizations(
    problem: GroundProblem,
    index: ModelIndex,
    accept: Callable[[list, str], bool],
    timeout: float | None,
    materialized: bool,
) -> str:
    """Hand each realization's changes and certificate to ``accept`` (until it returns False);
    the status: ``complete``, ``stopped`` or ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = [False]

    def stop() -> bool:
        if deadline is not None and time.monotonic() > deadline:
            timed_out[0] = True
        return timed_out[0]

    tableau = update_tableau(problem, index, materialized)
    if materialized:
        found = {r.changes: r for r in tableau.realizations(stop)}
        for changes in minimal_family(found):
            if not accept(list(changes), "hitting set of an update tableau over IDB+ (Algorithms 5, 6)"):
                return "stopped"
        return "timeout" if timed_out[0] else "complete"
    for result in tableau.realizations(stop):
        if not accept(list(result.changes), "strong minimality (seed 003, Def. 15, 19): " + result.reason()):
            return "stopped"
    return "timeout" if timed_out[0] else "complete"
