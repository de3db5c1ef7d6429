"""Why a realization changes what it changes, and why a change set of the user's own is not one.

A realization is a subset-minimal set of base changes after which the request and every
constraint hold (seed 002, Def. 3). So each of its changes is needed: taking it out leaves a
change set that fails a part of the request, or violates a constraint. A change of the second
kind is a *compensation* (seed 002 §4.2): it repairs a violation the other changes caused, and
the violated instance names them — the chain of compensations is read off those instances
(``+group_chair(infor1, gerhard)`` violates ``one_chair_per_group`` with
``group_chair(infor1, matthias)``, so ``-group_chair(infor1, matthias)`` is forced by it).

:func:`explain_realization` says that for each change, gives the proofs the realization creates
for the requested insertions and the side effects it adds (in the new state), and for requested
deletions and lost side effects the derivations it breaks (the proof in the current state) and
why they no longer hold. :func:`judge_changes` says of any change set which part of the request
it fails, which constraints it violates, or which smaller change set inside it already realizes
the request.

>>> from nablog.database import Database
>>> db = Database.from_text("p(X) :- q(X), not r(X). s(X) :- r(X). q(1). r(1).")
>>> print(db.why_realization("+p(1).", db.propose("+p(1).")[0]).text())
changes:
  -r(1)  needed for the request: without it, +p(1) fails
+p(1) holds now:
  p(1)  <string>:1  p(1) :- q(1), not r(1).
  ├─ q(1)  fact
  └─ not r(1)  absent
side effect -s(1): it held by
  s(1)  <string>:1  s(1) :- r(1).
  └─ r(1)  fact
>>> print(db.judge_changes("+p(1).", "+q(2).").text())
+q(2) fails the request: +p(1) does not hold
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from ..engines import PythonEngine
from ..engines.violations import Violation, find_violations
from ..lang import Atom
from .proofs import Explainer
from .why import Why, explain


@dataclass(frozen=True)
class Outcome:
    """What a change set does in the current state: the parts of the request it fails, the
    constraints it violates (with their instances)."""

    insert: tuple[Atom, ...]
    delete: tuple[Atom, ...]
    request_fails: tuple[str, ...]
    violations: tuple[Violation, ...]

    @property
    def realizes(self) -> bool:
        return not self.request_fails and not self.violations


@dataclass(frozen=True)
class Need:
    """Why one change of a realization is there: what fails without it, and for a compensation,
    the other changes of the realization that the violated instances name."""

    change: str
    request_fails: tuple[str, ...]
    violations: tuple[Violation, ...]
    forced_by: tuple[str, ...]

    def line(self) -> str:
        if self.request_fails:
            return f"{self.change}  needed for the request: without it, {', '.join(self.request_fails)} fail{'s' if len(self.request_fails) == 1 else ''}"
        names = ", ".join(v.constraint for v in self.violations)
        witnesses = "; ".join(", ".join(map(str, w)) for v in self.violations for w in v.witnesses[:2])
        by = f", caused by {', '.join(self.forced_by)}" if self.forced_by else ""
        return f"{self.change}  compensates: without it, {names} is violated ({witnesses}){by}"

    def to_json(self) -> dict:
        return {
            "change": self.change,
            "request_fails": list(self.request_fails),
            "violations": [v.to_json() for v in self.violations],
            "forced_by": list(self.forced_by),
        }


@dataclass(frozen=True)
class RealizationWhy:
    """A realization explained: each change's need, each requested atom and each side effect
    with its proof after the change (what it creates) or before it (what it breaks)."""

    needs: tuple[Need, ...]
    requested: tuple[tuple[str, Why], ...]
    side_effects: tuple[tuple[str, Why], ...]

    def to_json(self) -> dict:
        return {
            "changes": [n.to_json() for n in self.needs],
            "requested": [{"change": c, **w.to_json()} for c, w in self.requested],
            "side_effects": [{"change": c, **w.to_json()} for c, w in self.side_effects],
        }

    def text(self) -> str:
        lines = ["changes:"] + [f"  {n.line()}" for n in self.needs]
        for kind, items in (("", self.requested), ("side effect ", self.side_effects)):
            for change, why in items:
                if change.startswith("+"):
                    lines.append(f"{kind}{change} holds now:" if kind == "" else f"{kind}{change}: derived by")
                else:
                    lines.append(f"{kind}{change}: it held by")
                lines.extend("  " + line for line in why.text().splitlines())
        return "\n".join(lines)


@dataclass(frozen=True)
class Judgement:
    """A change set of the user's judged against the request: its outcome, and when it realizes
    the request, a smaller change set inside it that does too (it is then no minimal realization)."""

    outcome: Outcome
    smaller: Outcome | None

    def text(self) -> str:
        o = self.outcome
        changes = " ".join([f"+{a}" for a in o.insert] + [f"-{a}" for a in o.delete]) or "no change"
        lines = []
        if o.request_fails:
            lines.append(f"{changes} fails the request: {', '.join(f'{r} does not hold' if r.startswith('+') else f'{r[1:]} still holds' for r in o.request_fails)}")
        for v in o.violations:
            shown = "; ".join(", ".join(map(str, w)) for w in v.witnesses[:3])
            lines.append(f"{changes} violates {v.constraint} ({v.count} instance{'' if v.count == 1 else 's'}{': ' + shown if shown else ''})")
        if o.realizes and self.smaller is not None:
            inner = " ".join([f"+{a}" for a in self.smaller.insert] + [f"-{a}" for a in self.smaller.delete]) or "no change"
            lines.append(f"{changes} realizes the request but is not minimal: it contains the smaller realization {inner}")
        elif o.realizes:
            lines.append(f"{changes} is a minimal realization")
        return "\n".join(lines)

    def to_json(self) -> dict:
        o = self.outcome
        out = {"realizes": o.realizes, "minimal": o.realizes and self.smaller is None, "request_fails": list(o.request_fails), "violations": [v.to_json() for v in o.violations]}
        if self.smaller is not None:
            out["contains"] = {"insert": [str(a) for a in self.smaller.insert], "delete": [str(a) for a in self.smaller.delete]}
        return out


def outcome(explainer: Explainer, request, insert: Iterable[Atom], delete: Iterable[Atom]) -> tuple[Outcome, dict]:
    """The outcome of a change set, and the model after it (the python engine's update)."""
    insert, delete = tuple(insert), tuple(delete)
    rules = explainer.program
    model = PythonEngine().update(rules, explainer.model, insert=_by_relation(insert), delete=_by_relation(delete))
    fails = tuple(
        [f"+{a}" for a in sorted(request.insert, key=str) if tuple(a.args) not in model.get(a.pred, ())]
        + [f"-{a}" for a in sorted(request.delete, key=str) if tuple(a.args) in model.get(a.pred, ())]
    )
    violations = tuple(find_violations(rules, model, PythonEngine(), limit=5))
    return Outcome(insert, delete, fails, violations), model


def explain_realization(explainer: Explainer, request, insert: tuple[Atom, ...], delete: tuple[Atom, ...], depth: int | None = None) -> RealizationWhy:
    """Why a realization of ``request`` (base changes ``insert``/``delete``) changes what it does
    (see the module docstring); proofs cut at ``depth`` when given."""
    changes = [("+", a) for a in insert] + [("-", a) for a in delete]
    needs = []
    for sign, atom in changes:
        rest = [c for c in changes if c != (sign, atom)]
        without, _ = outcome(explainer, request, [a for s, a in rest if s == "+"], [a for s, a in rest if s == "-"])
        named = {a for v in without.violations for w in v.witnesses for a in w}
        forced = tuple(f"{s}{a}" for s, a in rest if s == "+" and a in named)
        if not forced and without.violations:
            # A deletion causes a violation through what it removes: a required atom, say.
            forced = tuple(f"{s}{a}" for s, a in rest if s == "-" and not without.request_fails)
        needs.append(Need(f"{sign}{atom}", without.request_fails, without.violations if not without.request_fails else (), forced if not without.request_fails else ()))
    done, model = outcome(explainer, request, insert, delete)
    after = Explainer(explainer.program, model, explainer.originals.values())
    requested = tuple(
        [(f"+{a}", explain(after, a, depth)) for a in sorted(request.insert, key=str)]
        + [(f"-{a}", explain(explainer, a, depth)) for a in sorted(request.delete, key=str) if explainer.holds(a)]
    )
    asked = set(request.insert) | set(request.delete)
    derived = explainer.derived
    gained, lost = [], []
    for pred in sorted(derived):
        before, now = explainer.model.get(pred, ()), model.get(pred, ())
        gained.extend(Atom(pred, row) for row in now if row not in before)
        lost.extend(Atom(pred, row) for row in before if row not in now)
    effects = tuple(
        [(f"+{a}", explain(after, a, depth)) for a in sorted(gained, key=str) if a not in asked]
        + [(f"-{a}", explain(explainer, a, depth)) for a in sorted(lost, key=str) if a not in asked]
    )
    return RealizationWhy(tuple(needs), requested, effects)


def judge_changes(explainer: Explainer, request, insert: tuple[Atom, ...], delete: tuple[Atom, ...]) -> Judgement:
    """Which part of the request a change set fails, which constraints it violates, or — when it
    realizes the request — a smaller change set inside it that does too (one change fewer at a
    time, so the one found is minimal)."""
    found, _ = outcome(explainer, request, insert, delete)
    if not found.realizes:
        return Judgement(found, None)
    smaller = None
    current = [("+", a) for a in insert] + [("-", a) for a in delete]
    shrunk = True
    while shrunk:
        shrunk = False
        for change in current:
            rest = [c for c in current if c != change]
            trial, _ = outcome(explainer, request, [a for s, a in rest if s == "+"], [a for s, a in rest if s == "-"])
            if trial.realizes:
                current, smaller, shrunk = rest, trial, True
                break
    return Judgement(found, smaller)


@dataclass(frozen=True)
class Row:
    """A row of a correction table explained: the violated instances it removes (those whose
    witnesses hold the deleted fact, or, for an insertion, every instance the table removes that
    comes back without it), and what is violated when the table leaves the row out."""

    change: str
    removes: tuple[tuple[str, tuple[Atom, ...]], ...]
    without: tuple[Violation, ...]

    def text(self) -> str:
        shown = "; ".join(f"{name}: {', '.join(map(str, w))}" if w else name for name, w in self.removes)
        line = f"{self.change}  removes {len(self.removes)} violation{'' if len(self.removes) == 1 else 's'}" + (f" ({shown})" if shown else "")
        if self.without:
            line += "; without it, still violated: " + ", ".join(f"{v.constraint} ({v.count})" for v in self.without)
        return line

    def to_json(self) -> dict:
        return {
            "change": self.change,
            "removes": [{"constraint": name, "witnesses": [str(a) for a in w]} for name, w in self.removes],
            "without": [v.to_json() for v in self.without],
        }


def explain_table(explainer: Explainer, insert: tuple[Atom, ...], delete: tuple[Atom, ...]) -> tuple[Row, ...]:
    """Each row of a correction table (seed 004, Def. 2.4) with the violated instances it removes.

    >>> from nablog.database import Database
    >>> from nablog.repair.tables import repair
    >>> db = Database.from_text("#constraint one :- p(X), q(X). #constraint two :- q(X), r(X). p(1). q(1). r(1). p(2).")
    >>> [[r.text() for r in db.why_repair(table)] for table in repair(db.rules, db.model(), engine=db.engine, limit=2)]
    [['-q(1)  removes 2 violations (one: p(1), q(1); two: q(1), r(1)); without it, still violated: one (1), two (1)'], ['-p(1)  removes 1 violation (one: p(1), q(1)); without it, still violated: one (1)', '-r(1)  removes 1 violation (two: q(1), r(1)); without it, still violated: two (1)']]
    """
    return _explain_units(explainer, [(f"+{a}", (a,), ()) for a in insert] + [(f"-{a}", (), (a,)) for a in delete])


def explain_cells(explainer: Explainer, updates: Sequence[tuple[str, Atom, Atom]]) -> tuple[Row, ...]:
    """Each updated row of a cell repair with the violated instances it removes: ``updates``
    holds, per row, a label (the cells changed), the tuple before and the tuple after. A cell
    update is seed 004's composition of the tuple's deletion and the updated tuple's insertion
    (Def. 2.2), so a row is explained as that pair.

    >>> from nablog.database import Database
    >>> from nablog.lang import Atom
    >>> db = Database.from_text("#constraint same_city :- addr(I, Z, C), addr(J, Z, D), C != D. addr(1, 2108, boston). addr(2, 2108, bostn). addr(3, 1970, salem).")
    >>> updates = [("addr[1].city: 'bostn' -> 'boston'", Atom("addr", (2, 2108, "bostn")), Atom("addr", (2, 2108, "boston")))]
    >>> [r.text() for r in explain_cells(db.explainer(python=True), updates)]
    ["addr[1].city: 'bostn' -> 'boston'  removes 2 violations (same_city: addr(1, 2108, boston), addr(2, 2108, bostn); same_city: addr(2, 2108, bostn), addr(1, 2108, boston)); without it, still violated: same_city (2)"]
    """
    return _explain_units(explainer, [(label, (after,), (before,)) for label, before, after in updates])


def _explain_units(explainer: Explainer, units: Sequence[tuple[str, tuple[Atom, ...], tuple[Atom, ...]]]) -> tuple[Row, ...]:
    """Each unit (a label, its insertions, its deletions) of a set of changes applied together,
    with the violated instances it removes: those whose witnesses hold a fact it deletes, else
    those that come back when it alone is left out; and what is violated then."""
    from ..lang import Delta

    nothing = Delta()
    now = find_violations(explainer.program, explainer.model, PythonEngine())
    instances = [(v.constraint, w) for v in now for w in v.witnesses]
    inserted = [a for _, plus, _ in units for a in plus]
    deleted = [a for _, _, minus in units for a in minus]
    done, _ = outcome(explainer, nothing, inserted, deleted)
    remaining = {(v.constraint, w) for v in done.violations for w in v.witnesses}
    removed = [i for i in instances if i not in remaining]
    rows = []
    for i, (label, plus, minus) in enumerate(units):
        rest = [u for j, u in enumerate(units) if j != i]
        without, _ = outcome(explainer, nothing, [a for _, p, _ in rest for a in p], [a for _, _, m in rest for a in m])
        back = {(v.constraint, w) for v in without.violations for w in v.witnesses}
        mine = tuple(x for x in removed if any(a in x[1] for a in minus)) or tuple(x for x in removed if x in back)
        rows.append(Row(label, mine, without.violations))
    return tuple(rows)


def _by_relation(atoms: Iterable[Atom]) -> dict[str, set[tuple]]:
    out: dict[str, set[tuple]] = {}
    for a in atoms:
        out.setdefault(a.pred, set()).add(tuple(a.args))
    return out


__all__ = ["Judgement", "Need", "Outcome", "RealizationWhy", "Row", "explain_cells", "explain_realization", "explain_table", "judge_changes", "outcome"]
