"""SQLite databases: each table a relation (columns in table order), changes written in one transaction.

Reading
    Every table (``sqlite_*`` internal tables excepted) is a relation. INTEGER values are
    ``int``, TEXT values ``str``, and NULL reads as ``""`` (the constant an empty CSV field
    gives). A REAL or BLOB value has no Datalog constant: it is a DataError naming the table,
    the column and the rowid. The database is opened read-only for loading.

Writing
    :meth:`SqliteDatabase.write` runs one ``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction for all
    relations given (rolled back on any error, so the database is all old or all new). For each
    relation it deletes the stored rows that are not in the new set (by rowid) and inserts the
    missing ones; rows already there are not touched (a stored NULL stays NULL). A relation
    without a table gets ``CREATE TABLE name (c0, c1, ...)`` with no declared types, so SQLite
    stores each value as given. An existing table's declared types matter: SQLite converts
    values to the column's affinity (``"00260881"`` into an INTEGER column becomes 260881, ``5``
    into a TEXT column becomes ``"5"``). A value that would not read back as written is a
    DataError naming the table and column, raised before anything is changed.

    A commit's change (:meth:`SqliteDatabase.stage`, :meth:`SqliteDatabase.apply`) is statements
    per changed row — a lookup and an insert, or a delete — so it costs the size of the change:
    no table is read whole.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..lang import Constant, DataError, Delta, Facts, row_sort_key
from .base import (
    FactSource,
    Rows,
    Staged,
    check_int64,
    check_relation_name,
    normalize_changes,
    require_file,
    row_width,
)

BUSY_TIMEOUT = 10.0
"""Seconds to wait for another connection's write lock before reporting the database as busy."""


def quote_identifier(name: str) -> str:
    """An SQL identifier in double quotes.

    >>> print(quote_identifier('a"b'))
    "a""b"
    """
    return '"' + name.replace('"', '""') + '"'


def affinity(declared: str) -> str:
    """The affinity SQLite gives a column from its declared type (SQLite docs, "Datatypes", 3.1)."""
    kind = declared.upper()
    if "INT" in kind:
        return "INTEGER"
    if "CHAR" in kind or "CLOB" in kind or "TEXT" in kind:
        return "TEXT"
    if kind == "" or "BLOB" in kind:
        return "BLOB"
    if "REAL" in kind or "FLOA" in kind or "DOUB" in kind:
        return "REAL"
    return "NUMERIC"


class _Table:
    def __init__(self, name: str, columns: list[str], types: list[str], has_rowid: bool):
        self.name = name
        self.columns = columns
        self.types = types
        self.has_rowid = has_rowid


class SqliteDatabase(FactSource):
    """The tables of a SQLite database file as relations."""

    def __init__(self, path: str | Path):
        self.location = Path(path)

    # -- connections ---------------------------------------------------------------------------

    def _connect(self, readonly: bool) -> sqlite3.Connection:
        if readonly:
            require_file(self.location)
            if _hot_journal(self.location):
                # A writer was killed inside its transaction. SQLite rolls the journal back as
                # soon as a connection that may write reads the database; a read-only one fails.
                self._connect(readonly=False).close()
        uri = self.location.resolve().as_uri() + ("?mode=ro" if readonly else "?mode=rwc")
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
        except sqlite3.Error as e:
            raise self._error(e) from None
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as e:
            conn.close()
            raise self._error(e) from None
        return conn

    def _error(self, e: sqlite3.Error, table: str | None = None) -> DataError:
        text = str(e)
        if "not a database" in text:
            return DataError(
                f"cannot read {self.location}: not a SQLite database",
                where=str(self.location),
                hint="check the path, or rename the file after its format (.csv, .parquet, .lp)",
            )
        if "unable to open" in text:
            return DataError(
                f"cannot open {self.location}: {text}",
                where=str(self.location),
                hint="check the path and the permissions of the file and its directory",
            )
        if "locked" in text or "busy" in text:
            return DataError(
                f"cannot write {self.location}: the database is locked by another connection (waited {BUSY_TIMEOUT:g} s)",
                where=str(self.location),
                hint="retry when the other program has finished writing; nothing was changed",
            )
        where = f"{self.location}, table {table}" if table else str(self.location)
        return DataError(f"SQLite error in {self.location}: {text}", where=where)

    @staticmethod
    def _tables(conn: sqlite3.Connection) -> list[str]:
        rows = conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        ).fetchall()
        return [r[0] for r in rows]

    @staticmethod
    def _table(conn: sqlite3.Connection, name: str) -> _Table:
        info = conn.execute(f"PRAGMA table_info({quote_identifier(name)})").fetchall()
        columns = [r[1] for r in info]
        types = [r[2] or "" for r in info]
        try:
            conn.execute(f"SELECT rowid FROM {quote_identifier(name)} LIMIT 0")
            has_rowid = True
        except sqlite3.OperationalError:  # a WITHOUT ROWID table
            has_rowid = False
        return _Table(name, columns, types, has_rowid)

    # -- reading -------------------------------------------------------------------------------

    def relations(self) -> list[str]:
        if not self.location.exists():
            return []
        conn = self._connect(readonly=True)
        try:
            return self._tables(conn)
        except sqlite3.Error as e:
            raise self._error(e) from None
        finally:
            conn.close()

    def load(self, relations: Iterable[str] | None = None) -> Facts:
        conn = self._connect(readonly=True)
        try:
            tables = self._tables(conn)
            wanted = tables if relations is None else list(relations)
            out: Facts = {}
            for name in wanted:
                if name in tables:
                    out[name] = set(self._read(conn, self._table(conn, name)))
                else:
                    out[name] = set()
            return out
        except sqlite3.Error as e:
            raise self._error(e) from None
        finally:
            conn.close()

    def _read(self, conn: sqlite3.Connection, table: _Table) -> dict[tuple, list[Any]]:
        """Decoded row to the keys of the stored rows giving it (rowids, or raw rows without rowid)."""
        columns = ", ".join(quote_identifier(c) for c in table.columns)
        out: dict[tuple, list[Any]] = {}
        if table.has_rowid:
            cursor = conn.execute(f"SELECT rowid, {columns} FROM {quote_identifier(table.name)}")
            for raw in cursor:
                row = tuple(self._decode(table, raw[0], j, v) for j, v in enumerate(raw[1:]))
                out.setdefault(row, []).append(raw[0])
        else:
            cursor = conn.execute(f"SELECT {columns} FROM {quote_identifier(table.name)}")
            for n, raw in enumerate(cursor, 1):
                row = tuple(self._decode(table, None, j, v, n) for j, v in enumerate(raw))
                out.setdefault(row, []).append(raw)
        return out

    def _decode(self, table: _Table, rowid: int | None, j: int, value: Any, n: int = 0) -> Constant:
        if isinstance(value, (int, str)):
            return value
        if value is None:
            return ""
        column = table.columns[j]
        kind = "REAL" if isinstance(value, float) else "BLOB"
        place = f"rowid {rowid}" if rowid is not None else f"row {n}"
        raise DataError(
            f"column {column} of table {table.name} holds the {kind} value {value!r}, which is not a Datalog constant",
            where=f"{self.location}, table {table.name}, {place}",
            hint=(
                f"nablog reads INTEGER and TEXT values only; convert the column, "
                f"e.g. UPDATE {table.name} SET {column} = CAST({column} AS TEXT)"
            ),
        )

    # -- writing -------------------------------------------------------------------------------

    def write(self, changes: Mapping[str, Iterable[tuple]]) -> None:
        new = normalize_changes(changes)
        if not self.location.exists() and not any(new.values()):
            return
        self._check_ints(new)

        def body(conn: sqlite3.Connection, table: list[str | None]) -> None:
            tables = set(self._tables(conn))
            for name in sorted(new):
                table[0] = name
                self._replace(conn, name, new[name], name in tables)

        self._transaction(body)

    def stage(self, delta: Delta, tag: str | None = None) -> Staged:
        """Run ``delta``'s statements and roll them back: every value is checked now, while the
        commit can still be taken back (issue 24, fault 5), and the true changes are those the
        statements made — found by the rows' own lookups, at the cost of the change, not of the
        tables. The journal records them; :meth:`apply` runs them after the commit record."""
        return Staged(self.apply(delta.by_relation(), dry_run=True), [])

    def apply(self, changes: Mapping[str, tuple[Iterable[tuple], Iterable[tuple]]], *, dry_run: bool = False) -> Delta:
        """Delete and insert rows, relation name to ``(inserted, deleted)``, in one transaction;
        the changes really made (a row to insert that is stored already is not inserted again, a
        row to delete that is gone is skipped).

        Idempotent, so that a commit interrupted after SQLite's COMMIT can be redone
        (:class:`nablog.io.Stores`). Costs the size of the change, not of the tables.

        ``dry_run`` makes every check and every statement, then rolls back: what a commit runs
        before its point of no return, so that a value SQLite cannot store is refused while the
        commit can still be taken back (issue 24, fault 5).
        """
        plan = {name: (sorted(set(map(tuple, ins)), key=row_sort_key), sorted(set(map(tuple, dele)), key=row_sort_key)) for name, (ins, dele) in changes.items()}
        plan = {name: c for name, c in plan.items() if c[0] or c[1]}
        if not plan:
            return Delta()
        self._check_ints({name: c[0] for name, c in plan.items()})
        inserted: dict[str, list[tuple]] = {}
        deleted: dict[str, list[tuple]] = {}

        def body(conn: sqlite3.Connection, current: list[str | None]) -> None:
            tables = set(self._tables(conn))
            for name, (ins, dele) in plan.items():
                current[0] = name
                if name not in tables:
                    self._replace(conn, name, set(ins), False)
                    inserted[name] = ins
                    continue
                table = self._table(conn, name)
                for row in ins + dele:
                    if len(row) != len(table.columns):
                        raise DataError(
                            f"cannot store rows of width {len(row)} in table {name}: it has {len(table.columns)} columns",
                            where=f"{self.location}, table {name}",
                            hint="the relation's arity must match the table's columns",
                        )
                quoted = quote_identifier(name)
                # A stored NULL reads as "": it matches "" here too.
                match = " AND ".join(f"({quote_identifier(c)} IS ? OR ({quote_identifier(c)} IS NULL AND ? = ''))" for c in table.columns)
                twice = lambda row: [v for v in row for _ in (0, 1)]  # noqa: E731
                deleted[name] = [r for r in dele if conn.execute(f"DELETE FROM {quoted} WHERE {match}", twice(r)).rowcount > 0]
                missing = [r for r in ins if conn.execute(f"SELECT 1 FROM {quoted} WHERE {match} LIMIT 1", twice(r)).fetchone() is None]
                self._check_affinity(table, missing)
                insert_rows(conn, table, missing)
                inserted[name] = missing

        self._transaction(body, dry_run)
        return Delta.of_rows(inserted, deleted)

    def _begin(self, conn: sqlite3.Connection) -> None:
        """BEGIN IMMEDIATE, waiting at most BUSY_TIMEOUT seconds for another writer (saying so)."""
        conn.execute("PRAGMA busy_timeout = 500")
        try:
            conn.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e):
                raise self._error(e) from None
        print(f"nablog: waiting for another program writing {self.location} (at most {BUSY_TIMEOUT:g} s)", file=sys.stderr, flush=True)
        conn.execute(f"PRAGMA busy_timeout = {int((BUSY_TIMEOUT - 0.5) * 1000)}")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise self._error(e) from None

    def _check_ints(self, relations: Mapping[str, Iterable[tuple]]) -> None:
        for name, rows in relations.items():
            for row in rows:
                for v in row:
                    if isinstance(v, int):
                        check_int64(v, name, self.location, "SQLite")

    def _transaction(self, body, dry_run: bool = False) -> None:
        """Run ``body(conn, [table being written])`` in one BEGIN IMMEDIATE ... COMMIT; roll back on
        any error (and at the end of a dry run)."""
        conn = self._connect(readonly=False)
        try:
            self._begin(conn)
            current: list[str | None] = [None]
            try:
                body(conn, current)
                conn.execute("ROLLBACK" if dry_run else "COMMIT")
            except BaseException as e:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(e, sqlite3.Error):
                    raise self._error(e, current[0]) from None
                raise
        finally:
            conn.close()

    def _replace(self, conn: sqlite3.Connection, name: str, rows: Rows, exists: bool) -> None:
        width = row_width(name, rows, self.location)
        if not exists:
            if not rows:
                return
            check_relation_name(name, self.location)
            if width == 0:
                raise DataError(
                    f"cannot store relation {name} in {self.location}: a table needs at least one column",
                    where=str(self.location),
                    hint=f"write 0-ary facts like {name}. in a .lp file",
                )
            columns = ", ".join(quote_identifier(f"c{i}") for i in range(width or 0))
            conn.execute(f"CREATE TABLE {quote_identifier(name)} ({columns})")
            insert_rows(conn, _Table(name, [f"c{i}" for i in range(width or 0)], [""] * (width or 0), True), rows)
            return
        table = self._table(conn, name)
        if width is not None and width != len(table.columns):
            raise DataError(
                f"cannot store rows of width {width} in table {name}: it has {len(table.columns)} columns",
                where=f"{self.location}, table {name}",
                hint="the relation's arity must match the table's columns",
            )
        stored = self._read(conn, table)
        delete = [key for row, keys in stored.items() if row not in rows for key in keys]
        insert = [row for row in rows if row not in stored]
        self._check_affinity(table, insert)
        if table.has_rowid:
            conn.executemany(f"DELETE FROM {quote_identifier(name)} WHERE rowid = ?", [(k,) for k in delete])
        else:
            match = " AND ".join(f"{quote_identifier(c)} IS ?" for c in table.columns)
            conn.executemany(f"DELETE FROM {quote_identifier(name)} WHERE {match}", delete)
        insert_rows(conn, table, insert)

    def _check_affinity(self, table: _Table, rows: list[tuple]) -> None:
        """Refuse values the columns' affinities would turn into something else."""
        probe: sqlite3.Connection | None = None
        try:
            for j, (column, declared) in enumerate(zip(table.columns, table.types)):
                kind = affinity(declared)
                if kind == "BLOB":
                    continue
                values = {r[j] for r in rows}
                ints = sorted(v for v in values if isinstance(v, int))
                if kind in ("TEXT", "REAL") and ints:
                    self._affinity_error(table, column, declared, ints[0])
                strings = sorted(v for v in values if isinstance(v, str))
                if kind == "TEXT" or not strings:
                    continue
                # Which text SQLite turns into a number is its own business: ask it.
                if probe is None:
                    probe = sqlite3.connect(":memory:")
                probe.execute(f"CREATE TABLE p{j} (i INTEGER PRIMARY KEY, v {kind})")
                probe.executemany(f"INSERT INTO p{j} (i, v) VALUES (?, ?)", list(enumerate(strings)))
                changed = probe.execute(f"SELECT i, v FROM p{j} WHERE typeof(v) != 'text' ORDER BY i LIMIT 1").fetchone()
                if changed is not None:
                    self._affinity_error(table, column, declared, strings[changed[0]], changed[1])
        finally:
            if probe is not None:
                probe.close()

    def _affinity_error(self, table: _Table, column: str, declared: str, value: Constant, stored: Any = None) -> None:
        if stored is None:
            stored = str(value) if affinity(declared) == "TEXT" else float(value)
        raise DataError(
            f"cannot store {value!r} in column {column} of table {table.name}: "
            f"SQLite would store it as {stored!r} (the column is declared {declared})",
            where=f"{self.location}, table {table.name}",
            hint=f"declare {column} without a type (or as BLOB) so SQLite keeps integers and strings as they are",
        )


def _hot_journal(path: Path) -> bool:
    try:
        return Path(f"{path}-journal").stat().st_size > 0
    except OSError:
        return False


def insert_rows(conn: sqlite3.Connection, table: _Table, rows: Iterable[tuple]) -> None:
    """Insert rows into a table; the unit a write repeats per relation (and tests interrupt)."""
    columns = ", ".join(quote_identifier(c) for c in table.columns)
    marks = ", ".join("?" for _ in table.columns)
    conn.executemany(f"INSERT INTO {quote_identifier(table.name)} ({columns}) VALUES ({marks})", rows)
