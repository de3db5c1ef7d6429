"""Update propagation rules R∆ (seed 002, Def. 4) and transition rules R∆τ (Def. 5).

For normalized rules, ``ins__p``/``del__p`` hold the true insertions into and deletions from
``p`` (∆+p, ∆−p), ``new__p`` the new state (p^new); unadorned predicates are the old state. Each
operator gets its propagation rules: a join propagates a change of one side joined with the new
(insertions) or old (deletions) state of the other; a difference also propagates changes of its
negated side; a union and a projection test effectiveness against the old state (insertions:
``not p``) or the new one (deletions: ``not new__p``), since another derivation may exist.

The paper's example, §3 — the rules for ``p`` with respect to insertions into ``e``:

>>> from nablog.lang import parse
>>> from nablog.transforms.normalize import normalize
>>> program = normalize(parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y)."))
>>> print(restrict(propagation_rules(program), {"ins__e"}))
ins__p(X, Y) :- ins__e(X, Y), not p(X, Y).
ins__p(X, Y) :- ins__aux1__p(X, Y), not p(X, Y).
ins__aux1__p(X, Y) :- ins__aux2__p(X, Y, Z), not aux1__p(X, Y).
ins__aux2__p(X, Y, Z) :- ins__e(X, Z), new__p(Z, Y).
ins__aux2__p(X, Y, Z) :- ins__p(Z, Y), new__e(X, Z).
>>> print(transition_rules(program))
new__e(V1, V2) :- e(V1, V2), not del__e(V1, V2).
new__e(V1, V2) :- ins__e(V1, V2).
new__p(X, Y) :- new__e(X, Y).
new__p(X, Y) :- new__aux1__p(X, Y).
new__aux1__p(X, Y) :- new__aux2__p(X, Y, Z).
new__aux2__p(X, Y, Z) :- new__e(X, Z), new__p(Z, Y).
"""

from __future__ import annotations

from typing import Iterable

from ..lang import AnalysisError, Atom, Comparison, Literal, Program, Rule, Var
from .normalize import is_copy

INS, DEL, NEW = "ins__", "del__", "new__"


def ins(atom: Atom) -> Atom:
    return Atom(INS + atom.pred, atom.args)


def dele(atom: Atom) -> Atom:
    return Atom(DEL + atom.pred, atom.args)


def new(atom: Atom) -> Atom:
    return Atom(NEW + atom.pred, atom.args)


def pos(atom: Atom) -> Literal:
    return Literal(atom, True)


def neg(atom: Atom) -> Literal:
    return Literal(atom, False)


def operator(rule: Rule, siblings: int) -> str:
    """The relational operator of a normalized rule (seed 002, Def. 4, cases 1–5).

    ``siblings`` is the number of rules defining the same predicate; more than one makes a union.
    Comparisons next to a single literal are a selection (an extension of the paper's cases).
    """
    lits = [b for b in rule.body if isinstance(b, Literal)]
    comparisons = [b for b in rule.body if isinstance(b, Comparison)]
    positives = [b for b in lits if b.positive]
    head_vars = {v for v in rule.head[0].variables()}
    if siblings > 1:
        if is_copy(rule):
            return "union"
        raise AnalysisError(f"not normalized: {rule} is one of several rules for {rule.head[0].pred} but not a copy", rule.loc)
    if len(lits) == 2 and len(positives) == 2 and not comparisons:
        return "join"
    if len(lits) == 2 and len(positives) == 1 and not comparisons:
        return "difference"
    if len(lits) == 1 and positives and comparisons:
        return "selection"
    if len(lits) == 1 and positives:
        body_vars = {v for v in positives[0].variables() if v.name != "_"}
        return "permutation" if body_vars == head_vars else "projection"
    if len(lits) == 1 and not positives:
        return "negation"
    raise AnalysisError(f"not normalized: {rule} is not one relational operator", rule.loc, "run normalize first")


def propagation_rules(program: Program) -> Program:
    """R∆: the update propagation rules of a normalized program (seed 002, Def. 4)."""
    by_head: dict[str, int] = {}
    for rule in program.rules:
        if not rule.is_fact():
            by_head[rule.head[0].pred] = by_head.get(rule.head[0].pred, 0) + 1
    out: list[Rule] = []
    for rule in program.rules:
        if rule.is_fact():
            continue
        head = rule.head[0]
        kind = operator(rule, by_head[head.pred])
        lits = [b for b in rule.body if isinstance(b, Literal)]
        extra = tuple(b for b in rule.body if isinstance(b, Comparison))
        if kind == "join":
            q, r = lits[0].atom, lits[1].atom
            out += [
                Rule((ins(head),), (pos(ins(q)), pos(new(r)))),
                Rule((ins(head),), (pos(ins(r)), pos(new(q)))),
                Rule((dele(head),), (pos(dele(q)), pos(r))),
                Rule((dele(head),), (pos(dele(r)), pos(q))),
            ]
        elif kind == "difference":
            q = next(b.atom for b in lits if b.positive)
            r = next(b.atom for b in lits if not b.positive)
            out += [
                Rule((ins(head),), (pos(ins(q)), neg(new(r)))),
                Rule((ins(head),), (pos(dele(r)), pos(new(q)))),
                Rule((dele(head),), (pos(dele(q)), neg(r))),
                Rule((dele(head),), (pos(ins(r)), pos(q))),
            ]
        elif kind in ("union", "projection"):
            q = lits[0].atom
            out += [
                Rule((ins(head),), (pos(ins(q)), neg(head))),
                Rule((dele(head),), (pos(dele(q)), neg(new(head)))),
            ]
        elif kind in ("permutation", "selection"):
            q = lits[0].atom
            out += [Rule((ins(head),), (pos(ins(q)), *extra)), Rule((dele(head),), (pos(dele(q)), *extra))]
        else:  # negation: p :- not q.
            q = lits[0].atom
            out += [Rule((ins(head),), (pos(dele(q)),)), Rule((dele(head),), (pos(ins(q)),))]
    return Program(tuple(out))


def transition_rules(program: Program, base: Iterable[tuple[str, int]] | None = None) -> Program:
    """R∆τ: rules for the new state (seed 002, Def. 5): for each base relation
    ``new__p(x) :- p(x), not del__p(x).`` and ``new__p(x) :- ins__p(x).``, and for each rule its
    copy over the new state. ``base`` defaults to the program's body predicates without rules."""
    derived = program.derived
    if base is None:
        seen: dict[str, int] = {}
        for rule in program.rules:
            for b in rule.body:
                if isinstance(b, Literal) and b.atom.pred not in derived:
                    seen.setdefault(b.atom.pred, b.atom.arity)
        base = seen.items()
    out: list[Rule] = []
    for pred, arity in base:
        x = Atom(pred, tuple(Var(f"V{i + 1}") for i in range(arity)))
        out += [Rule((new(x),), (pos(x), neg(dele(x)))), Rule((new(x),), (pos(ins(x)),))]
    for rule in program.rules:
        if rule.is_fact():
            continue
        body = tuple(Literal(new(b.atom), b.positive) if isinstance(b, Literal) else b for b in rule.body)
        out.append(Rule(tuple(new(h) for h in rule.head), body))
    return Program(tuple(out))


def restrict(rules: Program, seeds: Iterable[str]) -> Program:
    """The propagation rules reachable from delta predicates ``seeds``: a rule is kept when the
    delta relation its body starts from is a seed or is derived by a kept rule."""
    reached = set(seeds)
    kept: list[Rule] = []
    changed = True
    while changed:
        changed = False
        for rule in rules.rules:
            if rule in kept:
                continue
            first = rule.body[0]
            if isinstance(first, Literal) and first.atom.pred in reached:
                kept.append(rule)
                heads = {h.pred for h in rule.head}
                changed = changed or not heads <= reached
                reached |= heads
    order = {id(r): i for i, r in enumerate(rules.rules)}
    return Program(tuple(sorted(kept, key=lambda r: order[id(r)])))
