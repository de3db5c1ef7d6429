"""User-facing errors: one message with file, line, column, the offending line with a caret, and a hint."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Source:
    """A named text that nodes point into; errors read the offending line from it."""

    name: str
    text: str = field(repr=False)

    def line(self, lineno: int) -> str:
        """Line ``lineno`` (from 1), lines ending at CR LF, CR or LF as editors count them."""
        lines = re.split(r"\r\n|\r|\n", self.text)
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


@dataclass(frozen=True)
class Loc:
    """A position in a source: 1-based line and column."""

    source: Source
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.source.name}:{self.line}:{self.column}"


class NablogError(Exception):
    """A mistake in what the user gave nablog (program, data, request, options).

    ``str(error)`` is the whole message a user sees::

        error: unsafe rule: variable Y does not occur in a positive body literal
          --> chairs.lp:3:6
           |
         3 | p(X, Y) :- q(X).
           |      ^
        hint: bind Y with a positive literal in the body

    The command line prints it and exits with status 2; nothing else is printed.
    """

    level = "error"

    def __init__(
        self,
        message: str,
        loc: Loc | None = None,
        hint: str | None = None,
        *,
        where: str | None = None,
        line_text: str | None = None,
        column: int | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.loc = loc
        self.hint = hint
        # `where` names a place that is not a program text, e.g. "edges.csv, row 7".
        self.where = where if where is not None else (str(loc) if loc else None)
        self.line_text = line_text if line_text is not None else (loc.source.line(loc.line) if loc else None)
        self.column = column if column is not None else (loc.column if loc else None)
        self.lineno = loc.line if loc else None

    def __str__(self) -> str:
        # A long offending value (a 1 MB field, a 5,000-digit number) is shown by its start.
        out = [f"{self.level}: {_LONG_WORD.sub(_cut, self.message)}"]
        if self.where:
            out.append(f"  --> {self.where}")
        if self.line_text is not None and self.line_text != "":
            gutter = str(self.lineno) if self.lineno else ""
            pad = " " * len(gutter)
            text, column = _window(self.line_text, self.column)
            out.append(f" {pad} |")
            out.append(f" {gutter} | {text}")
            if column:
                # Tabs in the line keep the caret under the right character.
                prefix = "".join("\t" if c == "\t" else " " for c in text[: column - 1])
                out.append(f" {pad} | {prefix}^")
        if self.hint:
            out.append(f"hint: {_LONG_WORD.sub(_cut, self.hint)}")
        return "\n".join(out)


class NablogWarning(NablogError):
    """Something nablog reads in a defined way but the user may not have meant (an empty relation
    that is probably a typo). Never raised: collected (``Database.warnings``) and printed on
    stderr by the command line, which goes on; ``strict=True`` / ``--strict`` makes it an error."""

    level = "warning"


_LONG_WORD = re.compile(r"\S{121,}")


def _cut(match: re.Match) -> str:
    word = match.group()
    return f"{word[:60]}… ({len(word):,} characters)"


_PICTURES = {c: 0x2400 + c for c in range(32) if c != 9} | {0x7F: 0x2421}
SHOWN = 160
"""Characters of an offending line a message shows; a longer line is cut around the column."""


def _window(text: str, column: int | None) -> tuple[str, int | None]:
    """The part of a long line a message shows (``…`` where it is cut), and the column in it.

    >>> _window("x" * 1000 + "!", 1001)[0][-3:], _window("x" * 1000 + "!", 1001)[1]
    ('xx!', 82)
    """
    # Control characters (a raw CR, a NUL, ...) would garble the terminal: each is shown as its
    # one-character Unicode picture (␍, ␀), so columns stay where they were.
    text = text.translate(_PICTURES)
    if len(text) <= SHOWN:
        return text, column
    start = max(0, (column or 1) - 1 - SHOWN // 2)
    end = min(len(text), start + SHOWN)
    shown = ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")
    return shown, (column - start + (1 if start else 0)) if column else None


class NablogSyntaxError(NablogError):
    """The text does not parse."""


class AnalysisError(NablogError):
    """The program parses but is not a valid stratified Datalog database (safety, arity, strata)."""


class DataError(NablogError):
    """A data file cannot be read, or one of its rows is malformed."""


class ConstraintError(NablogError):
    """A commit refused because it would add violated instances of constraints; ``violations``
    lists them (each a :class:`nablog.engines.violations.Violation` of the new instances only)."""

    def __init__(self, message: str, violations: list, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.violations = violations


class QueryError(NablogError):
    """A query or request names something the database does not have, or is malformed."""


def did_you_mean(name: str, known: Iterable[str], hidden: tuple[str, ...] = ()) -> str | None:
    """The hint for a misspelt name: ``did you mean X?`` with the known name closest to it (names
    starting with a ``hidden`` prefix are never offered), or None when none is close.

    >>> did_you_mean("edeg", ["edge", "path", "base__edge"], hidden=("base__",))
    'did you mean edge?'
    >>> did_you_mean("zzz", ["edge"]) is None
    True
    """
    close = difflib.get_close_matches(name, [k for k in known if not k.startswith(hidden)] if hidden else list(known), n=1)
    return f"did you mean {close[0]}?" if close else None
