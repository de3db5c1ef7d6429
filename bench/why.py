"""Why benchmark: the proof of one fact over a model of about a million base facts, beside the time to build that model.

The workload is an organisation (drawn with ``numpy.random.default_rng(0)``): ``--staff`` people in
``staff_group`` (default 1,000,000 rows), groups in a random recursive tree (``parent``, each
group's parent uniform among the earlier ones, depth about 12), each group with one chair. Views:

    staff_chair(S, C) :- staff_group(S, G), group_chair(G, C).              a join, 1e6 rows
    above(G, H) :- parent(G, H).  above(G, H) :- parent(G, K), above(K, H).  recursion
    size(G, N) :- group(G), N = #count{S : staff_group(S, G)}.               an aggregate
    leaf(G) :- group(G), not parent(_, G).                                  negation

After the model is built (python engine; the peer: its build time), it times ``db.why`` on a
join fact, the deepest ``above`` fact, a group's size and a leaf: the first question (which builds
the lookup indexes it needs over the model) and a second, different one of the same kind (indexes
built). Each row gives the milliseconds and the ratio to the model's build time; the issue's bar
is 100 ms for the proof of one fact once the model exists.

    python bench/why.py                 # 1e6 staff rows (about a minute and 2-3 GB)
    python bench/why.py --staff 100000  # smaller
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import environment, print_table, save_results  # noqa: E402
from nablog.database import Database  # noqa: E402

PROGRAM = """
staff_chair(S, C) :- staff_group(S, G), group_chair(G, C).
above(G, H) :- parent(G, H).
above(G, H) :- parent(G, K), above(K, H).
size(G, N) :- group(G), N = #count{S : staff_group(S, G)}.
leaf(G) :- group(G), not parent(_, G).
"""


def workload(staff: int, groups: int) -> tuple[dict[str, set[tuple]], list[int]]:
    rng = np.random.default_rng(0)
    parents = [0] + [int(rng.integers(0, i)) for i in range(1, groups)]
    member = rng.integers(0, groups, size=staff)
    return {
        "group": {(g,) for g in range(groups)},
        "parent": {(g, parents[g]) for g in range(1, groups)},
        "group_chair": {(g, f"chair{g}") for g in range(groups)},
        "staff_group": {(f"s{i}", int(g)) for i, g in enumerate(member)},
    }, parents


def depth_of(g: int, parents: list[int]) -> int:
    d = 0
    while g:
        g, d = parents[g], d + 1
    return d


def timed(call) -> tuple[float, object]:
    start = time.perf_counter()
    value = call()
    return (time.perf_counter() - start) * 1000, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--staff", type=int, default=1_000_000, help="staff_group rows (default 1,000,000)")
    parser.add_argument("--groups", type=int, default=20_000, help="groups (default 20,000)")
    args = parser.parse_args()
    facts, parents = workload(args.staff, args.groups)
    base = sum(len(r) for r in facts.values())
    db = Database.from_text(PROGRAM, facts)
    build, model = timed(db.model)
    derived = sum(len(model[p]) for p in db.derived)
    deepest = sorted(range(args.groups), key=lambda g: (-depth_of(g, parents), g))[:2]
    members: dict[int, list[str]] = {}
    for s, g in sorted(facts["staff_group"]):
        members.setdefault(g, []).append(s)
    someone = sorted(facts["staff_group"])[:2]
    leaves = sorted(g for g in range(args.groups) if g not in {p for _, p in facts["parent"]})[:2]
    questions = [
        ("join: staff_chair", [f"staff_chair({s}, chair{g})" for s, g in someone]),
        ("recursion: deepest above(G, 0)", [f"above({g}, 0)" for g in deepest]),
        ("aggregate: size(G, N)", [f"size({g}, {len(members.get(g, []))})" for g in (0, 1)]),
        ("negation: leaf(G)", [f"leaf({g})" for g in leaves]),
        ("why not: staff_chair(s0, nobody)", ["staff_chair(s0, nobody)", "staff_chair(s1, nobody)"]),
    ]
    rows, results = [], []
    for label, (first, second) in questions:
        cold, why = timed(lambda: db.why(first))
        warm, again = timed(lambda: db.why(second))
        height = why.proof.height if why.holds else "-"
        rows.append([label, str(height), f"{cold:.1f}", f"{warm:.1f}", f"{warm / build:.5f}", "yes" if warm < 100 else "NO"])
        results.append({"question": label, "atoms": [first, second], "height": height, "first_ms": cold, "second_ms": warm})
    title = f"why over {base:,} base facts ({derived:,} derived); the model built in {build / 1000:.1f} s (python engine)"
    print_table(title, ["question", "height", "first ms", "second ms", "second / build", "< 100 ms"], rows)
    print("first: the first question of its kind (builds the lookup indexes it needs); second: another atom of the same kind")
    path = save_results("why", {"environment": environment(), "base_facts": base, "derived": derived, "build_ms": build, "questions": results})
    print(f"saved {path}")


if __name__ == "__main__":
    main()
