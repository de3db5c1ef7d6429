"""Integer arithmetic as clingo computes it: the value of a term under a binding, or none.

clingo's integers are 32-bit and wrap around; ``/`` and ``\\`` truncate towards zero (C division:
``-7 / 2 = -3``, ``-7 \\ 2 = -1``); ``X ** -N`` is 0 (undefined for ``0 ** -N``); a division by
zero or an operand that is not an integer leaves the term without a value, and the rule instance
that needs it does not fire. Every engine computes the same (tests check them against clingo).

>>> from nablog.lang import parse_term
>>> [evaluate(parse_term(t), {}) for t in ("-7/2", "-7\\\\2", "2**31", "3/0", "|1-4|", "2**-1")]
[-3, -1, -2147483648, None, 3, 0]
>>> evaluate(parse_term("X+1"), {Var("X"): "a"}) is None
True
"""

from __future__ import annotations

from typing import Iterator, Mapping

from .ast import BinOp, Constant, Interval, Term, UnaryOp, Var

INT_BITS = 32
INT_MIN, INT_MAX = -(2 ** (INT_BITS - 1)), 2 ** (INT_BITS - 1) - 1


def wrap(value: int) -> int:
    """An integer reduced to clingo's signed 32-bit range, wrapping around as clingo does."""
    return (value - INT_MIN) % (2**INT_BITS) + INT_MIN


def apply(op: str, a: int, b: int) -> int | None:
    """``a op b`` on integers with clingo's rounding; None where clingo gives no value."""
    if op == "+":
        return wrap(a + b)
    if op == "-":
        return wrap(a - b)
    if op == "*":
        return wrap(a * b)
    if op in ("/", "\\"):
        if b == 0:
            return None
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return wrap(q if op == "/" else a - q * b)
    if op == "**":
        if b < 0:
            return None if a == 0 else 0
        return wrap(pow(a, b, 2**INT_BITS))
    raise ValueError(f"unknown arithmetic operator {op!r}")


def evaluate(term: Term, binding: Mapping[Var, Constant]) -> Constant | None:
    """The value of a (non-interval) term under ``binding``; None when clingo gives it no value.

    A constant is itself (arithmetic applies only when an operator is used: ``"a"`` is ``"a"``,
    ``"a" + 0`` has no value).
    """
    if isinstance(term, Var):
        return binding[term]
    if isinstance(term, BinOp):
        a, b = evaluate(term.left, binding), evaluate(term.right, binding)
        if type(a) is not int or type(b) is not int:
            return None
        return apply(term.op, a, b)
    if isinstance(term, UnaryOp):
        a = evaluate(term.arg, binding)
        if type(a) is not int:
            return None
        return wrap(-a if term.op == "-" else abs(a))
    if isinstance(term, Interval):
        raise ValueError("an interval has many values; use values()")
    return term


def values(term: Term, binding: Mapping[Var, Constant]) -> Iterator[Constant]:
    """Every value of a term: one for arithmetic, each integer of an interval (none if empty)."""
    if isinstance(term, Interval):
        low, high = evaluate(term.low, binding), evaluate(term.high, binding)
        if type(low) is int and type(high) is int:
            yield from range(low, high + 1)
        return
    value = evaluate(term, binding)
    if value is not None:
        yield value
