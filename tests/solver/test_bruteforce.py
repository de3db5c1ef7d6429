"""Realizations equal a brute-force enumeration over every change set, on generated small databases.

The oracle evaluates each candidate state with its own naive evaluator (nothing of nablog's
engines), tries every set of base-fact insertions and deletions over the constants plus one new
constant, and keeps the subset-minimal ones after which the request and every constraint hold.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import examples

from nablog import Database
from nablog.lang import Atom, BaseDeclaration, Comparison, Denial, Literal, Program, Rule, Var, stratify

FRESH = "new1"
CONSTANTS = [1, "a"]
BASE = {"b": 1, "c": 2}
DERIVED = [("p", 1), ("q", 1), ("r", 0)]
X, Y = Var("X"), Var("Y")


# -- an independent naive evaluator ----------------------------------------------------------------


def holds(element, binding, model) -> bool:
    if isinstance(element, Comparison):
        value = lambda t: binding[t] if isinstance(t, Var) else t  # noqa: E731
        return element.holds(value(element.left), value(element.right))
    args = [binding.get(t) if isinstance(t, Var) else t for t in element.atom.args]
    if None in args:  # `_` under not: does any tuple match?
        found = any(all(a is None or a == v for a, v in zip(args, row)) for row in model.get(element.atom.pred, ()))
    else:
        found = tuple(args) in model.get(element.atom.pred, ())
    return found == element.positive


def instances(body, model, binding=None):
    binding = binding or {}
    positives = [b for b in body if isinstance(b, Literal) and b.positive]
    if not positives:
        if all(holds(b, binding, model) for b in body):
            yield binding
        return
    first, rest = positives[0], [b for b in body if b is not positives[0]]
    for row in model.get(first.atom.pred, ()):
        extended = dict(binding)
        ok = True
        for term, value in zip(first.atom.args, row):
            if isinstance(term, Var) and term.name != "_":
                if extended.setdefault(term, value) != value:
                    ok = False
            elif not isinstance(term, Var) and term != value:
                ok = False
        if ok:
            yield from instances(rest, model, extended)


def strata(program: Program) -> list[list[Rule]]:
    """The program's rules by stratum, lowest first."""
    return [[r for r in program.rules if r.head[0].pred in level] for level in stratify(program).strata]


def naive_model(program: Program, facts: dict[str, set], levels: list[list[Rule]] | None = None) -> dict[str, set]:
    """The perfect model, stratum by stratum to a fixpoint (``levels``: the program's
    :func:`strata`, given when one program is evaluated over many databases)."""
    model = {p: set(rows) for p, rows in facts.items()}
    for rules in strata(program) if levels is None else levels:
        changed = True
        while changed:
            changed = False
            for rule in rules:
                for binding in list(instances(rule.body, model)):
                    head = rule.head[0]
                    row = tuple(binding[t] if isinstance(t, Var) else t for t in head.args)
                    if row not in model.setdefault(head.pred, set()):
                        model[head.pred].add(row)
                        changed = True
    return model


def free_positions(program: Program, requested: str, keys: tuple[Denial, ...] = ()) -> dict[str, set[int]]:
    """The positions of base relations nothing reads, written out from the definition (see
    nablog/solver/free.py): a position is read by a literal of a rule (of a view something reads,
    or the requested one) or of a denial that has a constant there or a variable occurring twice,
    unless the denial's only other use of it is ``V = constant`` (it forbids values, as NOT NULL
    does); a key denial in ``keys`` reads only its key. nablog inserts one new constant there,
    which stands for every value the denials allow: the oracle's realizations are compared with
    those values as "*"."""
    literals = [b for r in program.rules for b in r.body if isinstance(b, Literal)] + [b for d in program.denials for b in d.body if isinstance(b, Literal)]
    read_preds = {b.atom.pred for b in literals}
    read = {pred: set() for pred in BASE}
    statements = [(r.head, r.body) for r in program.rules if r.head[0].pred in read_preds or r.head[0].pred == requested]
    statements += [((), d.body) for d in program.denials if d not in keys]
    for heads, body in statements:
        count: dict = {}
        terms = [t for h in heads for t in h.args] + [t for b in body for t in (b.atom.args if isinstance(b, Literal) else (b.left, b.right))]
        for t in terms:
            count[t] = count.get(t, 0) + 1
        comparisons = [b for b in body if not isinstance(b, Literal)]
        in_literals = [t for b in body if isinstance(b, Literal) for t in b.atom.args]
        for b in body:
            if isinstance(b, Literal) and b.atom.pred in read:
                for i, t in enumerate(b.atom.args):
                    forbids = (not heads and isinstance(t, Var) and t.name != "_" and b.positive and in_literals.count(t) == 1
                               and all(c.op == "=" and isinstance(c.left if c.right == t else c.right, (int, str)) and c.left != c.right
                                       for c in comparisons if t in (c.left, c.right)))
                    if forbids:
                        continue
                    if not isinstance(t, Var) or (t.name != "_" and count[t] > 1):
                        read[b.atom.pred].add(i)
    for key in keys:
        read[key.body[0].atom.pred].add(0)
    return {pred: set(range(arity)) - read[pred] for pred, arity in BASE.items()}


def shown(insert, delete, free: dict[str, set[int]] | None = None) -> tuple[frozenset, frozenset]:
    """A change set as strings, the values of inserted atoms at ``free`` positions as "*"."""

    def text(a: Atom, inserted: bool) -> str:
        if not inserted or not free:
            return str(a)
        return str(Atom(a.pred, tuple("*" if i in free.get(a.pred, ()) else v for i, v in enumerate(a.args))))

    return frozenset(text(a, True) for a in insert), frozenset(text(a, False) for a in delete)


def brute_force(program: Program, facts: dict[str, set], request: tuple[str, Atom], free: dict[str, set[int]] | None = None) -> set[tuple[frozenset, frozenset]]:
    # The Herbrand universe: the constants of the database, program and request, plus one new one.
    used = program.constants() | set(request[1].args) | {v for rows in facts.values() for row in rows for v in row}
    universe = sorted(used, key=str) + [FRESH]
    possible = [(pred, row) for pred, arity in BASE.items() for row in itertools.product(universe, repeat=arity)]
    changes = [("-" if row in facts[pred] else "+", pred, row) for pred, row in possible]
    sign, atom = request
    levels = strata(program)  # (stratifying per change set was half the oracle's time)
    # By increasing size, skipping supersets of realizations found: what remains is minimal.
    minimal: list[int] = []
    for mask in sorted(range(1 << len(changes)), key=lambda m: (bin(m).count("1"), m)):
        if any(m & mask == m for m in minimal):
            continue
        chosen = [changes[i] for i in range(len(changes)) if mask >> i & 1]
        new = {p: set(rows) for p, rows in facts.items()}
        for s, pred, row in chosen:
            (new[pred].add if s == "+" else new[pred].discard)(row)
        model = naive_model(program, new, levels)
        present = tuple(atom.args) in model.get(atom.pred, ())
        if present != (sign == "+"):
            continue
        if any(True for d in program.denials for _ in instances(d.body, model)):
            continue
        minimal.append(mask)
    out = set()
    for m in minimal:
        chosen = [changes[i] for i in range(len(changes)) if m >> i & 1]
        out.add(shown([Atom(p, r) for s, p, r in chosen if s == "+"], [Atom(p, r) for s, p, r in chosen if s == "-"], free))
    return out


# -- generated databases -------------------------------------------------------------------------

terms = st.sampled_from([X, Y, *CONSTANTS])


@st.composite
def body(draw, level: int, recursive: bool = False):
    # Negated literals read lower levels only (stratified); with ``recursive``, positive ones
    # may read the rule's own level too.
    preds = list(BASE.items()) + DERIVED[:level]
    positive = list(BASE.items()) + DERIVED[: level + 1] if recursive else preds
    elements, bound = [], set()
    for _ in range(draw(st.integers(1, 2))):
        pred, arity = draw(st.sampled_from(positive))
        args = tuple(draw(terms) for _ in range(arity))
        elements.append(Literal(Atom(pred, args)))
        bound |= {a for a in args if isinstance(a, Var)}
    if bound and draw(st.booleans()):
        pred, arity = draw(st.sampled_from(preds))
        args = tuple(draw(st.sampled_from(sorted(bound, key=str) + CONSTANTS + [Var("_")])) for _ in range(arity))
        elements.append(Literal(Atom(pred, args), False))
    if bound and draw(st.integers(0, 3)) == 0:
        elements.append(Comparison(draw(st.sampled_from(["=", "!="])), draw(st.sampled_from(sorted(bound, key=str))), draw(terms.filter(lambda t: not isinstance(t, Var) or t in bound))))
    return tuple(elements), bound


@st.composite
def databases(draw, recursive: bool = False, max_rows: int = 2):
    """A program of 3-6 rules over ``b/1``, ``c/2`` (``recursive``: positive recursion too), at
    most one denial, at most ``max_rows`` rows per base relation, and a request."""
    rules = []
    for level, (pred, arity) in enumerate(DERIVED):
        for _ in range(draw(st.integers(1, 2))):
            elements, bound = draw(body(level, recursive))
            if arity and not bound:
                elements, bound = elements + (Literal(Atom("b", (X,))),), {X}
            head = Atom(pred, tuple(draw(st.sampled_from(sorted(bound, key=str))) for _ in range(arity)))
            rules.append(Rule((head,), elements))
    denials = [Denial(draw(body(len(DERIVED)))[0]) for _ in range(draw(st.integers(0, 1)))]
    facts = {pred: draw(st.sets(st.tuples(*[st.sampled_from(CONSTANTS)] * arity), max_size=max_rows)) for pred, arity in BASE.items()}
    pred, arity = draw(st.sampled_from(DERIVED))
    request = (draw(st.sampled_from("+-")), Atom(pred, tuple(draw(st.sampled_from(CONSTANTS)) for _ in range(arity))))
    return Program(tuple(rules) + tuple(denials)), facts, request


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(databases())
def test_realizations_equal_brute_force_over_every_change_set(case):
    program, facts, (sign, atom) = case
    db = Database(program.with_statements([BaseDeclaration(tuple(BASE.items()))]), facts)
    proposal = db.propose(f"{sign}{atom}.", candidates="herbrand", max_fresh=1)
    # A family stands for its members: unfolded, they are the realizations.
    members = [m for r in proposal for m in r.members()]
    free = free_positions(program, atom.pred)
    got = {shown(r.insert, r.delete, free) for r in members}
    expected = brute_force(program, facts, (sign, atom), free)
    assert got == expected
    assert len(members) == len(got)
    # Smallest first, then by atoms; with a limit, the first ones of that same list.
    sizes = [r.size for r in proposal]
    assert sizes == sorted(sizes)
    assert sizes[:1] == ([min(len(i) + len(d) for i, d in expected)] if expected else [])
    unfolded = db.propose(f"{sign}{atom}.", candidates="herbrand", max_fresh=1, families=False)
    assert sorted(map(_key, unfolded)) == sorted(map(_key, members))
    # Limits at both ends and the middle (every limit re-ran the search: the thorough profile's
    # 500 examples took over half an hour with the oracle).
    for limit in sorted({1, 2, len(proposal) // 2, len(proposal) - 1} & set(range(1, len(proposal)))):
        assert db.propose(f"{sign}{atom}.", candidates="herbrand", max_fresh=1, limit=limit).realizations == proposal.realizations[:limit]


def _key(r):
    return (tuple(map(str, r.insert)), tuple(map(str, r.delete)))


FD = Denial((Literal(Atom("c", (X, Y))), Literal(Atom("c", (X, Var("Z")))), Comparison("!=", Y, Var("Z"))), "fd_c")


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(databases())
def test_a_functional_dependency_grouped_per_key_gives_the_brute_force_realizations(case):
    # A functional dependency is grounded as one at-most-one constraint per key group, not as
    # pairwise denial instances: the realizations are the same.
    program, facts, (sign, atom) = case
    facts = {**facts, "c": {(x, y) for x, y in facts["c"] if not any(x == u and y != v for u, v in facts["c"])}}
    program = Program(program.statements + (FD,))
    db = Database(program.with_statements([BaseDeclaration(tuple(BASE.items()))]), facts)
    proposal = db.propose(f"{sign}{atom}.", candidates="herbrand", max_fresh=1)
    free = free_positions(program, atom.pred, keys=(FD,))
    got = {shown(r.insert, r.delete, free) for p in proposal for r in p.members()}
    assert got == brute_force(program, facts, (sign, atom), free)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(databases(), databases(recursive=True, max_rows=3)))
def test_the_search_cut_by_its_floor_is_sound_up_to_its_bound(case):
    """The search by bound lookups answering alone (no whole-domain search after it, the fewest
    instances kept at the floor), so its pruning by lower bounds is what answers: what it lists
    are brute-force realizations, and every one of up to ``complete_up_to`` changes is listed."""
    from unittest.mock import patch

    from nablog.solver import ground

    program, facts, (sign, atom) = case
    db = Database(program.with_statements([BaseDeclaration(tuple(BASE.items()))]), facts)
    with patch.object(ground, "GENERIC_BUDGET", -1), patch.object(ground, "FLOOR_BUDGET", 1):
        proposal = db.propose(f"{sign}{atom}.", candidates="herbrand", max_fresh=1)
    free = free_positions(program, atom.pred)
    got = {shown(m.insert, m.delete, free) for r in proposal for m in r.members()}
    expected = brute_force(program, facts, (sign, atom), free)
    assert got <= expected, proposal.message
    if proposal.status == "complete":
        assert got == expected, proposal.message
    elif proposal.complete_up_to is not None:
        assert {e for e in expected if len(e[0]) + len(e[1]) <= proposal.complete_up_to} <= got, proposal.message
