"""The `nablog` command: check, query and explain deductive databases from the shell.

Exit status: 0 success, 1 constraint violations found (``check``), 2 a user error (the message
says where and how to fix it), 3 an internal error (set ``NABLOG_DEBUG=1`` for the traceback).

The command's parser and the words of its arguments are :mod:`.arguments`; the commands over a
database read from files :mod:`.commands`, ``explain`` :mod:`.explain`, those that talk HTTP
(``serve``, ``watch``, ``commit``) :mod:`.remote`; what they print :mod:`.output`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

from ..lang import NablogError
from .arguments import build_parser, take_requests
from .commands import run_apply, run_check, run_materialize, run_propagate, run_propose, run_query, run_repair, run_undo
from .explain import run_explain
from .remote import run_commit, run_serve, run_watch
from .why import run_why

COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "check": run_check,
    "materialize": run_materialize,
    "query": run_query,
    "propose": run_propose,
    "apply": run_apply,
    "propagate": run_propagate,
    "undo": run_undo,
    "explain": run_explain,
    "why": run_why,
    "repair": run_repair,
    "serve": run_serve,
    "watch": run_watch,
    "commit": run_commit,
}
"""The function that runs each command of :func:`~.arguments.build_parser`, by its name."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv, requests = take_requests(list(sys.argv[1:] if argv is None else argv))
    args, extras = parser.parse_known_args(argv)
    # Positional arguments after the options (nablog query FILE --data DIR ATOM) belong to FILE...
    if extras and (not hasattr(args, "files") or any(e.startswith("-") and len(e) > 1 for e in extras)):
        parser.error("unrecognized arguments: " + " ".join(e for e in extras if e.startswith("-") or not hasattr(args, "files")))
    if extras or requests:
        args.files = [*args.files, *extras, *requests]
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    try:
        return COMMANDS[args.command](args)
    except NablogError as error:
        print(error, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:  # an internal error: never a raw traceback unless asked for
        if os.environ.get("NABLOG_DEBUG"):
            raise
        print(f"internal error: {type(error).__name__}: {error}", file=sys.stderr)
        print("hint: this is a bug in nablog; rerun with NABLOG_DEBUG=1 for the traceback and report it", file=sys.stderr)
        return 3


__all__ = ["COMMANDS", "build_parser", "main"]
