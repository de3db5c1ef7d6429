"""Values survive every store byte for byte (issue 15, item 3): written by a commit to .lp, CSV,
Parquet and SQLite and read back identical; the engines agree on them or refuse them clearly."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nablog import Database, NablogError
from nablog.io import Stores, open_source
from nablog.lang import Delta, parse
from tests.strategies import examples

HARD = [
    "a\rb", "a\nb", "a\r\nb", "a\tb", 'say "hi"', "back\\slash", "\\", "a,b", ";", "x y", "",
    "Ελληνική", "日本語", "😀", "00260881", "007", "12", "-3", "+5", "1.0", "1e-5", " 7", "0x1F",
    "%", ".", "not", "\x0c", "\x0b", "\u2028", "\x1b[31m", "\x7f",
    0, -1, 2**63 - 1, -(2**63), 10**30, -(10**40),
]
NUL = "a\x00b"
COUNT = {"values": 0}

STORES = {
    "lp": lambda root: root / "facts.lp",
    "csv": lambda root: root / "data",
    "csv-file": lambda root: root / "t.csv",
    "parquet": lambda root: root / "pq",
    "sqlite": lambda root: root / "facts.db",
}


def _open(kind: str, root: Path):
    path = STORES[kind](root)
    if kind in ("csv", "parquet"):
        path.mkdir(exist_ok=True)
        if kind == "parquet" and not any(path.iterdir()):
            # A Parquet-only directory writes new relations as Parquet.
            open_source(path / "seed.parquet").write({"seed": {(1,)}})
    return path


def _fits(kind: str, value) -> bool:
    if isinstance(value, int) and kind in ("parquet", "sqlite"):
        return -(2**63) <= value < 2**63  # 64-bit stores refuse larger ones (tested below)
    return True


def commit_and_read(kind: str, values: list) -> set:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = _open(kind, root)
        stores = Stores([], [open_source(path)])
        rows = {(i, v) for i, v in enumerate(values)}
        relation = "t"
        stores.commit(Delta.of_rows({relation: rows}))
        got = open_source(path).load([relation])[relation]
        COUNT["values"] += len(values)
        return got


@pytest.mark.parametrize("kind", sorted(STORES))
def test_every_hard_value_round_trips_through_every_store(kind):
    values = [v for v in HARD if _fits(kind, v)]
    assert commit_and_read(kind, values) == set(enumerate(values))


@pytest.mark.parametrize("kind", ["csv", "csv-file", "parquet", "sqlite"])
def test_a_nul_round_trips_where_the_format_can_hold_it(kind):
    assert commit_and_read(kind, [NUL]) == {(0, NUL)}


def test_a_nul_is_refused_by_a_lp_file_and_by_clingo_with_a_clear_error(tmp_path):
    path = tmp_path / "facts.lp"
    path.write_text("#base t/1.\n")
    with pytest.raises(NablogError, match="holds a NUL character") as info:
        Stores([path]).commit(Delta.of_rows({"t": {(NUL,)}}))
    assert "keep this relation in a CSV, Parquet or SQLite store" in str(info.value)
    assert path.read_text() == "#base t/1.\n"
    # Issue 15, case 6: the engines agree or refuse clearly (never "internal error").
    program = parse('q(X) :- p(X).')
    assert Database(program, {"p": {(NUL,)}}).query("q(X)") == [(NUL,)]
    with pytest.raises(NablogError, match="clingo cannot represent"):
        Database(program, {"p": {(NUL,)}}, engine="clingo").query("q(X)")


def test_integers_beyond_64_bits_are_refused_by_64_bit_stores(tmp_path):
    for kind in ("parquet", "sqlite"):
        with pytest.raises(NablogError, match="64 bits"):
            Stores([], [open_source(_open(kind, tmp_path))]).commit(Delta.of_rows({"t": {(2**64,)}}))


def test_the_engines_agree_on_every_hard_value_clingo_can_hold():
    program = parse("q(X, Y) :- t(X, Y). r(X) :- t(_, X), t(_, Y), X = Y.")
    values = [v for v in HARD if not isinstance(v, int) or -(2**31) <= v < 2**31]
    facts = {"t": {(i, v) for i, v in enumerate(values)}}
    python = Database(program, facts).model()
    clingo = Database(program, facts, engine="clingo").model()
    assert {p: set(python[p]) for p in ("q", "r")} == {p: set(clingo[p]) for p in ("q", "r")}


def test_a_carriage_return_in_a_lp_file_survives_check_query_and_undo(tmp_path):
    """Issue 15, case 4."""
    path = tmp_path / "db.lp"
    path.write_text("#base t/1.\np(X) :- t(X).\n")
    db = Database.from_files(path)
    db.apply(Delta.parse('+t("a\\rb").'))
    again = Database.from_files(path)
    assert again.query("p(X)") == [("a\rb",)]
    assert again.violations() == []
    assert Database.from_files(path, engine="clingo").query("p(X)") == [("a\rb",)]
    again.undo()
    assert path.read_text() == "#base t/1.\np(X) :- t(X).\n"


values = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=10),
    st.sampled_from([v for v in HARD if isinstance(v, str)]),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(),
)


@given(st.sampled_from(sorted(STORES)), st.lists(values, min_size=1, max_size=8))
@settings(max_examples=examples(150), deadline=None)
def test_arbitrary_values_round_trip_through_every_store(kind, drawn):
    drawn = [v for v in drawn if _fits(kind, v) and not (kind == "lp" and isinstance(v, str) and "\x00" in v)]
    if drawn:
        assert commit_and_read(kind, drawn) == set(enumerate(drawn))


def test_zz_values_round_tripped(capsys):
    with capsys.disabled():
        print(f"\n[issue 15] values round-tripped through stores by commits: {COUNT['values']}")
    assert COUNT["values"] > 0
