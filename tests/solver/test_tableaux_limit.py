"""`--limit N` bounds the tableaux' work: deepening by size, the answer is the N smallest.

The update tableau is explored with branches closed once their hitting set exceeds k changes,
k = 1, 2, … (`tableaux.enumerate_realizations`), until the realizations found fill the limit. The
answer must be the first N of the unlimited smallest-first list (and of brute force's sizes), and
a limited search on a database with many realizations must stop early — counted in literals put
on branches, not timed.
"""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.strategies import examples

from nablog import Database
from nablog.lang import BaseDeclaration
from nablog.solver import tableaux
from nablog.tableaux.explanations import layered_dag

from .test_bruteforce import BASE, brute_force, databases, free_positions

METHODS = ("tableaux", "tableaux-materialized")


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(databases(), st.integers(1, 4), st.booleans())
def test_a_limited_tableaux_search_gives_the_first_n_of_the_unlimited_list(case, limit, families):
    program, facts, (sign, atom) = case
    db = Database(program.with_statements([BaseDeclaration(tuple(BASE.items()))]), facts)
    request = f"{sign}{atom}."
    sizes = sorted(len(i) + len(d) for i, d in brute_force(program, facts, (sign, atom), free_positions(program, atom.pred)))
    for method in METHODS:
        full = db.propose(request, method=method, candidates="herbrand", max_fresh=1, families=families)
        limited = db.propose(request, method=method, candidates="herbrand", max_fresh=1, families=families, limit=limit)
        assert limited.realizations == full.realizations[:limit], method
        assert [[m.changes.lines() for m in r.members()] for r in limited] == [[m.changes.lines() for m in r.members()] for r in full[:limit]]
        if not families and method == "tableaux":
            assert [r.size for r in limited] == sizes[:limit]
        if len(full) > limit:
            assert limited.status == "bounded"
        elif len(full) < limit:
            assert limited.status == full.status
        else:
            # Stopped with the limit's realizations all found, before knowing there are no more.
            assert limited.status in ("bounded", full.status)


def _explored(db, request, **options):
    """The proposal and the literals its tableau put on branches (every pass counted)."""
    made = []
    original = tableaux.update_tableau

    def keep(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    with mock.patch.object(tableaux, "update_tableau", keep):
        proposal = db.propose(request, **options)
    return proposal, sum(t.tableau.steps for t in made)


@pytest.mark.parametrize("method", METHODS)
def test_a_limited_search_over_many_realizations_stops_early(method):
    # -tc(s, t) over 3 layers of width 3: its realizations are the minimal edge cuts (dozens),
    # the smallest the three edges out of s (or into t).
    db = Database.from_text("tc(X, Y) :- e(X, Y). tc(X, Y) :- e(X, Z), tc(Z, Y).", {"e": layered_dag(3, 3)})
    full, everything = _explored(db, "-tc(s, t).", method=method, families=False)
    limited, some = _explored(db, "-tc(s, t).", method=method, families=False, limit=2)
    assert len(full) > 20 and full.status == "complete"
    assert (limited.status, limited.realizations) == ("bounded", full.realizations[:2])
    assert [r.size for r in limited] == [3, 3]
    # Branches asking for more than 3 changes are never explored: a fraction of the work.
    assert some * 4 < everything, (some, everything)
