"""IDB−: the ground IDB for insertions with respect to the least Herbrand model (seed 003, Def. 25).

Insertion is the mirror of deletion (Def. 26): to make a false atom true, each of its rule
instances whose head is *not* in the model ``S`` is a way; the atoms of its body that are in
``S`` already hold and need nothing, so they are dropped, and the atoms outside ``S`` are what
the insertion must achieve. IDB− keeps the instances with their head outside ``S`` and only the
body atoms outside ``S`` (a negated body atom inside ``S`` is to be deleted: ``neg__c``).

Seed 003, Example 2 with ``p`` and ``q`` not derived (say ``a`` deleted), inserting ``p``:

>>> from nablog.lang import parse
>>> idb = parse("p :- a, e. q :- a, f. p :- b, f. q :- b, e. p :- q. q :- a.")
>>> model = {"e": {()}, "f": {()}}
>>> print(idb_minus(idb, model))
p :- a.
q :- a.
p :- b.
q :- b.
p :- q.
q :- a.
"""

from __future__ import annotations

from collections.abc import Set
from typing import Mapping

from ..lang import Literal, Program, Rule
from .idb_plus import holds, require_ground
from .idb_transform import negated


def idb_minus(program: Program, model: Mapping[str, Set]) -> Program:
    """IDB− of ground rules with respect to the least Herbrand model ``model`` (Def. 25)."""
    out = []
    for rule in program.rules:
        if rule.is_fact():
            continue
        require_ground(rule, "IDB-")
        if all(holds(h, model) for h in rule.head):
            continue
        body = []
        for b in rule.body:
            if not isinstance(b, Literal):
                body.append(b)
            elif b.positive and not holds(b.atom, model):
                body.append(b)
            elif not b.positive and holds(b.atom, model):
                body.append(Literal(negated(b.atom)))
        out.append(Rule(rule.head, tuple(body)))
    return Program(tuple(out))


__all__ = ["idb_minus"]
