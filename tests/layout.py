"""The project's import graph, read from the source (no module is imported): every import
of one of its own modules, at the top of a file, under `if TYPE_CHECKING:` or inside a
function, as `tests/test_layout.py` measures it (issue 12)."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The project's packages (everything `librarian` installs).
PACKAGES = ("app", "widgets", "store", "tooling")


@dataclass(frozen=True)
class Edge:
    """`source` imports `target` (both project modules), inside a function or not."""

    source: str
    target: str
    in_function: bool


def modules(root: Path = REPO) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the project's packages."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The dotted names an import statement asks for (`from a import b`: `a.b`, which is a
    module or else a name in `a`)."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        parts = module.split(".")
        keep = len(parts) - node.level + (1 if path.name == "__init__.py" else 0)
        base = ".".join([*parts[:keep], *([node.module] if node.module else [])])
    for alias in node.names:
        yield f"{base}.{alias.name}"


def _own(name: str, known: dict[str, Path]) -> str | None:
    """The project module `name` is, or lies in (`store.db.Database` -> `store.db`)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _function_imports(tree: ast.AST) -> set[int]:
    """The ids of import statements that sit inside a function (at any depth)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            inside |= {id(s) for s in ast.walk(node) if isinstance(s, ast.Import | ast.ImportFrom)}
    return inside


def edges(root: Path = REPO) -> list[Edge]:
    """Every import of a project module by another, once per statement and target."""
    known = modules(root)
    found: set[Edge] = set()
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        inside = _function_imports(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _imported(module, path, node):
                target = _own(name, known)
                if target and target != module:
                    found.add(Edge(module, target, id(node) in inside))
    return sorted(found, key=lambda e: (e.source, e.target, e.in_function))


def cycles(found: list[Edge]) -> list[frozenset[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan,
    iterative): each is a set of modules that import one another, directly or not."""
    graph: dict[str, set[str]] = defaultdict(set)
    for edge in found:
        graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(frozenset(component))
            elif target not in index:
                index[target] = low[target] = len(index)
                stack.append(target)
                on_stack.add(target)
                work.append((target, iter(sorted(graph[target]))))
            elif target in on_stack:
                low[node] = min(low[node], index[target])
    return sorted(components, key=lambda c: (-len(c), sorted(c)))


def line_counts(root: Path = REPO) -> dict[str, int]:
    """Lines per project file (path relative to the repository)."""
    return {
        str(path.relative_to(root)): len(path.read_text(encoding="utf-8").splitlines())
        for path in modules(root).values()
    }
