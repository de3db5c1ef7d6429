"""The python engine's joins: one body atom against one encoded relation, over frames of id columns.

:class:`Joins` is the part of :class:`~nablog.engines.evaluator.Evaluator` that joins a frame of
bindings with a relation: through the relation's packed keys when the bound columns lead them (a
range of the sorted keys per probe, no index), through :func:`~nablog.engines.encoding.id_starts`
offsets on one column (two gathers per probe), or through a sorted index on the bound columns
kept with the relation; anti-joins (``not atom``) and comparisons the same way. A patched relation
is joined on its base's index less the removed tuples, plus the added ones. It reads the
evaluator's dictionary (``d``, ``size``) and relations (``rels``), and counts a join's matches
before it is run so that the evaluator can cut a large one into frames (``_join_counts``).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..lang import Atom, Comparison, Var
from . import compute
from .algebra import sorted_member
from .encoding import INT, ConstantDictionary, EncodedRelation, PatchedRelation, column, fits_in_key, id_starts, key_base, member, pack, row_view
from .frames import Frame
from .rekey import Rekeyed
from .runs import key_runs

STARTS_PER_ROW, STARTS_MIN = 8, 65_536  # id_starts (8 bytes a constant) for relations with rows >= (constants - MIN) / PER_ROW

_CMP: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "=": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}


def _keys(columns: list[np.ndarray], size: int) -> np.ndarray:
    """Comparable keys for rows of id columns: packed int64 where possible, else opaque bytes."""
    if fits_in_key(size, len(columns)):
        return pack(columns, size)
    return row_view(np.stack(columns, axis=1))


class Joins:
    """Joins of frames with encoded relations, for :class:`~nablog.engines.evaluator.Evaluator`
    (which holds ``d``, ``size`` and ``rels``)."""

    d: ConstantDictionary
    size: int
    rels: dict[str, EncodedRelation]

    def _selected(self, atom: Atom, rel: EncodedRelation) -> list[np.ndarray] | None:
        """The relation's columns restricted to rows matching the atom's constants and repeated
        variables; None when a constant is not in the dictionary (nothing can match)."""
        cols = rel.columns()
        mask = None
        first: dict[Var, int] = {}
        for i, term in enumerate(atom.args):
            if isinstance(term, Var):
                if term.name == "_":
                    continue
                if term in first:
                    cond = cols[i] == cols[first[term]]
                else:
                    first[term] = i
                    continue
            else:
                cid = self.d.id(term)
                if cid is None:
                    return None
                cond = cols[i] == cid
            mask = cond if mask is None else mask & cond
        if mask is not None:
            cols = [c[mask] for c in cols]
        return cols

    def _index(self, atom: Atom, rel: EncodedRelation, positions: tuple[int, ...], cache: bool = False):
        """Sorted keys of the selected rows on ``positions``, with the sort order and the columns
        (kept with the relation when it is a current one, or with ``cache``)."""
        constants = tuple((i, t) for i, t in enumerate(atom.args) if not isinstance(t, Var))
        repeats = tuple(_repeat_pattern(atom))
        key = (positions, constants, repeats)
        entry = rel.indexes.get(key)
        if entry is not None:
            return entry
        cols = self._selected(atom, rel)
        if cols is None:
            cols = [np.zeros(0, INT)] * rel.arity
        keys = _keys([cols[i] for i in positions], self.size)
        if rel.packed and positions == tuple(range(len(positions))) and not constants and not repeats:
            # Rows are sorted on their packed columns, so on any prefix of them: no sort needed.
            order = np.arange(len(keys))
        else:
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
        # Deltas are used once; caching their indexes would only keep them alive.
        cached = cache or self.rels.get(atom.pred) is rel
        starts = id_starts(keys, self.size) if cached and len(positions) == 1 and self._dense(len(keys)) else None
        entry = (keys, order, cols, starts)
        if cached:
            rel.indexes[key] = entry
        return entry

    def _dense(self, rows: int) -> bool:
        """Whether an array of :func:`id_starts` (one per constant) is worth building for a relation
        of ``rows`` tuples that is read every round."""
        return self.size <= STARTS_PER_ROW * rows + STARTS_MIN

    def _starts(self, atom: Atom, rel: EncodedRelation) -> np.ndarray | None:
        """:func:`id_starts` of the first column of a relation held as one sorted key array and read
        every round (not a delta), for joins on that column alone; cached with the relation."""
        if type(rel) not in (EncodedRelation, Rekeyed) or not rel.packed or rel.arity < 1 or self.rels.get(atom.pred) is not rel:
            return None
        starts = rel.indexes.get("starts")
        if starts is None:
            if not self._dense(len(rel)):
                return None
            starts = rel.indexes["starts"] = id_starts(rel.keys // key_base(self.size) ** (rel.arity - 1), self.size)
        return starts

    def _index_ranges(self, entry, probe_cols: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Per probe row, the range of an index's sorted keys (:meth:`_index`) equal to it."""
        sorted_keys, _, _, starts = entry
        if starts is not None:
            return starts[probe_cols[0]], starts[probe_cols[0] + 1]
        probe = _keys(probe_cols, self.size)
        return np.searchsorted(sorted_keys, probe, "left"), np.searchsorted(sorted_keys, probe, "right")

    def join(
        self, frame: Frame, atom: Atom, rel: EncodedRelation, ranges: tuple[np.ndarray, np.ndarray] | None = None, keep: set[Var] | None = None
    ) -> Frame:
        """Extend every binding with the matching tuples of ``rel`` (a natural join on shared variables).

        ``ranges`` are the bounds of each binding's matches that :meth:`_join_counts` found
        already (a relation stored as one sorted array), so the searches are not made twice.
        With ``keep``, only those variables are carried into the result (the others are needed
        by nothing after this join: copying them would be most of its work)."""
        positions: dict[Var, int] = {}
        for i, term in enumerate(atom.args):
            if isinstance(term, Var) and term.name != "_" and term not in positions:
                positions[term] = i
        shared = [v for v in positions if v in frame.cols]
        fresh = [v for v in positions if v not in frame.cols and (keep is None or v in keep)]
        carried = frame.cols if keep is None else {v: c for v, c in frame.cols.items() if v in keep}
        if not shared:
            cols = self._selected(atom, rel)
            if cols is None:
                m = 0
            else:
                m = len(cols[0]) if rel.arity else len(rel)
            if frame.n == 1 and not frame.cols and cols is not None:
                return Frame(m, {v: cols[positions[v]] for v in fresh})
            fi = np.repeat(np.arange(frame.n), m)
            ri = np.tile(np.arange(m), frame.n)
            out = {v: c[fi] for v, c in carried.items()}
            for v in fresh:
                out[v] = cols[positions[v]][ri]  # type: ignore[index]
            return Frame(len(fi), out)
        prefix = self._prefix(atom, rel, [positions[v] for v in shared])
        if prefix is not None:
            # The bound columns lead the packed keys: each probe is a range of the sorted keys,
            # found by binary search, and only the matching rows are unpacked. No index needed.
            probe_cols = [frame.cols[v] for v in sorted(shared, key=positions.get)]
            if isinstance(rel, PatchedRelation) and rel._keys is None:
                fi, keys = self._prefix_matches(rel.base.keys, probe_cols, prefix, rel.arity)
                keep = ~member(rel.minus, keys)
                fi2, keys2 = self._prefix_matches(rel.plus, probe_cols, prefix, rel.arity)
                fi, keys = np.concatenate([fi[keep], fi2]), np.concatenate([keys[keep], keys2])
            else:
                if ranges is None and prefix == 1:
                    starts = self._starts(atom, rel)
                    if starts is not None:
                        ranges = starts[probe_cols[0]], starts[probe_cols[0] + 1]
                parts = [self._prefix_matches(keys, probe_cols, prefix, rel.arity, ranges) for keys in key_runs(rel)]  # type: ignore[union-attr]
                fi, keys = parts[0] if len(parts) == 1 else (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
            total = len(fi)
            out = {v: c[fi] for v, c in carried.items()}
            for v in fresh:
                out[v] = column(keys, self.size, rel.arity, positions[v])
            return Frame(total, out)
        if self._patched(atom, rel):
            # The index of the relation before the patch (kept with it across updates), less the
            # removed tuples, and the few added ones joined on their own: nothing is sorted again.
            base = self._index_join(frame, atom, rel.base, positions, shared, carried, fresh, None, rel.minus)  # type: ignore[attr-defined]
            added = EncodedRelation(rel.dictionary, rel.arity, rel.plus, None)  # type: ignore[attr-defined]
            plus = self._index_join(frame, atom, added, positions, shared, carried, fresh, None)
            return Frame(base.n + plus.n, {v: np.concatenate([base.cols[v], plus.cols[v]]) for v in base.cols})
        return self._index_join(frame, atom, rel, positions, shared, carried, fresh, ranges)

    def _patched(self, atom: Atom, rel: EncodedRelation) -> bool:
        """Whether ``rel`` is a patch of a relation not yet copied, joined on an index of its base
        (an atom without constants or repeated variables: the index rows are the base's rows)."""
        return isinstance(rel, PatchedRelation) and rel._keys is None and rel.base.packed and all(isinstance(t, Var) for t in atom.args) and not tuple(_repeat_pattern(atom))

    def _index_join(self, frame: Frame, atom: Atom, rel: EncodedRelation, positions, shared, carried, fresh, ranges, minus=None) -> Frame:
        """:meth:`join` through an index of ``rel`` on the shared variables' columns; for the base
        of a patched relation (its index kept with it), less the tuples in keys ``minus``."""
        entry = self._index(atom, rel, tuple(positions[v] for v in shared), minus is not None)
        _, order, cols, _ = entry
        lo, hi = ranges if ranges is not None else self._index_ranges(entry, [frame.cols[v] for v in shared])
        counts = hi - lo
        total = int(counts.sum())
        fi = np.repeat(np.arange(frame.n), counts)
        ri = np.arange(total)
        ri += np.repeat(lo - (np.cumsum(counts) - counts), counts)  # in place: one array fewer at the peak
        ri = order[ri]
        if minus is not None and len(minus):
            kept = ~member(minus, rel.keys[ri])
            fi, ri, total = fi[kept], ri[kept], int(kept.sum())
        out = {v: c[fi] for v, c in carried.items()}
        for v in fresh:
            out[v] = cols[positions[v]][ri]
        return Frame(total, out)

    def antijoin(self, frame: Frame, atom: Atom, rel: EncodedRelation) -> Frame:
        """Keep the bindings for which no tuple of ``rel`` matches the atom (``not atom``)."""
        positions: dict[Var, int] = {}
        for i, term in enumerate(atom.args):
            if isinstance(term, Var) and term.name != "_" and term not in positions:
                positions[term] = i
        if not positions:
            cols = self._selected(atom, rel)
            present = cols is not None and (len(cols[0]) > 0 if cols else len(rel) > 0)
            return Frame(0, {v: c[:0] for v, c in frame.cols.items()}) if present else frame
        prefix = self._prefix(atom, rel, list(positions.values()))
        if prefix is not None:
            probe_cols = [frame.cols[v] for v in sorted(positions, key=positions.get)]
            if isinstance(rel, PatchedRelation) and rel._keys is None:
                count = sum(
                    sign * (hi - lo)
                    for sign, keys in ((1, rel.base.keys), (-1, rel.minus), (1, rel.plus))
                    for lo, hi in [self._prefix_ranges(keys, probe_cols, prefix, rel.arity)]
                )
                return frame.keep(count == 0)
            starts = self._starts(atom, rel) if prefix == 1 else None
            if starts is not None:
                return frame.keep(starts[probe_cols[0]] == starts[probe_cols[0] + 1])
            count = sum(hi - lo for lo, hi in (self._prefix_ranges(keys, probe_cols, prefix, rel.arity) for keys in key_runs(rel)))  # type: ignore[union-attr]
            return frame.keep(count == 0)
        entry = self._index(atom, rel, tuple(positions.values()))
        probe_cols = [frame.cols[v] for v in positions]
        if entry[3] is not None:
            lo, hi = self._index_ranges(entry, probe_cols)
            return frame.keep(lo == hi)
        return frame.keep(~sorted_member(entry[0], _keys(probe_cols, self.size)))

    def _prefix(self, atom: Atom, rel: EncodedRelation, bound: list[int]) -> int | None:
        """The number of leading columns bound, when the bound columns are exactly a prefix of a
        packed relation's columns and the atom has no constants or repeated variables."""
        if not rel.packed or not rel.arity or sorted(bound) != list(range(len(bound))):
            return None
        names = [t.name for t in atom.args if isinstance(t, Var) and t.name != "_"]
        if len(names) != len(set(names)) or any(not isinstance(t, Var) for t in atom.args):
            return None
        return len(bound)

    def _prefix_ranges(self, keys: np.ndarray, columns: list[np.ndarray], k: int, arity: int):
        """Per probe row, the range of sorted packed ``keys`` whose first ``k`` columns equal it."""
        scale = key_base(self.size) ** (arity - k)
        probe = pack(columns, self.size)
        return np.searchsorted(keys, probe * scale, "left"), np.searchsorted(keys, (probe + 1) * scale, "left")

    def _prefix_matches(self, keys: np.ndarray, columns: list[np.ndarray], k: int, arity: int, ranges=None):
        """For each match, the probe row it extends and the matched key."""
        lo, hi = ranges if ranges is not None else self._prefix_ranges(keys, columns, k, arity)
        counts = hi - lo
        fi = np.repeat(np.arange(len(lo)), counts)
        ri = np.arange(int(counts.sum())) + np.repeat(lo - (np.cumsum(counts) - counts), counts)
        return fi, keys[ri]

    def compare(self, frame: Frame, cmp: Comparison) -> Frame:
        if not (_plain(cmp.left) and _plain(cmp.right)) or compute.is_assignment(cmp, frame):
            return compute.compare(self, frame, cmp)
        return frame.keep(_CMP[cmp.op](self._operand(frame, cmp.left), self._operand(frame, cmp.right)))

    def _operand(self, frame: Frame, term) -> np.ndarray:
        if isinstance(term, Var):
            return frame.cols[term]
        return np.full(frame.n, self.d.id_of(term), INT)

    def _join_counts(self, frame: Frame, atom: Atom, rel: EncodedRelation) -> tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray] | None]:
        """How many tuples of ``rel`` each binding of ``frame`` joins with (None: not cheaply known),
        and the bounds of the matches when ``rel`` is searched as one sorted array."""
        positions: dict[Var, int] = {}
        for i, term in enumerate(atom.args):
            if isinstance(term, Var) and term.name != "_" and term not in positions:
                positions[term] = i
        shared = [v for v in positions if v in frame.cols]
        if not shared:
            return np.full(frame.n, len(rel), dtype=INT), None
        prefix = self._prefix(atom, rel, [positions[v] for v in shared])
        if prefix is not None:
            runs = key_runs(rel)
            if runs is None:
                return None, None
            probe_cols = [frame.cols[v] for v in sorted(shared, key=positions.get)]
            starts = self._starts(atom, rel) if prefix == 1 else None
            if starts is not None:
                found = [(starts[probe_cols[0]], starts[probe_cols[0] + 1])]
            else:
                found = [self._prefix_ranges(keys, probe_cols, prefix, rel.arity) for keys in runs]
            return sum(hi - lo for lo, hi in found), found[0] if len(found) == 1 else None
        if self._patched(atom, rel):
            return None, None
        entry = self._index(atom, rel, tuple(positions[v] for v in shared))
        lo, hi = self._index_ranges(entry, [frame.cols[v] for v in shared])
        return hi - lo, (lo, hi)


def _plain(term) -> bool:
    return isinstance(term, (Var, int, str))


def _repeat_pattern(atom: Atom):
    seen: dict[Var, int] = {}
    for i, t in enumerate(atom.args):
        if isinstance(t, Var) and t.name != "_":
            if t in seen:
                yield (seen[t], i)
            else:
                seen[t] = i


__all__ = ["Joins", "STARTS_MIN", "STARTS_PER_ROW"]
