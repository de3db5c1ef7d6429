"""Rederivation on Demand: seed 001's Algorithm 2, maintenance rules that read no materialized view.

The maintenance rules of Algorithm 1 (:func:`~nablog.transforms.maintenance.maintenance_rules`)
read the old state of derived predicates. RoD (Staudt & Jarke, seed 001 §4.1) keeps no view: each
maintenance rule that joins a delta with an old derived relation gets a *magic rule* asking for the
tuples that join needs, ``m_<adornment>__p(bound arguments) :- <what is joined so far>``, and the
old state is rederived on demand by the magic-set rewriting of the original rules
(:mod:`nablog.transforms.magic`), which answers exactly those questions.

Bindings flow from the rule's delta literal (``del__r``, ``ins__r``): as the paper's footnote 8
allows, the delta literal is moved to the front and the rest of the body is joined left to right,
positive literals first, each negated literal and comparison as soon as its variables are bound
(§4.2). A prefix of two or more literals is kept in a supplementary predicate
``sup<rule>_<step>__<head>`` shared by the magic rule and the rest of the rule (§4.1.2). A literal
over ``new__p`` asks for ``p`` as well, since (N1) builds ``new__p`` from the rederived ``p``; a
negated one asks with every argument bound. (E1)'s idle-insertion check ``not p`` gets the magic
rule (M_E1) ``m_bb__p :- ins__p`` this way.

Example 3 of the paper (Figure 3), the transitive closure; the rules unchanged by RoD are left out:

>>> from nablog.lang import parse
>>> program = parse("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y).")
>>> from nablog.transforms.maintenance import maintenance_rules
>>> print(Program(tuple(r for r in rod(program).rules if r not in maintenance_rules(program).rules)))
m_bf__closure(Z) :- del__edge(X, Z).
sup7_1__red__closure(X, Y, Z) :- del__closure(X, Y), new__edge(X, Z).
m_bb__closure(Z, Y) :- sup7_1__red__closure(X, Y, Z).
red__closure(X, Y) :- sup7_1__red__closure(X, Y, Z), new__closure(Z, Y).
m_bf__closure(Z) :- ins__edge(X, Z).
m_bb__closure(X, Y) :- ins__closure(X, Y).

These replace (D1) and (R) of the second rule (the one joining ``closure``); (I1) and (E1) keep
their form and gain the magic rules above, as in the figure.

A non-linear closure (seed 001 §5's ``based_on(X,Y) :- based_on(X,Z), based_on(Z,Y).``) is
rewritten right-linear first (:mod:`nablog.transforms.closure`; same model): its maintenance rules
would otherwise ask about every tuple of ``ins__p`` and ``del__p`` from both ends
(``m_bf__p(Z) :- ins__p(X, Z).``, ``m_fb__p(Z) :- ins__p(Z, Y).``), where the right-linear ones
ask only about the changed step's far end and propagate the change back along the step:

>>> based_on = parse("b(X,Y) :- imp(X,P), def(P,Y). b(X,Y) :- b(X,Z), b(Z,Y).")
>>> print(Program(tuple(r for r in rod(based_on).rules if r.head[0].pred.startswith("m_"))))
m_bf__b(Z) :- sup3_1__del__b(X, Z).
m_bf__b(Z) :- sup4_1__del__b(Z, X).
m_bb__b(Z, Y) :- sup10_1__red__b(X, Y, Z).
m_bf__b(Z) :- sup14_1__ins__b(X, Z).
m_bf__b(Z) :- sup15_1__ins__b(Z, X).
m_bb__b(X, Y) :- ins__b(X, Y).
"""

from __future__ import annotations

from typing import Iterable

from ..lang import Atom, Literal, Program, Rule
from .closure import closures, linear
# The binding rules of the magic-set rewriting (SIPS): the same here, so the same functions.
from .magic import _binds, _is_positive, _ready, _variables, adornment, magic_atom
from .maintenance import maintenance_rules
from .propagation import DEL, INS, NEW

def rod(program: Program, idb: Iterable[str] | None = None) -> Program:
    """Algorithm 2 of seed 001: the maintenance rules of ``program`` with magic rules asking for
    the old state of the derived predicates ``idb`` (default: those ``program`` defines).

    Evaluate the result together with the magic-set rewriting of the original rules (the query
    rules Q of Algorithm 3), which turns each ``m_<adornment>__p`` fact into the tuples of ``p``
    it asks for; see :mod:`nablog.views.monitor`. A non-linear transitive closure is written
    right-linear first (see the module docstring).
    """
    old = set(program.derived if idb is None else idb)
    nonlinear = {p for p, c in closures(program).items() if c.form == "nonlinear"}
    if nonlinear:
        program = linear(program, "right", nonlinear)
    out: list[Rule] = []
    for number, rule in enumerate(maintenance_rules(program).rules, 1):
        out += demand(rule, old, number)
    seen: set[Rule] = set()
    return Program(tuple(r for r in out if not (r in seen or seen.add(r))))


def demand(rule: Rule, idb: set[str], number: int = 1) -> list[Rule]:
    """One maintenance rule with the magic rules (M_D, M_R, M_I, M_E1 of seed 001 §4.1) that
    rederive the old tuples of ``idb`` predicates it reads; the rule itself when it reads none or
    has no delta literal to start from (N1 and N′ read the rederived state as it is)."""
    delta = next((b for b in rule.body if isinstance(b, Literal) and b.positive and b.atom.pred.startswith((DEL, INS))), None)
    if delta is None or not any(_asks(b, idb) for b in rule.body):
        return [rule]
    head = rule.head[0]
    ordered = _order(rule.body, delta)
    context: list = [ordered[0]]
    bound = _binds(ordered[0], set())
    rules: list[Rule] = []
    step = 0
    for index in range(1, len(ordered)):
        element = ordered[index]
        pred = _asks(element, idb)
        if pred:
            if len(context) > 1:
                step += 1
                needed = _variables([head, *ordered[index:]])
                keep = tuple(v for v in _variables(context) if v in needed)
                sup = Atom(f"sup{number}_{step}__{head.pred}", keep)
                rules.append(Rule((sup,), tuple(context)))
                context = [Literal(sup)]
            asked = Atom(pred, element.atom.args)
            rules.append(Rule((magic_atom(asked, adornment(asked, bound)),), tuple(context)))
        context.append(element)
        bound |= _binds(element, bound)
    rules.append(Rule(rule.head, tuple(context)))
    return rules


def _asks(element, idb: set[str]) -> str | None:
    """The derived predicate whose old state ``element`` reads (``p`` for ``p`` and ``new__p``)."""
    if not isinstance(element, Literal):
        return None
    pred = element.atom.pred
    if pred in idb:
        return pred
    if pred.startswith(NEW) and pred[len(NEW):] in idb:
        return pred[len(NEW):]
    return None


def _order(body: tuple, first: Literal) -> list:
    """``first``, then the other positive literals left to right (one sharing a bound variable
    before one that shares none), each filter as soon as its variables are bound."""
    rest = list(body)
    rest.remove(first)
    out: list = [first]
    known = _binds(first, set())
    while rest:
        ready = next((e for e in rest if not _is_positive(e) and _ready(e, known)), None)
        if ready is None:
            positives = [e for e in rest if _is_positive(e)]
            if not positives:
                out += rest
                break
            ready = next((e for e in positives if any(v in known for v in e.variables())), positives[0])
        rest.remove(ready)
        out.append(ready)
        known |= _binds(ready, known)
    return out


__all__ = ["demand", "rod"]
