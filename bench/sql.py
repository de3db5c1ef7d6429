"""SQL databases: reading a database by URL vs reading its CSV export, and apply vs the same statements by hand.

For Chinook (../shared/data/chinook) and an org chart of N employees (employee(id, boss), a
foreign key to itself), in PostgreSQL (a throwaway server), SQLite and DuckDB:

- load: ``Database.connect(url)`` (catalogue, translation, every table read) beside reading the
  same rows from CSV with Python's csv module (the floor any CSV reader pays), as a ratio;
- apply: ``Database.apply`` of a change of 20 rows (delete 10, insert 10: one transaction with
  the staleness check and the undo log) beside running the same DELETE and INSERT statements by
  hand in one transaction, as a ratio (the goal: within 2x); the median of three applies after
  one untimed warm apply (the first of a process imports the solver).

- first: on Chinook, the seconds from connecting to the first realization of
  ``INSERT INTO track_info VALUES (…)`` (the join view of the README), and to the whole answer.

Usage: nice python bench/sql.py [--rows N] [--only postgres,sqlite,duckdb]
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nablog import Database  # noqa: E402
from nablog.examples.chinook import load as load_chinook  # noqa: E402
from nablog.lang import Delta  # noqa: E402
from nablog.sql.connection import Url  # noqa: E402
from nablog.sql.server import TemporaryServer  # noqa: E402
from tests.shared_data import DATA  # noqa: E402  (../shared/data, or $NABLOG_SHARED_DATA)



def new_url(dialect: str, server, directory: Path, name: str) -> str:
    if dialect == "postgres":
        import psycopg

        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return server.url.rsplit("/", 1)[0] + "/" + name
    suffix = "db" if dialect == "sqlite" else "duckdb"
    path = directory / f"{name}.{suffix}"
    if dialect == "sqlite":
        import sqlite3

        sqlite3.connect(path).close()
    return f"{'sqlite' if dialect == 'sqlite' else 'duckdb'}:///{path}"


def org_chart(url: str, rows: int, directory: Path) -> Path:
    """employee(id, boss): a tree, each employee's boss an earlier one; also written as CSV."""
    path = directory / f"org{rows}.csv"
    if not path.exists():
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "boss"])
            w.writerow([1, ""])
            for i in range(2, rows + 1):
                w.writerow([i, i // 2])
    target = Url.parse(url)
    conn = target.connect() if target.dialect != "sqlite" else __import__("sqlite3").connect(target.target, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.execute("CREATE TABLE employee (id INTEGER PRIMARY KEY, boss INTEGER REFERENCES employee (id))")
        if target.dialect == "postgres":
            with conn.cursor().copy("COPY employee FROM STDIN") as copy:
                copy.write_row((1, None))
                for i in range(2, rows + 1):
                    copy.write_row((i, i // 2))
        elif target.dialect == "duckdb":
            low = 1  # DuckDB checks a self-reference row by row: one level of the tree at a time
            while low <= rows:
                high = min(2 * low, rows + 1)
                conn.execute("INSERT INTO employee SELECT i, CASE WHEN i = 1 THEN NULL ELSE i // 2 END FROM range(?, ?) t(i)", [low, high])
                low = high
        else:
            conn.executemany("INSERT INTO employee VALUES (?, ?)", ((i, i // 2 if i > 1 else None) for i in range(1, rows + 1)))
        conn.execute("CREATE VIEW manages AS SELECT b.id AS boss, e.id AS report FROM employee e JOIN employee b ON e.boss = b.id")
        conn.execute("COMMIT")
    finally:
        conn.close()
    return path


def csv_seconds(paths: list[Path]) -> float:
    start = time.perf_counter()
    for p in paths:
        with open(p, newline="", encoding="utf-8") as f:
            set(map(tuple, csv.reader(f)))
    return time.perf_counter() - start


def by_hand(url: str, delta: Delta, store) -> float:
    """The statements an apply runs (``apply --sql``), by hand in one transaction."""
    statements = store.statements(delta)
    target = Url.parse(url)
    conn = target.connect()
    start = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE" if target.dialect == "sqlite" else "BEGIN")
    for s in statements:
        conn.execute(s)
    conn.execute("COMMIT")
    seconds = time.perf_counter() - start
    conn.close()
    return seconds


def measure(name: str, url: str, csvs: list[Path], table: str, change_rows) -> dict:
    start = time.perf_counter()
    db = Database.connect(url)
    load = time.perf_counter() - start
    floor = csv_seconds(csvs)
    rows = sorted(db.facts[table])[-10:]  # the last rows: in the org chart, leaves (nothing refers to them)
    delete = {table: set(rows)}
    insert = {table: set(change_rows)}
    delta = Delta.of_rows(insert, delete)
    start = time.perf_counter()
    db.model()  # the model apply maintains: computed once, not part of an apply
    model = time.perf_counter() - start
    db.apply(delta)  # once untimed: the first apply imports the solver and builds what later ones reuse
    db.undo()
    times = []
    for _ in range(3):  # the median of three, each undone (untimed) to put the rows back
        start = time.perf_counter()
        db.apply(delta)
        times.append(time.perf_counter() - start)
        db.undo()
    applied = sorted(times)[1]
    hand = by_hand(url, delta, db.stores)
    db.stores.close()
    return {"case": name, "load": load, "csv": floor, "model": model, "apply": applied, "hand": hand, "first": None, "all": None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="employees in the org chart (default 1e6)")
    parser.add_argument("--only", default="postgres,sqlite,duckdb")
    args = parser.parse_args(argv)
    dialects = args.only.split(",")
    directory = Path(tempfile.mkdtemp(prefix="nablog-bench-sql-"))
    chinook = DATA / "chinook"
    server = TemporaryServer().start() if "postgres" in dialects else None
    results = []
    try:
        for dialect in dialects:
            url = new_url(dialect, server, directory, "chinook")
            load_chinook(url, chinook)
            results.append(_chinook_case(dialect, url, chinook))
            url = new_url(dialect, server, directory, "org")
            csv_path = org_chart(url, args.rows, directory)
            results.append(measure(f"org {args.rows:,}/{dialect}", url, [csv_path], "employee", [(args.rows + 1 + i, 1) for i in range(10)]))
            print(results[-2], results[-1], file=sys.stderr, flush=True)
    finally:
        if server is not None:
            server.stop()
    print(f"{'case':<24} {'connect s':>10} {'csv read s':>10} {'ratio':>7} {'model s':>8} {'apply ms':>9} {'by hand ms':>10} {'ratio':>7} {'first s':>8} {'all s':>6}")
    for r in results:
        first = f"{r['first']:>8.2f} {r['all']:>6.2f}" if r["first"] is not None else f"{'-':>8} {'-':>6}"
        print(f"{r['case']:<24} {r['load']:>10.2f} {r['csv']:>10.2f} {r['load'] / r['csv']:>6.1f}x {r['model']:>8.2f} {r['apply'] * 1000:>9.1f} {r['hand'] * 1000:>10.1f} {r['apply'] / r['hand']:>6.1f}x {first}")
    return 0


def _chinook_case(dialect: str, url: str, chinook: Path) -> dict:
    """Chinook: delete 10 playlist entries (nothing references them) and insert 10 others; and the
    README's insertion through track_info, timed from connecting."""
    start = time.perf_counter()
    db = Database.connect(url)
    handle = db.propose(INSERTION, stream=True)
    next(iter(handle))
    first = time.perf_counter() - start
    handle.get()
    whole = time.perf_counter() - start
    have = db.facts["playlisttrack"]
    db.stores.close()
    tracks = sorted({r[1] for r in have})
    free = [(18, t) for t in tracks if (18, t) not in have][:10]
    return {**measure(f"chinook/{dialect}", url, sorted(chinook.glob("*.csv")), "playlisttrack", free), "first": first, "all": whole}


INSERTION = "INSERT INTO track_info VALUES (3504, 'Thunderstruck (live)', 'For Those About To Rock We Salute You', 'AC/DC', 'Rock');"


if __name__ == "__main__":
    sys.exit(main())
