"""A real PostgreSQL server for the session (initdb and pg_ctl into a temporary directory, on a
loopback port), and a fresh database per test on each of PostgreSQL, SQLite and DuckDB. When the
server programs are missing the tests fail with the install hint (never a skip)."""

import itertools
import uuid

import pytest

from nablog.sql.server import TemporaryServer

_names = itertools.count(1)


@pytest.fixture(scope="session")
def postgres():
    server = TemporaryServer().start()  # raises, naming apt-get install postgresql-15, when missing
    yield server
    server.stop()


def new_database(dialect: str, postgres: TemporaryServer | None, tmp_path) -> str:
    """The URL of a new empty database of ``dialect``."""
    if dialect == "postgres":
        import psycopg

        name = f"t{next(_names)}_{uuid.uuid4().hex[:6]}"
        with psycopg.connect(postgres.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return postgres.url.rsplit("/", 1)[0] + "/" + name
    if dialect == "sqlite":
        import sqlite3

        path = tmp_path / f"db{next(_names)}.sqlite"
        sqlite3.connect(path).close()
        return f"sqlite:///{path}"
    path = tmp_path / f"db{next(_names)}.duckdb"
    return f"duckdb:///{path}"


def run_script(url: str, script: str) -> None:
    """Run SQL statements (separated by ;) on the database at ``url``."""
    from nablog.sql.connection import Url

    u = Url.parse(url)
    conn = u.connect()
    try:
        if u.dialect == "sqlite":
            conn.executescript(script)
        elif u.dialect == "duckdb":
            conn.execute(script)
        else:
            conn.execute(script)
    finally:
        conn.close()


def fetch(url: str, sql: str) -> list[tuple]:
    from nablog.sql.connection import Url

    conn = Url.parse(url).connect()
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


@pytest.fixture(params=["postgres", "sqlite", "duckdb"])
def any_url(request, tmp_path):
    pg = request.getfixturevalue("postgres") if request.param == "postgres" else None
    return new_database(request.param, pg, tmp_path)
