"""Candidate values and their costs for cell repair, from the data itself (no labels).

A cell (row t, column A) that a violated constraint implicates may take a value other than its
own. Which ones, and at what cost, is read off the relation:

- **co-occurrence and frequency**: the values of A seen (elsewhere) with t's value in another
  column B — for each other column B the ``TOP`` values of A most often seen with ``t[B]`` — and
  the ``TOP`` most frequent values of A, so a typo meets the value its neighbours agree on, and
  a tuple of a violating group meets the other values of the group;
- **likelihood**: a candidate v scores ``log P(A = v) + Σ_B log P(B = t[B] | A = v)`` (naive
  Bayes over the row's other values), the counts taken without t itself (leave one out: a value
  seen only in t has no support), Laplace-smoothed; plus the log frequency of v's *format* in A (its shape: digits ``9``, letters ``a``, the rest kept), so that
  ``3523x`` in a column of five-digit codes is unlikely;
- **closeness**: a candidate near the dirty value (Levenshtein similarity) is cheaper — typos are
  small;
- **sources**: with a source column (flights' ``src``) each row counts with its source's
  reliability, the weight of seed-style truth discovery (Dong et al., VLDB 2009, AccuVote): a
  source's accuracy is how often it agrees with the weighted vote in the groups of the violated
  functional dependencies, iterated to a fixpoint, and its vote weighs ``log(n·a / (1 − a))``.

The energy of v is ``−score(v) + change·[v ≠ own]``: the prior log odds against a cell being
wrong are paid by every change. The rate of wrong cells is estimated from the data alone (by the
caller, :func:`nablog.repair.cells.repair_cells`): in the groups that violate a functional
dependency, the (weighted) share of rows that disagree with their group's majority value —
the error rate if majorities are right (1/20 when nothing is known).

**A cell gets a candidate only when the evidence for it dominates** (:func:`dominates`): the
values at least as likely as the cell's own (the change prior paid) are its rivals, own included,
and the best of them must hold more than half their probability — more likely than the own value
and every runner-up together. Then it is the cell's one candidate; otherwise the cell has none
and keeps its value (equal evidence, two near-equal guesses: no change), and a constraint that
could only be satisfied through such values stays violated (reported, never forced). On flights
the naive-Bayes candidates of a group without a common value were the column's most frequent
times at near-equal cost, and the solver, made to restore consistency, picked among them.
Keeping a value costs nothing; a change costs ``softplus(energy(v) − energy(own))``
(:func:`softplus`), in thousandths: the negative log probability that v rather than the own value
is right. Every change has a positive cost, so a cell changes only when a violation asks for it.

These constants are priors fixed once for every data set (docs/design.md, cell repair), never
fitted to a clean copy.

References: Rekatsinas et al., HoloClean (VLDB 2017), co-occurrence domain pruning; Mahdavi and
Abedjan, Baran (VLDB 2020), value and vicinity models; Dong, Berti-Equille, Srivastava, Integrating
conflicting data (VLDB 2009).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..lang import Constant

ALPHA = 1.0  # Laplace smoothing of every count
CHANGE = math.log(19)  # prior odds against a change: a cell is wrong with probability 1/20
CLOSENESS = 1.0  # weight of the Levenshtein similarity to the dirty value
TOP = 3  # candidates per context column
SCALE = 1000  # costs are integers: thousandths of a nat


def shape(value: Constant) -> str:
    """The format of a value: digits become ``9``, letters ``a``, other characters stay.

    >>> shape("3523x"), shape(35233), shape("7:10 a.m.")
    ('9999a', '99999', '9:99 a.a.')
    """
    text = str(value)
    return "".join("9" if c.isdigit() else ("a" if c.isalpha() else c) for c in text)


def similarity(a: Constant, b: Constant) -> float:
    """1 − Levenshtein distance / longer length, on the values' texts.

    >>> similarity("35233", "3523x"), similarity("al", "ak"), similarity("", "")
    (0.8, 0.5, 1.0)
    """
    s, t = str(a), str(b)
    if s == t:
        return 1.0
    return 1.0 - levenshtein(s, t) / max(len(s), len(t))


def levenshtein(s: str, t: str) -> int:
    """Edit distance by Hyyrö's bit-parallel form of Myers' algorithm: one pass over ``t`` with
    ``s`` as bit masks (Python integers of any width), so long values cost little.

    >>> levenshtein("kitten", "sitting"), levenshtein("", "abc"), levenshtein("abc", "abc")
    (3, 3, 0)
    """
    if not s:
        return len(t)
    masks: dict[str, int] = {}
    for i, c in enumerate(s):
        masks[c] = masks.get(c, 0) | (1 << i)
    full = (1 << len(s)) - 1
    high = 1 << (len(s) - 1)
    vp, vn, score = full, 0, len(s)
    for c in t:
        eq = masks.get(c, 0)
        xv = eq | vn
        xh = (((eq & vp) + vp) ^ vp) | eq
        hp = vn | ~(xh | vp)
        hn = vp & xh
        if hp & high:
            score += 1
        elif hn & high:
            score -= 1
        hp = ((hp << 1) | 1) & full
        hn = (hn << 1) & full
        vp = hn | ~(xv | hp)
        vp &= full
        vn = hp & xv
    return score


@dataclass
class Column:
    """One column as integer codes: ``values[codes[r]]`` is row r's value."""

    values: list[Constant]
    codes: np.ndarray
    counts: np.ndarray  # weighted count per code
    shapes: np.ndarray  # shape code per value code
    shape_counts: np.ndarray  # weighted count per shape code


class Statistics:
    """Weighted value and co-occurrence counts of one relation (``rows`` row-aligned with
    ``weights``), computed per pair of columns when first asked for — by ``pairs(a, b)`` when
    given (the same arrays as :meth:`pair`, counted elsewhere: on Spark), else with numpy."""

    def __init__(self, rows: Sequence[tuple], width: int, weights: np.ndarray | None = None, nulls: Sequence[Constant] = (), pairs: Callable[[int, int], tuple] | None = None):
        self.n = len(rows)
        self.nulls = frozenset(nulls)
        self.width = width
        self.weights = np.ones(self.n) if weights is None else np.asarray(weights, dtype=float)
        self.total = float(self.weights.sum())
        self.columns = [self._column([r[i] for r in rows]) for i in range(width)]
        self._pairs: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._count_pairs = pairs  # another engine's pair counts (Spark: nablog.engines.spark.cells), else numpy's
        self._top: dict[tuple[int, int], np.ndarray] = {}

    def _column(self, values: list) -> Column:
        index: dict = {}
        codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
        distinct = list(index)
        counts = np.bincount(codes, weights=self.weights, minlength=len(distinct))
        shape_index: dict = {}
        shapes = np.fromiter((shape_index.setdefault(shape(v), len(shape_index)) for v in distinct), dtype=np.int64, count=len(distinct))
        shape_counts = np.bincount(shapes, weights=counts, minlength=len(shape_index))
        return Column(distinct, codes, counts, shapes, shape_counts)

    def code(self, column: int, value: Constant) -> int:
        return self.columns[column].values.index(value)

    def pair(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sorted keys ``b_code * |A| + a_code`` of the pairs seen, their weighted counts, and
        the offset of each b code's first key."""
        if (a, b) not in self._pairs and self._count_pairs is not None:
            self._pairs[(a, b)] = self._count_pairs(a, b)
        if (a, b) not in self._pairs:
            ca, cb = self.columns[a], self.columns[b]
            keys = cb.codes * len(ca.values) + ca.codes
            unique, inverse = np.unique(keys, return_inverse=True)
            counts = np.bincount(inverse, weights=self.weights, minlength=len(unique))
            starts = np.searchsorted(unique, np.arange(len(cb.values) + 1) * len(ca.values))
            self._pairs[(a, b)] = (unique, counts, starts)
        return self._pairs[(a, b)]

    def count(self, a: int, b: int, a_codes: np.ndarray, b_codes: np.ndarray) -> np.ndarray:
        """Weighted count of rows with A = a_codes[i] and B = b_codes[i], for every i."""
        unique, counts, _ = self.pair(a, b)
        keys = b_codes * len(self.columns[a].values) + a_codes
        at = np.searchsorted(unique, keys)
        at = np.minimum(at, len(unique) - 1)
        found = unique[at] == keys
        return np.where(found, counts[at], 0.0)

    def top(self, a: int, b: int, k: int) -> np.ndarray:
        """For each code of B, the codes of the ``k`` values of A most often seen with it (-1 pads)."""
        if (a, b) not in self._top:
            unique, counts, starts = self.pair(a, b)
            na = len(self.columns[a].values)
            nb = len(self.columns[b].values)
            out = np.full((nb, k), -1, dtype=np.int64)
            b_of = unique // na
            order = np.lexsort((-counts, b_of))
            rank = np.arange(len(order)) - starts[b_of[order]]
            keep = rank < k
            out[b_of[order][keep], rank[keep]] = unique[order][keep] % na
            self._top[(a, b)] = out
        return self._top[(a, b)]


def energies(stats: Statistics, column: int, rows: np.ndarray, candidates: np.ndarray, context: Sequence[int]) -> np.ndarray:
    """``−score`` (without the change prior or closeness) of giving ``rows[i]``'s cell of
    ``column`` the value code ``candidates[i]``, for every i: naive Bayes,
    ``log P(v) + Σ_B log P(B = t[B] | v) + log P(format of v)``, every count without row t itself."""
    col = stats.columns[column]
    w = stats.weights[rows]
    own = (col.codes[rows] == candidates).astype(float) * w
    with_v = col.counts[candidates] - own
    score = np.log((with_v + ALPHA) / (stats.total - w + ALPHA * len(col.values)))
    for b in context:
        b_codes = stats.columns[b].codes[rows]
        together = stats.count(column, b, candidates, b_codes) - own
        score += np.log((together + ALPHA) / (with_v + ALPHA * len(stats.columns[b].values)))
    shapes = col.shapes[candidates]
    same_shape = (col.shapes[col.codes[rows]] == shapes).astype(float) * w
    score += np.log((col.shape_counts[shapes] - same_shape + ALPHA) / (stats.total - w + ALPHA * len(col.shape_counts)))
    return -score


@dataclass(frozen=True)
class Domain:
    """The values a cell may take, its own first, with their integer costs."""

    values: tuple[Constant, ...]
    costs: tuple[int, ...]

    @property
    def free(self) -> bool:
        return len(self.values) > 1


def softplus(x: float) -> float:
    """``log(1 + e^x)``: the cost of replacing a value by one whose energy is higher by x, i.e.
    ``−log P(the candidate rather than the own value is right)``; always positive, so a cell
    changes only when a violation asks for it.

    >>> round(softplus(0.0), 4), softplus(-30.0) > 0, round(softplus(10.0), 3)
    (0.6931, True, 10.0)
    """
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def change_prior(error_rate: float) -> float:
    """The cost of a change: the log odds against a cell being wrong, for a rate of wrong cells
    (clipped to 1 %…50 %).

    >>> round(change_prior(0.05), 3), change_prior(0.5)
    (2.944, 0.0)
    """
    p = min(max(error_rate, 0.01), 0.5)
    return math.log((1 - p) / p)


def domains(stats: Statistics, column: int, rows: Sequence[int], context: Sequence[int], change: float = CHANGE) -> dict[int, Domain]:
    """The candidate domain of the cell (r, column) for every r in ``rows`` (see the module
    docstring); a cell whose domain is its own value alone is left out."""
    if not len(rows):
        return {}
    rows_arr = np.asarray(sorted(set(rows)), dtype=np.int64)
    col = stats.columns[column]
    own = col.codes[rows_arr]
    found = [own]
    frequent = np.argsort(-col.counts, kind="stable")[:TOP]
    found.extend(np.full(len(rows_arr), code, dtype=np.int64) for code in frequent)
    for b in context:
        top = stats.top(column, b, TOP)[stats.columns[b].codes[rows_arr]]
        found.extend(top.T)
    cand = np.stack(found, axis=1)  # one row per cell
    cell_of = np.repeat(np.arange(len(rows_arr)), cand.shape[1])
    flat = cand.ravel()
    valid = flat >= 0
    width = len(col.values)
    packed = np.unique(cell_of[valid] * width + flat[valid])  # one integer per (cell, candidate): a 1-D sort
    pairs = np.stack([packed // width, packed % width], axis=1)
    energy = energies(stats, column, rows_arr[pairs[:, 0]], pairs[:, 1], context)
    out: dict[int, Domain] = {}
    start = 0
    cells = pairs[:, 0]
    bounds = np.searchsorted(cells, np.arange(len(rows_arr) + 1))
    close: dict[tuple[int, int], float] = {}  # similarity per (own code, candidate code): values repeat
    for i, r in enumerate(rows_arr.tolist()):
        start, end = bounds[i], bounds[i + 1]
        codes = pairs[start:end, 1].tolist()
        e = energy[start:end].tolist()
        own_code = int(own[i])
        own_value = col.values[own_code]
        own_energy = e[codes.index(own_code)]
        rivals = [own_energy]  # the energies of the values at least as likely as the own one, all costs paid
        best: tuple[float, tuple, Constant] | None = None
        for code, energy_v in zip(codes, e):
            if code == own_code or col.values[code] in stats.nulls:
                continue  # a repair fills or corrects a value, never erases one
            if energy_v + change - CLOSENESS > own_energy:
                continue  # less likely than the own value even if it looked the same: no rival
            value = col.values[code]
            if (own_code, code) not in close:
                close[(own_code, code)] = similarity(own_value, value)
            total = energy_v + change - CLOSENESS * close[(own_code, code)]
            if total > own_energy:
                continue
            rivals.append(total)
            if best is None or (total, row_key(value)) < best[:2]:
                best = (total, row_key(value), value)
        if best is None or not dominates(best[0], rivals):
            continue
        out[r] = Domain((own_value, best[2]), (0, max(1, round(softplus(best[0] - own_energy) * SCALE))))
    return out


def dominates(energy: float, energies: Sequence[float]) -> bool:
    """Whether the value of ``energy`` (one of ``energies``, the cell's values with every cost
    paid) holds more than half the probability of them all, ``e^-energy > Σ e^-other``: it is
    more likely than its rivals together, so no other value — the cell's own, a runner-up — has
    as much evidence; with two values equally likely neither does.

    >>> dominates(1.0, [1.0, 3.0]), dominates(1.0, [1.0, 1.0]), dominates(1.0, [1.0, 2.0, 2.0]), dominates(1.0, [1.0, 1.5, 1.5])
    (True, False, True, False)
    """
    low = min(energies)
    mass = sum(math.exp(low - x) for x in energies)
    return 2 * math.exp(low - energy) > mass


def row_key(value: Constant) -> tuple:
    return (0, value, "") if isinstance(value, int) else (1, 0, value)


def source_weights(rows: Sequence[tuple], source: int, groups: Sequence[Sequence[int]], rhs: Sequence[int], rounds: int = 10, nulls: Sequence[Constant] = ()) -> np.ndarray:
    """Each row's vote weight from its source's accuracy in the violated groups (AccuVote).

    ``groups`` are lists of row numbers that should agree on the columns ``rhs`` (the groups of
    violated functional dependencies). A source's accuracy ``a`` starts at 0.8; each round the
    weighted vote picks each group's value per column, and ``a`` becomes the smoothed share of
    the source's values that agree with the vote. A row's weight is ``log(n·a / (1 − a))`` with
    ``n`` the number of distinct values voted on (at least a small positive floor). A null (a
    value in ``nulls``) never wins a vote, but counts against its source's accuracy (the source
    left out a value the others report).
    Sources that copy one another (:func:`copy_clusters`) vote once: each member of a cluster of
    k sources weighs 1/k (on flights the vote's value is right for 369 of 400 items instead of 261).
    """
    missing = frozenset(nulls)
    names = sorted({r[source] for r in rows}, key=row_key)
    index = {s: i for i, s in enumerate(names)}
    src = np.fromiter((index[r[source]] for r in rows), dtype=np.int64, count=len(rows))
    truth = None
    share = np.ones(len(names))
    for _ in range(3):  # copies judged against the plain majority first, then against the weighted vote
        found = 1.0 / copy_clusters(rows, src, len(names), groups, rhs, missing, truth)
        if truth is not None and np.array_equal(found, share):
            break
        share = found
        weight, truth = _accu_vote(rows, src, len(names), groups, rhs, missing, share, rounds)
    return weight[src]


def _accu_vote(rows, src, n_sources: int, groups, rhs, missing, share: np.ndarray, rounds: int) -> tuple[np.ndarray, dict]:
    """Source weights by iterated accuracy (see :func:`source_weights`) and the voted value of
    each item (group number, column)."""
    accuracy = np.full(n_sources, 0.8)
    truth: dict = {}
    for _ in range(rounds):
        weight = np.maximum(np.log(4 * accuracy / (1 - accuracy)), 0.05) * share
        agree = np.zeros(n_sources)
        seen = np.zeros(n_sources)
        for g, group in enumerate(groups):
            for c in rhs:
                votes: dict = {}
                for r in group:
                    if rows[r][c] not in missing:
                        votes[rows[r][c]] = votes.get(rows[r][c], 0.0) + weight[src[r]]
                if len(votes) < 1:
                    continue
                truth[(g, c)] = voted = max(votes, key=lambda v: (votes[v], row_key(v)))
                for r in group:
                    seen[src[r]] += 1
                    agree[src[r]] += rows[r][c] == voted
        new = np.clip((agree + 1) / (seen + 2), 0.01, 0.99)
        done = np.allclose(new, accuracy, atol=1e-4)
        accuracy = new
        if done:
            break
    return np.maximum(np.log(4 * accuracy / (1 - accuracy)), 0.05) * share, truth


def copy_clusters(rows: Sequence[tuple], src: np.ndarray, n_sources: int, groups: Sequence[Sequence[int]], rhs: Sequence[int], missing=frozenset(), truth: dict | None = None) -> np.ndarray:
    """For each source, the size of its cluster of copies.

    Two sources are taken for copies when they agree on every item both report (an item: a
    group and a column; a null reported in the same place counts as agreeing) and share at least
    one value judged false: not the item's ``truth`` (the voted value), or without one not its
    plain majority. Independent sources that are both right agree on true values only; sharing a false
    value on top of agreeing everywhere is the evidence of copying (Dong, Berti-Equille,
    Srivastava, VLDB 2009, §3). Clusters are the connected components of that relation; a
    cluster votes as one source, so a site copied by four others does not outvote the rest.
    :func:`source_weights` judges copies against the plain majority, votes, and judges again
    against the vote (two independent sources outvoted together by copies are then apart).

    >>> rows = [("a", 1), ("b", 1), ("c", 2), ("d", 2), ("e", 2)]
    >>> copy_clusters(rows, np.array([0, 1, 2, 3, 4]), 5, [[0, 1, 2, 3, 4]], [1]).tolist()
    [2.0, 2.0, 1.0, 1.0, 1.0]
    """
    claims: list[dict] = [{} for _ in range(n_sources)]
    wrong: list[set] = [set() for _ in range(n_sources)]
    for g, group in enumerate(groups):
        for c in rhs:
            counts: dict = {}
            for r in group:
                v = rows[r][c]
                if v not in missing:
                    counts[v] = counts.get(v, 0) + 1
            if not counts:
                continue
            majority = max(counts, key=lambda v: (counts[v], row_key(v))) if truth is None else truth.get((g, c))
            for r in group:
                v = rows[r][c]
                claims[src[r]].setdefault((g, c), v)
                if v != majority:
                    wrong[src[r]].add((g, c))
    parent = list(range(n_sources))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a in range(n_sources):
        for b in range(a + 1, n_sources):
            shared_wrong = [item for item in wrong[a] & wrong[b] if claims[a][item] == claims[b][item]]
            if not shared_wrong:
                continue
            common = claims[a].keys() & claims[b].keys()
            if all(claims[a][item] == claims[b][item] for item in common):
                parent[find(a)] = find(b)
    roots = [find(x) for x in range(n_sources)]
    sizes = np.bincount(roots, minlength=n_sources)
    return sizes[roots].astype(float)


__all__ = ["CHANGE", "Domain", "change_prior", "copy_clusters", "Statistics", "domains", "dominates", "energies", "shape", "similarity", "source_weights"]
