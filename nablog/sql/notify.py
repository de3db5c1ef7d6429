"""Other clients' writes to a PostgreSQL database, pushed to a serving nablog: triggers and LISTEN.

``nablog serve postgresql://… --notify`` asks for it. Step by step:

1. :func:`install` creates (or replaces) the function ``nablog_notify()`` and, on every table
   nablog reads, the statement-level trigger ``nablog_notify`` after ``INSERT``, ``UPDATE``,
   ``DELETE`` and ``TRUNCATE``: it runs ``pg_notify('nablog_changes', table name)``. PostgreSQL
   delivers a notification when the writing transaction commits, never for one rolled back, and
   folds the same notification of one transaction into one.
2. :class:`Watcher` is a thread with its own connection: ``LISTEN nablog_changes``, then it waits
   for notifications (half a second at a time, so that it stops promptly) and, for each batch,
   calls ``refresh`` — :meth:`nablog.Database.refresh`, which reads the tables in one snapshot and
   applies the difference as a commit, so every subscriber gets the change in its answer. nablog's
   own commits notify too; the refresh then finds the fingerprint it left and does nothing.

The notification carries no rows (a payload is limited to 8,000 bytes): the database is read
again, as any client would. Other databases have no such mechanism here: SQLite and DuckDB are
files written by one process at a time, and a refresh before each query or proposal sees their
other writers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..lang import NablogError
from .connection import quote
from .store import SqlStore

CHANNEL = "nablog_changes"
FUNCTION = "nablog_notify"


def install(store: SqlStore) -> list[str]:
    """Create the notifying function and a trigger on every table; the tables, by name."""
    if store.url.dialect != "postgres":
        raise NablogError(f"{store.url.text}: --notify needs PostgreSQL (LISTEN/NOTIFY)",
                          hint="SQLite and DuckDB are re-read before each query and proposal; serve them without --notify")
    names = sorted(t.name for t in store.tables.values())
    statements = [
        f"CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS "
        f"$$ BEGIN PERFORM pg_notify('{CHANNEL}', TG_TABLE_NAME); RETURN NULL; END $$",
    ]
    for name in names:
        statements += [
            f"DROP TRIGGER IF EXISTS {FUNCTION} ON {quote(name)}",
            f"CREATE TRIGGER {FUNCTION} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {quote(name)} FOR EACH STATEMENT EXECUTE FUNCTION {FUNCTION}()",
        ]
    store._execute("BEGIN")
    try:
        for statement in statements:
            store._execute(statement)
        store._execute("COMMIT")
    except BaseException:
        store._execute("ROLLBACK")
        raise
    return names


class Watcher(threading.Thread):
    """Listens for other clients' commits and calls ``refresh`` after each batch (see the module)."""

    def __init__(self, store: SqlStore, refresh: Callable[[], object], wait: float = 0.5):
        super().__init__(name="nablog-notify", daemon=True)
        self.url, self.refresh, self.wait = store.url, refresh, wait
        self.stopping = threading.Event()
        self.listening = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            conn = self.url.connect()
            try:
                conn.execute(f"LISTEN {CHANNEL}")
                self.listening.set()
                while not self.stopping.is_set():
                    if list(conn.notifies(timeout=self.wait)):
                        try:
                            self.refresh()
                        except Exception as e:  # a refresh that failed: the next notification tries again
                            self.error = e
            finally:
                conn.close()
        except BaseException as e:  # kept for whoever stops the thread; the server goes on serving
            self.error = e
            self.listening.set()

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=5)


__all__ = ["CHANNEL", "Watcher", "install"]
