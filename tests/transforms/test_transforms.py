"""Seed 002's transformations: the paper's listings, and the semantics they must preserve."""

from hypothesis import HealthCheck, given, settings
from tests.strategies import examples

from nablog.engines import PythonEngine
from nablog.engines.encoding import decode_facts
from nablog.lang import Atom, Program, parse, separate_facts
from nablog.transforms import normalize, propagation_rules, restrict, transition_rules, view_update_rules, view_update_transitions
from nablog.views import propagate

from ..strategies import base_facts, stratified_programs

PATHS = "p(X,Y) :- e(X,Y). p(X,Y) :- e(X,Z), p(Z,Y)."


def rule_set(program: Program, renaming: dict[str, str]) -> set[str]:
    """The rules as text with auxiliary names mapped to the paper's, order ignored."""
    out = set()
    for rule in program.rules:
        text = str(rule)
        for ours, paper in renaming.items():
            text = text.replace(ours, paper)
        out.add(text)
    return out


def test_seed_002_section_2_2_normalized_p():
    assert rule_set(normalize(parse(PATHS)), {"aux1__p": "aux1", "aux2__p": "aux2"}) == {
        "p(X, Y) :- e(X, Y).",
        "p(X, Y) :- aux1(X, Y).",
        "aux1(X, Y) :- aux2(X, Y, Z).",
        "aux2(X, Y, Z) :- e(X, Z), p(Z, Y).",
    }


def test_seed_002_section_3_up_rules_for_p_wrt_insertions_into_e():
    rules = restrict(propagation_rules(normalize(parse(PATHS))), {"ins__e"})
    assert rule_set(rules, {"aux1__p": "aux1", "aux2__p": "aux2"}) == {
        "ins__p(X, Y) :- ins__e(X, Y), not p(X, Y).",
        "ins__p(X, Y) :- ins__aux1(X, Y), not p(X, Y).",
        "ins__aux1(X, Y) :- ins__aux2(X, Y, Z), not aux1(X, Y).",
        "ins__aux2(X, Y, Z) :- ins__e(X, Z), new__p(Z, Y).",
        "ins__aux2(X, Y, Z) :- ins__p(Z, Y), new__e(X, Z).",
    }


def test_seed_002_section_3_transition_rules_for_p():
    # The paper prints aux1new(X, Z) in the second rule of p by a slip; it is aux1new(X, Y).
    assert rule_set(transition_rules(normalize(parse(PATHS))), {"aux1__p": "aux1", "aux2__p": "aux2", "V1": "X", "V2": "Y"}) == {
        "new__e(X, Y) :- e(X, Y), not del__e(X, Y).",
        "new__e(X, Y) :- ins__e(X, Y).",
        "new__p(X, Y) :- new__e(X, Y).",
        "new__p(X, Y) :- new__aux1(X, Y).",
        "new__aux1(X, Y) :- new__aux2(X, Y, Z).",
        "new__aux2(X, Y, Z) :- new__e(X, Z), new__p(Z, Y).",
    }


SECTION_4_1 = """p(X) :- q1(X). p(X) :- q2(X). q1(X) :- r1(X), s(X). q2(X) :- r2(X), not s(X).
au(X) :- q2(X), not q1(X). ic(2) :- not au(2). #require ic(2)."""


def test_seed_002_section_4_1_vu_rules_for_an_insertion_into_p():
    # The text's first rule reads ∇+q1 ∨ ∇+q1; it means ∇+q1 ∨ ∇+q2.
    assert rule_set(restrict(view_update_rules(normalize(parse(SECTION_4_1))), {"vu_ins__p"}), {}) == {
        "vu_ins__q1(X) ; vu_ins__q2(X) :- vu_ins__p(X).",
        "vu_ins__r1(X) :- vu_ins__q1(X), not r1(X).",
        "vu_ins__r2(X) :- vu_ins__q2(X), not r2(X).",
        "vu_ins__s(X) :- vu_ins__q1(X), not s(X).",
        "vu_del__s(X) :- vu_ins__q2(X), s(X).",
    }


def test_seed_002_section_4_2_vu_transition_rules():
    program = normalize(parse(SECTION_4_1))
    transitions = {str(r) for r in view_update_transitions(program, view_update_rules(program)).rules}
    assert "vu_ins__ic(2) :- del__ic(2)." in transitions  # Def. 10, case 2: repair of ic(2)
    assert "false :- vu_ins__s(V1), vu_del__s(V1)." in transitions  # case 1
    assert "vu_del__s(X) :- vu_ins__q1(X), s(X), del__s(X)." not in transitions
    assert "vu_ins__s(X) :- vu_ins__q1(X), s(X), del__s(X)." in transitions  # case 3: compensation
    assert "ins__r1(V1) :- vu_ins__r1(V1), not r1(V1)." in transitions  # case 4: start of the UP phase


def test_projection_vu_rule_offers_domain_constants_and_a_new_one():
    rules = view_update_rules(normalize(parse("p(X) :- q(X, Y).")), domain={("q", 1): ["a", "b"]})
    assert {str(r) for r in rules.rules} == {
        "vu_del__q(X, Y) :- vu_del__p(X), q(X, Y).",
        "vu_ins__q(X, a) ; vu_ins__q(X, b) ; vu_ins__q(X, new) :- vu_ins__p(X).",
    }


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs(), base_facts())
def test_normalization_preserves_the_model(program, facts):
    engine = PythonEngine()
    expected = decode_facts(engine.evaluate(program, facts))
    got = decode_facts(engine.evaluate(normalize(program), facts))
    assert {p: got[p] for p in expected} == expected


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stratified_programs(), base_facts(), base_facts(max_rows=3), base_facts(max_rows=3))
def test_propagation_equals_the_difference_of_the_models(program, facts, insert, delete):
    engine = PythonEngine()
    rules, base = separate_facts(program, facts)
    old = decode_facts(engine.evaluate(rules, base))
    new_facts = {p: (facts[p] - delete.get(p, set())) | (insert.get(p, set()) - delete.get(p, set())) for p in facts}
    new = decode_facts(engine.evaluate(rules, new_facts))
    expected = sorted(
        [f"+{Atom(p, r)}" for p in new for r in new[p] - old.get(p, set())]
        + [f"-{Atom(p, r)}" for p in old for r in old[p] - new.get(p, set())]
    )
    for method in ("incremental", "rules", "maintenance", "rod"):
        update = propagate(rules, base, insert, delete, method=method)
        assert sorted(update.lines()) == expected, method


def test_seed_002_section_4_2_trace_of_deleting_s_2():
    # ∇−s(2) ⇒ ∆+q2(2) ⇒ ∆+p(2), ∆+au(2) ⇒ ∆−ic(2): the constraint is violated, "false".
    rules, facts = separate_facts(parse(SECTION_4_1 + " r2(2). s(2). #base r1/1."))
    for method in ("incremental", "rules"):
        update = propagate(rules, facts, delete={"s": {(2,)}}, method=method)
        assert update.lines() == ["+au(2)", "+p(2)", "+q2(2)", "-ic(2)", "-s(2)"], method
