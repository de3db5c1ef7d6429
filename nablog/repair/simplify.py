"""Simplified integrity checks: the weakest precondition After^U and the optimizer Optimize_Θ (seed 004, §3–4).

``After^U(Φ)`` rewrites constraints Φ so that they hold in a state D exactly when Φ holds in the
updated state D^U (Proposition 3.1): each database atom ``p(t)`` is unfolded into the cases of the
updated relation — the old fact that was not deleted (``p(t)`` plus, per deleted tuple d, some
``tᵢ != dᵢ``), or one of the inserted tuples (``t = e``) — and every combination is one denial.

``Optimize_Θ(Φ)`` removes what the background Θ (constraints known to hold) makes redundant:

- trivial steps: equalities are substituted, ground comparisons evaluated, literals on facts known
  to be true or false (Θ's facts) dropped or the denial dropped, duplicate literals merged;
- built-ins with z3: a denial whose comparisons cannot hold together is dropped, a comparison
  implied by the others is dropped (one solver, push/pop per question; never a solver per check);
- subsumption: a denial is dropped when a denial of Θ (or an earlier one of the result) maps into
  it with all its comparisons implied; when exactly one comparison ``e`` of the mapped denial is
  left undecided, the denial is restricted to ``not e`` — the instances Θ does not already exclude.

Both follow the examples of the paper exactly (seed 004, Examples 3.1, 3.2 and 4.1):

>>> from nablog.lang import parse
>>> gamma = parse(":- m1(X, Y), m1(X, Z), Y != Z.").denials
>>> u = Delta.parse("+m1(a, b).")
>>> for d in after(gamma, u): print(d)
:- m1(X, Y), m1(X, Z), Y != Z.
:- m1(X, Y), X = a, Z = b, Y != Z.
:- X = a, Y = b, m1(X, Z), Y != Z.
:- X = a, Y = b, X = a, Z = b, Y != Z.
>>> for d in optimize(after(gamma, u), gamma): print(d)
:- m1(a, Y), Y != b.

Constraints over views are unfolded first (positive view atoms by their rules, seed 004 §2); a view
under ``not``, a recursive view, or a deletion meeting ``not q(X, _)`` is not simplified here
(:class:`NotSimplifiable`): such constraints are checked as they are, on the changed tuples.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Iterable, Iterator

import z3

from ..lang import (
    Atom,
    Comparison,
    Delta,
    Denial,
    Literal,
    NablogError,
    Program,
    Var,
    row_sort_key,
)
from ..lang.analysis import stratify
from ..solver.ground import GroundAtom

NEGATED = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
FLIPPED = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


class NotSimplifiable(Exception):
    """A constraint this module cannot rewrite exactly; it is then checked as it is."""


def ground_atoms(atoms: Iterable[Atom]) -> list[GroundAtom]:
    """An update's atoms as ground atoms ``(pred, args)``, sorted."""
    return sorted(((a.pred, tuple(a.args)) for a in atoms), key=_gkey)


# -- After^U -----------------------------------------------------------------------------------------


def unfold(denials: Iterable[Denial], program: Program | None) -> list[Denial]:
    """Replace positive view atoms by the bodies of their rules, one denial per combination
    (seed 004 §2: global constraints unfolded over the mapping to the sources)."""
    if program is None or not program.derived:
        return list(denials)
    derived = program.derived
    recursive = stratify(program).recursive
    rules = [r for r in program.rules if not r.is_fact()]
    out: list[Denial] = []
    counter = itertools.count(1)
    work = list(denials)
    while work:
        d = work.pop(0)
        position = next((i for i, b in enumerate(d.body) if isinstance(b, Literal) and b.atom.pred in derived), None)
        if position is None:
            out.append(d)
            continue
        literal = d.body[position]
        assert isinstance(literal, Literal)
        if not literal.positive or literal.atom.pred in recursive:
            raise NotSimplifiable(f"{literal} reads a view under negation or a recursive view")
        alternatives = []
        for rule in rules:
            if rule.head[0].pred != literal.atom.pred:
                continue
            n = next(counter)
            rename = {v: Var(f"{v.name}_{n}") for b in rule.body for v in b.variables() if v.name != "_"}
            rename.update({v: Var(f"{v.name}_{n}") for v in rule.head[0].variables()})
            head = _subst_atom(rule.head[0], rename)
            theta = _unify_args(head.args, literal.atom.args)
            if theta is None:
                continue
            body = tuple(_subst(_subst(b, rename), theta) for b in rule.body)
            rest = tuple(_subst(b, theta) for b in d.body[:position] + d.body[position + 1 :])
            alternatives.append(Denial(d.body[:0] + rest[:position] + body + rest[position:], d.name, d.loc))
        work[:0] = alternatives
    return out


def after(denials: Iterable[Denial], update: Delta, program: Program | None = None) -> list[Denial]:
    """``After^U(Φ)``: denials that hold in D exactly when Φ holds in D^U (seed 004, Prop. 3.1).

    Every atom of an updated relation splits into its cases (see the module docstring); the
    result lists the combinations in order, the unchanged case first, without simplifying them
    (that is :func:`optimize`'s job).
    """
    out: list[Denial] = []
    inserted: dict[str, list[tuple]] = {}
    deleted: dict[str, list[tuple]] = {}
    for pred, args in ground_atoms(update.insert):
        inserted.setdefault(pred, []).append(args)
    for pred, args in ground_atoms(update.delete):
        deleted.setdefault(pred, []).append(args)
    for d in unfold(denials, program):
        choices = []
        for b in d.body:
            if isinstance(b, Comparison):
                choices.append([(b,)])
                continue
            ins, dele = inserted.get(b.atom.pred, []), deleted.get(b.atom.pred, [])
            if b.positive:
                options = [(b,) + differs for differs in _avoid(b.atom.args, dele)]
                options += [_equal(b.atom.args, e) for e in ins]
            else:
                if dele and any(isinstance(t, Var) and t.name == "_" for t in b.atom.args):
                    raise NotSimplifiable(f"a deletion from {b.atom.pred} meets 'not {b.atom}'")
                not_inserted = list(_avoid(b.atom.args, ins))
                options = [(b,) + differs for differs in not_inserted]
                options += [_equal(b.atom.args, x) + differs for x in dele for differs in not_inserted]
            choices.append(options)
        for combo in itertools.product(*choices):
            out.append(Denial(tuple(e for part in combo for e in part), d.name, d.loc))
    return out


def _avoid(args: tuple, tuples: list[tuple]) -> Iterator[tuple[Comparison, ...]]:
    """Each way to say ``args`` is none of ``tuples``: one differing position per tuple."""
    per_tuple = []
    for t in tuples:
        differs = [Comparison("!=", a, v) for a, v in zip(args, t) if not (isinstance(a, Var) and a.name == "_")]
        if not differs:
            return  # the pattern matches the tuple whatever its values: no way to avoid it
        per_tuple.append(differs)
    for combo in itertools.product(*per_tuple):
        yield tuple(combo)


def _equal(args: tuple, values: tuple) -> tuple[Comparison, ...]:
    return tuple(Comparison("=", a, v) for a, v in zip(args, values) if not (isinstance(a, Var) and a.name == "_"))


# -- built-ins with z3 --------------------------------------------------------------------------------


class Builtins:
    """Questions about conjunctions of comparisons, answered by one z3 solver with push/pop.

    A value is a pair (kind, number): integers are (0, n), strings (1, r) with r order-preserving
    among the strings of the question — every integer before every string, as nablog orders
    constants. Over the reals this only adds values, so "unsatisfiable" and "implied" are sound.

    >>> b = Builtins()
    >>> X, Y = Var("X"), Var("Y")
    >>> b.implies([Comparison("<", X, 3), Comparison("<", Y, X)], Comparison("<", Y, 3))
    True
    >>> b.satisfiable([Comparison("<", X, 3), Comparison(">", X, "a")])
    False
    """

    def __init__(self) -> None:
        self.solver = z3.Solver()
        self.cache: dict[tuple, bool] = {}
        self.vars: dict[str, tuple] = {}

    def _var(self, name: str):
        if name not in self.vars:
            k, v = z3.Int(f"k_{name}"), z3.Real(f"v_{name}")
            self.vars[name] = (k, v, z3.And(k >= 0, k <= 1))
        return self.vars[name]

    def _encode(self, comparisons: list[Comparison]):
        strings = sorted({t for c in comparisons for t in (c.left, c.right) if isinstance(t, str)})
        rank = {s: i for i, s in enumerate(strings)}
        domain = []

        def term(t):
            if isinstance(t, Var):
                k, v, d = self._var(t.name)
                domain.append(d)
                return k, v
            if isinstance(t, str):
                return z3.IntVal(1), z3.RealVal(rank[t])
            return z3.IntVal(0), z3.RealVal(t)

        def cmp(c: Comparison):
            (ka, va), (kb, vb) = term(c.left), term(c.right)
            eq = z3.And(ka == kb, va == vb)
            lt = z3.Or(ka < kb, z3.And(ka == kb, va < vb))
            return {"=": eq, "!=": z3.Not(eq), "<": lt, "<=": z3.Or(lt, eq), ">": z3.Not(z3.Or(lt, eq)), ">=": z3.Not(lt)}[c.op]

        formulas = [cmp(c) for c in comparisons]
        return formulas, domain

    def satisfiable(self, comparisons: Iterable[Comparison]) -> bool:
        comparisons = list(comparisons)
        key = ("sat", frozenset(comparisons))
        if key not in self.cache:
            formulas, domain = self._encode(comparisons)
            self.solver.push()
            self.solver.add(*domain, *formulas)
            self.cache[key] = self.solver.check() != z3.unsat
            self.solver.pop()
        return self.cache[key]

    def implies(self, premises: Iterable[Comparison], conclusion: Comparison) -> bool:
        premises = list(premises)
        key = ("implies", frozenset(premises), conclusion)
        if key not in self.cache:
            self.cache[key] = not self.satisfiable(premises + [negate(conclusion)])
        return self.cache[key]


def negate(c: Comparison) -> Comparison:
    return Comparison(NEGATED[c.op], c.left, c.right)


# -- Optimize ------------------------------------------------------------------------------------------


@dataclass
class Knowledge:
    """The background Θ: denials known to hold, and facts known to be true or false."""

    denials: list[Denial] = field(default_factory=list)
    true: set[GroundAtom] = field(default_factory=set)
    false: set[GroundAtom] = field(default_factory=set)


def optimize(
    denials: Iterable[Denial],
    background: Iterable[Denial] | Knowledge = (),
    *,
    builtins: Builtins | None = None,
    max_steps: int = 200,
) -> list[Denial]:
    """``Optimize_Θ(Φ)``: Φ without the denials and literals that Θ makes redundant (see the module
    docstring); sound (in a state where Θ holds the result holds iff Φ does) and idempotent.

    Seed 004, Example 4.1: the optimal check after ``U = {m1(a, b)}`` (expression (2)):

    >>> from nablog.lang import parse
    >>> prog = parse('''
    ...     #constraint g11 :- m1(X, Y), m1(X, Z), Y != Z.   #constraint g12 :- m1(X, Y), m2(X, Z), Y != Z.
    ...     #constraint g21 :- m2(X, Y), m1(X, Z), Y != Z.   #constraint g22 :- m2(X, Y), m2(X, Z), Y != Z.''')
    >>> gamma, delta = list(prog.denials), [prog.denials[0], prog.denials[3]]
    >>> u = Delta.parse("+m1(a, b).")
    >>> theta = Knowledge(after(gamma, u.inverse()) + delta + after(delta, u.inverse()), set(ground_atoms(u.insert)))
    >>> [str(d) for d in optimize(gamma, theta)]
    ['#constraint g12 :- m2(a, Z), Z != b.']
    """
    knowledge = background if isinstance(background, Knowledge) else Knowledge(list(background))
    builtins = builtins or Builtins()
    theta = [n for d in knowledge.denials if (n := _normalize(d, knowledge, builtins, use_facts=False)) is not None]
    result: list[Denial] = []
    for d in denials:
        start = _normalize(d, knowledge, builtins)
        done: list[Denial] = []
        work = [start]
        steps = 0
        while work:
            current = work.pop(0)
            if current is None:
                continue
            steps += 1
            if steps > max_steps:
                # Give up on this denial's case split (it stays correct as it is) rather than loop.
                done = [start] if start is not None else []
                break
            outcome = _against(current, theta, result + done, builtins)
            if outcome is True:
                continue
            if outcome is None:
                done.append(current)
            else:
                work[:0] = [_normalize(x, knowledge, builtins) for x in outcome]
        result.extend(done)
    return result


def _against(d: Denial, theta: list[Denial], earlier: list[Denial], builtins: Builtins, max_split: int = 3):
    """True when Θ or an earlier result subsumes ``d``; when a Θ denial maps into ``d`` leaving
    comparisons e1..en undecided, the cases Θ does not exclude: ``d, not e1``, ``d, e1, not e2``, …;
    None when nothing applies."""
    comparisons = [b for b in d.body if isinstance(b, Comparison)]
    splits = []
    for source, background in ((earlier, False), (theta, True)):
        for t in source:
            for sigma in _matches(t, d):
                extra = []
                for c in t.body:
                    if isinstance(c, Comparison):
                        c = Comparison(c.op, _apply(c.left, sigma), _apply(c.right, sigma))
                        if not builtins.implies(comparisons, c):
                            extra.append(c)
                if not extra:
                    return True
                # Split only on a variable against a constant: each case then binds or excludes a
                # value, so splitting ends (the paper's examples are all of this kind).
                if background and len(extra) <= max_split and all(_binds(e) for e in extra) and builtins.satisfiable(comparisons + extra):
                    splits.append(extra)
    for extra in splits:
        # Subsumption first (above): a restriction must not hide a denial that subsumes d whole.
        if all(builtins.satisfiable(comparisons + [negate(e)]) for e in extra):
            return [Denial(d.body + tuple(extra[:i]) + (negate(e),), d.name, d.loc) for i, e in enumerate(extra)]
    return None


def _binds(c: Comparison) -> bool:
    return c.op in ("=", "!=") and isinstance(c.left, Var) != isinstance(c.right, Var)


def _matches(general: Denial, specific: Denial) -> Iterator[dict]:
    """Substitutions σ of ``general``'s variables with every database literal of general·σ among
    ``specific``'s literals (the literal part of θ-subsumption)."""
    goals = [b for b in general.body if isinstance(b, Literal)]
    targets = [b for b in specific.body if isinstance(b, Literal)]
    goals.sort(key=lambda g: sum(1 for t in targets if t.atom.pred == g.atom.pred and t.positive == g.positive))

    def extend(i: int, sigma: dict) -> Iterator[dict]:
        if i == len(goals):
            yield sigma
            return
        g = goals[i]
        for t in targets:
            if t.positive != g.positive or t.atom.pred != g.atom.pred or t.atom.arity != g.atom.arity:
                continue
            s = dict(sigma)
            ok = True
            for a, b in zip(g.atom.args, t.atom.args):
                anon_a = isinstance(a, Var) and a.name == "_"
                anon_b = isinstance(b, Var) and b.name == "_"
                if anon_a or anon_b:
                    # `_` under not means "any value": it only matches `_`; positively it matches anything.
                    if (anon_a != anon_b) and not g.positive:
                        ok = False
                        break
                    continue
                if isinstance(a, Var):
                    if a in s and s[a] != b:
                        ok = False
                        break
                    s[a] = b
                elif a != b:
                    ok = False
                    break
            if ok:
                yield from extend(i + 1, s)

    yield from extend(0, {})


def _normalize(d: Denial, knowledge: Knowledge, builtins: Builtins, use_facts: bool = True) -> Denial | None:
    """The trivial steps (see the module docstring); None when the denial can never be violated."""
    body = list(d.body)
    changed = True
    while changed:
        changed = False
        for i, b in enumerate(body):
            if isinstance(b, Comparison) and b.op == "=" and (isinstance(b.left, Var) or isinstance(b.right, Var)):
                var, value = (b.left, b.right) if isinstance(b.left, Var) else (b.right, b.left)
                if var == value:
                    del body[i]
                else:
                    sigma = {var: value}
                    body = [_subst(e, sigma) for j, e in enumerate(body) if j != i]
                changed = True
                break
    out: list = []
    for b in body:
        if isinstance(b, Comparison):
            if not isinstance(b.left, Var) and not isinstance(b.right, Var):
                if b.holds(b.left, b.right):
                    continue
                return None
            b = _orient(b)
        else:
            if use_facts and b.atom.is_ground():
                g = (b.atom.pred, tuple(b.atom.args))
                known = True if g in knowledge.true else (False if g in knowledge.false else None)
                if known is not None:
                    if known == b.positive:
                        continue
                    return None
        if b not in out:
            out.append(b)
    comparisons = [b for b in out if isinstance(b, Comparison)]
    if comparisons and not builtins.satisfiable(comparisons):
        return None
    for c in list(comparisons):
        rest = [x for x in comparisons if x is not c]
        if rest and builtins.implies(rest, c):
            out.remove(c)
            comparisons = rest
    return Denial(tuple(out), d.name, d.loc)


def _orient(c: Comparison) -> Comparison:
    """A variable on the left when the other side is a constant: ``b != Z`` is ``Z != b``."""
    if not isinstance(c.left, Var) and isinstance(c.right, Var):
        return Comparison(FLIPPED[c.op], c.right, c.left, c.loc)
    return c


def _apply(term, sigma: dict):
    return sigma.get(term, term) if isinstance(term, Var) else term


def _subst_atom(atom: Atom, sigma: dict) -> Atom:
    return Atom(atom.pred, tuple(_apply(t, sigma) for t in atom.args), atom.loc)


def _subst(element, sigma: dict):
    if isinstance(element, Comparison):
        return Comparison(element.op, _apply(element.left, sigma), _apply(element.right, sigma), element.loc)
    return Literal(_subst_atom(element.atom, sigma), element.positive)


def _unify_args(head: tuple, args: tuple) -> dict | None:
    """A substitution making a (renamed) rule head equal to a body atom's arguments."""
    sigma: dict = {}
    for h, a in zip(head, args):
        h, a = _apply(h, sigma), _apply(a, sigma)
        if h == a:
            continue
        if isinstance(h, Var):
            sigma = {k: (a if v == h else v) for k, v in sigma.items()}
            sigma[h] = a
        elif isinstance(a, Var):
            if a.name == "_":
                continue
            sigma = {k: (h if v == a else v) for k, v in sigma.items()}
            sigma[a] = h
        else:
            return None
    return sigma


def _gkey(a: GroundAtom) -> tuple:
    return (a[0], row_sort_key(a[1]))


# -- the checks of the paper -------------------------------------------------------------------------


@dataclass
class SimplifiedChecks:
    """Simplified checks for one update: ``before`` is Optimize_Θ(After^U(Γ)) with Θ = Γ ∪ Δ ∪
    After^U(Δ) (seed 004 §3, tested before the update), ``after`` is expression (2) of §4 (tested
    after it, in D^U);
    ``unsimplified`` names constraints checked as they are (see :class:`NotSimplifiable`)."""

    update: Delta
    before: list[Denial]
    after: list[Denial]
    unsimplified: list[str] = field(default_factory=list)


def simplify(program: Program, update: Delta, *, builtins: Builtins | None = None, trust_sources: bool = True) -> SimplifiedChecks:
    """The simplified checks of ``program``'s constraints for ``update``.

    Γ are the global constraints, Δ the ``#trusted`` ones (seed 004, Def. 2.1). Before the update
    the database is assumed consistent (Γ ∪ Δ hold); after it, Δ holds and Γ held before:
    Θ = After^{¬U}(Γ) ∪ Δ ∪ U ∪ After^{¬U}(Δ) (expression (2)). With ``trust_sources=False``
    Δ is not assumed to survive the update, and ``before`` checks Γ ∪ Δ (as for a state that only
    nablog changes: the corrected view of a database).
    """
    from .constraints import constraint_infos

    builtins = builtins or Builtins()
    infos = [c for c in constraint_infos(program) if isinstance(c.constraint, Denial)]
    simple, unsimplified = [], []
    for c in infos:
        try:
            unfold([c.constraint], program)  # type: ignore[list-item]
            after([c.constraint], update, program)  # type: ignore[list-item]
            after([c.constraint], update.inverse(), program)  # type: ignore[list-item]
            simple.append(c)
        except NotSimplifiable:
            unsimplified.append(c.name)
    gamma = unfold([c.constraint for c in simple if not c.trusted], program)  # type: ignore[misc]
    delta = unfold([c.constraint for c in simple if c.trusted], program)  # type: ignore[misc]
    # Before: Γ ∪ Δ hold now, and the sources keep Δ (D^U ⊨ Δ, Def. 2.3), so After^U(Δ) holds too.
    if trust_sources:
        before = optimize(after(gamma, update), Knowledge(gamma + delta + after(delta, update)), builtins=builtins)
    else:
        before = optimize(after(gamma + delta, update), Knowledge(gamma + delta), builtins=builtins)
    inverse = update.inverse()
    theta = Knowledge(after(gamma, inverse) + delta + after(delta, inverse), set(ground_atoms(update.insert)), set(ground_atoms(update.delete)))
    post = optimize(gamma, theta, builtins=builtins)
    return SimplifiedChecks(update, before, post, unsimplified)


def parse_change(text: str) -> Delta:
    """An update written like a request: ``+m1(a, b). -m2(a, c).``"""
    if not text.strip():
        raise NablogError("the update is empty", hint="write insertions as +p(1, 2). and deletions as -q(a).")
    return Delta.parse(text, "<update>")


__all__ = ["Builtins", "Knowledge", "NotSimplifiable", "SimplifiedChecks", "after", "ground_atoms", "negate", "optimize", "parse_change", "simplify", "unfold"]
