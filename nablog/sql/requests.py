"""Requests in SQL: ``INSERT INTO v VALUES (…)``, ``DELETE FROM v WHERE …``, ``UPDATE v SET … WHERE …``.

Each statement becomes view-update literals (seed 002's requests): an insertion ``+v(…)`` per
row of VALUES; a deletion ``-v(…)`` per row of ``v`` that the WHERE selects (the database
itself selects them, ``SELECT … FROM v WHERE …``, so the condition means what SQL means); an
update deletes each selected row and inserts it with the SET columns changed. Several
statements separated by ``;`` are one request.

>>> from nablog.sql.views import Relation
>>> relations = {"v": Relation("v", ["id", "name"], ["int", "text"], [False, True])}
>>> sql_request("INSERT INTO v VALUES (1, 'a'), (2, NULL); INSERT INTO v (name, id) VALUES ('b', 3)", relations, "postgres", None)
'+v(1, a). +v(2, ""). +v(3, b).'
"""

from __future__ import annotations

import re

from ..lang import Atom, NablogError
from .connection import quote, to_constant

_SQL = re.compile(r"\s*(insert|delete|update)\b", re.I)


def is_sql_request(text: str) -> bool:
    """Whether a request is written in SQL.

    >>> is_sql_request("INSERT INTO v VALUES (1)"), is_sql_request("+v(1).")
    (True, False)
    """
    return bool(_SQL.match(text))


def sql_request(text: str, relations: dict, dialect: str, store) -> str:
    """The nablog request (``+v(…). -v(…).``) for the SQL statements ``text``.

    ``relations``: the relations by lower-case name (tables and translated views); ``store``
    (a :class:`~nablog.sql.store.SqlStore`) selects the rows a WHERE names.
    """
    import sqlglot
    from sqlglot import exp

    try:
        statements = [s for s in sqlglot.parse(text, read=dialect) if s is not None]
    except sqlglot.errors.ParseError as e:
        err = e.errors[0] if e.errors else {}
        raise NablogError(f"cannot read the SQL request: {err.get('description', e)}", where=f"request, line {err.get('line', '?')}, column {err.get('col', '?')}",
                          hint="write INSERT INTO v VALUES (...), DELETE FROM v WHERE ... or UPDATE v SET c = ... WHERE ...") from None
    literals: list[str] = []
    for statement in statements:
        if isinstance(statement, exp.Insert):
            literals += _insert(statement, relations)
        elif isinstance(statement, exp.Delete):
            rel, rows = _select(statement, relations, dialect, store, {})
            literals += [f"-{Atom(rel.pred, row)}." for row in rows]
        elif isinstance(statement, exp.Update):
            sets = {}
            for assignment in statement.expressions:
                sets[assignment.this.name.lower()] = assignment.expression
            rel, rows = _select(statement, relations, dialect, store, sets)
            width = len(rel.columns)
            for row in rows:
                old, new = row[:width], row[width:]
                if old != new:
                    literals += [f"-{Atom(rel.pred, old)}.", f"+{Atom(rel.pred, new)}."]
        else:
            raise NablogError(f"{statement.key.upper()} is not a request", hint="write INSERT, DELETE or UPDATE statements")
    return " ".join(dict.fromkeys(literals))


def _relation(table, relations):
    name = table.name.lower()
    if name not in relations:
        raise NablogError(f"{table.name} is not a table or translated view of the database", hint="check the name; nablog query URL lists the views")
    return relations[name]


def _insert(statement, relations) -> list[str]:
    from sqlglot import exp

    target = statement.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [c.name.lower() for c in target.expressions]
        target = target.this
    rel = _relation(target, relations)
    values = statement.expression
    if not isinstance(values, exp.Values):
        raise NablogError("INSERT ... SELECT is not a request nablog reads", hint="write INSERT INTO v VALUES (...)")
    order = list(range(len(rel.columns)))
    if columns is not None:
        missing = [c for c in rel.columns if c not in columns]
        unknown = [c for c in columns if c not in rel.columns]
        if missing or unknown:
            raise NablogError(f"INSERT INTO {rel.pred} names {'no column ' + ', '.join(missing) if missing else 'unknown columns ' + ', '.join(unknown)}",
                              hint=f"give every column of {rel.pred}: {', '.join(rel.columns)}")
        order = [columns.index(c) for c in rel.columns]
    out = []
    for row in values.expressions:
        items = row.expressions if isinstance(row, exp.Tuple) else [row]
        if len(items) != len(rel.columns):
            raise NablogError(f"INSERT INTO {rel.pred}: a row of {len(items)} values, but {rel.pred} has {len(rel.columns)} columns ({', '.join(rel.columns)})",
                              hint="give a value for every column")
        constants = [_constant(items[i], rel.kinds[j]) for j, i in enumerate(order)]
        out.append(f"+{Atom(rel.pred, tuple(constants))}.")
    return out


def _constant(e, kind: str):
    from sqlglot import exp

    if isinstance(e, exp.Null):
        return ""
    if isinstance(e, exp.Neg) and isinstance(e.this, exp.Literal) and not e.this.is_string:
        value = _constant(e.this, kind)
        return -value if isinstance(value, int) else "-" + value
    if isinstance(e, exp.Literal):
        if e.is_string:
            return e.this
        if re.fullmatch(r"[0-9]+", e.this) and kind != "other":
            return int(e.this)
        return e.this  # a number the database reads as text (numeric, float): its text
    if isinstance(e, exp.Boolean):
        return "true" if e.this else "false"
    raise NablogError(f"the value {e.sql()} is not a constant", hint="write numbers, 'strings' or NULL in VALUES")


def _select(statement, relations, dialect, store, sets):
    """The rows of the statement's relation its WHERE selects (then, for SET, the new rows)."""
    from sqlglot import exp

    target = statement.this
    rel = _relation(target, relations)
    if store is None:
        raise NablogError("DELETE and UPDATE requests need the database to select their rows", hint="open the database by its URL")
    unknown = [c for c in sets if c not in rel.columns]
    if unknown:
        raise NablogError(f"UPDATE {rel.pred}: no column {unknown[0]}", hint=f"{rel.pred}'s columns are {', '.join(rel.columns)}")
    text = "VARCHAR" if dialect == "duckdb" else "TEXT"

    def shown(sql_expr: str, kind: str) -> str:
        return f"CAST({sql_expr} AS {text})" if kind == "other" and dialect != "sqlite" else sql_expr

    select = [shown(quote(c), k) for c, k in zip(rel.columns, rel.kinds)]
    select += [shown(sets[c].sql(dialect), k) if c in sets else shown(quote(c), k) for c, k in zip(rel.columns, rel.kinds)] if sets else []
    where = statement.args.get("where")
    sql = f"SELECT {', '.join(select)} FROM {quote(target.name)}" + (f" WHERE {where.this.sql(dialect)}" if where is not None else "")
    try:
        rows = store._execute(sql).fetchall()
    except Exception as e:
        raise NablogError(f"the database could not select the rows: {str(e).strip().splitlines()[0]}", where=sql, hint="check the WHERE and SET expressions") from None
    kinds = rel.kinds * (2 if sets else 1)
    return rel, sorted({tuple(to_constant(v, k) for v, k in zip(row, kinds)) for row in rows}, key=str)


__all__ = ["is_sql_request", "sql_request"]
