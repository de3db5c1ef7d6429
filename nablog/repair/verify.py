"""Verification by a person (seed 004, §5, case 2): ask about one deciding fact at a time.

An expert who can check facts against the real world is asked as little as possible: among the
alternative minimal correction tables, the fact whose truth splits them most evenly is asked
first; a fact said to be true is kept in every later table, a fact said to be false is deleted
(or never inserted). Questions go on until every change of the chosen table is verified. The
answers are kept in a *verified table*, a file apart from the data and from the correction
table, so that they survive later source updates even when an update makes them redundant.

>>> tables = [CorrectionTable.of([("-", ("m1", ("a", "b")))]), CorrectionTable.of([("-", ("m2", ("a", "c")))])]
>>> deciding_fact(tables, {})
('m1', ('a', 'b'))
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Callable, Mapping, Sequence, TextIO

from ..io.base import atomic_write
from ..lang import Atom, DataError, Program, parse_atom, row_sort_key
from ..solver.ground import GroundAtom
from .tables import CorrectionTable, repair

VERDICTS = {"true": True, "false": False}


class VerifiedTable:
    """Verified facts in a CSV file ``fact,verdict`` (``verdict`` is ``true`` or ``false``)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def load(self) -> dict[GroundAtom, bool]:
        if not self.path.exists():
            return {}
        out: dict[GroundAtom, bool] = {}
        with self.path.open(encoding="utf-8", newline="") as f:
            for lineno, row in enumerate(csv.reader(f), 1):
                if lineno == 1 and row == ["fact", "verdict"]:
                    continue
                if len(row) != 2 or row[1] not in VERDICTS:
                    raise DataError(
                        f"{self.path}, row {lineno}: expected a fact and true or false",
                        where=f"{self.path}:{lineno}",
                        hint='each row is "p(a, b)",true',
                    )
                atom = parse_atom(row[0], str(self.path))
                out[(atom.pred, tuple(atom.args))] = VERDICTS[row[1]]
        return out

    def save(self, verified: Mapping[GroundAtom, bool]) -> None:
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["fact", "verdict"])
        for a in sorted(verified, key=lambda a: (a[0], row_sort_key(a[1]))):
            writer.writerow([str(Atom(a[0], a[1])), "true" if verified[a] else "false"])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, lambda f: f.write(text.getvalue().encode("utf-8")))


def deciding_fact(tables: list[CorrectionTable], verified: Mapping[GroundAtom, bool]) -> GroundAtom | None:
    """The unverified fact changed by some of ``tables`` that splits them most evenly (ties: the
    one changed by most tables, then the first in order); None when every change is verified."""
    counts: dict[GroundAtom, int] = {}
    for t in tables:
        for _, a in t.corrections():
            if a not in verified:
                counts[a] = counts.get(a, 0) + 1
    if not counts:
        return None
    n = len(tables)
    return min(counts, key=lambda a: (-min(counts[a], n - counts[a]), -counts[a], a[0], row_sort_key(a[1])))


def verify_interactively(
    rules: Program,
    model,
    table: VerifiedTable,
    read: Callable[[str], str],
    out: TextIO,
    *,
    policy: str = "subset",
    engine=None,
    alternatives: int = 20,
) -> dict[GroundAtom, bool]:
    """Ask the person at ``read``/``out`` about deciding facts until the first minimal correction
    table consists of verified changes only; record every answer in ``table``; return the
    verified facts (pass them to :func:`nablog.repair.repair`)."""
    verified = table.load()
    if verified:
        out.write(f"{len(verified)} verified fact" + ("" if len(verified) == 1 else "s") + f" from {table.path}\n")
    while True:
        result = repair(rules, model, policy=policy, limit=alternatives, verified=verified, engine=engine)
        if not result.tables:
            out.write("the verified facts leave no consistent correction: " + result.message + "\n")
            return verified
        first = result.tables[0]
        pending = [t for t in result.tables if any(a not in verified for _, a in t.corrections())]
        fact = deciding_fact(pending if pending else [first], verified)
        if fact is None or not any(a not in verified for _, a in first.corrections()):
            out.write("every change of the correction table is verified.\n")
            return verified
        atom = Atom(fact[0], fact[1])
        changed_by = sum(1 for t in result.tables if any(a == fact for _, a in t.corrections()))
        out.write(f"\n{len(result.tables)} alternative correction table" + ("s" if len(result.tables) != 1 else "") + f"; {changed_by} change {atom}\n")
        answer = _ask(read, out, f"is {atom} true?", "answer y (it is true), n (it is false) or q\n")
        if answer is None:
            return verified
        verified[fact] = answer
        table.save(verified)


def verify_cells_interactively(
    program: Program,
    relations: Mapping[str, Sequence[tuple]],
    table: VerifiedTable,
    read: Callable[[str], str],
    out: TextIO,
    *,
    alternatives: int = 20,
    **options,
) -> dict[GroundAtom, bool]:
    """Verification of a cell repair (``repair --policy cells --interactive``).

    A cell repair updates rows; as seed 004's update, an updated row is the deletion of its old
    tuple and the insertion of the new one, so the person is asked about the *updated row*: among
    the optimal cell repairs (up to ``alternatives``), the one whose new tuple splits them most
    evenly (:func:`deciding_fact` over their insertions). "Yes" verifies the new tuple true and
    the old one false; "no" verifies the new tuple false, so no row becomes it. The answers go to
    ``table`` and into the next repair (``repair_cells(..., verified=...)``); questions go on
    until every update of the first repair is verified. ``options`` are passed to
    :func:`~nablog.repair.cells.repair_cells`.
    """
    from .cells import CellRepair, repair_cells

    verified = table.load()
    if verified:
        out.write(f"{len(verified)} verified fact" + ("" if len(verified) == 1 else "s") + f" from {table.path}\n")
    while True:
        result = repair_cells(program, relations, limit=alternatives, verified=verified, **options)
        repairs = [result.corrections] + list(result.alternatives)
        updates = [_updates(CellRepair("consistent", r, 0), relations) for r in repairs]
        tables = [CorrectionTable.of([("+", new) for new in u.values()]) for u in updates]
        fact = deciding_fact([t for t in tables if any(a not in verified for _, a in t.corrections())], verified)
        if fact is None or all(new in verified for new in updates[0].values()):
            out.write("every update of the cell repair is verified.\n" if result.corrections else "the cell repair changes nothing.\n")
            return verified
        old = next(o for u in updates for o, new in u.items() if new == fact)
        changed_by = sum(1 for u in updates if fact in u.values())
        out.write(f"\n{len(repairs)} optimal cell repair" + ("s" if len(repairs) != 1 else "") + f"; {changed_by} update {Atom(*old)}\n")
        answer = _ask(read, out, f"  to {Atom(*fact)}: is that right?", "answer y (the updated row is right), n (it is not) or q\n")
        if answer is None:
            return verified
        if answer:
            verified[fact] = True
            verified[old] = False
        else:
            verified[fact] = False
        table.save(verified)


def _ask(read: Callable[[str], str], out: TextIO, question: str, help_text: str) -> bool | None:
    """The person's yes (True) or no (False), asked until understood; None when they stop."""
    while True:
        answer = read(f"{question} [y/n, q to stop] ").strip().lower()
        if answer in ("y", "yes", "n", "no"):
            return answer in ("y", "yes")
        if answer in ("q", "quit"):
            return None
        out.write(help_text)


def _updates(repair, relations: Mapping[str, Sequence[tuple]]) -> dict[GroundAtom, GroundAtom]:
    """Old tuple -> new tuple of every row the repair updates."""
    after = repair.apply(relations)
    rows = sorted({(c.relation, c.row) for c in repair.corrections})
    return {(p, tuple(relations[p][r])): (p, tuple(after[p][r])) for p, r in rows}


__all__ = ["VerifiedTable", "deciding_fact", "verify_cells_interactively", "verify_interactively"]
