"""Choosing a realization at a terminal: alternatives side by side, inspect, more, pick, confirm.

The chooser iterates the proposal's handle: the first page shows as soon as its realizations are
found, and the search goes on as the user pages (``n``, ``m``) or names a later number.

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

from .solver import Proposal, ProposalHandle, Realization

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


class _Listing:
    """The realizations of a proposal's handle as far as the dialogue has asked for them: the
    search runs as the pages ask (streaming is iteration), one ahead so that a search ending
    with the page is seen to end. Once it has ended, the proposal's own list (smallest first,
    families folded: the numbers ``apply --pick`` takes) replaces the order they came in."""

    def __init__(self, handle: ProposalHandle):
        self.handle = handle
        self._next = iter(handle)
        self._found: list[Realization] = []
        self.proposal: Proposal | None = None

    def upto(self, n: int) -> None:
        """Search until ``n`` realizations and one more are found, or the search has ended."""
        while self.proposal is None and len(self._found) <= n:
            try:
                self._found.append(next(self._next))
            except StopIteration:
                self.proposal = self.handle.get()

    @property
    def items(self) -> list[Realization]:
        return list(self.proposal.realizations) if self.proposal is not None else self._found

    def close(self) -> None:
        self.handle.cancel()


def choose(
    proposal: "Proposal | ProposalHandle",
    more: Callable[[Proposal], "Proposal | ProposalHandle"],
    read: Callable[[str], str],
    out: TextIO,
) -> Realization | None:
    """Let the user browse a proposal and pick a realization; None when they quit.

    ``proposal`` is the handle of a search (``propose(..., stream=True)``), iterated as the
    pages ask, or a finished proposal. ``more`` returns a wider one (higher limit or one more new
    constant), asked for once the search has ended; ``read`` prompts for a line (``input``);
    everything is shown on ``out``.
    """
    listing = _Listing(proposal if isinstance(proposal, ProposalHandle) else ProposalHandle.of(proposal))
    try:
        return _dialogue(listing, more, read, out)
    finally:
        listing.close()


def _dialogue(listing: _Listing, more, read, out: TextIO) -> Realization | None:
    width = shutil.get_terminal_size((100, 24)).columns
    page = 0
    listing.upto(PER_PAGE)
    out.write(f"request: {listing.handle.request}\n")
    told = False
    while True:
        listing.upto((page + 1) * PER_PAGE)
        if listing.proposal is not None and not told:
            out.write(f"{listing.proposal.message}\n")
            told = True
        items = listing.items
        if not items:
            out.write("nothing to choose from.\n")
            if listing.proposal.status == "complete":
                return None
        else:
            start = page * PER_PAGE
            shown = items[start : start + PER_PAGE]
            out.write("\n" + "\n".join(columns(shown, start + 1, width)) + "\n")
            if listing.proposal is None:
                out.write(f"\nshowing {start + 1}-{start + len(shown)} of {len(items)} found so far (searching)\n")
            else:
                out.write(f"\nshowing {start + 1}-{start + len(shown)} of {len(items)} ({listing.proposal.status})\n")
        out.write("N pick · i N inspect · n/p next/previous · m more · q quit\n")
        answer = read("choose> ").strip().lower()
        if answer in ("q", "quit", ""):
            if answer == "":
                continue
            return None
        if answer in ("n", "next"):
            listing.upto((page + 2) * PER_PAGE)
            page = page + 1 if (page + 1) * PER_PAGE < len(listing.items) else page
            continue
        if answer in ("p", "prev", "previous"):
            page = max(0, page - 1)
            continue
        if answer in ("m", "more"):
            if listing.proposal is None:  # the search goes on: its next page
                listing.upto((page + 2) * PER_PAGE)
                page = page + 1 if (page + 1) * PER_PAGE < len(listing.items) else page
                continue
            before = listing.proposal
            wider = more(before)
            listing.close()
            listing = _Listing(wider if isinstance(wider, ProposalHandle) else ProposalHandle.of(wider))
            listing.upto((page + 1) * PER_PAGE)
            if listing.proposal is not None and len(listing.proposal.realizations) == len(before.realizations) and listing.proposal.status == before.status:
                out.write("no more realizations.\n")
            told = False
            continue
        if answer.startswith("i"):
            k = _number(answer[1:], listing, out)
            if k is not None:
                out.write("\n" + listing.items[k].explain(full=True) + "\n")  # asked for: whole
            continue
        k = _number(answer, listing, out)
        if k is None:
            continue
        chosen = listing.items[k]
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


def _number(text: str, listing: _Listing, out: TextIO) -> int | None:
    """The index of realization number ``text`` (the search runs on to it), or None, said why."""
    text = text.strip()
    if text.isdigit():
        listing.upto(int(text))
        if 1 <= int(text) <= len(listing.items):
            return int(text) - 1
    n = len(listing.items)
    out.write(f"give a number from 1 to {n}\n" if n else "there is nothing to pick\n")
    return None


def _constant(text: str):
    """A typed value as a constant: digits are an integer, anything else a string."""
    from .io import text_to_constant

    return text_to_constant(text)
