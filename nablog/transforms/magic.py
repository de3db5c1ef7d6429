"""Magic-set rewriting: a goal-directed program that computes only what one query atom needs.

Seed 003 (§3.1, Def. 18–20) answers insertions top-down "through the magic sets approach
focussed on the particular goal given"; seed 001's Rederivation on Demand (Algorithm 2) asks
the same kind of goal-directed question. This is the generalized *supplementary* magic-set
rewriting of Beeri & Ramakrishnan (1991), the one both papers build on:

1. **Adornment.** A query atom binds the arguments that are constants (``b``) and leaves the
   variables free (``f``): ``staff_chair(aravindan, Y)`` asks for ``staff_chair`` adorned ``bf``.
   Each derived predicate is copied once per adornment it is called with (``a_bf__p``); inside
   a rule the bindings flow from the head's bound arguments through the body literals in the
   order of a sideways-information-passing strategy (below).
2. **Magic predicates.** ``m_bf__p(x)`` holds the bindings for which ``p`` is asked;
   the query's constants are its seed fact, and every call of a derived literal inside a rule
   adds its bindings to that literal's magic predicate.
3. **Supplementary magic predicates.** ``sup<r>_<i>__p`` keep the bindings reached after the
   first literals of adorned rule ``r``, so that a rule's prefix is joined once and shared by the
   magic rule of the next call and the rest of the rule.

Base predicates are not copied: a rule reads them as they are. The order of a rule's body
(the SIPS) is left to right, except that a positive literal with a bound argument is taken
before one with none, and a negative literal or comparison is taken as soon as its variables
are bound. A negative derived literal is called with all its
arguments bound. That can make the rewritten program recursive through negation although the
original is stratified (a magic predicate may depend on a negation whose predicate depends on
it); when it does, the rewrite falls back for negation: every derived predicate under ``not``
(and what it depends on) keeps its original rules and is evaluated in full, which is always
stratified. :attr:`MagicProgram.full` names those predicates and :attr:`MagicProgram.note`
says why.

The paper's example (seed 003, Example 1): is ``staff_chair(aravindan, gerhard)`` derivable?

>>> from nablog.lang import parse, parse_atom
>>> idb = parse("staff_chair(X,Y) :- staff_group(X,Z), group_chair(Z,Y).")
>>> print(magic(idb, parse_atom("staff_chair(aravindan, gerhard)")))
m_bb__staff_chair(aravindan, gerhard).
a_bb__staff_chair(X, Y) :- m_bb__staff_chair(X, Y), staff_group(X, Z), group_chair(Z, Y).

Recursion: the ancestors of ``b`` only, not the whole closure. The magic predicate collects
the nodes asked about; the supplementary one keeps the bindings of the prefix ``e(X, Z)``:

>>> paths = parse("p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y).")
>>> print(magic(paths, parse_atom("p(b, Y)")))
m_bf__p(b).
a_bf__p(X, Y) :- m_bf__p(X), e(X, Y).
sup2_1__p(X, Z) :- m_bf__p(X), e(X, Z).
m_bf__p(Z) :- sup2_1__p(X, Z).
a_bf__p(X, Y) :- sup2_1__p(X, Z), a_bf__p(Z, Y).

Negation is called with its bindings, and stays stratified here:

>>> rewrite = magic_sets(parse("q(X) :- f(X, Y), not p(Y, c). p(X,Y) :- e(X,Y)."), parse_atom("q(1)"))
>>> print(rewrite.program)
m_b__q(1).
sup1_1__q(X, Y) :- m_b__q(X), f(X, Y).
m_bb__p(Y, c) :- sup1_1__q(X, Y).
a_b__q(X) :- sup1_1__q(X, Y), not a_bb__p(Y, c).
a_bb__p(X, Y) :- m_bb__p(X, Y), e(X, Y).
>>> rewrite.answer, rewrite.full
(Atom(pred='a_b__q', args=(1,)), frozenset())

References
----------
C. Beeri, R. Ramakrishnan. On the power of magic. J. Logic Programming 10 (1991) 255–299.
Seed 003 (Delhibabu & Behrend), §3.1 and Def. 18–20; seed 001, Algorithm 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from ..lang import AnalysisError, Atom, BaseDeclaration, Literal, Program, Rule, Var, stratify

ANONYMOUS = "_"


@dataclass(frozen=True)
class MagicProgram:
    """The result of :func:`magic_sets`.

    Attributes
    ----------
    program : Program
        The rewritten rules, the seed fact of the query's magic predicate, the base facts and
        ``#base`` declarations of the original; evaluate it over the same base facts.
    query : Atom
        The atom asked.
    answer : Atom
        The query over the predicate that holds its answers (``a_bf__p(b, Y)``, or the query
        itself when it names a base predicate or one evaluated in full): its rows matching the
        query's constants and repeated variables are exactly the query's answers in the
        original program's model.
    full : frozenset[str]
        Derived predicates kept with their original rules and evaluated in full (empty unless
        negation made the goal-directed program unstratifiable).
    note : str
        Why predicates are evaluated in full, or ``""``.
    """

    program: Program
    query: Atom
    answer: Atom
    full: frozenset[str] = frozenset()
    note: str = ""


def adornment(atom: Atom, bound: Iterable[Var]) -> str:
    """The adornment of ``atom`` when the variables ``bound`` are known: ``b`` for a constant
    or bound variable, ``f`` otherwise (the anonymous ``_`` is never bound).

    >>> adornment(Atom("p", (Var("X"), 1, Var("Y"), Var("_"))), {Var("Y"), Var("_")})
    'fbbf'
    """
    known = set(bound)
    return "".join("b" if not isinstance(t, Var) or (t.name != ANONYMOUS and t in known) else "f" for t in atom.args)


def adorned_name(pred: str, adorn: str) -> str:
    """The copy of ``pred`` for calls adorned ``adorn``: ``a_bf__p``."""
    return f"a_{adorn}__{pred}"


def magic_name(pred: str, adorn: str) -> str:
    """The magic predicate of ``pred`` adorned ``adorn``: ``m_bf__p``."""
    return f"m_{adorn}__{pred}"


def magic_atom(atom: Atom, adorn: str) -> Atom:
    """The magic atom of a call: the bound arguments of ``atom`` under ``m_<adorn>__<pred>``."""
    return Atom(magic_name(atom.pred, adorn), tuple(t for t, a in zip(atom.args, adorn) if a == "b"))


def magic(program: Program, query: Atom) -> Program:
    """The magic-set rewriting of ``program`` for ``query`` (see the module docstring);
    the answers are in :attr:`MagicProgram.answer` of :func:`magic_sets`."""
    return magic_sets(program, query).program


def magic_sets(program: Program, query: Atom, linear: bool = False) -> MagicProgram:
    """Rewrite ``program`` so that evaluating it computes only what ``query`` needs.

    Parameters
    ----------
    program : Program
        A stratified program (constraints are dropped: they do not change a query's answers).
    query : Atom
        Constants are bound arguments, variables free; a repeated variable is a filter on the
        answers, not a binding.
    linear : bool
        Ask each transitive closure in the linear form whose magic set stays small for the
        adornment it is called with (:mod:`nablog.transforms.closure`) instead of as written.

    Returns
    -------
    MagicProgram
        The rewritten program and the atom whose matching rows are the answers. The program is
        stratified; when the goal-directed treatment of negation would not be, predicates under
        negation are evaluated in full and ``full``/``note`` say so.
    """
    try:
        rewritten = _rewrite(program, query, frozenset(), linear)
        stratify(rewritten.program)
        return rewritten
    except AnalysisError as e:
        full = _negated_closure(program)
        rewritten = _rewrite(program, query, full, linear)
        stratify(rewritten.program)  # cannot fail: the full part depends on nothing magic
        note = f"negation evaluated in full for {', '.join(sorted(full))}: the goal-directed program is not stratified ({e.message})"
        return MagicProgram(rewritten.program, query, rewritten.answer, full, note)


def _negated_closure(program: Program) -> frozenset[str]:
    """Derived predicates used under ``not`` and every derived predicate they depend on."""
    derived = program.derived
    uses: dict[str, set[str]] = {}
    for rule in program.rules:
        for head in rule.head:
            uses.setdefault(head.pred, set()).update(b.atom.pred for b in rule.body if isinstance(b, Literal))
    todo = [a.pred for r in program.rules for a in r.negative_body() if a.pred in derived]
    seen: set[str] = set()
    while todo:
        pred = todo.pop()
        if pred in seen or pred not in derived:
            continue
        seen.add(pred)
        todo.extend(uses.get(pred, ()))
    return frozenset(seen)


def _rewrite(program: Program, query: Atom, full: frozenset[str], linear: bool = False) -> MagicProgram:
    derived = program.derived
    goal_directed = derived - full
    rules_for = _rules_for(program, linear)
    out: list = [s for s in program.statements if isinstance(s, BaseDeclaration)]
    out += [r for r in program.rules if r.is_fact() and r.head[0].pred not in derived]
    full_needed: set[str] = set()

    if query.pred not in goal_directed:
        if query.pred in full:
            full_needed.add(query.pred)
        answer = query
    else:
        adorn = adornment(query, ())
        out.append(Rule((magic_atom(query, adorn),)))
        answer = Atom(adorned_name(query.pred, adorn), query.args)
        rules, full_needed = _adorned(rules_for, [(query.pred, adorn)], goal_directed, full)
        out += rules
    out += _full_rules(program, full_needed)
    return MagicProgram(Program(tuple(out)), query, answer, full)


def answer_rules(program: Program, asked: Iterable[str], linear: bool = True) -> Program:
    """Q of seed 001's Algorithm 3: one magic-set rewriting of ``program`` for every adorned
    question named in ``asked`` (``m_<adornment>__p``, whose facts the caller supplies: no seed
    fact), answering into ``p`` itself. With ``linear``, a transitive closure is asked in the form
    that keeps its magic set small (:mod:`nablog.transforms.closure`), and a question with both
    arguments of a closure bound is asked as its ``bf`` part (``m_bf__p(X) :- m_bb__p(X, Y).``):
    ``p(x, y)`` holds exactly when ``y`` is among ``x``'s answers, which other questions about
    ``x`` share. Predicates under negation are evaluated in full when the goal-directed program
    would not be stratified, as in :func:`magic_sets`; the result is stratified."""
    from .closure import closures

    derived = program.derived
    found = closures(program) if linear else {}
    routes: list = []
    starts: list[tuple[str, str]] = []
    for name in sorted(set(asked)):
        adorn, pred = name[2:].split("__", 1)
        if pred not in derived:
            continue
        if adorn == "bb" and pred in found:
            x, y = Var("X"), Var("Y")
            routes.append(Rule((Atom(magic_name(pred, "bf"), (x,)),), (Literal(Atom(name, (x, y))),)))
            adorn = "bf"
        starts.append((pred, adorn))
    starts = list(dict.fromkeys(starts))
    rules_for = _rules_for(program, linear)

    def build(full: frozenset[str]) -> Program:
        rules, full_needed = _adorned(rules_for, [s for s in starts if s[0] not in full], derived - full, full)
        answers = []
        for pred, adorn in starts:
            args = tuple(Var(f"V{i + 1}") for i in range(len(adorn)))
            source = pred if pred in full else adorned_name(pred, adorn)
            full_needed |= {pred} if pred in full else set()
            if source != pred:
                answers.append(Rule((Atom(pred, args),), (Literal(Atom(source, args)),)))
        return Program(tuple([*(s for s in program.statements if isinstance(s, BaseDeclaration)), *routes, *rules, *answers, *_full_rules(program, full_needed)]))

    try:
        out = build(frozenset())
        stratify(out)
    except AnalysisError:
        out = build(_negated_closure(program))
        stratify(out)  # cannot fail: the full part depends on nothing magic
    return out


def _rules_for(program: Program, linear: bool):
    """The rules of a predicate asked with an adornment: its own, or with ``linear`` a closure's
    in the form :func:`~nablog.transforms.closure.form_for` picks for the adornment."""
    derived = program.derived
    by_head: dict[str, list[Rule]] = {}
    for rule in program.rules:
        if not rule.is_fact() or rule.head[0].pred in derived:
            by_head.setdefault(rule.head[0].pred, []).append(rule)
    forms: dict[tuple[str, str], list[Rule]] = {}
    if linear:
        from .closure import closures, form_for, recursive_rules

        for pred, closure in closures(program).items():
            for adorn in ("bf", "fb", "bb"):
                forms[pred, adorn] = [*closure.exits, *recursive_rules(closure, form_for(adorn))]
    return lambda pred, adorn: forms.get((pred, adorn)) or by_head.get(pred, ())


def _adorned(rules_for, starts: list[tuple[str, str]], goal_directed: frozenset[str], full: frozenset[str]) -> tuple[list[Rule], set[str]]:
    """The adorned, magic and supplementary rules for the calls ``starts`` and every call they
    make (numbered in one sequence, so supplementary predicates never clash); the predicates read
    in full."""
    out: list[Rule] = []
    full_needed: set[str] = set()
    todo = list(starts)
    done: set[tuple[str, str]] = set()
    counter = 0
    while todo:
        pred, adorn = todo.pop(0)
        if (pred, adorn) in done:
            continue
        done.add((pred, adorn))
        for rule in rules_for(pred, adorn):
            counter += 1
            rules, calls, used_full = _rewrite_rule(rule, adorn, counter, goal_directed, full)
            out += rules
            todo += calls
            full_needed |= used_full
    return out, full_needed


def _full_rules(program: Program, full_needed: set[str]) -> list[Rule]:
    """Predicates evaluated in full keep their original rules, with everything they depend on."""
    derived = program.derived
    closure: set[str] = set()
    todo_full = list(full_needed)
    while todo_full:
        pred = todo_full.pop()
        if pred in closure:
            continue
        closure.add(pred)
        for rule in program.rules:
            if rule.head[0].pred == pred:
                todo_full += [b.atom.pred for b in rule.body if isinstance(b, Literal) and b.atom.pred in derived]
    return [r for r in program.rules if r.head[0].pred in closure]


def _rewrite_rule(
    rule: Rule, adorn: str, number: int, goal_directed: frozenset[str], full: frozenset[str]
) -> tuple[list[Rule], list[tuple[str, str]], set[str]]:
    """The adorned rule ``number`` of ``rule`` called with ``adorn``: its magic rules, its
    supplementary rules and the final rule; the calls it makes; the predicates read in full."""
    head = rule.head[0]
    bound = {t for t, a in zip(head.args, adorn) if a == "b" and isinstance(t, Var)}
    context: list = [Literal(magic_atom(head, adorn))]
    rules: list[Rule] = []
    calls: list[tuple[str, str]] = []
    used_full: set[str] = set()
    ordered = _sips(rule.body, bound)
    step = 0
    for index, element in enumerate(ordered):
        if isinstance(element, Literal) and element.atom.pred in goal_directed:
            call = adornment(element.atom, bound)
            if len(context) > 1:
                # Join the prefix once: the magic rule and the rest of the rule share it.
                step += 1
                needed = _variables([head, *ordered[index:]])
                keep = tuple(v for v in _variables(context) if v in needed and v in bound)
                sup = Atom(f"sup{number}_{step}__{head.pred}", keep)
                rules.append(Rule((sup,), tuple(context)))
                context = [Literal(sup)]
            called = magic_atom(element.atom, call)
            if context != [Literal(called)]:  # a call with the caller's own bindings adds none
                rules.append(Rule((called,), tuple(context)))
            calls.append((element.atom.pred, call))
            element = Literal(Atom(adorned_name(element.atom.pred, call), element.atom.args), element.positive)
        elif isinstance(element, Literal) and element.atom.pred in full:
            used_full.add(element.atom.pred)
        context.append(element)
        bound |= _binds(element, bound)
    rules.append(Rule((Atom(adorned_name(head.pred, adorn), head.args),), tuple(context)))
    return rules, calls, used_full


def _sips(body: tuple, bound: set[Var]) -> list:
    """The body in the order bindings pass: negative literals and comparisons as soon as their
    variables are bound, then the first positive literal with a bound argument, else the first."""
    pending = list(body)
    known = set(bound)
    out: list = []
    while pending:
        ready = next((e for e in pending if not _is_positive(e) and _ready(e, known)), None)
        if ready is None:
            positives = [e for e in pending if _is_positive(e)]
            if not positives:
                out += pending  # unsafe leftovers: analysis of the result reports them
                break
            ready = next((e for e in positives if "b" in adornment(e.atom, known)), positives[0])
        pending.remove(ready)
        out.append(ready)
        known |= _binds(ready, known)
    return out


def _is_positive(element) -> bool:
    return isinstance(element, Literal) and element.positive


def _ready(element, known: set[Var]) -> bool:
    if isinstance(element, Literal):
        return all(v in known for v in element.variables() if v.name != ANONYMOUS)
    return all(v in known for v in element.variables())


def _binds(element, known: set[Var]) -> set[Var]:
    """Only positive literals bind (a comparison filters: nablog's safety rule)."""
    if isinstance(element, Literal) and element.positive:
        return {v for v in element.variables() if v.name != ANONYMOUS}
    return set()


def _variables(elements: Iterable) -> list[Var]:
    """Named variables in order of first occurrence."""
    seen: dict[Var, None] = {}
    for e in elements:
        terms = e.args if isinstance(e, Atom) else (e.atom.args if isinstance(e, Literal) else (e.left, e.right))
        for t in terms:
            if isinstance(t, Var) and t.name != ANONYMOUS:
                seen.setdefault(t)
    return list(seen)


__all__ = ["MagicProgram", "adorned_name", "answer_rules", "adornment", "magic", "magic_atom", "magic_name", "magic_sets"]
