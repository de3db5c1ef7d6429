"""The rationality postulates KB*1–KB*7.3 (seed 003, Def. 3) as checks of one view-update result.

A deductive database is a knowledge base (seed 003, §3): the rules are the immutable part
``KB_I``, the base facts the updatable part ``KB_U``, the constraints ``KB_IC``. A request ``α``
(atoms to insert and delete) revises it; a realization gives the result ``KB * α``: the same
rules and constraints over the changed base facts. Each postulate is read in that setting:

- **KB*1 closure** — the result is a knowledge base: the changes are ground base facts, inserted
  ones absent and deleted ones present before (rules and constraints are not touched).
- **KB*2 weak success** — if ``α`` is consistent with ``KB_I ∪ KB_IC`` (some base facts make it
  hold with every constraint), ``α`` holds in the result.
- **KB*3.1 inclusion** — ``KB * α ⊆ Cn(KB ∪ α)``: nothing enters but what ``α`` calls for; read
  as: every inserted fact is needed (the result without it fails ``α`` or a constraint).
- **KB*3.2 immutable inclusion** — ``KB_I ⊆ Cn(KB * α)``: the result's model is the rules'
  model over its base facts (its derived facts are exactly what the rules derive).
- **KB*4.1 vacuity 1** — if ``α`` is inconsistent with ``KB_I ∪ KB_IC``, the result is ``KB``: the
  method proposes nothing.
- **KB*4.2 vacuity 2** — if ``KB ∪ α`` is consistent (``α`` holds and no constraint fails), the
  result is ``KB``: the only realization is the empty change.
- **KB*5 consistency** — if ``α`` is consistent with ``KB_I ∪ KB_IC``, every constraint holds in
  the result.
- **KB*6 preservation** — KB-equivalent requests have the same results; checked with ``β`` the
  same request on a copy ``alias__p(X) :- p(X).`` of each requested view (Def. 2: for every set of
  facts ``E``, ``KB_I ∪ E ⊢ p(t)`` iff ``KB_I ∪ E ⊢ alias__p(t)``).
- **KB*7.1 strong relevance** — every change is needed: undoing any one makes ``α`` or a
  constraint fail (the strong minimality test, Def. 15, 19).
- **KB*7.2 relevance** — for each deleted fact ``β`` there is a ``KB'`` with
  ``KB * α ⊆ KB' ⊆ KB ∪ α``, consistent with ``α``, that ``β`` makes inconsistent.
- **KB*7.3 weak relevance** — the same without ``KB * α ⊆ KB'``.

KB*7.2 and 7.3 search the sets between the result and ``KB ∪ α`` exhaustively: they are meant
for the small databases of property tests (``max_search`` bounds 7.3's search; past it 7.3 is
answered by 7.2, which implies it).

>>> from nablog import Database
>>> db = Database.from_text("#base b/0. p :- a, e. q :- a, f. p :- b, f. q :- b, e. p :- q. q :- a. a. e. f. :- b.")
>>> proposal = db.propose("-p.", method="tableaux")
>>> check_postulates(db, "-p.", proposal[0], proposal)
{'KB*1': True, 'KB*2': True, 'KB*3.1': True, 'KB*3.2': True, 'KB*4.1': True, 'KB*4.2': True, 'KB*5': True, 'KB*7.1': True, 'KB*7.2': True, 'KB*7.3': True}
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Set
from typing import Iterable, Protocol

from ..engines import PythonEngine
from ..engines.violations import find_violations
from ..lang import SPLIT_PREFIX, Atom, Program, Rule, Literal, Var, shown_name
from .realization import Proposal, Realization
from .request import Request, parse_request



class KnowledgeBase(Protocol):
    """What the checks read of a :class:`nablog.Database` (stated here: the solver room sits
    below the database, and imports nothing from it)."""

    program: Program
    rules: Program

    @property
    def facts(self) -> Mapping[str, Set]: ...

    def python_model(self) -> Mapping[str, Set]: ...

    def propose(self, request, method: str = "asp", **options) -> Proposal: ...

POSTULATES = ("KB*1", "KB*2", "KB*3.1", "KB*3.2", "KB*4.1", "KB*4.2", "KB*5", "KB*6", "KB*7.1", "KB*7.2", "KB*7.3")


class _State:
    """Evaluates the database's rules and constraints over changed base facts."""

    def __init__(self, db: KnowledgeBase, request: Request):
        self.rules = db.rules
        self.facts = db.facts
        self.request = request
        self.engine = PythonEngine()
        self.derived = db.rules.derived

    def stored(self, atom: Atom) -> tuple[str, tuple]:
        pred = SPLIT_PREFIX + atom.pred if atom.pred in self.derived else atom.pred
        return pred, tuple(atom.args)

    def facts_after(self, insert: Iterable[Atom], delete: Iterable[Atom]) -> dict[str, set]:
        out = {p: set(rows) for p, rows in self.facts.items()}
        for a in delete:
            p, row = self.stored(a)
            out.setdefault(p, set()).discard(row)
        for a in insert:
            p, row = self.stored(a)
            out.setdefault(p, set()).add(row)
        return out

    def model(self, facts: dict[str, set]):
        return self.engine.evaluate(self.rules, facts)

    def alpha_holds(self, model) -> bool:
        return all(tuple(a.args) in model.get(a.pred, ()) for a in self.request.insert) and not any(
            tuple(a.args) in model.get(a.pred, ()) for a in self.request.delete
        )

    def consistent(self, model) -> bool:
        return not find_violations(self.rules, model, self.engine)

    def accepts(self, facts: dict[str, set]) -> bool:
        """``facts`` are consistent with ``α``: ``α`` and every constraint hold."""
        model = self.model(facts)
        return self.alpha_holds(model) and self.consistent(model)


def _changes(r: Realization) -> list[tuple[str, Atom]]:
    return [("+", a) for a in r.insert] + [("-", a) for a in r.delete]


def check_postulates(
    db: KnowledgeBase,
    request: Request | str,
    result: Realization | None,
    proposal: Proposal,
    achievable: bool | None = None,
    max_search: int = 4096,
) -> dict[str, bool]:
    """Which postulates (all but KB*6, see :func:`check_preservation`) hold for ``result``, one
    realization of ``proposal`` for ``request`` on ``db`` (``None``: the method proposed none).

    ``achievable`` says whether ``α`` is consistent with ``KB_I ∪ KB_IC`` (an oracle's answer,
    e.g. brute force); by default whether the proposal has a realization."""
    if isinstance(request, str):
        request = parse_request(request)
    state = _State(db, request)
    if achievable is None:
        achievable = len(proposal) > 0
    current = db.python_model()
    holds_now = state.alpha_holds(current) and state.consistent(current)
    out: dict[str, bool] = {}
    if result is None:
        out["KB*2"] = out["KB*4.1"] = out["KB*5"] = not achievable
        return {k: out[k] for k in POSTULATES if k in out}
    insert, delete = list(result.insert), list(result.delete)
    after = state.facts_after(insert, delete)
    model = state.model(after)
    base_ok = all(a.pred not in db.rules.derived or SPLIT_PREFIX + a.pred in db.facts for a in insert + delete)
    out["KB*1"] = base_ok and all(a.is_ground() for a in insert + delete) and all(
        tuple(a.args) not in current.get(state.stored(a)[0], ()) for a in insert
    ) and all(tuple(a.args) in current.get(state.stored(a)[0], ()) for a in delete)
    out["KB*2"] = (not achievable) or state.alpha_holds(model)
    # The result as reported (requested atoms and side effects) is what the rules derive from it.
    gained = {(a.pred, tuple(a.args)) for a in (*result.side_effects.insert, *request.insert)}
    lost = {(a.pred, tuple(a.args)) for a in (*result.side_effects.delete, *request.delete)}
    out["KB*3.2"] = all(
        set(model.get(p, ())) == (set(current.get(p, ())) | {r for q, r in gained if q == p}) - {r for q, r in lost if q == p}
        for p in db.rules.derived
        if not p.startswith(SPLIT_PREFIX)
    )
    out["KB*4.1"] = achievable or (not insert and not delete)
    out["KB*4.2"] = (not holds_now) or (not insert and not delete and len(proposal) == 1)
    out["KB*5"] = (not achievable) or state.consistent(model)
    needed = {}
    for sign, a in _changes(result):
        rest_insert = [b for b in insert if not (sign == "+" and b == a)]
        rest_delete = [b for b in delete if not (sign == "-" and b == a)]
        needed[(sign, a)] = not state.accepts(state.facts_after(rest_insert, rest_delete))
    out["KB*3.1"] = all(needed[("+", a)] for a in insert)
    out["KB*7.1"] = all(needed.values())
    out["KB*7.2"] = _relevance(state, insert, delete, strong=True, max_search=max_search)
    out["KB*7.3"] = _relevance(state, insert, delete, strong=False, max_search=max_search)
    return {k: out[k] for k in POSTULATES if k in out}


def _relevance(state: _State, insert: list[Atom], delete: list[Atom], strong: bool, max_search: int) -> bool:
    """KB*7.2 (``strong``) / 7.3: each deleted ``β`` has a ``KB'`` consistent with ``α`` that
    ``β`` makes inconsistent; ``KB ∪ α`` is read as the current facts and the insertions.

    7.2 puts back subsets of the other deleted facts (``KB * α ⊆ KB'``). A witness of 7.2 is one
    of 7.3; otherwise 7.3 searches subsets of every current fact, at most ``max_search`` of them
    (past that it answers as 7.2, a sufficient condition)."""
    if not delete:
        return True
    if not strong and _relevance(state, insert, delete, True, max_search):
        return True
    current = [Atom(shown_name(p), row) for p, rows in state.facts.items() for row in rows]
    if not strong and 2 ** len(current) > max_search:
        return False
    for beta in delete:
        found = False
        if strong:
            pool = [a for a in delete if a != beta]
            options = ([a for a in delete if a not in back] for size in range(len(pool) + 1) for back in itertools.combinations(pool, size))
        else:
            pool = [a for a in current if a != beta]
            options = ([beta, *[a for a in pool if a not in keep]] for size in range(len(pool) + 1) for keep in itertools.combinations(pool, size))
        for kb_delete in options:
            if beta not in kb_delete:
                continue
            if state.accepts(state.facts_after(insert, kb_delete)) and not state.accepts(
                state.facts_after(insert, [a for a in kb_delete if a != beta])
            ):
                found = True
                break
        if not found:
            return False
    return True


def alias_request(db_program: Program, request: Request) -> tuple[Program, Request]:
    """A KB-equivalent request (Def. 2): each requested atom through a copy ``alias__p`` of its
    predicate, and the program with the copy rules."""
    rules: list[Rule] = []
    seen: set[str] = set()
    for a in [*request.insert, *request.delete]:
        if a.pred not in seen:
            seen.add(a.pred)
            args = tuple(Var(f"V{i + 1}") for i in range(a.arity))
            rules.append(Rule((Atom("alias__" + a.pred, args),), (Literal(Atom(a.pred, args)),)))
    alias = lambda a: Atom("alias__" + a.pred, a.args)  # noqa: E731
    return db_program.with_statements(rules), Request(frozenset(map(alias, request.insert)), frozenset(map(alias, request.delete)))


def check_preservation(db: KnowledgeBase, request: Request | str, method: str, **options) -> bool:
    """KB*6: the request and its KB-equivalent alias (:func:`alias_request`) get the same
    realizations from ``method`` (the alias is answered by a database of the same class as ``db``)."""
    if isinstance(request, str):
        request = parse_request(request)
    program, beta = alias_request(db.program, request)
    other = type(db)(program, {p: rows for p, rows in db.facts.items() if not p.startswith(SPLIT_PREFIX)})
    first = {(r.insert, r.delete) for r in db.propose(request, method=method, **options)}
    second = {(r.insert, r.delete) for r in other.propose(beta, method=method, **options)}
    return first == second


__all__ = ["POSTULATES", "alias_request", "check_postulates", "check_preservation"]
