"""Arithmetic, comparisons over computed values, assignments and aggregates for the python engine,
vectorized over frames of id columns.

A term is evaluated to two arrays, ``kind`` and ``num``, plus a ``valid`` mask: kind 0 is an
integer with its value in ``num``, kind 1 a string with its (order-preserving) id in ``num``;
kinds -1 and 2 stand for clingo's ``#inf``/``#sup`` (the value of ``#max``/``#min`` of an empty
set). Comparing (kind, num) pairs lexicographically is the order of constants. Arithmetic follows
:mod:`nablog.lang.arith` (clingo: 32-bit, truncating division, no value for a division by zero
or a string operand: such rows are dropped). A value bound to a variable is encoded to an id;
an integer the dictionary lacks grows it (``Evaluator.grow``: one monotone remap, no
re-encoding), bounded by ``MAX_COMPUTED`` so that a program with an infinite model stops with a
message instead of running forever.
"""

from __future__ import annotations

import bisect
from typing import Callable, Iterator, Protocol

import numpy as np

from ..lang import Comparison, Literal, NablogError, Var
from ..lang.arith import INT_BITS, INT_MIN
from ..lang.ast import Aggregate, BinOp, Interval, UnaryOp
from .dictionary import ConstantDictionary
from .encoding import INT, fits_in_key, pack, row_view, sorted_unique
from .frames import Frame


class Evaluator(Protocol):
    """What computing needs of the evaluator it runs in (:class:`nablog.engines.evaluator.Evaluator`):
    its growing dictionary and the way ids and frames move to a grown one. Stated here, so that
    this module does not import the evaluator that imports it."""

    d: ConstantDictionary
    size: int
    generation: int
    cache: dict

    def grow(self, values: np.ndarray) -> None: ...

    def forward_ids(self, ids: np.ndarray, generation: int) -> np.ndarray: ...

    def forward_frame(self, frame: Frame, generation: int) -> Frame: ...


INF, SUP = -1, 2
MAX_COMPUTED = 1_000_000
"""At most this many integers computed by rules are added to the dictionary in one evaluation."""


def check_computed(count: int) -> None:
    """Stop an evaluation whose rules computed more than MAX_COMPUTED new integers."""
    if count > MAX_COMPUTED:
        raise NablogError(
            f"rules computed more than {MAX_COMPUTED:,} new integers: the model is probably infinite",
            hint="bound the recursion that computes them, e.g. with a comparison such as N < 100 in its body",
        )

_MASK = (1 << INT_BITS) - 1

Values = tuple[np.ndarray, np.ndarray, np.ndarray]  # kind, num, valid


def int_values(ev: "Evaluator") -> np.ndarray:
    """The integer constants of the dictionary, in id order (they come first: ids 0..n-1)."""
    ints = ev.d.int_values()  # kept by the dictionary, which outlives one evaluation
    if ints is not None:
        return ints
    cached = ev.cache.get("ints")
    if cached is None or cached[0] is not ev.d:
        values = ev.d.values
        n = bisect.bisect_left(values, True, key=lambda v: type(v) is str)
        # Integers wider than 64 bits, from data: clamped (arithmetic wraps them anyway).
        ints = np.array([min(max(v, -(2**63)), 2**63 - 1) for v in values[:n]], dtype=INT)
        cached = ev.cache["ints"] = (ev.d, ints)
    return cached[1]


def wrap(x: np.ndarray) -> np.ndarray:
    """Reduce int64 values to clingo's signed 32-bit range, wrapping around."""
    return ((x - INT_MIN) & _MASK) + INT_MIN


def evaluate(ev: "Evaluator", frame: "Frame", term) -> Values:
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


def encode(ev: "Evaluator", frame: "Frame", kind: np.ndarray, num: np.ndarray) -> tuple["Frame", np.ndarray]:
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
        ev.grow(np.unique(num[missing]))
        frame = ev.forward_frame(frame, gen)
        num = num.copy()
        num[~is_int] = ev.forward_ids(num[~is_int], gen)
        ints = int_values(ev)
        pos = np.searchsorted(ints, num)
    return frame, np.where(is_int, pos, num).astype(INT)


def compare(ev: "Evaluator", frame: "Frame", cmp: Comparison) -> "Frame":
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
    return Frame(frame.n, {**frame.cols, var: ids})


def aggregate(ev: "Evaluator", frame: "Frame", agg: Aggregate, run: Callable[["Frame", tuple], Iterator["Frame"]]) -> "Frame":
    """Evaluate ``bound op #fn{...}`` on every row of the frame: the element conditions are run
    from the frame's distinct groups (the element variables it binds), the element tuples (as
    ids, computed terms encoded) made distinct per group, and the function applied to each
    group's run of sorted rows; the guard is then assigned or compared."""
    element_vars = {v for e in agg.elements for v in e.variables()}
    groups = [v for v in frame.cols if v in element_vars]
    gen = ev.generation
    if groups:
        keys = np.unique(np.stack([frame.cols[v] for v in groups], axis=1), axis=0) if len(groups) > 1 else sorted_unique(frame.cols[groups[0]])[:, None]
        start = Frame(len(keys), {v: keys[:, i] for i, v in enumerate(groups)})
    else:
        start = Frame(1, {})
    width = max((len(e.terms) for e in agg.elements), default=0)
    parts = []  # (generation, id rows: groups, terms (padded with 0), number of terms)
    for element in agg.elements:
        for f in run(start, element.condition):
            columns = []
            for t in element.terms:
                if isinstance(t, Var):
                    columns.append(f.cols[t])
                    continue
                kind, num, valid = evaluate(ev, f, t)
                f = f.keep(valid)
                columns = [c[valid] for c in columns]
                g = ev.generation
                f, ids = encode(ev, f, kind[valid], num[valid])
                columns = [ev.forward_ids(c, g) for c in columns] + [ids]
            columns = [f.cols[v] for v in groups] + columns + [np.zeros(f.n, INT)] * (width - len(element.terms))
            # Tuples of other lengths are other tuples; last, so that rows sort on their terms.
            columns.append(np.full(f.n, len(element.terms), INT))
            parts.append((ev.generation, np.stack(columns, axis=1)))
    k = len(groups)
    rows = [p if g == ev.generation else _forwarded(ev, p, g, k) for g, p in parts]
    frame = ev.forward_frame(frame, gen)
    rows = np.concatenate(rows) if rows else np.zeros((0, k + width + 1), INT)
    if len({len(e.terms) for e in agg.elements}) == 1:
        rows = rows[:, :-1]  # one tuple length: the length column tells nothing apart
    base = max(ev.size, width + 1)
    m = rows.shape[1]
    if fits_in_key(base, m):
        # Distinct rows as packed keys, sorted by group then terms; the group key and the first
        # term are read off the keys by division (no unpacking into rows again).
        packed = sorted_unique(pack([rows[:, i] for i in range(m)], base))
        row_keys = packed // base ** (m - k) if k else np.zeros(len(packed), INT)
        first = (packed // base ** (m - k - 1)) % base if m > k else np.zeros(len(packed), INT)
        frame_keys = pack([frame.cols[v] for v in groups], base) if k else np.zeros(frame.n, INT)
    else:
        rows = np.unique(rows, axis=0)
        row_keys = row_view(rows[:, :k]) if k else np.zeros(len(rows), INT)
        first = rows[:, k] if m > k else np.zeros(len(rows), INT)
        frame_keys = row_view(np.stack([frame.cols[v] for v in groups], axis=1)) if k else np.zeros(frame.n, INT)
    kind, num = _reduce(ev, agg.function, row_keys, first, frame_keys)
    guard = agg.bound
    if agg.op == "=" and isinstance(guard, Var) and guard not in frame.cols:
        ok = (kind != INF) & (kind != SUP)
        frame = frame.keep(ok)
        frame, ids = encode(ev, frame, kind[ok].astype(np.int8), num[ok])
        return _with(frame, guard, ids)
    holds = compare_values(agg.op, evaluate(ev, frame, guard), (kind.astype(np.int8), num, np.ones(frame.n, bool)))
    return frame.keep(holds)


def _forwarded(ev: "Evaluator", rows: np.ndarray, generation: int, k: int) -> np.ndarray:
    """Element rows of an earlier dictionary brought forward; the padding stays 0."""
    out = np.concatenate([ev.forward_ids(rows[:, :-1], generation), rows[:, -1:]], axis=1)
    width = rows.shape[1] - 1 - k
    padding = np.arange(width)[None, :] >= rows[:, -1:]
    out[:, k : k + width][padding] = 0
    return out


def _reduce(ev: "Evaluator", function: str, row_keys: np.ndarray, first: np.ndarray, frame_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per frame row (its group key in ``frame_keys``): the aggregate's value as (kind, num), from
    the distinct element rows sorted by group, then terms (their group keys and first terms' ids)."""
    # Rows are sorted, so each group is one contiguous run.
    starts = np.flatnonzero(np.r_[True, row_keys[1:] != row_keys[:-1]]) if len(row_keys) else np.zeros(0, np.int64)
    group_keys = row_keys[starts]
    ints = int_values(ev)
    if function in ("count", "sum"):
        if function == "count":
            value = np.diff(np.r_[starts, len(row_keys)])
        else:
            weights = np.where(first < len(ints), ints[np.minimum(first, max(len(ints) - 1, 0))] if len(ints) else 0, 0)
            value = wrap(np.add.reduceat(weights, starts)) if len(starts) else np.zeros(0, INT)
        kind = np.zeros(len(starts), INT)
        empty = (0, 0)
    else:
        # Within a group rows are sorted on their first term's id: the order of constants.
        ends = np.r_[starts[1:], len(row_keys)] - 1 if len(row_keys) else starts
        first = first[starts if function == "min" else ends]
        is_int = first < len(ints)
        kind = (~is_int).astype(INT)
        value = np.where(is_int, ints[np.minimum(first, max(len(ints) - 1, 0))] if len(ints) else 0, first)
        empty = (SUP, 0) if function == "min" else (INF, 0)
    order = np.argsort(group_keys, kind="stable")  # opaque row keys need not sort like the rows
    group_keys, kind, value = group_keys[order], np.asarray(kind)[order], np.asarray(value)[order]
    pos = np.searchsorted(group_keys, frame_keys)
    hit = pos < len(group_keys)
    hit[hit] = group_keys[pos[hit]] == frame_keys[hit]
    safe = np.minimum(pos, max(len(group_keys) - 1, 0))
    out_kind = np.where(hit, kind[safe] if len(kind) else 0, empty[0]).astype(INT)
    out_num = np.where(hit, value[safe] if len(value) else 0, empty[1]).astype(INT)
    return out_kind, out_num


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


__all__ = ["MAX_COMPUTED", "aggregate", "check_computed", "compare", "has_computation", "refuse_computation"]
