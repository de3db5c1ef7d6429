"""A proposal depends on the state, not on how the state was reached.

The python engine's constant dictionaries only grow: a commit that brings a constant in and one
that takes it out again leave it in the dictionary. The candidates of a proposal (most plainly
the Herbrand universe, every constant of the database) must be those of the tuples that hold now.
Found on the web page (issue 28): after an apply and its undo, ``--candidates herbrand`` offered
the undone commit's new group as a value.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.solver.test_bruteforce import BASE, databases
from tests.strategies import examples

from nablog import Database
from nablog.lang import Atom, BaseDeclaration
from nablog.lang.errors import ConstraintError

CHAIRS = """
staff_chair(X, Y) :- staff_group(X, Z), group_chair(Z, Y).
#constraint one_chair_per_group :- group_chair(G, X), group_chair(G, Y), X != Y.
#constraint one_group_per_chair :- group_chair(G, X), group_chair(H, X), G != H.
group_chair(infor1, matthias). group_chair(infor2, gerhard).
staff_group(delhibabu, infor1). staff_group(aravindan, infor1).
"""
REQUEST = "+staff_chair(aravindan, gerhard)."


def outcome(proposal) -> tuple:
    return proposal.status, [(r.changes.lines(), sorted(map(str, r.family.bindings)) if r.family else None) for r in proposal]


def test_an_undone_commits_constant_is_no_candidate(tmp_path):
    (tmp_path / "chairs.lp").write_text(CHAIRS)
    db = Database.from_files(tmp_path / "chairs.lp")
    before = outcome(db.propose(REQUEST, candidates="herbrand"))
    chosen = db.propose(REQUEST)[2]
    assert chosen.fresh == ("new1",)
    db.apply(chosen.substitute({"new1": "infor3"}))
    db.undo()
    after = outcome(db.propose(REQUEST, candidates="herbrand"))
    assert after == before
    assert after[1][1][1] == ["('aravindan',)", "('delhibabu',)", "('gerhard',)", "('matthias',)", "('new1',)"]


VISITORS = ["z1", "z2", 7]


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(databases(), st.data())
def test_a_proposal_after_commits_equals_the_proposal_of_a_fresh_load(case, data):
    # Rows with constants the database never had come in and go out again: the proposal is the
    # one a database loaded with the final facts gives.
    program, facts, (sign, atom) = case
    program = program.with_statements([BaseDeclaration(tuple(BASE.items()))])
    values = st.sampled_from(VISITORS + ["a", 0])
    visitors = data.draw(st.lists(st.sampled_from(sorted(BASE)).flatmap(lambda p: st.tuples(st.just(p), st.tuples(*[values] * BASE[p]))), min_size=1, max_size=3))
    added = sorted({Atom(p, row) for p, row in visitors if row not in facts.get(p, set())}, key=str)
    db = Database(program, facts)
    if not added:
        return
    try:
        db.commit(insert=added)
        db.commit(delete=added)
    except ConstraintError:  # a commit may not add violations (a denial with `not`: taking rows out)
        return
    fresh = Database(program, facts)
    request = f"{sign}{atom}."
    for candidates in ("herbrand", "attribute"):
        assert outcome(db.propose(request, candidates=candidates, max_fresh=1)) == outcome(fresh.propose(request, candidates=candidates, max_fresh=1))
