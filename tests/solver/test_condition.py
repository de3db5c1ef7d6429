"""Family conditions: simplified by z3, equivalent to the unsimplified one, and exactly the members.

The exact texts on the org chart (the chairs example's is in test_seed_requests.py); on generated databases (copies of a
gadget, so that families occur, folded and unfolded) every family's simplified condition is
equivalent to the drafted one under z3 (constraints as axioms, the named constants' facts), every
member meets it, and — when it says it is exact — every binding over its domains that meets it,
evaluated here by enumeration, is a member.
"""

from __future__ import annotations

import itertools
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.solver.test_bruteforce import BASE
from tests.solver.test_folding import gadget_databases
from tests.solver.test_scale import REQUEST, org_chart
from tests.strategies import examples

from nablog import Database
from nablog.engines.lookup import ModelIndex
from nablog.lang import BaseDeclaration, Var
from nablog.solver import symmetry
from nablog.solver.condition import Background, family_condition


def test_the_org_chart_family_reads_as_a_department_other_than_e5s_whose_head_is_not_h77():
    proposal = org_chart(100).propose(REQUEST)
    family = proposal[3].family
    assert family.condition == "D any dept other than e5's current dept, whose head V1 is not h77 (98 values)"
    assert proposal.to_json()["realizations"][3]["family"]["where"] == {
        "domains": {"D": ["dept_head/1", "emp_dept/2"], "V1": ["dept_head/2"]},
        "conjuncts": [
            {"kind": "holds", "atom": "dept_head(D, V1)"},
            {"kind": "absent", "atom": "emp_dept(e5, D)"},
            {"kind": "differs", "variable": "V1", "values": ["h77"]},
        ],
        "new": [],
        "exact": True,
    }
    # Unsimplified, it also said D is not d5 (implied by e5's department) and h77 does not head D
    # (implied by the key on dept_head and V1 not h77).
    assert sorted(map(str, family.where.drafted)) == [
        "D not d5",
        "V1 not h77",
        "dept_head(D, V1) holds now",
        "dept_head(D, h77) does not hold now",
        "emp_dept(e5, D) does not hold now",
    ]


def test_values_the_facts_do_not_tell_apart_are_excluded_by_name_up_to_ten_else_counted():
    # Members d0..d4 of ten values that the facts do not tell apart: the other five are named.
    db = Database.from_text("p(X) :- t(X). #base t/1.", {"s": {(f"d{i}",) for i in range(10)}, "t": set()})
    named = _family(db, [(f"d{i}",) for i in range(5)])
    assert (named.exact, named.text) == (True, "D any value other than d5, d6, d7, d8, d9, without t(D) now (5 values)")
    # Three of thirty: 27 exceptions are too many to name, and the condition says it is not exact.
    db = Database.from_text("p(X) :- t(X). #base t/1.", {"s": {(i,) for i in range(30)}, "t": set()})
    counted = _family(db, [(i,) for i in range(3)])
    assert (counted.exact, counted.text) == (False, "D: 3 values (D = 0, 1, 2)")


def _family(db, bindings):
    from nablog.lang import Atom
    from nablog.solver.family import Family

    D = Var("D")
    return family_condition(Family(((Atom("t", (D,)),), ()), (D,), D, tuple(bindings)), db.rules, ModelIndex(db.python_model()), ("new1",))


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(gadget_databases(), st.sampled_from(["attribute", "herbrand"]), st.booleans())
def test_simplified_conditions_are_equivalent_and_describe_exactly_the_members(case, candidates, fold):
    program, facts, (sign, atom) = case
    db = Database(program.with_statements([BaseDeclaration(tuple(BASE.items()))]), facts)
    with mock.patch.object(symmetry, "FOLD_LEAST", 3 if fold else 10**6), mock.patch.object(symmetry, "EXACT_SIZE", 1):
        # A few generated instances take clingo minutes over every constant: what was found
        # by then is checked all the same.
        proposal = db.propose(f"{sign}{atom}.", candidates=candidates, max_fresh=1, timeout=20)
    model = db.python_model()
    index = ModelIndex(model)
    for r in proposal:
        if r.family is None:
            continue
        where = r.family.where
        members = set(r.family.bindings)
        background = Background(db.rules, index, _constants(where) | _constants_of_pattern(r.family), consistent=not db.violations())
        assert background.equivalent(where.drafted, where.conjuncts)
        for binding in members:
            assert all(_meets(c, dict(zip(where.variables, binding)), model) for c in where.conjuncts), (where.text, binding)
        if where.exact:
            assert _enumerated(where, model, db.rules.constants()) == members, where.text


def _meets(c, binding, model) -> bool:
    if c.kind == "differs":
        return binding[c.variable] not in c.values
    row = tuple(binding[t] if isinstance(t, Var) else t for t in c.atom.args)
    return (row in model.get(c.atom.pred, ())) == (c.kind == "holds")


def _enumerated(where, model, program_constants) -> set:
    """Every binding over the condition's domains (and its new values) that meets it, by brute
    force; a variable of no columns ranges over the constants of the facts and the program."""
    everything = {v for rows in model.values() for row in rows for v in row} | set(program_constants)
    ranges = []
    for domain in where.domains:
        values = {row[i] for p, i in domain for row in model.get(p, ())} if domain else everything
        ranges.append(values | set(where.new))
    out = set()
    for values in itertools.product(*ranges):
        binding = dict(zip(where.variables, values))
        if all(_meets(c, binding, model) for c in where.conjuncts):
            out.add(values)
    return out


def _constants(where) -> set:
    out = set()
    for c in where.drafted:
        out |= set(c.values) if c.kind == "differs" else {t for t in c.atom.args if not isinstance(t, Var)}
    return out


def _constants_of_pattern(family) -> set:
    return {t for a in family.pattern[0] + family.pattern[1] for t in a.args if not isinstance(t, Var)}
