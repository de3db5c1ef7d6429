"""Deletion of constrained atoms from a mediated view: Straight Delete and Extended DRed (seed 000, §3.1)."""

from __future__ import annotations

import heapq

from ..lang.ast import Atom
from .constraints import FALSE, Constraint, Not, disjoint, normalize
from .mediated_atoms import Clause, Derivation, Entry, apart, bind, fixed_positions, head_vars


class Deletions:
    """Algorithms 1 and 2 of seed 000 over :class:`~nablog.views.mediated.MediatedView`'s atoms,
    after :meth:`~nablog.views.mediated.MediatedView.delete` rewrote the program into P' (eq. (4))."""

    def _straight_delete(self, atom: Atom, theta: Constraint) -> None:
        """Algorithm 2: narrow the atoms the deletion meets, then every atom whose support uses a
        narrowed one, rebuilt from its clause (now in P') and its children; drop the unsolvable."""
        heap: list[int] = []
        for entry in self._candidates(atom, {}, fixed_positions(theta, atom.arity)):
            if disjoint(entry.constraint, theta, head_vars(entry.arity)):
                continue
            if entry.pred == atom.pred and self._solvable(entry.constraint + apart(theta, head_vars(entry.arity), self._fresh), entry.arity):
                heap.append(entry.id)
        heapq.heapify(heap)
        queued = set(heap)
        while heap:
            i = heapq.heappop(heap)
            entry = self.entries.get(i)
            if entry is None:
                continue
            children = tuple(self.entries.get(c) for c in entry.children)
            clause = self.clauses[entry.clause - 1]
            constraint = FALSE if None in children else self._derive(clause, children).constraint  # type: ignore[arg-type]
            if constraint == entry.constraint:
                continue
            if self._solvable(constraint, entry.arity):
                entry.constraint = constraint
            else:
                self._remove(entry)
            for p in self._parents.get(i, []):
                if p not in queued:
                    queued.add(p)
                    heapq.heappush(heap, p)

    def _covered(self, conj: Constraint, union: list[Constraint], head: tuple) -> bool:
        """Are the instances of ``conj`` among the union's now, and under W_P whatever the domains
        answer later (the view is not maintained when they change, seed 000 Theorem 4)?"""
        return self.solver.covered(conj, union, head, uninterpreted=self.operator == "W")

    def _remove(self, entry: Entry) -> None:
        del self.entries[entry.id]

    def _extended_dred(self, atom: Atom, theta: Constraint, old: dict[int, Constraint]) -> None:
        """Algorithm 1: unfold the deletion into P_OUT over the old program and view, delete
        ``[P_OUT]`` from every atom (M'), then rederive inside ``[P_OUT]`` with P'."""
        original = {n: Clause(n, c.head, old[n], c.body) for n, c in ((c.number, c) for c in self.clauses)}
        out: dict[str, list[Constraint]] = {}
        delta: list[tuple[str, Constraint]] = []
        for entry in self._candidates(atom, {}, fixed_positions(theta, atom.arity)):
            if disjoint(entry.constraint, theta, head_vars(entry.arity)):
                continue
            conj = normalize(entry.constraint + theta, head_vars(entry.arity))
            if self._solvable(conj, entry.arity):
                out.setdefault(atom.pred, []).append(conj)
                delta.append((atom.pred, conj))
        # step 1: P_OUT, one body atom from the previous round, the others from M
        while delta:
            produced: list[tuple[str, Constraint]] = []
            for pred, removed in delta:
                for clause in original.values():
                    for j, b in enumerate(clause.body):
                        if b.pred != pred:
                            continue
                        pseudo = Entry(0, pred, b.arity, removed, 0, (), fixed_positions(removed, b.arity))
                        for children in self._joins(clause, j, [pseudo], set()):
                            conj = self._derive(clause, children).constraint
                            if not self._solvable(conj, clause.head.arity):
                                continue
                            head = clause.head
                            have = out.setdefault(head.pred, [])
                            if have and self._covered(conj, have, head_vars(head.arity)):
                                continue
                            have.append(conj)
                            produced.append((head.pred, conj))
            delta = produced
        # step 2: M' = M minus [P_OUT]; the atoms each removed one meets are found by the index
        meets: dict[int, list[Constraint]] = {}
        arities = {c.head.pred: c.head.arity for c in self.clauses}
        for pred, removed_atoms in out.items():
            for r in removed_atoms:
                for entry in self._candidates(Atom(pred, head_vars(arities[pred])), {}, fixed_positions(r, arities[pred])):
                    head = head_vars(entry.arity)
                    if not disjoint(entry.constraint, r, head) and self._solvable(normalize(entry.constraint + r, head), entry.arity):
                        meets.setdefault(entry.id, []).append(r)
        for i, removed in sorted(meets.items()):
            entry = self.entries[i]
            head = head_vars(entry.arity)
            narrowed = normalize(entry.constraint + tuple(Not(apart(r, head, self._fresh)) for r in removed), head)
            if self._solvable(narrowed, entry.arity):
                entry.constraint = narrowed
            else:
                self._remove(entry)
        self.supports_valid = False
        # step 3: rederive what P' still derives inside [P_OUT], joined on the deleted atoms' constants
        changed = True
        while changed:
            changed = False
            for clause in self.clauses:
                head = head_vars(clause.head.arity)
                for removed in out.get(clause.head.pred, []):
                    bindings = bind(clause.head, fixed_positions(removed, clause.head.arity))
                    if bindings is None:
                        continue
                    within = apart(removed, head, self._fresh)
                    for children in self._joins(clause, -1, (), set(), bindings) if clause.body else [()]:
                        derived = self._derive(clause, children)
                        conj = normalize(derived.constraint + within, head)
                        if not self._solvable(conj, clause.head.arity):
                            continue
                        have = [e.constraint for e in self._candidates(Atom(clause.head.pred, head), {}, fixed_positions(conj, len(head)))]
                        if self._covered(conj, have, head):
                            continue
                        derived = Derivation(conj, derived.shape, derived.links)
                        self._add(clause.head.pred, clause.head.arity, derived, clause.number, tuple(c.id for c in children))
                        changed = True
