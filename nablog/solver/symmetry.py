"""Interchangeable values: classes of constants the database cannot tell apart, folded before solving.

Seed 003, Example 1's note: realization (c) "recurs once per existing constant, which a good
answer shows as one realization with a parameter". On an org chart of 10,000 departments, "move e5
to department D and make h77 its head" holds for almost every D; grounding every D costs seconds.
Two values ``v`` and ``w`` are *interchangeable* when swapping them — together with their
*private* values (constants occurring in exactly one base fact, that fact being one of ``v``'s) —
maps the base facts the program reads onto themselves. Then the swap is an automorphism of the
database: it maps the perfect model, every realization and every minimal one onto itself, as long
as neither value is a constant of the program, the request or a protection, and the program only
compares values for equality (an order comparison or arithmetic could tell them apart).

A cheap signature decides it: for each fact containing ``v`` at position ``i``, its predicate,
``i`` and the other arguments, a private one written as ``#`` — the multiset of these, hashed.
Values with one signature form a class; the relevance search then offers only a few
*representatives* of each large class as values of existential variables, and a realization using
one representative stands for its whole orbit: one member per value of the class, found by one
vectorized pass over the facts (:meth:`Folding.orbit`), not by solving again.

>>> from nablog.lang import parse
>>> rules = parse("m(E, H) :- ed(E, D), dh(D, H).")
>>> facts = {"ed": {(f"e{i}", f"d{i % 6}") for i in range(12)}, "dh": {(f"d{k}", f"h{k}") for k in range(6)}}
>>> folding = Folding.of(rules, facts, ["ed", "dh"], {"e6", "h3"}, least=3, representatives=2)
>>> [(c.values, c.representatives) for c in folding.classes]
[(('d1', 'd2', 'd4', 'd5'), ('d1', 'd2'))]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

from ..lang import Atom, Comparison, Denial, Literal, Program, Var, constant_sort_key, fd_shape
from ..engines.encoding import INT, ConstantDictionary, EncodedRelation, fits_in_key, member, pack, row_view, sorted_unique
from .family import Family
from .realization import sorted_atoms

FOLD_LEAST = 16
"""Fewest values a class has for folding to pay: smaller classes are grounded value by value."""

EXACT_SIZE = 4
"""Change sets of up to this many facts are found folded exactly as unfolded (see
:attr:`Folding.exact_size`): each class keeps that many times the widest arity representatives."""

_M1, _M2, _M3 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer: a bijection of uint64 that spreads every input bit."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * _M2
        x = (x ^ (x >> np.uint64(27))) * _M3
        return x ^ (x >> np.uint64(31))


@dataclass(frozen=True)
class ValueClass:
    """Interchangeable values, sorted; ``representatives`` are the first few, the ones grounded."""

    values: tuple
    representatives: tuple


def symmetric(rules: Program) -> bool:
    """Whether the program can only tell values apart by equality: plain atoms and ``=``/``!=``
    between variables and constants (no arithmetic, order, aggregates or domain calls). A
    functional dependency's ``V1 < V2`` only picks one of two symmetric pairs: it counts as ``!=``."""
    bodies = [r.body for r in rules.rules]
    bodies += [c.body for _, c in rules.named_constraints() if isinstance(c, Denial) and fd_shape(c) is None]
    plain = lambda t: isinstance(t, (Var, int, str))  # noqa: E731
    for body in bodies:
        for b in body:
            if isinstance(b, Literal):
                if not all(plain(t) for t in b.atom.args):
                    return False
            elif not (isinstance(b, Comparison) and b.op in ("=", "!=") and plain(b.left) and plain(b.right)):
                return False
    return all(plain(t) for r in rules.rules for h in r.head for t in h.args)


class Folding:
    """The large classes of interchangeable values of one database state (:meth:`of`), or of one
    request over it (:meth:`for_request`: the request's values and their owners taken out)."""

    def __init__(self, relations: Mapping[str, np.ndarray], dictionary: ConstantDictionary, private: np.ndarray, class_of: np.ndarray, shown: np.ndarray, holder: np.ndarray, least: int, representatives: int):
        self._relations = relations  # predicate to its rows as an (n, arity) id array
        self._dictionary = dictionary
        self._private = private  # per id: occurs in exactly one fact, at one place
        self._class_of = class_of  # per id: its class (0..k-1), or -1
        self._shown = shown  # per id: a representative of its class
        self._holder = holder  # per private id: (relation number, row) of its fact, else -1
        self.least = least
        self.representatives = representatives
        # Class k's values are members[starts[k]:starts[k + 1]], sorted (ids follow the order of
        # constants): a request's changes to a class touch only its own slice.
        ids = np.flatnonzero(class_of >= 0)
        self._members = ids[np.argsort(class_of[ids], kind="stable")]
        self._starts = np.searchsorted(class_of[self._members], np.arange(int(class_of.max(initial=-1)) + 2))
        # One request's changes: values taken out of their classes, and per class changed
        # the representatives (an empty tuple: the class is too small now, not folded).
        self._removed: frozenset[int] = frozenset()
        self._chosen: dict[int, tuple[int, ...]] = {}
        self._columns: dict[tuple[str, int], tuple[np.ndarray, set]] = {}  # the state's, shared
        self._visible: dict[tuple[str, int], set] = {}

    @property
    def classes(self) -> list[ValueClass]:
        """Every class, sorted by its first value (decodes every member: for tests and display)."""
        kept = [k for k in range(len(self._starts) - 1) if self._chosen.get(k, True)]
        return sorted((self.value_class(k) for k in kept), key=lambda c: constant_sort_key(c.values[0]))

    def value_class(self, k: int) -> ValueClass:
        ids = self._class_members(k)
        return ValueClass(tuple(self.decode(ids)), tuple(self.decode(self._representatives(k, ids))))

    def _class_members(self, k: int) -> np.ndarray:
        ids = self._members[self._starts[k] : self._starts[k + 1]]
        return ids[~np.isin(ids, np.fromiter(self._removed, INT))] if self._removed else ids

    def _representatives(self, k: int, ids: np.ndarray) -> np.ndarray:
        chosen = self._chosen.get(k)
        return ids[self._shown[ids]] if chosen is None else np.array(chosen, INT)

    @classmethod
    def of(
        cls,
        rules: Program,
        relations: Mapping[str, Iterable[tuple]],
        preds: Iterable[str],
        distinguished: set,
        least: int = FOLD_LEAST,
        representatives: int = 2,
    ) -> "Folding":
        """The classes of at least ``least`` interchangeable values among the facts of ``preds``,
        none of them (or of their private values) in ``distinguished``."""
        given = frozenset(preds)
        preds = sorted(p for p in given if p in relations and len(relations[p]))
        dictionary, arrays = _encode({p: relations[p] for p in preds})
        n = len(dictionary)
        count = np.zeros(n, INT)
        for rows in arrays.values():
            for j in range(rows.shape[1]):
                count += np.bincount(rows[:, j], minlength=n)
        special = np.zeros(n, bool)
        special[_ids(dictionary, distinguished)] = True
        private = (count == 1) & ~special
        # A value's signature hashes its tag, not its id: a grown dictionary moves ids, not tags.
        tag = np.arange(n, dtype=np.uint64)
        raw = np.zeros(n, np.uint64)
        for k, p in enumerate(preds):
            _signed(raw, arrays[p], k, private, tag, +1)
        return cls._classified(arrays, dictionary, count, special, raw, tag, (given, frozenset(distinguished)), least, representatives)

    @classmethod
    def _classified(cls, arrays, dictionary, count, special, raw, tag, made, least: int, representatives: int) -> "Folding":
        """The classes of a state from its facts (id rows per predicate), per id the number of
        facts holding it, whether it is distinguished, and its signature's sum over its places."""
        n = len(count)
        private = (count == 1) & ~special
        with np.errstate(over="ignore"):
            signature = _mix(raw + count.astype(np.uint64) * _M1)
        eligible = (count > 0) & ~special & ~private
        class_of = _classes(signature, eligible, least)
        # A value whose facts name another value of its own class cannot be swapped with it alone.
        for rows in arrays.values():
            for i in range(rows.shape[1]):
                for j in range(rows.shape[1]):
                    if i != j:
                        a, b = class_of[rows[:, i]], class_of[rows[:, j]]
                        clash = (a >= 0) & (a == b) & (rows[:, i] != rows[:, j])
                        class_of[rows[clash, i]] = -1
        class_of = _classes(np.where(class_of >= 0, signature, np.uint64(0)), class_of >= 0, least)
        # Representatives: the first few ids of each class (ids follow the order of constants).
        members = np.flatnonzero(class_of >= 0)
        members = members[np.argsort(class_of[members], kind="stable")]
        starts = np.r_[0, np.flatnonzero(np.diff(class_of[members])) + 1] if len(members) else np.zeros(0, INT)
        rank = np.arange(len(members)) - np.repeat(starts, np.diff(np.r_[starts, len(members)]))
        shown = np.zeros(n, bool)
        shown[members[rank < representatives]] = True
        # Where each private value sits: a request naming it takes its owners out of their classes.
        holder = np.full((n, 2), -1, INT)
        for r, rows in enumerate(arrays.values()):
            for j in range(rows.shape[1]):
                at = np.flatnonzero(private[rows[:, j]])
                holder[rows[at, j], 0] = r
                holder[rows[at, j], 1] = at
        folding = cls(arrays, dictionary, private, class_of, shown, holder, least, representatives)
        folding._made = (count, special, raw, tag, made)
        return folding

    def maintained(self, gained: Mapping[str, Iterable[tuple]], lost: Mapping[str, Iterable[tuple]]) -> "Folding | None":
        """The classes of the state after a commit that gained and lost these tuples, the same as
        :meth:`of` over the new state computes: each value's count and signature sum change by
        the facts that came and went, and by the facts of a value that became private or stopped
        being private (a private value is written ``#`` in its fact's other places). None when a
        relation of the classes became empty or a new one appeared (the positions of every
        signature change: build it again)."""
        given, distinguished = self._made[4]
        changed = {p: (set(gained.get(p, ())), set(lost.get(p, ()))) for p in given if gained.get(p) or lost.get(p)}
        if not changed:
            return self
        if any(p not in self._relations for p in changed):
            return None
        count, special, raw, tag = (a.copy() for a in self._made[:4])
        dictionary = self._dictionary
        new = {v for ins, _ in changed.values() for row in ins for v in row if dictionary.id(v) is None}
        arrays = dict(self._relations)
        if new:
            dictionary, remap = dictionary.extended(new)
            n = len(dictionary)
            grown = lambda a, fill: _placed(a, remap, n, fill)  # noqa: E731
            count, special, raw = grown(count, 0), grown(special, False), grown(raw, 0)
            tag = grown(tag, 0)
            fresh = np.ones(n, bool)
            fresh[remap] = False
            top = int(self._made[3].max(initial=0)) + 1
            tag[fresh] = np.arange(top, top + int(fresh.sum()), dtype=np.uint64)
            special[_ids(dictionary, distinguished & new)] = True
            arrays = {p: remap[rows] for p, rows in arrays.items()}
            old_private = grown(self._private_of_state(), False)
        else:
            old_private = self._private_of_state()
        preds = list(arrays)
        n = len(dictionary)
        removed, added = {}, {}
        for p, (ins, dele) in changed.items():
            rows = arrays[p]
            arity = rows.shape[1]
            out = dictionary.encode_rows(list(dele), arity).reshape(len(dele), arity) if dele else np.zeros((0, arity), INT)
            keep = ~_rows_in(rows, out, n)
            removed[p] = rows[~keep]
            added[p] = dictionary.encode_rows(list(ins), arity).reshape(len(ins), arity) if ins else np.zeros((0, arity), INT)
            arrays[p] = np.concatenate([rows[keep], added[p]])
            if not len(arrays[p]):
                return None
            for j in range(arity):
                np.subtract.at(count, removed[p][:, j], 1)
                np.add.at(count, added[p][:, j], 1)
        private = (count == 1) & ~special
        flipped = private != old_private
        for k, p in enumerate(preds):
            rows = arrays[p]
            stays = rows[: len(rows) - len(added.get(p, ()))]
            touched = stays[flipped[stays].any(axis=1)] if flipped.any() else stays[:0]
            _signed(raw, np.concatenate([touched, removed.get(p, stays[:0])]), k, old_private, tag, -1)
            _signed(raw, np.concatenate([touched, added.get(p, stays[:0])]), k, private, tag, +1)
        return Folding._classified(arrays, dictionary, count, special, raw, tag, self._made[4], self.least, self.representatives)

    def _private_of_state(self) -> np.ndarray:
        count, special = self._made[0], self._made[1]
        return (count == 1) & ~special

    def for_request(self, distinguished: Iterable) -> "Folding":
        """These classes for a request naming the values ``distinguished``: each is taken out of
        its class, and so are the other values of its fact when it is private (they are told
        apart by it now), and a class left with fewer than ``least`` values is not folded.

        The classes are those of :meth:`of` with ``distinguished`` added, or subsets of them
        (a value the state's classes lost to a clash with a value taken out stays out): every
        class still holds interchangeable values only. The cost follows the request, not the
        database: the state's signatures, classes and holders are read, not computed again."""
        special = _ids(self._dictionary, distinguished)
        removed = set(special.tolist())
        for i in special.tolist():
            r, row = self._holder[i]
            if r >= 0:
                removed.update(self._relations[self._preds()[r]][row].tolist())
        view = Folding.__new__(Folding)
        view.__dict__.update(self.__dict__)
        view._private = self._private.copy()  # one byte per value: a request's own
        view._private[special] = False
        view._removed = frozenset(removed)
        view._visible = {}
        view._chosen = {}
        for k in {int(self._class_of[i]) for i in removed} - {-1}:
            ids = view._class_members(k)
            view._chosen[k] = tuple(ids[: self.representatives].tolist()) if len(ids) >= self.least else ()
        return view

    def _preds(self) -> list[str]:
        return list(self._relations)

    def _class(self, i: int) -> int:
        k = int(self._class_of[i])
        if k < 0 or i in self._removed or self._chosen.get(k, True) == ():
            return -1
        return k

    @property
    def exact_size(self) -> int | None:
        """The largest change set the folded search is known to find as the unfolded one does,
        or None when no value is hidden. A change set of s facts names at most s × (widest
        arity) values of a class, and with at least that many representatives every such change
        set has an image over them (any permutation of a class is an automorphism); a larger
        one may draw more values of a class than there are representatives."""
        sizes = np.diff(self._starts)
        for k, chosen in self._chosen.items():
            sizes[k] = len(self._class_members(k)) if chosen else 0
        if not (sizes > self.representatives).any():
            return None  # every value of every class is grounded: nothing is hidden
        width = max((rows.shape[1] for rows in self._relations.values()), default=1)
        return self.representatives // max(1, width)

    def hides(self, value) -> bool:
        """Whether ``value`` stands in a class without being one of its representatives."""
        i = self._dictionary.id(value)
        if i is None:
            return False
        k = self._class(i)
        if k < 0:
            return False
        chosen = self._chosen.get(k)
        return not self._shown[i] if chosen is None else i not in chosen

    def class_of(self, value) -> int:
        i = self._dictionary.id(value)
        return -1 if i is None else self._class(i)

    def visible(self, pred: str, position: int) -> set | None:
        """The values at one position of a relation that are not hidden (None for a relation
        the classes were not computed over). The state's part is kept with the state's folding;
        a request adds the few values it took out of classes or made representatives."""
        if pred not in self._relations:
            return None
        key = (pred, position)
        found = self._visible.get(key)
        if found is None:
            column = self._columns.get(key)
            if column is None:
                ids = sorted_unique(self._relations[pred][:, position])
                shown = ids[(self._class_of[ids] < 0) | self._shown[ids]]
                column = self._columns[key] = (ids, set(self.decode(shown)))
            ids, found = column
            extra = list(self._removed)
            for k, chosen in self._chosen.items():
                extra += self._class_members(k).tolist() if chosen == () else list(chosen)
            if extra:
                extra_ids = np.array(sorted(set(extra)), INT)
                found = found | set(self.decode(extra_ids[member(ids, extra_ids)]))
            self._visible[key] = found
        return found

    def orbit(self, insert: tuple[Atom, ...], delete: tuple[Atom, ...]):
        """The realization as a family over the one class it draws a value from: ``(class index,
        the value it uses, [(variable position, …)], rows of values)``, or None when it uses no
        class value. Raises :class:`Unfoldable` when it uses several values of classes, or a
        private value whose place among its owner's facts is not unique (then the members are not
        a function of one value)."""
        atoms = list(insert) + list(delete)
        used = {(self.class_of(v), v) for a in atoms for v in a.args}
        used = {(k, v) for k, v in used if k >= 0}
        if not used:
            return None
        if len(used) > 1:
            raise Unfoldable("the realization uses several interchangeable values")
        (k, value), = used
        d = self._dictionary
        vid = d.id(value)
        # The private values it uses: each named by the fact that holds it (predicate, positions).
        columns: dict = {}  # private value -> id column over the class (owner id -> private id)
        owners = self._class_members(k)
        for a in atoms:
            for v in a.args:
                i = d.id(v)
                if v == value or v in columns or i is None or not self._private[i]:
                    continue
                columns[v] = self._private_column(v, i, vid, owners)
        return value, columns, owners

    def _private_column(self, v, i: int, vid: int, owners: np.ndarray) -> np.ndarray:
        """For each owner in ``owners``, the private value at the place ``v`` holds among
        ``vid``'s facts (the same predicate, positions and other arguments)."""
        r, at = self._holder[i]
        if r < 0:
            raise Unfoldable("a private value was not found")
        rows = self._relations[self._preds()[r]]
        row = rows[at]
        j = int(np.flatnonzero(row == i)[0])
        owner_at = [p for p in range(len(row)) if row[p] == vid]
        if len(owner_at) != 1:
            raise Unfoldable("a private value sits in a fact that names its owner twice")
        o = owner_at[0]
        same = np.ones(len(rows), bool)
        for p in range(len(row)):
            if p not in (o, j):
                same &= rows[:, p] == row[p] if not self._private[row[p]] else self._private[rows[:, p]]
        same &= self._private[rows[:, j]]
        candidates = rows[same]
        if int((candidates[:, o] == vid).sum()) != 1:
            raise Unfoldable("a private value is one of several alike facts of its owner")
        sorter = np.argsort(owners)
        candidates = candidates[np.isin(candidates[:, o], owners)]
        positions = sorter[np.searchsorted(owners[sorter], candidates[:, o])]
        if (np.bincount(positions, minlength=len(owners)) != 1).any():
            raise Unfoldable("a private value has no single counterpart in every member")
        result = np.full(len(owners), -1, INT)
        result[positions] = candidates[:, j]
        return result

    def decode(self, ids: np.ndarray) -> list:
        values = self._dictionary.values
        return [values[i] for i in np.asarray(ids, INT).tolist()]


class Unfoldable(Exception):
    """A realization found over representatives is not one value's orbit: solve unfolded."""


def _classes(signature: np.ndarray, eligible: np.ndarray, least: int) -> np.ndarray:
    """Per id, the number of its class of equal signatures among the eligible ids (-1 elsewhere and
    for classes of fewer than ``least``); the classes are numbered from 0."""
    class_of = np.full(len(signature), -1, INT)
    ids = np.flatnonzero(eligible)
    if not len(ids):
        return class_of
    keys, inverse, counts = np.unique(signature[ids], return_inverse=True, return_counts=True)
    number = np.cumsum(counts >= least) - 1  # the large classes numbered 0, 1, ...
    large = counts[inverse] >= least
    class_of[ids[large]] = number[inverse[large]]
    return class_of


def _signed(raw: np.ndarray, rows: np.ndarray, k: int, private: np.ndarray, tag: np.ndarray, sign: int) -> None:
    """Add (``sign`` +1) or take away (-1) the places of ``rows``, facts of the ``k``-th
    predicate, in each value's signature sum: per place, a hash of the predicate, the position
    and the fact's other values (a private one written #, the value itself *, any other by tag)."""
    arity = rows.shape[1]
    for i in range(arity):
        code = np.full(len(rows), np.uint64(k * 64 + i + 1), np.uint64)
        for j in range(arity):
            if j != i:
                other = np.where(private[rows[:, j]], np.uint64(0), tag[rows[:, j]] + np.uint64(2))
                other[rows[:, j] == rows[:, i]] = np.uint64(1)
                with np.errstate(over="ignore"):
                    code = _mix(code * _M1 + other)
        with np.errstate(over="ignore"):
            (np.add if sign > 0 else np.subtract).at(raw, rows[:, i], _mix(code))


def _placed(values: np.ndarray, remap: np.ndarray, n: int, fill) -> np.ndarray:
    """Per-id ``values`` moved to a grown dictionary's ids (``remap``: old id to new), ``fill`` at the added ones."""
    out = np.full(n, fill, dtype=values.dtype)
    out[remap] = values
    return out


def _rows_in(rows: np.ndarray, probe: np.ndarray, size: int) -> np.ndarray:
    """Which of the id ``rows`` are among ``probe`` (both (n, arity) arrays)."""
    if not len(probe) or not len(rows):
        return np.zeros(len(rows), bool)
    arity = rows.shape[1]
    if fits_in_key(size, arity):
        keys, wanted = pack(list(rows.T), size), pack(list(probe.T), size)
    else:
        keys, wanted = row_view(rows), row_view(probe)
    return member(np.sort(wanted), keys)


def _ids(dictionary: ConstantDictionary, values: Iterable) -> np.ndarray:
    """The ids of those of ``values`` the dictionary has."""
    found = (dictionary.id(v) for v in set(values))
    return np.array(sorted(i for i in found if i is not None), INT)


def _encode(relations: Mapping[str, Iterable[tuple]]) -> tuple[ConstantDictionary, dict[str, np.ndarray]]:
    """One id space for every relation: the engine's dictionary when they share it, else a new one."""
    encoded = [r for r in relations.values() if isinstance(r, EncodedRelation)]
    dictionaries = {id(r.dictionary): r.dictionary for r in encoded}
    if len(encoded) == len(relations) and len(dictionaries) == 1:
        dictionary = next(iter(dictionaries.values()))
        return dictionary, {p: np.stack(r.columns(), axis=1).astype(INT, copy=False) if r.arity else np.zeros((len(r), 0), INT) for p, r in relations.items()}
    values = {v for rows in relations.values() for row in rows for v in row}
    dictionary = ConstantDictionary.build(values)
    out = {}
    for p, rows in relations.items():
        rows = list(rows)
        arity = len(rows[0]) if rows else 0
        out[p] = dictionary.encode_rows(rows, arity).reshape(len(rows), arity)
    return dictionary, out


def orbit_family(folding: Folding, insert: tuple[Atom, ...], delete: tuple[Atom, ...]) -> tuple[tuple, Family] | None:
    """The family of every image of a realization under swapping the values of the class it uses
    (with their private values), keyed by its first member; None when it uses no class value.

    Each member is a realization, and a minimal one, exactly when the given one is: the swap is an
    automorphism of the database that fixes the program, the request and the protections."""
    found = folding.orbit(insert, delete)
    if found is None:
        return None
    value, columns, owners = found
    names = {value: Var("D")}
    for v in columns:
        names[v] = Var(f"V{len(names)}")
    bind = lambda a: Atom(a.pred, tuple(names.get(t, t) for t in a.args))  # noqa: E731
    variables = tuple(names.values())
    values = [folding.decode(owners)] + [folding.decode(columns[v]) for v in columns]
    # The owners are ids in increasing order, which is the order of constants, and each binding
    # starts with its own: the bindings are sorted already (sorting 10,000 by key cost 40 ms).
    bindings = tuple(zip(*values))
    family = Family((tuple(map(bind, insert)), tuple(map(bind, delete))), variables, variables[0], bindings, interchangeable=True)
    first = family.member(bindings[0])
    return (sorted_atoms(first[0]), sorted_atoms(first[1])), family
