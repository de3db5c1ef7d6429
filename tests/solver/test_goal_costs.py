"""Goals cut by size: once the search knows the answer lists realizations of at most ``floor``
changes, a goal every realization through which needs more is left out (solver/ground.py, the
costs of goals). Deleting a row of a join view whose genre has many tracks must not ask, for each
of them, what its own deletion would need (Chinook: 1,297 Rock tracks and their playlists)."""

from nablog.database import Database
from nablog.solver.ground import Relevance, ground_atom
from nablog.lang import Atom

N = 30
PROGRAM = """
#columns genre(id, name). #columns track(id, name, genre). #columns pl(list, track).
#key genre: id. #key track: id. #key pl: list, track.
#fk track: genre -> genre: id. #fk pl: track -> track: id.
info(T, N, G) :- track(T, N, Gi), genre(Gi, G).
"""


def _db() -> Database:
    facts = ['genre(1, "Rock").'] + [f'track({i}, "s{i}", 1).' for i in range(1, N + 1)] + [f"pl({k}, {i})." for i in range(1, N + 1) for k in (1, 2, 3)]
    return Database.from_text(PROGRAM + "\n".join(facts))


def _problem(db: Database):
    rules, state = db.rules, db.state
    base = (set(rules.signatures) | set(state.facts)) - set(rules.derived)
    relevance = Relevance(rules, state.python_model(), base, group_fds=True, free_values=True, supported=True)
    return relevance, relevance.solve([], [ground_atom(Atom("info", (1, "s1", "Rock")))])


def test_goals_past_the_floor_are_left_out():
    relevance, problem = _problem(_db())
    assert relevance.floor == 2 and problem.complete_up_to == 1
    # The other Rock tracks are asked to go (two changes with the genre's deletion) but not
    # what their own deletion would need: their playlist rows (three changes) are left out.
    deleted = sorted(a[1] for sign, a in problem.candidates if sign == "-" and a[0] == "pl")
    assert deleted == [(1, 1), (2, 1), (3, 1)]
    assert sum(1 for sign, a in problem.candidates if sign == "-" and a[0] == "track") == N
    assert relevance.cost[("-", ("genre", (1, "Rock")))] == 1
    assert relevance.cost[("-", ("track", (2, "s2", 1)))] == 2


