"""The undo log: a stack of applied changes kept beside the program, written atomically.

Each entry records, per fact store, the facts an ``apply`` inserted and deleted; ``nablog undo``
takes the newest entry and applies its inverse. The log lives in ``.nablog/history.json`` in the
directory of the database's first program file.

>>> import tempfile, pathlib
>>> log = History(pathlib.Path(tempfile.mkdtemp()) / "history.json")
>>> log.push({"request": "+p(1).", "changes": {"db.lp": {"p": {"insert": [[1]], "delete": []}}}})
>>> log.pop()["request"], log.pop()
('+p(1).', None)
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..lang import DataError
from .base import atomic_write


class History:
    """A JSON list of entries, newest last."""

    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def beside(cls, program_file: str | Path) -> "History":
        return cls(Path(program_file).resolve().parent / ".nablog" / "history.json")

    def entries(self) -> list[dict]:
        if not self.path.exists():
            return []
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise DataError(
                f"cannot read the undo log {self.path}: {e}",
                where=str(self.path),
                hint="the file is damaged; move it away to start a new undo log",
            ) from None
        if not isinstance(entries, list):
            raise DataError(f"the undo log {self.path} is not a list of entries", where=str(self.path), hint="move it away")
        return entries

    def _save(self, entries: list[dict]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(entries, ensure_ascii=False, indent=1).encode("utf-8")
        atomic_write(self.path, lambda f: f.write(text))

    def push(self, entry: dict) -> None:
        entry = {"time": time.strftime("%Y-%m-%dT%H:%M:%S"), **entry}
        self._save(self.entries() + [entry])

    def peek(self) -> dict | None:
        entries = self.entries()
        return entries[-1] if entries else None

    def pop(self) -> dict | None:
        entries = self.entries()
        if not entries:
            return None
        entry = entries.pop()
        self._save(entries)
        return entry
