"""`nablog explain`: how a program is evaluated (strata, components, the dependency graph) and what its rewrites, simplified checks and update tableaux look like."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from ..database import Database
from ..lang import NablogError


def run_explain(args: argparse.Namespace) -> int:
    from ..lang import analyze, parse_files

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
    from ..solver.tableaux import request_tableau

    db = Database.from_files(*args.files, data=args.data, header=args.header)
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
    from ..lang import Program, Rule, separate_facts
    from ..transforms import normalize, propagation_rules, transition_rules, view_update_rules, view_update_transitions

    rules, _ = separate_facts(program)
    normalized = normalize(Program(tuple(s for s in rules.statements if isinstance(s, Rule))))
    if which == "normalized":
        return normalized
    if which == "up":
        return propagation_rules(normalized) + transition_rules(normalized)
    if which == "maintenance":
        from ..transforms.maintenance import maintenance_rules

        return maintenance_rules(rules)
    if which == "rod":
        from ..transforms.rod import rod

        return rod(rules)
    vu = view_update_rules(normalized)
    return vu + view_update_transitions(normalized.with_statements(rules.requirements), vu)


def print_simplified(out: TextIO, program, update_text: str) -> int:
    """The simplified checks of every constraint for an update (seed 004, §3 and §4)."""
    from ..lang import separate_facts
    from ..repair.simplify import parse_change, simplify

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

