"""ProposeOptions: how a view-update request is answered — the method, its bounds, its candidates.

One frozen value carried from the caller (the Python API, the command line, the server) to the
solver, so that the options are listed and checked in one place.

>>> options = ProposeOptions(method="tableaux", limit=2)
>>> options.replace(limit=None).limit is None, options.limit
(True, 2)
>>> ProposeOptions(max_fresh=-1)
Traceback (most recent call last):
...
nablog.lang.errors.NablogError: error: max_fresh must be 0 or more
hint: give the number of new constants allowed
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from ..lang import Atom, NablogError

CANDIDATE_POLICIES = ("attribute", "herbrand")
METHODS = ("asp", "transform", "tableaux", "tableaux-materialized")


@dataclass(frozen=True)
class ProposeOptions:
    """The options of :func:`nablog.solver.propose.propose`, checked when made.

    Parameters
    ----------
    method : str
        ``"asp"``: clingo enumerates subset-minimal change sets among goal-directed candidates
        (with aggregates, over the relevant program grounded whole: :mod:`nablog.solver.whole`);
        ``"transform"``: seed 002's Algorithm 1 (see :mod:`nablog.solver.transform`);
        ``"tableaux"``, ``"tableaux-materialized"``: seed 003's update tableaux with the strong
        minimality test, or over the materialized model (see :mod:`nablog.solver.tableaux`).
    limit : int, optional
        Stop after this many realizations, the smallest (status ``bounded``); a family counts once.
    timeout : float, optional
        Seconds for the whole answer — candidates, grounding, solving, verification and side
        effects (status ``timeout``, with what was found so far).
    candidates : str
        Values for existential variables: ``"attribute"`` (values already in the attribute
        positions the variable meets) or ``"herbrand"`` (every constant), plus fresh constants.
    max_fresh : int
        At most this many fresh constants (``new1``, ``new2``, …).
    protect : relation names or atoms
        Base relations or facts that must not change (seed 003's immutable part), on top of the
        program's ``#protect`` declarations.
    max_rounds : int
        Rounds of the relevance search (and of the transform method's phases).
    exhaustive : bool
        For ``method="transform"``: go on past the first round with realizations (the default:
        every minimal realization); ``False`` stops there, as seed 002's Algorithm 1 is written.
    families : bool
        Fold realizations that differ only in the value of a parameter into one
        (:mod:`nablog.solver.family`); ``Realization.members()`` lists them.
    """

    method: str = "asp"
    limit: int | None = None
    timeout: float | None = None
    candidates: str = "attribute"
    max_fresh: int = 2
    protect: tuple[str | Atom, ...] = ()
    max_rounds: int = 20
    exhaustive: bool = True
    families: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "protect", tuple(self.protect))
        check_bounds(self.limit, self.timeout)
        if self.method not in METHODS:
            raise NablogError(f"unknown view-update method {self.method!r}", hint="choose one of " + ", ".join(METHODS))
        if self.candidates not in CANDIDATE_POLICIES:
            raise NablogError(f"unknown candidate policy {self.candidates!r}", hint="choose attribute or herbrand")
        if self.max_fresh < 0:
            raise NablogError("max_fresh must be 0 or more", hint="give the number of new constants allowed")

    @classmethod
    def of(cls, options: "ProposeOptions | None" = None, **changes) -> "ProposeOptions":
        """``options`` (the defaults when None) with ``changes``; ``protect`` may be any iterable."""
        if options is None:
            return cls(**changes)
        return options.replace(**changes) if changes else options

    def replace(self, **changes) -> "ProposeOptions":
        return dataclasses.replace(self, **changes)


def check_bounds(limit: int | None, timeout: float | None) -> None:
    """A limit is a whole number of at least 1 and a timeout a finite number of seconds above 0."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise NablogError(f"limit must be a whole number of at least 1, not {limit!r}", hint="leave the limit out for every realization")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0):
        raise NablogError(f"timeout must be a finite number of seconds above 0, not {timeout!r}", hint="leave the timeout out to search without one")
