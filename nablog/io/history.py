"""The undo log: ``.nablog/history.json``, a JSON list of committed changes, newest last.

Each entry records the request, per fact store (named relative to the directory holding
``.nablog/``) the rows inserted and deleted, and per replaced file the saved old version
(``.nablog/undo/<tag>/``) and the SHA-256 of what the commit wrote. :class:`~nablog.io.Stores`
writes it in the same commit as the data and reads it for ``undo``; this module only reads it.

>>> import tempfile, pathlib
>>> History(pathlib.Path(tempfile.mkdtemp()) / "history.json").entries()
[]
"""

from __future__ import annotations

import json
from pathlib import Path

from ..lang import DataError


class History:
    """The undo log at ``path`` (missing: empty)."""

    def __init__(self, path: Path):
        self.path = Path(path)

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
