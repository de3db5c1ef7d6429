"""IDB**: the IDB transformation for insertions (seed 003, Def. 17, Note 3).

The paper transforms with respect to the same set as IDB* (``S1 = EDB ∪`` every ground IDB
atom) and reads the result the other way round: the clauses say which atoms an insertion needs.
Read for an insertion request ``A ←``, the clause ``¬b1 ∨ … ∨ ¬bn ← ¬p`` of a rule
``p ← b1 ∧ … ∧ bn`` is the contrapositive of what insertion uses — ``p`` is inserted through
*one* of its rules once *all* its body atoms hold — so this module gives both forms: the IDB**
clauses as Def. 17 writes them, and (``calls=True``) the top-down form the update tableau runs
with the magic-set reading of Def. 18: ``use__p__k ; … :- p.`` picks a rule ``k`` of ``p``, and
``b :- use__p__k.`` asks for each of its body atoms.

Seed 003, Example 2, inserting into ``p``:

>>> from nablog.lang import parse
>>> idb = parse("p :- a, e. q :- a, f. p :- b, f. q :- b, e. p :- q. q :- a.")
>>> print(idb_star_star(idb, calls=True))
use__p__1 ; use__p__2 ; use__p__3 :- p.
a :- use__p__1.
e :- use__p__1.
b :- use__p__2.
f :- use__p__2.
q :- use__p__3.
use__q__1 ; use__q__2 ; use__q__3 :- q.
a :- use__q__1.
f :- use__q__1.
b :- use__q__2.
e :- use__q__2.
a :- use__q__3.

It is defined for propositional (ground) rules, where a rule is chosen as a whole; for rules
with variables the solver grounds the relevant instances first (``nablog.solver.ground``).
"""

from __future__ import annotations

from ..lang import AnalysisError, Atom, Literal, Program, Rule
from .idb_star import idb_star


def idb_star_star(program: Program, calls: bool = False) -> Program:
    """IDB** (seed 003, Def. 17): as IDB*; with ``calls=True`` its insertion reading (see above)."""
    if not calls:
        return idb_star(program)
    by_head: dict[Atom, list[Rule]] = {}
    for rule in program.rules:
        if rule.is_fact():
            continue
        if not all(a.is_ground() for a in rule.head) or any(v for b in rule.body for v in b.variables()):
            raise AnalysisError(f"IDB** with calls needs ground rules: {rule}", rule.loc, "ground the relevant instances first")
        by_head.setdefault(rule.head[0], []).append(rule)
    out: list[Rule] = []
    for head, rules in by_head.items():
        uses = [Atom(f"use__{head.pred}__{k + 1}", head.args) for k in range(len(rules))]
        out.append(Rule(tuple(uses), (Literal(head),)))
        for use, rule in zip(uses, rules):
            for b in rule.body:
                if isinstance(b, Literal) and b.positive:
                    out.append(Rule((b.atom,), (Literal(use),)))
    return Program(tuple(out))


__all__ = ["idb_star_star"]
