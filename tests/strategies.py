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
