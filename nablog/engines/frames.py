"""Bindings of a partly evaluated rule body, as the python engine and its computations pass them on.

A module of its own so that the engine (python.py) and the arithmetic and aggregates it calls
(compute.py) both import it, and not each other.
"""

from __future__ import annotations

import numpy as np

from ..lang import Var


class Frame:
    """Bindings of a partly evaluated rule body: one id column per bound variable, ``n`` rows."""

    __slots__ = ("n", "cols")

    def __init__(self, n: int, cols: dict[Var, np.ndarray]):
        self.n = n
        self.cols = cols

    def take(self, index: np.ndarray) -> "Frame":
        return Frame(len(index), {v: c[index] for v, c in self.cols.items()})

    def keep(self, mask: np.ndarray) -> "Frame":
        return Frame(int(mask.sum()), {v: c[mask] for v, c in self.cols.items()})
