"""Constrained atoms of a mediated view (seed 000, §2.3): clauses, atoms with their supports, and how a derivation's heads meet."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ..lang.ast import Atom, Comparison, ConstrainedRule, DomainCall, Literal, Rule, Var
from ..lang.errors import NablogError
from .constraints import Constraint, substitute, variables


def head_vars(arity: int) -> tuple[Var, ...]:
    """The canonical head variables of a constrained atom: ``X``, ``Y``, ``Z``, ``W``, or ``X1..Xn``.

    >>> head_vars(2), len(head_vars(5))
    ((Var(name='X'), Var(name='Y')), 5)
    """
    if arity <= 4:
        return tuple(Var(n) for n in "XYZW"[:arity])
    return tuple(Var(f"X{i}") for i in range(1, arity + 1))


@dataclass
class Clause:
    """A numbered mediator clause ``head ← constraints ‖ body`` (``Cn(C)`` of seed 000 §3.1.2)."""

    number: int
    head: Atom
    constraints: Constraint
    body: tuple[Atom, ...]

    def __str__(self) -> str:
        return str(ConstrainedRule(self.head, tuple(self.constraints), self.body))  # type: ignore[arg-type]


Shape = tuple  # of Var (a head variable of the atom it belongs to), constant, or None (neither)


@dataclass
class Entry:
    """One constrained atom of the view, over :func:`head_vars`, with its support."""

    id: int
    pred: str
    arity: int
    constraint: Constraint
    clause: int
    children: tuple[int, ...] = ()
    fixed: dict[int, object] = field(default_factory=dict)  # head positions the constraint fixes to a constant
    shape: Shape = ()  # each head position as its derivation's equalities name it (see Derivation)
    links: tuple[Shape, ...] = ()  # each child's head positions in terms of this atom's head


@dataclass(frozen=True)
class Derivation:
    """The constrained atom one clause derives from its children, and how their heads meet its own.

    ``shape`` writes each head position as the constant its derivation's equalities fix it to,
    else the first head variable equal to it; ``links[i]`` writes child ``i``'s head positions the
    same way (``None`` where nothing names them). Equalities are never taken back (deletions add
    negations, seed 000 eq. (4) and (5)), so a link holds for the atom's whole life.
    """

    constraint: Constraint
    shape: Shape
    links: tuple[Shape, ...]


def fixed_positions(constraint: Constraint, arity: int) -> dict[int, object]:
    """Head positions the (normalized) constraint fixes to a constant."""
    head = head_vars(arity)
    return {
        head.index(e.left): e.right
        for e in constraint
        if isinstance(e, Comparison) and e.op == "=" and e.left in head and not isinstance(e.right, Var)
    }


def recursive_components(clauses: Iterable[Clause]) -> dict[str, frozenset[str]]:
    """Each predicate on a cycle of the clauses' dependencies, with the predicates of its cycles.

    >>> from nablog.lang.parser import parse_statements
    >>> program = [clause_of(1, s) for s in parse_statements("p(X) :- || q(X). q(X) :- || p(X). r(X) :- || p(X).")]
    >>> {p: sorted(c) for p, c in recursive_components(program).items()}
    {'p': ['p', 'q'], 'q': ['p', 'q']}
    """
    uses: dict[str, set[str]] = {}
    for c in clauses:
        uses.setdefault(c.head.pred, set()).update(b.pred for b in c.body)

    def reach(pred: str) -> set[str]:
        seen, stack = set(), [pred]
        while stack:
            for q in uses.get(stack.pop(), ()):
                if q not in seen:
                    seen.add(q)
                    stack.append(q)
        return seen

    below = {p: reach(p) for p in uses}
    return {p: frozenset(q for q in below[p] if p in below.get(q, ())) for p in sorted(uses) if p in below[p]}


def namer(conj: Iterable, head: tuple[Var, ...]):
    """A term's name under the conjunction's top-level equalities: the constant of its class, else
    the class's first head variable, else None (see :class:`Derivation`)."""
    parent: dict = {}

    def find(t):
        while parent.get(t, t) != t:
            t = parent[t]
        return t

    for e in conj:
        if isinstance(e, Comparison) and e.op == "=":
            a, b = find(e.left), find(e.right)
            if a != b:
                parent[a] = b
    names: dict = {}
    for t in list(parent) + [find(t) for t in list(parent)]:
        if not isinstance(t, Var):
            names.setdefault(find(t), t)
    for h in head:
        names.setdefault(find(h), h)
    return lambda t: names.get(find(t))


def compose(link: Shape, shape: Shape) -> Shape:
    """A grandchild's head in terms of the root: ``link`` (in terms of the child) through the child's ``shape``."""
    child_head = head_vars(len(shape))
    return tuple(shape[child_head.index(t)] if isinstance(t, Var) else t for t in link)


def bind(atom: Atom, fixed: dict[int, object], bound: dict | None = None) -> dict | None:
    """The bindings (``bound`` extended) that make the atom's arguments meet the fixed constants
    at their positions; None on a clash."""
    out = dict(bound or {})
    for pos, value in fixed.items():
        t = atom.args[pos]
        if isinstance(t, Var):
            if out.setdefault(t, value) != value:
                return None
        elif t != value:
            return None
    return out


def apart(conj: Constraint, head: tuple[Var, ...], fresh: Iterator[int]) -> Constraint:
    """The conjunction with its variables other than ``head`` renamed apart (``_A1``, ``_A2``, ...)."""
    return substitute(conj, {v: Var(f"_A{next(fresh)}") for v in variables(conj) if v not in head})


def format_support(support: tuple) -> str:
    """``<2, <3>>`` as seed 000 writes supports.

    >>> format_support((4, (2, (3,))))
    '<4, <2, <3>>>'
    """
    return "<" + ", ".join(format_support(s) if isinstance(s, tuple) else str(s) for s in support) + ">"


def clause_of(number: int, statement) -> Clause:
    """A program statement (a constrained rule, or a positive rule or fact) as clause ``number``."""
    if isinstance(statement, ConstrainedRule):
        return Clause(number, statement.head, tuple(statement.constraints), statement.body)
    if isinstance(statement, Rule):
        if len(statement.head) != 1:
            raise NablogError("a mediator rule has one head atom", statement.loc, "write one rule per head atom")
        body, constraints = [], []
        for b in statement.body:
            if isinstance(b, Literal):
                if not b.positive:
                    raise NablogError(f"negation ({b}) in a mediator rule", statement.loc, "constrained databases have no negation (seed 000)")
                body.append(b.atom)
            elif isinstance(b, (Comparison, DomainCall)):
                constraints.append(b)
            else:
                raise NablogError(f"{b} cannot stand in a mediator rule", statement.loc, "use comparisons, domain calls and positive atoms")
        return Clause(number, statement.head[0], tuple(constraints), tuple(body))
    raise NablogError(f"{statement} is not a mediator clause", getattr(statement, "loc", None), "mediators hold rules and facts only")
