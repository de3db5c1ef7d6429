"""What the API (:mod:`nablog.server.app`) and the page (:mod:`nablog.server.page`) both use: the
answer to a request without the token, and following a search that runs in a child process."""

from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

from starlette.responses import JSONResponse, Response

from ..apart import Apart

PROPOSE_GRACE = 10.0
"""Seconds a search may overrun its deadline (finishing the realization it verifies) before it is killed."""
DISCONNECT_POLL = 0.2
"""Seconds between two looks at whether a proposal's client is still connected."""


async def followed(search: Apart, seconds: float, left=None) -> AsyncIterator[tuple[str, object]]:
    """What a search in a child process (:meth:`nablog.database.Database.apart`) sends, as it
    comes, read on the event loop: ``("item", x)`` per item, then ``("done", None)`` once its
    answer is whole (``search.result()`` has it); ``("left", None)`` when ``left()`` says the
    client disconnected, ``("late", None)`` past ``seconds``. The caller cancels the search."""
    loop = asyncio.get_running_loop()
    readable = asyncio.Event()
    pipe = search.fileno()
    loop.add_reader(pipe, readable.set)
    limit = loop.time() + seconds
    try:
        while True:
            readable.clear()
            whole = search.pump()
            for item in search.items():
                yield "item", item
            if whole:
                yield "done", None
                return
            if left is not None and await left():
                yield "left", None
                return
            if loop.time() > limit:
                yield "late", None
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(readable.wait(), DISCONNECT_POLL)
    finally:
        loop.remove_reader(pipe)  # before the caller's cancel closes it


def unauthorized() -> Response:
    return JSONResponse(
        {"error": "error: this needs the server's token", "hint": "send 'Authorization: Bearer TOKEN' with the token from the server's token file"},
        status_code=401,
        headers={"WWW-Authenticate": "Bearer"},
    )
