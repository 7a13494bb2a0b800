"""Imports point one way (issue 25): core/ in layers runtime < graph < ops < analysis <
planning | render | convert, checked by import-linter; no circle anywhere; no
function-local import of our own modules but the short list that keeps start-up fast."""
from __future__ import annotations

import ast
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "mxexplorer"
CHECKED = PACKAGE
LINT = pathlib.Path(sys.executable).with_name("lint-imports")

#: modules that import our own modules inside functions, and why: each command of the
#: CLI loads what it needs when it runs (``mxexplorer info`` never imports the planner
#: or Qt), and the window's start imports the window after the single-instance check
LAZY = {"mxexplorer.cli": "commands load on demand",
        "mxexplorer.gui.app": "the window after the single-instance hand-off"}


def _import_graph():
    """tools/import_graph.py (what a reader runs), for its circle finder."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("import_graph",
                                                  REPO / "tools" / "import_graph.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _lint(cwd: pathlib.Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(cwd))
    return subprocess.run([str(LINT), "--no-cache", "--no-logo"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_the_layer_contracts_hold() -> None:
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 kept, 0 broken" in done.stdout


@pytest.mark.parametrize("module, line", [
    ("core/graph/opinfo.py", "from mxexplorer.core.planning import memplan"),
    ("core/ops/base.py", "from mxexplorer.core.analysis import stats"),
    ("core/runtime/files.py", "from mxexplorer.core.graph import document"),
    ("core/analysis/stats.py", "from mxexplorer.gui import settings"),
    ("core/render/blocks.py", "from mxexplorer.core.convert import export"),
])
def test_a_wrong_way_import_is_caught(tmp_path, module, line) -> None:
    """The contracts are not empty words: one import the wrong way breaks them."""
    shutil.copytree(PACKAGE, tmp_path / "mxexplorer",
                    ignore=shutil.ignore_patterns("__pycache__", "*.json", "*.params",
                                                  "*.png", "*.svg"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "mxexplorer" / module
    target.write_text(target.read_text() + f"\n{line}  # noqa\n")
    done = _lint(tmp_path)
    assert done.returncode != 0 and "BROKEN" in done.stdout, done.stdout


def _modules(base: pathlib.Path) -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(base.rglob("*.py")):
        name = ".".join(path.relative_to(REPO).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = path
    return out


def _own_imports(path: pathlib.Path) -> list[tuple[str, bool, int]]:
    """(module of ours, inside a function, line) for each import of ``path``."""
    found: list[tuple[str, bool, int]] = []

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom) and (child.module or "").startswith(
                    "mxexplorer"):
                found.extend((f"{child.module}.{a.name}", local, child.lineno)
                             for a in child.names)
            elif isinstance(child, ast.Import):
                found.extend((a.name, local, child.lineno) for a in child.names
                             if a.name.startswith("mxexplorer"))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


def test_no_function_local_import_of_our_own_modules_but_the_listed() -> None:
    wrong = []
    for name, path in _modules(CHECKED).items():
        if any(name == lazy or name.startswith(lazy + ".") for lazy in LAZY):
            continue
        wrong += [f"{name}:{line} imports {target} inside a function"
                  for target, local, line in _own_imports(path) if local]
    assert not wrong, "\n".join(wrong)


def test_no_circle_anywhere() -> None:
    """Strongly connected modules, function-local imports included."""
    modules = _modules(CHECKED)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for target, _, _ in _own_imports(path):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                graph[name].add(target)
    circles = _import_graph().strongly_connected(graph)
    assert not circles, circles
