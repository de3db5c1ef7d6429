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
from typing import Callable, Mapping, TextIO

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
        while True:
            answer = read(f"is {atom} true? [y/n, q to stop] ").strip().lower()
            if answer in ("y", "yes", "n", "no", "q", "quit"):
                break
            out.write("answer y (it is true), n (it is false) or q\n")
        if answer in ("q", "quit"):
            return verified
        verified[fact] = answer in ("y", "yes")
        table.save(verified)


__all__ = ["VerifiedTable", "deciding_fact", "verify_interactively"]
