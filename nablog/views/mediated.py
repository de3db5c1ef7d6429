"""Materialized mediated views (seed 000): T_P / W_P fixpoints of constrained atoms and their maintenance.

A mediated view is a list of constrained atoms ``A(X̄) ← Ξ``, each with its *support* (the clause
that derived it and the supports of the atoms it used, seed 000 §3.1.2), kept with duplicate
semantics (§2.3: one atom per derivation). It is maintained under

- deletion of a constrained atom by Straight Delete (Algorithm 2, :meth:`MediatedView.delete`
  with ``method="stdel"``) or Extended DRed (Algorithm 1, ``method="dred"``);
- insertion of a constrained atom (Algorithm 3, :meth:`MediatedView.insert`);
- change of an external source: nothing to do under W_P (Theorem 4); T_P recomputes.

>>> view = MediatedView.from_text('''
...     a(X) :- X <= 3 ||.
...     a(X) :- || b(X).
...     b(X) :- X >= 5 ||.
...     c(X) :- || a(X).''')
>>> for line in view.listing(supports=True): print(line)
a(X) :- X <= 3.  <1>
a(X) :- X >= 5.  <2, <3>>
b(X) :- X >= 5.  <3>
c(X) :- X <= 3.  <4, <1>>
c(X) :- X >= 5.  <4, <2, <3>>>
>>> view.delete("b(X) || X = 6")
>>> for line in view.listing(): print(line)
a(X) :- X <= 3.
a(X) :- X >= 5, X != 6.
b(X) :- X >= 5, X != 6.
c(X) :- X <= 3.
c(X) :- X >= 5, X != 6.

Termination: a derivation that passes below its root through an atom of the same predicate with
the same head (by its equalities) adds nothing and is cut (:meth:`MediatedView._redundant`), so
recursion through ground atoms ends; a recursion deriving ever new non-ground atoms stops at
``max_rounds`` with an error.
"""

from __future__ import annotations

import itertools
from typing import Iterable, Iterator

from ..lang.ast import Atom, Comparison, ConstrainedRule, Term, Var, row_sort_key
from ..lang.errors import NablogError, QueryError
from ..lang.parser import parse_atom, parse_statements
from .constraints import FALSE, Constraint, Domains, Not, Solver, format_constraint, normalize, substitute, variables
from .mediated_atoms import Clause, Derivation, Entry, bind, clause_of, compose, fixed_positions, format_support, head_vars, namer, recursive_components
from .mediated_deletion import Deletions

__all__ = ["MediatedView", "format_support", "head_vars"]


class MediatedView(Deletions):
    """The materialized view of a constrained database under ``T_P`` or ``W_P`` (seed 000, §2.3, §4).

    Parameters
    ----------
    clauses : list of ConstrainedRule or Rule
        The mediator; ordinary rules and facts are clauses without constraints.
    domains : Domains, optional
        The external functions domain calls reach.
    operator : ``"T"`` or ``"W"``
        ``T`` keeps an atom only if its constraint is solvable now; ``W`` keeps it unless it is
        unsolvable whatever the domains answer, so external change never touches the view.
    """

    def __init__(self, clauses: Iterable, domains: Domains | None = None, operator: str = "T", max_rounds: int = 10_000):
        if operator not in ("T", "W"):
            raise ValueError("operator is 'T' or 'W'")
        self.domains = domains if domains is not None else Domains()
        self.solver = Solver(self.domains)
        self.operator = operator
        self.max_rounds = max_rounds
        self.clauses: list[Clause] = [clause_of(k + 1, c) for k, c in enumerate(clauses)]
        self._recursive = recursive_components(self.clauses)
        self._fresh = itertools.count(1)
        self.materialize()

    @classmethod
    def from_text(cls, text: str, domains: Domains | None = None, operator: str = "T") -> "MediatedView":
        return cls(parse_statements(text), domains, operator)

    # -- the fixpoint -----------------------------------------------------------------------------

    def materialize(self) -> None:
        """Compute ``T_P ↑ ω(∅)`` (or ``W_P ↑ ω(∅)``) afresh, semi-naively, with supports."""
        self.entries: dict[int, Entry] = {}
        self._ids = itertools.count(1)
        self._by_pred: dict[str, list[int]] = {}
        self._parents: dict[int, list[int]] = {}
        self._index: dict[tuple[str, int, object], list[int]] = {}
        self._wild: dict[tuple[str, int], list[int]] = {}
        self.supports_valid = True
        delta = []
        for clause in self.clauses:
            if not clause.body:
                entry = self._make(clause, ())
                if entry is not None:
                    delta.append(entry.id)
        self._saturate(delta)

    def _make(self, clause: Clause, children: tuple[Entry, ...]) -> Entry | None:
        """Derive the constrained atom of ``clause`` over ``children`` and add it, if solvable."""
        derived = self._derive(clause, children)
        if not self._solvable(derived.constraint, clause.head.arity):
            return None
        return self._add(clause.head.pred, clause.head.arity, derived, clause.number, tuple(c.id for c in children))

    def _derive(self, clause: Clause, children: tuple[Entry, ...]) -> Derivation:
        """Ξ0 ∧ Ξ1 ∧ … ∧ Ξn ∧ X̄i = t̄i ∧ X̄ = t̄0, variables standardized apart, normalized."""
        rename: dict[Var, Var] = {}

        def fresh(v: Var) -> Var:
            if v not in rename:
                rename[v] = Var(f"_V{next(self._fresh)}")
            return rename[v]

        def term(t: Term) -> Term:
            return fresh(t) if isinstance(t, Var) else t

        clause_vars = {v for a in (clause.head, *clause.body) for v in a.variables()} | variables(clause.constraints)
        theta = {v: fresh(v) for v in clause_vars}
        conj: list = list(substitute(clause.constraints, theta))
        head = head_vars(clause.head.arity)
        conj += [Comparison("=", h, term(t)) for h, t in zip(head, clause.head.args)]
        child_heads = []
        for atom, child in zip(clause.body, children):
            child_vars = variables(child.constraint) | set(head_vars(child.arity))
            sigma = {v: Var(f"_V{next(self._fresh)}") for v in child_vars}
            conj += substitute(child.constraint, sigma)
            conj += [Comparison("=", sigma[h], term(t)) for h, t in zip(head_vars(child.arity), atom.args)]
            child_heads.append(tuple(sigma[h] for h in head_vars(child.arity)))
        name = namer(conj, head)
        return Derivation(normalize(conj, head), tuple(name(h) for h in head), tuple(tuple(name(v) for v in vs) for vs in child_heads))

    def _solvable(self, constraint: Constraint, arity: int) -> bool:
        """T_P's test, or W_P's (unsolvable whatever the domains answer), on a constrained atom's constraint."""
        if constraint == FALSE:
            return False
        return self.solver.satisfiable(constraint, relax=self.operator == "W", free=head_vars(arity))

    def _add(self, pred: str, arity: int, derived: Derivation, clause: int, children: tuple[int, ...]) -> Entry | None:
        constraint = derived.constraint
        fixed = fixed_positions(constraint, arity)
        entry = Entry(next(self._ids), pred, arity, constraint, clause, children, fixed, derived.shape, derived.links)
        if pred in self._recursive and self._redundant(entry):
            return None
        self.entries[entry.id] = entry
        self._by_pred.setdefault(pred, []).append(entry.id)
        for c in children:
            self._parents.setdefault(c, []).append(entry.id)
        for pos in range(arity):
            if pos in fixed:
                self._index.setdefault((pred, pos, fixed[pos]), []).append(entry.id)
            else:
                self._wild.setdefault((pred, pos), []).append(entry.id)
        return entry

    def _redundant(self, entry: Entry) -> bool:
        """Does the derivation pass, below its root, through an atom of the same predicate whose
        head its equalities make the root's own (position by position the same head variable or
        the same constant)?

        The root's constraint then holds that atom's constraint on the same head, so the root's
        instances are among that atom's, whatever the domains answer, and stay so: Straight Delete
        rebuilds the root from that atom, DRed narrows both by the same deleted instances.
        Keeping the root would add nothing but make the duplicate semantics infinite on cyclic
        data, ground (``w(3)`` again through ``g(3, 3)``) or not. Only atoms of the root's
        recursive component are walked: no other can lead back to its predicate.
        """
        component = self._recursive[entry.pred]
        needed = {t for t in entry.shape if isinstance(t, Var)}
        stack = [(c, link) for c, link in zip(entry.children, entry.links) if c in self.entries and self.entries[c].pred in component]
        seen = set()
        while stack:
            c, shape = stack.pop()
            if (c, shape) in seen or c not in self.entries:
                continue
            seen.add((c, shape))
            child = self.entries[c]
            if child.pred == entry.pred and child.arity == entry.arity and shape == entry.shape:
                return True
            for grandchild, link in zip(child.children, child.links):
                if grandchild in self.entries and self.entries[grandchild].pred in component:
                    composed = compose(link, shape)
                    if needed <= set(composed):  # a head variable the root needs is lost below here
                        stack.append((grandchild, composed))
        return False

    def _saturate(self, delta: list[int], clauses: list[Clause] | None = None) -> None:
        """Semi-naive rounds: each new atom uses at least one atom of the previous round."""
        clauses = [c for c in (clauses or self.clauses) if c.body]
        rounds = 0
        while delta:
            rounds += 1
            if rounds > self.max_rounds:
                raise NablogError(
                    f"the mediated view has no finite fixpoint within {self.max_rounds} rounds",
                    hint="a recursion derives ever new non-ground constrained atoms (duplicate semantics, seed 000 §2.3)",
                )
            new_ids = set(delta)
            by_pred: dict[str, set[int]] = {}
            for i in delta:
                by_pred.setdefault(self.entries[i].pred, set()).add(i)
            produced: list[int] = []
            upto = max(self.entries, default=0)
            for clause in clauses:
                for j, atom in enumerate(clause.body):
                    if atom.pred not in by_pred:
                        continue
                    pivot = [self.entries[i] for i in sorted(by_pred[atom.pred]) if self.entries[i].arity == atom.arity]
                    for children in self._joins(clause, j, pivot, new_ids, upto=upto):
                        entry = self._make(clause, children)
                        if entry is not None:
                            produced.append(entry.id)
            delta = produced

    def _joins(
        self, clause: Clause, j: int, pivot: Iterable[Entry], exclude: set[int], bindings: dict | None = None, upto: int | None = None
    ) -> Iterator[tuple[Entry, ...]]:
        """Tuples of entries for the clause body: position ``j`` from ``pivot``, earlier positions
        from entries not in ``exclude`` (semi-naive), later ones from any with an id up to ``upto``
        (the atoms of this round stay out of it); joined on fixed constants."""
        body = clause.body
        pivot = list(pivot)
        last = upto if upto is not None else float("inf")

        def rec(i: int, bound: dict[Var, object], chosen: list[Entry]) -> Iterator[tuple[Entry, ...]]:
            if i == len(body):
                yield tuple(chosen)
                return
            atom = body[i]
            pool = pivot if i == j else self._candidates(atom, bound, None)
            for entry in pool:
                if i != j and (entry.id > last or i < j and entry.id in exclude):
                    continue
                nb = bind(atom, entry.fixed, bound)
                if nb is not None:
                    chosen.append(entry)
                    yield from rec(i + 1, nb, chosen)
                    chosen.pop()

        yield from rec(0, dict(bindings or {}), [])

    def _candidates(self, atom: Atom, bound: dict[Var, object], fixed: dict[int, object] | None = None) -> list[Entry]:
        """Entries of the atom's predicate that may match its constants and bound variables."""
        for pos, t in enumerate(atom.args):
            value = t if not isinstance(t, Var) else bound.get(t, _UNBOUND)
            if value is _UNBOUND and fixed:
                value = fixed.get(pos, _UNBOUND)
            if value is not _UNBOUND:
                ids = self._index.get((atom.pred, pos, value), []) + self._wild.get((atom.pred, pos), [])
                return [self.entries[i] for i in sorted(ids) if i in self.entries and self.entries[i].arity == atom.arity]
        return [e for e in self.atoms(atom.pred) if e.arity == atom.arity]

    # -- reading ------------------------------------------------------------------------------------

    def atoms(self, pred: str | None = None) -> list[Entry]:
        """The view's constrained atoms (of one predicate), in derivation order."""
        ids = self._by_pred.get(pred, []) if pred is not None else sorted(self.entries)
        return [self.entries[i] for i in ids if i in self.entries]

    def predicates(self) -> list[str]:
        return sorted(p for p, ids in self._by_pred.items() if any(i in self.entries for i in ids))

    def support(self, entry: Entry) -> tuple:
        """``spt(F)``: ``(Cn(C), spt(B1), …, spt(Bk))`` as nested tuples (seed 000, §3.1.2)."""
        return (entry.clause, *(self.support(self.entries[c]) if c in self.entries else ("deleted",) for c in entry.children))

    def show(self, entry: Entry, simplify: bool = True) -> str:
        head = Atom(entry.pred, head_vars(entry.arity))
        constraint = self.solver.simplify(entry.constraint, head.args) if simplify else entry.constraint
        return f"{head}." if not constraint else f"{head} :- {format_constraint(constraint)}."

    def listing(self, supports: bool = False) -> list[str]:
        """Every constrained atom as text, by predicate then derivation order (``<1>`` supports)."""
        out = []
        for pred in self.predicates():
            for e in self.atoms(pred):
                text = self.show(e)
                out.append(f"{text}  {format_support(self.support(e))}" if supports else text)
        return out

    def constraints_of(self, pred: str) -> list[Constraint]:
        return [e.constraint for e in self.atoms(pred)]

    def query(self, pattern: str | Atom, constraint: Constraint = ()) -> list[tuple[Atom, Constraint]]:
        """The constrained atoms matching ``pattern`` (and ``constraint``), over the pattern's variables.

        Their solvability is decided now, with the domains' current answers (under W_P too).
        """
        atom = parse_atom(pattern) if isinstance(pattern, str) else pattern
        out = []
        for entry in self.atoms(atom.pred):
            if entry.arity != atom.arity:
                continue
            conj = self._instance(entry, atom, constraint)
            if self.solver.satisfiable(conj, free=tuple(atom.variables())):
                keep = tuple(dict.fromkeys(atom.variables()))
                out.append((atom, self.solver.simplify(conj, keep)))
        return out

    def _instance(self, entry: Entry, atom: Atom, constraint: Constraint) -> Constraint:
        """The entry's constraint over the atom's terms (entry variables renamed apart)."""
        sigma = {v: Var(f"_Q{next(self._fresh)}") for v in variables(entry.constraint) | set(head_vars(entry.arity))}
        conj = list(substitute(entry.constraint, sigma)) + list(constraint)
        conj += [Comparison("=", sigma[h], t) for h, t in zip(head_vars(entry.arity), atom.args)]
        return tuple(conj)

    def ground(self, pattern: str | Atom, limit: int = 1000) -> tuple[list[tuple], bool]:
        """The ground instances matching the pattern, sorted, and whether they are all of them.

        ``False`` means a constrained atom has more than ``limit`` solutions (possibly infinitely
        many): the rows shown are the first ``limit`` z3 found for each atom.
        """
        atom = parse_atom(pattern) if isinstance(pattern, str) else pattern
        rows: set[tuple] = set()
        complete = True
        over = head_vars(atom.arity)
        for entry in self.atoms(atom.pred):
            if entry.arity != atom.arity:
                continue
            conj = self._instance(entry, Atom(atom.pred, over), ()) + tuple(
                Comparison("=", h, t) for h, t in zip(over, atom.args) if not isinstance(t, Var)
            )
            conj += tuple(Comparison("=", h, over[atom.args.index(t)]) for h, t in zip(over, atom.args) if isinstance(t, Var))
            found, whole = self.solver.solutions(conj, over, limit)
            rows.update(found)
            complete &= whole
        return sorted(rows, key=row_sort_key), complete

    def contains(self, fact: str | Atom) -> bool:
        """Is the ground fact an instance of the view (the membership query of ``bench/mediated.py``)?"""
        atom = parse_atom(fact) if isinstance(fact, str) else fact
        if not atom.is_ground():
            raise QueryError(f"{atom} is not ground", atom.loc, "ask query() for non-ground atoms")
        head = head_vars(atom.arity)
        for entry in self._candidates(atom, {}):
            if any(entry.fixed.get(p, v) != v for p, v in enumerate(atom.args)):
                continue
            theta = dict(zip(head, atom.args))
            if self.solver.satisfiable(normalize(substitute(entry.constraint, theta), ())):
                return True
        return False

    # -- updates --------------------------------------------------------------------------------------

    def parse_update(self, text: str) -> tuple[Atom, Constraint]:
        """``b(X) || X = 6`` (or ``b(6)``) as a pattern and a constraint over its variables."""
        text = text.strip().rstrip(".")
        left, _, right = text.partition("||")
        atom = parse_atom(left)
        constraint: Constraint = ()
        if right.strip():
            (rule,) = parse_statements(f"update__ :- {right} ||.", "<update>")
            constraint = tuple(rule.constraints)  # type: ignore[union-attr]
        return atom, constraint

    def _pattern(self, atom: Atom, constraint: Constraint) -> Constraint:
        """``Θ ∧ X̄ = t̄`` over the canonical head variables (atom variables renamed apart)."""
        head = head_vars(atom.arity)
        sigma = {v: Var(f"_U{next(self._fresh)}") for v in variables(constraint) | set(atom.variables())}
        conj = list(substitute(constraint, sigma)) + [Comparison("=", h, sigma.get(t, t)) for h, t in zip(head, atom.args)]  # type: ignore[arg-type]
        return normalize(conj, head)

    def delete(self, update: str | tuple[Atom, Constraint], method: str = "stdel") -> None:
        """Delete the instances of a constrained atom and their consequences (seed 000, §3.1).

        The program becomes ``P'`` (eq. (4): each clause for the predicate gets ``not(Θ)``); the
        view follows by Straight Delete (``"stdel"``, Algorithm 2), Extended DRed (``"dred"``,
        Algorithm 1) or recomputation (``"recompute"``). All give the same instances (Theorems 1, 2).
        """
        if method not in ("stdel", "dred", "recompute"):
            raise ValueError(f"unknown deletion method {method!r}: stdel, dred or recompute")
        atom, constraint = self.parse_update(update) if isinstance(update, str) else update
        theta = self._pattern(atom, constraint)
        affected = self.defines(atom)
        old = {c.number: c.constraints for c in self.clauses}
        for c in affected:
            sigma = dict(zip(head_vars(atom.arity), c.head.args))
            renamed = substitute(theta, {**{v: Var(f"_D{next(self._fresh)}") for v in variables(theta) if v not in sigma}, **sigma})
            c.constraints = tuple(c.constraints) + (Not(renamed),)
        if method == "stdel":
            if not self.supports_valid:
                self.materialize()
            else:
                self._straight_delete(atom, theta)
        elif method == "dred":
            self._extended_dred(atom, theta, old)
        else:
            self.materialize()

    def defines(self, atom: Atom) -> list[Clause]:
        """The clauses defining the atom's predicate; an error if there are none."""
        clauses = [c for c in self.clauses if c.head.pred == atom.pred and c.head.arity == atom.arity]
        if not clauses:
            raise QueryError(f"no clause defines {atom.pred}/{atom.arity}", atom.loc, "delete atoms of a predicate of the mediator")
        return clauses

    def insert(self, update: str | tuple[Atom, Constraint]) -> None:
        """Insert the instances of a constrained atom (seed 000, §3.2, Algorithm 3).

        The atom becomes a new clause of the mediator (``P♭``); the atoms it adds are unfolded
        semi-naively, each new atom using at least one atom added before it.
        """
        atom, constraint = self.parse_update(update) if isinstance(update, str) else update
        clause = clause_of(len(self.clauses) + 1, ConstrainedRule(atom, tuple(constraint), ()))
        self.clauses.append(clause)
        if not self.supports_valid:
            self.materialize()
            return
        entry = self._make(clause, ())
        if entry is not None:
            self._saturate([entry.id])

    def external_change(self) -> int:
        """Bring the view up to date after the domains' functions changed; return the work spent
        (z3 checks plus domain calls).

        Under W_P nothing is done (seed 000, Theorem 4): queries read the functions' current answers.
        Under T_P the fixpoint is recomputed, since T_P dropped atoms by the old answers.
        """
        if self.operator == "W":
            return 0
        before = self.solver.checks + self.domains.calls
        self.materialize()
        return self.solver.checks + self.domains.calls - before

    def recomputed(self) -> "MediatedView":
        """A fresh view of the current program (P' / P♭ after updates): the oracle of the tests."""
        clone = object.__new__(MediatedView)
        clone.domains, clone.solver, clone.operator, clone.max_rounds = self.domains, self.solver, self.operator, self.max_rounds
        clone.clauses = [Clause(c.number, c.head, c.constraints, c.body) for c in self.clauses]
        clone._recursive = self._recursive
        clone._fresh = self._fresh
        clone.materialize()
        return clone


_UNBOUND = object()
