"""Why a fact holds: a proof of least height, each node a ground rule instance, down to base facts.

The *height* of a base fact (or of a fact stored for a view) is 0; a derived fact's is one more
than the greatest height of the positive body atoms of the rule instance that derives it, and its
least height is the least over its instances. Negated literals and aggregates are conditions on
the model, not subproofs: a node lists the atoms it found absent and each aggregate's value and
elements (Soufflé's provenance treats negation the same way: Zhao, Subotić, Scholz, *Debugging
Large-scale Datalog: A Scalable Provenance Evaluation Strategy*, TOPLAS 42(2), 2020, §4).

Least heights are computed with Knuth's generalization of Dijkstra's algorithm (*A generalization
of Dijkstra's algorithm*, IPL 6(1), 1977) over the atoms a proof of the asked atom can use: the
instances of each atom are read off the model (:mod:`nablog.explain.instances`), an instance is
ready once every body atom has its least height, and the atoms are settled in order of height; so
the work follows the part of the model below the atom, not the model's size. Heights are kept: a
second question over the same model reuses them.

>>> from nablog.database import Database
>>> db = Database.from_text('''
...     tc(X, Y) :- e(X, Y).
...     tc(X, Y) :- e(X, Z), tc(Z, Y).
...     e(a, b). e(b, c). e(c, d). e(a, d).
... ''')
>>> print(db.why("tc(a, d)").text())
tc(a, d)  <string>:2  tc(a, d) :- e(a, d).
└─ e(a, d)  fact
"""

from __future__ import annotations

import heapq
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ..engines.lookup import ModelIndex
from ..lang import Atom, Literal, Program, QueryError, Rule, base_part, format_constant
from ..lang.ast import Aggregate
from .instances import Instance, ground_atom, ground_element, ground_rule, head_instances

ELEMENTS_SHOWN = 10
"""An aggregate node lists this many of its group's elements, then their count."""


@dataclass(frozen=True)
class AggregateUse:
    """An aggregate of a proof node: the literal as the instance reads it, its value, the number of
    distinct elements, and the first of them (each an element tuple with its condition atoms)."""

    literal: str
    value: object
    count: int
    elements: tuple[tuple[tuple, tuple[Atom, ...]], ...]

    def to_json(self) -> dict:
        return {
            "literal": self.literal,
            "value": self.value,
            "count": self.count,
            "elements": [{"terms": list(t), "atoms": [str(a) for a in atoms]} for t, atoms in self.elements],
        }

    def summary(self) -> str:
        shown = ", ".join("(" + ", ".join(map(format_constant, t)) + ")" if len(t) != 1 else format_constant(t[0]) for t, _ in self.elements)
        more = f" and {self.count - len(self.elements)} more" if self.count > len(self.elements) else ""
        noun = "element" if self.count == 1 else "elements"
        return f"{self.literal}  over {self.count} {noun}" + (f": {shown}{more}" if self.count else "")


@dataclass(frozen=True)
class Node:
    """One node of a proof: a ground atom and the rule instance that derives it (``rule`` None for
    a base fact), its subproofs, the atoms its negated literals found absent, its aggregates, its
    height, and whether a depth cut left its subproofs out (``cut``)."""

    atom: Atom
    rule: Rule | None
    instance: str
    children: tuple["Node", ...] = ()
    absent: tuple[Atom, ...] = ()
    aggregates: tuple[AggregateUse, ...] = ()
    height: int = 0
    cut: bool = False
    binding: tuple = field(default=(), compare=False)

    @property
    def where(self) -> str | None:
        """``FILE:LINE`` of the rule, None for a base fact."""
        if self.rule is None:
            return None
        loc = self.rule.loc
        return f"{loc.source.name}:{loc.line}" if loc is not None else "<generated>"

    def to_json(self) -> dict:
        out = {
            "atom": str(self.atom),
            "rule": self.where,
            "instance": self.instance,
            "children": [c.to_json() for c in self.children],
            "absent": [str(a) for a in self.absent],
            "height": self.height,
        }
        if self.aggregates:
            out["aggregates"] = [a.to_json() for a in self.aggregates]
        if self.cut:
            out["cut"] = True
        return out

    def nodes(self) -> Iterable["Node"]:
        """This node and every node below it, depth first."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))


def location_key(rule: Rule):
    loc = rule.loc
    return None if loc is None else (loc.source.name, loc.line, loc.column)


class Explainer:
    """Proofs over one model of a program's (flattened) rules; heights found are kept.

    ``originals`` are the rules as written (before :func:`~nablog.transforms.flatten.flatten`):
    an instance is printed from the rule as written when one has its location.
    """

    def __init__(self, rules: Program, model: Mapping[str, Set], originals: Iterable[Rule] = (), index: ModelIndex | None = None):
        self.program = rules
        self.derived = rules.derived
        self.model = model
        self.index = index if index is not None else ModelIndex(model)
        self.by_head: dict[str, list[Rule]] = {}
        for rule in rules.rules:
            if _bridges(rule):
                continue  # stored facts of a view are leaves of a proof, not instances of this rule
            for head in rule.head:
                self.by_head.setdefault(head.pred, []).append(rule)
        self.originals = {location_key(r): r for r in originals if r.loc is not None}
        self._instances: dict[Atom, list[Instance]] = {}
        self._height: dict[Atom, tuple[int, int]] = {}  # atom -> (least height, instance number)

    # -- facts of the model ---------------------------------------------------------------------

    def holds(self, atom: Atom) -> bool:
        return self.index.contains(atom.pred, tuple(atom.args))

    def is_leaf(self, atom: Atom) -> bool:
        """A base fact, or a fact stored for a view (seed 002 §2.1's ``base__p``)."""
        if atom.pred not in self.derived:
            return True
        return self.index.contains(base_part(atom.pred), tuple(atom.args))

    def instances(self, atom: Atom) -> list[Instance]:
        """The instances deriving ``atom``, rule by rule in program order, bindings sorted."""
        found = self._instances.get(atom)
        if found is None:
            found = []
            for rule in self.by_head.get(atom.pred, ()):
                found.extend(sorted(head_instances(rule, self.index, atom), key=Instance.sort_key))
            self._instances[atom] = found
        return found

    # -- least heights --------------------------------------------------------------------------

    def height(self, atom: Atom) -> int:
        """The least height of a proof of ``atom`` (which holds)."""
        if self.is_leaf(atom):
            return 0
        self._settle(atom)
        return self._height[atom][0]

    def _known(self, atom: Atom) -> int | None:
        if self.is_leaf(atom):
            return 0
        settled = self._height.get(atom)
        return None if settled is None else settled[0]

    def _settle(self, target: Atom) -> None:
        """Knuth's algorithm over the atoms below ``target`` (see the module docstring)."""
        if target in self._height:
            return
        position = {target: 0}
        order = [target]
        users: dict[Atom, list[tuple[Atom, int]]] = {}
        waiting: dict[tuple[Atom, int], int] = {}
        heap: list[tuple[int, int, int, Atom]] = []

        def ready(a: Atom, k: int, instance: Instance) -> None:
            value = 1 + max((self._known(c) for c in instance.positives), default=0)
            heapq.heappush(heap, (value, position[a], k, a))

        i = 0
        while i < len(order):
            a = order[i]
            i += 1
            for k, instance in enumerate(self.instances(a)):
                unsettled = {c for c in instance.positives if self._known(c) is None}
                waiting[(a, k)] = len(unsettled)
                for c in unsettled:
                    users.setdefault(c, []).append((a, k))
                    if c not in position:
                        position[c] = len(order)
                        order.append(c)
                if not unsettled:
                    ready(a, k, instance)
        while heap:
            value, _, k, a = heapq.heappop(heap)
            if a in self._height:
                continue
            self._height[a] = (value, k)
            if a == target:
                return
            for b, j in users.get(a, ()):
                waiting[(b, j)] -= 1
                if waiting[(b, j)] == 0 and b not in self._height:
                    ready(b, j, self._instances[b][j])
        raise AssertionError(f"{target} holds in the model but has no proof from its rules")  # pragma: no cover

    # -- proofs ---------------------------------------------------------------------------------

    def proof(self, atom: Atom, depth: int | None = None) -> Node:
        """A least-height proof of ``atom`` (which holds), cut below ``depth`` levels when given."""
        if self.is_leaf(atom):
            return self._leaf(atom)
        self._settle(atom)
        height, k = self._height[atom]
        return self._node(atom, self.instances(atom)[k], height, depth, {})

    def alternatives(self, atom: Atom, depth: int | None = None) -> list[Node]:
        """Every derivation of ``atom``: one node per instance, each with least-height subproofs,
        lowest first (the first is :meth:`proof`'s)."""
        if self.is_leaf(atom):
            return [self._leaf(atom)]
        nodes = []
        for instance in self.instances(atom):
            height = 1 + max((self.height(c) for c in instance.positives), default=0)
            nodes.append(self._node(atom, instance, height, depth, {}))
        first = self.proof(atom, depth)
        nodes.sort(key=lambda n: (n.height, n != first))
        return nodes

    def _leaf(self, atom: Atom) -> Node:
        if not self.holds(atom):
            raise QueryError(f"{atom} does not hold", hint="ask why not, or query what holds")
        return Node(atom, None, f"{atom}.")

    def _node(self, atom: Atom, instance: Instance, height: int, depth: int | None, made: dict) -> Node:
        """The node of ``instance`` with least subproofs, cut ``depth`` levels down when given;
        ``made`` keeps the nodes built, by (atom, depth left), so shared subproofs are built once."""
        if depth is None:
            self._build_below(instance, made)  # bottom up: a deep proof needs no deep recursion
        elif depth <= 0:
            return self._make(atom, instance, height, (), bool(instance.positives))
        below = None if depth is None else depth - 1
        kids = []
        for c in dict.fromkeys(instance.positives):
            if self.is_leaf(c):
                kids.append(self._leaf(c))
                continue
            if (c, below) not in made:
                h = self.height(c)
                made[(c, below)] = self._node(c, self.instances(c)[self._height[c][1]], h, below, made)
            kids.append(made[(c, below)])
        return self._make(atom, instance, height, tuple(kids), False)

    def _build_below(self, instance: Instance, made: dict) -> None:
        """The uncut nodes of the derived atoms below ``instance``, lowest first, into ``made``."""
        todo = [c for c in dict.fromkeys(instance.positives) if not self.is_leaf(c) and (c, None) not in made]
        seen = set(todo)
        i = 0
        while i < len(todo):
            a = todo[i]
            i += 1
            self.height(a)
            for c in self.instances(a)[self._height[a][1]].positives:
                if c not in seen and not self.is_leaf(c) and (c, None) not in made:
                    seen.add(c)
                    todo.append(c)
        for a in sorted(todo, key=lambda a: self._height[a][0]):
            h, k = self._height[a]
            instance = self.instances(a)[k]
            kids = tuple(self._leaf(c) if self.is_leaf(c) else made[(c, None)] for c in dict.fromkeys(instance.positives))
            made[(a, None)] = self._make(a, instance, h, kids, False)

    def _make(self, atom: Atom, instance: Instance, height: int, children: tuple[Node, ...], cut: bool) -> Node:
        """A node: the instance printed from the rule as written, its absent atoms and aggregates."""
        rule = instance.rule
        binding = instance.values()
        original = self.originals.get(location_key(rule), rule)
        absent = tuple(ground_atom(b.atom, binding) for b in original.body if isinstance(b, Literal) and not b.positive)
        aggregates = tuple(
            _aggregate_use(ground_element(b, binding), value) for b, value in zip((b for b in original.body if isinstance(b, Aggregate)), instance.aggregates)
        )
        written = ground_rule(original, binding)
        text = str(Rule((atom,), written.body))  # the head as derived (an interval in it has one value here)
        return Node(atom, rule, text, children, absent, aggregates, height, cut, instance.binding)


def _aggregate_use(literal: Aggregate, value) -> AggregateUse:
    shown = tuple(zip(value.elements[:ELEMENTS_SHOWN], value.atoms[:ELEMENTS_SHOWN]))
    empty = "#sup" if literal.function == "min" else "#inf"
    return AggregateUse(str(literal), empty if value.value is None else value.value, len(value.elements), shown)


def _bridges(rule: Rule) -> bool:
    """The rule ``p(V..) :- base__p(V..).`` that makes a view's stored facts part of it."""
    return len(rule.head) == 1 and len(rule.body) == 1 and isinstance(rule.body[0], Literal) and rule.body[0].atom.pred == base_part(rule.head[0].pred)


__all__ = ["AggregateUse", "ELEMENTS_SHOWN", "Explainer", "Node", "location_key"]
