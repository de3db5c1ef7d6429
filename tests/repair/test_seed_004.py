"""Seed 004 (Christiansen & Martinenghi): Examples 3.2, 4.1 (both forms) and 5.1, exactly as
shared/seeds/README.md states them."""

from nablog.engines import PythonEngine
from nablog.lang import Delta, parse, separate_facts
from nablog.repair import CorrectionTable, repair
from nablog.repair.maintain import Maintainer
from nablog.repair.simplify import after, optimize, simplify

GAMMA_1 = ":- m1(X, Y), m1(X, Z), Y != Z."

# Example 2.1: sources m1, m2, the global view m0 and no bigamy on all three; Γ1, Γ2 trusted.
SOURCES = """
m0(X, Y) :- m1(X, Y).
m0(X, Y) :- m2(X, Y).
:- m0(X, Y), m0(X, Z), Y != Z.
#constraint gamma1 :- m1(X, Y), m1(X, Z), Y != Z.
#constraint gamma2 :- m2(X, Y), m2(X, Z), Y != Z.
#trusted gamma1, gamma2.
#base m1/2, m2/2.
"""

# The same with Γ written as the paper's unfolding of Γ0 over the mapping (Example 2.1).
UNFOLDED = """
:- m1(X, Y), m1(X, Z), Y != Z.
:- m1(X, Y), m2(X, Z), Y != Z.
:- m2(X, Y), m1(X, Z), Y != Z.
:- m2(X, Y), m2(X, Z), Y != Z.
#constraint gamma1 :- m1(X, Y), m1(X, Z), Y != Z.
#constraint gamma2 :- m2(X, Y), m2(X, Z), Y != Z.
#trusted gamma1, gamma2.
#base m1/2, m2/2.
"""

DISJOINT = "#constraint disjoint :- m1(X, Y), m2(X, Z).\n#trusted disjoint.\n"


def texts(denials):
    return [str(d) for d in denials]


def test_example_3_1_after_unfolds_the_insertion():
    gamma = parse(GAMMA_1).denials
    assert texts(after(gamma, Delta.parse("+m1(a, b)."))) == [
        ":- m1(X, Y), m1(X, Z), Y != Z.",
        ":- m1(X, Y), X = a, Z = b, Y != Z.",
        ":- X = a, Y = b, m1(X, Z), Y != Z.",
        ":- X = a, Y = b, X = a, Z = b, Y != Z.",
    ]


def test_example_3_2_optimized_check_before_the_update():
    gamma = parse(GAMMA_1).denials
    assert texts(optimize(after(gamma, Delta.parse("+m1(a, b).")), gamma)) == [":- m1(a, Y), Y != b."]
    assert texts(simplify(parse(GAMMA_1 + "#base m1/2."), Delta.parse("+m1(a, b).")).before) == [":- m1(a, Y), Y != b."]


def test_example_4_1_optimal_test_after_the_update_over_the_view():
    checks = simplify(parse(SOURCES), Delta.parse("+m1(a, b)."))
    assert texts(checks.after) == [":- m2(a, Z), Z != b."]


def test_example_4_1_optimal_test_after_the_update_over_the_unfolded_constraints():
    checks = simplify(parse(UNFOLDED), Delta.parse("+m1(a, b)."))
    assert texts(checks.after) == [":- m2(a, Z), Z != b."]


def test_example_4_1_with_the_cross_source_constraint_the_test_is_true():
    assert simplify(parse(SOURCES + DISJOINT), Delta.parse("+m1(a, b).")).after == []
    assert simplify(parse(UNFOLDED + DISJOINT), Delta.parse("+m1(a, b).")).after == []


def test_example_4_1_the_cross_source_constraint_as_the_text_writes_it_does_not_give_true():
    # ← m1(X, Y) ∧ m2(X, Y) only forbids the same couple in both sources (the README's note).
    text = "#constraint same :- m1(X, Y), m2(X, Y).\n#trusted same.\n"
    assert texts(simplify(parse(SOURCES + text), Delta.parse("+m1(a, b).")).after) == [":- m2(a, Z), Z != b."]


def test_example_5_1_two_minimal_correction_tables():
    rules, facts = separate_facts(parse(SOURCES + "m1(a, b). m2(a, c)."))
    result = repair(rules, PythonEngine().evaluate(rules, facts), limit=10)
    assert [t.lines() for t in result] == [["-m1(a, b)"], ["-m2(a, c)"]]
    assert result.status == "complete"


def test_example_5_1_by_maintenance_from_an_empty_table():
    rules, facts = separate_facts(parse(SOURCES + "m2(a, c)."))
    maintainer = Maintainer(rules, facts, keep_recent=False)
    assert maintainer.current_table().lines() == []
    step = maintainer.update("+m1(a, b).", limit=10)
    # The corrected view is kept consistent by nablog alone, so source 1's own check is kept too.
    assert texts(step.checks) == [":- m1(a, Y), Y != b.", ":- m2(a, Z), Z != b."]
    assert [t.lines() for t in step.alternatives] == [["-m1(a, b)"], ["-m2(a, c)"]]
    assert step.table.lines() == ["-m1(a, b)"]


def test_example_5_1_keeping_the_recent_update_corrects_the_other_source():
    rules, facts = separate_facts(parse(SOURCES + "m2(a, c)."))
    step = Maintainer(rules, facts).update("+m1(a, b).")
    assert step.table.lines() == ["-m2(a, c)"]


def test_example_5_1_a_table_that_already_corrects_source_2_is_output_unchanged():
    # The text's initial CT {m2(a, b)} reads as the virtual deletion of m2(a, c), the only
    # table under which m1(a, b) needs no new correction.
    rules, facts = separate_facts(parse(SOURCES + "m2(a, c). m2(d, e)."))
    table = CorrectionTable.of([("-", ("m2", ("a", "c")))])
    step = Maintainer(rules, facts, table=table).update("+m1(a, b).")
    assert step.falsifiers is None or not step.falsifiers
    assert step.table.lines() == ["-m2(a, c)"]
