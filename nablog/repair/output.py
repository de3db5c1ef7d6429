"""Batch repair output: the repaired relations and the correction table as files, and the report.

``write_repair`` writes every file in one commit (:meth:`nablog.io.Stores.replace_files`): the
output directory holds all old files or all new ones, even when the process is killed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, TextIO

from ..io.csvfile import format_field, write_rows
from ..io.directory import DirectorySource
from ..io.parquetfile import arrow_table, read_parquet, write_table
from ..io.stores import Stores
from ..lang import NablogError, Program, shown_name
from .tables import CorrectionTable, RepairResult

FORMATS = ("csv", "parquet")


def repaired_facts(facts: Mapping[str, set], table: CorrectionTable) -> dict[str, set]:
    """The base relations after the table's changes (a split predicate under its own name)."""
    out = {shown_name(p): set(rows) for p, rows in facts.items()}
    for a in table.delete:
        out.setdefault(a.pred, set()).discard(tuple(a.args))
    for a in table.insert:
        out.setdefault(a.pred, set()).add(tuple(a.args))
    return out


def write_repair(directory: str | Path, program: Program, facts: Mapping[str, set], table: CorrectionTable, fmt: str = "csv", order: Mapping[str, list] | None = None) -> list[Path]:
    """Write every base relation as repaired by ``table`` and the table itself
    (``corrections.csv``/``.parquet``: one row per change, ``op`` ``insert`` or ``delete``, the
    relation and the fact) into ``directory``; return the files written.

    CSV files get a header from the relation's ``#columns`` declaration, if it has one. A
    relation with an input ``order`` (its rows as its file held them) keeps it: the rows kept in
    that order, then the inserted ones, sorted.
    """
    if fmt not in FORMATS:
        raise NablogError(f"unknown output format {fmt!r}", hint="choose csv or parquet")
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise NablogError(f"cannot create {out}: {e.strerror}", where=str(out), hint="give a writable directory with --out") from None
    relations = repaired_facts(facts, table)
    relations["corrections"] = {("delete", a.pred, str(a)) for a in table.delete} | {("insert", a.pred, str(a)) for a in table.insert}
    columns = dict(program.column_names)
    columns["corrections"] = ("op", "relation", "fact")
    writers = {}
    for name in sorted(relations):
        rows = relations[name]
        target = out / f"{name}.{fmt}"
        if fmt == "csv":
            header = list(columns[name]) if name in columns else None
            first = [format_row(r) for r in dict.fromkeys((order or {}).get(name, ())) if r in rows]
            rest = rows - set((order or {}).get(name, ())) if first else rows
            writers[target] = lambda f, rest=rest, header=header, first=first: write_rows(f, rest, None, "\n", False, [*(_header_line(header)), *first]) if first else write_rows(f, rest, header, "\n", False)
        elif rows or target.exists():
            old = read_parquet(target)[1] if target.exists() else None
            arrow = arrow_table(name, rows, target, old.names if old is not None else None, old)
            writers[target] = lambda f, arrow=arrow: write_table(f, arrow)
    Stores([], [DirectorySource(out)]).replace_files(writers)
    written = list(writers)
    return written


def format_row(row: tuple) -> str:
    return ",".join(format_field(v, len(row) == 1) for v in row) + "\n"


def _header_line(header: list[str] | None) -> list[str]:
    return [] if header is None else [",".join(format_field(h, len(header) == 1) for h in header) + "\n"]


LINE_WIDTH = 160
"""Where a report cuts a witness line (a violated instance of a wide relation runs to kilobytes)
unless ``--full`` asks for it whole."""


def shorten(text: str, full: bool = False) -> str:
    """``text`` cut at :data:`LINE_WIDTH` characters with a mark, unless ``full``.

    >>> shorten("x" * 200)[-14:], len(shorten("x" * 200)), shorten("short")
    ('xxx … (--full)', 160, 'short')
    """
    if full or len(text) <= LINE_WIDTH:
        return text
    mark = " … (--full)"
    return text[: LINE_WIDTH - len(mark)] + mark


def print_report(out: TextIO, result: RepairResult, limit: int = 5, full: bool = False) -> None:
    """The batch report: violations per constraint with counts, then each table and why; lines
    past :data:`LINE_WIDTH` are cut unless ``full``."""
    falsifiers = result.falsifiers
    if not falsifiers:
        out.write("consistent: every constraint holds; nothing to repair\n")
        return
    out.write(f"violations: {falsifiers.count:,} violated instances of {len(falsifiers)} constraint" + ("" if len(falsifiers) == 1 else "s") + "\n")
    for v in falsifiers:
        trust = "  (trusted: the source should have prevented this)" if v.trusted else ""
        groups = f" in {len(v.groups):,} group" + ("" if len(v.groups) == 1 else "s") if v.groups else ""
        out.write(f"  {v.name}: {v.count:,} violation" + ("" if v.count == 1 else "s") + groups + trust + "\n")
        out.write(shorten(f"    {v.info.text}", full) + "\n")
        for f in list(_first(v, limit)):
            out.write(shorten(f"      {f}", full) + "\n")
        if v.count > limit:
            out.write(f"      ... and {v.count - limit:,} more (--json for all)\n")
    out.write(f"\n{result.message}  [{result.case}; {result.components:,} independent component" + ("" if result.components == 1 else "s") + f", {result.candidates:,} candidate changes]\n")
    for i, table in enumerate(result.tables, 1):
        out.write(f"\n[{i}] {table.size:,} change" + ("" if table.size == 1 else "s") + f": {len(table.delete):,} deletion" + ("" if len(table.delete) == 1 else "s") + f", {len(table.insert):,} insertion" + ("" if len(table.insert) == 1 else "s") + "\n")
        for line in table.lines()[: 10 * limit if i == 1 else limit]:
            out.write(shorten(f"      {line}" + (_why(result, line) if i == 1 else ""), full) + "\n")
        shown = 10 * limit if i == 1 else limit
        if table.size > shown:
            out.write(f"      ... and {table.size - shown:,} more (see corrections.csv with --out DIR, or --json)\n")
        if table.fresh:
            out.write("    new constants: " + ", ".join(table.fresh[:10]) + (" ..." if len(table.fresh) > 10 else "") + " (give real values with --set new1=VALUE)\n")


def _first(v, limit: int):
    for i, f in enumerate(v.falsifiers()):
        if i >= limit:
            return
        yield f


def _why(result: RepairResult, line: str) -> str:
    for c, hits in result.why.items():
        from .violations import correction_text

        if correction_text(c) == line and hits:
            return "   removes " + ", ".join(f"{n:,} of {name}" for name, n in sorted(hits.items()))
    return ""




# -- cell repair ----------------------------------------------------------------------------------


@dataclass
class OrderedRelation:
    """A relation's rows in the order of its file, and what writing it row-aligned keeps: the CSV
    file's header line, each row's line as read (an unchanged row is written back byte for byte)
    and its line ending."""

    rows: list[tuple]
    path: Path | None = None
    header: str | None = None
    lines: list[str] | None = None
    newline: str = "\n"
    bom: bool = False


def ordered_relations(db) -> dict[str, OrderedRelation]:
    """Every base relation of a database with its rows in file order: a CSV file (alone or in a
    directory) keeps its order; a relation from elsewhere (facts files, SQLite, Parquet) is taken
    in the order of constants."""
    from ..io.csvfile import CsvFile, read_csv, recorded_header
    from ..lang import row_sort_key

    out: dict[str, OrderedRelation] = {}
    for source in getattr(db, "sources", ()):
        files: dict[str, Path] = {}
        if isinstance(source, DirectorySource):
            for name, path in source._scan().items():
                files[name] = path
        elif isinstance(source, CsvFile):
            files[source.relation] = source.location
        for name, path in files.items():
            if path.suffix.lower() != ".csv" or not path.exists():
                continue
            decided = getattr(source, "header", None)
            table = read_csv(path, decided if decided is not None else recorded_header(path), layout=True)
            header = next((raw for row, raw in table.layout or () if row is None and raw.strip()), None) if table.header is not None else None
            data = [(row, raw) for row, raw in table.layout or () if row is not None]
            out[name] = OrderedRelation([r for r, _ in data], path, header, [raw for _, raw in data], table.newline, table.bom)
    for pred, rows in db.facts.items():
        if shown_name(pred) not in out:
            out[shown_name(pred)] = OrderedRelation(sorted(rows, key=row_sort_key))
    return out


CELL_COLUMNS = ("relation", "row", "column", "old", "new", "constraints", "weight")


def write_cell_repair(directory: str | Path, program: Program, relations: Mapping[str, OrderedRelation], corrections) -> list[Path]:
    """Write each relation a correction changes, row-aligned with its input (a CSV file keeps its
    header and every unchanged line byte for byte; a changed row is written field by field), and
    ``corrections.csv``: one row per changed cell (``row`` counts data rows from 0, the header not
    counted; ``constraints`` joined by ``;``; ``weight`` in nats). Every file is written in one
    commit (all old files or all new ones)."""
    from ..io.csvfile import format_field

    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise NablogError(f"cannot create {out}: {e.strerror}", where=str(out), hint="give a writable directory with --out") from None
    by_relation: dict[str, dict[int, dict[int, object]]] = {}
    for c in corrections:
        by_relation.setdefault(c.relation, {}).setdefault(c.row, {})[c.position] = c.new
    writers = {}
    for name in sorted(relations):
        rel = relations[name]
        changed = by_relation.get(name, {})
        lines = []
        if rel.header is not None:
            lines.append(rel.header if rel.header.endswith(("\n", "\r")) else rel.header + rel.newline)
        for r, row in enumerate(rel.rows):
            raw = rel.lines[r] if rel.lines is not None else None
            if r in changed or raw is None:
                values = [changed.get(r, {}).get(i, v) for i, v in enumerate(row)]
                ending = raw[len(raw.rstrip("\r\n")):] if raw else ""
                lines.append(",".join(format_field(v, len(values) == 1) for v in values) + (ending or rel.newline))
            else:
                lines.append(raw if raw.endswith(("\n", "\r")) else raw + rel.newline)
        if rel.header is None and rel.lines is None and name in program.column_names:
            lines.insert(0, ",".join(program.column_names[name]) + "\n")
        text = ("\ufeff" if rel.bom else "") + "".join(lines)
        writers[out / f"{name}.csv"] = lambda f, text=text: f.write(text.encode("utf-8"))
    table = [CELL_COLUMNS] + [
        (c.relation, c.row, c.column, c.old, c.new, ";".join(c.constraints), round(c.weight, 3)) for c in corrections
    ]
    text = "".join(",".join(format_field(v if not isinstance(v, float) else f"{v:g}") for v in row) + "\n" for row in table)
    writers[out / "corrections.csv"] = lambda f, text=text: f.write(text.encode("utf-8"))
    Stores([], [DirectorySource(out)]).replace_files(writers)
    return list(writers)


def print_cell_report(out: TextIO, result, limit: int = 50) -> None:
    """The cell repair's report: violations before, the changed cells with their reasons, and
    the violations that stay."""
    if not result.violations_before and not result.corrections:
        out.write("consistent: every constraint holds; nothing to repair\n")
        return
    out.write(f"violations: {result.violations_before:,} before the repair\n")
    out.write(f"{result.message}  [{result.cells:,} cells with candidates, {result.components:,} independent component" + ("" if result.components == 1 else "s") + f", {result.rounds} round" + ("" if result.rounds == 1 else "s") + "]\n")
    for c in result.corrections[:limit]:
        out.write(f"  {c.relation}[{c.row}].{c.column}: {c.old!r} -> {c.new!r}   ({', '.join(c.constraints)}; weight {c.weight:.3f})\n")
    if len(result.corrections) > limit:
        out.write(f"  ... and {len(result.corrections) - limit:,} more (see corrections.csv with --out DIR, or --json)\n")
    for name, text in result.left[:limit]:
        out.write(f"  left violated: {name}: {text}\n")
    if len(result.left) > limit:
        out.write(f"  ... and {len(result.left) - limit:,} more violations left\n")
    for relation, row, column in result.unrepaired[:limit]:
        out.write(f"  unrepaired (deadline): {relation}[{row}].{column}\n")
    if len(result.unrepaired) > limit:
        out.write(f"  ... and {len(result.unrepaired) - limit:,} more unrepaired cells (see --json)\n")
    for i, alternative in enumerate(result.alternatives, 2):
        out.write(f"\n[{i}] an equally good repair: {len(alternative):,} cells\n")
        for c in alternative[:10]:
            out.write(f"  {c.relation}[{c.row}].{c.column}: {c.old!r} -> {c.new!r}\n")


__all__ = ["FORMATS", "OrderedRelation", "ordered_relations", "print_cell_report", "print_report", "repaired_facts", "write_cell_repair", "write_repair"]
