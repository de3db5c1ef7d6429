"""A throwaway PostgreSQL server: initdb and pg_ctl into a temporary directory, on a loopback port.

What the tests, the benchmark and the README's Chinook example run against. PostgreSQL refuses
to run as root (``initdb: cannot be run as root``), so when this process is root the server runs
as an unprivileged user (``nobody``), which owns the data directory; clients connect over TCP on
127.0.0.1 with trust authentication as the superuser ``postgres`` (loopback only: the server
listens on no other address).

"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ..lang import NablogError

SEARCH = ("/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin", "/usr/local/pgsql/bin")
"""Where PostgreSQL's server programs are looked for (after ``$NABLOG_PG_BIN`` and ``PATH``)."""

INSTALL_HINT = "install PostgreSQL's server programs: apt-get install postgresql-15 (or set NABLOG_PG_BIN to the directory holding initdb and pg_ctl)"

UNPRIVILEGED = "nobody"


def find_binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``, or None."""
    given = os.environ.get("NABLOG_PG_BIN")
    candidates = [Path(given)] if given else []
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    candidates += [Path(p) for p in SEARCH]
    for directory in candidates:
        if (directory / "initdb").exists() and (directory / "pg_ctl").exists():
            return directory
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TemporaryServer:
    """A PostgreSQL server in a temporary directory; ``url`` connects to its ``postgres`` database.

    Use as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(self, port: int | None = None):
        self.bin = find_binaries()
        if self.bin is None:
            raise NablogError("PostgreSQL's server programs (initdb, pg_ctl) were not found", hint=INSTALL_HINT)
        self.port = port or _free_port()
        self.directory: Path | None = None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", UNPRIVILEGED, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, cwd="/")
        if done.returncode:
            raise NablogError(f"{args[0]} failed: {(done.stderr or done.stdout).strip()}", hint=INSTALL_HINT)

    def start(self) -> "TemporaryServer":
        self.directory = Path(tempfile.mkdtemp(prefix="nablog-pg-"))
        data = self.directory / "data"
        if os.geteuid() == 0:
            import pwd

            user = pwd.getpwnam(UNPRIVILEGED)
            os.chown(self.directory, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync")
        options = f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.directory} -c fsync=off -c max_connections=50"
        self._run("pg_ctl", "-D", str(data), "-l", str(self.directory / "log"), "-o", options, "-w", "-t", "60", "start")
        deadline = time.monotonic() + 30
        while True:  # pg_ctl -w waits for the socket; a TCP client may still be refused for a moment
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise NablogError(f"the PostgreSQL server on port {self.port} did not start", where=str(self.directory / "log"), hint=INSTALL_HINT) from None
                time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.directory is None:
            return
        try:
            self._run("pg_ctl", "-D", str(self.directory / "data"), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def __enter__(self) -> "TemporaryServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


__all__ = ["INSTALL_HINT", "TemporaryServer", "find_binaries"]
