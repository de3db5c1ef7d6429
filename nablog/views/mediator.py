"""Mediator: a mediated program, its registered domains and its materialized view, for Database and the CLI.

>>> m = Mediator.from_text("a(X) :- X <= 3 ||. a(X) :- || b(X). b(X) :- X >= 5 ||. c(X) :- || a(X).")
>>> [str(answer) for answer in m.query("c(X)")]
['c(X) :- X <= 3.', 'c(X) :- X >= 5.']
>>> m.update("-b(X) || X = 6.").lines()[-1]
'c(X) :- X >= 5, X != 6.'
>>> [str(answer) for answer in m.query("c(X)")]
['c(X) :- X <= 3.', 'c(X) :- X >= 5, X != 6.']
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from ..lang.ast import Atom, ConstrainedRule, Rule
from ..lang.errors import NablogError, NablogSyntaxError
from ..lang.parser import parse_statements
from .constraints import Constraint, Domains, format_constraint
from .mediated import MediatedView

DELETION_METHODS = ("stdel", "dred", "recompute")
"""How a mediated view follows a deletion: Straight Delete, Extended DRed (seed 000, Algorithms 2
and 1) or recomputation."""


@dataclass(frozen=True)
class Answer:
    """One constrained atom answering a query: ``c(X) :- X >= 5, X != 6.``"""

    atom: Atom
    constraint: Constraint

    def __str__(self) -> str:
        return f"{self.atom} :- {format_constraint(self.constraint)}." if self.constraint else f"{self.atom}."


@dataclass(frozen=True)
class ViewUpdate:
    """The mediated view after a constrained update, one constrained atom a line."""

    view: tuple[str, ...]

    def lines(self) -> list[str]:
        return list(self.view)

    def to_json(self) -> dict:
        return {"view": list(self.view)}


def is_mediated(statements: Iterable) -> bool:
    """Does the program hold a constrained rule (``||`` or a domain call)?"""
    return any(isinstance(s, ConstrainedRule) for s in statements)


class Mediator:
    """The mediated part of a database: its clauses, domains and view (W_P by default, seed 000 §4).

    The view is materialized on first use, after domains are registered; under W_P it never calls
    a domain while materializing, so it stays valid whatever the sources do later (Theorem 4).
    """

    def __init__(self, statements: Iterable, facts: Mapping[str, Iterable[tuple]] | None = None, operator: str = "W"):
        self.clauses = [s for s in statements if isinstance(s, (Rule, ConstrainedRule))]
        self.clauses += [Rule((Atom(p, tuple(row)),)) for p, rows in sorted((facts or {}).items()) for row in sorted(rows, key=repr)]
        self.domains = Domains()
        self.operator = operator
        self._view: MediatedView | None = None

    @classmethod
    def from_text(cls, text: str, operator: str = "W") -> "Mediator":
        return cls(parse_statements(text), operator=operator)

    def register_domain(self, name: str, **functions: Callable) -> None:
        """Make ``in(X, name:function(args))`` call ``functions[function](*args)`` (a set of values)."""
        self.domains.register(name, **functions)

    @property
    def view(self) -> MediatedView:
        if self._view is None:
            self._view = MediatedView(self.clauses, self.domains, self.operator)
        return self._view

    def query(self, pattern: str | Atom) -> list[Answer]:
        """The constrained atoms of the view matching the pattern, solvable with the domains' current answers."""
        return [Answer(atom, constraint) for atom, constraint in self.view.query(pattern)]

    def ground(self, pattern: str | Atom, limit: int = 1000) -> tuple[list[tuple], bool]:
        """The ground answers, and whether they are all (see :meth:`MediatedView.ground`)."""
        return self.view.ground(pattern, limit)

    def update(self, text: str, method: str = "stdel") -> "ViewUpdate":
        """Apply constrained updates to the view: ``-b(X) || X = 6.`` deletes (by ``method``:
        ``stdel``, ``dred`` or ``recompute``), ``+b(X) || X = 4.`` inserts; return the new view.

        Every update is read (and every deleted predicate checked) before the first is applied.
        """
        if method not in DELETION_METHODS:
            raise NablogError(f"{method!r} is not a deletion method of mediated views", hint="choose stdel (Straight Delete), dred (Extended DRed) or recompute")
        updates = [(sign, self.view.parse_update(body)) for sign, body in split_updates(text)]
        for sign, (atom, _) in updates:
            if sign == "-":
                self.view.defines(atom)
        for sign, update in updates:
            if sign == "+":
                self.view.insert(update)
            else:
                self.view.delete(update, method=method)
        return ViewUpdate(tuple(self.listing()))

    def listing(self) -> list[str]:
        return self.view.listing()


def split_updates(text: str) -> list[tuple[str, str]]:
    """``-b(X) || X = 6. +a(1).`` as ``[("-", "b(X) || X = 6"), ("+", "a(1)")]``."""
    out = []
    for part in re.split(r"(?<=\.)\s+(?=[+-])", text.strip()):
        part = part.strip()
        if not part:
            continue
        if part[0] not in "+-":
            raise NablogSyntaxError(f"an update starts with + or -, not {part[0]!r}", None, "write -b(X) || X = 6. or +a(1).")
        out.append((part[0], part[1:].strip().rstrip(".")))
    return out
