"""The engine protocol, and the preparation every engine shares: split facts, analyse, collect arities."""

from __future__ import annotations

import functools
from collections.abc import Set
from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol

from ..lang import Analysis, AnalysisError, Program, Rule, analyze, check_arities, separate_facts
from ..transforms.flatten import flatten

Model = dict[str, Set]
"""Relation name to a read-only set of tuples of constants, for every base and derived relation."""


class Engine(Protocol):
    """Computes the perfect model of a stratified program over base facts.

    ``evaluate`` returns every relation of the program (base relations included, empty ones
    too); constraints are not checked here (see ``Database.violations``).
    """

    name: str

    def evaluate(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> Model: ...


def relation_arity(rows: Set) -> int:
    """The arity of a relation: the one it keeps (encoded relations, columns), else the length of
    its first tuple; 0 for an empty set of tuples.

    >>> relation_arity({(1, 2)}), relation_arity(set())
    (2, 0)
    """
    arity = getattr(rows, "arity", None)
    if arity is not None:
        return arity
    return len(next(iter(rows))) if len(rows) else 0


@dataclass(frozen=True)
class Prepared:
    """A program ready to evaluate: rules only, all base facts, the analysis and every arity."""

    program: Program
    facts: dict[str, Set]
    analysis: Analysis
    arities: dict[str, int]


def prepare(program: Program, facts: Mapping[str, Iterable[tuple]]) -> Prepared:
    """Move the program's facts into the base facts, check the program, and record arities.

    Arities come from the program; relations that only occur in ``facts`` take the width of
    their rows, and a relation whose rows disagree in width is an error.
    """
    _check_arities(program)
    rules, base = separate_facts(program, facts)
    rules, analysis, signatures = _analyzed(rules)
    arities = dict(signatures)
    for pred, rows in base.items():
        known = getattr(rows, "arity", None)  # columnar relations know their arity
        if known is not None:
            expected = arities.setdefault(pred, known)
            if known != expected and len(rows):  # (in this order: sizing given columns costs a set)
                raise AnalysisError(
                    f"relation {pred} has {known} columns but {pred} has arity {expected}",
                    hint="every row of a relation has one value per argument",
                )
            continue
        if not rows:
            arities.setdefault(pred, 0)  # an empty relation the program never mentions
        widths = set(map(len, rows))  # in C: the comprehension cost 0.5 s at 1e6 rows
        expected = arities.get(pred, next(iter(widths)) if widths else 0)
        if widths <= {expected}:
            arities.setdefault(pred, expected)
            continue
        for row in rows:
            expected = arities.setdefault(pred, len(row))
            if len(row) != expected:
                raise AnalysisError(
                    f"relation {pred} has a row of {len(row)} values, {_format_row(row)}, but {pred} has arity {expected}",
                    hint="every row of a relation has one value per argument",
                )
    only_rules = Program(tuple(s for s in rules.statements if isinstance(s, Rule)))
    return Prepared(only_rules, base, analysis, arities)


# Checking and analysing a program costs milliseconds, hashing it microseconds: a program evaluated
# once per commit (view maintenance, seed 001) is analysed once. Programs and analyses are frozen.
@functools.lru_cache(maxsize=256)
def _check_arities(program: Program) -> None:
    check_arities(program)


@functools.lru_cache(maxsize=256)
def _analyzed(rules: Program) -> tuple[Program, Analysis, dict[str, int]]:
    analysis = analyze(rules)
    flat = flatten(rules)  # atoms of variables and constants only (computing moves to comparisons)
    if flat is not rules:
        rules, analysis = flat, analyze(flat)
    return rules, analysis, rules.signatures


def _format_row(row: tuple) -> str:
    from ..lang import format_constant

    return "(" + ", ".join(format_constant(v) for v in row) + ")"
