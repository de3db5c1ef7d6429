"""A database URL opened as a nablog program, facts and store (what ``Database.connect`` builds on)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..lang import NablogWarning, Program, parse_files
from ..lang.ast import Protection
from .schema import table_statements
from .store import SqlStore
from .views import Untranslatable, translate_views


def text_ordered(store: SqlStore) -> bool:
    """Whether the database orders text by code point (nablog's order): SQLite's BINARY and
    DuckDB's default collation do; PostgreSQL only under the C or POSIX collation."""
    if store.url.dialect != "postgres":
        return True
    (collation,) = store._execute("SELECT datcollate FROM pg_database WHERE datname = current_database()").fetchone()
    return collation in ("C", "POSIX", "C.UTF-8", "C.utf8", "ucs_basic")


def open_url(url: str, paths: Sequence[str | Path] = ()):
    """``(program, facts, store, refused, basis, version)`` for the database at ``url`` and the program files
    ``paths`` (rules and constraints added to what the database declares)."""
    store = SqlStore(url)
    refused: list[Untranslatable] = []
    statements = table_statements(store.catalog, refused, store.tests)
    translation = translate_views(store.catalog, text_ordered(store), store.tests)
    refused += translation.refused
    statements += translation.statements
    if store.tests.by_pred:  # the tests' relations are the database's types, not data a change may touch
        statements.append(Protection(tuple((pred, 1) for pred in sorted(store.tests.by_pred))))
    store.relations_by_name = {**{p: r for p, r in _tables(store).items()}, **translation.relations}
    program = Program(tuple(statements) + parse_files(paths).statements)
    basis, (facts, version) = store.read_consistently(lambda: (store.load(), store.version()))
    return program, facts, store, refused, basis, version


def _tables(store: SqlStore):
    from .views import table_relations

    return table_relations(store.catalog)


def refusal_warnings(refused: Sequence[Untranslatable]) -> list[NablogWarning]:
    return [NablogWarning(f"{r}; the view is not available, the rest works", hint="nablog translates inner joins, UNION, EXCEPT, NOT EXISTS/NOT IN, GROUP BY with COUNT/SUM/MIN/MAX") for r in refused]


__all__ = ["open_url", "refusal_warnings", "text_ordered"]
