"""The IDB transformation with respect to a set of atoms (seed 003, Def. 12).

Every atom ``A`` of a rule that is in ``S`` changes side: from the body it moves to the head as
``¬A``, from the head to the body as ``¬A``. ``¬A`` is an atom of its own (Note 2: the sign is
part of the predicate symbol), written ``neg__a``; it reads "``A`` is deleted". The paper states
the transformation for definite rules; a negated body literal ``not c`` is not an atom of the
body in that sense and stays where it is. ``S`` holds ground atoms and predicate names (a name
stands for every atom of that predicate), so that non-ground rules can be transformed too.

Seed 003, Example 2, with ``S`` = ``{p, a}`` (IDB* moves every atom, see :mod:`.idb_star`):

>>> from nablog.lang import parse
>>> idb = parse("p :- a, e. q :- a, f. p :- b, f. q :- b, e. p :- q. q :- a.")
>>> print(transform_wrt(idb, {"p", "a"}))
neg__a :- neg__p, e.
neg__a ; q :- f.
:- neg__p, b, f.
q :- b, e.
:- neg__p, q.
neg__a ; q.

Only the atoms in ``S`` move; the others keep their side:

>>> print(transform_wrt(parse("p(X) :- e(X, Y), f(Y)."), {"p", "e"}))
neg__e(X, Y) :- neg__p(X), f(Y).
"""

from __future__ import annotations

from typing import Iterable

from ..lang import Atom, Denial, Literal, Program, Rule

NEG = "neg__"


def negated(atom: Atom) -> Atom:
    """``¬A`` as an atom: ``neg__a``."""
    return Atom(NEG + atom.pred, atom.args)


def transform_wrt(program: Program, atoms: Iterable[Atom | str]) -> Program:
    """The transformation of the program's rules with respect to ``atoms`` (seed 003, Def. 12);
    facts and other statements are dropped (the transformed IDB has no facts, §4.1), and a rule
    left with an empty head is written as a denial."""
    chosen = set(atoms)

    def member(atom: Atom) -> bool:
        return atom.pred in chosen or (atom.is_ground() and atom in chosen)

    out: list[Rule | Denial] = []
    for rule in program.rules:
        if rule.is_fact():
            continue
        head = [negated(b.atom) for b in rule.body if isinstance(b, Literal) and b.positive and member(b.atom)]
        head += [h for h in rule.head if not member(h)]
        body = [Literal(negated(h)) for h in rule.head if member(h)]
        body += [b for b in rule.body if not (isinstance(b, Literal) and b.positive and member(b.atom))]
        # A rule whose head atoms all moved is a denial: the deletion must not happen.
        out.append(Rule(tuple(head), tuple(body)) if head else Denial(tuple(body)))
    return Program(tuple(out))


__all__ = ["NEG", "negated", "transform_wrt"]
