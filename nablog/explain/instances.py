"""Ground rule instances read off a model: which bindings make a rule's body hold, and where a body fails.

A proof (:mod:`nablog.explain.proofs`) is built from *instances*: a rule of the (flattened)
program, a binding of its variables, the positive body atoms the binding makes (the children of
the proof node), the negated atoms it finds absent, and the value and elements of each aggregate.
Bodies are evaluated over a :class:`~nablog.engines.lookup.ModelIndex`, so a lookup with bound
arguments costs a binary search, whatever the engine that computed the model.

Comparisons are evaluated as clingo does (:mod:`nablog.lang.arith`): ``V = term`` with ``V``
unbound assigns (an interval assigns each of its values), any other comparison tests. An
aggregate is evaluated once the variables it shares with the rest of the rule are bound: the set
of its distinct element tuples over all bindings of the element conditions, then the function
(``#count``, ``#sum`` over integer first terms, ``#min``/``#max`` in the order of constants; an
empty ``#min``/``#max`` has no value), then the guard.

>>> from nablog.lang import parse, Atom
>>> from nablog.engines.lookup import ModelIndex
>>> rule = parse("n(D, N) :- dept(D), N = #count{E : works(E, D)}.").rules[0]
>>> index = ModelIndex({"dept": {("d",)}, "works": {("ann", "d"), ("bob", "d")}, "n": {("d", 2)}})
>>> [(i.positives, i.aggregates[0].value, i.aggregates[0].elements) for i in head_instances(rule, index, Atom("n", ("d", 2)))]
[((Atom(pred='dept', args=('d',)),), 2, (('ann',), ('bob',)))]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping

from ..engines.lookup import ModelIndex
from ..lang import Atom, Comparison, Constant, Literal, Rule, Var, arith, constant_sort_key
from ..lang.ast import Aggregate, AggregateElement, body_atoms, term_substituted, term_variables
from ..solver.bindings import _assignment, _compare, _pattern, _unify

Binding = Mapping[Var, Constant]


@dataclass(frozen=True)
class AggregateValue:
    """An aggregate of an instance: its value and the distinct element tuples it was computed over,
    with the condition atoms that hold for each (in the order of ``elements``)."""

    aggregate: Aggregate
    value: Constant | None
    elements: tuple[tuple, ...]
    atoms: tuple[tuple[Atom, ...], ...]


@dataclass(frozen=True)
class Instance:
    """A rule instance whose body holds: the binding, the positive body atoms (ground), the negated
    body atoms found absent (``_`` where the literal leaves a position free) and the aggregates."""

    rule: Rule
    binding: tuple[tuple[Var, Constant], ...]
    positives: tuple[Atom, ...]
    absent: tuple[Atom, ...]
    aggregates: tuple[AggregateValue, ...]

    def values(self) -> dict[Var, Constant]:
        return dict(self.binding)

    def sort_key(self) -> tuple:
        return tuple((v.name, constant_sort_key(c)) for v, c in self.binding)


@dataclass(frozen=True)
class Failure:
    """Where a body stops holding: the element that fails (``None`` when the head itself does not
    unify) and the binding reached before it."""

    element: object
    binding: tuple[tuple[Var, Constant], ...]

    def values(self) -> dict[Var, Constant]:
        return dict(self.binding)


def head_instances(rule: Rule, index: ModelIndex, atom: Atom) -> Iterator[Instance]:
    """Every instance of ``rule`` with head ``atom`` whose body holds in the model indexed."""
    for head in rule.head:
        if head.pred != atom.pred or head.arity != atom.arity:
            continue
        binding = _unify(head, tuple(atom.args), {})
        if binding is None:
            continue
        for found, _ in _solve(rule, list(rule.body), binding, index, [], [], [], None):
            yield found


def failures(rule: Rule, index: ModelIndex, atom: Atom, limit: int) -> list[Failure]:
    """For a head ``atom`` no instance of ``rule`` derives: the partial instances and the body
    element each one fails at (at most ``limit``), in evaluation order. Empty when some instance
    holds after all."""
    out: list[Failure] = []
    for head in rule.head:
        if head.pred != atom.pred or head.arity != atom.arity:
            continue
        binding = _unify(head, tuple(atom.args), {})
        if binding is None:
            out.append(Failure(None, ()))
            continue
        for found, _ in _solve(rule, list(rule.body), binding, index, [], [], [], out):
            return []
    return out[:limit]


def _solve(rule, body, binding, index, positives, absent, aggregates, failed):
    """Depth-first over the body in a bound-first order; yields (Instance, binding); appends a
    :class:`Failure` to ``failed`` (when a list) at each dead end."""
    if not body:
        in_body_order = tuple(a for _, a in sorted(positives, key=lambda p: p[0]))
        yield (
            Instance(rule, tuple(sorted(binding.items(), key=lambda kv: kv[0].name)), in_body_order, tuple(absent), tuple(aggregates)),
            binding,
        )
        return
    element = _next(rule, body, binding, index.size)
    rest = [b for b in body if b is not element]
    dead = True
    if isinstance(element, Literal) and element.positive:
        for row in index.match(element.atom.pred, _pattern(element.atom, binding)):
            extended = _unify(element.atom, row, binding)
            if extended is not None:
                dead = False
                position = next(i for i, b in enumerate(rule.body) if b is element)
                yield from _solve(rule, rest, extended, index, positives + [(position, Atom(element.atom.pred, tuple(row)))], absent, aggregates, failed)
    elif isinstance(element, Literal):
        pattern = _pattern(element.atom, binding)
        if next(index.match(element.atom.pred, pattern), None) is None:
            dead = False
            ground = Atom(element.atom.pred, tuple(Var("_") if v is None else v for v in pattern))
            yield from _solve(rule, rest, binding, index, positives, absent + [ground], aggregates, failed)
    elif isinstance(element, Comparison):
        assigned = _assignment(element, binding)
        if assigned is not None:
            var, term = assigned
            for value in arith.values(term, binding):
                dead = False
                yield from _solve(rule, rest, {**binding, var: value}, index, positives, absent, aggregates, failed)
        elif _compare(element, binding):
            dead = False
            yield from _solve(rule, rest, binding, index, positives, absent, aggregates, failed)
    else:
        computed = aggregate_value(element, binding, index)
        bound = element.bound
        if isinstance(bound, Var) and bound not in binding and element.op == "=":
            if computed.value is not None:
                dead = False
                yield from _solve(rule, rest, {**binding, bound: computed.value}, index, positives, absent, aggregates + [computed], failed)
        elif guard_holds(element, arith.evaluate(bound, binding), computed.value):
            dead = False
            yield from _solve(rule, rest, binding, index, positives, absent, aggregates + [computed], failed)
    if dead and failed is not None:
        failed.append(Failure(element, tuple(sorted(binding.items(), key=lambda kv: kv[0].name))))


def _next(rule: Rule, body: list, binding: Binding, size):
    """The body element to evaluate next: a test or assignment that can run, else the positive
    literal with the most bound arguments (of the smaller relation on a tie), else an aggregate
    whose shared variables are bound."""
    best, best_score = None, None
    for b in body:
        if isinstance(b, Comparison):
            ready = _assignment(b, binding) is not None or all(v in binding for v in b.variables())
            score = (3, 0, 0) if ready else None
        elif isinstance(b, Literal) and not b.positive:
            score = (3, 0, 0) if all(v in binding or v.name == "_" for v in b.variables()) else None
        elif isinstance(b, Literal):
            args = b.atom.args
            score = (2, sum(1 for t in args if not isinstance(t, Var) or t in binding), -size(b.atom.pred))
        else:
            score = (1, 0, 0) if all(v in binding for v in shared_variables(rule, b)) else None
        if score is not None and (best_score is None or score > best_score):
            best, best_score = b, score
    if best is None:
        # Nothing is ready (an unsafe order cannot happen after analysis): take the first.
        return body[0]
    return best


def shared_variables(rule: Rule, agg: Aggregate) -> set[Var]:
    """The variables of an aggregate's elements that occur elsewhere in the rule (they group),
    and the guard's variables unless the guard is assigned."""
    inner = {v for e in agg.elements for v in e.variables() if v.name != "_"}
    elsewhere = {v for a in rule.head for v in a.variables()} | {v for b in rule.body if b is not agg for v in b.variables()}
    guard = set() if agg.op == "=" and isinstance(agg.bound, Var) else set(term_variables(agg.bound))
    return (inner & elsewhere) | guard


def guard_holds(agg: Aggregate, guard: Constant | None, value: Constant | None) -> bool:
    """``guard op value``; an empty ``#min`` is clingo's ``#sup`` (above every constant), an empty
    ``#max`` its ``#inf`` (below every one)."""
    if guard is None:
        return False
    if value is None:
        return agg.op in (("<", "<=", "!=") if agg.function == "min" else (">", ">=", "!="))
    return Comparison(agg.op, 0, 0).holds(guard, value)


def aggregate_value(agg: Aggregate, binding: Binding, index: ModelIndex) -> AggregateValue:
    """The aggregate's value under ``binding`` (its shared variables bound), with its elements;
    the value is None for an empty ``#min``/``#max`` (clingo's ``#sup``/``#inf``)."""
    found: dict[tuple, list[Atom]] = {}
    for element in agg.elements:
        holder = Rule((Atom("element__", ()),), element.condition)
        for instance, full in _solve(holder, list(element.condition), dict(binding), index, [], [], [], None):
            terms = tuple(arith.evaluate(t, full) for t in element.terms)
            if any(t is None for t in terms):
                continue
            found.setdefault(terms, list(instance.positives))
    elements = sorted(found, key=lambda t: tuple(constant_sort_key(v) for v in t))
    firsts = [t[0] for t in elements if t]
    if agg.function == "count":
        value: Constant = len(elements)
    elif agg.function == "sum":
        value = arith.wrap(sum(v for v in firsts if isinstance(v, int)))
    elif not firsts:
        value = None
    else:
        pick = min if agg.function == "min" else max
        value = pick(firsts, key=constant_sort_key)
    return AggregateValue(agg, value, tuple(elements), tuple(tuple(found[t]) for t in elements))


def substitute(term, binding: Binding):
    """A term with bound variables replaced by their values; arithmetic that became ground is
    computed (left as written where clingo gives it no value)."""
    from ..lang.ast import BinOp, Interval, UnaryOp

    if isinstance(term, Var):
        return binding.get(term, term)
    if isinstance(term, (BinOp, UnaryOp, Interval)):
        if isinstance(term, BinOp):
            out = BinOp(term.op, substitute(term.left, binding), substitute(term.right, binding))
        elif isinstance(term, UnaryOp):
            out = UnaryOp(term.op, substitute(term.arg, binding))
        else:
            return Interval(substitute(term.low, binding), substitute(term.high, binding))
        if not any(True for _ in term_variables(out)):
            value = arith.evaluate(out, {})
            return out if value is None else value
        return out
    return term


def ground_atom(atom: Atom, binding: Binding) -> Atom:
    return Atom(atom.pred, tuple(substitute(t, binding) for t in atom.args))


def ground_element(element, binding: Binding):
    """A body element (literal, comparison, aggregate) with the binding substituted; comparisons
    keep their arithmetic as written so the instance reads like the rule."""
    if isinstance(element, Literal):
        return Literal(ground_atom(element.atom, binding), element.positive)
    if isinstance(element, Comparison):
        return Comparison(element.op, term_substituted(element.left, binding), term_substituted(element.right, binding))
    elements = tuple(
        AggregateElement(tuple(term_substituted(t, binding) for t in e.terms), tuple(ground_element(c, binding) for c in e.condition)) for e in element.elements
    )
    return Aggregate(element.function, elements, element.op, term_substituted(element.bound, binding))


def ground_rule(rule: Rule, binding: Binding) -> Rule:
    """The rule with the binding substituted: atoms computed, comparisons and aggregates as written."""
    return Rule(tuple(ground_atom(a, binding) for a in rule.head), tuple(ground_element(b, binding) for b in rule.body), rule.loc)


def reads(rule: Rule) -> set[str]:
    """The predicates a rule's body reads."""
    return {a.pred for a, _, _ in body_atoms(rule.body)}


__all__ = ["AggregateValue", "Failure", "Instance", "aggregate_value", "guard_holds", "failures", "ground_rule", "head_instances", "shared_variables", "substitute"]
