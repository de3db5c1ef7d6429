"""View-update requests: ground atoms to insert and to delete, written ``+p(1,2). -q(a).``

A request (seed 002, Def. 6) asks that its insertions hold and its deletions do not hold after
the update; it may name derived (view) or base predicates. It is a :class:`~nablog.lang.Delta`.

>>> request = parse_request("+staff_chair(aravindan, gerhard). -q(1).")
>>> print(request)
+staff_chair(aravindan, gerhard). -q(1).
>>> sorted(str(a) for a in request.insert)
['staff_chair(aravindan, gerhard)']
"""

from __future__ import annotations

from collections.abc import Mapping, Set

from ..lang import SPLIT_PREFIX, Delta, Program
from ..lang.analysis import check_signature

Request = Delta
"""Ground atoms to make true (``insert``) and false (``delete``)."""


def parse_request(text: str, source: str = "<request>") -> Request:
    """Parse ``+atom. -atom. ...``; every atom must be ground and carry a sign (see :meth:`Delta.parse`).

    >>> print(parse_request("-p(1)  +q(a, 2)"))
    +q(a, 2). -p(1).
    """
    return Delta.parse(text, source)


def check_request(rules: Program, model: Mapping[str, Set], request: Request) -> None:
    """Every request atom names a known predicate (of the rules or the model) with its arity.

    >>> from nablog.lang import parse
    >>> check_request(parse("p(X) :- q(X)."), {"q": {(1,)}}, parse_request("+p(1, 2)."))
    Traceback (most recent call last):
    ...
    nablog.lang.errors.QueryError: error: predicate p has arity 1, but the request gives 2 arguments
      --> <request>:1:2
       |
     1 | +p(1, 2).
       |  ^
    hint: write p with 1 arguments
    """
    arities = dict(rules.signatures)
    for pred, rows in model.items():
        if pred not in arities and len(rows):
            arities[pred] = len(next(iter(rows)))
    for _, atom in request.atoms():
        check_signature(atom, arities, "request", "request facts of predicates the database has", (SPLIT_PREFIX,))
