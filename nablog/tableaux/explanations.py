"""Minimal abductive explanations (kernels) of a ground atom (seed 003, Def. 4, 5).

An explanation of ``A`` is a set ``Δ`` of base facts with ``IDB ∪ Δ ⊢ A``; a minimal one (a
*kernel*: Hansson's ``A``-kernel restricted to the updatable part) has no proper subset that is
one. Here they are read off the derivations of ``A`` in a model: each derivation tree of ``A``
uses a set of base facts, and the minimal such sets are the kernels. Negated body literals are
conditions of the state, not facts of an explanation (stratified negation: they hold in the
model and the kernel does not contain them). A deletion must *cut* every kernel (a hitting set of
the kernels, Algorithm 1); an insertion *completes* one.

``locally_minimal`` (Def. 5) keeps the kernels that are minimal with respect to some set of the
rules used: every kernel is locally minimal, and so are the base-fact sets of derivations that
use a smallest set of rule instances; ``explanations(..., local=True)`` returns those.

The enumeration walks derivation trees depth-first without repeating an atom along a path
(a derivation through a cycle is never needed); it is exponential in the worst case — a
layered graph of width ``w`` and depth ``k`` has ``wᵏ`` paths — so ``limit`` bounds it.

>>> from nablog.lang import parse, Atom
>>> from nablog.engines import PythonEngine
>>> program = parse("tc(X,Y) :- e(X,Y). tc(X,Y) :- e(X,Z), tc(Z,Y). e(s,a). e(s,b). e(a,t). e(b,t). e(s,t).")
>>> from nablog.lang import separate_facts
>>> rules, facts = separate_facts(program)
>>> model = PythonEngine().evaluate(rules, facts)
>>> [sorted(map(str, k)) for k in kernels(rules, model, Atom("tc", ("s", "t")))]
[['e(s, t)'], ['e(a, t)', 'e(s, a)'], ['e(b, t)', 'e(s, b)']]
"""

from __future__ import annotations

import itertools
from collections.abc import Set
from typing import Iterator, Mapping

from ..engines.lookup import ModelIndex
from ..lang import Atom, Comparison, Literal, Program, Rule, Var, constant_sort_key


def rule_instances(rules: Program, index: ModelIndex, atom: Atom) -> Iterator[tuple[Rule, tuple[Atom, ...]]]:
    """The ground instances of rules for ``atom`` whose body holds in the model: each rule with
    the positive body atoms of the instance."""
    for rule in rules.rules:
        for head in rule.head:
            if head.pred != atom.pred or head.arity != atom.arity:
                continue
            binding: dict[Var, object] = {}
            if not _unify(head, atom.args, binding):
                continue
            yield from ((rule, pos) for pos in _join(list(rule.body), binding, index, ()))


def _unify(pattern: Atom, row: tuple, binding: dict) -> bool:
    for t, v in zip(pattern.args, row):
        if isinstance(t, Var):
            if t.name == "_":
                continue
            if binding.setdefault(t, v) != v:
                return False
        elif t != v:
            return False
    return True


def _join(body: list, binding: dict, index: ModelIndex, used: tuple) -> Iterator[tuple[Atom, ...]]:
    positives = [b for b in body if isinstance(b, Literal) and b.positive]
    if not positives:
        for b in body:
            if isinstance(b, Comparison):
                value = lambda t: binding[t] if isinstance(t, Var) else t  # noqa: E731
                if not b.holds(value(b.left), value(b.right)):
                    return
            else:
                pattern = tuple(binding.get(t) if isinstance(t, Var) else t for t in b.atom.args)
                if any(True for _ in index.match(b.atom.pred, pattern)):
                    return
        yield used
        return
    first = positives[0]
    rest = [b for b in body if b is not first]
    pattern = tuple(binding.get(t) if isinstance(t, Var) else t for t in first.atom.args)
    for row in index.match(first.atom.pred, pattern):
        extended = dict(binding)
        if _unify(first.atom, row, extended):
            yield from _join(rest, extended, index, used + (Atom(first.atom.pred, tuple(row)),))


STEPS_PER_DERIVATION = 20
"""Rule instances a kernel search may expand per derivation it is allowed to find."""


def kernels(
    rules: Program, model: Mapping[str, Set] | ModelIndex, atom: Atom, limit: int | None = 10_000, local: bool = False
) -> list[frozenset[Atom]]:
    """The kernels of ``atom`` in ``model`` (Def. 4): minimal sets of base facts deriving it,
    smallest first. With ``local=True`` every base-fact set of a derivation that uses a minimal
    set of rule instances (Def. 5). At most ``limit`` derivations are explored (see
    :func:`kernel_search` for whether that was all of them)."""
    return kernel_search(rules, model, atom, limit, local)[0]


def kernel_search(
    rules: Program, model: Mapping[str, Set] | ModelIndex, atom: Atom, limit: int | None = 10_000, local: bool = False
) -> tuple[list[frozenset[Atom]], bool]:
    """:func:`kernels`, and whether every derivation was explored (False: ``limit`` stopped the
    walk, and the kernels are those of the derivations found first).

    The limit bounds the work, not only the answer: once ``limit`` derivations are found no
    further rule instance is expanded, so a deletion in a dense graph (exponentially many simple
    paths) costs at most ``limit`` derivations.

    >>> from nablog.lang import parse, separate_facts
    >>> from nablog.engines import PythonEngine
    >>> rules, _ = separate_facts(parse("tc(X,Y) :- e(X,Y). tc(X,Y) :- e(X,Z), tc(Z,Y)."))
    >>> model = PythonEngine().evaluate(rules, {"e": layered_dag(3, 4)})
    >>> [(len(found), whole) for found, whole in (kernel_search(rules, model, Atom("tc", ("s", "t")), limit) for limit in (None, 10))]
    [(81, True), (10, False)]
    """
    index = model if isinstance(model, ModelIndex) else ModelIndex(model)
    derived = rules.derived
    # Rule instances expanded, all told: dead ends (paths that never reach a base fact) cost work
    # and yield nothing, so the output's limit alone would not bound the walk.
    steps = [STEPS_PER_DERIVATION * limit if limit is not None else -1]

    def derivations(a: Atom, path: frozenset) -> Iterator[tuple[frozenset, frozenset]]:
        """(base facts, rule instances) of each derivation of ``a`` avoiding ``path``, lazily."""
        if a.pred not in derived:
            if index.contains(a.pred, tuple(a.args)):
                yield frozenset([a]), frozenset()
            return
        inner = path | {a}
        for rule, pos in rule_instances(rules, index, a):
            if steps[0] == 0:
                return
            steps[0] -= 1
            if not any(p in inner for p in pos):
                yield from combined(pos, 0, inner, frozenset(), frozenset([(rule, pos)]))

    def combined(pos: tuple, i: int, path: frozenset, facts: frozenset, instances: frozenset) -> Iterator[tuple[frozenset, frozenset]]:
        if i == len(pos):
            yield facts, instances
            return
        for more_facts, more_instances in derivations(pos[i], path):
            yield from combined(pos, i + 1, path, facts | more_facts, instances | more_instances)

    found = list(itertools.islice(derivations(atom, frozenset()), None if limit is None else limit + 1))
    whole = steps[0] != 0 and (limit is None or len(found) <= limit)
    if limit is not None:
        del found[limit:]
    if local:
        instance_sets = [r for _, r in found]
        chosen = {f for f, r in found if not any(o < r for o in instance_sets)}
    else:
        facts = [f for f, _ in found]
        chosen = {f for f in facts if not any(o < f for o in facts)}
    ordered = sorted(chosen, key=lambda k: (len(k), sorted((a.pred, tuple(constant_sort_key(v) for v in a.args)) for a in k)))
    return ordered, whole


def layered_dag(width: int, layers: int) -> set[tuple[str, str]]:
    """The edges of the worst case above: a source ``s``, ``layers`` layers of ``width`` nodes
    ``n<layer>_<j>``, a sink ``t``, every node joined to every node of the next layer. The atom
    ``tc(s, t)`` of its transitive closure has ``width ** layers`` kernels (one a path), so a
    deletion must cut exponentially many explanations: the case seed 003 (§3.1) gives for
    update tableaux, in polynomial space, over explanations first and their hitting sets then.

    >>> from nablog.lang import parse, separate_facts
    >>> from nablog.engines import PythonEngine
    >>> rules, _ = separate_facts(parse("tc(X,Y) :- e(X,Y). tc(X,Y) :- e(X,Z), tc(Z,Y)."))
    >>> edges = layered_dag(2, 3)
    >>> len(edges), len(kernels(rules, PythonEngine().evaluate(rules, {"e": edges}), Atom("tc", ("s", "t"))))
    (12, 8)
    """
    levels = [["s"]] + [[f"n{i}_{j}" for j in range(width)] for i in range(layers)] + [["t"]]
    return {(x, y) for a, b in zip(levels, levels[1:]) for x in a for y in b}


__all__ = ["kernels", "layered_dag", "rule_instances"]
