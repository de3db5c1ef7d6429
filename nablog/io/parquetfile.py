"""Parquet files through pyarrow: one relation per file, columns in argument order, exact round trips.

Reading
    Integer columns (any width, signed or not) give ``int``; string columns (``string``,
    ``large_string``, ``string_view``, dictionary-encoded strings) give ``str``; a column of type
    ``struct<int: int64, str: string>`` is a *mixed* column (see below). A null reads as ``""``,
    the same constant an empty CSV field gives. Any other column type (floating point, boolean,
    timestamp, binary, ...) is a DataError naming the file and the column.

Writing
    Columns keep the file's names when the arity is unchanged; a new file names them
    ``c0, c1, ...``. A column whose values are all integers is ``int64``, all strings
    ``string``. A column holding both cannot be one Arrow primitive type, so it is written as
    ``struct<int: int64, str: string>`` with exactly one field set per row: the integer ``5`` is
    ``{int: 5, str: null}``, the string ``"5"`` is ``{int: null, str: "5"}``. That round-trips
    exactly and stays readable by other tools (Spark, DuckDB and pandas read structs).
    Integers beyond 64 bits are a DataError (keep them in CSV or ``.lp`` files). A new file's
    rows are written sorted; an existing file keeps its schema, nulls and row order (see
    :meth:`ParquetFile.prepare`). The file goes to a temporary file renamed over the old one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..lang import Constant, DataError
from .base import (
    relation_name,
    SingleRelationFile,
    PendingFile,
    Rows,
    check_int64,
    prepare_file,
    read_bytes,
    row_width,
    sorted_rows,
)

if TYPE_CHECKING:
    import pyarrow as pa

MIXED_FIELDS = ("int", "str")


def _mixed_type() -> pa.DataType:
    import pyarrow as pa

    return pa.struct([(MIXED_FIELDS[0], pa.int64()), (MIXED_FIELDS[1], pa.string())])


def read_parquet(path: Path) -> tuple[Rows, pa.Schema]:
    """Read a Parquet file into rows of constants, with its schema; DataError naming the file on failure."""
    table, rows = _read(path)
    return set(rows), table.schema


def _arrow_owned(data: bytes) -> pa.Buffer:
    """A copy of ``data`` in memory Arrow owns. Arrow's dataset scanner drops its last reference
    to the file's buffer in a worker thread, sometimes after the interpreter began to exit; a
    buffer over Python bytes then needs the GIL in that thread to release them, and a thread that
    asks for it while Python finalizes is ended by pthread_exit, which a C++ worker thread cannot
    survive: "terminate called without an active exception", SIGABRT after correct output
    (issue 24, fault 6; ~1 run in 12 with three in parallel)."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    sink.write(data)
    return sink.getvalue()


def _read(path: Path) -> tuple[pa.Table, list[tuple]]:
    """The Arrow table of a Parquet file and its rows of constants, in file order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = read_bytes(path)
    try:
        table = pq.read_table(pa.BufferReader(_arrow_owned(data)))
    except (pa.ArrowException, OSError) as e:
        raise DataError(
            f"cannot read {path}: not a readable Parquet file ({e})",
            where=str(path),
            hint="check that the file is Parquet (or rename it after its format)",
        ) from None
    columns = [_column_values(path, table.schema.field(j), table.column(j)) for j in range(table.num_columns)]
    return table, (list(zip(*columns)) if columns else [])


def _column_values(path: Path, field: pa.Field, column: pa.ChunkedArray) -> list[Constant]:
    import pyarrow.types as t

    kind = field.type
    if t.is_dictionary(kind):
        column = column.cast(kind.value_type)
        kind = kind.value_type
    if t.is_integer(kind) or t.is_string(kind) or t.is_large_string(kind) or _is_string_view(kind):
        return ["" if v is None else v for v in column.to_pylist()]
    if t.is_null(kind):
        return [""] * len(column)
    if t.is_struct(kind) and _is_mixed(kind):
        out: list[Constant] = []
        for v in column.to_pylist():
            if v is None or (v["int"] is None and v["str"] is None):
                out.append("")
            else:
                out.append(v["int"] if v["int"] is not None else v["str"])
        return out
    raise DataError(
        f"column {field.name} of {path.name} has type {kind}, which holds no Datalog constants",
        where=f"{path}, column {field.name}",
        hint=f"nablog reads integer and string columns; cast {field.name} to int64 or string",
    )


def _is_string_view(kind: pa.DataType) -> bool:
    import pyarrow.types as t

    return bool(getattr(t, "is_string_view", lambda _: False)(kind))


def _is_mixed(kind: pa.DataType) -> bool:
    import pyarrow.types as t

    names = tuple(kind.field(i).name for i in range(kind.num_fields))
    if names != MIXED_FIELDS:
        return False
    a, b = kind.field(0).type, kind.field(1).type
    return t.is_integer(a) and (t.is_string(b) or t.is_large_string(b))


def arrow_table(name: str, rows: Rows, where: Path, names: list[str] | None = None, old: pa.Schema | None = None) -> pa.Table:
    """The Arrow table a relation is written as: typed columns (int64, string or mixed struct), rows sorted."""
    import pyarrow as pa

    width = row_width(name, rows, where)
    if width is None:
        width = len(old) if old is not None else 0
    if width == 0:
        raise DataError(
            f"cannot store relation {name} in {where}: Parquet cannot hold a relation of arity 0",
            where=str(where),
            hint=f"write 0-ary facts like {name}. in a .lp file",
        )
    if names is None or len(names) != width:
        names = [f"c{i}" for i in range(width)]
    ordered = sorted_rows(rows)
    arrays = []
    for j in range(width):
        values = [r[j] for r in ordered]
        ints = [v for v in values if isinstance(v, int)]
        for v in ints:
            check_int64(v, name, where, "Parquet")
        if values and len(ints) == len(values):
            arrays.append(pa.array(values, pa.int64()))
        elif not ints and values:
            arrays.append(pa.array(values, pa.string()))
        elif values:
            mixed = [{"int": v, "str": None} if isinstance(v, int) else {"int": None, "str": v} for v in values]
            arrays.append(pa.array(mixed, _mixed_type()))
        else:
            arrays.append(pa.array([], _empty_type(old, j)))
    return pa.Table.from_arrays(arrays, names=names)


def _empty_type(old: pa.Schema | None, j: int) -> pa.DataType:
    # An empty relation keeps the column types it had, when they are types this module writes.
    import pyarrow as pa

    if old is not None and j < len(old):
        kind = old.field(j).type
        if kind in (pa.int64(), pa.string(), _mixed_type()):
            return kind
    return pa.string()


def write_table(f: BinaryIO, table: pa.Table) -> None:
    """Write a Parquet file's bytes to ``f``; the unit atomic replacement runs (and tests interrupt)."""
    import pyarrow.parquet as pq

    pq.write_table(table, f)


class ParquetFile(SingleRelationFile):
    """One relation in one Parquet file, named after the file (``edge.parquet`` holds ``edge``)."""

    format_name = "Parquet"

    def __init__(self, path: str | Path, *, relation: str | None = None):
        self.location = Path(path)
        self.relation = relation if relation is not None else relation_name(self.location.stem)

    def read(self) -> Rows:
        """The rows of the file."""
        return read_parquet(self.location)[0]



    def _read_for_change(self) -> tuple[Rows, tuple | None]:
        if not self.location.exists():
            return set(), None
        old, current = _read(self.location)
        return set(current), (old, current)

    def _rewrite_from(self, kept: tuple | None, rows: Rows, added: Rows, tag: str | None) -> PendingFile | None:
        """The new contents: an existing file keeps its schema (column types, nullability,
        metadata), its nulls and the order of the rows kept; new rows are appended, sorted, in the
        columns' own types (``""`` is a null in a nullable non-string column). Only when a new
        value does not fit a column's type is the file rewritten in the types of the module
        docstring."""
        old = None
        if kept is not None:
            old, current = kept
            remaining = old.filter([r in rows for r in current]) if current else old
            appended = _rows_in_schema(sorted_rows(added), old.schema, self.relation, self.location)
            if appended is not None:
                table = pa_concat([remaining, appended])
                return prepare_file(self.location, lambda f: write_table(f, table), tag)
        elif not rows:
            return None
        schema = old.schema if old is not None else None
        table = arrow_table(self.relation, rows, self.location, schema.names if schema is not None else None, schema)
        return prepare_file(self.location, lambda f: write_table(f, table), tag)


def pa_concat(tables: list) -> pa.Table:
    import pyarrow as pa

    return pa.concat_tables(tables)


def _rows_in_schema(rows: list[tuple], schema: pa.Schema, name: str, where: Path) -> pa.Table | None:
    """``rows`` as a table of ``schema``; None when some value does not fit its column's type."""
    import pyarrow as pa
    import pyarrow.types as t

    if rows and len(rows[0]) != len(schema):
        return None
    arrays = []
    for j, field in enumerate(schema):
        kind = field.type
        base = kind.value_type if t.is_dictionary(kind) else kind
        values = [r[j] for r in rows]
        if t.is_integer(base):
            if any(isinstance(v, str) and (v != "" or not field.nullable) for v in values):
                return None
            values = [None if v == "" else v for v in values]
            for v in values:
                if v is not None:
                    check_int64(v, name, where, "Parquet")
        elif t.is_string(base) or t.is_large_string(base) or _is_string_view(base):
            if any(isinstance(v, int) for v in values):
                return None
        elif _is_mixed(base):
            values = [{"int": v, "str": None} if isinstance(v, int) else {"int": None, "str": v} for v in values]
        else:
            return None
        try:
            array = pa.array(values, base)
            arrays.append(array.cast(kind) if kind != base else array)
        except (pa.ArrowException, OverflowError):
            return None
    return pa.Table.from_arrays(arrays, schema=schema)
