"""The optimisation of cell repair: choose one candidate value per free cell, fewest violations
first, then least cost, one independent component at a time.

A :class:`CellProblem` has free cells (each with a :class:`~nablog.repair.candidates.Domain`:
its own value first, then candidates, with integer costs) and two kinds of factors:

- a functional dependency X → A as **key factors**: every row that has a free cell among X ∪ {A}
  lands, under an assignment, on one key x (its X values) with one A value; the rows whose X and
  A are fixed contribute their A values to their key as constants. A key's violation count is its
  number of distinct A values minus one. Only keys some free row can reach are looked at (the
  others do not change), so the encoding is linear in the rows, not quadratic in pairs, and it
  is exact: a row that moves to another key meets the values there;
- any other denial as **instance factors**: the cells of one ground instance and the
  combinations of their values under which it holds (is violated).

The measure of an assignment is (violations, cost), compared lexicographically: among the
candidate repairs, those that leave fewest constraint violations, and among them the cheapest.
When the candidates can satisfy every constraint the result is a consistent repair of least
cost; when they cannot (a constraint the data contradicts), the violations left are reported.

Components (connected through shared cells and reachable keys) are solved apart — the optimum
of the whole is the union of the optima of the parts. A component with few assignments is
enumerated (:func:`brute_force`, also the oracle of the tests); a larger one goes to clingo's
weighted optimisation with two priority levels (:func:`solve_clingo`).

Two rows with the same key, each a free right-hand cell: keeping both costs nothing but
violates the dependency; agreeing on "a" costs 500, on "b" 700:

>>> from nablog.repair.candidates import Domain
>>> p = CellProblem([Domain(("b", "a"), (0, 500)), Domain(("a", "b"), (0, 700))],
...                 keys=[KeyFactor("fd", [KeyRow((("=", "k"),), 0, None), KeyRow((("=", "k"),), 1, None)])])
>>> [(s.assignment, s.violations, s.cost) for s in solve(p)]
[((1, 0), 0, 500)]
>>> [(s.assignment, s.violations, s.cost) for s in solve_clingo(p)]
[((1, 0), 0, 500)]
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from ..lang import Constant
from .candidates import Domain

BRUTE = 512  # a component with at most this many assignments is enumerated


@dataclass(frozen=True)
class KeyRow:
    """One row of a functional dependency with a free cell: ``lhs`` its X cells (an int is a free
    cell's number, anything else a fixed value, wrapped as ``("=", value)``), ``rhs`` its A cell
    (a free cell's number) or None with ``value`` fixed."""

    lhs: tuple
    rhs: int | None
    value: Constant | None

    def keys(self, domains: Sequence[Domain]) -> Iterator[tuple[tuple, tuple[tuple[int, int], ...]]]:
        """(key, the (cell, value index) choices giving it) for every key the row can reach."""
        options = []
        for part in self.lhs:
            if isinstance(part, int):
                options.append([(part, i, v) for i, v in enumerate(domains[part].values)])
            else:
                options.append([(None, None, part[1])])
        for combo in itertools.product(*options):
            yield tuple(v for _, _, v in combo), tuple((c, i) for c, i, _ in combo if c is not None)


@dataclass
class KeyFactor:
    """A functional dependency over the rows that have free cells (``rows``), with the A values
    of fixed rows at the keys those rows can reach (``fixed``: key -> set of values)."""

    name: str
    rows: list[KeyRow] = field(default_factory=list)
    fixed: dict[tuple, set] = field(default_factory=dict)


@dataclass
class InstanceFactor:
    """A ground denial instance over free cells, violated exactly for the value-index tuples in
    ``violated`` (fixed parts already folded in)."""

    name: str
    cells: tuple[int, ...]
    violated: frozenset[tuple[int, ...]]


@dataclass
class CellProblem:
    domains: list[Domain]
    keys: list[KeyFactor] = field(default_factory=list)
    instances: list[InstanceFactor] = field(default_factory=list)

    def measure(self, assignment: Sequence[int]) -> tuple[int, int]:
        """(violations, cost) of an assignment (a value index per cell)."""
        violations = 0
        for factor in self.keys:
            # Every reachable key counts, reached under this assignment or not (as in encode()).
            values: dict[tuple, set] = {key: set(found) for key, found in factor.fixed.items()}
            for row in factor.rows:
                key = tuple(self.domains[p].values[assignment[p]] if isinstance(p, int) else p[1] for p in row.lhs)
                value = self.domains[row.rhs].values[assignment[row.rhs]] if row.rhs is not None else row.value
                values.setdefault(key, set()).add(value)
            for found in values.values():
                violations += max(len(found) - 1, 0)
        for inst in self.instances:
            violations += tuple(assignment[c] for c in inst.cells) in inst.violated
        cost = sum(self.domains[c].costs[i] for c, i in enumerate(assignment))
        return violations, cost

    def held(self, cells: set[int]) -> "CellProblem":
        """The same problem with ``cells`` held at their own values (value indices unchanged)."""
        domains = [Domain(d.values[:1], d.costs[:1]) if c in cells else d for c, d in enumerate(self.domains)]
        return CellProblem(domains, self.keys, self.instances)

    def components(self) -> list["Component"]:
        """The independent parts: cells linked through a key factor's reachable keys or an
        instance factor."""
        parent = list(range(len(self.domains)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def union(a: int, b: int) -> None:
            a, b = find(a), find(b)
            if a != b:
                parent[max(a, b)] = min(a, b)

        key_owner: dict[tuple, int] = {}
        for f, factor in enumerate(self.keys):
            for row in factor.rows:
                cells = [p for p in row.lhs if isinstance(p, int)] + ([row.rhs] if row.rhs is not None else [])
                for c in cells[1:]:
                    union(cells[0], c)
                for key, _ in row.keys(self.domains):
                    owner = key_owner.setdefault((f, key), cells[0])
                    union(owner, cells[0])
        for inst in self.instances:
            for c in inst.cells[1:]:
                union(inst.cells[0], c)
        groups: dict[int, list[int]] = {}
        for c in range(len(self.domains)):
            groups.setdefault(find(c), []).append(c)
        # Each factor's rows and each instance bucketed by component once (not per component).
        rows_of: dict[tuple[int, int], list[KeyRow]] = {}
        for f, factor in enumerate(self.keys):
            for r in factor.rows:
                cells = _row_cells(r)
                if cells:
                    rows_of.setdefault((find(cells[0]), f), []).append(r)
        instances_of: dict[int, list[InstanceFactor]] = {}
        for inst in self.instances:
            instances_of.setdefault(find(inst.cells[0]), []).append(inst)
        out = []
        for root, cells in groups.items():
            index = {c: i for i, c in enumerate(cells)}
            sub = CellProblem([self.domains[c] for c in cells])
            for f, factor in enumerate(self.keys):
                rows = rows_of.get((root, f), [])
                if rows:
                    new_rows = [KeyRow(tuple(index[p] if isinstance(p, int) else p for p in r.lhs), index[r.rhs] if r.rhs is not None else None, r.value) for r in rows]
                    reach = {k for r in new_rows for k, _ in r.keys(sub.domains)}
                    sub.keys.append(KeyFactor(factor.name, new_rows, {k: v for k, v in factor.fixed.items() if k in reach}))
            for inst in instances_of.get(root, []):
                sub.instances.append(InstanceFactor(inst.name, tuple(index[c] for c in inst.cells), inst.violated))
            out.append(Component(cells, sub))
        return out


def _row_cells(row: KeyRow) -> list[int]:
    return [p for p in row.lhs if isinstance(p, int)] + ([row.rhs] if row.rhs is not None else [])


@dataclass
class Component:
    cells: list[int]
    problem: CellProblem


@dataclass
class Solution:
    assignment: tuple[int, ...]
    violations: int
    cost: int
    optimal: bool = True


def brute_force(problem: CellProblem, limit: int = 1) -> list[Solution]:
    """Every assignment of the problem measured; the best ``limit`` of those tied at the optimum
    (every one of them with ``limit`` 0)."""
    best: tuple[int, int] | None = None
    found: list[tuple[int, ...]] = []
    for assignment in itertools.product(*(range(len(d.values)) for d in problem.domains)):
        m = problem.measure(assignment)
        if best is None or m < best:
            best, found = m, [assignment]
        elif m == best and (len(found) < limit or not limit):
            found.append(assignment)
    assert best is not None
    return [Solution(a, best[0], best[1]) for a in found]


def size(problem: CellProblem) -> float:
    return math.prod(len(d.values) for d in problem.domains)


def solve(problem: CellProblem, limit: int = 1, deadline: float | None = None) -> list[Solution]:
    """The optimal assignments of one component (at most ``limit``)."""
    if size(problem) <= BRUTE:
        return brute_force(problem, limit)
    return solve_clingo(problem, limit, deadline)


def certain(problem: CellProblem, deadline: float | None = None) -> Solution:
    """The changes every optimal assignment makes, checked: each cell takes the value all optimal
    assignments give it, and keeps its own value (index 0) where they differ — where the evidence
    is equal, nothing is changed (the certain answers of a repair, Arenas, Bertossi, Chomicki,
    PODS 1999, taken over the least-cost repairs).

    Keeping one cell can spoil a change another cell agreed on: the mix is then no optimum and
    may trade a violation the data has for a new one at a cost, worse than changing nothing. So
    the cells that keep their value are held and the problem is solved again, until the agreement
    is itself an optimum (then the only one) of the held problem; each round holds more cells, at
    worst all. Guaranteed, in each component: only cells every optimum changes the same way
    change; the result is an optimum of the problem with every other cell held, so it never has
    more violations than the input, and as many only when nothing changes (a change costs); a
    change creates a violation only within an optimum that removes more (which the repair's next
    round sees: a row moved into a group, :mod:`nablog.repair.cells`). Its measure is its own: a
    tie left undecided may leave a violation, reported as such.

    >>> from nablog.repair.candidates import Domain
    >>> tie = CellProblem([Domain(("b", "a"), (0, 500)), Domain(("a", "b"), (0, 500))],
    ...                   keys=[KeyFactor("fd", [KeyRow((("=", "k"),), 0, None), KeyRow((("=", "k"),), 1, None)])])
    >>> s = certain(tie); (s.assignment, s.violations, s.cost)
    ((0, 0), 1, 0)
    """
    held: set[int] = set()
    while True:
        p = problem.held(held)
        enumerated = size(p) <= BRUTE
        if enumerated:
            solutions = brute_force(p, limit=0)
            optimal = True
        else:
            solutions = solve_clingo(p, 1, deadline, cautious=True)
            optimal = solutions[0].optimal
        first = solutions[0].assignment
        assignment = tuple(v if all(s.assignment[c] == v for s in solutions) else 0 for c, v in enumerate(first))
        keeps = {c for c, v in enumerate(assignment) if v == 0}
        # Enumerated optima show whether the agreement is one; clingo's cautious answer does not,
        # so a round with the kept cells held tells (unchanged agreement: it is the only optimum).
        # A round the deadline stopped ends the loop unproven.
        if not optimal or keeps == held or (enumerated and assignment in {s.assignment for s in solutions}):
            break
        held = keeps
    violations, cost = problem.measure(assignment)
    return Solution(assignment, violations, cost, optimal)


def encode(problem: CellProblem) -> str:
    """The component as a clingo program: a choice of one value per cell, a weak constraint per
    cost (level 1) and per violation (level 2)."""
    out = ["#show a/2.", "1 { a(I,V) : d(I,V,_) } 1 :- c(I).", ":~ a(I,V), d(I,V,W). [W@1,I]", ":~ g(F,K,A), g(F,K,B), B < A. [1@2,F,K,A]", ":~ v(J). [1@2,J]"]
    for i, d in enumerate(problem.domains):
        out.append(f"c({i}).")
        out.extend(f"d({i},{v},{w})." for v, w in enumerate(d.costs))
    value_ids: dict = {}
    key_ids: dict = {}
    for f, factor in enumerate(problem.keys):
        for key, values in factor.fixed.items():
            k = key_ids.setdefault((f, key), len(key_ids))
            out.extend(f"g({f},{k},{value_ids.setdefault(v, len(value_ids))})." for v in values)
        for r, row in enumerate(factor.rows):
            for key, choice in row.keys(problem.domains):
                k = key_ids.setdefault((f, key), len(key_ids))
                body = ", ".join(f"a({c},{i})" for c, i in choice)
                out.append(f"in({f},{k},{r})" + (f" :- {body}." if body else "."))
                if row.rhs is None:
                    out.append(f"g({f},{k},{value_ids.setdefault(row.value, len(value_ids))}) :- in({f},{k},{r}).")
                else:
                    for i, v in enumerate(problem.domains[row.rhs].values):
                        out.append(f"g({f},{k},{value_ids.setdefault(v, len(value_ids))}) :- in({f},{k},{r}), a({row.rhs},{i}).")
    for j, inst in enumerate(problem.instances):
        for combo in sorted(inst.violated):
            out.append(f"v({j}) :- " + ", ".join(f"a({c},{i})" for c, i in zip(inst.cells, combo)) + ".")
    return "\n".join(out)


def solve_clingo(problem: CellProblem, limit: int = 1, deadline: float | None = None, cautious: bool = False) -> list[Solution]:
    """The component through clingo's optimisation; with ``limit`` > 1 the optimal models are
    enumerated (``--opt-mode=optN``); with ``cautious`` the one solution gives each cell the value
    every optimal model gives it, its own value where they differ (``--enum-mode=cautious``)."""
    import clingo

    # Core-guided optimisation (PMRES, cores shrunk by RGS) proves these optima in a second where
    # branch and bound and plain unsatisfiable-core search run for minutes (measured on hospital's
    # largest component, 288 cells: docs/design.md, cell repair).
    args = ["--opt-mode=optN" if limit > 1 or cautious else "--opt-mode=opt", "--opt-strategy=usc,pmres", "--opt-usc-shrink=rgs"]
    if cautious:
        args.append("--enum-mode=cautious")
    control = clingo.Control(args, logger=lambda code, message: None)
    control.add("base", [], encode(problem))
    control.ground([("base", [])])
    n = len(problem.domains)
    models: list[tuple[tuple[int, ...], list[int], bool]] = []

    def on_model(model) -> None:
        assignment = [0] * n
        for symbol in model.symbols(shown=True):
            if symbol.name == "a":
                assignment[symbol.arguments[0].number] = symbol.arguments[1].number
        models.append((tuple(assignment), list(model.cost), model.optimality_proven))

    control.configuration.solve.models = 0
    with control.solve(on_model=on_model, async_=True) as handle:
        remaining = None if deadline is None else max(0.01, deadline - time.monotonic())
        finished = handle.wait(remaining) if remaining is not None else handle.wait()
        if not finished:
            handle.cancel()
        exhausted = handle.get().exhausted
    if not models:
        # The deadline came before the first model: every cell keeps its value (never a guess).
        violations, cost = problem.measure(tuple([0] * n))
        return [Solution(tuple([0] * n), violations, cost, optimal=False)]
    if limit > 1:
        proven = [m for m in models if m[2]]
        chosen = proven[:limit] if proven else models[-1:]
    else:
        chosen = models[-1:]
    out = []
    for assignment, _, _ in chosen:
        violations, cost = problem.measure(assignment)
        out.append(Solution(assignment, violations, cost, optimal=exhausted))
    return out


__all__ = ["BRUTE", "CellProblem", "Component", "InstanceFactor", "KeyFactor", "KeyRow", "Solution", "brute_force", "encode", "solve", "solve_clingo"]
