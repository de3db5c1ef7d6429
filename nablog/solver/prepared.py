"""The tables a database state keeps for every view-update request over it: the constants' lookup
table, the classes of interchangeable values, the indexes candidate search and verification probe.

Each is built once per state (by :func:`prepare`, or by the first request that needs it) and kept
with the state's :class:`~nablog.engines.lookup.ModelIndex` until a commit changes the state, so
that a request costs what it touches, not the database's size (issue 16: the first realization
over 1e6 facts as fast as over 1e4).
"""

from __future__ import annotations

from collections.abc import Set
from typing import Mapping

import numpy as np

from ..engines import PythonEngine
from ..engines.base import relation_arity
from ..engines.encoding import INT, EncodedRelation
from ..engines.lookup import ModelIndex
from ..lang import Literal, Program, Var
from . import symmetry
from .request import Request
from .symmetry import Folding, symmetric


def prepare(rules: Program, model: Mapping[str, Set], index: ModelIndex) -> None:
    """Build, for one database state, the tables every request over it reads, so that a request
    costs what it touches, not the database's size: the lookup table of the model's constants,
    the classes of interchangeable values (:func:`state_folding`), the index of every relation
    the program reads on each of its positions (candidate search), and the join indexes the
    verifier's incremental maintenance probes (built by maintaining one trial deletion of a fact
    of each such relation, discarded). Each would otherwise be built by the first request that
    needs it; all are kept with ``index`` (or with the model's relations) until the state changes."""
    read = read_relations(rules) & ((set(rules.signatures) | set(model)) - set(rules.derived))
    for d in {id(r.dictionary): r.dictionary for r in model.values() if isinstance(r, EncodedRelation)}.values():
        d.ids  # noqa: B018 - the constant to id table, built once
        d.decode_column(np.zeros(0, INT))  # and the objects array lookups decode through
    if symmetric(rules):
        folding = state_folding(rules, model, read, index)
        for pred, i in existential_places(rules):
            folding.visible(pred, i)
    engine = PythonEngine()
    for pred in sorted(read):
        rows = model.get(pred)
        if rows is None or not len(rows):
            continue
        row = rows.first(1)[0] if isinstance(rows, EncodedRelation) else next(iter(rows))
        for i in range(len(row)):
            next(index.match(pred, tuple(v if j == i else None for j, v in enumerate(row))), None)
        engine.update(rules, model, delete={pred: {row}})


def existential_places(rules: Program) -> set[tuple[str, int]]:
    """The positions of body literals where a variable the head does not name stands: the values
    found there are the candidates for existential variables (``Relevance._domain``)."""
    places = set()
    for rule in rules.rules:
        named = {v for h in rule.head for v in h.variables()}
        for b in rule.body:
            if isinstance(b, Literal):
                places |= {(b.atom.pred, i) for i, t in enumerate(b.atom.args) if isinstance(t, Var) and t not in named}
    return places


def read_relations(rules: Program) -> set[str]:
    """The relations a rule body or a constraint reads."""
    return {b.atom.pred for body in _bodies(rules) for b in body if isinstance(b, Literal)}


def state_folding(rules: Program, model, read: set[str], index: ModelIndex) -> Folding:
    """The classes of interchangeable values of the state (only the program's constants
    distinguished), computed once and kept with the model's index."""
    width = max((len({v for b in body for v in b.variables()}) for body in _bodies(rules)), default=2)
    arity = max((relation_arity(model[p]) for p in read if p in model and len(model[p])), default=1)
    # Enough representatives that change sets of up to EXACT_SIZE facts are searched exactly.
    representatives = max(2, width, symmetry.EXACT_SIZE * arity)
    constants = frozenset(rules.constants())
    key = ("folding", frozenset(read), constants, symmetry.FOLD_LEAST, representatives)
    state = index.tables.get(key)
    if state is None:
        state = index.tables[key] = Folding.of(rules, {p: model[p] for p in read if p in model}, read, set(constants), least=symmetry.FOLD_LEAST, representatives=representatives)
    return state


def request_folding(rules: Program, model, base: set[str], request: Request, protected: list, index: ModelIndex) -> Folding:
    """The classes of interchangeable values among the base facts the program reads; the
    constants of the program, the request and protected facts are never folded. Each class keeps
    as many representatives as a rule body has variables, so that a realization drawing several
    values from one class meets several representatives and is solved unfolded instead.

    The classes of the state (only the program's constants distinguished) are computed once and
    kept with the model's index; a request takes its own values out of them
    (:meth:`Folding.for_request`), which costs what the request names, not the database's size."""
    state = state_folding(rules, model, read_relations(rules) & base, index)
    distinguished = {v for _, a in request.atoms() for v in a.args}
    distinguished |= {v for p in protected if not isinstance(p, str) for v in p[1]}
    return state.for_request(distinguished)


def _bodies(rules: Program) -> list:
    """The bodies of the rules and of the constraints."""
    return [r.body for r in rules.rules] + [getattr(c, "body", ()) for _, c in rules.named_constraints()]
