"""View-update rules R∇ (seed 002, Def. 9) and VU transition rules R∇τ (Def. 10).

``vu_ins__p``/``vu_del__p`` hold requests to insert into / delete from ``p`` (∇+p, ∇−p). The VU
rules run top-down, from a request on a view to requests on what defines it; alternatives are
disjunctive heads. For a projection ``p(x) :- q(x, Y).`` the value of ``Y`` is chosen among
candidate constants plus a new constant (Def. 9, case 5); they are given per attribute in
``domain`` (by default only the new constant ``new``).

The paper's example, §4.1 (the VU rules reachable from a request to insert into ``p``):

>>> from nablog.lang import parse
>>> from nablog.transforms.normalize import normalize
>>> from nablog.transforms.propagation import restrict
>>> program = normalize(parse('''p(X) :- q1(X). p(X) :- q2(X).
...     q1(X) :- r1(X), s(X). q2(X) :- r2(X), not s(X). au(X) :- q2(X), not q1(X).'''))
>>> print(restrict(view_update_rules(program), {"vu_ins__p"}))
vu_ins__q1(X) ; vu_ins__q2(X) :- vu_ins__p(X).
vu_ins__r1(X) :- vu_ins__q1(X), not r1(X).
vu_ins__s(X) :- vu_ins__q1(X), not s(X).
vu_ins__r2(X) :- vu_ins__q2(X), not r2(X).
vu_del__s(X) :- vu_ins__q2(X), s(X).
"""

from __future__ import annotations

import itertools
from typing import Iterable, Mapping

from ..lang import Atom, Constant, Literal, Program, Requirement, Rule, Var
from .propagation import dele, ins, neg, operator, pos

VU_INS, VU_DEL = "vu_ins__", "vu_del__"
FALSE = Atom("false", ())


def vu_ins(atom: Atom) -> Atom:
    return Atom(VU_INS + atom.pred, atom.args)


def vu_del(atom: Atom) -> Atom:
    return Atom(VU_DEL + atom.pred, atom.args)


def view_update_rules(program: Program, domain: Mapping[tuple[str, int], Iterable[Constant]] | None = None, fresh: str = "new") -> Program:
    """R∇: the view-update rules of a normalized program (seed 002, Def. 9).

    ``domain`` maps (predicate, argument position) to the candidate constants for an existential
    variable at that position of a projection; ``fresh`` names the new constant ``c_new``.
    """
    domain = domain or {}
    by_head: dict[str, list[Rule]] = {}
    for rule in program.rules:
        if not rule.is_fact():
            by_head.setdefault(rule.head[0].pred, []).append(rule)
    out: list[Rule] = []
    unions_done: set[str] = set()
    for rule in program.rules:
        if rule.is_fact():
            continue
        head = rule.head[0]
        kind = operator(rule, len(by_head[head.pred]))
        lits = [b for b in rule.body if isinstance(b, Literal)]
        extra = tuple(b for b in rule.body if not isinstance(b, Literal))
        if kind == "join":
            q, r = lits[0].atom, lits[1].atom
            out += [
                Rule((vu_ins(q),), (pos(vu_ins(head)), neg(q))),
                Rule((vu_ins(r),), (pos(vu_ins(head)), neg(r))),
                Rule((vu_del(q), vu_del(r)), (pos(vu_del(head)),)),
            ]
        elif kind == "difference":
            q = next(b.atom for b in lits if b.positive)
            r = next(b.atom for b in lits if not b.positive)
            out += [
                Rule((vu_ins(q),), (pos(vu_ins(head)), neg(q))),
                Rule((vu_del(r),), (pos(vu_ins(head)), pos(r))),
                Rule((vu_del(q), vu_ins(r)), (pos(vu_del(head)),)),
            ]
        elif kind == "union":
            q = lits[0].atom
            out.append(Rule((vu_del(q),), (pos(vu_del(head)), pos(q))))
            if head.pred not in unions_done:
                unions_done.add(head.pred)
                # Each branch is a copy p(x) :- q(x); name its variables after this rule's head.
                branches = []
                for r in by_head[head.pred]:
                    renaming = dict(zip(r.head[0].args, head.args))
                    branch = r.body[0].atom  # type: ignore[union-attr]
                    branches.append(vu_ins(Atom(branch.pred, tuple(renaming.get(t, t) for t in branch.args))))
                out.append(Rule(tuple(dict.fromkeys(branches)), (pos(vu_ins(head)),)))
        elif kind in ("permutation", "selection"):
            q = lits[0].atom
            out += [Rule((vu_ins(q),), (pos(vu_ins(head)), *extra)), Rule((vu_del(q),), (pos(vu_del(head)), *extra))]
        elif kind == "projection":
            q = lits[0].atom
            out.append(Rule((vu_del(q),), (pos(vu_del(head)), pos(q))))
            head_vars = set(head.variables())
            free = [(i, t) for i, t in enumerate(q.args) if isinstance(t, Var) and t not in head_vars]
            choices = [list(domain.get((q.pred, i), ())) + [fresh] for i, _ in free]
            alternatives = []
            for values in itertools.product(*choices):
                binding = {t: v for (_, t), v in zip(free, values)}
                alternatives.append(vu_ins(Atom(q.pred, tuple(binding.get(t, t) for t in q.args))))
            out.append(Rule(tuple(dict.fromkeys(alternatives)), (pos(vu_ins(head)),)))
        else:  # negation: p :- not q.
            q = lits[0].atom
            out += [Rule((vu_del(q),), (pos(vu_ins(head)),)), Rule((vu_ins(q),), (pos(vu_del(head)),))]
    return Program(tuple(out))


def view_update_transitions(program: Program, vu_rules: Program) -> Program:
    """R∇τ (seed 002, Def. 10): contradictions, repair of constraints, compensation of side
    effects, and the rules starting the bottom-up phase."""
    out: list[Rule] = []
    arities = program.signatures
    derived = program.derived
    # 1. A fact both to be inserted and deleted is a contradiction.
    for pred, arity in sorted(arities.items()):
        x = Atom(pred, tuple(Var(f"V{i + 1}") for i in range(arity)))
        out.append(Rule((FALSE,), (pos(vu_ins(x)), pos(vu_del(x)))))
    # 2. A required atom that is deleted must be inserted again.
    for c in program.statements:
        if isinstance(c, Requirement):
            out.append(Rule((vu_ins(c.atom),), (pos(dele(c.atom)),)))
    # 3. Side effects: a request that relied on q being false (true) meets an insertion (deletion) of q.
    for rule in vu_rules.rules:
        if len(rule.head) != 1 or len(rule.body) < 2:
            continue
        trigger, side = rule.body[0], rule.body[1]
        if not (isinstance(side, Literal) and isinstance(trigger, Literal)):
            continue
        target = rule.head[0]
        q = side.atom
        if side.positive and target.pred.startswith(VU_DEL):
            out.append(Rule((target,), (trigger, neg(q), pos(ins(q)))))
        elif not side.positive and target.pred.startswith(VU_INS):
            out.append(Rule((target,), (trigger, pos(q), pos(dele(q)))))
    # 4. Requests on base relations start the bottom-up phase (with an effectiveness test).
    for pred, arity in sorted(arities.items()):
        if pred in derived:
            continue
        x = Atom(pred, tuple(Var(f"V{i + 1}") for i in range(arity)))
        out += [Rule((ins(x),), (pos(vu_ins(x)), neg(x))), Rule((dele(x),), (pos(vu_del(x)), pos(x)))]
    return Program(tuple(out))
