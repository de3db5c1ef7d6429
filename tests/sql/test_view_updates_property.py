"""Property: view updates through SQL views equal brute force, the database being the oracle.

Every change set of at most two base rows (the values in use and one new constant) is applied to an
in-memory SQLite copy of the schema; those after which the database's own SELECT on the view
shows the request done (and which the database accepts: keys hold) are the realizations, the
subset-minimal ones are compared with nablog's proposal of that size. Then a realization is
applied by nablog and the database's own SELECT shows the request done."""

import itertools
import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nablog import Database
from nablog.lang import Atom

from ..strategies import examples
from .conftest import fetch

SCHEMA = "CREATE TABLE r (x INTEGER PRIMARY KEY); CREATE TABLE s (x INTEGER NOT NULL, y INTEGER NOT NULL);"
VIEWS = [
    "SELECT s.x, s.y FROM s JOIN r ON s.x = r.x",
    "SELECT s.x FROM s WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.x = s.y)",
    "SELECT x FROM r UNION SELECT y FROM s",
    "SELECT x FROM r EXCEPT SELECT x FROM s",
    "SELECT s.x, s.y FROM s JOIN r ON s.y = r.x WHERE s.x < s.y",
]
MOST = 2
_files = itertools.count()


def state_rows(r: set, s: set) -> str:
    return "".join(f"INSERT INTO r VALUES ({_sql(x)});" for (x,) in sorted(r, key=str)) + "".join(
        f"INSERT INTO s VALUES ({_sql(x)}, {_sql(y)});" for x, y in sorted(s, key=str))


def _sql(v) -> str:
    return str(v) if isinstance(v, int) else f"'{v}'"


def view_rows(view: str, r: set, s: set) -> set | None:
    """The view's rows in the state (r, s) as SQLite computes them; None when SQLite refuses it."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(SCHEMA + f"CREATE VIEW v AS {view};" + state_rows(r, s))
    except sqlite3.IntegrityError:
        return None
    return {tuple(row) for row in conn.execute("SELECT * FROM v")}


def brute_force(view: str, r: set, s: set, sign: str, row: tuple) -> set:
    # The values of the state and the request, and one new constant (nablog's herbrand candidates).
    values = sorted({v for t in (*r, *s, row) for v in t}) + ["new1"]
    changes = [("r", (v,)) for v in values] + [("s", (a, b)) for a in values for b in values]
    found: list[frozenset] = []
    for size in range(MOST + 1):
        for chosen in itertools.combinations(changes, size):
            chosen = frozenset(chosen)
            if any(m <= chosen for m in found):
                continue
            new = {"r": set(r), "s": set(s)}
            for pred, t in chosen:
                new[pred] ^= {t}
            rows = view_rows(view, new["r"], new["s"])
            if rows is not None and (row in rows) == (sign == "+"):
                found.append(chosen)
    old = {"r": r, "s": s}
    return {(frozenset(str(Atom(p, t)) for p, t in m if t not in old[p]), frozenset(str(Atom(p, t)) for p, t in m if t in old[p])) for m in found}


def each_value(x, values: list) -> set:
    """The realizations a realization with free values (``new_x``) stands for, one per value of each."""
    atoms = (*x.insert, *x.delete)
    free = sorted({c for a in atoms for c in a.args if isinstance(c, str) and c.startswith("new_")})
    out = set()
    for chosen in itertools.product(values, repeat=len(free)):
        put = dict(zip(free, chosen))
        out.add(tuple(frozenset(str(Atom(a.pred, tuple(put.get(c, c) for c in a.args))) for a in side) for side in (x.insert, x.delete)))
    return out


@st.composite
def cases(draw):
    view = draw(st.sampled_from(VIEWS))
    r = draw(st.sets(st.tuples(st.integers(0, 2)), max_size=3))
    s = draw(st.sets(st.tuples(st.integers(0, 2), st.integers(0, 2)), max_size=3))
    current = view_rows(view, r, s)
    width = len(next(iter(current))) if current else (2 if "s.y FROM" in view else 1)
    sign = draw(st.sampled_from("+-")) if current else "+"
    if sign == "-":
        row = draw(st.sampled_from(sorted(current)))
    else:
        row = draw(st.tuples(*[st.integers(0, 2)] * width).filter(lambda t: t not in current))
    return view, r, s, sign, row


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=cases())
def test_view_updates_through_sql_views_equal_brute_force(tmp_path, case):
    view, r, s, sign, row = case
    path = tmp_path / f"v{next(_files)}.db"
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA + f"CREATE VIEW v AS {view};" + state_rows(r, s))
    conn.close()
    url = f"sqlite:///{path}"
    db = Database.connect(url)
    assert not db.warnings
    request = f"{sign}{Atom('v', row)}."
    proposal = db.propose(request, candidates="herbrand", max_fresh=1, families=False)
    # A free value (a NOT NULL column no view reads: new_x) stands for every value there.
    values = sorted({v for t in (*r, *s, row) for v in t}) + ["new1"]
    got = {realization for x in proposal if len(x.insert) + len(x.delete) <= MOST for realization in each_value(x, values)}
    assert got == brute_force(view, r, s, sign, row), (view, request)
    ground = [x for x in proposal if not x.fresh]
    if ground:
        db.apply(ground[0], request)
        shown = {tuple(t) for t in fetch(url, "SELECT * FROM v")}
        assert (row in shown) == (sign == "+")
    db.stores.close()
