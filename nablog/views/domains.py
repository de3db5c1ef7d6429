"""Ready-made domains for mediated views: a SQLite table, a CSV or Parquet file, a Python function.

Each adapter returns keyword arguments for ``db.register_domain(name, **functions)``. Every call
reads the source afresh (a file only when it changed), so a domain answers what its source holds
now, as seed 000 §4 wants of external functions.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "cities.csv"
>>> _ = path.write_text("city,country\\nParis,France\\nLyon,France\\nRome,Italy\\n")
>>> cities = table_file(path)
>>> sorted(cities["lookup"]("city", "country", "France"))
['Lyon', 'Paris']
>>> sorted(scalar(len)("abc"))
[3]
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Callable

from ..lang.errors import DataError


def sqlite_table(path: str | Path, table: str) -> dict[str, Callable[..., set]]:
    """``lookup(column, key_column, key)``: the values of ``column`` in the rows whose ``key_column``
    is ``key``; ``column(column)``: all its values. Each call is one query on the live database."""
    path = Path(path)

    def run(sql: str, params: tuple) -> set:
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as con:
                return {_value(r[0]) for r in con.execute(sql, params) if r[0] is not None}
        except sqlite3.Error as err:
            raise DataError(f"{path}: {err}", hint=f"check the table {table} and its columns") from err

    def lookup(column: str, key_column: str, key) -> set:
        return run(f'SELECT "{_ident(column)}" FROM "{_ident(table)}" WHERE "{_ident(key_column)}" = ?', (key,))

    def column(column: str) -> set:
        return run(f'SELECT DISTINCT "{_ident(column)}" FROM "{_ident(table)}"', ())

    return {"lookup": lookup, "column": column}


def table_file(path: str | Path) -> dict[str, Callable[..., set]]:
    """The same functions as :func:`sqlite_table` over a CSV (with a header row) or Parquet file,
    read again whenever the file changes."""
    path = Path(path)
    cache: dict = {}

    def rows() -> list[dict]:
        stamp = path.stat().st_mtime_ns
        if cache.get("stamp") != stamp:
            cache["rows"], cache["stamp"] = _read(path), stamp
        return cache["rows"]

    def lookup(column: str, key_column: str, key) -> set:
        return {_value(r[column]) for r in rows() if _value(r[key_column]) == key and r[column] not in (None, "")}

    def column(column: str) -> set:
        return {_value(r[column]) for r in rows() if r[column] not in (None, "")}

    return {"lookup": lookup, "column": column}


def scalar(function: Callable) -> Callable[..., set]:
    """A domain function from a Python function of one result (``None`` for none)."""

    def call(*args) -> set:
        value = function(*args)
        return set() if value is None else {value}

    return call


def _read(path: Path) -> list[dict]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    import csv

    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _value(v):
    """Integers stay integers (also when a CSV file holds them as text); other values are strings."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v) if v.is_integer() else str(v)
    text = str(v)
    if text.lstrip("-").isdigit():
        return int(text)
    return text


def _ident(name: str) -> str:
    if '"' in name:
        raise DataError(f"bad column or table name {name!r}", hint="names may not contain double quotes")
    return name

