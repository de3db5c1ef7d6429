"""The engines room imports in one direction: no circle among its modules (nor in the spark package)."""

import ast
from pathlib import Path

import nablog.engines

ROOM = Path(nablog.engines.__file__).parent


def _module(path: Path) -> str:
    parts = path.relative_to(ROOM.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of the room that ``path`` imports when run, at any depth of its code (lazy
    imports too, not those under ``if TYPE_CHECKING``)."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    tree = ast.parse(path.read_text())
    typing_only = {
        id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and ast.unparse(block.test).endswith("TYPE_CHECKING") for n in ast.walk(block)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue  # imports for annotations only are not run
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            root = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module or "")
            # "from . import x" names a module x; "from .m import f" names m.
            targets = [f"{root}.{a.name}" for a in node.names if f"{root}.{a.name}" in modules] or [root]
        else:
            continue
        out.update(t for t in targets if t in modules and t != name)
    return out


def _graph() -> dict[str, set[str]]:
    paths = sorted(ROOM.rglob("*.py"))
    modules = {_module(p) for p in paths}
    return {_module(p): _imports(p, modules) for p in paths}


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports, if there is one (depth-first search)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_engines_room_has_no_circle_of_imports():
    graph = _graph()
    assert "nablog.engines.spark.fixpoint" in graph and "nablog.engines.keysets" in graph["nablog.engines.runs"]
    assert _circle(graph) is None, " -> ".join(_circle(graph) or [])


def test_the_circle_finder_finds_a_circle():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None
