"""Hypothesis strategies: stratified programs with negation, recursion and comparisons, and their data."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st

from nablog.lang import Atom, Comparison, Literal, Program, Rule, Var



def examples(n: int) -> int:
    """``n`` examples under the default profile, scaled with the loaded one (``thorough``: 20×)."""
    return max(1, n * settings.default.max_examples // 100)


CONSTANTS = [0, 1, 2, -1, "a", "b", "B c"]
BASE = {"e": 2, "f": 1, "g": 0}
DERIVED = [("p0", 2), ("p1", 1), ("p2", 2), ("p3", 0)]
VARS = [Var("X"), Var("Y"), Var("Z")]

constants = st.sampled_from(CONSTANTS)


@st.composite
def base_facts(draw, max_rows: int = 8) -> dict[str, set[tuple]]:
    facts: dict[str, set[tuple]] = {}
    for pred, arity in BASE.items():
        rows = draw(st.sets(st.tuples(*[constants] * arity), max_size=max_rows if arity else 1))
        facts[pred] = rows
    return facts


@st.composite
def _rule(draw, index: int) -> Rule:
    head_pred, head_arity = DERIVED[index]
    # Positive literals may use base predicates and derived ones up to this one (recursion);
    # negative literals only strictly lower ones, so every program is stratified.
    positive_preds = list(BASE.items()) + DERIVED[: index + 1]
    negative_preds = list(BASE.items()) + DERIVED[:index]
    body: list = []
    bound: list[Var] = []
    for _ in range(draw(st.integers(1, 3))):
        pred, arity = draw(st.sampled_from(positive_preds))
        args = tuple(draw(st.one_of(st.sampled_from(VARS), constants)) if draw(st.integers(0, 4)) else draw(constants) for _ in range(arity))
        body.append(Literal(Atom(pred, args)))
        bound.extend(a for a in args if isinstance(a, Var) and a not in bound)
    if not bound:
        # A head needing variables must have a positive literal binding them.
        pred, arity = draw(st.sampled_from([(p, n) for p, n in BASE.items() if n]))
        args = tuple(VARS[:arity])
        body.append(Literal(Atom(pred, args)))
        bound.extend(args)
    if draw(st.booleans()):
        pred, arity = draw(st.sampled_from(negative_preds))
        args = tuple(draw(st.sampled_from(bound + [Var("_")])) if draw(st.integers(0, 3)) else draw(constants) for _ in range(arity))
        body.append(Literal(Atom(pred, args), False))
    if draw(st.booleans()):
        op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="]))
        left = draw(st.sampled_from(bound))
        right = draw(st.one_of(st.sampled_from(bound), constants))
        body.append(Comparison(op, left, right))
    head_args = tuple(draw(st.sampled_from(bound)) if draw(st.integers(0, 5)) else draw(constants) for _ in range(head_arity))
    return Rule((Atom(head_pred, head_args),), tuple(draw(st.permutations(body))))


@st.composite
def stratified_programs(draw) -> Program:
    rules = []
    for index in range(len(DERIVED)):
        rules.extend(draw(st.lists(_rule(index), min_size=1, max_size=3)))
    return Program(tuple(rules))


# -- programs with arithmetic, intervals, aggregates and negation-local variables (issue 13) --------

from nablog.lang.ast import Aggregate, AggregateElement, BinOp, Interval, UnaryOp  # noqa: E402

RICH_CONSTANTS = [0, 1, 2, 3, -1, "a", "b"]
"""Integers and identifiers only: their order is the same in nablog and in clingo read as text."""
RICH_DERIVED = [("q0", 1), ("q1", 2), ("q2", 1), ("q3", 2)]
_LOCAL = [Var("W"), Var("U")]


def _arith(draw, bound: list[Var], depth: int = 0):
    """An arithmetic term over bound variables and small integers."""
    leaf = st.one_of(st.sampled_from(bound), st.integers(-2, 3)) if bound else st.integers(-2, 3)
    if depth >= 2 or not draw(st.integers(0, 2)):
        return draw(leaf)
    kind = draw(st.sampled_from(["+", "-", "*", "/", "\\", "**", "neg", "abs"]))
    if kind == "neg":
        return UnaryOp("-", _arith(draw, bound, depth + 1))
    if kind == "abs":
        return UnaryOp("|", _arith(draw, bound, depth + 1))
    right = draw(st.integers(-1, 3)) if kind == "**" else _arith(draw, bound, depth + 1)
    return BinOp(kind, _arith(draw, bound, depth + 1), right)


@st.composite
def _rich_rule(draw, index: int, interval_fact: bool) -> Rule:
    head_pred, head_arity = RICH_DERIVED[index]
    if interval_fact:
        low = draw(st.integers(-1, 2))
        return Rule((Atom(head_pred, tuple(Interval(low, low + draw(st.integers(-1, 3))) if i == 0 else draw(st.sampled_from(RICH_CONSTANTS)) for i in range(head_arity))),))
    recursive = draw(st.booleans())
    lower = list(BASE.items()) + RICH_DERIVED[:index]
    body: list = []
    bound: list[Var] = []
    for k in range(draw(st.integers(1, 2))):
        pred, arity = (head_pred, head_arity) if recursive and k == 0 else draw(st.sampled_from([(p, n) for p, n in lower if n]))
        args = tuple(draw(st.sampled_from(VARS)) if draw(st.integers(0, 4)) else draw(st.sampled_from(RICH_CONSTANTS)) for _ in range(arity))
        body.append(Literal(Atom(pred, args)))
        bound.extend(a for a in args if isinstance(a, Var) and a not in bound)
    computing = not recursive
    if computing and bound and draw(st.booleans()):
        target = Var("A")
        if draw(st.integers(0, 3)):
            body.append(Comparison("=", target, _arith(draw, bound)))
        else:
            low = draw(st.sampled_from(bound))
            body.append(Comparison("=", target, Interval(low, BinOp("+", low, draw(st.integers(0, 2))))))
        bound.append(target)
    if computing and draw(st.booleans()):
        pred, arity = draw(st.sampled_from([(p, n) for p, n in lower if n]))
        pool = bound + _LOCAL
        args = tuple(draw(st.sampled_from(pool)) if draw(st.integers(0, 3)) else draw(st.sampled_from(RICH_CONSTANTS)) for _ in range(arity))
        local = [a for a in dict.fromkeys(args) if a in _LOCAL]
        terms = tuple(draw(st.lists(st.sampled_from(local + [a for a in args if a in bound] or [1]), min_size=1, max_size=2)))
        condition: list = [Literal(Atom(pred, args))]
        if local and draw(st.booleans()):
            condition.append(Comparison(draw(st.sampled_from(["<", "!=", ">="])), local[0], draw(st.sampled_from(RICH_CONSTANTS))))
        function = draw(st.sampled_from(["count", "sum", "min", "max"]))
        element = AggregateElement(terms, tuple(condition))
        if function in ("count", "sum") and draw(st.booleans()):
            body.append(Aggregate(function, (element,), "=", Var("N")))
            bound.append(Var("N"))
        else:
            body.append(Aggregate(function, (element,), draw(st.sampled_from(["<", "<=", ">", "=", "!="])), draw(st.sampled_from(bound + [0, 1, 2, "a"]))))
    if draw(st.booleans()):
        pred, arity = draw(st.sampled_from([(p, n) for p, n in lower]))
        local = Var("L")
        args = tuple(draw(st.sampled_from(bound + [Var("_"), local])) if draw(st.integers(0, 3)) else draw(st.sampled_from(RICH_CONSTANTS)) for _ in range(arity))
        body.append(Literal(Atom(pred, args), False))
    if bound and draw(st.booleans()):
        body.append(Comparison(draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">="])), _arith(draw, bound), draw(st.one_of(st.sampled_from(bound), st.sampled_from(RICH_CONSTANTS)))))
    head_args = tuple(
        (_arith(draw, bound) if computing and draw(st.integers(0, 3)) == 0 else draw(st.sampled_from(bound)))
        if bound and draw(st.integers(0, 5))
        else draw(st.sampled_from(RICH_CONSTANTS))
        for _ in range(head_arity)
    )
    return Rule((Atom(head_pred, head_args),), tuple(body))


@st.composite
def rich_programs(draw) -> Program:
    """Stratified programs with arithmetic (heads, assignments, comparisons), intervals in facts,
    #count/#sum/#min/#max over lower strata, and negated literals with local variables. Only
    rules that do not recurse compute, so every model is finite; #min/#max are compared, never
    assigned (an empty one is clingo's #sup/#inf, which nablog does not bind)."""
    rules = []
    for index in range(len(RICH_DERIVED)):
        if draw(st.integers(0, 3)) == 0:
            rules.append(draw(_rich_rule(index, True)))
        rules.extend(draw(st.lists(_rich_rule(index, False), min_size=1, max_size=2)))
    return Program(tuple(rules))


@st.composite
def rich_facts(draw, max_rows: int = 6) -> dict[str, set[tuple]]:
    """Base facts over RICH_CONSTANTS (identifiers and integers only)."""
    values = st.sampled_from(RICH_CONSTANTS)
    return {pred: draw(st.sets(st.tuples(*[values] * arity), max_size=max_rows if arity else 1)) for pred, arity in BASE.items()}
