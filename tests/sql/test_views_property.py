"""Property: for random small schemas, data and SQL views, nablog's rows of each view (its rules,
translated from the database's own view definition) equal the database's ``SELECT * FROM v`` —
on PostgreSQL, SQLite and DuckDB. The database is the oracle."""


import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nablog import Database
from nablog.sql.connection import to_constant

from ..strategies import examples
from .conftest import fetch, new_database, run_script

TABLES = {"p": ("a", "n", "d", "f"), "r": ("a", "b", "c"), "s": ("a", "b"), "t": ("a",)}
INTS = [0, 1, 2, 3]
TYPED = {  # p's columns of other types: the literals a view compares them with, and their values
    "n": (["0.5", "1", "1.50", "-2", "10.25", "2.250"], ["0.5", "1", "1.50", "2.25", "10", "-2", "NULL"]),
    "d": (["DATE '2020-01-01'", "DATE '2019-12-31'", "'2021-06-15'"], ["'2019-12-31'", "'2020-01-01'", "'2021-06-15'", "NULL"]),
    "f": (["TRUE", "FALSE"], ["TRUE", "FALSE", "NULL"]),
}


@st.composite
def schemas(draw):
    """Tables r(a, b, c), s(a, b), t(a) — a and b integers (b may be NULL), r.c text — and
    p(a, n, d, f) — a numeric, a date and a boolean, each may be NULL — with rows."""
    nullable_b = draw(st.booleans())
    script = [
        "CREATE TABLE p (a INTEGER NOT NULL, n NUMERIC(6, 2), d DATE, f BOOLEAN)",
        f"CREATE TABLE r (a INTEGER NOT NULL, b INTEGER{' NOT NULL' if not nullable_b else ''}, c TEXT NOT NULL)",
        f"CREATE TABLE s (a INTEGER NOT NULL, b INTEGER{' NOT NULL' if not nullable_b else ''})",
        "CREATE TABLE t (a INTEGER NOT NULL)",
    ]
    b_values = st.sampled_from(INTS + (["NULL"] if nullable_b else []))
    rows = {
        "r": draw(st.sets(st.tuples(st.sampled_from(INTS), b_values, st.sampled_from(["'x'", "'y'", "'Z'"])), max_size=6)),
        "s": draw(st.sets(st.tuples(st.sampled_from(INTS), b_values), max_size=6)),
        "t": draw(st.sets(st.tuples(st.sampled_from(INTS)), max_size=3)),
        "p": draw(st.sets(st.tuples(st.sampled_from(INTS), *(st.sampled_from(TYPED[c][1]) for c in "ndf")), max_size=5)),
    }
    for table, values in rows.items():
        for row in sorted(values, key=str):
            script.append(f"INSERT INTO {table} VALUES ({', '.join(map(str, row))})")
    return script


def comparison(draw, left: str, right_choices: list[str]) -> str:
    op = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]))
    return f"{left} {op} {draw(st.sampled_from(right_choices))}"


def is_int(column: str) -> bool:
    return column.rsplit(".", 1)[1] in ("a", "b") or "." not in column


@st.composite
def conditions(draw, columns: list[str], depth: int = 2):
    typed = [c for c in columns if c.rsplit(".", 1)[1] in TYPED]
    kind = draw(st.sampled_from(["cmp", "cmp", "null", "exists", "in", "and", "or", "not"] + ["typed"] * (2 * bool(typed)) if depth else ["cmp", "null"]))
    int_columns = [c for c in columns if is_int(c)]
    if kind == "typed":
        column = draw(st.sampled_from(typed))
        name = column.rsplit(".", 1)[1]
        same = [c for c in typed if c.endswith("." + name) and c != column]
        if name == "f" and draw(st.booleans()):
            return f"{draw(st.sampled_from(['', 'NOT ']))}{column}"
        if name == "d" and same and draw(st.booleans()):
            return comparison(draw, column, same)  # two dates: compared on their ISO texts
        if name == "n" and draw(st.booleans()):
            return f"{column} {draw(st.sampled_from(['', 'NOT ']))}IN ({', '.join(draw(st.lists(st.sampled_from(TYPED['n'][0]), min_size=1, max_size=2)))})"
        left, right = column, draw(st.sampled_from(TYPED[name][0]))
        return comparison(draw, left, [right]) if draw(st.booleans()) else comparison(draw, right, [left])
    if kind == "cmp":
        return comparison(draw, draw(st.sampled_from(int_columns)), int_columns + [str(i) for i in INTS])
    if kind == "null":
        return f"{draw(st.sampled_from(int_columns))} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
    if kind == "exists":
        outer = draw(st.sampled_from(int_columns))
        negated = draw(st.sampled_from(["", "NOT "]))
        return f"{negated}EXISTS (SELECT 1 FROM t q WHERE q.a = {outer})"
    if kind == "in":
        outer = draw(st.sampled_from([c for c in int_columns if c.endswith(".a")] or int_columns))
        negated = draw(st.sampled_from(["", "NOT "])) if outer.endswith(".a") else ""
        return f"{outer} {negated}IN (SELECT q.a FROM t q)"
    if kind == "not":
        return f"NOT ({draw(conditions(columns, depth - 1))})"
    joiner = " AND " if kind == "and" else " OR "
    return "(" + joiner.join(draw(conditions(columns, depth - 1)) for _ in range(2)) + ")"


@st.composite
def selects(draw, width: int | None = None):
    set_operand = width is not None  # the columns of both sides must have one type: integers
    """A SELECT over one or two of the tables (an inner join), with a WHERE."""
    first = draw(st.sampled_from(sorted(TABLES)))
    sources = [(first, "x")]
    joined = draw(st.booleans())
    if joined:
        sources.append((draw(st.sampled_from(sorted(TABLES))), "y"))
    columns = [f"{alias}.{c}" for table, alias in sources for c in TABLES[table]]
    int_columns = [c for c in columns if is_int(c)]
    if width is None:
        width = draw(st.integers(1, 2))
    outputs = []
    for i in range(width):
        choice = draw(st.sampled_from(["col", "col", "arith", "const"]))
        if choice == "arith":
            not_null = [c for c in int_columns if c.endswith(".a")]
            outputs.append(f"{draw(st.sampled_from(not_null))} {draw(st.sampled_from(['+', '-', '*']))} {draw(st.sampled_from(INTS))} AS o{i}")
        elif choice == "const":
            outputs.append(f"{draw(st.sampled_from(INTS))} AS o{i}")
        elif i == 0 or set_operand:
            outputs.append(f"{draw(st.sampled_from(int_columns))} AS o{i}")
        else:  # any column: numbers, dates and booleans come out as the database prints them
            outputs.append(f"{draw(st.sampled_from(columns))} AS o{i}")
    sql = f"SELECT {draw(st.sampled_from(['', 'DISTINCT ']))}{', '.join(outputs)} FROM {first} x"
    if joined:
        on = f"x.a = y.{draw(st.sampled_from(TABLES[sources[1][0]]))}" if sources[1][0] not in ("p", "r") else "x.a = y.a"
        sql += f" JOIN {sources[1][0]} y ON {on}"
    if draw(st.booleans()):
        sql += f" WHERE {draw(conditions(columns))}"
    return sql


@st.composite
def grouped(draw):
    table = draw(st.sampled_from(["p", "r", "s"]))
    key = "x.a"
    second = TABLES[table][1]
    aggregate = draw(st.sampled_from(["COUNT(*)", f"COUNT(x.{second})", f"COUNT(DISTINCT x.{second})", "SUM(x.a)", "MIN(x.a)", "MAX(x.a)"]))
    sql = f"SELECT {key} AS k, {aggregate} AS n FROM {table} x"
    if draw(st.booleans()):
        sql += f" WHERE {draw(conditions([f'x.{c}' for c in TABLES[table]], 1))}"
    sql += f" GROUP BY {key}"
    if draw(st.booleans()):
        sql += f" HAVING {aggregate} > {draw(st.sampled_from([0, 1]))}"
    return sql


@st.composite
def views(draw):
    """Two or three views: plain selects, set operations, grouping, and a view over a view."""
    kind = draw(st.sampled_from(["select", "union", "except", "intersect", "group"]))
    if kind == "group":
        first = draw(grouped())
    elif kind == "select":
        first = draw(selects())
    else:
        width = draw(st.integers(1, 2))
        first = f"{draw(selects(width))} {kind.upper()} {draw(selects(width))}"
    out = [("v1", first)]
    out.append(("v2", f"SELECT * FROM v1 z WHERE {draw(st.sampled_from(['z.', 'z.']))}{'k' if kind == 'group' else 'o0'} {draw(st.sampled_from(['<', '>=', '<>']))} {draw(st.sampled_from(INTS))}"))
    return out


def database_rows(url: str, view: str) -> set[tuple]:
    return {tuple(to_constant(v, "int") for v in row) for row in fetch(url, f"SELECT * FROM {view}")}


DIALECTS = ["postgres", "sqlite", "duckdb"]


@pytest.mark.parametrize("dialect", DIALECTS)
@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(script=schemas(), defined=views())
def test_nablog_rows_of_each_view_equal_the_databases(request, tmp_path, dialect, script, defined):
    pg = request.getfixturevalue("postgres") if dialect == "postgres" else None
    url = _fresh(dialect, pg, tmp_path)
    if dialect == "sqlite":  # SQLite has no DATE literal: a date is its text
        defined = [(name, sql.replace("DATE '", "'")) for name, sql in defined]
    run_script(url, ";\n".join(script + [f"CREATE VIEW {name} AS {sql}" for name, sql in defined]) + ";")
    db = Database.connect(url)
    try:
        assert not db.warnings, [str(w) for w in db.warnings]
        for name, sql in defined:
            expected = database_rows(url, name)
            assert set(db.relation(name)) == expected, (name, sql, str(db.rules))
    finally:
        db.stores.close()


_pg_database = {}


def _fresh(dialect, pg, tmp_path) -> str:
    """A database with nothing in it: PostgreSQL's one test database emptied, else a new file."""
    if dialect != "postgres":
        return new_database(dialect, None, tmp_path)
    if "url" not in _pg_database:
        _pg_database["url"] = new_database("postgres", pg, tmp_path)
    url = _pg_database["url"]
    run_script(url, "DROP SCHEMA public CASCADE; CREATE SCHEMA public;")
    return url
