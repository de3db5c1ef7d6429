"""Answer a view-update request: relevant candidates, minimal change sets, verified realizations.

>>> from nablog.lang import parse
>>> from nablog.engines import PythonEngine
>>> program = parse("p(X) :- q(X), not r(X). q(1). r(1).")
>>> from nablog.lang import separate_facts
>>> rules, facts = separate_facts(program)
>>> proposal = propose(rules, facts, PythonEngine().evaluate(rules, facts), "+p(1).")
>>> proposal.status, [str(r.changes.lines()) for r in proposal]
('complete', ["['-r(1)']"])
>>> handle = propose(rules, facts, PythonEngine().evaluate(rules, facts), "+p(1).", stream=True)
>>> [str(r.changes) for r in handle]  # each realization as soon as it is verified
['-r(1).']
>>> handle.get().status
'complete'
"""

from __future__ import annotations

import contextlib
import functools
import gc
import time
from collections.abc import Iterator, Set
from dataclasses import dataclass, replace
from typing import Callable, Mapping

from ..engines import PythonEngine
from ..engines.compute import refuse_computation
from ..engines.lookup import ModelIndex
from ..engines.violations import find_violations
from ..lang import SPLIT_PREFIX, Atom, Program
from .answer import Answered, Ending, Found, Listed, MethodSearch, Search, Stage, answer, canonical
from .asp import AspProblem, Late
from .ground import Bounds, GroundProblem, Relevance, ground_atom, refuse_aggregates, supported_first
from .options import ProposeOptions
from .prepared import request_folding
from .problem import Universe, protections, request_universe
from .realization import Proposal, Realization, Verifier
from .symmetry import Folding, Unfoldable, symmetric
from .whole import asp_problem, has_aggregates, whole_problem
from .request import Request, check_request, parse_request



def _without_collector(function):
    """Run with Python's cyclic garbage collector paused: a database of 1e6 facts keeps millions
    of objects alive, and a full collection triggered by the search's small allocations took a
    second of a proposal that otherwise takes one (org chart, 1e6 facts). Cycles made meanwhile
    are collected afterwards."""

    @functools.wraps(function)
    def paused(*args, **kwargs):
        with _collector_paused():
            return function(*args, **kwargs)

    return paused


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class ProposalHandle:
    """The answer of :func:`propose` as it is found, as clingo's ``SolveHandle`` gives models.

    Iterating the handle yields each realization as soon as it is verified: the search runs as
    the iteration asks for the next one (streaming is iteration, not a callback; the command
    line prints, the server sends and the chooser reads from the same handle), and a caller
    that stops iterating stops the search (:meth:`cancel`). :meth:`get` runs the search to its
    end and gives the :class:`Proposal` (realizations smallest first, status, message); the
    handle also answers as that proposal (``len``, indexing, ``status``, ``to_json``, …), and
    once the search has ended, iterating it yields the proposal's realizations.

    The search takes its first step when the handle is made, so that a request the search
    refuses at once (a bound, an unsupported construct) raises where ``propose`` is called.
    """

    def __init__(self, search: Search, request: Request):
        self.request = request  # known before the search ends
        self._search: Search | None = search
        self._proposal: Proposal | None = None
        self._next: list[Realization] = []
        self._step()

    @classmethod
    def of(cls, proposal: Proposal) -> "ProposalHandle":
        """A handle whose search has ended with ``proposal``."""
        handle = cls.__new__(cls)
        handle._search, handle._proposal, handle._next, handle.request = None, proposal, [], proposal.request
        return handle

    def _step(self) -> None:
        """Run the search to its next realization (kept in ``_next``) or to its end."""
        assert self._search is not None
        try:
            with _collector_paused():
                self._next.append(next(self._search))
        except StopIteration as done:
            self._search, self._proposal = None, done.value

    def __iter__(self) -> Iterator[Realization]:
        if self._search is None and not self._next:
            yield from self._proposal or ()  # none when cancelled
            return
        while self._next:
            yield self._next.pop(0)
            if self._search is not None:
                self._step()

    def get(self) -> Proposal:
        """The whole proposal (the search run to its end)."""
        while self._search is not None:
            self._next.clear()
            self._step()
        self._next.clear()
        if self._proposal is None:
            raise RuntimeError("the search was cancelled: it has no proposal")
        return self._proposal

    def cancel(self) -> None:
        """Stop the search (what was not yet iterated is dropped; :meth:`get` is then refused)."""
        if self._search is not None:
            self._search.close()
            self._search = None
        self._next.clear()

    def __len__(self) -> int:
        return len(self.get())

    def __getitem__(self, i: int) -> Realization:
        return self.get()[i]

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.get(), name)

    def __reduce__(self):
        return self.get().__reduce__()


@_without_collector
def propose(
    rules: Program,
    facts: Mapping[str, Set],
    model: Mapping[str, Set],
    request: Request | str,
    options: ProposeOptions | None = None,
    *,
    basis: str = "",
    index: ModelIndex | None = None,
    violations: list | None = None,
    progress: Callable[[str], None] | None = None,
    stream: bool = False,
    **changes,
) -> "Proposal | ProposalHandle":
    """Every subset-minimal realization of ``request`` (seed 002, Def. 7; seed 003, §3.2).

    Parameters
    ----------
    rules : Program
        The database's rules and constraints (facts separated out, see ``separate_facts``).
    facts, model : mappings
        Base facts and the current perfect model (python engine's or any engine's).
    request : Request or str
        Ground atoms to insert and delete, e.g. ``"+staff_chair(aravindan, gerhard)."``.
    options : ProposeOptions, optional
        The method, its bounds and candidates (:class:`~nablog.solver.options.ProposeOptions`);
        ``changes`` (its field names: ``method="tableaux"``, ``limit=3``, …) replace fields of it.
    basis : str
        A fingerprint of the stored data, kept with each realization so that applying it to
        changed data can be refused.
    progress : callable, optional
        Called with a line on the phase the search is in (progress at a terminal).
    index, violations : optional
        A :class:`ModelIndex` over ``model`` and the model's constraint violations, when the
        caller keeps them between requests (they depend on the database state only).

    Returns the :class:`Proposal`; with ``stream=True`` (as clingo's ``solve(yield_=True)``) a
    :class:`ProposalHandle` instead, which yields each realization as soon as it is verified as
    it is iterated, the search running as the iteration asks (``get()`` for the whole answer).
    Without ``stream`` the search runs to its end here: inside whatever the caller holds (a lock,
    a patched setting), as the answer's state requires.
    """
    options = ProposeOptions.of(options, **changes)
    method, timeout = options.method, options.timeout
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    if isinstance(request, str):
        request = parse_request(request)
    if method != "asp":
        refuse_aggregates(rules, f"the {method} method", "use --method asp, which hands the program to clingo whole when it has aggregates")
    if method != "asp":
        refuse_computation(rules.rules, f"the {method} method", "use method asp, which grounds arithmetic as clingo computes it")
    check_request(rules, model, request)
    split = {p for p in rules.derived if SPLIT_PREFIX + p in facts}
    if violations is None:
        violations = find_violations(rules, model, PythonEngine())
    if _holds(model, request) and not violations:
        holds = Proposal(request, "complete", [Realization((), (), basis=basis, request=request)], "the request already holds: nothing to change")
        return ProposalHandle.of(holds) if stream else holds

    index = index or ModelIndex(model)
    base = frozenset((set(rules.signatures) | set(facts)) - set(rules.derived))
    protected = tuple(protections(rules, options.protect, split))
    universe = request_universe(rules, index, request)
    remaining = None if timeout is None else max(0.0, timeout - (time.monotonic() - start))
    problem = ViewUpdate(
        rules, facts, model, request, options, basis, index, base, protected, universe,
        Verifier(rules, model, request, consistent=not violations),
        tuple((v.constraint, b) for v in violations for b in v.bindings),
        deadline, remaining,
    )
    run = _METHODS[method]
    folding = None
    if options.families and method == "asp" and symmetric(rules):
        if progress:
            progress("finding interchangeable values")
        folding = request_folding(rules, model, base, request, list(protected), index)
    handle = ProposalHandle(_answer(problem, run, folding, progress), request)
    return handle if stream else handle.get()


def _answer(problem: "ViewUpdate", run: "Method", folding: Folding | None, progress) -> Search:
    """The method's search through the verify-and-order stage, each realization yielded once, and
    its proposal: with folded interchangeable values, the statement of what is listed, or the
    search again unfolded."""
    streamed: set = set()
    fold_first = getattr(run, "fold_first", False)
    try:
        proposal = yield from _once(answer(_stage(problem), run(problem, folding, progress), folding, fold_first), streamed)
        exact = folding.exact_size if folding is not None else None
        if exact is None or proposal.status != "complete":
            return proposal
        if not len(proposal):
            # "No realization" is not known while values were hidden: one may draw more values
            # of a class than there are representatives.
            raise Unfoldable
        # Every realization of up to `exact` changes is listed; a larger one drawing more values
        # of one class than were grounded could be missing, so the answer is not called complete.
        return replace(
            proposal,
            status="bounded",
            message=proposal.message + f"; interchangeable values were folded: every realization of up to {exact} changes is listed, larger ones drawing more values of one class were not searched (--no-families, families=False, searches them)",
        )
    except Unfoldable:
        # A realization over representatives that is not one value's orbit: ground every value.
        if progress:
            progress("a realization uses several interchangeable values; solving without folding")
        return (yield from _once(answer(_stage(problem), run(problem, None, progress), None, fold_first), streamed))


def _stage(problem: "ViewUpdate") -> Stage:
    options = problem.options
    return Stage(problem.verifier, problem.index, problem.rules, problem.request, problem.basis, options.limit, options.families, problem.deadline)


@dataclass(frozen=True)
class ViewUpdate:
    """One view-update request over one database state, prepared once (by :func:`propose`): what
    every method reads. ``violated`` are the (constraint, binding) pairs violated now; ``deadline``
    the monotonic time the answer is due, ``remaining`` the seconds left when it was prepared."""

    rules: Program
    facts: Mapping[str, Set]
    model: Mapping[str, Set]
    request: Request
    options: ProposeOptions
    basis: str
    index: ModelIndex
    base: frozenset[str]
    protected: tuple
    universe: Universe
    verifier: Verifier
    violated: tuple
    deadline: float | None
    remaining: float | None


Method = Callable[[ViewUpdate, "Folding | None", "Callable[[str], None] | None"], MethodSearch]
"""A view-update method: a ViewUpdate, the folding of interchangeable values (the asp method's
only) and the progress line in; the change sets it finds yielded as :class:`Found` (and
:class:`Listed` when a size is complete), its :data:`Ending` returned. The stage
(:func:`~nablog.solver.answer.answer`) verifies, orders and cuts them; it sends True when the
method must stop."""

_METHODS: dict[str, Method] = {}


def method(*names: str, fold_first: bool = False) -> Callable[[Method], Method]:
    """Register a function as the view-update method(s) ``names`` (see
    :data:`~nablog.solver.options.METHODS`); ``fold_first``: its change sets come a size at a
    time and are folded into families before they are verified (see :mod:`nablog.solver.answer`)."""

    def register(function: Method) -> Method:
        function.fold_first = fold_first  # type: ignore[attr-defined]
        for name in names:
            _METHODS[name] = function
        return function

    return register


def _once(search: Search, streamed: set) -> Search:
    """``search``'s realizations, each change set once (``streamed`` holds those yielded: a search
    that starts again unfolded, see :func:`_answer`, finds the first ones again); its proposal."""
    while True:
        try:
            realization = next(search)
        except StopIteration as done:
            return done.value
        key = (realization.insert, realization.delete)
        if key not in streamed:
            streamed.add(key)
            yield realization


def _ground_problem(problem: ViewUpdate, folding: Folding | None, progress) -> GroundProblem | Proposal:
    """The relevant ground problem of the asp and tableaux methods (or the answer, when finding
    it already decides one)."""
    options, rules, model, request = problem.options, problem.rules, problem.model, problem.request

    def relevance(supported: bool) -> Relevance:
        return Relevance(
            rules,
            model,
            problem.base,
            index=problem.index,
            herbrand=options.candidates == "herbrand",
            bounds=Bounds(max_fresh=options.max_fresh, max_rounds=options.max_rounds),
            protect=list(problem.protected),
            universe=problem.universe,
            group_fds=True,  # one at-most-one group per key, not a denial instance per pair
            free_values=True,  # one new constant per column nothing reads (solver/free.py)
            conceal=folding.hides if folding is not None else None,
            visible=folding.visible if folding is not None else None,
            supported=supported,
        )

    if progress:
        progress("finding the relevant candidate changes")
    if has_aggregates(rules):  # (only the asp method gets here with them)
        ground = whole_problem(rules, model, problem.base, request, herbrand=options.candidates == "herbrand", max_fresh=options.max_fresh, protect=list(problem.protected), universe=problem.universe)
    else:
        ground = supported_first(relevance, [ground_atom(a) for a in request.insert], [ground_atom(a) for a in request.delete], list(problem.violated), problem.deadline)
    if ground.timed_out:
        return Proposal(request, "timeout", [], "no realization found before the timeout (the search was stopped while finding candidate changes)", [], len(ground.candidates))
    if progress:
        progress(f"{len(ground.candidates):,} candidate changes; solving")
    if ground.fixed_conflicts and ground.complete_up_to is not None:
        # What was left out needs more changes than the bound: none of up to it exists.
        k = ground.complete_up_to
        message = f"no realization of up to {k} change{'' if k == 1 else 's'} (bounded: " + "; ".join(ground.bounded) + "); larger ones were not all searched and none is shown"
        return Proposal(request, "bounded", [], message, [], len(ground.candidates), k)
    if ground.fixed_conflicts:
        return Proposal(request, "complete", [], "no realization: " + ground.fixed_conflicts[0], list(ground.fixed_conflicts), len(ground.candidates))
    return ground


def _decided(proposal: Proposal) -> Ending:
    return lambda answered: proposal


def _found(ground: GroundProblem, changes, reason: str = "", minimal: str = "") -> Found:
    """A change set of the ground problem (its candidates' signed atoms), canonical."""
    insert = tuple(Atom(a[0], a[1]) for sign, a in changes if sign == "+")
    delete = tuple(Atom(a[0], a[1]) for sign, a in changes if sign == "-")
    insert, delete, fresh = canonical(insert, delete, ground.fresh, ground.free)
    return Found(insert, delete, fresh, tuple(ground.fresh), reason, minimal)


@method("tableaux", "tableaux-materialized")
def _tableaux(problem: ViewUpdate, folding: Folding | None, progress) -> MethodSearch:
    """Seed 003's update tableaux (Algorithms 3-6) over the relevant ground problem: each
    realization yielded as its branch is found, with its certificate (Def. 15/19) for proof of
    minimality; with a limit, deepening by size (a size complete, the stage may stop it)."""
    from .tableaux import enumerate_realizations

    ground = _ground_problem(problem, folding, progress)
    if isinstance(ground, Proposal):
        return _decided(ground)
    options, request = problem.options, problem.request
    enumeration = enumerate_realizations(
        ground,
        problem.index,
        problem.remaining,
        # Over a database that violates a constraint now, the IDB+ tableau misses
        # realizations (found by the thorough brute-force test): the minimality-test
        # variant answers instead.
        materialized=options.method == "tableaux-materialized" and not problem.violated,
        by_size=options.limit is not None,
    )
    reply = None
    while True:
        try:
            item = enumeration.send(reply)
        except StopIteration as end:
            status = end.value
            break
        if isinstance(item, int):
            reply = yield Listed(item)
            continue
        reply = None
        changes, certificate = item
        if ground.largest_listed is not None and len(changes) > ground.largest_listed:
            continue  # one of that size may be missing: none larger is shown
        yield _found(ground, changes, certificate, "no smaller set of these changes does it")

    def ending(answered: Answered) -> Proposal:
        core = AspProblem(ground).explain_failure() if not answered.rows and status == "complete" else []  # why nothing realizes it
        settled = {"timeout": "timeout", "stopped": "bounded"}.get(status, "bounded" if ground.bounded or answered.stopped else "complete")
        message, reasons = _message(answered.rows, settled, ground, core)
        return Proposal(request, settled, answered.rows, message, reasons, len(ground.candidates), ground.complete_up_to)

    return ending


@method("asp", fold_first=True)
def _asp(problem: ViewUpdate, folding: Folding | None, progress) -> MethodSearch:
    """clingo enumerates the subset-minimal change sets of the relevant ground problem, a size
    at a time, smallest first (minimal by construction: smaller ones were found first and are
    blocked in the ground problem)."""
    ground = _ground_problem(problem, folding, progress)
    if isinstance(ground, Proposal):
        return _decided(ground)
    request, deadline = problem.request, problem.deadline
    minimal = "no smaller set of these changes does it in the ground problem, where every smaller one was found first"
    level_status = "complete"
    try:
        asp = asp_problem(ground, deadline)
        for size, change_sets, level_status in asp.by_size(deadline):
            if ground.largest_listed is not None and size > ground.largest_listed:
                level_status = "stopped"  # one of the size before may be missing: none larger is shown
                break
            if progress:
                progress(f"{len(change_sets):,} change set" + ("" if len(change_sets) == 1 else "s") + f" of {size} changes; verifying")
            for change_set in change_sets:
                yield _found(ground, [ground.candidates[k] for k in sorted(change_set)], minimal=minimal)
            if (yield Listed(size)):
                break
            if level_status != "complete":
                break
    except Late:
        level_status = "timeout"

    def ending(answered: Answered) -> Proposal:
        rows = answered.rows
        status = {"limit": "bounded", "timeout": "timeout"}.get(answered.stopped or "", {"complete": "complete", "stopped": "bounded", "timeout": "timeout"}[level_status])
        if status == "complete" and ground.bounded:
            status = "bounded"
        core = asp_problem(ground).explain_failure(deadline) if not rows and status == "complete" else []
        message, reasons = _message(rows, status, ground, core)
        return Proposal(request, status, rows, message, reasons, len(ground.candidates), ground.complete_up_to)

    return ending


def _message(realizations, status, problem, core) -> tuple[str, list[str]]:
    n = len(realizations)
    reasons = [c for c in core if not c.startswith("request")]
    if n:
        text = f"{n} minimal realization" + ("" if n == 1 else "s")
        folded = [r for r in realizations if r.family is not None]
        if folded:
            text += f" ({len(folded)} of them famil" + ("y" if len(folded) == 1 else "ies") + " of " + " + ".join(f"{len(r.family):,}" for r in folded) + " members)"
    elif reasons:
        text = "no realization: the request contradicts " + ", ".join(reasons)
    elif status == "timeout":
        text = "no realization found before the timeout"
    elif status == "bounded":
        text = "no finite realization was found within the bounds"
    else:
        text = "no realization: no change of base facts makes the request hold"
    if status == "bounded":
        text += " (bounded: " + "; ".join(problem.bounded or ["the limit was reached"]) + ")"
        k = problem.complete_up_to
        if k is not None:
            text += f"; {_listed_up_to(k)}"
    elif status == "timeout" and n:
        text += " (timeout: the search was stopped; these are the realizations found so far)"
    return text, reasons


def _listed_up_to(k: int) -> str:
    """What a bounded answer complete up to ``k`` changes promises (see GroundProblem.largest_listed)."""
    return (
        f"every realization of up to {k} change{'' if k == 1 else 's'} is listed; "
        f"those of {k + 1} change{'' if k + 1 == 1 else 's'} listed are the ones found (others may exist); larger ones are not shown"
    )


@method("transform")
def _transform(problem: ViewUpdate, folding: Folding | None, progress) -> MethodSearch:
    """Seed 002's Algorithm 1 (see :mod:`nablog.solver.transform`): each round's minimal change
    sets as the round ends, for the stage to verify and shrink (the algorithm decides on the
    normalized program's states, which may differ from re-evaluation); folding does not apply."""
    from .transform import Algorithm1

    options, request = problem.options, problem.request
    algorithm = Algorithm1(
        problem.rules, problem.facts, problem.model, herbrand=options.candidates == "herbrand", max_fresh=options.max_fresh, protected=list(problem.protected), exhaustive=options.exhaustive
    )
    deadline = None if problem.remaining is None else time.monotonic() + problem.remaining
    rounds = algorithm.rounds(request, deadline)
    while True:
        try:
            change_sets, names = next(rounds)
        except StopIteration as end:
            outcome = end.value
            break
        for change_set in change_sets:
            insert = tuple(Atom(p, a) for s, p, a in change_set if s == "+")
            delete = tuple(Atom(p, a) for s, p, a in change_set if s == "-")
            yield Found(insert, delete, (), names, exact=False)

    def ending(answered: Answered) -> Proposal:
        n, cut, dropped = len(answered.rows), answered.stopped == "limit", answered.dropped
        text = f"{n} minimal realization" + ("" if n == 1 else "s") if n else "no realization found"
        text += f" (Algorithm 1, {outcome.rounds} round" + ("" if outcome.rounds == 1 else "s") + ")"
        if dropped:
            # A branch's changes that fail on the real database: Algorithm 1 decides on the
            # normalized program's disjunctive states, which may differ from re-evaluation.
            text += f" ({dropped} change set{'' if dropped == 1 else 's'} of Algorithm 1 did not verify and {'was' if dropped == 1 else 'were'} dropped)"
        if outcome.notes or cut:
            text += " (bounded: " + "; ".join(outcome.notes + (["the limit was reached"] if cut else [])) + ")"
        status = "bounded" if cut and outcome.status == "complete" else outcome.status
        return Proposal(request, status, answered.rows, text, [], 0)

    return ending


def _holds(model: Mapping[str, Set], request: Request) -> bool:
    return all(tuple(a.args) in model.get(a.pred, ()) for a in request.insert) and not any(
        tuple(a.args) in model.get(a.pred, ()) for a in request.delete
    )
