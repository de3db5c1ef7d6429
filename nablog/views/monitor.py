"""View monitoring: what entered and left each monitored view in one commit (seed 001, Algorithm 3).

A :class:`Monitor` is compiled once for a program and the views it watches, then called once per
commit with the old base facts and the change. Four modes give the same differentials (seed 001
Theorems 1 and 2; tests check it on generated programs with negation and recursion):

- ``materialized`` — Algorithm 1's maintenance rules evaluated layer by layer over the kept model
  (kept by the monitor itself, in place, between numbered commits: :mod:`nablog.views.live`);
- ``rod`` — Rederivation on Demand (Algorithm 2): no derived relation is read from a kept model;
  the maintenance rules ask, through magic predicates, for the old tuples they need, and the
  magic-set rewriting of the original rules (the query rules Q) rederives just those, alternating
  with the maintenance rules until no new question is asked (Algorithm 3's repeat loop);
- ``dred`` — the python engine's delete-and-rederive maintenance of the kept model;
- ``recompute`` — the new model evaluated afresh and compared with the old one.

Layers are the strata of the rules the views depend on (the rule/goal graph, §2.1): a layer's net
differentials become the ``ins__``/``del__`` inputs of the layers above it (§4.2), which is what
keeps negation exact.

Example 4 (and Example 2's result): the graph of §2.2 without the untouched subgraph G0, deleting
``edge(b, c)`` and inserting ``edge(h, d)``:

>>> from nablog.lang import parse
>>> rules = parse("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y).")
>>> edge = {("f","e"), ("e","d"), ("e","a"), ("a","b"), ("d","c"), ("b","c"), ("c","g")}
>>> from nablog.lang import Delta
>>> for mode in MODES:
...     change = Monitor(rules, ["closure"], mode).differentials({"edge": edge}, Delta.parse("+edge(h, d). -edge(b, c)."))
...     print(mode, str(change))
materialized +closure(h, c). +closure(h, d). +closure(h, g). -closure(a, c). -closure(a, g). -closure(b, c). -closure(b, g).
rod +closure(h, c). +closure(h, d). +closure(h, g). -closure(a, c). -closure(a, g). -closure(b, c). -closure(b, g).
dred +closure(h, c). +closure(h, d). +closure(h, g). -closure(a, c). -closure(a, g). -closure(b, c). -closure(b, g).
recompute +closure(h, c). +closure(h, d). +closure(h, g). -closure(a, c). -closure(a, g). -closure(b, c). -closure(b, g).
"""

from __future__ import annotations

from collections.abc import Set
from typing import Callable, Iterable, Mapping

from ..engines import PythonEngine
from ..engines.encoding import ConstantDictionary, EncodedRelation
from ..engines.algebra import difference, union_disjoint
from ..lang import AnalysisError, Delta, Literal, NablogError, Program, analyze
from ..transforms.maintenance import MINUS, PLUS, RED, maintenance_rules
from ..transforms.propagation import DEL, INS
from ..transforms.rod import rod
from .deletions import LEVEL_GAP, Deletions, recursive
from .live import Budget, Levelled, LivePlan, OverBudget, Relation, Unsupported

MODES = ("materialized", "rod", "dred", "recompute")

# rod's ski rental: a commit whose tuple-at-a-time rederivation adds more rows than the model's
# derived tuples / ROD_SHARE (at least ROD_FLOOR) stops and recomputes instead (issue 29: one
# deletion from the closure of G(1600, 0.001) asked Q for 830 K old tuples and M derived 3.3 M
# rows, 37 s CPU, where evaluating both models takes 0.3 s). Measured there: ~2.5 us a row added
# tuple at a time, ~0.15 us a model tuple per column-engine evaluation, so a recomputation (two
# evaluations) costs what ~1/8 of the model's size in rows does; an eighth of that is risked.
ROD_SHARE = 64
ROD_FLOOR = 2048


class Monitor:
    """The differentials of ``views`` under changes of base facts, by one of :data:`MODES`.

    Parameters
    ----------
    rules : Program
        The database's rules (facts separated out, as :func:`~nablog.lang.separate_facts` gives).
    views : iterable of str
        The monitored predicates; only the rules they depend on are compiled.
    mode : str
        ``materialized``, ``rod``, ``dred`` or ``recompute`` (see the module docstring).
    build : str
        How ``materialized`` builds a recursive layer's kept relations: ``engine`` (one
        column-engine evaluation, levels from its rounds) or ``tuples`` (the live plans, tuple at
        a time); both give the same relations and valid levels.
    """

    def __init__(self, rules: Program, views: Iterable[str], mode: str = "materialized", build: str = "engine"):
        if mode not in MODES:
            raise NablogError(f"unknown maintenance mode {mode!r}", hint="choose one of " + ", ".join(MODES))
        self.mode = mode
        # How a recursive layer's kept state is built (materialized): "engine", from one
        # column-engine evaluation's rounds, or "tuples", by the live plans tuple at a time.
        self.build = build
        self.views = tuple(dict.fromkeys(views))
        self.rules = relevant_rules(rules, self.views)
        self.derived = frozenset(self.rules.derived)
        self.engine = PythonEngine()
        analysis = analyze(self.rules)
        levels = sorted({analysis.stratum[p] for p in self.derived})
        layers = [Program(tuple(r for r in self.rules.rules if analysis.stratum[r.head[0].pred] == level)) for level in levels]
        self.layers: list[tuple[Program, Program]] = []
        for layer in layers:
            compiled = rod(layer, self.derived) if mode == "rod" else maintenance_rules(layer, only_new=True)
            self.layers.append((layer, compiled))
        self.queries = _query_rules(self.rules, [m for _, c in self.layers for m in c.derived if m.startswith("m_")]) if mode == "rod" else Program()
        # RoD reads base facts only; it keeps them encoded between commits (see _encoded_base).
        self._base: tuple[int, dict[str, EncodedRelation]] | None = None
        # The relations the rules read (materialized: old state, base and derived; rod: the base
        # relations only), kept in place between numbered commits, and the rules planned once
        # (None: a rule the live plans do not cover, evaluated by the engine instead).
        self._inputs = [_old_relations(compiled) for _, compiled in self.layers]
        self._live: tuple[int, dict[str, Relation]] | None = None
        self._plans: list[LivePlan] | None = None
        self._query_plan: LivePlan | None = None
        self._answers: dict[str, str] = {}  # Q's predicate holding answers -> the predicate p
        self._sources: dict[str, list[str]] = {}  # and back
        self._asks: dict[str, list[tuple[str, tuple[int, ...]]]] = {}  # p -> [(m_<adornment>__p, positions bound)]
        for m in sorted({m for _, c in self.layers for m in c.derived if m.startswith("m_")}):
            pred, positions = _question(m)
            self._asks.setdefault(pred, []).append((m, positions))
        # materialized: a recursive layer's del__p checked tuple by tuple and red__p rederived
        # as a worklist (views/deletions.py), with a level per tuple of the layer, given by the
        # layer's rules evaluated once; and the layer's rules without (R), for a commit that
        # cannot insert into the layer (the worklist's red__p is then whole).
        self._deletions: list[tuple[Deletions, LivePlan, LivePlan] | None] = [None] * len(self.layers)
        self._levels = _Levels()
        if mode in ("materialized", "rod"):
            try:
                self._plans = []
                for i, (layer, compiled) in enumerate(self.layers):
                    if mode == "materialized" and recursive(layer):
                        compiled = Program(tuple(r for r in compiled.rules if r.head[0].pred[len(DEL):] not in layer.derived or not r.head[0].pred.startswith(DEL)))
                        without = Program(tuple(r for r in compiled.rules if r.head[0].pred[len(RED):] not in layer.derived or not r.head[0].pred.startswith(RED)))
                        self._deletions[i] = (Deletions(layer), LivePlan(layer), LivePlan(without))
                    self._plans.append(LivePlan(compiled))
                if self.queries.rules:
                    # Q's answers go to M straight from the adorned predicates (copied into p by
                    # the monitor, only those M asked about: _rod_live), not through p's copy rules.
                    self._answers = _answer_sources(self.queries, self.derived)
                    for source, pred in self._answers.items():
                        self._sources.setdefault(pred, []).append(source)
                    self._query_plan = LivePlan(Program(tuple(r for r in self.queries.rules if r.head[0].pred not in self.derived or r.head[0].pred in self._answers)))
            except Unsupported:
                self._plans = None
        kept = {p for inputs in self._inputs for p in inputs if not p.startswith((INS, DEL))}
        if mode == "rod":
            # Base relations only: not M's magic predicates, which Q reads (resume adds to them).
            kept = (kept | _old_relations(self.queries)) - self.derived - {p for _, c in self.layers for p in c.derived}
        self._kept = kept
        self._dred: tuple[int, Mapping[str, Set]] | None = None  # dred: the model after the last commit
        # rod: the model's derived tuples (learnt when warmed with a model, kept current), which
        # sets the rows a commit may rederive before recomputing (ROD_SHARE); None: unbounded.
        self._rod_rows: int | None = None
        self.last_changes: dict[str, tuple] | None = None

    def maintenance_program(self) -> Program:
        """The rules this monitor evaluates, layer after layer (then Q for ``rod``)."""
        out = Program()
        for _, compiled in self.layers:
            out = out + compiled
        return out + self.queries

    def differentials(
        self,
        facts: Mapping[str, Set],
        change: Delta,
        model: "Mapping[str, Set] | Callable[[], Mapping[str, Set]] | None" = None,
        version: int | None = None,
        *,
        real: bool = False,
    ) -> Delta:
        """What a change of base facts makes enter and leave the monitored views: the delta of
        the views (a view that does not change has no rows in it).

        ``facts`` are the base facts before ``change`` (stored relations by their stored names,
        as the change names them); ``model`` their perfect model (or a function giving it, called
        only when needed), read by ``materialized`` and ``dred`` (computed when not given) and
        never by ``rod``. Only true changes count: inserting a present fact or deleting an absent
        one changes nothing.

        ``version`` numbers the state ``facts`` is in, when the caller numbers its commits (as
        ``Database`` does): ``rod`` then keeps the base facts encoded from one commit to the next
        instead of encoding them again each time, and ``materialized`` keeps the relations it
        reads, updated in place with each commit's differentials.

        ``real`` says ``change`` holds true changes only (a commit's, computed once against the
        data): they are taken as given, not checked against ``facts`` again.
        """
        if real:
            ins, dele = change.sides()
            ins, dele = {p: r for p, r in ins.items() if r}, {p: r for p, r in dele.items() if r}
        else:
            ins, dele = true_changes(facts, *change.sides())
        if self._plans is not None and self.mode == "rod":
            base = self._live_state(version, lambda: facts)
            budget = None if self._rod_rows is None else Budget(max(ROD_FLOOR, self._rod_rows // ROD_SHARE))
            try:
                changes = self._rod_live(base, ins, dele, budget)
                if self._rod_rows is not None:
                    self._rod_rows += sum(len(plus) - len(minus) for plus, minus in changes.values())
            except OverBudget:
                changes = self._recomputed(facts, ins, dele)  # learns the model's size
            self._advance_live(version, ins, dele, {})
        elif self.mode == "rod":
            changes = self._rod(self._encoded_base(facts, version), ins, dele)
            self._advance(version, ins, dele)
        elif self._plans is not None:
            changes = self._materialized_live(self._live_state(version, model or (lambda: self.engine.evaluate(self.rules, facts))), ins, dele)
            self._advance_live(version, ins, dele, changes)
        else:
            if self.mode == "dred" and version is not None and self._dred is not None and self._dred[0] == version:
                model = self._dred[1]  # kept from the last commit
            if callable(model):
                model = model()
            if model is None:
                model = self.engine.evaluate(self.rules, facts)
            if self.mode == "materialized":
                changes = self._materialized(model, ins, dele)
            elif self.mode == "dred":
                new, gained, lost = self.engine.update(self.rules, model, insert=ins, delete=dele, changes=True)
                self._dred = None if version is None else (version + 1, new)
                changes = {p: (gained.get(p, ()), lost.get(p, ())) for p in self.derived}
            else:
                new_facts = {p: (set(rows) - dele.get(p, set())) | ins.get(p, set()) for p, rows in facts.items()}
                new_facts.update({p: rows for p, rows in ins.items() if p not in facts})
                new = self.engine.evaluate(self.rules, new_facts)
                changes = {p: (set(new.get(p, ())) - set(model.get(p, ())), set(model.get(p, ())) - set(new.get(p, ()))) for p in self.derived}
        # Every derived relation's change, for a caller that keeps the whole model.
        self.last_changes = changes
        for view in self.views:
            if view not in self.derived:  # a base relation: its change is the true base change
                changes[view] = (ins.get(view, ()), dele.get(view, ()))
        return Delta.of_rows({v: changes[v][0] for v in self.views if v in changes}, {v: changes[v][1] for v in self.views if v in changes})

    def _materialized(self, model, ins, dele) -> dict:
        deltas = _deltas(ins, dele)
        out: dict[str, tuple] = {}
        for layer, compiled in self.layers:
            if not _touched(compiled, deltas):
                continue
            env = {p: model[p] for p in _old_relations(compiled) if p in model}
            result = self.engine.evaluate(compiled, {**env, **deltas})
            self._net(layer, result, deltas, out)
        return out

    def warm(self, facts: Mapping[str, Set], model, version: int) -> bool:
        """Build the state kept between commits for the state numbered ``version`` now (a
        subscription starting), so that the next commit costs only its change; True when it was
        built now (not kept from before)."""
        if self._plans is not None:
            if self._live is not None and self._live[0] == version:
                return False
            if self.mode == "rod" and model is not None:
                model = model() if callable(model) else model
                self._rod_rows = sum(len(model.get(p, ())) for p in self.derived)
            state = self._live_state(version, (lambda: facts) if self.mode == "rod" else model)
            for pred, positions in self._probes({p: len(rel) for p, rel in state.items()}):
                if pred in state:
                    state[pred].lookup(positions, ())  # builds the index
            return True
        if self.mode == "dred" and not (self._dred is not None and self._dred[0] == version):
            self._dred = (version, model() if callable(model) else model)
            return True
        return False

    def kept(self, pred: str, version: int) -> Relation | None:
        """The relation ``pred`` as this monitor keeps it for the state numbered ``version``, if it
        does (a subscription's snapshot is read from it: the database's model may be behind)."""
        if self._live is not None and self._live[0] == version:
            return self._live[1].get(pred)
        return None

    def _live_state(self, version: int | None, source) -> dict[str, Relation]:
        """The relations the rules read: kept from the last commit when ``version`` follows it,
        else copied from ``source`` (the model or the base facts; a function, called only then).
        A recursive layer's relations are :class:`Levelled` (each tuple with its level)."""
        if version is not None and self._live is not None and self._live[0] == version:
            return self._live[1]
        if callable(source):
            source = source()
        levelled = {p for (layer, _), d in zip(self.layers, self._deletions) if d for p in layer.derived}
        state = {p: Relation(source.get(p, ())) for p in self._kept - levelled}
        self._levels = _Levels()
        sizes = {p: len(source.get(p, ())) for p in self._kept}
        for (layer, _), inputs, d in zip(self.layers, self._inputs, self._deletions):
            if d is None:
                continue
            if self.build == "engine" and all(self.rules.signatures.get(p) for p in layer.derived):
                state.update(self._levelled(layer, {p: source.get(p, state.get(p, ())) for p in _old_relations(layer)}, sizes))
            else:
                # Tuple at a time: each tuple's level its place in the derivation order.
                d[1].run({p: state[p] for p in inputs if p in state}, self._levels.numbering(layer.derived))
                state.update({p: Levelled(self._levels[p]) for p in layer.derived if p in self._kept})
            self._levels.update({p: state[p] for p in layer.derived if p in state})
        self._live = None if version is None else (version, state)
        return state

    def _levelled(self, layer: Program, inputs: Mapping[str, Set], sizes: dict[str, int]) -> dict[str, Levelled]:
        """A recursive layer's kept relations from ONE column-engine evaluation (seconds, where
        tuple at a time took minutes and 11 GB on a 24.7 M-pair closure): each tuple's level is
        the semi-naive round that first derived it, times ``LEVEL_GAP`` (a derivation from
        lower levels, as views/deletions.py needs), with the indexes the chosen join orders
        probe built column-wise."""
        rounds: dict = {}
        self.engine.evaluate(layer, inputs, rounds=rounds)
        wanted = self._probes(sizes)
        out = {}
        for p in layer.derived:
            found = rounds.get(p, [])
            values = found[0][1].dictionary.values if found else []
            out[p] = Levelled.from_columns(values, [(k * LEVEL_GAP, rows.columns()) for k, rows in found], [w for q, w in wanted if q == p])
            if found:
                self._levels.last = max(self._levels.last, found[-1][0] * LEVEL_GAP)
        return out

    def _probes(self, sizes: dict[str, int] | None = None) -> set[tuple[str, tuple[int, ...]]]:
        """The indexes the plans look up (only those of the join orders taken with ``sizes``)."""
        plans = [*self._plans, *([self._query_plan] if self._query_plan else []), *(d[0] for d in filter(None, self._deletions))]
        return {probe for plan in plans for probe in plan.probes(sizes)}

    def _materialized_live(self, state: dict[str, Relation], ins, dele) -> dict:
        deltas = {p: Relation(rows) for p, rows in _deltas(ins, dele).items()}
        out: dict[str, tuple] = {}
        for (layer, compiled), plan, inputs, d in zip(self.layers, self._plans, self._inputs, self._deletions):
            if not any(len(deltas.get(p, ())) for p in inputs):
                continue
            result = self._run_layer(plan, d, {**{p: state[p] for p in inputs if p in state}, **deltas})
            for pred in layer.derived:
                plus, minus = result.get(PLUS + pred, Relation()), result.get(MINUS + pred, Relation())
                deltas[INS + pred], deltas[DEL + pred] = plus, minus
                out[pred] = (plus.rows, minus.rows)
        return out

    def _run_layer(self, plan: LivePlan, deletions: "tuple[Deletions, LivePlan, LivePlan] | None", env: dict) -> dict:
        """One layer's maintenance rules over ``env``; a recursive layer's ``del__p`` and
        ``red__p`` from :class:`Deletions`, and the levels of the tuples (R) and (Iᵢ) add (above
        every level given) and of those the commit removes brought up to date. (R) is evaluated
        again with the layer's insertions (``plan``) only when the commit may insert into it."""
        if deletions is None:
            return plan.run(env)
        checked, _, without = deletions
        out = checked.run(env, self._levels, self._levels.numbering(checked.heads))
        mixed = any(len(out[DEL + p]) for p in checked.heads) and any(len(env.get(p, ())) for p in checked.inserting)
        result = (plan if mixed else without).run({**env, **out}, self._levels.numbering(checked.heads, (INS, RED)))
        for p in checked.heads:
            levels = self._levels[p]
            if isinstance(levels, Levelled):
                continue  # the row and its level leave together when the commit is applied (_advance_live)
            for row in result.get(MINUS + p, ()):
                del levels[row]
        return result

    def _advance_live(self, version: int | None, ins: dict, dele: dict, changes: dict) -> None:
        """Apply a commit's true base changes and the derived differentials to the kept relations."""
        if version is None or self._live is None or self._live[0] != version:
            self._live = None
            return
        state = self._live[1]
        for pred, (plus, minus) in [*((p, (ins.get(p, ()), dele.get(p, ()))) for p in set(ins) | set(dele)), *changes.items()]:
            rel = state.get(pred)
            if rel is None:
                continue
            for row in minus:
                rel.discard(row)
            for row in plus:
                rel.add(row)
        self._live = (version + 1, state)

    def _rod_live(self, base: dict[str, Relation], ins, dele, budget: Budget | None = None) -> dict:
        """Algorithm 3 over the kept base relations: the maintenance rules M, then the query rules
        Q for the questions M asked, until no new question is asked. Both are continued
        (:meth:`LivePlan.resume`) rather than evaluated again: Q with the new questions, M with
        the old tuples Q rederived that answer a question M asked (M joins ``p`` only on bindings
        it asked about — each literal over ``p`` follows its magic rule — so the others, such as
        a closure's answers for a question routed from ``bb`` to ``bf``, cannot join there; a
        later question may take them). A stratum of M reading the new tuples only positively is
        continued from them, one reading them under ``not``, such as (E1), evaluated again.
        M and Q add at most ``budget`` rows (:class:`OverBudget` past it)."""
        deltas = {p: Relation(rows) for p, rows in _deltas(ins, dele).items()}
        asked: dict[str, Relation] = {}
        old = {p: Relation() for p in self.derived}  # the old state passed to M, grown in place
        answers: dict | None = None  # Q's state
        out: dict[str, tuple] = {}
        for (layer, compiled), plan, inputs in zip(self.layers, self._plans, self._inputs):
            if not any(len(deltas.get(p, ())) for p in inputs):
                continue
            magic = [p for p in compiled.derived if p.startswith("m_")]
            result = plan.run({**base, **old, **deltas}, budget=budget)
            while self._query_plan is not None:
                fresh = {m: [r for r in result.get(m, ()) if asked.setdefault(m, Relation()).add(r)] for m in magic}
                fresh = {m: rows for m, rows in fresh.items() if rows}
                if not fresh:
                    break
                if answers is None:
                    answers = self._query_plan.run({**base, **{m: Relation(rows) for m, rows in asked.items()}}, budget=budget)  # copies: resume adds to them
                else:
                    self._query_plan.resume(answers, fresh)
                gained = self._matching(answers, asked, old)  # new questions may have old answers
                if not gained:
                    break  # M reads nothing new: it asks nothing new
                plan.resume(result, gained)
            for pred in layer.derived:
                plus, minus = result.get(PLUS + pred, Relation()), result.get(MINUS + pred, Relation())
                deltas[INS + pred], deltas[DEL + pred] = plus, minus
                out[pred] = (plus.rows, minus.rows)
        return out

    def _matching(self, answers: dict, asked: dict[str, Relation], old: dict[str, Relation]) -> dict[str, list]:
        """The tuples in Q's ``answers`` that answer a question in ``asked`` (looked up by the
        bound arguments in each predicate holding answers) and are not in ``old`` yet."""
        gained: dict[str, list] = {}
        for pred, questions in self._asks.items():
            sources = [answers[a] for a in self._sources.get(pred, ()) if a in answers]
            if not sources:
                continue
            known, found, arity = old[pred].rows, [], self.rules.signatures[pred]
            for m, positions in questions:
                keys = asked.get(m)
                if not keys:
                    continue
                for key in keys.rows:
                    for rel in sources:
                        if len(positions) == arity:  # every argument bound
                            rows = (key,) if key in rel.rows else ()
                        else:
                            rows = rel.lookup(positions, key) if positions else rel.rows
                        found += [row for row in rows if row not in known]
            if found:
                gained[pred] = found
        return gained

    def _recomputed(self, facts: Mapping[str, Set], ins: dict, dele: dict) -> dict:
        """Every derived relation's change by recomputation: the model before and after the
        change evaluated by the column engine over one dictionary, and compared as encoded
        relations (only the changes are decoded). rod's fallback for a commit past its budget."""
        old_base = self._encoded_base({**{p: set() for p in ins}, **facts}, None, ins)
        new_base = dict(old_base)
        for pred in set(ins) | set(dele):
            rel = old_base[pred]
            plus = EncodedRelation.from_rows(rel.dictionary, ins.get(pred, ()), rel.arity)
            minus = EncodedRelation.from_rows(rel.dictionary, dele.get(pred, ()), rel.arity)
            new_base[pred] = union_disjoint(difference(rel, minus), plus)
        old, new = self.engine.evaluate(self.rules, old_base), self.engine.evaluate(self.rules, new_base)
        out: dict[str, tuple] = {}
        for pred in self.derived:
            before, after = old.get(pred), new.get(pred)
            if isinstance(before, EncodedRelation) and isinstance(after, EncodedRelation) and before.dictionary is after.dictionary:
                out[pred] = (set(difference(after, before)), set(difference(before, after)))
            else:
                before, after = set(before or ()), set(after or ())
                out[pred] = (after - before, before - after)
        self._rod_rows = sum(len(new.get(p, ())) for p in self.derived)
        return out

    def _encoded_base(self, facts: Mapping[str, Set], version: int | None, also: Mapping[str, Set] | None = None) -> dict[str, EncodedRelation]:
        """The base relations over one dictionary (which also holds the rules' constants, and
        those of the rows ``also``, so that every evaluation shares it): kept from the last
        commit when ``version`` follows it."""
        if version is not None and self._base is not None and self._base[0] == version:
            return self._base[1]
        base = {p: rows for p, rows in facts.items() if p not in self.derived}
        constants = set(self.maintenance_program().constants()) | set(self.rules.constants())
        for rows in (also or {}).values():
            constants.update(v for row in rows for v in row)
        for rows in base.values():
            constants.update(rows.dictionary.values if isinstance(rows, EncodedRelation) else (v for row in rows for v in row))
        d = ConstantDictionary.build(constants)
        arities = self.rules.signatures
        encoded = {}
        for pred, rows in base.items():
            arity = getattr(rows, "arity", None) or arities.get(pred) or (len(next(iter(rows))) if len(rows) else 0)
            encoded[pred] = EncodedRelation.from_rows(d, rows, arity)
        if version is not None:
            self._base = (version, encoded)
        return encoded

    def _advance(self, version: int | None, ins: dict, dele: dict) -> None:
        """Apply a commit's true changes to the kept base relations (or forget them when a new
        constant or relation appears: the next commit encodes afresh)."""
        if version is None or self._base is None or self._base[0] != version:
            self._base = None
            return
        encoded = dict(self._base[1])
        for pred in set(ins) | set(dele):
            rel = encoded.get(pred)
            rows = ins.get(pred, set()) | dele.get(pred, set())
            if rel is None or any(rel.dictionary.id(v) is None for row in rows for v in row):
                self._base = None
                return
            plus = EncodedRelation.from_rows(rel.dictionary, ins.get(pred, ()), rel.arity)
            minus = EncodedRelation.from_rows(rel.dictionary, dele.get(pred, ()), rel.arity)
            encoded[pred] = union_disjoint(difference(rel, minus), plus)
        self._base = (version + 1, encoded)

    def _rod(self, base: Mapping[str, Set], ins, dele) -> dict:
        deltas = _deltas(ins, dele)
        asked: dict[str, set] = {}
        old: Mapping[str, Set] = {}
        out: dict[str, tuple] = {}
        for layer, compiled in self.layers:
            if not _touched(compiled, deltas):
                continue
            magic = [p for p in compiled.derived if p.startswith("m_")]
            while True:
                env = {**base, **{p: old[p] for p in self.derived if p in old}, **deltas}
                result = self.engine.evaluate(compiled, env)
                fresh = {m: set(result.get(m, ())) - asked.get(m, set()) for m in magic}
                fresh = {m: rows for m, rows in fresh.items() if rows}
                if not fresh:
                    break
                old = self._rederive(base, asked, old, fresh)
                for m, rows in fresh.items():
                    asked.setdefault(m, set()).update(rows)
            self._net(layer, result, deltas, out)
        return out

    def _rederive(self, base, asked: dict, old: Mapping[str, Set], fresh: dict) -> Mapping[str, Set]:
        """The old tuples of derived predicates that the magic facts ask for (and others the
        rewriting derives on the way): Q over the base facts — evaluated the first time, then
        continued from its last model with the new questions (the magic facts only grow)."""
        if not old:
            return self.engine.evaluate(self.queries, {**base, **{m: asked.get(m, set()) | fresh.get(m, set()) for m in set(asked) | set(fresh)}})
        return self.engine.update(self.queries, old, insert=fresh)

    def _net(self, layer: Program, result, deltas: dict, out: dict) -> None:
        """A layer's net differentials: the answer for its views and the input of higher layers."""
        for pred in layer.derived:
            plus, minus = result.get(PLUS + pred, set()), result.get(MINUS + pred, set())
            deltas[INS + pred], deltas[DEL + pred] = plus, minus
            out[pred] = (plus, minus)


class _Levels(dict):
    """Per predicate of a recursive layer, each tuple's level (views/deletions.py), numbered in
    the order :meth:`LivePlan.run` derives them (:meth:`numbering`), ``LEVEL_GAP`` apart: levels
    given later are higher, and a proof may re-level a tuple between two of them."""

    def __init__(self):
        super().__init__()
        self.last = 0

    def numbering(self, preds: Iterable[str], prefixes: Iterable[str] = ("",)) -> dict:
        """For :meth:`LivePlan.run`'s ``note``: each row added to ``prefix + p`` gets the next
        level, as level of ``p``'s row (or ``LEVEL_GAP`` above ``floor`` when given: the highest
        level it was derived from, views/deletions.py). A commit numbers the rows added to
        ``ins__p`` and ``red__p``, where each is derived from rows there before it — not those
        added to ``new__p``, which (N2)/(N3) copy from ``red__p``/``ins__p`` in a set's order."""

        def number(levels: dict) -> Callable[..., None]:
            def note(row: tuple, floor: int | None = None) -> None:
                level = levels[row] = (self.last if floor is None else floor) + LEVEL_GAP
                self.last = max(self.last, level)

            return note

        return {prefix + p: number(self.setdefault(p, {})) for p in preds for prefix in prefixes}


def relevant_rules(rules: Program, views: Iterable[str]) -> Program:
    """The rules the ``views`` depend on (the rule/goal graph of seed 001 §2.1), in program order."""
    uses: dict[str, set[str]] = {}
    for rule in rules.rules:
        uses.setdefault(rule.head[0].pred, set()).update(b.atom.pred for b in rule.body if isinstance(b, Literal))
    needed: set[str] = set()
    todo = list(views)
    while todo:
        pred = todo.pop()
        if pred not in needed:
            needed.add(pred)
            todo.extend(uses.get(pred, ()))
    return Program(tuple(r for r in rules.rules if not r.is_fact() and r.head[0].pred in needed))


def true_changes(facts: Mapping[str, Set], insert: Mapping, delete: Mapping) -> tuple[dict[str, set], dict[str, set]]:
    """Insertions of absent facts and deletions of present ones (a fact in both is deleted)."""
    ins: dict[str, set] = {}
    dele: dict[str, set] = {}
    for pred in set(insert) | set(delete):
        old = facts.get(pred, set())
        d = {tuple(r) for r in delete.get(pred, ())}
        i = {tuple(r) for r in insert.get(pred, ())} - d
        i = {r for r in i if r not in old}
        d = {r for r in d if r in old}
        if i:
            ins[pred] = i
        if d:
            dele[pred] = d
    return ins, dele


def _deltas(ins: dict, dele: dict) -> dict[str, set]:
    out = {INS + p: rows for p, rows in ins.items()}
    out.update({DEL + p: rows for p, rows in dele.items()})
    return out


def _touched(compiled: Program, deltas: dict) -> bool:
    """Whether some input delta of a layer's maintenance rules is non-empty."""
    inputs = {b.atom.pred for r in compiled.rules for b in r.body if isinstance(b, Literal)} - set(compiled.derived)
    return any(deltas.get(p) for p in inputs)


def _old_relations(compiled: Program) -> set[str]:
    return {b.atom.pred for r in compiled.rules for b in r.body if isinstance(b, Literal)} - set(compiled.derived)


def _query_rules(rules: Program, magic: Iterable[str]) -> Program:
    """Q of Algorithm 3: one magic-set rewriting of ``rules`` for every adorned question the
    maintenance rules ask (``m_<adornment>__p``), answering into ``p`` itself, each transitive
    closure asked in its linear form and a closure question with both arguments bound asked as
    its ``bf`` part (:func:`~nablog.transforms.magic.answer_rules`). Should the rewriting not be
    stratified, the original rules are evaluated in full instead (sound, only slower)."""
    from ..transforms.magic import answer_rules

    try:
        program = answer_rules(rules, magic)
        analyze(program)
    except AnalysisError:
        return rules
    return program


def _question(magic: str) -> tuple[str, tuple[int, ...]]:
    """``m_<adornment>__p``: ``p`` and the argument positions the adornment binds."""
    adorn, pred = magic[2:].split("__", 1)
    return pred, tuple(i for i, a in enumerate(adorn) if a == "b")


def _answer_sources(queries: Program, derived: frozenset[str]) -> dict[str, str]:
    """Q's predicates holding answers for a derived predicate ``p``: the ``a_<adornment>__p`` its
    copy rules ``p(V..) :- a_<adornment>__p(V..).`` read, and ``p`` itself where Q evaluates it
    in full."""
    out: dict[str, str] = {}
    for rule in queries.rules:
        head = rule.head[0]
        if head.pred not in derived:
            continue
        body = rule.body[0] if len(rule.body) == 1 else None
        if isinstance(body, Literal) and body.positive and body.atom.pred.startswith("a_") and body.atom.args == head.args:
            out[body.atom.pred] = head.pred
        else:
            out[head.pred] = head.pred
    return out


__all__ = ["MODES", "Monitor", "relevant_rules", "true_changes"]
