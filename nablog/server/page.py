"""The web page of `nablog serve` (at ``/``): its static files and the endpoints only the page needs.

The page (``page/index.html``, ``app.css``, ``app.js``: plain HTML, CSS and script, no build
step, nothing fetched from elsewhere) is a client of the API like any other; these endpoints add
what the stable core (:mod:`nablog.server.app`) lacks for choosing among realizations:

- ``GET /overview``: relations and views with row counts, constraints, current violations, the
  program text with its line numbers, the predicates (for completing a request);
- ``POST /check`` ``{"request": TEXT}``: the request checked as the CLI checks it — 200 with its
  atoms, or 400 with the located message;
- ``POST /propose/stream`` ``{"request"[, "candidates", "timeout"]}``: a proposal as NDJSON, one
  ``{"realization": ...}`` line as each is found (and ``{"progress": STAGE}`` as the search moves
  on), then ``{"done": ...}`` with the status and the final, numbered list; the search runs in a
  child process (:meth:`nablog.database.Database.apart`), killed when the client hangs up;
- ``POST /explain`` ``{"request", "insert", "delete"}``: why a realization changes what it changes,
  with an SVG picture per requested atom and side effect (:mod:`nablog.explain.render`);
- ``POST /choose`` ``{"request", "version", "insert", "delete", "values"[, "candidates"]}``: apply the realization
  the client saw, at the version it was proposed on — HTTP 409 when the data changed since;
- ``GET /history``, ``POST /undo``: the commits and taking the newest back;
- ``GET /repair``: violations with the correction tables (tuples) and the cell repair side by
  side; ``POST /repair/apply`` ``{"kind": "tuples"|"cells", "index", "version"}`` commits one.
"""

from __future__ import annotations

import contextlib
import json
from importlib import resources
from typing import AsyncIterator

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..lang import NablogError
from .shared import PROPOSE_GRACE, followed, unauthorized

PAGE = resources.files("nablog.server") / "page"
REPAIR_TABLES = 10  # correction tables listed on the repair tab


def _conflict(version_now: int, asked: int) -> Response:
    return JSONResponse(
        {
            "error": f"error: the data changed since this was proposed: the database is at version {version_now}, not {asked}",
            "hint": "another client committed in between; propose again to see the realizations for the current data",
            "version": version_now,
        },
        status_code=409,
    )


class Page:
    """The page's endpoints over a :class:`nablog.server.app.Server` (its token, lock and body reader)."""

    def __init__(self, server):
        self.server = server
        self.db = server.db

    def routes(self) -> list:
        return [
            Route("/", self.index, methods=["GET"]),
            Mount("/page", StaticFiles(directory=str(PAGE)), name="page"),
            Route("/overview", self.overview, methods=["GET"]),
            Route("/check", self.check, methods=["POST"]),
            Route("/propose/stream", self.propose_stream, methods=["POST"]),
            Route("/explain", self.explain, methods=["POST"]),
            Route("/choose", self.choose, methods=["POST"]),
            Route("/history", self.history, methods=["GET"]),
            Route("/undo", self.undo, methods=["POST"]),
            Route("/repair", self.repair, methods=["GET"]),
            Route("/repair/apply", self.repair_apply, methods=["POST"]),
        ]

    async def _request_body(self, request: Request, *keys: str) -> dict:
        body = await self.server.body(request)
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in keys):
            raise NablogError("the body needs " + ", ".join(repr(k) for k in keys) + " as text", hint='{"request": "+p(1)."}')
        return body

    @staticmethod
    def _candidates(body: dict) -> str:
        """The candidate policy a proposal (and the apply that takes one of its realizations) uses."""
        candidates = body.get("candidates", "attribute")
        if candidates not in ("attribute", "herbrand"):
            raise NablogError(f"unknown candidates {candidates!r}", hint="attribute (the default) or herbrand, as nablog propose --candidates")
        return candidates

    async def _apart(self, work):
        """``work(db)`` in a child process on the database as it is now (:meth:`nablog.database.
        Database.apart`, as ``POST /propose``): the lock is held for the fork only, so queries
        and commits never wait for an explanation or a repair; its answer is awaited in a thread."""
        search = await anyio.to_thread.run_sync(self.db.apart, lambda db, send: work(db))
        try:
            return await anyio.to_thread.run_sync(search.result)
        finally:
            search.cancel()

    def _guard(self, request: Request, write: bool) -> Response | None:
        return None if self.server.authorized(request, write) else unauthorized()

    # -- the page ---------------------------------------------------------------------------------

    async def index(self, request: Request) -> Response:
        # Open to all, like /version: the page holds no data; it asks for the token itself.
        return Response((PAGE / "index.html").read_bytes(), media_type="text/html; charset=utf-8", headers={"Cache-Control": "no-store"})

    async def overview(self, request: Request) -> Response:
        if (refused := self._guard(request, write=False)) is not None:
            return refused
        db = self.db

        def run():
            with db.locked():
                model, derived = db.model(), set(db.derived)
                arities = dict(db.rules.signatures)
                relations = []
                for pred in sorted(set(model) | set(arities)):
                    if pred.startswith("base__"):
                        continue
                    rows = model.get(pred, ())
                    arity = arities.get(pred, len(next(iter(rows))) if len(rows) else 0)
                    relations.append({"name": pred, "arity": arity, "kind": "view" if pred in derived else "base", "rows": len(rows)})
                constraints = [{"name": name, "text": str(c)} for name, c in db.constraints()]
                violations = [v.to_json() for v in db.violations(limit=20)]
                program = [{"file": str(p), "lines": p.read_text(encoding="utf-8").splitlines()} for p in db.program_paths if p.exists()]
                if not program:
                    program = [{"file": "<program>", "lines": str(db.program).splitlines()}]
                return {"version": db.version, "relations": relations, "constraints": constraints, "violations": violations, "program": program}

        return JSONResponse(await anyio.to_thread.run_sync(run))

    async def check(self, request: Request) -> Response:
        """The request parsed and its predicates checked, as ``nablog propose`` does before it
        searches; a bad one gets the CLI's located message (HTTP 400, by the error handler)."""
        if (refused := self._guard(request, write=False)) is not None:
            return refused
        body = await self._request_body(request, "request")
        from ..solver import parse_request
        from ..solver.propose import check_request

        def run():
            parsed = parse_request(body["request"])
            with self.db.locked():
                check_request(self.db.rules, self.db.python_model(), parsed)
            return {"insert": [str(a) for a in parsed.insert], "delete": [str(a) for a in parsed.delete]}

        return JSONResponse({"ok": True, **await anyio.to_thread.run_sync(run)})

    # -- propose, explain, choose -----------------------------------------------------------------

    async def propose_stream(self, request: Request) -> Response:
        if (refused := self._guard(request, write=True)) is not None:
            return refused
        body = await self._request_body(request, "request")
        timeout = body.get("timeout", self.server.deadline)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 < timeout <= self.server.max_deadline:
            raise NablogError(f"timeout must be a number of seconds in (0, {self.server.max_deadline:g}], not {timeout!r}", hint='{"request": "+p(1).", "timeout": 10}')
        text, candidates = body["request"], self._candidates(body)

        def work(db, send):
            # In the child process (Database.apart): each realization's JSON is sent as it is
            # found (its side effects cost), and each stage of the search; the search holds no
            # lock, and it is killed when the client hangs up (the stop button) or its deadline
            # has long passed.
            proposal = db.propose(text, timeout=timeout, candidates=candidates, progress=lambda stage: send({"progress": stage}), stream=True)
            for realization in proposal:
                send({"realization": realization.to_json()})
            return db.version, proposal.get().to_json()

        search = await anyio.to_thread.run_sync(self.db.apart, work)

        async def lines() -> AsyncIterator[str]:
            try:
                async with contextlib.aclosing(followed(search, timeout + PROPOSE_GRACE)) as updates:
                    async for kind, item in updates:
                        if kind == "item":
                            line = item
                        elif kind == "late":
                            line = {"error": f"error: the proposal did not end within {timeout + PROPOSE_GRACE:g} s"}
                        else:
                            try:
                                version, out = search.result()
                                line = {"done": {"version": version, **out}}
                            except NablogError as e:
                                line = {"error": str(e)}
                            except Exception as e:  # the stream has begun: the failure is its last line
                                line = {"error": f"error: internal error: {type(e).__name__}: {e}"}
                        yield json.dumps(line, ensure_ascii=False) + "\n"
            finally:
                search.cancel()

        return StreamingResponse(lines(), media_type="application/x-ndjson", headers={"Cache-Control": "no-store"})

    async def explain(self, request: Request) -> Response:
        if (refused := self._guard(request, write=True)) is not None:
            return refused
        body = await self._request_body(request, "request")
        insert, delete = body.get("insert", []), body.get("delete", [])
        if not all(isinstance(x, list) and all(isinstance(a, str) for a in x) for x in (insert, delete)):
            raise NablogError("'insert' and 'delete' are lists of atoms written as strings", hint='{"request": "+p(1).", "insert": ["q(1)"], "delete": []}')
        from ..lang import parse_atom

        class Changes:  # what Database.why_realization reads of a realization
            pass

        changes = Changes()
        changes.insert, changes.delete = tuple(map(parse_atom, insert)), tuple(map(parse_atom, delete))

        def work(db):
            why = db.why_realization(body["request"], changes)
            pictures = [{"change": c, "kind": kind, "svg": w.svg()} for kind, items in (("requested", why.requested), ("side effect", why.side_effects)) for c, w in items]
            return {"version": db.version, "text": why.text(), "needs": [n.line() for n in why.needs], "pictures": pictures}

        return JSONResponse(await self._apart(work))

    async def choose(self, request: Request) -> Response:
        """Apply the realization the client was shown: proposed again at the same version in a
        child process (the proposal is deterministic), the one with the same changes taken, its new
        constants or family variables given ``values``; written after re-verification."""
        if (refused := self._guard(request, write=True)) is not None:
            return refused
        body = await self._request_body(request, "request")
        version, values = body.get("version"), body.get("values") or {}
        if not isinstance(version, int) or isinstance(version, bool):
            raise NablogError("'version' is the version the realization was proposed on", hint='{"request": ..., "version": 3, "insert": [...], "delete": [...]}')
        if not isinstance(values, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in values.items()):
            raise NablogError("'values' maps new constants (or family variables) to values written as text", hint='{"new1": "infor3"}')
        wanted = (sorted(body.get("insert", [])), sorted(body.get("delete", [])))
        candidates = self._candidates(body)
        from ..io import text_to_constant

        def pick(db):
            # In a child process on this version's state (no lock held while it searches).
            if db.version != version:
                return None
            proposal = db.propose(body["request"], timeout=self.server.deadline, candidates=candidates)
            for chosen in proposal.realizations:
                shown = chosen.to_json()
                if (sorted(shown["insert"]), sorted(shown["delete"])) == wanted:
                    break
            else:
                raise NablogError("no realization of this request has those changes", hint="propose again and pick one of the list")
            if values:
                chosen = chosen.substitute({k: text_to_constant(v.strip()) for k, v in values.items()})
            if chosen.fresh:
                raise NablogError("give a value for " + ", ".join(chosen.fresh), hint="a new constant stands for a value nobody has named yet: name it")
            return chosen.portable()

        # As POST /apply: searched apart, then re-verified against its request and basis and
        # written under the lock (a commit since makes it stale: 409): nothing searched twice.
        chosen = await self._apart(pick)
        if chosen is None:
            return _conflict(self.db.version, version)

        def write():
            db = self.db
            with db.locked():
                if db.version != version:
                    return None
                update = db.apply(chosen, request=body["request"])
                return db.version, update.to_json()

        async with self.server.write_lock:
            done = await anyio.to_thread.run_sync(write)
        if done is None:
            return _conflict(self.db.version, version)
        return JSONResponse({"version": done[0], **done[1]})

    # -- history and undo -------------------------------------------------------------------------

    async def history(self, request: Request) -> Response:
        if (refused := self._guard(request, write=False)) is not None:
            return refused
        stores = self.db.stores
        entries = [] if stores is None else await anyio.to_thread.run_sync(stores.entries)
        shown = [{"time": e.get("time"), "request": e.get("request", ""), "version": e.get("version"), "changes": _entry_changes(e)} for e in entries]
        return JSONResponse({"version": self.db.version, "commits": shown[::-1], "undo": stores is not None})

    async def undo(self, request: Request) -> Response:
        if (refused := self._guard(request, write=True)) is not None:
            return refused

        def run():
            update = self.db.undo()
            return self.db.version, None if update is None else update.to_json()

        async with self.server.write_lock:
            version, update = await anyio.to_thread.run_sync(run)
        if update is None:
            return JSONResponse({"version": version, "undone": False, "message": "nothing to undo"})
        return JSONResponse({"version": version, "undone": True, **update})

    # -- repair -----------------------------------------------------------------------------------

    def _repairs(self, db):
        """The correction tables (tuples) and the cell repair of ``db``'s current data."""
        from ..repair import repair
        from ..repair.cells import repair_cells
        from ..repair.output import ordered_relations

        tables = repair(db.rules, db.model(), engine=db.engine, limit=REPAIR_TABLES, timeout=self.server.deadline)
        try:
            relations = ordered_relations(db)
            cells = repair_cells(db.rules, {p: r.rows for p, r in relations.items()}, timeout=self.server.deadline, engine=db.engine)
        except NablogError as e:  # constraints a cell repair cannot take (not over base relations)
            relations, cells = None, str(e)
        return tables, relations, cells

    async def repair(self, request: Request) -> Response:
        if (refused := self._guard(request, write=False)) is not None:
            return refused

        def work(db):
            violations = [v.to_json() for v in db.violations(limit=20)]
            if not violations:
                return {"version": db.version, "violations": [], "tables": [], "cells": None}
            tables, _, cells = self._repairs(db)
            return {
                "version": db.version,
                "violations": violations,
                "status": tables.status,
                "tables": [{**t.to_json(), "fresh": list(t.fresh)} for t in tables.tables],
                "cells": cells if isinstance(cells, str) else {"consistent": cells.consistent, "corrections": [c.to_json() for c in cells.corrections]},
            }

        return JSONResponse(await self._apart(work))

    async def repair_apply(self, request: Request) -> Response:
        if (refused := self._guard(request, write=True)) is not None:
            return refused
        body = await self._request_body(request, "kind")
        kind, index, version = body["kind"], body.get("index", 0), body.get("version")
        if kind not in ("tuples", "cells") or not isinstance(index, int) or not isinstance(version, int):
            raise NablogError("repair/apply needs 'kind' (tuples or cells), 'index' (from 0) and 'version'", hint='{"kind": "tuples", "index": 0, "version": 3}')

        def chosen(db):
            # In a child process on this version's state: the repair is searched holding no lock.
            if db.version != version:
                return None
            tables, relations, cells = self._repairs(db)
            if kind == "tuples":
                if not 0 <= index < len(tables.tables):
                    raise NablogError(f"there is no correction table {index + 1}", hint=f"choose one of 1 to {len(tables.tables)}")
                table = tables.tables[index]
                if table.fresh:
                    raise NablogError("this table inserts new constants " + ", ".join(table.fresh), hint="apply it with nablog repair --set NEW=VALUE")
                return table.delta
            if isinstance(cells, str):
                raise NablogError(cells, hint="choose a correction table instead")
            return cells.delta({p: r.rows for p, r in relations.items()})

        delta = await self._apart(chosen)
        if delta is None:
            return _conflict(self.db.version, version)

        def write():
            db = self.db
            with db.locked():
                if db.version != version:  # the repair was computed on that version only
                    return None
                committed, update = db.commit(delta, request=f"repair ({kind})")
                return committed, update.to_json()

        async with self.server.write_lock:
            done = await anyio.to_thread.run_sync(write)
        if done is None:
            return _conflict(self.db.version, version)
        return JSONResponse({"version": done[0], **done[1]})


def _entry_changes(entry: dict) -> list[str]:
    """The fact changes an undo-log entry records (:mod:`nablog.io.history`), as ``+atom`` / ``-atom``."""
    from ..lang import Atom

    out = []
    for relations in (entry.get("changes") or {}).values():
        for pred, rows in relations.items():
            for sign, key in (("+", "insert"), ("-", "delete")):
                out += [f"{sign}{Atom(pred, tuple(row))}" for row in rows.get(key, [])]
    return out


__all__ = ["Page"]
