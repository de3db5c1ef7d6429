"""`nablog why`: why a ground atom holds (a least-height proof) or does not (what fails), as text, JSON, Graphviz or SVG."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from ..lang import NablogError
from .arguments import split_query
from .commands import _options, _propose, open_database
from .explain import _write_text_atomically
from .output import print_proposal


def run_why(args: argparse.Namespace) -> int:
    files, atom = split_query(args.files)
    if atom is None:
        raise NablogError("no atom given", hint="write the ground atom after the files, e.g. nablog why chairs.lp 'staff_chair(aravindan, matthias)'")
    db = open_database(args, files)
    why = db.why(atom, depth=args.depth, all=args.all)
    out = sys.stdout
    if args.fix and not why.holds:
        proposal = _propose(db, _options(args, db), f"+{why.atom}.")
        if args.json:
            json.dump({**why.to_json(), "fix": proposal.to_json()}, out, ensure_ascii=False)
            out.write("\n")
        else:
            out.write(why.text() + "\n\nthe smallest changes that make it hold:\n")
            print_proposal(out, proposal)
        return 0
    for option, picture in (("dot", why.dot), ("svg", why.svg)):
        target = getattr(args, option)
        if target == "-":
            out.write(picture())
            return 0
        if target:
            _write_text_atomically(Path(target), picture())
    if args.json:
        json.dump(why.to_json(), out, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(why.text(expand="nablog why " + " ".join(shlex.quote(f) for f in files)) + "\n")
    for option in ("dot", "svg"):
        if getattr(args, option):
            print(f"wrote the picture to {getattr(args, option)}", file=sys.stderr)
    return 0
