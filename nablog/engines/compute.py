"""Arithmetic, comparisons over computed values, assignments and aggregates for the python engine,
vectorized over frames of id columns.

A term is evaluated to two arrays, ``kind`` and ``num``, plus a ``valid`` mask: kind 0 is an
integer with its value in ``num``, kind 1 a string with its (order-preserving) id in ``num``;
kinds -1 and 2 stand for clingo's ``#inf``/``#sup`` (the value of ``#max``/``#min`` of an empty
set). Comparing (kind, num) pairs lexicographically is the order of constants. Arithmetic follows
:mod:`nablog.lang.arith` (clingo: 32-bit, truncating division, no value for a division by zero
or a string operand: such rows are dropped). A value bound to a variable is encoded to an id;
an integer the dictionary lacks grows it (``_Evaluator.grow``: one monotone remap, no
re-encoding), bounded by ``MAX_COMPUTED`` so that a program with an infinite model stops with a
message instead of running forever.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from ..lang import Comparison, Literal, NablogError, Var
from ..lang.arith import INT_BITS, INT_MIN
from ..lang.ast import Aggregate, BinOp, Interval, UnaryOp
from .encoding import INT

if TYPE_CHECKING:
    from .python import Frame, _Evaluator

INF, SUP = -1, 2
MAX_COMPUTED = 1_000_000
"""At most this many integers computed by rules are added to the dictionary in one evaluation."""

_MASK = (1 << INT_BITS) - 1

Values = tuple[np.ndarray, np.ndarray, np.ndarray]  # kind, num, valid


def int_values(ev: "_Evaluator") -> np.ndarray:
    """The integer constants of the dictionary, in id order (they come first: ids 0..n-1)."""
    cached = ev.cache.get("ints")
    if cached is None or cached[0] is not ev.d:
        values = ev.d.values
        n = 0
        while n < len(values) and type(values[n]) is int:
            n += 1
        ints = np.array([min(max(v, -(2**63)), 2**63 - 1) for v in values[:n]], dtype=INT)
        cached = ev.cache["ints"] = (ev.d, ints)
    return cached[1]


def wrap(x: np.ndarray) -> np.ndarray:
    """Reduce int64 values to clingo's signed 32-bit range, wrapping around."""
    return ((x - INT_MIN) & _MASK) + INT_MIN


def evaluate(ev: "_Evaluator", frame: "Frame", term) -> Values:
    """The values of a (non-interval) term on every row of the frame."""
    n = frame.n
    if isinstance(term, Var):
        ids = frame.cols[term]
        ints = int_values(ev)
        is_int = ids < len(ints)
        num = np.where(is_int, ints[np.minimum(ids, max(len(ints) - 1, 0))] if len(ints) else 0, ids)
        return (~is_int).astype(np.int8), num.astype(INT), np.ones(n, bool)
    if isinstance(term, BinOp):
        ka, a, va = evaluate(ev, frame, term.left)
        kb, b, vb = evaluate(ev, frame, term.right)
        valid = va & vb & (ka == 0) & (kb == 0)
        a, b = wrap(a), wrap(b)
        out, defined = _binop(term.op, a, b)
        return np.zeros(n, np.int8), np.where(valid & defined, out, 0), valid & defined
    if isinstance(term, UnaryOp):
        k, a, v = evaluate(ev, frame, term.arg)
        v = v & (k == 0)
        a = wrap(a)
        return np.zeros(n, np.int8), np.where(v, wrap(-a if term.op == "-" else np.abs(a)), 0), v
    if isinstance(term, Interval):
        raise NablogError(f"an interval {term} can only be assigned (V = {term}) or written in a head")
    if type(term) is int:
        return np.zeros(n, np.int8), np.full(n, term, INT), np.ones(n, bool)
    cid = ev.d.id(term)
    assert cid is not None, "program constants are in the dictionary"
    return np.ones(n, np.int8), np.full(n, cid, INT), np.ones(n, bool)


def _binop(op: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    defined = np.ones(len(a), bool)
    if op == "+":
        return wrap(a + b), defined
    if op == "-":
        return wrap(a - b), defined
    if op == "*":
        return wrap(a * b), defined  # |a|, |b| < 2**31: the product fits in int64
    if op in ("/", "\\"):
        defined = b != 0
        safe = np.where(defined, b, 1)
        q = (np.abs(a) // np.abs(safe)) * np.where((a < 0) == (safe < 0), 1, -1)
        return wrap(q if op == "/" else a - q * safe), defined
    if op == "**":
        negative = b < 0
        defined = ~(negative & (a == 0))
        base = (a & _MASK).astype(np.uint64)
        exp = np.where(negative, 0, b).astype(np.uint64)
        result = np.ones(len(a), np.uint64)
        mask = np.uint64(_MASK)
        while exp.any():  # square and multiply, modulo 2**32 (products of two < 2**32 fit in uint64)
            odd = (exp & np.uint64(1)).astype(bool)
            result = np.where(odd, (result * base) & mask, result)
            base = (base * base) & mask
            exp = exp >> np.uint64(1)
        out = wrap(result.astype(INT))
        return np.where(negative, 0, out), defined
    raise ValueError(f"unknown arithmetic operator {op!r}")


_SIGN_OK = {
    "=": lambda s: s == 0,
    "!=": lambda s: s != 0,
    "<": lambda s: s < 0,
    "<=": lambda s: s <= 0,
    ">": lambda s: s > 0,
    ">=": lambda s: s >= 0,
}


def compare_values(op: str, left: Values, right: Values) -> np.ndarray:
    """Rows where ``left op right`` holds in the order of constants (and both have a value)."""
    ka, a, va = left
    kb, b, vb = right
    sign = np.where(ka != kb, np.sign(ka.astype(INT) - kb), np.sign(a - b))
    return va & vb & _SIGN_OK[op](sign)


def is_assignment(cmp: Comparison, frame: "Frame") -> Var | None:
    """The variable ``cmp`` binds on this frame (``V = term`` with V unbound), else None."""
    if cmp.op != "=":
        return None
    for side in (cmp.left, cmp.right):
        if isinstance(side, Var) and side.name != "_" and side not in frame.cols:
            return side
    return None


def encode(ev: "_Evaluator", frame: "Frame", kind: np.ndarray, num: np.ndarray) -> tuple["Frame", np.ndarray]:
    """Ids of the values (valid rows only), growing the dictionary by the integers it lacks;
    returns the frame brought over to the grown dictionary with the ids."""
    ints = int_values(ev)
    is_int = kind == 0
    pos = np.searchsorted(ints, num)
    found = is_int & (pos < len(ints))
    found[found] = ints[pos[found]] == num[found]
    missing = is_int & ~found
    if missing.any():
        gen = ev.generation
        ev.grow(int(v) for v in np.unique(num[missing]))
        frame = ev.forward_frame(frame, gen)
        num = num.copy()
        num[~is_int] = ev.forward_ids(num[~is_int], gen)
        ints = int_values(ev)
        pos = np.searchsorted(ints, num)
    return frame, np.where(is_int, pos, num).astype(INT)


def compare(ev: "_Evaluator", frame: "Frame", cmp: Comparison) -> "Frame":
    """A comparison over computed values: a filter, or an assignment ``V = term`` / ``V = a..b``."""
    target = is_assignment(cmp, frame)
    if target is None and (isinstance(cmp.left, Interval) or isinstance(cmp.right, Interval)):
        # A bound variable against an interval: membership (only a head's values get here, as
        # when rederiving a head whose interval was flattened into V = a..b).
        interval, other = (cmp.left, cmp.right) if isinstance(cmp.left, Interval) else (cmp.right, cmp.left)
        kind, value, valid = evaluate(ev, frame, other)
        kl, low, vl = evaluate(ev, frame, interval.low)
        kh, high, vh = evaluate(ev, frame, interval.high)
        inside = valid & vl & vh & (kind == 0) & (kl == 0) & (kh == 0) & (low <= value) & (value <= high)
        return frame.keep(inside if cmp.op == "=" else valid & ~inside)
    if target is None:
        return frame.keep(compare_values(cmp.op, evaluate(ev, frame, cmp.left), evaluate(ev, frame, cmp.right)))
    term = cmp.right if target == cmp.left else cmp.left
    if isinstance(term, Var):
        return _with(frame, target, frame.cols[term])
    if isinstance(term, Interval):
        kl, low, vl = evaluate(ev, frame, term.low)
        kh, high, vh = evaluate(ev, frame, term.high)
        ok = vl & vh & (kl == 0) & (kh == 0)
        counts = np.where(ok, np.maximum(high - low + 1, 0), 0)
        total = int(counts.sum())
        if total > MAX_COMPUTED * 10:
            raise NablogError(f"the interval {term} has {total:,} values over all bindings", hint="narrow the interval")
        rows = np.repeat(np.arange(frame.n), counts)
        offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        frame = frame.take(rows)
        values = low[rows] + offsets
        frame, ids = encode(ev, frame, np.zeros(total, np.int8), values)
        return _with(frame, target, ids)
    kind, num, valid = evaluate(ev, frame, term)
    frame = frame.keep(valid)
    frame, ids = encode(ev, frame, kind[valid], num[valid])
    return _with(frame, target, ids)


def _with(frame: "Frame", var: Var, ids: np.ndarray) -> "Frame":
    from .python import Frame

    return Frame(frame.n, {**frame.cols, var: ids})


def aggregate(ev: "_Evaluator", frame: "Frame", agg: Aggregate, run: Callable[["Frame", tuple], Iterator["Frame"]]) -> "Frame":
    """Evaluate ``bound op #fn{...}`` on every row of the frame: the element conditions are run
    from the frame's distinct groups (the element variables it binds), the element tuples made
    distinct per group, and the function applied; the guard is then assigned or compared."""
    from .python import Frame

    element_vars = {v for e in agg.elements for v in e.variables()}
    groups = [v for v in frame.cols if v in element_vars]
    gen = ev.generation
    if groups:
        keys = np.unique(np.stack([frame.cols[v] for v in groups], axis=1), axis=0)
        start = Frame(len(keys), {v: keys[:, i] for i, v in enumerate(groups)})
    else:
        start = Frame(1, {})
    width = max((len(e.terms) for e in agg.elements), default=0)
    parts = []
    for number, element in enumerate(agg.elements):
        for f in run(start, element.condition):
            values = [evaluate(ev, f, t) for t in element.terms]
            ok = np.ones(f.n, bool)
            for _, _, valid in values:
                ok &= valid
            columns = [f.cols[v] for v in groups]
            for kind, num, _ in values:
                columns += [kind.astype(INT), num]
            columns += [np.zeros(f.n, INT)] * (2 * (width - len(element.terms)))
            # Tuples of other lengths are other tuples; last, so that rows sort on their terms.
            columns += [np.full(f.n, len(element.terms), INT)]
            parts.append((ev.generation, len(groups), np.stack(columns, axis=1)[ok] if columns else np.zeros((int(ok.sum()), 0), INT)))
    # Bring every part over to the current dictionary (conditions may have grown it).
    rows_list = []
    for g, k, rows in parts:
        if g != ev.generation and len(rows):
            rows = rows.copy()
            for i in range(k):
                rows[:, i] = ev.forward_ids(rows[:, i], g)
            for j in range(width):
                col = k + 2 * j
                strings = rows[:, col] == 1
                rows[strings, col + 1] = ev.forward_ids(rows[strings, col + 1], g)
        rows_list.append(rows)
    frame = ev.forward_frame(frame, gen)
    ncols = len(groups) + 1 + 2 * width
    rows = np.unique(np.concatenate(rows_list), axis=0) if rows_list else np.zeros((0, ncols), INT)
    kind, num, present = _reduce(agg.function, rows, len(groups), frame, groups)
    guard = agg.bound
    if agg.op == "=" and isinstance(guard, Var) and guard not in frame.cols:
        ok = present & (kind != INF) & (kind != SUP)
        frame = frame.keep(ok)
        frame, ids = encode(ev, frame, kind[ok].astype(np.int8), num[ok])
        return _with(frame, guard, ids)
    holds = compare_values(agg.op, evaluate(ev, frame, guard), (kind.astype(np.int8), num, present))
    return frame.keep(holds)


def _reduce(function: str, rows: np.ndarray, k: int, frame: "Frame", groups: list[Var]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per frame row: the aggregate's value as (kind, num) and whether it has one."""
    from .python import _keys

    n = frame.n
    if k:
        size = int(max(rows[:, :k].max(initial=0), max((frame.cols[v].max(initial=0) for v in groups), default=0))) + 1
        row_keys = _keys([rows[:, i] for i in range(k)], size)
        frame_keys = _keys([frame.cols[v] for v in groups], size)
    else:
        row_keys = np.zeros(len(rows), INT)
        frame_keys = np.zeros(n, INT)
    # rows are sorted by np.unique, so by their group columns: each group is a contiguous run
    starts = np.flatnonzero(np.r_[True, row_keys[1:] != row_keys[:-1]]) if len(rows) else np.zeros(0, np.int64)
    group_keys = row_keys[starts]
    if function == "count":
        kind = np.zeros(len(starts), INT)
        value = np.diff(np.r_[starts, len(rows)])
        empty = (0, 0)
    elif function == "sum":
        first_kind, first = rows[:, k], rows[:, k + 1]
        weights = np.where(first_kind == 0, first, 0)
        value = wrap(np.add.reduceat(weights, starts)) if len(starts) else np.zeros(0, INT)
        kind = np.zeros(len(starts), INT)
        empty = (0, 0)
    else:
        first_kind, first = rows[:, k], rows[:, k + 1]
        # (kind, num) ordered lexicographically; within a group rows are sorted on exactly that.
        ends = np.r_[starts[1:], len(rows)] - 1 if len(rows) else starts
        pick = starts if function == "min" else ends
        kind, value = first_kind[pick], first[pick]
        empty = (SUP, 0) if function == "min" else (INF, 0)
    order = np.argsort(group_keys, kind="stable")  # opaque row keys need not sort like the rows
    group_keys, kind, value = group_keys[order], np.asarray(kind)[order], np.asarray(value)[order]
    pos = np.searchsorted(group_keys, frame_keys)
    hit = pos < len(group_keys)
    hit[hit] = group_keys[pos[hit]] == frame_keys[hit]
    safe = np.minimum(pos, max(len(group_keys) - 1, 0))
    out_kind = np.where(hit, kind[safe] if len(kind) else 0, empty[0]).astype(INT)
    out_num = np.where(hit, value[safe] if len(value) else 0, empty[1]).astype(INT)
    return out_kind, out_num, np.ones(n, bool)


def has_computation(rule) -> bool:
    """Whether a rule needs this module: arithmetic or intervals in a comparison, an aggregate,
    or an assignment ``V = term`` of a variable no positive literal binds."""
    positive = {v for b in rule.body if isinstance(b, Literal) and b.positive for v in b.variables()}
    for b in rule.body:
        if isinstance(b, Aggregate):
            return True
        if isinstance(b, Comparison):
            if any(not isinstance(t, (Var, int, str)) for t in (b.left, b.right)):
                return True
            if b.op == "=" and any(isinstance(t, Var) and t not in positive for t in (b.left, b.right)):
                return True
    return False


def refuse_computation(rules, what: str, hint: str) -> None:
    """Raise a located NablogError naming the first rule that computes, for a part of nablog
    that cannot evaluate computation yet (rather than answer wrongly)."""
    for rule in rules:
        if has_computation(rule):
            raise NablogError(f"{what} does not handle arithmetic, assignments, intervals or aggregates yet: '{rule}'", rule.loc, hint)


__all__ = ["MAX_COMPUTED", "aggregate", "compare", "has_computation", "refuse_computation"]
