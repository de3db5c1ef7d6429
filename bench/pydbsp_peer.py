"""The pydbsp side of bench/monitor.py: transitive closure under a stream of single-edge commits.

Run by bench/monitor.py in a child process with an interpreter that has pydbsp (it needs Python
3.12 or newer; nablog's own environment may be older). Reads one JSON file (its argument) —
``{"edges": [[a, b], ...], "ops": [["insert"|"delete", [a, b]], ...], "limit": SECONDS}`` — and
prints one JSON object: the initial load time, per operation the time from pushing the change to
holding the new closure (``IncrementalDatalogStratified.saturate``), and the final closure size,
so the caller can check that both sides computed the same answer. Stops (``"timed_out"``) once
``limit`` seconds have been spent.
"""

from __future__ import annotations

import json
import sys
import time

from pydbsp import datalog as dlg
from pydbsp.datalog_stratified import IncrementalDatalogStratified
from pydbsp.zset import ZSet


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        job = json.load(f)
    x, y, z = dlg.Variable("?X"), dlg.Variable("?Y"), dlg.Variable("?Z")
    rules = ZSet({(("closure", (x, y)), ("edge", (x, y))): 1, (("closure", (x, y)), ("edge", (x, z)), ("closure", (z, y))): 1})
    engine = IncrementalDatalogStratified()
    engine.push_rules(rules)
    engine.push_facts(ZSet({("edge", (a, b)): 1 for a, b in job["edges"]}))
    start = time.perf_counter()
    engine.saturate()
    out = {"load": time.perf_counter() - start, "insert": [], "delete": [], "timed_out": False}
    spent = out["load"]
    result = None
    for kind, (a, b) in job["ops"]:
        if spent > job["limit"]:
            out["timed_out"] = True
            break
        start = time.perf_counter()
        engine.push_facts(ZSet({("edge", (a, b)): 1 if kind == "insert" else -1}))
        result = engine.saturate()
        took = time.perf_counter() - start
        out[kind].append(took)
        spent += took
    if result is not None and not out["timed_out"]:
        out["closure"] = sum(1 for (pred, _), w in result.inner.items() if pred == "closure" and w > 0)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
