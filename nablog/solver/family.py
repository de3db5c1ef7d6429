"""Families of realizations: many realizations that differ only in the values of parameters, shown once.

Seed 003, Example 1 (note on realization (c)): a realization that inserts through an existential
variable "recurs once per existing constant, which a good answer shows as one realization with a
parameter". Realizations of one size are grouped when they have the same shape (the same
predicates in the same order) and differ only in a value — the parameter, at one or more argument
positions. From :data:`FAMILY_MIN` alike realizations on, the other positions that vary with the
parameter fold too (the current head of the department chosen, say), as variables of the pattern
whose values are a function of the parameter's.

Two realizations fold only when the parameter is all that differs between them: with two members
a value that depends on the parameter cannot be told from one chosen on its own, and two
independent choices are two realizations, not one with a parameter. So AC/DC's two albums are one
family (issue 31: ``+track(new1, "New Song", D, ..)``), while replacing one of two albums, whose
title and artist vary with it, stays two rows.

>>> from nablog.lang import Atom
>>> [f.pattern for f in find_families([((Atom("m", ("a", d)), Atom("h", (d, "x"))), ()) for d in ("d1", "d2")])]
[((Atom(pred='m', args=('a', Var(name='D'))), Atom(pred='h', args=(Var(name='D'), 'x'))), ())]
>>> len(find_families([((Atom("m", ("a", d)), Atom("h", (d, x))), ()) for d, x in (("d1", "x"), ("d2", "y"))]))
2

Past :data:`GROUPED_FROM` alike realizations that no value tells apart, one family per value of
the position that varies least:

>>> cities = [((Atom("city", ("Atlantis", c, f"{p}{k}")),), ()) for c in ("A", "I") for p in ("Tirol", "Veneto") for k in range(13)]
>>> [(f.pattern[0][0], len(f)) for f in find_families(cities)]
[(Atom(pred='city', args=('Atlantis', 'A', Var(name='D'))), 26), (Atom(pred='city', args=('Atlantis', 'I', Var(name='D'))), 26)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from ..lang import Atom, Var, constant_sort_key

ChangeSet = tuple[tuple[Atom, ...], tuple[Atom, ...]]  # (insert, delete), each sorted
FAMILY_MIN = 3
"""Fewest members of a family whose members differ in more than the parameter (in values that vary
with it); two realizations that differ in the parameter alone are a family too."""


GROUPED_FROM = 50
"""More alike realizations than this with no value telling them all apart are split by the value
of the position that varies least, and each part folded on its own (Mondial's 580 new cities of
Europe: a row per country, not per province, each re-evaluated at its first and last member)."""


@dataclass(frozen=True)
class Family:
    """Change sets sharing one pattern: ``pattern`` is (insert, delete) with variables, the
    ``parameter`` takes a distinct value in every member, ``bindings`` give each member's values
    (one per variable, in the order of ``variables``), sorted by the parameter."""

    pattern: ChangeSet
    variables: tuple[Var, ...]
    parameter: Var
    bindings: tuple[tuple, ...]
    condition: str = ""
    where: object = None  # the structured condition (condition.Condition) that ``condition`` words
    interchangeable: bool = False  # the orbit of one realization under swapping interchangeable values

    def __len__(self) -> int:
        return len(self.bindings)

    def member(self, binding: Sequence) -> ChangeSet:
        values = dict(zip(self.variables, binding))
        return (tuple(_bind(a, values) for a in self.pattern[0]), tuple(_bind(a, values) for a in self.pattern[1]))

    def members(self) -> list[ChangeSet]:
        return [self.member(b) for b in self.bindings]

    def find(self, values: Mapping[str, object]) -> tuple | None:
        """The binding of the member whose variables take ``values`` (names to constants)."""
        if not values or not set(values) <= {v.name for v in self.variables}:
            return None
        for binding in self.bindings:
            if all(values.get(v.name, b) == b for v, b in zip(self.variables, binding)):
                return binding
        return None


def find_families(change_sets: Sequence[ChangeSet], least: int = FAMILY_MIN) -> list[Family | ChangeSet]:
    """The change sets of one size, with each family folded into a :class:`Family`: at least
    ``least`` alike ones, or two or more that differ in one value only (see the module's text);
    the rest stay as they are. Order: as given, a family at its first member."""
    by_shape: dict[tuple, list[int]] = {}
    for i, (insert, delete) in enumerate(change_sets):
        shape = (tuple((a.pred, a.arity) for a in insert), tuple((a.pred, a.arity) for a in delete))
        by_shape.setdefault(shape, []).append(i)
    folded: dict[int, Family] = {}
    absorbed: set[int] = set()
    for indices in by_shape.values():
        if len(indices) < 2:
            continue
        for family, members in _split(change_sets, indices, least):
            folded[members[0]] = family
            absorbed.update(members)
    out: list[Family | ChangeSet] = []
    for i, change_set in enumerate(change_sets):
        if i in folded:
            out.append(folded[i])
        elif i not in absorbed:
            out.append(change_set)
    return out


def _split(change_sets, indices, least):
    """The change sets of one shape as one family, when one argument position takes a different
    value in each (the parameter): every other varying position is then a function of it."""
    rows = [change_sets[i][0] + change_sets[i][1] for i in indices]
    positions = [(k, j) for k, a in enumerate(rows[0]) for j in range(a.arity)]
    columns = {q: tuple(r[q[0]].args[q[1]] for r in rows) for q in positions}
    parameter = next((q for q in positions if len(set(columns[q])) == len(rows)), None)
    if parameter is None and len(rows) > GROUPED_FROM:
        # No value tells every member apart (a new city in any of Europe's 580 provinces:
        # province names recur across countries): one family per value of the position varying
        # least (per country, over its provinces), each under the rules above.
        varying = [q for q in positions if len(set(columns[q])) > 1]
        by = min(varying, key=lambda q: len(set(columns[q])))
        groups: dict = {}
        for i, row in zip(indices, rows):
            groups.setdefault(row[by[0]].args[by[1]], []).append(i)
        return [found for group in groups.values() if len(group) > 1 for found in _split(change_sets, group, least)]
    if parameter is None:
        return []
    if len(rows) < least and any(len(set(columns[q])) > 1 and columns[q] != columns[parameter] for q in positions):
        return []  # fewer than ``least``: only the parameter may differ
    # One variable per distinct column of values among the varying positions, the parameter first.
    names: dict[tuple, Var] = {columns[parameter]: Var("D")}
    for q in positions:
        if len(set(columns[q])) > 1 and columns[q] not in names:
            names[columns[q]] = Var(f"V{len(names)}")
    variables = tuple(names.values())
    pattern = []
    for k, a in enumerate(rows[0]):
        args = tuple(names.get(columns[(k, j)], v) for j, v in enumerate(a.args))
        pattern.append(Atom(a.pred, args))
    n_insert = len(change_sets[indices[0]][0])
    value_columns = list(names)
    bindings = sorted(
        (tuple(col[m] for col in value_columns) for m in range(len(rows))),
        key=lambda b: tuple(constant_sort_key(v) for v in b),
    )
    family = Family((tuple(pattern[:n_insert]), tuple(pattern[n_insert:])), variables, variables[0], tuple(bindings))
    return [(family, list(indices))]


def _bind(a: Atom, values: Mapping[Var, object]) -> Atom:
    return Atom(a.pred, tuple(values.get(t, t) if isinstance(t, Var) else t for t in a.args))
