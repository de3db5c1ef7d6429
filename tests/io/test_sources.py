"""open_source dispatch and directories of CSV/Parquet files (two-phase writes across files)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from nablog.io import (
    CsvFile,
    DirectorySource,
    FactsFile,
    ParquetFile,
    SqliteDatabase,
    open_source,
    parquetfile,
)
from nablog.lang import DataError

from .helpers import leftovers


def test_dispatch_by_suffix(tmp_path):
    assert isinstance(open_source(tmp_path), DirectorySource)
    assert isinstance(open_source(tmp_path / "e.csv"), CsvFile)
    assert isinstance(open_source(tmp_path / "E.CSV"), CsvFile)
    assert isinstance(open_source(tmp_path / "e.parquet"), ParquetFile)
    for name in ("p.lp", "p.dl"):
        assert isinstance(open_source(tmp_path / name), FactsFile)
    for name in ("d.db", "d.sqlite", "d.sqlite3"):
        assert isinstance(open_source(tmp_path / name), SqliteDatabase)
    assert open_source(tmp_path / "edge.csv").relation == "edge"


def test_unknown_format_and_missing_path(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DataError) as info:
        open_source(tmp_path / "notes.txt")
    assert str(info.value) == (
        f"error: cannot open {tmp_path / 'notes.txt'}: unknown format .txt\n"
        f"  --> {tmp_path / 'notes.txt'}\n"
        "hint: give a directory of .csv/.parquet files, or a .lp, .dl, .csv, .parquet, .db, .sqlite or .sqlite3 file"
    )
    with pytest.raises(DataError, match="no such file or directory"):
        open_source(tmp_path / "nowhere")


def test_directory_of_csv_and_parquet(tmp_path):
    (tmp_path / "edge.csv").write_text("src,dst\n1,2\n2,3\n")
    open_source(tmp_path / "node.parquet").write({"node": {(1,), ("x",)}})
    (tmp_path / "README.md").write_text("not a relation")
    (tmp_path / ".edge.csv.abc.tmp").write_text("left over")
    (tmp_path / "sub").mkdir()
    source = open_source(tmp_path)
    assert source.relations() == ["edge", "node"]
    assert source.load() == {"edge": {(1, 2), (2, 3)}, "node": {(1,), ("x",)}}
    assert source.load(["node", "other"]) == {"node": {(1,), ("x",)}, "other": set()}


def test_directory_write_keeps_formats_and_headers(tmp_path):
    (tmp_path / "edge.csv").write_text("src,dst\n1,2\n")
    open_source(tmp_path / "node.parquet").write({"node": {(1,)}})
    source = open_source(tmp_path)
    source.write({"edge": {(1, 2), (5, 6)}, "node": {(2,)}, "fresh": {("a", 1)}, "nothing": set()})
    assert (tmp_path / "edge.csv").read_text() == "src,dst\n1,2\n5,6\n"
    assert pq.read_table(tmp_path / "node.parquet").to_pydict() == {"c0": [2]}
    assert (tmp_path / "fresh.csv").read_text() == "a,1\n"  # CSV: the directory has CSV files
    assert not list(tmp_path.glob("nothing.*"))
    assert open_source(tmp_path).load() == {"edge": {(1, 2), (5, 6)}, "fresh": {("a", 1)}, "node": {(2,)}}


def test_parquet_only_directory_gets_parquet_files(tmp_path):
    open_source(tmp_path / "node.parquet").write({"node": {(1,)}})
    open_source(tmp_path).write({"edge": {(1, 2)}})
    assert (tmp_path / "edge.parquet").exists() and not (tmp_path / "edge.csv").exists()


def test_relation_stored_twice_is_an_error(tmp_path):
    (tmp_path / "edge.csv").write_text("1,2\n")
    open_source(tmp_path / "edge.parquet").write({"edge": {(1, 2)}})
    with pytest.raises(DataError) as info:
        open_source(tmp_path).load()
    assert str(info.value) == (
        f"error: relation edge is stored twice in {tmp_path}: edge.csv and edge.parquet\n"
        f"  --> {tmp_path}\n"
        "hint: keep one file per relation; remove or rename the other"
    )


def test_new_relation_needs_a_plain_name(tmp_path):
    with pytest.raises(DataError, match="not a plain name"):
        open_source(tmp_path).write({"../escape": {(1,)}})
    assert list(tmp_path.parent.glob("escape*")) == []


def test_failure_in_one_file_leaves_every_file(tmp_path, monkeypatch):
    (tmp_path / "a.csv").write_text("1\n")
    open_source(tmp_path / "b.parquet").write({"b": {(1,)}})
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def fail(f, table):
        f.write(b"PAR1")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(parquetfile, "write_table", fail)
    # "a" is prepared first (names are sorted); "b" fails; neither file changes.
    with pytest.raises(DataError, match="No space left on device"):
        open_source(tmp_path).write({"a": {(2,)}, "b": {(2,)}})
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert leftovers(tmp_path) == []
