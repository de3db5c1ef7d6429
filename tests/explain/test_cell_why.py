"""Cell repairs explained (issue 27, "repairs explained … tuples or cells"): each updated row with
the violated instances its update removes; exact on the command line, and checked against a
naive evaluation of the constraint on generated tables."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nablog.cli import main
from nablog.database import Database
from nablog.lang import Atom
from nablog.explain.changes import explain_cells
from nablog.repair.cells import repair_cells
from tests.strategies import examples

PROGRAM = "#columns addr(id, zip, city).\n#fd addr: zip -> city.\n"


def test_repair_cells_why_on_the_command_line(tmp_path, capsys):
    (tmp_path / "p.lp").write_text(PROGRAM)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "addr.csv").write_text("id,zip,city\n1,2108,boston\n2,2108,boston\n3,2108,bostn\n4,1970,salem\n5,1970,salem\n")
    assert main(["repair", str(tmp_path / "p.lp"), "--data", str(tmp_path / "d"), "--policy", "cells", "--why"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-2:] == [
        "why:",
        "  addr[2].city: 'bostn' -> 'boston'  removes 2 violations (fd_addr__zip__city: addr(3, 2108, bostn), addr(1, 2108, boston);"
        " fd_addr__zip__city: addr(3, 2108, bostn), addr(2, 2108, boston)); without it, still violated: fd_addr__zip__city (2)",
    ]
    assert main(["repair", str(tmp_path / "p.lp"), "--data", str(tmp_path / "d"), "--policy", "cells", "--why", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(w["change"], len(w["removes"]), [v["count"] for v in w["without"]]) for w in report["why"]] == [("addr[2].city: 'bostn' -> 'boston'", 2, [2])]


def violated(rows: set[tuple]) -> set[frozenset]:
    """The FD's violated instances, naively: pairs of rows with one zip and two cities."""
    return {frozenset([a, b]) for a in rows for b in rows if a[1] == b[1] and a[2] != b[2]}


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(st.tuples(st.sampled_from([1, 2]), st.sampled_from(["x", "y", "z"])), min_size=2, max_size=7))
def test_each_row_removes_what_it_says_and_only_violations_that_held(cells):
    rows = [(i, zipcode, city) for i, (zipcode, city) in enumerate(cells)]
    db = Database.from_text(PROGRAM, {"addr": set(rows)})
    result = repair_cells(db.rules, {"addr": rows}, engine=db.engine)
    after = result.apply({"addr": rows})["addr"]
    changed = sorted({c.row for c in result.corrections})
    updates = [(f"row {r}", Atom("addr", rows[r]), Atom("addr", after[r])) for r in changed]
    explained = explain_cells(db.explainer(python=True), updates)
    before, now = violated(set(rows)), violated(set(after))
    assert [r.change for r in explained] == [f"row {r}" for r in changed]
    for r, row in zip(changed, explained):
        others = set(after[:r]) | set(after[r + 1 :]) | {rows[r]}  # every update but this row's
        for _, witness in row.removes:
            instance = frozenset(tuple(a.args) for a in witness)
            assert instance in before and instance not in now
            assert rows[r] in instance or instance in violated(others)
        # What stays violated without this row's update: counted whole, a few witnesses shown.
        assert sum(v.count for v in row.without) == len(violated(others))
        assert {frozenset(tuple(a.args) for a in w) for v in row.without for w in v.witnesses} <= violated(others)
