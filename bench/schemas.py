"""Benchmark: view updates on real schemas — Chinook, Mondial, OpenFlights — through 2-, 3- and 4-way join views (issue 31).

Each schema is read from the shared data (``bench.common.shared_data``) as it is, with keys and
foreign keys on every relation the views read (Mondial: all 46 keys and 73 foreign keys of its
``constraints.txt``, generated from that file and the CSV headers; OpenFlights: the keys and the one
foreign key the data meets — the others are violated hundreds of times, and a view update would
have to repair them all). For each view there is an insertion and a deletion (the view's first
tuple); each request runs in a child process (peak memory measured) and is timed to its first
realization and to all of them (families folded), with the status of the answer. A second run
of the same request with ``timeout=T`` (default 0.2 s) checks that a timeout is kept: its
elapsed time and status are printed.

The peer, in the same child: clingo solving the same request's encoding — the ground problem
nablog hands clingo, printed as text (``AspProblem.text``) and grounded and solved from scratch by
a new clingo control, enumerating its subset-minimal models (``--enum-mode=domRec``). It measures
what the search for candidates, verification and families cost beyond solving the encoding; the
ratio is nablog's time to all over clingo's.

Run:  .venv/bin/python bench/schemas.py [--schemas chinook mondial openflights] [--timeout 60]
          [--check-timeout 0.2]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import environment, print_table, run_child, save_results, shared_data  # noqa: E402

CHINOOK = """
#columns album(album_id, title, artist_id).
#columns artist(artist_id, name).
#columns track(track_id, name, album_id, media_type_id, genre_id, composer, milliseconds, bytes, unit_price).
#columns customer(customer_id, first_name, last_name, company, address, city, state, country, postal_code, phone, fax, email, support_rep_id).
#columns invoice(invoice_id, customer_id, invoice_date, billing_address, billing_city, billing_state, billing_country, billing_postal_code, total).
#columns invoice_line(invoice_line_id, invoice_id, track_id, unit_price, quantity).
#key album: album_id.
#key artist: artist_id.
#key track: track_id.
#key customer: customer_id.
#key invoice: invoice_id.
#key invoice_line: invoice_line_id.
#fk album: artist_id -> artist: artist_id.
#fk track: album_id -> album: album_id.
#fk invoice: customer_id -> customer: customer_id.
#fk invoice_line: invoice_id -> invoice: invoice_id.
#fk invoice_line: track_id -> track: track_id.

album_of(Title, A) :- album(_, Title, Ar), artist(Ar, A).
track_artist(T, A) :- track(_, T, Al, _, _, _, _, _, _), album(Al, _, Ar), artist(Ar, A).
bought(Last, T) :- customer(C, _, Last, _, _, _, _, _, _, _, _, _, _), invoice(I, C, _, _, _, _, _, _, _), invoice_line(_, I, Tr, _, _), track(Tr, T, _, _, _, _, _, _, _).
"""

MONDIAL_VIEWS = """
city_country(City, Name) :- city(City, C, _, _, _, _, _), country(Name, C, _, _, _, _).
city_in(City, P, Name) :- city(City, C, P, _, _, _, _), province(P, C, _, _, _, _), country(Name, C, _, _, _, _).
city_continent(City, Cont) :- city(City, C, P, _, _, _, _), province(P, C, _, _, _, _), country(_, C, _, _, _, _), encompasses(C, Cont, _).
"""

OPENFLIGHTS = """
#columns airports(airport_id, name, city, country, iata, icao, latitude, longitude, altitude, timezone, dst, tz_database_tz, type, source).
#columns airlines(airline_id, name, alias, iata, icao, callsign, country, active).
#columns routes(airline, airline_id, source_airport, source_airport_id, destination_airport, destination_airport_id, codeshare, stops, equipment).
#key airports: airport_id.
#key airlines: airline_id.
#null "\\\\N".
#fk routes: airline_id -> airlines: airline_id.

operates(Name, Src, Dst) :- routes(_, Al, Src, _, Dst, _, _, _, _), airlines(Al, Name, _, _, _, _, _, _).
flies_from(Name, City) :- routes(_, Al, _, S, _, _, _, _, _), airlines(Al, Name, _, _, _, _, _, _), airports(S, _, City, _, _, _, _, _, _, _, _, _, _, _).
connects(Name, C1, C2) :- routes(_, Al, _, S, _, D, _, _, _), airlines(Al, Name, _, _, _, _, _, _), airports(S, _, _, C1, _, _, _, _, _, _, _, _, _, _), airports(D, _, _, C2, _, _, _, _, _, _, _, _, _, _).
"""

INSERTIONS = {
    "chinook": ['+album_of("Back in Black", "AC/DC").', '+track_artist("New Song", "AC/DC").', '+bought("Gonçalves", "Balls to the Wall").'],
    "mondial": ['+city_country("Atlantis", "Greece").', '+city_in("Atlantis", "Crete", "Greece").', '+city_continent("Atlantis", "Europe").'],
    "openflights": ['+operates("Lufthansa", "FRA", "XYZ").', '+flies_from("Lufthansa", "Atlantis").', '+connects("Lufthansa", "Germany", "Atlantis").'],
}
VIEWS = {
    "chinook": [("album_of", 2), ("track_artist", 3), ("bought", 4)],
    "mondial": [("city_country", 2), ("city_in", 3), ("city_continent", 4)],
    "openflights": [("operates", 2), ("flies_from", 3), ("connects", 4)],
}


def relation_name(file_stem: str) -> str:
    """A file's relation: lower case, words of a CamelCase name joined by ``_`` (InvoiceLine -> invoice_line)."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", file_stem).lower()


def data_directory(schema: str, root: Path) -> Path:
    """The schema's CSV files under lower-case relation names (symbolic links in ``root``)."""
    source = shared_data() / schema
    if schema == "mondial":
        source = source / "csv"
    target = root / schema
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.glob("*.csv")):
        stem = path.stem.lower() if schema == "mondial" else relation_name(path.stem)
        link = target / f"{stem}.csv"
        if not link.exists():
            link.symlink_to(path)
    return target


def mondial_program() -> str:
    """Every key and foreign key of Mondial's constraints.txt, over columns named by the CSV headers."""
    source = shared_data() / "mondial"
    lines: list[str] = []
    for path in sorted((source / "csv").glob("*.csv")):
        with open(path, newline="", encoding="utf-8") as f:
            header = next(csv.reader(f))
        lines.append(f"#columns {path.stem.lower()}({', '.join(h.lower() for h in header)}).")
    keys = fks = 0
    for line in (source / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("KEY:"):
            rel, cols = re.match(r"KEY:\s*(\w+)\((.*)\)", line).groups()
            lines.append(f"#key {rel.lower()}: {', '.join(c.strip().lower() for c in cols.split(','))}.")
            keys += 1
        elif line.startswith("FK:"):
            rel, cols, target, tcols = re.match(r"FK:\s*(\w+)\((.*)\)\s*->\s*(\w+)\((.*)\)", line).groups()
            low = lambda text: ", ".join(c.strip().lower() for c in text.split(","))  # noqa: E731
            lines.append(f"#fk {rel.lower()}: {low(cols)} -> {target.lower()}: {low(tcols)}.")
            fks += 1
    assert (keys, fks) == (46, 73), (keys, fks)
    return "\n".join(lines) + "\n" + MONDIAL_VIEWS


def program(schema: str) -> str:
    return {"chinook": CHINOOK, "mondial": mondial_program(), "openflights": OPENFLIGHTS}[schema]


def requests(db, schema: str) -> list[tuple[str, int, str]]:
    """(view, join width, request): the insertion, and the deletion of the view's first tuple."""
    from nablog.lang import Atom, constant_sort_key

    out = []
    for (view, width), insertion in zip(VIEWS[schema], INSERTIONS[schema]):
        out.append((view, width, insertion))
        first = min(db.relation(view), key=lambda r: [constant_sort_key(v) for v in r])
        out.append((view, width, f"-{Atom(view, first)}."))
    return out


# -- the child ----------------------------------------------------------------------------------------


def child(schema: str, index: int, directory: str, timeout: float, check: float) -> dict:
    import clingo

    import importlib

    from nablog import Database

    propose_module = importlib.import_module("nablog.solver.propose")

    started = time.monotonic()
    db = Database.from_files(_program_file(schema, directory), data=[Path(directory) / schema], header=True)
    view, width, request = requests(db, schema)[index]
    db.prepare()
    loaded = time.monotonic() - started

    # The encoding clingo gets: kept when nablog builds it (the last one, the one solved).
    encodings = []
    build = propose_module.asp_problem

    def keep(problem, *args, **kwargs):
        asp = build(problem, *args, **kwargs)
        encodings.append(asp)
        return asp

    propose_module.asp_problem = keep
    first: list[float] = []
    start = time.monotonic()
    proposal = db.propose(request, timeout=timeout, stream=True)
    for _ in proposal:
        first or first.append(time.monotonic() - start)
    proposal = proposal.get()
    everything = time.monotonic() - start
    propose_module.asp_problem = build

    peer = None
    if encodings:
        text = encodings[0].text + (f"\non(0..{len(encodings[0].switches) - 1})." if encodings[0].switches else "")
        start = time.monotonic()
        control = clingo.Control(["--heuristic=Domain", "--enum-mode=domRec", "0", "--warn=none"])
        control.add("base", [], text)
        control.ground([("base", [])])
        models, status = 0, "complete"
        with control.solve(yield_=True, async_=True) as handle:
            while True:  # with the request's timeout, as nablog had
                handle.resume()
                if not handle.wait(max(0.0, start + timeout - time.monotonic())):
                    handle.cancel()
                    status = "timeout"
                    break
                if handle.model() is None:
                    break
                models += 1
        peer = {"all": time.monotonic() - start, "models": models, "candidates": len(encodings[0].choices), "status": status}

    again = Database.from_files(_program_file(schema, directory), data=[Path(directory) / schema], header=True)
    again.prepare()
    start = time.monotonic()
    cut = again.propose(request, timeout=check)
    check_elapsed = time.monotonic() - start
    return {
        "schema": schema,
        "view": view,
        "width": width,
        "request": request,
        "load": loaded,
        "first": first[0] if first else None,
        "all": everything,
        "status": proposal.status,
        "rows": len(proposal),
        "members": sum(len(r.family) if r.family else 1 for r in proposal),
        "smallest": proposal[0].size if len(proposal) else None,
        "peer": peer,
        "check": {"timeout": check, "elapsed": check_elapsed, "status": cut.status},
        "message": proposal.message,
    }


def _program_file(schema: str, directory: str) -> Path:
    path = Path(directory) / f"{schema}.lp"
    if not path.exists():
        path.write_text(program(schema), encoding="utf-8")
    return path


# -- the parent ---------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schemas", nargs="+", default=["chinook", "mondial", "openflights"])
    parser.add_argument("--timeout", type=float, default=60.0, help="each request's timeout (the child is killed 60 s later)")
    parser.add_argument("--check-timeout", type=float, default=0.2, help="the timeout of the second run, which checks it is kept")
    parser.add_argument("--child", nargs=5, metavar=("SCHEMA", "INDEX", "DIR", "TIMEOUT", "CHECK"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        schema, index, directory, timeout, check = args.child
        print(json.dumps(child(schema, int(index), directory, float(timeout), float(check))))
        return 0

    rows, results = [], []
    with tempfile.TemporaryDirectory() as directory:
        for schema in args.schemas:
            data_directory(schema, Path(directory))
            _program_file(schema, directory)
            for index in range(2 * len(VIEWS[schema])):
                run = run_child([sys.executable, __file__, "--child", schema, str(index), directory, str(args.timeout), str(args.check_timeout)], args.timeout + 60)
                report = run.report
                results.append({**report, "peak_mb": run.peak_mb, "run": run.status, "error": run.error})
                if run.status != "ok":
                    rows.append([f"{schema} #{index}", "", "", "", "", f"{run.peak_mb:.0f}", run.status, "", "", "", run.error])
                    continue
                peer = report["peer"]
                check = report["check"]
                rows.append([
                    f"{schema} {report['request']}",
                    str(report["width"]),
                    "-" if report["first"] is None else f"{report['first']:.2f}",
                    f"{report['all']:.2f}",
                    f"{report['rows']}/{report['members']}",
                    f"{run.peak_mb:.0f}",
                    report["status"],
                    "-" if peer is None else f"{peer['all']:.3f}" + ("" if peer["status"] == "complete" else f" {peer['status']}"),
                    "-" if peer is None else f"{report['all'] / max(peer['all'], 1e-6):.0f}x",
                    f"{check['elapsed']:.2f} {check['status']}",
                ])
    print_table(
        "View updates on real schemas (seconds; rows/members: realizations listed / what their families stand for)",
        ["request", "join", "first", "all", "rows/members", "peak MB", "status", "clingo same encoding", "nablog/clingo", f"timeout {args.check_timeout:g} s"],
        rows,
    )
    path = save_results("schemas", {"environment": environment(), "results": results})
    print(f"\nsaved {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
