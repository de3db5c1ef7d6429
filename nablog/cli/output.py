"""What the `nablog` command writes to a terminal: tables of rows, proposals, violations, warnings and a progress line."""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator, Sequence, TextIO

from ..database import Database, Violation
from ..lang import NablogWarning, format_constant


def warn(warning: NablogWarning) -> None:
    # On a terminal a progress line may stand where the warning goes: clear it first.
    print(("\r\x1b[K" if sys.stderr.isatty() else "") + str(warning), file=sys.stderr)


def print_table(out: TextIO, pred: str, rows: Sequence[tuple]) -> None:
    count = f"{len(rows)} row" + ("" if len(rows) == 1 else "s")
    if rows and not rows[0]:
        out.write(f"{pred}: true\n\n")
        return
    out.write(f"{pred} ({count})\n")
    cells = [[format_constant(v) for v in row] for row in rows]
    if cells:
        widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
        for r in cells:
            out.write("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
    out.write("\n")


def print_proposal(out: TextIO, proposal, expand: bool = False, full: bool = False) -> None:
    out.write(f"request: {proposal.request}\n{proposal.message}\n")
    for i, r in enumerate(proposal, 1):
        print_realization(out, i, r, expand, full)
    print_reasons(out, proposal)


def print_realization(out: TextIO, i: int, r, expand: bool = False, full: bool = False) -> None:
    out.write(f"\n[{i}] " + r.explain(full).replace("\n", "\n    ") + "\n")
    if expand and r.family is not None:
        out.write("    members:\n")
        for binding in r.family.bindings:
            values = ", ".join(f"{v.name}={format_constant(b)}" for v, b in zip(r.family.variables, binding))
            out.write(f"      {values}: " + " ".join(r.member(binding).changes.lines()) + "\n")


def print_reasons(out: TextIO, proposal) -> None:
    if proposal.reasons:
        out.write("\nwhat stands in the way:\n" + "".join(f"  {r}\n" for r in proposal.reasons))


def print_violations(out: TextIO, db: Database | None, violations: list[Violation], limit: int, total: int | None = None, full: bool = False) -> None:
    from ..repair.output import shorten

    total = len(db.constraints()) if total is None else total  # type: ignore[union-attr]
    if not violations:
        out.write(f"consistent: {total} constraint" + ("" if total == 1 else "s") + " hold\n")
        return
    out.write(f"inconsistent: {len(violations)} of {total} constraints violated\n\n")
    for v in violations:
        instances = f"{v.count} violation" + ("" if v.count == 1 else "s")
        out.write(f"{v.constraint}: {instances}\n" + shorten(f"  {v.text}", full) + "\n")
        for witness in v.witnesses[:limit]:
            if witness:
                out.write(shorten("    " + ", ".join(str(a) for a in witness), full) + "\n")
            else:
                out.write("    (the required atom does not hold)\n")
        if v.count > limit:  # the count, not the witnesses: the spark checker brings only a few
            out.write(f"    ... and {v.count - limit} more (--limit N, or --json for all)\n")
        out.write("\n")


class Progress:
    """Progress of a long evaluation on stderr, shown only on a terminal and after half a second
    (``NABLOG_PROGRESS_DELAY`` seconds, when set)."""

    def __init__(self, stream: TextIO, delay: float | None = None):
        self.stream = stream
        self.start = time.monotonic()
        self.delay = float(os.environ.get("NABLOG_PROGRESS_DELAY", 0.5)) if delay is None else delay
        self.shown = False
        self._writing = threading.Lock()

    @classmethod
    def for_terminal(cls) -> "Progress | None":
        return cls(sys.stderr) if sys.stderr.isatty() else None

    def __call__(self, message: str) -> None:
        if time.monotonic() - self.start < self.delay:
            return
        with self._writing:
            self.shown = True
            self.stream.write(f"\r\x1b[K[{time.monotonic() - self.start:6.1f}s] {message}")
            self.stream.flush()

    @contextmanager
    def ticking(self, message: str) -> Iterator[None]:
        """Show ``message`` with the time going on while a step that reports nothing runs
        (reading the data: the first seconds at 1e6 facts would show nothing)."""
        stop = threading.Event()

        def tick() -> None:
            self(message)
            while not stop.wait(0.25):
                self(message)

        ticker = threading.Thread(target=tick, name="nablog-progress", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join()

    def __del__(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()

