"""Free columns: positions of base relations that no rule or constraint reads, so that one new constant stands for every value an insertion may put there.

An insertion through ``track_artist(T, A) :- track(_, T, Al, _, _, _, _, _, _), album(Al, _, Ar),
artist(Ar, A).`` needs a track row whose composer, length and price the view never looks at. Seed
002, Def. 9, case 5 makes one disjunct per value of each such column (the product of 3,500
composers, lengths and prices), and §4.1 names the way out: "a delayed evaluation of existentially
quantified variables in projections". A *free column* is a position where the value of an inserted
tuple decides nothing: each such position of an inserted atom gets a new constant of its own (a
*free value*), so the realization is one row that stands for every value there, and ``--set``
fills each column on its own.

A position ``i`` of a base relation ``p`` is read when some literal of ``p`` in a rule body or a
constraint has at ``i`` a constant or a variable that occurs elsewhere in the rule or constraint
(a join, a head argument, a comparison). Two readers do not count:

- the dependent columns of a key (``#key``: the functional dependencies of every other column on
  the same columns): two distinct tuples with the same key violate it whatever they hold
  elsewhere, so the values there only matter to tuples that already violate the key;
- rules of views that nothing reads and the request does not name (their atoms are side effects
  only: the title of a new album shows in ``album_of`` but decides nothing);
- a denial that only forbids constants there (``:- t(_, _, _, P), P = "".``, a SQL column's
  ``NOT NULL``): a new constant is none of them, and the free value stands for every value the
  denials allow.

Every realization found with free values is verified by re-evaluation like any other; one with
other values in its free columns is a realization too (the values are read by nothing that decides
it), so the row stands for all of them.

>>> from nablog.lang import parse
>>> from nablog.engines.violations import name_anonymous
>>> program = parse("#columns t(id, name, album, price). #key t: id. v(N, A) :- t(_, N, A, _).")
>>> free_columns(program.rules, [(n, c) for n, c in program.named_constraints()], set(), {"t"})
{'t': frozenset({3})}
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from ..lang import Comparison, Denial, Literal, Rule, Var, fd_shape
from ..lang.ast import is_constant


def free_columns(rules: Iterable[Rule], constraints: Iterable[tuple[str, object]], ignored: set[str], base: set[str]) -> dict[str, frozenset[int]]:
    """Per base relation, its free positions (see the module's text). ``ignored`` names derived
    predicates whose rules do not count as readers (views nothing reads, not requested)."""
    arity: dict[str, int] = {}
    read: dict[str, set[int]] = {}
    constraints = list(constraints)
    denials = [c for _, c in constraints if isinstance(c, Denial)]
    keys = _keys(denials)

    def scan(body, others: Counter, skip: dict[str, set[int]] | None = None) -> None:
        for b in body:
            if not isinstance(b, Literal):
                continue
            atom = b.atom
            arity.setdefault(atom.pred, atom.arity)
            for i, t in enumerate(atom.args):
                if skip is not None and i in skip.get(atom.pred, ()):
                    continue
                if not isinstance(t, Var) or (t.name != "_" and others[t] > 1):
                    read.setdefault(atom.pred, set()).add(i)

    for rule in rules:
        heads = [h.pred for h in rule.head]
        if heads and all(h in ignored for h in heads):
            continue
        scan(rule.body, _occurrences(list(rule.head), rule.body))
    for d in denials:
        shape = fd_shape(d)
        if shape is not None and shape.lhs in keys.get(shape.pred, ()):
            # A key's dependent column: read only against a tuple with the same key.
            read.setdefault(shape.pred, set()).update(shape.lhs)
            arity.setdefault(shape.pred, shape.arity)
            continue
        scan(d.body, _occurrences([], d.body), _forbidding(d.body))
    for _, c in constraints:
        atom = getattr(c, "atom", None)  # a required atom: every position is given
        if atom is not None:
            arity.setdefault(atom.pred, atom.arity)
            read.setdefault(atom.pred, set()).update(range(atom.arity))
    out: dict[str, frozenset[int]] = {}
    for pred, n in arity.items():
        if pred in base:
            free = frozenset(range(n)) - read.get(pred, set())
            if free:
                out[pred] = free
    return out


def _forbidding(body) -> dict[str, set[int]]:
    """The positions of a denial's literals whose variable occurs only there and in comparisons
    ``V = c`` with constants: the denial forbids those values, which no new constant is.

    >>> from nablog.lang import parse
    >>> _forbidding(parse(':- t(_, P), P = "".').denials[0].body)
    {'t': {1}}
    >>> _forbidding(parse(':- t(X, P), u(P), P = "".').denials[0].body)
    {}
    """
    literals = [b for b in body if isinstance(b, Literal)]
    comparisons = [b for b in body if isinstance(b, Comparison)]
    count = _occurrences([], literals)
    out: dict[str, set[int]] = {}
    for b in literals:
        for i, t in enumerate(b.atom.args):
            if not isinstance(t, Var) or t.name == "_" or count[t] != 1 or not b.positive:
                continue
            mentions = [c for c in comparisons if t in set(c.variables())]
            if mentions and all(c.op == "=" and is_constant(c.right if c.left == t else c.left) for c in mentions):
                out.setdefault(b.atom.pred, set()).add(i)
    return out


def _occurrences(heads, body) -> Counter:
    """How often each variable occurs in the heads and the body (literal arguments and
    comparison terms)."""
    count: Counter = Counter()
    for h in heads:
        count.update(t for t in h.args if isinstance(t, Var))
    for b in body:
        if isinstance(b, Literal):
            count.update(t for t in b.atom.args if isinstance(t, Var))
        elif isinstance(b, Comparison):
            count.update(b.variables())
        else:  # an aggregate or another element: its variables count as read
            count.update(getattr(b, "variables", lambda: ())())
    return count


def _keys(denials) -> dict[str, set[tuple[int, ...]]]:
    """Per relation, the positions that are keys: functional dependencies of every other position
    on them (as ``#key`` declares)."""
    dependents: dict[tuple[str, tuple[int, ...]], set[int]] = {}
    arity: dict[str, int] = {}
    for d in denials:
        shape = fd_shape(d)
        if shape is not None:
            dependents.setdefault((shape.pred, shape.lhs), set()).add(shape.rhs)
            arity[shape.pred] = shape.arity
    out: dict[str, set[tuple[int, ...]]] = {}
    for (pred, lhs), rhs in dependents.items():
        if set(lhs) | rhs == set(range(arity[pred])):
            out.setdefault(pred, set()).add(lhs)
    return out
