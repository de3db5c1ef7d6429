"""Moving relations to a grown dictionary: with their indexes, and lazily where they may never be read again.

Arithmetic and aggregates add the integers they compute to the dictionary (``Evaluator.grow``)
and a change with a new constant extends it (``ConstantDictionary.extended``); ids preserve the
order of constants, so every relation is re-keyed through an increasing id map. Re-keying the
input of a group-by (50,000 rows) after its sums were computed cost a third of the query, and
sorting the indexes of every relation again after a one-row insertion cost more than the update.
So a relation is re-keyed on first use (:class:`Rekeyed`) and keeps its indexes (:func:`remapped`).
"""

from __future__ import annotations

import numpy as np

from .encoding import INT, ConstantDictionary, EncodedRelation, PatchedRelation, fits_in_key, pack, unpack


def remapped(rel: EncodedRelation, d: ConstantDictionary, remap: np.ndarray) -> EncodedRelation:
    """``rel`` over the grown dictionary ``d`` (:meth:`EncodedRelation.remapped`) with its
    indexes (``Joins._index``: sorted keys, order, columns, starts) and its patch carried
    over: the id map is increasing, so a sorted index stays sorted and only its ids are mapped."""
    if isinstance(rel, Rekeyed) and rel.source is not None:
        return remapped(rel.source, d, remap[rel.remap])
    if isinstance(rel, PatchedRelation) and rel._keys is None and fits_in_key(len(d), rel.arity):
        moved = lambda keys: pack([remap[c] for c in unpack(keys, len(rel.dictionary), rel.arity)], len(d))  # noqa: E731
        return PatchedRelation(remapped(rel.base, d, remap), moved(rel.plus), moved(rel.minus))
    # The relation and its indexes share their columns: each is mapped once (kept with its
    # source, so that no id is reused by another array meanwhile).
    mapped: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def moved_column(c: np.ndarray) -> np.ndarray:
        if id(c) not in mapped:
            moved = remap[c]
            moved.flags.writeable = False
            mapped[id(c)] = (c, moved)
        return mapped[id(c)][1]

    if type(rel) is EncodedRelation and rel.packed and rel.arity and fits_in_key(len(d), rel.arity):
        cached = "columns" in rel.indexes
        columns = [moved_column(c) for c in rel.columns()]
        out = EncodedRelation(d, rel.arity, pack(columns, len(d)), None)
        if cached:
            out.indexes["columns"] = tuple(columns)
    else:
        out = rel.remapped(d, remap)
    for key, (keys, order, cols, _) in ((k, e) for k, e in rel.indexes.items() if isinstance(k, tuple)):
        positions = key[0]
        if keys.dtype == INT and fits_in_key(len(d), len(positions)):
            cols = [moved_column(c) for c in cols]
            out.indexes[key] = (pack([cols[i] for i in positions], len(d))[order], order, cols, None)
    return out


def rekeyed(rel: EncodedRelation, d: ConstantDictionary, remap: np.ndarray, compose: bool = True) -> EncodedRelation:
    """``rel`` over the grown dictionary ``d``, re-keyed when first read (see :class:`Rekeyed`).

    A relation still waiting to be re-keyed is re-keyed once through both maps (``compose``),
    or, when it outlives this use (a model's relation, read by every update from that model),
    re-keyed itself first, so that the work and its indexes stay with it."""
    if isinstance(rel, Rekeyed) and rel.source is not None:
        if compose:
            return Rekeyed(rel.source, d, remap[rel.remap])
        rel._moved()
    if type(rel) is EncodedRelation and rel.packed and rel.arity and fits_in_key(len(d), rel.arity):
        return Rekeyed(rel, d, remap)
    return remapped(rel, d, remap)


class Rekeyed(EncodedRelation):
    """A packed relation over a grown dictionary, re-keyed (with its indexes) on first read:
    until then it holds the relation over the old dictionary (``source``) and the id map."""

    __slots__ = ("source", "remap", "_indexes")

    def __init__(self, source: EncodedRelation, dictionary: ConstantDictionary, remap: np.ndarray):
        self.source: EncodedRelation | None = None
        super().__init__(dictionary, source.arity, None, None)
        self.source, self.remap = source, remap

    def _moved(self) -> None:
        if self.source is not None:
            moved = remapped(self.source, self.dictionary, self.remap)
            self._keys, self._indexes, self.source = moved.keys, moved.indexes, None

    @property  # type: ignore[override]
    def indexes(self) -> dict:
        self._moved()
        return self._indexes

    @indexes.setter
    def indexes(self, value: dict) -> None:
        self._indexes = value

    @property
    def packed(self) -> bool:
        return True

    @property
    def keys(self) -> np.ndarray:
        self._moved()
        return super().keys

    def columns(self) -> list[np.ndarray]:
        self._moved()
        return super().columns()

    def __len__(self) -> int:
        return len(self.source) if self.source is not None else super().__len__()
