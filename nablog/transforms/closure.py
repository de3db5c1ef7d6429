"""Transitive closures recognized and rewritten to the linear form a goal-directed question needs.

Seed 001's Rederivation on Demand (§4.1, Algorithm 2, Example 3) asks, through magic predicates,
for the old tuples of a view that the maintenance rules join with a change; the magic-set
rewriting of the view's rules (Q of Algorithm 3) answers them. How much Q derives depends on how
the recursion is written. A closure ``p`` of a step relation ``s`` (``p = s⁺``) can be written

- non-linear:   ``p(X,Y) :- p(X,Z), p(Z,Y).`` (seed 001 §5's ``based_on``),
- right-linear: ``p(X,Y) :- s(X,Z), p(Z,Y).`` (the recursive literal last: Example 3's ``closure``),
- left-linear:  ``p(X,Y) :- p(X,Z), s(Z,Y).`` (the recursive literal first),

each beside the exit rule ``p(X,Y) :- s(X,Y).``, and all three have one model. Asked ``p(a, Y)``
(adornment ``bf``), the left-linear rules call ``p`` again with the same bound argument, so the
magic set stays ``{a}`` and Q derives the nodes reachable from ``a``; the right-linear ones call
``p(Z, Y)`` for every ``Z`` reached, and the non-linear ones both: the magic set spreads over
every reachable node and Q derives their closures too (quadratic). Asked ``p(X, b)`` (``fb``), the
mirror holds: right-linear keeps the magic set ``{b}``. :func:`closures` recognizes the shapes,
:func:`linear` rewrites them to one form, :func:`form_for` says which form an adornment needs.

A step ``s`` may be any body that does not depend on ``p`` (§5's ``import(X,P), defined_in(P,Y)``);
a linear recursive rule is recognized when its step is a renaming of an exit rule's body and
every exit rule has one. Nothing else is rewritten (mutual recursion, a head with constants,
arity other than 2).

>>> from nablog.lang import parse
>>> based_on = parse("b(X,Y) :- import(X,P), defined_in(P,Y). b(X,Y) :- b(X,Z), b(Z,Y).")
>>> print(linear(based_on, "left"))
b(X, Y) :- import(X, P), defined_in(P, Y).
b(X, Y) :- b(X, Z), import(Z, P), defined_in(P, Y).
>>> print(linear(based_on, "right"))
b(X, Y) :- import(X, P), defined_in(P, Y).
b(X, Y) :- import(X, P), defined_in(P, Z), b(Z, Y).
>>> closures(based_on)["b"].form, form_for("bf"), form_for("fb"), form_for("bb")
('nonlinear', 'left', 'right', 'left')
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lang import Atom, Comparison, Literal, Program, Rule, Var

FORMS = ("left", "right", "nonlinear")


@dataclass(frozen=True)
class Closure:
    """A recognized closure ``p = s⁺``: its exit rules (``p(X,Y) :- s(X,Y).``, one per
    alternative of the step) and the form its recursive rules have."""

    pred: str
    exits: tuple[Rule, ...]
    form: str


def form_for(adorn: str) -> str | None:
    """The linear form whose magic set stays the question's constants: ``left`` when the first
    argument is bound (``bf``, and ``bb``: asked as its ``bf`` part, then filtered), ``right``
    for ``fb``; None (keep the rules) for ``ff``."""
    return {"bf": "left", "bb": "left", "fb": "right"}.get(adorn)


def closures(program: Program) -> dict[str, Closure]:
    """The derived predicates of ``program`` whose rules are a transitive closure (see the module
    docstring), by name."""
    by_head: dict[str, list[Rule]] = {}
    for rule in program.rules:
        by_head.setdefault(rule.head[0].pred, []).append(rule)
    uses = {p: {b.atom.pred for r in rules for b in r.body if isinstance(b, Literal)} for p, rules in by_head.items()}
    out = {}
    for pred, rules in by_head.items():
        found = _closure(pred, rules, lambda q: _reaches(uses, q, pred))
        if found:
            out[pred] = found
    return out


def linear(program: Program, form: str, preds: "set[str] | None" = None) -> Program:
    """``program`` with each recognized closure (of ``preds``, default all) written in ``form``
    (``left``, ``right`` or ``nonlinear``): the exit rules kept, the recursive rules replaced,
    in place of the first of them. Same model."""
    found = {p: c for p, c in closures(program).items() if preds is None or p in preds}
    out: list = []
    placed: set[str] = set()
    for statement in program.statements:
        pred = statement.head[0].pred if isinstance(statement, Rule) and statement.head else None
        if pred not in found or statement in found[pred].exits:
            out.append(statement)
        elif pred not in placed:
            placed.add(pred)
            out += recursive_rules(found[pred], form)
    return Program(tuple(out))


def recursive_rules(closure: Closure, form: str) -> list[Rule]:
    """The recursive rules of ``closure`` in ``form``: one per exit rule for a linear form."""
    if form == "nonlinear":
        x, y, z = Var("X"), Var("Y"), Var("Z")
        p = closure.pred
        return [Rule((Atom(p, (x, y)),), (Literal(Atom(p, (x, z))), Literal(Atom(p, (z, y)))))]
    out = []
    for rule in closure.exits:
        head = rule.head[0]
        x, y = head.args
        used = {v.name for b in rule.body for v in b.variables()} | {x.name, y.name}
        z = Var(next(n for n in ("Z", *(f"Z{i}" for i in range(1, len(used) + 2))) if n not in used))
        if form == "right":  # p(X,Y) :- s(X,Z), p(Z,Y).
            body = (*(_rename(b, {y: z}) for b in rule.body), Literal(Atom(closure.pred, (z, y))))
        else:  # p(X,Y) :- p(X,Z), s(Z,Y).
            body = (Literal(Atom(closure.pred, (x, z))), *(_rename(b, {x: z}) for b in rule.body))
        out.append(Rule((head,), body))
    return out


def _closure(pred: str, rules: list[Rule], depends: "callable") -> Closure | None:
    """``pred``'s rules as a closure, or None."""
    for rule in rules:
        head = rule.head[0]
        if len(rule.head) != 1 or len(head.args) != 2 or not all(isinstance(t, Var) and t.name != "_" for t in head.args) or head.args[0] == head.args[1]:
            return None
        if not all(_plain(b.atom.args) if isinstance(b, Literal) else isinstance(b, Comparison) and _plain((b.left, b.right)) for b in rule.body):
            return None
    exits = tuple(r for r in rules if not any(isinstance(b, Literal) and b.atom.pred == pred for b in r.body))
    steps = [r for r in rules if r not in exits]
    if not exits or not steps or any(depends(b.atom.pred) for r in exits for b in r.body if isinstance(b, Literal)):
        return None
    if len(steps) == 1 and _nonlinear(steps[0]):
        return Closure(pred, exits, "nonlinear")
    wanted = {_shape(r.body, *r.head[0].args) for r in exits}
    if len(wanted) != len(exits) or len(steps) != len(exits):
        return None
    for form in ("right", "left"):
        shapes = [_linear_step(r, pred, form, depends) for r in steps]
        if None not in shapes and set(shapes) == wanted:
            return Closure(pred, exits, form)
    return None


def _nonlinear(rule: Rule) -> bool:
    """``p(X,Y) :- p(X,Z), p(Z,Y).`` (either order), X, Y, Z distinct."""
    x, y = rule.head[0].args
    if len(rule.body) != 2 or not all(isinstance(b, Literal) and b.positive and b.atom.pred == rule.head[0].pred for b in rule.body):
        return False
    first, second = sorted((b.atom.args for b in rule.body), key=lambda args: args[0] != x)
    z = first[1]
    return isinstance(z, Var) and z not in (x, y, Var("_")) and first == (x, z) and second == (z, y)


def _linear_step(rule: Rule, pred: str, form: str, depends) -> tuple | None:
    """The shape of the step of a ``form``-linear recursive rule (``right``: ``s(X,Z), p(Z,Y)``;
    ``left``: ``p(X,Z), s(Z,Y)``), or None when ``rule`` is not one."""
    x, y = rule.head[0].args
    recursive = [b for b in rule.body if isinstance(b, Literal) and b.atom.pred == pred]
    if len(recursive) != 1 or not recursive[0].positive:
        return None
    a, b = recursive[0].atom.args
    rest = tuple(e for e in rule.body if e is not recursive[0])
    if any(depends(e.atom.pred) for e in rest if isinstance(e, Literal)):
        return None
    end, z = (y, a) if form == "right" else (x, b)
    if (form == "right" and b != y) or (form == "left" and a != x) or not isinstance(z, Var) or z in (x, y, Var("_")):
        return None
    if any(end in e.variables() for e in rest):
        return None  # the step must not see the far end
    return _shape(rest, x, z) if form == "right" else _shape(rest, z, y)


def _shape(body: tuple, source: Var, target: Var) -> tuple:
    """A body up to renaming of its variables: ``source`` and ``target`` named, the others by
    first occurrence; its elements sorted (a conjunction)."""
    names = {source: Var("\x00S"), target: Var("\x00T")}
    for element in body:
        for v in element.variables():
            if v.name != "_":
                names.setdefault(v, Var(f"\x00L{len(names)}"))
    return tuple(sorted(str(_rename(e, names)) for e in body))


def _plain(terms: tuple) -> bool:
    """Variables and constants only (no arithmetic: :func:`_rename` renames plain terms)."""
    return all(isinstance(t, (Var, int, str)) for t in terms)


def _rename(element, names: dict):
    """``element`` (a literal or a comparison of plain terms) with its variables renamed."""
    term = lambda t: names.get(t, t) if isinstance(t, Var) else t  # noqa: E731
    if isinstance(element, Literal):
        atom = element.atom
        return Literal(Atom(atom.pred, tuple(map(term, atom.args)), atom.loc), element.positive)
    return Comparison(element.op, term(element.left), term(element.right), element.loc)


def _reaches(uses: dict[str, set[str]], start: str, target: str) -> bool:
    """Whether ``start`` is ``target`` or depends on it through rules."""
    seen, todo = set(), [start]
    while todo:
        pred = todo.pop()
        if pred == target:
            return True
        if pred not in seen:
            seen.add(pred)
            todo.extend(uses.get(pred, ()))
    return False


__all__ = ["FORMS", "Closure", "closures", "form_for", "linear", "recursive_rules"]
