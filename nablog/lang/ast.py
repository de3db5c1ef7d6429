"""The AST of nablog programs: frozen, hashable nodes that print back to text parsing to the same node.

Terms are ``Var("X")`` or plain constants (``int`` / ``str``). A bare identifier and the quoted
string with the same text are one constant: ``a`` and ``"a"`` both parse to ``"a"``.
Locations are carried for error messages but never take part in equality.

>>> from nablog.lang import parse
>>> rule = parse('p(X, "New York") :- e(X, Y), not q(Y), X < 3.').rules[0]
>>> rule.head[0]
Atom(pred='p', args=(Var(name='X'), 'New York'))
>>> print(rule)
p(X, "New York") :- e(X, Y), not q(Y), X < 3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Union

from .errors import Loc

COMPARISON_OPS = ("=", "!=", "<", "<=", ">", ">=")
KEYWORDS = frozenset({"not"})
IDENTIFIER = re.compile(r"[a-z][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Var:
    """A variable; ``_`` alone is anonymous (each occurrence a different variable)."""

    name: str

    def __str__(self) -> str:
        return self.name


Constant = Union[int, str]
Term = Union[Var, int, str]


def constant_sort_key(value: Constant) -> tuple[int, int | str]:
    """The order of constants on every engine: integers before strings, strings by code point.

    >>> sorted(["b", 10, "a", -1], key=constant_sort_key)
    [-1, 10, 'a', 'b']
    """
    return (0, value) if isinstance(value, int) else (1, value)


def row_sort_key(row: tuple) -> tuple:
    """Sort key for tuples of constants, column by column in the order of constants.

    >>> sorted([("b", 1), (2, "a"), (1, "z")], key=row_sort_key)
    [(1, 'z'), (2, 'a'), ('b', 1)]
    """
    return tuple(constant_sort_key(v) for v in row)


def format_constant(value: Constant) -> str:
    """Print a constant: identifiers bare, other strings quoted, integers as digits.

    >>> format_constant("infor1"), format_constant("New York"), format_constant("not"), format_constant(-3)
    ('infor1', '"New York"', '"not"', '-3')
    """
    if isinstance(value, bool):  # bool is an int subclass; never a nablog constant
        raise TypeError(f"not a nablog constant: {value!r}")
    if isinstance(value, int):
        return str(value)
    if IDENTIFIER.match(value) and value not in KEYWORDS:
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def format_term(term: Term) -> str:
    return term.name if isinstance(term, Var) else format_constant(term)


@dataclass(frozen=True)
class Atom:
    """``pred(args...)``; a 0-ary atom has ``args == ()`` and prints without parentheses."""

    pred: str
    args: tuple[Term, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)

    @property
    def arity(self) -> int:
        return len(self.args)

    @property
    def signature(self) -> tuple[str, int]:
        return (self.pred, len(self.args))

    def variables(self) -> Iterator[Var]:
        return (t for t in self.args if isinstance(t, Var))

    def is_ground(self) -> bool:
        return not any(isinstance(t, Var) for t in self.args)

    def __str__(self) -> str:
        if not self.args:
            return self.pred
        return f"{self.pred}({', '.join(format_term(t) for t in self.args)})"


@dataclass(frozen=True)
class Literal:
    """An atom or its default negation ``not atom``."""

    atom: Atom
    positive: bool = True

    @property
    def loc(self) -> Loc | None:
        return self.atom.loc

    def variables(self) -> Iterator[Var]:
        return self.atom.variables()

    def __str__(self) -> str:
        return str(self.atom) if self.positive else f"not {self.atom}"


@dataclass(frozen=True)
class Comparison:
    """``left op right`` with op one of ``= != < <= > >=``, over the order of constants."""

    op: str
    left: Term
    right: Term
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.op not in COMPARISON_OPS:
            raise ValueError(f"unknown comparison operator {self.op!r}")

    def variables(self) -> Iterator[Var]:
        return (t for t in (self.left, self.right) if isinstance(t, Var))

    def holds(self, left: Constant, right: Constant) -> bool:
        """Evaluate on two constants in the order of :func:`constant_sort_key`."""
        a, b = constant_sort_key(left), constant_sort_key(right)
        return COMPARE[self.op](a, b)

    def __str__(self) -> str:
        return f"{format_term(self.left)} {self.op} {format_term(self.right)}"


COMPARE = {
    "=": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}

BodyElement = Union[Literal, Comparison]


def format_body(body: tuple[BodyElement, ...]) -> str:
    return ", ".join(str(b) for b in body)


@dataclass(frozen=True)
class Rule:
    """``head :- body.``; a fact has an empty body; a head of several atoms is a disjunction.

    Disjunctive heads print with ``;`` as in clingo; only transforms produce them.
    """

    head: tuple[Atom, ...]
    body: tuple[BodyElement, ...] = ()
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def is_fact(self) -> bool:
        return not self.body and len(self.head) == 1 and self.head[0].is_ground()

    def positive_body(self) -> Iterator[Atom]:
        return (b.atom for b in self.body if isinstance(b, Literal) and b.positive)

    def negative_body(self) -> Iterator[Atom]:
        return (b.atom for b in self.body if isinstance(b, Literal) and not b.positive)

    def __str__(self) -> str:
        head = " ; ".join(str(a) for a in self.head)
        return f"{head} :- {format_body(self.body)}." if self.body else f"{head}."


@dataclass(frozen=True)
class Denial:
    """An integrity constraint ``:- body.``: no ground instance of the body may hold.

    ``#constraint NAME :- body.`` names it; an unnamed denial is known by its position.
    """

    body: tuple[BodyElement, ...]
    name: str | None = None
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        text = f":- {format_body(self.body)}."
        return f"#constraint {self.name} {text}" if self.name else text


@dataclass(frozen=True)
class Requirement:
    """``#require atom.``: a ground atom that must hold in every state (seed 002, §2.1: ``ic``)."""

    atom: Atom
    loc: Loc | None = field(default=None, compare=False, repr=False)

    @property
    def name(self) -> str:
        return str(self.atom)

    def __str__(self) -> str:
        return f"#require {self.atom}."


@dataclass(frozen=True)
class BaseDeclaration:
    """``#base p/2, q/0.``: predicates that are base relations even while they have no facts."""

    signatures: tuple[tuple[str, int], ...]
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return "#base " + ", ".join(f"{p}/{n}" for p, n in self.signatures) + "."


@dataclass(frozen=True)
class Protection:
    """``#protect p/2, q(1, a).``: base relations or single facts a view update must not change
    (seed 003's immutable part)."""

    items: tuple[Union[tuple[str, int], Atom], ...]
    loc: Loc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        parts = [str(i) if isinstance(i, Atom) else f"{i[0]}/{i[1]}" for i in self.items]
        return "#protect " + ", ".join(parts) + "."


Constraint = Union[Denial, Requirement]
Statement = Union[Rule, Denial, Requirement, BaseDeclaration, Protection]
Node = Union[Var, Atom, Literal, Comparison, Rule, Denial, Requirement, BaseDeclaration, Protection]
