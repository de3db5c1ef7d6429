"""Cell repair (issue 26): exact outcomes on small tables, the command line's row-aligned output,
and a property test against brute force over the candidate values."""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nablog.cli import main
from nablog.lang import Atom, Delta, parse
from nablog.repair.cells import CellCorrection, repair_cells
from nablog.repair.cellsolve import brute_force, solve_clingo
from nablog.repair.candidates import Domain, copy_clusters, levenshtein

from ..strategies import examples

HOSPITAL = """#columns h(name, zip, city).
#fd h: name -> zip.
#fd h: zip -> city."""

ROWS = [
    ("acme", "35233", "bham"),
    ("acme", "35233", "bham"),
    ("acme", "35233", "bham"),
    ("acme", "3523x", "bham"),
    ("zeta", "10001", "nyc"),
    ("zeta", "10001", "nyc"),
]


def test_a_typo_in_a_group_takes_the_groups_value_and_nothing_else_changes():
    result = repair_cells(parse(HOSPITAL), {"h": ROWS})
    assert [(c.relation, c.row, c.column, c.old, c.new, c.constraints) for c in result.corrections] == [
        ("h", 3, "zip", "3523x", "35233", ("fd_h__name__zip",)),
    ]
    assert result.status == "consistent" and result.left == []
    assert result.apply({"h": ROWS})["h"] == [ROWS[0]] * 4 + ROWS[4:]


def test_the_repair_is_seed_004s_composition_of_a_deletion_and_an_insertion_per_row():
    result = repair_cells(parse(HOSPITAL), {"h": ROWS})
    expected = Delta(frozenset({Atom("h", ROWS[0])}), frozenset({Atom("h", ROWS[3])}))
    assert result.delta({"h": ROWS}) == expected
    assert result.table({"h": ROWS}).delta == expected


def test_a_consistent_table_changes_nothing():
    result = repair_cells(parse(HOSPITAL), {"h": ROWS[:3] + ROWS[4:]})
    assert result.corrections == () and result.status == "consistent" and result.violations_before == 0


def test_a_protected_relation_is_never_changed_and_its_violation_is_reported():
    result = repair_cells(parse(HOSPITAL), {"h": ROWS}, protect=["h"])
    assert result.corrections == ()
    assert result.status == "partial"
    assert [name for name, _ in result.left] == ["fd_h__name__zip"]


def test_a_protected_fact_keeps_its_values():
    rows = [("a", 1), ("a", 1), ("a", 2)]
    program = parse("#columns r(k, v). #fd r: k -> v.")
    free = repair_cells(program, {"r": rows})
    assert [(c.row, c.new) for c in free.corrections] == [(2, 1)]
    kept = repair_cells(program, {"r": rows}, protect=[Atom("r", ("a", 2))])
    assert all(c.row != 2 for c in kept.corrections)


def test_a_cell_no_constraint_implicates_is_never_changed():
    rows = ROWS + [("omega", "9999x", "xx")]  # a strange value no constraint involves
    result = repair_cells(parse(HOSPITAL), {"h": rows})
    assert {(c.row, c.column) for c in result.corrections} == {(3, "zip")}


def test_a_row_moved_into_a_group_brings_its_other_cells_into_the_repair():
    # Row 3's name is a typo, so its zip typo violates nothing until the name is repaired (by
    # id -> name and phone -> name); then the zip disagrees inside the group (name -> zip), joins
    # the problem in a second round, and is repaired too.
    program = parse("#columns h(id, phone, name, zip). #fd h: id -> name. #fd h: phone -> name. #fd h: name -> zip.")
    rows = [(1, 55, "acme", "35233")] * 3 + [(1, 55, "acxe", "3523x")] + [(2, 66, "zeta", "10001")] * 2
    result = repair_cells(program, {"h": rows})
    assert [(c.row, c.column, c.new) for c in result.corrections] == [(3, "name", "acme"), (3, "zip", "35233")]
    assert result.status == "consistent" and result.rounds == 2


def test_sources_are_weighted_by_their_agreement_with_the_others():
    # Two reliable sources agree on every flight; a third disagrees everywhere. On flight f3 the
    # reliable sources are outvoted two to one by copies of the unreliable one, yet win.
    program = parse("#columns f(src, flight, arr). #fd f: flight -> arr.")
    rows = []
    for flight, arr in (("f1", "9:00"), ("f2", "10:00"), ("f4", "12:00"), ("f5", "13:00")):
        rows += [("good1", flight, arr), ("good2", flight, arr), ("bad", flight, "0:00")]
    rows += [("good1", "f3", "11:00"), ("bad", "f3", "1:00"), ("bad", "f3", "1:00")]
    plain = repair_cells(program, {"f": rows})
    weighted = repair_cells(program, {"f": rows}, source="src")
    assert {c.new for c in plain.corrections if rows[c.row][1] == "f3"} == {"1:00"}
    assert {c.new for c in weighted.corrections if rows[c.row][1] == "f3"} == {"11:00"}


def test_sources_that_copy_one_another_vote_once():
    # copy1 and copy2 repeat bad everywhere, its wrong value on f1 too. good1 and good2 agree and
    # are outvoted together on f2 by the copies: copies too by the plain majority, apart once
    # judged against the vote, in which the copies count once.
    rows = [("good1", "f1", "9"), ("good2", "f1", "9"), ("good3", "f1", "9"), ("good4", "f1", "9"),
            ("bad", "f1", "0"), ("copy1", "f1", "0"), ("copy2", "f1", "0"),
            ("good1", "f2", "5"), ("good2", "f2", "5"), ("bad", "f2", "1"), ("copy1", "f2", "1"), ("copy2", "f2", "1")]
    names = ["bad", "copy1", "copy2", "good1", "good2", "good3", "good4"]
    src = np.array([names.index(r[0]) for r in rows])
    groups = [list(range(7)), list(range(7, 12))]
    assert copy_clusters(rows, src, len(names), groups, [2]).tolist() == [3.0, 3.0, 3.0, 2.0, 2.0, 1.0, 1.0]
    assert copy_clusters(rows, src, len(names), groups, [2], truth={(0, 2): "9", (1, 2): "5"}).tolist() == [3.0, 3.0, 3.0, 1.0, 1.0, 1.0, 1.0]
    program = parse("#columns f(src, flight, arr). #fd f: flight -> arr.")
    weighted = repair_cells(program, {"f": rows}, source="src")
    assert {(c.row, c.new) for c in weighted.corrections} == {(4, "9"), (5, "9"), (6, "9"), (9, "5"), (10, "5"), (11, "5")}


FLIGHTS = """#columns f(src, flight, dep, arr).
#fd f: flight -> dep.
#fd f: flight -> arr.
#fd f: dep -> arr."""


def test_with_sources_the_entity_key_never_changes_and_entities_are_repaired_first():
    # flight names the entity each source reports on; dep -> arr links the entities. x's arrival
    # is 9:30 by the majority of its reports, y's 10:30; z departs at 9:00 like x.
    rows = [("s1", "x", "9:00", "9:30"), ("s2", "x", "9:00", "9:30"), ("s3", "x", "9:00", "9:31"),
            ("s1", "y", "10:00", "10:30"), ("s2", "y", "10:00", "10:30"), ("s3", "y", "10:00", "10:31"),
            ("s1", "z", "9:00", "9:30"), ("s2", "z", "9:00", "9:30"), ("s3", "z", "9:00", "9:30")]
    result = repair_cells(parse(FLIGHTS), {"f": rows}, source="src")
    assert [(c.row, c.column, c.old, c.new) for c in result.corrections] == [(2, "arr", "9:31", "9:30"), (5, "arr", "10:31", "10:30")]
    assert result.status == "consistent" and not result.unrepaired
    assert all(c.column != "flight" for c in result.corrections)


def test_a_null_is_never_a_candidate_and_never_wins_a_vote():
    program = parse(FLIGHTS)
    rows = [("s1", "x", "9:00", ""), ("s2", "x", "9:00", ""), ("s3", "x", "9:00", "9:30"),
            ("s1", "y", "10:00", "10:30"), ("s2", "y", "10:00", "10:30"), ("s3", "y", "10:00", "10:30")]
    result = repair_cells(program, {"f": rows}, source="src")
    assert [(c.row, c.old, c.new) for c in result.corrections] == [(0, "", "9:30"), (1, "", "9:30")]


def test_a_component_the_deadline_stops_keeps_its_cells_and_names_them():
    result = repair_cells(parse(HOSPITAL), {"h": ROWS}, timeout=0.0)
    assert result.corrections == () and result.status == "partial"
    assert result.unrepaired == (("h", 3, "zip"),)
    assert "1 cell left unrepaired" in result.message
    done = repair_cells(parse(HOSPITAL), {"h": ROWS})
    assert done.unrepaired == () and [(c.row, c.new) for c in done.corrections] == [(3, "35233")]


def test_a_denial_with_comparisons_is_repaired_by_a_value_the_data_supports():
    # Salaries rise with the grade: a grade-3 salary below a grade-2 salary violates the denial.
    program = parse(
        "#columns emp(name, grade, salary).\n"
        "#constraint rises :- emp(_, G1, S1), emp(_, G2, S2), G1 < G2, S1 > S2.\n"
        "#fd emp: grade -> salary."
    )
    rows = [("a", 1, 100), ("b", 1, 100), ("c", 2, 200), ("d", 2, 200), ("e", 3, 300), ("f", 3, 300), ("g", 3, 150)]
    result = repair_cells(program, {"emp": rows})
    assert [(c.row, c.column, c.old, c.new) for c in result.corrections] == [(6, "salary", 150, 300)]
    assert set(result.corrections[0].constraints) == {"fd_emp__grade__salary", "rises"}
    assert result.status == "consistent"


def test_a_foreign_key_is_repaired_by_a_referenced_value_the_row_supports():
    program = parse(
        "#columns city(name, region, country). #columns country(code).\n"
        "#fk city: country -> country: code."
    )
    cities = [(f"c{i}", "west", "fr") for i in range(10)] + [(f"i{i}", "south", "it") for i in range(3)]
    relations = {"city": cities + [("nice", "west", "fx")], "country": [("fr",), ("it",)]}
    result = repair_cells(program, relations)
    assert [(c.relation, c.row, c.old, c.new, c.constraints) for c in result.corrections] == [("city", 13, "fx", "fr", ("fk_city__country__country",))]
    assert result.status == "consistent"


def test_a_trusted_dependency_keeps_holding():
    # zip -> city is trusted (it holds); repairing name -> zip must not break it.
    program = parse("#columns h(name, zip, city). #fd h: name -> zip. #fd trusted_zip h: zip -> city. #trusted trusted_zip.")
    rows = [("acme", "1", "x"), ("acme", "1", "x"), ("acme", "2", "y"), ("beta", "2", "y")]
    result = repair_cells(program, {"h": rows})
    after = result.apply({"h": rows})["h"]
    assert result.status == "consistent"
    for s, t in itertools.combinations(after, 2):
        assert s[1] != t[1] or s[2] == t[2]


def test_a_group_without_a_majority_is_left_violated_never_guessed():
    # A tie says nothing about which value is right: nothing changes, even with --enumerate, and
    # the violation is reported; a group with a majority next to it is repaired.
    program = parse("#columns r(k, v). #fd r: k -> v.")
    rows = [("a", "x"), ("a", "y"), ("b", "u"), ("b", "u"), ("b", "w")]
    for limit in (1, 5):
        result = repair_cells(program, {"r": rows}, limit=limit)
        assert [(c.row, c.new) for c in result.corrections] == [(4, "u")]
        assert result.alternatives == []
        assert result.status == "partial" and [name for name, _ in result.left] == ["fd_r__k__v"]


def test_the_correction_type_is_a_value():
    c = CellCorrection("h", 3, "zip", 1, "3523x", "35233", ("fd_h__name__zip",), 0.02)
    assert c == CellCorrection("h", 3, "zip", 1, "3523x", "35233", ("fd_h__name__zip",), 0.02)
    assert c.to_json() == {"relation": "h", "row": 3, "column": "zip", "old": "3523x", "new": "35233", "constraints": ["fd_h__name__zip"], "weight": 0.02}
    assert len({c, c}) == 1


def test_levenshtein_agrees_with_the_textbook_recurrence():
    def textbook(s, t):
        previous = list(range(len(t) + 1))
        for i, a in enumerate(s, 1):
            current = [i]
            for j, b in enumerate(t, 1):
                current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
            previous = current
        return previous[-1]

    for s, t in itertools.product(["", "a", "ab", "ba", "abc", "kitten", "sitting", "x" * 70, "x" * 69 + "y"], repeat=2):
        assert levenshtein(s, t) == textbook(s, t)


def test_clingo_and_brute_force_agree_on_a_component():
    from nablog.repair.cellsolve import CellProblem, KeyFactor, KeyRow

    problem = CellProblem(
        [Domain(("b", "a"), (0, 500)), Domain(("a", "b"), (0, 700)), Domain(("k", "j"), (0, 100))],
        keys=[KeyFactor("fd", [KeyRow((("=", "k"),), 0, None), KeyRow((("=", "k"),), 1, None), KeyRow((2,), None, "c")])],
    )
    expected = brute_force(problem)
    got = solve_clingo(problem)
    assert [(s.violations, s.cost) for s in got] == [(s.violations, s.cost) for s in expected] == [(0, 600)]


@pytest.mark.parametrize("path", ["brute", "clingo"])
def test_the_certain_changes_never_trade_a_violation_of_the_data_for_a_new_one(path, monkeypatch):
    # A denial instance only changing cell 0 alone creates (cell 0 new, cell 1 own value) and one
    # the data has (cell 0 own value). The optima (1,1) and (1,2) differ on cell 1; keeping it
    # while taking cell 0's agreed change would violate the created instance at cost 100, worse
    # than the data. Held at its own value, cell 1 leaves cell 0 no gain: nothing changes.
    from nablog.repair import cellsolve
    from nablog.repair.cellsolve import CellProblem, InstanceFactor, certain

    if path == "clingo":
        monkeypatch.setattr(cellsolve, "BRUTE", 0)
    problem = CellProblem(
        [Domain(("a", "a2"), (0, 100)), Domain(("x", "y", "z"), (0, 100, 100))],
        instances=[InstanceFactor("existing", (0,), frozenset({(0,)})), InstanceFactor("created", (0, 1), frozenset({(1, 0)}))],
    )
    s = certain(problem)
    assert (s.assignment, s.violations, s.cost, s.optimal) == ((0, 0), 1, 0, True)


@pytest.mark.parametrize("path", ["brute", "clingo"])
def test_the_certain_changes_create_a_violation_only_within_an_optimum_that_removes_more(path, monkeypatch):
    # Changing cell 0 removes two violations the data has and creates one; the one optimum
    # (1,1) makes that trade (a row moved into a group, repaired in the next round).
    from nablog.repair import cellsolve
    from nablog.repair.cellsolve import CellProblem, InstanceFactor, certain

    if path == "clingo":
        monkeypatch.setattr(cellsolve, "BRUTE", 0)
    problem = CellProblem(
        [Domain(("a", "a2"), (0, 100)), Domain(("x", "y"), (0, 50))],
        instances=[
            InstanceFactor("e1", (0,), frozenset({(0,)})), InstanceFactor("e2", (0,), frozenset({(0,)})),
            InstanceFactor("created", (0,), frozenset({(1,)})), InstanceFactor("e3", (1,), frozenset({(0,)})),
            InstanceFactor("link", (0, 1), frozenset()),
        ],
    )
    assert [(s.assignment, s.violations, s.cost) for s in brute_force(problem, limit=0)] == [((1, 1), 1, 150)]
    s = certain(problem)
    assert (s.assignment, s.violations, s.cost, s.optimal) == ((1, 1), 1, 150, True)


# -- the command line -------------------------------------------------------------------------------


def test_cli_writes_row_aligned_files_and_the_cell_table(tmp_path, capsys):
    (tmp_path / "h.lp").write_text(HOSPITAL + "\n")
    data = tmp_path / "data"
    data.mkdir()
    text = 'name,zip,city\nacme,35233,bham\nacme,35233,bham\nacme,35233,bham\nacme,"3523x",bham\r\nzeta,10001,nyc\nzeta,10001,nyc\n'
    (data / "h.csv").write_text(text)
    out = tmp_path / "out"
    status = main(["repair", str(tmp_path / "h.lp"), "--data", str(data), "--header", "--policy", "cells", "--out", str(out)])
    assert status == 0
    lines = (out / "h.csv").read_bytes().decode().splitlines(keepends=True)
    original = text.splitlines(keepends=True)
    assert [i for i, (a, b) in enumerate(zip(lines, original)) if a != b] == [4]
    assert lines[4] == "acme,35233,bham\r\n"
    assert (out / "corrections.csv").read_text() == "relation,row,column,old,new,constraints,weight\nh,3,zip,3523x,35233," + "fd_h__name__zip," + lines_weight(out) + "\n"
    assert "1 cell changed" in capsys.readouterr().out


def lines_weight(out):
    return (out / "corrections.csv").read_text().splitlines()[1].rsplit(",", 1)[1]


def test_cli_rejects_options_a_cell_repair_cannot_use(tmp_path, capsys):
    (tmp_path / "h.lp").write_text(HOSPITAL + "\n")
    (tmp_path / "h.csv").write_text("name,zip,city\nacme,1,x\n")
    status = main(["repair", str(tmp_path / "h.lp"), "--data", str(tmp_path / "h.csv"), "--header", "--policy", "cells", "--set", "new1=3"])
    assert status != 0
    assert "--set does not apply to --policy cells" in capsys.readouterr().err


# -- property: against brute force over the candidates ---------------------------------------------

FDS = [(0, 1), (1, 2), (0, 2), (2, 0)]


@st.composite
def tables(draw):
    n = draw(st.integers(3, 6))
    rows = [tuple(draw(st.sampled_from(values)) for values in (["a", "b", "c"], [1, 2, 3], ["x", "y"])) for _ in range(n)]
    fds = draw(st.lists(st.sampled_from(FDS), min_size=1, max_size=3, unique=True))
    dc = draw(st.booleans())
    return rows, fds, dc


def _program(fds, dc):
    text = "#columns r(a, b, c).\n" + "".join(f"#fd r: {'abc'[x]} -> {'abc'[y]}.\n" for x, y in fds)
    if dc:
        text += "#constraint order :- r(A, B1, _), r(A, B2, _), B1 < B2, B2 > 2.\n"
    return parse(text)


def _violations(rows, fds, dc):
    count = 0
    for x, y in fds:
        groups = {}
        for r in rows:
            groups.setdefault(r[x], set()).add(r[y])
        count += sum(len(v) - 1 for v in groups.values())
    if dc:
        count += sum(1 for s, t in itertools.product(rows, repeat=2) if s[0] == t[0] and s[1] < t[1] and t[1] > 2)
    return count


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_the_repair_makes_only_changes_every_optimal_repair_among_the_candidates_makes(case):
    # Brute force over every assignment of the candidate values: the optima are those with fewest
    # violations, then least cost; the repair changes a cell only when every optimum gives it the
    # same new value (equal evidence leaves a value), all of them when they make an optimum; what
    # it makes is an optimum with every other cell held at its value, so never has more
    # violations than the data.
    rows, fds, dc = case
    result = repair_cells(_program(fds, dc), {"r": rows})
    after = result.apply({"r": rows})["r"]
    cells = sorted(result.domains)
    space = [range(len(result.domains[c].values)) for c in cells]
    assume(len(list(itertools.islice(itertools.product(*space), 20001))) <= 20000)
    chosen = {(c.row, c.position): c.new for c in result.corrections}
    assert all((r, i) in {(c[1], c[2]) for c in cells} for r, i in chosen)  # only cells with candidates change
    made = tuple(result.domains[c].values.index(chosen[(c[1], c[2])]) if (c[1], c[2]) in chosen else 0 for c in cells)
    best, optima, best_held, made_measure = None, [], None, None
    for assignment in itertools.product(*space):
        table = [list(r) for r in rows]
        cost = 0
        for c, k in zip(cells, assignment):
            table[c[1]][c[2]] = result.domains[c].values[k]
            cost += result.domains[c].costs[k]
        m = (_violations([tuple(r) for r in table], fds, dc), cost)
        if best is None or m < best:
            best, optima = m, [assignment]
        elif m == best:
            optima.append(assignment)
        if all(k == 0 or (c[1], c[2]) in chosen for c, k in zip(cells, assignment)):
            best_held = m if best_held is None else min(best_held, m)
        if assignment == made:
            made_measure = m
    certain = {(c[1], c[2]): result.domains[c].values[optima[0][k]] for k, c in enumerate(cells) if optima[0][k] and all(o[k] == optima[0][k] for o in optima)}
    assert chosen.items() <= certain.items()
    assert made_measure == best_held
    assert _violations(after, fds, dc) <= _violations(rows, fds, dc)
    agreement = tuple(o if all(p[k] == o for p in optima) else 0 for k, o in enumerate(optima[0]))
    if agreement in optima:
        assert chosen == certain
    assert result.consistent == (_violations(after, fds, dc) == 0)


@pytest.mark.slow
def test_spark_finds_the_denial_instances_and_gives_the_same_repair(spark_engine):
    program = parse(
        "#columns emp(name, grade, salary).\n"
        "#constraint rises :- emp(_, G1, S1), emp(_, G2, S2), G1 < G2, S1 > S2.\n"
        "#fd emp: grade -> salary."
    )
    rows = [("a", 1, 100), ("b", 1, 100), ("c", 2, 200), ("d", 2, 200), ("e", 3, 300), ("f", 3, 300), ("g", 3, 150)]
    on_spark = repair_cells(program, {"emp": rows}, engine=spark_engine)
    assert on_spark.corrections == repair_cells(program, {"emp": rows}).corrections
    assert [(c.row, c.new) for c in on_spark.corrections] == [(6, 300)]


# -- verification by a person (seed 004 §5, case 2) ------------------------------------------------


def test_a_verified_true_row_never_changes_and_a_verified_false_row_must():
    program = parse(HOSPITAL)
    kept = repair_cells(program, {"h": ROWS}, verified={("h", ("acme", "3523x", "bham")): True})
    assert kept.corrections == () and kept.status == "partial"
    gone = repair_cells(program, {"h": ROWS}, verified={("h", ("acme", "35233", "bham")): False})
    assert gone.corrections == () and {name for name, _ in gone.left} == {"fd_h__name__zip", "verified_false_1"}


def test_interactive_verification_asks_about_each_updated_row_and_keeps_the_answers(tmp_path):
    import io

    from nablog.repair.verify import VerifiedTable, verify_cells_interactively

    program = parse(HOSPITAL)
    table = VerifiedTable(tmp_path / "verified.csv")
    asked = []
    answers = iter(["maybe", "y"])
    out = io.StringIO()
    verified = verify_cells_interactively(program, {"h": ROWS}, table, lambda q: asked.append(q) or next(answers), out)
    assert verified == {("h", ("acme", "35233", "bham")): True, ("h", ("acme", "3523x", "bham")): False}
    assert asked == ['  to h(acme, "35233", bham): is that right? [y/n, q to stop] '] * 2
    assert "1 update h(acme, \"3523x\", bham)" in out.getvalue() and "every update of the cell repair is verified." in out.getvalue()
    assert table.load() == verified
    final = repair_cells(program, {"h": ROWS}, verified=verified)
    assert [(c.row, c.new) for c in final.corrections] == [(3, "35233")] and final.consistent
    # "no": the updated row is false, so no row becomes it; the violation stays.
    refused = verify_cells_interactively(program, {"h": ROWS}, VerifiedTable(tmp_path / "no.csv"), lambda q: "n", io.StringIO())
    assert refused == {("h", ("acme", "35233", "bham")): False}
    assert repair_cells(program, {"h": ROWS}, verified=refused).corrections == ()


@st.composite
def reports(draw):
    """Small multi-source tables: sources s1..s3 report flights x, y with a departure and arrival."""
    n = draw(st.integers(3, 7))
    return [(draw(st.sampled_from(["s1", "s2", "s3"])), draw(st.sampled_from(["x", "y"])), draw(st.sampled_from(["9", "10", ""])), draw(st.sampled_from(["a", "b", ""]))) for _ in range(n)]


def _groups_violated(rows, fds):
    out = 0
    for x, y in fds:
        groups = {}
        for r in rows:
            groups.setdefault(r[x], set()).add(r[y])
        out += sum(1 for v in groups.values() if len(v) > 1)
    return out


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reports())
def test_with_sources_the_entity_key_stays_nulls_never_appear_and_left_is_what_stays_violated(rows):
    result = repair_cells(parse(FLIGHTS), {"f": rows}, source="src")
    after = result.apply({"f": rows})["f"]
    assert all(c.column != "flight" and c.new != "" for c in result.corrections)
    assert len(result.left) == _groups_violated(after, [(1, 2), (1, 3), (2, 3)])
    assert result.consistent == (len(result.left) == 0) and not result.unrepaired


# -- the spark engine: violation detection and candidate counts as Spark jobs ---------------------


TAX = """#columns tax(f_name, l_name, gender, area_code, phone, city, state, zip, marital_status,
             has_child, salary, rate, single_exemp, married_exemp, child_exemp).
#fd tax: zip -> city.
#fd tax: zip -> state.
#fd tax: zip, has_child -> child_exemp.
#fd tax: zip, marital_status -> single_exemp.
#fd tax: zip, marital_status -> married_exemp.
#fd tax: f_name -> gender.
#fd tax: area_code -> state.
#fd tax: phone, zip -> area_code."""


def _tax_slice(n):
    import csv

    from nablog.io import text_to_constant

    from ..shared_data import DATA

    path = DATA / "tax" / "dirty_50k.csv"
    if not path.is_file():
        pytest.fail(f"the shared data is missing: {path} (see tests/shared_data.py)")
    with path.open(newline="", encoding="utf-8") as f:
        return [tuple(text_to_constant(v) for v in r) for r in itertools.islice(csv.reader(f), 1, n + 1)]


@pytest.mark.slow
def test_spark_finds_the_same_violating_groups_counts_domains_and_repair_as_python_on_a_slice_of_tax(spark_engine):
    from nablog.repair.candidates import Statistics, domains
    from nablog.repair.cells import _Fd, _fd_groups
    from nablog.engines.spark.cells import CodedRelation

    rows = _tax_slice(10_000)
    program = parse(TAX)
    fds = [_Fd(f"fd{k}", "tax", lhs, rhs) for k, (lhs, rhs) in enumerate([((7,), 5), ((7,), 6), ((7, 9), 14), ((7, 8), 12), ((7, 8), 13), ((0,), 2), ((3,), 6), ((4, 7), 3)])]
    on_python = _fd_groups(fds, {"tax": rows})
    on_spark = _fd_groups(fds, {"tax": rows}, spark_engine)
    assert on_spark == on_python
    assert sum(len(g) for g in on_python.values()) == 66  # violating groups of the slice
    local = Statistics(rows, 15)
    remote = Statistics(rows, 15, pairs=CodedRelation(rows, 15, session=spark_engine.session).pair)
    suspects = sorted({r for gs in on_python.values() for g in gs for r in g})
    for column in (6, 14):  # state and child_exemp, the columns the repair changes
        context = [b for b in range(15) if b != column]
        for a, b in ((column, c) for c in context):
            assert all(np.array_equal(x, y) for x, y in zip(remote.pair(a, b), local.pair(a, b)))
        assert domains(remote, column, suspects, context) == domains(local, column, suspects, context)
    python_repair = repair_cells(program, {"tax": rows})
    spark_repair = repair_cells(program, {"tax": rows}, engine=spark_engine)
    assert spark_repair.corrections == python_repair.corrections and len(python_repair.corrections) == 51
