"""Cell repair: replace wrong values, not whole tuples, so that the constraints hold at least cost.

A **cell update** replaces the value of one row in one column. As a correction of seed 004 it is
the deletion of the row's tuple and the insertion of the updated tuple, composed over the rows a
repair touches (Def. 2.2, :meth:`~nablog.lang.Delta.compose`), so a cell repair is a correction
table like any other (:meth:`CellRepair.table`). Rows keep their identity: a relation is a list
of rows, and a :class:`CellCorrection` names its row by position.

The repair (:func:`repair_cells`):

1. finds the violations: functional dependencies by grouping their left-hand side, every other
   denial (comparisons, foreign keys, keys written as denials) by
   :func:`~nablog.repair.violations.find_falsifiers` on the chosen engine;
2. marks the cells they implicate: the left- and right-hand cells of a violating group's rows,
   the cells of an instance's tuples that the denial reads (a variable used twice, compared, or a
   constant). No other cell is ever changed; protected relations and facts are never changed;
3. gives each implicated cell a candidate domain with costs from the data alone
   (:mod:`nablog.repair.candidates`), sources weighted by their reliability when a source column
   is named;
4. chooses one value per cell, fewest violations first, then least cost, per independent
   component (:mod:`nablog.repair.cellsolve`);
5. checks the repaired relations: an instance of a denial that a change made true joins the
   problem and the components are solved again (seed 004 §5, case 3), until nothing new appears.

>>> from nablog.lang import parse
>>> program = parse('''#columns h(name, zip, city).
...     #fd h: name -> zip.''')
>>> rows = [("acme", "35233", "bham"), ("acme", "35233", "bham"), ("acme", "3523x", "bham"),
...         ("zeta", "10001", "nyc"), ("zeta", "10001", "nyc")]
>>> result = repair_cells(program, {"h": rows})
>>> [(c.row, c.column, c.old, c.new, c.constraints) for c in result.corrections]
[(2, 'zip', '3523x', '35233', ('fd_h__name__zip',))]
>>> result.status, result.delta({"h": rows}).lines()
('consistent', ['+h(acme, "35233", bham)', '-h(acme, "3523x", bham)'])
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

from ..engines import Engine, PythonEngine
from ..engines.violations import name_anonymous
from ..lang import Atom, Comparison, Constant, Delta, Denial, Literal, NablogError, Program, Requirement, Var, arith, row_sort_key
from ..lang.ast import term_variables
from ..solver.bindings import _unify
from ..solver.problem import protections
from .candidates import CHANGE, CLOSENESS, SCALE, Domain, Statistics, change_prior, domains, energies, similarity, softplus, source_weights
from .cellsolve import CellProblem, InstanceFactor, KeyFactor, KeyRow, certain, solve
from .constraints import constraint_infos, uses_views
from .tables import CorrectionTable
from .violations import find_falsifiers

MAX_COMBINATIONS = 4096  # value combinations of one denial instance's cells, enumerated


@dataclass(frozen=True)
class CellCorrection:
    """One cell update: row ``row`` (0-based, in the relation's order) of ``relation`` gets ``new``
    in ``column`` (named, or its 1-based position) instead of ``old``; ``constraints`` are the
    violated constraints that implicated the cell, ``weight`` the cost that chose the value: the
    negative log probability (nats) that ``new`` rather than ``old`` is right, as the data says
    (near 0: the data favours ``new`` strongly; 0.69: a toss-up)."""

    relation: str
    row: int
    column: str
    position: int
    old: Constant
    new: Constant
    constraints: tuple[str, ...]
    weight: float

    def to_json(self) -> dict:
        return {
            "relation": self.relation, "row": self.row, "column": self.column, "old": self.old, "new": self.new,
            "constraints": list(self.constraints), "weight": self.weight,
        }


@dataclass
class CellRepair:
    """What :func:`repair_cells` found.

    ``status``: ``consistent`` (every constraint holds after the corrections) or ``partial``
    (``left`` names the violations that stay: the candidate values cannot satisfy them, or they lie
    in a component the deadline stopped). A component the deadline stops keeps every value and
    reports its own cells in ``unrepaired``; the other components' repairs stand. ``alternatives`` holds further
    optimal repairs when more than one was asked for.
    """

    status: str
    corrections: tuple[CellCorrection, ...]
    violations_before: int
    left: list[tuple[str, str]] = field(default_factory=list)
    alternatives: list[tuple[CellCorrection, ...]] = field(default_factory=list)
    cells: int = 0
    candidates: int = 0
    components: int = 0
    rounds: int = 1
    optimal: bool = True
    cost: int = 0
    domains: dict[tuple[str, int, int], Domain] = field(default_factory=dict)  # (relation, row, position) of each cell with candidates
    unrepaired: tuple[tuple[str, int, str], ...] = ()  # (relation, row, column): cells of components the deadline stopped

    @property
    def consistent(self) -> bool:
        return self.status == "consistent"

    def __iter__(self):
        return iter(self.corrections)

    def __len__(self) -> int:
        return len(self.corrections)

    def apply(self, relations: Mapping[str, Sequence[tuple]], corrections: Iterable[CellCorrection] | None = None) -> dict[str, list[tuple]]:
        """The relations with the corrections made, row-aligned with ``relations``."""
        out = {p: list(rows) for p, rows in relations.items()}
        for c in self.corrections if corrections is None else corrections:
            row = list(out[c.relation][c.row])
            row[c.position] = c.new
            out[c.relation][c.row] = tuple(row)
        return out

    def delta(self, relations: Mapping[str, Sequence[tuple]]) -> Delta:
        """The repair as seed 004's update: per changed row, the deletion of its tuple and the
        insertion of the updated one, composed over the rows (Def. 2.2)."""
        after = self.apply(relations)
        total = Delta()
        for relation, row in sorted({(c.relation, c.row) for c in self.corrections}):
            old, new = tuple(relations[relation][row]), after[relation][row]
            total = total.compose(Delta(frozenset({Atom(relation, new)}), frozenset({Atom(relation, old)})))
        return total

    def table(self, relations: Mapping[str, Sequence[tuple]]) -> CorrectionTable:
        """The repair as a correction table (seed 004, Def. 2.4)."""
        d = self.delta(relations)
        return CorrectionTable.of([("+", (a.pred, tuple(a.args))) for a in d.insert] + [("-", (a.pred, tuple(a.args))) for a in d.delete])

    @property
    def message(self) -> str:
        n = len(self.corrections)
        text = f"{n:,} cell" + ("" if n == 1 else "s") + " changed"
        if self.status == "partial":
            text += f"; {len(self.left):,} violation" + ("" if len(self.left) == 1 else "s") + " left"
            if not self.unrepaired:
                text += ": no candidate value the data supports repairs " + ("it" if len(self.left) == 1 else "them")
        if self.unrepaired:
            n = len(self.unrepaired)
            text += f"; {n:,} cell" + ("" if n == 1 else "s") + " left unrepaired: the deadline stopped their component" + ("" if n == 1 else "s") + " (give more --timeout)"
        elif not self.optimal:
            text += " (not proven optimal)"
        return text


# -- constraints as cell factors ------------------------------------------------------------------


@dataclass(frozen=True)
class _Fd:
    name: str
    relation: str
    lhs: tuple[int, ...]
    rhs: int


@dataclass(frozen=True)
class _Instance:
    """A ground instance of a general denial: the row of each positive literal."""

    name: str
    rows: tuple[tuple[str, int], ...]


class _Denial:
    """A general denial: which cells of its positive literals it reads, and its truth for given rows."""

    def __init__(self, name: str, denial: Denial):
        self.name = name
        self.body = name_anonymous(denial.body)
        self.positive = [b.atom for b in self.body if isinstance(b, Literal) and b.positive]
        self.negative = [b.atom for b in self.body if isinstance(b, Literal) and not b.positive]
        self.comparisons = [b for b in self.body if isinstance(b, Comparison)]
        occurrences: dict[Var, int] = {}
        for b in self.body:
            terms = b.atom.args if isinstance(b, Literal) else tuple(b.variables())
            for t in terms:
                for v in term_variables(t):
                    if v.name != "_":
                        occurrences[v] = occurrences.get(v, 0) + 1
        self.read = [
            tuple(i for i, t in enumerate(atom.args) if not isinstance(t, Var) or (t.name != "_" and occurrences.get(t, 0) > 1))
            for atom in self.positive
        ]

    def holds(self, values: Sequence[tuple], relations: Mapping[str, set]) -> bool:
        """Whether the body holds with the positive literals on these tuples (negated literals
        looked up in ``relations``)."""
        binding: dict[Var, Constant] | None = {}
        for atom, row in zip(self.positive, values):
            binding = _unify(atom, row, binding)
            if binding is None:
                return False
        for c in self.comparisons:
            left, right = arith.evaluate(c.left, binding), arith.evaluate(c.right, binding)
            if left is None or right is None or not c.holds(left, right):
                return False
        for atom in self.negative:
            pattern = tuple(None if isinstance(t, Var) and t.name == "_" else (binding.get(t) if isinstance(t, Var) else t) for t in atom.args)
            if any(all(p is None or p == v for p, v in zip(pattern, row)) for row in relations.get(atom.pred, ())):
                return False
        return True


# -- the repair -----------------------------------------------------------------------------------


def repair_cells(
    program: Program,
    relations: Mapping[str, Sequence[tuple]],
    *,
    protect: Iterable = (),
    source: str | None = None,
    limit: int = 1,
    timeout: float | None = None,
    engine: Engine | None = None,
    max_rounds: int = 10,
    verified: Mapping[tuple[str, tuple], bool] | None = None,
    _stage: frozenset[str] | None = None,
) -> CellRepair:
    """A least-cost set of cell updates after which the constraints of ``program`` hold (or, when
    the candidates cannot make them all hold, the fewest stay violated).

    Parameters
    ----------
    program : Program
        Constraints over base relations (``#fd``, ``#key``, ``#fk`` and denials with comparisons).
    relations : mapping
        Relation name to its rows in order (a row's position is its identity).
    protect : relation names or ground atoms
        Relations and facts whose cells never change, besides the program's ``#protect``.
    source : str, optional
        ``REL.COLUMN`` or ``COLUMN``: the column naming each row's source; votes are weighted by
        the sources' reliability.
    limit : int
        With more than 1, up to ``limit`` optimal repairs (the first is ``corrections``, the rest
        ``alternatives``).
    timeout : float, optional
        Seconds for the optimisation; the best repair found by then is returned.
    engine : Engine, optional
        Finds the violations of general denials (python by default; spark for large data).
    verified : mapping, optional
        Facts ``(relation, tuple)`` a person verified, to their truth (seed 004 §5, case 2;
        :func:`nablog.repair.verify.verify_cells_interactively`). A row equal to a true fact never
        changes; a false fact is a ground denial ``:- r(t).``: a row equal to it must change (all
        its cells are implicated) and no row may become it.

    With a source column whose relation has an entity key (:func:`_entity_keys`), the repair runs
    in two stages: the dependencies on the entity key first — each entity's reports made to agree,
    one small component per entity — and then every constraint over that result. A dependency
    between two attributes (flights: ``sched_dep_time -> act_dep_time``) links every entity with
    every other; solved at once with the entity dependencies it made one component of 2,909
    cells that did not finish. The second stage's components that the deadline stops keep the
    first stage's values and are named in ``unrepaired``.
    """
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    if limit < 1:
        raise NablogError("the number of repairs to enumerate must be at least 1", hint="give --enumerate N with N >= 1")
    engine = engine or PythonEngine()
    infos = constraint_infos(program)
    constraints = [c.constraint for c in infos]
    if uses_views(program, constraints):
        raise NablogError(
            "cell repair works on constraints over stored relations; a constraint here reads a view",
            hint="repair tuples instead (--policy subset), or write the constraint over the base relations",
        )
    relations = {p: [tuple(r) for r in rows] for p, rows in relations.items()}
    columns = {p: _column_names(program, p, rows) for p, rows in relations.items()}
    fds: list[_Fd] = []
    general: list[_Denial] = []
    for c in infos:
        if _stage is not None and c.name not in _stage:
            continue
        if isinstance(c.constraint, Requirement):
            raise NablogError(f"cell repair cannot make the requirement {c.name} hold", hint="state it as a denial, or repair tuples (--policy subset)")
        if c.fd is not None:
            fds.append(_Fd(c.name, c.fd.pred, c.fd.lhs, c.fd.rhs))
        else:
            general.append(_Denial(c.name, c.constraint))
    general.extend(_verified_false(verified or {}))
    for fd in fds:
        relations.setdefault(fd.relation, [])
    trusted_facts = [Atom(p, tuple(args)) for (p, args), truth in (verified or {}).items() if truth]
    fixed_relations, fixed_rows = _protections(program, list(protect) + trusted_facts, relations)
    source_column = _source(source, relations, columns)
    entity = _entity_keys(fds, relations, source_column)
    if entity and _stage is None:
        first_fds = frozenset(fd.name for fd in fds if set(fd.lhs) <= entity.get(fd.relation, set()))
        if first_fds != frozenset(fd.name for fd in fds) or general:
            first = repair_cells(program, relations, protect=protect, source=source, timeout=timeout, engine=engine, max_rounds=max_rounds, verified=verified, _stage=first_fds)
            rest = None if timeout is None else max(0.0, timeout - (time.monotonic() - start))
            second = repair_cells(program, first.apply(relations), protect=protect, source=source, limit=limit, timeout=rest, engine=engine, max_rounds=max_rounds, verified=verified, _stage=frozenset(c.name for c in infos))
            return _staged(first, second, relations)

    implicated: dict[tuple[str, int, int], set[str]] = {}

    def allowed(cell: tuple[str, int, int]) -> bool:
        return cell[0] not in fixed_relations and (cell[0], cell[1]) not in fixed_rows and cell[2] not in entity.get(cell[0], ())

    groups = _fd_groups(fds, relations, engine)
    before = sum(len({relations[fd.relation][r][fd.rhs] for r in rows}) - 1 for fd, gs in groups.items() for rows in gs)
    instances = _instances(general, relations, engine)
    before += len(instances)
    _implicate_instances(instances, general, implicated, allowed)

    stats: dict[str, Statistics] = {}
    for p, rows in relations.items():
        weights = None
        if source_column is not None and source_column[0] == p:
            weights = source_weights(rows, source_column[1], [g for fd, gs in groups.items() if fd.relation == p for g in gs], sorted({fd.rhs for fd in fds if fd.relation == p}), nulls=program.null_values)
        if rows:
            stats[p] = Statistics(rows, len(rows[0]), weights, program.null_values, _pair_counts(engine, rows, weights))
    groups = _agreed(groups, relations, stats)
    _implicate_groups(groups, relations, stats, implicated, allowed)
    changes = _change_priors(groups, relations, stats)
    domain_of: dict[tuple[str, int, int], Domain] = {}
    known: set[_Instance] = set(instances)
    rounds = 0
    repaired = relations
    while True:
        rounds += 1
        # Groups vote and keys land as the last round left the rows (a row moved into a group
        # meets that group's majority); the counts stay those of the data as given.
        _add_domains(implicated, domain_of, stats, source_column, changes, fds, repaired)
        possible = set(_instances(general, relations, engine, _variants(domain_of, relations))) if general else set()
        problem, cells = _problem(domain_of, fds, general, known | possible, relations)
        assignments, optimal, stopped = _solve(problem, limit, deadline)
        timed_out = bool(stopped)
        first = _corrections(assignments[0], cells, problem, implicated, columns, relations)
        repaired = CellRepair("consistent", first, before).apply(relations)
        new = [i for i in _instances(general, repaired, engine) if i not in known]
        # A row moved into a group by a changed key may disagree there in a cell nothing had
        # implicated: the group's cells join the problem (seed 004 §5, case 3).
        grown = _implicate_groups(_agreed(_fd_groups(fds, repaired, engine), repaired, stats), repaired, stats, implicated, allowed)
        if not (new or grown) or rounds >= max_rounds or timed_out:
            break
        known.update(new)
        _implicate_instances(known, general, implicated, allowed)
    left = _left(fds, general, repaired, engine)
    status = "consistent" if not left else "partial"
    result = CellRepair(
        status, first, before, left,
        [_corrections(a, cells, problem, implicated, columns, relations) for a in assignments[1:]],
        cells=len(cells), candidates=sum(len(d.values) for d in problem.domains), components=problem_components(problem),
        rounds=rounds, optimal=optimal, cost=sum(problem.domains[i].costs[v] for i, v in enumerate(assignments[0])),
        domains={c: problem.domains[k] for k, c in enumerate(cells)},
        unrepaired=tuple((cells[k][0], cells[k][1], columns[cells[k][0]][cells[k][2]]) for k in stopped),
    )
    return result


def _staged(first: CellRepair, second: CellRepair, relations: Mapping[str, Sequence[tuple]]) -> CellRepair:
    """The two stages as one repair: each changed cell from its original value to its last one
    (a cell the second stage set back is no change)."""
    by_cell: dict[tuple[str, int, int], CellCorrection] = {(c.relation, c.row, c.position): c for c in first.corrections}
    for c in second.corrections:
        key = (c.relation, c.row, c.position)
        old = relations[c.relation][c.row][c.position]
        if c.new == old:
            by_cell.pop(key, None)
        else:
            by_cell[key] = CellCorrection(c.relation, c.row, c.column, c.position, old, c.new, c.constraints, c.weight)
    return CellRepair(
        second.status, tuple(sorted(by_cell.values(), key=lambda c: (c.relation, c.row, c.position))), first.violations_before, second.left,
        second.alternatives, cells=first.cells + second.cells, candidates=first.candidates + second.candidates,
        components=first.components + second.components, rounds=first.rounds + second.rounds, optimal=first.optimal and second.optimal,
        cost=first.cost + second.cost, domains={**first.domains, **second.domains}, unrepaired=first.unrepaired + second.unrepaired,
    )


def problem_components(problem: CellProblem) -> int:
    return len(problem.components()) if problem.domains else 0


def _column_names(program: Program, relation: str, rows: Sequence[tuple]) -> tuple[str, ...]:
    names = program.column_names.get(relation)
    if names:
        return tuple(names)
    width = len(rows[0]) if rows else dict(program.signatures).get(relation, 0)
    return tuple(str(i + 1) for i in range(width))


def _protections(program: Program, protect: Iterable, relations: Mapping[str, Sequence[tuple]]) -> tuple[set[str], set[tuple[str, int]]]:
    """The protected relations (seed 003's immutable part, :func:`~nablog.solver.problem.protections`)
    and the rows (relation, position) holding a protected fact."""
    names: set[str] = set()
    facts: set[tuple[str, tuple]] = set()
    for p in protections(program, protect, set()):  # the rows are stored as named: nothing is split
        if isinstance(p, str):
            names.add(p)
        else:
            facts.add(p)
    rows = {(p, r) for p, rs in relations.items() for r, row in enumerate(rs) if (p, row) in facts} if facts else set()
    return names, rows


def _source(source: str | None, relations: Mapping[str, Sequence[tuple]], columns: Mapping[str, tuple[str, ...]]) -> tuple[str, int] | None:
    if source is None:
        return None
    relation, sep, column = source.rpartition(".")
    candidates = [relation] if sep else [p for p in relations if column in columns.get(p, ())]
    for p in candidates:
        if p in columns and column in columns[p]:
            return p, columns[p].index(column)
    raise NablogError(
        f"--source {source}: no relation has a column {column!r}" + (f" (relation {relation})" if sep else ""),
        hint="name the column that says where each row comes from, as COLUMN or REL.COLUMN (declare it with #columns)",
    )


def _verified_false(verified: Mapping[tuple[str, tuple], bool]) -> list[_Denial]:
    """Each fact verified false as the ground denial ``:- r(t).`` (named ``verified_false_N``)."""
    out = []
    for n, ((p, args), truth) in enumerate(sorted(((a, t) for a, t in verified.items() if not t), key=lambda x: (x[0][0], row_sort_key(x[0][1])))):
        name = f"verified_false_{n + 1}"
        out.append(_Denial(name, Denial((Literal(Atom(p, tuple(args))),), name)))
    return out


def _entity_keys(fds: Sequence[_Fd], relations: Mapping[str, Sequence[tuple]], source_column: tuple[str, int] | None) -> dict[str, set[int]]:
    """The columns that name the entity a row reports on, in a relation with a source column.

    Data from several sources is each source's report on the same entities (flights: each web
    site's times of a flight): the left-hand side X of dependencies ``X -> A`` that together
    determine every column but X itself, the source and the row identifiers (a column with a
    distinct value in every row) identifies the entity. Its cells are never changed: sources
    disagree on an entity's attributes, and a change of X would move a report to another entity,
    a guess that links every entity to every other and no violation asks for (each group of X
    is violated by its attributes, not by its name). Without a source column nothing is fixed.

    >>> fds = [_Fd("a", "f", (1,), 2), _Fd("b", "f", (1,), 3), _Fd("c", "f", (2,), 3)]
    >>> _entity_keys(fds, {"f": [("s1", "x", 1, 2), ("s2", "x", 1, 3)]}, ("f", 0))
    {'f': {1}}
    """
    if source_column is None:
        return {}
    relation, source = source_column
    rows = relations.get(relation, ())
    if not rows:
        return {}
    width = len(rows[0])
    identifiers = {i for i in range(width) if len({r[i] for r in rows}) == len(rows)}
    determined: dict[tuple[int, ...], set[int]] = {}
    for fd in fds:
        if fd.relation == relation:
            determined.setdefault(fd.lhs, set()).add(fd.rhs)
    out: set[int] = set()
    for lhs, rhs in determined.items():
        if set(range(width)) - set(lhs) - rhs - identifiers - {source} == set():
            out.update(lhs)
    return {relation: out} if out else {}


def _fd_groups(fds: Sequence[_Fd], relations: Mapping[str, Sequence[tuple]], engine: Engine | None = None) -> dict[_Fd, list[list[int]]]:
    """Per functional dependency, the row numbers of each group that violates it (grouped on
    integer codes with numpy: tax 50k's eight dependencies in a fraction of a second; on the
    spark engine, one aggregation per dependency, :mod:`nablog.engines.spark.cells`)."""
    if engine is not None and engine.name == "spark":
        return _spark_fd_groups(fds, relations, engine)
    out: dict[_Fd, list[list[int]]] = {}
    codes: dict[tuple[str, int], tuple[np.ndarray, int]] = {}

    def coded(relation: str, column: int) -> tuple[np.ndarray, int]:
        if (relation, column) not in codes:
            index: dict = {}
            rows = relations[relation]
            found = np.fromiter((index.setdefault(row[column], len(index)) for row in rows), dtype=np.int64, count=len(rows))
            codes[(relation, column)] = (found, max(len(index), 1))
        return codes[(relation, column)]

    for fd in fds:
        if not relations[fd.relation]:
            continue
        key = np.zeros(len(relations[fd.relation]), dtype=np.int64)
        for i in fd.lhs:
            c, n = coded(fd.relation, i)
            key = np.unique(key * n + c, return_inverse=True)[1].astype(np.int64)  # dense again: no overflow
        rhs, n_rhs = coded(fd.relation, fd.rhs)
        distinct = np.unique(key * n_rhs + rhs) // n_rhs
        keys, per_key = np.unique(distinct, return_counts=True)
        bad = keys[per_key > 1]
        if not len(bad):
            continue
        rows = np.flatnonzero(np.isin(key, bad))
        order = np.argsort(key[rows], kind="stable")
        rows = rows[order]
        cuts = np.flatnonzero(np.diff(key[rows])) + 1
        out[fd] = [part.tolist() for part in np.split(rows, cuts)]
    return out


def _spark_fd_groups(fds: Sequence[_Fd], relations: Mapping[str, Sequence[tuple]], engine: Engine) -> dict[_Fd, list[list[int]]]:
    from ..engines.spark.cells import CodedRelation

    out: dict[_Fd, list[list[int]]] = {}
    for relation in dict.fromkeys(fd.relation for fd in fds):
        rows = relations[relation]
        if not rows:
            continue
        mine = [fd for fd in fds if fd.relation == relation]
        found = CodedRelation(rows, len(rows[0]), session=engine.session).violating_groups([(fd.lhs, fd.rhs) for fd in mine])
        out.update((fd, groups) for fd, groups in zip(mine, found) if groups)
    return {fd: out[fd] for fd in fds if fd in out}


def _pair_counts(engine: Engine, rows: Sequence[tuple], weights):
    """On the spark engine, the co-occurrence counts behind candidate domains as Spark
    aggregations (:meth:`nablog.engines.spark.cells.CodedRelation.pair`); else None (numpy)."""
    if engine.name != "spark":
        return None
    from ..engines.spark.cells import CodedRelation

    return CodedRelation(rows, len(rows[0]), weights, session=engine.session).pair


def _instances(general: Sequence[_Denial], relations: Mapping[str, Sequence[tuple]], engine: Engine, variants: Mapping[str, list[tuple[int, tuple]]] | None = None) -> list[_Instance]:
    """The violated instances of the general denials, with the rows of their positive literals;
    with ``variants`` (relation -> (row, another tuple that row may become)), every instance
    some of the rows' variants violate as well (:func:`_variants`)."""
    if not general:
        return []
    program = Program(tuple(Denial(d.body, d.name) for d in general))
    model = {p: set(rows) for p, rows in relations.items()}
    position: dict[str, dict[tuple, list[int]]] = {}
    for p, rows in relations.items():
        index: dict[tuple, list[int]] = {}
        for r, row in enumerate(rows):
            index.setdefault(row, []).append(r)
        position[p] = index
    for p, extra in (variants or {}).items():
        for r, row in extra:
            model.setdefault(p, set()).add(row)
            position.setdefault(p, {}).setdefault(row, []).append(r)
    out: list[_Instance] = []
    for v in find_falsifiers(program, model, engine):
        for f in v.falsifiers():
            choices = [[(pred, r) for r in position.get(pred, {}).get(args, [])] for pred, args in f.positive]
            for combo in itertools.product(*choices):
                if len({c for c in combo}) == len(combo) or len(combo) == 1:
                    out.append(_Instance(f.constraint, tuple(combo)))
    return sorted(set(out), key=lambda i: (i.name, i.rows))


def _variants(domain_of: Mapping[tuple[str, int, int], Domain], relations) -> dict[str, list[tuple[int, tuple]]]:
    """Every tuple each row with candidates may become (its cells' candidate values combined),
    for :func:`_instances`: the denial instances a repair could create are encoded before it is
    chosen, so the optimum is taken over what the repaired rows will violate (a row moved into a
    denial's reach is seen by the optimisation, not only by the check after it)."""
    free: dict[tuple[str, int], list[tuple[int, Domain]]] = {}
    for (p, r, i), d in domain_of.items():
        if d.free:
            free.setdefault((p, r), []).append((i, d))
    out: dict[str, list[tuple[int, tuple]]] = {}
    for (p, r), cells in sorted(free.items()):
        if math.prod(len(d.values) for _, d in cells) > MAX_COMBINATIONS:
            continue
        own = relations[p][r]
        for combo in itertools.product(*(d.values for _, d in cells)):
            row = list(own)
            for (i, _), v in zip(cells, combo):
                row[i] = v
            if tuple(row) != own:
                out.setdefault(p, []).append((r, tuple(row)))
    return out


def _agreed(groups: Mapping[_Fd, list[list[int]]], relations, stats: Mapping[str, Statistics]) -> dict[_Fd, list[list[int]]]:
    """The violating groups whose (source-weighted) majority value of the right-hand side holds
    more than half the group's weight. Only such a group says which value is right: the premise
    of a minimal repair, that wrong cells are a minority, holds there. A group without a majority
    (tax: 340 rows of zip 01907 with 200 different cities) says instead that its left-hand side
    is wrong or that the data does not follow the dependency; changing cells there on naive-Bayes
    scores made the data worse, so it implicates nothing and stays violated (reported). Nor does
    a group whose key holds a null (``""``, ``#null``): a missing value names no entity, and
    rows sharing it need not agree (rayyan: 90 articles without a pagination, a "key" group
    whose author lists were all set to one value)."""
    out: dict[_Fd, list[list[int]]] = {}
    for fd, key_groups in groups.items():
        weights = stats[fd.relation].weights
        nulls = stats[fd.relation].nulls
        rows = relations[fd.relation]
        for group in key_groups:
            if any(rows[group[0]][i] in nulls for i in fd.lhs):
                continue
            votes = _votes(group, rows, fd.rhs, weights, nulls)
            if votes and 2 * max(votes.values()) > sum(votes.values()):
                out.setdefault(fd, []).append(group)
    return out


def _votes(group: Sequence[int], rows, column: int, weights, nulls=frozenset()) -> dict:
    """Each value of ``column`` in the group with the summed weight of its rows; a null (missing
    value) is no claim and does not vote."""
    votes: dict = {}
    for r in group:
        if rows[r][column] not in nulls:
            votes[rows[r][column]] = votes.get(rows[r][column], 0.0) + weights[r]
    return votes


def _implicate_groups(groups: Mapping[_Fd, list[list[int]]], relations, stats: Mapping[str, Statistics], implicated: dict, allowed) -> bool:
    """Mark the left- and right-hand cells of the rows that disagree with their (agreed) violating
    group's majority; whether a cell was new. The majority is what the violation says is right,
    so its rows are no suspects: a change of their value, or of their key, has no evidence
    behind it (a cell holding the majority of its group is implicated only by another
    constraint). A disagreeing row is wrong in its value or in its key (tax: a wrong zip puts a
    row into a group whose exemptions are not its own), so both are implicated."""
    grown = False
    for fd, key_groups in groups.items():
        rows = relations[fd.relation]
        for group in key_groups:
            votes = _votes(group, rows, fd.rhs, stats[fd.relation].weights, stats[fd.relation].nulls)
            majority = max(votes, key=lambda v: votes[v])
            for r in group:
                if rows[r][fd.rhs] == majority:
                    continue
                for i in fd.lhs + (fd.rhs,):
                    if not allowed((fd.relation, r, i)):
                        continue
                    names = implicated.setdefault((fd.relation, r, i), set())
                    grown |= not names
                    names.add(fd.name)
    return grown


def _implicate_instances(instances: Iterable[_Instance], general: Sequence[_Denial], implicated: dict, allowed) -> None:
    """Mark the cells a denial reads in the *suspect* tuples of its violated instances.

    A tuple is suspect in an instance when it is in more violated instances of the denial than
    the instance's other tuples: a wrong value conflicts with many right ones, a right value only
    with the few wrong ones (holistic data cleaning repairs the tuples of most conflicts first,
    Chu, Ilyas, Papotti, ICDE 2013). Tuples with as many conflicts as one another — two rows
    sharing a key — are equally suspect: the instance implicates nothing. And as a dependency's
    group implicates only under a majority (:func:`_agreed`), a denial implicates only when its
    suspects are fewer than half the tuples in its violations: a minimal repair presumes wrong
    tuples are a minority; where most are suspect (rayyan's volume-issue denial: 218 of 356) the
    denial contradicts the data rather than pointing at errors, and stays violated (reported).
    An instance of one tuple (a foreign key, a fact verified false) implicates that tuple.
    """
    by_name: dict[str, list[_Instance]] = {}
    for inst in instances:
        by_name.setdefault(inst.name, []).append(inst)
    denials = {d.name: d for d in general}
    for name, found in by_name.items():
        conflicts: dict[tuple[str, int], int] = {}
        for inst in found:
            for t in set(inst.rows):
                conflicts[t] = conflicts.get(t, 0) + 1
        marked: list[tuple[_Instance, list[bool]]] = []
        for inst in found:
            counts = [conflicts[t] for t in inst.rows]
            if len(set(inst.rows)) == 1 or len(set(counts)) > 1:
                marked.append((inst, [c == max(counts) for c in counts]))
        suspects = {t for inst, marks in marked for t, m in zip(inst.rows, marks) if m}
        if 2 * len(suspects) >= len(conflicts) and any(len(set(inst.rows)) > 1 for inst, _ in marked):
            continue
        for inst, marks in marked:
            for (pred, r), read, m in zip(inst.rows, denials[name].read, marks):
                if m:
                    for i in read:
                        if allowed((pred, r, i)):
                            implicated.setdefault((pred, r, i), set()).add(name)


def _change_priors(groups: Mapping[_Fd, list[list[int]]], relations, stats: Mapping[str, Statistics]) -> dict[tuple[str, int], float]:
    """The cost of a change per (relation, column), from the estimated rate of wrong cells: in the
    groups violating a dependency with that right-hand column, the share of rows that disagree
    with the group's (source-weighted) majority; a column no violated dependency determines gets its
    relation's rate, a relation without violated dependencies the default."""
    wrong: dict[tuple[str, int], float] = {}
    seen: dict[tuple[str, int], float] = {}
    for fd, key_groups in groups.items():
        weights = stats[fd.relation].weights
        rows = relations[fd.relation]
        for group in key_groups:
            votes = _votes(group, rows, fd.rhs, weights, stats[fd.relation].nulls)
            majority = max(votes, key=lambda v: votes[v]) if votes else None
            key = (fd.relation, fd.rhs)
            wrong[key] = wrong.get(key, 0.0) + sum(1 for r in group if rows[r][fd.rhs] != majority)
            seen[key] = seen.get(key, 0.0) + len(group)
    out = {key: change_prior(wrong[key] / seen[key]) for key in seen}
    for relation in {r for r, _ in seen}:
        total = sum(v for (r, _), v in seen.items() if r == relation)
        out[(relation, -1)] = change_prior(sum(v for (r, _), v in wrong.items() if r == relation) / total)
    return out


def _add_domains(implicated, domain_of, stats: Mapping[str, Statistics], source_column, changes: Mapping[tuple[str, int], float], fds: Sequence[_Fd], relations) -> None:
    todo: dict[tuple[str, int], list[int]] = {}
    for p, r, i in implicated:
        if (p, r, i) not in domain_of:
            todo.setdefault((p, i), []).append(r)
    landing = _Landing(fds, relations, stats)
    for (p, i), rows in sorted(todo.items()):
        st = stats[p]
        context = [b for b in range(st.width) if b != i and not (source_column and source_column == (p, b))]
        change = changes.get((p, i), changes.get((p, -1), CHANGE))
        found = domains(st, i, rows, context, change)
        for r in rows:
            own = st.columns[i].values[st.columns[i].codes[r]]
            voting = [fd for fd in fds if fd.rhs == i and fd.relation == p and fd.name in implicated[(p, r, i)]]
            if voting:
                domain_of[(p, r, i)] = _voted(st, i, r, context, change, {landing.majority_at(fd, r) for fd in voting})
                continue
            d = found.get(r)
            domain_of[(p, r, i)] = d if d is not None and landing.agrees(p, r, i, d.values[1]) else Domain((own,), (0,))


def _voted(st: Statistics, column: int, row: int, context, change: float, majorities: set) -> Domain:
    """The domain of a right-hand cell of a row that disagrees with its violated group(s): the
    group's majority value — it holds more than half the group's (source-weighted) votes, the
    dominant evidence there is — when every group voting on the cell names the same one, at the
    cost of its naive-Bayes odds against the own value."""
    col = st.columns[column]
    own = col.values[col.codes[row]]
    if len(majorities) != 1:
        return Domain((own,), (0,))
    value = next(iter(majorities))
    if value is _NONE or value == own or value in st.nulls:
        return Domain((own,), (0,))
    e_own, e_new = energies(st, column, np.array([row, row]), np.array([col.codes[row], col.values.index(value)]), context).tolist()
    total = e_new + change - CLOSENESS * similarity(own, value)
    if total > e_own:
        return Domain((own,), (0,))  # the row's other values favour its own: no dominance
    return Domain((own, value), (0, max(1, round(softplus(total - e_own) * SCALE))))


class _Landing:
    """Whether a row whose key cell takes a new value lands among rows that vouch for it.

    A change of a dependency's left-hand side moves the row into another group. When no
    violated group votes on the cell as its right-hand side, it is a repair only when that group exists and its (source-weighted) majority holds the row's own
    right-hand value, for every dependency whose left-hand side has the cell: the rows there
    agree with this one (tax: a wrong zip, whose city and exemptions are those of another zip).
    A key no other row has, or one whose rows say otherwise, only takes the row out of the
    dependency's reach — an escape, not a repair (rayyan: creation dates moved to the most
    frequent date, journal titles to another journal)."""

    def __init__(self, fds: Sequence[_Fd], relations, stats: Mapping[str, Statistics]):
        self.fds = fds
        self.relations = relations
        self.stats = stats
        self.majority: dict[_Fd, dict[tuple, Constant]] = {}

    def agrees(self, relation: str, row: int, column: int, value: Constant) -> bool:
        own = self.relations[relation][row]
        for fd in self.fds:
            if fd.relation != relation or column not in fd.lhs:
                continue
            key = tuple(value if i == column else own[i] for i in fd.lhs)
            if self._majorities(fd).get(key, _NONE) != own[fd.rhs]:
                return False
        return True

    def majority_at(self, fd: _Fd, row: int):
        own = self.relations[fd.relation][row]
        return self._majorities(fd).get(tuple(own[i] for i in fd.lhs), _NONE)

    def _majorities(self, fd: _Fd) -> dict[tuple, Constant]:
        if fd not in self.majority:
            votes: dict[tuple, dict] = {}
            weights, nulls = self.stats[fd.relation].weights, self.stats[fd.relation].nulls
            for r, row in enumerate(self.relations[fd.relation]):
                if row[fd.rhs] not in nulls:
                    tally = votes.setdefault(tuple(row[i] for i in fd.lhs), {})
                    tally[row[fd.rhs]] = tally.get(row[fd.rhs], 0.0) + weights[r]
            self.majority[fd] = {key: max(tally, key=lambda v: (tally[v], row_sort_key((v,)))) for key, tally in votes.items()}
        return self.majority[fd]


_NONE = object()


def _problem(domain_of, fds: Sequence[_Fd], general: Sequence[_Denial], instances: Iterable[_Instance], relations) -> tuple[CellProblem, list[tuple[str, int, int]]]:
    cells = sorted(c for c, d in domain_of.items() if d.free)
    index = {c: k for k, c in enumerate(cells)}
    problem = CellProblem([domain_of[c] for c in cells])
    free_rows: dict[str, set[int]] = {}
    for p, r, _ in cells:
        free_rows.setdefault(p, set()).add(r)
    for fd in fds:
        rows = relations[fd.relation]
        touched = sorted(r for r in free_rows.get(fd.relation, ()) if any((fd.relation, r, i) in index for i in fd.lhs + (fd.rhs,)))
        if not touched:
            continue
        factor = KeyFactor(fd.name)
        for r in touched:
            row = rows[r]
            lhs = tuple(index.get((fd.relation, r, i), ("=", row[i])) for i in fd.lhs)
            rhs = index.get((fd.relation, r, fd.rhs))
            factor.rows.append(KeyRow(lhs, rhs, None if rhs is not None else row[fd.rhs]))
        reach = {k for kr in factor.rows for k, _ in kr.keys(problem.domains)}
        moving = set(touched)
        for r, row in enumerate(rows):
            if r in moving:
                continue
            key = tuple(row[i] for i in fd.lhs)
            if key in reach:
                factor.fixed.setdefault(key, set()).add(row[fd.rhs])
        problem.keys.append(factor)
    by_name = {d.name: d for d in general}
    base = {p: set(rows) for p, rows in relations.items()}
    for inst in sorted(instances, key=lambda i: (i.name, i.rows)):
        denial = by_name[inst.name]
        slots = []  # per literal: per position, a cell number or None
        free = []
        for (pred, r), read in zip(inst.rows, denial.read):
            slot = {}
            for i in read:
                k = index.get((pred, r, i))
                if k is not None:
                    slot[i] = k
                    if k not in free:
                        free.append(k)
            slots.append(slot)
        if not free:
            continue
        domains_free = [problem.domains[k].values for k in free]
        if np.prod([len(v) for v in domains_free]) > MAX_COMBINATIONS:
            continue  # too many combinations to list: left to the check after solving
        violated = set()
        for combo in itertools.product(*(range(len(v)) for v in domains_free)):
            chosen = dict(zip(free, combo))
            values = []
            for (pred, r), slot in zip(inst.rows, slots):
                row = list(relations[pred][r])
                for i, k in slot.items():
                    row[i] = problem.domains[k].values[chosen[k]]
                values.append(tuple(row))
            if denial.holds(values, base):
                violated.add(combo)
        problem.instances.append(InstanceFactor(inst.name, tuple(free), frozenset(violated)))
    return problem, cells


def _solve(problem: CellProblem, limit: int, deadline: float | None) -> tuple[list[tuple[int, ...]], bool, list[int]]:
    """Optimal assignments of the whole problem (up to ``limit``; with ``limit`` 1 the changes
    every optimal assignment makes, :func:`~nablog.repair.cellsolve.certain`), whether proven
    optimal, and the cells of the components the deadline stopped (each keeps its values).

    Components are solved smallest first, so a deadline spent on one large component leaves the
    small ones solved. A component the deadline stopped keeps every cell: its best model so far is
    not proven least cost among the candidates, the only ground a change has (a guess there made
    flights' data worse: error drop −0.004)."""
    n = len(problem.domains)
    per_component = []
    optimal = True
    stopped: list[int] = []
    for comp in sorted(problem.components(), key=lambda c: len(c.cells)):
        if deadline is not None and time.monotonic() > deadline:
            stopped.extend(comp.cells)
            per_component.append((comp.cells, [tuple(0 for _ in comp.cells)]))
            continue
        solutions = [certain(comp.problem, deadline)] if limit == 1 else solve(comp.problem, limit, deadline)
        optimal &= all(s.optimal for s in solutions)
        if not all(s.optimal for s in solutions) and deadline is not None and time.monotonic() > deadline:
            stopped.extend(comp.cells)
            solutions = solutions[:0]
        per_component.append((comp.cells, [s.assignment for s in solutions] or [tuple(0 for _ in comp.cells)]))
    out = []
    for combo in itertools.islice(itertools.product(*(options for _, options in per_component)), limit):
        assignment = [0] * n
        for (cells, _), choice in zip(per_component, combo):
            for c, v in zip(cells, choice):
                assignment[c] = v
        out.append(tuple(assignment))
    return out or [tuple([0] * n)], optimal, sorted(stopped)


def _corrections(assignment, cells, problem: CellProblem, implicated, columns, relations) -> tuple[CellCorrection, ...]:
    out = []
    for k, v in enumerate(assignment):
        if v == 0:
            continue
        p, r, i = cells[k]
        d = problem.domains[k]
        out.append(CellCorrection(p, r, columns[p][i], i, d.values[0], d.values[v], tuple(sorted(implicated.get((p, r, i), ()))), d.costs[v] / SCALE))
    return tuple(sorted(out, key=lambda c: (c.relation, c.row, c.position)))


def _left(fds: Sequence[_Fd], general: Sequence[_Denial], relations, engine: Engine) -> list[tuple[str, str]]:
    """The violations after the repair: (constraint, description), FD groups first."""
    out = []
    for fd, gs in _fd_groups(fds, relations, engine).items():
        for rows in gs:
            key = tuple(relations[fd.relation][rows[0]][i] for i in fd.lhs)
            values = sorted({str(relations[fd.relation][r][fd.rhs]) for r in rows})
            out.append((fd.name, f"rows {', '.join(str(r) for r in rows[:6])}{' ...' if len(rows) > 6 else ''}: key {key} has values {', '.join(values[:4])}"))
    for inst in _instances(general, relations, engine):
        out.append((inst.name, "rows " + ", ".join(f"{p}[{r}]" for p, r in inst.rows)))
    return out


__all__ = ["CellCorrection", "CellRepair", "repair_cells"]
