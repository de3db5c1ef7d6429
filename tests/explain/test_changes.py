"""Why this realization and why not that change set: exact explanations on the chairs example (seed 003, Example 1)."""

import json
from pathlib import Path

from nablog.cli import main
from nablog.database import Database

CHAIRS = str(Path(__file__).resolve().parents[2] / "nablog" / "examples" / "chairs.lp")
REQUEST = "+staff_chair(aravindan, gerhard)."


def test_each_change_is_needed_and_compensations_name_their_cause():
    db = Database.from_files(CHAIRS)
    proposal = db.propose(REQUEST)
    by_changes = {tuple(r.changes.lines()): r for r in proposal}
    moved = by_changes[("+group_chair(infor1, gerhard)", "-group_chair(infor1, matthias)", "-group_chair(infor2, gerhard)")]
    why = db.why_realization(proposal.request, moved)
    needs = {n.change: n for n in why.needs}
    assert needs["+group_chair(infor1, gerhard)"].request_fails == ("+staff_chair(aravindan, gerhard)",)
    assert [v.constraint for v in needs["-group_chair(infor1, matthias)"].violations] == ["one_chair_per_group"]
    assert needs["-group_chair(infor1, matthias)"].forced_by == ("+group_chair(infor1, gerhard)",)
    assert [v.constraint for v in needs["-group_chair(infor2, gerhard)"].violations] == ["one_group_per_chair"]
    assert needs["-group_chair(infor2, gerhard)"].forced_by == ("+group_chair(infor1, gerhard)",)
    assert [c for c, _ in why.side_effects] == ["+staff_chair(delhibabu, gerhard)", "-staff_chair(aravindan, matthias)", "-staff_chair(delhibabu, matthias)"]
    created = dict(why.side_effects)["+staff_chair(delhibabu, gerhard)"]
    assert created.holds and [str(c.atom) for c in created.proof.children] == ["staff_group(delhibabu, infor1)", "group_chair(infor1, gerhard)"]
    broken = dict(why.side_effects)["-staff_chair(aravindan, matthias)"]
    assert broken.proof.instance == "staff_chair(aravindan, matthias) :- staff_group(aravindan, infor1), group_chair(infor1, matthias)."
    assert why.requested[0][0] == "+staff_chair(aravindan, gerhard)" and why.requested[0][1].holds


def test_every_change_of_every_realization_is_needed():
    db = Database.from_files(CHAIRS)
    proposal = db.propose(REQUEST)
    for realization in proposal:
        for need in db.why_realization(proposal.request, realization).needs:
            assert need.request_fails or need.violations, need


def test_a_change_set_is_judged():
    db = Database.from_files(CHAIRS)
    assert db.judge_changes(REQUEST, "+group_chair(infor1, gerhard).").text() == (
        "+group_chair(infor1, gerhard) violates one_chair_per_group (2 instances: group_chair(infor1, gerhard), group_chair(infor1, matthias); "
        "group_chair(infor1, matthias), group_chair(infor1, gerhard))\n"
        "+group_chair(infor1, gerhard) violates one_group_per_chair (2 instances: group_chair(infor1, gerhard), group_chair(infor2, gerhard); "
        "group_chair(infor2, gerhard), group_chair(infor1, gerhard))"
    )
    assert db.judge_changes(REQUEST, "+staff_group(aravindan, infor3).").text() == (
        "+staff_group(aravindan, infor3) fails the request: +staff_chair(aravindan, gerhard) does not hold"
    )
    assert db.judge_changes(REQUEST, "+staff_group(aravindan, infor2). -staff_group(delhibabu, infor1).").text() == (
        "+staff_group(aravindan, infor2) -staff_group(delhibabu, infor1) realizes the request but is not minimal: "
        "it contains the smaller realization +staff_group(aravindan, infor2)"
    )
    assert db.judge_changes(REQUEST, "+staff_group(aravindan, infor2).").to_json() == {"realizes": True, "minimal": True, "request_fails": [], "violations": []}


def test_the_command(capsys):
    assert main(["propose", CHAIRS, REQUEST, "--why-not", "+staff_group(aravindan, infor3)."]) == 0
    assert capsys.readouterr().out == "+staff_group(aravindan, infor3) fails the request: +staff_chair(aravindan, gerhard) does not hold\n"
    assert main(["propose", CHAIRS, REQUEST, "--why", "--json", "--limit", "1"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["realizations"][0]["why"]["changes"] == [
        {"change": "+staff_group(aravindan, infor2)", "request_fails": ["+staff_chair(aravindan, gerhard)"], "violations": [], "forced_by": []}
    ]


def test_each_row_of_a_correction_table_names_the_violations_it_removes(tmp_path, capsys):
    from nablog.repair.tables import repair

    program = tmp_path / "r.lp"
    program.write_text("#constraint one :- p(X), q(X).\n#constraint fk :- s(X), not p(X).\np(1). q(1). s(3).\n")
    db = Database.from_files(program)
    tables = {tuple(t.lines()): t for t in repair(db.rules, db.model(), engine=db.engine, limit=10)}
    rows = {r.change: r for r in db.why_repair(tables[("+p(3)", "-p(1)")])}
    assert [(name, [str(a) for a in w]) for name, w in rows["+p(3)"].removes] == [("fk", ["s(3)"])]
    assert [(name, [str(a) for a in w]) for name, w in rows["-p(1)"].removes] == [("one", ["p(1)", "q(1)"])]
    assert [v.constraint for v in rows["-p(1)"].without] == ["one"]
    for table in tables.values():  # every row of a minimal table removes something
        assert all(r.removes and r.without for r in db.why_repair(table))
    assert main(["repair", str(program), "--why", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["repairs"][0]["why"][0]["removes"][0]["constraint"] in ("fk", "one")
