"""Work on a database as it is at one version, in a child process that nothing waits for.

A proposal searches for seconds to minutes. Run under the database's lock it made every query,
commit and subscription wait until its deadline (issue 24, fault 2); run beside commits in a
thread it would read facts a commit is changing, and compete with them for the interpreter. A
forked child has the database of version N as it was at the fork — an immutable copy that the
kernel makes in milliseconds, page by page as the parent changes them — while the parent goes on
committing; and killing the child stops its work at once, so no search burns CPU after its client
is gone or its deadline passed.

The protocol, step by step:

1. The parent holds the database's lock across the fork (no commit is half done in the copy)
   and releases it at once: the child's work never holds it.
2. The child puts back the default handlers of SIGINT and SIGTERM (a server's handlers would
   stop the parent's event loop) and runs ``work(db, send)``: each ``send(item)`` writes a frame
   (length, then the pickled item) to a pipe as the work goes (a realization as it is found),
   and the outcome — the value, or the error raised — is the last frame. The child leaves with
   ``os._exit`` (no atexit handlers, none of the parent's buffers flushed twice).
3. The parent reads the pipe until its end (:meth:`Apart.fileno` for an event loop's reader;
   :meth:`Apart.pump` reads what is there without blocking, :meth:`Apart.items` takes the items
   sent so far) and reaps the child; :meth:`Apart.cancel` kills and reaps it. A child that died
   without an answer is reported.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
from collections import deque
from typing import Any, Callable, Generic, TypeVar

from .lang import NablogError

T = TypeVar("T")
D = TypeVar("D")  # what the work reads: a nablog.database.Database (not imported: Database imports this)


class Apart(Generic[T]):
    """A child process running ``work(db, send)`` on ``db`` as it was when started (call it with
    the database's lock held: :meth:`nablog.database.Database.apart`)."""

    def __init__(self, db: D, work: Callable[[D, Callable[[Any], None]], T]):
        read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child (its coverage is not collected)
            os.close(read)
            _run_child(db, work, write)
        os.close(write)
        os.set_blocking(read, False)
        self._read: int | None = read
        self._buffer = bytearray()
        self._items: deque = deque()
        self._outcome: tuple[str, Any] | None = None
        self._ended = False  # the pipe's end was read: the answer is whole
        self._status: int | None = None  # the child's, once reaped

    def fileno(self) -> int:
        """The pipe the answer comes on: readable when :meth:`pump` has something to read."""
        assert self._read is not None, "the child was reaped"
        return self._read

    def pump(self) -> bool:
        """Read what the child has written, without waiting; True once the answer is whole."""
        while not self._ended:
            try:
                chunk = os.read(self.fileno(), 1 << 16)
            except BlockingIOError:
                break
            self._ended = not chunk
            self._buffer += chunk
        while len(self._buffer) >= _HEAD.size:
            (size,) = _HEAD.unpack_from(self._buffer)
            if len(self._buffer) < _HEAD.size + size:
                break
            kind, value = pickle.loads(self._buffer[_HEAD.size : _HEAD.size + size])
            del self._buffer[: _HEAD.size + size]
            if kind == "item":
                self._items.append(value)
            else:
                self._outcome = (kind, value)
        return self._ended

    def items(self) -> list:
        """The items the work sent since the last call, in order."""
        taken = list(self._items)
        self._items.clear()
        return taken

    def result(self) -> T:
        """The work's value (waiting for it if need be); the error it raised is raised."""
        if not self._ended:
            os.set_blocking(self.fileno(), True)
            self.pump()  # blocking now: reads to the pipe's end
        self.cancel()  # reaped: it has written all and is leaving
        if self._outcome is None:
            raise NablogError(
                f"the worker process ended without an answer ({_ending(self._status)})",
                hint="the work was killed (out of memory?) or cancelled; try again with a smaller request",
            )
        kind, value = self._outcome
        if kind == "error":
            raise value
        return value

    def cancel(self) -> None:
        """Stop the work now (SIGKILL) if it still runs, close the pipe and reap the child;
        nothing the second time. An event loop's reader of :meth:`fileno` goes first."""
        if self._status is not None:
            return
        if not self._ended:
            os.kill(self.pid, signal.SIGKILL)
        if self._read is not None:
            os.close(self._read)
            self._read = None
        _, self._status = os.waitpid(self.pid, 0)

    @property
    def running(self) -> bool:
        """Whether the work may still be going (no whole answer yet, not cancelled)."""
        return not self._ended and self._status is None


_HEAD = struct.Struct("<Q")  # a frame's length


def _run_child(db: Any, work: Callable, answer: int) -> None:  # pragma: no cover - the child
    def write(kind: str, value: Any) -> None:
        try:
            data = pickle.dumps((kind, value))
            pickle.loads(data)
        except Exception:  # an error type that does not pickle: its message still gets through
            data = pickle.dumps(("error", NablogError(str(value).removeprefix("error: "))))
        view = memoryview(_HEAD.pack(len(data)) + data)
        while view:
            view = view[os.write(answer, view):]

    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            outcome = ("value", work(db, lambda item: write("item", item)))
        except NablogError as e:
            outcome = ("error", e)
        except BaseException as e:  # reported to the parent as what it is, not lost
            outcome = ("error", RuntimeError(f"{type(e).__name__}: {e}"))
        write(*outcome)
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _ending(status: int | None) -> str:
    if status is None:
        return "still running"
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"


__all__ = ["Apart"]
