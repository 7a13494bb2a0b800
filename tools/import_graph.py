"""The shape of our imports: modules, arrows, circles and function-local imports.

Run: ``python tools/import_graph.py [PACKAGE]`` (default ``mxexplorer.core``).  Prints
the package's modules by folder with their line counts, how many import arrows join
them and over how many levels, every circle (a strongly connected set of modules,
function-local imports included), and every function-local import of one of our own
modules.  The layer contracts themselves are checked by ``lint-imports`` (see
``[tool.importlinter]`` in pyproject.toml); this prints what a reader wants to see.
"""
from __future__ import annotations

import ast
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def modules(package: str) -> dict[str, pathlib.Path]:
    base = ROOT.joinpath(*package.split("."))
    out = {}
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts)
        out[name.removesuffix(".__init__")] = path
    return out


def imports(path: pathlib.Path, name: str, known: set[str]) -> list[tuple[str, bool]]:
    """(imported module of ours, imported inside a function) for every import."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                ast.Lambda))
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue                     # for the type checker only
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append((alias.name, local))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - child.level + 1] +
                                    ([base] if base else []))
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    found.append((full if full in known else base, local))
            visit(child, inner)

    visit(tree, False)
    return [(m, local) for m, local in found if m in known and m != name]


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def levels(graph: dict[str, set[str]]) -> int:
    depth: dict[str, int] = {}

    def d(v: str, seen: frozenset[str]) -> int:
        if v in depth:
            return depth[v]
        below = [d(w, seen | {v}) for w in graph[v] if w not in seen]
        depth[v] = 1 + max(below, default=0)
        return depth[v]

    return max((d(v, frozenset()) for v in graph), default=0)


def main(argv: list[str]) -> int:
    package = argv[0] if argv else "mxexplorer.core"
    found = modules(package)
    known = set(modules("mxexplorer"))
    graph: dict[str, set[str]] = {m: set() for m in found}
    local: list[tuple[str, str]] = []
    for name, path in found.items():
        for target, inside in imports(path, name, known):
            if target in found:
                graph[name].add(target)
            if inside:
                local.append((name, target))
    folders: dict[str, list[str]] = {}
    for path in found.values():
        folders.setdefault(str(path.parent.relative_to(ROOT)), []).append(
            f"{path.stem} {len(path.read_text().splitlines())}")
    lines = sum(len(p.read_text().splitlines()) for p in found.values())
    print(f"{package}: {len(found)} modules, {lines:,} lines")
    for folder, names in sorted(folders.items()):
        print(f"  {folder}/: " + ", ".join(names))
    arrows = sum(len(v) for v in graph.values())
    print(f"{arrows} import arrows over {levels(graph)} levels")
    circles = strongly_connected(graph)
    print(f"{len(circles)} circles" + "".join(f"\n  {' <-> '.join(c)}" for c in circles))
    print(f"{len(local)} function-local imports of our own modules"
          + "".join(f"\n  {a} -> {b}" for a, b in sorted(set(local))))
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
