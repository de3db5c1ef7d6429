"""Goal-directed relevance for view updating: candidate base changes and the ground program over them.

From a request, top-down view-update reasoning in the style of seed 002, Def. 9 (on unnormalized
rules) finds the base facts whose insertion or deletion can help: ``∇+p(t)`` asks for some rule
instance of ``p(t)`` whose positive literals become true and whose negated ones become false,
``∇−p(t)`` for every possibly true instance to lose a literal. Existential variables (seed 002
Def. 9 case 5) range over the values already in the attribute positions they meet, or the whole
Herbrand universe, plus fresh constants — one new one per round, at most ``max_fresh``.

Bottom-up, the candidate changes are propagated as *possible* changes (atoms that may become true,
``plus``, or false, ``minus``, for some subset of the candidates). Denial instances that may become
true and required atoms that may become false ask for repairs (seed 002 Def. 10, case 2); goals
whose reasoning relied on an atom that may now change are re-examined, which yields compensation
of side effects (Def. 10, case 3). Rounds alternate until no new goal appears (Algorithm 1's
outer loop, computed over possible states rather than one disjunctive state).

Everything outside ``plus``/``minus`` keeps its value in the current model, so the ground program
handed to the solver only contains rule instances of atoms that may change: its size depends on
the relevant part of the database, not on the database.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping

from ..engines.lookup import ModelIndex
from ..engines.violations import name_anonymous
from ..lang import Atom, Comparison, Constant, Denial, FdShape, Literal, NablogError, Program, Requirement, Rule, Var, constant_sort_key, fd_shape
from ..lang.ast import Aggregate

from . import possible as possible_state
from .bindings import GroundAtom, _compare, _compute, _computed, _ground, _order, _pattern, _unify, through_comparison
from .possible import MINUS, PLUS, PossibleState
from .demand import Demand, request_only
from .floors import LowerBounds
from .free import free_columns



def ground_atom(atom: Atom) -> GroundAtom:
    return (atom.pred, tuple(atom.args))


def to_atom(ground: GroundAtom) -> Atom:
    return Atom(ground[0], ground[1])


@dataclass
class Bounds:
    """Limits of the relevance search; hitting one makes the answer ``bounded``."""

    max_fresh: int = 2
    max_rounds: int = 20
    max_goals: int = 200_000


@dataclass
class GroundProblem:
    """The relevant part of a view-update problem, ready for a solver.

    ``candidates`` lists base changes as (sign, ground atom); ``rules`` are ground rule instances
    over atoms that may change (head, positive body, negative body); ``denials`` are ground
    constraint instances (name, positive atoms, negative atoms) over such atoms; ``require_true``
    and ``require_false`` are the request and required atoms. Atoms not mentioned keep their
    current value. ``fixed_conflicts`` name request atoms or constraints that fail whatever
    changes are made; ``protected`` candidates may only change if the user lifts the protection.
    """

    candidates: list[tuple[str, GroundAtom]] = field(default_factory=list)
    protected: set[tuple[str, GroundAtom]] = field(default_factory=set)
    rules: list[tuple[GroundAtom, tuple[GroundAtom, ...], tuple[GroundAtom, ...]]] = field(default_factory=list)
    denials: list[tuple[str, tuple[GroundAtom, ...], tuple[GroundAtom, ...]]] = field(default_factory=list)
    # Functional dependencies over one key group each: (name, per distinct dependent value
    # (true whatever changes?, atoms that may change)); at most one value may hold. Pairwise
    # denial instances would be quadratic in the candidates of the group.
    at_most_one: list[tuple[str, list[tuple[bool, tuple[GroundAtom, ...]]]]] = field(default_factory=list)
    require_true: list[tuple[str, GroundAtom]] = field(default_factory=list)
    require_false: list[tuple[str, GroundAtom]] = field(default_factory=list)
    fixed_conflicts: list[str] = field(default_factory=list)
    fresh: list[str] = field(default_factory=list)
    free: set[str] = field(default_factory=set)  # the fresh ones that are free values (one per column)
    bounded: list[str] = field(default_factory=list)
    timed_out: bool = False  # the deadline passed while the problem was being built: it is partial
    # Every realization of at most this many changes uses only these candidates (None: every
    # realization does): the search left out values or goals through which a realization needs
    # more changes (see Relevance.floor).
    complete_up_to: int | None = None

    @property
    def largest_listed(self) -> int | None:
        """The largest realization an answer over this problem lists (None: any): one change
        past ``complete_up_to``. Those of that size it finds are true and minimal, and any it
        misses has at least that many changes, so "smallest first" holds; larger ones are not
        shown, since one of their size may be missing while one of the next is shown."""
        return None if self.complete_up_to is None else self.complete_up_to + 1


def refuse_aggregates(program: Program, what: str, hint: str = "query, check and propagate handle aggregates; for view updates and repair, keep them out of the views and constraints involved") -> None:
    """Aggregates have no encoding in this module's ground problems (the asp method and repair
    hand such programs to clingo whole, see :mod:`nablog.solver.whole`): a method that only has
    these says so rather than answer wrongly."""
    for statement in (*program.rules, *program.denials):
        for element in statement.body:
            if isinstance(element, Aggregate):
                raise NablogError(
                    f"{what} does not handle aggregates yet: '{element}' is used by '{statement}'",
                    element.loc or statement.loc,
                    hint,
                )


class Relevance(LowerBounds):
    """Computes a :class:`GroundProblem` for one request over one database state."""

    def __init__(
        self,
        rules: Program,
        model: Mapping[str, Set],
        base: Iterable[str],
        *,
        index: ModelIndex | None = None,
        herbrand: bool = False,
        bounds: Bounds | None = None,
        protect: Iterable[GroundAtom | str] = (),
        universe: Iterable[Constant] = (),
        group_fds: bool = False,
        conceal: Callable[[Constant], bool] | None = None,
        visible: Callable[[str, int], set | None] | None = None,
        supported: bool = False,
        free_values: bool = False,
    ):
        # Each `_` of a positive literal gets a name, so that every rule instance is ground.
        self.rules = [Rule(r.head, name_anonymous(r.body), r.loc) for r in rules.rules if not r.is_fact()]
        self.by_head: dict[str, list[Rule]] = {}
        self.by_body: dict[str, list[tuple[Rule, int]]] = {}
        for rule in self.rules:
            for head in rule.head:
                self.by_head.setdefault(head.pred, []).append(rule)
            for i, b in enumerate(rule.body):
                if isinstance(b, Literal):
                    self.by_body.setdefault(b.atom.pred, []).append((rule, i))
        named = self.named = rules.named_constraints()
        self.column_names = rules.column_names
        self.denials = [(name, Denial(name_anonymous(c.body), c.name, c.loc)) for name, c in named if isinstance(c, Denial)]
        self.requirements = [(name, c) for name, c in named if isinstance(c, Requirement)]
        self.denials_by_pred: dict[str, list[tuple[str, Denial, int]]] = {}
        for name, d in self.denials:
            for i, b in enumerate(d.body):
                if isinstance(b, Literal):
                    self.denials_by_pred.setdefault(b.atom.pred, []).append((name, d, i))
        # With ``group_fds``, a functional-dependency denial becomes one at-most-one constraint per
        # key group instead of a denial instance per pair of conflicting tuples.
        self.fds: dict[str, FdShape] = {}
        if group_fds:
            self.fds = {name: shape for name, d in self.denials if (shape := fd_shape(d)) is not None}
        self.fd_groups: dict[tuple[str, tuple], _KeyGroup] = {}
        self.base = set(base)
        self.derived = set(rules.derived)
        # Predicates no rule body and no constraint reads: of these only the requested atoms
        # matter, so possible changes are not propagated into their other atoms (an insertion
        # through a join would otherwise mark every employee's manager as changeable).
        read = {b.atom.pred for r in self.rules for b in r.body if isinstance(b, Literal)}
        read |= {b.atom.pred for _, d in self.denials for b in d.body if isinstance(b, Literal)}
        read |= {c.atom.pred for _, c in self.requirements}
        self.unread = self.derived - read
        # Request-only predicates (a recursive view read by nothing else): possible changes are
        # followed only into the atoms a derivation of a goal can use (nablog/solver/demand.py).
        constrained = {b.atom.pred for _, d in self.denials for b in d.body if isinstance(b, Literal)} | {c.atom.pred for _, c in self.requirements}
        self.demand = Demand(self, request_only(self.rules, constrained, self.derived))
        self._work: list[tuple[str, GroundAtom]] = []
        self._changed: list[tuple[str, GroundAtom]] = []
        self.requested: set[GroundAtom] = set()
        self.state = PossibleState(index or ModelIndex(model))
        self.herbrand = herbrand
        self.bounds = bounds or Bounds()
        self.protected_relations = {p for p in protect if isinstance(p, str)}
        self.protected_facts = {p for p in protect if not isinstance(p, str)}
        self.universe = universe if isinstance(universe, Set) else set(universe)
        # Values an existential variable does not take: the non-representatives of classes of
        # interchangeable values (see :mod:`nablog.solver.symmetry`).
        self.conceal = conceal
        # The values at a position of a relation now, less the concealed ones, when the caller
        # keeps them (None for a relation it does not): filtering every value costs a lookup each.
        self.visible = visible
        self._domains: dict[tuple, list[Constant]] = {}
        self.problem = GroundProblem()
        self._fresh_by_round: dict[int, str] = {}
        self._round = 1
        self.deadline: float | None = None
        # With ``supported``, existential variables take only the values bound lookups give them
        # (see :meth:`_supported`) and atoms true now are not derived anew; ``generic`` counts
        # the values of their domains and the goals left out; ``floor`` is the fewest changes a
        # realization through any of them needs (a lower bound; None while nothing is left out).
        self.supported = supported
        self.generic = 0
        self.floor: int | None = None
        # Goals and possible changes carry a cost: the fewest changes of a realization through
        # them that the search knows of (a lower bound: the changes along the chain of goals
        # from the request, seed 002 Def. 9-10, that reached them). Once ``floor`` is known,
        # goals costing more are left out (see :meth:`solve`). ``cost`` is a goal's (its own
        # change counted), ``reach`` a possible change's.
        self.cost: dict[tuple[str, GroundAtom], int] = {}
        self.reach: dict[tuple[str, GroundAtom], int] = {}
        self._least = 0
        self._instance_cost: dict[tuple, int] = {}
        self.keys = _functional_dependencies(self.denials)
        self._floors: dict[tuple, int] = {}  # _derived_floor of ground atoms
        self._now_rows: dict[tuple, object] = {}  # see _rows_now
        self.monotone = not any(isinstance(b, Literal) and not b.positive for r in self.rules for b in r.body)
        # With ``free_values``, a column no rule or constraint reads (nablog/solver/free.py) gets
        # one new constant of its own in every inserted atom instead of a disjunct per value.
        self.free_values = free_values
        self.free: dict[str, frozenset[int]] = {}
        self._free_names: dict[tuple[str, int], str] = {}
        self._free_vars: dict[int, dict[Var, tuple[str, int]]] = {}
        self._singles: dict[int, dict[Var, tuple[str, int]]] = {}
        self._round_fresh: list[str] = []  # the new constants of rounds (max_fresh counts these)
        self._wide_blockers: set[str] = set()  # relations whose blockers were narrowed (said once)
        self._refs: dict[str, list[tuple[Atom, Atom]]] = {}
        self._ticks = 0
        self._at_floor = 0  # instances kept that need exactly `floor` changes (see _supported)
        # The instances of a goal in the search by bound lookups, kept for its re-examinations
        # (see hypothetical_instances), and what they depend on in the possible state.
        self._instances_kept: dict[tuple, list[dict[Var, Constant]]] = {}
        self._plus_log: dict[str, list[tuple]] = {}
        self._novel: dict[str, set] = {}
        self._novel_seen: dict[str, int] = {}

    # -- fresh constants and domains ---------------------------------------------------------------

    def _fresh_for_round(self, round_: int) -> list[str]:
        """Fresh constants for an expansion in a round: every one made so far, plus one new
        constant for the first expansion of a round that needs one, while fewer than
        ``max_fresh`` exist (seed 002, §4.1: one new constant per round)."""
        if round_ not in self._fresh_by_round:
            if len(self._round_fresh) >= self.bounds.max_fresh:
                self.problem.bounded.append(
                    f"round {round_} needs a new constant for a projection, but max_fresh={self.bounds.max_fresh} are in use"
                )
                self._fresh_by_round[round_] = ""
            else:
                name = _fresh_name(len(self._round_fresh) + 1, self.universe)
                self.problem.fresh.append(name)
                self._round_fresh.append(name)
                self._fresh_by_round[round_] = name
        return list(self._round_fresh)

    def _free_value(self, pred: str, i: int) -> str:
        """The new constant standing for every value of the free column ``i`` of ``pred``: named
        after the column (``new_composer``), so that ``--set new_composer=...`` reads as what it
        fills."""
        name = self._free_names.get((pred, i))
        if name is None:
            columns = self.column_names.get(pred)
            name = f"new_{columns[i]}" if columns and i < len(columns) else f"new_{pred}_{i + 1}"
            if name in self.universe or name in self.problem.fresh:
                name = f"new_{pred}_{columns[i] if columns and i < len(columns) else i + 1}"  # two relations' columns of one name
            while name in self.universe or name in self.problem.fresh:
                name += "_"
            self._free_names[(pred, i)] = name
            self.problem.fresh.append(name)
            self.problem.free.add(name)
        return name

    def _single_variables(self, rule: Rule) -> dict[Var, tuple[str, int]]:
        """The variables of ``rule`` that occur once, in a positive literal (``_`` named
        apart), with their place: any row matching the rest of the literal will do there."""
        found = self._singles.get(id(rule))
        if found is None:
            count: dict[Var, int] = {}
            for element in (*rule.head, *rule.body):
                terms = element.args if isinstance(element, Atom) else element.atom.args if isinstance(element, Literal) else tuple(getattr(element, "variables", tuple)())
                for t in terms:
                    if isinstance(t, Var):
                        count[t] = count.get(t, 0) + 1
            found = {}
            for b in rule.body:
                if isinstance(b, Literal) and b.positive:
                    for i, t in enumerate(b.atom.args):
                        if isinstance(t, Var) and count.get(t) == 1:
                            found[t] = (b.atom.pred, i)
            self._singles[id(rule)] = found
        return found

    def _free_variables(self, rule: Rule) -> dict[Var, tuple[str, int]]:
        """The variables of ``rule`` that occur once, in a positive literal at a free column."""
        found = self._free_vars.get(id(rule))
        if found is None:
            found = self._free_vars[id(rule)] = {t: (pred, i) for t, (pred, i) in self._single_variables(rule).items() if i in self.free.get(pred, ())}
        return found

    def _tick(self) -> bool:
        """Whether the deadline has passed, looked at once every 1,024 calls (inner loops), and
        at every call once it has."""
        if self.problem.timed_out:
            return True
        self._ticks += 1
        return self._ticks % 1024 == 0 and self._late()

    def _domain(self, var: Var, rule: Rule, round_: int) -> list[Constant]:
        places = [(b.atom.pred, i) for b in rule.body if isinstance(b, Literal) for i, t in enumerate(b.atom.args) if t == var]
        # The same domain is asked once per goal (a recursive rule: once per employee); it only
        # changes when a relation it reads may gain tuples or a fresh constant is made.
        key = (id(rule), var, tuple(places), self.herbrand, tuple(len(self.state.plus.get(p, ())) for p, _ in places), len(self.problem.fresh))
        values = self._domains.get(key)
        if values is None:
            if self.herbrand:
                found = set(self.universe)
            else:
                found = set()
                for pred, i in places:
                    found |= self._now_values(pred, i)
                    found |= self._shown({row[i] for row in self.state.plus.get(pred, ()) if row[i] not in self.problem.fresh})
            if self.herbrand and self.conceal is not None:
                found = [v for v in found if not self.conceal(v)]
            values = self._domains[key] = sorted(found, key=constant_sort_key)
        return values + self._fresh_for_round(round_)

    def _now_values(self, pred: str, i: int) -> set:
        """The values at position ``i`` of ``pred`` now, less the concealed ones (kept apart by
        the caller when it gives ``visible``: filtering every value costs a lookup each)."""
        found = self.visible(pred, i) if self.visible is not None else None
        return self._shown(self.state.values(pred, i)) if found is None else found

    def _shown(self, values: set) -> set:
        return values if self.conceal is None else {v for v in values if not self.conceal(v)}

    # -- rule instances -------------------------------------------------------------------------------

    def possible_instances(self, body, binding: dict[Var, Constant], skip: int | None = None, keep=None) -> Iterator[dict[Var, Constant]]:
        """Bindings under which every literal of ``body`` may hold in some candidate state (with
        ``keep``, a test of partial bindings, only those whose every partial binding passes it)."""
        yield from self._instances(body, binding, skip, True, keep)

    def current_instances(self, body, binding: dict[Var, Constant], skip: int | None = None, keep=None) -> Iterator[dict[Var, Constant]]:
        """Bindings under which every literal of ``body`` holds in the current model."""
        yield from self._instances(body, binding, skip, False, keep)

    def _instances(self, body, binding, skip, possible: bool, keep=None):
        order = _order(body, binding, skip)
        yield from self._extend(order, 0, binding, possible, keep)

    def _extend(self, order, k, binding, possible, keep=None):
        if k == len(order):
            yield binding
            return
        element = order[k]
        if isinstance(element, Comparison):
            for extended in through_comparison(element, binding):
                if extended is binding or keep is None or keep(extended):
                    yield from self._extend(order, k + 1, extended, possible, keep)
            return
        atom = element.atom
        pattern = _pattern(atom, binding)
        if element.positive:
            source = self.state.match_possible if possible else self.state.match_now
            for row in source(atom.pred, pattern):
                extended = _unify(atom, row, binding)
                if extended is not None and (keep is None or keep(extended)):
                    yield from self._extend(order, k + 1, extended, possible, keep)
            return
        # not atom: anonymous variables mean "no matching tuple at all"
        if None in pattern:
            if possible:
                blocked = any(self.state.certainly_true((atom.pred, row)) for row in self.state.match_now(atom.pred, pattern))
            else:
                blocked = any(True for _ in self.state.match_now(atom.pred, pattern))
        else:
            a = (atom.pred, pattern)
            blocked = not self.state.possibly_false(a) if possible else self.state.now(a)
        if not blocked:
            yield from self._extend(order, k + 1, binding, possible, keep)

    def hypothetical_instances(self, rule: Rule, binding: dict[Var, Constant], round_: int) -> Iterator[dict[Var, Constant]]:
        """Bindings of a rule body for making its head true: variables not bound by the head
        range over their candidate domains (seed 002, Def. 9, case 5), except those a
        comparison ``V = term`` computes from the others, which take the computed values."""
        variables = [v for v in dict.fromkeys(v for b in rule.body for v in b.variables()) if v not in binding and v.name != "_"]
        comparisons = [b for b in rule.body if isinstance(b, Comparison)]
        computed = _computed(comparisons, set(binding), set(variables))
        free = [v for v in variables if v not in {v for v, _ in computed}]
        # Variables at free columns take the column's new constant: one instance, not one per value.
        placeholders = {v: self._free_value(*column) for v, column in self._free_variables(rule).items() if v in free}
        free = [v for v in free if v not in placeholders]
        if self.supported:
            # A goal is re-examined each round a relation its rule reads may change (to
            # compensate side effects); its instances here read the current state, new
            # constants and the values of the possible state's rows that no row holds now
            # (domains, displacements through keys), so they are kept until one of those
            # changes (Mondial's new city: four rounds of 14,000 lookups each, one is enough).
            # Kept instances found under a larger floor are a superset: still exact.
            open_places = [(b.atom.pred, i) for b in rule.body if isinstance(b, Literal) for i, t in enumerate(b.atom.args) if isinstance(t, Var) and t not in binding]
            key = (id(rule), frozenset(binding.items()), round_, len(self._round_fresh), tuple(sum(1 for i, _ in self._novel_values(pred) if i == place) for pred, place in open_places))
            kept = self._instances_kept.get(key)
            if kept is None:
                kept = []
                for found in self._supported(rule, free, dict(binding), round_):
                    for full in self._with_free_values(rule, found, placeholders):
                        for complete in _compute(computed, full):
                            if all(_compare(c, complete) for c in comparisons):
                                kept.append(complete)
                if not self.problem.timed_out:
                    self._instances_kept[key] = kept
            yield from kept
            return
        domains = [self._domain(v, rule, round_) for v in free]
        size = 1
        for d in domains:
            size *= len(d)
        if size > self.bounds.max_goals:
            self.problem.bounded.append(f"too many ways ({size:,}) to satisfy a rule of {rule.head[0].pred}; protect relations or use candidates='attribute'")
            return
        for values in itertools.product(*domains):
            if self._tick():
                return
            for full in self._with_free_values(rule, {**binding, **dict(zip(free, values))}, placeholders):
                for complete in _compute(computed, full):
                    if all(_compare(c, complete) for c in comparisons):
                        yield complete

    def _with_free_values(self, rule: Rule, binding: dict[Var, Constant], placeholders: dict[Var, Constant]) -> Iterator[dict[Var, Constant]]:
        """``binding`` completed at the free columns (:mod:`nablog.solver.free`): a literal
        with free variables takes the values of each row that holds or may hold where it is
        bound, or the columns' new constants (a new row). A new city of Austria lies in the
        province of Burgenland as it is: a new province row with new values for its population
        and area would replace it through the key (and the country and continent rows likewise:
        seven changes, and each replaced row's dependents to repair). In the search by bound
        lookups, a new row where rows exist is left out when it needs more changes than the
        floor (see :meth:`_supported`)."""
        if not placeholders:
            yield binding
            return
        if self._late():
            return
        choices: list[list[dict[Var, Constant]]] = []
        for b in rule.body:
            if not (isinstance(b, Literal) and b.positive) or not any(t in placeholders for t in b.atom.args):
                continue
            mine = [t for t in dict.fromkeys(b.atom.args) if t in placeholders]
            options = {}
            for row in self.state.match_possible(b.atom.pred, _pattern(b.atom, binding)):
                extended = _unify(b.atom, row, binding)
                if extended is not None:
                    options.setdefault(tuple(extended[t] for t in mine), None)
            options.setdefault(tuple(placeholders[t] for t in mine), None)
            choices.append([dict(zip(mine, values)) for values in options])
        for picked in itertools.product(*choices):
            full = dict(binding)
            for part in picked:
                full.update(part)
            if self.supported and self.floor is not None and len(picked) > 0 and any(len(c) > 1 for c in choices):
                needed = self._changes_for(rule, full)
                if needed > self.floor:
                    self._leave_out(1, needed)
                    continue
            yield full

    def _supported(self, rule: Rule, free: list[Var], binding: dict[Var, Constant], round_: int) -> Iterator[dict[Var, Constant]]:
        """Bindings of ``free`` to the values that facts true now give them from what is bound
        already (bound lookups, as magic sets pass bindings sideways: for
        ``manager(e5, M), reports_to(M, h77)``, M is e5's manager or someone who reports to h77
        now), or to new constants. The values of a domain left out are counted in ``generic``:
        a realization through one of them makes every literal naming it true by changes.

        Instances through which every realization needs more than ``floor`` changes are left
        out too (the answer lists none larger than ``floor``, see :meth:`_changes_for`): a
        replaced airport for each of Lufthansa's 900 airports is three changes. Of those needing
        exactly ``floor`` (the answer lists the ones found, not all) at most
        :data:`FLOOR_BUDGET` are kept: a new city in a new province of any European country,
        with any of that country's cities as the province's capital, is thousands of them."""
        if self._late():  # (each call costs lookups, a tenth of a millisecond and more: the clock each time)
            return
        needed = None if self.floor is None else self._changes_for(rule, binding)
        if needed is not None and (needed > self.floor or (needed == self.floor and self._at_floor >= FLOOR_BUDGET)):
            # Counted as the ways its variables would range over: the search over whole
            # domains follows only when what was left out is small (see supported_first).
            ways = 1
            for v in free:
                ways *= self._domain_estimate(v, rule, round_) + 1
            self._leave_out(ways, needed)
            return
        if not free:
            self._at_floor += needed == self.floor
            yield binding
            return
        if needed is not None:
            rows = self._rows_for_singles(rule, free, binding, round_)
            if rows is not None:
                self._at_floor += len(rows) if needed == self.floor else 0
                yield from rows
                return
        positives = [b for b in rule.body if isinstance(b, Literal) and b.positive]
        ranked: list[tuple[int, int, Var]] = []
        for k, v in enumerate(free):
            bound = max((sum(1 for t in lit.atom.args if not isinstance(t, Var) or t in binding) for lit in positives if v in lit.atom.args), default=0)
            if bound:
                ranked.append((-bound, k, v))
        fresh = self._fresh_for_round(round_)
        if not ranked:
            # No literal ties these variables to a bound value: only new constants.
            at_least = self._changes_for(rule, binding)
            for v in free:
                self._leave_out(self._domain_estimate(v, rule, round_), at_least)
            for values in itertools.product(fresh, repeat=len(free)):
                yield {**binding, **dict(zip(free, values))}
            return
        # The most bound variable whose lookups find values (a variable whose lookups find none
        # would take only a new constant and pass nothing on: `track(_, "New Song", Al, ..)`
        # before `album(Al, _, Ar), artist(Ar, "AC/DC")` would miss AC/DC's albums).
        # When no lookup finds values (the rows are all new), the values the foreign keys of the
        # literals allow (a new city of Greece lies in one of Greece's provinces).
        ranked.sort(key=lambda r: (r[0], r[1]))
        v, found = ranked[0][2], set()
        for referenced in (False, True):
            for _, _, candidate in ranked:
                values = self._lookup_values(candidate, positives, binding, referenced)
                if values:
                    v, found = candidate, values
                    break
            if found:
                break
        left_out = self._domain_estimate(v, rule, round_) - len(found)
        if left_out > 0:
            self._leave_out(left_out, self._changes_for(rule, binding, v, found, round_))
        if self.floor is not None:
            found = self._narrowed(rule, binding, v, found)
        rest = [f for f in free if f is not v]
        for value in sorted(found, key=constant_sort_key) + fresh:
            yield from self._supported(rule, rest, {**binding, v: value}, round_)

    def _rows_for_singles(self, rule: Rule, free: list[Var], binding: dict[Var, Constant], round_: int) -> list[dict[Var, Constant]] | None:
        """When every variable left occurs once in ``rule`` (a ``_`` at a column some
        constraint reads: a province's capital), the bindings taking them from the rows that
        hold now where the rest of their literal is bound, one literal at a time instead of
        one variable; any other value makes a new row there, which needs more changes than the
        floor (then left out) — else None, and the variables are searched one by one. (A new
        city in each of Europe's 600 provinces: two lookups each, not a search over five
        variables.)"""
        singles = self._single_variables(rule)
        fresh = self._fresh_for_round(round_)
        if not fresh or any(v not in singles for v in free):
            return None
        choices: list[list[dict[Var, Constant]]] = []
        for b in rule.body:
            if not (isinstance(b, Literal) and b.positive):
                continue
            mine = [t for t in dict.fromkeys(b.atom.args) if t in free]
            if not mine:
                continue
            options: dict[tuple, None] = {}
            for row in self.state.match_now(b.atom.pred, _pattern(b.atom, binding)):
                extended = _unify(b.atom, row, binding)
                if extended is not None:
                    values = tuple(extended[t] for t in mine)
                    if self.conceal is None or not any(self.conceal(v) for v in values):
                        options.setdefault(values, None)
            if not options:
                return None
            other = self._changes_for(rule, {**binding, **{t: fresh[0] for t in mine}})
            if other <= self.floor:
                return None
            ways = 1
            for t in mine:
                ways *= self._domain_estimate(t, rule, round_) + len(fresh)
            self._leave_out(ways - len(options), other)
            choices.append([dict(zip(mine, values)) for values in options])
        out = []
        for picked in itertools.product(*choices):
            full = dict(binding)
            for part in picked:
                full.update(part)
            out.append(full)
        return out

    def _leave_out(self, count: int, at_least: int) -> None:
        """Count ``count`` values or goals the search leaves out, through each of which a
        realization needs at least ``at_least`` changes (see :meth:`_changes_for`)."""
        if count > 0:
            self.generic += count
            self.floor = at_least if self.floor is None else min(self.floor, at_least)

    def _domain_estimate(self, var: Var, rule: Rule, round_: int) -> int:
        """The size of ``var``'s domain (without fresh constants), or for large relations an upper
        bound without listing it (at 1e6 constants, listing a position's values decodes the whole
        dictionary)."""
        if self.herbrand:
            return len(self.universe)
        places = {(b.atom.pred, i) for b in rule.body if isinstance(b, Literal) for i, t in enumerate(b.atom.args) if t == var}
        shown = [self.visible(pred, i) for pred, i in places] if self.visible is not None else [None]
        if all(values is not None for values in shown):
            # Folded (solver/symmetry.py): the domain is the values the caller keeps visible, a
            # few representatives per class, not the relation.
            # The union of several places is counted once per set of places (a copy of a million
            # values each time: 3 ms, asked for each left-out instance).
            key = ("estimate", frozenset(places))
            values = len(shown[0]) if len(shown) == 1 else self._domains.get(key)
            if values is None:
                values = self._domains[key] = len(set().union(*shown))
            return values + sum(len(self.state.plus.get(pred, ())) for pred, _ in places)
        bound = sum(self.state.index.size(pred) + len(self.state.plus.get(pred, ())) for pred, _ in places)
        if bound > possible_state.SMALL_RELATION:
            return bound
        return len(self._domain(var, rule, round_)) - len(self._round_fresh)  # (this round's fresh one is made already)

    # -- the search ---------------------------------------------------------------------------------

    def solve(
        self,
        insert: Iterable[GroundAtom],
        delete: Iterable[GroundAtom],
        violated: Iterable[tuple[str, dict]] = (),
        deadline: float | None = None,
    ) -> GroundProblem:
        """Search from the request (and from the constraint instances ``violated`` already, given
        as constraint name and variable binding) to the relevant ground problem. Past the
        ``deadline`` (a ``time.monotonic()`` value) the search stops with ``timed_out`` set."""
        self.deadline = deadline
        goals: dict[tuple[str, GroundAtom], int] = {}
        agenda: list[tuple[str, GroundAtom]] = []
        insert, delete = list(insert), list(delete)
        for a in insert:
            self.problem.require_true.append(("request", a))
        for a in delete:
            self.problem.require_false.append(("request", a))
        self.requested = set(insert) | set(delete)
        if self.free_values:
            ignored = self.unread - {a[0] for a in self.requested}
            self.free = free_columns(self.rules, self.named, ignored, self.base)

        candidates: dict[tuple[str, GroundAtom], None] = {}
        relabeled: list[tuple[str, GroundAtom]] = []  # propagated candidates found at a lower cost

        def goal(sign: str, a: GroundAtom, round_: int, before: int) -> None:
            """``a`` to change, through a chain of ``before`` changes (its cost, :attr:`cost`, counts it too)."""
            key = (sign, a)
            cost = before + (a[0] not in self.derived)
            if key in goals:
                if cost < self.cost[key]:
                    # Found along a shorter chain: what it leads to is asked again at the lower cost.
                    self.cost[key] = cost
                    if a[0] in self.derived:
                        agenda.append(key)
                    elif key in propagated:
                        relabeled.append(key)
                return
            if self.floor is not None and cost > self.floor:
                # Every realization through it has more changes than the answer lists (seed 002's
                # goals cut by size, as Def. 9's search is by rounds): counted, not asked.
                self._leave_out(1, cost)
                return
            self.cost[key] = cost
            if len(goals) >= self.bounds.max_goals:
                if not any("goals" in b for b in self.problem.bounded):
                    self.problem.bounded.append(f"more than {self.bounds.max_goals:,} goals")
                return
            goals[key] = round_
            if a[0] in self.derived:
                agenda.append(key)
                self.demand.ask(a)
            elif (sign == PLUS) != self.state.now(a):
                # A base fact to insert (absent now) or delete (present now) is a candidate change.
                candidates[key] = None
                if a[0] in self.protected_relations or a in self.protected_facts:
                    self.problem.protected.add(key)

        for a in insert:
            goal(PLUS, a, 1, 0)
        for a in delete:
            goal(MINUS, a, 1, 0)
        constraint_instances: dict[tuple, tuple[str, tuple, tuple]] = {}
        denials = dict(self.denials)
        for name, binding in violated:
            if name in denials:
                for _, pos, neg, before in self._record(name, denials[name], binding, constraint_instances, 0):
                    for a in pos:
                        goal(MINUS, a, 1, before)
                    for a in neg:
                        goal(PLUS, a, 1, before)
        propagated: set[tuple[str, GroundAtom]] = set()
        round_ = 1
        while True:
            # VU phase: top-down from the open goals to base candidates.
            while agenda:
                if self._late():
                    return self.problem
                key = agenda.pop()
                for new_sign, b in self._expand(key[0], key[1], goals[key]):
                    if self._tick():
                        return self.problem
                    goal(new_sign, b, round_, self.cost[key])
            # UP phase: what the candidates may change, bottom-up.
            seeds = [c for c in candidates if c not in propagated] + relabeled
            relabeled.clear()
            changed = self._propagate(seeds)
            if self._late():
                return self.problem
            propagated.update(candidates)
            changed_preds = {a[0] for _, a in changed}
            round_ += 1
            self._round = round_
            # Repairs: constraint instances that may become true, required atoms that may fail.
            for name, pos, neg, before in self._constraint_instances(changed, constraint_instances):
                for a in pos:
                    goal(MINUS, a, round_, before)
                for a in neg:
                    goal(PLUS, a, round_, before)
            if self._late():
                return self.problem
            for name, req in self.requirements:
                a = ground_atom(req.atom)
                if self.state.possibly_false(a):
                    goal(PLUS, a, round_, self.reach.get((MINUS, a), 0))
            # Compensation: re-examine goals whose reasoning read a predicate that may now change.
            queued = set(agenda)
            agenda.extend(key for key in goals if key not in queued and key[1][0] in self.derived and self._reads(key, changed_preds))
            if not agenda and not relabeled and all(c in propagated for c in candidates):
                break
            if round_ > self.bounds.max_rounds:
                self.problem.bounded.append(f"more than {self.bounds.max_rounds} rounds of repair and compensation")
                break
        if self.floor is not None:
            self.problem.complete_up_to = self.floor - 1
        self.problem.candidates = sorted(candidates, key=lambda c: (c[1][0], [constant_sort_key(v) for v in c[1][1]], c[0]))
        self._ground_program(constraint_instances)
        self._late()
        return self.problem

    def _late(self) -> bool:
        """Whether the deadline has passed (then the problem is marked partial)."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.problem.timed_out = True
        return self.problem.timed_out

    def _reads(self, key: tuple[str, GroundAtom], preds: set[str]) -> bool:
        pred = key[1][0]
        for rule in self.by_head.get(pred, ()):
            for b in rule.body:
                if isinstance(b, Literal) and b.atom.pred in preds:
                    return True
        return False

    def _expand(self, sign: str, a: GroundAtom, round_: int) -> Iterator[tuple[str, GroundAtom]]:
        """Direct consequences of one goal (seed 002, Def. 9): subgoals on body atoms."""
        pred, args = a
        if pred not in self.derived:
            return
        for rule in self.by_head.get(pred, ()):
            head = next(h for h in rule.head if h.pred == pred)
            binding = _unify(head, args, {})
            if binding is None:
                continue
            if sign == PLUS:
                if self.state.certainly_true(a):
                    return
                if self.supported and self.state.now(a):
                    # True now, but a candidate may break it: deriving it anew is left out of
                    # the search by bound lookups (at 1e6 facts, every one of 11,000 people below
                    # h77 asked again for each of them).
                    # Deriving it anew through another instance needs a change that breaks
                    # the ones holding now and one that makes another hold: two, without negation.
                    self._leave_out(1, 2 if self.monotone else 1)
                    return
                for full in self.hypothetical_instances(rule, binding, round_):
                    for b in rule.body:
                        if isinstance(b, Literal):
                            if b.positive:
                                g = _ground(b.atom, full)
                                if not self.state.certainly_true(g):
                                    yield (PLUS, g)
                            elif None in _pattern(b.atom, full):
                                for row in self.state.match_possible(b.atom.pred, _pattern(b.atom, full)):
                                    yield (MINUS, (b.atom.pred, row))
                            else:
                                g = _ground(b.atom, full)
                                if self.state.possibly_true(g):
                                    yield (MINUS, g)
            else:
                for full in self.possible_instances(rule.body, binding):
                    for b in rule.body:
                        if isinstance(b, Literal):
                            if b.positive:
                                yield (MINUS, _ground(b.atom, full))
                            else:
                                # Making `not q(X, _)` false inserts some q(X, v).
                                yield from ((PLUS, g) for g in self._blockers(b.atom, full, round_))

    def _blockers(self, atom: Atom, binding: Mapping[Var, Constant], round_: int, new: bool = True, at_least: int = 1) -> list[GroundAtom]:
        """The ground atoms whose truth makes ``not atom`` false under ``binding``: the atom
        itself, or for ``not q(X, _)`` every q(X, v) that holds, may hold, or may be inserted
        (v from the candidate values of that position, seed 002 Def. 9.5; at a free column its
        one new constant, see :mod:`nablog.solver.free`). With ``new=False`` the new constants
        made so far serve (one is made if there is none yet).

        The rows that hold or may hold come from one lookup on the bound places; only the
        positions that are neither bound nor free multiply (``not album(K, _, _)`` with a free
        title: one row per artist, not per artist and title). In the search by bound lookups, and
        when the product passes :data:`BLOCKER_BUDGET`, such a position takes the values the rows
        matching now have there (a replaced row's own) and new constants; the values left out are
        counted in ``generic``, each needing ``at_least`` changes in a realization."""
        pattern = _pattern(atom, binding)
        if None not in pattern:
            return [(atom.pred, pattern)]
        out = {row for row in self.state.match_possible(atom.pred, pattern)}
        free = [i for i, v in enumerate(pattern) if v is None]
        fresh = self._fresh_for_round(round_) if new or not self._round_fresh else list(self._round_fresh)
        domains = [[self._free_value(atom.pred, i)] if i in self.free.get(atom.pred, ()) else self._column_domain(atom.pred, i) + fresh for i in free]
        size = 1
        for d in domains:
            size *= len(d)
        if self.supported or size > BLOCKER_BUDGET:
            now = list(self.state.match_now(atom.pred, pattern))
            domains = [d if len(d) == 1 else sorted({row[i] for row in now} - set(self.problem.fresh), key=constant_sort_key) + fresh for i, d in zip(free, domains)]
            narrowed = 1
            for d in domains:
                narrowed *= len(d)
            self._leave_out(size - narrowed, at_least)
            if not self.supported and atom.pred not in self._wide_blockers:
                self._wide_blockers.add(atom.pred)
                self.problem.bounded.append(
                    f"a {atom.pred} row for {_show_pattern(atom.pred, pattern)} took the values of its rows now and new constants (all values: {size:,} ways); declare the columns nothing reads, or protect {atom.pred}"
                )
        for values in itertools.product(*domains):
            if self._tick():
                break
            row = list(pattern)
            for i, v in zip(free, values):
                row[i] = v
            out.add(tuple(row))
        return [(atom.pred, row) for row in sorted(out, key=lambda r: [constant_sort_key(v) for v in r])]

    def _column_domain(self, pred: str, i: int) -> list[Constant]:
        """The candidate values of position ``i`` of ``pred`` (without new constants), sorted;
        kept until the relation may gain rows (every constraint instance asks again)."""
        key = (pred, i, self.herbrand, len(self.state.plus.get(pred, ())), len(self.problem.fresh))
        values = self._domains.get(key)
        if values is None:
            if self.herbrand:
                found = set(self.universe)
                if self.conceal is not None:
                    found = {v for v in found if not self.conceal(v)}
            else:
                found = self._now_values(pred, i) | self._shown({r[i] for r in self.state.plus.get(pred, ())})
            values = self._domains[key] = sorted(found - set(self.problem.fresh), key=constant_sort_key)
        return values

    def _add(self, sign: str, a: GroundAtom, cost: int | None = None, again: bool = False) -> bool:
        """Record a possible change (to be propagated) and its :attr:`reach` (``cost``, by
        default the least of the changes being propagated); a row that may become true continues
        the demand's walks waiting for it. A change recorded already is propagated again when
        it is reached at a lower cost (or ``again``), to carry the lower cost on."""
        key = (sign, a)
        cost = self._least if cost is None else cost
        if not self.state.add(sign, a):
            if again or cost < self.reach.get(key, cost):
                self.reach[key] = min(cost, self.reach.get(key, cost))
                self._changed.append(key)
                self._work.append(key)
            return False
        self.reach[key] = cost
        self._changed.append(key)
        self._work.append(key)
        if sign == PLUS:
            self.demand.row_added(a)
            self._plus_log.setdefault(a[0], []).append(a[1])
        return True

    def _novel_values(self, pred: str) -> set[tuple[int, Constant]]:
        """The (position, value) pairs the rows that may be inserted into ``pred`` bring that no
        row holds now (new constants aside): the search by bound lookups reads the possible
        state only through such values (see :meth:`hypothetical_instances`)."""
        novel = self._novel.setdefault(pred, set())
        log = self._plus_log.get(pred, ())
        made = self.problem.free.union(self._round_fresh)
        for row in log[self._novel_seen.get(pred, 0):]:
            for i, value in enumerate(row):
                if (i, value) in novel or value in made:
                    continue
                pattern = tuple(value if j == i else None for j in range(len(row)))
                if not any(True for _ in self.state.match_now(pred, pattern)):
                    novel.add((i, value))
        self._novel_seen[pred] = len(log)
        return novel

    def _propagate(self, seeds: list[tuple[str, GroundAtom]]) -> list[tuple[str, GroundAtom]]:
        """Add candidate changes to the possible state and derive every atom they may change
        (of request-only predicates, every demanded atom)."""
        changed: list[tuple[str, GroundAtom]] = []
        work: list[tuple[str, GroundAtom]] = []
        self._changed, self._work = changed, work
        # The costliest first onto the stack: the cheapest chains are followed first, so that
        # an atom is seldom reached again at a lower cost.
        seeds = sorted(seeds, key=lambda c: -self.cost[c])
        self._least = self.cost[seeds[-1]] if seeds else 0
        for sign, a in seeds:
            self._add(sign, a, self.cost[(sign, a)], again=True)
        steps = 0
        while work or self.demand.queue:
            steps += 1
            if steps % 4096 == 0 and self._late():
                return changed
            if self.demand.queue:
                self.demand.serve()
                continue
            sign, a = work.pop()
            for rule, i in self.by_body.get(a[0], ()):
                literal = rule.body[i]
                # Does the literal possibly become true (then heads may appear) or false (vanish)?
                becomes_true = (sign == PLUS) == literal.positive
                for full in self._instances_through(rule, i, a, becomes_true):
                    if self._tick():
                        return changed
                    for head in rule.head:
                        h = _ground(head, full)
                        new_sign = PLUS if becomes_true else MINUS
                        if h[0] in self.unread and h not in self.requested:
                            continue
                        # Demand before the model: the demand is two dictionary lookups, the model
                        # a search of an encoded relation, and demand drops most heads (each new
                        # head of department d0 reaches its ~100 employees, of whom a few are
                        # demanded; 3,270 such candidates at 1e5 facts).
                        if h[0] in self.demand.predicates and not self.demand.demanded(h):
                            continue  # recomputed if it is demanded later
                        if (new_sign == PLUS and self.state.now(h)) or (new_sign == MINUS and not self.state.now(h)):
                            continue
                        self._add(new_sign, h, self.reach[(sign, a)])
        return changed

    def _instances_through(self, rule: Rule, i: int, a: GroundAtom, possible: bool) -> Iterator[dict[Var, Constant]]:
        """Instances of ``rule`` whose body literal ``i`` is ``a`` (possibly true ones, or true ones
        now); for a rule of an unread predicate, only those deriving a requested atom."""
        starts = [{}]
        if all(h.pred in self.unread for h in rule.head):
            starts = [b for h in rule.head for r in self.requested if r[0] == h.pred if (b := _unify(h, r[1], {})) is not None]
        # A head of a request-only predicate is kept only when demanded (see _propagate): an
        # instance is dropped as soon as its bound head places match no demanded pattern, before
        # the rest of its body is enumerated.
        keep = None
        if len(rule.head) == 1 and rule.head[0].pred in self.demand.predicates:
            head = rule.head[0]
            keep = lambda binding: self.demand.may_match(head, binding)  # noqa: E731
        for start in starts:
            binding = _unify(rule.body[i].atom, a[1], start)
            if binding is None or (keep is not None and not keep(binding)):
                continue
            if possible:
                yield from self.possible_instances(rule.body, binding, skip=i, keep=keep)
            else:
                yield from self.current_instances(rule.body, binding, skip=i, keep=keep)

    def _constraint_instances(self, changed, seen: dict) -> Iterator[tuple[str, tuple, tuple, int]]:
        """Denial instances that may hold after some candidate change, found from the changed atoms
        by lookups on their values: an atom that may become true meets the instances where it is a
        positive literal, one that may become false those where it is negated (the other way
        round it can only make an instance false, and the instance's blockers are read from the
        final possible state, see :meth:`_record`). Each comes with the fewest changes that make
        it hold (the :attr:`reach` of the change that meets it), which its repairs add to."""
        for sign, a in changed:
            if self._tick():
                return
            before = self.reach[(sign, a)]
            for name, d, i in self.denials_by_pred.get(a[0], ()):
                if name in self.fds:
                    if sign == PLUS:
                        yield from self._key_group(name, a, before)
                    continue
                literal = d.body[i]
                if literal.positive != (sign == PLUS):
                    continue
                binding = _unify(literal.atom, a[1], {})
                if binding is None:
                    continue
                for full in self.possible_instances(d.body, binding, skip=i):
                    if self._tick():
                        return
                    yield from self._record(name, d, full, seen, before)

    def _key_group(self, name: str, a: GroundAtom, before: int) -> Iterator[tuple[str, tuple, tuple, int]]:
        """A functional dependency's key group that ``a`` (reached by ``before`` changes) may
        join: once two dependent values are possible there, every possibly true tuple of the
        group is asked to be deleted (what each pairwise denial instance would ask),
        incrementally as the group grows, and all of them again when a cheaper change joins."""
        shape = self.fds[name]
        key = tuple(a[1][i] for i in shape.lhs)
        group = self.fd_groups.get((name, key))
        if group is None:
            group = self.fd_groups[(name, key)] = _KeyGroup(shape, key)
            for row in self.state.match_possible(shape.pred, group.pattern):
                group.add(row)
        else:
            group.add(a[1])
        if len(group.values) > 1:
            if group.cost is not None and before < group.cost:
                group.asked = 0
            group.cost = before if group.cost is None else min(group.cost, before)
            fresh = group.rows[group.asked:]
            group.asked = len(group.rows)
            yield (name, tuple((shape.pred, row) for row in fresh), (), group.cost)

    def _record(self, name: str, d: Denial, full: dict, seen: dict, before: int):
        """A denial instance that may hold after ``before`` changes, once (again when fewer make
        it): ``(name, positive atoms, blockers, before)``, the blockers being the atoms whose
        insertion makes a negated literal false (the repairs to ask for). What
        :meth:`_ground_program` encodes is kept in ``seen``: the positive atoms and the negated
        literals as patterns, whose rows are looked up in the final possible state (a row that
        may be inserted for another reason blocks the instance too)."""
        pos = tuple(_ground(b.atom, full) for b in d.body if isinstance(b, Literal) and b.positive)
        patterns = tuple((b.atom.pred, _pattern(b.atom, full)) for b in d.body if isinstance(b, Literal) and not b.positive)
        key = (name, pos, patterns)
        if key in seen and self._instance_cost[key] <= before:
            return
        seen[key] = (name, pos, patterns)
        self._instance_cost[key] = before
        # A row left out of the repairs is inserted in a realization that also makes the instance
        # hold otherwise: one more change when a positive atom, a base row of another relation,
        # does not hold now, or when a row blocks the literal now (it is deleted).
        neg: list[GroundAtom] = []
        for b in d.body:
            if isinstance(b, Literal) and not b.positive:
                if self.floor is not None and b.atom.pred not in self.derived and before + 1 > self.floor:
                    # Its blockers would be asked past the size the answer lists (see
                    # :meth:`solve`'s goals): not listed (a foreign key to Chinook's genre Rock
                    # would list a replacement for each of its 1,297 tracks).
                    self._leave_out(1, before + 1)
                    continue
                made = any(not self.state.now(a) and a[0] not in self.derived and a[0] != b.atom.pred for a in pos)
                made = made or any(True for _ in self.state.match_now(b.atom.pred, _pattern(b.atom, full)))
                neg.extend(self._blockers(b.atom, full, self._round, new=False, at_least=1 + made))
        yield (name, pos, tuple(neg), before)

    # -- the ground program -------------------------------------------------------------------------

    def _ground_program(self, constraint_instances: dict) -> None:
        """Ground rule instances for every atom that may change, reachable from what is required."""
        problem = self.problem
        defined: set[GroundAtom] = set()
        todo: list[GroundAtom] = []

        def need(a: GroundAtom) -> None:
            if not self.state.fixed(a) and a not in defined and a[0] in self.derived:
                defined.add(a)
                todo.append(a)

        # A request atom no candidate can change is met or failed already by its current value.
        for wanted, atoms in ((True, problem.require_true), (False, problem.require_false)):
            for name, a in list(atoms):
                if self.state.fixed(a):
                    atoms.remove((name, a))
                    if self.state.now(a) != wanted:
                        problem.fixed_conflicts.append(f"no candidate change can make {'+' if wanted else '-'}{to_atom(a)} hold")
                else:
                    need(a)
        for name, req in self.requirements:
            a = ground_atom(req.atom)
            if self.state.fixed(a):
                if not self.state.now(a):
                    problem.fixed_conflicts.append(f"{name} does not hold and no candidate change can make it hold")
            else:
                problem.require_true.append((name, a))
                need(a)
        for name, pos, patterns in constraint_instances.values():
            if self._tick():
                return
            neg = tuple(dict.fromkeys((pred, row) for pred, pattern in patterns for row in self.state.match_possible(pred, pattern)))
            live_pos = tuple(a for a in pos if not self.state.fixed(a))
            live_neg = tuple(a for a in neg if not self.state.fixed(a))
            if any(self.state.fixed(a) and not self.state.now(a) for a in pos):
                continue
            if any(self.state.fixed(a) and self.state.now(a) for a in neg):
                continue
            if not live_pos and not live_neg:
                problem.fixed_conflicts.append(f"constraint {name} is violated by facts that no candidate change affects")
                continue
            problem.denials.append((name, live_pos, live_neg))
            for a in live_pos + live_neg:
                need(a)
        for (name, key), group in self.fd_groups.items():
            pred = group.shape.pred
            by_value: dict[Constant, tuple[bool, list[GroundAtom]]] = {}
            for row in self.state.match_possible(pred, group.pattern):
                a = (pred, row)
                certain, live = by_value.setdefault(row[group.shape.rhs], (False, []))
                if self.state.fixed(a):
                    if self.state.now(a) and not certain:
                        by_value[row[group.shape.rhs]] = (True, live)
                else:
                    live.append(a)
            values = [(certain, tuple(live)) for certain, live in by_value.values() if certain or live]
            if len(values) < 2:
                continue
            if sum(certain for certain, _ in values) > 1:
                problem.fixed_conflicts.append(f"constraint {name} is violated by facts that no candidate change affects")
                continue
            problem.at_most_one.append((name, values))
            for _, live in values:
                for a in live:
                    need(a)
        while todo:
            if self._tick():
                return
            a = todo.pop()
            for rule in self.by_head.get(a[0], ()):
                for head in rule.head:
                    if head.pred != a[0]:
                        continue
                    binding = _unify(head, a[1], {})
                    if binding is None:
                        continue
                    for full in self.possible_instances(rule.body, binding):
                        if self._tick():
                            return
                        pos, neg = [], []
                        for b in rule.body:
                            if not isinstance(b, Literal):
                                continue
                            pattern = _pattern(b.atom, full)
                            if None in pattern:
                                # not q(X, _): false if any match is true
                                for row in self.state.match_possible(b.atom.pred, pattern):
                                    g = (b.atom.pred, row)
                                    if not self.state.fixed(g):
                                        neg.append(g)
                                        need(g)
                                continue
                            g = (b.atom.pred, pattern)
                            if self.state.fixed(g):
                                continue  # possible_instances only yields instances where it holds
                            (pos if b.positive else neg).append(g)
                            need(g)
                        problem.rules.append((a, tuple(pos), tuple(neg)))


BLOCKER_BUDGET = 2_000
"""Most rows :meth:`Relevance._blockers` makes for one negated literal from the values of its
open positions; past it they take the values of the rows matching now and new constants."""

FLOOR_BUDGET = 40
"""Most rule instances needing exactly ``floor`` changes the search by bound lookups keeps: the
answer lists those of that size it finds, not all of them (see :meth:`Relevance._supported`).
Each costs clingo models and a verification: OpenFlights' ``+connects("Lufthansa", "Germany",
"Atlantis")`` took 1.96 s to its first realization with 200, 0.74 s with 40."""

GENERIC_BUDGET = 2_000
"""How many values of existential domains a search by bound lookups may leave out and still be
followed by the search over whole domains: each value left out becomes goals of its own there,
whose domains are as large (a recursive view: quadratic)."""


WHOLE_SEARCH_SECONDS = 2.0
"""How long the search over whole domains may take after the search by lookups left few values
out (see :func:`supported_first`)."""


def supported_first(make: Callable[[bool], Relevance], insert: list[GroundAtom], delete: list[GroundAtom], violated, deadline: float | None) -> GroundProblem:
    """The relevant ground problem, searched first with existential variables bound by lookups
    (``Relevance(supported=True)``). When that left values out, the search over whole domains
    (seed 002, Def. 9, case 5) follows if it is small enough; otherwise the first problem is
    kept and says it is ``bounded``. Both are exact for their candidates: every change of the
    database they can make is propagated, so each realization found is verified and minimal."""
    first = make(True)
    problem = first.solve(insert, delete, violated, deadline)
    if problem.timed_out or first.generic == 0:
        return problem
    if first.generic <= GENERIC_BUDGET:
        # Few values left out need not mean a small search: their goals' domains multiply
        # (Chinook's +album_of: 1,941 values left out, the whole search past 8 s). It gets
        # WHOLE_SEARCH_SECONDS; past them the first problem answers, bounded.
        started = time.monotonic()
        cut = started + WHOLE_SEARCH_SECONDS
        whole = make(False).solve(insert, delete, violated, cut if deadline is None else min(deadline, cut))
        if not whole.timed_out or (deadline is not None and time.monotonic() >= deadline):
            return whole
        problem.bounded.append(f"the search over whole domains did not finish in {WHOLE_SEARCH_SECONDS:g} s")
    problem.bounded.append(
        f"existential variables took the values facts give them from the request (bound lookups) and new constants, and atoms true now were not derived anew; about {first.generic:,} other values and goals were left out"
    )
    return problem


class _KeyGroup:
    """The tuples of one key of a functional dependency that hold or may come to hold."""

    def __init__(self, shape: FdShape, key: tuple):
        self.shape = shape
        pattern: list = [None] * shape.arity
        for i, v in zip(shape.lhs, key):
            pattern[i] = v
        self.pattern = tuple(pattern)
        self.rows: list[tuple] = []
        self.seen: set[tuple] = set()
        self.values: set = set()
        self.asked = 0  # rows[:asked] were asked to be deleted already
        self.cost: int | None = None  # the fewest changes they were asked at

    def add(self, row: tuple) -> None:
        if row not in self.seen:
            self.seen.add(row)
            self.rows.append(row)
            self.values.add(row[self.shape.rhs])


def _functional_dependencies(denials: Iterable[tuple[str, Denial]]) -> dict[str, list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """Per relation, its functional dependencies as (key positions, dependent positions): a
    ``#key`` is one per other column, gathered here under their key."""
    found: dict[str, dict[tuple[int, ...], list[int]]] = {}
    for _, d in denials:
        shape = fd_shape(d)
        if shape is not None:
            found.setdefault(shape.pred, {}).setdefault(shape.lhs, []).append(shape.rhs)
    return {pred: [(lhs, tuple(rhs)) for lhs, rhs in groups.items()] for pred, groups in found.items()}


def _show_pattern(pred: str, pattern: tuple) -> str:
    return str(Atom(pred, tuple(Var("_") if v is None else v for v in pattern)))


def _fresh_name(n: int, universe: Set) -> str:
    """``new1``, ``new2``…: readable, numbered in order of appearance, never an existing constant."""
    name = f"new{n}"
    while name in universe:
        name += "_"
    return name


