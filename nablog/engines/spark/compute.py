"""Arithmetic, assignments, intervals and aggregates on Spark: column expressions and ``groupBy``.

The spark engine's counterpart of :mod:`nablog.engines.compute`, with the same semantics
(:mod:`nablog.lang.arith`, clingo's): integers are 32-bit and wrap around, ``/`` and ``\\``
truncate towards zero, a division by zero or an operand that is not an integer gives no value.
A term becomes a typed column in which null means "no value" (the rows are dropped where a value
is needed). Everything is computed in 64-bit columns on operands already wrapped to 32 bits, so
no intermediate overflows (Spark's ANSI mode would raise): products of two 32-bit values fit,
``**`` multiplies modulo 2**32 in 16-bit halves, and division is ``%`` (Java's, which rounds
like C) plus an exact quotient.

An aggregate runs its element conditions as a rule of their own, from the distinct groups of the
frame (its variables bound outside) kept as a temporary relation; the distinct element tuples
are counted, summed or ranged over by ``groupBy`` and joined back to the frame. A group with no
tuple counts 0 and sums 0; its ``#min``/``#max`` is null, read as clingo's ``#sup``/``#inf`` when
compared and binding nothing when assigned (as the python engine does).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Protocol

from ...lang import Atom, Comparison, Literal, NablogError, Rule, Var
from ...lang.arith import INT_BITS
from ...lang.arith import wrap as wrap_int
from ...lang.ast import COMPARE, Aggregate, BinOp, Interval, UnaryOp
from .types import LONG, MIXED, ColumnType, Relation, constant_type, infer_types, join, literal_column, type_rank, widen_column

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


class _Evaluation(Protocol):
    """What computing needs of the evaluation it runs in (:class:`nablog.engines.spark.evaluation._Evaluation`):
    its relations and their column types, and a rule evaluated over them. Stated here, so that this
    module does not import the evaluation that imports it."""

    relations: dict[str, Relation]
    types: dict[str, tuple[ColumnType, ...]]

    def set(self, pred: str, relation: Relation) -> None: ...

    def rule(self, rule: Rule) -> DataFrame | None: ...

MAX_COMPUTING_ROUNDS = 1000
"""A recursive component whose rules compute new values stops after this many semi-naive rounds
with a message: its model is probably infinite (``n(X+1) :- n(X).``)."""

_MASK = (1 << INT_BITS) - 1
_HALF = 1 << (INT_BITS - 1)
_LOW16 = (1 << 16) - 1

# ``bound op #sup`` (an empty #min) and ``bound op #inf`` (an empty #max), for any bound.
_AGAINST_SUP = {"=": False, "!=": True, "<": True, "<=": True, ">": False, ">=": False}
_AGAINST_INF = {"=": False, "!=": True, "<": False, "<=": False, ">": True, ">=": True}

_fresh = itertools.count()

Typed = tuple["Column", ColumnType]


def computes(element, names: dict[Var, str]) -> bool:
    """Whether a body element needs this module: an aggregate, a comparison with arithmetic or an
    interval, or ``V = term`` with V not bound yet (an assignment)."""
    if isinstance(element, Aggregate):
        return True
    if not isinstance(element, Comparison):
        return False
    if any(not isinstance(t, (Var, int, str)) for t in (element.left, element.right)):
        return True
    return _assigned(element, names) is not None


def step(ev: _Evaluation, frame: DataFrame, element, names: dict[Var, str], types: dict[Var, ColumnType]) -> tuple[DataFrame, Var | None]:
    """Apply one computing body element to the frame; the variable it binds, if any (its column
    is named in ``names``, its type is in ``types``)."""
    if isinstance(element, Aggregate):
        return aggregate(ev, frame, element, names, types)
    target = _assigned(element, names)
    if target is None:
        return frame.filter(condition(element, names, types)), None
    term = element.right if target == element.left else element.left
    name = names.setdefault(target, f"v{len(names)}")
    if isinstance(term, Interval):
        low, high = integer(term_column(term.low, names, types)), integer(term_column(term.high, names, types))
        from pyspark.sql import functions as F

        frame = frame.filter(low.isNotNull() & high.isNotNull() & (low <= high))
        return frame.withColumn(name, F.explode(F.sequence(low, high))), target
    value, kind = term_column(term, names, types)
    frame = frame.filter(value.isNotNull()).withColumn(name, widen_column(value, kind, types[target]))
    return frame, target


def _assigned(cmp: Comparison, names: dict[Var, str]) -> Var | None:
    if cmp.op != "=":
        return None
    for side in (cmp.left, cmp.right):
        if isinstance(side, Var) and side.name != "_" and side not in names:
            return side
    return None


# -- terms ----------------------------------------------------------------------------------------


def term_column(term, names: dict[Var, str], types: dict[Var, ColumnType]) -> Typed:
    """A term as a typed column; null where it has no value."""
    from pyspark.sql import functions as F

    if isinstance(term, Var):
        return F.col(names[term]), types[term]
    if isinstance(term, BinOp):
        a, b = (operand(t, names, types) for t in (term.left, term.right))
        return _binop(term.op, a, b), LONG
    if isinstance(term, UnaryOp):
        a = operand(term.arg, names, types)
        return wrap(-a if term.op == "-" else F.abs(a)), LONG
    if isinstance(term, Interval):
        raise NablogError(f"an interval {term} can only be assigned (V = {term}) or written in a head")
    kind = constant_type(term)
    return literal_column(term, kind), kind


def operand(term, names: dict[Var, str], types: dict[Var, ColumnType]) -> Column:
    """An arithmetic operand as a 32-bit integer column (computed terms are within 32 bits already)."""
    value = integer(term_column(term, names, types))
    if isinstance(term, (BinOp, UnaryOp)):
        return value
    if isinstance(term, int):
        return wrap_constant(term)
    return wrap(value)


def wrap_constant(value: int) -> Column:
    from pyspark.sql import functions as F

    return F.lit(wrap_int(value)).cast("long")


def integer(typed: Typed) -> Column:
    """The integer values of a typed column (null for strings: arithmetic on them has no value)."""
    from pyspark.sql import functions as F

    column, kind = typed
    if kind == LONG:
        return column
    if kind == MIXED:
        return column.getField("i")
    return F.lit(None).cast("long")


def wrap(x: Column) -> Column:
    """A 64-bit integer column reduced to clingo's signed 32-bit range (wrapping around)."""
    from pyspark.sql import functions as F

    # (x mod 2**32) with its top bit read as the sign; x appears once, so nested arithmetic
    # does not grow the expression exponentially.
    return x.bitwiseAND(F.lit(_MASK)).bitwiseXOR(F.lit(_HALF)) - F.lit(_HALF)


def _binop(op: str, a: Column, b: Column) -> Column:
    from pyspark.sql import functions as F

    if op == "+":
        return wrap(a + b)
    if op == "-":
        return wrap(a - b)
    if op == "*":
        return wrap(a * b)  # both within 32 bits: the product fits in 64
    if op in ("/", "\\"):
        divisor = F.when(b == 0, F.lit(1)).otherwise(b)
        remainder = a % divisor  # Java's remainder has the dividend's sign, as C's (clingo's)
        value = remainder if op == "\\" else ((a - remainder) / divisor).cast("long")  # an exact quotient
        return F.when(b != 0, wrap(value))
    if op == "**":
        power = F.when(b < 0, F.when(a != 0, F.lit(0).cast("long"))).otherwise(wrap(_power(a, b)))
        return F.when(a.isNotNull() & b.isNotNull(), power)
    raise ValueError(f"unknown arithmetic operator {op!r}")


def _power(a: Column, b: Column) -> Column:
    """``a ** b`` modulo 2**32 for ``b >= 0``: square and multiply over the 31 bits of ``b``."""
    from pyspark.sql import functions as F

    def times(x: Column, y: Column) -> Column:
        # x * y modulo 2**32 for 0 <= x, y < 2**32, in products below 2**48.
        return (x * y.bitwiseAND(F.lit(_LOW16)) + shift16((x * F.shiftright(y, 16)).bitwiseAND(F.lit(_LOW16)))).bitwiseAND(F.lit(_MASK))

    def shift16(x: Column) -> Column:
        return F.shiftleft(x, 16)

    def merge(acc: Column, _: Column) -> Column:
        odd = acc["e"].bitwiseAND(F.lit(1)) == 1
        return F.struct(
            F.when(odd, times(acc["r"], acc["b"])).otherwise(acc["r"]).alias("r"),
            times(acc["b"], acc["b"]).alias("b"),
            F.shiftright(acc["e"], 1).alias("e"),
        )

    start = F.struct(F.lit(1).cast("long").alias("r"), a.bitwiseAND(F.lit(_MASK)).alias("b"), b.alias("e"))
    return F.aggregate(F.sequence(F.lit(0), F.lit(INT_BITS - 2)), start, merge, lambda acc: acc["r"])


# -- comparisons ----------------------------------------------------------------------------------


def compare(op: str, left: Typed, right: Typed) -> Column:
    """``left op right`` in the order of constants; false where either side has no value."""
    from pyspark.sql import functions as F

    (a, ka), (b, kb) = left, right
    defined = a.isNotNull() & b.isNotNull()
    if ka == kb:
        return defined & COMPARE[op](a, b)
    if MIXED not in (ka, kb):
        # An integer and a string: never equal, and integers come first.
        return defined & F.lit(bool(COMPARE[op](type_rank(ka), type_rank(kb))))
    return defined & COMPARE[op](widen_column(a, ka, MIXED), widen_column(b, kb, MIXED))


def condition(cmp: Comparison, names: dict[Var, str], types: dict[Var, ColumnType]) -> Column:
    """A comparison over computed terms as a filter (an interval against a bound term: membership)."""
    if isinstance(cmp.left, Interval) or isinstance(cmp.right, Interval):
        interval, other = (cmp.left, cmp.right) if isinstance(cmp.left, Interval) else (cmp.right, cmp.left)
        value = integer(term_column(other, names, types))
        low, high = (integer(term_column(t, names, types)) for t in (interval.low, interval.high))
        defined = value.isNotNull() & low.isNotNull() & high.isNotNull()
        inside = (low <= value) & (value <= high)
        if cmp.op == "=":
            return defined & inside
        # Outside the interval: a bound value that is not an integer is outside too.
        return term_column(other, names, types)[0].isNotNull() & ~(defined & inside)
    return compare(cmp.op, term_column(cmp.left, names, types), term_column(cmp.right, names, types))


# -- aggregates -----------------------------------------------------------------------------------


def aggregate(ev: _Evaluation, frame: DataFrame, agg: Aggregate, names: dict[Var, str], types: dict[Var, ColumnType]) -> tuple[DataFrame, Var | None]:
    """``bound op #fn{...}`` on every row of the frame (see the module docstring)."""
    from pyspark.sql import functions as F

    inner = {v for e in agg.elements for v in e.variables()}
    groups = [v for v in names if v in inner]
    tag = next(_fresh)
    keys = f"agg{tag}__groups"
    group_types = tuple(types[v] for v in groups)
    ev.set(keys, Relation(frame.select(*[F.col(names[v]).alias(f"c{i}") for i, v in enumerate(groups)]).distinct(), group_types))
    try:
        tuples, kinds = _element_tuples(ev, agg, groups, keys, tag)
    finally:
        del ev.relations[keys], ev.types[keys]
    k = len(groups)
    first = kinds[k] if len(kinds) > k else LONG
    value = f"agg{tag}__value"
    if tuples is None:  # no element can have a tuple
        per_group = None
    elif agg.function == "count":
        per_group = F.count(F.lit(1))
    elif agg.function == "sum":
        per_group = F.sum(integer((F.col(f"c{k}"), first)))
    else:
        per_group = (F.min if agg.function == "min" else F.max)(F.col(f"c{k}"))
    if per_group is None:
        frame = frame.withColumn(value, F.lit(None).cast("long"))
    else:
        summary = tuples.groupBy(*[f"c{i}" for i in range(k)]).agg(per_group.alias(value))
        if k:
            # A group's element rows may be narrower than the frame's column (a mixed column met a string one).
            summary = summary.select(*[widen_column(F.col(f"c{i}"), kinds[i], types[v]).alias(names[v]) for i, v in enumerate(groups)], value)
            frame = frame.join(summary, on=[names[v] for v in groups], how="left")
        else:
            frame = frame.crossJoin(summary)
    result = F.col(value)
    kind: ColumnType = LONG
    if agg.function in ("count", "sum"):
        result = wrap(F.coalesce(result, F.lit(0).cast("long")))
    else:
        kind = first if tuples is not None else LONG
    guard = agg.bound
    if agg.op == "=" and isinstance(guard, Var) and guard not in names:
        name = names.setdefault(guard, f"v{len(names)}")
        frame = frame.filter(result.isNotNull()).withColumn(name, widen_column(result, kind, types[guard])).drop(value)
        return frame, guard
    holds = compare(agg.op, term_column(guard, names, types), (result, kind))
    if agg.function in ("min", "max"):
        empty = (_AGAINST_SUP if agg.function == "min" else _AGAINST_INF)[agg.op]
        holds = F.when(result.isNull(), term_column(guard, names, types)[0].isNotNull() & F.lit(empty)).otherwise(holds)
    return frame.filter(holds).drop(value), None


def _element_tuples(ev: _Evaluation, agg: Aggregate, groups: list[Var], keys: str, tag: int) -> tuple[DataFrame | None, list[ColumnType]]:
    """The distinct (groups, terms, [length]) rows of the aggregate's elements, as columns
    ``c0..``, each element's condition run as a rule from the group keys; with the columns' types."""
    from functools import reduce

    from pyspark.sql import functions as F

    lengths = {len(e.terms) for e in agg.elements}
    width = max(lengths, default=0)
    parts: list[tuple[DataFrame, tuple[ColumnType, ...]]] = []
    for number, element in enumerate(agg.elements):
        head_args: list = list(groups)
        body: list = [Literal(Atom(keys, tuple(groups)))] + list(element.condition)
        for j, term in enumerate(element.terms):
            if isinstance(term, Var) or isinstance(term, (int, str)):
                head_args.append(term)
            else:
                computed = Var(f"AggTerm{j}__")
                body.append(Comparison("=", computed, term))
                head_args.append(computed)
        head_args.extend([0] * (width - len(element.terms)))
        if len(lengths) > 1:
            head_args.append(len(element.terms))  # tuples of other lengths are other tuples
        head = Atom(f"agg{tag}__element{number}", tuple(head_args))
        rule = Rule((head,), tuple(body))
        head_types = infer_types([rule], ev.types)[head.pred]
        if any(t is None for t in head_types):
            continue  # the element has no tuple
        ev.types[head.pred] = head_types
        try:
            found = ev.rule(rule)
        finally:
            del ev.types[head.pred]
        if found is not None:
            parts.append((found, head_types))
    if not parts:
        return None, []
    common = [reduce(join, column) for column in zip(*(t for _, t in parts))]
    frames = [f.select(*[widen_column(F.col(f"c{i}"), t, c).alias(f"c{i}") for i, (t, c) in enumerate(zip(kinds, common))]) for f, kinds in parts]
    return reduce(lambda a, b: a.union(b), frames).distinct(), common


def check_rounds(rules, rounds: int, derived_bytes: int = 0) -> None:
    """Stop a recursive component that computes new values after :data:`MAX_COMPUTING_ROUNDS`
    rounds, or once its derived tuples (``derived_bytes``: rows x columns x 8 bytes) pass the
    memory budget (:mod:`nablog.engines.budget`)."""
    from .. import compute as python_compute
    from ..budget import memory_budget, over_budget

    rule = next((r for r in rules if python_compute.has_computation(r)), None)
    if rule is None:
        return
    budget = memory_budget()
    if derived_bytes > budget:
        raise over_budget(derived_bytes, budget, f"a recursive component's tuples after {rounds:,} rounds", rule.loc)
    if rounds > MAX_COMPUTING_ROUNDS:
        raise NablogError(
            f"a recursive component computed new values for {MAX_COMPUTING_ROUNDS:,} rounds: the model is probably infinite",
            rule.loc,
            "bound the recursion with a comparison (as in 'n(X+1) :- n(X), X < 100.')",
        )


__all__ = ["MAX_COMPUTING_ROUNDS", "check_rounds", "computes", "step"]
