"""The memory budget of one evaluation: a model that outgrows it is stopped with a message.

Arithmetic can make a model infinite (``n(0). n(X+1) :- n(X).``); no engine can tell in advance
whether a recursion that computes values ends, so each stops one that has taken more memory
than the budget, with "the model is probably infinite" and a hint, instead of running until the
operating system kills the process. A count of computed values alone does not bound memory (the
python engine's id maps grow with the square of the rounds of such a recursion: a million
values were never reached, 24 GB were), so the budget is in bytes:

- python and clingo measure what the evaluation added to the process's resident memory (``RSS``
  now minus ``RSS`` when it started), whenever rules compute new integers (python) or every
  :data:`CHECK_EVERY` instances of a recursive rule that computes (clingo, through a context
  function in its grounder);
- spark measures the derived tuples of a recursive component that computes (rows x columns x 8
  bytes, counted on the executors each round), since the JVM's memory is not this process's.

The budget is ``NABLOG_MEMORY_BUDGET`` (bytes, or with a suffix ``K``, ``M``, ``G``), by
default :data:`DEFAULT_BUDGET`.

>>> parse_budget("512M"), parse_budget("2G"), parse_budget("1000")
(536870912, 2147483648, 1000)
"""

from __future__ import annotations

import os
import re

from ..lang import NablogError

ENVIRONMENT = "NABLOG_MEMORY_BUDGET"
DEFAULT_BUDGET = 4 * 2**30
"""4 GiB: far above what the examples and benchmarks take in one evaluation with arithmetic."""
CHECK_EVERY = 4096
"""How many ground instances of a computing rule clingo makes between two looks at memory."""

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)


def parse_budget(text: str) -> int:
    """A number of bytes written ``1000``, ``512M``, ``2G`` or ``1.5GiB``."""
    match = _SIZE.match(text)
    if not match:
        raise NablogError(f"{ENVIRONMENT}={text!r} is not a size", hint=f"write bytes or a size with K, M or G, e.g. {ENVIRONMENT}=8G")
    number, unit = match.groups()
    return int(float(number) * {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}[unit.upper()])


def memory_budget() -> int:
    """The budget in bytes: ``NABLOG_MEMORY_BUDGET``, else :data:`DEFAULT_BUDGET`."""
    given = os.environ.get(ENVIRONMENT)
    return parse_budget(given) if given else DEFAULT_BUDGET


def resident_bytes() -> int:
    """This process's resident memory now (Linux ``/proc/self/statm``; elsewhere its peak)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def size_text(n: int) -> str:
    """``n`` bytes for a person: ``1.5 GB``, ``300 MB``, ``12 kB``.

    >>> size_text(3 * 2**30 // 2), size_text(300 * 2**20), size_text(12_345)
    ('1.5 GB', '300 MB', '12 kB')
    """
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("kB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:.1f} {unit}" if value < 10 and unit == "GB" else f"{value:.0f} {unit}"
    return f"{n} bytes"


def over_budget(used: int, budget: int, what: str, loc=None) -> NablogError:
    """The error of an evaluation past its budget: the documented message and what to do."""
    return NablogError(
        f"{what} took {size_text(used)}, more than the memory budget of {size_text(budget)}: the model is probably infinite",
        loc,
        f"bound the recursion that computes new values with a comparison (as in 'n(X+1) :- n(X), X < 100.'); "
        f"if the model is finite and large, raise the budget: {ENVIRONMENT}=16G",
    )


class MemoryBudget:
    """The resident memory one evaluation may add: :meth:`check` raises past it."""

    def __init__(self, budget: int | None = None):
        self.budget = memory_budget() if budget is None else budget
        self.start = resident_bytes()

    def used(self) -> int:
        return max(0, resident_bytes() - self.start)

    def check(self, what: str = "the evaluation", loc=None) -> None:
        used = self.used()
        if used > self.budget:
            raise over_budget(used, self.budget, what, loc)


__all__ = ["CHECK_EVERY", "DEFAULT_BUDGET", "ENVIRONMENT", "MemoryBudget", "memory_budget", "over_budget", "parse_budget", "resident_bytes", "size_text"]
