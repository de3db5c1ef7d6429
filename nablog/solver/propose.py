"""Answer a view-update request: relevant candidates, minimal change sets, verified realizations.

>>> from nablog.lang import parse
>>> from nablog.engines import PythonEngine
>>> program = parse("p(X) :- q(X), not r(X). q(1). r(1).")
>>> from nablog.lang import separate_facts
>>> rules, facts = separate_facts(program)
>>> proposal = propose(rules, facts, PythonEngine().evaluate(rules, facts), "+p(1).")
>>> proposal.status, [str(r.changes.lines()) for r in proposal]
('complete', ["['-r(1)']"])
"""

from __future__ import annotations

import functools
import gc
import math
import itertools
import time
from collections.abc import Set
from dataclasses import replace
from typing import Callable, Iterable, Mapping

from ..engines import PythonEngine
from ..engines.lookup import ModelIndex
from ..engines.violations import find_violations
from ..lang import SPLIT_PREFIX, Atom, NablogError, Program, constant_sort_key
from ..lang.delta import shown_atom
from .asp import AspProblem, Late
from ..engines.compute import refuse_computation
from .condition import family_condition
from .family import FAMILY_MIN, Family, find_families
from .symmetry import Folding, Unfoldable, orbit_family, symmetric
from .prepared import request_folding
from .whole import asp_problem, has_aggregates, whole_problem
from .ground import Bounds, GroundAtom, Relevance, ground_atom, refuse_aggregates, supported_first
from .realization import Proposal, Realization, Update, Verifier, atom_key, sorted_atoms
from .problem import protections, request_universe
from .request import Request, check_request, parse_request

CANDIDATE_POLICIES = ("attribute", "herbrand")
METHODS = ("asp", "transform", "tableaux", "tableaux-materialized")


def _without_collector(function):
    """Run with Python's cyclic garbage collector paused: a database of 1e6 facts keeps millions
    of objects alive, and a full collection triggered by the search's small allocations took a
    second of a proposal that otherwise takes one (org chart, 1e6 facts). Cycles made meanwhile
    are collected afterwards."""

    @functools.wraps(function)
    def paused(*args, **kwargs):
        collecting = gc.isenabled()
        gc.disable()
        try:
            return function(*args, **kwargs)
        finally:
            if collecting:
                gc.enable()

    return paused


@_without_collector
def propose(
    rules: Program,
    facts: Mapping[str, Set],
    model: Mapping[str, Set],
    request: Request | str,
    *,
    method: str = "asp",
    limit: int | None = None,
    timeout: float | None = None,
    candidates: str = "attribute",
    max_fresh: int = 2,
    protect: Iterable[str | Atom] = (),
    max_rounds: int = 20,
    basis: str = "",
    index: ModelIndex | None = None,
    violations: list | None = None,
    exhaustive: bool = True,
    families: bool = True,
    on_realization: Callable[[Realization], None] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Proposal:
    """Every subset-minimal realization of ``request`` (seed 002, Def. 7; seed 003, §3.2).

    Parameters
    ----------
    rules : Program
        The database's rules and constraints (facts separated out, see ``separate_facts``).
    facts, model : mappings
        Base facts and the current perfect model (python engine's or any engine's).
    request : Request or str
        Ground atoms to insert and delete, e.g. ``"+staff_chair(aravindan, gerhard)."``.
    method : str
        ``"asp"``: clingo enumerates subset-minimal change sets among goal-directed candidates
        (with aggregates, over the relevant program grounded whole: :mod:`nablog.solver.whole`);
        ``"transform"``: seed 002's Algorithm 1 (see :mod:`nablog.solver.transform`);
        ``"tableaux"``, ``"tableaux-materialized"``: seed 003's update tableaux with the strong
        minimality test, or over the materialized model (see :mod:`nablog.solver.tableaux`).
    limit : int, optional
        Stop after this many realizations, the smallest (status ``bounded``); a family counts once.
    timeout : float, optional
        Seconds for the whole answer — candidates, grounding, solving, verification and side
        effects (status ``timeout``, with what was found so far).
    candidates : str
        Values for existential variables: ``"attribute"`` (values already in the attribute
        positions the variable meets) or ``"herbrand"`` (every constant), plus fresh constants.
    max_fresh : int
        At most this many fresh constants (``new1``, ``new2``, …).
    protect : relation names or atoms
        Base relations or facts that must not change (seed 003's immutable part), on top of the
        program's ``#protect`` declarations.
    basis : str
        A fingerprint of the stored data, kept with each realization so that applying it to
        changed data can be refused.
    exhaustive : bool
        For ``method="transform"``: go on past the first round with realizations (the default:
        every minimal realization); ``False`` stops there, as seed 002's Algorithm 1 is written.
    families : bool
        Fold realizations that differ only in the value of a parameter into one
        (:mod:`nablog.solver.family`); ``Realization.members()`` lists them.
    on_realization, progress : callables, optional
        Called with each realization as soon as it is verified, and with a line on the phase the
        search is in (for streaming output and progress at a terminal).
    index, violations : optional
        A :class:`ModelIndex` over ``model`` and the model's constraint violations, when the
        caller keeps them between requests (they depend on the database state only).
    """
    start = time.monotonic()
    check_bounds(limit, timeout)
    deadline = None if timeout is None else start + timeout
    if method not in METHODS:
        raise NablogError(f"unknown view-update method {method!r}", hint="choose one of " + ", ".join(METHODS))
    if candidates not in CANDIDATE_POLICIES:
        raise NablogError(f"unknown candidate policy {candidates!r}", hint="choose attribute or herbrand")
    if max_fresh < 0:
        raise NablogError("max_fresh must be 0 or more", hint="give the number of new constants allowed")
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
        return Proposal(request, "complete", [Realization((), (), basis=basis)], "the request already holds: nothing to change")

    index = index or ModelIndex(model)
    base = (set(rules.signatures) | set(facts)) - set(rules.derived)
    protected = protections(rules, protect, split)
    universe = request_universe(rules, index, request)
    remaining = None if timeout is None else max(0.0, timeout - (time.monotonic() - start))
    verifier = Verifier(rules, model, request, consistent=not violations)
    found: dict[tuple, Realization] = {}

    def accept(insert: tuple[Atom, ...], delete: tuple[Atom, ...], fresh: tuple[str, ...], method_name: str = "asp", reason: str = "", certified: bool = False) -> Realization:
        # Minimality is re-evaluated subset by subset only where no proof came with the change set:
        # the asp method's holds by construction (smaller change sets were found first and blocked
        # in the ground problem; the re-check cost seconds per realization at 1e6 facts), the
        # tableaux' by their Def. 15/19 certificate (tests/solver/test_tableaux_method.py checks it
        # against the re-check).
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
            basis,
            kernels=lambda: kernel_lines(rules, index, verifier, request, insert, delete),
        )

    def accept_changes(changes: list[tuple[str, GroundAtom]], fresh_names: list[str], method_name: str, reason: str = "", certified: bool = False) -> bool:
        insert = tuple(Atom(a[0], a[1]) for s, a in changes if s == "+")
        delete = tuple(Atom(a[0], a[1]) for s, a in changes if s == "-")
        insert, delete, fresh = canonical(insert, delete, fresh_names)
        if (insert, delete) not in found:
            found[(insert, delete)] = accept(insert, delete, fresh, method_name, reason, certified)
        # These methods find realizations in no order of size: the search goes on, and the limit
        # is applied to the list sorted smallest first (see _smallest_first).
        return True

    def smallest_first(fresh_names: list[str]) -> tuple[list[Realization], bool]:
        return _smallest_first(found, limit, families, verifier, index, basis, fresh_names, on_realization)

    if method == "transform":
        return _transform(rules, facts, model, request, candidates, max_fresh, protected, remaining, accept_changes, smallest_first, exhaustive, verifier)

    violated = [(v.constraint, b) for v in violations for b in v.bindings]
    folding = None
    if families and method == "asp" and symmetric(rules):
        if progress:
            progress("finding interchangeable values")
        folding = request_folding(rules, model, base, request, protected, index)
    streamed: set = set()
    if on_realization is not None:
        stream = on_realization

        def on_realization(realization: Realization) -> None:
            # Once: a search that starts again unfolded (below) finds the first ones again.
            key = (realization.insert, realization.delete)
            if key not in streamed:
                streamed.add(key)
                stream(realization)

    try:
        proposal = _asp_or_tableaux(rules, model, base, request, method, limit, deadline, remaining, candidates, max_fresh, max_rounds, protected, universe, index, basis, families, verifier, violated, accept, accept_changes, smallest_first, found, on_realization, progress, folding)
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
        found.clear()
        return _asp_or_tableaux(rules, model, base, request, method, limit, deadline, remaining, candidates, max_fresh, max_rounds, protected, universe, index, basis, families, verifier, violated, accept, accept_changes, smallest_first, found, on_realization, progress, None)


def _asp_or_tableaux(rules, model, base, request, method, limit, deadline, remaining, candidates, max_fresh, max_rounds, protected, universe, index, basis, families, verifier, violated, accept, accept_changes, smallest_first, found, on_realization, progress, folding) -> Proposal:
    def relevance(supported: bool) -> Relevance:
        return Relevance(
            rules,
            model,
            base,
            index=index,
            herbrand=candidates == "herbrand",
            bounds=Bounds(max_fresh=max_fresh, max_rounds=max_rounds),
            protect=protected,
            universe=universe,
            group_fds=True,  # one at-most-one group per key, not a denial instance per pair
            conceal=folding.hides if folding is not None else None,
            visible=folding.visible if folding is not None else None,
            supported=supported,
        )

    if progress:
        progress("finding the relevant candidate changes")
    if has_aggregates(rules):  # (only the asp method gets here with them)
        problem = whole_problem(rules, model, base, request, herbrand=candidates == "herbrand", max_fresh=max_fresh, protect=protected, universe=universe)
    else:
        problem = supported_first(relevance, [ground_atom(a) for a in request.insert], [ground_atom(a) for a in request.delete], violated, deadline)
    if problem.timed_out:
        return Proposal(request, "timeout", [], "no realization found before the timeout (the search was stopped while finding candidate changes)", [], len(problem.candidates))
    if progress:
        progress(f"{len(problem.candidates):,} candidate changes; solving")
    if problem.fixed_conflicts:
        return Proposal(request, "complete", [], "no realization: " + problem.fixed_conflicts[0], list(problem.fixed_conflicts), len(problem.candidates))

    if method.startswith("tableaux"):
        from .asp import Enumeration
        from .tableaux import enumerate_realizations

        enumeration = Enumeration(
            enumerate_realizations(
                problem,
                index,
                lambda changes, why: accept_changes(changes, problem.fresh, method, why, certified=True),
                remaining,
                # Over a database that violates a constraint now, the IDB+ tableau misses
                # realizations (found by the thorough brute-force test): the minimality-test
                # variant answers instead.
                materialized=method == "tableaux-materialized" and not violated,
                # With a limit, deepen by size until the limit's smallest are all found.
                enough=None if limit is None else lambda: _row_count(found, families) >= limit,
            )
        )
        if not found and enumeration.status == "complete":
            enumeration.core = AspProblem(problem).explain_failure()  # why nothing realizes it
        realizations, cut = smallest_first(problem.fresh)
        status = {"timeout": "timeout", "stopped": "bounded"}.get(enumeration.status, "bounded" if problem.bounded or cut else "complete")
        message, reasons = _message(realizations, status, problem, enumeration.core)
        return Proposal(request, status, realizations, message, reasons, len(problem.candidates))

    rows: list[Realization] = []
    level_status = "complete"
    try:
        asp = asp_problem(problem, deadline)
        for size, change_sets, level_status in asp.by_size(deadline):
            if progress:
                progress(f"{len(change_sets):,} change set" + ("" if len(change_sets) == 1 else "s") + f" of {size} changes; verifying")
            level: dict[tuple, tuple] = {}
            for change_set in change_sets:
                changes = [problem.candidates[k] for k in sorted(change_set)]
                insert = tuple(Atom(a[0], a[1]) for sign, a in changes if sign == "+")
                delete = tuple(Atom(a[0], a[1]) for sign, a in changes if sign == "-")
                insert, delete, fresh = canonical(insert, delete, problem.fresh)
                level.setdefault((insert, delete), fresh)
            for item in _level_items(level, folding, families):
                if deadline is not None and time.monotonic() >= deadline:
                    level_status = "timeout"
                    break
                if isinstance(item, Family):
                    realization = _family_realization(item, verifier, index, basis, problem.fresh)
                else:
                    realization = accept(item[0], item[1], level[item])
                rows.append(realization)
                if on_realization:
                    on_realization(realization)
                if limit is not None and len(rows) >= limit:
                    level_status = "stopped"
                    break
            if level_status != "complete":
                break
    except Late:
        level_status = "timeout"
    status = {"complete": "complete", "stopped": "bounded", "timeout": "timeout"}[level_status]
    if status == "complete" and problem.bounded:
        status = "bounded"
    core = asp_problem(problem).explain_failure(deadline) if not rows and status == "complete" else []
    message, reasons = _message(rows, status, problem, core)
    return Proposal(request, status, rows, message, reasons, len(problem.candidates))


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
    items = find_families(plain, FAMILY_MIN if families else len(plain) + 1) + list(orbits.values())

    def first(item):
        return _change_key(item.member(item.bindings[0]) if isinstance(item, Family) else item)

    return sorted(items, key=first)


def _change_key(change_set) -> tuple:
    return ([atom_key(a) for a in change_set[0]], [atom_key(a) for a in change_set[1]])


def _family_realization(family: Family, verifier: "Verifier", index: ModelIndex, basis: str, problem_fresh: list[str]) -> Realization:
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

    def member_effects(binding: tuple) -> Update:
        return verifier.effects(*ground_family.member(binding))

    where = family_condition(family, verifier.rules, index, problem_fresh, verifier.consistent, shown_atom)
    family = replace(family, condition=where.text, where=where)
    family = replace(family, pattern=(tuple(map(shown_atom, family.pattern[0])), tuple(map(shown_atom, family.pattern[1]))))
    fresh = tuple(v for v in problem_fresh if any(v in b for b in family.bindings))
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
    )


def kernel_lines(rules: Program, index: ModelIndex, verifier: Verifier, request: Request, insert, delete, shown: int = 5) -> list[str]:
    """Which kernels (seed 003, Def. 4) of each request atom the changes cut (a deletion: every
    kernel in the current state loses a fact) or complete (an insertion: the kernels of the new
    state that need an inserted fact)."""
    from ..tableaux.explanations import kernels

    def text(kernel) -> str:
        return "{" + ", ".join(str(shown_atom(a)) for a in sorted(kernel, key=atom_key)) + "}"

    out: list[str] = []
    deleted, inserted = set(delete), set(insert)
    for atom in sorted(request.delete, key=atom_key):
        found = kernels(rules, index, atom, limit=10_000)
        if found:
            cut = [f"{text(k)} by " + ", ".join(f"-{shown_atom(a)}" for a in sorted(k & deleted, key=atom_key)) for k in found if k & deleted]
            other = len(found) - len(cut)
            line = f"cuts the kernels of {atom}: " + "; ".join(cut[:shown]) + (f"; and {len(cut) - shown} more" if len(cut) > shown else "")
            if other:
                line += f" ({other} more lose a negated condition)"
            out.append(line)
    if request.insert and inserted:
        verified = verifier.realizes(tuple(insert), tuple(delete))
        if verified is not None:
            after = ModelIndex(verified[0])
            for atom in sorted(request.insert, key=atom_key):
                done = [k for k in kernels(rules, after, atom, limit=10_000) if k & inserted]
                if done:
                    out.append(f"completes the kernel{'s' if len(done) > 1 else ''} of {atom}: " + "; ".join(text(k) for k in done[:shown]) + (f"; and {len(done) - shown} more" if len(done) > shown else ""))
    return out


def _smallest_first(found: dict, limit, families: bool, verifier, index, basis, fresh_names, on_realization) -> tuple[list[Realization], bool]:
    """The realizations a method found in any order, as the asp method gives them: by size, then
    by their atoms, the alike ones of a size folded into families; cut to the ``limit`` smallest
    (a family counts once), and whether the limit cut any."""
    rows: list[Realization] = []
    for item in _rows(found, families):
        if limit is not None and len(rows) >= limit:
            return rows, True
        rows.append(_family_realization(item, verifier, index, basis, fresh_names) if isinstance(item, Family) else found[item])
        if on_realization:
            on_realization(rows[-1])
    return rows, False


def _rows(found, families: bool):
    """The rows of :func:`_smallest_first` in order: change sets, and families of alike ones."""
    by_size: dict[int, list] = {}
    for change_set in found:
        by_size.setdefault(len(change_set[0]) + len(change_set[1]), []).append(change_set)
    for size in sorted(by_size):
        level = sorted(by_size[size], key=_change_key)
        yield from find_families(level, FAMILY_MIN if families else len(level) + 1)


def _row_count(found, families: bool) -> int:
    return sum(1 for _ in _rows(found, families))


def check_bounds(limit: int | None, timeout: float | None) -> None:
    """A limit is a whole number of at least 1 and a timeout a finite number of seconds above 0."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise NablogError(f"limit must be a whole number of at least 1, not {limit!r}", hint="leave the limit out for every realization")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0):
        raise NablogError(f"timeout must be a finite number of seconds above 0, not {timeout!r}", hint="leave the timeout out to search without one")


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
    elif status == "timeout" and n:
        text += " (timeout: the search was stopped; these are the realizations found so far)"
    return text, reasons


def canonical(insert: tuple[Atom, ...], delete: tuple[Atom, ...], fresh_names: list[str]):
    """Rename fresh constants in order of first appearance, so that realizations differing only in
    the names of their new constants coincide."""
    fresh = set(fresh_names)
    if not fresh:
        return sorted_atoms(insert), sorted_atoms(delete), ()

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

    return sorted_atoms(map(rename, insert)), sorted_atoms(map(rename, delete)), tuple(renaming[o] for o in order)


def _transform(rules, facts, model, request, candidates, max_fresh, protected, remaining, accept_changes, smallest_first, exhaustive, verifier) -> Proposal:
    from .transform import Algorithm1

    algorithm = Algorithm1(
        rules, facts, model, herbrand=candidates == "herbrand", max_fresh=max_fresh, protected=protected, exhaustive=exhaustive
    )
    deadline = None if remaining is None else time.monotonic() + remaining
    outcome = algorithm.run(request, deadline)
    dropped = 0
    for change_set in _verified(outcome.change_sets, verifier):
        if change_set is None:
            dropped += 1
            continue
        if not accept_changes([(s, (p, a)) for s, p, a in change_set], outcome.fresh, "transform"):
            break
    realizations, cut = smallest_first(outcome.fresh)
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
