"""Normalize rules: one relational-algebra operator per rule (seed 002, §2.2).

Every rule becomes a join of two literals, a difference (a literal and a negated one), one branch
of a union (a predicate defined by several single-literal rules with the same variables), a
permutation or projection of one literal, or the negation of a 0-ary predicate. Comparisons are
kept as selections on a single literal (the paper leaves built-ins out; they add no new case).
Auxiliary predicates are named ``aux1__p``, ``aux2__p``, … after the predicate they help define.

>>> from nablog.lang import parse
>>> print(normalize(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y).")))
p(X, Y) :- e(X, Y).
p(X, Y) :- aux1__p(X, Y).
aux1__p(X, Y) :- aux2__p(X, Y, Z).
aux2__p(X, Y, Z) :- e(X, Z), p(Z, Y).
"""

from __future__ import annotations

from ..lang import Atom, Comparison, Literal, Program, Rule, Var


def normalize(program: Program) -> Program:
    """The program with every rule normalized; facts, constraints and declarations unchanged."""
    by_head: dict[str, list[Rule]] = {}
    for rule in program.rules:
        if not rule.is_fact():
            by_head.setdefault(rule.head[0].pred, []).append(rule)
    emitted: dict[str, list[Rule]] = {}
    out = []
    for statement in program.statements:
        if not isinstance(statement, Rule) or statement.is_fact():
            out.append(statement)
            continue
        pred = statement.head[0].pred
        if pred in emitted:
            continue
        namer = _Namer(pred)
        rules: list[Rule] = []
        union = len(by_head[pred]) > 1
        for rule in by_head[pred]:
            head = rule.head[0]
            if union and not is_copy(rule):
                # The branch is a copy of an auxiliary predicate over distinct variables; the
                # head's own pattern (constants, repeated variables) moves into its definition.
                variables = head.args if _distinct_vars(head) == head.args else tuple(Var(f"V{i + 1}") for i in range(head.arity))
                aux = namer.next()
                rules.append(Rule((Atom(pred, variables),), (Literal(Atom(aux, variables)),)))
                rules.extend(_body(Atom(aux, head.args), rule.body, namer))
            elif union:
                rules.append(rule)
            else:
                rules.extend(_body(head, rule.body, namer))
        emitted[pred] = rules
        out.extend(rules)
    return Program(tuple(out))


def is_copy(rule: Rule) -> bool:
    """``p(x) :- q(x).`` with the same distinct variables in the same order: a union branch."""
    if len(rule.body) != 1 or not isinstance(rule.body[0], Literal) or not rule.body[0].positive:
        return False
    head, body = rule.head[0].args, rule.body[0].atom.args
    return head == body and all(isinstance(t, Var) and t.name != "_" for t in head) and len(set(head)) == len(head)


class _Namer:
    def __init__(self, pred: str):
        self.pred = pred
        self.count = 0

    def next(self) -> str:
        self.count += 1
        return f"aux{self.count}__{self.pred}"


def _distinct_vars(atom: Atom) -> tuple[Var, ...]:
    return tuple(dict.fromkeys(t for t in atom.args if isinstance(t, Var) and t.name != "_"))


def _vars(elements) -> list[Var]:
    return list(dict.fromkeys(v for e in elements for v in e.variables() if v.name != "_"))


def _body(head: Atom, body, namer: _Namer) -> list[Rule]:
    """Rules defining ``head`` from ``body``, one operator each, outermost operator first:
    projection, then selection by the comparisons, then one difference per negated literal,
    then binary joins of the positive literals."""
    positives = [b for b in body if isinstance(b, Literal) and b.positive]
    negatives = [b for b in body if isinstance(b, Literal) and not b.positive]
    comparisons = [b for b in body if isinstance(b, Comparison)]
    if len(body) == 1:
        return [Rule((head,), tuple(body))]  # permutation, projection, or `p :- not q.`
    if len(positives) == 1 and not negatives and set(head.variables()) == set(_vars(positives)):
        return [Rule((head,), tuple(body))]  # a selection (a projection as well is split below)
    rules: list[Rule] = []
    if not positives:
        # `p :- not a, not b.` is `p :- not u.` with the union `u :- a. u :- b.`
        union = Atom(namer.next(), ())
        rules.append(Rule((head,), (Literal(union, False), *comparisons)))
        rules.extend(Rule((union,), (Literal(n.atom),)) for n in negatives)
        return rules
    head_vars = list(_distinct_vars(head))
    all_vars = head_vars + [v for v in _vars(positives) if v not in head_vars]
    if list(head.args) == all_vars:
        current = head
    else:
        current = Atom(namer.next(), tuple(all_vars))
        rules.append(Rule((head,), (Literal(current),)))  # projection (or permutation)
    steps: list = ([comparisons] if comparisons else []) + list(reversed(negatives))
    for k, step in enumerate(steps):
        innermost = k == len(steps) - 1
        if innermost and len(positives) == 1 and positives[0].atom.args == current.args:
            inner = positives[0]  # the single positive literal already has the right shape
        else:
            inner = Literal(Atom(namer.next(), current.args))
        if isinstance(step, list):
            rules.append(Rule((current,), (inner, *step)))  # selection
        else:
            rules.append(Rule((current,), (inner, _projected(step, namer, rules))))  # difference
        if inner is positives[0] and innermost and len(positives) == 1:
            return rules
        current = inner.atom
    rules.extend(_joins(current, positives, namer))
    return rules


def _projected(literal: Literal, namer: _Namer, rules: list[Rule]) -> Literal:
    """``not r(X, _)`` becomes ``not auxN(X)`` with ``auxN(X) :- r(X, Y)`` (a projection)."""
    if not any(isinstance(t, Var) and t.name == "_" for t in literal.atom.args):
        return literal
    counter = iter(range(1, 100))
    args = tuple(Var(f"Any{next(counter)}") if isinstance(t, Var) and t.name == "_" else t for t in literal.atom.args)
    aux = Atom(namer.next(), _distinct_vars(literal.atom))
    rules.append(Rule((aux,), (Literal(Atom(literal.atom.pred, args)),)))
    return Literal(aux, False)


def _joins(target: Atom, positives: list[Literal], namer: _Namer) -> list[Rule]:
    """Binary joins, left to right: ``target`` is the join of all ``positives``."""
    if len(positives) == 1:
        return [Rule((target,), (positives[0],))]
    if len(positives) == 2:
        return [Rule((target,), tuple(positives))]
    left_vars = _vars(positives[:-1])
    left = Atom(namer.next(), tuple(left_vars))
    return [Rule((target,), (Literal(left), positives[-1])), *_joins(left, positives[:-1], namer)]
