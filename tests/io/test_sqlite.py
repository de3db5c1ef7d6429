"""SQLite databases: tables as relations, one transaction per write, affinity checks, exact errors."""

from __future__ import annotations

import sqlite3

import pytest

from nablog.io import open_source, sqlitedb
from nablog.lang import DataError


def make_db(path, *statements):
    conn = sqlite3.connect(path)
    for st in statements:
        conn.execute(st)
    conn.commit()
    conn.close()
    return path


def dump(path, table):
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute(f"SELECT rowid, * FROM {table}").fetchall(), key=repr)
    finally:
        conn.close()


def test_tables_are_relations_in_column_order(tmp_path):
    db = make_db(
        tmp_path / "g.db",
        "CREATE TABLE edge (dst INTEGER, src TEXT, label)",
        "INSERT INTO edge VALUES (2, 'a', 'x'), (3, 'b', NULL)",
        "CREATE TABLE node (id)",
        "INSERT INTO node VALUES ('00260881'), (-4)",
    )
    source = open_source(db)
    assert source.relations() == ["edge", "node"]
    assert source.load() == {"edge": {(2, "a", "x"), (3, "b", "")}, "node": {("00260881",), (-4,)}}
    assert source.load(["node", "missing"]) == {"node": {("00260881",), (-4,)}, "missing": set()}


def test_round_trip_creates_untyped_tables(tmp_path):
    rows = {(1, "a", "00260881"), ("12", -12, ""), ("with, comma", 'q"uote', "ünï ✓"), ("nul\x00byte", 0, "x")}
    db = tmp_path / "new.sqlite"
    open_source(db).write({"r": rows, "empty": set()})
    assert open_source(db).load() == {"r": rows}
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'r'").fetchone()[0] == 'CREATE TABLE "r" ("c0", "c1", "c2")'
    conn.close()


def test_write_deletes_and_inserts_only_the_difference(tmp_path):
    db = make_db(
        tmp_path / "g.sqlite3",
        "CREATE TABLE edge (src, dst)",
        "INSERT INTO edge VALUES (1, 2), (2, 3), (3, NULL)",
        "CREATE TABLE other (x)",
        "INSERT INTO other VALUES (1)",
    )
    open_source(db).write({"edge": {(1, 2), (3, ""), (4, 5)}})
    # Rows kept keep their rowid (and a stored NULL stays NULL); (2, 3) is gone; (4, 5) is new.
    assert dump(db, "edge") == sorted([(1, 1, 2), (3, 3, None), (4, 4, 5)], key=repr)
    assert dump(db, "other") == [(1, 1)]


def test_real_value_message(tmp_path):
    db = make_db(
        tmp_path / "tax.db",
        "CREATE TABLE tax (name TEXT, rate)",
        "INSERT INTO tax VALUES ('ann', 7), ('bob', 5.3)",
    )
    with pytest.raises(DataError) as info:
        open_source(db).load()
    assert str(info.value) == (
        "error: column rate of table tax holds the REAL value 5.3, which is not a Datalog constant\n"
        f"  --> {db}, table tax, rowid 2\n"
        "hint: nablog reads INTEGER and TEXT values only; convert the column, "
        "e.g. UPDATE tax SET rate = CAST(rate AS TEXT)"
    )


def test_blob_value_is_an_error(tmp_path):
    db = make_db(tmp_path / "b.db", "CREATE TABLE b (x)", "INSERT INTO b VALUES (x'00ff')")
    with pytest.raises(DataError, match=r"column x of table b holds the BLOB value b'\\x00\\xff'"):
        open_source(db).load()


def test_without_rowid_table(tmp_path):
    db = make_db(
        tmp_path / "w.db",
        "CREATE TABLE w (k PRIMARY KEY, v) WITHOUT ROWID",
        "INSERT INTO w VALUES (1, 'a'), (2, 'b')",
    )
    open_source(db).write({"w": {(1, "a"), (3, "c")}})
    assert open_source(db).load() == {"w": {(1, "a"), (3, "c")}}


def test_affinity_that_would_change_a_value_is_refused(tmp_path):
    db = make_db(
        tmp_path / "t.db",
        "CREATE TABLE person (name TEXT, zip INTEGER)",
        "INSERT INTO person VALUES ('ann', 12345)",
    )
    with pytest.raises(DataError) as info:
        open_source(db).write({"person": {("ann", 12345), ("bob", "00260881")}})
    assert str(info.value) == (
        "error: cannot store '00260881' in column zip of table person: "
        "SQLite would store it as 260881 (the column is declared INTEGER)\n"
        f"  --> {db}, table person\n"
        "hint: declare zip without a type (or as BLOB) so SQLite keeps integers and strings as they are"
    )
    with pytest.raises(DataError, match=r"cannot store 7 in column name of table person: SQLite would store it as '7'"):
        open_source(db).write({"person": {(7, 1)}})
    assert open_source(db).load() == {"person": {("ann", 12345)}}
    # Text that does not look like a number stays text in an INTEGER column.
    open_source(db).write({"person": {("bob", "n/a")}})
    assert open_source(db).load() == {"person": {("bob", "n/a")}}


def test_width_mismatch_is_an_error(tmp_path):
    db = make_db(tmp_path / "t.db", "CREATE TABLE e (a, b)")
    with pytest.raises(DataError, match="cannot store rows of width 3 in table e: it has 2 columns"):
        open_source(db).write({"e": {(1, 2, 3)}})


def test_not_a_database(tmp_path):
    path = tmp_path / "x.db"
    path.write_text("this is not sqlite, but it is long enough to have a header..........................")
    with pytest.raises(DataError) as info:
        open_source(path).load()
    assert str(info.value).startswith(f"error: cannot read {path}: not a SQLite database\n")


def test_missing_database(tmp_path):
    path = tmp_path / "missing.db"
    with pytest.raises(DataError, match="no such file"):
        open_source(path).load()
    assert not path.exists()
    assert open_source(path).relations() == []


def test_failure_in_the_middle_rolls_everything_back(tmp_path, monkeypatch):
    db = make_db(
        tmp_path / "g.db",
        "CREATE TABLE a (x)",
        "INSERT INTO a VALUES (1), (2)",
        "CREATE TABLE b (x)",
        "INSERT INTO b VALUES ('p')",
    )
    calls = []
    real = sqlitedb.insert_rows

    def fail_on_second(conn, table, rows):
        calls.append(table.name)
        if len(calls) == 2:
            raise RuntimeError("crash after the first relation was written")
        real(conn, table, rows)

    monkeypatch.setattr(sqlitedb, "insert_rows", fail_on_second)
    with pytest.raises(RuntimeError):
        open_source(db).write({"a": {(1,), (3,)}, "b": {("q",)}, "c": {(9,)}})
    assert calls == ["a", "b"]
    monkeypatch.undo()
    assert open_source(db).load() == {"a": {(1,), (2,)}, "b": {("p",)}}


def test_data_error_in_a_later_relation_rolls_back_an_earlier_one(tmp_path):
    db = make_db(tmp_path / "g.db", "CREATE TABLE a (x)", "INSERT INTO a VALUES (1)", "CREATE TABLE b (n INTEGER)")
    with pytest.raises(DataError, match="SQLite would store it as 5"):
        open_source(db).write({"a": {(2,)}, "b": {("5",)}})
    assert open_source(db).load() == {"a": {(1,)}, "b": set()}


def test_integer_beyond_64_bits_is_an_error(tmp_path):
    db = make_db(tmp_path / "g.db", "CREATE TABLE a (x)", "INSERT INTO a VALUES (1)")
    with pytest.raises(DataError, match="SQLite integers have 64 bits"):
        open_source(db).write({"a": {(2**63,)}})
    assert open_source(db).load() == {"a": {(1,)}}
