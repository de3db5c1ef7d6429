"""The catalogue of a SQL database: its tables (columns, keys, foreign keys, NOT NULL, CHECKs) and views.

One reader per dialect asks the database's own catalogue (PostgreSQL's ``pg_catalog`` and
``information_schema``, SQLite's ``sqlite_master`` and ``PRAGMA``s, DuckDB's ``duckdb_*``
functions) for the objects of the current schema. nablog's own tables (``nablog_*``) are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .connection import Url, column_kind

OWN_PREFIX = "nablog_"
"""nablog's tables in a database (versions, undo log) start so; they are not relations."""


@dataclass(frozen=True)
class Column:
    name: str
    declared: str  # the type as the database prints it
    kind: str  # connection.column_kind: int, text, any or other
    nullable: bool


@dataclass
class Table:
    name: str
    columns: list[Column]
    primary_key: tuple[str, ...] = ()
    unique: list[tuple[str, ...]] = field(default_factory=list)
    foreign_keys: list[tuple[tuple[str, ...], str, tuple[str, ...]]] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)  # each CHECK's expression, SQL text

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name.lower() == name.lower())


@dataclass(frozen=True)
class View:
    name: str
    sql: str  # the SELECT (or set operation) defining it, as the database keeps it
    columns: tuple[str, ...] = ()  # names given in CREATE VIEW v(a, b) AS ..., else ()


@dataclass
class Catalog:
    dialect: str
    tables: dict[str, Table]
    views: list[View]


def read_catalog(url: Url, conn) -> Catalog:
    """The tables and views of the database ``conn`` is connected to (``url`` says its dialect)."""
    reader = {"postgres": _postgres, "sqlite": _sqlite, "duckdb": _duckdb}[url.dialect]
    tables, views = reader(conn)
    tables = {n: t for n, t in tables.items() if not n.lower().startswith(OWN_PREFIX)}
    return Catalog(url.dialect, tables, sorted(views, key=lambda v: v.name))


def _postgres(conn):
    tables: dict[str, Table] = {}
    kinds = dict(conn.execute(
        "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v')").fetchall())
    for table, name, declared, notnull in conn.execute(
        "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a "
        "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped "
        "ORDER BY c.relname, a.attnum").fetchall():
        tables.setdefault(table, Table(table, [])).columns.append(Column(name, declared, column_kind(declared, "postgres"), not notnull))
    for table, kind, cols, target, target_cols, definition in conn.execute(
        "SELECT c.relname, k.contype, "
        "ARRAY(SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY u(n, i) JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i), "
        "f.relname, "
        "ARRAY(SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY u(n, i) JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i), "
        "pg_get_constraintdef(k.oid) "
        "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
        "LEFT JOIN pg_class f ON f.oid = k.confrelid "
        "WHERE n.nspname = current_schema() AND k.contype IN ('p', 'u', 'f', 'c') ORDER BY c.relname, k.conname").fetchall():
        if table not in tables:
            continue
        _constraint(tables[table], {"p": "PRIMARY KEY", "u": "UNIQUE", "f": "FOREIGN KEY", "c": "CHECK"}[kind], tuple(cols), target, tuple(target_cols or ()),
                    definition[len("CHECK "):] if kind == "c" else None)
    views = [View(name, sql) for name, sql in conn.execute(
        "SELECT viewname, definition FROM pg_views WHERE schemaname = current_schema()").fetchall() if kinds.get(name) == "v"]
    return tables, views


def _sqlite(conn):
    import sqlglot
    from sqlglot import exp

    tables: dict[str, Table] = {}
    views = []
    for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name").fetchall():
        if kind == "view":
            views.append(_create_view(name, sql, "sqlite"))
            continue
        info = conn.execute(f"PRAGMA table_info({_q(name)})").fetchall()
        table = tables[name] = Table(name, [Column(r[1], r[2] or "", column_kind(r[2] or "", "sqlite"), not r[3] and not r[5]) for r in info])
        pk = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
        if pk:
            _constraint(table, "PRIMARY KEY", pk)
        for _, index, unique, origin, *_ in conn.execute(f"PRAGMA index_list({_q(name)})").fetchall():
            if unique and origin == "u":
                cols = tuple(r[2] for r in sorted(conn.execute(f"PRAGMA index_info({_q(index)})").fetchall()))
                _constraint(table, "UNIQUE", cols)
        fks: dict[int, list] = {}
        for row in conn.execute(f"PRAGMA foreign_key_list({_q(name)})").fetchall():
            fks.setdefault(row[0], []).append(row)
        for rows in fks.values():
            rows.sort(key=lambda r: r[1])
            target = rows[0][2]
            to = [r[4] for r in rows]
            if any(t is None for t in to):  # REFERENCES t without columns: its primary key
                to = [r[1] for r in sorted((r for r in conn.execute(f"PRAGMA table_info({_q(target)})").fetchall() if r[5]), key=lambda r: r[5])]
            _constraint(table, "FOREIGN KEY", tuple(r[3] for r in rows), target, tuple(to))
        try:
            tree = sqlglot.parse_one(sql, read="sqlite")
        except sqlglot.errors.ParseError:
            continue  # a CHECK sqlglot cannot read is left to the database, which enforces it anyway
        for check in tree.find_all(exp.CheckColumnConstraint):
            table.checks.append(check.this.sql("sqlite"))
    return tables, views


def _duckdb(conn):
    tables: dict[str, Table] = {}
    names = {r[0] for r in conn.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = current_schema() AND NOT internal").fetchall()}
    for table, name, declared, nullable in conn.execute(
        "SELECT table_name, column_name, data_type, is_nullable FROM duckdb_columns() WHERE schema_name = current_schema() AND NOT internal ORDER BY table_name, column_index").fetchall():
        if table in names:
            tables.setdefault(table, Table(table, [])).columns.append(Column(name, declared, column_kind(declared, "duckdb"), nullable))
    for table, kind, cols, expression, target, target_cols in conn.execute(
        "SELECT table_name, constraint_type, constraint_column_names, expression, referenced_table, referenced_column_names FROM duckdb_constraints() "
        "WHERE schema_name = current_schema() ORDER BY table_name, constraint_index").fetchall():
        if table in tables and kind in ("PRIMARY KEY", "UNIQUE", "FOREIGN KEY", "CHECK"):
            _constraint(tables[table], kind, tuple(cols), target, tuple(target_cols or ()), expression)
    views = [_create_view(name, sql, "duckdb") for name, sql in conn.execute(
        "SELECT view_name, sql FROM duckdb_views() WHERE schema_name = current_schema() AND NOT internal ORDER BY view_name").fetchall()]
    return tables, views


def _constraint(table: Table, kind: str, cols: tuple, target=None, target_cols=(), check=None) -> None:
    if kind == "PRIMARY KEY":
        table.primary_key = cols
    elif kind == "UNIQUE":
        if cols not in table.unique:
            table.unique.append(cols)
    elif kind == "FOREIGN KEY":
        table.foreign_keys.append((cols, target, target_cols))
    elif check:
        table.checks.append(check)


def _create_view(name: str, sql: str, dialect: str) -> View:
    """A view from its CREATE VIEW statement: the query, and the column names it gives, if any."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.ParseError:
        return View(name, sql)  # the translator reports what sqlglot cannot read
    if isinstance(tree, exp.Create) and tree.expression is not None:
        target = tree.this
        columns = tuple(c.name for c in target.expressions) if isinstance(target, exp.Schema) else ()
        return View(name, tree.expression.sql(dialect), columns)
    return View(name, sql)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


__all__ = ["Catalog", "Column", "OWN_PREFIX", "Table", "View", "read_catalog"]
