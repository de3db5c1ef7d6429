"""Property: random relations of integers and strings round-trip exactly through every format."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import examples

from nablog.io import open_source

# Any text but lone surrogates (not encodable as UTF-8, so no file format can hold them).
strings = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
tricky = st.sampled_from(["", "12", "-3", "00260881", "+5", "1.0", " 7", "a,b", 'q"q', "x y", "\n", "\r\n", "%", "."])
ints = st.integers(-(2**63), 2**63 - 1)
constants = st.one_of(ints, strings, tricky, st.integers(-3, 3))


@st.composite
def relations(draw, min_arity: int = 1) -> dict[str, set[tuple]]:
    names = draw(st.lists(st.sampled_from(["e", "f", "rel_2"]), min_size=1, max_size=3, unique=True))
    out = {}
    for name in names:
        arity = draw(st.integers(min_arity, 3))
        out[name] = draw(st.sets(st.tuples(*[constants] * arity), min_size=1 if arity else 0, max_size=8 if arity else 1))
    return out


SETTINGS = settings(max_examples=examples(60), deadline=None)


def round_trip(target: str, facts: dict[str, set[tuple]], **options) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / target
        if target == "dir":
            path.mkdir()
        open_source(path, **options).write(facts)
        expected = {name: rows for name, rows in facts.items() if rows}
        if not expected:  # only empty relations: nothing to store, no file is created
            assert not path.exists() or open_source(path, **options).load() == {}
            return
        # A fresh source reads what was written, exactly.
        assert open_source(path, **options).load() == expected


@SETTINGS
@given(relations())
def test_csv_directory_round_trip(facts):
    round_trip("dir", facts, header=False)


@SETTINGS
@given(relations())
def test_csv_directory_with_headers_round_trip(facts):
    round_trip("dir", facts, header=True)


@SETTINGS
@given(relations())
def test_parquet_directory_round_trip(facts):
    with tempfile.TemporaryDirectory() as tmp:
        for name in facts:
            open_source(Path(tmp) / f"{name}.parquet").write({name: facts[name]})
        assert open_source(tmp).load() == facts


@SETTINGS
@given(relations())
def test_sqlite_round_trip(facts):
    round_trip("facts.db", facts)


def without_nul(facts: dict[str, set[tuple]]) -> dict[str, set[tuple]]:
    """A NUL cannot be in a clingo string, so not in a .lp file (refused: see test_values.py)."""
    return {name: {row for row in rows if not any(isinstance(v, str) and "\x00" in v for v in row)} for name, rows in facts.items()}


@SETTINGS
@given(relations(min_arity=0).map(without_nul))
def test_facts_file_round_trip(facts):
    round_trip("facts.lp", facts)


@SETTINGS
@given(relations().map(without_nul), relations(min_arity=0).map(without_nul))
def test_facts_file_rewrite_keeps_the_program(old, new):
    program = "% header comment\np(X) :- e(X, _), not f(X).  % a rule\n#base e/2.\n:- rel_2(X, X, X).\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db.lp"
        source = open_source(path)
        path.write_text(program)
        source.write(old)
        source.write(new)
        expected = {name: rows for name, rows in old.items() if name not in new and rows}
        expected.update({name: rows for name, rows in new.items() if rows})
        assert open_source(path).load() == expected
        text = path.read_text(encoding="utf-8")
        for line in program.splitlines(keepends=True):
            assert line in text


@SETTINGS
@given(relations(), relations())
def test_successive_writes_through_one_source(first, second):
    # The same object remembers what it found (here: CSV files without header).
    with tempfile.TemporaryDirectory() as tmp:
        source = open_source(tmp)
        source.write(first)
        source.write(second)
        expected = {name: rows for name, rows in first.items() if name not in second}
        expected.update(second)
        assert source.load() == {name: rows for name, rows in expected.items() if rows}
