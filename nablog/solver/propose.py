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
import itertools
import time
from collections.abc import Generator, Iterator, Set
from dataclasses import dataclass, replace
from typing import Callable, Mapping

from ..engines import PythonEngine
from ..engines.lookup import ModelIndex
from ..engines.violations import find_violations
from ..lang import SPLIT_PREFIX, Atom, Program, constant_sort_key
from ..lang.delta import shown_atom
from .asp import AspProblem, Late
from ..engines.compute import refuse_computation
from .condition import family_condition
from .family import Family, find_families
from .symmetry import Folding, Unfoldable, orbit_family, symmetric
from .prepared import request_folding
from .whole import asp_problem, has_aggregates, whole_problem
from .ground import Bounds, GroundAtom, GroundProblem, Relevance, ground_atom, refuse_aggregates, supported_first
from .realization import Proposal, Realization, Verifier, atom_key, sorted_atoms
from .options import ProposeOptions
from .problem import Universe, protections, request_universe
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


Search = Generator[Realization, None, Proposal]
"""A search: each realization as soon as it is verified, then the whole :class:`Proposal`."""


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

    def __init__(self, search: Search):
        self._search: Search | None = search
        self._proposal: Proposal | None = None
        self._next: list[Realization] = []
        self._step()

    @classmethod
    def of(cls, proposal: Proposal) -> "ProposalHandle":
        """A handle whose search has ended with ``proposal``."""
        handle = cls.__new__(cls)
        handle._search, handle._proposal, handle._next = None, proposal, []
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
    handle = ProposalHandle(_answer(problem, run, folding, _Search(problem, progress)))
    return handle if stream else handle.get()


def _answer(problem: "ViewUpdate", run: "Method", folding: Folding | None, search: "_Search") -> Search:
    """The method's search, each realization yielded once, and its proposal: with folded
    interchangeable values, the statement of what is listed, or the search again unfolded."""
    streamed: set = set()
    try:
        proposal = yield from _once(run(problem, search, folding), streamed)
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
        if search.progress:
            search.progress("a realization uses several interchangeable values; solving without folding")
        search.found.clear()
        return (yield from _once(run(problem, search, None), streamed))


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


Method = Callable[[ViewUpdate, "_Search", "Folding | None"], Search]
"""A view-update method: a ViewUpdate, the search collecting its verified realizations, and the
folding of interchangeable values (the asp method's only) in; each realization yielded as it is
verified, in the order of the answer, and the Proposal returned."""

_METHODS: dict[str, Method] = {}


def method(*names: str) -> Callable[[Method], Method]:
    """Register a function as the view-update method(s) ``names`` (see :data:`~nablog.solver.options.METHODS`)."""

    def register(function: Method) -> Method:
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


class _Search:
    """The realizations one answer has verified so far, and how a method hands them in."""

    def __init__(self, problem: ViewUpdate, progress):
        self.problem = problem
        self.progress = progress
        self.found: dict[tuple, Realization] = {}

    def accept(self, insert: tuple[Atom, ...], delete: tuple[Atom, ...], fresh: tuple[str, ...], method_name: str = "asp", reason: str = "", certified: bool = False) -> Realization:
        # Minimality is re-evaluated subset by subset only where no proof came with the change set:
        # the asp method's holds by construction (smaller change sets were found first and blocked
        # in the ground problem; the re-check cost seconds per realization at 1e6 facts), the
        # tableaux' by their Def. 15/19 certificate (tests/solver/test_tableaux_method.py checks it
        # against the re-check).
        problem = self.problem
        verifier = problem.verifier
        verified = verifier.realizes(insert, delete)
        if verified is None or not (certified or method_name == "asp" or verifier.minimal(insert, delete)):
            raise AssertionError(f"the {method_name} method proposed a change set that does not verify: +{insert} -{delete}")
        minimal = "no smaller set of these changes does it in the ground problem, where every smaller one was found first" if method_name == "asp" else "no smaller set of these changes does it"
        return Realization(
            sorted_atoms(map(shown_atom, insert)),
            sorted_atoms(map(shown_atom, delete)),
            verifier.effects(insert, delete, verified),
            fresh,
            f"verified: re-evaluated, the request holds and every constraint holds; {minimal}"
            + (f"\n{reason}" if reason else ""),
            problem.basis,
            kernels=lambda: kernel_lines(problem.rules, problem.index, verifier, problem.request, insert, delete),
            request=problem.request,
        )

    def accept_changes(self, changes: list[tuple[str, GroundAtom]], fresh_names: list[str], method_name: str, reason: str = "", certified: bool = False, kept: Set = frozenset()) -> bool:
        insert = tuple(Atom(a[0], a[1]) for s, a in changes if s == "+")
        delete = tuple(Atom(a[0], a[1]) for s, a in changes if s == "-")
        insert, delete, fresh = canonical(insert, delete, fresh_names, kept)
        if (insert, delete) not in self.found:
            self.found[(insert, delete)] = self.accept(insert, delete, fresh, method_name, reason, certified)
        # These methods find realizations in no order of size: the search goes on, and the limit
        # is applied to the list sorted smallest first (see _smallest_first).
        return True

    def smallest_first(self, fresh_names: list[str]) -> Generator[Realization, None, tuple[list[Realization], bool]]:
        p = self.problem
        return _smallest_first(self.found, p.options.limit, p.options.families, p.verifier, p.index, p.basis, fresh_names)


def _ground_problem(problem: ViewUpdate, search: _Search, folding: Folding | None) -> GroundProblem | Proposal:
    """The relevant ground problem of the asp and tableaux methods (or the answer, when finding
    it already decides one)."""
    options, rules, model, request, progress = problem.options, problem.rules, problem.model, problem.request, search.progress

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


@method("tableaux", "tableaux-materialized")
def _tableaux(problem: ViewUpdate, search: _Search, folding: Folding | None) -> Search:
    """Seed 003's update tableaux (Algorithms 3-6) over the relevant ground problem."""
    from .asp import Enumeration
    from .tableaux import enumerate_realizations

    ground = _ground_problem(problem, search, folding)
    if isinstance(ground, Proposal):
        return ground
    options, request, found = problem.options, problem.request, search.found
    enumeration = Enumeration(
        enumerate_realizations(
            ground,
            problem.index,
            lambda changes, why: search.accept_changes(changes, ground.fresh, options.method, why, certified=True, kept=ground.free),
            problem.remaining,
            # Over a database that violates a constraint now, the IDB+ tableau misses
            # realizations (found by the thorough brute-force test): the minimality-test
            # variant answers instead.
            materialized=options.method == "tableaux-materialized" and not problem.violated,
            # With a limit, deepen by size until the limit's smallest are all found.
            enough=None if options.limit is None else lambda: _row_count(found, options.families) >= options.limit,
        )
    )
    if ground.largest_listed is not None:  # one of that size may be missing: none larger is shown
        for key in [key for key in found if len(key[0]) + len(key[1]) > ground.largest_listed]:
            del found[key]
    if not found and enumeration.status == "complete":
        enumeration.core = AspProblem(ground).explain_failure()  # why nothing realizes it
    realizations, cut = yield from search.smallest_first(ground.fresh)
    status = {"timeout": "timeout", "stopped": "bounded"}.get(enumeration.status, "bounded" if ground.bounded or cut else "complete")
    message, reasons = _message(realizations, status, ground, enumeration.core)
    return Proposal(request, status, realizations, message, reasons, len(ground.candidates), ground.complete_up_to)


@method("asp")
def _asp(problem: ViewUpdate, search: _Search, folding: Folding | None) -> Search:
    """clingo enumerates the subset-minimal change sets of the relevant ground problem, by size."""
    ground = _ground_problem(problem, search, folding)
    if isinstance(ground, Proposal):
        return ground
    options, request, deadline, progress = problem.options, problem.request, problem.deadline, search.progress
    limit = options.limit
    rows: list[Realization] = []
    level_status = "complete"
    try:
        asp = asp_problem(ground, deadline)
        for size, change_sets, level_status in asp.by_size(deadline):
            if ground.largest_listed is not None and size > ground.largest_listed:
                level_status = "stopped"  # one of the size before may be missing: none larger is shown
                break
            if progress:
                progress(f"{len(change_sets):,} change set" + ("" if len(change_sets) == 1 else "s") + f" of {size} changes; verifying")
            level: dict[tuple, tuple] = {}
            for change_set in change_sets:
                changes = [ground.candidates[k] for k in sorted(change_set)]
                insert = tuple(Atom(a[0], a[1]) for sign, a in changes if sign == "+")
                delete = tuple(Atom(a[0], a[1]) for sign, a in changes if sign == "-")
                insert, delete, fresh = canonical(insert, delete, ground.fresh, ground.free)
                level.setdefault((insert, delete), fresh)
            for item in _level_items(level, folding, options.families):
                if deadline is not None and time.monotonic() >= deadline:
                    level_status = "timeout"
                    break
                if isinstance(item, Family):
                    realization = _family_realization(item, problem.verifier, problem.index, problem.basis, ground.fresh, deadline)
                else:
                    realization = search.accept(item[0], item[1], level[item])
                rows.append(realization)
                yield realization
                if limit is not None and len(rows) >= limit:
                    level_status = "stopped"
                    break
            if level_status != "complete":
                break
    except Late:
        level_status = "timeout"
    status = {"complete": "complete", "stopped": "bounded", "timeout": "timeout"}[level_status]
    if status == "complete" and ground.bounded:
        status = "bounded"
    core = asp_problem(ground).explain_failure(deadline) if not rows and status == "complete" else []
    message, reasons = _message(rows, status, ground, core)
    return Proposal(request, status, rows, message, reasons, len(ground.candidates), ground.complete_up_to)


def _level_items(level: dict, folding: Folding | None, families: bool) -> list:
    """The change sets of one size in the documented order (by their atoms; a family at its first
    member): those drawing a value from a class of interchangeable values as the family of that
    value's orbit, the others folded by :func:`find_families`."""
    plain: list = []
    orbits: dict[tuple, Family] = {}
    for change_set in level:
        orbit = orbit_family(folding, *change_set) if folding is not None else None
        if orbit is None:
            plain.append(change_set)
        else:
            orbits.setdefault(orbit[0], orbit[1])
    plain.sort(key=_change_key)
    items = (find_families(plain) if families else plain) + list(orbits.values())

    def first(item):
        return _change_key(item.member(item.bindings[0]) if isinstance(item, Family) else item)

    return sorted(items, key=first)


def _change_key(change_set) -> tuple:
    return ([atom_key(a) for a in change_set[0]], [atom_key(a) for a in change_set[1]])


def _family_realization(family: Family, verifier: "Verifier", index: ModelIndex, basis: str, problem_fresh: list[str], deadline: float | None = None) -> Realization:
    """One realization standing for a family: its first and last members are verified by
    re-evaluation; every member is a model of the ground problem, which has the same request,
    constraints and minimality (blocked smaller sets) for all of them."""
    checked = None
    # An orbit's members are images of one another under automorphisms: one re-evaluation
    # checks them all (tests re-evaluate samples); other families re-evaluate first and last.
    sample = [family.bindings[0]] if family.interchangeable else [family.bindings[0], family.bindings[-1]]
    for binding in dict.fromkeys(sample):
        insert, delete = family.member(binding)
        verified = verifier.realizes(insert, delete)
        if verified is None:
            raise AssertionError(f"a member of a family does not verify: +{insert} -{delete}")
        checked = checked or verified
    ground_family = family

    def member_effects(binding: tuple) -> Delta:
        return verifier.effects(*ground_family.member(binding))

    where = family_condition(family, verifier.rules, index, problem_fresh, verifier.consistent, shown_atom, deadline)
    family = replace(family, condition=where.text, where=where)
    family = replace(family, pattern=(tuple(map(shown_atom, family.pattern[0])), tuple(map(shown_atom, family.pattern[1]))))
    named = {t for a in family.pattern[0] + family.pattern[1] for t in a.args}
    fresh = tuple(v for v in problem_fresh if v in named or any(v in b for b in family.bindings))
    checked_text = "the first was re-evaluated" if family.interchangeable else "the first and last were re-evaluated"
    why = (
        f"the others are its images under swapping values of {family.parameter} the database cannot tell apart"
        if family.interchangeable
        else "every one meets the request, every constraint and minimality in the ground problem"
    )
    return Realization(
        family.pattern[0],
        family.pattern[1],
        verifier.effects(*ground_family.member(ground_family.bindings[0]), checked),
        fresh,
        f"verified: {len(family):,} realizations, one per value of {family.parameter}; {checked_text}, {why}",
        basis,
        family=family,
        member_effects=member_effects,
        request=verifier.request,
    )


EXPLAINED_DERIVATIONS = 1_000
"""Derivations of a request atom a realization's kernel lines read (a closure in a dense graph has
exponentially many; past this many the line says it lists those of the first ones)."""


def kernel_lines(rules: Program, index: ModelIndex, verifier: Verifier, request: Request, insert, delete, shown: int = 5) -> list[str]:
    """Which kernels (seed 003, Def. 4) of each request atom the changes cut (a deletion: every
    kernel in the current state loses a fact) or complete (an insertion: the kernels of the new
    state that need an inserted fact). The kernels of the current state are found once per
    state (kept in the model index's tables), not once per realization."""
    from ..tableaux.explanations import kernel_search

    def text(kernel) -> str:
        return "{" + ", ".join(str(shown_atom(a)) for a in sorted(kernel, key=atom_key)) + "}"

    def of(atom, whole: bool) -> str:
        return str(atom) if whole else f"{atom} (of its first {EXPLAINED_DERIVATIONS:,} derivations; it has more)"

    out: list[str] = []
    deleted, inserted = set(delete), set(insert)
    for atom in sorted(request.delete, key=atom_key):
        key = ("kernels", atom, EXPLAINED_DERIVATIONS)
        if key not in index.tables:
            index.tables[key] = kernel_search(rules, index, atom, limit=EXPLAINED_DERIVATIONS)
        found, whole = index.tables[key]
        if found:
            cut = [k for k in found if k & deleted]  # only the shown ones are written out
            other = len(found) - len(cut)
            listed = (f"{text(k)} by " + ", ".join(f"-{shown_atom(a)}" for a in sorted(k & deleted, key=atom_key)) for k in cut[:shown])
            line = f"cuts the kernels of {of(atom, whole)}: " + "; ".join(listed) + (f"; and {len(cut) - shown} more" if len(cut) > shown else "")
            if other:
                line += f" ({other} more lose a negated condition)"
            out.append(line)
    if request.insert and inserted:
        verified = verifier.realizes(tuple(insert), tuple(delete))
        if verified is not None:
            after = ModelIndex(verified[0])
            for atom in sorted(request.insert, key=atom_key):
                found, whole = kernel_search(rules, after, atom, limit=EXPLAINED_DERIVATIONS)
                done = [k for k in found if k & inserted]
                if done:
                    out.append(f"completes the kernel{'s' if len(done) > 1 else ''} of {of(atom, whole)}: " + "; ".join(text(k) for k in done[:shown]) + (f"; and {len(done) - shown} more" if len(done) > shown else ""))
    return out


def _smallest_first(found: dict, limit, families: bool, verifier, index, basis, fresh_names) -> Generator[Realization, None, tuple[list[Realization], bool]]:
    """The realizations a method found in any order, as the asp method gives them: by size, then
    by their atoms, the alike ones of a size folded into families; cut to the ``limit`` smallest
    (a family counts once), each yielded in turn; the list, and whether the limit cut any."""
    rows: list[Realization] = []
    for item in _rows(found, families):
        if limit is not None and len(rows) >= limit:
            return rows, True
        rows.append(_family_realization(item, verifier, index, basis, fresh_names) if isinstance(item, Family) else found[item])
        yield rows[-1]
    return rows, False


def _rows(found, families: bool):
    """The rows of :func:`_smallest_first` in order: change sets, and families of alike ones."""
    by_size: dict[int, list] = {}
    for change_set in found:
        by_size.setdefault(len(change_set[0]) + len(change_set[1]), []).append(change_set)
    for size in sorted(by_size):
        level = sorted(by_size[size], key=_change_key)
        yield from find_families(level) if families else level


def _row_count(found, families: bool) -> int:
    return sum(1 for _ in _rows(found, families))


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


def canonical(insert: tuple[Atom, ...], delete: tuple[Atom, ...], fresh_names: list[str], kept: Set = frozenset()):
    """Rename fresh constants in order of first appearance, so that realizations differing only in
    the names of their new constants coincide. The names in ``kept`` (free values, one per column:
    nablog/solver/free.py) keep theirs."""
    fresh = set(fresh_names) - set(kept)
    fresh_names = [v for v in fresh_names if v in fresh]
    if not fresh:
        used = {v for a in (*insert, *delete) for v in a.args if v in kept}
        return sorted_atoms(insert), sorted_atoms(delete), tuple(sorted(used, key=constant_sort_key))

    def anonymous_key(a: Atom):
        return (a.pred, tuple((2, "") if v in fresh else constant_sort_key(v) for v in a.args))

    order: list[str] = []
    for a in sorted(insert, key=anonymous_key) + sorted(delete, key=anonymous_key):
        for v in a.args:
            if v in fresh and v not in order:
                order.append(v)
    renaming = {old: fresh_names[i] for i, old in enumerate(order)}

    def rename(a: Atom) -> Atom:
        return Atom(a.pred, tuple(renaming.get(v, v) if isinstance(v, str) else v for v in a.args))

    used = {v for a in (*insert, *delete) for v in a.args if v in kept}
    return sorted_atoms(map(rename, insert)), sorted_atoms(map(rename, delete)), tuple(renaming[o] for o in order) + tuple(sorted(used, key=constant_sort_key))


@method("transform")
def _transform(problem: ViewUpdate, search: _Search, folding: Folding | None) -> Search:
    """Seed 002's Algorithm 1 (see :mod:`nablog.solver.transform`); folding does not apply."""
    from .transform import Algorithm1

    options, request = problem.options, problem.request
    algorithm = Algorithm1(
        problem.rules, problem.facts, problem.model, herbrand=options.candidates == "herbrand", max_fresh=options.max_fresh, protected=list(problem.protected), exhaustive=options.exhaustive
    )
    deadline = None if problem.remaining is None else time.monotonic() + problem.remaining
    outcome = algorithm.run(request, deadline)
    dropped = 0
    for change_set in _verified(outcome.change_sets, problem.verifier):
        if change_set is None:
            dropped += 1
            continue
        if not search.accept_changes([(s, (p, a)) for s, p, a in change_set], outcome.fresh, "transform"):
            break
    realizations, cut = yield from search.smallest_first(outcome.fresh)
    n = len(realizations)
    text = f"{n} minimal realization" + ("" if n == 1 else "s") if n else "no realization found"
    text += f" (Algorithm 1, {outcome.rounds} round" + ("" if outcome.rounds == 1 else "s") + ")"
    if dropped:
        # A branch's changes that fail on the real database: Algorithm 1 decides on the
        # normalized program's disjunctive states, which may differ from re-evaluation.
        text += f" ({dropped} change set{'' if dropped == 1 else 's'} of Algorithm 1 did not verify and {'was' if dropped == 1 else 'were'} dropped)"
    if outcome.notes or cut:
        text += " (bounded: " + "; ".join(outcome.notes + (["the limit was reached"] if cut else [])) + ")"
    status = "bounded" if cut and outcome.status == "complete" else outcome.status
    return Proposal(request, status, realizations, text, [], 0)


def _verified(change_sets, verifier: Verifier):
    """Algorithm 1's change sets that are realizations, each shrunk to its subset-minimal
    realizing subsets (``None`` for one that realizes nothing)."""
    seen: set = set()
    for change_set in change_sets:
        items = sorted(change_set, key=lambda c: (c[1], [constant_sort_key(v) for v in c[2]], c[0]))

        def realizes(subset) -> bool:
            insert = tuple(Atom(p, a) for s, p, a in subset if s == "+")
            delete = tuple(Atom(p, a) for s, p, a in subset if s == "-")
            return verifier.realizes(insert, delete) is not None

        if not realizes(items):
            yield None
            continue
        if verifier.minimal(tuple(Atom(p, a) for s, p, a in items if s == "+"), tuple(Atom(p, a) for s, p, a in items if s == "-")):
            minimal = [frozenset(items)]
        else:
            minimal = []
            for size in range(len(items)):
                for subset in itertools.combinations(items, size):
                    if not any(m <= set(subset) for m in minimal) and realizes(subset):
                        minimal.append(frozenset(subset))
        for m in minimal:
            if m not in seen:
                seen.add(m)
                yield m


def _holds(model: Mapping[str, Set], request: Request) -> bool:
    return all(tuple(a.args) in model.get(a.pred, ()) for a in request.insert) and not any(
        tuple(a.args) in model.get(a.pred, ()) for a in request.delete
    )
