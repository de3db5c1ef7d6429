"""A realization's side effects (seed 002, Def. 2): computed only when asked for when they are large, and then exactly those of re-evaluating the database.

The oracle is the naive evaluator of ``test_bruteforce`` (nothing of nablog's engines): the model
of the base facts before and after the realization's changes, compared on the derived
predicates, without the requested atoms. ``KEPT_EFFECTS`` is lowered so that small examples take
the path a large update takes (counted at verification, computed when first asked for).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.solver.test_bruteforce import BASE, databases, naive_model
from tests.solver.test_recursive_insertion import RULES as CHAIN, chart, charts
from tests.strategies import examples

import nablog.lang.delta as realization  # KEPT_EFFECTS and induced_update live beside Delta
from nablog import Database
from nablog.lang import Atom, BaseDeclaration
from nablog.lang import Delta
from nablog.solver.realization import Verifier, sorted_atoms

CHAIRS = """
staff_chair(X,Y) :- staff_group(X,Z), group_chair(Z,Y).
#constraint one_chair :- group_chair(G,X), group_chair(G,Y), X != Y.
#constraint one_group :- group_chair(G,X), group_chair(H,X), G != H.
staff_group(aravindan, infor1). staff_group(delhibabu, infor1). staff_group(sachin, infor2).
group_chair(infor1, matthias). group_chair(infor2, gerhard).
"""


class kept:
    """``KEPT_EFFECTS`` set to ``n`` within a block (hypothesis tests take no function fixtures)."""

    def __init__(self, n: int):
        self.n = n

    def __enter__(self):
        self.saved, realization.KEPT_EFFECTS = realization.KEPT_EFFECTS, self.n

    def __exit__(self, *exc):
        realization.KEPT_EFFECTS = self.saved


def expected_effects(db: Database, r, request_atoms: set[str]) -> list[str]:
    """The oracle: derived atoms that appear and disappear when the changes are applied to the
    base facts, by naive evaluation before and after, without the requested atoms."""
    facts = {p: set(rows) for p, rows in db.facts.items()}
    before = naive_model(db.rules, facts)
    for a in r.insert:
        facts.setdefault(a.pred, set()).add(tuple(a.args))
    for a in r.delete:
        facts[a.pred].discard(tuple(a.args))
    after = naive_model(db.rules, facts)
    derived = db.rules.derived

    def atoms(one, other):
        return [Atom(p, row) for p in derived for row in one.get(p, set()) - other.get(p, set()) if str(Atom(p, row)) not in request_atoms]

    return Delta(sorted_atoms(atoms(after, before)), sorted_atoms(atoms(before, after))).lines()


def assert_side_effects(db: Database, r, request_atoms: set[str]) -> None:
    """The realization's side effects are the oracle's; a family shows its first member's, and
    each member has its own."""
    if r.family is None:
        assert r.side_effects.lines() == expected_effects(db, r, request_atoms)
        return
    members = r.members(side_effects=True)
    assert r.side_effects.lines() == expected_effects(db, members[0], request_atoms)
    for member in members:
        assert member.side_effects.lines() == expected_effects(db, member, request_atoms)


def test_large_side_effects_are_counted_at_verification_and_computed_when_first_asked(monkeypatch):
    # d0 (h0) over d1 (h1) over d2 (h2); e0, e1 in d2, e2 in d1. e2 should report to h2.
    facts = chart([0, 0, 1], [2, 2, 1])
    db = Database.from_text(CHAIN, facts)
    monkeypatch.setattr(realization, "KEPT_EFFECTS", 2)
    evaluations = []
    realizes = Verifier.realizes
    monkeypatch.setattr(Verifier, "realizes", lambda self, *changes: evaluations.append(changes) or realizes(self, *changes))
    proposal = db.propose("+reports_to(e2, h2).", limit=4)
    assert [r.changes.lines() for r in proposal] == [
        ["+emp_dept(h0, d2)"],
        ["+dept_head(d0, e0)", "-dept_head(d0, h0)"],
        ["+dept_head(d0, e1)", "-dept_head(d0, h0)"],
        ["+dept_head(d0, h2)", "-dept_head(d0, h0)"],
    ]
    verified = len(evaluations)
    # Every one changes more than two atoms: counted, not computed.
    assert [r.side_effects.count() for r in proposal] == [(7, 0), (9, 6), (9, 6), (4, 6)]
    assert [len(r.side_effects) for r in proposal] == [7, 15, 15, 10]
    assert not any(r.side_effects.computed for r in proposal) and len(evaluations) == verified
    assert repr(proposal[3].side_effects) == "Delta(+4, -6)"
    # Asked for, the effects are one re-evaluation each time, and not kept (they are large).
    assert proposal[3].side_effects.lines() == [
        "+manager(h1, h2)",
        "+reports_to(h1, h1)",
        "+reports_to(h1, h2)",
        "+reports_to(h2, h2)",
        "-manager(h1, h0)",
        "-reports_to(e0, h0)",
        "-reports_to(e1, h0)",
        "-reports_to(e2, h0)",
        "-reports_to(h1, h0)",
        "-reports_to(h2, h0)",
    ]
    assert not proposal[3].side_effects.computed and len(evaluations) == verified + 1
    assert proposal[3].side_effects.to_json()["delete"][0] == "manager(h1, h0)" and len(evaluations) == verified + 2
    assert proposal[3].side_effects.count("manager") == (1, 1) and len(evaluations) == verified + 3
    for r in proposal:
        assert r.side_effects.lines() == expected_effects(db, r, {"reports_to(e2, h2)"})
    # Small enough to keep (at most KEPT_EFFECTS atoms): computed once, then held.
    monkeypatch.setattr(realization, "KEPT_EFFECTS", 10)
    assert proposal[3].side_effects.lines() == expected_effects(db, proposal[3], {"reports_to(e2, h2)"})
    asked = len(evaluations)
    assert proposal[3].side_effects.computed and proposal[3].side_effects.count() == (4, 6)
    assert proposal[3].side_effects.to_json()["insert"][0] == "manager(h1, h2)" and len(evaluations) == asked


def test_the_chairs_example_has_the_same_side_effects_lazy_or_kept():
    for request in ("+staff_chair(aravindan, gerhard).", "-staff_chair(delhibabu, matthias).", "+staff_chair(sachin, matthias)."):
        shown = {}
        for n in (0, realization.KEPT_EFFECTS):
            with kept(n):
                db = Database.from_text(CHAIRS)
                proposal = db.propose(request)
                shown[n] = (proposal.to_json(), [r.explain() for r in proposal])
                for r in proposal:
                    assert r.side_effects.lines() == expected_effects(db, r, {request[1:-1]})
        assert shown[0] == shown[realization.KEPT_EFFECTS]
    with kept(0):
        proposal = Database.from_text(CHAIRS).propose("-staff_chair(delhibabu, matthias).")
        assert not proposal[0].side_effects.computed
        assert proposal[0].side_effects.lines() == ["-staff_chair(aravindan, matthias)"]


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(databases(), st.sampled_from([0, 1, 1000]))
def test_side_effects_of_generated_programs_equal_naive_reevaluation(case, threshold):
    program, facts, (sign, atom) = case
    db = Database(program.with_statements([BaseDeclaration(tuple(BASE.items()))]), facts)
    with kept(threshold):
        proposal = db.propose(f"{sign}{atom}.", candidates="herbrand", max_fresh=1)
        for r in proposal:
            if not r.size:
                continue  # the request holds already
            assert_side_effects(db, r, {str(atom)})


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(charts(), st.sampled_from([0, 3]))
def test_side_effects_of_recursive_insertions_equal_naive_reevaluation(case, threshold):
    facts, x, y = case
    db = Database.from_text(CHAIN, facts)
    with kept(threshold):
        proposal = db.propose(f"+reports_to({x}, {y}).", candidates="herbrand", max_fresh=1, limit=6)
        for r in proposal:
            counted = r.side_effects.count()
            assert_side_effects(db, r, {f"reports_to({x}, {y})"})
            assert r.side_effects.count() == counted


def test_a_substituted_realization_has_the_side_effects_of_its_values():
    with kept(0):
        db = Database.from_text(CHAIRS)
        proposal = db.propose("+staff_chair(aravindan, gerhard).")
        fresh = next(r for r in proposal if r.fresh)
        chosen = fresh.substitute({"new1": "infor9"})
        assert not chosen.side_effects.computed
        assert chosen.side_effects.lines() == [line.replace("new1", "infor9") for line in fresh.side_effects.lines()]
        assert chosen.side_effects.lines() == expected_effects(db, chosen, {"staff_chair(aravindan, gerhard)"})


def test_the_server_builds_a_proposals_json_off_the_event_loop(monkeypatch, tmp_path):
    pytest.importorskip("starlette")
    from starlette.requests import Request

    from nablog.server.app import create_app

    monkeypatch.setattr(realization, "KEPT_EFFECTS", 0)
    expected = Database.from_text(CHAIRS).propose("-staff_chair(delhibabu, matthias).").to_json()
    calls = tmp_path / "calls"  # the search runs in a child process (nablog.apart): it writes down where it ran
    induced = realization.induced_update

    def noted(*args):
        with open(calls, "a") as f:
            f.write(f"{os.getpid()} {threading.get_ident()}\n")
        return induced(*args)

    monkeypatch.setattr(realization, "induced_update", noted)
    db = Database.from_text(CHAIRS)
    server = create_app(db, "token").state.server
    body = json.dumps({"request": "-staff_chair(delhibabu, matthias)."}).encode()

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    async def ask():
        loop_thread = f"{os.getpid()} {threading.get_ident()}"
        scope = {"type": "http", "method": "POST", "path": "/propose", "headers": [(b"authorization", b"Bearer token")], "query_string": b""}
        response = await server.propose(Request(scope, receive))
        return loop_thread, json.loads(response.body)

    loop_thread, answer = asyncio.run(ask())
    assert answer["realizations"][0]["side_effects"] == {"insert": [], "delete": ["staff_chair(aravindan, matthias)"]}
    assert answer == {"version": 0, **expected}
    # Both realizations counted at verification, the one with side effects (the other has none,
    # and is kept as it is) computed again for the JSON: all off the event loop (in the child).
    threads = calls.read_text().splitlines()
    assert len(threads) == 3 and loop_thread not in threads
