"""Incremental maintenance of a correction table as sources send updates (seed 004, §4–5).

The maintainer keeps the source state F, a correction table R′ for it, and the *virtual* state
F∘R′ (the consistent view users query). When a source reports an update U:

1. literals of R′ that U has made true are dropped (they are no longer updates, Def. 2.3; the
   verified ones stay in the separate verified table, case 2); the rest of U changes the virtual
   state (U′);
2. the simplified checks ``Optimize_{Γ∪Δ}(After^{U′}(Γ ∪ Δ))`` (§3; the virtual state was
   consistent) say whether anything can be violated at all — a deletion from a consistently
   signed database never can, and then nothing else is evaluated;
3. otherwise the falsifiers of the *original* constraints that use a changed tuple are found
   (§5: the simplified checks lose the atoms of U, which are corrections too) and a minimal
   correction C of them is chosen — by default keeping the recent information: corrections that
   undo a literal of U are used only when nothing else works (§5, case 1);
4. the new table is R′∘C (Def. 2.2), without the literals of R′ that became unnecessary.

>>> from nablog.lang import parse, separate_facts
>>> rules, facts = separate_facts(parse('''
...     #constraint g12 :- m1(X, Y), m2(X, Z), Y != Z.
...     #base m1/2.  m2(a, c).'''))
>>> m = Maintainer(rules, facts)
>>> step = m.update("+m1(a, b).")
>>> [str(d) for d in step.checks], step.table.lines()
(['#constraint g12 :- m2(a, Z), Z != b.'], ['-m2(a, c)'])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from ..engines import PythonEngine
import bisect

from ..lang import Atom, Comparison, Delta, Denial, Literal, NablogError, Program, constant_sort_key
from ..solver.ground import GroundAtom
from .constraints import constraint_infos
from .simplify import Builtins, SimplifiedChecks, ground_atoms, parse_change, simplify
from .tables import CorrectionTable, Policy, parse_policy, repair
from .violations import Correction, Falsifiers, find_falsifiers


@dataclass
class MaintenanceStep:
    """What one source update did: the simplified checks, the new falsifiers and the new table."""

    update: Delta
    effective: Delta
    checks: list[Denial]
    falsifiers: Falsifiers | None
    corrections: frozenset[Correction]  # the new table R′ as literals
    dropped: list[Correction] = field(default_factory=list)  # literals of R′ that U made true
    added: list[Correction] = field(default_factory=list)
    pruned: list[Correction] = field(default_factory=list)  # literals of R′ no longer needed
    alternatives: list[CorrectionTable] = field(default_factory=list)  # the minimal corrections C

    @property
    def table(self) -> CorrectionTable:
        """The new correction table, sorted (built on demand: tables of thousands of literals
        cost more to sort than a small update costs to maintain)."""
        return CorrectionTable.of(self.corrections)


class Maintainer:
    """A correction table kept up to date under source updates (see the module docstring).

    Parameters
    ----------
    rules, facts
        The database (facts separated from the rules, see ``separate_facts``).
    table : CorrectionTable, optional
        A correction table for the current facts; by default the first minimal one.
    policy : str
        How corrections of new violations are chosen (``subset``, ``min-card``, ``trust=...``).
    keep_recent : bool
        Prefer corrections that keep the literals of the update (seed 004 §5).
    verified : mapping, optional
        The verified table (case 2): facts an expert checked, to their truth value. They survive
        updates and keep their values in every correction.
    """

    def __init__(
        self,
        rules: Program,
        facts: Mapping[str, Iterable[tuple]],
        *,
        table: CorrectionTable | None = None,
        policy: str | Policy = "subset",
        keep_recent: bool = True,
        verified: Mapping[GroundAtom, bool] | None = None,
    ):
        self.rules = rules
        self.engine = PythonEngine()
        self.policy = parse_policy(policy)
        self.keep_recent = keep_recent
        self.verified: dict[GroundAtom, bool] = dict(verified or {})
        self.infos = constraint_infos(rules)
        self.builtins = Builtins()
        self.program_constants = set(rules.constants())
        self._pattern_cache: dict[tuple, tuple[SimplifiedChecks, list]] = {}
        model = self.engine.evaluate(rules, facts)
        # The source state is kept as plain sets: it is only asked what holds (Def. 2.3), and an
        # engine model would be re-encoded for every update that brings a new constant.
        self.source: dict[str, set] = {p: set(rows) for p, rows in model.items() if p not in rules.derived}
        if table is None:
            found = repair(rules, model, policy=self.policy, verified=self.verified)
            if not found.tables:
                raise NablogError("the database has no correction table: " + found.message)
            table = found.tables[0]
        self.table: set[Correction] = set(table.corrections())
        self.virtual = self._apply(model, self.table)

    def _apply(self, model, literals: Iterable[Correction]):
        insert: dict[str, set] = {}
        delete: dict[str, set] = {}
        for sign, (pred, args) in literals:
            (insert if sign == "+" else delete).setdefault(pred, set()).add(args)
        if not insert and not delete:
            return model
        return self.engine.update(self.rules, model, insert=insert, delete=delete)

    def current_table(self) -> CorrectionTable:
        return CorrectionTable.of(self.table)

    def update(
        self,
        change: Delta | str,
        *,
        limit: int = 1,
        choose: Callable[[list[CorrectionTable]], CorrectionTable] | None = None,
    ) -> MaintenanceStep:
        """Apply a source update and bring the correction table up to date.

        ``limit`` alternatives for the correction of new violations are computed (all of them in
        ``MaintenanceStep.alternatives``); ``choose`` picks one (the first by default).
        """
        if isinstance(change, str):
            change = parse_change(change)
        # Def. 2.3: an update only inserts absent facts and deletes present ones.
        change = Delta(
            frozenset(a for a in change.insert if tuple(a.args) not in self.source.get(a.pred, ())),
            frozenset(a for a in change.delete if tuple(a.args) in self.source.get(a.pred, ())),
        )
        literals = _literals(change)
        dropped = sorted(self.table & literals)
        effective = _delta(literals - self.table)
        for sign, (pred, args) in literals:
            (self.source.setdefault(pred, set()).add if sign == "+" else self.source.setdefault(pred, set()).discard)(args)
        table = self.table - literals
        checks = self._checks(effective) if effective else None
        falsifiers = None
        added: list[Correction] = []
        alternatives: list[CorrectionTable] = []
        if effective:
            insert, delete = effective.sides()
            self.virtual, gained, lost = self.engine.update(self.rules, self.virtual, insert=insert, delete=delete, changes=True)
            # Empty simplified checks prove the update harmless; otherwise the original constraints'
            # instances on the changed tuples are the violations (with the atoms of U in them).
            if checks is not None and (checks.before or checks.unsimplified):
                falsifiers = find_falsifiers(self.rules, self.virtual, self.engine, infos=self.infos, changes=(gained, lost))
            if falsifiers:
                undo = _literals(effective.inverse())
                preferences = {c: (1, 2) for c in undo} if self.keep_recent else {}
                found = repair(
                    self.rules, self.virtual, policy=self.policy, limit=limit, falsifiers=falsifiers,
                    verified=self.verified, preferences=preferences,
                )
                if not found.tables:
                    raise NablogError("no correction restores consistency after this update: " + found.message)
                alternatives = found.tables
                chosen = choose(alternatives) if choose else alternatives[0]
                added = sorted(chosen.corrections())
                self.virtual = self._apply(self.virtual, added)
                # C is relative to the virtual state: composing cancels R′ literals it undoes.
                table = _literals(_delta(table).compose(_delta(added)))
        pruned = self._prune(table, effective, added)
        self.table = table
        step = MaintenanceStep(change, effective, checks.before if checks else [], falsifiers, frozenset(table), dropped, added, pruned, alternatives)
        return step

    def _checks(self, effective: Delta) -> SimplifiedChecks:
        """The simplified checks for ``effective``, computed once per update *pattern*.

        Simplification depends on the update's constants only through their order and equalities
        (with each other and with the program's constants): seed 004 §3's parameterized updates.
        The checks of the first update of a pattern are reused for the next ones by renaming its
        constants.
        """
        fixed = self.program_constants
        fixed_sorted = sorted(fixed, key=constant_sort_key)
        fixed_keys = [constant_sort_key(v) for v in fixed_sorted]
        values = sorted({v for _, a in _literals(effective) for v in a[1] if v not in fixed}, key=constant_sort_key)
        rank = {v: i for i, v in enumerate(values)}

        def shape(v):
            return ("p", v) if v in fixed else ("u", rank[v], bisect.bisect_left(fixed_keys, constant_sort_key(v)))

        literals = sorted(_literals(effective), key=lambda l: (l[0], l[1][0], [shape(v) for v in l[1][1]]))
        key = tuple((sign, pred, tuple(shape(v) for v in args)) for sign, (pred, args) in literals)
        cached = self._pattern_cache.get(key)
        if cached is None:
            checks = simplify(self.rules, effective, builtins=self.builtins, trust_sources=False)
            self._pattern_cache[key] = (checks, values)
            return checks
        checks, old_values = cached
        renaming = dict(zip(old_values, values))
        return SimplifiedChecks(effective, [_rename(d, renaming) for d in checks.before], [_rename(d, renaming) for d in checks.after], checks.unsimplified)

    def _prune(self, table: set[Correction], effective: Delta, added: list[Correction]) -> list[Correction]:
        """Drop literals of the table that the update made unnecessary.

        A literal of R′ was needed for some violated instance only it removed; that instance can
        only be gone, or removed by something else now, if it contains a fact the update or the
        new corrections delete. So the candidates are the literals of R′ that share an instance
        with such a fact (found on the source state with those facts present, using only the
        instances of the deleted facts); each is dropped when the virtual state stays consistent
        without it.
        """
        deleted = set(ground_atoms(effective.delete)) | {a for s, a in added if s == "-"}
        if not deleted:
            return []
        # The source state with the deleted facts present, from the virtual state: undo the table's
        # literals (no new constants, so the engine keeps its encoding).
        back_in = deleted | {a for sg, a in table if sg == "-"}
        back_out = {a for sg, a in table if sg == "+"}
        state = self.engine.update(self.rules, self.virtual, insert=_by_pred(back_in), delete=_by_pred(back_out))
        found = find_falsifiers(self.rules, state, self.engine, infos=self.infos, changes=(_by_pred(deleted), {}))
        near: set[GroundAtom] = set()
        patterns = []
        for f in found.falsifiers():
            near.update(f.positive)
            near.update(f.negative)
            patterns.extend(f.missing)
        candidates = [
            c for c in table - set(added)
            if c[1] not in self.verified
            and (c[1] in near or (c[0] == "+" and any(p == c[1][0] and all(v is None or v == x for v, x in zip(pattern, c[1][1])) for p, pattern in patterns)))
        ]
        pruned = []
        for c in sorted(candidates, key=lambda c: (c[1][0], str(c[1][1]))):
            sign, atom = c
            back = {atom}
            trial, gained, lost = self.engine.update(
                self.rules, self.virtual, insert=_by_pred(back) if sign == "-" else {}, delete=_by_pred(back) if sign == "+" else {}, changes=True
            )
            if not find_falsifiers(self.rules, trial, self.engine, infos=self.infos, changes=(gained, lost)):
                table.discard(c)
                self.virtual = trial
                pruned.append(c)
        return pruned


def _rename(d: Denial, renaming: Mapping) -> Denial:
    def term(t):
        return renaming.get(t, t) if not hasattr(t, "name") else t

    body = []
    for b in d.body:
        if isinstance(b, Comparison):
            body.append(Comparison(b.op, term(b.left), term(b.right), b.loc))
        else:
            body.append(Literal(Atom(b.atom.pred, tuple(term(t) for t in b.atom.args), b.atom.loc), b.positive))
    return Denial(tuple(body), d.name, d.loc)


def _by_pred(atoms: Iterable[GroundAtom]) -> dict[str, set[tuple]]:
    out: dict[str, set[tuple]] = {}
    for pred, args in atoms:
        out.setdefault(pred, set()).add(args)
    return out



def _literals(delta: Delta) -> set[Correction]:
    """A Delta as a correction table's literals ``(sign, (pred, args))`` (seed 004, Def. 2.3)."""
    return {("+", a) for a in ground_atoms(delta.insert)} | {("-", a) for a in ground_atoms(delta.delete)}


def _delta(literals) -> Delta:
    """Literals ``(sign, (pred, args))`` as a Delta."""
    literals = list(literals)
    return Delta(frozenset(Atom(p, a) for s, (p, a) in literals if s == "+"), frozenset(Atom(p, a) for s, (p, a) in literals if s == "-"))

__all__ = ["MaintenanceStep", "Maintainer"]
