"""Helpers shared by the io tests."""

from __future__ import annotations

from pathlib import Path


def leftovers(directory: Path) -> list[str]:
    """Temporary files an interrupted write might have left behind."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))
