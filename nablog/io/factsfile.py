"""Facts files (``.lp``, ``.dl``): load the ground facts of a program text, write changes back as text edits.

Loading
    The file is parsed as a nablog program; every ground fact (``e(1, 2).``, ``ok.``) is a row
    of its relation. Rules, constraints, directives and comments are ignored (they belong to
    the program, not the data). A syntax error is reported as the parser reports it.

Writing
    Only the text of facts changes; every other statement, every comment, blank line and the
    layout of the remaining lines stay byte for byte as they were.

    * A deleted fact's text is cut out together with the blanks that separated it from its
      neighbours on the line; a line left with nothing but blanks is removed entirely
      (``e(1,2). e(2,3).`` minus ``e(1,2)`` is ``e(2,3).``; minus both, the line is gone;
      ``e(1,2).  % first edge`` minus the fact is ``% first edge``).
    * Inserted facts go on new lines, one fact per line, sorted, right after the line holding
      the last fact of their relation (deleted or kept), indented like that fact's line; when
      a statement or a block comment continues past the end of that line, after the line where
      it ends. Facts of a relation the file has no fact of are appended at the end of the file,
      relation by relation in name order.
    * The line ending of the file (``\\n`` or ``\\r\\n``) is used for new lines.

    The new text is parsed again before it replaces the file and must hold exactly the facts
    asked for; the file is replaced atomically (temporary file, fsync, rename).
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..lang import BaseDeclaration, DataError, Delta, Facts, Rule, format_constant, parse_statements
from ..lang.ast import lp_constant
from ..lang.parser import LINE_BREAK
from .base import (
    FactSource,
    Rows,
    PendingFile,
    Staged,
    prepare_file,
    normalize_changes,
    read_text,
    sorted_rows,
)

# Outside strings and comments the only '.' in nablog text ends a statement (integers have no
# decimals), so a statement's end is the first such '.' after its start.
_SCAN = re.compile(r'"(?:[^"\\\n]|\\.)*"|(?P<block>%\*.*?\*%)|%[^\n]*|(?P<dot>\.)|[^"%.]+|.', re.DOTALL)
_PREDICATE = re.compile(r"[a-z][A-Za-z0-9_]*\Z")
_BLANK = " \t"


@dataclass(frozen=True)
class FactText:
    """One fact of a facts file: its relation, row, and where its text is (``text[start:end]``)."""

    pred: str
    row: tuple
    start: int
    end: int


@dataclass(frozen=True)
class _Layout:
    statements: list
    facts: list[FactText]
    starts: list[int]  # starts of every statement and block comment, sorted
    reach: list[int]  # reach[i]: the furthest end of the first i+1 of those

    def straddled(self, pos: int) -> int | None:
        """The end of the furthest statement or block comment that starts before ``pos`` and ends after it."""
        i = bisect.bisect_left(self.starts, pos) - 1
        if i >= 0 and self.reach[i] > pos:
            return self.reach[i]
        return None


def _layout(text: str, source: str) -> _Layout:
    statements = parse_statements(text, source)
    line_starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    dots: list[int] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    while pos < len(text):
        m = _SCAN.match(text, pos)
        assert m is not None  # the last alternative matches any character
        if m.group("dot") is not None:
            dots.append(m.start())
        elif m.group("block") is not None:
            spans.append((m.start(), m.end()))
        pos = m.end()
    facts: list[FactText] = []
    for st in statements:
        assert st.loc is not None  # the parser locates every statement
        start = line_starts[st.loc.line - 1] + st.loc.column - 1
        end = dots[bisect.bisect_left(dots, start)] + 1
        spans.append((start, end))
        if isinstance(st, Rule) and st.is_fact():
            atom = st.head[0]
            facts.append(FactText(atom.pred, atom.args, start, end))
    spans.sort()
    reach: list[int] = []
    for _, end in spans:
        reach.append(max(end, reach[-1]) if reach else end)
    return _Layout(statements, facts, [start for start, _ in spans], reach)


def fact_texts(text: str, source: str = "<string>") -> list[FactText]:
    """The facts of a program text with their positions, in text order.

    >>> [(f.pred, f.row, f.start, f.end) for f in fact_texts("e(1,2). p(X) :- e(X,_). e(2,3).")]
    [('e', (1, 2), 0, 7), ('e', (2, 3), 24, 31)]
    """
    return _layout(text, source).facts


def facts_of(text: str, source: str = "<string>") -> Facts:
    """The ground facts of a program text, by relation."""
    out: Facts = {}
    for st in parse_statements(text, source):
        if isinstance(st, Rule) and st.is_fact():
            atom = st.head[0]
            out.setdefault(atom.pred, set()).add(atom.args)  # type: ignore[arg-type]
    return out


def rewrite_facts(text: str, changes: Mapping[str, Rows], source: str = "<string>") -> str:
    """The text with the facts of each relation in ``changes`` replaced by the given rows.

    >>> print(rewrite_facts("% edges\\ne(1,2). e(2,3).\\np(X) :- e(X,_).\\n", {"e": {(2, 3), (3, 4)}}), end="")
    % edges
    e(2,3).
    e(3, 4).
    p(X) :- e(X,_).
    """
    return _rewrite(text, _layout(text, source), changes)


def _rewrite(text: str, layout: _Layout, changes: Mapping[str, Rows]) -> str:
    newline = "\r\n" if "\r\n" in text else "\n"
    removed: list[FactText] = []
    anchors: dict[str, FactText] = {}
    present: dict[str, set[tuple]] = {}
    for fact in layout.facts:
        if fact.pred in changes:
            anchors[fact.pred] = fact  # text order: the last one wins
            present.setdefault(fact.pred, set()).add(fact.row)
            if fact.row not in changes[fact.pred]:
                removed.append(fact)
    inserts: dict[int, list[str]] = {}
    appended: list[str] = []
    for pred in sorted(changes):
        new_rows = sorted_rows(set(changes[pred]) - present.get(pred, set()))
        if not new_rows:
            continue
        lines = [_fact_text(pred, row) for row in new_rows]
        anchor = anchors.get(pred)
        if anchor is None:
            appended.extend(lines)
            continue
        line_start = text.rfind("\n", 0, anchor.start) + 1
        indent = text[line_start : line_start + _blank_run(text, line_start)]
        inserts.setdefault(_line_after(text, anchor.end, layout), []).extend(indent + line for line in lines)
    if appended:
        inserts.setdefault(len(text), []).extend(appended)
    return _splice(text, _cuts(text, removed), inserts, newline)


def _fact_text(pred: str, row: tuple) -> str:
    """A fact as a line of a ``.lp`` file, in the notation clingo and nablog both read."""
    try:
        return f"{pred}({', '.join(lp_constant(v) for v in row)})." if row else f"{pred}."
    except ValueError:
        value = next(v for v in row if isinstance(v, str) and "\x00" in v)
        raise DataError(
            f"cannot write {format_constant(value)[:60]} of relation {pred} to a .lp file: it holds a NUL character",
            hint="a NUL cannot be written in a clingo string; keep this relation in a CSV, Parquet or SQLite store",
        ) from None


def _blank_run(text: str, pos: int) -> int:
    n = 0
    while pos + n < len(text) and text[pos + n] in _BLANK:
        n += 1
    return n


def _line_after(text: str, pos: int, layout: _Layout) -> int:
    """The first line start after the line holding ``pos`` that no statement or block comment straddles."""
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        end = layout.straddled(nl + 1)
        if end is None:
            return nl + 1
        pos = end


def _cuts(text: str, removed: list[FactText]) -> list[tuple[int, int]]:
    """The character ranges to delete for the removed facts, with the blanks and lines they leave."""
    groups: list[list[int]] = []
    for fact in sorted(removed, key=lambda f: f.start):
        # Facts separated by blanks only on one line are cut as one piece.
        if groups and text[groups[-1][1] : fact.start].strip(_BLANK) == "":
            groups[-1][1] = fact.end
        else:
            groups.append([fact.start, fact.end])
    cuts: list[tuple[int, int]] = []
    for start, end in groups:
        line_start = text.rfind("\n", 0, start) + 1
        nl = text.find("\n", end)
        line_end = len(text) if nl < 0 else nl
        content_end = line_end - 1 if line_end > 0 and text[line_end - 1] == "\r" and line_end > end else line_end
        before = text[line_start:start]
        after = text[end:content_end]
        if before.strip(_BLANK) == "" and after.strip(_BLANK) == "":
            cuts.append((line_start, line_end + 1 if nl >= 0 else line_end))
        elif after.strip(_BLANK) == "":
            cuts.append((start - (len(before) - len(before.rstrip(_BLANK))), content_end))
        else:
            cuts.append((start, end + _blank_run(text, end)))
    return cuts


def _splice(text: str, cuts: list[tuple[int, int]], inserts: dict[int, list[str]], newline: str) -> str:
    out: list[str] = []
    cut_end = dict(cuts)
    pos = 0
    for p in sorted(set(inserts) | set(cut_end)):
        if p < pos:
            continue  # inside a cut; insertion points never are (they straddle no statement)
        out.append(text[pos:p])
        pos = p
        if p in inserts:
            tail = next((piece for piece in reversed(out) if piece), "")
            if tail and not tail.endswith("\n"):
                out.append(newline)
            out.extend(line + newline for line in inserts[p])
        if p in cut_end:
            pos = cut_end[p]
    out.append(text[pos:])
    return "".join(out)


class FactsFile(FactSource):
    """The facts of a ``.lp`` or ``.dl`` program file; one relation per predicate with facts."""

    def __init__(self, path: str | Path):
        self.location = Path(path)
        self._cache: tuple | None = None

    def _current(self) -> tuple[str, _Layout]:
        """The file's text and layout, parsed once per version of the file (a commit reads it for
        ownership, loading and rewriting: one parse, not one per use)."""
        try:
            st = os.stat(self.location)
            key = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            key = None
        if key is None or self._cache is None or self._cache[0] != key:
            text = read_text(self.location)
            self._cache = (key, text, _layout(text, str(self.location)))
        return self._cache[1], self._cache[2]

    def _facts(self) -> Facts:
        out: Facts = {}
        for fact in self._current()[1].facts:
            out.setdefault(fact.pred, set()).add(fact.row)
        return out

    def declares(self, pred: str) -> bool:
        """Whether the file declares ``pred`` a base relation (``#base pred/n.``)."""
        return any(isinstance(s, BaseDeclaration) and any(p == pred for p, _ in s.signatures) for s in self._current()[1].statements)

    def relations(self) -> list[str]:
        if not self.location.exists():
            return []
        return sorted(self._facts())

    def load(self, relations: Iterable[str] | None = None) -> Facts:
        facts = self._facts()
        if relations is None:
            return facts
        return {name: facts.get(name, set()) for name in relations}

    def stage(self, delta: Delta, tag: str | None = None) -> Staged:
        old = self._facts() if self.location.exists() else {}
        real = delta.real(old)
        if not real:
            return Staged(real, [])
        new = {name: (old.get(name, set()) - dele) | ins for name, (ins, dele) in real.by_relation().items()}
        return Staged(real, self._stage_contents(new, tag))

    def _stage_contents(self, changes: Mapping[str, Iterable[tuple]], tag: str | None = None) -> list[PendingFile]:
        new = normalize_changes(changes)
        for name in new:
            if not _PREDICATE.match(name) or name == "not":
                raise DataError(
                    f"cannot write facts of relation {name!r} to {self.location}: not a predicate name",
                    where=str(self.location),
                    hint="predicate names start with a lower-case letter, then letters, digits and _",
                )
        source = str(self.location)
        if self.location.exists():
            text, layout = self._current()
        elif any(new.values()):
            text, layout = "", _layout("", source)
        else:
            return []
        old: Facts = {}
        for fact in layout.facts:
            old.setdefault(fact.pred, set()).add(fact.row)
        if all(old.get(name, set()) == rows for name, rows in new.items()):
            return []
        # The text is parsed once: the edit cuts and inserts where that parse put the facts, and
        # is not parsed again (tests/io/test_factsfile.py checks the edit against a parse of the
        # result, over generated texts).
        result = _rewrite(text, layout, new)
        return [prepare_file(self.location, lambda f: f.write(result.encode("utf-8")), tag)]
