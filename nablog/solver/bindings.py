"""Rule instances under a binding: patterns, unification, grounding, comparisons, computed variables and the order in which a body is evaluated.

Shared by the relevance search (:mod:`nablog.solver.ground`) and the demand it follows
(:mod:`nablog.solver.demand`).
"""

from __future__ import annotations

from typing import Iterator, Mapping

from ..lang import Atom, Comparison, Constant, Literal, Term, Var
from ..lang import arith
from ..lang.ast import Interval, term_variables
from ..lang.delta import GroundAtom  # noqa: F401  (the solver's modules import it from here)


def _pattern(atom: Atom, binding: Mapping[Var, Constant]) -> tuple | None:
    """The atom's arguments under a binding, None at unbound variables."""
    return tuple(
        (binding.get(t) if t.name != "_" else None) if isinstance(t, Var) else t for t in atom.args
    )


def _unify(atom: Atom, row: tuple, binding: dict[Var, Constant]) -> dict[Var, Constant] | None:
    out = dict(binding)
    for term, value in zip(atom.args, row):
        if isinstance(term, Var):
            if term.name == "_":
                continue
            if term in out:
                if out[term] != value:
                    return None
            else:
                out[term] = value
        elif term != value:
            return None
    return out


def _ground(atom: Atom, binding: Mapping[Var, Constant]) -> GroundAtom:
    return (atom.pred, tuple(binding[t] if isinstance(t, Var) else t for t in atom.args))


def _compare(cmp: Comparison, binding: Mapping[Var, Constant]) -> bool:
    """A comparison under a binding of all its variables, arithmetic as clingo computes it (a
    term without a value makes it false; an interval compared with ``=`` is membership)."""
    if isinstance(cmp.left, Var) and isinstance(cmp.right, Var):  # the common case, kept cheap
        return cmp.holds(binding[cmp.left], binding[cmp.right])
    for interval, other in ((cmp.left, cmp.right), (cmp.right, cmp.left)):
        if isinstance(interval, Interval):
            value = arith.evaluate(other, binding)
            inside = value is not None and value in set(arith.values(interval, binding))
            return inside if cmp.op == "=" else (value is not None and not inside)
    left, right = arith.evaluate(cmp.left, binding), arith.evaluate(cmp.right, binding)
    return left is not None and right is not None and cmp.holds(left, right)


def through_comparison(cmp: Comparison, binding: dict[Var, Constant], undecided: bool = False) -> Iterator[dict[Var, Constant]]:
    """The bindings a body's comparison lets through, in binding order: ``V = term`` with V unbound
    binds V to each value of the term (one new binding each); any other comparison lets
    ``binding`` itself through when it holds — or, with ``undecided``, when a variable of it is
    still unbound (a walk that demands atoms, not one that proves them).

    >>> from nablog.lang import parse_term
    >>> X, Y = Var("X"), Var("Y")
    >>> list(through_comparison(Comparison("=", Y, parse_term("X + 1")), {X: 1}))
    [{Var(name='X'): 1, Var(name='Y'): 2}]
    >>> list(through_comparison(Comparison("<", X, Y), {X: 1}, undecided=True)) == [{X: 1}]
    True
    """
    assigned = _assignment(cmp, binding)
    if assigned is not None:
        var, term = assigned
        for value in arith.values(term, binding):
            yield {**binding, var: value}
    elif (undecided and not all(v in binding for v in cmp.variables() if v.name != "_")) or _compare(cmp, binding):
        yield binding


def _assignment(cmp: Comparison, binding: Mapping[Var, Constant]) -> tuple[Var, Term] | None:
    """``V = term`` with V unbound and the term's variables bound: V takes the term's values."""
    if cmp.op != "=":
        return None
    for side, other in ((cmp.left, cmp.right), (cmp.right, cmp.left)):
        if isinstance(side, Var) and side.name != "_" and side not in binding and all(v in binding for v in term_variables(other)):
            return side, other
    return None


def _order(body, binding, skip):
    """Body elements in an order where each is evaluated once its variables are bound."""
    # The order depends on which variables are bound, not on their values: it was computed once
    # per rule instance (a third of the propagation at 1e4 facts). Keyed by the body's identity
    # (hashing the elements costs as much as ordering them); the body is kept so it stays alive.
    key = (id(body), frozenset(binding), skip)
    cached = _ORDERS.get(key)
    if cached is not None and cached[0] is body:
        return cached[1]
    if len(_ORDERS) > 65_536:
        _ORDERS.clear()
    order = tuple(_order_bound(body, set(binding), skip))
    _ORDERS[key] = (body, order)
    return order


_ORDERS: dict = {}


def _order_bound(body, bound, skip):
    rest = [b for i, b in enumerate(body) if i != skip]
    order = []
    while rest:
        best = None
        for b in rest:
            vars_ = {v for v in b.variables() if v.name != "_"}
            if isinstance(b, Literal) and b.positive:
                score = (1, len(vars_ & bound) - len(vars_ - bound) * 0.01)
            elif isinstance(b, Comparison) and _assignment(b, dict.fromkeys(bound)) is not None:
                score = (2, 0)  # binds its variable: as good as a filter
            else:
                score = (2, 0) if vars_ <= bound else (-1, 0)
            if best is None or score > best[0]:
                best = (score, b)
        rest.remove(best[1])
        order.append(best[1])
        bound |= {v for v in best[1].variables() if v.name != "_"}
    return order


def _computed(comparisons, bound: set[Var], unbound: set[Var]) -> list[tuple[Var, Term]]:
    """The variables of ``unbound`` that comparisons ``V = term`` compute, in an order where each
    term's variables are bound or computed before."""
    out: list[tuple[Var, Term]] = []
    targets = {c.left for c in comparisons if c.op == "=" and isinstance(c.left, Var) and c.left in unbound and not isinstance(c.right, Var)}
    known = bound | (unbound - targets)
    progress = True
    while progress:
        progress = False
        for c in comparisons:
            if c.op == "=" and c.left in targets and c.left not in known and set(term_variables(c.right)) <= known:
                out.append((c.left, c.right))
                known.add(c.left)
                progress = True
    # A target that could not be computed (its term needs itself) ranges over its domain.
    return out


def _compute(computed: list[tuple[Var, Term]], binding: dict[Var, Constant]) -> Iterator[dict[Var, Constant]]:
    if not computed:
        yield binding
        return
    (var, term), rest = computed[0], computed[1:]
    for value in arith.values(term, binding):
        yield from _compute(rest, {**binding, var: value})
