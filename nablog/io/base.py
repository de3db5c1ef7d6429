"""What every fact store shares: the FactSource protocol, value checks, sorted rows, atomic file replacement.

A *fact source* is a place where base facts live (a CSV file, a directory of Parquet files, a
SQLite database, a ``.lp`` file). It loads them as :data:`~nablog.lang.Facts` and writes back the
new contents of some relations without touching the others.

Files are replaced atomically: the new contents go to a temporary file in the same directory
(named ``.<name>.<random>.tmp``), which is flushed, fsynced and then renamed over the old file
with :func:`os.replace`. A reader sees the old file or the new one, never half of each; a failure
at any point leaves the old file as it was and removes the temporary file. A change of several
files (or stores) at once is made all-or-nothing by the journal of :mod:`nablog.io.stores`.
"""

from __future__ import annotations

import os
import re
import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..lang import Constant, DataError, Delta, Facts, constant_sort_key

Rows = set[tuple[Constant, ...]]

_INT_TEXT = re.compile(r"(?:0|-?[1-9][0-9]*)\Z")
_RELATION_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass
class Staged:
    """What one store staged for a commit of a :class:`~nablog.lang.Delta`: the true changes it
    holds (seed 002, Def. 1: a stored fact inserted or an absent one deleted is no change), and the
    temporary files with its new contents, not yet renamed (none for a store changed by
    statements, such as SQLite, whose changes the journal records)."""

    real: Delta
    files: "list[PendingFile]"


class FactSource(ABC):
    """A store of base facts: one or more relations, each a set of tuples of constants.

    Subclasses implement :meth:`relations`, :meth:`load`, :meth:`stage` (a commit's change) and
    :meth:`_stage_contents` (whole relations, for :meth:`write`); ``location`` is the path the
    source was opened on (used in every error message).
    """

    location: Path

    @abstractmethod
    def relations(self) -> list[str]:
        """The names of the relations stored here, sorted."""

    @abstractmethod
    def load(self, relations: Iterable[str] | None = None) -> Facts:
        """Read relations (all of them by default) into sets of tuples.

        A requested relation that is not stored is returned as an empty set.
        """

    def write(self, changes: Mapping[str, Iterable[tuple]]) -> None:
        """Replace the stored contents of each given relation by the given rows, atomically.

        Relations not named in ``changes`` are left untouched. A relation that is not stored yet
        is created when it has rows (an empty new relation is not created: its arity is unknown).
        (A change across several stores, with history and crash recovery, goes through
        :meth:`nablog.io.Stores.commit` instead.)
        """
        commit_all(self._stage_contents(changes))

    def stage(self, delta: Delta, tag: str | None = None) -> Staged:
        """Stage ``delta`` (its relations all stored here, or new here): read what it touches once,
        keep its true changes, and write the new contents of every changed file to temporary
        files named with ``tag`` (``.<name>.<tag>.tmp``), not yet renamed. The one step of a
        commit (:meth:`nablog.io.Stores.commit`) a store takes: it gets the change, never whole
        relations, and works nothing out twice."""
        raise NotImplementedError(f"{type(self).__name__} is not written through files")

    def _stage_contents(self, changes: Mapping[str, Iterable[tuple]], tag: str | None = None) -> "list[PendingFile]":
        """Temporary files holding each given relation's new contents (for :meth:`write`)."""
        raise NotImplementedError(f"{type(self).__name__} is not written through files")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.location)!r})"


class SingleRelationFile(FactSource):
    """A file holding one relation (a CSV or Parquet file named after it).

    Subclasses read the file once for a change (:meth:`_read_for_change`: its rows and what a
    rewrite keeps of it) and write new contents from that reading to a temporary file
    (:meth:`_rewrite_from`, returning a :class:`PendingFile`, or None when nothing changes).
    """

    relation: str
    format_name = "file"

    def relations(self) -> list[str]:
        return [self.relation] if self.location.exists() else []

    @abstractmethod
    def read(self) -> Rows:
        """The rows of the file."""

    @abstractmethod
    def _read_for_change(self) -> "tuple[Rows, object]":
        """The file's rows and what its rewrite keeps of it (None when there is no file)."""

    @abstractmethod
    def _rewrite_from(self, kept: object, rows: Rows, added: Rows, tag: str | None) -> "PendingFile | None":
        """A temporary file holding ``rows``, from ``kept`` (what :meth:`_read_for_change` read);
        ``added`` are the rows new in it."""

    def prepare(self, rows: Rows, tag: str | None = None) -> "PendingFile | None":
        """Write ``rows`` to a temporary file beside this one; None when it holds them already."""
        old, kept = self._read_for_change()
        if kept is not None and old == rows:
            return None
        return self._rewrite_from(kept, rows, rows - old, tag)

    def load(self, relations: Iterable[str] | None = None) -> Facts:
        wanted = [self.relation] if relations is None else list(relations)
        out: Facts = {name: set() for name in wanted if name != self.relation}
        if self.relation in wanted:
            out[self.relation] = self.read()
        return out

    def _only_mine(self, names: Iterable[str]) -> None:
        for name in names:
            if name != self.relation:
                raise DataError(
                    f"cannot store relation {name} in {self.location}: the file holds relation {self.relation} only",
                    where=str(self.location),
                    hint=f"give a directory to store several relations, one {self.format_name} file each",
                )

    def stage(self, delta: Delta, tag: str | None = None) -> Staged:
        self._only_mine(sorted(delta.predicates))
        normalize_changes({self.relation: delta_rows(delta, self.relation)[0]})  # values checked before anything is read
        old, kept = self._read_for_change()
        real = delta.real({self.relation: old})
        if not real:
            return Staged(real, [])
        insert, delete = delta_rows(real, self.relation)
        pending = self._rewrite_from(kept, (old - delete) | insert, insert, tag)
        return Staged(real, [pending] if pending is not None else [])

    def _stage_contents(self, changes: Mapping[str, Iterable[tuple]], tag: str | None = None) -> "list[PendingFile]":
        new = normalize_changes(changes)
        self._only_mine(new)
        pending = self.prepare(new[self.relation], tag) if self.relation in new else None
        return [pending] if pending is not None else []


def delta_rows(delta: Delta, relation: str) -> tuple[Rows, Rows]:
    """The rows ``delta`` inserts into and deletes from ``relation``."""
    return delta.by_relation().get(relation, (set(), set()))


# -- values ------------------------------------------------------------------------------------


def is_int_text(text: str) -> bool:
    """True when ``text`` is an integer that prints back exactly as written.

    >>> [is_int_text(s) for s in ["12", "-3", "0", "00260881", "+5", "1.0", " 7", "-0"]]
    [True, True, True, False, False, False, False, False]
    """
    return _INT_TEXT.match(text) is not None


def text_to_constant(text: str) -> Constant:
    """The constant a text field denotes: an integer when it prints back the same, else the text.

    >>> text_to_constant("12"), text_to_constant("00260881"), text_to_constant("")
    (12, '00260881', '')
    """
    if _INT_TEXT.match(text):
        try:
            return int(text)
        except ValueError:  # more digits than int() accepts (sys.get_int_max_str_digits)
            return text
    return text


def row_sort_key(row: tuple) -> tuple:
    """Rows sort column by column in the order of constants: integers first, strings by code point."""
    return tuple(constant_sort_key(v) for v in row)


def sorted_rows(rows: Iterable[tuple]) -> list[tuple]:
    """Rows in the deterministic order every writer uses."""
    return sorted(rows, key=row_sort_key)


def normalize_changes(changes: Mapping[str, Iterable[tuple]]) -> dict[str, Rows]:
    """Copy ``changes`` into sets of tuples, checking every value is an int or a str.

    Raises TypeError for anything else: a caller passing floats or None is a programming
    mistake, not something wrong in a user's data.
    """
    out: dict[str, Rows] = {}
    for name, rows in changes.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"relation names are non-empty strings, not {name!r}")
        converted: Rows = set()
        for row in rows:
            row = tuple(row)
            for value in row:
                if isinstance(value, bool) or not isinstance(value, (int, str)):
                    raise TypeError(f"relation {name}: {value!r} in {row!r} is not a constant (int or str)")
            converted.add(row)
        out[name] = converted
    return out


def row_width(name: str, rows: Rows, where: Path) -> int | None:
    """The common width of ``rows`` (None when there are none); a DataError when they differ."""
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        a, b = sorted(widths)[:2]
        example_a = next(r for r in rows if len(r) == a)
        example_b = next(r for r in rows if len(r) == b)
        raise DataError(
            f"cannot store relation {name}: its rows have different widths ({a} and {b})",
            where=str(where),
            hint=f"a table holds rows of one width; e.g. {example_a!r} and {example_b!r} differ",
        )
    return widths.pop() if widths else None


def relation_name(stem: str) -> str:
    """The relation a file named ``stem`` (without its suffix) holds: a name a rule can write.

    A name already written as a predicate (lower-case first letter or ``_``) is kept; any other
    becomes snake_case: a capital after a lower-case letter or digit starts a new word, letters
    go lower-case, other characters become ``_`` (Chinook's ``InvoiceLine.csv`` holds
    ``invoice_line``, Mondial's ``Country.csv`` ``country``). Messages name the file, so the
    original shows beside the relation.

    >>> [relation_name(s) for s in ["edge", "tc_2", "Album", "InvoiceLine", "HTTPLog", "my-table", "2024 sales"]]
    ['edge', 'tc_2', 'album', 'invoice_line', 'httplog', 'my_table', 'r_2024_sales']
    """
    if re.fullmatch(r"[a-z_][A-Za-z0-9_]*", stem):
        return stem
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", stem)
    snake = re.sub(r"[^A-Za-z0-9_]+", "_", snake).lower().strip("_") or "r"
    return snake if re.match(r"[a-z_]", snake) else f"r_{snake}"


def check_relation_name(name: str, where: Path) -> None:
    """A relation that becomes a new file or table needs a plain name (no path, no quoting)."""
    if not _RELATION_NAME.match(name):
        raise DataError(
            f"cannot create relation {name!r}: not a plain name",
            where=str(where),
            hint="relation names are letters, digits and _, starting with a letter or _",
        )


def check_int64(value: int, name: str, where: Path, fmt: str) -> None:
    """Parquet and SQLite store 64-bit integers; a larger constant is a DataError, never a silent change."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise DataError(
            f"cannot store {value} in relation {name}: {fmt} integers have 64 bits",
            where=str(where),
            hint="keep relations with integers beyond ±9223372036854775807 in a CSV or .lp file",
        )


def located_error(message: str, where: str, hint: str | None, line_text: str | None, lineno: int | None) -> DataError:
    """A DataError that shows one line of a data file with its number in the gutter."""
    err = DataError(message, hint=hint, where=where, line_text=line_text)
    # The constructor only numbers lines it gets from a program Loc; data files have none.
    err.lineno = lineno
    return err


# -- reading files -----------------------------------------------------------------------------


def require_file(path: Path) -> None:
    """Raise the DataError :func:`read_bytes` would raise when ``path`` is missing or a directory."""
    if not path.exists():
        raise DataError(f"cannot read {path}: no such file", where=str(path), hint="check the path")
    if path.is_dir():
        raise DataError(f"cannot read {path}: it is a directory", where=str(path), hint=_DIRECTORY_HINT)


_DIRECTORY_HINT = "a directory of facts holds one <relation>.csv or <relation>.parquet file per relation"


def read_bytes(path: Path) -> bytes:
    """Read a file, or raise a DataError naming it and saying why not."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"cannot read {path}: no such file", where=str(path), hint="check the path") from None
    except IsADirectoryError:
        raise DataError(
            f"cannot read {path}: it is a directory", where=str(path), hint=_DIRECTORY_HINT
        ) from None
    except PermissionError:
        raise DataError(
            f"cannot read {path}: permission denied", where=str(path), hint="check the file's permissions"
        ) from None
    except OSError as e:
        raise DataError(f"cannot read {path}: {e.strerror}", where=str(path)) from None


def read_text(path: Path) -> str:
    """Read a UTF-8 text file exactly (no newline translation), or raise a DataError naming it."""
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise DataError(
            f"cannot read {path}: not UTF-8 text (byte {e.start}, line {line})",
            where=str(path),
            hint="save the file as UTF-8",
        ) from None


# -- atomic replacement ------------------------------------------------------------------------


@dataclass
class PendingFile:
    """A complete, fsynced temporary file next to ``target``, waiting to replace it."""

    tmp: Path
    target: Path

    def commit(self) -> None:
        """Rename the temporary file over the target; on failure remove it and re-raise."""
        try:
            os.replace(self.tmp, self.target)
        except OSError as e:
            self.discard()
            raise DataError(
                f"cannot replace {self.target}: {e.strerror or e}",
                where=str(self.target),
                hint="check that the directory is writable; the old file is unchanged",
            ) from e
        except BaseException:
            self.discard()
            raise
        fsync_directory(self.target.parent)

    def discard(self) -> None:
        """Remove the temporary file (if it is still there)."""
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass


def tmp_path(target: Path, tag: str | None = None) -> Path:
    """The temporary file a new version of ``target`` is written to: ``.<name>.<tag>.tmp`` beside it
    (a random tag when none is given; a commit names its files with its own tag)."""
    return target.parent / f".{target.name}.{tag or secrets.token_hex(6)}.tmp"


def prepare_file(target: Path, write: Callable[[BinaryIO], None], tag: str | None = None) -> PendingFile:
    """Write a temporary file in ``target``'s directory with ``write``, flushed and fsynced.

    The temporary file gets the permission bits of the file it will replace (or the default
    permissions of a new file), so replacing a file does not change who may read it.
    """
    tmp = tmp_path(target, tag)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    except OSError as e:
        raise DataError(
            f"cannot write {target}: {e.strerror}",
            where=str(target),
            hint="check that the directory exists and is writable",
        ) from None
    pending = PendingFile(tmp, target)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        except FileNotFoundError:
            pass
    except OSError as e:
        pending.discard()
        raise DataError(f"cannot write {target}: {e.strerror or e}", where=str(target)) from e
    except BaseException:
        pending.discard()
        raise
    return pending


def atomic_write(target: Path, write: Callable[[BinaryIO], None]) -> None:
    """Replace ``target`` by what ``write`` writes to a binary file, atomically."""
    prepare_file(target, write).commit()


def commit_all(pending: list[PendingFile]) -> None:
    """Rename several prepared files into place; if one rename fails, discard the rest."""
    for i, p in enumerate(pending):
        try:
            p.commit()
        except BaseException:
            for rest in pending[i + 1 :]:
                rest.discard()
            raise


def fsync_directory(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk; some systems cannot
    # open directories, and then there is nothing more to do.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
