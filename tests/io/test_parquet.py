"""Parquet files: typed columns, mixed int/str columns as structs, foreign files, atomic rewrite."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nablog.io import open_source, parquetfile
from nablog.lang import DataError

from .helpers import leftovers

MIXED = pa.struct([("int", pa.int64()), ("str", pa.string())])


def test_round_trip_with_mixed_columns(tmp_path):
    rows = {
        (1, "a", "00260881"),
        (-7, "with, comma", "12"),
        ("x", 'with "quotes"', 12),
        ("ünïcødé ✓", "", " 7"),
        (2**63 - 1, -(2**63), "line\nbreak"),
    }
    path = tmp_path / "r.parquet"
    open_source(path).write({"r": rows})
    assert open_source(path).load() == {"r": rows}
    schema = pq.read_schema(path)
    assert schema.names == ["c0", "c1", "c2"]
    assert [schema.field(i).type for i in range(3)] == [MIXED, MIXED, MIXED]


def test_uniform_columns_get_plain_types(tmp_path):
    path = tmp_path / "e.parquet"
    open_source(path).write({"e": {(1, "a"), (2, "b")}})
    table = pq.read_table(path)
    assert table.schema.types == [pa.int64(), pa.string()]
    assert table.to_pydict() == {"c0": [1, 2], "c1": ["a", "b"]}  # sorted rows


def test_foreign_file_types_and_nulls(tmp_path):
    path = tmp_path / "t.parquet"
    table = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int32()),
            "name": pa.array(["a", None, "c"], pa.large_string()),
            "kind": pa.array(["x", "y", "x"]).dictionary_encode(),
            "count": pa.array([7, 8, 9], pa.uint8()),
        }
    )
    pq.write_table(table, path)
    assert open_source(path).load() == {"t": {(1, "a", "x", 7), (2, "", "y", 8), (3, "c", "x", 9)}}


def test_column_names_are_kept_when_rewriting(tmp_path):
    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"src": [1], "dst": [2]}), path)
    open_source(path).write({"e": {(1, 2), (2, "z")}})
    schema = pq.read_schema(path)
    assert schema.names == ["src", "dst"] and schema.field(1).type == MIXED


def test_emptied_relation_keeps_its_columns(tmp_path):
    path = tmp_path / "e.parquet"
    open_source(path).write({"e": {(1, "a")}})
    open_source(path).write({"e": set()})
    table = pq.read_table(path)
    assert table.num_rows == 0 and table.schema.types == [pa.int64(), pa.string()]
    assert open_source(path).load() == {"e": set()}


def test_float_column_is_an_error(tmp_path):
    path = tmp_path / "tax.parquet"
    pq.write_table(pa.table({"name": ["a"], "rate": [5.3]}), path)
    with pytest.raises(DataError) as info:
        open_source(path).load()
    assert str(info.value) == (
        "error: column rate of tax.parquet has type double, which holds no Datalog constants\n"
        f"  --> {path}, column rate\n"
        "hint: nablog reads integer and string columns; cast rate to int64 or string"
    )


def test_not_a_parquet_file(tmp_path):
    path = tmp_path / "e.parquet"
    path.write_text("1,2\n")
    with pytest.raises(DataError, match=r"not a readable Parquet file"):
        open_source(path).load()


def test_integer_beyond_64_bits_is_an_error(tmp_path):
    path = tmp_path / "e.parquet"
    with pytest.raises(DataError, match="Parquet integers have 64 bits"):
        open_source(path).write({"e": {(2**64,)}})
    assert not path.exists()


def test_failure_while_writing_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "e.parquet"
    open_source(path).write({"e": {(1, 2)}})
    before = path.read_bytes()

    def half_then_fail(f, table):
        f.write(b"PAR1 partial")
        raise RuntimeError("crash in the middle of the write")

    monkeypatch.setattr(parquetfile, "write_table", half_then_fail)
    with pytest.raises(RuntimeError):
        open_source(path).write({"e": {(3, 4)}})
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_failure_of_the_rename_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "e.parquet"
    open_source(path).write({"e": {(1, 2)}})

    def fail(src, dst):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(DataError, match="cannot replace"):
        open_source(path).write({"e": {(3, 4)}})
    assert open_source(path).load() == {"e": {(1, 2)}}
    assert leftovers(tmp_path) == []


def test_write_back_keeps_a_nullable_int_column_its_nulls_and_the_row_order(tmp_path):
    """Issue 15, case 8."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nablog.io import ParquetFile

    path = tmp_path / "p.parquet"
    schema = pa.schema([pa.field("name", pa.string()), pa.field("age", pa.int32(), nullable=True)], metadata={b"origin": b"test"})
    pq.write_table(pa.table({"name": ["zed", "amy", "bo"], "age": [30, None, 41]}, schema=schema), path)
    source = ParquetFile(path)
    rows = source.read()
    assert rows == {("zed", 30), ("amy", ""), ("bo", 41)}
    source.write({"p": (rows - {("bo", 41)}) | {("cy", ""), ("al", 7)}})
    table = pq.read_table(path)
    assert table.schema == schema and table.schema.metadata == {b"origin": b"test"}
    assert table.to_pydict() == {"name": ["zed", "amy", "al", "cy"], "age": [30, None, 7, None]}
    # Undo-like: back to the old rows keeps the schema too.
    source.write({"p": rows})
    assert pq.read_table(path).schema == schema
    assert ParquetFile(path).read() == rows


def test_a_value_that_does_not_fit_the_column_type_rewrites_in_mixed_types(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nablog.io import ParquetFile

    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"a": pa.array([1, 2], pa.int64())}), path)
    ParquetFile(path).write({"p": {(1,), (2,), ("x",)}})
    assert ParquetFile(path).read() == {(1,), (2,), ("x",)}
