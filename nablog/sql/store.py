"""A SQL database as nablog's fact store: its tables read as relations, and changes written in one transaction.

:class:`SqlStore` answers what :class:`nablog.Database` asks of its stores (``fingerprint``,
``version``, ``commit``, ``undo``, ``entries``, ``recover``). A commit, step by step:

1. ``BEGIN`` — ``ISOLATION LEVEL SERIALIZABLE`` on PostgreSQL, ``IMMEDIATE`` on SQLite (the
   write lock at once), DuckDB's own (snapshot isolation, conflicts abort).
2. The fingerprint of the data is compared with the one the change was computed on: a change
   computed on a state another client has changed since is refused. On PostgreSQL it is the
   table ``nablog_counts`` — per table, how many statements changed it — which the trigger
   ``nablog_count`` on every table keeps (installed by the first commit, when the tables are
   the user's own, firing in every session whatever its search path or replication role; read
   in O(tables)); before that, while it is switched off, and on DuckDB (no triggers), per table its row
   count and a sum of row hashes (a full scan); on SQLite the file's size, time and inode.
3. Deletions, then insertions, one statement per row: ``DELETE ... RETURNING *`` keeps the rows
   exactly as stored (NULLs, numerics, dates) for the undo log; an insertion of a row already
   there, or a deletion of an absent one, is no change (seed 002, Def. 1). An inserted row that
   would read back as another value (a text into an integer column, ``5`` into numeric(10,2))
   is refused.
4. The undo entry — the raw rows inserted and deleted, the request, the time — goes into the
   table ``nablog_log`` (created on first use) with the new version number, so every client sees
   it; then ``COMMIT``. Any error rolls the whole transaction back: nothing was written.

An undo is a compensating transaction of the newest commit not undone: its inserted rows are
deleted and its deleted rows inserted, exactly as they were stored, refused when a row it needs
was changed since (``nablog undo --forget`` drops the entry).
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..lang import DataError, Delta, NablogError, row_sort_key
from .catalog import Catalog, Table, read_catalog
from .connection import Url, decode_raw, encode_raw, quote, to_constant
from .ordered import Tests, base_order, value_order
from .views import predicate_name

LOG = "nablog_log"
COUNTS = "nablog_counts"
COUNTER = "nablog_count"


class SqlStore:
    """The tables of one SQL database, read and written through one connection."""

    def __init__(self, url: str | Url):
        self.url = url if isinstance(url, Url) else Url.parse(url)
        self._conn = None
        self.catalog: Catalog = read_catalog(self.url, self.connection())
        self.tables: dict[str, Table] = {}
        for table in self.catalog.tables.values():
            pred = predicate_name(table.name)
            if pred is None:
                continue
            if pred in self.tables:
                raise DataError(f"{self.url.text}: tables {self.tables[pred].name} and {table.name} have the same name in lower case",
                                where=self.url.text, hint="rename one: nablog names relations in lower case")
            self.tables[pred] = table
        self.program_paths: list = []
        self.tests = Tests()  # the views' comparisons of numbers, dates and booleans (open.py sets them)
        self.noted: set = set()  # constants requests named: the tests hold them too
        self.settled: str | None = None  # the fingerprint after the last commit or undo (what Database asks)

    # -- the connection ---------------------------------------------------------------------------

    def connection(self):
        if self._conn is None:
            self._conn = self.url.connect()
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __del__(self) -> None:  # a server counts its connections: do not leave one open
        try:
            self.close()
        except Exception:
            pass

    def _execute(self, sql: str, params: tuple | list = ()):
        """Run one statement; the cursor (DuckDB's connection is its own cursor)."""
        conn = self.connection()
        if self.url.dialect == "postgres":
            return conn.execute(sql.replace("?", "%s") if "%s" not in sql else sql, params)
        return conn.execute(sql, params)

    # -- reading ----------------------------------------------------------------------------------

    def relations(self) -> list[str]:
        return sorted(self.tables)

    def _select_list(self, table: Table) -> str:
        text = "TEXT" if self.url.dialect != "duckdb" else "VARCHAR"
        return ", ".join(f"CAST({quote(c.name)} AS {text})" if c.kind == "other" and self.url.dialect != "sqlite" else quote(c.name) for c in table.columns)

    def load(self, relations=None) -> dict[str, set[tuple]]:
        """Every table (or those named) as a set of rows of nablog constants; with every table,
        the tests' relations too (the values of their types that pass, :mod:`.ordered`)."""
        out = {}
        for pred in self.relations() if relations is None else relations:
            table = self.tables.get(pred)
            if table is None:
                out[pred] = set()
                continue
            kinds = [c.kind for c in table.columns]
            rows = self._execute(f"SELECT {self._select_list(table)} FROM {quote(table.name)}").fetchall()
            if all(k in ("int", "text") or (k == "other" and self.url.dialect != "sqlite") for k in kinds):
                # Drivers give ints, strings (other kinds cast to text) and None: only NULL needs reading.
                out[pred] = {tuple(row) if None not in row else tuple("" if v is None else v for v in row) for row in rows}
            else:
                out[pred] = {tuple(to_constant(v, k) for v, k in zip(row, kinds)) for row in rows}
        if relations is None and self.tests.by_pred:
            out.update(self.tests.facts(self._typed_constants(out)))
        return out

    def _typed_constants(self, facts: dict[str, set[tuple]]) -> dict[str, set]:
        """The values of each type a test reads: its columns' values, and the constants requests named."""
        wanted = self.tests.orders()
        found: dict[str, set] = {order: set(self.noted) for order in wanted}
        if "bool" in found:  # a finite type: all its values, and no request's other constants
            found["bool"] = {0, 1} if self.url.dialect == "sqlite" else {"true", "false"}
        for pred, table in self.tables.items():
            for j, column in enumerate(table.columns):
                order = base_order(value_order(column.declared, self.url.dialect))
                if order in wanted:
                    found[order].update(row[j] for row in facts.get(pred, ()))
        return found

    def note(self, constants, facts: dict[str, set[tuple]]) -> dict[str, set[tuple]]:
        """The tests' rows ``constants`` (a request's) add to ``facts``: a value a request inserts
        through a view is tested as the database's own values are."""
        new = set(constants) - self.noted
        if not new or not self.tests.by_pred:
            return {}
        self.noted |= new
        wanted = {order: new for order in self.tests.orders() if order != "bool"}
        return {p: rows - facts.get(p, set()) for p, rows in self.tests.facts(wanted).items() if rows - facts.get(p, set())}

    def fingerprint(self) -> str:
        """What the data is now, cheaply (see step 2 of the module's docstring)."""
        if self._counting():
            rows = self._execute(f"SELECT name, changes FROM {COUNTS} ORDER BY name").fetchall()
            return "counts|" + "|".join(f"{name}:{n}" for name, n in rows)
        return self._hashes()

    def _counting(self) -> bool:
        """Whether every table has the trigger that counts its changes, firing always (asked each
        time, from the catalogue: another client may drop it, ``DROP FUNCTION nablog_count()
        CASCADE``, or switch it off, ``ALTER TABLE ... DISABLE TRIGGER``; a trigger enabled only
        for origin sessions misses the writes replication applies, ``session_replication_role =
        replica``)."""
        names = [t.name for t in self.tables.values()]
        if self.url.dialect != "postgres" or not names:
            return False
        have = self._execute("SELECT count(DISTINCT c.relname) FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid "
                             "WHERE g.tgname = %s AND g.tgenabled = 'A' AND c.relname = ANY(%s) "
                             "AND c.relnamespace = current_schema()::regnamespace",
                             (COUNTER, names)).fetchone()[0]
        return have == len(names)

    def _count_changes(self) -> None:
        """Install the counting (step 2) inside the running transaction, when the tables are this
        user's to put triggers on; otherwise the fingerprint stays the full scan.

        The function names its table with the schema and runs with a fixed ``search_path``: it
        fires in every client's session, whose search path may reach another schema's
        ``nablog_counts`` (a write counted there would go unseen) or none (every write would fail).
        """
        if self.url.dialect != "postgres" or self._counting():
            return
        names = sorted(t.name for t in self.tables.values())
        schema, owned = self._execute("SELECT current_schema(), (SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() "
                                      "AND tablename = ANY(%s) AND tableowner = current_user)", (names,)).fetchone()
        if owned != len(names):
            return
        counts, counter = f"{quote(schema)}.{COUNTS}", f"{quote(schema)}.{COUNTER}"
        self._execute(f"CREATE TABLE IF NOT EXISTS {counts} (name TEXT PRIMARY KEY, changes BIGINT NOT NULL)")
        self._execute(f"CREATE OR REPLACE FUNCTION {counter}() RETURNS trigger LANGUAGE plpgsql "
                      "SET search_path = pg_catalog, pg_temp AS $$ BEGIN "
                      f"INSERT INTO {counts} VALUES (TG_TABLE_NAME, 1) ON CONFLICT (name) DO UPDATE SET changes = {counts}.changes + 1; "
                      "RETURN NULL; END $$")
        for name in names:
            table = f"{quote(schema)}.{quote(name)}"
            self._execute(f"DROP TRIGGER IF EXISTS {COUNTER} ON {table}")
            self._execute(f"CREATE TRIGGER {COUNTER} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {counter}()")
            self._execute(f"ALTER TABLE {table} ENABLE ALWAYS TRIGGER {COUNTER}")

    def _hashes(self) -> str:
        """Per table its row count and sum of row hashes (a full scan; SQLite: the file's stat)."""
        if self.url.dialect == "sqlite":
            import os

            parts = []
            for suffix in ("", "-wal"):
                try:
                    st = os.stat(self.url.target + suffix)
                    parts.append(f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}")
                except FileNotFoundError:
                    parts.append("-")
            return "|".join(parts)
        parts = []
        for pred in self.relations():
            table = self.tables[pred]
            if self.url.dialect == "postgres":
                sql = f"SELECT count(*), coalesce(sum(hashtext(t::text)::bigint), 0) FROM {quote(table.name)} t"
            else:
                columns = ", ".join(quote(c.name) for c in table.columns)
                sql = f"SELECT count(*), coalesce(sum(hash({columns})::HUGEINT), 0) FROM {quote(table.name)}"
            count, total = self._execute(sql).fetchone()
            parts.append(f"{pred}:{count}:{total}")
        return "|".join(parts)

    def version(self) -> int:
        if not self._has_log():
            return 0
        return self._execute(f"SELECT coalesce(max(version), 0) FROM {LOG}").fetchone()[0]

    def entries(self) -> list[dict]:
        """The commits not undone, oldest first: the undo stack."""
        if not self._has_log():
            return []
        rows = self._execute(f"SELECT version, committed_at, request, changes FROM {LOG} WHERE kind = 'commit' AND undone_by IS NULL ORDER BY version").fetchall()
        return [{"version": v, "time": at, "request": request, "changes": json.loads(changes)} for v, at, request, changes in rows]

    def recover(self) -> None:
        """Nothing to finish: the database's own transactions are all or nothing."""
        return None

    def _has_log(self) -> bool:
        if self.url.dialect == "sqlite":
            sql = "SELECT 1 FROM sqlite_master WHERE name = ?"
        elif self.url.dialect == "postgres":
            sql = "SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?"
        else:
            sql = "SELECT 1 FROM duckdb_tables() WHERE schema_name = current_schema() AND table_name = ?"
        return self._execute(sql, (LOG,)).fetchone() is not None

    # -- writing ----------------------------------------------------------------------------------

    def _begin(self) -> None:
        begin = {"postgres": "BEGIN ISOLATION LEVEL SERIALIZABLE", "sqlite": "BEGIN IMMEDIATE", "duckdb": "BEGIN TRANSACTION"}[self.url.dialect]
        self._execute(begin)

    def read_consistently(self, read):
        """``read()`` and the fingerprint of the data it read, both in one read transaction (one
        snapshot: REPEATABLE READ on PostgreSQL), so the fingerprint names what was read."""
        begin = {"postgres": "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "sqlite": "BEGIN", "duckdb": "BEGIN TRANSACTION"}[self.url.dialect]
        self._execute(begin)
        try:
            result = read()
            basis = self.fingerprint()
        finally:
            self._execute("ROLLBACK")
        return basis, result

    def _transaction(self, body):
        self._begin()
        try:
            result = body()
            if self.url.dialect != "sqlite":
                self.settled = self.fingerprint()  # the state this transaction leaves (its own snapshot)
            self._execute("COMMIT")
            if self.url.dialect == "sqlite":
                self.settled = self.fingerprint()  # the file as this commit left it
            return result
        except BaseException as e:
            try:
                self._execute("ROLLBACK")
            except Exception:
                pass
            if isinstance(e, NablogError):
                raise
            if isinstance(e, Exception) and type(e).__module__.split(".")[0] in ("psycopg", "sqlite3", "duckdb", "_duckdb"):
                raise _database_error(self.url, e) from None
            raise

    def _table(self, pred: str) -> Table:
        table = self.tables.get(pred)
        if table is None:
            raise NablogError(f"{pred} is not a table of {self.url.text}", hint="a change can only go to the database's tables")
        return table

    def _match(self, table: Table, row: tuple) -> tuple[str, list]:
        """A WHERE clause matching the stored rows that read as ``row``."""
        clauses, params = [], []
        text = "TEXT" if self.url.dialect != "duckdb" else "VARCHAR"
        for column, value in zip(table.columns, row):
            name = quote(column.name)
            if value == "" and column.nullable:
                clauses.append(f"({name} IS NULL OR {name} = '')" if column.kind in ("text", "any") else f"{name} IS NULL")
            elif column.kind == "other" and self.url.dialect != "sqlite":
                clauses.append(f"CAST({name} AS {text}) = ?")
                params.append(value)
            else:
                clauses.append(f"{name} = ?")
                params.append(value)
        return " AND ".join(clauses) or "TRUE", params

    def _value(self, table: Table, j: int, value):
        """The parameter that stores ``value`` in column ``j``."""
        column = table.columns[j]
        if value == "" and column.nullable:
            return None
        if column.kind == "int" and not isinstance(value, int):
            raise DataError(f"cannot store {value!r} in column {column.name} of table {table.name}: it holds integers",
                            where=f"{self.url.text}, table {table.name}",
                            hint=f"give an integer (apply --set {value}=N for a new constant)" if isinstance(value, str) and value.startswith("new") else "give an integer")
        if column.kind == "text" and not isinstance(value, str):
            raise DataError(f"cannot store {value!r} in column {column.name} of table {table.name}: it holds text",
                            where=f"{self.url.text}, table {table.name}", hint=f"write it as a string: \"{value}\"")
        return value

    def _replacements(self, table: Table, inserted, deleted) -> dict:
        """The deleted rows whose primary key an inserted row keeps, each with that row: a
        replacement is one UPDATE, so the rows referencing it by a foreign key stay valid (a
        DELETE first would be refused by a constraint that is not deferred)."""
        if not table.primary_key:
            return {}
        names = [c.name.lower() for c in table.columns]
        places = [names.index(c.lower()) for c in table.primary_key]
        new = {tuple(row[i] for i in places): row for row in inserted}
        return {row: new[k] for row in deleted if (k := tuple(row[i] for i in places)) in new and new[k] != row}

    def _update_sql(self, table: Table, where: str, raw: bool = False) -> str:
        """``UPDATE`` of every column; ``raw``: the values are as the database returned them
        (an undo's), so none is cast from its text."""
        cast = not raw and self.url.dialect != "sqlite"
        marks = ", ".join(f"{quote(c.name)} = " + (f"CAST(? AS {c.declared})" if cast and c.kind == "other" else "?") for c in table.columns)
        return f"UPDATE {quote(table.name)} SET {marks} WHERE {where}"

    def _insert_sql(self, table: Table) -> str:
        marks = ", ".join(f"CAST(? AS {c.declared})" if c.kind == "other" and self.url.dialect != "sqlite" else "?" for c in table.columns)
        columns = ", ".join(quote(c.name) for c in table.columns)
        return f"INSERT INTO {quote(table.name)} ({columns}) VALUES ({marks}) RETURNING *"

    def statements(self, delta: Delta) -> list[str]:
        """The statements :meth:`commit` would run for ``delta``, with their values inline (for review: ``--sql``)."""
        from ..lang import Var

        if any(isinstance(t, Var) for a in (*delta.insert, *delta.delete) for t in a.args):
            raise NablogError("a family of realizations is not one change", hint="pick a member: --set D=VALUE")
        out = []
        for pred, (ins, dele) in sorted(delta.by_relation().items()):
            table = self._table(pred)
            replaced = self._replacements(table, ins, dele)
            for row in sorted(dele, key=row_sort_key):
                where, params = self._match(table, row)
                if row in replaced:
                    values = [self._value(table, j, v) for j, v in enumerate(replaced[row])]
                    out.append(_inline(self._update_sql(table, where) + ";", values + params))
                else:
                    out.append(_inline(f"DELETE FROM {quote(table.name)} WHERE {where};", params))
            for row in sorted(set(ins) - set(replaced.values()), key=row_sort_key):
                values = [self._value(table, j, v) for j, v in enumerate(row)]
                out.append(_inline(self._insert_sql(table).replace(" RETURNING *", ";"), values))
        return out

    def commit(self, delta: Delta, *, request: str = "", basis: str | None = None, version: int | None = None) -> Delta:
        """Apply ``delta`` in one transaction with its undo entry; the changes really made."""

        def body() -> Delta:
            self._check_basis(basis)
            self._count_changes()
            changes: dict[str, dict[str, list]] = {}
            real_ins: dict[str, set] = {}
            real_del: dict[str, set] = {}
            by_relation = delta.by_relation()
            replacements: dict[str, dict] = {}
            for pred, (ins, dele) in sorted(by_relation.items()):
                table = self._table(pred)
                replaced = replacements[pred] = self._replacements(table, ins, dele)
                for row in sorted(dele, key=row_sort_key):
                    where, params = self._match(table, row)
                    if row in replaced:  # updated in place below, once the other rows are gone
                        gone = self._execute(f"SELECT * FROM {quote(table.name)} WHERE {where}", params).fetchall()
                        if not gone:
                            del replaced[row]  # absent: the new row is a plain insertion
                        continue
                    gone = self._execute(f"DELETE FROM {quote(table.name)} WHERE {where} RETURNING *", params).fetchall()
                    if gone:
                        real_del.setdefault(pred, set()).add(row)
                        changes.setdefault(table.name, {"insert": [], "delete": []})["delete"] += [[encode_raw(v) for v in r] for r in gone]
            for pred, (ins, _) in sorted(by_relation.items()):
                table = self._table(pred)
                kinds = [c.kind for c in table.columns]
                old_of = {new: old for old, new in replacements[pred].items()}
                for row in sorted(ins, key=row_sort_key):
                    where, params = self._match(table, row)
                    if self._execute(f"SELECT 1 FROM {quote(table.name)} WHERE {where} LIMIT 1", params).fetchone():
                        continue
                    values = [self._value(table, j, v) for j, v in enumerate(row)]
                    if row in old_of:
                        old_where, old_params = self._match(table, old_of[row])
                        gone = self._execute(f"SELECT * FROM {quote(table.name)} WHERE {old_where}", old_params).fetchall()
                        stored = self._execute(self._update_sql(table, old_where) + " RETURNING *", values + old_params).fetchone()
                        real_del.setdefault(pred, set()).add(old_of[row])
                        changes.setdefault(table.name, {"insert": [], "delete": []})["delete"] += [[encode_raw(v) for v in r] for r in gone]
                    else:
                        stored = self._execute(self._insert_sql(table), values).fetchone()
                    back = tuple(to_constant(_text(v, k, self.url.dialect), k) for v, k in zip(stored, kinds))
                    if back != row:
                        raise DataError(f"table {table.name} would store {row} as {back}", where=f"{self.url.text}, table {table.name}",
                                        hint="write values as the database prints them (numeric scale, date format); nothing was written")
                    real_ins.setdefault(pred, set()).add(row)
                    changes.setdefault(table.name, {"insert": [], "delete": []})["insert"].append([encode_raw(v) for v in stored])
            real = Delta.of_rows(real_ins, real_del)
            if real:
                self._log("commit", request, changes)
            return real

        return self._transaction(body)

    def undo(self, *, version: int | None = None) -> Delta | None:
        """Take back the newest commit not undone, in one compensating transaction; None when there is none."""

        def body() -> Delta | None:
            entries = self.entries()
            if not entries:
                return None
            entry = entries[-1]
            inverse_ins: dict[str, set] = {}
            inverse_del: dict[str, set] = {}
            by_name = {t.name: (pred, t) for pred, t in self.tables.items()}
            for name, rows in entry["changes"].items():
                if name not in by_name:
                    raise NablogError(f"cannot undo: the newest change was made to table {name}, which {self.url.text} does not have",
                                      hint="drop the entry with nablog undo --forget")
                pred, table = by_name[name]
                kinds = [c.kind for c in table.columns]
                inserted = [tuple(decode_raw(v) for v in raw) for raw in rows["insert"]]
                deleted = [tuple(decode_raw(v) for v in raw) for raw in rows["delete"]]
                back_to = self._replacements(table, deleted, inserted)  # a replacement is undone in place too
                for values in inserted:
                    where, params = self._exact(table, list(values))
                    if values in back_to:
                        sql, args = self._update_sql(table, where, raw=True) + " RETURNING 1", list(back_to[values]) + params
                    else:
                        sql, args = f"DELETE FROM {quote(table.name)} WHERE {where} RETURNING 1", params
                    if not self._execute(sql, args).fetchall():
                        raise _stale(name)
                    inverse_del.setdefault(pred, set()).add(tuple(to_constant(_text(v, k, self.url.dialect), k) for v, k in zip(values, kinds)))
                restored = set(back_to.values())
                for values in deleted:
                    if values in restored:
                        inverse_ins.setdefault(pred, set()).add(tuple(to_constant(_text(v, k, self.url.dialect), k) for v, k in zip(values, kinds)))
                        continue
                    values = list(values)
                    where, params = self._exact(table, values)
                    if table.primary_key and self._execute(f"SELECT 1 FROM {quote(table.name)} WHERE {where} LIMIT 1", params).fetchone():
                        raise _stale(name)
                    columns = ", ".join(quote(c.name) for c in table.columns)
                    marks = ", ".join("?" for _ in table.columns)
                    self._execute(f"INSERT INTO {quote(table.name)} ({columns}) VALUES ({marks})", values)
                    inverse_ins.setdefault(pred, set()).add(tuple(to_constant(_text(v, k, self.url.dialect), k) for v, k in zip(values, kinds)))
            number = self._log("undo", f"undo of version {entry['version']}", {})
            self._execute(f"UPDATE {LOG} SET undone_by = ? WHERE version = ?", (number, entry["version"]))
            return Delta.of_rows(inverse_ins, inverse_del)

        return self._transaction(body)

    def forget(self) -> dict | None:
        """Drop the newest undo entry without touching the data."""

        def body():
            entries = self.entries()
            if not entries:
                return None
            number = self._log("forget", f"forget version {entries[-1]['version']}", {})
            self._execute(f"UPDATE {LOG} SET undone_by = ? WHERE version = ?", (number, entries[-1]["version"]))
            return entries[-1]

        return self._transaction(body)

    def _exact(self, table: Table, values: list) -> tuple[str, list]:
        """A WHERE clause matching the stored row ``values`` (driver values) exactly."""
        clauses, params = [], []
        for column, value in zip(table.columns, values):
            if value is None:
                clauses.append(f"{quote(column.name)} IS NULL")
            else:
                clauses.append(f"{quote(column.name)} = ?")
                params.append(value)
        return " AND ".join(clauses), params

    def _log(self, kind: str, request: str, changes: dict) -> int:
        self._execute(f"CREATE TABLE IF NOT EXISTS {LOG} (version BIGINT PRIMARY KEY, kind TEXT NOT NULL, committed_at TEXT NOT NULL, "
                      "request TEXT NOT NULL, changes TEXT NOT NULL, undone_by BIGINT)")
        number = self._execute(f"SELECT coalesce(max(version), 0) + 1 FROM {LOG}").fetchone()[0]
        self._execute(f"INSERT INTO {LOG} (version, kind, committed_at, request, changes) VALUES (?, ?, ?, ?, ?)",
                      (number, kind, time.strftime("%Y-%m-%dT%H:%M:%S"), request, json.dumps(changes, ensure_ascii=False)))
        return number

    def _check_basis(self, basis: str | None) -> None:
        if basis is None:
            return
        # A basis read before the counting was installed (by this client or another) is a scan's.
        now = self.fingerprint() if basis.startswith("counts|") or not self._counting() else self._hashes()
        if basis != now:
            raise NablogError(
                f"the data in {self.url.text} changed since this change was computed (another client wrote it)",
                hint="propose again to get changes for the current data; nothing was written",
            )


def _text(value: Any, kind: str, dialect: str) -> Any:
    """A value a statement returned, as reading the table gives it (other kinds as the database's text)."""
    if kind != "other" or dialect == "sqlite" or value is None:
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    import datetime
    from decimal import Decimal

    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, float):
        return repr(value)
    return value


def _inline(sql: str, params: list) -> str:
    """``sql`` with its ``?`` marks replaced by the values as SQL literals (for review, not to run)."""
    parts = sql.split("?")
    out = [parts[0]]
    for value, part in zip(params, parts[1:]):
        if value is None:
            literal = "NULL"
        elif isinstance(value, int):
            literal = str(value)
        else:
            literal = "'" + str(value).replace("'", "''") + "'"
        out += [literal, part]
    return "".join(out)


def _stale(name: str) -> NablogError:
    return NablogError(f"cannot undo: rows of table {name} changed after the change being undone",
                       hint="undo only works while the data is as that change left it; nablog undo --forget drops the entry")


def _database_error(url: Url, e: Exception) -> DataError:
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if "could not serialize" in text or "serialization" in text.lower() or "conflict" in text.lower():
        return DataError(f"{url.text}: another client changed the same data at the same time: {text}", where=url.text,
                         hint="propose again; nothing was written")
    return DataError(f"{url.text} refused the change: {text}", where=url.text, hint="nothing was written; the database's constraints decide what it stores")


__all__ = ["LOG", "SqlStore"]
