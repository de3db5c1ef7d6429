"""A new row's foreign key into a small lookup table takes each of its keys in the search by
bound lookups (solver/floors.py, SMALL_REFERENCED), and a column only a NOT NULL denial reads stays
free (solver/free.py): inserting a Chinook track through a view that names no media type is one
row per media type, with a new value of its own in each column nothing reads."""

from nablog.database import Database
from nablog.lang import Atom
from nablog.solver.ground import Relevance, ground_atom

PROGRAM = """
#columns media(id, name). #columns track(id, name, media, ms).
#key media: id. #key track: id.
#fk track: media -> media: id.
:- track(_, _, _, M), M = "".
v(T, N) :- track(T, N, _, _).
media(1, "MPEG"). media(2, "AAC"). media(3, "WAV").
track(1, "a", 1, 100).
"""


def test_insertion_takes_each_key_of_a_lookup_table():
    db = Database.from_text(PROGRAM)
    base = (set(db.rules.signatures) | set(db.state.facts)) - set(db.rules.derived)
    relevance = Relevance(db.rules, db.state.python_model(), base, group_fds=True, free_values=True, supported=True)
    problem = relevance.solve([ground_atom(Atom("v", (5, "x")))], [])
    inserted = [a[1] for sign, a in problem.candidates if sign == "+" and a[0] == "track"]
    assert inserted == [(5, "x", 1, "new_ms"), (5, "x", 2, "new_ms"), (5, "x", 3, "new_ms"), (5, "x", "new1", "new_ms")]
