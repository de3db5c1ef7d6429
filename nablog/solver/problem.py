"""What every view-update method reasons over besides the rules: the constants a candidate may
use (the universe) and the base relations and facts that must not change (the protections).

Shared by :func:`nablog.solver.propose.propose`, :func:`nablog.solver.tableaux.request_tableau`
and the repair room's correction tables, so that each builds them the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Set

from ..engines.lookup import ModelIndex
from ..lang import SPLIT_PREFIX, Atom, Program, parse_atom
from .request import Request


class Universe(Set):
    """The constants of the model, the program and the request, without copying the model's.

    >>> from nablog.lang import parse
    >>> universe = request_universe(parse("p(X) :- q(X), X != c."), ModelIndex({"q": {(1,), ("a",)}}), Request.parse("+p(b)."))
    >>> sorted(universe, key=str), "a" in universe, "z" in universe
    ([1, 'a', 'b', 'c'], True, False)
    """

    def __init__(self, index: ModelIndex, extra: set):
        self.index = index
        self.extra = extra

    def __contains__(self, value: object) -> bool:
        return value in self.extra or self.index.has_constant(value)

    def __iter__(self):
        yield from self.index.constants()
        yield from (v for v in self.extra if v not in self.index.constants())

    def __len__(self) -> int:
        return len(self.index.constants()) + sum(1 for v in self.extra if v not in self.index.constants())


def request_universe(rules: Program, index: ModelIndex, request: Request) -> Universe:
    """The universe of one request: the model's constants (through ``index``), the program's and the request's."""
    return Universe(index, set(rules.constants()) | {v for _, a in request.atoms() for v in a.args})


def protections(rules: Program, protect: Iterable[str | Atom], split: Set[str]) -> list:
    """The program's ``#protect`` declarations and ``protect`` as relation names and ground atoms
    ``(pred, args)`` — seed 003's immutable part (Def. 1) — with the stored facts of a predicate in
    ``split`` named ``base__p``. A string with parentheses names a fact, as on the command line.

    >>> from nablog.lang import parse
    >>> protections(parse("#protect e/2. p(X) :- e(X, Y)."), ["r(d3)", "p"], {"p"})
    ['e', ('r', ('d3',)), 'base__p']
    """
    out: list = []
    for p in list(rules.protected) + list(protect):
        if isinstance(p, str) and "(" in p:
            # "r(d3)" names a fact, as on the command line (it was taken for a relation named
            # "r(d3)", which protected nothing).
            p = parse_atom(p, "protect")
        if isinstance(p, str):
            out.append(SPLIT_PREFIX + p if p in split else p)
        else:
            pred = SPLIT_PREFIX + p.pred if p.pred in split else p.pred
            out.append((pred, tuple(p.args)))
    return out
