"""A database's state and its one write path: the facts, the models and caches kept over them, the
version, and the commit that changes them (the machinery :class:`nablog.database.Database` delegates to).

Every commit goes the same way (:meth:`State.commit`): the true changes of a :class:`Delta`
(seed 002, Def. 1), refused when they add a violated constraint instance, written to the stores
(crash-safe, :meth:`nablog.io.Stores.commit`), then applied here: the monitors are told (seed 001),
the induced update (seed 002, Def. 2) is computed once, and every cache over the old state is dropped.

>>> from nablog.lang import parse, separate_facts
>>> rules, facts = separate_facts(parse("p(X) :- q(X), not r(X). q(1). r(1)."))
>>> state = State(rules, facts, PythonEngine())
>>> state.commit(Delta.parse("-r(1)."), "-r(1).").lines(), state.version
(['+p(1)', '-r(1)'], 1)
"""

from __future__ import annotations

import gc
import threading
from collections.abc import MutableSet
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterable

from .engines import Engine, Model, PythonEngine
from .engines.violations import Violation, find_violations
from .lang import ConstraintError, Delta, Program, Requirement, Rule
from .lang.ast import Aggregate
from .lang.delta import induced_update

if TYPE_CHECKING:
    from .engines.lookup import ModelIndex
    from .explain import Explainer
    from .io.stores import Stores
    from .views.subscriptions import Hub


@contextmanager
def long_lived():
    """Build what lives as long as a state — its model and the tables every request reads
    (:meth:`nablog.database.Database.prepare`, which a server calls once) — out of the cyclic
    garbage collector's sight. Sets of millions of tuples hold no reference cycles, yet each full
    collection walks every one of them: on the 1e6-fact org chart a prepared first request took
    0.15 CPU s and the first after a commit up to 0.41 s when a collection fell inside it, against
    0.03–0.05 s with everything frozen. Inside, collection is paused; on leaving, everything alive
    is moved to the collector's permanent generation (``gc.freeze``), which it never walks again.
    Reference counting still frees what a commit drops; only a reference cycle alive at that
    moment and dropped later is never collected.

    >>> with long_lived():
    ...     facts = {(i, str(i)) for i in range(3)}
    >>> gc.isenabled()
    True
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


class State:
    """The facts of one database and what is kept over them until a commit changes them: the
    engine's model, the python engine's model (view updating reasons on it), their constraint
    violations, the lookup index, the proofs (explainer); and the version, the basis (a
    fingerprint of the data read) and the subscriptions' hub.

    ``lock`` is held by every commit: a reader that holds it sees no half commit.
    """

    def __init__(self, rules: Program, facts: dict, engine: Engine, stores: "Stores | None" = None, version: int = 0, basis: str | None = None):
        self.rules = rules
        self.facts = facts
        self.engine = engine
        self.stores = stores
        self.version = version
        self.lock = threading.RLock()  # one writer at a time; a snapshot sees no half commit
        self.hub: "Hub | None" = None  # the subscriptions (views.subscriptions.Hub), made on first subscribe
        self._model: Model | None = None
        self._python_model: Model | None = None
        # Base changes of commits whose induced update the monitors computed, not yet applied to
        # the python model (see _defer and _catch_up).
        self._pending: tuple[dict[str, set], dict[str, set]] = ({}, {})
        self._violations: list[Violation] | None = None
        self._index: "ModelIndex | None" = None  # a ModelIndex over the python model, for view updating
        # The tables of the last index and the (gained, lost) tuples of each commit since: the
        # next index keeps those it can bring up to date (ModelIndex.carry), not rebuilt per commit.
        self._carried: tuple[dict, list[tuple[dict, dict]]] | None = None
        self._python_violations: list[Violation] | None = None
        self._explainer: "Explainer | None" = None  # proofs over the current model, made on first why
        self.basis = self.fingerprint() if basis is None else basis  # of the data the database was read from

    # -- what is kept over the facts --------------------------------------------------------------

    def fingerprint(self) -> str:
        """What the data was read from, as :meth:`nablog.io.Stores.fingerprint` says (size,
        modification time and inode of every file); for a database held in memory only, the
        number of changes applied to it."""
        if self.stores is None:
            return f"in memory, version {self.version}"
        return self.stores.fingerprint()

    def model(self) -> Model:
        """The engine's perfect model, computed once per state."""
        self._catch_up()
        if self._model is None:
            self._model = self.engine.evaluate(self.rules, self.facts)
        return self._model

    def python_model(self) -> Model:
        """The model computed by the python engine (what view updating reasons and verifies on)."""
        if self.engine.name == "python":
            return self.model()
        self._catch_up()
        if self._python_model is None:
            self._python_model = PythonEngine().evaluate(self.rules, self.facts)
        return self._python_model

    def violations(self, limit: int | None = None) -> list[Violation]:
        """The engine model's violated constraints (all of them kept; the first ``limit``
        witnesses of each when given)."""
        if self._violations is not None:
            return self._violations if limit is None else [v.first(limit) for v in self._violations]
        found = find_violations(self.rules, self.model(), self.engine, limit=limit)
        if limit is None:
            self._violations = found
        return found

    def index(self) -> "ModelIndex":
        """The :class:`~nablog.engines.lookup.ModelIndex` of the python model, made once per state
        (with the model's violations, :meth:`python_violations`)."""
        model = self.python_model()
        if self._index is None or self._index.model is not model:
            from .engines.lookup import ModelIndex

            self._index = ModelIndex(model)
            if self._carried is not None:
                self._index.carry(*self._carried)
                self._carried = None
        if self._python_violations is None:
            self._python_violations = self.violations() if self.engine.name == "python" else find_violations(self.rules, model, PythonEngine())
        return self._index

    def python_violations(self) -> list[Violation]:
        """The python model's violated constraints (kept with :meth:`index`)."""
        self.index()
        return self._python_violations  # type: ignore[return-value]

    def explainer(self, originals: Iterable[Rule], python: bool = False) -> "Explainer":
        """The proofs over the current model — the python engine's with ``python=True`` — kept
        (with the heights found) until the model changes; ``originals`` are the rules as written."""
        from .explain import Explainer

        model = self.python_model() if python else self.model()
        if self._explainer is None or self._explainer.model is not model:
            self._explainer = Explainer(self.rules, model, list(originals))
        return self._explainer

    def subscriptions(self) -> "Hub":
        """The hub of this state's subscriptions, made on first use."""
        if self.hub is None:
            from .views.subscriptions import Hub

            self.hub = Hub(self.rules)
        return self.hub

    # -- the write path ---------------------------------------------------------------------------

    def commit(self, delta: Delta, request: str) -> Delta:
        """One commit: the true changes of ``delta`` (seed 002, Def. 1; a split predicate's facts
        are ``base__p``), refused with :class:`ConstraintError` when they add a violated constraint
        instance; written to the stores (crash-safe, with the undo log and the version number in
        the same commit: :meth:`nablog.io.Stores.commit`); then the facts and models brought up to
        date and the subscribers told. Returns the induced update (seed 002, Def. 2)."""
        with self.lock:
            derived = self.rules.derived
            real = delta.stored(derived).real(self.facts)
            after = self._refuse_new_violations(real)
            checked = True
            if self.stores is not None:
                written = self.stores.commit(delta, request=request, basis=self.basis, version=self.version + 1)
                if written != real.shown():  # the stores held other data than was read: theirs count
                    real, after, checked = written.stored(derived), None, False
            return self.changed(real, after, checked)

    def undo(self) -> "Delta | None":
        """Undo the newest commit on the stores' undo log (:meth:`nablog.io.Stores.undo`); None
        when there is none."""
        with self.lock:
            inverse = self.stores.undo(version=self.version + 1)  # type: ignore[union-attr]
            return None if inverse is None else self.changed(inverse.stored(self.rules.derived))

    def refresh(self) -> "Delta | None":
        """Read what other clients committed to the stores (a database opened by URL) and apply it
        as a commit; None when nothing changed."""
        stores = self.stores
        with self.lock:
            if stores.fingerprint() == self.basis:  # type: ignore[union-attr]
                return None
            basis, facts = stores.read_consistently(stores.load)  # type: ignore[union-attr]
            gained, lost = {}, {}
            for pred in set(facts) | set(self.facts):
                new, old = facts.get(pred, set()), self.facts.get(pred, set())
                if new != old:
                    gained[pred], lost[pred] = new - old, old - new
            stores.settled = basis  # type: ignore[union-attr]
            return self.changed(Delta.of_rows(gained, lost))

    def _refuse_new_violations(self, change: Delta):
        """Raise :class:`ConstraintError` when the change would make a ground instance of a
        constraint hold that does not hold now (a requirement that holds now would fail): the
        constraints hold at every commit, as in any database, and one already violated may stay
        so while no instance is added. Every constraint counts, ``#trusted`` ones too (seed 004,
        Def. 2.1: Δ holds in the data; it is repair that trusts it and leaves it unrepaired).

        The new instances are the denial instances that use a changed tuple (the engine's
        delta evaluation: an instance using a gained tuple, or negating a lost one, did not hold
        before); a denial with an aggregate is evaluated in full on both states and compared.

        Returns the python engine's update it computed — ``(model, gained, lost)`` after the
        change — for the commit to use, or None when there was nothing to check."""
        if not change or not self.rules.named_constraints():
            return None
        old = self.python_model()
        insert, delete = change.sides()
        after = PythonEngine().update(self.rules, old, insert=insert, delete=delete, changes=True)
        new, gained, lost = after
        engine = PythonEngine()
        whole = {name for name, c in self.rules.named_constraints() if isinstance(c, Requirement) or any(isinstance(b, Aggregate) for b in c.body)}
        added = []
        before = None
        for v in find_violations(self.rules, new, engine, changes=(gained, lost)):
            if v.constraint in whole:
                # A requirement, or a denial with an aggregate (evaluated in full): compare.
                if before is None:
                    before = {u.constraint: u for u in find_violations(self.rules, old, engine)}
                had = before.get(v.constraint)
                kept = set(had.witnesses) if had is not None else set()
                fresh = [(w, b) for w, b in zip(v.witnesses, v.bindings) if w not in kept] if v.witnesses != ((),) else ([] if had else [((), {})])
                if not fresh:
                    continue
                v = Violation(v.constraint, v.text, len(fresh), tuple(w for w, _ in fresh), tuple(b for _, b in fresh))
            added.append(v)
        if added:
            shown = "; ".join(
                f"{v.constraint} ({v.count} new instance{'' if v.count == 1 else 's'}: " + ", ".join(" ".join(map(str, w)) for w in v.witnesses[:3]) + ("" if v.count <= 3 else ", ...") + ")"
                if any(v.witnesses) else f"{v.constraint} (which holds now)"
                for v in added
            )
            raise ConstraintError(
                f"the change would violate {shown}",
                added,
                hint="nothing was written; change the transaction so that no new instance holds, or ask for realizations that keep the constraints (nablog propose)",
            )
        return after

    def changed(self, change: Delta, after: tuple | None = None, checked: bool = False) -> Delta:
        """Bring facts and models up to date after a commit of ``change`` (its true changes, on
        relations as stored: ``base__p`` for a split predicate), tell the subscribers what changed
        in their answers, and return the induced update. ``change`` is computed once per commit
        and handed as it is to the monitors. ``after`` is the python engine's update for it when
        the commit computed it already (the constraint check): it is not computed again.
        ``checked``: the constraint check passed on these very changes, so no violated instance
        was added — a state without violations keeps none, and they are not evaluated again."""
        clean = checked and self._violations == [] and (self.engine.name == "python" or self._python_violations == [])
        insert, delete = change.sides()
        derived = self.rules.derived
        notify = {}
        full = None
        if self.hub is not None and self.hub.subscriptions:
            # Seed 001: the differentials are computed from the state before the change.
            notify = self.hub.differentials(self.facts, change, self.python_model, self.version)
            full = self.hub.derived_changes(derived)
        if full is not None:
            # A monitor computed every derived relation's change: that is the induced update, and
            # the model is brought up to date only when someone reads it (_catch_up).
            gained = {**insert, **{p: c[0] for p, c in full.items()}}
            lost = {**delete, **{p: c[1] for p, c in full.items()}}
            self._defer(insert, delete)
        else:
            new, gained, lost = after if after is not None else PythonEngine().update(self.rules, self.python_model(), insert=insert, delete=delete, changes=True)
            self._model = new if self.engine.name == "python" else None
            self._python_model = None if self.engine.name == "python" else new
        for key, (ins, dele) in change.by_relation().items():
            rows = self.facts.get(key)
            if not isinstance(rows, MutableSet):
                # A read-only relation (engine columns, another model's relation): ``-=`` on it
                # would only rebind the name and lose the change.
                rows = self.facts[key] = set(rows or ())
            rows -= dele
            rows |= ins
        self._violations = [] if clean else None
        if self._index is not None and self._index.tables:
            self._carried = (self._index.tables, [(gained, lost)])
        elif self._carried is not None:
            self._carried[1].append((gained, lost))
        self._index = None
        self._python_violations = [] if clean else None
        self.version += 1
        self.basis = self.fingerprint() if self.stores is None else self.stores.settled
        if notify:
            self.hub.publish(self.version, notify)  # type: ignore[union-attr]
        return induced_update(gained, lost)

    def widen(self, rows: dict[str, set]) -> None:
        """Add base rows that no store holds and that change no answer — a test's values for the
        constants a request names (``sql/ordered.py``) — keeping the version and the basis: no
        client's change happened."""
        with self.lock:
            version, basis = self.version, self.basis
            self.changed(Delta.of_rows(rows))
            self.version, self.basis = version, basis

    def _defer(self, insert: dict[str, set], delete: dict[str, set]) -> None:
        """Remember a commit's true base changes for the model (composed with earlier ones)."""
        if self.engine.name != "python":
            self._model = None  # another engine evaluates afresh from the facts
        held = self._model if self.engine.name == "python" else self._python_model
        if held is None:
            return  # evaluated from the (current) facts when asked
        for pred in set(insert) | set(delete):
            ins, dele = self._pending[0].setdefault(pred, set()), self._pending[1].setdefault(pred, set())
            for row in delete.get(pred, ()):
                ins.discard(row) if row in ins else dele.add(row)
            for row in insert.get(pred, ()):
                dele.discard(row) if row in dele else ins.add(row)

    def _catch_up(self) -> None:
        """Apply the deferred base changes to the kept model (one DRed pass for all of them)."""
        if not (self._pending[0] or self._pending[1]):
            return
        insert, delete = self._pending
        self._pending = ({}, {})
        attr = "_model" if self.engine.name == "python" else "_python_model"
        if getattr(self, attr) is not None:
            setattr(self, attr, PythonEngine().update(self.rules, getattr(self, attr), insert=insert, delete=delete))


__all__ = ["State"]
