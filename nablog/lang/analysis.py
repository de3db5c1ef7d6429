"""Static analysis: arity consistency, safety, the predicate dependency graph and its strata.

>>> from nablog.lang import parse
>>> info = analyze(parse("p(X) :- e(X). q(X) :- e(X), not p(X). e(1)."))
>>> info.strata
[['e', 'p'], ['q']]
>>> info.components
[('e',), ('p',), ('q',)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Mapping

import networkx as nx

from .ast import Aggregate, Atom, Comparison, Denial, Interval, Literal, Requirement, Rule, Var, body_atoms, is_constant, term_variables
from .errors import AnalysisError, Loc, NablogWarning, QueryError, did_you_mean
from .program import Program


@dataclass(frozen=True)
class Analysis:
    """What analysis learned about a valid program.

    ``graph`` has an edge ``q -> p`` for each rule of ``p`` using ``q`` in its body, with
    ``negative=True`` when some use is under ``not``; ``components`` lists the strongly connected
    components in an order where each comes after everything it depends on; ``stratum`` maps each
    predicate to its stratum (0 for base relations and anything needing no negation below it).
    """

    graph: nx.DiGraph
    components: list[tuple[str, ...]]
    stratum: dict[str, int]
    recursive: frozenset[str]

    @property
    def strata(self) -> list[list[str]]:
        if not self.stratum:
            return []
        out: list[list[str]] = [[] for _ in range(max(self.stratum.values()) + 1)]
        for pred, level in self.stratum.items():
            out[level].append(pred)
        return [sorted(level) for level in out]


def analyze(program: Program, *, allow_disjunction: bool = False) -> Analysis:
    """Check arities and safety, then stratify; raise AnalysisError on the first problem found."""
    check_arities(program)
    for statement in program.statements:
        if isinstance(statement, Rule):
            if len(statement.head) > 1 and not allow_disjunction:
                raise AnalysisError(
                    "disjunctive heads are not allowed in a database program",
                    statement.loc,
                    "write one rule per alternative; view updates compute disjunctions for you",
                )
            check_rule_safety(statement)
        elif isinstance(statement, Denial):
            check_body_safety(statement.body, set(), statement.loc, "constraint")
    return stratify(program)


def check_arities(program: Program) -> None:
    """Every predicate is used with one arity throughout (``#base`` declarations included)."""
    seen: dict[str, tuple[int, Loc | None]] = {}
    for statement in program.statements:
        sigs: Iterable[tuple[str, int, Loc | None]]
        if hasattr(statement, "signatures"):
            sigs = [(p, n, statement.loc) for p, n in statement.signatures]  # type: ignore[union-attr]
        elif hasattr(statement, "items"):
            sigs = [(i.pred, i.arity, i.loc) if isinstance(i, Atom) else (i[0], i[1], statement.loc) for i in statement.items]  # type: ignore[union-attr]
        else:
            sigs = [(a.pred, a.arity, a.loc or statement.loc) for a in _statement_atoms(statement)]
        for pred, arity, loc in sigs:
            if pred not in seen:
                seen[pred] = (arity, loc)
                continue
            first, first_loc = seen[pred]
            if first != arity:
                where = f" at {first_loc}" if first_loc else ""
                raise AnalysisError(
                    f"predicate {pred} is used with {_args(arity)} here but with {_args(first)}{where}",
                    loc,
                    "a predicate has one arity throughout the program; rename one of the two",
                )


def _args(n: int) -> str:
    return f"{n} argument" + ("" if n == 1 else "s")


def _statement_atoms(statement) -> list[Atom]:
    atoms: list[Atom] = []
    if isinstance(statement, Rule):
        atoms.extend(statement.head)
    if isinstance(statement, (Rule, Denial)):
        atoms.extend(atom for atom, _, _ in body_atoms(statement.body))
    if isinstance(statement, Requirement):
        atoms.append(statement.atom)
    return atoms


def check_rule_safety(rule: Rule) -> None:
    """Safety as clingo has it (seed 002 §2.1, extended): every variable of the head, of a
    comparison or of an aggregate's guard is bound — by a positive body literal, or through ``=``
    to a constant, a bound variable, arithmetic over bound variables, an interval or an
    aggregate. A variable that occurs in a negated literal and nowhere else in the rule is local
    to it: ``not s(X, P, P)`` reads "there is no P with s(X, P, P)" (``_`` is the unnamed case).

    >>> from nablog.lang import parse
    >>> check_rule_safety(parse("c(X) :- a(X), Y = X + 1, not s(X, P, P), Y > 2.").rules[0])
    >>> try:
    ...     check_rule_safety(parse("p(X) :- q(Y), X = Y + Z.").rules[0])
    ... except AnalysisError as e:
    ...     print(e.message)
    unsafe rule: variable Z in the comparison 'X = Y + Z' does not occur in a positive body literal
    """
    for atom in rule.head:
        for var in atom.variables():
            if var.name == "_":
                raise AnalysisError(
                    "anonymous variable _ in a rule head",
                    _var_loc(atom.loc or rule.loc, var),
                    "name the variable and bind it in the body",
                )
    head_vars = {v for atom in rule.head for v in atom.variables()}
    bound = check_body_safety(rule.body, set(), rule.loc, "rule", outside=head_vars, head=rule.head)
    for atom in rule.head:
        for var in atom.variables():
            if var not in bound:
                what = "fact" if not rule.body else "rule"
                raise AnalysisError(
                    f"unsafe {what}: variable {var} in the head does not occur in a positive body literal",
                    _var_loc(atom.loc or rule.loc, var),
                    f"bind {var} with a positive literal in the body, or write a constant instead",
                )


def binding_order(body, bound: set[Var]) -> set[Var]:
    """The variables a body binds, given ``bound``: those of positive literals (as plain
    arguments), then, to a fixpoint, ``V = term`` (either side) and ``V = #agg{...}`` whose other
    side is bound.

    >>> from nablog.lang import parse
    >>> sorted(v.name for v in binding_order(parse("a :- p(X), Y = X * 2, Z = Y..3, W = 1.").rules[0].body, set()))
    ['W', 'X', 'Y', 'Z']
    """
    bound = set(bound) | {t for b in body if isinstance(b, Literal) and b.positive for t in b.atom.args if isinstance(t, Var)}
    bound.discard(Var("_"))
    changed = True
    while changed:
        changed = False
        for element in body:
            target = _assigned(element, bound)
            if target is not None:
                bound.add(target)
                changed = True
    return bound


def _assigned(element, bound: set[Var]) -> Var | None:
    """The variable an unbound-side ``=`` binds once its other side is bound, else None."""
    if isinstance(element, Comparison) and element.op == "=":
        for var_side, other in ((element.left, element.right), (element.right, element.left)):
            if isinstance(var_side, Var) and var_side.name != "_" and var_side not in bound:
                if all(v in bound for v in term_variables(other)) and Var("_") not in set(term_variables(other)):
                    return var_side
    if isinstance(element, Aggregate) and element.op == "=" and isinstance(element.bound, Var):
        if element.bound.name != "_" and element.bound not in bound and element.bound not in _element_vars(element):
            return element.bound
    return None


def check_body_safety(body, bound: set[Var], loc: Loc | None, what: str, outside: set[Var] = frozenset(), head=()) -> set[Var]:  # type: ignore[assignment]
    """Raise AnalysisError for the first unsafe variable of a body; return the bound variables.

    ``outside`` holds the variables used outside the body (the head's), which negated literals
    must not keep local.
    """
    bound = binding_order(body, bound)
    for element in body:
        elsewhere = set(outside) | {v for other in body if other is not element for v in other.variables()}
        if isinstance(element, Literal) and not element.positive:
            for var in element.variables():
                if var.name != "_" and var not in bound and var in elsewhere:
                    raise AnalysisError(
                        f"unsafe {what}: variable {var} in 'not {element.atom}' does not occur in a positive body literal",
                        _var_loc(element.loc or loc, var),
                        f"bind {var} with a positive literal, or write _ if any value will do",
                    )
        elif isinstance(element, Literal):
            for term in element.atom.args:
                if not isinstance(term, Var) and not is_constant(term):
                    _check_term_bound(term, bound, element, loc, what)
        elif isinstance(element, Comparison):
            sides = (element.left, element.right)
            # Name first a variable that no assignment could bind (the one missing on the other side).
            for var in sorted(element.variables(), key=lambda v: v in sides):
                if var.name == "_" or var not in bound:
                    raise AnalysisError(
                        f"unsafe {what}: variable {var} in the comparison '{element}' does not occur in a positive body literal",
                        _var_loc(element.loc or loc, var),
                        f"bind {var} with a positive literal before comparing it",
                    )
        elif isinstance(element, Aggregate):
            _check_aggregate_safety(element, bound, elsewhere, loc, what)
    return bound


def _check_term_bound(term, bound: set[Var], element, loc: Loc | None, what: str) -> None:
    if isinstance(term, Interval):
        raise AnalysisError(
            f"an interval {term} in the body literal {element}",
            element.loc or loc,
            f"bind a variable to it instead: V = {term}",
        )
    for var in term_variables(term):
        if var.name == "_" or var not in bound:
            raise AnalysisError(
                f"unsafe {what}: variable {var} in the term {term} of {element} is not bound elsewhere",
                _var_loc(element.loc or loc, var),
                f"bind {var} with a positive literal; a computed argument does not bind its variables",
            )


def _check_aggregate_safety(element: Aggregate, bound: set[Var], elsewhere: set[Var], loc: Loc | None, what: str) -> None:
    """Global variables (used outside the aggregate) bound outside it; each element's local
    variables bound by its condition; the guard bound unless the aggregate assigns it."""
    at = element.loc or loc
    assigns = element.op == "=" and isinstance(element.bound, Var) and element.bound not in _element_vars(element)
    outer = {v for v in bound if v != element.bound or not assigns}
    for var in term_variables(element.bound):
        if not assigns and (var.name == "_" or var not in bound):
            raise AnalysisError(
                f"unsafe {what}: variable {var} in the guard of '{element}' is not bound",
                _var_loc(at, var),
                f"bind {var} with a positive literal, or assign the aggregate: {var} = #{element.function}{{...}}",
            )
    for e in element.elements:
        local_bound = check_body_safety(e.condition, {v for v in outer if v in elsewhere}, at, "aggregate", outside=set(elsewhere) | {v for t in e.terms for v in term_variables(t)})
        for term in e.terms:
            for var in term_variables(term):
                if var.name == "_" or var not in local_bound:
                    raise AnalysisError(
                        f"unsafe {what}: variable {var} in the aggregate element '{e}' is not bound by its condition",
                        _var_loc(at, var),
                        f"bind {var} with a positive literal after ':' in the element",
                    )
        for var in e.variables():
            if var in elsewhere and var not in outer and var.name != "_":
                raise AnalysisError(
                    f"unsafe {what}: variable {var} of '{element}' is used outside the aggregate but not bound there",
                    _var_loc(at, var),
                    f"bind {var} with a positive literal outside the aggregate (it groups the aggregate)",
                )


def _element_vars(element: Aggregate) -> set[Var]:
    return {v for e in element.elements for v in e.variables()}


def _var_loc(loc: Loc | None, var: Var) -> Loc | None:
    """Point at the variable itself on the line of ``loc`` when it can be found there."""
    if loc is None:
        return None
    line = loc.source.line(loc.line)
    m = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(var.name)}(?![A-Za-z0-9_])").search(line, loc.column - 1)
    return Loc(loc.source, loc.line, m.start() + 1) if m else loc


def dependency_graph(program: Program) -> nx.DiGraph:
    """Predicates as nodes; an edge from each body predicate to the head predicate of its rule.

    Edge attribute ``negative`` is True when the body uses the predicate under ``not``, and
    ``aggregate`` when it uses it inside an aggregate (both need it in a lower stratum);
    ``rule`` is the first rule that made the edge (for error messages).
    """
    graph = nx.DiGraph()
    for pred in program.signatures:
        graph.add_node(pred)
    for rule in program.rules:
        for head in rule.head:
            for element in rule.body:
                if isinstance(element, Literal):
                    uses = [(element.atom.pred, not element.positive, False)]
                elif isinstance(element, Aggregate):
                    uses = [(atom.pred, not positive, True) for atom, positive, _ in body_atoms((element,))]
                else:
                    continue
                for body_pred, negative, aggregate in uses:
                    if graph.has_edge(body_pred, head.pred):
                        data = graph.edges[body_pred, head.pred]
                        if (negative and not data["negative"]) or (aggregate and not data["aggregate"]):
                            data.update(negative=data["negative"] or negative, aggregate=data["aggregate"] or aggregate, rule=rule, literal=element)
                    else:
                        graph.add_edge(body_pred, head.pred, negative=negative, aggregate=aggregate, rule=rule, literal=element)
    return graph


def stratify(program: Program) -> Analysis:
    """Order the strongly connected components and assign strata; reject recursion through negation."""
    graph = dependency_graph(program)
    condensation = nx.condensation(graph)
    members = condensation.graph["mapping"]
    recursive: set[str] = set()
    for component in condensation.nodes:
        preds = condensation.nodes[component]["members"]
        sub = graph.subgraph(preds)
        if len(preds) > 1 or sub.has_edge(next(iter(preds)), next(iter(preds))):
            recursive.update(preds)
        for u, v, data in sub.edges(data=True):
            if data["negative"] or data["aggregate"]:
                _raise_negative_cycle(graph, sub, u, v, data)
    stratum: dict[str, int] = {}
    order: list[tuple[str, ...]] = []
    # Lexicographic topological order keeps component order deterministic.
    key = {c: min(condensation.nodes[c]["members"]) for c in condensation.nodes}
    for component in nx.lexicographical_topological_sort(condensation, key=lambda c: key[c]):
        preds = tuple(sorted(condensation.nodes[component]["members"]))
        level = 0
        for pred in preds:
            for source, _, data in graph.in_edges(pred, data=True):
                if members[source] != component:
                    level = max(level, stratum[source] + (1 if data["negative"] or data["aggregate"] else 0))
        for pred in preds:
            stratum[pred] = level
        order.append(preds)
    return Analysis(graph, order, stratum, frozenset(recursive))


def _raise_negative_cycle(graph: nx.DiGraph, sub: nx.DiGraph, u: str, v: str, data: dict) -> None:
    # The negative edge u -> v (a rule of v uses not u) closes a cycle with a path v -> ... -> u.
    # Shown from v, reading "depends on": v -> not u -> ... -> v.
    display, prev = [v], v
    for nxt in reversed(nx.shortest_path(sub, v, u)):
        edge = graph.edges[nxt, prev]
        display.append(("#aggregate " if edge["aggregate"] else "not " if edge["negative"] else "") + nxt)
        prev = nxt
    literal = data["literal"]
    through = "an aggregate" if data["aggregate"] and not data["negative"] else "negation"
    raise AnalysisError(
        f"recursion through {through}: " + " -> ".join(display) + "  (-> reads 'depends on')",
        literal.loc or data["rule"].loc,
        f"the program is not stratifiable; break the cycle so that no predicate depends {'through an aggregate' if through != 'negation' else 'negatively'} on itself",
    )


@dataclass(frozen=True)
class FdShape:
    """A denial ``:- r(..), r(..), V1 op V2.`` whose two atoms agree on the ``lhs`` positions (shared
    variables) and compare position ``rhs`` (``op`` is ``<``, ``>`` or ``!=``); every other argument
    is a variable that occurs once. ``strict`` is False for ``!=`` (each violating pair of tuples is
    then two ground instances, one per order)."""

    pred: str
    arity: int
    lhs: tuple[int, ...]
    rhs: int
    strict: bool
    swapped: bool  # the first atom carries the larger value (op is >)


def fd_shape(denial: Denial) -> FdShape | None:
    """The functional-dependency shape of a denial, or None.

    >>> from nablog.lang import parse
    >>> fd_shape(parse(":- m(X, Y), m(X, Z), Y != Z.").denials[0])
    FdShape(pred='m', arity=2, lhs=(0,), rhs=1, strict=False, swapped=False)
    >>> fd_shape(parse(":- m(X, Y), n(X, Z), Y != Z.").denials[0]) is None
    True
    """
    literals = [b for b in denial.body if isinstance(b, Literal)]
    comparisons = [b for b in denial.body if isinstance(b, Comparison)]
    if len(literals) != 2 or len(comparisons) != 1 or not all(b.positive for b in literals):
        return None
    a, b = literals[0].atom, literals[1].atom
    cmp = comparisons[0]
    if a.pred != b.pred or a.arity != b.arity or cmp.op not in ("<", ">", "!="):
        return None
    if not all(isinstance(t, Var) for t in a.args + b.args):
        return None
    counts: dict[Var, int] = {}
    for t in a.args + b.args:
        if t.name != "_":
            counts[t] = counts.get(t, 0) + 1
    lhs, rhs = [], None
    for i, (s, t) in enumerate(zip(a.args, b.args)):
        if s == t and s.name != "_":
            if counts[s] != 2:
                return None
            lhs.append(i)
        elif s.name != "_" and t.name != "_" and {s, t} == {cmp.left, cmp.right}:
            if rhs is not None or counts[s] != 1 or counts[t] != 1:
                return None
            rhs = i
        elif (s.name != "_" and counts[s] != 1) or (t.name != "_" and counts[t] != 1) or s in (cmp.left, cmp.right) or t in (cmp.left, cmp.right):
            return None
    if rhs is None:
        return None
    first_is_left = a.args[rhs] == cmp.left
    op = cmp.op
    swapped = (op == "<" and not first_is_left) or (op == ">" and first_is_left)
    return FdShape(a.pred, a.arity, tuple(lhs), rhs, op != "!=", swapped if op != "!=" else False)


def empty_base_relations(program: Program, defined: Iterable[str], strict: bool = False, hidden: tuple[str, ...] = ("base__",)) -> list[NablogWarning]:
    """One warning per predicate used in a body, constraint or requirement that has no rules and
    is not in ``defined`` (facts, data, ``#base`` lines): clingo reads it as an empty relation and
    informs, and so does nablog. One whose name is close to a defined one (but not to those
    starting with ``hidden``) is an error naming that one, as is the first of any with ``strict``.

    >>> from nablog.lang import parse
    >>> [w.message for w in empty_base_relations(parse("p(X) :- edge(X, Y), not q(Y). #base q/1."), {"vertex"})]
    ['predicate edge/2 has no rules, no facts and no #base declaration: it is read as an empty relation']
    >>> empty_base_relations(parse("p(X) :- edge(X, Y)."), {"egde"})
    Traceback (most recent call last):
    nablog.lang.errors.AnalysisError: error: predicate edge/2 has no rules, no facts and no #base declaration
      --> <string>:1:9
       |
     1 | p(X) :- edge(X, Y).
       |         ^
    hint: did you mean egde? (or declare it with '#base edge/2.' if it is a base relation without facts yet)
    """
    known = set(program.derived) | set(defined) | {p for p, _ in program.declared_base}
    warnings: dict[str, NablogWarning] = {}
    for statement in program.statements:
        atoms: list[Atom] = []
        if isinstance(statement, (Rule, Denial)):
            atoms = [atom for atom, _, _ in body_atoms(statement.body)]
        elif isinstance(statement, Requirement):
            atoms = [statement.atom]
        for atom in atoms:
            if atom.pred in known or atom.pred in warnings:
                continue
            close = did_you_mean(atom.pred, known, hidden)
            declare = f"declare it with '#base {atom.pred}/{atom.arity}.' if it is a base relation without facts yet"
            hint = f"{close} (or {declare})" if close else declare
            what = f"predicate {atom.pred}/{atom.arity} has no rules, no facts and no #base declaration"
            # A near miss of a defined name is a misspelling, not an empty relation: read as empty,
            # the rules would answer nothing and the constraints hold vacuously (issue 32).
            if strict or close:
                raise AnalysisError(what, atom.loc or statement.loc, hint)
            warnings[atom.pred] = NablogWarning(f"{what}: it is read as an empty relation", atom.loc or statement.loc, hint)
    return list(warnings.values())


def check_signature(atom: Atom, arities: Mapping[str, int], where: str, otherwise: str, hidden: tuple[str, ...] = ()) -> None:
    """Refuse an atom of a query or request (``where``) whose predicate is unknown (with the
    closest known name, else the hint ``otherwise``) or whose arity is not the predicate's.

    >>> check_signature(Atom("edeg", (1, 2)), {"edge": 2}, "query", "query a predicate that has rules or facts")
    Traceback (most recent call last):
    ...
    nablog.lang.errors.QueryError: error: unknown predicate edeg/2 in the query
    hint: did you mean edge?
    """
    if atom.pred not in arities:
        raise QueryError(f"unknown predicate {atom.pred}/{atom.arity} in the {where}", atom.loc, did_you_mean(atom.pred, arities, hidden) or otherwise)
    if arities[atom.pred] != atom.arity:
        raise QueryError(
            f"predicate {atom.pred} has arity {arities[atom.pred]}, but the {where} gives {atom.arity} argument{'' if atom.arity == 1 else 's'}",
            atom.loc,
            f"write {atom.pred} with {arities[atom.pred]} arguments",
        )
