"""Integrity constraints as the repair room sees them: trusted Δ and global Γ, origins, shapes, signs.

A database ⟨F, Δ, Γ⟩ (seed 004, Def. 2.1) has trusted constraints Δ, which hold in F and are
enforced elsewhere (by a source), and global constraints Γ, which may be violated. In a nablog
program every constraint is global unless ``#trusted`` names it. ``#fd``, ``#key`` and ``#fk``
shorthands are compiled to denials by the language (:meth:`nablog.lang.Dependency.denials`); here
each compiled denial remembers the shorthand it came from, and denials of the functional-dependency
shape (two atoms of one relation agreeing on some columns, differing on one) are recognized
whoever wrote them, so that their violations can be found by grouping rather than by a self-join.

>>> from nablog.lang import parse
>>> info = constraint_infos(parse('''
...     #columns m(husband, wife).
...     #fd m: husband -> wife.
...     #constraint no_self :- m(X, X).
...     #trusted no_self.'''))
>>> [(c.name, c.trusted, c.fd is not None, str(c.origin)) for c in info]
[('fd_m__husband__wife', False, True, '#fd m: husband -> wife.'), ('no_self', True, False, 'None')]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..lang import AnalysisError, Denial, Dependency, FdShape, Literal, Program, Requirement, TrustDeclaration, fd_shape
from ..lang.errors import did_you_mean


@dataclass(frozen=True)
class ConstraintInfo:
    """One constraint of the program: its name, whether it is trusted (Δ) or global (Γ), the
    shorthand it was compiled from (if any) and its functional-dependency shape (if it has one)."""

    name: str
    constraint: Denial | Requirement
    trusted: bool
    origin: Dependency | None
    fd: FdShape | None

    @property
    def text(self) -> str:
        return str(self.origin) if self.origin is not None else str(self.constraint)


def constraint_infos(program: Program) -> list[ConstraintInfo]:
    """Every constraint of ``program`` in program order, with trust, origin and shape.

    Raises AnalysisError when ``#trusted`` names a constraint the program does not have.
    """
    named = program.named_constraints()
    # Program.constraints lists each shorthand's denials in place of the shorthand.
    by_position: dict[int, Dependency] = {}
    position = 0
    for statement in program.statements:
        if isinstance(statement, (Denial, Requirement)):
            position += 1
        elif isinstance(statement, Dependency):
            for _ in statement.denials(program.signatures, program.column_names, program.null_values):
                by_position[position] = statement
                position += 1
    names = {name for name, _ in named}
    for statement in program.statements:
        if isinstance(statement, TrustDeclaration):
            for name in statement.names:
                if name not in names:
                    raise AnalysisError(
                        f"#trusted names {name}, but the program has no constraint of that name",
                        statement.loc,
                        did_you_mean(name, names) or "name constraints with #constraint NAME :- ... or #fd NAME r: a -> b.",
                    )
    trusted = program.trusted
    out = []
    for i, (name, c) in enumerate(named):
        fd = fd_shape(c) if isinstance(c, Denial) else None
        out.append(ConstraintInfo(name, c, name in trusted, by_position.get(i), fd))
    return out


def body_predicates(constraint: Denial | Requirement) -> Iterable[tuple[str, bool]]:
    """(predicate, positive) for each database literal of a constraint (a requirement is positive)."""
    if isinstance(constraint, Requirement):
        yield constraint.atom.pred, True
        return
    for b in constraint.body:
        if isinstance(b, Literal):
            yield b.atom.pred, b.positive


def base_signs(program: Program, constraints: Iterable[Denial | Requirement]) -> dict[str, set[bool]]:
    """The signs with which each base relation occurs in the constraints once views are unfolded
    (a view read under ``not`` flips the signs of what it reads). A requirement ``#require a`` is
    read as the denial ``:- not a``."""
    derived = program.derived
    reads: dict[str, list[tuple[str, bool]]] = {}
    for rule in program.rules:
        for head in rule.head:
            reads.setdefault(head.pred, []).extend((b.atom.pred, b.positive) for b in rule.body if isinstance(b, Literal))
    signs: dict[str, set[bool]] = {}
    seen: set[tuple[str, bool]] = set()
    stack = []
    for c in constraints:
        for pred, positive in body_predicates(c):
            stack.append((pred, positive if isinstance(c, Denial) else not positive))
    while stack:
        pred, positive = stack.pop()
        if (pred, positive) in seen:
            continue
        seen.add((pred, positive))
        if pred in derived:
            stack.extend((p, positive == s) for p, s in reads.get(pred, ()))
        if pred not in derived or any(r.is_fact() for r in program.rules if r.head[0].pred == pred):
            signs.setdefault(pred, set()).add(positive)
    return signs


def consistently_signed(program: Program, constraints: Iterable[Denial | Requirement]) -> bool:
    """Seed 004, §5, case 1: no base relation occurs both positively and negatively in Δ ∪ Γ, so
    correcting one violated instance never makes another one hold.

    >>> from nablog.lang import parse
    >>> p = parse(":- p(X), q(X). :- r(X), not s(X).")
    >>> consistently_signed(p, p.constraints), consistently_signed(p, p.constraints + parse(":- s(X), t(X).").constraints)
    (True, False)
    """
    return all(len(s) == 1 for s in base_signs(program, constraints).values())


def uses_views(program: Program, constraints: Iterable[Denial | Requirement]) -> bool:
    """Whether a constraint reads a derived relation (its repairs then go through the rules)."""
    derived = program.derived
    return any(pred in derived for c in constraints for pred, _ in body_predicates(c))


__all__ = [
    "ConstraintInfo", "FdShape", "base_signs", "body_predicates", "constraint_infos", "consistently_signed",
    "fd_shape", "uses_views",
]
