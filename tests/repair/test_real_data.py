"""The shipped constraint programs on the shared real data (read in place; small slices where
the whole is large): violation counts as the data README measured them, and repairs that hold."""

import json
from pathlib import Path

import pytest

from nablog.cli import main
from nablog.engines import PythonEngine
from nablog.engines.violations import find_violations
from nablog.io import open_source, read_csv
from nablog.lang import parse_files, separate_facts
from nablog.repair import find_falsifiers, repair

from ..shared_data import DATA

EXAMPLES = Path(__file__).resolve().parents[2] / "nablog" / "examples"
ENGINE = PythonEngine()

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="the shared data is not present (see tests/shared_data.py)")


def load(example, facts):
    rules, facts = separate_facts(parse_files([EXAMPLES / example]), facts)
    return rules, facts, ENGINE.evaluate(rules, facts)


def consistent_after(rules, model, table):
    insert, delete = {}, {}
    for a in table.insert:
        insert.setdefault(a.pred, set()).add(tuple(a.args))
    for a in table.delete:
        delete.setdefault(a.pred, set()).add(tuple(a.args))
    return not find_violations(rules, ENGINE.update(rules, model, insert=insert, delete=delete), ENGINE)


def test_hospital_fds_violated_groups_and_a_minimum_repair():
    rows = read_csv(DATA / "hospital" / "dirty.csv", header=True).rows
    rules, _, model = load("hospital.lp", {"hospital": rows})
    found = find_falsifiers(rules, model)
    # shared/data/README.md: on dirty.csv each of the 15 FDs has 17-24 violating groups.
    assert [len(v.groups) for v in found] == [20, 22, 18, 23, 18, 20, 22, 18, 21, 21, 21, 24, 19, 17, 17]
    result = repair(rules, model, falsifiers=found, policy="min-card")
    assert (result.status, result.optimal, result[0].size, result[0].insert) == ("complete", True, 385, ())
    assert consistent_after(rules, model, result[0])
    clean = read_csv(DATA / "hospital" / "clean.csv", header=True).rows
    wrong = rows - clean  # tuples with at least one wrong cell
    deleted = {tuple(a.args) for a in result[0].delete}
    assert (len(wrong), len(deleted & wrong)) == (407, 371)  # precision 371/385, recall 371/407


def test_tax_fd_fast_path_equals_the_self_join_on_a_slice():
    text = (DATA / "tax" / "dirty_50k.csv").read_text().splitlines(keepends=True)
    rows = read_csv_lines(text[:1501])
    rules, _, model = load("tax.lp", {"tax": rows})
    assert find_falsifiers(rules, model).violations() == find_violations(rules, model, ENGINE)


def read_csv_lines(lines):
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.writelines(lines)
    try:
        return read_csv(Path(f.name), header=True).rows
    finally:
        Path(f.name).unlink()


def test_tax_50k_violating_groups_as_the_data_readme_measured_them():
    rows = read_csv(DATA / "tax" / "dirty_50k.csv", header=True).rows
    rules, _, model = load("tax.lp", {"tax": rows})
    groups = {v.name: len(v.groups) for v in find_falsifiers(rules, model)}
    assert groups == {
        "fd_tax__zip__city": 21,
        "fd_tax__zip__state": 312,
        "fd_tax__zip_has_child__child_exemp": 79,
        "fd_tax__zip_marital_status__single_exemp": 89,
        "fd_tax__zip_marital_status__married_exemp": 89,
        "fd_tax__area_code__state": 167,
    }


def test_openflights_dangling_keys_and_code_mismatches():
    rules, _, model = load("openflights.lp", open_source(DATA / "openflights").load())
    assert [(v.name, v.count) for v in find_falsifiers(rules, model)] == [
        ("fk_routes__source_airport_id__airports", 263),
        ("fk_routes__destination_airport_id__airports", 267),
        ("fk_airports__country__countries", 147),
        ("fk_airlines__country__countries", 216),
        ("source_code", 538),
        ("destination_code", 543),
    ]


def test_openflights_slice_repair_holds_and_may_insert_missing_parents():
    facts = open_source(DATA / "openflights").load()
    facts["routes"] = set(sorted(facts["routes"], key=str)[:400])
    facts["airports"] = {r for r in facts["airports"] if r[3] < "C"}  # airports of countries A-B
    rules, _, model = load("openflights.lp", facts)
    result = repair(rules, model, policy="min-card")
    assert result.tables and consistent_after(rules, model, result[0])
    assert result.case == "general"


def test_wn18rr_hypernym_cycle_has_two_minimal_repairs():
    triples = set()
    for name in ("train.txt", "valid.txt", "test.txt"):
        for line in (DATA / "wn18rr" / name).read_text().splitlines():
            head, relation, tail = line.split("\t")
            if relation == "_hypernym":
                triples.add((head, relation, tail))
    rules, _, model = load("wn18rr.lp", {"triple": triples})
    result = repair(rules, model, limit=5)
    assert [t.lines() for t in result] == [
        ['-triple("02422663", "_hypernym", "02423762")'],
        ['-triple("02423762", "_hypernym", "02422663")'],
    ]


def test_cli_repairs_hospital_with_the_shipped_example(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "hospital.csv").symlink_to(DATA / "hospital" / "dirty.csv")
    out = tmp_path / "out"
    assert main(["repair", str(EXAMPLES / "hospital.lp"), "--data", str(data), "--out", str(out), "--policy", "min-card", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["consistent"] is True and len(report["repairs"][0]["delete"]) == 385
    assert len(report["violations"]) == 15
    repaired = read_csv(out / "hospital.csv", header=True)
    assert repaired.header[:2] == ["ProviderNumber", "HospitalName"] and len(repaired.rows) == 1000 - 385
    assert main(["check", str(EXAMPLES / "hospital.lp"), "--data", str(out)]) == 0
