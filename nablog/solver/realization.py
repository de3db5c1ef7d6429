"""Realizations and proposals: what a view-update answer holds, how it prints, and how it is verified.

A realization (seed 002, Def. 7) is a set of base-fact insertions and deletions after which the
request holds and every constraint holds; nablog only shows subset-minimal ones. Its side effects
are the induced update (seed 002, Def. 2) on the views other than the requested change.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Mapping

from ..engines import PythonEngine
from ..engines.violations import find_violations
from ..lang import Atom, Delta, NablogError, Program, constant_sort_key, format_constant
from ..lang import delta as changes_module
from ..lang.delta import KEPT_EFFECTS, induced_update  # noqa: F401  (re-exported: where they were)
from .family import Family
from .request import Request


def atom_key(atom: Atom) -> tuple:
    return (atom.pred, tuple(constant_sort_key(v) for v in atom.args))


def sorted_atoms(atoms) -> tuple[Atom, ...]:
    return tuple(sorted(atoms, key=atom_key))


SHOWN_EFFECTS = 20
"""Side-effect lines a realization's account lists whole; past it, a count per view and the first
:data:`SHOWN_EFFECTS_FIRST` (at 1e6 facts one realization had about 200)."""
SHOWN_EFFECTS_FIRST = 10


def summarised_effects(effects: list[str], full: bool = False) -> list[str]:
    """The side-effect lines of an account, indented: whole up to :data:`SHOWN_EFFECTS` (or with
    ``full``), else a count per view and sign, the first lines and how many more.

    >>> lines = [f"+p({i})" for i in range(30)] + ["-q(1)"]
    >>> summarised_effects(lines)[0], summarised_effects(lines)[-1]
    ('  31 in all: +p 30, -q 1', '  ... and 21 more (--full prints them all)')
    >>> len(summarised_effects(lines, full=True))
    31
    """
    if full or len(effects) <= SHOWN_EFFECTS:
        return [f"  {line}" for line in effects]
    counts: dict[str, int] = {}
    for line in effects:
        key = line[: line.index("(")] if "(" in line else line
        counts[key] = counts.get(key, 0) + 1
    summary = ", ".join(f"{key} {n:,}" for key, n in counts.items())
    return [f"  {len(effects):,} in all: {summary}"] + [f"  {line}" for line in effects[:SHOWN_EFFECTS_FIRST]] + [f"  ... and {len(effects) - SHOWN_EFFECTS_FIRST:,} more (--full prints them all)"]


@dataclass(frozen=True)
class Realization:
    """Base-fact changes realizing a request, with their side effects on the views.

    ``fresh`` names the new constants the realization invents (for existential variables,
    seed 002 §4.1); the user may replace them by real values before applying it.
    """

    insert: tuple[Atom, ...]
    delete: tuple[Atom, ...]
    side_effects: Delta = field(default_factory=Delta)
    fresh: tuple[str, ...] = ()
    reason: str = ""
    basis: str = field(default="", compare=False, repr=False)  # fingerprint of the data it was proposed on
    # Lines naming the kernels (seed 003, Def. 4) the changes cut or complete, computed on demand.
    kernels: Callable[[], list[str]] | None = field(default=None, compare=False, repr=False)
    family: Family | None = field(default=None, compare=False, repr=False)  # when it stands for many
    # A family's members' side effects, by binding, evaluated on demand (see members).
    member_effects: Callable[[tuple], Delta] | None = field(default=None, compare=False, repr=False)
    # The request it was proposed for, as parsed once: what applying it checks it against.
    request: Request | None = field(default=None, compare=False, repr=False)

    def members(self, side_effects: bool = False) -> list["Realization"]:
        """The realizations this one stands for: itself, or every member of its family. A member's
        side effects are computed when it is applied, or here with ``side_effects=True`` (one
        evaluation per member)."""
        if self.family is None:
            return [self]
        return [self.member(b, side_effects) for b in self.family.bindings]

    def member(self, binding: tuple, side_effects: bool = False) -> "Realization":
        """The member of the family whose variables take ``binding``."""
        assert self.family is not None
        insert, delete = self.family.member(binding)
        values = ", ".join(f"{v.name}={format_constant(b)}" for v, b in zip(self.family.variables, binding))
        effects = self.member_effects(binding) if side_effects and self.member_effects is not None else Delta()
        return Realization(sorted_atoms(insert), sorted_atoms(delete), effects, self.fresh, f"member {values} of a family", self.basis, request=self.request)

    def pick(self, values: Mapping[str, object]) -> "Realization":
        """The member of the family with these variable values (``{"D": "d42"}``); the other
        variables follow from the parameter."""
        assert self.family is not None
        binding = self.family.find(values)
        if binding is None:
            shown = ", ".join(f"{k}={format_constant(v)}" for k, v in values.items())
            raise NablogError(
                f"no member of the family has {shown}",
                hint=f"{self.family.condition}; nablog propose ... --expand lists them",
            )
        return self.member(binding)

    def portable(self) -> "Realization":
        """This realization as it crosses a process boundary (:meth:`nablog.database.Database.apart`):
        its changes, request, basis, reason and family, without what the process that made it
        computes on demand (side effects, kernels, members' side effects) or the family's
        structured condition (its words stay). Applying it re-verifies it against its basis."""
        family = None if self.family is None else replace(self.family, where=None)
        return replace(self, side_effects=Delta(), kernels=None, member_effects=None, family=family)

    @property
    def size(self) -> int:
        return len(self.insert) + len(self.delete)

    @property
    def changes(self) -> Delta:
        """The base-fact changes (the same :class:`~nablog.lang.Delta` as :attr:`delta`)."""
        return self.delta

    @property
    def delta(self) -> Delta:
        """The base-fact changes as a :class:`~nablog.lang.Delta` (what ``Database.apply`` commits)."""
        return Delta(frozenset(self.insert), frozenset(self.delete))

    def explain(self, full: bool = False) -> str:
        """A readable account: the changes, their side effects and why the realization was chosen.
        More than :data:`SHOWN_EFFECTS` side effects are summarised (a count per view and the
        first ones) unless ``full``."""
        if self.family is not None:
            out = [f"a family of {len(self.family):,} realizations, {self.size} change" + ("" if self.size == 1 else "s") + " each:"]
        else:
            out = [f"{self.size} change" + ("" if self.size == 1 else "s") + ":"]
        out += [f"  {line}" for line in self.changes.lines()] or ["  (none)"]
        effects = self.side_effects.lines()  # once: a large lazy update is computed per ask
        if self.family is not None:
            out.append(f"where {self.family.condition}")
            first = ", ".join(f"{v.name}={format_constant(b)}" for v, b in zip(self.family.variables, self.family.bindings[0]))
            out.append(f"(--set {self.family.parameter.name}=VALUE picks one, --expand lists them)")
            if effects:
                out.append(f"side effects on views, for {first}:")
                out += summarised_effects(effects, full)
        elif effects:
            out.append("side effects on views:")
            out += summarised_effects(effects, full)
        else:
            out.append("no side effects on other views")
        if self.fresh:
            out.append("new constants: " + ", ".join(self.fresh) + " (replace them by real values when applying)")
        if self.kernels is not None:
            out += self.kernels()
        if self.reason:
            out.append(self.reason)
        return "\n".join(out)

    def to_json(self) -> dict:
        out = {
            "insert": [str(a) for a in self.insert],
            "delete": [str(a) for a in self.delete],
            "side_effects": self.side_effects.to_json(),
            "fresh": list(self.fresh),
        }
        if self.family is not None:
            out["family"] = {
                "variables": [v.name for v in self.family.variables],
                "parameter": self.family.parameter.name,
                "condition": self.family.condition,
                "where": self.family.where.to_json() if self.family.where is not None else None,
                "count": len(self.family),
                "members": [[format_constant(v) for v in b] for b in self.family.bindings],
                "side_effects_of": [format_constant(v) for v in self.family.bindings[0]],
            }
        return out

    def substitute(self, values: Mapping[str, object]) -> "Realization":
        """The same changes with fresh constants replaced by the given values (for a family: the
        member with those values of its variables, see :meth:`pick`)."""
        if self.family is not None:
            names = {v.name for v in self.family.variables}
            if set(values) <= names:
                return self.pick(values)
            # A new constant of the family's member that has one: that member, substituted.
            fresh = {k: v for k, v in values.items() if k not in names}
            member = self.pick({k: v for k, v in values.items() if k in names}) if set(values) & names else None
            if member is None:
                holding = [b for b in self.family.bindings if set(fresh) <= set(b)]
                if len(holding) != 1:
                    raise NablogError(
                        "--set " + ", ".join(fresh) + ": not a new constant of this family",
                        hint=f"name its variables: --set {self.family.parameter.name}=VALUE",
                    )
                member = self.member(holding[0])
            return Realization(member.insert, member.delete, member.side_effects, self.fresh, member.reason, self.basis, request=self.request).substitute(fresh)

        changes = self.delta.substitute(values)
        effects = self.side_effects

        return Realization(
            sorted_atoms(changes.insert),
            sorted_atoms(changes.delete),
            Delta.later(lambda: effects.substitute(values)),
            tuple(f for f in self.fresh if f not in values),
            self.reason,
            self.basis,
            request=self.request,
        )


@dataclass
class Proposal:
    """The answer to a request: a status, the realizations found, and a message.

    ``status`` is ``complete`` (every minimal realization within the candidate policy is listed),
    ``bounded`` (a bound — ``limit``, ``max_fresh``, rounds — cut the search: there may be more,
    or realizations needing more new constants), ``timeout``, or ``interrupted`` (Ctrl-C at the
    command line). Realizations come smallest first, then in the order of their atoms; a family
    (``Realization.family``) stands for many and counts once. When there is no realization,
    ``reasons`` names a minimal set of constraints, protected facts and request atoms that
    together exclude every change. ``complete_up_to`` = k, when the search left out values
    through which a realization needs more changes: every realization of up to k changes is
    listed; those of k + 1 changes listed are the ones the search found (true and minimal, but
    others of that size may exist); none larger is listed (one of k + 1 changes may be missing,
    so a larger one shown would break "smallest first").
    """

    request: Request
    status: str
    realizations: list[Realization] = field(default_factory=list)
    message: str = ""
    reasons: list[str] = field(default_factory=list)
    candidates: int = 0
    complete_up_to: int | None = None

    def __iter__(self) -> Iterator[Realization]:
        return iter(self.realizations)

    def __len__(self) -> int:
        return len(self.realizations)

    def __getitem__(self, i: int) -> Realization:
        return self.realizations[i]

    def to_json(self) -> dict:
        out = {"status": self.status, "realizations": [r.to_json() for r in self.realizations]}
        if self.message:
            out["message"] = self.message
        if self.reasons:
            out["reasons"] = self.reasons
        if self.complete_up_to is not None:
            out["complete_up_to"] = self.complete_up_to
        return out


class Verifier:
    """Re-evaluates the database a change set produces with the python engine (DESIGN: every
    realization is verified before it is shown)."""

    def __init__(self, rules: Program, model: Mapping[str, Set], request: Request, consistent: bool):
        self.rules = rules
        self.model = model
        self.request = request
        self.consistent = consistent  # no constraint is violated in `model`
        # Whether the current state fails the request or a constraint (it then is no realization).
        self.request_fails_now = not consistent or not (
            all(tuple(a.args) in model.get(a.pred, ()) for a in request.insert)
            and not any(tuple(a.args) in model.get(a.pred, ()) for a in request.delete)
        )
        self.engine = PythonEngine()

    def realizes(self, insert: tuple[Atom, ...], delete: tuple[Atom, ...]):
        """``(new model, gained, lost)`` when the changes realize the request with every
        constraint holding, else None.

        The new model is computed from the current one by the python engine's incremental
        update; when the current model violates nothing, only constraint instances using a
        changed tuple are re-checked, else every constraint is."""
        model, gained, lost = self.engine.update(self.rules, self.model, insert=_facts(insert), delete=_facts(delete), changes=True)
        for atom in self.request.insert:
            if tuple(atom.args) not in model.get(atom.pred, ()):
                return None
        for atom in self.request.delete:
            if tuple(atom.args) in model.get(atom.pred, ()):
                return None
        if find_violations(self.rules, model, self.engine, (gained, lost) if self.consistent else None):
            return None
        return model, gained, lost

    def minimal(self, insert: tuple[Atom, ...], delete: tuple[Atom, ...], exhaustive_up_to: int = 6) -> bool:
        """No proper subset of the changes is a realization: every subset when there are at most
        ``exhaustive_up_to`` changes, else every subset with one change fewer."""
        changes = [("+", a) for a in insert] + [("-", a) for a in delete]
        n = len(changes)
        if n <= 1 and self.request_fails_now:
            return True  # the only proper subset is "no change", which is not a realization
        if n <= exhaustive_up_to:
            masks = range((1 << n) - 1)
        else:
            masks = [((1 << n) - 1) ^ (1 << i) for i in range(n)]
        for mask in masks:
            subset = [changes[i] for i in range(n) if mask >> i & 1]
            ins = tuple(a for s, a in subset if s == "+")
            dele = tuple(a for s, a in subset if s == "-")
            if self.realizes(ins, dele) is not None:
                return False
        return True

    def effects(self, insert: tuple[Atom, ...], delete: tuple[Atom, ...], verified: tuple | None = None) -> Delta:
        """The side effects of a change set: the induced update (seed 002, Def. 2) on derived
        predicates, without the requested atoms themselves.

        ``verified`` is what :meth:`realizes` returned for these changes, when it was called. The
        effects are kept when at most :data:`KEPT_EFFECTS` atoms change; larger ones are only
        counted, and computed (one re-evaluation) whenever they are asked for: moving a department
        head at the top of an org chart changes almost everyone's chain of command, and keeping
        that for each of hundreds of realizations took gigabytes nobody reads before picking one
        (issue 16). Without ``verified``, nothing is evaluated until they are asked for. A lazy
        update holds this verifier, and so its state's model, for as long as it is kept: a
        proposal kept across commits keeps the state it was made on (its effects stay relative
        to that state, as they must)."""
        requested = {(a.pred, tuple(a.args)) for a in (*self.request.insert, *self.request.delete)}

        def compute() -> Delta:
            again = self.realizes(insert, delete)
            return Delta() if again is None else changes_module.induced_update(again[1], again[2], self.rules.derived, requested)

        if verified is None:
            return Delta.later(compute)
        effects = changes_module.induced_update(verified[1], verified[2], self.rules.derived, requested)
        counts = effects.count()
        if sum(counts) <= changes_module.KEPT_EFFECTS:  # read when used: one bound for Delta.later and here
            return effects
        return Delta.later(compute, counts)


def check_before_writing(
    rules: Program, model: Mapping[str, Set], realization: Realization, request: Request | None, consistent: bool
) -> None:
    """Refuse a realization that is not one: its changes (after ``--set`` replaced new constants,
    or as a caller built them) must make ``request`` hold, keep every constraint (all of them
    when ``consistent``, else those the changes touch are re-checked from scratch), and have no
    proper subset that does the same. Raises :class:`NablogError` naming what fails.

    >>> from nablog import Database
    >>> db = Database.from_text("s(X) :- g(X, Z). #constraint one :- g(X, A), g(X, B), A != B. g(1, a).")
    >>> r = Realization((Atom("g", (1, "b")),), ())
    >>> check_before_writing(db.rules, db.python_model(), r, None, True)
    Traceback (most recent call last):
    ...
    nablog.lang.errors.NablogError: error: the changes violate constraint one: g(1, a), g(1, b)
    hint: choose another value for the new constants, or propose again
    """
    if realization.family is not None:
        raise NablogError("a family of realizations is not one change", hint=f"pick a member: --set {realization.family.parameter.name}=VALUE")
    hint = "choose another value for the new constants, or propose again"
    engine = PythonEngine()
    new, gained, lost = engine.update(rules, model, insert=_facts(realization.insert), delete=_facts(realization.delete), changes=True)
    if request is not None:
        for sign, atom in request.atoms():
            if (tuple(atom.args) in new.get(atom.pred, ())) != (sign == "+"):
                raise NablogError(f"the changes do not realize the request: {sign}{atom} fails after them", hint=hint)
    violations = find_violations(rules, new, engine, (gained, lost) if consistent else None, limit=1)
    if violations:
        v = violations[0]
        witness = ", ".join(str(a) for a in v.witnesses[0]) if v.witnesses and v.witnesses[0] else "the required atom does not hold"
        raise NablogError(f"the changes violate constraint {v.constraint}: {witness}", hint=hint)
    if request is not None and not Verifier(rules, model, request, consistent).minimal(realization.insert, realization.delete):
        raise NablogError("the changes are not minimal: fewer of them realize the request as well", hint=hint)


def _facts(atoms: tuple[Atom, ...]) -> dict[str, set[tuple]]:
    out: dict[str, set[tuple]] = {}
    for a in atoms:
        out.setdefault(a.pred, set()).add(tuple(a.args))
    return out
