"""The classes of interchangeable values kept across commits equal those built afresh.

A state's :class:`~nablog.solver.symmetry.Folding` is brought up to date from each commit's gained
and lost tuples (:meth:`Folding.maintained`) instead of built again over every fact (issue 29:
0.5 s at 1e6 facts after every commit). The oracle is :meth:`Folding.of` over the state the
commits lead to: the same classes and representatives, the same values visible at every place,
and for every value the same classes once a request names it (which reads the private values
and the facts holding them).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import examples

from nablog import Database
from nablog.lang import parse
from nablog.solver.symmetry import Folding

ARITY = {"ed": 2, "dh": 2, "t": 3}
RULES = parse("m(E, H) :- ed(E, D), dh(D, H). w(X) :- t(X, Y, Z), dh(Y, Z).")
DISTINGUISHED = {"d0", "h9"}
VALUES = ["d0", "d1", "d2", "d3", "e1", "e2", "e3", "e4", "h1", "h2", "h9", 1, 2, "new"]


def relations(draw_rows):
    return {p: set(rows) for p, rows in draw_rows.items()}


def state(f: Folding, domain: list) -> tuple:
    """What a folding tells a request, read through its public methods only."""
    def shown(g: Folding) -> tuple:
        visible = tuple(sorted(map(repr, g.visible(p, i) or ())) for p in sorted(ARITY) for i in range(ARITY[p]))
        return tuple(g.classes), visible, g.exact_size

    return shown(f), tuple(shown(f.for_request({v})) for v in domain)


rows = {p: st.sets(st.tuples(*[st.sampled_from(VALUES)] * a), max_size=10) for p, a in ARITY.items()}
commit = st.fixed_dictionaries({p: st.tuples(st.sets(st.tuples(*[st.sampled_from(VALUES)] * a), max_size=3), st.integers(0, 3)) for p, a in ARITY.items()})


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries(rows), st.lists(commit, min_size=1, max_size=4), st.integers(2, 3), st.integers(1, 3))
def test_maintained_classes_equal_a_fresh_build(start, commits, least, representatives):
    facts = relations(start)
    folding = Folding.of(RULES, facts, list(ARITY), DISTINGUISHED, least=least, representatives=representatives)
    for change in commits:
        gained, lost = {}, {}
        for p, (inserted, deletions) in change.items():
            present = sorted(facts[p], key=repr)
            lost[p] = set(present[:deletions]) - inserted
            gained[p] = inserted - facts[p]
            facts[p] = (facts[p] - lost[p]) | gained[p]
        folding = folding.maintained(gained, lost) if folding is not None else None
        if folding is None:  # a relation became empty or appeared: built again, as the state does
            folding = Folding.of(RULES, facts, list(ARITY), DISTINGUISHED, least=least, representatives=representatives)
        fresh = Folding.of(RULES, facts, list(ARITY), DISTINGUISHED, least=least, representatives=representatives)
        domain = sorted({v for r in facts.values() for row in r for v in row} | set(VALUES), key=repr)
        assert state(folding, domain) == state(fresh, domain)


def test_a_commit_keeps_the_state_tables_up_to_date():
    # An org chart of departments of four: the departments other than d0 are interchangeable
    # until a commit gives d3 a fifth employee; the state's folding follows the commit.
    text = "manager(E, H) :- emp(E, D), head(D, H).\n"
    text += " ".join(f"emp(e{d}_{k}, d{d}). head(d{d}, h{d})." for d in range(20) for k in range(4))
    db = Database.from_text(text)
    db.prepare()
    before = [c.values for c in _folding(db).classes]
    assert ("d1" in before[0]) and ("d3" in before[0])
    db.commit(["emp(x, d3)"])
    kept = _folding(db)
    db2 = Database.from_text(text + " emp(x, d3).")
    db2.prepare()
    fresh = _folding(db2)
    domain = sorted({v for r in db2.python_model().values() for row in r for v in row}, key=repr)
    assert state(kept, domain[:12]) == state(fresh, domain[:12])
    assert all("d3" not in c.values for c in kept.classes)
    db.commit(delete=["emp(x, d3)"])
    assert [c.values for c in _folding(db).classes] == before


def _folding(db) -> Folding:
    (found,) = [t for k, t in db.state.index().tables.items() if isinstance(k, tuple) and k[0] == "folding"]
    return found
