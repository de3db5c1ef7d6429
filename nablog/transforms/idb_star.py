"""IDB*: the IDB transformed with respect to every EDB fact and every IDB atom (seed 003, Def. 13).

With ``S0 = EDB ∪ {A | A a ground IDB atom}`` every IDB atom and every base atom moves
(Def. 12): a rule ``p ← b1 ∧ … ∧ bn`` becomes ``¬b1 ∨ … ∨ ¬bn ← ¬p`` — to delete ``p``, delete
one atom of each of its derivations. IDB* has no facts, so with a delete request ``¬A ←`` added
the request is the only fact and a bottom-up hyper tableau is focused on it (Def. 14). Base atoms
of the rules are taken as a whole predicate: ``HS(b)`` keeps only the ``¬A`` with ``A`` in the EDB.

Seed 003, Example 2:

>>> from nablog.lang import parse
>>> print(idb_star(parse("p :- a, e. q :- a, f. p :- b, f. q :- b, e. p :- q. q :- a. a. e. f.")))
neg__a ; neg__e :- neg__p.
neg__a ; neg__f :- neg__q.
neg__b ; neg__f :- neg__p.
neg__b ; neg__e :- neg__q.
neg__q :- neg__p.
neg__a :- neg__q.
"""

from __future__ import annotations

from ..lang import Literal, Program
from .idb_transform import transform_wrt


def idb_star(program: Program) -> Program:
    """IDB* of a definite program (seed 003, Def. 13); see the module docstring."""
    preds = set(program.derived)
    for rule in program.rules:
        preds.update(b.atom.pred for b in rule.body if isinstance(b, Literal))
    return transform_wrt(program, preds)


__all__ = ["idb_star"]
