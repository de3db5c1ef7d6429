"""The spark engine's edge to files: base relations read into typed DataFrames, relations written as Parquet directories, atomically.

Reading (:func:`read_relations`)
    ``--data`` paths name, as everywhere in nablog, directories of ``<relation>.csv`` /
    ``<relation>.parquet`` files, or single files (``.csv``, ``.parquet``, ``.lp``, ``.dl``,
    SQLite). Here a directory may also hold ``<relation>/`` subdirectories of Parquet part files,
    as :func:`write_relations` (``nablog materialize``) and Spark itself write them, and paths
    may be URLs of any file system Spark knows (``hdfs://``, ``s3a://``). Parquet is read by the
    executors; columns are typed as :mod:`nablog.engines.spark.types` says, a null being ``""``
    as in :mod:`nablog.io`. Every other format is parsed on the driver by :mod:`nablog.io`, whose
    rules (a quoted CSV field is a string, ``"12"`` is not ``12``; header detection) Spark's CSV
    reader cannot reproduce; convert large CSV files to Parquet to read them in parallel.

Writing (:func:`write_relations`)
    Each relation becomes ``OUT/<relation>/``, Parquet part files with columns ``c0, c1, ...``
    (``long``, ``string``, or for mixed columns ``struct<int: bigint, str: string>``, the form
    :mod:`nablog.io` writes). Every relation is first written under a hidden temporary directory
    ``OUT/.nablog-tmp-<random>/``; only when all were written are they renamed into place (an
    existing ``OUT/<relation>/`` is moved aside first and deleted afterwards), and the manifest
    ``OUT/_nablog.json`` (arity, row count and column types of each relation, and the truth of
    0-ary relations, which Parquet cannot hold) is replaced last. A failure before the renames
    leaves ``OUT`` as it was. All file operations go through Hadoop's FileSystem API, so ``OUT``
    can be on HDFS or an object store (where a rename is a copy, not atomic).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...lang import DataError
from .session import SessionOwner
from .types import LONG, MIXED, STRING, Relation, arrow_table, column_type_of, column_types_of_rows, join, spark_type, widen_column

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MANIFEST = "_nablog.json"
TEMPORARY_PREFIX = ".nablog-tmp-"
DRIVER_SUFFIXES = (".csv", ".lp", ".dl", ".db", ".sqlite", ".sqlite3")

LOCAL_ROWS = 10_000
"""Base relations given as Python rows with more rows are checkpointed once, so that their rows
are not shipped inside the plan of every job that reads them."""


# -- file systems -------------------------------------------------------------------------------


@dataclass
class _Files:
    """Hadoop's FileSystem for one path, through the JVM (local files, HDFS, object stores)."""

    spark: SparkSession

    def _path(self, path: str):
        jvm = self.spark.sparkContext._jvm
        hpath = jvm.org.apache.hadoop.fs.Path(path)
        return hpath.getFileSystem(self.spark.sparkContext._jsc.hadoopConfiguration()), hpath

    def exists(self, path: str) -> bool:
        fs, hpath = self._path(path)
        return bool(fs.exists(hpath))

    def is_dir(self, path: str) -> bool:
        fs, hpath = self._path(path)
        return bool(fs.exists(hpath)) and bool(fs.getFileStatus(hpath).isDirectory())

    def children(self, path: str) -> list[tuple[str, bool]]:
        """``(name, is_directory)`` of each entry of a directory, sorted by name."""
        fs, hpath = self._path(path)
        return sorted((s.getPath().getName(), bool(s.isDirectory())) for s in fs.listStatus(hpath))

    def mkdirs(self, path: str) -> None:
        fs, hpath = self._path(path)
        if not fs.mkdirs(hpath):
            raise DataError(f"cannot create directory {path}", where=path, hint="check that the parent directory is writable")

    def rename(self, source: str, target: str) -> None:
        fs, hpath = self._path(source)
        jvm = self.spark.sparkContext._jvm
        if not fs.rename(hpath, jvm.org.apache.hadoop.fs.Path(target)):
            raise DataError(f"cannot rename {source} to {target}", where=target, hint="check that the directory is writable")

    def delete(self, path: str) -> None:
        fs, hpath = self._path(path)
        fs.delete(hpath, True)

    def write_bytes(self, path: str, data: bytes) -> None:
        fs, hpath = self._path(path)
        stream = fs.create(hpath, True)
        try:
            stream.write(bytearray(data))
        finally:
            stream.close()

    def read_text(self, path: str) -> str:
        # Not spark.read.text: Spark skips files whose names start with "_" or ".".
        fs, hpath = self._path(path)
        stream = fs.open(hpath)
        try:
            return str(self.spark.sparkContext._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()


def _child(directory: str, name: str) -> str:
    return directory.rstrip("/") + "/" + name


# -- reading ------------------------------------------------------------------------------------


def read_relations(engine: SessionOwner, paths: Iterable[str | Path], header: bool | None = None) -> dict[str, Relation]:
    """Base relations from ``--data`` paths, typed (see the module docstring); a relation found
    in several paths is their union."""
    spark = engine.session
    files = _Files(spark)
    out: dict[str, Relation] = {}
    for path in map(str, paths):
        for name, relation in _read_path(engine, files, path, header).items():
            out[name] = union(engine, out[name], relation) if name in out else relation
    return out


def _read_path(engine: SessionOwner, files: _Files, path: str, header: bool | None) -> dict[str, Relation]:
    local = "://" not in path
    if not files.exists(path):
        raise DataError(f"cannot read {path}: no such file or directory", where=path, hint="check the path")
    if not files.is_dir(path):
        if path.lower().endswith(".parquet"):
            return {Path(path).stem: read_parquet(engine, path)}
        return _read_on_driver(engine, path, header, local)
    out: dict[str, Relation] = {}
    seen: dict[str, str] = {}
    for name, is_dir in files.children(path):
        if name.startswith((".", "_")):
            continue
        entry = _child(path, name)
        relation = name if is_dir else Path(name).stem
        suffix = "" if is_dir else Path(name).suffix.lower()
        if is_dir:
            if not _is_parquet_directory(files, entry):
                continue
        elif suffix not in (".parquet", ".csv"):
            continue
        if relation in seen:
            raise DataError(
                f"relation {relation} is stored twice in {path}: {seen[relation]} and {name}",
                where=path,
                hint="keep one file or directory per relation; remove or rename the other",
            )
        seen[relation] = name
        if is_dir or suffix == ".parquet":
            out[relation] = read_parquet(engine, entry)
        else:
            out.update(_read_on_driver(engine, entry, header, local))
    manifest = _manifest(files, path)
    for name, info in manifest.get("relations", {}).items():
        if info.get("arity") == 0 and name not in out:
            holds = bool(info.get("rows"))
            out[name] = Relation(spark_unit(engine.session, holds), (), 1 if holds else 0)
    return out


def spark_unit(spark: SparkSession, holds: bool) -> DataFrame:
    return spark.range(1 if holds else 0).select()


def _is_parquet_directory(files: _Files, path: str) -> bool:
    return any(not d and n.endswith(".parquet") for n, d in files.children(path)) or any(
        n == "_SUCCESS" for n, _ in files.children(path)
    )


def _manifest(files: _Files, directory: str) -> dict:
    path = _child(directory, MANIFEST)
    if not files.exists(path):
        return {}
    try:
        return json.loads(files.read_text(path))
    except json.JSONDecodeError as error:
        raise DataError(f"cannot read {path}: not JSON ({error})", where=path, hint="remove the file or write the directory again") from None


def _read_on_driver(engine: SessionOwner, path: str, header: bool | None, local: bool) -> dict[str, Relation]:
    """CSV, facts and SQLite files: parsed by nablog.io on the driver (their rules are nablog's)."""
    if not local:
        raise DataError(
            f"cannot read {path}: only Parquet is read from {path.split('://')[0]}:// storage",
            where=path,
            hint="CSV and other formats are parsed on the driver; give a local path, or convert the data to Parquet",
        )
    from ...io import open_source  # the io package owns the CSV/facts/SQLite formats

    source = open_source(path, header=header)
    out = {}
    for name, rows in source.load().items():
        arity = len(next(iter(rows))) if rows else 0
        out[name] = relation_from_rows(engine, rows, arity)
    return out


def read_parquet(engine: SessionOwner, path: str) -> Relation:
    """A Parquet file or directory as a typed relation (one job: its row count and the nulls of
    its integer columns, which make those columns mixed: a null is ``""``)."""
    from pyspark.sql import functions as F


    spark = engine.session
    try:
        frame = spark.read.parquet(path)
    except Exception as error:  # an unreadable file: Spark's AnalysisException or a JVM error
        raise DataError(
            f"cannot read {path}: not a readable Parquet file or directory ({str(error).splitlines()[0]})",
            where=path,
            hint="check that the path holds Parquet files",
        ) from None
    fields = frame.schema.fields
    if not fields:
        raise DataError(f"cannot read {path}: it has no columns", where=path, hint="a relation of arity 0 cannot be stored in Parquet")
    kinds = [column_type_of(f.dataType, f"{path}, column {f.name}") for f in fields]
    checks = [F.count(F.lit(1)).alias("n")]
    ints = [i for i, (f, k) in enumerate(zip(fields, kinds)) if k == LONG]
    checks += [F.sum(F.col(f"`{fields[i].name}`").isNull().cast("long")).alias(f"null{i}") for i in ints]
    stats = frame.select(*checks).collect()[0]
    columns = []
    for i, (f, kind) in enumerate(zip(fields, kinds)):
        column = F.col(f"`{f.name}`")
        if kind == LONG:
            if stats[f"null{i}"]:
                kind = kinds[i] = MIXED
                value = F.struct(
                    F.when(column.isNull(), F.lit("")).otherwise(F.lit(None).cast("string")).alias("s"),
                    column.cast("long").alias("i"),
                )
            else:
                value = column.cast("long")
        elif kind == STRING:
            value = F.coalesce(column.cast("string"), F.lit(""))
        else:
            names = {x.name for x in f.dataType.fields}
            integer, text = (column.getField("int"), column.getField("str")) if "int" in names else (column.getField("i"), column.getField("s"))
            value = F.struct(
                F.when(integer.isNotNull(), F.lit(None).cast("string")).otherwise(F.coalesce(text, F.lit(""))).alias("s"),
                integer.cast("long").alias("i"),
            )
        columns.append(value.alias(f"c{i}"))
    return Relation(frame.select(*columns), tuple(kinds), int(stats["n"]))


def union(engine: SessionOwner, a: Relation, b: Relation) -> Relation:
    """Two relations of one name (from two sources) as one, in the wider types."""
    from pyspark.sql import functions as F


    if a.arity != b.arity:
        raise DataError(
            f"a relation is stored twice with different arities ({a.arity} and {b.arity})",
            hint="every file of a relation has one column per argument",
        )
    types = tuple(join(x, y) for x, y in zip(a.types, b.types))

    def cast(r: Relation):
        return r.frame.select(*[widen_column(F.col(f"c{i}"), have, want).alias(f"c{i}") for i, (have, want) in enumerate(zip(r.types, types))])

    return Relation(cast(a).union(cast(b)), types)


# -- writing ------------------------------------------------------------------------------------


def _stored_frame(relation: Relation, names: list[str] | None = None) -> DataFrame:
    """The frame as written: mixed columns in :mod:`nablog.io`'s ``struct<int, str>`` form,
    columns named ``c0, c1, ...`` unless ``names`` are given."""
    from pyspark.sql import functions as F

    columns = []
    for i, kind in enumerate(relation.types):
        column = F.col(f"c{i}")
        if kind == MIXED:
            column = F.struct(column.getField("i").alias("int"), column.getField("s").alias("str"))
        columns.append(column.alias(names[i] if names else f"c{i}"))
    return relation.frame.select(*columns)


def _write_frame(frame: DataFrame, path: str) -> None:
    """Write one relation's Parquet files (the step a failure test interrupts)."""
    frame.write.mode("error").parquet(path)


def write_relations(
    engine: SessionOwner,
    out: str | Path,
    relations: Mapping[str, Relation],
    columns: Mapping[str, list[str]] | None = None,
) -> dict:
    """Write each relation to ``OUT/<relation>/`` and update the manifest, atomically as the
    module docstring describes; return the manifest entries written. ``columns`` may name the
    columns of some relations (constraint witnesses are named after the denial's variables).

    Relations are counted while written when their size is unknown (by reading the written
    files' metadata, not by evaluating again).
    """

    spark = engine.session
    files = _Files(spark)
    out = str(out)
    if files.exists(out) and not files.is_dir(out):
        raise DataError(f"cannot write to {out}: it is a file", where=out, hint="give a directory (it is created if missing)")
    files.mkdirs(out)
    staging = _child(out, TEMPORARY_PREFIX + secrets.token_hex(6))
    entries: dict[str, dict] = {}
    try:
        files.mkdirs(staging)
        for name, relation in sorted(relations.items()):
            directory = safe_name(name)
            if relation.arity == 0:
                holds = bool(relation.size) if relation.size is not None else bool(relation.frame.limit(1).count())
                entries[name] = {"arity": 0, "rows": int(holds), "types": []}
                continue
            target = _child(staging, directory)
            names = (columns or {}).get(name)
            _write_frame(_stored_frame(relation, names), target)
            size = relation.size
            if size is None:
                size = spark.read.parquet(target).count()
            entries[name] = {"arity": relation.arity, "rows": int(size), "types": list(relation.types), "directory": directory}
            if names:
                entries[name]["columns"] = list(names)
        # Everything is written: move the new directories into place.
        aside = _child(staging, ".old")
        files.mkdirs(aside)
        for name, entry in entries.items():
            if "directory" not in entry:
                continue
            final = _child(out, entry["directory"])
            if files.exists(final):
                files.rename(final, _child(aside, entry["directory"]))
            files.rename(_child(staging, entry["directory"]), final)
        manifest = _manifest(files, out)
        manifest.setdefault("relations", {}).update(entries)
        temporary = _child(staging, MANIFEST)
        files.write_bytes(temporary, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
        final_manifest = _child(out, MANIFEST)
        if files.exists(final_manifest):
            files.rename(final_manifest, _child(aside, MANIFEST))
        files.rename(temporary, final_manifest)
    finally:
        files.delete(staging)
    return entries


def relation_from_rows(
    engine: SessionOwner, rows: Iterable[tuple], arity: int, checkpoint: Callable[..., DataFrame] | None = None
) -> Relation:
    """A relation from Python rows: typed columns, shipped through Arrow; large ones checkpointed
    once, so that their rows are not part of the plan of every job that reads them."""
    spark = engine.session
    rows = rows if isinstance(rows, (set, frozenset)) else set(map(tuple, rows))
    if arity == 0:
        return Relation(spark.range(1 if rows else 0).select(), (), 1 if rows else 0)
    types = column_types_of_rows(rows, arity)
    if not rows:
        from pyspark.sql import functions as F

        frame = spark.range(0).select(*[F.lit(None).cast(spark_type(t)).alias(f"c{i}") for i, t in enumerate(types)])
        return Relation(frame, types, 0)
    frame = spark.createDataFrame(arrow_table(rows, types))
    if len(rows) > LOCAL_ROWS:
        frame = (checkpoint or engine.checkpointer(spark)[0])(frame)
    return Relation(frame, types, len(rows), unique=True)


def safe_name(name: str) -> str:
    """A file-system-safe name for a relation or constraint (``file.lp:12`` → ``file.lp_12``)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"
