"""Comparisons of numbers, dates, times and booleans, which nablog holds as the database's text.

A numeric, float, date, timestamp, time or boolean column reads as the database's own text of
each value (:mod:`.connection`), and text does not order as the values do (``'10.5' < '9.5'``,
``0.990`` equals ``0.99``). A view's condition comparing such a column with a literal
(``price > 0.99``, ``d >= DATE '2020-01-01'``, ``flag``, ``NOT flag``) is therefore translated
into a *test*: an auxiliary base relation ``v__k(X)`` holding the values that pass, which the
store computes in Python with the value's own type (``Decimal`` for numeric, ``float``,
``date``/``datetime``/``time``, ``bool``) over every value of that type the database holds and
every constant a request names, and which a view update may not change (``#protect``). NULL
(``""``) passes no test, as in SQL. Two such columns are compared directly only where their
texts order as their values: dates, timestamps, times and booleans of one type (ISO text,
``false < true``); decimals with a declared scale only for equality (one text per value).

>>> t = Test("<=", Decimal("0.99"), "decimal")
>>> [v for v in ("0.5", "0.990", "1.00", "10.5", "") if t.passes(v)]
['0.5', '0.990']
>>> Test("=", True, "bool").passes("true"), Test("=", False, "bool").passes("true")
(True, False)
>>> Test(">=", datetime.date(2020, 1, 1), "date").passes("2019-12-31")
False
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from ..lang.ast import COMPARE

ORDERS = ("decimal", "float", "date", "timestamp", "time", "bool")
"""The types whose comparisons are translated as tests (see the module's docstring)."""

TEXT_ORDERED = ("date", "timestamp", "time", "bool")
"""The types whose text orders as their values (ISO text; ``false`` before ``true``) within one type."""


def value_order(declared: str, dialect: str) -> str | None:
    """The type a column's comparisons follow, from its declared type; None for int, text and
    types not translated (``real``: PostgreSQL widens it to double precision before comparing,
    so its shortest text is not the value compared; ``timestamptz``: its text depends on the
    session's time zone).

    >>> [value_order(t, "postgres") for t in ("numeric(10,2)", "double precision", "date", "timestamp without time zone", "boolean", "real", "integer")]
    ['decimal:2', 'float', 'date', 'timestamp', 'bool', None, None]
    >>> [value_order(t, "sqlite") for t in ("NUMERIC(10,2)", "REAL", "DATE", "BOOLEAN", "TEXT")]
    ['float:sqlite', 'float:sqlite', 'date:sqlite', 'bool:sqlite', None]
    """
    kind = declared.strip().lower()
    if dialect == "sqlite":  # affinity: numbers are 8-byte floats or integers (booleans 0 and 1); dates are text
        if "date" in kind or "time" in kind:
            order = "timestamp" if "time" in kind and "date" in kind else ("date" if "date" in kind else "time")
        elif "bool" in kind:
            order = "bool"
        elif any(w in kind for w in ("real", "floa", "doub", "numeric", "decimal")):
            order = "float"
        else:
            return None
        return order + ":sqlite"
    scale = re.fullmatch(r"(numeric|decimal)\s*\(\s*\d+\s*,\s*(\d+)\s*\)", kind)
    if scale:
        return f"decimal:{scale.group(2)}"
    if kind in ("numeric", "decimal"):
        return "decimal"
    if kind in ("double precision", "double", "float8", "float"):
        return "float"
    if kind == "date":
        return "date"
    if kind in ("timestamp", "timestamp without time zone", "datetime"):
        return "timestamp"
    if kind in ("time", "time without time zone"):
        return "time"
    if kind in ("boolean", "bool"):
        return "bool"
    return None


def base_order(order: str | None) -> str | None:
    """``decimal:2`` is a decimal."""
    return order.split(":")[0] if order else None


def comparable_texts(left: str | None, right: str | None, op: str) -> bool:
    """Whether two columns of these orders may be compared on their texts with ``op``."""
    if left is None or left != right:
        return False
    if base_order(left) in TEXT_ORDERED:
        return True
    return base_order(left) == "decimal" and ":" in left and op in ("=", "!=")  # one declared scale: one text per value


def typed(value: Any, order: str) -> Any:
    """A constant as read from a column of ``order`` as the value the database compares; None
    for NULL and for a text that is not such a value (it passes no test)."""
    if value == "" or value is None:
        return None
    kind = base_order(order)
    if isinstance(value, int) and not order.endswith(":sqlite"):
        return None  # such columns read as text; only SQLite keeps numbers (and booleans) as integers
    try:
        if kind == "decimal":
            return Decimal(str(value))
        if kind == "float":
            return float(value)
        if kind == "bool":
            if isinstance(value, int):
                return value != 0  # SQLite keeps booleans as 0 and 1
            return {"true": True, "false": False, "t": True, "f": False}.get(str(value).lower())
        if kind == "date":
            return datetime.date.fromisoformat(str(value))
        if kind == "timestamp":
            return datetime.datetime.fromisoformat(str(value))
        if kind == "time":
            return datetime.time.fromisoformat(str(value))
    except (ValueError, InvalidOperation, TypeError):
        return None
    return None


@dataclass(frozen=True)
class Test:
    """``X op value`` for values of one type: which constants pass."""

    op: str
    value: Any
    order: str

    def passes(self, constant: Any) -> bool:
        mine = typed(constant, self.order)
        if mine is None:
            return False
        try:
            return bool(COMPARE[self.op](mine, self.value))
        except TypeError:  # a naive and an aware time, say: SQL would have refused the comparison
            return False

    def __str__(self) -> str:
        return f"X {self.op} {self.value!r} ({self.order})"


@dataclass
class Tests:
    """The tests of one database's views and CHECKs, by the auxiliary predicate holding their values."""

    by_pred: dict[str, Test] = field(default_factory=dict)

    def add(self, pred: str, test: Test) -> None:
        self.by_pred[pred] = test

    def facts(self, constants: dict[str, set]) -> dict[str, set[tuple]]:
        """Each test's relation: the constants of its type (``constants`` by base order) that pass."""
        return {pred: {(c,) for c in constants.get(base_order(t.order), ()) if t.passes(c)} for pred, t in self.by_pred.items()}

    def orders(self) -> set[str]:
        return {base_order(t.order) for t in self.by_pred.values()}


def literal_value(node, order: str, dialect: str):
    """The value of a literal written in a view (``0.99``, ``DATE '2020-01-01'``,
    ``'2020-01-01'::date``, ``TRUE``, ``'t'``) as the type ``order``; None when it is not a literal."""
    from sqlglot import exp

    negative = False
    while isinstance(node, (exp.Paren, exp.Cast, exp.Neg)):  # PostgreSQL keeps 1 = n as (1)::numeric = n
        if isinstance(node, exp.Neg):
            negative = not negative
        node = node.this
    if isinstance(node, exp.Boolean):
        return node.this if base_order(order) == "bool" and not negative else None
    if not isinstance(node, exp.Literal):
        return None
    text = ("-" if negative else "") + node.this
    if base_order(order) == "float" and dialect == "sqlite" and node.is_string:
        return None  # SQLite compares a number with a text by storage class, not by value
    value = typed(text, order)
    if value is None and base_order(order) in ("date", "timestamp") and not node.is_string:
        return None
    return value


__all__ = ["ORDERS", "TEXT_ORDERED", "Test", "Tests", "base_order", "comparable_texts", "literal_value", "typed", "value_order"]
