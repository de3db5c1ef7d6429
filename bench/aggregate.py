"""Benchmark: aggregates and arithmetic on the python engine against DuckDB in the same run.

Group-by counts and sums over ../shared/data — tax (50,000 people: count and salary sum per
state), flights (rows per source), OpenFlights routes (routes per airline, per source airport) —
written as ``N = #count{...}`` / ``#sum`` rules and as DuckDB ``GROUP BY`` queries; and a
recursive program with arithmetic: hop counts from one airport over the OpenFlights route graph,
bounded by a constant, with the fewest hops per airport by ``#min``, against a DuckDB recursive
CTE. Both sides read the same distinct rows (nablog relations are sets), loaded beforehand (DuckDB
tables; the python engine's encoded relations), and must give the same answer; the ratio is python / DuckDB (below 1: nablog faster). Last, incremental maintenance of a
``#count`` view after a one-row change (``Database.propagate``, and the engine's ``update``
alone) against evaluating the program afresh, on the 50,000 people and on 1,000,000 (them 20
times over), inserting a row with new constants (the dictionary grows) and one of known constants. Timings are the fastest of ``--repeats`` runs; the machine is shared, so absolute
figures are noisy, ratios less so.

Run:  .venv/bin/python bench/aggregate.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nablog import Database, parse  # noqa: E402
from nablog.engines import PythonEngine  # noqa: E402
from nablog.engines.encoding import decode_facts  # noqa: E402

from common import environment, print_table, save_results, shared_data  # noqa: E402

DATA = shared_data()
HOPS = 3


def read_csv(path: Path, columns: list[str], ints: set[str] = frozenset()) -> set[tuple]:  # type: ignore[assignment]
    with path.open(newline="", encoding="utf-8") as f:
        rows = csv.DictReader(f)
        out = set()
        for i, row in enumerate(rows):
            values = []
            for c in columns:
                if c == "#":
                    values.append(i)
                elif c in ints:
                    text = row[c].strip()
                    if not text.lstrip("-").isdigit():
                        break
                    values.append(int(text))
                else:
                    values.append(row[c])
            else:
                out.add(tuple(values))
    return out


def fastest(repeats: int, run) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def duck(con, sql: str) -> set[tuple]:
    return {tuple(r) for r in con.execute(sql).fetchall()}


def case(name, repeats, program, facts, pred, con, table_columns, sql):
    """Time the program's model on the python engine and the SQL on DuckDB; compare answers."""
    parsed = parse(program)
    engine = PythonEngine()
    # The relations encoded once, as DuckDB's tables are loaded once: both time the query only.
    loaded = engine.evaluate(parse(""), facts)
    t_nablog, model = fastest(repeats, lambda: engine.evaluate(parsed, loaded))
    got = decode_facts({pred: model[pred]})[pred]
    for table, columns in table_columns.items():
        con.execute(f"CREATE OR REPLACE TABLE {table} ({', '.join(f'{c} {t}' for c, t in columns)})")
        con.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})", sorted(facts[table]))
    t_duck, expected = fastest(repeats, lambda: duck(con, sql))
    assert got == expected, (name, sorted(got - expected)[:5], sorted(expected - got)[:5])
    return [name, f"{sum(len(r) for r in facts.values()):,}", f"{len(got):,}", f"{t_nablog * 1000:.1f}", f"{t_duck * 1000:.1f}", f"{t_nablog / t_duck:.2f}"]


def maintain_count(name: str, people: set[tuple], row: tuple, repeats: int, propagate: bool) -> list[list[str]]:
    """Rows of the maintenance table: inserting ``row`` into ``people`` and updating the #count
    view (``PythonEngine.update``, and ``Database.propagate`` if asked) against evaluating afresh."""
    program = "st(S) :- tax(_, S, _). n(S, N) :- st(S), N = #count{I : tax(I, S, _)}."
    parsed = parse(program)
    loaded = PythonEngine().evaluate(parse(""), {"tax": people})
    changed = PythonEngine().update(parse(""), loaded, insert={"tax": {row}})
    t_full, fresh = fastest(repeats, lambda: PythonEngine().evaluate(parsed, {"tax": changed["tax"]}))
    engine = PythonEngine()
    model = engine.evaluate(parsed, loaded)
    t_update, updated = fastest(repeats, lambda: engine.update(parsed, model, insert={"tax": {row}}))
    assert decode_facts({"n": updated["n"]}) == decode_facts({"n": fresh["n"]})
    rows = [[f"{name} (PythonEngine.update)", f"{t_update * 1000:.1f}", f"{t_full * 1000:.1f}", f"{t_full / t_update:.2f}"]]
    if propagate:
        db = Database(parsed, {"tax": loaded["tax"]})
        db.model()
        text = f"+tax({row[0]}, \"{row[1]}\", {row[2]})."
        t_prop, update = fastest(repeats, lambda: db.propagate(text))
        assert any(a.pred == "n" for a in update.insert)
        rows.insert(0, [f"{name} (Database.propagate)", f"{t_prop * 1000:.1f}", f"{t_full * 1000:.1f}", f"{t_full / t_prop:.2f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    con = duckdb.connect()
    rows = []

    tax = read_csv(DATA / "tax" / "clean_50k.csv", ["#", "state", "salary"], {"salary"})
    rows.append(case(
        "tax: people per state", args.repeats,
        "st(S) :- tax(_, S, _). n(S, N) :- st(S), N = #count{I : tax(I, S, _)}.", {"tax": tax}, "n",
        con, {"tax": [("i", "BIGINT"), ("s", "VARCHAR"), ("sal", "BIGINT")]},
        "SELECT s, count(*) FROM tax GROUP BY s",
    ))
    rows.append(case(
        "tax: salary sum per state", args.repeats,
        "st(S) :- tax(_, S, _). t(S, T) :- st(S), T = #sum{W, I : tax(I, S, W)}.", {"tax": tax}, "t",
        con, {"tax": [("i", "BIGINT"), ("s", "VARCHAR"), ("sal", "BIGINT")]},
        "SELECT s, CAST(sum(sal) AS BIGINT) FROM tax GROUP BY s",
    ))
    flights = read_csv(DATA / "flights" / "clean.csv", ["tuple_id", "src", "flight"], {"tuple_id"})
    rows.append(case(
        "flights: rows per source", args.repeats,
        "s(S) :- flight(_, S, _). n(S, N) :- s(S), N = #count{I : flight(I, S, _)}.", {"flight": flights}, "n",
        con, {"flight": [("i", "BIGINT"), ("s", "VARCHAR"), ("f", "VARCHAR")]},
        "SELECT s, count(*) FROM flight GROUP BY s",
    ))
    routes = read_csv(DATA / "openflights" / "routes.csv", ["airline", "source_airport", "destination_airport"])
    rows.append(case(
        "openflights: routes per airline", args.repeats,
        "a(A) :- route(A, _, _). n(A, N) :- a(A), N = #count{S, D : route(A, S, D)}.", {"route": routes}, "n",
        con, {"route": [("a", "VARCHAR"), ("s", "VARCHAR"), ("d", "VARCHAR")]},
        "SELECT a, count(*) FROM route GROUP BY a",
    ))
    rows.append(case(
        "openflights: routes per source airport", args.repeats,
        "p(S) :- route(_, S, _). n(S, N) :- p(S), N = #count{A, D : route(A, S, D)}.", {"route": routes}, "n",
        con, {"route": [("a", "VARCHAR"), ("s", "VARCHAR"), ("d", "VARCHAR")]},
        "SELECT s, count(*) FROM route GROUP BY s",
    ))
    edges = {(s, d) for _, s, d in routes}
    rows.append(case(
        f"openflights: fewest hops from FRA (<= {HOPS}), #min", args.repeats,
        f"dist(\"FRA\", 0). dist(Y, H + 1) :- dist(X, H), edge(X, Y), H < {HOPS}. "
        "best(Y, M) :- dist(Y, _), M = #min{H : dist(Y, H)}.",
        {"edge": edges}, "best",
        con, {"edge": [("s", "VARCHAR"), ("d", "VARCHAR")]},
        f"WITH RECURSIVE dist(n, h) AS (SELECT 'FRA', 0 UNION SELECT e.d, dist.h + 1 FROM dist JOIN edge e ON dist.n = e.s "
        f"WHERE dist.h < {HOPS}) SELECT n, min(h) FROM dist GROUP BY n",
    ))
    print_table(
        "python engine against DuckDB (same distinct rows, same answers)",
        ["case", "input rows", "groups", "python ms", "duckdb ms", "python/duckdb"],
        rows,
    )

    # Maintenance of a #count view after a one-row change, against evaluating afresh: on the 50,000
    # people, and on 1,000,000 (the same people 20 times, ids shifted: where recomputing costs
    # tens of ms). The row inserted brings new constants (an id, a salary), so the dictionary
    # grows and every relation read moves to it; a row of known constants does not.
    maintenance = []
    for label, people in (("50k", tax), ("1M", {(i + k * 100_000, s, w) for k in range(20) for i, s, w in tax})):
        known = min(people)
        other = next(s for _, s, _ in sorted(people) if s != known[1])
        for kind, row in (("new constants", (999_999, "MA", 1)), ("known constants", (known[0], other, known[2]))):
            maintenance += maintain_count(f"tax {label}: #count per state, +1 row ({kind})", people, row, args.repeats, propagate=kind == "new constants")
    print_table("incremental maintenance of a #count view (touched groups recounted)", ["case", "maintain ms", "afresh ms", "afresh/maintain"], maintenance)
    path = save_results("aggregate", {"environment": environment(), "against_duckdb": rows, "maintenance": maintenance})
    print(f"\nsaved {path}")


if __name__ == "__main__":
    main()
