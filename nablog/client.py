"""A Python client for `nablog serve`: query, commit, propose/apply, and subscriptions that resume.

Only the standard library: a client needs neither the server's dependencies nor a database.

>>> client = Client("http://127.0.0.1:8000", token="secret")   # doctest: +SKIP
>>> client.commit(insert=["edge(h, d)"], delete=["edge(b, c)"])  # doctest: +SKIP
7
>>> for message in client.subscribe("closure(h, X)"):            # doctest: +SKIP
...     print(message)
{'version': 7, 'snapshot': [['h', 'c'], ['h', 'd'], ['h', 'g']]}
{'version': 7, 'snapshot_complete': True}
{'version': 8, 'plus': [], 'minus': [['h', 'c'], ['h', 'g']]}

A subscription remembers the last version it delivered (``last_version``); when the connection
drops it reconnects with ``Last-Event-ID`` and continues without loss or repetition, or raises
:class:`TooOld` when the server's history no longer reaches back.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from typing import Iterator


class ClientError(Exception):
    """The server refused a request: ``status`` is the HTTP status, ``hint`` its advice."""

    def __init__(self, status: int, message: str, hint: str | None = None):
        super().__init__(message + (f"\nhint: {hint}" if hint else ""))
        self.status = status
        self.message = message
        self.hint = hint


class TooOld(ClientError):
    """The server no longer has every message after the version asked for: take a new snapshot."""


class Client:
    """Talks to one server at ``url`` (``http://host:port``); ``token`` for writes (and reads when
    the server asks for it); ``timeout`` in seconds for each request (not for a subscription's
    wait between messages, which is ``idle`` of :meth:`subscribe`)."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 30.0):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not an http URL: {url!r} (expected http://HOST:PORT)")
        self.host = parts.hostname
        self.port = parts.port or 80
        self.token = token
        self.timeout = timeout

    # -- requests ---------------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _request(self, method: str, path: str, body: dict | None = None) -> dict:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            headers = self._headers()
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        finally:
            connection.close()
        return _answer(response.status, payload)

    def version(self) -> int:
        return self._request("GET", "/version")["version"]

    def query(self, atom: str) -> list[list]:
        """The rows matching ``atom`` now (as ``nablog query --json`` prints them)."""
        return self._request("GET", "/query?" + urllib.parse.urlencode({"atom": atom}))["rows"]

    def commit(self, insert=(), delete=()) -> int:
        """Insert and delete base facts (atoms as text) in one transaction; its version."""
        return self._request("POST", "/transactions", {"insert": list(insert), "delete": list(delete)})["version"]

    def propose(self, request: str, limit: int | None = None) -> dict:
        body = {"request": request}
        if limit is not None:
            body["limit"] = limit
        return self._request("POST", "/propose", body)

    def apply(self, request: str, pick: int = 1, version: int | None = None) -> dict:
        """Apply realization ``pick`` of ``request``; refused if the database moved past ``version``."""
        body = {"request": request, "pick": pick}
        if version is not None:
            body["version"] = version
        return self._request("POST", "/apply", body)

    # -- subscriptions ----------------------------------------------------------------------------

    def subscribe(self, query: str, mode: str | None = None, since: int | None = None, idle: float | None = None, reconnect: int = 3) -> "Stream":
        """The messages of a subscription to ``query``: a snapshot and its completion mark (unless
        resuming ``since`` a version), then one message per commit that changes the answer.
        ``idle`` bounds the wait for the next message (``TimeoutError``); ``reconnect`` is how
        many times in a row a dropped connection is resumed by version."""
        return Stream(self, query, mode, since, idle, reconnect)


class Stream:
    """An iterator over a subscription's messages; ``last_version`` is the newest delivered."""

    def __init__(self, client: Client, query: str, mode: str | None, since: int | None, idle: float | None, reconnect: int):
        self.client = client
        self.query = query
        self.mode = mode
        self.last_version = since
        self.idle = idle
        self.reconnect = reconnect
        self._connection: http.client.HTTPConnection | None = None

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __iter__(self) -> Iterator[dict]:
        failures = 0
        while True:
            try:
                for message in self._once():
                    failures = 0
                    yield message
                return
            except (ConnectionError, http.client.IncompleteRead, http.client.RemoteDisconnected):
                failures += 1
                if failures > self.reconnect or self.last_version is None:
                    raise
                time.sleep(min(0.05 * 2**failures, 1.0))
            finally:
                self.close()

    def _once(self) -> Iterator[dict]:
        params = {"query": self.query}
        if self.mode:
            params["mode"] = self.mode
        headers = self.client._headers()
        headers["Accept"] = "text/event-stream"
        if self.last_version is not None:
            headers["Last-Event-ID"] = str(self.last_version)
        self._connection = http.client.HTTPConnection(self.client.host, self.client.port, timeout=self.idle)
        self._connection.request("GET", "/subscribe?" + urllib.parse.urlencode(params), headers=headers)
        response = self._connection.getresponse()
        if response.status != 200:
            _answer(response.status, response.read())
        event, data = None, []
        while True:
            try:
                line = response.fp.readline()
            except TimeoutError:
                raise TimeoutError(f"no message for {self.query} within {self.idle} s") from None
            if not line:
                raise ConnectionError("the server closed the stream")
            line = line.decode("utf-8").rstrip("\r\n")
            if line:
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "event":
                    event = value
                elif field == "data":
                    data.append(value)
                continue
            if not data:
                continue
            message = json.loads("\n".join(data))
            kind, event, data = event, None, []
            if kind == "snapshot_complete":
                yield {"version": message["version"], "snapshot_complete": True}
            elif kind == "error":
                # Fell behind: resume from the last version delivered, as a reconnect would.
                raise ConnectionError(message.get("error", "the server ended the stream"))
            else:
                self.last_version = message["version"]
                yield message


def _answer(status: int, payload: bytes) -> dict:
    try:
        answer = json.loads(payload) if payload else {}
    except ValueError:
        answer = {"error": payload.decode("utf-8", "replace")}
    if status >= 400:
        kind = TooOld if status == 410 else ClientError
        raise kind(status, answer.get("error", f"HTTP {status}"), answer.get("hint"))
    return answer


__all__ = ["Client", "ClientError", "Stream", "TooOld"]
