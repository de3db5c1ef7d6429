"""A worked mediator (seed 000) over OpenFlights: airports within 300 km of a city an airline serves.

Three sources, none of them copied into the view:

- ``airports``: a SQLite database built at run time (in a temporary directory) from
  ``openflights/airports.csv``, reached through :func:`nablog.views.domains.sqlite_table`;
- ``routes``: the routes CSV file itself (a working copy in the same temporary directory, so the
  demo can change it), reached through :func:`nablog.views.domains.table_file`;
- ``geo``: a Python function, great-circle distances on the airports' coordinates.

Run it with the shared data directory: ``python -m nablog.examples.mediator ../shared/data``.
"""

from __future__ import annotations

import csv
import math
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from nablog import Database
from nablog.views.domains import sqlite_table, table_file

PROGRAM = """
watch("BA").
serves(A, City) :- in(Code, routes:lookup(destination_airport, airline, A)),
                   in(City, airports:lookup(city, iata, Code)) || watch(A).
near(A, City, Airport) :- in(Airport, geo:within(City, 300)) || serves(A, City).
"""


def build_airports(csv_path: Path, db_path: Path) -> None:
    """The airports table of OpenFlights as a SQLite database (iata, name, city, latitude, longitude)."""
    with sqlite3.connect(db_path) as con, open(csv_path, newline="", encoding="utf-8") as f:
        con.execute("CREATE TABLE airports (iata TEXT, name TEXT, city TEXT, latitude REAL, longitude REAL)")
        rows = [(r["iata"], r["name"], r["city"], float(r["latitude"]), float(r["longitude"])) for r in csv.DictReader(f) if r["iata"] != "\\N"]
        con.executemany("INSERT INTO airports VALUES (?, ?, ?, ?, ?)", rows)
        con.execute("CREATE INDEX airports_city ON airports (city)")
        con.execute("CREATE INDEX airports_latitude ON airports (latitude)")


KM_PER_DEGREE_OF_LATITUDE = 6371 * math.pi / 180


def geo_domain(db_path: Path):
    """``within(city, km)``: IATA codes of the airports within ``km`` of an airport of ``city``.

    The source is asked each time (it may change), but only for the band of latitudes a centre's
    circle can reach: a degree of latitude is the same length everywhere, so no airport outside
    ``centre ± km / 111.19`` degrees is within ``km`` of it.
    """

    def within(city: str, km: int) -> set[str]:
        band = km / KM_PER_DEGREE_OF_LATITUDE
        found: set[str] = set()
        with sqlite3.connect(db_path) as con:
            for c_lat, c_lon in con.execute("SELECT latitude, longitude FROM airports WHERE city = ?", (city,)).fetchall():
                near = con.execute("SELECT iata, latitude, longitude FROM airports WHERE latitude BETWEEN ? AND ?", (c_lat - band, c_lat + band))
                found |= {code for code, lat, lon in near if _km(lat, lon, c_lat, c_lon) <= km}
        return found

    return {"within": within}


def _km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance on a sphere of radius 6371 km (haversine)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(a))


def main(data: Path) -> None:
    openflights = data / "openflights"
    with tempfile.TemporaryDirectory() as tmp:
        airports_db, routes_csv = Path(tmp) / "airports.sqlite", Path(tmp) / "routes.csv"
        build_airports(openflights / "airports.csv", airports_db)
        shutil.copy(openflights / "routes.csv", routes_csv)

        db = Database.from_text(PROGRAM)
        db.register_domain("airports", **sqlite_table(airports_db, "airports"))
        db.register_domain("routes", **table_file(routes_csv))
        db.register_domain("geo", **geo_domain(airports_db))

        print("The materialized view (W_P: constrained atoms, no source was read to build it):")
        for line in db.mediator.listing():
            print("  " + line)
        rows, complete = db.query('near("BA", "Edinburgh", Airport)', ground=True)
        print(f"Airports within 300 km of Edinburgh, which BA serves: {', '.join(r[2] for r in rows)}")

        # The sources change: BA drops every route to Edinburgh (EDI).
        with open(routes_csv, newline="", encoding="utf-8") as f:
            rows_in = list(csv.reader(f))
        with open(routes_csv, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(r for r in rows_in if not (r[0] == "BA" and r[4] == "EDI"))
        checks = db.mediator.view.solver.checks
        work = db.mediator.view.external_change()
        print(f"After BA drops Edinburgh: maintenance work {work} (z3 checks since: {db.mediator.view.solver.checks - checks})")
        rows, _ = db.query('near("BA", "Edinburgh", Airport)', ground=True)
        print(f"Airports within 300 km of Edinburgh, which BA serves: {', '.join(r[2] for r in rows) or 'none'}")

        # An update of the view itself (seed 000 §3.1): Glasgow is no longer of interest.
        db.propagate('-near(A, City, Airport) || City = "Glasgow".')
        print("After deleting near(A, City, Airport) || City = \"Glasgow\":")
        for answer in db.query('near(A, City, Airport)'):
            print("  " + str(answer))
        glasgow, _ = db.query('near("BA", "Glasgow", Airport)', ground=True)
        manchester, _ = db.query('near("BA", "Manchester", Airport)', ground=True)
        print(f"near(BA, Glasgow, _): {len(glasgow)} airports; near(BA, Manchester, _): {len(manchester)} airports")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[3] / "shared" / "data")
