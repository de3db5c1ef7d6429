"""Connections to SQL databases by URL: the driver, its placeholder, quoting, and value conversions.

``postgresql://user@host:port/db`` (psycopg), ``sqlite:///relative.db`` or
``sqlite:////absolute.db`` (the standard library), ``duckdb:///path.duckdb`` (duckdb) — the
SQLAlchemy spelling: three slashes then the path, so a fourth slash makes it absolute.

Values
    A column's *kind* decides the nablog constant its values read as: ``int`` columns (every
    integer type) give Python ints, ``text`` columns strings, and every other type (numeric,
    float, boolean, date, timestamp, ...) gives the database's own text of the value
    (``'0.99'``, ``'2009-01-01 00:00:00'``, ``'true'``), which the database casts back exactly
    when it is written. NULL reads as ``""`` (nablog's null, as for CSV and SQLite files).
    SQLite columns without a declared type keep each value's own kind (its floats as their
    shortest exact text).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..lang import DataError, NablogError

DIALECTS = {"postgresql": "postgres", "postgres": "postgres", "sqlite": "sqlite", "duckdb": "duckdb"}
"""URL scheme to sqlglot dialect."""

INT_TYPES = re.compile(r"^(big|small|tiny|u?hug|medium)?int(eger)?[0-9]*$|^(u?(big|small|tiny)?int|bigserial|serial[0-9]*|smallserial|hugeint|ubigint|uinteger|usmallint|utinyint)$", re.I)
TEXT_TYPES = re.compile(r"^(text|varchar|string|char|bpchar|character( varying)?|nvarchar|nchar|clob|name)(\s*\(.*\))?$", re.I)


def column_kind(declared: str, dialect: str) -> str:
    """``int``, ``text``, ``any`` (an SQLite column without a type) or ``other``, from a declared type.

    >>> [column_kind(t, "postgres") for t in ("integer", "bigint", "character varying(40)", "numeric(10,2)", "boolean")]
    ['int', 'int', 'text', 'other', 'other']
    >>> [column_kind(t, "sqlite") for t in ("", "INTEGER", "NVARCHAR(120)", "NUMERIC(10,2)", "REAL")]
    ['any', 'int', 'text', 'other', 'other']
    """
    kind = declared.strip()
    if dialect == "sqlite":  # affinity rules (SQLite docs, "Datatypes", 3.1)
        upper = kind.upper()
        if "INT" in upper:
            return "int"
        if "CHAR" in upper or "CLOB" in upper or "TEXT" in upper:
            return "text"
        return "any" if upper == "" or "BLOB" in upper else "other"
    if INT_TYPES.match(kind):
        return "int"
    if TEXT_TYPES.match(kind):
        return "text"
    return "other"


@dataclass(frozen=True)
class Url:
    """A parsed database URL: the dialect, and what its driver is given."""

    text: str
    dialect: str
    target: str  # the conninfo for psycopg, a path for SQLite and DuckDB

    @classmethod
    def parse(cls, text: str) -> "Url":
        """
        >>> Url.parse("sqlite:///data/x.db").target, Url.parse("sqlite:////tmp/x.db").target
        ('data/x.db', '/tmp/x.db')
        >>> Url.parse("mysql://x").dialect
        Traceback (most recent call last):
        nablog.lang.errors.NablogError: error: unknown database URL mysql://x
        hint: write postgresql://user@host:port/database, sqlite:///path.db or duckdb:///path.duckdb
        """
        scheme, sep, rest = str(text).partition("://")
        if not sep or scheme not in DIALECTS:
            raise NablogError(f"unknown database URL {text}", hint="write postgresql://user@host:port/database, sqlite:///path.db or duckdb:///path.duckdb")
        dialect = DIALECTS[scheme]
        if dialect == "postgres":
            return cls(text, dialect, "postgresql://" + rest)
        if not rest.startswith("/") or rest == "/":
            raise NablogError(f"{text}: a {scheme} URL has three slashes before the path", hint=f"write {scheme}:///relative/path or {scheme}:////absolute/path")
        return cls(text, dialect, rest[1:])

    @property
    def placeholder(self) -> str:
        return "%s" if self.dialect == "postgres" else "?"

    def connect(self, readonly: bool = False):
        """A DB-API connection in autocommit mode (transactions are begun explicitly)."""
        try:
            if self.dialect == "postgres":
                import psycopg

                return psycopg.connect(self.target, autocommit=True)
            if self.dialect == "sqlite":
                import sqlite3

                if not Path(self.target).exists():
                    raise DataError(f"{self.text}: no such database file", where=self.target, hint="check the path (three slashes, then a relative path; four for an absolute one)")
                return sqlite3.connect(self.target, timeout=10.0, isolation_level=None)
            import duckdb

            if not Path(self.target).exists() and readonly:
                raise DataError(f"{self.text}: no such database file", where=self.target, hint="check the path")
            return duckdb.connect(self.target)
        except ImportError as e:
            raise NablogError(f"{self.text}: the driver is not installed ({e.name})", hint="pip install 'nablog[sql]'") from None
        except NablogError:
            raise
        except Exception as e:  # the drivers' own errors: say which database
            raise DataError(f"cannot connect to {self.text}: {str(e).strip()}", where=self.text, hint="check the URL, and that the server is running") from None


def quote(name: str) -> str:
    """An SQL identifier in double quotes (every dialect here accepts them).

    >>> print(quote('a"b'))
    "a""b"
    """
    return '"' + name.replace('"', '""') + '"'


def to_constant(value: Any, kind: str) -> int | str:
    """A value as a driver returns it, as a nablog constant (see the module's docstring).

    >>> to_constant(None, "int"), to_constant(3, "int"), to_constant(0.1, "any"), to_constant(True, "other")
    ('', 3, '0.1', 'true')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Decimal):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ") if hasattr(value, "hour") and hasattr(value, "year") else value.isoformat()
    raise DataError(f"a value of type {type(value).__name__} has no nablog constant: {value!r}", hint="nablog reads integers, text, numbers, booleans, dates and times")


# Raw values in the undo log: JSON with a tag for what JSON has no exact form of.
def encode_raw(value: Any) -> Any:
    """A driver's value as JSON that :func:`decode_raw` turns back into an equal value.

    >>> import datetime
    >>> [decode_raw(json.loads(json.dumps(encode_raw(v)))) == v for v in (None, 3, "x", True, 0.1, Decimal("0.990"), datetime.date(2009, 1, 2))]
    [True, True, True, True, True, True, True]
    """
    import datetime

    if value is None or isinstance(value, (bool, str)) or (isinstance(value, int)):
        return value
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, datetime.datetime):
        return {"datetime": value.isoformat()}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    if isinstance(value, datetime.time):
        return {"time": value.isoformat()}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"bytes": bytes(value).hex()}
    raise DataError(f"a value of type {type(value).__name__} cannot be kept in nablog's undo log: {value!r}", hint="nablog keeps numbers, text, booleans, dates, times and bytes")


def decode_raw(value: Any) -> Any:
    import datetime

    if not isinstance(value, dict):
        return value
    (tag, text), = value.items()
    return {
        "float": float, "decimal": Decimal, "datetime": datetime.datetime.fromisoformat, "date": datetime.date.fromisoformat,
        "time": datetime.time.fromisoformat, "bytes": bytes.fromhex,
    }[tag](text)


__all__ = ["Url", "column_kind", "decode_raw", "encode_raw", "quote", "to_constant"]
