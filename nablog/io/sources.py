"""Open a fact store by its path: a directory, or a file whose suffix names its format."""

from __future__ import annotations

from pathlib import Path

from ..lang import DataError
from .base import FactSource
from .csvfile import CsvFile
from .directory import DirectorySource
from .factsfile import FactsFile
from .parquetfile import ParquetFile
from .sqlitedb import SqliteDatabase

FORMATS = {
    ".lp": FactsFile,
    ".dl": FactsFile,
    ".db": SqliteDatabase,
    ".sqlite": SqliteDatabase,
    ".sqlite3": SqliteDatabase,
    ".parquet": ParquetFile,
}

_KNOWN = "a directory of .csv/.parquet files, or a .lp, .dl, .csv, .parquet, .db, .sqlite or .sqlite3 file"


def open_source(path: str | Path, *, header: bool | None = None) -> FactSource:
    """The fact source at ``path``.

    Parameters
    ----------
    path
        A directory (one ``<relation>.csv`` or ``<relation>.parquet`` file per relation), a
        facts file (``.lp``, ``.dl``), a SQLite database (``.db``, ``.sqlite``, ``.sqlite3``: each
        table a relation), or a single ``.csv`` / ``.parquet`` file (one relation named after the
        file). A file need not exist yet: writing creates it.
    header
        For CSV files: True or False forces a header row or its absence; None detects it (the
        rule is in :mod:`nablog.io.csvfile`). Other formats ignore it.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     source = open_source(pathlib.Path(tmp) / "edge.csv")
    ...     source.write({"edge": {(2, "x"), (1, 2)}})
    ...     print(source.relations(), sorted(source.load()["edge"], key=str))
    ...     print(type(open_source(tmp)).__name__, open_source(tmp).relations())
    ['edge'] [(1, 2), (2, 'x')]
    DirectorySource ['edge']
    """
    p = Path(path)
    if p.is_dir():
        return DirectorySource(p, header=header)
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return CsvFile(p, header=header)
    kind = FORMATS.get(suffix)
    if kind is not None:
        return kind(p)
    if not p.exists():
        raise DataError(f"cannot open {p}: no such file or directory", where=str(p), hint=f"give {_KNOWN}")
    raise DataError(f"cannot open {p}: unknown format {suffix or '(no suffix)'}", where=str(p), hint=f"give {_KNOWN}")
