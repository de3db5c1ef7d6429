"""The `nablog` command line's words: its parser, the types of its options, and the files, atoms and requests among its arguments."""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import Sequence

from .. import __version__
from ..engines import ENGINES
from ..lang import NablogError
from ..solver import CANDIDATE_POLICIES, METHODS
from ..views import METHODS as PROPAGATION_METHODS
from ..views.mediator import DELETION_METHODS
from ..views.monitor import MODES as MAINTENANCE_MODES

PROGRAM_SUFFIXES = (".lp", ".dl")


REQUEST_COMMANDS = ("propose", "apply", "propagate", "commit")
_REQUEST = re.compile(r"[-+]\s*[a-z_][A-Za-z0-9_]*\s*[(.]")


UPDATE_OPTIONS = ("--simplify", "--tableau", "--why-not")


def take_requests(argv: list[str]) -> tuple[list[str], list[str]]:
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
        (requests if _REQUEST.match(arg) and not is_file(arg) else rest).append(arg)
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


def is_file(arg: str) -> bool:
    try:
        return Path(arg).exists()
    except OSError:  # a long request is no file name the system accepts
        return False


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, except that a positional argument carrying ``usage`` (the files, then a
    request or an atom) is shown by it: ``FILE... REQUEST``, not ``FILE REQUEST [FILE REQUEST ...]``,
    which reads as pairs that repeat."""

    def _format_args(self, action: argparse.Action, default_metavar: str) -> str:
        return getattr(action, "usage", None) or super()._format_args(action, default_metavar)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        formatter_class=_Formatter,
        prog="nablog",
        description="nablog: view updating and repair for deductive databases (Datalog with stratified negation).",
        epilog="Run 'nablog COMMAND --help' for a command's options. Errors exit with status 2.",
    )
    parser.add_argument("--version", action="version", version=f"nablog {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command", parser_class=_parser_with(_Formatter))

    check = commands.add_parser(
        "check",
        help="parse, analyse and report constraint violations (exit 1 when there are any)",
        description="Parse and analyse the program, compute the model, and report every violated "
        "constraint with its ground instances. Exit status 1 when the database is inconsistent.",
    )
    _add_database_options(check)
    check.add_argument("--json", action="store_true", help="print a JSON report")
    check.add_argument("--limit", type=_count_argument, default=5, metavar="N", help="witnesses shown per constraint in the table (default 5)")
    check.add_argument("--full", action="store_true", help="print witness lines whole (they are cut at 160 characters)")
    check.add_argument("--witnesses", metavar="DIR", help="with --engine spark: write every violated instance to DIR/<constraint>/ as Parquet")

    materialize = commands.add_parser(
        "materialize",
        help="compute the model on Spark and write each derived relation as Parquet",
        description="Compute the perfect model on Spark and write every derived relation to OUT/<relation>/ "
        "(Parquet, columns c0, c1, ...), atomically. With --model DIR (a model written by materialize), "
        "bring it up to date after the base changes in --insert/--delete instead (seed 002's update "
        "propagation) and write the new model and its changes (OUT/ins__<relation>/, OUT/del__<relation>/).",
    )
    _add_files(materialize)
    materialize.add_argument("--data", action="append", default=[], metavar="DIR", help="base facts: directories of CSV/Parquet files or Parquet directories named after relations, single files (repeatable)")
    materialize.add_argument("--out", required=True, metavar="DIR", help="the directory to write (created if missing)")
    materialize.add_argument("--engine", choices=("spark",), default="spark", help="evaluation engine (materialize runs on spark)")
    materialize.add_argument("--master", metavar="URL", help="Spark master URL (default: $SPARK_MASTER or local[*])")
    materialize.add_argument("--checkpoint-dir", metavar="DIR", help="where Spark checkpoints go (shared storage on a cluster; default: executor storage)")
    materialize.add_argument("--model", metavar="DIR", help="a stored model to bring up to date instead of computing one")
    materialize.add_argument("--insert", action="append", default=[], metavar="PATH", help="base facts to insert, read like --data (with --model; repeatable)")
    materialize.add_argument("--delete", action="append", default=[], metavar="PATH", help="base facts to delete, read like --data (with --model; repeatable)")
    _add_header_options(materialize)
    materialize.add_argument("--strict", action="store_true", help="a body predicate with no rules, facts, data or #base line is an error, not an empty relation with a warning")
    materialize.add_argument("--json", action="store_true", help="print a JSON summary")

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
    propose.add_argument("--full", action="store_true", help="list every side effect (more than 20 are summarised: a count per view and the first 10)")
    propose.add_argument("--why", action="store_true", help="explain each realization: what fails without each change (the constraint a compensation repairs, and the change that forced it), the proofs it creates, the derivations it breaks")
    propose.add_argument("--why-not", metavar="CHANGES", help="judge a change set of your own instead, e.g. '+a(1). -b(2).': the part of the request it fails, the constraints it violates, or the smaller realization it contains")

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
    apply.add_argument("--sql", action="store_true", help="print the SQL statements the apply would run in its transaction, and apply nothing (a database URL)")

    propagate = commands.add_parser(
        "propagate",
        help="the induced update of a change of base facts, without applying it",
        description="Compute every base and derived fact that appears or disappears when UPDATE "
        "(written like a request: -edge(b, c). +edge(h, d).) is applied to the base facts.",
    )
    _add_database_options(propagate, request=True)
    propagate.add_argument(
        "--method",
        choices=PROPAGATION_METHODS + DELETION_METHODS,
        default="incremental",
        help="incremental maintenance (default), the paper's rules R∆ ∪ R∆τ evaluated literally (rules), seed 001's maintenance rules over the kept model (maintenance) "
        "or Rederivation on Demand with no view kept (rod); a mediated program's deletions: Straight Delete (stdel, what incremental means there), "
        "Extended DRed (dred) or recomputation (recompute)",
    )
    propagate.add_argument("--json", action="store_true", help='print {"insert": [ATOM, ...], "delete": [ATOM, ...]}')

    undo = commands.add_parser(
        "undo",
        help="take back the last applied change",
        description="Undo the newest change written by 'nablog apply' for this database: its files "
        "come back byte for byte. The undo log is .nablog/history.json beside the first program file.",
    )
    _add_files(undo)
    _add_data_options(undo)
    undo.add_argument("--forget", action="store_true", help="drop the newest entry of the undo log without changing the data (when undo says the data changed since)")

    explain = commands.add_parser(
        "explain",
        help="show strata, components and the predicate dependency graph",
        description="Show how the program is evaluated: its strata, its strongly connected "
        "components in evaluation order, and the dependency graph.",
    )
    _add_files(explain)
    _add_data_options(explain)
    explain.add_argument("--dot", metavar="OUT", help="write the dependency graph in Graphviz format to OUT ('-' for stdout)")
    explain.add_argument("--rules", choices=("normalized", "up", "vu", "maintenance", "rod"), help="print a transformed rule set: normalized rules (seed 002 §2.2), update propagation rules R∆ ∪ R∆τ (Def. 4, 5), view-update rules R∇ ∪ R∇τ (Def. 9, 10), seed 001's maintenance rules (Algorithm 1) or RoD rules (Algorithm 2)")
    explain.add_argument("--simplify", metavar="UPDATE", help="print the simplified constraint checks for an update, e.g. '+m1(a, b).' (seed 004, After^U and Optimize)")
    explain.add_argument("--tableau", metavar="REQUEST", help="print the update tableau of a view-update request (seed 003): branches, closed/open marks, HS(b) and the minimality test; with --dot OUT, write it in Graphviz format")
    explain.add_argument("--materialized", action="store_true", help="with --tableau: the tableau over the materialized view (IDB+, no minimality test)")
    explain.add_argument("--branches", type=int, metavar="N", help="with --tableau: stop after N open finished branches")

    why = commands.add_parser(
        "why",
        help="why a ground atom holds (a least-height proof) or does not (what fails)",
        description="For a ground ATOM that holds, print a proof of least height: each node a rule "
        "instance (FILE:LINE), down to base facts; a negated literal shows the atom that is absent, an "
        "aggregate its value and elements. For an ATOM that does not hold, print for each rule that could "
        "derive it the literals that fail and the facts that are missing or present, a few levels down.",
    )
    _add_database_options(why, atom=True)
    why.add_argument("--depth", type=_count_argument, metavar="N", help="cut the proof N levels down (a cut node says how to expand it); for why-not, explain missing atoms N levels down (default 3)")
    why.add_argument("--all", action="store_true", help="list every other derivation of the atom too")
    why.add_argument("--json", action="store_true", help='print {"atom", "holds", "proof": NODE} or {"atom", "holds": false, "why_not": [...]}')
    why.add_argument("--dot", metavar="OUT", help="write the explanation in Graphviz format to OUT ('-' for stdout)")
    why.add_argument("--svg", metavar="OUT", help="write the explanation as an SVG picture to OUT ('-' for stdout); no Graphviz needed")
    why.add_argument("--fix", action="store_true", help="for an atom that does not hold: the smallest realizations that make it hold (nablog propose FILE '+ATOM.')")
    _add_proposal_options(why)

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
    repair.add_argument("--policy", default="subset", metavar="POLICY", help="subset (default: subset-minimal), min-card (fewest changes), trust=REL:W,... (least weight), or cells (replace wrong values, keep the rows)")
    repair.add_argument("--source", metavar="COLUMN", help="with --policy cells: the column (or REL.COLUMN) naming each row's source; sources are weighted by how often they agree with the others")
    repair.add_argument("--enumerate", type=int, default=1, metavar="N", help="list up to N correction tables (default 1)")
    repair.add_argument("--timeout", type=float, metavar="S", help="stop the search after S seconds")
    repair.add_argument("--protect", action="append", default=[], metavar="P", help="a relation (p) or fact (p(1,a)) that must not change (repeatable)")
    repair.add_argument("--set", action="append", default=[], metavar="NEW=VALUE", help="a real value for a new constant of an inserted fact")
    repair.add_argument("--interactive", action="store_true", help="verify facts with a person, one deciding fact at a time (seed 004, case 2)")
    repair.add_argument("--verified", metavar="FILE", help="the verified table for --interactive (default .nablog/verified.csv beside the first program)")
    repair.add_argument("--full", action="store_true", help="print violated instances and corrections whole (lines are cut at 160 characters)")
    repair.add_argument("--json", action="store_true", help="print {consistent, violations, repairs} as JSON instead of the report")
    repair.add_argument("--why", action="store_true", help="explain each row of each correction table: the violated instances it removes")

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
    serve.add_argument("--notify", action="store_true",
                       help="over a PostgreSQL URL: install triggers that notify nablog of every commit to its tables (LISTEN/NOTIFY), "
                            "so subscribers get other clients' changes as they commit")
    serve.add_argument("--token-file", metavar="F", help="a file holding the bearer token; when given, every request but /version needs it")
    serve.add_argument("--max-body", type=_count_argument, default=1 << 20, metavar="BYTES", help="the longest request body taken (default 1 MiB; longer: HTTP 413)")
    serve.add_argument("--read-timeout", type=_seconds_argument, default=10.0, metavar="S", help="seconds a request body may take to arrive (default 10; then HTTP 408)")
    serve.add_argument("--deadline", type=_seconds_argument, default=30.0, metavar="S", help="seconds a proposal searches unless the client asks otherwise (default 30)")
    serve.add_argument("--max-deadline", type=_seconds_argument, default=300.0, metavar="S", help="the longest search a client may ask for (default 300)")

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

    commit = commands.add_parser(
        "commit",
        help="commit base-fact changes to a server: nablog commit URL '+edge(a,b).' '-edge(b,c).'",
        description="Send one transaction to a running 'nablog serve' and print its version.",
    )
    commit.add_argument("files", nargs="+", metavar="URL CHANGE", help="the server's URL, then the changes, e.g. '+edge(a,b). -edge(b,c).'").usage = "URL CHANGE..."
    commit.add_argument("--token-file", metavar="F", required=True, help="the server's token file")
    return parser


def _parser_with(formatter: type[argparse.HelpFormatter]) -> type[argparse.ArgumentParser]:
    """The subcommands' parser class, formatting their help with ``formatter``."""

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("formatter_class", formatter)
            super().__init__(*args, **kwargs)

    return Parser


def _add_files(parser: argparse.ArgumentParser, atom: bool = False, request: bool = False) -> None:
    """The program files, then a request (``FILE... REQUEST``) or an optional atom (``FILE... [ATOM]``)."""
    if request:
        files = parser.add_argument("files", nargs="+", metavar="FILE REQUEST", help="program files (.lp, .dl), then the request, e.g. '+p(1). -q(a).'")
        files.usage = "FILE... REQUEST"
    elif atom:
        files = parser.add_argument("files", nargs="+", metavar="FILE [ATOM]", help="program files (.lp, .dl), then optionally an atom to match")
        files.usage = "FILE... [ATOM]"
    else:
        parser.add_argument("files", nargs="+", metavar="FILE", help="program files (.lp, .dl)").usage = "FILE..."


def _add_data_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", action="append", default=[], metavar="DIR", help="base facts: a directory of CSV/Parquet files named after relations, a CSV/Parquet/SQLite/.lp file (repeatable)")
    _add_header_options(parser)


def _add_database_options(parser: argparse.ArgumentParser, atom: bool = False, request: bool = False) -> None:
    _add_files(parser, atom, request)
    _add_data_options(parser)
    parser.add_argument("--engine", choices=ENGINES, default="python", help="evaluation engine (default: python)")
    parser.add_argument("--master", metavar="URL", help="Spark master URL for --engine spark (default: $SPARK_MASTER or local[*])")
    parser.add_argument("--strict", action="store_true", help="a body predicate with no rules, facts or #base line is an error, not an empty relation with a warning")


def _add_header_options(parser: argparse.ArgumentParser) -> None:
    """--header / --no-header: whether CSV files have a header row (default: detected)."""
    header = parser.add_mutually_exclusive_group()
    header.add_argument("--header", dest="header", action="store_true", default=None, help="CSV files have a header row")
    header.add_argument("--no-header", dest="header", action="store_false", help="CSV files have no header row")


def _add_proposal_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--method", choices=METHODS, default="asp", help="asp: clingo over goal-directed candidates (default); transform: seed 002's Algorithm 1; tableaux: seed 003's update tableaux with the minimality test; tableaux-materialized: over the materialized view")
    parser.add_argument("--limit", type=_limit_argument, metavar="N", help="the N smallest realizations (a family counts once)")
    parser.add_argument("--timeout", type=_seconds_argument, metavar="S", help="stop the search after S seconds, with what was found")
    parser.add_argument("--candidates", choices=CANDIDATE_POLICIES, default="attribute", help="values for existential variables: those already in the attribute (default) or every constant")
    parser.add_argument("--max-fresh", type=_count_argument, default=2, metavar="K", help="at most K new constants (default 2)")
    parser.add_argument("--protect", action="append", default=[], metavar="P", help="a relation (p) or fact (p(1,a)) that must not change (repeatable)")
    parser.add_argument("--no-families", action="store_true", help="every realization on its own row, every value grounded (no family rows; slower on large classes of interchangeable values)")


def split_query(files: Sequence[str]) -> tuple[list[str], str | None]:
    """Program files, then an optional atom: the last argument when it is not a file."""
    *rest, last = files
    if rest and not last.endswith(PROGRAM_SUFFIXES) and not is_file(last):
        return list(rest), last
    return list(files), None


def split_request(files: Sequence[str]) -> tuple[list[str], str]:
    """Program files, then the request: every argument that starts with + or - and is not a file."""
    programs = [f for f in files if not _is_request(f)]
    request = " ".join(f for f in files if _is_request(f))
    if not request:
        unsigned = next((f for f in programs if _REQUEST.match("+" + f.strip()) and not f.endswith(PROGRAM_SUFFIXES) and not is_file(f)), None)
        if unsigned is not None:
            raise NablogError(
                f"the request {unsigned!r} says neither + (insert) nor - (delete)",
                where=unsigned,
                hint=f"write '+{unsigned.strip()}' to insert it or '-{unsigned.strip()}' to delete it",
            )
        raise NablogError("no request given", hint="write the request after the files, e.g. nablog propose db.lp '+p(1). -q(a).'")
    return programs, request


def settings(items: Sequence[str], settable: Sequence[str], what: str) -> dict[str, str]:
    """``--set NAME=VALUE`` options as a mapping; a missing ``=`` or a name not in ``settable``
    (the new constants and family variables of ``what``) is refused, saying which it was."""
    values = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise NablogError(f"--set {item}: no value given", hint=f"write --set {item}=VALUE")
        if name not in settable:
            raise NablogError(f"--set {item}: {name} is not a new constant of {what}", hint="its new constants are " + (", ".join(settable) or "none"))
        values[name] = value
    return values


def _is_request(arg: str) -> bool:
    from ..sql.requests import is_sql_request

    return (arg[:1] in "+-" or is_sql_request(arg)) and not is_file(arg)


def protections(args: argparse.Namespace, arities: dict[str, int] | None = None) -> list:
    """The ``--protect`` relations and facts; with the program's ``arities``, one the program does
    not have is refused (a misspelt name would protect nothing)."""
    from ..lang import parse_atom
    from ..lang.errors import did_you_mean

    protected = [p if "(" not in p else parse_atom(p, "--protect") for p in args.protect]
    for item in protected if arities is not None else ():
        pred, arity = (item, None) if isinstance(item, str) else (item.pred, item.arity)
        if pred not in arities:
            hint = did_you_mean(pred, arities, ("base__",)) or "protect a relation of the program, or a fact of one"
            raise NablogError(f"--protect {pred}: the program has no relation {pred}", hint=hint)
        if arity is not None and arity != arities[pred]:
            raise NablogError(f"--protect {item}: {pred} has arity {arities[pred]}", hint=f"write {pred} with {arities[pred]} arguments")
    return protected

