"""Constraints of mediated views (seed 000, §2.3): normal form, satisfiability, entailment, enumeration with z3.

A constraint is a conjunction (a tuple) of comparisons ``X <= 3``, domain calls
``in(X, geo:within(C, 300))`` and negated conjunctions :class:`Not` (what deletions add, seed 000
eq. (4) and Algorithm 2). Variables that appear only inside a :class:`Not` are local to it
(existential under the negation). Constants are nablog constants (``int`` or ``str``) in the order
of :func:`nablog.lang.ast.constant_sort_key`.

>>> from nablog.lang import Comparison as C, Var
>>> X = Var("X")
>>> conj = (C(">=", X, 5), Not((C(">=", X, 5), C("=", X, 6))))
>>> print(format_constraint(normalize(conj, (X,))))
X >= 5, X != 6
>>> solver = Solver()
>>> solver.satisfiable(conj), solver.entails(conj, (C(">", X, 4),), (X,))
(True, True)
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Mapping, Union

import z3

from ..lang.ast import COMPARE, Comparison, Constant, DomainCall, Term, Var, constant_sort_key, format_term
from ..lang.errors import NablogError


@dataclass(frozen=True)
class Not:
    """``not(D1 ∧ ... ∧ Dk)``; variables met only inside are existential under the negation."""

    body: tuple

    def __str__(self) -> str:
        if len(self.body) == 1 and isinstance(self.body[0], Comparison):
            c = self.body[0]
            return str(Comparison(NEGATED[c.op], c.left, c.right))
        return f"not({', '.join(str(e) for e in self.body)})"


Element = Union[Comparison, DomainCall, Not]
Constraint = tuple  # of Element
FALSE: Constraint = (Comparison("!=", 0, 0),)
"""The unsatisfiable constraint, in normal form."""

NEGATED = {"=": "!=", "!=": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
FLIPPED = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


def format_constraint(conj: Constraint) -> str:
    """Print a conjunction as a rule body: ``X >= 5, X != 6``; the empty conjunction is ``true``."""
    return ", ".join(str(e) for e in conj) if conj else "true"


def variables(conj: Iterable[Element]) -> set[Var]:
    """Every variable of the conjunction, those inside negations included."""
    out: set[Var] = set()
    for e in conj:
        if isinstance(e, Not):
            out |= variables(e.body)
        else:
            out.update(e.variables())
    return out


def scoped(body: Iterable[Element]) -> set[Var]:
    """The variables a negation with this body quantifies itself: those met outside its nested
    negations or in two of its elements. A variable confined to one nested negation belongs to
    that one (a constraint wrapped in ``not(...)`` keeps its inner scopes).

    >>> from nablog.lang import Comparison as C, Var
    >>> X, A = Var("X"), Var("A")
    >>> sorted(v.name for v in scoped((C(">=", X, 0), Not((C("=", A, X),)))))
    ['X']
    """
    seen: set[Var] = set()
    out: set[Var] = set()
    for e in body:
        mine = variables(e.body) if isinstance(e, Not) else set(e.variables())
        out |= mine & seen
        if not isinstance(e, Not):
            out |= mine
        seen |= mine
    return out


def top_variables(conj: Iterable[Element]) -> set[Var]:
    """The variables met outside every negation: existential over the whole conjunction, and so
    still after :func:`expand_calls` moves a domain call into a disjunction or relaxes it away."""
    out: set[Var] = set()
    for e in conj:
        if not isinstance(e, Not):
            out.update(e.variables())
    return out


def substitute(conj: Iterable[Element], theta: Mapping[Var, Term]) -> Constraint:
    """The conjunction with each variable replaced by its image under ``theta``."""

    def term(t: Term) -> Term:
        return theta.get(t, t) if isinstance(t, Var) else t

    out = []
    for e in conj:
        if isinstance(e, Comparison):
            out.append(Comparison(e.op, term(e.left), term(e.right)))
        elif isinstance(e, DomainCall):
            out.append(DomainCall(term(e.term), e.domain, e.function, tuple(term(a) for a in e.args)))
        elif isinstance(e, Member):
            out.append(Member(term(e.term), e.values))
        else:
            out.append(Not(substitute(e.body, theta)))
    return tuple(out)


def _element_key(e: Element) -> tuple:
    if isinstance(e, Member):
        return (3, _term_key(e.term), tuple(constant_sort_key(v) for v in e.values))
    if isinstance(e, Not):
        return (2, tuple(_element_key(x) for x in e.body))
    if isinstance(e, DomainCall):
        return (1, e.domain, e.function, _term_key(e.term), tuple(_term_key(a) for a in e.args))
    return (0, _term_key(e.left), e.op, _term_key(e.right))


def _term_key(t: Term) -> tuple:
    return (0, t.name) if isinstance(t, Var) else (1, *constant_sort_key(t))


def normalize(conj: Iterable[Element], keep: Iterable[Var]) -> Constraint:
    """A syntactic normal form with the same solutions on the variables ``keep``.

    Equalities are solved by substitution (a constant, else a kept variable, represents each class
    of equal terms); ground comparisons are evaluated; a negation whose body is false is dropped;
    a negation whose body is true makes the whole conjunction :data:`FALSE`. Kept variables equal to
    a constant or to another kept variable keep that equality, so the constrained atom still says so.
    Elements come out sorted and without repeats, so equal normal forms mean equal constraints.

    >>> from nablog.lang import Comparison as C, Var
    >>> X, Y, Z = Var("X"), Var("Y"), Var("Z")
    >>> print(format_constraint(normalize((C("=", X, Z), C("=", Z, "a"), C("=", Y, "b")), (X, Y))))
    X = a, Y = b
    >>> normalize((C("=", X, 1), C("=", X, 2)), (X,)) == FALSE
    True
    """
    keep = tuple(keep)
    conj = _flatten(conj)
    parent: dict[Term, Term] = {}

    def find(t: Term) -> Term:
        while parent.get(t, t) != t:
            t = parent[t]
        return t

    def rank(t: Term) -> tuple:
        if not isinstance(t, Var):
            return (0,)
        return (1, keep.index(t)) if t in keep else (2, t.name)

    rest = []
    for e in conj:
        if isinstance(e, Comparison) and e.op == "=" and (isinstance(e.left, Var) or isinstance(e.right, Var)):
            a, b = find(e.left), find(e.right)
            if a == b:
                continue
            if not isinstance(a, Var) and not isinstance(b, Var):
                return FALSE
            if rank(b) < rank(a):
                a, b = b, a
            parent[b] = a
        else:
            rest.append(e)
    theta = {v: find(v) for v in list(parent) if isinstance(v, Var)}
    out: set = set()
    for v in keep:
        r = theta.get(v, v)
        if r != v:
            out.add(Comparison("=", v, r))
    rest = list(substitute(rest, theta))
    for k, e in enumerate(rest):
        if isinstance(e, Member):
            if isinstance(e.term, Var):
                out.add(e)
            elif e.term not in e.values:
                return FALSE
        elif isinstance(e, Comparison):
            if not isinstance(e.left, Var) and not isinstance(e.right, Var):
                if not e.holds(e.left, e.right):
                    return FALSE
                continue
            if e.left == e.right:
                if e.op in ("=", "<=", ">="):
                    continue
                return FALSE
            if not isinstance(e.left, Var):  # variables on the left, for a stable form
                e = Comparison(FLIPPED[e.op], e.right, e.left)
            out.add(e)
        elif isinstance(e, DomainCall):
            out.add(e)
        else:
            outer = set(keep) | variables(rest[:k] + rest[k + 1 :])
            inner = normalize(e.body, sorted(outer & variables(e.body), key=lambda v: v.name))
            if inner == FALSE:
                continue
            if not inner:
                return FALSE
            out.add(Not(inner))
    return tuple(sorted(out, key=_element_key))


def _flatten(conj: Iterable[Element]) -> list[Element]:
    """Conjunctions nested as a negation of a negation of one conjunction become flat."""
    out: list[Element] = []
    for e in conj:
        if isinstance(e, Not) and len(e.body) == 1 and isinstance(e.body[0], Not):
            out.extend(_flatten(e.body[0].body))
        else:
            out.append(e)
    return out


# -- domains --------------------------------------------------------------------------------------

DomainFunction = Callable[..., Iterable[Constant]]


class Domains:
    """Registered domains: ``name -> {function: callable}``; a call returns a set of constants.

    Functions may answer differently over time (seed 000, §4): nothing here caches their answers.

    >>> domains = Domains()
    >>> domains.register("arith", greater_than_10=lambda: range(11, 14))
    >>> sorted(domains.call("arith", "greater_than_10", ()))
    [11, 12, 13]
    """

    def __init__(self) -> None:
        self._functions: dict[str, dict[str, DomainFunction]] = {}
        self.calls = 0

    def register(self, name: str, **functions: DomainFunction) -> None:
        self._functions.setdefault(name, {}).update(functions)

    def __contains__(self, name: str) -> bool:
        return name in self._functions

    def call(self, domain: str, function: str, args: tuple[Constant, ...]) -> frozenset[Constant]:
        funcs = self._functions.get(domain)
        if funcs is None:
            raise NablogError(f"unknown domain {domain}", hint=f"register it with db.register_domain({domain!r}, {function}=...)")
        if function not in funcs:
            raise NablogError(f"domain {domain} has no function {function}", hint="known: " + ", ".join(sorted(funcs)))
        self.calls += 1
        values = frozenset(_constant(v, domain, function) for v in funcs[function](*args))
        return values


def _constant(value, domain: str, function: str) -> Constant:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise NablogError(
            f"{domain}:{function} returned {value!r}, which is not a nablog constant",
            hint="domain functions return integers or strings",
        )
    return value


def expand_calls(conj: Constraint, domains: Domains | None, relax: bool = False, positive: bool = True, limit: int = 10_000) -> Constraint:
    """Replace each domain call by the values its current answer allows (seed 000, §2.1).

    A call's arguments must be ground once the constraint is normalized (joins with base facts
    bind them) or be the member of another call of the same conjunction, as in seed 000's
    ``in(P3, facedb:findface(X)) ∧ in(Y, facedb:findname(P3))``: such a call is evaluated once
    per value of its arguments (at most ``limit`` combinations). With ``relax=True`` no function
    is called: a call counts as true where it occurs positively and as false under a negation, so
    the result has at least the solutions of the constraint under *any* answer of the functions
    (W_P's test, seed 000 §4).
    """
    out: list[Element] = []
    calls: list[DomainCall] = []
    for e in conj:
        if isinstance(e, DomainCall):
            if relax:
                if not positive:
                    return FALSE
                continue
            calls.append(e)
        elif isinstance(e, Not):
            inner = expand_calls(e.body, domains, relax, not positive, limit)
            if inner == FALSE:
                continue
            out.append(Not(inner))
        else:
            out.append(e)
    known: dict[Var, list[Constant]] = {}
    while calls:
        ready = [c for c in calls if all(not isinstance(a, Var) or a in known for a in c.args)]
        if not ready:
            c = calls[0]
            raise NablogError(
                f"the domain call {c} has an unbound argument",
                hint="bind the arguments of a domain call by atoms after '||', by equalities, or by another domain call",
            )
        for c in ready:
            calls.remove(c)
            if domains is None:
                raise NablogError(f"the domain call {c} needs domain {c.domain}", hint="register it with db.register_domain")
            free = [a for a in dict.fromkeys(c.args) if isinstance(a, Var)]
            combos = list(itertools.product(*(known[v] for v in free)))
            if len(combos) > limit:
                raise NablogError(f"the domain call {c} would be made {len(combos)} times", hint=f"at most {limit}: bind its arguments more tightly")
            cases = []
            produced: set[Constant] = set()
            for combo in combos:
                theta = dict(zip(free, combo))
                args = tuple(theta.get(a, a) if isinstance(a, Var) else a for a in c.args)
                values = sorted(domains.call(c.domain, c.function, args), key=constant_sort_key)  # type: ignore[arg-type]
                produced.update(values)
                cases.append(tuple(Comparison("=", v, k) for v, k in theta.items()) + (_member(c.term, values),))
            if len(cases) == 1:
                out.extend(cases[0])
            else:  # a disjunction over the argument values: not(not(case1), ..., not(casen))
                out.append(Not(tuple(Not(case) for case in cases)))
            if isinstance(c.term, Var):
                values = sorted(produced, key=constant_sort_key)
                known[c.term] = sorted(set(known[c.term]) & produced, key=constant_sort_key) if c.term in known else values
    return tuple(out)


@dataclass(frozen=True)
class Member:
    """``term ∈ values``: a domain call after its function answered."""

    term: Term
    values: tuple[Constant, ...]

    def variables(self) -> Iterator[Var]:
        return iter([self.term] if isinstance(self.term, Var) else [])

    def __str__(self) -> str:
        return f"{format_term(self.term)} in {{{', '.join(format_term(v) for v in self.values)}}}"


def _member(term: Term, values: list[Constant]) -> Element:
    if not values:
        return FALSE[0]
    if len(values) == 1:
        return Comparison("=", term, values[0])
    if not isinstance(term, Var):
        return Comparison("=", 0, 0) if term in values else FALSE[0]
    return Member(term, tuple(values))  # type: ignore[return-value]


# -- z3 ---------------------------------------------------------------------------------------------


class Solver:
    """One z3 solver reused with push/pop for every check (a fresh ``z3.Solver()`` costs ~1.3 ms).

    ``checks`` counts the questions put to z3; constraints that normalize to ground truth
    values are answered without it.

    >>> from nablog.lang import Comparison as C, Var
    >>> X = Var("X")
    >>> s = Solver()
    >>> s.satisfiable((C(">=", X, 5), C("<=", X, 3)))
    False
    >>> s.solutions((C(">=", X, 1), C("<", X, 4)), (X,))
    ([(1,), (2,), (3,)], True)
    """

    def __init__(self, domains: Domains | None = None) -> None:
        self._z3 = z3.Solver()
        self.domains = domains
        self.checks = 0
        self._strings: dict[str, z3.ExprRef] = {}

    # -- translation ----------------------------------------------------------------------------

    def _sorts(self, conj: Iterable) -> dict[Var, str]:
        """Each variable's sort, ``int`` or ``str``, from the constants it meets (ints by default)."""
        parent: dict[Var, Var] = {}

        def find(v: Var) -> Var:
            while parent.get(v, v) != v:
                v = parent[v]
            return v

        kinds: dict[Var, set[str]] = {}

        def walk(es):
            for e in es:
                if isinstance(e, Not):
                    walk(e.body)
                elif isinstance(e, Comparison):
                    l, r = e.left, e.right
                    if isinstance(l, Var) and isinstance(r, Var):
                        a, b = find(l), find(r)
                        if a != b:
                            parent[a] = b
                    for v, c in ((l, r), (r, l)):
                        if isinstance(v, Var) and not isinstance(c, Var):
                            kinds.setdefault(v, set()).add("int" if isinstance(c, int) else "str")
                elif isinstance(e, Member):
                    if isinstance(e.term, Var):
                        kinds.setdefault(e.term, set()).update("int" if isinstance(c, int) else "str" for c in e.values)

        walk(conj)
        merged: dict[Var, set[str]] = {}
        for v in variables(conj):
            merged.setdefault(find(v), set()).update(kinds.get(v, ()))
        out = {}
        for v in variables(conj):
            ks = merged[find(v)]
            if len(ks) > 1:
                raise NablogError(
                    f"variable {v} is compared with integers and with strings in one constraint",
                    hint="keep each argument position of a mediated predicate to one kind of constant",
                )
            out[v] = next(iter(ks)) if ks else "int"
        return out

    def _expr(self, conj: Iterable, sorts: dict[Var, str], bound: set[Var], uninterpreted: bool = False) -> z3.BoolRef:
        parts = []
        conj = list(conj)
        for k, e in enumerate(conj):
            if isinstance(e, Not):
                outside = bound | variables(conj[:k] + conj[k + 1 :])
                local = sorted((v for v in scoped(e.body) if v not in outside), key=lambda v: v.name)
                body = self._expr(e.body, sorts, outside | set(local), uninterpreted)
                if local:
                    body = z3.Exists([self._var(v, sorts) for v in local], body)
                parts.append(z3.Not(body))
            elif isinstance(e, Member):
                t = self._term(e.term, sorts)
                parts.append(z3.Or([t == self._const(c) for c in e.values if _kind(c) == sorts.get(e.term, _kind(c))] or [z3.BoolVal(False)]))
            elif isinstance(e, DomainCall):
                if not uninterpreted:
                    raise NablogError(f"the domain call {e} was not evaluated", hint="expand domain calls before solving")
                parts.append(self._call(e, sorts))
            else:
                parts.append(self._comparison(e, sorts))
        return z3.And(parts) if parts else z3.BoolVal(True)

    def _comparison(self, c: Comparison, sorts: dict[Var, str]) -> z3.BoolRef:
        lk = sorts[c.left] if isinstance(c.left, Var) else _kind(c.left)
        rk = sorts[c.right] if isinstance(c.right, Var) else _kind(c.right)
        if lk != rk:  # integers before strings (constant_sort_key)
            return z3.BoolVal(COMPARE[c.op]((lk == "str",), (rk == "str",)))
        a, b = self._term(c.left, sorts), self._term(c.right, sorts)
        if lk == "str" and c.op in ("<", "<=", ">", ">="):
            if c.op == "<":
                return z3.StrLT(a, b)
            if c.op == "<=":
                return z3.StrLE(a, b)
            return z3.StrLT(b, a) if c.op == ">" else z3.StrLE(b, a)
        return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[c.op]

    def _call(self, call: DomainCall, sorts: dict[Var, str]) -> z3.BoolRef:
        """``in(t, d:f(args))`` as an uninterpreted relation ``in_d_f(args, t)``: true of whatever
        the function may answer."""
        terms = [*call.args, call.term]
        kinds = [sorts[t] if isinstance(t, Var) else _kind(t) for t in terms]
        relation = z3.Function(
            f"in|{call.domain}:{call.function}|{','.join(kinds)}", *(z3.StringSort() if k == "str" else z3.IntSort() for k in kinds), z3.BoolSort()
        )
        return relation(*(self._term(t, sorts) for t in terms))

    def _var(self, v: Var, sorts: dict[Var, str]) -> z3.ExprRef:
        return z3.String(v.name) if sorts[v] == "str" else z3.Int(v.name)

    def _term(self, t: Term, sorts: dict[Var, str]) -> z3.ExprRef:
        return self._var(t, sorts) if isinstance(t, Var) else self._const(t)

    def _const(self, c: Constant) -> z3.ExprRef:
        return z3.IntVal(c) if isinstance(c, int) else z3.StringVal(c)

    # -- questions ------------------------------------------------------------------------------

    def _check(self, formula: z3.BoolRef) -> bool:
        self.checks += 1
        self._z3.push()
        try:
            self._z3.add(formula)
            result = self._z3.check()
        finally:
            self._z3.pop()
        if result == z3.unknown:
            raise NablogError(f"z3 could not decide a constraint ({self._z3.reason_unknown()})", hint="simplify the constraint")
        return result == z3.sat

    def prepare(self, conj: Constraint, relax: bool = False, keep: tuple[Var, ...] = ()) -> Constraint:
        """Evaluate domain calls (or relax them, see :func:`expand_calls`) and normalize."""
        if any(isinstance(e, (DomainCall, Not)) for e in conj):
            conj = expand_calls(conj, self.domains, relax)
        return normalize(conj, keep)

    def satisfiable(self, conj: Constraint, relax: bool = False, free: Iterable[Var] = (), uninterpreted: bool = False) -> bool:
        """Has the conjunction a solution (with the domains' current answers, or any, with ``relax``)?

        ``free`` names the variables that are the conjunction's own even where they occur only
        under a negation (a constrained atom's head variables); other variables met only inside a
        negation are local to it. With ``uninterpreted`` no function is called: a domain call is a
        relation z3 may choose, so "unsatisfiable" means unsatisfiable whatever the domains answer
        (what entailment under W_P needs; ``relax`` only over-approximates satisfiability).
        """
        free = _with_top(free, conj)
        conj = normalize(conj, free) if uninterpreted else self.prepare(conj, relax, free)
        theta = {e.left: e.right for e in conj if isinstance(e, Comparison) and e.op == "=" and e.left in free and not isinstance(e.right, Var)}
        if theta:  # a kept variable equal to a constant is the constant (what ground atoms are)
            free = tuple(v for v in free if v not in theta)
            conj = normalize(substitute(conj, theta), free)
        if conj == FALSE:
            return False
        if not conj:
            return True
        return self._check(self._expr(conj, self._sorts(conj), set(free), uninterpreted))

    def entails(self, premise: Constraint, conclusion: Constraint, over: tuple[Var, ...]) -> bool:
        """Is every solution of ``premise`` on the variables ``over`` one of ``conclusion``?

        The conclusion's other variables are existential: ``[A ← premise] ⊆ [A ← conclusion]``.
        """
        rename = {v: Var(f"{v.name}__c") for v in variables(conclusion) if v not in over}
        return not self.satisfiable(premise + (Not(substitute(conclusion, rename)),), free=over)

    def equivalent(self, left: list[Constraint], right: list[Constraint], over: tuple[Var, ...]) -> bool:
        """Do two disjunctions of constraints have the same solutions on ``over`` (seed 000, Theorem 1)?"""
        lset, rset = set(left), set(right)
        return all(c in rset or self.covered(c, right, over) for c in left) and all(c in lset or self.covered(c, left, over) for c in right)

    def covered(self, conj: Constraint, union: list[Constraint], over: tuple[Var, ...], uninterpreted: bool = False) -> bool:
        """Is every solution of ``conj`` a solution of some member of ``union`` (whatever the
        domains answer, with ``uninterpreted``)?"""
        if conj in union:
            return True
        union = [other for other in union if not disjoint(conj, other, over)]
        if not union:
            return not self.satisfiable(conj, free=over, uninterpreted=uninterpreted)
        nots = []
        for k, other in enumerate(union):
            rename = {v: Var(f"{v.name}__u{k}") for v in variables(other) if v not in over}
            nots.append(Not(substitute(other, rename)))
        return not self.satisfiable(tuple(conj) + tuple(nots), free=over, uninterpreted=uninterpreted)

    def solutions(self, conj: Constraint, over: tuple[Var, ...], limit: int = 1000) -> tuple[list[tuple], bool]:
        """The solutions on ``over``, sorted, and whether they are all (``False`` when past ``limit``)."""
        bound = _with_top(over, conj)
        conj = self.prepare(conj, keep=bound)
        if conj == FALSE:
            return [], True
        theta = {c.left: c.right for c in conj if isinstance(c, Comparison) and c.op == "=" and c.left in over and not isinstance(c.right, Var)}
        free = [v for v in over if v not in theta]
        if not free:  # one candidate row: the rest of the constraint decides it
            return ([tuple(theta[v] for v in over)] if self.satisfiable(conj, free=bound) else []), True
        sorts = self._sorts(conj + tuple(Comparison("=", v, v) for v in over))
        formula = self._expr(conj, sorts, set(bound))
        terms = [self._var(v, sorts) for v in free]
        found: list[tuple] = []
        self._z3.push()
        try:
            self._z3.add(formula)
            while len(found) <= limit:
                self.checks += 1
                if self._z3.check() != z3.sat:
                    break
                model = self._z3.model()
                values = [model.eval(t, model_completion=True) for t in terms]
                found.append(tuple(_python(v) for v in values))
                self._z3.add(z3.Or([t != v for t, v in zip(terms, values)]))
        finally:
            self._z3.pop()
        complete = len(found) <= limit
        rows = []
        for row in found[:limit]:
            values = dict(zip(free, row))
            rows.append(tuple(theta[v] if v in theta else values[v] for v in over))
        return sorted(rows, key=lambda r: tuple(constant_sort_key(x) for x in r)), complete

    def simplify(self, conj: Constraint, keep: tuple[Var, ...]) -> Constraint:
        """A shorter equivalent for display: normal form without negations the rest implies, its
        other variables renamed ``V1``, ``V2``, ... in order of appearance."""
        return _renamed(self._simplify(conj, keep), keep)

    def _simplify(self, conj: Constraint, keep: tuple[Var, ...]) -> Constraint:
        conj = normalize(conj, keep)
        if conj == FALSE:
            return conj
        out = list(conj)
        for e in list(out):
            if isinstance(e, Not) and not any(isinstance(x, DomainCall) for x in _walk(e.body)):
                rest = tuple(x for x in out if x is not e)
                if not any(isinstance(x, DomainCall) for x in _walk(rest)) and not self.satisfiable(rest + e.body, free=keep):
                    out.remove(e)
        return tuple(out)


def _with_top(keep: Iterable[Var], conj: Constraint) -> tuple[Var, ...]:
    """``keep`` followed by the conjunction's other top-level variables (see :func:`top_variables`)."""
    keep = tuple(keep)
    return keep + tuple(sorted(top_variables(conj) - set(keep), key=lambda v: v.name))


def _renamed(conj: Constraint, keep: tuple[Var, ...]) -> Constraint:
    names = {v.name for v in keep}
    order: dict[Var, Var] = {}
    supply = (Var(f"V{k}") for k in itertools.count(1))
    for e in _walk(conj):
        if not isinstance(e, Not):
            for v in e.variables():
                if v not in keep and v not in order:
                    order[v] = next(n for n in supply if n.name not in names)
    return substitute(conj, order)


def interval(conj: Constraint, var: Var) -> tuple[float, float]:
    """Integer bounds the conjunction's top-level comparisons give ``var`` (a cheap filter before z3).

    >>> from nablog.lang import Comparison as C, Var
    >>> interval((C(">=", Var("X"), 5), C("<", Var("X"), 9)), Var("X"))
    (5, 8)
    """
    lo, hi = float("-inf"), float("inf")
    for e in conj:
        if isinstance(e, Comparison) and e.left == var and isinstance(e.right, int) and not isinstance(e.right, bool):
            c = e.right
            if e.op == "=":
                lo, hi = max(lo, c), min(hi, c)
            elif e.op in (">=", ">"):
                lo = max(lo, c + (e.op == ">"))
            elif e.op in ("<=", "<"):
                hi = min(hi, c - (e.op == "<"))
    return lo, hi


def disjoint(left: Constraint, right: Constraint, over: Iterable[Var]) -> bool:
    """Do the top-level integer bounds alone show the two conjunctions share no solution on ``over``?"""
    for v in over:
        (a, b), (c, d) = interval(left, v), interval(right, v)
        if max(a, c) > min(b, d):
            return True
    return False


def _walk(conj: Iterable) -> Iterator:
    for e in conj:
        yield e
        if isinstance(e, Not):
            yield from _walk(e.body)


def _kind(c: Constant) -> str:
    return "int" if isinstance(c, int) else "str"


def _python(value: z3.ExprRef) -> Constant:
    if z3.is_int_value(value):
        return value.as_long()
    return value.as_string()


def fresh_names(prefix: str = "_V") -> Iterator[Var]:
    """An endless supply of variables named apart from user variables."""
    return (Var(f"{prefix}{k}") for k in itertools.count(1))
