"""Load the Chinook music store into a SQL database and create the join view track_info.

Usage: python nablog/examples/chinook.py URL [CHINOOK_DIR]

URL is postgresql://…, sqlite:///path.db or duckdb:///path.duckdb (an empty database: the
tables are created); CHINOOK_DIR holds the CSV exports (default ../shared/data/chinook). The
schema is Chinook's own (lerocha/chinook-database): its keys, foreign keys, NOT NULLs and types
(numeric prices, timestamps). An empty CSV field is NULL.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

SCHEMA = """
CREATE TABLE artist (artistid INTEGER PRIMARY KEY, name VARCHAR(120));
CREATE TABLE album (albumid INTEGER PRIMARY KEY, title VARCHAR(160) NOT NULL, artistid INTEGER NOT NULL REFERENCES artist (artistid));
CREATE TABLE employee (employeeid INTEGER PRIMARY KEY, lastname VARCHAR(20) NOT NULL, firstname VARCHAR(20) NOT NULL, title VARCHAR(30),
    reportsto INTEGER REFERENCES employee (employeeid), birthdate TIMESTAMP, hiredate TIMESTAMP, address VARCHAR(70), city VARCHAR(40),
    state VARCHAR(40), country VARCHAR(40), postalcode VARCHAR(10), phone VARCHAR(24), fax VARCHAR(24), email VARCHAR(60));
CREATE TABLE customer (customerid INTEGER PRIMARY KEY, firstname VARCHAR(40) NOT NULL, lastname VARCHAR(20) NOT NULL, company VARCHAR(80),
    address VARCHAR(70), city VARCHAR(40), state VARCHAR(40), country VARCHAR(40), postalcode VARCHAR(10), phone VARCHAR(24), fax VARCHAR(24),
    email VARCHAR(60) NOT NULL, supportrepid INTEGER REFERENCES employee (employeeid));
CREATE TABLE genre (genreid INTEGER PRIMARY KEY, name VARCHAR(120));
CREATE TABLE invoice (invoiceid INTEGER PRIMARY KEY, customerid INTEGER NOT NULL REFERENCES customer (customerid), invoicedate TIMESTAMP NOT NULL,
    billingaddress VARCHAR(70), billingcity VARCHAR(40), billingstate VARCHAR(40), billingcountry VARCHAR(40), billingpostalcode VARCHAR(10),
    total NUMERIC(10,2) NOT NULL);
CREATE TABLE mediatype (mediatypeid INTEGER PRIMARY KEY, name VARCHAR(120));
CREATE TABLE track (trackid INTEGER PRIMARY KEY, name VARCHAR(200) NOT NULL, albumid INTEGER REFERENCES album (albumid),
    mediatypeid INTEGER NOT NULL REFERENCES mediatype (mediatypeid), genreid INTEGER REFERENCES genre (genreid), composer VARCHAR(220),
    milliseconds INTEGER NOT NULL, bytes INTEGER, unitprice NUMERIC(10,2) NOT NULL);
CREATE TABLE invoiceline (invoicelineid INTEGER PRIMARY KEY, invoiceid INTEGER NOT NULL REFERENCES invoice (invoiceid),
    trackid INTEGER NOT NULL REFERENCES track (trackid), unitprice NUMERIC(10,2) NOT NULL, quantity INTEGER NOT NULL);
CREATE TABLE playlist (playlistid INTEGER PRIMARY KEY, name VARCHAR(120));
CREATE TABLE playlisttrack (playlistid INTEGER NOT NULL REFERENCES playlist (playlistid), trackid INTEGER NOT NULL REFERENCES track (trackid),
    PRIMARY KEY (playlistid, trackid));
CREATE VIEW track_info AS
    SELECT t.trackid, t.name, al.title AS album, ar.name AS artist, g.name AS genre
    FROM track t JOIN album al ON t.albumid = al.albumid JOIN artist ar ON al.artistid = ar.artistid JOIN genre g ON t.genreid = g.genreid;
"""

ORDER = ["Artist", "Album", "Employee", "Customer", "Genre", "Invoice", "MediaType", "Track", "InvoiceLine", "Playlist", "PlaylistTrack"]
"""Referenced tables first, so every foreign key holds as rows arrive."""


def rows(path: Path) -> tuple[list[str], list[list]]:
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        return header, [[None if v == "" else v for v in row] for row in reader]


def load(url: str, directory: Path) -> int:
    """Create the schema at ``url`` and load every table; the number of rows loaded."""
    from nablog.sql.connection import Url

    target = Url.parse(url)
    if target.dialect == "sqlite":
        import sqlite3

        conn = sqlite3.connect(target.target, isolation_level=None)
    else:
        conn = target.connect()
    total = 0
    try:
        statements = [s for s in SCHEMA.split(";") if s.strip()]
        if target.dialect == "sqlite":
            conn.execute("BEGIN")
        elif target.dialect == "postgres":
            conn.execute("BEGIN")
        else:
            conn.execute("BEGIN TRANSACTION")
        for statement in statements:
            if "CREATE VIEW" not in statement:
                conn.execute(statement)
        for name in ORDER:
            header, data = rows(directory / f"{name}.csv")
            table = name.lower()
            if target.dialect == "postgres":
                with conn.cursor().copy(f"COPY {table} ({', '.join(h.lower() for h in header)}) FROM STDIN") as copy:
                    for row in data:
                        copy.write_row(row)
            elif target.dialect == "duckdb":
                path = str((directory / f"{name}.csv").resolve()).replace("'", "''")
                source = f"read_csv('{path}', header = true, all_varchar = true)"
                if name != "Employee":
                    conn.execute(f"INSERT INTO {table} SELECT * FROM {source}")
                else:  # DuckDB checks a self-reference row by row: managers before their reports
                    while conn.execute(f"INSERT INTO {table} SELECT * FROM {source} s WHERE s.EmployeeId::INTEGER NOT IN (SELECT employeeid FROM {table}) "
                                       f"AND (s.ReportsTo IS NULL OR s.ReportsTo::INTEGER IN (SELECT employeeid FROM {table}))").fetchone()[0]:
                        pass
            else:  # SQLite converts the text to each column's affinity (prices to REAL)
                marks = ", ".join("?" for _ in header)
                conn.executemany(f"INSERT INTO {table} VALUES ({marks})", data)
            total += len(data)
        for statement in statements:
            if "CREATE VIEW" in statement:
                conn.execute(statement)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return total


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    directory = Path(argv[1] if len(argv) > 1 else "../shared/data/chinook")
    total = load(argv[0], directory)
    print(f"loaded {total:,} rows into 11 tables and created the view track_info")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
