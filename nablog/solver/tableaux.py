"""The `tableaux` and `tableaux-materialized` methods: seed 003's Algorithms 3–6 on the ground problem.

The relevant ground problem (:mod:`nablog.solver.ground`, the same candidates and bounds as the
``asp`` method) becomes an update tableau (:mod:`nablog.tableaux.update`). ``tableaux`` streams
each branch that passes the strong minimality test as soon as it is found (Algorithms 3, 4);
``tableaux-materialized`` builds the tableau over the rule instances true in the current model
(IDB+, Algorithms 5, 6) without the test, so a branch's hitting set may be non-minimal: it is
shrunk to a minimal one inside it (Lemma 5) and streamed too. Either way each realization comes
with its certificate (the failure undoing each change brings), which stands for the verifier's
subset re-check: the verify-and-order stage (:mod:`nablog.solver.answer`) is told the realization
is proved minimal.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Generator

from ..engines.lookup import ModelIndex
from ..tableaux.update import UpdateTableau
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
    for _, values in problem.at_most_one:
        atoms.update(a for _, group in values for a in group)
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
    timeout: float | None,
    materialized: bool,
    by_size: bool = False,
) -> Generator[tuple[list, str] | int, bool | None, str]:
    """Each realization's changes and certificate as its branch is found; the status:
    ``complete``, ``stopped`` or ``timeout``.

    With ``by_size``, the search deepens by size: branches whose hitting set exceeds k changes
    are closed, for k = 1, 2, …, and after each k the generator yields k (every realization of
    at most k changes has been yielded); sent True there, it stops (``stopped``). It ends when no
    branch was closed for its size (the search was exhaustive). So ``--limit N`` explores only
    the tableau within the size of the N smallest realizations (the caller says when it has
    them), and they are exactly the N smallest; a realization is yielded again by each deeper
    pass that finds it."""
    deadline = None if timeout is None else time.monotonic() + timeout
    timed_out = [False]

    def stop() -> bool:
        if deadline is not None and time.monotonic() > deadline:
            timed_out[0] = True
        return timed_out[0]

    tableau = update_tableau(problem, index, materialized)
    basis = (
        "a hitting set of an update tableau over IDB+ (Algorithms 5, 6) shrunk to a minimal one"
        if materialized
        else "strong minimality (seed 003, Def. 15, 19)"
    )
    sizes = itertools.count(1) if by_size else [None]
    for size in sizes:
        for result in tableau.minimal_realizations(stop, size):
            yield list(result.changes), f"{basis}: {result.reason()}"
        if timed_out[0]:
            return "timeout"
        if not tableau.cut:
            return "complete"
        if (yield size):
            return "stopped"
    return "complete"


def request_tableau(
    rules,
    facts,
    model,
    request,
    *,
    candidates: str = "attribute",
    max_fresh: int = 2,
    protect=(),
    materialized: bool = False,
) -> UpdateTableau:
    """The update tableau ``propose(..., method="tableaux")`` explores for ``request``, to print
    (``nablog explain FILES --tableau REQUEST``)."""
    from ..engines import PythonEngine
    from ..engines.violations import find_violations
    from ..lang import SPLIT_PREFIX
    from .ground import Bounds, Relevance, ground_atom
    from .problem import protections, request_universe
    from .request import check_request, parse_request

    if isinstance(request, str):
        request = parse_request(request)
    check_request(rules, model, request)
    index = ModelIndex(model)
    split = {p for p in rules.derived if SPLIT_PREFIX + p in facts}
    violations = find_violations(rules, model, PythonEngine())
    relevance = Relevance(
        rules,
        model,
        (set(rules.signatures) | set(facts)) - set(rules.derived),
        index=index,
        herbrand=candidates == "herbrand",
        bounds=Bounds(max_fresh=max_fresh),
        protect=protections(rules, protect, split),
        universe=request_universe(rules, index, request),
        group_fds=True,
    )
    violated = [(v.constraint, b) for v in violations for b in v.bindings]
    problem = relevance.solve([ground_atom(a) for a in request.insert], [ground_atom(a) for a in request.delete], violated)
    return update_tableau(problem, index, materialized)
