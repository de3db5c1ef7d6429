"""Choosing a realization at a terminal: alternatives side by side, inspect, more, pick, confirm.

A plain line-oriented dialogue (no full-screen UI), so it works in any terminal and under a
pseudo-terminal in tests::

    [1] 1 change               | [2] 3 changes               | [3] 3 changes
      +staff_group(aravindan,… |   +group_chair(infor1, ger… |   +group_chair(new1, gerha…
      no side effects          |   -group_chair(infor1, mat… |   +staff_group(aravindan,…
    choose> i 2      inspect realization 2
    choose> n / p    next / previous page
    choose> m        ask for more (a higher limit, one more new constant)
    choose> 2        pick realization 2 (then values for new constants, the diff, confirmation)
    choose> q        quit without changes
"""

from __future__ import annotations

import shutil
import textwrap
from typing import Callable, TextIO

from .solver import Proposal, Realization

PER_PAGE = 3


def columns(realizations: list[Realization], first: int, width: int) -> list[str]:
    """Realizations side by side: a header, changes and side effects, one column each."""
    n = len(realizations)
    col = max(24, (width - 3 * (n - 1)) // max(n, 1))
    blocks = []
    for i, r in enumerate(realizations):
        lines = [f"[{first + i}] {r.size} change" + ("" if r.size == 1 else "s")]
        if r.family is not None:
            lines[0] += f" × {len(r.family):,} (a family)"
        lines += [f"  {line}" for line in r.changes.lines()]
        if r.family is not None:
            # The condition is what tells the members apart: wrapped, not cut at the column's end.
            lines += textwrap.wrap(f"where {r.family.condition}", col, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)
        effects = r.side_effects.lines()  # once: a large lazy update is computed per ask
        lines.append("  side effects:" if effects else "  no side effects")
        lines += [f"    {line}" for line in effects]
        blocks.append([_fit(line, col) for line in lines])
    height = max(len(b) for b in blocks)
    return [" | ".join(b[k].ljust(col) if k < len(b) else " " * col for b in blocks).rstrip() for k in range(height)]


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def choose(
    proposal: Proposal,
    more: Callable[[Proposal], Proposal],
    read: Callable[[str], str],
    out: TextIO,
) -> Realization | None:
    """Let the user browse ``proposal`` and pick a realization; None when they quit.

    ``more`` returns a wider proposal (higher limit or one more new constant); ``read`` prompts
    for a line (``input``); everything is shown on ``out``.
    """
    width = shutil.get_terminal_size((100, 24)).columns
    page = 0
    out.write(f"request: {proposal.request}\n{proposal.message}\n")
    while True:
        items = proposal.realizations
        if not items:
            out.write("nothing to choose from.\n")
            if proposal.status == "complete":
                return None
        else:
            start = page * PER_PAGE
            shown = items[start : start + PER_PAGE]
            out.write("\n" + "\n".join(columns(shown, start + 1, width)) + "\n")
            out.write(f"\nshowing {start + 1}-{start + len(shown)} of {len(items)} ({proposal.status})\n")
        out.write("N pick · i N inspect · n/p next/previous · m more · q quit\n")
        answer = read("choose> ").strip().lower()
        if answer in ("q", "quit", ""):
            if answer == "":
                continue
            return None
        if answer in ("n", "next"):
            page = page + 1 if (page + 1) * PER_PAGE < len(items) else page
            continue
        if answer in ("p", "prev", "previous"):
            page = max(0, page - 1)
            continue
        if answer in ("m", "more"):
            wider = more(proposal)
            if len(wider.realizations) == len(items) and wider.status == proposal.status:
                out.write("no more realizations.\n")
            proposal = wider
            out.write(proposal.message + "\n")
            continue
        if answer.startswith("i"):
            k = _number(answer[1:], len(items), out)
            if k is not None:
                out.write("\n" + items[k].explain(full=True) + "\n")  # asked for: whole
            continue
        k = _number(answer, len(items), out)
        if k is None:
            continue
        chosen = items[k]
        if chosen.family is not None:
            name = chosen.family.parameter.name
            value = read(f"value of {name} ({chosen.family.condition})> ").strip()
            binding = chosen.family.find({name: _constant(value)}) if value else None
            if binding is None:
                out.write(f"no member has {name}={value}\n" if value else "nothing picked\n")
                continue
            chosen = chosen.member(binding)
        values = {}
        for name in chosen.fresh:
            value = read(f"value for the new constant {name} (Enter keeps {name})> ").strip()
            if value:
                values[name] = _constant(value)
        if values:
            chosen = chosen.substitute(values)
        out.write("\nchanges to write:\n" + "\n".join(f"  {line}" for line in chosen.changes.lines()) + "\n")
        effects = chosen.side_effects.lines()
        if effects:
            out.write("side effects:\n" + "\n".join(f"  {line}" for line in effects) + "\n")
        if read("apply these changes? [y/N] ").strip().lower() in ("y", "yes"):
            return chosen
        out.write("not applied.\n")


def _number(text: str, n: int, out: TextIO) -> int | None:
    text = text.strip()
    if text.isdigit() and 1 <= int(text) <= n:
        return int(text) - 1
    out.write(f"give a number from 1 to {n}\n" if n else "there is nothing to pick\n")
    return None


def _constant(text: str):
    """A typed value as a constant: digits are an integer, anything else a string."""
    from .io import text_to_constant

    return text_to_constant(text)
