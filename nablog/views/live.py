"""Maintenance rules evaluated tuple at a time over relations kept in place (seed 001, §3.2).

Algorithm 1's rules read the old state of the big relations only through a small delta (``del__r``,
``ins__r``, ``red__p``) and bound arguments, so a commit's work is a few index probes — if the
relations are not copied or re-sorted per commit. The column engine (``engines/python.py``)
encodes, sorts and indexes whole relations per call; a monitor that runs once per commit keeps
its model here instead: :class:`Relation`\\ s with hash indexes, updated in place with each
commit's net differentials, and a :class:`LivePlan` per maintenance program, planned once.

(N1) and (N′), ``new__r :- r, not del__r.``, would copy ``r`` each commit: ``new__r`` is instead a
:class:`NewState` — ``r`` seen without ``del__r``, plus the tuples (N2), (N3) and (N″) add.

Only plain literals and comparisons between bound terms are planned here (what maintenance rules
of ordinary Datalog with negation contain); :class:`Unsupported` says to use the engine.

>>> from nablog.lang import parse
>>> from nablog.transforms.maintenance import maintenance_rules
>>> plan = LivePlan(maintenance_rules(parse("closure(X,Y) :- edge(X,Y). closure(X,Y) :- edge(X,Z), closure(Z,Y).")))
>>> env = {"edge": Relation({("a", "b"), ("b", "c")}), "closure": Relation({("a", "b"), ("b", "c"), ("a", "c")}),
...        "ins__edge": Relation({("c", "d")}), "del__edge": Relation({("a", "b")})}
>>> out = plan.run(env)
>>> sorted(out["plus__closure"]), sorted(out["minus__closure"])
([('b', 'd'), ('c', 'd')], [('a', 'b'), ('a', 'c')])
"""

from __future__ import annotations

from operator import itemgetter
from typing import Callable, Iterable, Iterator, Mapping

from ..lang import Comparison, Literal, Program, Rule, Var, analyze
from ..lang.ast import BinOp, Interval, UnaryOp
from ..transforms.propagation import DEL, NEW


class Unsupported(Exception):
    """A rule the tuple-at-a-time plans do not cover (aggregates, arithmetic, assignments)."""


class OverBudget(Exception):
    """A :class:`Budget` of derived rows is spent: the caller does the work another way."""


class Budget:
    """How many more rows a :meth:`LivePlan.run` (and its :meth:`~LivePlan.resume`\\ s) may add
    before it raises :class:`OverBudget`; counted after each rule's pass over at most
    ``Budget.CHUNK`` rows of its delta, so it is overshot by at most one such pass."""

    CHUNK = 4096

    __slots__ = ("left",)

    def __init__(self, rows: int):
        self.left = rows

    def spend(self, rows: int) -> None:
        self.left -= rows
        if self.left < 0:
            raise OverBudget


_KEYS: dict[tuple[int, ...], Callable[[tuple], tuple]] = {}


def key_of(positions: tuple[int, ...]) -> Callable[[tuple], tuple]:
    """The function giving a row's key on ``positions`` (a tuple; one made per positions, in C:
    a generator building the key was a fifth of an index update)."""
    key = _KEYS.get(positions)
    if key is None:
        if len(positions) == 1:
            key = _single(positions[0])
        elif positions:
            key = itemgetter(*positions)
        else:
            key = lambda row: ()  # noqa: E731
        key = _KEYS[positions] = key
    return key


def _single(i: int) -> Callable[[tuple], tuple]:
    return lambda row: (row[i],)


class Relation:
    """A set of tuples with hash indexes on column positions, built on first use and kept current."""

    __slots__ = ("rows", "indexes")

    def __init__(self, rows: Iterable[tuple] = ()):
        self.rows: set[tuple] = set(rows)
        self.indexes: dict[tuple[int, ...], dict[tuple, set[tuple]]] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def __contains__(self, row: tuple) -> bool:
        return row in self.rows

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)

    def lookup(self, positions: tuple[int, ...], key: tuple) -> Iterable[tuple]:
        index = self.indexes.get(positions)
        if index is None:
            index = self.indexes[positions] = {}
            key_on = key_of(positions)
            for row in self.rows:
                index.setdefault(key_on(row), set()).add(row)
        return index.get(key, ())

    def add(self, row: tuple) -> bool:
        if row in self.rows:
            return False
        self.rows.add(row)
        self._indexed(row)
        return True

    def _indexed(self, row: tuple) -> None:
        for positions, index in self.indexes.items():
            index.setdefault(key_of(positions)(row), set()).add(row)

    def discard(self, row: tuple) -> None:
        if row not in self.rows:
            return
        self.rows.discard(row)
        self._unindexed(row)

    def _unindexed(self, row: tuple) -> None:
        for positions, index in self.indexes.items():
            key = key_of(positions)(row)
            bucket = index[key]
            bucket.discard(row)
            if not bucket:
                del index[key]


class Levelled(Relation):
    """A kept relation of a recursive layer: ONE dict row -> level, at once the row set and the
    mapping ``levels[p]`` of :mod:`nablog.views.deletions` (a separate set and level dict cost a
    second hash entry per tuple: ~380 bytes a pair on a 24.7 M-pair closure, now ~180).

    A level set for an absent row (the commit's evaluation numbering a row it adds to
    ``new__p``) waits in ``pending`` until the row is added when the commit is applied: the
    relation is the old state while the maintenance rules read it. Deleting a level deletes the
    row.

    >>> rel = Levelled({("a", "b"): 0})
    >>> rel[("a", "c")] = 1025  # numbered during a commit: not yet a row
    >>> ("a", "c") in rel, rel.add(("a", "c")), rel[("a", "c")], sorted(rel.lookup((0,), ("a",)))
    (False, True, 1025, [('a', 'b'), ('a', 'c')])
    >>> del rel[("a", "b")]
    >>> sorted(rel), sorted(rel.lookup((0,), ("a",)))
    ([('a', 'c')], [('a', 'c')])
    """

    __slots__ = ("pending",)

    def __init__(self, levels: "dict[tuple, int] | None" = None):
        self.rows: dict[tuple, int] = dict(levels or {})  # type: ignore[assignment]
        self.indexes = {}
        self.pending: dict[tuple, int] = {}

    @classmethod
    def from_columns(cls, values: list, rounds: "list[tuple[int, list]]", positions: Iterable[tuple[int, ...]] = ()) -> "Levelled":
        """The rows of an evaluation's rounds (``(level, id columns)`` pairs, ids into
        ``values``), with an index per bound-positions tuple in ``positions``, built column-wise
        (numpy groups the ids; no per-row key tuple is made)."""
        import itertools

        import numpy as np

        lookup = np.empty(len(values), dtype=object)
        lookup[:] = values
        arity = len(rounds[0][1]) if rounds else 0
        columns = [np.concatenate([cols[i] for _, cols in rounds]) for i in range(arity)]
        # Decoded through one object array: equal constants are one object, shared by all rows.
        rows = list(zip(*(lookup[c].tolist() for c in columns)))
        rel = cls()
        levels = itertools.chain.from_iterable(itertools.repeat(level, len(cols[0])) for level, cols in rounds)
        rel.rows = dict(zip(rows, levels))
        for where in positions:
            if not rows:
                rel.indexes[where] = {}
                continue
            keys = np.stack([columns[i] for i in where], axis=1) if len(where) > 1 else columns[where[0]]
            if len(where) > 1:
                order = np.lexsort(keys.T[::-1])
                sorted_keys = keys[order]
                starts = np.flatnonzero(np.r_[True, np.any(sorted_keys[1:] != sorted_keys[:-1], axis=1)])
            else:
                order = np.argsort(keys, kind="stable")
                sorted_keys = keys[order]
                starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
            ends = np.r_[starts[1:], len(order)].tolist()
            # Reordered as an object array: a list through order.tolist() made a Python int per row.
            grouped = np.fromiter(rows, dtype=object, count=len(rows))[order]
            index = rel.indexes[where] = {}
            for start, end in zip(starts.tolist(), ends):
                bucket = grouped[start:end]
                index[tuple(bucket[0][i] for i in where)] = set(bucket)
        return rel

    def __getitem__(self, row: tuple) -> int:
        return self.rows[row]

    def get(self, row: tuple, default=None):
        return self.rows.get(row, default)

    def __setitem__(self, row: tuple, level: int) -> None:
        if row in self.rows:
            self.rows[row] = level
        else:
            self.pending[row] = level

    def __delitem__(self, row: tuple) -> None:
        self.discard(row)

    def add(self, row: tuple) -> bool:
        if row in self.rows:
            return False
        self.rows[row] = self.pending.pop(row)  # every row a commit adds was numbered first
        self._indexed(row)
        return True

    def discard(self, row: tuple) -> None:
        if row in self.rows:
            del self.rows[row]
            self._unindexed(row)


class NewState:
    """``new__r``: the old ``r`` without ``del__r`` (never copied), and the tuples added to it."""

    __slots__ = ("old", "deleted", "added")

    def __init__(self, old: Relation, deleted: Relation):
        self.old, self.deleted, self.added = old, deleted, Relation()

    def __len__(self) -> int:
        return len(self.old) + len(self.added)

    def __contains__(self, row: tuple) -> bool:
        return row in self.added or (row in self.old and row not in self.deleted)

    def __iter__(self) -> Iterator[tuple]:
        yield from (r for r in self.old if r not in self.deleted)
        yield from self.added

    def lookup(self, positions: tuple[int, ...], key: tuple) -> Iterable[tuple]:
        kept = self.old.lookup(positions, key)
        if len(self.deleted):  # else the old bucket as it is: an insert-only commit copies nothing
            kept = [r for r in kept if r not in self.deleted]
        added = self.added.lookup(positions, key)
        return [*kept, *added] if added else kept

    def add(self, row: tuple) -> bool:
        return False if row in self else self.added.add(row)


_EMPTY = Relation()


class _Body:
    """One rule body in one join order: steps over slot-numbered variables."""

    def __init__(self, rule: Rule, order: list, slots: dict[Var, int]):
        bound: set[Var] = set()
        self.steps = []
        for element in order:
            if isinstance(element, Comparison):
                self.steps.append(("cmp", element, _term(element.left, slots), _term(element.right, slots)))
                continue
            atom = element.atom
            positions, key, free, checks = [], [], [], []
            for i, t in enumerate(atom.args):
                if isinstance(t, Var) and t.name == "_":
                    continue
                if isinstance(t, Var) and t in bound:
                    positions.append(i)
                    key.append((True, slots[t]))
                elif isinstance(t, Var):
                    if any(f[1] == slots[t] for f in free):
                        checks.append((i, slots[t]))
                    else:
                        free.append((i, slots[t]))
                else:
                    positions.append(i)
                    key.append((False, t))
            if not element.positive and (free or checks):
                raise Unsupported(f"{element}: a negated literal with a local variable")
            whole = len(positions) == len(atom.args)
            self.steps.append(("pos" if element.positive else "neg", atom.pred, tuple(positions), tuple(key), tuple(free), tuple(checks), whole))
            bound.update(v for v in atom.variables() if v.name != "_")
        self.head = tuple(_term(t, slots) for t in rule.head[0].args)
        self.pred = rule.head[0].pred
        self.positives = tuple(s[1] for s in self.steps if s[0] == "pos")
        self.first_two = (self.positives[0], self.positives[1] if len(self.positives) > 1 else None)
        self.others = self.positives[1:]
        self.needs = frozenset(self.positives)
        self.solutions = _compile(self.steps, self.head)


def _compile(steps: list, head: tuple, emit: "tuple[int, ...] | None" = None, with_head: bool = False) -> "Callable[[dict, list | None], list]":
    """One body as a Python function of nested loops: ``(env, first) -> head tuples``, ``first``
    replacing the first step's relation (a semi-naive delta). Generated once per rule and join
    order, because interpreting the steps per tuple (a generator per step) was most of a commit's
    time. Constants, predicate names and comparisons reach it as default arguments (``c0``, ...):
    no text of the program enters the generated source, only slot numbers and positions.

    With ``emit`` (step numbers), a generator instead, yielding per derivation the rows those
    steps matched (after the head tuple, ``with_head``): a caller that needs only the first
    derivation stops there (views/deletions.py)."""
    names: dict[int, str] = {}
    consts: dict[str, object] = {}

    def const(value) -> str:
        names.setdefault(id(value), f"c{len(names)}")
        consts[names[id(value)]] = value
        return names[id(value)]

    value = lambda b, s: f"v{s}" if b else const(s)  # noqa: E731
    key = lambda parts: "(" + "".join(value(b, s) + ", " for b, s in parts) + ")"  # noqa: E731
    lines = ["out = []", "append = out.append"] if emit is None else []
    for k, step in enumerate(steps):
        if step[0] != "cmp":
            lines.append(f"rel{k} = env.get({const(step[1])}, _EMPTY)")
            # Membership in a plain relation straight on its set or dict (C), not through
            # __contains__: an insert into a dense closure tests ~5,000 rows against it.
            lines.append(f"in{k} = rel{k}.rows if type(rel{k}) in _PLAIN else rel{k}")
    depth = 0
    pad = lambda: "    " * depth  # noqa: E731
    for k, step in enumerate(steps):
        if step[0] == "cmp":
            _, cmp, left, right = step
            lines.append(f"{pad()}if {const(cmp.holds)}({value(*left)}, {value(*right)}):")
            depth += 1
            continue
        kind, _, positions, probe, free, checks, whole = step
        probe = key(probe)
        if kind == "neg":
            test = f"{probe} not in in{k}" if whole else f"not rel{k}.lookup({const(positions)}, {probe})"
            lines.append(f"{pad()}if {test}:")
            depth += 1
            continue
        if whole:
            rows = f"(({probe},) if {probe} in in{k} else ())"
        elif positions:
            rows = f"rel{k}.lookup({const(positions)}, {probe})"
        else:
            rows = f"rel{k}"
        if k == 0:
            lines.append(f"rows0 = {rows} if first is None else first")
            if positions:
                got = "(" + "".join(f"r0[{i}], " for i in positions) + ")"
                lines.append(f"if first is not None: rows0 = [r0 for r0 in first if {got} == {probe}]")
            rows = "rows0"
        lines.append(f"{pad()}for r{k} in {rows}:")
        depth += 1
        for i, s in free:
            lines.append(f"{pad()}v{s} = r{k}[{i}]")
        if checks:
            lines.append(f"{pad()}if " + " and ".join(f"r{k}[{i}] == v{s}" for i, s in checks) + ":")
            depth += 1
    if emit is None:
        lines.append(f"{pad()}append({key(head)})")
        lines.append("return out")
    else:
        lines.append(f"{pad()}yield (" + (key(head) + ", " if with_head else "") + "".join(f"r{k}, " for k in emit) + ")")
    params = "".join(f", {n}={n}" for n in consts)
    source = f"def body(env, first, _EMPTY=_EMPTY, _PLAIN=_PLAIN{params}):\n" + "\n".join("    " + line for line in lines) + "\n"
    scope = {"_EMPTY": _EMPTY, "_PLAIN": (Relation, Levelled), **consts}
    exec(compile(source, "<live plan>", "exec"), scope)  # noqa: S102 - our own generated loops
    return scope["body"]


def _term(t, slots: dict[Var, int]) -> tuple[bool, object]:
    if isinstance(t, Var):
        if t.name == "_" or t not in slots:
            raise Unsupported(f"variable {t} not bound by a positive literal")
        return (True, slots[t])
    if isinstance(t, (BinOp, UnaryOp, Interval)):
        raise Unsupported(f"computed term {t}")
    return (False, t)


def _orders(rule: Rule, start: int, limit: int = 4) -> list[list]:
    """Join orders from positive literal ``start``: each next literal one sharing most bound
    variables, every tie taken both ways (up to ``limit`` orders: which is cheaper depends on the
    relations' sizes at run time — in (R) over a dense closure, probing ``del__p`` first instead
    of ``new__edge`` cost 1,000x); negated literals and comparisons as soon as their variables
    are bound."""
    positives = [e for e in rule.body if isinstance(e, Literal) and e.positive]
    tests = [e for e in rule.body if not (isinstance(e, Literal) and e.positive)]
    out: list[list] = []

    def extend(order: list, bound: set, todo: list, tests: list) -> None:
        if not todo:
            if tests:
                raise Unsupported(f"{tests[0]}: its variables are not bound by positive literals")
            out.append(order)
            return
        best = max(len(set(e.variables()) & bound) for e in todo)
        for current in [e for e in todo if len(set(e.variables()) & bound) == best]:
            if len(out) >= limit:
                return
            now = bound | set(current.variables())
            ready = [t for t in tests if set(t.variables()) - {Var("_")} <= now]
            extend(order + [current] + ready, now, [e for e in todo if e is not current], [t for t in tests if t not in ready])

    first = positives[start]
    bound = set(first.variables())
    ready = [t for t in tests if set(t.variables()) - {Var("_")} <= bound]
    extend([first] + ready, bound, positives[:start] + positives[start + 1:], [t for t in tests if t not in ready])
    return out


def derivations(body: "_Body", preds: "Iterable[str]", with_head: bool = False) -> "tuple[Callable[[dict, list | None], Iterator[tuple]], tuple[str, ...]]":
    """``body`` as a generator function of its derivations, ``(env, first) -> rows per
    derivation`` (the rows its positive literals of ``preds`` matched, after the head tuple
    ``with_head``), and those literals' predicates, in the same order."""
    emit = tuple(k for k, s in enumerate(body.steps) if s[0] == "pos" and s[1] in preds)
    return _compile(body.steps, body.head, emit, with_head), tuple(body.steps[k][1] for k in emit)


def bodies_from(rule: Rule, start: int) -> list["_Body"]:
    """``rule``'s planned join orders from its positive literal number ``start`` (call one with
    :func:`cheapest`: ``cheapest(bodies, env).solutions(env, rows)``, ``rows`` for that literal)."""
    slots = {v: i for i, v in enumerate(dict.fromkeys(v for b in rule.body for v in b.variables() if v.name != "_"))}
    return [_Body(rule, order, slots) for order in _orders(rule, start)]


def probes(bodies: Iterable["_Body"], virtual: dict[str, str]) -> set[tuple[str, tuple[int, ...]]]:
    """The (relation, bound positions) pairs ``bodies`` look up, a view named in ``virtual`` as
    the relation it shows."""
    return {(virtual.get(s[1], s[1]), s[2]) for body in bodies for s in body.steps if s[0] != "cmp" and s[2] and not s[6]}


def cheapest(bodies: list["_Body"], env: dict) -> "_Body":
    """Of orders of one rule, the one whose first and second relations are smallest now."""
    if len(bodies) == 1:
        return bodies[0]
    get = env.get
    best, least = bodies[0], None
    for body in bodies:
        first, second = body.first_two
        sizes = (len(get(first, _EMPTY)), len(get(second, _EMPTY)) if second else 0)
        if least is None or sizes < least:
            best, least = body, sizes
    return best


def chosen(groups: Iterable[list["_Body"]], sizes: "Mapping[str, int] | None", virtual: dict[str, str]) -> list["_Body"]:
    """Per group of orders of one rule, the order :func:`cheapest` takes when the relations have
    ``sizes`` (a view in ``virtual`` the size of the relation it shows; any other relation — a
    commit's delta — size 1); every order when ``sizes`` is None."""
    if sizes is None:
        return [b for bodies in groups for b in bodies]
    env = {p: range(sizes.get(virtual.get(p, p), 1)) for bodies in groups for b in bodies for p in b.positives}
    return [cheapest(bodies, env) for bodies in groups]


def _virtual(rule: Rule) -> str | None:
    """The ``r`` of (N1)/(N′) ``new__r(V..) :- r(V..), not del__r(V..).``, else None."""
    head, body = rule.head[0], rule.body
    if not head.pred.startswith(NEW) or len(body) != 2 or not all(isinstance(b, Literal) for b in body):
        return None
    r = head.pred[len(NEW):]
    old, deleted = body
    same = old.atom.args == deleted.atom.args == head.args and len(set(head.args)) == len(head.args) and all(isinstance(a, Var) for a in head.args)
    return r if same and old.positive and old.atom.pred == r and not deleted.positive and deleted.atom.pred == DEL + r else None


class LivePlan:
    """A stratified maintenance program planned once: per rule, a join order from each positive
    literal; :meth:`run` evaluates it semi-naively over an environment of relations."""

    def __init__(self, program: Program):
        for rule in program.rules:
            if len(rule.head) != 1 or any(not isinstance(b, (Literal, Comparison)) for b in rule.body):
                raise Unsupported(f"{rule}: only literals and comparisons are planned here")
            if not any(isinstance(b, Literal) and b.positive for b in rule.body):
                raise Unsupported(f"{rule}: no positive literal")
        stratum = analyze(program).stratum  # with (N1)/(N′): new__r above del__r
        self.virtual = {NEW + r: r for r in (_virtual(rule) for rule in program.rules) if r}
        # Per rule: per first literal its orders, and all of them.
        self.strata: list[tuple[frozenset[str], list[tuple[list[list[_Body]], list[_Body]]]]] = []
        self.reads: list[dict[str, tuple[set, set]]] = []
        self.heads = frozenset(r.head[0].pred for r in program.rules)
        for level in sorted({stratum[r.head[0].pred] for r in program.rules}):
            rules = [r for r in program.rules if stratum[r.head[0].pred] == level and not (r.head[0].pred in self.virtual and _virtual(r))]
            heads = frozenset(r.head[0].pred for r in program.rules if stratum[r.head[0].pred] == level)
            planned = []
            for rule in rules:
                count = sum(1 for b in rule.body if isinstance(b, Literal) and b.positive)
                starts = [bodies_from(rule, i) for i in range(count)]
                planned.append((starts, [b for orders in starts for b in orders]))
            self.strata.append((heads, planned))
            # Per head, what its rules read, for resume: positively (new__r reads r) and negatively
            # (new__r reads not del__r).
            reads: dict[str, tuple[set, set]] = {p: (set(), set()) for p in heads}
            for rule in program.rules:
                if rule.head[0].pred in heads:
                    for b in rule.body:
                        if isinstance(b, Literal):
                            reads[rule.head[0].pred][0 if b.positive else 1].add(b.atom.pred)
            self.reads.append(reads)

    def probes(self, sizes: "Mapping[str, int] | None" = None) -> set[tuple[str, tuple[int, ...]]]:
        """The (relation, bound positions) pairs the plans look up, ``new__r`` as ``r``: the
        indexes a caller keeping the relations can build before the first commit. With
        ``sizes`` (of the kept relations), only those of the join orders :meth:`run` takes with
        them: on a dense closure an index is ~40 bytes a pair, and one per probe position of
        every planned order doubled the kept state."""
        groups = [group for _, planned in self.strata for starts, bodies in planned for group in (bodies, *starts)]
        return probes(chosen(groups, sizes, self.virtual), self.virtual)

    def run(self, env: dict, note: "dict[str, Callable[[tuple], None]] | None" = None, budget: Budget | None = None) -> dict:
        """Evaluate over ``env`` (predicate to :class:`Relation`: the old state and the inputs);
        returns a copy of ``env`` with every predicate of the program added (given rows of a
        predicate with rules are kept, never changed in place). ``note[p]``, for the predicates
        given, is called with each row added to ``p``, in the order rows are derived (each from
        rows added before it or given). ``budget`` bounds the rows this run and its resumes add
        (:class:`OverBudget` past it)."""
        note = note or {}
        env = _Result(env)
        env.budget = budget
        for heads, planned in self.strata:
            for pred in heads:
                if pred not in self.virtual and pred in env:  # rows given for a predicate with rules (RoD's magic facts) are kept
                    env.given[pred] = env[pred].rows
            self._stratum(heads, planned, env, note)
        return env

    def _stratum(self, heads: frozenset[str], planned: list, env: "_Result", note: dict) -> None:
        """One stratum evaluated semi-naively over ``env`` (its heads made afresh)."""
        for pred in heads:
            if pred in self.virtual:
                env[pred] = NewState(env.get(self.virtual[pred], _EMPTY), env.setdefault(DEL + self.virtual[pred], Relation()))
            else:
                env[pred] = Relation(env.given.get(pred, ()))
        delta: dict[str, list] = {p: [] for p in heads}
        # Relations empty now (a delta of a commit that has none): a rule reading one is left out
        # of the first pass (one of the stratum's own heads gets its rows in a later round).
        read = frozenset().union(*(bodies[0].needs for _, bodies in planned))
        empty = {p for p in read if not len(env.get(p, _EMPTY))}
        for _, bodies in planned:
            if not empty.isdisjoint(bodies[0].needs):
                continue
            # The first pass starts each rule from its smallest positive literal.
            body = cheapest(bodies, env)
            _derive(body, env, None, delta[body.pred], note.get(body.pred))
        self._continue(planned, env, delta, {}, note)

    def _continue(self, planned: list, env: dict, source: dict, grown: dict, note: dict) -> None:
        """Semi-naive rounds: each rule from each positive literal with ``source`` rows (new rows
        of that literal), until no rule derives a new head row; those rows are added to ``grown``."""
        while any(source.values()):
            fresh: dict[str, list] = {}
            for starts, _ in planned:
                for orders in starts:
                    rows = source.get(orders[0].positives[0])
                    if not rows or not all(len(env.get(p, _EMPTY)) for p in orders[0].others):
                        continue  # no new rows, or another positive literal is empty
                    body = cheapest(orders, env)
                    _derive(body, env, rows, fresh.setdefault(body.pred, []), note.get(body.pred))
            for pred, rows in fresh.items():
                if rows:
                    grown.setdefault(pred, []).extend(rows)
            source = fresh

    def resume(self, env: dict, added: "dict[str, Iterable[tuple]]") -> dict[str, list]:
        """Continue :meth:`run` after ``added`` (predicate to rows) joins relations of its result
        ``env``, instead of evaluating again (seed 001's Algorithm 3 alternates the maintenance
        rules and Q while new questions and answers arrive; both only grow). ``env`` is updated in
        place; returns the rows new to each relation (given and derived).

        A stratum that reads the grown relations only positively is monotone in them: it is
        continued semi-naively from the new rows. One that reads a grown relation negatively (or
        ``new__r`` over a grown ``del__r``), or any relation evaluated again below it, is evaluated
        again (its heads may lose rows then; such a head reports only the rows it gained)."""
        grown: dict[str, list] = {}
        if not isinstance(env, _Result):
            raise TypeError("resume continues what run returned")
        for pred, rows in added.items():
            rel = env.get(pred)
            if rel is None:
                rel = env[pred] = Relation()
            new = [r for r in rows if rel.add(r)]
            if new and pred in self.heads and pred not in self.virtual:  # kept if its stratum is evaluated again
                env.given[pred] = set(env.given.get(pred, ())) | set(new)
            if new:
                grown[pred] = new
        redone: set[str] = set()
        for (heads, planned), reads in zip(self.strata, self.reads):
            # Heads evaluated again: those reading a grown relation negatively or one evaluated
            # again at all, and the heads that read them.
            changed = set(grown) | redone
            again = {p for p, (pos, neg) in reads.items() if neg & changed or pos & redone}
            while True:
                more = {p for p, (pos, neg) in reads.items() if p not in again and (pos | neg) & again}
                if not more:
                    break
                again |= more
            source = {p: rows for p, rows in grown.items() if p not in heads}
            for pred in heads - again:
                if pred in self.virtual:  # new__r gains the new rows of r (del__r did not grow)
                    new = env[pred]
                    rows = [r for r in grown.get(self.virtual[pred], ()) if r not in new.deleted and r not in new.added]
                    if rows:
                        grown[pred] = source[pred] = rows
                elif pred in grown:
                    source[pred] = list(grown[pred])
            self._continue([e for e in planned if e[1][0].pred not in again], env, source, grown, {})
            if again:
                before = {p: env.get(p, _EMPTY) for p in again if p not in self.virtual}
                self._stratum(frozenset(again), [e for e in planned if e[1][0].pred in again], env, {})
                redone |= again
                for pred, old in before.items():
                    rows = [r for r in env[pred] if r not in old]
                    if rows:
                        grown[pred] = rows
        return grown


class _Result(dict):
    """What :meth:`LivePlan.run` returns: the relations by predicate, and the rows that were given
    for predicates with rules (kept when :meth:`LivePlan.resume` evaluates a stratum again)."""

    __slots__ = ("given", "budget")

    def __init__(self, env: dict):
        super().__init__(env)
        self.given: dict[str, set] = {}
        self.budget: Budget | None = None


def _derive(body, env: dict, rows: list | None, found: list, noted) -> None:
    """Add the heads ``body`` derives (from ``rows`` of its first literal, or from all of it) to
    their relation in ``env``; the ones new to it go to ``found`` and to ``noted`` when given.
    Under a budget, ``rows`` go in chunks, each spending what it added."""
    target = env[body.pred]
    budget = env.budget if type(env) is _Result else None
    if budget is not None and rows is not None and len(rows) > Budget.CHUNK:
        for start in range(0, len(rows), Budget.CHUNK):
            _derive(body, env, rows[start:start + Budget.CHUNK], found, noted)
        return
    before = len(found)
    for row in body.solutions(env, rows):
        if target.add(row):
            found.append(row)
            if noted:
                noted(row)
    if budget is not None:
        budget.spend(len(found) - before)


__all__ = ["Budget", "Levelled", "LivePlan", "NewState", "OverBudget", "Relation", "Unsupported", "bodies_from", "cheapest", "chosen", "derivations", "probes"]
