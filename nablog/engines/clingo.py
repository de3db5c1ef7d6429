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
from ..lang.ast import Aggregate, BinOp, Interval, UnaryOp, clingo_string
from .base import Model, prepare
from .budget import CHECK_EVERY, MemoryBudget, over_budget

CLINGO_MIN, CLINGO_MAX = -(2**31), 2**31 - 1


def clingo_term(term) -> str:
    """A term in clingo syntax with strings always quoted.

    >>> clingo_term("a"), clingo_term('say "hi"'), clingo_term(7), clingo_term(Var("X"))
    ('"a"', '"say \\\\"hi\\\\""', '7', 'X')
    """
    if isinstance(term, Var):
        return term.name
    if isinstance(term, BinOp):
        return f"({clingo_term(term.left)}{term.op}{clingo_term(term.right)})"
    if isinstance(term, UnaryOp):
        return f"|{clingo_term(term.arg)}|" if term.op == "|" else f"-({clingo_term(term.arg)})"
    if isinstance(term, Interval):
        return f"({clingo_term(term.low)}..{clingo_term(term.high)})"
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
    """A body in clingo syntax. An assigned ``#min``/``#max`` of an empty set is clingo's
    ``#sup``/``#inf``, which is no nablog constant: the instance is dropped, as nablog defines it."""
    parts = []
    for element in body:
        if isinstance(element, Comparison):
            parts.append(f"{clingo_term(element.left)}{element.op}{clingo_term(element.right)}")
        elif isinstance(element, Literal):
            parts.append(("" if element.positive else "not ") + clingo_atom(element.atom))
        elif isinstance(element, Aggregate):
            elements = ";".join(
                ",".join(clingo_term(t) for t in e.terms) + (":" + clingo_body(e.condition) if e.condition else "") for e in element.elements
            )
            parts.append(f"{clingo_term(element.bound)}{element.op}#{element.function}{{{elements}}}")
            if element.function in ("min", "max") and element.op == "=" and isinstance(element.bound, Var):
                parts.append(f"{element.bound.name}!={'#sup' if element.function == 'min' else '#inf'}")
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


class _Budget:
    """The memory budget of clingo's grounding (:mod:`.budget`), as a context function that
    the recursive rules which compute values call once per ground instance."""

    def __init__(self):
        self.rules: list[Rule] = []
        self.budget = MemoryBudget()
        self.calls = 0
        # clingo re-raises a context function's exception by calling its class on it, which a
        # NablogError does not survive: the error is kept here and raised after grounding.
        self.error: NablogError | None = None

    def guarded(self, rule: Rule) -> str:
        """The rule in clingo syntax with ``@nablog_budget(I, V...) = 0`` last in its body: clingo
        evaluates it for each instance (its variables make it differ), so grounding stops here."""
        self.rules.append(rule)
        bound = [rule.head[0], *(b for b in rule.body if isinstance(b, Literal) and b.positive)]
        variables = sorted({v.name for part in bound for v in part.variables() if v.name != "_"})
        call = f"@nablog_budget({','.join([str(len(self.rules) - 1), *variables])})=0"
        return f"{clingo_atom(rule.head[0])} :- {clingo_body(rule.body)},{call}."

    def nablog_budget(self, index: clingo.Symbol, *values: clingo.Symbol) -> clingo.Symbol:
        self.calls += 1
        if self.calls % CHECK_EVERY == 0 and self.budget.used() > self.budget.budget:
            what = f"grounding {self.calls:,} instances of recursive rules that compute values"
            self.error = over_budget(self.budget.used(), self.budget.budget, what, self.rules[index.number].loc)
            raise RuntimeError(self.error.message)
        return clingo.Number(0)


class ClingoEngine:
    """Stratified models computed by clingo's grounder (see the module docstring)."""

    name = "clingo"

    def __init__(self, arguments: Iterable[str] = ()):
        self.arguments = list(arguments)

    def evaluate(self, program: Program, facts: Mapping[str, Iterable[tuple]]) -> Model:
        from .compute import has_computation

        prepared = prepare(program, facts)
        control = clingo.Control(["--warn=none", *self.arguments])
        guard = _Budget()
        lines = []
        for rule in prepared.program.rules:
            if rule.head[0].pred in prepared.analysis.recursive and has_computation(rule):
                lines.append(guard.guarded(rule))  # it may compute values without end
            else:
                lines.append(clingo_rule(rule))
        for pred, rows in prepared.facts.items():
            lines.extend(f"{clingo_atom(Atom(pred, row))}." for row in rows)
        control.add("base", [], "\n".join(lines))
        try:
            control.ground([("base", [])], guard if guard.rules else None)
        except RuntimeError:
            if guard.error is None:
                raise
            raise guard.error from None
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
