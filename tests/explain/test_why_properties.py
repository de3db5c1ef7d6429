"""Proofs and why-not checked against clingo on generated programs with negation, recursion, arithmetic and aggregates.

For every atom of the model: each proof node cites a rule and its instance is that rule under the
node's binding; clingo finds the instance's body true in the model (its negated atoms absent, its
comparisons and aggregates true); the children are the instance's positive atoms and hold; leaves
are base facts; every node's height is the least, computed by brute force (levels evaluated by
clingo: the atoms with a proof of height ≤ k+1 are the heads of instances whose positive body atoms
have height ≤ k, negation and aggregates read in the model). For atoms that do not hold, every
literal a why-not names really fails in the model.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings

from nablog.database import Database
from nablog.engines import get_engine
from nablog.lang import Atom, Comparison, Literal, Program, Rule, Var, arith, parse
from nablog.lang.ast import Aggregate, AggregateElement, BinOp, Interval, UnaryOp
from tests.strategies import RICH_CONSTANTS, base_facts, examples, rich_facts, rich_programs, stratified_programs

CLINGO = get_engine("clingo")


def brute_heights(program: Program, model: dict) -> dict[Atom, int]:
    """Least proof heights of every derived atom, level by level, each level evaluated by clingo."""
    derived = program.derived
    level = lambda a: Atom(f"lvl__{a.pred}", a.args)  # noqa: E731
    rules = []
    for rule in program.rules:
        head = tuple(Atom(f"new__{a.pred}", a.args) for a in rule.head)
        body = tuple(Literal(level(b.atom)) if isinstance(b, Literal) and b.positive and b.atom.pred in derived else b for b in rule.body)
        rules.append(Rule(head, body))
    heights: dict[Atom, int] = {}
    base = {p: set(rows) for p, rows in model.items()}
    for k in itertools.count():
        known = {f"lvl__{p}": {tuple(a.args) for a in heights if a.pred == p} for p in derived}
        found = CLINGO.evaluate(Program(tuple(rules)), {**base, **known})
        new = {Atom(p[5:], tuple(row)) for p, rows in found.items() if p.startswith("new__") for row in rows}
        fresh = [a for a in new if a not in heights]
        if not fresh:
            return heights
        for a in fresh:
            heights[a] = k + 1


def matches(atom: Atom, model: dict) -> bool:
    """Some tuple of the model matches ``atom`` (variables match anything, a repeated one the same value)."""
    for row in model.get(atom.pred, ()):
        seen: dict = {}
        if all(
            (t.name == "_" or seen.setdefault(t, v) == v) if isinstance(t, Var) else t == v
            for t, v in zip(atom.args, row)
        ):
            return True
    return False


def substituted(term, binding: dict):
    """A term under a binding, arithmetic in atoms computed (the test's own substitution)."""
    if isinstance(term, Var):
        return binding.get(term, term)
    if isinstance(term, BinOp):
        return BinOp(term.op, substituted(term.left, binding), substituted(term.right, binding))
    if isinstance(term, UnaryOp):
        return UnaryOp(term.op, substituted(term.arg, binding))
    if isinstance(term, Interval):
        return Interval(substituted(term.low, binding), substituted(term.high, binding))
    return term


def computed(term, binding):
    value = substituted(term, binding)
    if isinstance(value, (BinOp, UnaryOp)):
        result = arith.evaluate(value, {})
        return value if result is None else result
    return value


def instance_of(rule: Rule, binding: dict) -> Rule:
    def element(b):
        if isinstance(b, Literal):
            return Literal(Atom(b.atom.pred, tuple(computed(t, binding) for t in b.atom.args)), b.positive)
        if isinstance(b, Comparison):
            return Comparison(b.op, substituted(b.left, binding), substituted(b.right, binding))
        return Aggregate(
            b.function,
            tuple(AggregateElement(tuple(substituted(t, binding) for t in e.terms), tuple(element(c) for c in e.condition)) for e in b.elements),
            b.op,
            substituted(b.bound, binding),
        )

    return Rule(tuple(Atom(a.pred, tuple(computed(t, binding) for t in a.args)) for a in rule.head), tuple(element(b) for b in rule.body))


def clingo_true(bodies: list[tuple], model: dict) -> list[bool]:
    """Whether each body (elements) holds in the model, asked of clingo."""
    rules = tuple(Rule((Atom(f"ok{i}"),), tuple(body)) for i, body in enumerate(bodies))
    found = CLINGO.evaluate(Program(rules), {p: set(r) for p, r in model.items()})
    return [bool(found.get(f"ok{i}")) for i in range(len(bodies))]


def check(program: Program, facts: dict) -> None:
    text = "\n".join(str(s) for s in program.statements)
    statements = {i + 1: s for i, s in enumerate(parse(text).statements)}  # one statement a line
    db = Database.from_text(text, facts, engine="clingo")
    model = {p: set(r) for p, r in db.model().items()}
    derived = program.derived
    heights = brute_heights(program, model)
    assert set(heights) == {Atom(p, tuple(row)) for p in derived for row in model.get(p, ())}
    bodies: list[tuple] = []
    for atom in sorted(heights, key=str):
        why = db.why(atom, all=True)
        assert why.holds and why.proof.height == heights[atom]
        assert why.alternatives[0] == why.proof and all(n.height >= heights[atom] for n in why.alternatives)
        for root in why.alternatives:
            for node in root.nodes():
                if node.rule is None:
                    assert node.atom.pred not in derived and tuple(node.atom.args) in facts.get(node.atom.pred, ())
                    continue
                if node is not root:
                    assert node.height == heights[node.atom]
                assert node.height == 1 + max((c.height for c in node.children), default=0)
                line = int(node.where.rsplit(":", 1)[1])
                instance = parse(node.instance).rules[0]
                # Compared after a round trip through text: the parser reads "-2" as the number.
                assert instance.body == parse(str(instance_of(statements[line], dict(node.binding)))).rules[0].body
                assert instance.head == (node.atom,)
                head = instance_of(statements[line], dict(node.binding)).head[0]
                assert head.pred == node.atom.pred and all(
                    v in set(arith.values(t, {})) if isinstance(t, Interval) else t == v for t, v in zip(head.args, node.atom.args)
                )
                positives = {b.atom for b in instance.body if isinstance(b, Literal) and b.positive}
                assert {c.atom for c in node.children} == positives and all(tuple(c.atom.args) in model[c.atom.pred] for c in node.children)
                assert {str(b.atom) for b in instance.body if isinstance(b, Literal) and not b.positive} == {str(a) for a in node.absent}
                assert not any(matches(a, model) for a in node.absent)
                bodies.append(tuple(b for b in instance.body if not (isinstance(b, Literal) and not b.positive)))
    assert all(clingo_true(bodies, model))
    # Why not: every named literal fails.
    failing: list[tuple] = []
    arities = {p: n for p, n in program.signatures.items() if p in derived}
    for pred, arity in sorted(arities.items()):
        for args in itertools.islice(itertools.product(RICH_CONSTANTS[:4] + ["a"], repeat=arity), 12):
            atom = Atom(pred, args)
            if atom in heights:
                continue
            why = db.why(atom, depth=2)
            assert not why.holds
            stack = list(why.why_not)
            while stack:
                rule_fails = stack.pop()
                for fails in rule_fails.fails:
                    stack.extend(fails.why_not)
                    element = fails.element
                    assert str(element) == fails.literal
                    if fails.reason == "missing":
                        assert isinstance(element, Literal) and element.positive and not matches(element.atom, model)
                    elif fails.reason == "present":
                        assert isinstance(element, Literal) and not element.positive and matches(element.atom, model)
                    else:
                        failing.append((element,))
    assert not any(clingo_true(failing, model))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs(), base_facts(max_rows=6))
def test_proofs_of_stratified_programs_against_clingo(program, facts):
    check(program, facts)


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rich_programs(), rich_facts())
def test_proofs_with_arithmetic_and_aggregates_against_clingo(program, facts):
    check(program, facts)
