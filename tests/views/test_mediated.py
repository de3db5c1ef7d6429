"""Mediated views (seed 000): Examples 5, 6 and 8 exactly; maintenance against recomputation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nablog.engines import get_engine
from nablog.lang import Atom, Literal, NablogError, Program, Rule, parse, separate_facts
from nablog.views.constraints import Domains
from nablog.views.mediated import MediatedView, format_support, head_vars
from tests.strategies import examples, stratified_programs

EXAMPLE_5 = """
a(X) :- X <= 3 ||.
a(X) :- || b(X).
b(X) :- X >= 5 ||.
c(X) :- || a(X).
"""

EXAMPLE_6 = """
p(X, Y) :- X = a, Y = b ||.
p(X, Y) :- X = a, Y = c ||.
p(X, Y) :- X = c, Y = d ||.
a(X, Y) :- || p(X, Y).
a(X, Y) :- || p(X, Z), a(Z, Y).
"""


def listing(view: MediatedView) -> list[str]:
    return view.listing(supports=True)


def test_example_5_view_and_supports():
    view = MediatedView.from_text(EXAMPLE_5)
    assert listing(view) == [
        "a(X) :- X <= 3.  <1>",
        "a(X) :- X >= 5.  <2, <3>>",
        "b(X) :- X >= 5.  <3>",
        "c(X) :- X <= 3.  <4, <1>>",
        "c(X) :- X >= 5.  <4, <2, <3>>>",
    ]


@pytest.mark.parametrize("method", ["stdel", "dred", "recompute"])
def test_example_5_delete(method):
    view = MediatedView.from_text(EXAMPLE_5)
    view.delete("b(X) || X = 6", method=method)
    assert view.listing() == [
        "a(X) :- X <= 3.",
        "a(X) :- X >= 5, X != 6.",
        "b(X) :- X >= 5, X != 6.",
        "c(X) :- X <= 3.",
        "c(X) :- X >= 5, X != 6.",
    ]


def test_example_5_stdel_keeps_supports():
    view = MediatedView.from_text(EXAMPLE_5)
    view.delete("b(X) || X = 6")
    assert [format_support(view.support(e)) for e in view.atoms()] == ["<1>", "<3>", "<2, <3>>", "<4, <1>>", "<4, <2, <3>>>"]
    assert view.contains("c(7)") and not view.contains("c(6)") and not view.contains("a(4)")


def test_example_6_view():
    # The paper prints atom 7's support as <4, <2>, <4, <3>>>; clause 4 has one body atom, the
    # derivation uses the recursive clause 5.
    view = MediatedView.from_text(EXAMPLE_6)
    assert listing(view) == [
        "a(X, Y) :- X = a, Y = b.  <4, <1>>",
        "a(X, Y) :- X = a, Y = c.  <4, <2>>",
        "a(X, Y) :- X = c, Y = d.  <4, <3>>",
        "a(X, Y) :- X = a, Y = d.  <5, <2>, <4, <3>>>",
        "p(X, Y) :- X = a, Y = b.  <1>",
        "p(X, Y) :- X = a, Y = c.  <2>",
        "p(X, Y) :- X = c, Y = d.  <3>",
    ]


@pytest.mark.parametrize("method", ["stdel", "dred", "recompute"])
def test_example_6_delete(method):
    # seed README: M' is P(a,b), P(a,c), A(a,b), A(a,c) (the paper's listing shows A(c,d) by a slip).
    view = MediatedView.from_text(EXAMPLE_6)
    view.delete("p(X, Y) || X = c, Y = d", method=method)
    assert view.listing() == ["a(X, Y) :- X = a, Y = b.", "a(X, Y) :- X = a, Y = c.", "p(X, Y) :- X = a, Y = b.", "p(X, Y) :- X = a, Y = c."]
    assert view.ground("a(X, Y)") == ([("a", "b"), ("a", "c")], True)


EXAMPLE_8 = """
a(X) :- in(X, s1:f(X)) || b(X, Y).
b(a, b). b(b, b).
"""


def test_example_8_wp_needs_no_maintenance():
    answers = {"b": {"b"}}
    domains = Domains()
    domains.register("s1", f=lambda x: answers.get(x, ()))
    w = MediatedView.from_text(EXAMPLE_8, domains, operator="W")
    t = MediatedView.from_text(EXAMPLE_8, domains, operator="T")
    assert w.listing() == [
        "a(X) :- X = a, in(a, s1:f(a)).",
        "a(X) :- X = b, in(b, s1:f(b)).",
        "b(X, Y) :- X = a, Y = b.",
        "b(X, Y) :- X = b, Y = b.",
    ]
    assert t.listing() == ["a(X) :- X = b, in(b, s1:f(b)).", "b(X, Y) :- X = a, Y = b.", "b(X, Y) :- X = b, Y = b."]
    assert w.ground("a(X)") == t.ground("a(X)") == ([("b",)], True)
    # time t+1: f(a) = {a}, f(X) = {} otherwise
    answers.clear()
    answers["a"] = {"a"}
    before = w.listing()
    checks, calls = w.solver.checks, domains.calls
    assert w.external_change() == 0
    assert (w.solver.checks, domains.calls) == (checks, calls)  # Theorem 4: no work at all
    assert w.listing() == before
    assert w.ground("a(X)") == ([("a",)], True)
    assert t.ground("a(X)") == ([], True)  # T_P is stale until maintained
    assert t.external_change() > 0
    assert t.listing() == ["a(X) :- X = a, in(a, s1:f(a)).", "b(X, Y) :- X = a, Y = b.", "b(X, Y) :- X = b, Y = b."]
    assert t.ground("a(X)") == ([("a",)], True)


def test_insert_constrained_atom():
    view = MediatedView.from_text(EXAMPLE_5)
    view.insert("b(X) || X = 4")
    assert "c(X) :- X = 4.  <4, <2, <5>>>" in listing(view)
    assert view.contains("c(4)")
    view.delete("a(X) || X >= 4, X <= 5")
    assert [view.contains(f"c({n})") for n in range(2, 8)] == [True, True, False, False, True, True]


def test_query_returns_constrained_atoms_and_bounded_ground_answers():
    view = MediatedView.from_text(EXAMPLE_5)
    assert [str(a) + " :- " + ", ".join(map(str, c)) for a, c in view.query("c(Z)")] == ["c(Z) :- Z <= 3", "c(Z) :- Z >= 5"]
    rows, complete = view.ground("c(X)", limit=3)
    assert not complete and len(rows) == 6
    assert view.ground("c(2)") == ([(2,)], True)


def test_errors():
    with pytest.raises(NablogError, match="negation"):
        MediatedView(parse("a(X) :- b(X), not c(X). b(1). c(2).").statements)
    with pytest.raises(NablogError, match="no finite fixpoint"):
        MediatedView(parse("n(X) :- X >= 0 ||. n(X) :- X > Y || n(Y).").statements, max_rounds=20)
    with pytest.raises(NablogError, match="unknown domain"):
        MediatedView.from_text("a(X) :- in(X, nowhere:f(1)) ||.")


# -- ordinary programs: the same answers as the python engine ----------------------------------


def _positive(program: Program) -> Program:
    rules = [Rule(r.head, tuple(b for b in r.body if not (isinstance(b, Literal) and not b.positive))) for r in program.rules]
    return Program(tuple(rules))


@settings(max_examples=examples(30), deadline=None)
@given(stratified_programs(), st.data())
def test_ground_programs_agree_with_the_python_engine(program, data):
    from tests.strategies import base_facts

    program = _positive(program)
    facts = data.draw(base_facts(max_rows=5))
    rules, split = separate_facts(program, facts)
    model = get_engine("python").evaluate(rules, split)
    fact_rules = [Rule((Atom(p, row),)) for p, rows in split.items() for row in rows]
    try:
        view = MediatedView(list(rules.rules) + fact_rules)
    except NablogError as err:  # mixed integer/string comparisons are refused, never guessed
        assert "integers and with strings" in str(err)
        return
    for pred, arity in {**rules.signatures}.items():
        if pred.startswith("base__") and pred not in model:
            continue
        pattern = f"{pred}({', '.join(v.name for v in head_vars(arity))})" if arity else pred
        rows, complete = view.ground(pattern)
        assert complete
        assert set(rows) == set(model.get(pred, ())), pred


# -- maintenance against recomputation on generated constrained programs with recursion ------------

OPS = ["=", "!=", "<", "<=", ">", ">="]


@st.composite
def constrained_programs(draw) -> str:
    """Edges ``e`` as ground facts, non-ground ``b``, and recursive views ``p``, ``q``, ``s`` over them."""
    c = st.integers(0, 5)

    def cond(var: str) -> str:
        return f"{var} {draw(st.sampled_from(OPS))} {draw(c)}" if draw(st.booleans()) else ""

    lines = [f"e({x}, {y})." for x, y in sorted(draw(st.sets(st.tuples(c, c), max_size=6)))]
    lines += [f"b(X) :- X {draw(st.sampled_from(OPS))} {draw(c)} ||." for _ in range(draw(st.integers(1, 2)))]
    templates = [
        lambda: f"p(X) :- {cond('X')} || b(X).",
        lambda: f"p(X) :- {cond('X')} || e(X, Y), p(Y).",
        lambda: "q(X, Y) :- || e(X, Y).",
        lambda: f"q(X, Y) :- {cond('Y')} || e(X, Z), q(Z, Y).",
        lambda: f"s(X) :- {cond('X')} || q(X, Y), p(Y).",
        lambda: "s(X) :- || b(X), p(X).",
    ]
    for k, make in enumerate(templates):
        if k in (0, 2) or draw(st.booleans()):
            lines.append(make())
    return "\n".join(lines)


@st.composite
def updates(draw, insert: bool) -> str:
    pred, arity = draw(st.sampled_from([("b", 1), ("p", 1), ("q", 2), ("s", 1), ("e", 2)]))
    args = ", ".join(head_vars(arity)[i].name for i in range(arity))
    if insert and pred in ("q", "e"):
        # q's recursion keeps the second column; a non-ground q atom would recur without end
        # around a cycle of e (see test_errors), so binary atoms are inserted ground.
        return f"{pred}({args}) || X = {draw(st.integers(0, 5))}, Y = {draw(st.integers(0, 5))}"
    conds = [f"{v.name} {draw(st.sampled_from(OPS))} {draw(st.integers(0, 5))}" for v in head_vars(arity) if draw(st.booleans())]
    return f"{pred}({args}) || {', '.join(conds)}" if conds else f"{pred}({args})"


def assert_same_view(left: MediatedView, right: MediatedView) -> None:
    """Equal solutions per predicate: by z3 equivalence and by enumeration on -2..8."""
    for pred in sorted(set(left.predicates()) | set(right.predicates())):
        arity = (left.atoms(pred) or right.atoms(pred))[0].arity
        head = head_vars(arity)
        assert left.solver.equivalent(left.constraints_of(pred), right.constraints_of(pred), head), pred
        box = ", ".join(f"{v.name} >= -2, {v.name} <= 8" for v in head)
        pattern = f"{pred}({', '.join(v.name for v in head)}) || {box}"
        assert _box(left, pattern) == _box(right, pattern), pred


def _box(view: MediatedView, pattern: str) -> set[tuple]:
    atom, constraint = view.parse_update(pattern)
    rows: set[tuple] = set()
    for _, conj in view.query(atom, constraint):
        found, complete = view.solver.solutions(conj, tuple(atom.args), limit=2000)
        assert complete
        rows.update(found)
    return rows


@settings(max_examples=examples(40), deadline=None)
@given(constrained_programs(), st.lists(st.booleans().flatmap(lambda i: st.tuples(st.just(i), updates(i))), min_size=1, max_size=3))
def test_stdel_dred_and_recomputation_agree(text, steps):
    views = {m: MediatedView.from_text(text) for m in ("stdel", "dred")}
    for insert, update in steps:
        pred = update.split("(")[0]
        for method, view in views.items():
            if insert:
                view.insert(update)
            elif not any(c.head.pred == pred for c in view.clauses):
                with pytest.raises(NablogError, match=f"no clause defines {pred}"):
                    view.delete(update, method=method)
            else:
                view.delete(update, method=method)
        oracle = views["stdel"].recomputed()
        assert_same_view(views["stdel"], oracle)
        assert_same_view(views["dred"], oracle)


# -- issue 30: the four causes and the recursion through a ground constrained fact, exactly ----------

METHODS = ["stdel", "dred", "recompute"]


@pytest.mark.parametrize("operator", ["T", "W"])
@pytest.mark.parametrize("method", METHODS)
def test_dred_keeps_instances_still_derivable(operator, method):
    # P_OUT holds d0(X) <- 1 <= X <= 5; d0(1) is still derived from b(1) by clause 3. DRed's
    # rederivation asked whether d0(1) was covered by the narrowed d0(X) <- 0 <= X <= 1, not(...),
    # and the nested negation's local variable was quantified outside it.
    view = MediatedView.from_text(
        """b(X) :- X >= 0, X <= 1 ||.
        h1 :- || b(X).
        d0(X) :- || b(X).
        d0(X) :- X >= 1, X <= 5 || h1.""",
        operator=operator,
    )
    view.delete("h1", method=method)
    assert view.ground("d0(X)") == ([(0,), (1,)], True)
    assert view.ground("h1") == ([], True)
    assert [view.contains(f"d0({n})") for n in range(-1, 4)] == [False, True, True, False, False]


def _f_domains(answers: dict) -> Domains:
    domains = Domains()
    domains.register("d", f=lambda x: answers.get(x, set()))
    return domains


@pytest.mark.parametrize("operator", ["T", "W"])
def test_ground_decides_a_domain_call_on_a_variable_not_in_the_head(operator):
    answers = {4: {0, 1}}
    text = "g(4, 4). u(1).\nd0(Y) :- in(Z, d:f(X)), Y < Z || g(X, X), u(Y)."
    view = MediatedView.from_text(text, _f_domains(answers), operator=operator)
    assert view.ground("d0(X)") == ([], True)
    assert view.ground("d0(1)") == ([], True)
    assert not view.contains("d0(1)")
    assert view.query("d0(X)") == []
    answers[4] = {0, 3}  # the source changes: now 1 < 3
    view.external_change()
    assert view.ground("d0(X)") == ([(1,)], True)
    assert view.contains("d0(1)")
    answers[4] = {1}
    view.external_change()
    assert view.ground("d0(X)") == ([], True) and not view.contains("d0(1)")
    answers[4] = {5}
    view.external_change()
    view.delete("u(X) || X = 1", method="stdel")
    assert view.ground("d0(X)") == ([], True) and not view.contains("d0(1)")


@pytest.mark.parametrize("operator", ["T", "W"])
def test_query_patterns_with_constants_and_repeated_variables(operator):
    view = MediatedView.from_text(
        """b(X) :- X >= 2, X < 7 ||.
        r(X, X) :- 0 <= X, X < 4 ||.
        h0(Y, Z) :- || r(X, Y), b(Z).
        d1(Y) :- Y < X || h0(X, Y).
        d2(X, Y) :- Y = 6 || d1(X), b(Y).""",
        operator=operator,
    )
    assert view.ground("d2(X, Y)") == ([(2, 6)], True)
    assert view.ground("d2(X, X)") == ([], True)
    assert view.ground("d2(6, Y)") == ([], True)
    assert view.ground("d2(2, Y)") == ([(2, 6)], True)
    assert view.ground("d2(X, 6)") == ([(2, 6)], True)
    assert view.query("d2(X, X)") == [] and view.query("d2(6, Y)") == []
    assert view.contains("d2(2, 6)") and not view.contains("d2(6, 6)")
    assert view.ground("h0(X, X)") == ([(2, 2), (3, 3)], True)


@pytest.mark.parametrize("operator", ["T", "W"])
@pytest.mark.parametrize("method", METHODS)
def test_deletion_keeps_an_atom_still_derivable_through_a_domain_call(operator, method):
    # W_P relaxed in(Z, d:h()) away, which left Z only inside the deletion's not(...), so
    # not(0 <= Z <= 3) read as "no Z at all in 0..3": d2(al) was dropped though d1(7) remains.
    domains = Domains()
    domains.register("d", h=lambda: {1, 2, 7})
    view = MediatedView.from_text("n(al, 2).\nd1(Y) :- in(Y, d:h()) ||.\nd2(X) :- || n(X, Y), d1(Z).", domains, operator=operator)
    view.delete("d1(X) || X >= 0, X <= 3", method=method)
    assert view.ground("d1(X)") == ([(7,)], True)
    assert view.ground("d2(X)") == ([("al",)], True)
    assert view.contains("d2(al)")


@pytest.mark.parametrize("operator", ["T", "W"])
@pytest.mark.parametrize("facts", ["b(Y) :- Y >= 1, Y <= 2 ||.", "b(1). b(2)."])
def test_recursion_through_a_ground_constrained_fact_terminates(operator, facts):
    text = f"w(X) :- X = 3 || b(Y).\nw(X) :- || g(Y, X), w(Y).\ng(3, 3). g(3, 4).\n{facts}"
    view = MediatedView.from_text(text, operator=operator)
    assert view.ground("w(X)") == ([(3,), (4,)], True)
    for method in METHODS:
        deleted = MediatedView.from_text(text, operator=operator)
        deleted.delete("b(X) || X = 1", method=method)
        assert deleted.ground("w(X)") == ([(3,), (4,)], True), method
        deleted.delete("b(X)", method=method)
        assert deleted.ground("w(X)") == ([], True), method
    view.insert("w(X) || X >= 7, X <= 8")
    view.insert("g(8, 3)")
    assert view.ground("w(X)") == ([(3,), (4,), (7,), (8,)], True)


def test_a_mediator_update_is_read_whole_before_any_part_is_applied():
    from nablog.lang import QueryError
    from nablog.views.mediator import Mediator

    mediator = Mediator.from_text(EXAMPLE_5)
    before = mediator.listing()
    with pytest.raises(QueryError, match="no clause defines z/1"):
        mediator.update("-b(X) || X = 6. -z(X).")
    with pytest.raises(NablogError, match="not a deletion method"):
        mediator.update("-b(X) || X = 6.", method="rules")
    with pytest.raises(ValueError, match="unknown deletion method"):
        mediator.view.delete("b(X) || X = 6", method="rules")
    assert mediator.listing() == before
    assert mediator.update("-b(X) || X = 6.", method="dred").lines()[-1] == "c(X) :- X >= 5, X != 6."
