"""Subscriptions: a query's answer, then what entered and left it at each commit (seed 001's monitoring service).

A :class:`Subscription` is created by ``Database.subscribe``; the database's :class:`Hub` computes
the differentials once per commit for every subscribed view (one :class:`~nablog.views.monitor.Monitor`
per maintenance mode, shared by all subscribers of that mode) and hands each subscription the rows
of its own query. Messages are plain JSON-ready dicts:

- ``{"version": N, "snapshot": [ROW, ...]}`` — the answer at version ``N``;
- ``{"version": N, "snapshot_complete": True}`` — the snapshot is whole;
- ``{"version": N, "plus": [ROW, ...], "minus": [ROW, ...]}`` — one per commit that changes the answer;
- ``{"version": N, "error": "fell behind", ...}`` — the subscriber did not keep up: the buffer
  bound was reached, the subscription is closed, take a new snapshot (or resume by version).

Rows are lists of constants, sorted, as ``nablog query --json`` prints them.

>>> from nablog import Database
>>> db = Database.from_text("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y). edge(a,b).")
>>> sub = db.subscribe("closure(a, Y)", mode="rod")
>>> with db.transaction() as t:
...     t.insert("edge(b, c)")
>>> [sub.get(timeout=1) for _ in range(3)]
[{'version': 0, 'snapshot': [['a', 'b']]}, {'version': 0, 'snapshot_complete': True}, {'version': 1, 'plus': [['a', 'c']], 'minus': []}]
"""

from __future__ import annotations

import gc
import threading
from collections import deque
from typing import Callable, Iterable, Iterator, Mapping

from ..lang import Atom, Delta, Program, Var, row_sort_key
from .monitor import MODES, Monitor

Message = dict
DEFAULT_BUFFER = 10_000


def matches(atom: Atom, row: tuple) -> bool:
    """Whether ``row`` is an answer of the pattern ``atom``: its constants and repeated variables."""
    seen: dict[Var, object] = {}
    for term, value in zip(atom.args, row):
        if isinstance(term, Var):
            if term.name == "_":
                continue
            if term in seen and seen[term] != value:
                return False
            seen[term] = value
        elif term != value:
            return False
    return True


def rows_json(rows: Iterable[tuple]) -> list[list]:
    return [list(r) for r in sorted(rows, key=row_sort_key)]


class SubscriptionClosed(Exception):
    """The subscription is closed and every message it had was read."""


class Subscription:
    """One subscriber's stream: messages in version order, buffered up to ``buffer`` messages.

    Iterate over it (blocking), call :meth:`get` with a timeout, or pass ``callback`` to
    ``Database.subscribe`` to be called with each message instead (from the committing thread).
    """

    def __init__(self, query: Atom, mode: str, callback: Callable[[Message], None] | None = None, buffer: int = DEFAULT_BUFFER):
        if mode not in MODES:
            from ..lang import NablogError

            raise NablogError(f"unknown maintenance mode {mode!r}", hint="choose one of " + ", ".join(MODES))
        self.query = query
        self.mode = mode
        self.callback = callback
        self.buffer = buffer
        self.version = -1  # the last version delivered
        self.key = f"{mode} {query}"  # subscriptions with one key share each commit's message
        self.closed = False
        self._queue: deque[Message] = deque()
        self._ready = threading.Condition()
        self._hub: "Hub | None" = None

    def deliver(self, message: Message) -> None:
        """Hand a message to the subscriber (the hub calls this in version order)."""
        if self.closed:
            return
        self.version = message["version"]
        if self.callback is not None:
            self.callback(message)
            return
        with self._ready:
            if len(self._queue) >= self.buffer:
                # Never block the writer: drop what is buffered and say so; the subscriber resumes
                # from a new snapshot.
                self._queue.clear()
                self._queue.append({"version": message["version"], "error": "fell behind", "hint": "subscribe again for a new snapshot"})
                self.closed = True
                if self._hub is not None:
                    self._hub.changed()
            else:
                self._queue.append(message)
            self._ready.notify_all()

    def get(self, timeout: float | None = None) -> Message:
        """The next message; raises ``TimeoutError`` if none comes within ``timeout`` seconds and
        ``SubscriptionClosed`` once the subscription is closed and drained."""
        with self._ready:
            if not self._ready.wait_for(lambda: self._queue or self.closed, timeout):
                raise TimeoutError(f"no message for {self.query} within {timeout} s")
            if self._queue:
                return self._queue.popleft()
            raise SubscriptionClosed(f"the subscription to {self.query} is closed")

    def __iter__(self) -> Iterator[Message]:
        while True:
            try:
                yield self.get()
            except SubscriptionClosed:
                return

    def close(self) -> None:
        """Stop receiving messages."""
        with self._ready:
            self.closed = True
            self._ready.notify_all()
        if self._hub is not None:
            self._hub.remove(self)


FREEZE_KEPT_STATE = False
"""Whether :meth:`Hub.add` freezes the heap (``gc.freeze``) once a monitor's kept state is built,
so later full collections skip it. Only a process that keeps its database for its whole life
should: frozen objects are never collected, so a dropped database and its kept state would
stay (a subscription and its hub point at each other). ``nablog serve`` sets it."""


class Hub:
    """The subscriptions of one database, and the monitors that serve them (one per mode and set of
    views, compiled when the set changes)."""

    def __init__(self, rules: Program):
        self.rules = rules
        self.subscriptions: list[Subscription] = []
        self._monitors: dict[tuple[str, frozenset[str]], Monitor] = {}
        self._used: list[Monitor] = []  # the monitors of the last commit
        self._lock = threading.Lock()
        # What each commit needs, worked out when the subscriptions change, not per commit (with
        # 100 subscribers that walk cost a third of a commit): the views per mode, and the open
        # subscriptions grouped by query (one message per group).
        self._views: dict[str, set[str]] = {}
        self._groups: list[tuple[Subscription, list[Subscription]]] = []
        self._patterns: dict[tuple, dict[tuple, list]] = {}
        self._stale = False
        # The snapshot of each query at one version, as JSON rows, shared by the subscribers who
        # start then (a message is read, never changed): 100 subscribers to one query computed and
        # sorted it 100 times.
        self._snapshots: tuple[int, dict[str, list[list]]] = (-1, {})

    def changed(self) -> None:
        """A subscription was added, removed or closed: regroup before the next commit."""
        self._stale = True

    def _regroup(self) -> None:
        with self._lock:
            self.subscriptions = [s for s in self.subscriptions if not s.closed]
            self._stale = False
            groups: dict[str, list[Subscription]] = {}
            self._views = {}
            for s in self.subscriptions:
                groups.setdefault(s.key, []).append(s)
                self._views.setdefault(s.mode, set()).add(s.query.pred)
            self._groups = [(group[0], group) for group in groups.values()]
            # The groups by mode, predicate and the positions their query binds to constants,
            # keyed by those constants: a commit's changed rows find their queries by lookup,
            # not by testing every query (100 queries closure(h, Y) on one view cost 1.2 ms a
            # commit tested one by one).
            self._patterns = {}
            for first, group in self._groups:
                args = first.query.args
                positions = tuple(i for i, t in enumerate(args) if not isinstance(t, Var))
                table = self._patterns.setdefault((first.mode, first.query.pred, positions), {})
                table.setdefault(tuple(args[i] for i in positions), []).append((first, group))

    def snapshot(self, query: Atom, version: int, answer: Callable[[], Iterable[tuple]]) -> list[list]:
        """The answer of ``query`` at ``version`` as JSON rows: ``answer()`` computed once per query
        and version, then shared."""
        kept, snapshots = self._snapshots
        if kept != version:
            snapshots = {}
            self._snapshots = (version, snapshots)
        key = str(query)
        if key not in snapshots:
            snapshots[key] = rows_json(answer())
        return snapshots[key]

    def kept_answer(self, query: Atom, version: int, arity: int | None) -> list[tuple] | None:
        """The answer of ``query`` at ``version`` from a monitor's kept relation (by its index on
        the query's constants when it has one), or None when no monitor keeps it. After commits
        the database's model is brought up to date only when read; reading it for a new
        subscriber's snapshot cost a DRed pass over a 24.7 M-pair closure (minutes)."""
        if arity != len(query.args):
            return None
        for monitor in self._monitors.values():
            rel = monitor.kept(query.pred, version)
            if rel is None:
                continue
            positions = tuple(i for i, t in enumerate(query.args) if not isinstance(t, Var))
            rows = rel.lookup(positions, tuple(query.args[i] for i in positions)) if positions in rel.indexes else rel
            return [r for r in rows if matches(query, r)]
        return None

    def add(self, subscription: Subscription, snapshot: list[list], version: int, warm: tuple[Mapping, Callable[[], Mapping]] | None = None) -> None:
        """Start a subscription with its snapshot (JSON rows, see :meth:`snapshot`); with ``warm``
        (the base facts and a function giving the model, at ``version``) the monitor that will
        serve it builds its kept state now, not in the next commit."""
        subscription._hub = self
        with self._lock:
            subscription.deliver({"version": version, "snapshot": snapshot})
            subscription.deliver({"version": version, "snapshot_complete": True})
            self.subscriptions.append(subscription)
            self._stale = True
            views = {s.query.pred for s in self.subscriptions if s.mode == subscription.mode and not s.closed}
        if warm is not None and self.monitor(subscription.mode, frozenset(views)).warm(*warm, version):
            # The kept state is built and long-lived: one full collection now, because the objects
            # its construction promoted bring the collector's next full pass near, and that pass
            # (30-80 ms over the whole process heap) would land inside some later commit — the
            # rare commits whose CPU time was 60x the median. Then, in a server, the survivors — the
            # kept state above all, 10^7 tuples on a dense closure — are frozen out of later
            # collections: each full pass walked them all (see FREEZE_KEPT_STATE).
            gc.collect()
            if FREEZE_KEPT_STATE:
                gc.freeze()

    def remove(self, subscription: Subscription) -> None:
        with self._lock:
            if subscription in self.subscriptions:
                self.subscriptions.remove(subscription)
            self._stale = True

    def monitor(self, mode: str, views: frozenset[str]) -> Monitor:
        key = (mode, views)
        if key not in self._monitors:
            self._monitors[key] = Monitor(self.rules, sorted(views), mode)
        return self._monitors[key]

    def differentials(self, facts: Mapping, change: Delta, model: Callable[[], Mapping], version: int | None = None) -> dict[str, Delta]:
        """Per mode in use, the change a commit makes to the subscribed views of the state
        numbered ``version`` (computed before the commit is applied). ``change`` is the commit's
        true changes (stored names), computed once by the commit and handed to every monitor."""
        if self._stale:
            self._regroup()
        self._snapshots = (-1, {})  # the state they answered is left
        out: dict[str, Delta] = {}
        self._used = []
        for mode, views in self._views.items():
            monitor = self.monitor(mode, frozenset(views))
            self._used.append(monitor)
            out[mode] = monitor.differentials(facts, change, model=None if mode == "rod" else model, version=version, real=True)
        return out

    def derived_changes(self, derived: frozenset[str]) -> dict[str, tuple] | None:
        """Per derived predicate, the rows it gained and lost in the last commit, when a monitor used
        for it covered every one of ``derived`` (the database then need not maintain its model)."""
        for monitor in self._used:
            if monitor.last_changes is not None and monitor.derived == derived:
                return {p: (set(monitor.last_changes.get(p, ((), ()))[0]), set(monitor.last_changes.get(p, ((), ()))[1])) for p in derived}
        return None

    def publish(self, version: int, changes: dict[str, Delta]) -> None:
        """Deliver one commit's message to each subscription whose answer it changes: one message
        per query, shared by its subscribers (a message is read, never changed); callbacks are
        called in a tight loop, queues take the message through :meth:`Subscription.deliver`."""
        if self._stale:
            self._regroup()
        found: dict[int, tuple[Subscription, list[Subscription], list, list]] = {}
        for (mode, pred, positions), table in self._patterns.items():
            change = changes.get(mode)
            if change is None or pred not in change.predicates:
                continue
            for sign, rows in zip((2, 3), change.rows(pred)):
                for row in rows:
                    for first, group in table.get(tuple(row[i] for i in positions), ()):
                        if matches(first.query, row):
                            found.setdefault(id(group), (first, group, [], []))[sign].append(row)
        for first, group, plus, minus in found.values():
            message = {"version": version, "plus": rows_json(plus), "minus": rows_json(minus)}
            for s in group:
                if s.callback is None or s.closed:
                    s.deliver(message)
                    continue
                s.version = version
                try:
                    s.callback(message)
                except Exception:  # noqa: BLE001 - a subscriber's callback failing must not fail the commit
                    s.close()


__all__ = ["DEFAULT_BUFFER", "Hub", "Message", "Subscription", "SubscriptionClosed", "matches", "rows_json"]
