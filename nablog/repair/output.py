"""Batch repair output: the repaired relations and the correction table as files, and the report.

``write_repair`` writes every file in one commit (:meth:`nablog.io.Stores.replace_files`): the
output directory holds all old files or all new ones, even when the process is killed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, TextIO

from ..io.csvfile import write_rows
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


def write_repair(directory: str | Path, program: Program, facts: Mapping[str, set], table: CorrectionTable, fmt: str = "csv") -> list[Path]:
    """Write every base relation as repaired by ``table`` and the table itself
    (``corrections.csv``/``.parquet``: one row per change, ``op`` ``insert`` or ``delete``, the
    relation and the fact) into ``directory``; return the files written.

    CSV files get a header from the relation's ``#columns`` declaration, if it has one.
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
            writers[target] = lambda f, rows=rows, header=header: write_rows(f, rows, header, "\n", False)
        elif rows or target.exists():
            old = read_parquet(target)[1] if target.exists() else None
            arrow = arrow_table(name, rows, target, old.names if old is not None else None, old)
            writers[target] = lambda f, arrow=arrow: write_table(f, arrow)
    Stores([], [DirectorySource(out)]).replace_files(writers)
    written = list(writers)
    return written


def print_report(out: TextIO, result: RepairResult, limit: int = 5) -> None:
    """The batch report: violations per constraint with counts, then each table and why."""
    falsifiers = result.falsifiers
    if not falsifiers:
        out.write("consistent: every constraint holds; nothing to repair\n")
        return
    out.write(f"violations: {falsifiers.count:,} violated instances of {len(falsifiers)} constraint" + ("" if len(falsifiers) == 1 else "s") + "\n")
    for v in falsifiers:
        trust = "  (trusted: the source should have prevented this)" if v.trusted else ""
        groups = f" in {len(v.groups):,} group" + ("" if len(v.groups) == 1 else "s") if v.groups else ""
        out.write(f"  {v.name}: {v.count:,} violation" + ("" if v.count == 1 else "s") + groups + trust + "\n")
        out.write(f"    {v.info.text}\n")
        for f in list(_first(v, limit)):
            out.write(f"      {f}\n")
        if v.count > limit:
            out.write(f"      ... and {v.count - limit:,} more (--json for all)\n")
    out.write(f"\n{result.message}  [{result.case}; {result.components:,} independent component" + ("" if result.components == 1 else "s") + f", {result.candidates:,} candidate changes]\n")
    for i, table in enumerate(result.tables, 1):
        out.write(f"\n[{i}] {table.size:,} change" + ("" if table.size == 1 else "s") + f": {len(table.delete):,} deletion" + ("" if len(table.delete) == 1 else "s") + f", {len(table.insert):,} insertion" + ("" if len(table.insert) == 1 else "s") + "\n")
        for line in table.lines()[: 10 * limit if i == 1 else limit]:
            out.write(f"      {line}" + (_why(result, line) if i == 1 else "") + "\n")
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


__all__ = ["FORMATS", "print_report", "repaired_facts", "write_repair"]
