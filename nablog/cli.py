"""The `nablog` command: check, query and explain deductive databases from the shell.

Exit status: 0 success, 1 constraint violations found (``check``), 2 a user error (the message
says where and how to fix it), 3 an internal error (set ``NABLOG_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path
from typing import Sequence, TextIO

from . import __version__
from .database import Database, Violation
from .engines import ENGINES
from .solver import CANDIDATE_POLICIES, METHODS
from .views import METHODS as PROPAGATION_METHODS
from .views.monitor import MODES as MAINTENANCE_MODES
from .lang import NablogError, NablogWarning, format_constant, row_sort_key

PROGRAM_SUFFIXES = (".lp", ".dl")


REQUEST_COMMANDS = ("propose", "apply", "propagate", "commit")
_REQUEST = re.compile(r"[-+]\s*[a-z_][A-Za-z0-9_]*\s*[(.]")


UPDATE_OPTIONS = ("--simplify", "--tableau")


def _take_requests(argv: list[str]) -> tuple[list[str], list[str]]:
    """The request arguments of a command that takes one, taken out of ``argv``: argparse reads
    ``-edge(a,b).`` as an unknown option, and a request after ``--data DIR`` as an extra. An
    update given to an option (``--simplify -m(a,b).``) is joined to it (``--simplify=...``)."""
    joined: list[str] = []
    for arg in argv:
        if joined and joined[-1] in UPDATE_OPTIONS and _REQUEST.match(arg):
            joined[-1] = f"{joined[-1]}={arg}"
        else:
            joined.append(arg)
    if not joined or joined[0] not in REQUEST_COMMANDS:
        return joined, []
    rest: list[str] = [joined[0]]
    requests: list[str] = []
    for arg in joined[1:]:
        (requests if _REQUEST.match(arg) and not _is_file(arg) else rest).append(arg)
    return rest, requests


def _count_argument(text: str) -> int:
    """An argparse type: a whole number, at least 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _limit_argument(text: str) -> int:
    """An argparse type for --limit: a whole number, at least 1."""
    value = _count_argument(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more (leave --limit out for every realization)")
    return value


def _seconds_argument(text: str) -> float:
    """An argparse type for --timeout: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {text} (leave --timeout out to search without one)")
    return value


def _is_file(arg: str) -> bool:
    try:
        return Path(arg).exists()
    except OSError:  # a long request is no file name the system accepts
        return False


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv, requests = _take_requests(list(sys.argv[1:] if argv is None else argv))
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
        return args.run(args)
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nablog",
        description="nablog: view updating and repair for deductive databases (Datalog with stratified negation).",
        epilog="Run 'nablog COMMAND --help' for a command's options. Errors exit with status 2.",
    )
    parser.add_argument("--version", action="version", version=f"nablog {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command")

    check = commands.add_parser(
        "check",
        help="parse, analyse and report constraint violations (exit 1 when there are any)",
        description="Parse and analyse the program, compute the model, and report every violated "
        "constraint with its ground instances. Exit status 1 when the database is inconsistent.",
    )
    _add_database_options(check)
    check.add_argument("--json", action="store_true", help="print a JSON report")
    check.add_argument("--limit", type=_count_argument, default=5, metavar="N", help="witnesses shown per constraint in the table (default 5)")
    check.add_argument("--witnesses", metavar="DIR", help="with --engine spark: write every violated instance to DIR/<constraint>/ as Parquet")
    check.set_defaults(run=run_check)

    materialize = commands.add_parser(
        "materialize",
        help="compute the model on Spark and write each derived relation as Parquet",
        description="Compute the perfect model on Spark and write every derived relation to OUT/<relation>/ "
        "(Parquet, columns c0, c1, ...), atomically. With --model DIR (a model written by materialize), "
        "bring it up to date after the base changes in --insert/--delete instead (seed 002's update "
        "propagation) and write the new model and its changes (OUT/ins__<relation>/, OUT/del__<relation>/).",
    )
    materialize.add_argument("files", nargs="+", metavar="FILE", help="program files (.lp, .dl)")
    materialize.add_argument("--data", action="append", default=[], metavar="DIR", help="base facts: directories of CSV/Parquet files or Parquet directories named after relations, single files (repeatable)")
    materialize.add_argument("--out", required=True, metavar="DIR", help="the directory to write (created if missing)")
    materialize.add_argument("--engine", choices=("spark",), default="spark", help="evaluation engine (materialize runs on spark)")
    materialize.add_argument("--master", metavar="URL", help="Spark master URL (default: $SPARK_MASTER or local[*])")
    materialize.add_argument("--checkpoint-dir", metavar="DIR", help="where Spark checkpoints go (shared storage on a cluster; default: executor storage)")
    materialize.add_argument("--model", metavar="DIR", help="a stored model to bring up to date instead of computing one")
    materialize.add_argument("--insert", action="append", default=[], metavar="PATH", help="base facts to insert, read like --data (with --model; repeatable)")
    materialize.add_argument("--delete", action="append", default=[], metavar="PATH", help="base facts to delete, read like --data (with --model; repeatable)")
    materialize_header = materialize.add_mutually_exclusive_group()
    materialize_header.add_argument("--header", dest="header", action="store_true", default=None, help="CSV files have a header row")
    materialize_header.add_argument("--no-header", dest="header", action="store_false", help="CSV files have no header row")
    materialize.add_argument("--strict", action="store_true", help="a body predicate with no rules, facts, data or #base line is an error, not an empty relation with a warning")
    materialize.add_argument("--json", action="store_true", help="print a JSON summary")
    materialize.set_defaults(run=run_materialize)

    query = commands.add_parser(
        "query",
        help="print the model's derived relations, or the rows matching an atom",
        description="Without ATOM, print every derived relation of the model; with ATOM "
        "(e.g. 'p(X, 1)'), print the rows of its predicate that match it.",
    )
    _add_database_options(query, atom=True)
    query.add_argument("--json", action="store_true", help="print JSON: relation -> sorted rows, or the matching rows")
    query.add_argument("--magic", action="store_true", help="with ATOM: evaluate the magic-set rewriting for ATOM (only what its constants need) instead of the whole model")
    query.add_argument("--ground", action="store_true", help="mediated views: print the ground answers (at most 1000, marked when there are more)")
    query.set_defaults(run=run_query)

    propose = commands.add_parser(
        "propose",
        help="every minimal set of base-fact changes that realizes a view update",
        description="Propose every subset-minimal realization of REQUEST (ground atoms to insert, "
        "+p(1,2)., and to delete, -q(a).): base-fact changes after which the request and every "
        "constraint hold, with their side effects on the views.",
    )
    _add_database_options(propose, request=True)
    _add_proposal_options(propose)
    propose.add_argument("--json", action="store_true", help="print one JSON object")
    propose.add_argument("--stream", action="store_true", help="print each realization as soon as it is verified (with --json: JSON lines)")
    propose.add_argument("--expand", action="store_true", help="list the members of each family of realizations")
    propose.set_defaults(run=run_propose)

    apply = commands.add_parser(
        "apply",
        help="propose, choose one realization and write it back atomically",
        description="Propose the realizations of REQUEST, choose one (--pick N, or --interactive "
        "at a terminal) and write its changes back to the files the facts came from. "
        "'nablog undo' takes it back.",
    )
    _add_database_options(apply, request=True)
    _add_proposal_options(apply)
    how = apply.add_mutually_exclusive_group(required=True)
    how.add_argument("--pick", type=int, metavar="N", help="apply realization N of the proposal (1 = first)")
    how.add_argument("--interactive", action="store_true", help="browse the realizations and choose at the terminal")
    apply.add_argument("--set", action="append", default=[], metavar="NEW=VALUE", help="a real value for a new constant, e.g. --set new1=infor3, or the member of a family, --set D=d42")
    apply.add_argument("--json", action="store_true", help="print the induced update as JSON")
    apply.set_defaults(run=run_apply)

    propagate = commands.add_parser(
        "propagate",
        help="the induced update of a change of base facts, without applying it",
        description="Compute every base and derived fact that appears or disappears when UPDATE "
        "(written like a request: -edge(b, c). +edge(h, d).) is applied to the base facts.",
    )
    _add_database_options(propagate, request=True)
    propagate.add_argument("--method", choices=PROPAGATION_METHODS, default="incremental", help="incremental maintenance (default), the paper's rules R∆ ∪ R∆τ evaluated literally (rules), seed 001's maintenance rules over the kept model (maintenance) or Rederivation on Demand with no view kept (rod)")
    propagate.add_argument("--json", action="store_true", help='print {"insert": [ATOM, ...], "delete": [ATOM, ...]}')
    propagate.set_defaults(run=run_propagate)

    undo = commands.add_parser(
        "undo",
        help="take back the last applied change",
        description="Undo the newest change written by 'nablog apply' for this database: its files "
        "come back byte for byte. The undo log is .nablog/history.json beside the first program file.",
    )
    _add_database_options(undo)
    undo.add_argument("--forget", action="store_true", help="drop the newest entry of the undo log without changing the data (when undo says the data changed since)")
    undo.set_defaults(run=run_undo)

    explain = commands.add_parser(
        "explain",
        help="show strata, components and the predicate dependency graph",
        description="Show how the program is evaluated: its strata, its strongly connected "
        "components in evaluation order, and the dependency graph.",
    )
    explain.add_argument("files", nargs="+", metavar="FILE", help="program files (.lp, .dl)")
    explain.add_argument("--dot", metavar="OUT", help="write the dependency graph in Graphviz format to OUT ('-' for stdout)")
    explain.add_argument("--rules", choices=("normalized", "up", "vu", "maintenance", "rod"), help="print a transformed rule set: normalized rules (seed 002 §2.2), update propagation rules R∆ ∪ R∆τ (Def. 4, 5), view-update rules R∇ ∪ R∇τ (Def. 9, 10), seed 001's maintenance rules (Algorithm 1) or RoD rules (Algorithm 2)")
    explain.add_argument("--simplify", metavar="UPDATE", help="print the simplified constraint checks for an update, e.g. '+m1(a, b).' (seed 004, After^U and Optimize)")
    explain.add_argument("--tableau", metavar="REQUEST", help="print the update tableau of a view-update request (seed 003): branches, closed/open marks, HS(b) and the minimality test; with --dot OUT, write it in Graphviz format")
    explain.add_argument("--materialized", action="store_true", help="with --tableau: the tableau over the materialized view (IDB+, no minimality test)")
    explain.add_argument("--branches", type=int, metavar="N", help="with --tableau: stop after N open finished branches")
    explain.set_defaults(run=run_explain)

    repair = commands.add_parser(
        "repair",
        help="find every violation and a minimal correction table; write the repaired data",
        description="Find the violated constraints, compute minimal correction tables (insertions and "
        "deletions that restore consistency), and write the repaired relations and the table to --out. "
        "Exit status 0 when the result is consistent, 1 when no correction table was found.",
    )
    _add_database_options(repair)
    repair.add_argument("--out", metavar="DIR", help="write the repaired relations and corrections.csv (the table) to DIR")
    repair.add_argument("--format", choices=("csv", "parquet"), default="csv", help="file format for --out (default csv)")
    repair.add_argument("--policy", default="subset", metavar="POLICY", help="subset (default: subset-minimal), min-card (fewest changes), or trust=REL:W,... (least weight)")
    repair.add_argument("--enumerate", type=int, default=1, metavar="N", help="list up to N correction tables (default 1)")
    repair.add_argument("--timeout", type=float, metavar="S", help="stop the search after S seconds")
    repair.add_argument("--protect", action="append", default=[], metavar="P", help="a relation (p) or fact (p(1,a)) that must not change (repeatable)")
    repair.add_argument("--set", action="append", default=[], metavar="NEW=VALUE", help="a real value for a new constant of an inserted fact")
    repair.add_argument("--interactive", action="store_true", help="verify facts with a person, one deciding fact at a time (seed 004, case 2)")
    repair.add_argument("--verified", metavar="FILE", help="the verified table for --interactive (default .nablog/verified.csv beside the first program)")
    repair.add_argument("--json", action="store_true", help="print {consistent, violations, repairs} as JSON instead of the report")
    repair.set_defaults(run=run_repair)

    serve = commands.add_parser(
        "serve",
        help="serve the database over HTTP: query, transactions, propose/apply, subscriptions",
        description="Serve the database over HTTP on loopback (by default): POST /transactions commits "
        "base changes, GET /subscribe?query=ATOM streams the answer and then what enters and leaves it "
        "per commit (Server-Sent Events, resumable by version). Writes need the token; reads too when "
        "--token-file is given. Without --token-file a token is made and written to .nablog/token beside "
        "the first program file. Needs the 'server' extra (pip install 'nablog[server]').",
    )
    _add_database_options(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, loopback only)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    serve.add_argument("--token-file", metavar="F", help="a file holding the bearer token; when given, reads need it too")
    serve.set_defaults(run=run_serve)

    watch = commands.add_parser(
        "watch",
        help="subscribe to a query on a server and print its messages as JSON lines",
        description="Print the snapshot of QUERY's answer, then one JSON line per commit that changes it; "
        "reconnects by version when the connection drops.",
    )
    watch.add_argument("url", metavar="URL", help="the server, e.g. http://127.0.0.1:8000")
    watch.add_argument("query", metavar="QUERY", help="an atom, e.g. 'closure(h, X)'")
    watch.add_argument("--mode", choices=MAINTENANCE_MODES, help="how the server computes differentials (default materialized)")
    watch.add_argument("--since", type=_count_argument, metavar="N", help="resume after version N instead of taking a snapshot")
    watch.add_argument("--count", type=_count_argument, metavar="N", help="stop after N messages")
    watch.add_argument("--token-file", metavar="F", help="the server's token file (when reads need the token)")
    watch.set_defaults(run=run_watch)

    commit = commands.add_parser(
        "commit",
        help="commit base-fact changes to a server: nablog commit URL '+edge(a,b).' '-edge(b,c).'",
        description="Send one transaction to a running 'nablog serve' and print its version.",
    )
    commit.add_argument("files", nargs="+", metavar="URL CHANGE", help="the server's URL, then the changes, e.g. '+edge(a,b). -edge(b,c).'")
    commit.add_argument("--token-file", metavar="F", required=True, help="the server's token file")
    commit.set_defaults(run=run_commit)
    return parser


def _add_database_options(parser: argparse.ArgumentParser, atom: bool = False, request: bool = False) -> None:
    if request:
        parser.add_argument("files", nargs="+", metavar="FILE REQUEST", help="program files (.lp, .dl), then the request, e.g. '+p(1). -q(a).'")
    elif atom:
        parser.add_argument("files", nargs="+", metavar="FILE [ATOM]", help="program files (.lp, .dl), then optionally an atom to match")
    else:
        parser.add_argument("files", nargs="+", metavar="FILE", help="program files (.lp, .dl)")
    parser.add_argument("--data", action="append", default=[], metavar="DIR", help="base facts: a directory of CSV/Parquet files named after relations, a CSV/Parquet/SQLite/.lp file (repeatable)")
    parser.add_argument("--engine", choices=ENGINES, default="python", help="evaluation engine (default: python)")
    parser.add_argument("--master", metavar="URL", help="Spark master URL for --engine spark (default: $SPARK_MASTER or local[*])")
    parser.add_argument("--strict", action="store_true", help="a body predicate with no rules, facts or #base line is an error, not an empty relation with a warning")
    header = parser.add_mutually_exclusive_group()
    header.add_argument("--header", dest="header", action="store_true", default=None, help="CSV files have a header row")
    header.add_argument("--no-header", dest="header", action="store_false", help="CSV files have no header row")


def _add_proposal_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--method", choices=METHODS, default="asp", help="asp: clingo over goal-directed candidates (default); transform: seed 002's Algorithm 1; tableaux: seed 003's update tableaux with the minimality test; tableaux-materialized: over the materialized view")
    parser.add_argument("--limit", type=_limit_argument, metavar="N", help="the N smallest realizations (a family counts once)")
    parser.add_argument("--timeout", type=_seconds_argument, metavar="S", help="stop the search after S seconds, with what was found")
    parser.add_argument("--candidates", choices=CANDIDATE_POLICIES, default="attribute", help="values for existential variables: those already in the attribute (default) or every constant")
    parser.add_argument("--max-fresh", type=int, default=2, metavar="K", help="at most K new constants (default 2)")
    parser.add_argument("--protect", action="append", default=[], metavar="P", help="a relation (p) or fact (p(1,a)) that must not change (repeatable)")
    parser.add_argument("--no-families", action="store_true", help="every realization on its own row, every value grounded (no family rows; slower on large classes of interchangeable values)")


def open_database(args: argparse.Namespace, files: Sequence[str]) -> Database:
    options = {"master": args.master} if args.engine == "spark" and args.master else {}
    progress = Progress.for_terminal()
    if progress and args.engine == "python":
        options["progress"] = progress
    db = Database.from_files(*files, data=args.data, engine=args.engine, header=args.header, strict=getattr(args, "strict", False), **options)
    for warning in db.warnings:
        _warn(warning)
    return db


def _warn(warning: NablogWarning) -> None:
    print(warning, file=sys.stderr)


def split_query(files: Sequence[str]) -> tuple[list[str], str | None]:
    """Program files, then an optional atom: the last argument when it is not a file."""
    *rest, last = files
    if rest and not last.endswith(PROGRAM_SUFFIXES) and not _is_file(last):
        return list(rest), last
    return list(files), None


def run_query(args: argparse.Namespace) -> int:
    files, atom = split_query(args.files)
    db = open_database(args, files)
    out = sys.stdout
    if args.magic and atom is None:
        raise NablogError("--magic needs a query atom", hint="give the atom after the files, e.g. nablog query prog.lp --magic 'p(1, Y)'")
    if atom is not None and db.mediator is not None:
        return print_mediated(sys.stdout, db, atom, args.ground, args.json)
    if atom is not None:
        rows = db.query(atom, magic=args.magic)
        if args.json:
            json.dump([list(r) for r in rows], out, ensure_ascii=False)
            out.write("\n")
        else:
            from .lang import parse_atom

            print_table(out, parse_atom(atom).pred, rows)
        return 0
    model = db.model()
    derived = db.derived
    if args.json:
        json.dump({p: [list(r) for r in sorted(model[p], key=row_sort_key)] for p in derived}, out, ensure_ascii=False)
        out.write("\n")
    else:
        for pred in derived:
            print_table(out, pred, sorted(model[pred], key=row_sort_key))
    return 0


def print_mediated(out, db: Database, atom: str, ground: bool, as_json: bool) -> int:
    """A query on a mediated view: its constrained atoms, or its ground answers (seed 000)."""
    if ground:
        rows, complete = db.query(atom, ground=True)
        if as_json:
            json.dump({"rows": [list(r) for r in rows], "complete": complete}, out, ensure_ascii=False)
            out.write("\n")
            return 0
        from .lang import parse_atom

        print_table(out, parse_atom(atom).pred, rows)
        if not complete:
            out.write("(bounded: more solutions exist than shown)\n")
        return 0
    answers = [str(a) for a in db.query(atom)]
    if as_json:
        json.dump(answers, out, ensure_ascii=False)
        out.write("\n")
    else:
        out.write("".join(f"{a}\n" for a in answers) or "no answers\n")
    return 0


def split_request(files: Sequence[str]) -> tuple[list[str], str]:
    """Program files, then the request: every argument that starts with + or - and is not a file."""
    programs = [f for f in files if not _is_request(f)]
    request = " ".join(f for f in files if _is_request(f))
    if not request:
        raise NablogError("no request given", hint="write the request after the files, e.g. nablog propose db.lp '+p(1). -q(a).'")
    return programs, request


def _is_request(arg: str) -> bool:
    return arg[:1] in "+-" and not _is_file(arg)


def _protections(args: argparse.Namespace) -> list:
    from .lang import parse_atom

    return [p if "(" not in p else parse_atom(p, "--protect") for p in args.protect]


def _propose(db: Database, args: argparse.Namespace, request: str, limit: int | None = None, max_fresh: int | None = None, **more):
    progress = Progress.for_terminal()
    return db.propose(
        request,
        method=args.method,
        limit=args.limit if limit is None else limit,
        timeout=args.timeout,
        candidates=args.candidates,
        max_fresh=args.max_fresh if max_fresh is None else max_fresh,
        protect=_protections(args),
        progress=progress,
        families=not args.no_families,
        **more,
    )


def run_propose(args: argparse.Namespace) -> int:
    """Propose; realizations are printed as they are verified with --stream (or at a terminal),
    and Ctrl-C stops the search and prints what was found."""
    from .solver import Proposal, parse_request

    files, request = split_request(args.files)
    db = open_database(args, files)
    stream = args.stream or (not args.json and sys.stdout.isatty())
    found: list = []

    def show(realization) -> None:
        found.append(realization)
        if not stream:
            return
        if args.json:
            sys.stdout.write(json.dumps({"realization": realization.to_json()}, ensure_ascii=False) + "\n")
        else:
            if len(found) == 1:
                sys.stdout.write(f"request: {request.strip()}\n")
            print_realization(sys.stdout, len(found), realization, args.expand)
        sys.stdout.flush()

    try:
        proposal = _propose(db, args, request, on_realization=show)
    except KeyboardInterrupt:
        proposal = Proposal(parse_request(request), "interrupted", found, f"{len(found)} realization" + ("" if len(found) == 1 else "s") + " found before the search was interrupted")
    if args.json and stream:
        summary = {k: v for k, v in proposal.to_json().items() if k != "realizations"}
        sys.stdout.write(json.dumps(summary, ensure_ascii=False) + "\n")
    elif args.json:
        json.dump(proposal.to_json(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    elif stream:
        if not found:
            sys.stdout.write(f"request: {proposal.request}\n")
        sys.stdout.write(("\n" if found else "") + proposal.message + "\n")
        print_reasons(sys.stdout, proposal)
    else:
        print_proposal(sys.stdout, proposal, args.expand)
    return 130 if proposal.status == "interrupted" else 0


def run_apply(args: argparse.Namespace) -> int:
    files, request = split_request(args.files)
    db = open_database(args, files)
    proposal = _propose(db, args, request)
    if args.interactive:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise NablogError("--interactive needs a terminal", hint="choose without one: nablog apply ... --pick N (see nablog propose for the list)")
        from .interactive import choose

        def more(current):
            limit = None if current.status != "bounded" or args.limit is None else 2 * max(len(current), args.limit)
            return _propose(db, args, request, limit=limit, max_fresh=args.max_fresh + 1)

        chosen = choose(proposal, more, input, sys.stdout)
        if chosen is None:
            print("nothing applied")
            return 0
    else:
        if not proposal.realizations:
            raise NablogError(proposal.message, hint="nothing to apply; see nablog propose for the reasons")
        if not 1 <= args.pick <= len(proposal):
            raise NablogError(
                f"--pick {args.pick} is out of range: the proposal has {len(proposal)} realization" + ("" if len(proposal) == 1 else "s"),
                hint="pick a number from 1 to " + str(len(proposal)),
            )
        chosen = proposal[args.pick - 1]
        values = {}
        settable = list(chosen.fresh) + ([v.name for v in chosen.family.variables] if chosen.family else [])
        for item in args.set:
            name, sep, value = item.partition("=")
            if not sep or name not in settable:
                raise NablogError(
                    f"--set {item}: not a new constant of this realization" + (" nor a variable of its family" if chosen.family else ""),
                    hint="its new constants are " + (", ".join(chosen.fresh) or "none") + (
                        "; its variables " + ", ".join(v.name for v in chosen.family.variables) if chosen.family else ""
                    ),
                )
            from .io import text_to_constant

            values[name] = text_to_constant(value)
        if values:
            chosen = chosen.substitute(values)
    update = db.apply(chosen, request=request)
    if args.json:
        json.dump(update.to_json(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print("applied:\n" + "\n".join(f"  {line}" for line in update.lines()))
        print("undo with: nablog undo " + " ".join([*files, *(f"--data {d}" for d in args.data)]))
    return 0


def run_undo(args: argparse.Namespace) -> int:
    db = open_database(args, args.files)
    if args.forget:
        if db.stores is None:
            raise NablogError("undo needs a database read from files", hint="give the program files")
        entry = db.stores.forget()
        print("nothing to undo" if entry is None else f"forgot the change of {entry.get('time', '?')}" + (f" ({entry['request']})" if entry.get("request") else "") + "; the data is unchanged")
        return 0
    update = db.undo()
    if update is None:
        print("nothing to undo")
        return 0
    print("undone:\n" + "\n".join(f"  {line}" for line in update.lines()))
    return 0


def run_check(args: argparse.Namespace) -> int:
    if args.engine == "spark":
        return run_bulk_check(args)
    if args.witnesses:
        raise NablogError("--witnesses needs --engine spark", hint="add --engine spark, or leave out --witnesses")
    db = open_database(args, args.files)
    violations = db.violations(None if args.json else args.limit)
    if args.json:
        report = {"consistent": not violations, "violations": [v.to_json() for v in violations]}
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_violations(sys.stdout, db, violations, args.limit)
    return 1 if violations else 0


def run_bulk_check(args: argparse.Namespace) -> int:
    """``check --engine spark``: the bulk checker (exact counts; witnesses to Parquet with --witnesses)."""
    from .engines.spark import WITNESS_CAP, check_files

    limit = WITNESS_CAP if args.json else args.limit
    checked = check_files(
        args.files, args.data, master=args.master, header=args.header, limit=limit, witnesses=args.witnesses, progress=Progress.for_terminal(), strict=args.strict, warn=_warn
    )
    violations = checked.violations
    if args.json:
        report = {"consistent": not violations, "violations": [v.to_json() for v in violations]}
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_violations(sys.stdout, None, violations, args.limit, total=checked.total)
        if args.witnesses and violations:
            print(f"witnesses written to {args.witnesses}/<constraint>/")
    return 1 if violations else 0


def run_materialize(args: argparse.Namespace) -> int:
    from .engines.spark import materialize_files, propagate_files

    progress = Progress.for_terminal()
    options = dict(master=args.master, checkpoint_dir=args.checkpoint_dir, header=args.header, progress=progress, strict=args.strict, warn=_warn)
    if args.model:
        done = propagate_files(args.files, args.data, args.model, args.insert, args.delete, args.out, **options)
        summary = {"out": done.out, "relations": done.rows, "inserted": done.inserted, "deleted": done.deleted, "seconds": round(done.seconds, 3)}
    elif args.insert or args.delete:
        raise NablogError("--insert and --delete need --model", hint="give the stored model to update: --model DIR (written by nablog materialize)")
    else:
        done = materialize_files(args.files, args.data, args.out, **options)
        summary = {"out": done.out, "relations": done.rows, "seconds": round(done.seconds, 3)}
    if progress is not None and progress.shown:
        progress.stream.write("\r\x1b[K")  # the summary replaces the progress line
        progress.shown = False
    if args.json:
        json.dump(summary, sys.stdout)
        sys.stdout.write("\n")
        return 0
    rows = summary["relations"]
    print(f"wrote {len(rows)} relation{'s' if len(rows) != 1 else ''} to {done.out} in {done.seconds:.1f} s")
    width = max((len(p) for p in rows), default=0)
    for pred, n in rows.items():
        print(f"  {pred.ljust(width)}  {n:,} row{'s' if n != 1 else ''}")
    for key, sign in (("inserted", "+"), ("deleted", "-")):
        for pred, n in summary.get(key, {}).items():
            print(f"  {sign}{pred}: {n:,} tuple{'s' if n != 1 else ''}")
    return 0


def run_propagate(args: argparse.Namespace) -> int:
    files, update_text = split_request(args.files)
    db = open_database(args, files)
    update = db.propagate(update_text, method=args.method)
    if args.json:
        json.dump(update.to_json(), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("".join(f"{line}\n" for line in update.lines()) or "no change\n")
    return 0


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
        from .server.app import serve
    except ImportError as e:
        raise NablogError(f"nablog serve needs the server extra ({e.name} is missing)", hint="pip install 'nablog[server]'") from None
    db = open_database(args, args.files)
    if args.token_file:
        token, for_reads = _read_token(args.token_file), True
    else:
        import secrets

        from .io.base import atomic_write

        token, for_reads = secrets.token_urlsafe(24), False
        path = Path(args.files[0]).resolve().parent / ".nablog" / "token"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, lambda f: f.write(token.encode() + b"\n"))
        path.chmod(0o600)
        print(f"write token in {path}", flush=True)
    serve(db, args.host, args.port, token, for_reads, announce=lambda line: print(line, flush=True))
    return 0


def run_watch(args: argparse.Namespace) -> int:
    from .client import Client, ClientError

    client = Client(args.url, token=_read_token(args.token_file) if args.token_file else None)
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
    from .client import Client, ClientError
    from .lang import Delta

    url, *changes = args.files
    change = Delta.parse(" ".join(changes)).to_json()
    client = Client(url, token=_read_token(args.token_file))
    try:
        version = client.commit(insert=change["insert"], delete=change["delete"])
    except ClientError as e:
        raise NablogError(f"{url}: {e.message.removeprefix('error: ')}", hint=e.hint) from None
    except OSError as e:
        raise NablogError(f"cannot reach {url}: {e}", hint="is 'nablog serve' running there?") from None
    print(json.dumps({"version": version}))
    return 0


def run_explain(args: argparse.Namespace) -> int:
    from .lang import analyze, parse_files

    program = parse_files(args.files)
    analysis = analyze(program)
    if args.tableau is not None:
        return print_tableau(sys.stdout, args)
    if args.simplify is not None:
        return print_simplified(sys.stdout, program, args.simplify)
    if args.rules:
        sys.stdout.write(str(transformed(program, args.rules)) + "\n")
        return 0
    graph = analysis.graph
    if args.dot:
        text = to_dot(analysis)
        if args.dot == "-":
            sys.stdout.write(text)
            return 0
        _write_text_atomically(Path(args.dot), text)
    out = sys.stdout
    derived = program.derived
    out.write("strata:\n")
    for level, preds in enumerate(analysis.strata):
        out.write(f"  {level}: {', '.join(preds)}\n")
    out.write("components, in evaluation order:\n")
    for component in analysis.components:
        kind = "base" if not set(component) & derived else ("recursive" if set(component) & analysis.recursive else "view")
        out.write(f"  {', '.join(component)}  ({kind})\n")
    out.write("dependencies (body -> head):\n")
    for u, v, data in sorted(graph.edges(data=True)):
        out.write(f"  {u} -> {v}{'  (negative)' if data['negative'] else ''}\n")
    if args.dot:
        out.write(f"wrote the dependency graph to {args.dot}\n")
    return 0


def print_tableau(out: TextIO, args: argparse.Namespace) -> int:
    """The update tableau of a request (seed 003, Def. 14-20, 24), as a tree or in Graphviz."""
    from .solver.tableaux import request_tableau

    db = Database.from_files(*args.files)
    tableau = request_tableau(db.rules, db.facts, db.python_model(), args.tableau, materialized=args.materialized)
    if args.dot:
        text = tableau.dot(limit=args.branches) + "\n"
        if args.dot == "-":
            out.write(text)
            return 0
        _write_text_atomically(Path(args.dot), text)
    variant = "over the materialized view (IDB+, Algorithms 5, 6)" if args.materialized else "with the strong minimality test (Algorithms 3, 4)"
    out.write(f"update tableau for {args.tableau.strip()} {variant}:\n")
    out.write(tableau.tree(limit=args.branches) + "\n")
    if args.dot:
        out.write(f"wrote the tableau to {args.dot}\n")
    return 0


def transformed(program, which: str):
    """The program's rules after one of seed 002's transformations, as nablog text."""
    from .lang import Program, Rule, separate_facts
    from .transforms import normalize, propagation_rules, transition_rules, view_update_rules, view_update_transitions

    rules, _ = separate_facts(program)
    normalized = normalize(Program(tuple(s for s in rules.statements if isinstance(s, Rule))))
    if which == "normalized":
        return normalized
    if which == "up":
        return propagation_rules(normalized) + transition_rules(normalized)
    if which == "maintenance":
        from .transforms.maintenance import maintenance_rules

        return maintenance_rules(rules)
    if which == "rod":
        from .transforms.rod import rod

        return rod(rules)
    vu = view_update_rules(normalized)
    return vu + view_update_transitions(normalized.with_statements(rules.requirements), vu)


def print_simplified(out: TextIO, program, update_text: str) -> int:
    """The simplified checks of every constraint for an update (seed 004, §3 and §4)."""
    from .lang import separate_facts
    from .repair.simplify import parse_change, simplify

    rules, _ = separate_facts(program)
    checks = simplify(rules, parse_change(update_text))
    out.write(f"update: {checks.update}\n")
    sections = [
        ("before the update (seed 004 §3: Optimize(After^U(Γ)), assuming the database is consistent now):", checks.before),
        ("after the update (seed 004 §4, (2): in the updated state, with the trusted constraints):", checks.after),
    ]
    for title, denials in sections:
        out.write(title + "\n")
        out.write("".join(f"  {d}\n" for d in denials) or "  true (the update cannot violate a constraint)\n")
    if checks.unsimplified:
        out.write("checked as written (not simplified): " + ", ".join(checks.unsimplified) + "\n")
    return 0


def run_repair(args: argparse.Namespace) -> int:
    from .io import text_to_constant
    from .repair import repair
    from .repair.output import print_report, write_repair

    db = open_database(args, args.files)
    progress = Progress.for_terminal()
    verified = None
    if args.interactive:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise NablogError("--interactive needs a terminal", hint="repair without one, or run nablog repair ... --interactive in a terminal")
        from .repair.verify import VerifiedTable, verify_interactively

        table_path = Path(args.verified) if args.verified else Path(args.files[0]).parent / ".nablog" / "verified.csv"
        verified_table = VerifiedTable(table_path)
        verified = verify_interactively(db.rules, db.model(), verified_table, input, sys.stdout, policy=args.policy, engine=db.engine)
    result = repair(
        db.rules,
        db.model(),
        engine=db.engine,
        policy=args.policy,
        limit=args.enumerate,
        timeout=args.timeout,
        protect=_protections(args),
        verified=verified,
        progress=progress,
    )
    if args.set and result.tables:
        values = {}
        for item in args.set:
            name, sep, value = item.partition("=")
            if not sep or name not in result.tables[0].fresh:
                raise NablogError(f"--set {item}: not a new constant of the correction table", hint="its new constants are " + (", ".join(result.tables[0].fresh) or "none"))
            values[name] = text_to_constant(value)
        result.tables = [t.substitute(values) for t in result.tables]
    if args.out and result.tables:
        written = write_repair(args.out, db.program, db.facts, result.tables[0], args.format)
        if not args.json:
            print(f"wrote {len(written)} files to {args.out} (the repaired relations and corrections.{args.format})")
    if args.json:
        report = {
            "consistent": result.consistent,
            "violations": [v.to_json() for v in result.falsifiers.violations()],
            "repairs": [t.to_json() for t in result.tables],
        }
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_report(sys.stdout, result)
    return 0 if result.consistent else 1


def to_dot(analysis) -> str:
    """The dependency graph in Graphviz format: one cluster per stratum, negative edges dashed."""
    lines = ["digraph dependencies {", "  rankdir=BT;", "  node [shape=box, fontname=monospace];"]
    for level, preds in enumerate(analysis.strata):
        lines.append(f'  subgraph cluster_{level} {{ label="stratum {level}"; style=dashed;')
        lines.extend(f'    "{p}";' for p in preds)
        lines.append("  }")
    for u, v, data in sorted(analysis.graph.edges(data=True)):
        style = ' [style=dashed, label="not"]' if data["negative"] else ""
        lines.append(f'  "{u}" -> "{v}"{style};')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _write_text_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise NablogError(f"cannot write {path}: {e.strerror}", where=str(path), hint="check the directory exists and is writable") from None


# -- terminal output ------------------------------------------------------------------------------


def print_table(out: TextIO, pred: str, rows: Sequence[tuple]) -> None:
    count = f"{len(rows)} row" + ("" if len(rows) == 1 else "s")
    if rows and not rows[0]:
        out.write(f"{pred}: true\n\n")
        return
    out.write(f"{pred} ({count})\n")
    cells = [[format_constant(v) for v in row] for row in rows]
    if cells:
        widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
        for r in cells:
            out.write("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() + "\n")
    out.write("\n")


def print_proposal(out: TextIO, proposal, expand: bool = False) -> None:
    out.write(f"request: {proposal.request}\n{proposal.message}\n")
    for i, r in enumerate(proposal, 1):
        print_realization(out, i, r, expand)
    print_reasons(out, proposal)


def print_realization(out: TextIO, i: int, r, expand: bool = False) -> None:
    out.write(f"\n[{i}] " + r.explain().replace("\n", "\n    ") + "\n")
    if expand and r.family is not None:
        out.write("    members:\n")
        for binding in r.family.bindings:
            values = ", ".join(f"{v.name}={format_constant(b)}" for v, b in zip(r.family.variables, binding))
            out.write(f"      {values}: " + " ".join(r.member(binding).changes.lines()) + "\n")


def print_reasons(out: TextIO, proposal) -> None:
    if proposal.reasons:
        out.write("\nwhat stands in the way:\n" + "".join(f"  {r}\n" for r in proposal.reasons))


def print_violations(out: TextIO, db: Database | None, violations: list[Violation], limit: int, total: int | None = None) -> None:
    total = len(db.constraints()) if total is None else total  # type: ignore[union-attr]
    if not violations:
        out.write(f"consistent: {total} constraint" + ("" if total == 1 else "s") + " hold\n")
        return
    out.write(f"inconsistent: {len(violations)} of {total} constraints violated\n\n")
    for v in violations:
        instances = f"{v.count} violation" + ("" if v.count == 1 else "s")
        out.write(f"{v.constraint}: {instances}\n  {v.text}\n")
        for witness in v.witnesses[:limit]:
            if witness:
                out.write("    " + ", ".join(str(a) for a in witness) + "\n")
            else:
                out.write("    (the required atom does not hold)\n")
        if v.count > limit:  # the count, not the witnesses: the spark checker brings only a few
            out.write(f"    ... and {v.count - limit} more (--limit N, or --json for all)\n")
        out.write("\n")


class Progress:
    """Progress of a long evaluation on stderr, shown only on a terminal and after half a second."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.start = time.monotonic()
        self.shown = False

    @classmethod
    def for_terminal(cls) -> "Progress | None":
        return cls(sys.stderr) if sys.stderr.isatty() else None

    def __call__(self, message: str) -> None:
        if time.monotonic() - self.start < 0.5:
            return
        self.shown = True
        self.stream.write(f"\r\x1b[K[{time.monotonic() - self.start:6.1f}s] {message}")
        self.stream.flush()

    def __del__(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
