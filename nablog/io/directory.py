"""A directory of facts: one CSV or Parquet file per relation, named after it (``edge.csv``, ``edge.parquet``).

Files with other suffixes, hidden files and directories (temporary files of an interrupted
write, ``.nablog/``) and subdirectories are ignored; an entry named like a relation that cannot
be read (a dangling symbolic link, a device) is a DataError, never skipped silently. A relation stored both as ``.csv`` and ``.parquet`` is a DataError.
A relation written for the first time becomes a Parquet file when the directory holds Parquet
files and no CSV files, a CSV file otherwise.

A write prepares every changed file as a temporary file first and renames them into place
only when all were written: a failure while writing leaves every file as it was. Renaming
several files is not one atomic step by itself: changes of user data go through
:meth:`nablog.io.Stores.commit`, whose journal makes them all-or-nothing even when killed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..lang import DataError, Delta, Facts
from .base import (
    relation_name,
    FactSource,
    PendingFile,
    Staged,
    check_relation_name,
    normalize_changes,
)
from .csvfile import CsvFile, write_recording
from .parquetfile import ParquetFile

SUFFIXES = {".csv": "csv", ".parquet": "parquet"}

TableFile = CsvFile | ParquetFile


class DirectorySource(FactSource):
    """Relations as files in one directory; ``header`` applies to its CSV files (see :mod:`.csvfile`)."""

    def __init__(self, path: str | Path, *, header: bool | None = None):
        self.location = Path(path)
        self.header = header
        self.columns: dict[str, tuple[str, ...]] = {}  # the program's #columns (see CsvFile.columns)
        self._files: dict[str, TableFile] = {}

    def _scan(self) -> dict[str, Path]:
        if not self.location.is_dir():
            raise DataError(
                f"cannot read {self.location}: no such directory",
                where=str(self.location),
                hint="check the path",
            )
        found: dict[str, Path] = {}
        for entry in sorted(self.location.iterdir()):
            if entry.name.startswith(".") or entry.suffix.lower() not in SUFFIXES:
                continue
            if not entry.is_file():
                if entry.is_symlink() and not entry.exists():
                    raise DataError(
                        f"cannot read {entry}: a symbolic link to {os.readlink(entry)}, which does not exist",
                        where=str(entry),
                        hint="restore what the link points to, or remove the link",
                    )
                if not entry.is_dir():
                    raise DataError(f"cannot read {entry}: not a regular file", where=str(entry), hint="remove it from the data directory")
                continue
            name = relation_name(entry.stem)
            if name in found:
                raise DataError(
                    f"relation {name} is stored twice in {self.location}: {found[name].name} and {entry.name}",
                    where=str(self.location),
                    hint="keep one file per relation; remove or rename the other",
                )
            found[name] = entry
        return found

    def _file(self, name: str, path: Path) -> TableFile:
        # One object per file keeps what a CSV file's read found out (its header) for its write.
        handler = self._files.get(name)
        if handler is None or handler.location != path:
            if SUFFIXES[path.suffix.lower()] == "csv":
                handler = CsvFile(path, relation=name, header=self.header)
            else:
                handler = ParquetFile(path, relation=name)
            self._files[name] = handler
        if isinstance(handler, CsvFile):
            handler.columns = self.columns.get(name)
        return handler

    def relations(self) -> list[str]:
        return sorted(self._scan())

    def load(self, relations: Iterable[str] | None = None) -> Facts:
        files = self._scan()
        wanted = sorted(files) if relations is None else list(relations)
        out: Facts = {}
        for name in wanted:
            out[name] = self._file(name, files[name]).read() if name in files else set()
        return out

    def new_format(self) -> str:
        """The format a new relation is written in: Parquet in a Parquet-only directory, else CSV."""
        return _new_format(self._scan())

    def write(self, changes: Mapping[str, Iterable[tuple]]) -> None:
        write_recording(super().write, changes)

    def stage(self, delta: Delta, tag: str | None = None) -> Staged:
        """Each changed relation's file stages its part of ``delta`` (a new relation gets a new
        file, in :meth:`new_format`)."""
        files = self._scan()
        real = Delta()
        pending: list[PendingFile] = []
        try:
            for name, (ins, dele) in delta.by_relation().items():
                path = files.get(name)
                if path is None:
                    if not ins:
                        continue  # deleting from a relation that is not stored changes nothing
                    check_relation_name(name, self.location)
                    path = self.location / f"{name}.{_new_format(files)}"
                staged = self._file(name, path).stage(Delta.of_rows({name: ins}, {name: dele}), tag)
                real = real.compose(staged.real)
                pending.extend(staged.files)
        except BaseException:
            for p in pending:
                p.discard()
            raise
        return Staged(real, pending)

    def _stage_contents(self, changes: Mapping[str, Iterable[tuple]], tag: str | None = None) -> list[PendingFile]:
        new = normalize_changes(changes)
        files = self._scan()
        pending: list[PendingFile] = []
        try:
            for name in sorted(new):
                path = files.get(name)
                if path is None:
                    check_relation_name(name, self.location)
                    path = self.location / f"{name}.{_new_format(files)}"
                prepared = self._file(name, path).prepare(new[name], tag)
                if prepared is not None:
                    pending.append(prepared)
        except BaseException:
            for p in pending:
                p.discard()
            raise
        return pending


def _new_format(files: dict[str, Path]) -> str:
    kinds = {SUFFIXES[p.suffix.lower()] for p in files.values()}
    return "parquet" if kinds == {"parquet"} else "csv"


def input_order(sources) -> dict[str, list[tuple]]:
    """The rows of each CSV relation among ``sources`` in the order of its file (the rows that
    ``repair --out`` writes first, in that order, so a repaired file reads like its input)."""
    from .csvfile import read_csv

    files: list[CsvFile] = []
    for source in sources:
        if isinstance(source, CsvFile):
            files.append(source)
        elif isinstance(source, DirectorySource):
            files.extend(h for name, path in source._scan().items() if isinstance(h := source._file(name, path), CsvFile))
    order: dict[str, list[tuple]] = {}
    for csv_file in files:
        if csv_file.location.exists():
            table = read_csv(csv_file.location, csv_file._decided(), layout=True)
            order.setdefault(csv_file.relation, []).extend(row for row, _ in table.layout or () if row is not None)
    return order
