"""Imports point one way: no circle of files anywhere in nablog, and no room imports a room above it.

A file counts every import it makes — at module level, inside functions, and those for
annotations only (under ``if TYPE_CHECKING``): a circle through an annotation still ties two
files together, so that neither can be read, moved or tested without the other. A module that
needs only the shape of an object from above states it as a ``typing.Protocol`` of its own.
"""

import ast
from pathlib import Path

import nablog

PACKAGE = Path(nablog.__file__).parent

ROOMS = {
    "lang": 0,
    "transforms": 1,
    "io": 1,
    "sql": 1,  # SQL databases as stores (Database.connect): over the language only
    "engines": 2,
    "tableaux": 3,
    "solver": 4,
    "repair": 5,
    "views": 5,
    "explain": 5,  # why an atom holds or not (proofs), over the solver
    "apart": 6,  # work on a database at one version in a child process (Database.apart)
    "state": 6,  # the facts, the caches over them and the one write path (Database delegates)
    "database": 6,
    "interactive": 6,
    "client": 6,
    "server": 7,
    "nablog": 7,  # the package's __init__: the public API, over the database
    "examples": 8,
    "cli": 9,
}
"""Each room's level (docs/design.md, Rooms): a module may import its own room and rooms of a lower
level only. A room not listed here (a new one) is held to the no-circle rule alone until it is."""


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    return _imports_of(_module(path), path.name == "__init__.py", path.read_text(), modules)


def _imports_of(name: str, is_package: bool, source: str, modules: set[str]) -> set[str]:
    """The modules of nablog that module ``name`` imports, at any depth of its code (lazy imports
    and imports for annotations too)."""
    package = name if is_package else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(source)):
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


def _graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    paths = sorted(root.rglob("*.py"))
    modules = {_module(p) for p in PACKAGE.rglob("*.py")}
    return {_module(p): _imports(p, modules) for p in paths}


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports, if there is one (depth-first search)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
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


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_no_circle_of_files_anywhere_in_nablog():
    graph = _graph()
    assert "nablog.engines.spark.fixpoint" in graph and "nablog.engines.keysets" in graph["nablog.engines.runs"]
    # annotation-only imports count: the engines' compute states the evaluator it needs as a Protocol
    assert "nablog.engines.evaluator" not in graph["nablog.engines.compute"]
    assert _circle(graph) is None, " -> ".join(_circle(graph) or [])


def test_no_room_imports_a_room_above_it():
    graph = _graph()
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if _room(a) in ROOMS and _room(b) in ROOMS and ROOMS[_room(b)] > ROOMS[_room(a)]
    )
    assert upward == []


def test_the_circle_finder_finds_a_circle():
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None


def test_the_import_reader_sees_lazy_and_annotation_only_imports():
    # postulates once imported Database under TYPE_CHECKING and in a function: both count
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..database import Database\ndef f():\n    from ..engines import lookup\n"
    modules = {"nablog.database", "nablog.engines", "nablog.engines.lookup", "nablog.solver.postulates"}
    assert _imports_of("nablog.solver.postulates", False, source, modules) == {"nablog.database", "nablog.engines.lookup"}
