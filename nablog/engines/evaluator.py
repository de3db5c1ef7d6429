"""The python engine's column evaluator: joins, frames and semi-naive fixpoints over encoded relations.

:class:`Evaluator` holds one evaluation's dictionary and relations and evaluates rule bodies as
sequences of sort-based joins over integer-encoded columns (the joins themselves are
:mod:`nablog.engines.joins`): body frames cut to a bounded size, heads deduplicated, components
run to their fixpoint semi-naively or maintained (DRed); :mod:`nablog.engines.python` drives it
(evaluation from facts, updates from a model). See that module for the method.
"""

from __future__ import annotations

import time
from collections.abc import Set
from typing import Callable, Iterable, Iterator, Mapping

import numpy as np

from ..lang import Atom, Comparison, Literal, Rule, Var
from ..lang.ast import Aggregate
from . import compute, thin
from .budget import MemoryBudget
from .algebra import difference, head_restricted, intersection, restricted, union_all, union_disjoint
from .encoding import INT, ConstantDictionary, EncodedRelation, pack, sorted_unique
from .frames import Frame
from .joins import Joins
from .plan import ComponentPlan, body_order, condition_order
from .rekey import rekeyed
from .runs import RoundCost, RunRelation, Stopwatches, key_runs


class Evaluator(Joins):
    """Evaluates rules over a fixed dictionary; holds the current relations and their indexes."""

    def __init__(self, dictionary: ConstantDictionary, arities: dict[str, int], extends: tuple[ConstantDictionary, np.ndarray] | None = None):
        self.d = dictionary
        self.size = len(dictionary)
        self.arities = arities
        self.rels: dict[str, EncodedRelation] = {}
        self.progress: Callable[[int, int], None] | None = None
        self.profile: Callable[[RoundCost], None] | None = None
        self.clock = Stopwatches()
        # (old dictionary, increasing map of its ids into d): relations over the old dictionary
        # move to d without decoding (ConstantDictionary.extended).
        self.extends = extends
        # Relations whose ids were found while the dictionary was built (id -> (rows, ids)).
        self.int_rows: dict[int, tuple[Iterable[tuple], np.ndarray]] = {}
        # Arithmetic and aggregates add integers while rules run (see grow): the increasing id
        # maps of each growth, and each dictionary's generation, to bring older ids forward.
        self.generation = 0
        self._remaps: list[np.ndarray] = []
        self._dictionaries: list[ConstantDictionary] = [dictionary]
        self.computed = 0
        self.budget = MemoryBudget()
        self.cache: dict = {}
        # When a dict: per predicate, (round, tuples first derived in that round) of each
        # semi-naive fixpoint, for PythonEngine.evaluate(rounds=); rounds are numbered on across
        # fixpoints (a component's exit rules read earlier components: a later round).
        self.rounds: dict[str, list[tuple[int, EncodedRelation]]] | None = None
        self.round_base = 0

    # -- a dictionary that grows with computed values ---------------------------------------------

    def grow(self, values: np.ndarray) -> None:
        """Add integers computed by rules (sorted, none in the dictionary) to the dictionary: every
        relation moves over by one increasing id map (ConstantDictionary.extended_ints), nothing
        is decoded or sorted again."""
        extended, remap = self.d.extended_ints(values) if len(values) else (self.d, None)
        if extended is self.d:
            return
        self.computed += len(extended) - len(self.d)
        compute.check_computed(self.computed)
        # Each growth keeps an id map as long as the dictionary, so a recursion that computes one
        # value per round takes memory with the square of its rounds: the budget, not the count,
        # is what stops it in time.
        self.budget.check(f"computing {self.computed:,} new integers")
        self.rels = {p: rekeyed(r, extended, remap) if r.dictionary is self.d else r for p, r in self.rels.items()}
        if self.extends is not None:
            self.extends = (self.extends[0], remap[self.extends[1]])
        self.d, self.size = extended, len(extended)
        self._remaps.append(remap)
        self._dictionaries.append(extended)
        self.generation += 1

    def forward_ids(self, ids: np.ndarray, generation: int) -> np.ndarray:
        """Ids from the dictionary of ``generation`` as ids of the current one."""
        for remap in self._remaps[generation:]:
            ids = remap[ids]
        return ids

    def forward_frame(self, frame: "Frame", generation: int) -> "Frame":
        if generation == self.generation:
            return frame
        return Frame(frame.n, {v: self.forward_ids(c, generation) for v, c in frame.cols.items()})

    def current(self, rel: EncodedRelation) -> EncodedRelation:
        """A relation over the current dictionary (it may have been built over an earlier one)."""
        if rel.dictionary is self.d:
            return rel
        for generation, d in enumerate(self._dictionaries):
            if rel.dictionary is d:
                return rekeyed(rel, self.d, self.forward_ids(np.arange(len(d), dtype=INT), generation))
        return self.encode(rel, rel.arity)

    def encode(self, rows: Set, arity: int) -> EncodedRelation:
        """``rows`` as a relation over this evaluator's dictionary."""
        if isinstance(rows, EncodedRelation) and rows.arity == arity:
            if rows.dictionary is self.d:
                return rows
            if self.extends is not None and rows.dictionary is self.extends[0]:
                return rekeyed(rows, self.d, self.extends[1], compose=False)
        read = self.int_rows.pop(id(rows), None)
        if read is not None and read[0] is rows and read[1].shape[1] == arity:
            return EncodedRelation.from_columns(self.d, [read[1][:, i] for i in range(arity)], arity)
        return EncodedRelation.from_rows(self.d, rows, arity)

    def relation(self, pred: str) -> EncodedRelation:
        rel = self.rels.get(pred)
        if rel is None:
            rel = self.rels[pred] = EncodedRelation.empty(self.d, self.arities.get(pred, 0))
        return rel

    # -- rules --------------------------------------------------------------------------------------

    def frames(
        self, rule: Rule, start: int | None = None, source: Callable[[int, Atom], EncodedRelation] | None = None, keep: set[Var] | None = None
    ) -> Iterator[Frame]:
        """The bindings of the body, in frames of at most about ``CHUNK_ROWS`` rows; with ``keep``,
        only the variables that ``keep`` or the rest of the body needs are carried through joins.

        ``source(i, atom)`` picks the relation of body literal i (joined when positive,
        anti-joined when negated); by default the current relations. A join that would produce
        more rows is run on slices of its input, one at a time, so that memory follows the chunk
        size rather than the size of the whole intermediate result.
        """
        pick = source or (lambda i, atom: self.relation(atom.pred))
        index_of = {id(b): i for i, b in enumerate(rule.body)}
        order = body_order(rule, start)
        live = _live_variables(order, keep) if keep is not None else None
        yield from self.run(Frame(1, {}), order, lambda element: pick(index_of[id(element)], element.atom), live)

    def run(self, frame: Frame, order: list, pick: Callable, live: list | None = None) -> Iterator[Frame]:
        """Evaluate body elements in ``order`` from ``frame``; ``pick(literal)`` gives a literal's
        relation; ``live[k]``, if given, the variables still needed after element k."""
        stack = [(frame, 0, self.generation)]
        while stack:
            frame, k, generation = stack.pop()
            frame = self.forward_frame(frame, generation)
            while k < len(order) and frame.n:
                element = order[k]
                if isinstance(element, Comparison):
                    frame = self.compare(frame, element)
                elif isinstance(element, Aggregate):
                    frame = compute.aggregate(self, frame, element, self._condition)
                elif element.positive:
                    rel = self.current(pick(element))
                    pieces, ranges = self._split(frame, element.atom, rel)
                    frame = pieces[0]
                    stack.extend((piece, k, self.generation) for piece in reversed(pieces[1:]))
                    frame = self.join(frame, element.atom, rel, ranges, None if live is None else live[k])
                else:
                    frame = self.antijoin(frame, element.atom, self.current(pick(element)))
                k += 1
            if frame.n:
                yield frame

    def _condition(self, frame: Frame, condition: tuple) -> Iterator[Frame]:
        """The bindings of an aggregate element's condition, continuing from ``frame``."""
        order = condition_order(condition, set(frame.cols))
        return self.run(frame, order, lambda element: self.relation(element.atom.pred))

    def body(self, rule: Rule, start: int | None = None, source: Callable[[int, Atom], EncodedRelation] | None = None) -> Frame:
        """All bindings of the body as one frame (see :meth:`frames`)."""
        parts = list(self.frames(rule, start, source))
        if not parts:
            return Frame(0, {})
        if len(parts) == 1:
            return parts[0]
        return Frame(sum(p.n for p in parts), {v: np.concatenate([p.cols[v] for p in parts]) for v in parts[0].cols})

    def _split(self, frame: Frame, atom: Atom, rel: EncodedRelation) -> tuple[list[Frame], tuple[np.ndarray, np.ndarray] | None]:
        """Slices of ``frame`` whose joins with ``rel`` each give at most about CHUNK_ROWS rows, and
        when there is one slice the bounds of its matches, if they were found (see :meth:`join`)."""
        if frame.n < 2:
            return [frame], None
        counts, ranges = self._join_counts(frame, atom, rel)
        if counts is None or int(counts.sum()) <= CHUNK_ROWS:
            return [frame], ranges
        ends = np.searchsorted(np.cumsum(counts), np.arange(CHUNK_ROWS, int(counts.sum()), CHUNK_ROWS), "right")
        bounds = [0, *sorted(set(int(e) for e in ends if 0 < e < frame.n)), frame.n]
        return [frame.take(np.arange(a, b)) for a, b in zip(bounds, bounds[1:]) if b > a], None

    def head_columns(self, atom: Atom, frame: Frame) -> list[np.ndarray]:
        return [
            frame.cols[t] if isinstance(t, Var) else np.full(frame.n, self.d.id_of(t), INT)  # type: ignore[index]
            for t in atom.args
        ]

    def derive(
        self, rules: Iterable[tuple[Rule, int | None, Callable | None]], known: Iterable[str] = ()
    ) -> dict[str, EncodedRelation]:
        """Evaluate rule instances and collect their heads per predicate (deduplicated).

        Heads of a predicate in ``known`` that its current relation already holds are dropped
        in batches of about :data:`DEDUP_KEYS` distinct tuples, so semi-naive rounds keep only
        what is new (small) in memory, and a tuple derived many times in a round (30 times on
        average on email-Eu-core) is looked up in the relation once per batch, not once per frame.
        A relation with an exact key set (:meth:`RunRelation.keyed`) drops the heads it holds
        first, one gather a key before any sort: on email-Eu-core that leaves one derivation in
        30 to sort, not every one twice. (Behind a Bloom filter, which lets some through, that
        measured slower than deduplicating each frame first: deep recursions repeat little.)
        """
        known = set(known)
        parts: dict[str, list[EncodedRelation]] = {}
        batch: dict[str, list[EncodedRelation]] = {}
        fresh: dict[str, list[EncodedRelation]] = {}  # new tuples of many frames, repeats dropped every DEDUP_KEYS
        clock = self.clock
        lap = time.perf_counter()
        for rule, start, source in rules:
            for frame in self.frames(rule, start, source, keep={v for atom in rule.head for v in atom.args if isinstance(v, Var)}):
                lap = clock.add("join", lap)
                for atom in rule.head:
                    pred, arity = atom.pred, self.arities[atom.pred]
                    columns = self.head_columns(atom, frame)
                    seen = getattr(self.relation(pred), "seen", None) if pred in known else None
                    if seen is not None and seen.exact:
                        keys = pack(columns, self.size)
                        fresh.setdefault(pred, []).append(EncodedRelation(self.d, arity, sorted_unique(keys[~seen.contains(keys)], owned=True), None))
                        if sum(len(r) for r in fresh[pred]) >= DEDUP_KEYS:
                            parts.setdefault(pred, []).append(union_all(self.d, arity, [self.current(r) for r in fresh.pop(pred)]))
                        continue
                    rel = EncodedRelation.from_columns(self.d, columns, arity, frame.n)
                    if pred not in known:
                        parts.setdefault(pred, []).append(rel)
                        continue
                    batch.setdefault(pred, []).append(rel)
                    if sum(len(r) for r in batch[pred]) >= DEDUP_KEYS:
                        parts.setdefault(pred, []).append(difference(union_all(self.d, arity, [self.current(r) for r in batch.pop(pred)]), self.relation(pred)))
                lap = clock.add("dedup", lap)
        lap = clock.add("join", lap)
        for pred, rels in batch.items():
            rels = [self.current(r) for r in rels]
            parts.setdefault(pred, []).append(difference(union_all(self.d, self.arities[pred], rels), self.relation(pred)))
        for pred, rels in fresh.items():
            parts.setdefault(pred, []).extend(rels)
        derived = {pred: union_all(self.d, self.arities[pred], [self.current(r) for r in rels]) for pred, rels in parts.items()}
        clock.add("dedup", lap)
        return derived

    # -- components ---------------------------------------------------------------------------------

    def run_component(self, plan: ComponentPlan, seed: dict[str, EncodedRelation] | None = None) -> None:
        """Evaluate one component to its fixpoint.

        Without ``seed`` the component starts empty. With ``seed`` (predicate -> tuples new in
        some relation the component reads, keyed by that relation), the component's current
        relations are kept and evaluation continues semi-naively from those new tuples only.
        """
        members = plan.predicates
        if seed is None:
            for pred in members:
                self.rels[pred] = EncodedRelation.empty(self.d, self.arities[pred])
            derived = self.derive((rule, None, None) for rule in plan.exit_rules)
            delta = {}
            for pred in members:
                if pred in derived:
                    self.rels[pred] = derived[pred]
                    delta[pred] = derived[pred]
        else:
            # Every rule reading a changed relation is evaluated with that literal as the delta.
            instances = []
            for rule in plan.exit_rules + tuple(r for r, _ in plan.recursive_rules):
                for i, b in enumerate(rule.body):
                    if isinstance(b, Literal) and b.positive and b.atom.pred in seed:
                        instances.append((rule, i, self._delta_source(i, seed[b.atom.pred])))
            delta = self._absorb(self.derive(instances, known=members), members)
        self._semi_naive(plan, delta, track=False)

    def maintain(
        self,
        plan: ComponentPlan,
        gained: Mapping[str, EncodedRelation],
        lost: Mapping[str, EncodedRelation],
        old: Mapping[str, EncodedRelation],
    ) -> tuple[dict[str, EncodedRelation], dict[str, EncodedRelation]]:
        """Bring one component up to date after its inputs gained and lost tuples (DRed);
        return the tuples each member gained and lost.

        ``old`` holds the previous relation of every changed input. A negated literal whose
        relation gained tuples loses support (it is treated like a deletion), and one whose
        relation lost tuples gains support. (1) Over-delete every tuple with a derivation that
        used a lost literal, evaluated over the old state; (2) remove them; (3) rederive those
        that still have a derivation in the new state; (4) add what the gained literals derive,
        and continue semi-naively within the component.
        """
        members = set(plan.predicates)
        rules = rules_of(plan)
        before = {p: self.relation(p) for p in members}

        def old_state(i: int, atom: Atom) -> EncodedRelation:
            if atom.pred in old:
                return old[atom.pred]
            return before[atom.pred] if atom.pred in before else self.relation(atom.pred)

        def deltas(changes_pos, changes_neg, state):
            """Rule instances with one literal restricted to a change: positive literals to the
            tuples in ``changes_pos``, negated ones (read as positive) to ``changes_neg``."""
            out = []
            for rule in rules:
                for i, b in enumerate(rule.body):
                    if not isinstance(b, Literal):
                        continue
                    delta = (changes_pos if b.positive else changes_neg).get(b.atom.pred)
                    if delta is None or not len(delta):
                        continue
                    out.append(restricted(rule, i, delta, state))
            return out

        # (1) over-delete, over the old state
        removed = {p: EncodedRelation.empty(self.d, self.arities[p]) for p in members}
        frontier = {p: intersection(r, before[p]) for p, r in self.derive(deltas(lost, gained, old_state)).items() if p in members}
        while any(len(r) for r in frontier.values()):
            for p, r in frontier.items():
                removed[p] = union_disjoint(removed[p], r)
            derived = self.derive(deltas(frontier, {}, old_state))
            frontier = {
                p: difference(intersection(r, before[p]), removed[p]) for p, r in derived.items() if p in members
            }
        # (2) remove
        for p in members:
            if len(removed[p]):
                self.rels[p] = difference(before[p], removed[p])
        # (3) rederive what still has a derivation, and (4) derive from what was gained
        current = lambda i, atom: self.relation(atom.pred)  # noqa: E731
        instances = deltas(gained, lost, current)
        for rule in rules:
            for head in rule.head:
                if len(removed.get(head.pred, ())):
                    instances.append(head_restricted(rule, head, removed[head.pred], current))
        added = self._semi_naive(plan, self._absorb(self.derive(instances, known=members), members))
        gained, lost = {}, {}
        for p in members:
            plus, minus = added.get(p), removed[p]
            if plus is not None and len(plus):
                gained[p] = difference(plus, minus)
                minus = difference(minus, plus)
            lost[p] = minus
        return gained, lost

    def _semi_naive(self, plan: ComponentPlan, delta: dict[str, EncodedRelation], track: bool = True) -> dict[str, EncodedRelation]:
        """Run the recursive rules from ``delta`` to the fixpoint; return every tuple added (with
        ``track``; otherwise nothing, and no round pays for collecting them)."""
        added = {p: [d] for p, d in delta.items() if len(d)} if track else {}
        rounds = 0
        self._note_round(rounds, delta)
        self.clock.take()
        joined = _joined_whole(plan)
        grown = {p: len(d) for p, d in delta.items()}
        # Thin rounds (a handful of new tuples) run tuple at a time once that pays (thin.py).
        thin_ok, thin_rounds = self.rounds is None and bool(plan.recursive_rules) and thin.eligible(plan), 0
        while plan.recursive_rules and any(len(d) for d in delta.values()):
            if thin_ok and sum(len(d) for d in delta.values()) <= thin.THIN_DELTA:
                thin_rounds += 1
                if thin.worth_entering(self, plan, thin_rounds):
                    thin_rounds = 0
                    rounds, delta, more = self._thin(plan, delta, rounds, joined)
                    for p, d in more.items():
                        grown[p] = grown.get(p, 0) + len(d)
                        if track:
                            added.setdefault(p, []).append(d)
                    if not any(len(d) for d in delta.values()):
                        break
                    # The round the thin path handed back (too wide, or too much work) runs here.
            else:
                thin_rounds = 0
            rounds += 1
            if self.progress:
                self.progress(rounds, sum(len(d) for d in delta.values()))
            # Deduplicate by a key set instead of searching the runs, once the relation is large
            # and this fixpoint derived most of it (not a small update of a large one): an exact
            # bitmap at once (a gather a key; email-Eu-core derives most of its 24 M derivations
            # in rounds 2 and 3), a Bloom filter only in a deep fixpoint (it costs more to fill
            # than a few rounds' searches; the closure of a sparse graph of 10^4 edges passes
            # 65,536 tuples after round 7 of 47).
            for p in plan.predicates:
                rel = self.relation(p)
                if len(rel) >= HASH_MIN and 2 * grown.get(p, 0) >= len(rel) and rel.packed and rel.arity:
                    self.rels[p] = RunRelation.keyed(rel, exact_only=rounds < HASH_ROUND)
            instances = []
            for rule, positions in plan.recursive_rules:
                for i in positions:
                    d = delta.get(rule.body[i].atom.pred)  # type: ignore[union-attr]
                    if d is not None and len(d):
                        instances.append((rule, i, self._delta_source(i, d)))
            delta = self._absorb(self.derive(instances, known=plan.predicates), plan.predicates, joined)
            self._note_round(rounds, delta)
            if self.profile:
                runs = sum(len(key_runs(self.relation(p)) or ()) for p in plan.predicates)
                self.profile(RoundCost(plan.predicates, rounds, sum(len(d) for d in delta.values()), **self.clock.take(), runs=runs))
            for p, d in delta.items():
                grown[p] = grown.get(p, 0) + len(d)
                if track and len(d):
                    added.setdefault(p, []).append(d)
        self.round_base += rounds + 1
        for p in plan.predicates:
            rel = self.relation(p)
            if isinstance(rel, RunRelation) and rel.seen is not None:
                rel.settled()
        return {p: union_all(self.d, self.arities[p], [self.current(d) for d in ds]) for p, ds in added.items()}

    def _thin(self, plan: ComponentPlan, delta: dict[str, EncodedRelation], rounds: int, joined: Set[str]):
        """Run rounds tuple at a time from ``delta`` (thin.py); return the last round's number,
        the delta left for the columnar rounds and every tuple the thin rounds added."""
        runner = thin.ThinRounds(self, plan)
        rounds, left = runner.run({p: set(d) for p, d in delta.items() if len(d)}, rounds)
        more, left = runner.hand_back(left)
        self._absorb(more, plan.predicates, joined)
        return rounds, left, more

    def _note_round(self, round: int, delta: dict[str, EncodedRelation]) -> None:
        """Keep a round's new tuples when asked (``rounds``): each tuple of a delta is absent
        from its relation before the round, so a tuple's round is the round it was first derived
        in, and every derivation found for it reads tuples of earlier rounds only."""
        if self.rounds is not None:
            for pred, rows in delta.items():
                if len(rows):
                    self.rounds.setdefault(pred, []).append((self.round_base + round, rows))

    def _delta_source(self, position: int, delta: EncodedRelation):
        return lambda i, atom: delta if i == position else self.relation(atom.pred)

    def _absorb(self, derived: dict[str, EncodedRelation], members: Iterable[str], joined: Set[str] = frozenset()) -> dict[str, EncodedRelation]:
        """Add tuples derived with ``known=members`` (so none is in its relation yet) to the
        relations; return them per predicate. A packed relation grows by sorted runs
        (:class:`~nablog.engines.runs.RunRelation`), so a round does not copy all of it; runs of
        a relation deduplicated by a key set are merged only if rules join it (``joined``)."""
        delta = {}
        start = time.perf_counter()
        for pred in members:
            if pred not in derived:
                continue
            old, new = self.relation(pred), derived[pred]
            if len(new):
                grows = old.packed and old.arity and key_runs(old) is not None
                self.rels[pred] = RunRelation.grown(old, new.keys, merge=pred in joined) if grows else union_disjoint(old, new)
            delta[pred] = new
        self.clock.add("merge", start)
        return delta


def _joined_whole(plan: ComponentPlan) -> set[str]:
    """Members some semi-naive rule instance reads whole (a rule with several recursive literals
    joins the delta of one with the others): their runs must stay few."""
    return {rule.body[i].atom.pred for rule, positions in plan.recursive_rules if len(positions) > 1 for i in positions}  # type: ignore[union-attr]


def _live_variables(order: list, keep: set[Var]) -> list[set[Var]]:
    """Per position of a body order, the variables needed after it: by later elements or ``keep``."""
    live = [set(keep)]
    for element in reversed(order[1:]):
        live.append(live[-1] | set(element.variables()))
    return live[::-1]


HASH_ROUND, HASH_MIN = 4, 65_536  # relations this large get a key set (a Bloom filter only from this round; smaller ones are searched in cache)
DEDUP_KEYS = 2_000_000  # distinct derived tuples deduplicated against a relation at once (16 MB of keys)
CHUNK_ROWS = 200_000  # rows of an intermediate join result evaluated at once (500,000 took 17% more memory on email-Eu-core, no less time)

def rules_of(plan: ComponentPlan) -> tuple[Rule, ...]:
    return plan.exit_rules + tuple(r for r, _ in plan.recursive_rules)
