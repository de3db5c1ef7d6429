"""Proposals at scale: bounds honoured in every phase, smallest first, families of realizations.

The database is issue 16's org chart: ``manager(E, H) :- emp_dept(E, D), dept_head(D, H).`` with a
key on employees and one head per department. Inserting ``manager(e5, h77)`` has two 2-change
realizations, one 3-change one with a new department, and one 4-change realization per other
department ("move e5 to D and make h77 its head"), which nablog shows as one family.
"""

from __future__ import annotations

import json

import pytest

from nablog import Database
from nablog.solver import check_before_writing, parse_request

RULES = """
#columns emp_dept(emp, dept).
#columns dept_head(dept, head).
manager(E, H) :- emp_dept(E, D), dept_head(D, H).
#key emp_dept: emp.
#constraint one_head :- dept_head(D, X), dept_head(D, Y), X != Y.
"""
REQUEST = "+manager(e5, h77)."


def org_chart(departments: int, per_department: int = 99) -> Database:
    employees = departments * per_department
    return Database.from_text(
        RULES,
        {
            "emp_dept": {(f"e{i}", f"d{i % departments}") for i in range(employees)},
            "dept_head": {(f"d{d}", f"h{d}") for d in range(departments)},
        },
    )


def lines(proposal):
    return [r.changes.lines() for r in proposal]


def test_the_org_chart_insertion_gives_four_realizations_one_of_them_a_family():
    proposal = org_chart(100).propose(REQUEST)
    # Departments are folded: exact up to 4 changes, so not called complete (see symmetry.EXACT_SIZE).
    assert proposal.status == "bounded"
    assert lines(proposal) == [
        ["+dept_head(d5, h77)", "-dept_head(d5, h5)"],
        ["+emp_dept(e5, d77)", "-emp_dept(e5, d5)"],
        ["+dept_head(new1, h77)", "+emp_dept(e5, new1)", "-emp_dept(e5, d5)"],
        ["+dept_head(D, h77)", "+emp_dept(e5, D)", "-dept_head(D, V1)", "-emp_dept(e5, d5)"],
    ]
    family = proposal[3].family
    assert len(family) == 98
    assert family.condition == "D any dept other than e5's current dept, whose head V1 is not h77 (98 values)"
    assert proposal.message == (
        "4 minimal realizations (1 of them family of 98 members); interchangeable values were folded: every realization"
        " of up to 4 changes is listed, larger ones drawing more values of one class were not searched (--no-families,"
        " families=False, searches them)"
    )
    assert proposal.to_json()["realizations"][3]["family"]["count"] == 98


def test_the_family_survives_when_the_bound_lookups_leave_more_departments_out_than_their_budget(monkeypatch):
    # A regression found at 1e6 facts: the search by bound lookups estimated the departments it
    # left out from the relation's size (past SMALL_RELATION it does not list the values), not from
    # the few representatives folding shows, went past GENERIC_BUDGET and answered without the
    # 4-change family. SMALL_RELATION is lowered so that a small chart takes that path.
    from nablog.solver import possible
    from nablog.solver.ground import GENERIC_BUDGET

    monkeypatch.setattr(possible, "SMALL_RELATION", 1_000)
    departments = GENERIC_BUDGET + 500
    proposal = org_chart(departments, per_department=2).propose(REQUEST)
    assert [len(r.changes) for r in proposal] == [2, 2, 3, 4]
    assert len(proposal[3].family) == departments - 2


def test_family_members_are_the_unfolded_realizations_and_each_sampled_one_verifies():
    db = org_chart(30, 9)
    folded = db.propose("+manager(e5, h17).")
    unfolded = db.propose("+manager(e5, h17).", families=False)
    members = [m for r in folded for m in r.members()]
    assert sorted(lines(members)) == sorted(lines(unfolded))
    assert len(unfolded) == 3 + 28
    # A sampled re-evaluation of members: request, every constraint and minimality.
    family = folded[3]
    request = parse_request("+manager(e5, h17).")
    for binding in family.family.bindings[::7]:
        check_before_writing(db.rules, db.python_model(), family.member(binding), request, consistent=True)
    assert family.pick({"D": "d12"}).changes.lines() == ["+dept_head(d12, h17)", "+emp_dept(e5, d12)", "-dept_head(d12, h12)", "-emp_dept(e5, d5)"]


@pytest.mark.slow
def test_bounds_on_a_database_that_takes_seconds_give_a_prefix_of_the_smallest_first_list():
    db = org_chart(150)  # 15,000 facts
    full = db.propose(REQUEST, families=False)
    assert full.status == "complete" and len(full) == 3 + 148
    assert [r.size for r in full] == sorted(r.size for r in full)
    for limit in (1, 2, 3, 5):
        bounded = db.propose(REQUEST, families=False, limit=limit)
        assert bounded.status == "bounded"
        assert bounded.realizations == full.realizations[:limit]
    for timeout in (0.05, 0.5, 2.0):
        cut = db.propose(REQUEST, families=False, timeout=timeout)
        assert cut.realizations == full.realizations[: len(cut)]
        assert cut.status == ("complete" if len(cut) == len(full) else "timeout")
        if not len(cut):
            assert cut.message.startswith("no realization found before the timeout")
    first = db.propose(REQUEST, limit=1, timeout=30)
    assert first.status == "bounded" and first.realizations == full.realizations[:1]


def test_no_families_on_the_command_line_lists_every_member_on_its_own_row(capsys):
    from nablog.cli import main

    code = main(["propose", "nablog/examples/chairs.lp", "+staff_chair(aravindan, gerhard).", "--candidates", "herbrand", "--no-families", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "complete"
    assert len(out["realizations"]) == 2 + 5 and not any("family" in r for r in out["realizations"])
