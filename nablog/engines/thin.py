"""Thin semi-naive rounds tuple at a time: a recursion that derives a handful of tuples a round.

A columnar round (:mod:`nablog.engines.evaluator`) costs about 45 numpy calls whatever its size,
a few hundred microseconds: on a recursion one tuple deep per round (a chain of 10⁶ edges,
Soufflé's ``independent_body3`` test) those fixed costs are all of the time, and clingo's grounder,
which follows each new tuple through hash indexes, is hundreds of times faster. :class:`ThinRounds`
takes over such rounds: it works on the constants themselves (computed integers need no
dictionary growth until it hands back), indexes what the rules read in Python dicts on the bound
arguments of each literal, and evaluates every (rule, delta literal) instance for each tuple of
the round's delta. Rounds stay rounds (a tuple's round is the round it is first derived in, as in
the columnar loop), and the relations a round reads are those before the round, so the model,
the rounds and every tuple derived are those of the columnar loop. When a round derives too much
(:data:`THIN_DELTA` tuples or :data:`THIN_WORK` bindings) the rounds go back to columns.

Entering costs decoding the members and indexing the inputs the rules join, which pays only
after enough thin rounds: the evaluator enters once the thin rounds it has run in columns would
have paid for it (:func:`worth_entering`, ski-rental: at most twice the better of the two).

>>> from nablog.lang import parse
>>> from nablog.engines.python import PythonEngine
>>> program = parse("b(X+1) :- a(X), X < 1000. a(X) :- b(X), c(Y), d(Y).")
>>> model = PythonEngine().evaluate(program, {"b": {(0,)}, "c": {(1,), (2,)}, "d": {(2,)}})
>>> len(model["a"]), max(model["b"])
(1001, (1000,))
"""

from __future__ import annotations

import gc
import itertools
import operator
import time
from functools import lru_cache
from typing import Callable, Mapping, Protocol

import numpy as np

from ..lang import Comparison, Literal, Rule, Var
from ..lang import arith
from ..lang.ast import BinOp, Interval, UnaryOp
from . import compute
from .budget import CHECK_EVERY, MemoryBudget
from .encoding import INT, ConstantDictionary, EncodedRelation
from .plan import ComponentPlan, body_order
from .runs import RoundCost


class Evaluator(Protocol):
    """What thin rounds need of the evaluator they run in (:class:`nablog.engines.evaluator.Evaluator`):
    its relations, dictionary, arities, reporting hooks and memory budget. Stated here, so that
    this module does not import the evaluator that imports it."""

    d: ConstantDictionary
    arities: Mapping[str, int]
    computed: int
    budget: MemoryBudget
    progress: Callable | None
    profile: Callable | None

    def relation(self, pred: str) -> EncodedRelation: ...

    def grow(self, values: np.ndarray) -> None: ...

THIN_DELTA = 32
"""A round deriving at most this many tuples is thin."""
THIN_WORK = 20_000
"""Bindings one thin round may visit; a round past it is redone in columns."""
ROW_COST = 1 / 500
"""Indexing or decoding a tuple costs about this fraction of a columnar round (0.5 µs / 250 µs)."""


class _Overflow(Exception):
    """A round visited more than THIN_WORK bindings."""


def eligible(plan: ComponentPlan) -> bool:
    """Whether every recursive rule of ``plan`` can run tuple at a time: literals and comparisons
    only (no aggregate), heads of variables and constants, no anonymous variable in a comparison."""
    for rule, _ in plan.recursive_rules:
        for atom in rule.head:
            if not all(isinstance(t, (Var, int, str)) for t in atom.args):
                return False
        for b in rule.body:
            if isinstance(b, Comparison):
                if any(v.name == "_" for v in b.variables()):
                    return False
            elif not isinstance(b, Literal):
                return False
    return True


def worth_entering(ev: "Evaluator", plan: ComponentPlan, thin_rounds: int) -> bool:
    """Whether ``thin_rounds`` columnar rounds already cost as much as decoding the members and
    indexing the inputs the recursive rules read would (see the module docstring)."""
    members = set(plan.predicates)
    reads = {b.atom.pred for rule, _ in plan.recursive_rules for b in rule.body if isinstance(b, Literal)}
    rows = sum(len(ev.relation(p)) for p in reads | members)
    return rows * ROW_COST <= thin_rounds


class ThinRounds:
    """The semi-naive rounds of one component, tuple at a time over constants (module docstring)."""

    def __init__(self, ev: "Evaluator", plan: ComponentPlan):
        self.ev = ev
        self.members = plan.predicates
        # Per member: its tuples (as constants) and those added here, for handing back.
        self.tuples: dict[str, set[tuple]] = {p: set(ev.relation(p)) for p in self.members}
        self.added: dict[str, list[tuple]] = {p: [] for p in self.members}
        # (pred, bound positions) -> {values at those positions: [tuples]}
        self.indexes: dict[tuple[str, tuple[int, ...]], dict[tuple, list[tuple]]] = {}
        self.computed: set[int] = set()  # integers computed here that the dictionary lacks
        self.keyed: dict[str, list[tuple[Callable, dict]]] = {}  # per member: its indexes, with their key functions
        # Members some rule computes a value for (an assignment): their new integers are counted.
        self.computing = {h.pred for rule, _ in plan.recursive_rules if any(isinstance(b, Comparison) and b.op == "=" for b in rule.body) for h in rule.head}
        self.checked = 0  # the memory budget was last checked at this many CHECK_EVERY computed integers
        self.dictionary_ids = ev.d.ids if self.computing else {}
        self.instances = [(rule.body[i].atom.pred, _compiled(rule, i)) for rule, positions in plan.recursive_rules for i in positions]  # type: ignore[union-attr]

    def run(self, delta: dict[str, set[tuple]], rounds: int) -> tuple[int, dict[str, set[tuple]]]:
        """Run rounds from ``delta`` (new tuples per member, already in ``tuples``), numbered on
        from ``rounds``, until the fixpoint or a round too large for this path; return the last
        round's number and the delta left to the columnar loop (empty at the fixpoint)."""
        ev = self.ev
        collecting = gc.isenabled()
        # Millions of small tuples and no cycles: the collector's full passes grow with the heap
        # and made a chain of 10^6 rounds quadratic.
        gc.disable()
        try:
            while delta:
                start = time.perf_counter()
                try:
                    new = self._round(delta)
                except _Overflow:
                    return rounds, delta
                size = sum(map(len, new.values()))
                self._commit(new)
                rounds += 1
                if size > THIN_DELTA:
                    return rounds, new
                delta = new
                if ev.progress:
                    ev.progress(rounds, size)
                if ev.profile:
                    ev.profile(RoundCost(self.members, rounds, size, join=time.perf_counter() - start, dedup=0.0, merge=0.0, runs=0))
            return rounds, delta
        finally:
            if collecting:
                gc.enable()

    def _round(self, delta: dict[str, set[tuple]]) -> dict[str, set[tuple]]:
        """The tuples one round derives that the members lack, per member (none empty)."""
        new: dict[str, set[tuple]] = {p: set() for p in self.members}
        work = [0, THIN_WORK]  # bindings visited, and how many may be
        for pred, fire in self.instances:
            rows = delta.get(pred)
            if rows:
                fire(rows, self.tuples, self._index, new, work)
        return {p: rows for p, rows in new.items() if rows}

    def _index(self, pred: str, bound: tuple[int, ...]) -> dict[tuple, list[tuple]]:
        """The tuples of ``pred`` by their values at ``bound`` (built on first use; a member's
        is kept up to date by _commit)."""
        index = self.indexes.get((pred, bound))
        if index is None:
            index = {}
            if pred in self.tuples:
                rows = list(self.tuples[pred])
                keys = map(_key_of(bound), rows)
                self.keyed.setdefault(pred, []).append((_key_of(bound), index))
            else:
                rel = self.ev.relation(pred)
                columns = [self.ev.d.decode_column(c) for c in rel.columns()] if rel.arity else []
                rows = list(zip(*columns)) if rel.arity else [()] * len(rel)
                keys = zip(*[columns[i] for i in bound]) if bound else itertools.repeat(())
            for key, row in zip(keys, rows):
                found = index.get(key)
                if found is None:
                    index[key] = [row]
                else:
                    found.append(row)
            self.indexes[(pred, bound)] = index
        return index

    def _commit(self, new: dict[str, set[tuple]]) -> None:
        """Add a round's tuples to the members and their indexes; count computed integers
        against the evaluation's bound (compute.MAX_COMPUTED), as a dictionary growth would."""
        for pred, rows in new.items():
            self.tuples[pred].update(rows)
            self.added[pred].extend(rows)
            for key, index in self.keyed.get(pred, ()):
                for row in rows:
                    k = key(row)
                    found = index.get(k)
                    if found is None:
                        index[k] = [row]
                    else:
                        found.append(row)
            if pred in self.computing:
                has, computed = self.dictionary_ids, self.computed
                for row in rows:
                    for v in row:
                        if type(v) is int and v not in has:
                            computed.add(v)
                count = len(computed) + self.ev.computed
                if count // CHECK_EVERY != self.checked:
                    self.checked = count // CHECK_EVERY
                    self.ev.budget.check(f"computing {count:,} new integers")  # what grow checks, as often as clingo
                compute.check_computed(count)

    def hand_back(self, delta: dict[str, set[tuple]]) -> tuple[dict[str, EncodedRelation], dict[str, EncodedRelation]]:
        """Encode what the rounds added (growing the dictionary once by the integers computed)
        and return it per member, with ``delta`` encoded: the columnar loop continues from it."""
        ev = self.ev
        if self.computed:
            ev.grow(np.array(sorted(self.computed), dtype=INT))
        added = {p: EncodedRelation.from_rows(ev.d, rows, ev.arities[p]) for p, rows in self.added.items() if rows}
        left = {p: EncodedRelation.from_rows(ev.d, rows, ev.arities[p]) for p, rows in delta.items() if rows}
        return added, left


@lru_cache(maxsize=1024)
def _compiled(rule: Rule, start: int) -> Callable:
    """A Python function evaluating ``rule`` with body literal ``start`` over a round's delta:
    ``fire(rows, tuples, index, new, work)`` adds to ``new[p]`` each head tuple not in
    ``tuples[p]``, and counts the bindings it visits in ``work`` (raising _Overflow past its
    limit). Its loops follow the order the columnar evaluator joins in
    (plan.body_order); each literal is looked up in ``index(pred, bound positions)``."""
    names: dict[Var, str] = {}
    constants: list = []

    def name(v: Var) -> str:
        return names.setdefault(v, f"v{len(names)}")

    def const(value) -> str:
        constants.append(value)
        return f"K[{len(constants) - 1}]"

    def expr(term) -> str:
        """Python source for a term's value (None when it has none: arith.evaluate)."""
        if isinstance(term, Var):
            return names[term]
        if isinstance(term, BinOp):
            return f"_binop({term.op!r}, {expr(term.left)}, {expr(term.right)})"
        if isinstance(term, UnaryOp):
            return f"_unary({term.op!r}, {expr(term.arg)})"
        return const(term)

    lines = ["def fire(rows, tuples, index, new, work):", " n, limit = work"]
    for k, head in enumerate(rule.head):
        lines += [f" have{k} = tuples[{head.pred!r}]", f" out{k} = new[{head.pred!r}]"]
    order = body_order(rule, start)
    header = len(lines)  # the indexes are fetched here, once a call
    depth = 1

    def emit(line: str) -> None:
        lines.append(" " * depth + line)

    def match(atom, row: str, skip: tuple = ()) -> None:
        """Bind the atom's unbound variables from ``row``; skip the row unless the rest match."""
        for j, a in enumerate(atom.args):
            if j in skip or (isinstance(a, Var) and a.name == "_"):
                continue
            if isinstance(a, Var) and a not in names:
                emit(f"{name(a)} = {row}[{j}]")
            else:
                emit(f"if {row}[{j}] != {expr(a)}: continue")

    def loop(source: str, row: str) -> None:
        nonlocal depth
        emit(f"for {row} in {source}:")
        depth += 1
        emit("n += 1")
        emit("if n > limit: raise Overflow")

    loop("rows", "r")
    match(order[0].atom, "r")  # type: ignore[union-attr]
    for k, element in enumerate(order[1:]):
        if isinstance(element, Literal):
            atom = element.atom
            bound = tuple(i for i, a in enumerate(atom.args) if not isinstance(a, Var) or a in names)
            key = "(" + "".join(expr(atom.args[i]) + ", " for i in bound) + ")"
            lines.insert(header, f" idx{k} = index({atom.pred!r}, {bound!r})")
            if element.positive:
                loop(f"idx{k}.get({key}, ())", f"r{k}")
                match(atom, f"r{k}", bound)
            else:
                emit(f"if {key} in idx{k}: continue")  # safe: every named argument is bound
            continue
        target = _assigned(element, set(names))
        if target is not None:
            term = element.right if target == element.left else element.left
            if isinstance(term, Interval):
                loop(f"_interval({expr(term.low)}, {expr(term.high)})", name(target))
            else:
                emit(f"{name(target)} = {expr(term)}")
                emit(f"if {names[target]} is None: continue")
        elif any(isinstance(t, Interval) for t in (element.left, element.right)):
            binding = "{" + ", ".join(f"{const(v)}: {n}" for v, n in names.items()) + "}"
            emit(f"if not _holds({const(element)}, {binding}): continue")
        else:
            emit(f"a = {expr(element.left)}")
            emit(f"b = {expr(element.right)}")
            emit(f"if a is None or b is None or not ((0, a) if type(a) is int else (1, a)) {_OPS[element.op]} ((0, b) if type(b) is int else (1, b)): continue")
    for k, head in enumerate(rule.head):
        emit("t = (" + "".join(expr(a) + ", " for a in head.args) + ")")
        emit(f"if t not in have{k}: out{k}.add(t)")
    lines.append(" work[0] = n")
    scope = {"K": constants, "Overflow": _Overflow, "_binop": _binop, "_unary": _unary, "_interval": _interval, "_holds": _holds}
    exec("\n".join(lines), scope)  # noqa: S102 - source built above from the rule's structure only
    return scope["fire"]


_OPS = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _binop(op: str, a, b):
    return arith.apply(op, a, b) if type(a) is int and type(b) is int else None


def _unary(op: str, a):
    return None if type(a) is not int else arith.wrap(-a if op == "-" else abs(a))


def _interval(low, high) -> range:
    return range(low, high + 1) if type(low) is int and type(high) is int else range(0)


def _key_of(bound: tuple[int, ...]) -> Callable[[tuple], tuple]:
    """The values of a tuple at ``bound``, as a tuple."""
    if len(bound) == 1:
        i = bound[0]
        return lambda row: (row[i],)
    return (lambda row: ()) if not bound else operator.itemgetter(*bound)


def _assigned(cmp: Comparison, bound: set[Var]) -> Var | None:
    """The variable ``cmp`` binds (``V = term`` with V unbound), as compute.is_assignment decides."""
    if cmp.op != "=":
        return None
    for side in (cmp.left, cmp.right):
        if isinstance(side, Var) and side.name != "_" and side not in bound:
            return side
    return None


def _holds(cmp: Comparison, binding: dict) -> bool:
    """A comparison as compute.compare evaluates it: values in the order of constants, a term
    without a value fails; against an interval, membership (``=``) or its negation."""
    left, right = cmp.left, cmp.right
    if isinstance(left, Interval) or isinstance(right, Interval):
        interval, other = (left, right) if isinstance(left, Interval) else (right, left)
        value = arith.evaluate(other, binding)
        if value is None:
            return False
        low, high = arith.evaluate(interval.low, binding), arith.evaluate(interval.high, binding)
        inside = type(value) is int and type(low) is int and type(high) is int and low <= value <= high
        return inside if cmp.op == "=" else not inside
    a, b = arith.evaluate(left, binding), arith.evaluate(right, binding)
    if a is None or b is None:
        return False
    return cmp.holds(a, b)


__all__ = ["THIN_DELTA", "THIN_WORK", "ThinRounds", "eligible", "worth_entering"]
