"""Regular hyper tableaux over ground clause sets (seed 003, Def. 11): depth-first, branches streamed.

A clause ``A1 ∨ … ∨ Am ← B1 ∧ … ∧ Bn`` is *applicable* to a branch that contains every ``Bi``;
the hyper extension step replaces the branch by the new branches ``(b, A1) … (b, Am)`` and
``(b, ¬B1) … (b, ¬Bn)``; a new branch holding a pair of complementary literals is closed. The
``¬Bi`` branches are closed at once (``Bi`` is on the branch), so they are recorded only when the
tableau is kept for printing. A clause is not applied to a branch that already satisfies its
head: that would repeat a literal on the branch, and only *regular* tableaux are built (no
literal twice on a branch), so a branch of a finite clause set is finished after finitely many
steps. An open branch to which no clause applies is *finished*: its literals are a model of the
clause set.

The tableau is explored depth-first with one branch in memory at a time (space polynomial in the
clause set), and :meth:`HyperTableau.branches` yields each open finished branch as soon as it is
found. A caller may hold back clauses of the set until a finished branch violates them (the
``V ≠ ∅`` loop of seed 003's Algorithms 3–6): ``check`` returns a clause to apply to that
branch, a reason to close it, or ``None`` to accept it.

A tableau built by hand (Baumgartner et al. 1996, Example 1 style):

>>> clauses = [Clause(("a", "b")), Clause(("c", "d"), ("a",)), Clause((), ("c",))]
>>> [branch.literals for branch in HyperTableau(clauses).branches()]
[('a', 'd'), ('b',)]
>>> print(HyperTableau(clauses).tree())
a
  c  [closed: ← c]
  d  [open, finished]
b  [open, finished]

References
----------
P. Baumgartner, U. Furbach, I. Niemelä. Hyper tableaux. JELIA 1996, LNCS 1126, 1–17.
Seed 003, Def. 11.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable, Iterator, Union

Literal = Hashable


@dataclass(frozen=True)
class Clause:
    """``head[0] ∨ … ← body[0] ∧ …`` over ground literals; an empty head is a denial (``← body``).

    ``label`` says where the clause comes from (a rule instance, a constraint, the request).
    """

    head: tuple[Literal, ...]
    body: tuple[Literal, ...] = ()
    label: str = ""

    def __str__(self) -> str:
        if self.label:
            return self.label
        head = " ∨ ".join(map(str, self.head))
        if not self.body:
            return head or "⊥"
        return f"{head} ← {' ∧ '.join(map(str, self.body))}" if head else f"← {' ∧ '.join(map(str, self.body))}"


@dataclass
class Node:
    """A node of a recorded tableau: its literal, children, and how its branch ended."""

    literal: Literal | None
    children: list["Node"] = field(default_factory=list)
    status: str = ""  # "" (inner), "open", "closed"
    note: str = ""


@dataclass(frozen=True)
class Branch:
    """An open finished branch: its literals from the root, and the clauses that extended it."""

    literals: tuple[Literal, ...]
    clauses: tuple[Clause, ...]


Check = Callable[[Branch], Union[Clause, str, None]]


class HyperTableau:
    """The regular hyper tableaux of a ground clause set, explored depth-first.

    Parameters
    ----------
    clauses : iterable of Clause
        The clause set ``D``.
    complement : callable, optional
        The complementary literal of a literal (``None`` when it has none); default: none, so
        branches close only by clauses with empty heads.
    order : callable, optional
        A key ordering a clause's head literals into branches (default: as written).
    """

    def __init__(
        self,
        clauses: Iterable[Clause],
        complement: Callable[[Literal], Literal | None] | None = None,
        order: Callable[[Literal], object] | None = None,
    ):
        self.clauses: list[Clause] = []
        self.by_body: dict[Literal, list[int]] = {}
        self.roots: list[int] = []  # clauses with an empty body: applicable everywhere
        self.sizes: list[int] = []  # distinct body literals per clause
        self.complement = complement or (lambda literal: None)
        self.order = order
        self.cut = False
        self.steps = 0
        for clause in clauses:
            self.add(clause)

    def add(self, clause: Clause) -> int:
        """Add a clause to the set (also while branches are being explored)."""
        k = len(self.clauses)
        self.clauses.append(clause)
        self.sizes.append(len(set(clause.body)))
        if not clause.body:
            self.roots.append(k)
        for literal in set(clause.body):
            self.by_body.setdefault(literal, []).append(k)
        return k

    def branches(
        self,
        check: Check | None = None,
        record: Node | None = None,
        stop: Callable[[], bool] | None = None,
        budget: int | None = None,
        cost: Callable[[Literal], int] | None = None,
    ) -> Iterator[Branch]:
        """Yield every open finished branch, depth-first, left to right.

        ``check`` is asked about each finished branch (see the module docstring); ``record``, a
        root node, receives the whole tree; ``stop`` is polled between steps and ends the
        exploration when it returns True. With a ``budget``, an alternative that would bring the
        ``cost`` of the branch's literals above it is not explored (a branch's cost only grows
        as it is extended, so every open finished branch within the budget is still yielded);
        ``self.cut`` then says whether any was left out. ``self.steps`` counts the literals put
        on branches, over every exploration of this tableau (the work done).
        """
        on_branch: set[Literal] = set()
        path: list[Literal] = []
        used: list[Clause] = []
        count: dict[int, int] = {}
        ready: list[int] = []  # clauses whose body is on the branch, in the order they became so
        nodes: list[Node] = [record] if record is not None else []
        spent = [0]
        late: set[int] = set()  # clauses added by `check` during this exploration
        self.cut = False

        def add(literal: Literal) -> None:
            on_branch.add(literal)
            path.append(literal)
            if cost is not None:
                spent[0] += cost(literal)
            for k in self.by_body.get(literal, ()):
                count[k] = count.get(k, 0) + 1
                if count[k] == self.sizes[k]:
                    ready.append(k)

        def remove(literal: Literal) -> None:
            on_branch.discard(literal)
            path.pop()
            if cost is not None:
                spent[0] -= cost(literal)
            for k in self.by_body.get(literal, ()):
                count[k] -= 1

        def affordable(literal: Literal) -> bool:
            if budget is None or cost is None or spent[0] + cost(literal) <= budget:
                return True
            self.cut = True
            return False

        def select() -> Clause | None:
            """The applicable clause to extend with: not satisfied on the branch; fewest new
            branches first (a clause with one open alternative is a deterministic step)."""
            best, best_width = None, None
            for k in self.roots + ready:
                clause = self.clauses[k]
                if any(h in on_branch for h in clause.head):
                    continue
                width = sum(1 for h in clause.head if self.complement(h) not in on_branch)
                if best_width is None or width < best_width:
                    best, best_width = clause, width
                    if width <= 1:
                        break
            return best

        # A frame: the clause applied, its open alternatives, the next to try, len(ready) before.
        frames: list[tuple[Clause, list[Literal], int, int]] = []

        def descend() -> bool:
            """Extend the current branch until it is finished (True) or closed (False)."""
            while True:
                if stop is not None and stop():
                    return False
                clause = select()
                if clause is None:
                    return True
                alternatives = []
                for h in (sorted(clause.head, key=self.order) if self.order else clause.head):
                    if self.complement(h) in on_branch:
                        if nodes:
                            nodes[-1].children.append(Node(h, status="closed", note=f"{self.complement(h)} is on the branch"))
                    elif h not in alternatives and affordable(h):
                        alternatives.append(h)
                if not alternatives:
                    if nodes:
                        if not clause.head:
                            nodes[-1].status, nodes[-1].note = "closed", f"closed: {clause}"
                        elif not nodes[-1].note:
                            nodes[-1].status = "closed"
                    return False
                frames.append((clause, alternatives, 0, len(ready)))
                used.append(clause)
                push(alternatives[0])

        def push(literal: Literal) -> None:
            self.steps += 1
            add(literal)
            if nodes:
                child = Node(literal)
                nodes[-1].children.append(child)
                nodes.append(child)

        def pop() -> None:
            remove(path[-1])
            if nodes:
                nodes.pop()

        finished = descend()
        while True:
            if finished:
                branch = Branch(tuple(path), tuple(used))
                verdict = check(branch) if check is not None else None
                if isinstance(verdict, Clause):
                    k = self.add(verdict)
                    late.add(k)
                    # Its body literals on this branch count already.
                    count[k] = sum(1 for literal in set(verdict.body) if literal in on_branch)
                    if verdict.body and count[k] == self.sizes[k]:
                        ready.append(k)
                    finished = descend()
                    continue
                if nodes:
                    nodes[-1].status = "closed" if isinstance(verdict, str) else "open"
                    nodes[-1].note = verdict if isinstance(verdict, str) else nodes[-1].note
                if verdict is None:
                    yield branch
            if stop is not None and stop():
                return
            # Backtrack to the deepest frame with an untried alternative.
            while frames:
                clause, alternatives, tried, mark = frames[-1]
                pop()
                dropped = ready[mark:] if late else ()
                del ready[mark:]
                # A clause `check` added below this frame whose body is still on the branch stays
                # applicable (truncating `ready` lost it: the materialized variant then missed
                # realizations, found by the brute-force property test).
                ready.extend(k for k in dict.fromkeys(dropped) if k in late and count[k] == self.sizes[k])
                if tried + 1 < len(alternatives):
                    frames[-1] = (clause, alternatives, tried + 1, mark)
                    push(alternatives[tried + 1])
                    break
                frames.pop()
                used.pop()
            else:
                return
            finished = descend()

    def tree(self, check: Check | None = None, limit: int | None = None) -> str:
        """The tableau as an indented tree: one literal per line, each branch's end marked."""
        root = self.record(check, limit)
        return "\n".join(_lines(root, 0))

    def record(self, check: Check | None = None, limit: int | None = None) -> Node:
        """Build the whole tableau (or its first ``limit`` open branches) as a tree of nodes."""
        root = Node(None)
        seen = [0]

        def stop() -> bool:
            return limit is not None and seen[0] >= limit

        for _ in self.branches(check, record=root, stop=stop):
            seen[0] += 1
        _mark_finished(root)
        return root

    def dot(self, check: Check | None = None, limit: int | None = None) -> str:
        """The tableau in Graphviz's dot language: closed leaves red, open finished ones green."""
        root = self.record(check, limit)
        lines = ["digraph tableau {", '  node [shape=box, fontname="monospace"];', '  n0 [label="", shape=point];']
        counter = [0]

        def visit(node: Node, name: str) -> None:
            for child in node.children:
                counter[0] += 1
                child_name = f"n{counter[0]}"
                color = {"closed": "red", "open": "darkgreen"}.get(child.status, "black")
                label = str(child.literal).replace('"', '\\"') + (f"\\n{child.note}".replace('"', '\\"') if child.note else "")
                lines.append(f'  {child_name} [label="{label}", color={color}];')
                lines.append(f"  {name} -> {child_name};")
                visit(child, child_name)

        visit(root, "n0")
        lines.append("}")
        return "\n".join(lines)


def _mark_finished(node: Node) -> None:
    for child in node.children:
        _mark_finished(child)
    if node.literal is not None and not node.children and not node.status:
        node.status = "open"


def _lines(node: Node, depth: int) -> Iterator[str]:
    for child in node.children:
        mark = ""
        if child.status == "closed":
            mark = f"  [{child.note}]" if child.note.startswith("closed") else f"  [closed: {child.note}]" if child.note else "  [closed]"
        elif child.status == "open":
            mark = "  [open, finished]" + (f" {child.note}" if child.note else "")
        yield "  " * depth + str(child.literal) + mark
        yield from _lines(child, depth + 1)


__all__ = ["Branch", "Clause", "HyperTableau", "Node"]
