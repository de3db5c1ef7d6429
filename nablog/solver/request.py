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

from ..lang import Delta

Request = Delta
"""Ground atoms to make true (``insert``) and false (``delete``)."""


def parse_request(text: str, source: str = "<request>") -> Request:
    """Parse ``+atom. -atom. ...``; every atom must be ground and carry a sign (see :meth:`Delta.parse`).

    >>> print(parse_request("-p(1)  +q(a, 2)"))
    +q(a, 2). -p(1).
    """
    return Delta.parse(text, source)
