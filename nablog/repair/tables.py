"""Minimal correction tables: the sets of insertions and deletions that restore consistency.

A correction table (CT) for a database ⟨F, Δ, Γ⟩ is an update R with F∘R ⊨ Γ ∪ Δ; it is minimal
when no proper subset is one (seed 004, Def. 2.4). nablog finds them as the view-update solver
finds realizations, with the same machinery: a :class:`~nablog.solver.ground.GroundProblem` whose
candidates are the potential corrections (Def. 5.1) and whose denials are the violated ground
instances, handed to :class:`~nablog.solver.asp.AspProblem`, which enumerates the subset-minimal
change sets (or, with weights, the cardinality-minimal or least-weight ones).

- **Consistently signed constraints over base relations** (seed 004 §5, case 1): every minimal CT
  is a minimal hitting set of the falsifiers, so the ground problem is just the falsifiers. A
  functional-dependency conflict group is encoded by class atoms (``some tuple with right-hand
  value v is kept``) and one denial per pair of classes, linear in the group rather than
  quadratic. A foreign key that needs a missing parent gets an insertion candidate with fresh
  values (``new1``, ``new2``, … — replace them with real ones when applying).
- **General constraints over base relations** (case 3): a correction may make another instance
  hold. Each proposed table is checked on the corrected database, only on the instances that use
  a changed tuple; new falsifiers join the ground problem and the enumeration starts again, until
  the tables found hold (the loop of §5, case 3, run to its fixpoint over all tables at once).
- **Constraints over views**: the view-update relevance analysis
  (:class:`~nablog.solver.ground.Relevance`) turns the violated instances into goals over base
  facts, with propagation and compensation of side effects, and the tables are verified by
  re-evaluating the database.

The ground problem is split into independent components (connected components of the conflict
hypergraph, with networkx) that are solved separately: the minimal tables of the whole are the
combinations of the minimal tables of the parts, so a large database with local conflicts costs
the sum of its conflicts, not their product.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import networkx as nx

from ..engines import Engine, PythonEngine
from ..engines.lookup import ModelIndex
from ..lang import Atom, Constant, Delta, NablogError, Program, row_sort_key, shown_name
from ..lang.delta import substitute_atom
from ..solver.ground import Bounds, GroundAtom, GroundProblem, Relevance
from ..solver.problem import protections
from ..solver.whole import WholeProblem, asp_problem, has_aggregates, whole_problem
from .constraints import ConstraintInfo, constraint_infos, consistently_signed, uses_views
from .violations import Correction, Falsifier, Falsifiers, FdConflict, correction_text, find_falsifiers

POLICIES = ("subset", "min-card", "trust=REL:W,...", "cells")
CLASS_PREFIX = "fd_class__"


# -- results --------------------------------------------------------------------------------------


def _key(c: Correction) -> tuple:
    return (c[1][0], row_sort_key(c[1][1]), c[0])


@dataclass(frozen=True)
class CorrectionTable:
    """An update that restores consistency: facts to insert and to delete (seed 004, Def. 2.4).

    ``fresh`` names the new constants of inserted facts (values nobody knows yet).
    """

    insert: tuple[Atom, ...] = ()
    delete: tuple[Atom, ...] = ()
    fresh: tuple[str, ...] = ()

    @classmethod
    def of(cls, corrections: Iterable[Correction], fresh: Iterable[str] = ()) -> "CorrectionTable":
        corrections = sorted(set(corrections), key=_key)
        ins = tuple(Atom(shown_name(a[0]), a[1]) for s, a in corrections if s == "+")
        dele = tuple(Atom(shown_name(a[0]), a[1]) for s, a in corrections if s == "-")
        used = {v for a in ins for v in a.args}
        return cls(ins, dele, tuple(f for f in fresh if f in used))

    @property
    def size(self) -> int:
        return len(self.insert) + len(self.delete)

    def corrections(self) -> set[Correction]:
        return {("+", (a.pred, tuple(a.args))) for a in self.insert} | {("-", (a.pred, tuple(a.args))) for a in self.delete}

    def lines(self) -> list[str]:
        return [f"+{a}" for a in self.insert] + [f"-{a}" for a in self.delete]

    def to_json(self) -> dict:
        return {"insert": [str(a) for a in self.insert], "delete": [str(a) for a in self.delete]}

    @property
    def delta(self) -> Delta:
        """The table as a :class:`~nablog.lang.Delta` on the predicates as shown (``p``, not ``base__p``)."""
        return Delta(frozenset(self.insert), frozenset(self.delete))

    def substitute(self, values: Mapping[str, Constant]) -> "CorrectionTable":
        """The same table with new constants replaced by user-given values."""
        return CorrectionTable(tuple(substitute_atom(a, values) for a in self.insert), self.delete, tuple(f for f in self.fresh if f not in values))


@dataclass
class RepairResult:
    """What :func:`repair` found.

    ``status``: ``complete`` (every minimal table is listed), ``bounded`` (more exist than
    ``limit``), ``timeout``, or ``unsatisfiable`` (no table: ``reasons`` names the constraints and
    protected facts in the way). ``optimal`` is False when a timeout cut an optimization short.
    """

    status: str
    falsifiers: Falsifiers
    tables: list[CorrectionTable] = field(default_factory=list)
    policy: str = "subset"
    case: str = "consistently signed"
    components: int = 0
    candidates: int = 0
    rounds: int = 1
    reasons: list[str] = field(default_factory=list)
    optimal: bool = True
    why: dict[Correction, dict[str, int]] = field(default_factory=dict)

    @property
    def consistent(self) -> bool:
        """Whether the first table makes the database consistent (every table found does)."""
        return bool(self.tables)

    def __iter__(self):
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    def __getitem__(self, i: int) -> CorrectionTable:
        return self.tables[i]

    @property
    def message(self) -> str:
        if not self.falsifiers:
            return "consistent: nothing to repair"
        n = len(self.tables)
        if not n:
            if self.status == "timeout":
                return "no correction table found before the timeout"
            return "no correction table: " + (", ".join(self.reasons) or "the constraints cannot all hold") + " stand in the way"
        text = f"{n} minimal correction table" + ("" if n == 1 else "s")
        if self.policy != "subset":
            text += f" ({self.policy}" + ("" if self.optimal else ", best found, not proven optimal") + ")"
        if self.status == "bounded":
            text += ", more exist (--enumerate N lists more)"
        elif self.status == "timeout":
            text += " (timeout: the search was stopped)"
        return text


@dataclass(frozen=True)
class Policy:
    """Which tables count as best: ``subset`` (subset-minimal, Def. 2.4), ``min-card`` (fewest
    changes) or ``trust`` (least total weight; a change to a fact of relation r costs ``weights[r]``,
    1 by default, so more trusted relations are changed last)."""

    kind: str = "subset"
    weights: tuple[tuple[str, int], ...] = ()

    def __str__(self) -> str:
        if self.kind == "trust":
            return "trust=" + ",".join(f"{r}:{w}" for r, w in self.weights)
        return self.kind

    def weight(self, pred: str) -> int:
        return dict(self.weights).get(shown_name(pred), 1)


def parse_policy(text: str | Policy) -> Policy:
    """``subset``, ``min-card`` or ``trust=REL:W,REL:W``.

    >>> parse_policy("trust=m1:3,m2:1")
    Policy(kind='trust', weights=(('m1', 3), ('m2', 1)))
    """
    if isinstance(text, Policy):
        return text
    if text in ("subset", "min-card"):
        return Policy(text)
    if text.startswith("trust="):
        weights = []
        for item in text[len("trust=") :].split(","):
            rel, sep, w = item.partition(":")
            if not sep or not rel or not w.strip().isdigit():
                raise NablogError(
                    f"--policy {text}: cannot read '{item}'",
                    hint="write trust=REL:WEIGHT,... with integer weights, e.g. trust=m1:3,m2:1 (a change to m1 costs 3)",
                )
            weights.append((rel.strip(), int(w)))
        return Policy("trust", tuple(weights))
    if text == "cells":
        raise NablogError("the cells policy replaces values, not tuples", hint="call nablog.repair.repair_cells (nablog repair --policy cells does)")
    raise NablogError(f"unknown repair policy {text!r}", hint="choose subset, min-card, trust=REL:W,... or cells")


# -- the ground problem ---------------------------------------------------------------------------


class _Builder:
    """Accumulates the ground problem of a repair: candidates, class rules and denials."""

    def __init__(self, index: ModelIndex, universe: Set, protect: Iterable, verified: Mapping[GroundAtom, bool]):
        self.index = index
        self.universe = universe
        self.problem = GroundProblem()
        self.candidate_ids: dict[Correction, int] = {}
        self.protected_relations = {p for p in protect if isinstance(p, str)}
        self.protected_facts = {p for p in protect if not isinstance(p, str)}
        self.verified = verified
        self.fills: dict[tuple[str, tuple], GroundAtom] = {}
        self.seen_denials: set = set()
        self.fresh_count = 0
        self.sets: dict[str, set] = {}

    def contains(self, a: GroundAtom) -> bool:
        rows = self.sets.get(a[0])
        if rows is None:
            # Membership in a columnar relation scans it; one python set per relation is cheaper.
            rows = self.sets[a[0]] = set(self.index.model.get(a[0], ()))
        return a[1] in rows

    def atom(self, a: GroundAtom, present: bool | None = None) -> GroundAtom:
        """Make ``a`` an atom the solver may change: a deletion candidate when it is a fact now, an
        insertion candidate when it is not (``present`` says which, when the caller knows)."""
        if ("-", a) in self.candidate_ids or ("+", a) in self.candidate_ids:
            return a
        if present is None:
            present = self.contains(a)
        c = ("-" if present else "+", a)
        if c not in self.candidate_ids:
            self.candidate_ids[c] = len(self.problem.candidates)
            self.problem.candidates.append(c)
            if a[0] in self.protected_relations or a in self.protected_facts or shown_name(a[0]) in self.protected_relations:
                self.problem.protected.add(c)
            if a in self.verified:
                # A fact the expert verified keeps its verified truth value (seed 004 §5, case 2).
                self.problem.protected.add(c)
        return a

    def fill(self, pred: str, pattern: tuple) -> GroundAtom:
        """The fact inserted for a missing ``pred(pattern)``: fresh constants at the open places."""
        key = (pred, pattern)
        if key not in self.fills:
            values = []
            for v in pattern:
                if v is None:
                    values.append(self.fresh())
                else:
                    values.append(v)
            self.fills[key] = self.atom((pred, tuple(values)), False)
        return self.fills[key]

    def fresh(self) -> str:
        while True:
            self.fresh_count += 1
            name = f"new{self.fresh_count}"
            if name not in self.universe:
                self.problem.fresh.append(name)
                return name

    def add_falsifier(self, f: Falsifier, current: bool = False) -> bool:
        """Add a violated instance; ``current`` when it holds in the database itself (so its
        positive atoms are facts and its negated ones are not)."""
        pos = tuple(self.atom(a, True if current else None) for a in f.positive)
        neg = tuple(self.atom(a, False if current else None) for a in f.negative)
        neg += tuple(self.fill(p, pattern) for p, pattern in f.missing)
        key = (f.constraint, frozenset(pos), frozenset(neg))
        if key in self.seen_denials:
            return False
        self.seen_denials.add(key)
        self.problem.denials.append((f.constraint, pos, neg))
        return True

    def add_group(self, g: FdConflict) -> None:
        """Class atoms: ``fd_class__C(key, v)`` holds while some tuple with value v is kept; two
        classes may not both hold."""
        classes = []
        for value, rows in g.classes:
            head = (CLASS_PREFIX + g.constraint, (g.key, value))
            for row in rows:
                self.problem.rules.append((head, (self.atom((g.shape.pred, row), True),), ()))
            classes.append(head)
        for i, a in enumerate(classes):
            for b in classes[i + 1 :]:
                self.problem.denials.append((g.constraint, (a, b), ()))


def decompose(problem: GroundProblem) -> list[GroundProblem]:
    """Split a ground problem into independent parts: the connected components of the graph on its
    atoms in which a rule links its head with its body and a denial links its atoms.

    >>> p = GroundProblem(candidates=[("-", ("r", (1,))), ("-", ("r", (2,))), ("-", ("s", (3,)))],
    ...                   denials=[("c", (("r", (1,)), ("r", (2,))), ()), ("d", (("s", (3,)),), ())])
    >>> [[a for _, a in part.candidates] for part in decompose(p)]
    [[('r', (1,)), ('r', (2,))], [('s', (3,))]]
    """
    graph = nx.Graph()
    for _, a in problem.candidates:
        graph.add_node(a)
    for head, pos, neg in problem.rules:
        graph.add_node(head)
        graph.add_edges_from((head, b) for b in pos + neg)
    relevant: set = set()
    for _, pos, neg in problem.denials:
        atoms = pos + neg
        graph.add_node(atoms[0])
        graph.add_edges_from((atoms[0], b) for b in atoms[1:])
        relevant.add(atoms[0])
    for _, a in problem.require_true + problem.require_false:
        graph.add_node(a)
        relevant.add(a)
    component_of: dict = {}
    parts: list[GroundProblem] = []
    for atoms in nx.connected_components(graph):
        if not atoms & relevant:
            continue
        for a in atoms:
            component_of[a] = len(parts)
        parts.append(GroundProblem(fresh=problem.fresh, bounded=problem.bounded))
    for c in problem.candidates:
        k = component_of.get(c[1])
        if k is not None:
            parts[k].candidates.append(c)
            if c in problem.protected:
                parts[k].protected.add(c)
    for rule in problem.rules:
        k = component_of.get(rule[0])
        if k is not None:
            parts[k].rules.append(rule)
    for denial in problem.denials:
        parts[component_of[(denial[1] + denial[2])[0]]].denials.append(denial)
    for name, a in problem.require_true:
        parts[component_of[a]].require_true.append((name, a))
    for name, a in problem.require_false:
        parts[component_of[a]].require_false.append((name, a))
    return parts


# -- solving --------------------------------------------------------------------------------------


@dataclass
class _Solved:
    tables: list[frozenset[Correction]]
    status: str  # complete | stopped | timeout | unsatisfiable
    core: list[str]


def _solve(part: GroundProblem, policy: Policy, limit: int, deadline: float | None, preferences: Mapping[Correction, tuple[int, int]]) -> _Solved:
    weights = None
    if policy.kind != "subset" or preferences:
        weights = {}
        for k, c in enumerate(part.candidates):
            # With preferences alone (subset), fewest changes decide among the preferred tables.
            base = policy.weight(c[1][0]) if policy.kind == "trust" else 1
            weights[k] = preferences.get(c, (base, 1))
    asp = asp_problem(part, weights=weights)
    found: list[frozenset[Correction]] = []

    def accept(change_set: frozenset[int]) -> bool:
        found.append(frozenset(part.candidates[k] for k in change_set))
        return len(found) <= limit  # one more than asked: it tells whether there are more

    remaining = None if deadline is None else max(0.01, deadline - time.monotonic())
    result = asp.enumerate(accept, timeout=remaining)
    status = result.status
    if len(found) > limit:
        found = found[:limit]
        status = "stopped"
    return _Solved(sorted(found, key=lambda s: (len(s), sorted(map(_key, s)))), status, result.core)


def repair(
    rules: Program,
    model: Mapping[str, Set],
    *,
    engine: Engine | None = None,
    policy: str | Policy = "subset",
    limit: int = 1,
    timeout: float | None = None,
    protect: Iterable = (),
    verified: Mapping[GroundAtom, bool] | None = None,
    preferences: Mapping[Correction, tuple[int, int]] | None = None,
    falsifiers: Falsifiers | None = None,
    max_rounds: int = 20,
    progress: Callable[[str], None] | None = None,
) -> RepairResult:
    """Minimal correction tables for a database (seed 004, Def. 2.4), at most ``limit`` of them.

    Parameters
    ----------
    rules : Program
        Rules and constraints (facts separated out, see ``separate_facts``).
    model : mapping
        The perfect model over the current facts.
    engine : Engine, optional
        Finds the violations (python by default; spark for large data).
    policy : str or Policy
        ``subset`` (default), ``min-card`` or ``trust=REL:W,...`` (see :class:`Policy`).
    limit : int
        At most this many tables, sorted by size, then atoms. With fewer than all of them,
        which ones come first is the solver's choice: every one is minimal.
    timeout : float, optional
        Seconds for the search.
    protect : relation names or ground atoms
        Facts that must not change, besides the program's ``#protect``.
    verified : mapping, optional
        Facts an expert verified, to their truth value (seed 004 §5, case 2): they keep it.
    preferences : mapping, optional
        Per correction, a ``(weight, priority)`` that overrides the policy's (the maintenance of
        a table uses it to keep recent updates).
    falsifiers : Falsifiers, optional
        The violations, when the caller has found them already.

    Examples
    --------
    Seed 004, Example 5.1: after ``m1(a, b)`` arrives while source 2 holds ``m2(a, c)``:

    >>> from nablog.lang import parse, separate_facts
    >>> program, facts = separate_facts(parse('''
    ...     #constraint g12 :- m1(X, Y), m2(X, Z), Y != Z.
    ...     m1(a, b). m2(a, c).'''))
    >>> result = repair(program, PythonEngine().evaluate(program, facts), limit=10)
    >>> [t.lines() for t in result], result.status
    ([['-m1(a, b)'], ['-m2(a, c)']], 'complete')
    """
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    policy = parse_policy(policy)
    if limit < 1:
        raise NablogError("the number of correction tables to enumerate must be at least 1", hint="give --enumerate N with N >= 1")
    engine = engine or PythonEngine()
    infos = constraint_infos(rules)
    say = progress or (lambda message: None)
    say("finding violations")
    if falsifiers is None:
        falsifiers = find_falsifiers(rules, model, engine, infos=infos)
    verified = dict(verified or {})
    if not falsifiers and not _verified_changes(verified, model):
        return RepairResult("complete", falsifiers, [CorrectionTable()], str(policy))
    index = ModelIndex(model)
    universe = index.constants() | set(rules.constants())
    protected = protections(rules, protect, set(rules.derived))
    constraints = [c.constraint for c in infos]
    general = uses_views(rules, constraints)
    signed = consistently_signed(rules, constraints)
    case = "general, over views" if general else ("consistently signed" if signed else "general")
    builder = _Builder(index, universe, protected, verified)
    if has_aggregates(rules):
        # The falsifiers of an aggregate are its groups: clingo grounds the program whole.
        case, general = "general, through aggregates (the program grounded whole)", True
        builder.problem = _whole_problem(rules, model, universe, protected, verified)
    elif general:
        problem = _relevant_problem(rules, model, index, universe, protected, falsifiers)
        builder.problem = problem
        builder.candidate_ids = {c: k for k, c in enumerate(problem.candidates)}
    else:
        for v in falsifiers:
            for g in v.groups:
                builder.add_group(g)
            for f in v.falsifier_list:
                builder.add_falsifier(f, current=True)
    if not isinstance(builder.problem, WholeProblem):
        _force_verified(builder, verified, index)
    preferences = dict(preferences or {})
    checker = _Checker(rules, model, engine, infos, full=general or engine.name != "python")
    rounds = 0
    while True:
        rounds += 1
        say(f"round {rounds}: solving {len(builder.problem.denials):,} ground constraints over {len(builder.problem.candidates):,} candidate changes")
        parts = [builder.problem] if isinstance(builder.problem, WholeProblem) else decompose(builder.problem)
        solved: list[_Solved] = []
        for i, part in enumerate(parts):
            if progress and len(parts) > 20 and i % 50 == 0:
                say(f"round {rounds}: component {i + 1:,} of {len(parts):,}")
            solved.append(_solve(part, policy, limit, deadline, preferences))
            if solved[-1].status in ("unsatisfiable", "timeout") and not solved[-1].tables:
                break
        failed = [s for s in solved if not s.tables]
        if failed:
            status = failed[0].status
            return RepairResult(status, falsifiers, [], str(policy), case, len(parts), len(builder.problem.candidates), rounds, failed[0].core)
        tables = [frozenset().union(*combo) for combo in itertools.islice(itertools.product(*(s.tables for s in solved)), limit)]
        say(f"round {rounds}: checking {len(tables)} correction table" + ("" if len(tables) == 1 else "s"))
        new = 0
        for table in tables:
            for f in checker.new_falsifiers(table):
                if general:
                    raise AssertionError(f"a correction table over views does not verify: {sorted(map(correction_text, table))}: {f}")
                new += builder.add_falsifier(f)
        if not new:
            break
        if rounds >= max_rounds:
            return RepairResult("bounded", falsifiers, [], str(policy), case, len(parts), len(builder.problem.candidates), rounds, [f"more than {max_rounds} rounds of corrections making new violations"])
    statuses = {s.status for s in solved}
    status = "timeout" if "timeout" in statuses else ("bounded" if "stopped" in statuses else "complete")
    if status == "complete" and _product_size(solved) > limit:
        status = "bounded"
    fresh = builder.problem.fresh
    ordered = sorted(tables, key=lambda s: (len(s), sorted(map(_key, s))))
    result = RepairResult(
        status,
        falsifiers,
        [CorrectionTable.of(t, fresh) for t in ordered],
        str(policy),
        case,
        len(parts),
        len(builder.problem.candidates),
        rounds,
        optimal=status != "timeout" or policy.kind == "subset",
    )
    result.why = explain(falsifiers, ordered[0]) if ordered else {}
    return result


def _product_size(solved: list[_Solved]) -> int:
    n = 1
    for s in solved:
        n *= len(s.tables)
    return n


def explain(falsifiers: Falsifiers, table: Iterable[Correction]) -> dict[Correction, dict[str, int]]:
    """Why each correction is in a table: per constraint, how many violated instances it removes."""
    table = set(table)
    out: dict[Correction, dict[str, int]] = {c: {} for c in table}
    for v in falsifiers:
        for g in v.groups:
            sizes = {value: len(rows) for value, rows in g.classes}
            total = sum(sizes.values())
            for value, rows in g.classes:
                for row in rows:
                    c = ("-", (g.shape.pred, row))
                    if c in out:
                        hits = total - sizes[value]
                        out[c][v.name] = out[c].get(v.name, 0) + (hits if g.shape.strict else 2 * hits)
        for f in v.falsifier_list:
            for c in f.corrections() + [("+", a) for a in _filled(f, table)]:
                if c in out:
                    out[c][v.name] = out[c].get(v.name, 0) + 1
    return out


def _filled(f: Falsifier, table: set[Correction]) -> list[GroundAtom]:
    out = []
    for pred, pattern in f.missing:
        for sign, a in table:
            if sign == "+" and a[0] == pred and all(p is None or p == v for p, v in zip(pattern, a[1])):
                out.append(a)
    return out


class _Checker:
    """Checks a correction table on the corrected database: the falsifiers that hold there.

    On the python engine only instances using a changed tuple are evaluated (every falsifier of
    the current database is a denial of the ground problem, so the table already removes them).
    """

    def __init__(self, rules: Program, model: Mapping[str, Set], engine: Engine, infos: list[ConstraintInfo], full: bool):
        self.rules, self.model, self.engine, self.infos, self.full = rules, model, engine, infos, full

    def new_falsifiers(self, table: Iterable[Correction]) -> list[Falsifier]:
        insert: dict[str, set] = {}
        delete: dict[str, set] = {}
        for sign, (pred, args) in table:
            (insert if sign == "+" else delete).setdefault(shown_name(pred), set()).add(args)
        python = PythonEngine()
        if self.engine.name == "python":
            model, gained, lost = python.update(self.rules, self.model, insert=insert, delete=delete, changes=True)
        else:
            base = {p: set(r) for p, r in self.model.items() if p not in self.rules.derived}
            for p, rows in insert.items():
                base.setdefault(p, set()).update(rows)
            for p, rows in delete.items():
                base.setdefault(p, set()).difference_update(rows)
            model, gained, lost = self.engine.evaluate(self.rules, base), {}, {}
        changes = None if self.full else (gained, lost)
        engine = python if self.engine.name == "python" else self.engine
        return list(find_falsifiers(self.rules, model, engine, infos=self.infos, changes=changes).falsifiers())


def _relevant_problem(rules: Program, model, index: ModelIndex, universe, protected, falsifiers: Falsifiers) -> GroundProblem:
    """The ground problem of a repair through views: seed 002's relevance analysis from the
    violated instances (goals to delete their positive atoms, insert their negated ones), with
    propagation and compensation of side effects."""
    base = (set(rules.signatures) | {p for p in model}) - set(rules.derived)
    violated = [(v.constraint, dict(b)) for v in falsifiers.violations() for b in v.bindings]
    relevance = Relevance(rules, model, base, index=index, bounds=Bounds(max_fresh=0), protect=protected, universe=universe)
    return relevance.solve([], [], violated)


def _whole_problem(rules: Program, model, universe, protected, verified: Mapping[GroundAtom, bool]) -> WholeProblem:
    """Repair through aggregates: every constraint over the base relations it reads, with no new
    constants; verified facts keep their truth as a request would have them."""
    base = (set(rules.signatures) | {p for p in model}) - set(rules.derived)
    keep = Delta(frozenset(Atom(*a) for a, t in verified.items() if t), frozenset(Atom(*a) for a, t in verified.items() if not t))
    return whole_problem(rules, model, base, keep, max_fresh=0, protect=protected, universe=universe)


def _verified_changes(verified: Mapping[GroundAtom, bool], model) -> bool:
    return any((tuple(a[1]) in model.get(a[0], ())) != truth for a, truth in verified.items())


def _force_verified(builder: _Builder, verified: Mapping[GroundAtom, bool], index: ModelIndex) -> None:
    """A verified-false fact that is present must go; a verified-true one that is absent must come."""
    for a, truth in sorted(verified.items(), key=lambda kv: (kv[0][0], row_sort_key(kv[0][1]))):
        present = builder.contains(a)
        if present and not truth:
            builder.atom(a)
            builder.problem.protected.discard(("-", a))
            builder.problem.require_false.append(("verified", a))
        elif truth and not present:
            builder.atom(a)
            builder.problem.protected.discard(("+", a))
            builder.problem.require_true.append(("verified", a))


__all__ = ["POLICIES", "CorrectionTable", "Policy", "RepairResult", "decompose", "explain", "parse_policy", "repair"]
