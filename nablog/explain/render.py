"""How an explanation is shown: a text tree, Graphviz DOT, and a self-contained SVG picture.

The SVG is laid out here (no Graphviz needed): a tree drawn top-down, each subtree as wide as its
leaves' boxes, a parent centred over its children. Every node is a ``<g>`` with an ``id``
(``why-n0``, ``why-n1``, … in depth-first order), the classes ``why-node`` and one of ``derived``,
``fact``, ``absent``, ``aggregate``, ``cut``, and ``data-atom`` / ``data-rule`` attributes, so a
page that embeds the picture can find and link its nodes; a ``<title>`` carries the instance.
"""

from __future__ import annotations

from html import escape
from typing import Iterator, Protocol

from ..lang import Atom
from .proofs import Node
from .whynot import RuleFails, why_not_items, why_not_text


class Why(Protocol):
    """What rendering reads of an explanation (:class:`nablog.explain.why.Why`), stated here so
    that this module does not import the one that imports it."""

    atom: Atom
    holds: bool
    proof: Node | None
    alternatives: tuple[Node, ...]
    why_not: tuple[RuleFails, ...]
    depth: int | None


def why_text(why: Why, expand: str = "nablog why FILE") -> str:
    """The explanation as an indented tree (the default output of ``nablog why``)."""
    if not why.holds:
        return why_not_text(why)
    lines = list(_tree(why.proof, expand))
    if any(n.cut for root in (why.proof, *why.alternatives) for n in root.nodes()):
        lines.append(f"(cut at depth {why.depth}: expand a subproof with {expand} 'ATOM', or give a larger --depth)")
    if why.alternatives[1:]:
        lines.append(f"other derivations ({len(why.alternatives) - 1}):")
        for node in why.alternatives[1:]:
            lines.extend(_tree(node, expand))
    return "\n".join(lines)


def node_line(node: Node, expand: str) -> str:
    if node.rule is None:
        return f"{node.atom}  fact"
    line = f"{node.atom}  {node.where}  {node.instance}"
    if node.cut:
        line += f"  … {expand} '{node.atom}'"
    return line


def _tree(root: Node, expand: str) -> Iterator[str]:
    yield node_line(root, expand)
    yield from _below(root, "", expand)


def _below(node: Node, prefix: str, expand: str) -> Iterator[str]:
    items: list = [*node.children, *(("absent", a) for a in node.absent), *(("aggregate", g) for g in node.aggregates)]
    for i, item in enumerate(items):
        last = i == len(items) - 1
        branch, more = ("└─ ", "   ") if last else ("├─ ", "│  ")
        if isinstance(item, Node):
            yield prefix + branch + node_line(item, expand)
            yield from _below(item, prefix + more, expand)
        elif item[0] == "absent":
            yield prefix + branch + f"not {item[1]}  absent"
        else:
            yield prefix + branch + item[1].summary()


# -- Graphviz -------------------------------------------------------------------------------------


def why_dot(why: Why) -> str:
    """The proof (or the why-not) as a Graphviz digraph: boxes for derived atoms, plain for facts,
    dashed for absent atoms; each edge points from a fact to what it helps derive."""
    lines = ["digraph why {", "  rankdir=BT;", '  node [shape=box, fontname="monospace"];']
    if why.holds:
        for number, kind, label, title, parent in _items(why.proof):
            style = {"fact": ", style=rounded", "absent": ", style=dashed", "aggregate": ", shape=note", "cut": ", style=dotted"}.get(kind, "")
            lines.append(f"  n{number} [label={_dot_string(label)}, tooltip={_dot_string(title)}{style}];")
            if parent is not None:
                lines.append(f"  n{number} -> n{parent}{' [style=dashed]' if kind == 'absent' else ''};")
    else:
        for number, label, parent in why_not_items(why):
            lines.append(f"  n{number} [label={_dot_string(label)}];")
            if parent is not None:
                lines.append(f"  n{number} -> n{parent} [style=dashed];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _items(root: Node) -> Iterator[tuple[int, str, str, str, int | None]]:
    """(number, kind, label, title, parent number) for every box of the picture, depth first."""
    counter = iter(range(1 << 62))
    stack: list[tuple[Node, int | None]] = [(root, None)]
    while stack:
        node, parent = stack.pop()
        number = next(counter)
        if node.rule is None:
            yield number, "fact", str(node.atom), f"{node.atom}.", parent
        else:
            yield number, "cut" if node.cut else "derived", f"{node.atom}\n{node.where}", node.instance, parent
        for a in node.absent:
            yield next(counter), "absent", f"not {a}", f"{a} is absent", number
        for g in node.aggregates:
            yield next(counter), "aggregate", f"{g.literal}\n{g.count} element{'' if g.count == 1 else 's'}", g.summary(), number
        stack.extend((c, number) for c in reversed(node.children))


# -- SVG ------------------------------------------------------------------------------------------

CHAR_WIDTH = 7.2  # of the monospace font at 12px
LINE_HEIGHT = 15
GAP_X, GAP_Y, PAD = 16, 46, 8

_STYLE = """
.why-node rect { fill: #fff; stroke: #444; stroke-width: 1.2; }
.why-node.derived rect { fill: #eef4ff; }
.why-node.fact rect { fill: #f2fbf2; rx: 8; }
.why-node.absent rect { fill: #fff6f0; stroke-dasharray: 4 3; }
.why-node.aggregate rect { fill: #fbf7e8; }
.why-node.cut rect { fill: #f4f4f4; stroke-dasharray: 2 2; }
.why-node.missing rect { fill: #fff0f0; stroke: #a33; }
.why-node text { font: 12px monospace; fill: #111; }
.why-node text .where { fill: #666; }
.why-edge { fill: none; stroke: #888; stroke-width: 1.2; }
.why-edge.absent { stroke-dasharray: 4 3; }
"""


def why_svg(why: Why) -> str:
    """The explanation as a self-contained SVG picture (see the module docstring)."""
    if why.holds:
        boxes = [(n, kind, label.split("\n"), title, parent) for n, kind, label, title, parent in _items(why.proof)]
    else:
        boxes = [(n, "missing" if parent is None else "derived", label.split("\n"), label, parent) for n, label, parent in why_not_items(why)]
    return svg_tree(boxes, f"why {'' if why.holds else 'not '}{why.atom}")


def svg_tree(boxes: list[tuple[int, str, list[str], str, int | None]], caption: str) -> str:
    """Lay out and draw a tree of boxes given as (number, kind, lines, title, parent number)."""
    children: dict[int | None, list[int]] = {}
    info = {}
    for number, kind, lines, title, parent in boxes:
        children.setdefault(parent, []).append(number)
        width = max(len(line) for line in lines) * CHAR_WIDTH + 2 * PAD
        info[number] = (kind, lines, title, width, len(lines) * LINE_HEIGHT + 2 * PAD)
    roots = children.get(None, [])
    span: dict[int, float] = {}
    for number in reversed([b[0] for b in boxes]):  # children come after their parent
        kids = children.get(number, [])
        inner = sum(span[k] for k in kids) + GAP_X * (len(kids) - 1) if kids else 0
        span[number] = max(info[number][3], inner)
    depth = {r: 0 for r in roots}
    for number, _, _, _, parent in boxes:
        if parent is not None:
            depth[number] = depth[parent] + 1
    row_height: dict[int, float] = {}
    for number, d in depth.items():
        row_height[d] = max(row_height.get(d, 0), info[number][4])
    row_top = {0: PAD + 0.0}
    for d in range(1, len(row_height)):
        row_top[d] = row_top[d - 1] + row_height[d - 1] + GAP_Y
    centre: dict[int, float] = {}
    stack = []
    left = PAD
    for r in roots:
        stack.append((r, left))
        left += span[r] + GAP_X
    while stack:
        number, x = stack.pop()
        centre[number] = x + span[number] / 2
        kids = children.get(number, [])
        inner = sum(span[k] for k in kids) + GAP_X * (len(kids) - 1) if kids else 0
        cx = x + (span[number] - inner) / 2
        for k in kids:
            stack.append((k, cx))
            cx += span[k] + GAP_X
    width = max((left - GAP_X + PAD), 2 * PAD + 10)
    height = row_top[len(row_height) - 1] + row_height[len(row_height) - 1] + PAD if row_height else 2 * PAD
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" class="why">',
        f"<title>{escape(caption)}</title>",
        f"<style>{_STYLE}</style>",
    ]
    for number, kind, lines, title, parent in boxes:
        if parent is None:
            continue
        _, _, _, _, h = info[parent]
        x1, y1 = centre[parent], row_top[depth[parent]] + h
        x2, y2 = centre[number], row_top[depth[number]]
        mid = (y1 + y2) / 2
        out.append(f'<path class="why-edge {kind}" d="M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} {x2:.1f},{y2:.1f}"/>')
    for number, kind, lines, title, parent in boxes:
        _, _, _, w, h = info[number]
        x, y = centre[number] - w / 2, row_top[depth[number]]
        atom = lines[0][4:] if kind == "absent" else lines[0]
        rule = lines[1] if len(lines) > 1 and kind in ("derived", "cut") else ""
        out.append(
            f'<g id="why-n{number}" class="why-node {kind}" data-atom="{escape(atom)}" data-rule="{escape(rule)}">'
            f"<title>{escape(title)}</title>"
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="3"/>'
        )
        for i, line in enumerate(lines):
            cls = ' class="where"' if i else ""
            out.append(f'<text x="{x + PAD:.1f}" y="{y + PAD + (i + 1) * LINE_HEIGHT - 4:.1f}"><tspan{cls}>{escape(line)}</tspan></text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


__all__ = ["node_line", "svg_tree", "why_dot", "why_svg", "why_text"]
