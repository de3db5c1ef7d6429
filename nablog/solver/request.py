"""View-update requests: ground atoms to insert and to delete, written ``+p(1,2). -q(a).``

A request (seed 002, Def. 6) asks that its insertions hold and its deletions do not hold after
the update; it may name derived (view) or base predicates.

>>> request = parse_request("+staff_chair(aravindan, gerhard). -q(1).")
>>> print(request)
+staff_chair(aravindan, gerhard). -q(1).
>>> sorted(str(a) for a in request.insert)
['staff_chair(aravindan, gerhard)']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lang import Atom, NablogSyntaxError, QueryError, Source, parse_atom
from ..lang.errors import Loc


@dataclass(frozen=True)
class Request:
    """Ground atoms to make true (``insert``) and false (``delete``)."""

    insert: frozenset[Atom] = field(default_factory=frozenset)
    delete: frozenset[Atom] = field(default_factory=frozenset)

    def atoms(self) -> list[tuple[str, Atom]]:
        """``("+", atom)`` and ``("-", atom)`` pairs in a stable order."""
        signed = [("+", a) for a in self.insert] + [("-", a) for a in self.delete]
        return sorted(signed, key=lambda s: (s[0] == "-", s[1].pred, str(s[1])))

    def __str__(self) -> str:
        return " ".join(f"{sign}{atom}." for sign, atom in self.atoms())

    def __bool__(self) -> bool:
        return bool(self.insert or self.delete)


def parse_request(text: str, source: str = "<request>") -> Request:
    """Parse ``+atom. -atom. ...``; every atom must be ground and carry a sign.

    >>> print(parse_request("-p(1)  +q(a, 2)"))
    +q(a, 2). -p(1).
    """
    src = Source(source, text)
    inserts: list[Atom] = []
    deletes: list[Atom] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        sign = text[pos]
        if sign not in "+-":
            raise NablogSyntaxError(
                f"expected '+' or '-' before a request atom, found {text[pos]!r}",
                _loc(src, pos),
                "write insertions as +p(1, 2). and deletions as -q(a).",
            )
        end = _statement_end(text, pos + 1)
        chunk = text[pos + 1 : end]
        try:
            atom = parse_atom(chunk, source)
        except NablogSyntaxError as error:
            column = error.column or 1
            raise NablogSyntaxError(error.message, _loc(src, pos + column), error.hint) from None
        atom = Atom(atom.pred, atom.args, _loc(src, pos + 1))
        if not atom.is_ground():
            var = next(atom.variables())
            raise QueryError(
                f"the request atom {atom} is not ground: {var} has no value",
                atom.loc,
                "a request names ground facts; query first to find the values, e.g. nablog query FILES 'p(X)'",
            )
        (inserts if sign == "+" else deletes).append(atom)
        pos = end + 1
    if not inserts and not deletes:
        raise QueryError("the request is empty", hint="write insertions as +p(1, 2). and deletions as -q(a).")
    both = set(inserts) & set(deletes)
    if both:
        atom = sorted(both, key=str)[0]
        raise QueryError(
            f"the request both inserts and deletes {atom}",
            atom.loc,
            "a fact cannot be made true and false at once; drop one of the two",
        )
    return Request(frozenset(inserts), frozenset(deletes))


def _statement_end(text: str, pos: int) -> int:
    """Index of the '.' ending the atom that starts at ``pos`` (outside quoted strings), or len."""
    in_string = False
    i = pos
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == ".":
            return i
        elif c in "+-" and i > pos and text[i - 1].isspace() and not text[i + 1 : i + 2].isdigit():
            return i - 1  # the next signed atom starts; the period was left out
        i += 1
    return len(text)


def _loc(source: Source, pos: int) -> Loc:
    line = source.text.count("\n", 0, pos) + 1
    column = pos - (source.text.rfind("\n", 0, pos) + 1) + 1
    return Loc(source, line, column)
