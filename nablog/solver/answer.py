"""Verify and order: the change sets a view-update method finds become the answer, each checked once.

``propose`` is prepare → method → verify → order (issue 23). A method (the registry of
:mod:`nablog.solver.propose`) is a generator: it yields each change set it finds as a
:class:`Found`, and :class:`Listed` ``(k)`` once every change set of up to k changes has been
yielded; it returns its :data:`Ending`, which words the proposal. :func:`answer`, the one stage
every method goes through, verifies each change set once (:meth:`Verifier.realizes`, and
:meth:`Verifier.minimal` unless the method proves minimality), folds alike realizations into
families, orders them smallest first (size, then atoms), cuts them to the limit and tells the
method to stop — it sends ``True`` into the method's generator — once the limit is filled or the
deadline has passed. A change set a method does not vouch for (seed 002's Algorithm 1 decides on
the normalized program's states, which may differ from re-evaluation) is shrunk to the minimal
realizing sets inside it, or dropped when it realizes nothing.

Two ways through the stage, by what is dearer:

* ``fold_first`` (the ``asp`` method): a size's change sets arrive together and are folded before
  they are verified — a family of thousands of members is verified by re-evaluating one or two
  members, not each — and yielded in the answer's order at :class:`Listed`.
* otherwise (``tableaux``, ``transform``): each change set is verified as it is found and yielded
  at once (streaming is iteration); with a limit, a size's realizations are yielded when the size
  is complete, in order, so that nothing past the limit is shown. The proposal lists them all in
  order, alike ones folded into families built from their verified members (nothing is verified
  twice).

>>> from nablog.lang import Atom
>>> canonical((Atom("p", ("n2", "n1")),), (), ["n1", "n2"])
((Atom(pred='p', args=('n1', 'n2')),), (), ('n1', 'n2'))
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Generator, Set
from dataclasses import dataclass, replace
from typing import Callable

from ..engines.lookup import ModelIndex
from ..lang import Atom, Delta, Program, constant_sort_key
from ..lang.delta import shown_atom
from .condition import family_condition
from .family import Family, find_families
from .realization import Proposal, Realization, Verifier, atom_key, sorted_atoms
from .request import Request
from .symmetry import Folding, orbit_family


@dataclass(frozen=True)
class Found:
    """A change set a method found, in stored names, before it is verified.

    ``fresh`` are the new constants it uses, ``names`` every new constant of the method's problem
    (a family names those of its members); ``minimal`` is the method's proof of subset-minimality
    (its wording), or empty when the stage must check it; ``exact`` says that a change set which
    does not verify is the method's error (raised), not a candidate to shrink or drop."""

    insert: tuple[Atom, ...]
    delete: tuple[Atom, ...]
    fresh: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    reason: str = ""
    minimal: str = ""
    exact: bool = True


@dataclass(frozen=True)
class Listed:
    """Every change set of up to ``size`` changes has been yielded."""

    size: int


@dataclass(frozen=True)
class Answered:
    """What the stage hands the method's :data:`Ending`: the realizations in the answer's order,
    why the search was stopped (``"limit"``, ``"timeout"``, or None when it ended by itself) and
    how many change sets realized nothing and were dropped."""

    rows: list[Realization]
    stopped: str | None = None
    dropped: int = 0


Ending = Callable[[Answered], Proposal]
MethodSearch = Generator["Found | Listed", "bool | None", Ending]
"""A method's search: change sets as found (the stage sends True when it must stop), its Ending."""
Search = Generator[Realization, None, Proposal]
"""A search: each realization as soon as it is verified, then the whole :class:`Proposal`."""


class Stage:
    """The verification and order of one answer: the problem's verifier, index, basis and bounds."""

    def __init__(self, verifier: Verifier, index: ModelIndex, rules: Program, request: Request, basis: str, limit: int | None, families: bool, deadline: float | None):
        self.verifier, self.index, self.rules, self.request = verifier, index, rules, request
        self.basis, self.limit, self.families, self.deadline = basis, limit, families, deadline
        self.dropped = 0
        self.folded: dict[tuple, Realization] = {}  # families made of verified realizations

    def verified(self, found: Found) -> list[tuple[tuple, Realization]]:
        """The realizations ``found`` is (one, or the minimal ones inside it), keyed by their
        canonical (insert, delete); none when it realizes nothing."""
        verifier = self.verifier
        checked = verifier.realizes(found.insert, found.delete)
        if checked is not None and (found.minimal or verifier.minimal(found.insert, found.delete)):
            if found.exact:
                return [((found.insert, found.delete), self.realization(found, found.insert, found.delete, found.fresh, checked))]
            insert, delete, fresh = canonical(found.insert, found.delete, list(found.names))
            return [((insert, delete), self.realization(found, insert, delete, fresh, checked))]
        if found.exact:
            raise AssertionError(f"a method proposed a change set that does not verify: +{found.insert} -{found.delete}")
        if checked is None:
            self.dropped += 1
            return []
        out = []
        for inner_insert, inner_delete, inner_checked in minimal_inside(found.insert, found.delete, verifier):
            insert, delete, fresh = canonical(inner_insert, inner_delete, list(found.names))
            out.append(((insert, delete), self.realization(found, insert, delete, fresh, inner_checked)))
        return out

    def realization(self, found: Found, insert, delete, fresh, checked) -> Realization:
        verifier, rules, index, request = self.verifier, self.rules, self.index, self.request
        minimal = found.minimal or "no smaller set of these changes does it"
        return Realization(
            sorted_atoms(map(shown_atom, insert)),
            sorted_atoms(map(shown_atom, delete)),
            verifier.effects(insert, delete, checked),
            fresh,
            f"verified: re-evaluated, the request holds and every constraint holds; {minimal}" + (f"\n{found.reason}" if found.reason else ""),
            self.basis,
            kernels=lambda: kernel_lines(rules, index, verifier, request, insert, delete),
            request=request,
        )

    def family(self, family: Family, names: tuple[str, ...], first: Realization | None = None) -> Realization:
        return family_realization(family, self.verifier, self.index, self.basis, list(names), self.deadline, first)


def answer(stage: Stage, search: MethodSearch, folding: Folding | None, fold_first: bool) -> Search:
    """Run a method's ``search`` through the ``stage``: each realization yielded once verified,
    the :class:`Proposal` of the method's ending returned (see the module's text)."""
    limit = stage.limit
    rows: list[Realization] = []  # fold_first: the answer so far, in order
    found: dict[tuple, Realization] = {}  # otherwise: every verified realization, by change set
    names: tuple[str, ...] = ()  # the problem's new constants (Algorithm 1's grow by rounds)
    level: dict[tuple, Found] = {}
    shown = 0  # otherwise, with a limit: how many of the ordered rows were yielded
    stopped: str | None = None
    reply = None
    while True:
        try:
            item = search.send(reply)
        except StopIteration as end:
            ending = end.value
            break
        reply = None
        if isinstance(item, Found):
            key = (item.insert, item.delete)
            names = max(names, item.names, key=len)
            if fold_first:
                level.setdefault(key, item)
                continue
            if key in found:
                continue  # found again (a deeper pass of the tableaux)
            for key, realization in stage.verified(item):
                if key not in found:
                    found[key] = realization
                    if limit is None:
                        yield realization
            continue
        if fold_first:
            for entry in _level_items(level, folding, stage.families):
                if stage.deadline is not None and time.monotonic() >= stage.deadline:
                    stopped = "timeout"
                    break
                if isinstance(entry, Family):
                    realization = stage.family(entry, names)
                else:
                    (_, realization), = stage.verified(level[entry])
                rows.append(realization)
                yield realization
                if limit is not None and len(rows) >= limit:
                    stopped = "limit"
                    break
            level.clear()
        elif limit is not None:
            ordered = _ordered(stage, found, names)
            for realization in ordered[shown:limit]:
                yield realization
            shown = min(len(ordered), limit)
            if len(ordered) >= limit:
                stopped = "limit"
        reply = stopped is not None
    if not fold_first:
        ordered = _ordered(stage, found, names)
        if limit is not None and len(ordered) > limit:
            stopped, ordered = "limit", ordered[:limit]
        if limit is not None:
            yield from ordered[shown:]
        rows = ordered
    return ending(Answered(rows, stopped, stage.dropped))


def _ordered(stage: Stage, found: dict[tuple, Realization], names: tuple[str, ...]) -> list[Realization]:
    """The verified realizations smallest first (size, then atoms), alike ones of a size folded
    into families (each from its verified first member: nothing is re-evaluated; each family's
    realization made once, however often the list is ordered)."""
    rows = []
    for item in _rows(found, stage.families):
        if isinstance(item, Family):
            key = (item.pattern, item.bindings)
            if key not in stage.folded:
                insert, delete = item.member(item.bindings[0])
                first = found.get((insert, delete)) or found.get((sorted_atoms(insert), sorted_atoms(delete)))
                stage.folded[key] = stage.family(item, names, first)
            rows.append(stage.folded[key])
        else:
            rows.append(found[item])
    return rows


def _rows(found, families: bool):
    """Change sets by size, then atoms; with ``families``, a size's alike ones folded."""
    by_size: dict[int, list] = {}
    for change_set in found:
        by_size.setdefault(len(change_set[0]) + len(change_set[1]), []).append(change_set)
    for size in sorted(by_size):
        level = sorted(by_size[size], key=_change_key)
        yield from find_families(level) if families else level


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


def minimal_inside(insert: tuple[Atom, ...], delete: tuple[Atom, ...], verifier: Verifier) -> list[tuple[tuple[Atom, ...], tuple[Atom, ...], tuple]]:
    """The subset-minimal realizations inside a change set that realizes the request, smallest
    first, each with what :meth:`Verifier.realizes` gave for it: every subset is tried by size,
    skipping those holding one found already (so each found one is minimal)."""
    items = sorted([("+", a) for a in insert] + [("-", a) for a in delete], key=lambda c: (c[1].pred, [constant_sort_key(v) for v in c[1].args], c[0]))
    found: list[frozenset] = []
    out = []
    for size in range(len(items) + 1):
        for subset in itertools.combinations(items, size):
            if any(m <= set(subset) for m in found):
                continue
            inner_insert = tuple(a for s, a in subset if s == "+")
            inner_delete = tuple(a for s, a in subset if s == "-")
            checked = verifier.realizes(inner_insert, inner_delete)
            if checked is not None:
                found.append(frozenset(subset))
                out.append((inner_insert, inner_delete, checked))
    return out


def family_realization(family: Family, verifier: Verifier, index: ModelIndex, basis: str, problem_fresh: list[str], deadline: float | None = None, first: Realization | None = None) -> Realization:
    """One realization standing for a family. Given ``first``, its first member verified already,
    every member was (the methods that verify as they find); else its first and last members are
    verified here by re-evaluation, and every member is a model of the ground problem, which has
    the same request, constraints and minimality (blocked smaller sets) for all of them."""
    checked = None
    if first is None:
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
    if first is not None:
        checked_text, effects = "each was re-evaluated", first.side_effects
    else:
        checked_text = "the first was re-evaluated" if family.interchangeable else "the first and last were re-evaluated"
        effects = verifier.effects(*ground_family.member(ground_family.bindings[0]), checked)
    why = (
        f"the others are its images under swapping values of {family.parameter} the database cannot tell apart"
        if family.interchangeable
        else "every one meets the request, every constraint and minimality in the ground problem"
    )
    if first is not None:
        why = "every one meets the request, every constraint and minimality"
    return Realization(
        family.pattern[0],
        family.pattern[1],
        effects,
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
