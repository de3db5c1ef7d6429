"""The `nablog` commands that talk HTTP: `serve` a database, `watch` a subscription and `commit` a transaction to a server."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..lang import NablogError
from .commands import open_database


def _read_token(path: str) -> str:
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except OSError as e:
        raise NablogError(f"cannot read the token file {path}: {e.strerror}", hint="give the file the server's token is in") from None
    if not token:
        raise NablogError(f"the token file {path} is empty", hint="write a token (any long random text) into it")
    return token


def run_serve(args: argparse.Namespace) -> int:
    try:
        from ..server.app import serve
    except ImportError as e:
        raise NablogError(f"nablog serve needs the server extra ({e.name} is missing)", hint="pip install 'nablog[server]'") from None
    db = open_database(args, args.files)
    if args.token_file:
        token, for_reads = _read_token(args.token_file), True
    else:
        import secrets

        from ..io.base import atomic_write

        token, for_reads = secrets.token_urlsafe(24), False
        path = _token_directory(args.files) / ".nablog" / "token"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda f: f.write(token.encode() + b"\n"))
        path.chmod(0o600)
        print(f"write token in {path}", flush=True)
    limits = {"max_body": args.max_body, "read_timeout": args.read_timeout, "deadline": args.deadline, "max_deadline": args.max_deadline}
    watcher = _watch(db) if args.notify else None
    try:
        serve(db, args.host, args.port, token, for_reads, announce=lambda line: print(line, flush=True), **limits)
    finally:
        if watcher is not None:
            watcher.stop()
    return 0


def _token_directory(files: list[str]) -> Path:
    """Where a new write token is kept: beside the first program or data file, or in the current
    directory when the database is a URL with no file beside it (a URL is no path).

    >>> _token_directory(["postgresql://u@127.0.0.1:5432/shop"]) == Path.cwd()
    True
    >>> _token_directory(["postgresql://u@127.0.0.1:5432/shop", "/srv/rules/extra.lp"])
    PosixPath('/srv/rules')
    """
    from ..sql import is_url

    path = next((f for f in files if not is_url(f)), None)
    return Path(path).resolve().parent if path is not None else Path.cwd()


def _watch(db):
    """``--notify``: triggers on the database's tables, and a thread refreshing on their notifications."""
    from ..sql.notify import Watcher, install

    if not hasattr(db.stores, "relations_by_name"):
        raise NablogError("--notify needs a database opened by its URL (postgresql://…)", hint="serve the files without --notify")
    tables = install(db.stores)
    watcher = Watcher(db.stores, db.refresh)
    watcher.start()
    watcher.listening.wait(10)
    if watcher.error is not None:
        raise NablogError(f"cannot listen for other clients' commits: {watcher.error}", hint="check that the server accepts another connection")
    print(f"pushing other clients' commits to subscribers (triggers on {len(tables)} tables)", flush=True)
    return watcher


def _client(url: str, token: str | None):
    """A client of the server at ``url``; a URL that is not ``http://HOST:PORT`` is a user error."""
    from ..client import Client

    try:
        return Client(url, token=token)
    except ValueError:
        raise NablogError(f"not a server address: {url!r}", hint="give the server's URL first, e.g. http://127.0.0.1:8000") from None


def run_watch(args: argparse.Namespace) -> int:
    from ..client import ClientError

    client = _client(args.url, _read_token(args.token_file) if args.token_file else None)
    try:
        for n, message in enumerate(client.subscribe(args.query, mode=args.mode, since=args.since), 1):
            sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
            sys.stdout.flush()
            if args.count is not None and n >= args.count:
                break
    except ClientError as e:
        raise NablogError(f"{args.url}: {e.message.removeprefix('error: ')}", hint=e.hint) from None
    except OSError as e:
        raise NablogError(f"cannot reach {args.url}: {e}", hint="is 'nablog serve' running there?") from None
    return 0


def run_commit(args: argparse.Namespace) -> int:
    from ..client import ClientError
    from ..lang import Delta

    url, *changes = args.files
    client = _client(url, _read_token(args.token_file))
    change = Delta.parse(" ".join(changes)).to_json()
    try:
        version = client.commit(insert=change["insert"], delete=change["delete"])
    except ClientError as e:
        raise NablogError(f"{url}: {e.message.removeprefix('error: ')}", hint=e.hint) from None
    except OSError as e:
        raise NablogError(f"cannot reach {url}: {e}", hint="is 'nablog serve' running there?") from None
    print(json.dumps({"version": version}))
    return 0

