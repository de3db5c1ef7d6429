"""Maintenance rules: seed 001's Algorithm 1, a declarative program computing view differentials.

For each rule ``p :- r1, ..., rn`` of the program the rewrite emits (Staudt & Jarke, seed 001 §3.1):

- (Dᵢ) ``del__p :- r1, ..., del__ri, ..., rn.`` — every possible deletion (an overestimate);
- (N1) ``new__p :- p, not del__p.`` — what surely stays;
- (N′) ``new__r :- r, not del__r.`` and (N″) ``new__r :- ins__r.`` for each body predicate ``r``
  the program does not define (a base relation, or one of a lower layer, §4.2);
- (R) ``red__p :- del__p, new__r1, ..., new__rn.`` and (N2) ``new__p :- red__p.`` — the
  overestimated deletions that have another derivation in the new state;
- (Iᵢ) ``ins__p :- new__r1, ..., ins__ri, ..., new__rn.`` and (N3) ``new__p :- ins__p.`` —
  semi-naive insertion over the new state;
- (E1) ``plus__p :- ins__p, not p.`` and (E2) ``minus__p :- del__p, not ins__p, not red__p.`` —
  the net differentials (Theorem 1: exactly new minus old and old minus new).

For a negated body literal ``not ri`` (§4.2) the delta swaps sides: (Dᵢ) uses ``ins__ri`` and
(Iᵢ) uses ``del__ri``, while every other occurrence keeps its sign. A negated literal with
anonymous variables (``not r(X, _)``) also keeps its own test in those two rules, old state in
(Dᵢ) and new in (Iᵢ): one inserted or deleted ``r`` tuple does not decide it. Comparisons are kept in every
rule. Unadorned predicates are the old state; ``ins__r``/``del__r`` of a predicate the program does
not define are inputs (the base change, or the net change of a lower layer).

Example 1 of the paper, the transitive closure (rules listed per predicate: the (Dᵢ) of every
rule, (N1), (N′), the (R) of every rule, (N2), the (Iᵢ), (N3), (N″), (E1), (E2)):

>>> from nablog.lang import parse
>>> print(maintenance_rules(parse("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y).")))
del__closure(X, Y) :- del__edge(X, Y).
del__closure(X, Y) :- del__edge(X, Z), closure(Z, Y).
del__closure(X, Y) :- edge(X, Z), del__closure(Z, Y).
new__closure(X, Y) :- closure(X, Y), not del__closure(X, Y).
new__edge(V1, V2) :- edge(V1, V2), not del__edge(V1, V2).
red__closure(X, Y) :- del__closure(X, Y), new__edge(X, Y).
red__closure(X, Y) :- del__closure(X, Y), new__edge(X, Z), new__closure(Z, Y).
new__closure(X, Y) :- red__closure(X, Y).
ins__closure(X, Y) :- ins__edge(X, Y).
ins__closure(X, Y) :- ins__edge(X, Z), new__closure(Z, Y).
ins__closure(X, Y) :- new__edge(X, Z), ins__closure(Z, Y).
new__closure(X, Y) :- ins__closure(X, Y).
new__edge(V1, V2) :- ins__edge(V1, V2).
plus__closure(X, Y) :- ins__closure(X, Y), not closure(X, Y).
minus__closure(X, Y) :- del__closure(X, Y), not ins__closure(X, Y), not red__closure(X, Y).
"""

from __future__ import annotations

from ..lang import Atom, Comparison, Literal, Program, Rule, Var
from .propagation import DEL, INS, NEW

RED, PLUS, MINUS = "red__", "plus__", "minus__"


def renamed(prefix: str, atom: Atom) -> Atom:
    """``atom`` with its predicate prefixed (``del__``, ``ins__``, ``new__``, ``red__``, ...)."""
    return Atom(prefix + atom.pred, atom.args, atom.loc)


def _general(pred: str, arity: int) -> Atom:
    return Atom(pred, tuple(Var(f"V{i + 1}") for i in range(arity)))


def maintenance_rules(program: Program, only_new: bool = False) -> Program:
    """Algorithm 1 of seed 001 applied to every rule of ``program`` (facts and constraints dropped).

    Body predicates without rules in ``program`` are treated as base relations: they get (N′) and
    (N″), and their ``ins__``/``del__`` relations are the inputs of the maintenance program.

    ``only_new`` adds ``not p(..)``, the head in the old state, to each (Iᵢ) rule: ``ins__p`` holds
    the tuples new to ``p`` only. As written, (Iᵢ) derives every pair a change reaches — anc(a) ×
    desc(b) for one edge (a, b) of a transitive closure, 24.7 M tuples on a dense graph for a net
    change of none; so, an old tuple derived again derives nothing further. The differentials stay
    exact: a tuple new to the state has a derivation with a body tuple new to it (the recursion is
    positive within a layer, lower layers' deltas are net), which by induction is in ``ins__``, so
    the tuple is derived by that literal's (Iᵢ); an old tuple true again is in ``red__p`` ((R)
    reads the complete ``new__`` state), which is what (E2) needs, and (E1) is then ``ins__p``.

    >>> from nablog.lang import parse
    >>> rules = maintenance_rules(parse("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y)."), only_new=True)
    >>> print(Program(tuple(r for r in rules.rules if r.head[0].pred == "ins__closure")))
    ins__closure(X, Y) :- ins__edge(X, Y), not closure(X, Y).
    ins__closure(X, Y) :- ins__edge(X, Z), new__closure(Z, Y), not closure(X, Y).
    ins__closure(X, Y) :- new__edge(X, Z), ins__closure(Z, Y), not closure(X, Y).
    """
    rules = [r for r in program.rules if not r.is_fact()]
    defined = {r.head[0].pred for r in rules}
    by_head: dict[str, list[Rule]] = {}
    for rule in rules:
        by_head.setdefault(rule.head[0].pred, []).append(rule)
    out: list[Rule] = []
    for pred, own in by_head.items():
        head = _general(pred, own[0].head[0].arity) if len({r.head[0] for r in own}) > 1 else own[0].head[0]
        # Base predicates read by this predicate's rules, in first-use order, for (N') and (N'').
        base: dict[str, int] = {}
        for rule in own:
            for b in rule.body:
                if isinstance(b, Literal) and b.atom.pred not in defined:
                    base.setdefault(b.atom.pred, b.atom.arity)
        out += [d for rule in own for d in deletion_rules(rule)]
        out.append(Rule((renamed(NEW, head),), (Literal(head), Literal(renamed(DEL, head), False))))  # (N1)
        for name, arity in base.items():  # (N')
            x = _general(name, arity)
            out.append(Rule((renamed(NEW, x),), (Literal(x), Literal(renamed(DEL, x), False))))
        out += [rederivation_rule(rule) for rule in own]  # (R)
        out.append(Rule((renamed(NEW, head),), (Literal(renamed(RED, head)),)))  # (N2)
        out += [i for rule in own for i in _insertions(rule, only_new)]
        out.append(Rule((renamed(NEW, head),), (Literal(renamed(INS, head)),)))  # (N3)
        for name, arity in base.items():  # (N'')
            x = _general(name, arity)
            out.append(Rule((renamed(NEW, x),), (Literal(renamed(INS, x)),)))
        out.append(Rule((renamed(PLUS, head),), (Literal(renamed(INS, head)), Literal(head, False))))  # (E1)
        out.append(
            Rule(
                (renamed(MINUS, head),),
                (Literal(renamed(DEL, head)), Literal(renamed(INS, head), False), Literal(renamed(RED, head), False)),
            )
        )  # (E2)
    # A predicate read by several predicates gets (N') and (N'') once.
    seen: set[Rule] = set()
    unique = [r for r in out if not (r in seen or seen.add(r))]
    return Program(tuple(unique))


def deletion_rules(rule: Rule) -> list[Rule]:
    """(Dᵢ) for each literal: its delta (``del__`` if positive, ``ins__`` if negated, §4.2) with the
    old state of every other literal."""
    return _delta_rules(rule, DEL, INS, lambda element: element)


def _insertions(rule: Rule, only_new: bool) -> list[Rule]:
    """(Iᵢ) for each literal: its delta (``ins__`` if positive, ``del__`` if negated, §4.2) with the
    new state of every other literal; with ``only_new``, for heads not in the old state (see
    :func:`maintenance_rules`)."""
    out = _delta_rules(rule, INS, DEL, _new)
    return [Rule(r.head, r.body + (Literal(rule.head[0], False),)) for r in out] if only_new else out


def _delta_rules(rule: Rule, same: str, swapped: str, state) -> list[Rule]:
    """One rule per body literal: ``same``-prefixed head from that literal's delta (``same`` when
    positive, ``swapped`` when negated) and ``state`` applied to every other element."""
    out = []
    for i, b in enumerate(rule.body):
        if not isinstance(b, Literal):
            continue
        delta = Literal(renamed(same if b.positive else swapped, b.atom))
        body = tuple(delta if j == i else state(other) for j, other in enumerate(rule.body))
        if not b.positive and _projects(b):
            # ``not r(X, _)`` is about every ``r(X, _)``: one changed tuple does not decide it,
            # so the literal keeps its own test (old state for deletions, new for insertions).
            body += (state(b),)
        out.append(Rule((renamed(same, rule.head[0]),), body))
    return out


def _projects(literal: Literal) -> bool:
    """Whether a literal has anonymous variables: its negation is about a projection, so one
    changed tuple does not decide it (an extension of §4.2, which binds every variable)."""
    return any(v.name == "_" for v in literal.variables())


def rederivation_rule(rule: Rule) -> Rule:
    """(R): an overestimated deletion that the rule derives again over the new state."""
    return Rule((renamed(RED, rule.head[0]),), (Literal(renamed(DEL, rule.head[0])), *map(_new, rule.body)))


def _new(element: Literal | Comparison) -> Literal | Comparison:
    return Literal(renamed(NEW, element.atom), element.positive) if isinstance(element, Literal) else element


__all__ = ["MINUS", "PLUS", "RED", "deletion_rules", "maintenance_rules", "rederivation_rule", "renamed"]
