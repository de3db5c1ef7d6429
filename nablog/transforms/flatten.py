"""Flatten terms: atoms keep only variables and constants; computing moves into comparisons.

Engines, propagation and view updating read atoms positionally (a variable or a constant per
argument). Arithmetic and intervals written in atoms (clingo syntax: ``fib(N+1, X+Y)``,
``n(1..100).``) become a fresh variable plus a comparison ``V = term`` that binds or tests it;
a variable local to a negated literal (it occurs nowhere else in the rule: ``not s(X, P, P)``
reads "there is no P with s(X, P, P)") becomes ``_`` when it occurs once, and otherwise moves
into an auxiliary predicate ``exists1__s`` projecting the literal on its other variables. The
result has the same model on every predicate of the input (clingo semantics of the input;
the auxiliary predicates are added). Safety has been checked before (``analyze``), so every
comparison introduced here is evaluable where it stands.

>>> from nablog.lang import parse
>>> print(flatten(parse("fib(N+1, X+Y) :- fib(N, X), fib(N-1, Y), N < 30. n(1..3).")))
fib(F2, F3) :- fib(N, X), fib(F1, Y), N < 30, F1 = N - 1, F2 = N + 1, F3 = X + Y.
n(F1) :- F1 = 1..3.
>>> print(flatten(parse("p(X) :- m(X), not s(X, P, P), not t(X, Q).")))
exists1__s(X) :- s(X, P, P).
p(X) :- m(X), not exists1__s(X), not t(X, _).
"""

from __future__ import annotations

from collections import Counter

from ..lang import Atom, Comparison, Denial, Literal, Program, Rule, Var
from ..lang.ast import Aggregate, AggregateElement, is_constant


def flatten(program: Program) -> Program:
    """The program with every rule and denial flattened (see the module docstring); a program
    with nothing to flatten is returned as it is."""
    if not any(needs_flattening(s) for s in program.statements):
        return program
    exists: dict[str, int] = Counter()
    out = []
    for statement in program.statements:
        if not needs_flattening(statement):
            out.append(statement)
            continue
        names = _Fresh(statement)
        if isinstance(statement, Rule):
            body, aux = _body(statement.body, {v for a in statement.head for v in a.variables()}, names, exists)
            head, tail = [], []
            for atom in statement.head:
                flat, tests = _flat_atom(atom, names)
                head.append(flat)
                tail.extend(tests)
            out.extend(aux)
            out.append(Rule(tuple(head), tuple(body) + tuple(tail), statement.loc))
        else:
            body, aux = _body(statement.body, set(), names, exists)
            out.extend(aux)
            out.append(Denial(tuple(body), statement.name, statement.loc))
    return Program(tuple(out))


def needs_flattening(statement) -> bool:
    """Whether a rule or denial has a computed term in an atom or a named negation-local variable."""
    if isinstance(statement, Rule):
        if any(not (isinstance(t, Var) or is_constant(t)) for a in statement.head for t in a.args):
            return True
        outside = [v for a in statement.head for v in a.variables()]
    elif isinstance(statement, Denial):
        outside = []
    else:
        return False
    counts = Counter(outside + [v for b in statement.body for v in b.variables()])
    for b in statement.body:
        if isinstance(b, Literal):
            if any(not (isinstance(t, Var) or is_constant(t)) for t in b.atom.args):
                return True
            if not b.positive and _locals(b, counts):
                return True
        if isinstance(b, Aggregate) and any(
            not (isinstance(t, Var) or is_constant(t)) for e in b.elements for c in e.condition if isinstance(c, Literal) for t in c.atom.args
        ):
            return True
    return False


def _locals(literal: Literal, counts: Counter) -> set[Var]:
    """Named variables of a negated literal that occur nowhere else in the rule."""
    own = Counter(v for v in literal.variables())
    return {v for v in own if v.name != "_" and counts[v] == own[v]}


class _Fresh:
    """Fresh variable names ``F1, F2, ...`` that the statement does not use."""

    def __init__(self, statement):
        self.used = {v.name for v in _all_vars(statement)}
        self.n = 0

    def next(self) -> Var:
        while True:
            self.n += 1
            name = f"F{self.n}"
            if name not in self.used:
                self.used.add(name)
                return Var(name)


def _all_vars(statement):
    if isinstance(statement, Rule):
        for a in statement.head:
            yield from a.variables()
    for b in statement.body:
        yield from b.variables()


def _body(body, outside: set[Var], names: _Fresh, exists: Counter) -> tuple[list, list[Rule]]:
    counts = Counter(list(outside) + [v for b in body for v in b.variables()])
    out: list = []
    tail: list = []
    aux: list[Rule] = []
    for element in body:
        if isinstance(element, Literal):
            atom, tests = _flat_atom(element.atom, names)
            if element.positive:
                out.append(Literal(atom, True))
                tail.extend(tests)  # they test the literal's values: after it
                continue
            out.extend(tests)  # they bind the values the negated literal is checked for
            local = _locals(Literal(atom, False), counts)
            repeated = {v for v, n in Counter(atom.variables()).items() if v in local and n > 1}
            if repeated:
                exists[atom.pred] += 1
                keep = tuple(dict.fromkeys(v for v in atom.variables() if v not in local and v.name != "_"))
                helper = Atom(f"exists{exists[atom.pred]}__{atom.pred}", keep)
                aux.append(Rule((helper,), (Literal(atom, True),)))
                out.append(Literal(helper, False))
            else:
                args = tuple(Var("_") if isinstance(t, Var) and t in local else t for t in atom.args)
                out.append(Literal(Atom(atom.pred, args, atom.loc), False))
        elif isinstance(element, Aggregate):
            elements = []
            for e in element.elements:
                condition, inner = [], []
                for c in e.condition:
                    if isinstance(c, Literal):
                        atom, tests = _flat_atom(c.atom, names)
                        condition.append(Literal(atom, c.positive))
                        (inner if c.positive else condition).extend(tests)
                    else:
                        condition.append(c)
                elements.append(AggregateElement(e.terms, tuple(condition + inner)))
            out.append(Aggregate(element.function, tuple(elements), element.op, element.bound, element.loc))
        else:
            out.append(element)
    return out + tail, aux


def _flat_atom(atom: Atom, names: _Fresh) -> tuple[Atom, list[Comparison]]:
    args, tests = [], []
    for term in atom.args:
        if isinstance(term, Var) or is_constant(term):
            args.append(term)
        else:
            var = names.next()
            args.append(var)
            tests.append(Comparison("=", var, term))
    return Atom(atom.pred, tuple(args), atom.loc), tests


__all__ = ["flatten", "needs_flattening"]
