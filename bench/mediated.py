"""Benchmark: maintaining materialized mediated views (seed 000), and membership against z3's Spacer.

Views of about ``--atoms`` constrained atoms:

- ``flat``: ``b(X) :- X >= 10k, X < 10k+5 ||.`` for k < n (non-ground atoms), ``a(X) :- || b(X).``,
  ``c(X) :- X != 3 || a(X).`` — non-recursive; one deletion ``b(X) || X = 17``.
- ``chain``: ``e(i, i+1)`` for i < L and the transitive closure ``t`` (recursive, duplicate-free);
  one deletion of an edge near the end of the chain.

For each, Straight Delete (Algorithm 2) and Extended DRed (Algorithm 1) are timed against
recomputing the fixpoint of the updated program in the same run; all three must give the same
instances. Membership queries ``t(i, j)`` on the materialized chain view are timed against asking
z3's Spacer the same query on the constrained-Horn-clause encoding of the program. Last, the
work an external change costs: none under W_P (zero z3 checks, zero domain calls), a
recomputation under T_P. Ratios are peer / nablog; the machine is shared, so absolute times are noisy.

Run:  .venv/bin/python bench/mediated.py [--atoms 10000] [--queries 20] [--spacer-queries 4]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import z3

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from nablog.views.constraints import Domains  # noqa: E402
from nablog.views.mediated import MediatedView  # noqa: E402

from common import environment, print_table, save_results  # noqa: E402


def flat_program(n: int) -> str:
    lines = [f"b(X) :- X >= {10 * k}, X < {10 * k + 5} ||." for k in range(n)]
    return "\n".join(lines + ["a(X) :- || b(X).", "c(X) :- X != 3 || a(X)."])


def chain_program(length: int) -> str:
    lines = [f"e({i}, {i + 1})." for i in range(length)]
    return "\n".join(lines + ["t(X, Y) :- || e(X, Y).", "t(X, Y) :- || e(X, Z), t(Z, Y)."])


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def same(left: MediatedView, right: MediatedView) -> bool:
    for pred in sorted(set(left.predicates()) | set(right.predicates())):
        arity = (left.atoms(pred) or right.atoms(pred))[0].arity
        from nablog.views.mediated import head_vars

        if not left.solver.equivalent(left.constraints_of(pred), right.constraints_of(pred), head_vars(arity)):
            return False
    return True


def deletion_rows(name: str, text: str, update: str) -> tuple[list[list[str]], dict]:
    build, base = timed(lambda: MediatedView.from_text(text))
    atoms = len(base.entries)
    times = {}
    views = {}
    for method in ("stdel", "dred", "recompute"):
        view = MediatedView.from_text(text)
        times[method], _ = timed(lambda: view.delete(update, method=method))
        views[method] = view
    agree = same(views["stdel"], views["recompute"]) and same(views["dred"], views["recompute"])
    row = [
        name,
        str(atoms),
        f"{times['stdel'] * 1000:.1f}",
        f"{times['dred'] * 1000:.1f}",
        f"{times['recompute'] * 1000:.1f}",
        f"{times['recompute'] / times['stdel']:.1f}x",
        f"{times['dred'] / times['stdel']:.1f}x",
        "yes" if agree else "NO",
    ]
    return [row], {"view": name, "atoms": atoms, "build_s": build, **{f"{m}_s": t for m, t in times.items()}, "agree": agree}


def spacer_membership(length: int, pairs: list[tuple[int, int]]) -> tuple[float, list[bool]]:
    """Each query on a fresh Spacer fixedpoint over the CHC encoding of the chain program."""
    answers = []
    start = time.perf_counter()
    for i, j in pairs:
        fp = z3.Fixedpoint()
        fp.set(engine="spacer")
        e = z3.Function("e", z3.IntSort(), z3.IntSort(), z3.BoolSort())
        t = z3.Function("t", z3.IntSort(), z3.IntSort(), z3.BoolSort())
        goal = z3.Function("goal", z3.BoolSort())
        for rel in (e, t, goal):
            fp.register_relation(rel)
        x, y, z = z3.Ints("x y z")
        fp.declare_var(x, y, z)
        for k in range(length):
            fp.fact(e(k, k + 1))
        fp.rule(t(x, y), e(x, y))
        fp.rule(t(x, y), [e(x, z), t(z, y)])
        fp.rule(goal(), t(i, j))
        answers.append(fp.query(goal()) == z3.sat)
    return time.perf_counter() - start, answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--atoms", type=int, default=10_000, help="about this many constrained atoms per view")
    parser.add_argument("--queries", type=int, default=20, help="membership queries on the view")
    parser.add_argument("--spacer-queries", type=int, default=4, help="how many of them Spacer answers too (seconds each)")
    args = parser.parse_args()
    results: dict = {"environment": environment(), "atoms": args.atoms}

    n = max(2, args.atoms // 3)
    length = max(4, int(math.sqrt(2 * args.atoms)))
    rows, records = [], []
    for name, text, update in (
        ("flat (non-recursive)", flat_program(n), "b(X) || X = 17"),
        ("chain closure (recursive)", chain_program(length), f"e(X, Y) || X = {length - 3}"),
    ):
        r, rec = deletion_rows(name, text, update)
        rows += r
        records.append(rec)
    print_table(
        "Deletion of one constrained atom: Straight Delete vs Extended DRed vs recomputation (ms)",
        ["view", "atoms", "StDel", "DRed", "recompute", "recompute/StDel", "DRed/StDel", "same"],
        rows,
    )
    results["deletion"] = records

    view = MediatedView.from_text(chain_program(length))
    step = max(1, length // args.queries)
    pairs = [(k, min(length, k + 1 + (k * 7) % (length - k))) for k in range(0, length, step)][: args.queries]
    pairs += [(k + 2, k) for k in range(0, length, step)][: max(1, args.queries // 4)]  # some absent
    ours, answers = timed(lambda: [view.contains(f"t({i}, {j})") for i, j in pairs])
    asked = pairs[: args.spacer_queries - 1] + pairs[-1:]  # the last one is absent from the closure
    theirs, spacer_answers = spacer_membership(length, asked)
    assert [answers[pairs.index(p)] for p in asked] == spacer_answers, (answers, spacer_answers)
    print_table(
        f"Membership queries t(i, j) on the chain closure ({len(view.entries)} atoms), {len(pairs)} queries (ms each)",
        ["method", "per query", "ratio"],
        [
            ["materialized view (nablog)", f"{ours / len(pairs) * 1000:.3f}", "1.0x"],
            [f"z3 Spacer (CHC encoding), {len(asked)} of them", f"{theirs / len(asked) * 1000:.1f}", f"{(theirs / len(asked)) / (ours / len(pairs)):.0f}x"],
        ],
    )
    results["membership"] = {"queries": len(pairs), "nablog_s": ours, "spacer_queries": len(asked), "spacer_s": theirs}

    answers_now = {k: {k} for k in range(0, 10 * n, 20)}
    domains = Domains()
    domains.register("ext", f=lambda k: answers_now.get(k, ()))
    text = "\n".join([f"g({k})." for k in range(0, 10 * n, 10)] + ["a(X) :- in(X, ext:f(X)) || g(X).", "c(X) :- X != 3 || a(X)."])
    w = MediatedView.from_text(text, domains, operator="W")
    t = MediatedView.from_text(text, domains, operator="T")
    answers_now.clear()
    answers_now.update({k: {k} for k in range(10, 10 * n, 20)})
    w_time, w_work = timed(w.external_change)
    t_time, t_work = timed(t.external_change)
    print_table(
        "External change of a domain function (every answer changes)",
        ["operator", "work (z3 checks + domain calls)", "ms"],
        [["W_P (Theorem 4)", str(w_work), f"{w_time * 1000:.3f}"], ["T_P (recompute)", str(t_work), f"{t_time * 1000:.1f}"]],
    )
    results["external_change"] = {"w_work": w_work, "w_s": w_time, "t_work": t_work, "t_s": t_time}
    print(f"\nsaved {save_results('mediated', results)}")


if __name__ == "__main__":
    main()
