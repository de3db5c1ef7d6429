"""Views comparing numbers, dates and booleans as the database does (sql/ordered.py): exact rows on
PostgreSQL, SQLite and DuckDB, an insertion through such a view with a value no row holds yet
(applied, seen by the database's own SELECT, undone), and one refused because the value fails."""

from nablog import Database

from .conftest import fetch, run_script

SHOP = """
CREATE TABLE item (id INTEGER PRIMARY KEY, price NUMERIC(6, 2), since DATE, active BOOLEAN);
INSERT INTO item VALUES (1, 0.50, '2019-12-31', TRUE), (2, 10.00, '2020-01-01', FALSE), (3, NULL, NULL, NULL),
                        (4, 2.25, '2021-06-15', TRUE), (5, 0.99, '2020-01-01', TRUE);
CREATE VIEW dear AS SELECT id, price FROM item WHERE price > 0.99 AND active;
CREATE VIEW recent AS SELECT id FROM item WHERE since >= DATE '2020-01-01' AND NOT active;
CREATE VIEW cheap_or_old AS SELECT id FROM item WHERE price <= 0.990 OR since < '2020-01-01';
"""


def test_numbers_dates_and_booleans_compare_by_value(any_url):
    dialect = any_url.split(":", 1)[0]
    run_script(any_url, SHOP.replace("DATE '", "'") if dialect == "sqlite" else SHOP)
    db = Database.connect(any_url)
    assert not db.warnings, [str(w) for w in db.warnings]
    # '10.00' < '2.25' as text: by value, 10.00 > 0.99 but item 2 is not active; NULL passes nothing.
    assert db.query("dear(I, P)") == [(4, "2.25")]
    assert db.query("recent(I)") == [(2,)]
    assert db.query("cheap_or_old(I)") == [(1,), (5,)]
    for view in ("dear", "recent", "cheap_or_old"):
        expected = {tuple(str(v) if not isinstance(v, int) else v for v in row) for row in fetch(any_url, f"SELECT * FROM {view}")}
        assert set(db.relation(view)) == expected


def test_an_insertion_through_a_numeric_comparison(any_url):
    dialect = any_url.split(":", 1)[0]
    run_script(any_url, SHOP.replace("DATE '", "'") if dialect == "sqlite" else SHOP)
    db = Database.connect(any_url)
    price, true = ("12.5", 1) if dialect == "sqlite" else ("12.50", "true")  # as the database prints them
    request = f"INSERT INTO dear VALUES (6, {price})"
    [realization] = db.propose(request)
    # 12.50 is no row's price yet: the request's value is tested as stored ones are; active must be true.
    assert realization.changes.lines() == [f'+item(6, "{price}", new_since, {true})']
    assert list(db.propose("INSERT INTO dear VALUES (7, 0.25)")) == []
    db.apply(realization.substitute({"new_since": "2020-02-02"}), request)
    assert fetch(any_url, "SELECT id FROM dear ORDER BY id") == [(4,), (6,)]
    assert Database.connect(any_url).query("dear(6, P)") == [(6, price)]
    db.undo()
    assert fetch(any_url, "SELECT count(*) FROM item WHERE id = 6") == [(0,)]
