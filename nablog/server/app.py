"""`nablog serve`: the HTTP application over a Database — query, transactions, propose/apply, subscriptions.

An ASGI application (Starlette, run by uvicorn). Its stable core:

- ``POST /transactions`` with ``{"insert": ["edge(a,b)", ...], "delete": [...]}`` answers
  ``{"version": N}`` once committed;
- ``GET /subscribe?query=ATOM`` streams Server-Sent Events whose ``id`` is the version and whose
  data is JSON: first ``{"version": N, "snapshot": [ROW, ...]}``, then ``{"version": N, "plus":
  [...], "minus": [...]}`` per commit that changes the answer. A client that reconnects with
  ``Last-Event-ID: N`` (or ``?since=N``) gets every message after ``N``, none twice, in order — or
  HTTP 410 "too old, take a new snapshot" when the kept history no longer reaches back to ``N``.
  Two named events complete the stream: ``snapshot_complete`` after the snapshot, and ``error``
  (``fell behind``) when a subscriber's buffer overflowed; it can then resume by version.

Also: ``GET /query?atom=ATOM``, ``POST /propose`` ``{"request": "+p(1).", "limit": N}``,
``POST /apply`` ``{"request": ..., "pick": K, "version": N}``, ``GET /version``.

Writes need the bearer token (``Authorization: Bearer TOKEN``); reads too when the server was
given a token file. A proposal searches in a child process on the state of its version
(:meth:`nablog.database.Database.apart`), holding no lock: queries, commits and subscriptions
never wait for it, and it is killed when its client leaves or its deadline has long passed.
Commits are serialized (one writer at a time) and run off the event loop;
each commit's messages reach the subscribers through per-query channels, so a slow subscriber
never blocks a writer: it is buffered up to a bound and then told it fell behind. Bad requests get
HTTP 4xx with the same located messages as the CLI. Nothing a client sends is run as code: atoms
and requests are parsed as data.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
from collections import deque
from typing import AsyncIterator

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..database import Database
from ..lang import ConstraintError, NablogError, parse_atom
from ..views.monitor import MODES
from ..views import subscriptions
from ..views.subscriptions import rows_json
from .shared import PROPOSE_GRACE, followed, unauthorized as _unauthorized

HISTORY = 10_000  # messages kept per channel for resuming
MAX_BODY = 1 << 20
"""Bytes a request body may have (``nablog serve --max-body``); a longer one gets HTTP 413."""
READ_TIMEOUT = 10.0
"""Seconds a request body may take to arrive (``--read-timeout``); then HTTP 408."""
PROPOSE_DEADLINE = 30.0
"""Seconds a proposal searches unless the client asks for less or more (``"timeout"``)."""
PROPOSE_MAX_DEADLINE = 300.0
"""The longest search a client may ask for (``--max-deadline``)."""
BUFFER = 1_000  # messages buffered per subscriber before it is told it fell behind
FELL_BEHIND = object()
CLOSED = object()  # the server is stopping: the stream ends (the client resumes by version elsewhere)


class Channel:
    """One subscribed query (and mode): the database subscription that feeds it, the recent
    messages for resuming, and the live listeners. Touched only on the event loop."""

    def __init__(self, version: int):
        self.floor = version  # messages after this version are all in ``history``
        self.history: deque[dict] = deque()
        self.listeners: set["Listener"] = set()

    def publish(self, message: dict) -> None:
        if "plus" not in message:
            return
        self.history.append(message)
        if len(self.history) > HISTORY:
            self.floor = self.history.popleft()["version"]
        for listener in list(self.listeners):
            listener.offer(message)

    def since(self, version: int) -> list[dict]:
        return [m for m in self.history if m["version"] > version]


class Listener:
    """One connected subscriber: a bounded queue of messages after version ``since``."""

    def __init__(self, since: int, bound: int):
        self.since = since
        self.queue: asyncio.Queue = asyncio.Queue()
        self.bound = bound
        self.behind = False

    def offer(self, message: dict) -> None:
        if self.behind or message["version"] <= self.since:
            return
        if self.queue.qsize() >= self.bound:
            self.behind = True
            self.queue.put_nowait(FELL_BEHIND)
            return
        self.since = message["version"]
        self.queue.put_nowait(message)


class Server:
    """The state behind the application: the database, its token, the channels."""

    def __init__(
        self,
        db: Database,
        token: str,
        token_for_reads: bool = False,
        buffer: int = BUFFER,
        max_body: int = MAX_BODY,
        read_timeout: float = READ_TIMEOUT,
        deadline: float = PROPOSE_DEADLINE,
        max_deadline: float = PROPOSE_MAX_DEADLINE,
    ):
        self.db = db
        self.max_body = max_body
        self.read_timeout = read_timeout
        self.deadline = deadline
        self.max_deadline = max_deadline
        self.token = token
        self.token_for_reads = token_for_reads
        self.buffer = buffer
        self.channels: dict[tuple[str, str], Channel] = {}
        self.write_lock = asyncio.Lock()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.closed = False

    # -- helpers ----------------------------------------------------------------------------------

    def authorized(self, request: Request, write: bool) -> bool:
        if not (write or self.token_for_reads):
            return True
        given = request.headers.get("authorization", "")
        scheme, _, value = given.partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self.token.encode())

    def close_streams(self) -> None:
        """End every subscription stream (on the event loop): a stopping server does not wait for
        its watchers to hang up, which they never do, until uvicorn's graceful timeout."""
        self.closed = True
        for channel in list(self.channels.values()):
            for listener in list(channel.listeners):
                listener.queue.put_nowait(CLOSED)

    def channel(self, key: tuple[str, str]) -> Channel:
        """The channel of a query, made with its database subscription (called under the
        database's lock, in a worker thread: the subscription starts at the current version)."""
        channel = self.channels.get(key)
        if channel is None:
            channel = Channel(self.db.version)
            loop = self.loop
            # Raises once the loop is closed (the server stopping): the hub then drops the channel.
            self.db.subscribe(key[0], mode=key[1], callback=lambda m: loop.call_soon_threadsafe(channel.publish, m))
            self.channels[key] = channel
        return channel

    async def body(self, request: Request):
        """The request's JSON body, read at most ``max_body`` bytes and ``read_timeout`` seconds:
        a longer body is refused (413) before it is read (by its Content-Length) or as soon as it
        passes the bound, so memory stays flat; one slower than the timeout (a Content-Length
        longer than what is sent) is refused with 408."""
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body:
            raise RequestRefused(413, f"the request body has {int(length)} bytes; this server takes at most {self.max_body}", "send a smaller transaction, or start the server with a larger --max-body")
        chunks: list[bytes] = []
        size = 0

        async def read() -> None:
            nonlocal size
            async for chunk in request.stream():
                size += len(chunk)
                if size > self.max_body:
                    raise RequestRefused(413, f"the request body is longer than {self.max_body} bytes", "send a smaller transaction, or start the server with a larger --max-body")
                chunks.append(chunk)

        try:
            await asyncio.wait_for(read(), self.read_timeout)
        except asyncio.TimeoutError:
            raise RequestRefused(408, f"the request body did not arrive within {self.read_timeout:g} s ({size} bytes came)", "send the whole body at once, with a Content-Length that matches it") from None
        try:
            return json.loads(b"".join(chunks))
        except ValueError as e:
            raise NablogError(f"the request body is not JSON: {e}", hint="send a JSON object with Content-Type: application/json") from None

    # -- endpoints --------------------------------------------------------------------------------

    async def version(self, request: Request) -> Response:
        # The one endpoint open to all: it tells a client where the server is, nothing of the data.
        return JSONResponse({"version": self.db.version})

    async def query(self, request: Request) -> Response:
        if not self.authorized(request, write=False):
            return _unauthorized()
        text = request.query_params.get("atom") or request.query_params.get("query")
        if not text:
            return _bad("missing the query atom", "GET /query?atom=p(X, Y)")

        def run():
            with self.db.locked():
                return self.db.version, self.db.query(parse_atom(text))

        version, rows = await anyio.to_thread.run_sync(run)
        return JSONResponse({"version": version, "rows": rows_json(rows)})

    async def why(self, request: Request) -> Response:
        """GET /why?atom=p(1,2)[&depth=N][&all=1][&format=json|text|dot|svg]: why the atom holds or
        not (:meth:`nablog.database.Database.why`); JSON carries the version it answers for."""
        if not self.authorized(request, write=False):
            return _unauthorized()
        params = request.query_params
        text, form = params.get("atom"), params.get("format", "json")
        if not text:
            return _bad("missing the atom", "GET /why?atom=p(1, 2)")
        if form not in ("json", "text", "dot", "svg"):
            return _bad(f"unknown format {form!r}", "format=json (default), text, dot or svg")
        depth = params.get("depth")
        if depth is not None and not depth.isdigit():
            return _bad(f"depth must be a whole number, not {depth!r}", "GET /why?atom=p(1, 2)&depth=2")
        every = params.get("all", "") in ("1", "true", "yes")

        def run():
            with self.db.locked():
                why = self.db.why(text, depth=None if depth is None else int(depth), all=every)
                return self.db.version, why, {"json": why.to_json, "text": why.text, "dot": why.dot, "svg": why.svg}[form]()

        version, why, shown = await anyio.to_thread.run_sync(run)
        if form == "json":
            return JSONResponse({"version": version, **shown})
        media = {"text": "text/plain; charset=utf-8", "dot": "text/vnd.graphviz; charset=utf-8", "svg": "image/svg+xml"}[form]
        return Response(shown, media_type=media, headers={"X-Nablog-Version": str(version)})

    async def transactions(self, request: Request) -> Response:
        if not self.authorized(request, write=True):
            return _unauthorized()
        body = await self.body(request)
        if not isinstance(body, dict) or set(body) - {"insert", "delete"}:
            return _bad("a transaction is a JSON object with the lists 'insert' and 'delete'", '{"insert": ["edge(a,b)"], "delete": []}')
        insert, delete = body.get("insert", []), body.get("delete", [])
        if not all(isinstance(x, list) and all(isinstance(a, str) for a in x) for x in (insert, delete)):
            return _bad("'insert' and 'delete' are lists of atoms written as strings", '{"insert": ["edge(a,b)"]}')
        async with self.write_lock:
            version, _ = await anyio.to_thread.run_sync(lambda: self.db.commit(insert, delete))
        return JSONResponse({"version": version})

    async def propose(self, request: Request) -> Response:
        # A proposal searches (seconds to minutes of CPU): it needs the token like a write.
        if not self.authorized(request, write=True):
            return _unauthorized()
        body = await self.body(request)
        if not isinstance(body, dict) or not isinstance(body.get("request"), str):
            return _bad("a proposal needs 'request', a view-update request as text", '{"request": "+p(1)."}')
        asked = body.get("timeout")
        if asked is not None and (not isinstance(asked, (int, float)) or isinstance(asked, bool) or asked <= 0):
            return _bad(f"timeout must be a positive number of seconds, not {asked!r}", '{"request": "+p(1).", "timeout": 10}')
        if asked is not None and asked > self.max_deadline:
            return _bad(f"timeout {asked:g} s is longer than this server allows ({self.max_deadline:g} s)", f"ask for at most {self.max_deadline:g} seconds")
        seconds = self.deadline if asked is None else asked
        text, limit = body["request"], body.get("limit")
        # The search runs in a child process on the state of this version (Database.apart):
        # nothing waits for it, and it is killed when its client leaves or its deadline passes.
        # The JSON is built there too: it computes the side effects a realization left to be
        # computed when asked (solver.realization.Verifier.effects), seconds of work.
        answer, refused = await self._apart(request, lambda db, send: (db.version, db.propose(text, limit=limit, timeout=seconds).to_json()), seconds)
        if refused is not None:
            return refused
        version, proposal = answer
        return JSONResponse({"version": version, **proposal})

    async def _apart(self, request: Request, work, seconds: float) -> tuple[object, Response | None]:
        """``work(db, send)`` run in a child process on the state of this version
        (:meth:`Database.apart`), holding no lock: its value, or the response saying why there is
        none — the client left (the child is killed at once), or ``seconds`` and
        :data:`PROPOSE_GRACE` passed (killed then)."""
        search = await anyio.to_thread.run_sync(self.db.apart, work)
        try:
            async with contextlib.aclosing(followed(search, seconds + PROPOSE_GRACE, request.is_disconnected)) as updates:
                async for kind, _ in updates:
                    if kind == "left":
                        return None, _bad("the client left", "nobody reads this", 499)
                    if kind == "late":
                        return None, _bad(f"the proposal did not end within {seconds + PROPOSE_GRACE:g} s", "ask for a shorter timeout or fewer realizations (limit)", 503)
            return search.result(), None
        finally:
            search.cancel()

    async def apply(self, request: Request) -> Response:
        if not self.authorized(request, write=True):
            return _unauthorized()
        body = await self.body(request)
        if not isinstance(body, dict) or not isinstance(body.get("request"), str) or not isinstance(body.get("pick", 1), int):
            return _bad("apply needs 'request' (text) and 'pick' (a realization's number, from 1)", '{"request": "+p(1).", "pick": 1, "version": 3}')

        text, pick, limit = body["request"], body.get("pick", 1), body.get("limit")
        # The `pick` smallest are searched for (the pick-th is the whole proposal's: a size's
        # realizations are all found and ordered before the cut), as `nablog apply --pick N` does.
        wanted = None if pick < 1 else pick if limit is None else min(limit, pick)

        def choose(db: Database, send) -> object:
            if "version" in body and body["version"] != db.version:
                raise NablogError(
                    f"the database is at version {db.version}, not {body['version']}",
                    hint="propose again: the realizations may have changed",
                )
            proposal = db.propose(text, limit=wanted)
            if not 1 <= pick <= len(proposal):
                raise NablogError(f"pick {pick} is out of range: the proposal has {len(proposal)} realizations", hint="pick a number from 1")
            return proposal[pick - 1].portable()

        # The search runs apart on this version's state, holding no lock (a long one delays no
        # query or commit, and is killed when its client leaves); the realization it chose comes
        # back with its request and basis, and is re-verified against them and written under the
        # lock (Database.apply: a commit since makes its basis stale): nothing is searched twice.
        chosen, refused = await self._apart(request, choose, self.max_deadline)
        if refused is not None:
            return refused

        def write():
            with self.db.locked():
                update = self.db.apply(chosen, request=text)
                # The induced update's atoms are built from its relations here, off the event loop.
                return self.db.version, update.to_json()

        async with self.write_lock:
            version, update = await anyio.to_thread.run_sync(write)
        return JSONResponse({"version": version, **update})

    async def subscribe(self, request: Request) -> Response:
        if not self.authorized(request, write=False):
            return _unauthorized()
        text = request.query_params.get("query")
        mode = request.query_params.get("mode", "materialized")
        if not text:
            return _bad("missing the query", "GET /subscribe?query=closure(a, X)")
        if mode not in MODES:
            return _bad(f"unknown mode {mode!r}", "one of " + ", ".join(MODES))
        since_text = request.headers.get("last-event-id") or request.query_params.get("since")
        if since_text is not None and not since_text.strip().lstrip("-").isdigit():
            return _bad(f"since must be a version number, not {since_text!r}", "?since=12")
        since = int(since_text) if since_text is not None else None
        atom = parse_atom(text)
        key = (str(atom), mode)

        def start():
            with self.db.locked():
                rows = None if since is not None else self.db.query(atom)
                channel = self.channel(key)
                return self.db.version, rows, channel

        version, rows, channel = await anyio.to_thread.run_sync(start)
        if since is not None:
            if since > version:
                return _bad(f"version {since} is ahead of the server's version {version}", "resume from a version this server gave you", 400)
            if since < channel.floor:
                return JSONResponse(
                    {"error": "too old, take a new snapshot", "version": version, "oldest": channel.floor, "hint": "subscribe again without since or Last-Event-ID"},
                    status_code=410,
                )
        if self.closed:
            return _bad("the server is stopping", "subscribe again when it is back, with Last-Event-ID to resume", 503)
        listener = Listener(version if since is None else since, self.buffer)
        # On the event loop: replay the kept messages after the start, then go live; no gap.
        for message in channel.since(listener.since):
            listener.offer(message)
        channel.listeners.add(listener)
        return StreamingResponse(self._events(channel, listener, version, rows), media_type="text/event-stream", headers={"Cache-Control": "no-store"})

    async def _events(self, channel: Channel, listener: Listener, version: int, rows) -> AsyncIterator[str]:
        try:
            if rows is not None:
                yield _event({"version": version, "snapshot": rows_json(rows)}, version)
                yield _event({"version": version}, None, "snapshot_complete")
            while True:
                message = await listener.queue.get()
                if message is CLOSED:
                    return
                if message is FELL_BEHIND:
                    yield _event({"error": "fell behind", "version": listener.since, "hint": "reconnect with Last-Event-ID to resume"}, None, "error")
                    return
                yield _event(message, message["version"])
        finally:
            channel.listeners.discard(listener)


def _event(data: dict, id: int | None, name: str | None = None) -> str:
    head = (f"event: {name}\n" if name else "") + (f"id: {id}\n" if id is not None else "")
    return head + "data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n\n"


class RequestRefused(Exception):
    """A request the server will not read: ``status`` (413, 408) and the message."""

    def __init__(self, status: int, message: str, hint: str):
        self.status, self.message, self.hint = status, message, hint


async def _refused(request: Request, error: Exception) -> Response:
    assert isinstance(error, RequestRefused)
    # The body was not read to its end: the connection cannot carry another request.
    return JSONResponse({"error": f"error: {error.message}", "hint": error.hint}, status_code=error.status, headers={"Connection": "close"})


def _bad(message: str, hint: str, status: int = 400) -> Response:
    return JSONResponse({"error": f"error: {message}", "hint": hint}, status_code=status)


async def _nablog_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, NablogError)
    lines = str(error).splitlines()
    hint = next((line[len("hint: "):] for line in lines if line.startswith("hint: ")), None)
    body = {"error": "\n".join(line for line in lines if not line.startswith("hint: ")), "hint": hint}
    if isinstance(error, ConstraintError):  # a transaction that would break a constraint: a conflict
        return JSONResponse({**body, "violations": [v.to_json() for v in error.violations]}, status_code=409)
    return JSONResponse(body, status_code=400)


def create_app(db: Database, token: str, token_for_reads: bool = False, buffer: int = BUFFER, **limits) -> Starlette:
    """The ASGI application serving ``db``; ``token`` guards writes and proposals (and every read
    but ``/version`` if ``token_for_reads``); ``limits`` are :class:`Server`'s bounds."""
    server = Server(db, token, token_for_reads, buffer, **limits)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        server.loop = asyncio.get_running_loop()
        yield

    routes = [
        Route("/version", server.version, methods=["GET"]),
        Route("/query", server.query, methods=["GET"]),
        Route("/why", server.why, methods=["GET"]),
        Route("/transactions", server.transactions, methods=["POST"]),
        Route("/propose", server.propose, methods=["POST"]),
        Route("/apply", server.apply, methods=["POST"]),
        Route("/subscribe", server.subscribe, methods=["GET"]),
    ]
    from .page import Page  # the web page and the endpoints only it needs

    routes += Page(server).routes()
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={NablogError: _nablog_error, RequestRefused: _refused})
    app.state.server = server
    return app



def serve(
    db: Database,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str = "",
    token_for_reads: bool = False,
    announce=print,
    **limits,
) -> None:
    """Run the application with uvicorn until interrupted; ``announce`` gets the address line
    (with the real port when ``port`` is 0) once the socket listens."""
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        raise NablogError(f"cannot listen on {host}:{port}: {e.strerror}", hint="choose another --port (0 picks a free one)") from None
    sock.listen(128)
    bound = sock.getsockname()[1]
    # A server answers many requests over one state: the tables every proposal reads are built
    # before it listens, not in its first client's request.
    db.prepare()
    # The process lives as long as its database: a monitor's kept state may leave the collector.
    subscriptions.FREEZE_KEPT_STATE = True
    app = create_app(db, token, token_for_reads, **limits)
    state: Server = app.state.server

    class Stopping(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            super().handle_exit(sig, frame)
            if state.loop is not None:  # SIGTERM/SIGINT: end the open streams at once
                state.loop.call_soon_threadsafe(state.close_streams)

    server = Stopping(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=1))
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    announce(f"nablog serving version {db.version} on http://{shown}:{bound}")
    server.run(sockets=[sock])


__all__ = ["create_app", "serve"]
