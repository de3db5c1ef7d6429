"""README.md's console blocks run verbatim and print what the README shows.

The convention, for everyone who adds a block to README.md:

- A fenced block whose info string is ``console`` is run. Each line starting with ``$ `` is a
  command (a line ending in ``\\`` continues on the next); the lines after it, up to the next
  command, are what it prints, stdout and stderr together. A line that is ``...`` (indented or not)
  stands for any number of lines (none too); trailing spaces do not count. The exit status is not
  compared (``check`` exits 1 on violations, a refused ``apply`` 2: the README shows the message).
- Every block runs in a fresh temporary directory holding a copy of ``nablog/examples/`` (so
  ``nablog/examples/chairs.lp`` is found and ``apply`` writes to the copy), with ``nablog`` and
  ``python`` on ``PATH`` running this tree's code. The commands of one block share that
  directory, in order (``apply`` then ``undo`` sees the applied change).
- A command block that is not ``console`` is refused: any fenced block with a ``$ `` line must be
  ``console`` (or marked, below), so no example escapes the test.
- A marker on the line before the opening fence (an HTML comment, invisible on GitHub) changes
  that:

  - ``<!-- readme-test: illustrative: WHY -->``: shown for its shape, not run (a made-up file,
    a placeholder in the output); the reason is required.
  - ``<!-- readme-test: needs=NAME[,NAME...] -->``: run after the setups ``NAME`` of
    :data:`NEEDS` below prepared the directory and environment (``shared-data``: ``../shared/data``
    is the shared datasets, as in the project's layout). A block that needs a service (a
    PostgreSQL server, a running ``nablog serve``, a browser) registers its setup there: a
    function of the directory and the environment that starts what is needed and returns a
    function that stops it (or None). An unknown name fails the test.
  - ``slow`` (after ``;``, e.g. ``<!-- readme-test: needs=shared-data; slow -->``): the case is
    marked ``slow`` (``-m 'not slow'`` leaves it out; ``make test`` runs it).

docs/design.md (README examples) says the same.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from tests.shared_data import DATA

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = re.compile(r"^\s*<!--\s*readme-test:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
COMMAND_TIMEOUT = 300


@dataclass(frozen=True)
class Block:
    """One fenced block of README.md: where it starts, its info string, its lines (dedented) and its marker."""

    line: int
    info: str
    lines: tuple[str, ...]
    marker: str | None

    def item(self, name: str) -> str | None:
        """The marker's item ``name`` (``illustrative``, ``needs``, ``slow``): its text after ``:`` or ``=``, or None."""
        for part in (self.marker or "").split(";"):
            key, _, value = part.strip().partition(":" if part.strip().startswith("illustrative") else "=")
            if key.strip() == name:
                return value.strip()
        return None


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent, info = opening.group(1), opening.group(2)
        previous = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.match(previous)
        body: list[str] = []
        j = i + 1
        while j < len(lines) and lines[j].strip() != "```":
            body.append(lines[j][len(indent):] if lines[j].startswith(indent) else lines[j].lstrip())
            j += 1
        blocks.append(Block(i + 1, info, tuple(body), marker.group(1) if marker else None))
        i = j + 1
    return blocks


def commands(block: Block) -> list[tuple[str, list[str]]]:
    """The block's commands, each with the lines it should print."""
    steps: list[tuple[str, list[str]]] = []
    lines = list(block.lines)
    k = 0
    while k < len(lines):
        line = lines[k]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and k + 1 < len(lines):
                k += 1
                command = command[:-1] + "\n" + lines[k]
            steps.append((command, []))
        elif steps:
            steps[-1][1].append(line)
        else:
            raise AssertionError(f"README.md:{block.line}: a console block starts with output, not a '$ ' command")
        k += 1
    return steps


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is ``expected`` with each ``...`` line standing for any lines."""
    expected = [e.rstrip() for e in expected]
    actual = [a.rstrip() for a in actual]
    while expected and not expected[-1]:
        expected.pop()
    while actual and not actual[-1]:
        actual.pop()

    def at(e: int, a: int) -> bool:
        if e == len(expected):
            return a == len(actual)
        if expected[e].strip() == "...":
            return any(at(e + 1, b) for b in range(a, len(actual) + 1))
        return a < len(actual) and expected[e] == actual[a] and at(e + 1, a + 1)

    return at(0, 0)


def _shared_data(directory: Path, env: dict[str, str]) -> Callable[[], None] | None:
    if not DATA.is_dir():
        pytest.skip(f"the shared datasets are not at {DATA} (set NABLOG_SHARED_DATA)")
    (directory.parent / "shared").mkdir(exist_ok=True)
    (directory.parent / "shared" / "data").symlink_to(DATA)
    return None


def _postgres(directory: Path, env: dict[str, str]) -> Callable[[], None] | None:
    """A PostgreSQL server of its own (initdb and pg_ctl into a temporary directory, loopback):
    ``DATABASE_URL`` names its empty database. Fails with the install hint when PostgreSQL is missing."""
    from nablog.sql.server import TemporaryServer

    server = TemporaryServer().start()
    env["DATABASE_URL"] = server.url
    return server.stop


NEEDS: dict[str, Callable[[Path, dict[str, str]], Callable[[], None] | None]] = {
    "shared-data": _shared_data,
    "postgres": _postgres,
}
"""Setups a block asks for with ``<!-- readme-test: needs=NAME -->``, by name: each prepares the
block's directory and environment and returns what stops what it started (or None)."""


def _workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A directory like the repository's root for the README's commands, and their environment."""
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "nablog" / "examples", root / "nablog" / "examples", ignore=shutil.ignore_patterns("__pycache__", ".nablog"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # -P: the working directory's nablog/ (only examples) must not hide this tree's package.
    for name, argv in (("nablog", f'"{sys.executable}" -P -m nablog.cli "$@"'), ("python", f'"{sys.executable}" -P "$@"')):
        script = bin_dir / name
        script.write_text(f"#!/bin/sh\nexec {argv}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NABLOG_") or k == "NABLOG_SHARED_DATA"}
    env.update(PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONPATH=str(ROOT), COLUMNS="100", LC_ALL="C.UTF-8")
    return root, env


BLOCKS = readme_blocks(README.read_text(encoding="utf-8"))
CONSOLE = [b for b in BLOCKS if b.info == "console"]


def test_every_command_block_is_console_or_marked():
    hidden = [b.line for b in BLOCKS if b.info != "console" and b.marker is None and any(line.startswith("$ ") for line in b.lines)]
    assert not hidden, f"README.md blocks at lines {hidden} show '$ ' commands but are not ```console (see tests/test_readme.py)"


def test_markers_are_known():
    for b in BLOCKS:
        if b.marker is None:
            continue
        for part in b.marker.split(";"):
            part = part.strip()
            assert part == "slow" or part.startswith(("illustrative", "needs=")), f"README.md:{b.line}: unknown marker item {part!r}"
        if b.item("illustrative") is not None:
            assert b.item("illustrative"), f"README.md:{b.line}: say why the block is illustrative"
        unknown = set(filter(None, (b.item("needs") or "").split(","))) - set(NEEDS)
        assert not unknown, f"README.md:{b.line}: no setup named {sorted(unknown)} in tests/test_readme.py NEEDS"


def test_matches():
    assert matches(["a", "...", "c"], ["a", "b", "b", "c", ""])
    assert matches(["a", "...", "c"], ["a", "c"])
    assert not matches(["a", "...", "c"], ["a", "b"])
    assert not matches(["a"], ["a", "b"])
    assert matches(["a  "], ["a"])


RUN = [b for b in CONSOLE if b.item("illustrative") is None]


@pytest.mark.parametrize(
    "block", [pytest.param(b, marks=[pytest.mark.slow] if b.item("slow") is not None else [], id=f"README.md:{b.line}") for b in RUN]
)
def test_console_block(block: Block, tmp_path: Path):
    root, env = _workspace(tmp_path)
    stops = []
    for name in filter(None, (block.item("needs") or "").split(",")):
        stops.append(NEEDS[name](root, env))
    try:
        for command, expected in commands(block):
            done = subprocess.run(
                ["/bin/sh", "-c", command], cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=COMMAND_TIMEOUT
            )
            actual = done.stdout.splitlines()
            assert matches(expected, actual), (
                f"README.md:{block.line}: $ {command}\n--- the README shows:\n" + "\n".join(expected) + "\n--- it printed (exit {}):\n".format(done.returncode) + done.stdout
            )
    finally:
        for stop in stops:
            if stop is not None:
                stop()
