"""CSV files: one relation per file, typed fields, a header row detected or forced, atomic rewrite.

Reading
    Files are UTF-8 (a leading byte-order mark is skipped and written back), comma-separated,
    with ``"`` quoting as the :mod:`csv` module reads it (strict: text after a closing quote is
    an error). Blank lines are skipped. Rows are numbered by the line they start on, the header
    being row 1, so "row 7" is line 7 in an editor.
    A text without ``"``, carriage returns or NUL characters (most data) is read in bulk by
    pyarrow's CSV reader and typed column by column (:func:`_read_plain`, issue 29: 1e6 rows
    in 1.3-1.7 s of CPU instead of 3.4-4.7 s); it reads the same rows as the :mod:`csv` module would, and any
    other text, a record of another width, or a rewrite's read takes the general path.

Values
    An *unquoted* field that is an integer and prints back the same (``str(int(s)) == s``:
    ``12``, ``-3``, ``0``, but not ``00260881``, ``+5``, ``1.0``, `` 7``, ``-0``) is an ``int``.
    Every other field is a ``str`` exactly as written; an empty field is ``""``. A *quoted*
    field is always a string: ``"12"`` is the string ``"12"``. That is how the writer keeps a
    string that looks like an integer apart from the integer, so every relation round-trips.

Header rule (``header=None``)
    The first row is a header when all of these hold, judged on it and the (up to 1000) rows
    that follow it with the same width:

    1. none of its fields is a number (an integer, or a float such as ``0.5`` or ``1e-5``), and
       its non-empty fields are pairwise different;
    2. no column *votes data*: a column votes data when the first row's field occurs again
       further down the same column (column names do not repeat as values);
    3. some column *votes header*: its first-row field is non-empty and either
       (a) every non-empty value below it is *numeric-like* (has a digit and no letter:
       ``12``, ``00260881``, ``5.3``, ``744-9007``, ``1964-09-09``; or a float such as ``1e-5``)
       while the first-row field is not, or
       (b) at least two non-empty values below it all have one *shape* and the first-row
       field's shape differs. A shape writes each run of upper-case letters as ``A``, of other
       letters as ``a``, of digits as ``9``, and keeps other characters: ``AL`` and ``GR``
       are ``A``, ``Country`` is ``Aa``, ``first_name`` is ``a_a``.

    So ``f_name,l_name,...,zip,...`` over rows with integer and zip-code columns is a header,
    and so is ``code,country / AL,Albania / GR,Greece``; ``alice,bob / bob,carol /
    carol,dave`` is data. A file that gives no evidence (``Lake,Island / Arresø,Seeland /
    Lough Neagh,Ireland``: names over names) is read as data, and so is a file of one row
    without integers (a lone header looks like a lone row). Force ``header=True`` for such
    files, and ``header=False`` to be sure a file without header is read as data.

Decided once
    Whatever was decided — guessed or given — is recorded beside the file, in
    ``.nablog/csv-headers.json`` of its directory, when the file is first written; every later
    read uses the record (unless ``header`` is given again, which a later write records), so a
    write that changes what the rule would see never flips it. A command that only reads writes
    no record (the rule answers the same on the same bytes). A guess not yet recorded is
    reported on stderr as a note naming the file and the line taken as header (or as data). The rule is home-made
    on purpose: pyarrow's CSV reader has no header detection (it takes the first line as a
    header unless told otherwise) and DuckDB's sniffer is a large dependency with its own,
    equally heuristic rules; a documented rule plus a recorded decision is what makes the
    answer stable.

Writing
    An existing file keeps its bytes except where rows change: the header line, every kept
    row's text (its quoting), the order of rows, blank lines, the line ending and the byte-order
    mark stay; a deleted row's line goes; new rows are appended at the end, sorted. A new file
    gets a header (``c0,c1,...``) only when ``header=True`` was given. Integers are written as
    digits; a string is quoted when the :mod:`csv` module would quote it (it contains ``,``,
    ``"``, CR or LF, or it is the only, empty, field of its row) or when it would otherwise read
    back as an integer. New lines use the line ending of the old file (``\\n`` or ``\\r\\n``);
    new files use ``\\n``.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import os
import secrets
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..lang import Constant, DataError
from .base import (
    relation_name,
    SingleRelationFile,
    PendingFile,
    Rows,
    is_int_text,
    located_error,
    prepare_file,
    read_text,
    row_width,
    sorted_rows,
    text_to_constant,
)

HEADER_SAMPLE = 1000
"""How many rows after the first one the header rule looks at."""

_SHAPE_VOTE_MIN = 2


@dataclass
class CsvTable:
    """The contents of a CSV file and what its rewrite must keep: header, line ending, BOM."""

    rows: Rows
    header: list[str] | None
    width: int | None
    newline: str = "\n"
    bom: bool = False
    layout: list[tuple[tuple | None, str]] | None = None  # (row or None for a header/blank line, its raw text)


@dataclass
class _Record:
    row: int  # the line the record starts on
    values: list[Constant]
    texts: list[str]
    raw: str


def read_csv(path: Path, header: bool | None = None, layout: bool = False) -> CsvTable:
    """Read a CSV file into typed rows; ``header`` forces (True/False) or detects (None) a header row.

    With ``layout``, the table also keeps every line's raw text in file order, so that a rewrite
    changes only the rows that change.

    Raises DataError naming the file (and the row) when the file cannot be read or a row is
    malformed or has the wrong number of fields.
    """
    text = read_text(path)
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    first_end = text.find("\n")
    newline = "\r\n" if first_end > 0 and text[first_end - 1] == "\r" else "\n"
    if not layout and not any(c in text for c in _SLOW):
        table = _read_plain(path, text, header, bom)
        if table is not None:
            return table
    lines: list[tuple[tuple | None, str]] | None = [] if layout else None
    records = _records(path, text, lines)
    first = next(records, None)
    if first is None:
        return CsvTable(set(), None, None, newline, bom, lines)
    ahead = list(itertools.islice(records, HEADER_SAMPLE))
    width = len(first.values)
    if header is None:
        header = _detect_header(first, [r for r in ahead if len(r.values) == width])
    header_fields = list(first.texts) if header else None
    rows: Rows = set()
    if not header:
        rows.add(tuple(first.values))
    elif lines is not None:
        lines[lines.index((tuple(first.values), first.raw))] = (None, first.raw)
    for rec in itertools.chain(ahead, records):
        if len(rec.values) != width:
            raise _width_error(path, rec, width, header_fields is not None)
        rows.add(tuple(rec.values))
    return CsvTable(rows, header_fields, width, newline, bom, lines)


_SLOW = '"\r\x00'
"""A text holding none of these characters is read in bulk (:func:`_read_plain`)."""


def _read_plain(path: Path, text: str, header: bool | None, bom: bool) -> CsvTable | None:
    """:func:`read_csv` of a text without quotes, carriage returns or NUL characters, in bulk:
    each non-empty line is a record and each comma separates two fields, exactly as the :mod:`csv`
    module reads such a text; pyarrow's CSV reader splits it (no quoting, every field a string)
    and fields are typed column by column (an unquoted field is an integer when it matches the
    rule of :func:`text_to_constant`). The header rule reads the first records as the general
    path does. None when a record's width differs from the first one's (the general path then
    names the row)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    head = []
    for line in text.split("\n", 2 * HEADER_SAMPLE + 2)[: 2 * HEADER_SAMPLE + 2]:
        if line:
            head.append(line)
            if len(head) > HEADER_SAMPLE:
                break
    if not head:
        return CsvTable(set(), None, None, "\n", bom)
    sample = [_Record(0, [text_to_constant(f) for f in fields], fields, line) for line in head for fields in [line.split(",")]]
    first = sample[0]
    width = len(first.values)
    if header is None:
        header = _detect_header(first, [r for r in sample[1:] if len(r.values) == width])
    names = [f"c{j}" for j in range(width)]
    try:
        table = pacsv.read_csv(
            pa.py_buffer(text.encode("utf-8")),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(quote_char=False, escape_char=False, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(column_types={n: pa.large_string() for n in names}, strings_can_be_null=False, null_values=[], quoted_strings_can_be_null=False),
        )
    except pa.ArrowInvalid:  # a record of another width: the general path names it
        return None
    table = table.slice(1) if header else table
    columns = [_typed(table.column(j).combine_chunks()) for j in range(width)]
    return CsvTable(set(zip(*columns)), list(first.texts) if header else None, width, "\n", bom)


def _typed(column) -> list[Constant]:
    """The constants of a column of unquoted fields (see :func:`text_to_constant`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = column.to_pylist()
    ints = pc.match_substring_regex(column, r"^(?:0|-?[1-9][0-9]*)$")
    if not pc.any(ints).as_py():
        return values
    at = pc.indices_nonzero(ints)
    digits = column.take(at)
    if pc.max(pc.utf8_length(digits)).as_py() > 18:  # past int64: one at a time, as written
        return [text_to_constant(v) for v in values]
    for i, v in zip(at.to_pylist(), pc.cast(digits, pa.int64()).to_pylist()):
        values[i] = v
    return values


def _detect_header(first: _Record, sample: list[_Record]) -> bool:
    """Apply the header rule of this module's docstring to the first row and the rows below it."""
    if any(isinstance(v, int) or _is_number(t) for v, t in zip(first.values, first.texts)):
        return False  # a number is never a column name (1e-5, 0.5 included)
    named = [t for t in first.texts if t != ""]
    if len(set(named)) != len(named):
        return False
    votes = False
    for j, head in enumerate(first.texts):
        if head == "":
            continue
        below = [r.texts[j] for r in sample]
        if head in below:
            return False
        values = [t for t in below if t != ""]
        if values and all(_numeric_like(t) for t in values) and not _numeric_like(head):
            votes = True
        shapes = {_shape(t) for t in values}
        if len(values) >= _SHAPE_VOTE_MIN and len(shapes) == 1 and _shape(head) not in shapes:
            votes = True
    return votes


def _is_number(text: str) -> bool:
    """Text Python reads as a float and that has a digit: ``0.5``, ``1e-5``, ``-2.``, not ``inf``."""
    try:
        float(text)
    except ValueError:
        return False
    return any(c.isdigit() for c in text)


def _numeric_like(text: str) -> bool:
    """A number however written: digits without letters (``744-9007``), or a float (``1e-5``)."""
    if not any(c.isdigit() for c in text):
        return False
    return not any(c.isalpha() for c in text) or _is_number(text)


def _shape(text: str) -> str:
    """Runs of upper-case letters as A, other letters as a, digits as 9; other characters kept.

    >>> [_shape(t) for t in ["AL", "Country", "first_name", "744-9007", "Ελληνική"]]
    ['A', 'Aa', 'a_a', '9-9', 'Aa']
    """
    out: list[str] = []
    for c in text:
        kind = "A" if c.isupper() else "a" if c.isalpha() else "9" if c.isdigit() else c
        if not out or out[-1] != kind or kind not in "Aa9":
            out.append(kind)
    return "".join(out)


def _records(path: Path, text: str, layout: list | None = None) -> Iterator[_Record]:
    """The non-blank records of a CSV text, typed, each with its first line number and raw text;
    ``layout`` (when given) collects ``(row, raw)`` for every record and ``(None, raw)`` for blank lines."""
    consumed: list[str] = []

    def lines() -> Iterator[str]:
        # newline="" keeps line endings (and CR inside quoted fields) as written, as csv needs.
        for line in io.StringIO(text, newline=""):
            consumed.append(line)
            yield line

    reader = csv.reader(lines(), strict=True)
    last_line = 0
    while True:
        consumed.clear()
        start = last_line + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raw = "".join(consumed)
            raise located_error(
                f"malformed CSV in row {start} of {path.name}: {e}",
                f"{path}, row {start}",
                'a quoted field ends at its closing quote, followed by "," or the line end; write a quote inside a quoted field as ""',
                _first_line(raw),
                start,
            ) from None
        last_line = reader.line_num
        raw = "".join(consumed)
        if not fields:
            if layout is not None:
                layout.append((None, raw))
            continue
        quoted = _quoted_fields(raw) if '"' in raw else None
        if quoted is not None and len(quoted) != len(fields):
            quoted = None  # cannot happen for text the csv module accepted; read values as unquoted
        values: list[Constant] = [
            f if quoted is not None and quoted[i] else text_to_constant(f) for i, f in enumerate(fields)
        ]
        if layout is not None:
            layout.append((tuple(values), raw))
        yield _Record(start, values, fields, raw)


def _quoted_fields(raw: str) -> list[bool]:
    """For each field of one raw CSV record, whether it was written in quotes.

    The csv module hides quoting; the record was already accepted by it in strict mode, so a
    quote opens a field exactly when it is the field's first character.
    """
    body = raw.rstrip("\r\n")
    flags: list[bool] = []
    i, n = 0, len(body)
    while True:
        if i < n and body[i] == '"':
            flags.append(True)
            i += 1
            while i < n:
                if body[i] == '"':
                    if i + 1 < n and body[i + 1] == '"':
                        i += 2
                        continue
                    i += 1
                    break
                i += 1
        else:
            flags.append(False)
        comma = body.find(",", i)
        if comma < 0:
            return flags
        i = comma + 1


def _first_fields(path: Path) -> list[str] | None:
    """The first line's fields, stripped and in lower case (None when it cannot be read)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            first = next(csv.reader(f), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return None if first is None else [field.strip().lower() for field in first]


def _first_line(raw: str) -> str:
    return raw.splitlines()[0] if raw else ""


def _width_error(path: Path, rec: _Record, width: int, has_header: bool) -> DataError:
    got = len(rec.values)
    like = "the header" if has_header else "the first row"
    return located_error(
        f"row {rec.row} of {path.name} has {got} field{'s' if got != 1 else ''}, expected {width}",
        f"{path}, row {rec.row}",
        f'every row needs {width} field{"s" if width != 1 else ""}, like {like}; quote a field that contains a comma: "a,b"',
        _first_line(rec.raw),
        rec.row,
    )


# -- writing -----------------------------------------------------------------------------------


def format_field(value: Constant, alone: bool = False) -> str:
    """One CSV field: integers as digits; strings quoted when needed to read back the same string.

    >>> [format_field(v) for v in [12, "12", "a,b", 'a"b', "New York", ""]]
    ['12', '"12"', '"a,b"', '"a""b"', 'New York', '']
    >>> format_field("", alone=True)
    '""'
    """
    if isinstance(value, int):
        return str(value)
    if (alone and value == "") or is_int_text(value) or any(c in value for c in ',"\r\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def format_csv(rows: Iterable[tuple], header: list[str] | None, newline: str = "\n") -> str:
    """The text of a CSV file holding ``rows`` (sorted) under an optional header."""
    out: list[str] = []
    if header is not None:
        out.append(",".join(format_field(h, len(header) == 1) for h in header) + newline)
    for row in sorted_rows(rows):
        out.append(",".join(format_field(v, len(row) == 1) for v in row) + newline)
    return "".join(out)


def write_rows(f: BinaryIO, rows: Iterable[tuple], header: list[str] | None, newline: str, bom: bool, kept: Iterable[str] = ()) -> None:
    """Write a CSV file's bytes to ``f``: the ``kept`` lines of the old file as they were, then
    ``rows`` (sorted, under ``header`` when given); the unit atomic replacement runs (and tests interrupt)."""
    text = "".join(kept) + format_csv(rows, header, newline)
    f.write((("\ufeff" if bom else "") + text).encode("utf-8"))


class CsvFile(SingleRelationFile):
    """One relation in one CSV file, named after the file (``edge.csv`` holds ``edge``).

    ``header`` forces a header row (True), its absence (False), or leaves it to the decision
    recorded for the file, else to the header rule (None, see the module docstring). A decision
    is recorded beside the file (:data:`DECISIONS`) the first time it is made, so every later
    read — after writes that change what the rule would see — keeps it; a guess is reported once
    through ``note``.
    """

    format_name = "CSV"

    def __init__(self, path: str | Path, *, relation: str | None = None, header: bool | None = None, note=None):
        self.location = Path(path)
        self.relation = relation if relation is not None else relation_name(self.location.stem)
        self.header = header
        # The relation's #columns names, when the program gives them: a first row that is
        # exactly those names is the header, whatever the rule would guess (one-row files).
        self.columns: tuple[str, ...] | None = None
        self.note = note or _print_note
        self._header_fields: list[str] | None = None
        self._newline = "\n"
        self._bom = False

    def write(self, changes) -> None:
        write_recording(super().write, changes)

    def _decided(self) -> bool | None:
        return self.header if self.header is not None else recorded_header(self.location)

    def read(self) -> Rows:
        """The rows of the file (remembering its header, line ending and byte-order mark)."""
        decided = self._decided()
        guessed = decided is None
        if decided is None and self.columns and _first_fields(self.location) == [c.lower() for c in self.columns]:
            decided = True
            self.note(f"{self.location}: the first line names the #columns of {self.relation}: read as a header")
            guessed = False
        table = read_csv(self.location, decided)
        self._remember(table)
        if guessed and table.width is not None:
            first = ",".join(table.header) if table.header is not None else "the first row"
            shown = f"{self.location}" + (f" (relation {self.relation})" if self.relation != self.location.stem else "")
            self.note(
                f"{shown}: "
                + (f"the first line ({_short(first)}) is read as a header" if table.header is not None else "the first line is read as data, not a header")
                + " (give --header or --no-header to decide otherwise)"
            )
        return table.rows

    def _record(self, header: bool) -> None:
        """Record the header decision beside the file once a commit has written the file
        (:func:`record_staged`): a command that only reads, or fails, writes nothing into the
        data's directory (issue 32), and the rule gives the same answer on the same bytes, so
        only a write could flip it."""
        if recorded_header(self.location) != header:
            _STAGED[self.location] = header

    def _read_for_change(self) -> tuple[Rows, CsvTable | None]:
        if not self.location.exists():
            return set(), None
        table = read_csv(self.location, self._decided(), layout=True)
        self._remember(table)
        return table.rows, table

    def _rewrite_from(self, table: CsvTable | None, rows: Rows, added: Rows, tag: str | None) -> PendingFile | None:
        """The new contents: an existing file keeps its bytes except where rows change — its
        header line, the text of every row kept (quoting, order), blank lines, line endings and
        byte-order mark stay; deleted rows' lines go; new rows are appended, sorted."""
        if table is not None and table.width is not None:
            pending = self._rewrite(table, rows, added, tag)
            self._record(table.header is not None)
            return pending
        if table is None and not rows:
            return None
        width = row_width(self.relation, rows, self.location)
        self._check_width(width)
        header = [f"c{i}" for i in range(width or 0)] if self.header else None
        newline, bom = self._newline, self._bom
        pending = prepare_file(self.location, lambda f: write_rows(f, rows, header, newline, bom), tag)
        self._record(header is not None)
        self.header = header is not None
        self._header_fields = header
        return pending

    def _rewrite(self, table: CsvTable, rows: Rows, added: Rows, tag: str | None) -> PendingFile:
        width = row_width(self.relation, rows, self.location)
        self._check_width(width)
        if table.header is not None and width is not None and width != len(table.header):
            raise DataError(
                f"cannot store rows of width {width} in {self.location}: its header has {len(table.header)} columns",
                where=str(self.location),
                hint="the relation's arity must match the file's columns; remove the file to change it",
            )
        kept = [raw for row, raw in table.layout or () if row is None or row in rows]
        if kept and not kept[-1].endswith(("\n", "\r")):
            kept[-1] += table.newline
        return prepare_file(self.location, lambda f: write_rows(f, added, None, table.newline, table.bom, kept), tag)

    def _check_width(self, width: int | None) -> None:
        if width == 0:
            raise DataError(
                f"cannot store relation {self.relation} in {self.location}: CSV cannot hold a relation of arity 0",
                where=str(self.location),
                hint=f"write 0-ary facts like {self.relation}. in a .lp file",
            )

    def _remember(self, table: CsvTable) -> None:
        self.header = table.header is not None if table.width is not None else self.header
        self._header_fields = table.header
        self._newline = table.newline
        self._bom = table.bom


# -- header decisions ----------------------------------------------------------------------------

DECISIONS = ".nablog/csv-headers.json"
"""Where the header decision of each CSV file is recorded, relative to the file's directory."""


_STAGED: dict[Path, bool] = {}  # decisions of files staged for a commit, recorded once it is done


def record_staged(done: bool = True) -> None:
    """Record the header decisions of the CSV files a finished commit wrote (``done``), or drop
    them when it failed (called by ``Stores.commit`` and by ``write``)."""
    while _STAGED:
        path, header = _STAGED.popitem()
        if done:
            record_header(path, header)


def write_recording(write, changes) -> None:
    """``write(changes)``, then the header decisions of the files it wrote recorded."""
    try:
        write(changes)
    except BaseException:
        record_staged(done=False)
        raise
    record_staged()


def decisions_path(path: Path) -> Path:
    return path.parent / DECISIONS


def _decisions(path: Path) -> dict:
    _remove_orphans(decisions_path(path))
    try:
        data = json.loads(decisions_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recorded_header(path: Path) -> bool | None:
    """The recorded header decision for the CSV file ``path`` (None: none recorded)."""
    value = _decisions(path).get(path.name)
    return value if isinstance(value, bool) else None


def record_header(path: Path, header: bool) -> bool:
    """Record the header decision for ``path``; False when the directory is not writable."""
    data = _decisions(path)
    data[path.name] = header
    text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8")
    target = decisions_path(path)
    try:
        target.parent.mkdir(exist_ok=True)
        # Readers record decisions without the commit lock: the temporary file is named with
        # the process, so that one left by a killed reader is known as an orphan.
        prepare_file(target, lambda f: f.write(text), f"pid{os.getpid()}.{secrets.token_hex(4)}").commit()
    except (OSError, DataError):
        return False
    return True


def _remove_orphans(target: Path) -> None:
    """Remove the temporary files of ``target`` left by readers killed while recording (each read
    of the decisions looks: a glob of one directory)."""
    prefix = f".{target.name}.pid"
    for tmp in target.parent.glob(f"{prefix}*.tmp"):
        pid = tmp.name[len(prefix) :].partition(".")[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _print_note(message: str) -> None:
    print(f"nablog: note: {message}", file=sys.stderr, flush=True)
