"""Program: the statements of one or more files, and how they split into rules and base facts.

>>> prog = parse("e(1,2). p(X,Y) :- e(X,Y). p(5,5).")
>>> rules, facts = separate_facts(prog)
>>> print(rules)
p(X, Y) :- e(X, Y).
p(V1, V2) :- base__p(V1, V2).
>>> sorted(facts.items())
[('base__p', {(5, 5)}), ('e', {(1, 2)})]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from collections.abc import Set as AbstractSet
from typing import Iterable, Iterator, Mapping

from .ast import (
    Atom,
    BaseDeclaration,
    ColumnsDeclaration,
    Constant,
    Denial,
    Dependency,
    Literal,
    NullDeclaration,
    Protection,
    Requirement,
    Rule,
    Statement,
    TrustDeclaration,
    Var,
)
from .delta import SPLIT_PREFIX
from .errors import NablogError
from .parser import parse_statements

Facts = dict[str, set[tuple[Constant, ...]]]
"""Relation name to a set of tuples of constants: what engines take and give."""



def base_part(pred: str) -> str:
    """The base relation holding the stored facts of a predicate that also has rules (seed 002 §2.1)."""
    return SPLIT_PREFIX + pred


@dataclass(frozen=True)
class Program:
    """Statements in source order: rules (facts are rules with no body), constraints, declarations."""

    statements: tuple[Statement, ...] = ()

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        return tuple(s for s in self.statements if isinstance(s, Rule))

    @cached_property
    def denials(self) -> tuple[Denial, ...]:
        return tuple(s for s in self.statements if isinstance(s, Denial))

    @cached_property
    def requirements(self) -> tuple[Requirement, ...]:
        return tuple(s for s in self.statements if isinstance(s, Requirement))

    @cached_property
    def constraints(self) -> tuple[Denial | Requirement, ...]:
        """Denials and requirements in program order; ``#fd``, ``#key`` and ``#fk`` shorthands are
        compiled to their denials in place (see :meth:`Dependency.denials`)."""
        out: list[Denial | Requirement] = []
        for s in self.statements:
            if isinstance(s, (Denial, Requirement)):
                out.append(s)
            elif isinstance(s, Dependency):
                out.extend(s.denials(self.signatures, self.column_names, self.null_values))
        return tuple(out)

    @cached_property
    def column_names(self) -> dict[str, tuple[str, ...]]:
        """``#columns`` declarations: relation name to its column names."""
        return {s.pred: s.columns for s in self.statements if isinstance(s, ColumnsDeclaration)}

    @cached_property
    def null_values(self) -> tuple[Constant, ...]:
        """Values a foreign key treats as null: ``""`` and every ``#null`` value."""
        return tuple(dict.fromkeys(["", *(v for s in self.statements if isinstance(s, NullDeclaration) for v in s.values)]))

    @cached_property
    def trusted(self) -> frozenset[str]:
        """Names of the trusted constraints Δ (``#trusted``); every other constraint is global (Γ)."""
        return frozenset(n for s in self.statements if isinstance(s, TrustDeclaration) for n in s.names)

    @cached_property
    def declared_base(self) -> frozenset[tuple[str, int]]:
        return frozenset(sig for s in self.statements if isinstance(s, BaseDeclaration) for sig in s.signatures)

    @cached_property
    def protected(self) -> tuple[str | Atom, ...]:
        """``#protect`` items: relation names and single facts that view updates must not change."""
        return tuple(
            item if isinstance(item, Atom) else item[0]
            for s in self.statements
            if isinstance(s, Protection)
            for item in s.items
        )

    @cached_property
    def derived(self) -> frozenset[str]:
        """Predicates defined by at least one rule with a body (or a non-ground head)."""
        return frozenset(a.pred for r in self.rules if not r.is_fact() for a in r.head)

    def atoms(self) -> Iterator[Atom]:
        """Every atom of every statement, heads and bodies, in order."""
        for s in self.statements:
            if isinstance(s, Rule):
                yield from s.head
            if isinstance(s, (Rule, Denial)):
                for b in s.body:
                    if hasattr(b, "atom"):
                        yield b.atom  # type: ignore[union-attr]
            if isinstance(s, Requirement):
                yield s.atom
            if isinstance(s, Protection):
                yield from (i for i in s.items if isinstance(i, Atom))

    @cached_property
    def signatures(self) -> dict[str, int]:
        """Predicate name to arity (the first one seen; analysis reports clashes)."""
        out: dict[str, int] = {}
        for pred, arity in sorted(self.declared_base):
            out.setdefault(pred, arity)
        for s in self.statements:
            if isinstance(s, ColumnsDeclaration):
                out.setdefault(s.pred, len(s.columns))
        for atom in self.atoms():
            out.setdefault(atom.pred, atom.arity)
        return out

    def constants(self) -> set[Constant]:
        out: set[Constant] = set()
        for s in self.statements:
            if isinstance(s, (Rule, Denial)):
                for b in s.body:
                    out.update(t for t in _terms(b) if not isinstance(t, Var))
            if isinstance(s, Rule):
                for a in s.head:
                    out.update(t for t in a.args if not isinstance(t, Var))
            if isinstance(s, Requirement):
                out.update(s.atom.args)  # type: ignore[arg-type]
        return out

    def named_constraints(self) -> list[tuple[str, Denial | Requirement]]:
        """Every constraint with its name, in program order (see :func:`constraint_name`)."""
        return [(constraint_name(c, i + 1), c) for i, c in enumerate(self.constraints)]

    def __add__(self, other: "Program") -> "Program":
        return Program(self.statements + other.statements)

    def with_statements(self, statements: Iterable[Statement]) -> "Program":
        return Program(self.statements + tuple(statements))

    def __str__(self) -> str:
        return "\n".join(str(s) for s in self.statements)


def constraint_name(constraint: Denial | Requirement, index: int) -> str:
    """A constraint's name: its ``#constraint`` name, the required atom, or where it was written
    (``file:line``); ``denial_<index>`` for a denial built in code."""
    if isinstance(constraint, Requirement):
        return constraint.name
    if constraint.name:
        return constraint.name
    if constraint.loc is not None:
        return f"{constraint.loc.source.name}:{constraint.loc.line}"
    return f"denial_{index}"


def _terms(element) -> tuple:
    if hasattr(element, "atom"):
        return element.atom.args
    return (element.left, element.right)


def parse(text: str, source: str = "<string>") -> Program:
    """Parse program text; ``source`` names it in error messages.

    >>> print(parse("p(X) :- q(X), not r(X).  % a comment"))
    p(X) :- q(X), not r(X).
    """
    return Program(tuple(parse_statements(text, source)))


def read_text(path: str | Path) -> str:
    """Read a text file, or raise a NablogError naming it."""
    p = Path(path)
    try:
        return p.read_bytes().decode("utf-8")  # exactly: a CR inside a string stays a CR
    except FileNotFoundError:
        raise NablogError(f"cannot read {p}: no such file", where=str(p), hint="check the path") from None
    except IsADirectoryError:
        raise NablogError(
            f"cannot read {p}: it is a directory", where=str(p), hint="give data directories with --data DIR"
        ) from None
    except UnicodeDecodeError as e:
        raise NablogError(
            f"cannot read {p}: not UTF-8 text (byte {e.start})", where=str(p), hint="save the file as UTF-8"
        ) from None
    except OSError as e:
        raise NablogError(f"cannot read {p}: {e.strerror}", where=str(p)) from None


def parse_files(paths: Iterable[str | Path]) -> Program:
    """Parse several files into one program, in the order given."""
    statements: list[Statement] = []
    for path in paths:
        statements.extend(parse_statements(read_text(path), str(path)))
    return Program(tuple(statements))


def separate_facts(program: Program, facts: Mapping[str, Iterable[tuple]] | None = None) -> tuple[Program, Facts]:
    """Split a program into its rules and its base facts; merge further facts (from data files).

    A predicate with both facts and rules is split as seed 002 §2.1 allows: its facts go to the base
    relation ``base__p`` and the rule ``p(V1,..,Vn) :- base__p(V1,..,Vn).`` makes them part of ``p``.
    """
    derived = program.derived
    out: Facts = {}
    kept: list[Statement] = []
    for s in program.statements:
        if isinstance(s, Rule) and s.is_fact() and s.head[0].pred not in derived:
            atom = s.head[0]
            out.setdefault(atom.pred, set()).add(atom.args)  # type: ignore[arg-type]
        elif isinstance(s, Rule) and s.is_fact():
            atom = s.head[0]
            out.setdefault(base_part(atom.pred), set()).add(atom.args)  # type: ignore[arg-type]
        else:
            kept.append(s)
    for pred, rows in (facts or {}).items():
        target = base_part(pred) if pred in derived else pred
        if target not in out and isinstance(rows, AbstractSet) and not isinstance(rows, (set, frozenset)):
            # A read-only relation (an engine's columnar model) is passed on as it is, not copied.
            out[target] = rows  # type: ignore[assignment]
        elif isinstance(rows, (set, frozenset)) and target not in out:
            out[target] = set(rows)  # rows of a set are tuples already: copy without converting
        else:
            out.setdefault(target, set()).update(tuple(r) for r in rows)
    arities = program.signatures
    # A #fd/#key/#fk on a relation known only from its facts learns its arity from them.
    needed = {p for st in program.statements if isinstance(st, Dependency) for p in (st.relation, st.target) if p}
    for pred in sorted(needed - set(Program(tuple(kept)).signatures)):
        rows = out.get(pred)
        width = getattr(rows, "arity", None) if rows is not None else None
        if width is None and rows:
            width = len(next(iter(rows)))
        if width is not None:
            kept.append(BaseDeclaration(((pred, width),)))
    for pred in sorted(derived):
        if base_part(pred) in out:
            args = tuple(Var(f"V{i + 1}") for i in range(arities[pred]))
            kept.append(Rule((Atom(pred, args),), (Literal(Atom(base_part(pred), args)),)))
    return Program(tuple(kept)), out

