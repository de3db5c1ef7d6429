"""The `nablog` commands over a database read from files: query, propose, apply, undo, check, materialize, propagate and repair."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Sequence

from ..database import Database
from ..lang import Atom, NablogError, row_sort_key
from .arguments import protections, settings, split_query, split_request
from .output import Progress, print_proposal, print_realization, print_reasons, print_table, print_violations, warn


def open_database(args: argparse.Namespace, files: Sequence[str]) -> Database:
    engine = getattr(args, "engine", "python")  # undo evaluates nothing: it has no --engine
    options = {"master": args.master} if engine == "spark" and args.master else {}
    progress = Progress.for_terminal()
    if progress and engine == "python":
        options["progress"] = progress
    from ..sql import is_url

    with progress.ticking(f"reading {', '.join(map(str, (files[:1] if files and is_url(files[0]) else args.data or files)))}") if progress else nullcontext():
        if files and is_url(files[0]):  # a SQL database: its URL, then program files adding rules
            db = Database.connect(files[0], *files[1:], engine=engine, strict=getattr(args, "strict", False), **options)
        else:
            db = Database.from_files(*files, data=args.data, engine=engine, header=args.header, strict=getattr(args, "strict", False), **options)
    for warning in db.warnings:
        warn(warning)
    return db


def arities(db: Database) -> dict[str, int]:
    """Every relation of the database (rules, facts, data) and its arity."""
    from ..engines.base import relation_arity

    return {**{p: relation_arity(r) for p, r in db.facts.items()}, **db.rules.signatures}


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
            from ..lang import parse_atom

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
        from ..lang import parse_atom

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


def _options(args: argparse.Namespace, db: Database):
    """The proposal options the command line gave (checked once, here; protections against the
    database's relations)."""
    from ..solver import ProposeOptions

    return ProposeOptions(
        method=args.method,
        limit=args.limit,
        timeout=args.timeout,
        candidates=args.candidates,
        max_fresh=args.max_fresh,
        protect=protections(args, arities(db)),
        families=not args.no_families,
    )


def _propose(db: Database, options, request, **more):
    return db.propose(request, options, progress=Progress.for_terminal(), **more)


def run_propose(args: argparse.Namespace) -> int:
    """Propose; realizations are printed as they are verified with --stream (or at a terminal),
    and Ctrl-C stops the search and prints what was found."""
    from ..solver import Proposal

    files, request = split_request(args.files)
    db = open_database(args, files)
    if args.why_not is not None:
        judgement = db.judge_changes(request, args.why_not)
        sys.stdout.write(json.dumps(judgement.to_json(), ensure_ascii=False) if args.json else judgement.text())
        sys.stdout.write("\n")
        return 0
    if args.why:
        return print_explained(db, args, request)
    options = _options(args, db)
    parsed = db.parse_request(request)  # once: the search and an interrupted search's answer share it
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
            print_realization(sys.stdout, len(found), realization, args.expand, args.full)
        sys.stdout.flush()

    try:
        handle = _propose(db, options, parsed, stream=True)
        for realization in handle:  # each as soon as it is verified
            show(realization)
        proposal = handle.get()
    except KeyboardInterrupt:
        proposal = Proposal(parsed, "interrupted", found, f"{len(found)} realization" + ("" if len(found) == 1 else "s") + " found before the search was interrupted")
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
        print_proposal(sys.stdout, proposal, args.expand, args.full)
    return 130 if proposal.status == "interrupted" else 0


def print_explained(db: Database, args: argparse.Namespace, request: str) -> int:
    """``propose --why``: the proposal, each realization followed by its explanation."""
    proposal = _propose(db, _options(args, db), request)
    explained = [db.why_realization(proposal.request, r) for r in proposal]
    if args.json:
        out = proposal.to_json()
        for item, why in zip(out["realizations"], explained):
            item["why"] = why.to_json()
        json.dump(out, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    sys.stdout.write(f"request: {proposal.request}\n{proposal.message}\n")
    for i, (r, why) in enumerate(zip(proposal, explained), 1):
        print_realization(sys.stdout, i, r, args.expand, args.full)
        sys.stdout.write("    why:\n" + "".join(f"      {line}\n" for line in why.text().splitlines()))
    print_reasons(sys.stdout, proposal)
    return 0


def run_apply(args: argparse.Namespace) -> int:
    files, request = split_request(args.files)
    db = open_database(args, files)
    options = _options(args, db)
    parsed = db.parse_request(request)  # once: each realization carries it, and apply checks against it
    # --pick N needs the N smallest realizations only: the search stops there, as propose --limit N
    # does (realizations come smallest first, a size's all found before the cut, so the N-th is the
    # same as in the whole list).
    cut = args.limit if args.interactive or args.pick < 1 else min(args.pick, args.limit or args.pick)
    if args.interactive:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise NablogError("--interactive needs a terminal", hint="choose without one: nablog apply ... --pick N (see nablog propose for the list)")
        from ..interactive import choose

        def more(current):
            limit = None if current.status != "bounded" or args.limit is None else 2 * max(len(current), args.limit)
            return _propose(db, options, parsed, limit=limit or args.limit, max_fresh=args.max_fresh + 1, stream=True)

        # The chooser iterates the search's handle: its first page shows as soon as it is found.
        chosen = choose(_propose(db, options, parsed, limit=cut, stream=True), more, input, sys.stdout)
        if chosen is None:
            print("nothing applied")
            return 0
    else:
        proposal = _propose(db, options, parsed, limit=cut)
        if not proposal.realizations:
            raise NablogError(proposal.message, hint="nothing to apply; see nablog propose for the reasons")
        if not 1 <= args.pick <= len(proposal):
            raise NablogError(
                f"--pick {args.pick} is out of range: the proposal has {len(proposal)} realization" + ("" if len(proposal) == 1 else "s"),
                hint="pick a number from 1 to " + str(len(proposal)),
            )
        chosen = proposal[args.pick - 1]
        from ..io import text_to_constant

        settable = list(chosen.fresh) + ([v.name for v in chosen.family.variables] if chosen.family else [])
        what = "this realization" + (" nor a variable of its family" if chosen.family else "")
        values = {name: text_to_constant(value) for name, value in settings(args.set, settable, what).items()}
        if values:
            chosen = chosen.substitute(values)
    if args.sql:
        if not hasattr(db.stores, "statements"):
            raise NablogError("--sql needs a database opened by its URL", hint="give postgresql://..., sqlite:///... or duckdb:///...")
        print("\n".join(db.stores.statements(chosen.delta if hasattr(chosen, "delta") else chosen)))
        return 0
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
        print_violations(sys.stdout, db, violations, args.limit, full=args.full)
    return 1 if violations else 0


def run_bulk_check(args: argparse.Namespace) -> int:
    """``check --engine spark``: the bulk checker (exact counts; witnesses to Parquet with --witnesses)."""
    from ..engines.spark import WITNESS_CAP, check_files

    limit = WITNESS_CAP if args.json else args.limit
    checked = check_files(
        args.files, args.data, master=args.master, header=args.header, limit=limit, witnesses=args.witnesses, progress=Progress.for_terminal(), strict=args.strict, warn=warn
    )
    violations = checked.violations
    if args.json:
        report = {"consistent": not violations, "violations": [_capped(v, args.witnesses) for v in violations]}
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_violations(sys.stdout, None, violations, args.limit, total=checked.total, full=args.full)
        if args.witnesses and violations:
            print(f"witnesses written to {args.witnesses}/<constraint>/")
    return 1 if violations else 0


def _capped(violation, witnesses_dir: str | None) -> dict:
    """A violation's JSON from the spark checker, saying so when it holds fewer witnesses than
    its count (at most WITNESS_CAP come to the driver; --witnesses writes every one)."""
    out = violation.to_json()
    if len(violation.witnesses) < violation.count:
        out["witnesses_complete"] = False
        where = f"all {violation.count:,} are in {witnesses_dir}/{violation.constraint}/" if witnesses_dir else f"--witnesses DIR writes all {violation.count:,} to Parquet"
        out["note"] = f"the first {len(violation.witnesses):,} witnesses of {violation.count:,}; {where}"
    return out


def run_materialize(args: argparse.Namespace) -> int:
    from ..engines.spark import materialize_files, propagate_files

    progress = Progress.for_terminal()
    options = dict(master=args.master, checkpoint_dir=args.checkpoint_dir, header=args.header, progress=progress, strict=args.strict, warn=warn)
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


def run_repair(args: argparse.Namespace) -> int:
    from ..io import text_to_constant
    from ..repair import repair
    from ..repair.output import print_report, write_repair

    db = open_database(args, args.files)
    if args.policy == "cells":
        return _repair_cells(args, db)
    if args.source:
        raise NablogError("--source weighs the sources of cell values", hint="use it with --policy cells")
    progress = Progress.for_terminal()
    verified = None
    if args.interactive:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise NablogError("--interactive needs a terminal", hint="repair without one, or run nablog repair ... --interactive in a terminal")
        from ..repair.verify import VerifiedTable, verify_interactively

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
        protect=protections(args, arities(db)),
        verified=verified,
        progress=progress,
    )
    if args.set and result.tables:
        values = {name: text_to_constant(value) for name, value in settings(args.set, list(result.tables[0].fresh), "the correction table").items()}
        result.tables = [t.substitute(values) for t in result.tables]
    if args.out and result.tables:
        from ..io.directory import input_order

        written = write_repair(args.out, db.program, db.facts, result.tables[0], args.format, order=input_order(db.sources))
        if not args.json:
            print(f"wrote {len(written)} files to {args.out} (the repaired relations and corrections.{args.format})")
    explained = [db.why_repair(t) for t in result.tables] if args.why else []
    if args.json:
        report = {
            "consistent": result.consistent,
            "violations": [v.to_json() for v in result.falsifiers.violations()],
            "repairs": [t.to_json() for t in result.tables],
        }
        for item, rows in zip(report["repairs"], explained):
            item["why"] = [r.to_json() for r in rows]
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_report(sys.stdout, result, full=args.full)
        for i, rows in enumerate(explained, 1):
            sys.stdout.write(f"why table {i}:\n" + "".join(f"  {r.text()}\n" for r in rows))
    return 0 if result.consistent else 1


def _repair_cells(args: argparse.Namespace, db: Database) -> int:
    """``nablog repair --policy cells``: replace wrong values; rows keep their identity and order."""
    from ..repair.cells import repair_cells
    from ..repair.output import ordered_relations, print_cell_report, write_cell_repair

    if args.set:
        raise NablogError("--set does not apply to --policy cells", hint="a cell repair inserts no new constants; drop --set")
    if args.format != "csv":
        raise NablogError("--policy cells writes the repaired relations row-aligned as CSV", hint="drop --format, or repair tuples (--policy subset) to write Parquet")
    relations = ordered_relations(db)
    rows = {p: r.rows for p, r in relations.items()}
    options = dict(protect=protections(args), source=args.source, timeout=args.timeout, engine=db.engine)
    verified = None
    if args.interactive:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise NablogError("--interactive needs a terminal", hint="repair without one, or run nablog repair ... --interactive in a terminal")
        from ..repair.verify import VerifiedTable, verify_cells_interactively

        table_path = Path(args.verified) if args.verified else Path(args.files[0]).parent / ".nablog" / "verified.csv"
        verified = verify_cells_interactively(db.rules, rows, VerifiedTable(table_path), input, sys.stdout, **options)
    result = repair_cells(db.rules, rows, limit=args.enumerate, verified=verified, **options)
    if args.out:
        written = write_cell_repair(args.out, db.program, relations, result.corrections)
        if not args.json:
            print(f"wrote {len(written)} files to {args.out} (the repaired relations, row-aligned, and corrections.csv)")
    explained = _explained_cells(db, result, relations) if args.why else ()
    if args.json:
        report = {
            "consistent": result.consistent,
            "status": result.status,
            "violations_before": result.violations_before,
            "corrections": [c.to_json() for c in result.corrections],
            "left": [{"constraint": name, "violation": text} for name, text in result.left],
            "unrepaired": [{"relation": p, "row": r, "column": c} for p, r, c in result.unrepaired],
            "alternatives": [[c.to_json() for c in a] for a in result.alternatives],
        }
        if args.why:
            report["why"] = [r.to_json() for r in explained]
        json.dump(report, sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print_cell_report(sys.stdout, result)
        if args.why:
            sys.stdout.write("why:\n" + "".join(f"  {r.text()}\n" for r in explained))
    return 0 if result.consistent else 1


def _explained_cells(db: Database, result, relations) -> tuple:
    """``repair --policy cells --why``: each updated row with the violations its update removes."""
    from ..explain.changes import explain_cells

    rows = {p: r.rows for p, r in relations.items()}
    after = result.apply(rows)
    updates = []
    for relation, row in sorted({(c.relation, c.row) for c in result.corrections}):
        cells = ", ".join(f"{relation}[{row}].{c.column}: {c.old!r} -> {c.new!r}" for c in result.corrections if (c.relation, c.row) == (relation, row))
        updates.append((cells, Atom(relation, tuple(rows[relation][row])), Atom(relation, tuple(after[relation][row]))))
    return explain_cells(db.explainer(python=True), updates)
