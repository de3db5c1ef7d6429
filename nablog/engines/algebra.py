"""Set algebra on encoded relations: union, intersection, difference, and rules restricted to a delta.

The python engine's fixpoint, its update (DRed) and the touched-group maintenance of aggregates
(:mod:`nablog.engines.groups`) all combine relations over one dictionary; this module holds those
operations so that both import them from below instead of from each other.
"""

from __future__ import annotations

import numpy as np

from ..lang import Atom, Literal, Rule
from .encoding import INT, ConstantDictionary, EncodedRelation, PatchedRelation, lex_range, member, merge_sorted, row_view, sorted_unique, unique_rows

PATCH_MIN, PATCH_RATIO = 50_000, 64
FEW_ROWS = 64  # a change of at most this many rows to a wide (unpacked) relation is searched, not sorted


def sorted_member(sorted_keys: np.ndarray, probe: np.ndarray) -> np.ndarray:
    if sorted_keys.dtype == INT:
        return member(sorted_keys, probe)
    if len(sorted_keys) == 0:
        return np.zeros(len(probe), dtype=bool)
    pos = np.minimum(np.searchsorted(sorted_keys, probe), len(sorted_keys) - 1)
    return sorted_keys[pos] == probe


def restricted(rule: Rule, position: int, delta: EncodedRelation, state):
    """The rule with body literal ``position`` ranging over ``delta`` (a negated literal is read
    positively: its instances are those where the negated atom is in ``delta``)."""
    literal = rule.body[position]
    if not literal.positive:
        # The changed tuples bind the literal's variables; the literal itself is still checked
        # in the given state (with `_`, another tuple may still match).
        body = list(rule.body)
        body[position] = Literal(literal.atom, True)
        rule = Rule(rule.head, (*body, literal), rule.loc)
    return (rule, position, lambda i, atom: delta if i == position else state(i, atom))


def head_restricted(rule: Rule, head: Atom, tuples: EncodedRelation, state):
    """The rule with an extra first literal binding its head to ``tuples`` (for rederivation)."""
    guard = Literal(Atom("__tuples", head.args), True)
    restricted = Rule(rule.head, (guard, *rule.body), rule.loc)
    return (restricted, 0, lambda i, atom: tuples if i == 0 else state(i, atom))


def union_all(d: ConstantDictionary, arity: int, relations: list[EncodedRelation]) -> EncodedRelation:
    """The union of relations over one dictionary."""
    relations = [r for r in relations if len(r)]
    if not relations:
        return EncodedRelation.empty(d, arity)
    if len(relations) == 1:
        return relations[0]
    if arity == 0:
        return relations[0]
    if relations[0].packed:
        return EncodedRelation(d, arity, sorted_unique(np.concatenate([r.keys for r in relations]), owned=True), None)
    return EncodedRelation(d, arity, None, unique_rows(np.concatenate([np.stack(r.columns(), 1) for r in relations])))


def intersection(a: EncodedRelation, b: EncodedRelation) -> EncodedRelation:
    """Tuples in both relations (same dictionary and arity)."""
    return difference(a, difference(a, b))


def _small(change: int, rel: EncodedRelation) -> bool:
    """Whether a change (with the patches a relation carries already) is small enough against
    it to patch it rather than copy it."""
    if isinstance(rel, PatchedRelation) and rel._keys is None:
        change += len(rel.plus) + len(rel.minus)
    return len(rel) >= PATCH_MIN and change * PATCH_RATIO <= len(rel)


def difference(a: EncodedRelation, b: EncodedRelation) -> EncodedRelation:
    """Tuples of ``a`` not in ``b`` (same dictionary and arity)."""
    if a.arity == 0:
        return EncodedRelation(a.dictionary, 0, a.keys[: 0 if len(b) else len(a)], None)
    if a.packed:
        if _small(len(b), a):
            # Few tuples to remove from many: patch instead of copying all of a.
            gone = b.keys[a.contains_keys(b.keys)]
            return PatchedRelation.of(a, np.zeros(0, INT), gone) if len(gone) else a
        return EncodedRelation(a.dictionary, a.arity, a.keys[~b.contains_keys(a.keys)], None)
    rows_a, rows_b = a._rows, b._rows
    assert rows_a is not None and rows_b is not None
    if len(rows_b) <= FEW_ROWS < len(rows_a):
        # A few wide rows out of many: binary searches, not a sort of all of a.
        gone = [lo for lo, hi in (lex_range(rows_a, row) for row in rows_b) if hi > lo]
        return EncodedRelation(a.dictionary, a.arity, None, np.delete(rows_a, gone, axis=0)) if gone else a
    if len(rows_a) <= FEW_ROWS < len(rows_b):
        keep = [lo == hi for lo, hi in (lex_range(rows_b, row) for row in rows_a)]
        return EncodedRelation(a.dictionary, a.arity, None, rows_a[np.array(keep, dtype=bool)])
    keep = ~sorted_member(np.sort(row_view(rows_b)), row_view(rows_a))
    return EncodedRelation(a.dictionary, a.arity, None, rows_a[keep])


def union_disjoint(a: EncodedRelation, b: EncodedRelation) -> EncodedRelation:
    """The union of two relations with no tuple in common."""
    if a.arity == 0:
        return EncodedRelation(a.dictionary, 0, a.keys if len(a) else b.keys, None)
    if a.packed:
        if not len(b):
            return a
        if _small(len(b), a):
            return PatchedRelation.of(a, b.keys, np.zeros(0, INT))
        return EncodedRelation(a.dictionary, a.arity, merge_sorted(a.keys, b.keys), None)
    assert a._rows is not None and b._rows is not None
    if not len(b):
        return a
    if len(b) <= FEW_ROWS < len(a):
        # Keep a's order: insert b's (sorted) rows where they belong instead of sorting again.
        at = [lex_range(a._rows, row)[0] for row in b._rows]
        return EncodedRelation(a.dictionary, a.arity, None, np.insert(a._rows, at, b._rows, axis=0))
    return EncodedRelation(a.dictionary, a.arity, None, unique_rows(np.concatenate([a._rows, b._rows])))
