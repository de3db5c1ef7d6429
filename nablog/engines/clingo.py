"""The `clingo` engine: ground a stratified program with clingo and read its (unique) model.

Every string constant is rendered as a clingo string, never as a clingo identifier, so clingo
orders constants as nablog does (integers before strings, strings by code point) and ``a`` read
from a rule meets ``"a"`` read from a data file.

>>> from nablog.lang import parse
>>> model = ClingoEngine().evaluate(parse('big(X) :- v(X), X > "m". v(a). v(z). v(3).'), {})
>>> sorted(model["big"])
[('z',)]
"""

from __future__ import annotations

from typing import Iterable, Mapping

import clingo

from ..lang import Atom, Comparison, Literal, NablogError, Program, Rule, Var, format_constant
from ..lang.ast import clingo_string
from .base import Model, prepare

CLINGO_MIN, CLINGO_MAX = -(2**31), 2**31 - 1


def clingo_term(term) -> str:
    """A term in clingo syntax with strings always quoted.

    >>> clingo_term("a"), clingo_term('say "hi"'), clingo_term(7), clingo_term(Var("X"))
    ('"a"', '"say \\\\"hi\\\\""', '7', 'X')
    """
    if isinstance(term, Var):
        return term.name
    if isinstance(term, int):
        if not CLINGO_MIN <= term <= CLINGO_MAX:
            raise NablogError(
                f"the integer {term} is outside clingo's 32-bit range",
                hint="use the python or spark engine for this data",
            )
        return str(term)
    try:
        return clingo_string(term)
    except ValueError:
        raise NablogError(
            f"the string {format_constant(term)[:60]} holds a NUL character, which clingo cannot represent",
            hint="use the python engine for this data, or remove the NUL",
        ) from None


def clingo_atom(atom: Atom) -> str:
    if not atom.args:
        return atom.pred
    return f"{atom.pred}({','.join(clingo_term(t) for t in atom.args)})"


def clingo_rule(rule: Rule) -> str:
    """A rule in clingo syntax; a disjunctive head uses ``;``."""
    head = ";".join(clingo_atom(a) for a in rule.head)
    if not rule.body:
        return head + "."
    return f"{head} :- {clingo_body(rule.body)}."


def clingo_body(body) -> str:
    parts = []
    for element in body:
        if isinstance(element, Comparison):
            parts.append(f"{clingo_term(element.left)}{element.op}{clingo_term(element.right)}")
        elif isinstance(element, Literal):
            parts.append(("" if element.positive else "not ") + clingo_atom(element.atom))
    return ",".join(parts)


def from_symbol(symbol: clingo.Symbol):
    """A clingo symbol back to a nablog constant."""
    if symbol.type == clingo.SymbolType.Number:
        return symbol.number
    if symbol.type == clingo.SymbolType.String:
        return symbol.string
    if symbol.type == clingo.SymbolType.Function and not symbol.arguments:
        return symbol.name
    raise NablogError(f"clingo returned a term nablog cannot represent: {symbol}")


class ClingoEngine:
    """Stratified models computed by clingo's grounder (see the module docstring)."""

    name = "clingo"

    def __init__(self, arguments: Iterable[str] = ()):
        self.arguments = list(arguments)

    def evaluate(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> Model:
        prepared = prepare(program, facts)
        control = clingo.Control(["--warn=none", *self.arguments])
        lines = [clingo_rule(r) for r in prepared.program.rules]
        for pred, rows in prepared.facts.items():
            lines.extend(f"{clingo_atom(Atom(pred, row))}." for row in rows)
        control.add("base", [], "\n".join(lines))
        control.ground([("base", [])])
        model: dict[str, set[tuple]] = {pred: set() for pred in prepared.arities}
        found = False
        with control.solve(yield_=True) as handle:
            for answer in handle:
                found = True
                for symbol in answer.symbols(atoms=True):
                    model.setdefault(symbol.name, set()).add(tuple(from_symbol(a) for a in symbol.arguments))
                break
        if not found:
            # Impossible for a stratified program without constraints; guard against misuse.
            raise NablogError("clingo found no model", hint="the clingo engine evaluates stratified rules only")
        return model
