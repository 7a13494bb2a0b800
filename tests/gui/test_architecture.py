"""How gui/ holds together (as tests/core/test_no_qt.py checks the core): one folder
per panel, each built from a session, settings and a host, never importing another
panel or the window; the session imports no panel; modules stay under 500 lines."""
from __future__ import annotations

import ast
import inspect
import pathlib

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "mxexplorer"
PANELS = {  # folder -> the panel class it defines (and exports)
    "tree": "InternalsPanel",
    "attributes": "AttributePanel",
    "inputs": "ShapeFormPanel",
    "graph": "GraphPane",
    "planner": "MemoryPanel",
    "ops": "OpSummaryPanel",
}
#: files over 500 lines, with the count they may not exceed (they may only shrink)
LONG_FILES: dict[str, int] = {}


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_panels_import_no_other_panel_and_not_the_window() -> None:
    panel_dir = PACKAGE / "gui" / "panels"
    folders = sorted(p.name for p in panel_dir.iterdir() if (p / "__init__.py").exists())
    assert folders == sorted(PANELS), folders            # one folder per panel
    assert sorted(p.name for p in panel_dir.glob("*.py")) == ["__init__.py", "base.py"]
    for name in PANELS:
        for path in sorted((panel_dir / name).glob("*.py")):
            used = _imports(path)
            assert not any(u.startswith("mxexplorer.gui.window") for u in used), path
            others = {u for u in used if u.startswith("mxexplorer.gui.panels.")
                      and u.split(".")[3] in PANELS and u.split(".")[3] != name}
            assert not others, f"{path} imports another panel: {others}"


def test_the_session_knows_no_panel_and_no_window() -> None:
    used = set().union(*(_imports(p) for p in (PACKAGE / "gui" / "session").glob("*.py")))
    assert used and not any(u.startswith(("mxexplorer.gui.panels", "mxexplorer.gui.window"))
                            for u in used), used


@pytest.mark.parametrize("module, cls", sorted(PANELS.items()))
def test_every_panel_is_built_from_session_settings_and_host(module, cls) -> None:
    import importlib

    panel = getattr(importlib.import_module(f"mxexplorer.gui.panels.{module}"), cls)
    params = list(inspect.signature(panel.__init__).parameters)
    assert params[:4] == ["self", "session", "settings", "host"], (cls, params)
    assert params[4:] in ([], ["parent"]), (cls, params)


def test_modules_stay_under_500_lines() -> None:
    over = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        count = len(path.read_text().splitlines())
        rel = path.relative_to(REPO).as_posix()
        if count > 500:
            over[rel] = count
    problems = [f"{rel} has {count} lines: find a seam" if rel not in LONG_FILES else
                f"{rel} grew to {count} lines (at most {LONG_FILES[rel]}): it may only shrink"
                for rel, count in over.items() if count > LONG_FILES.get(rel, 500)]
    assert not problems, "; ".join(problems)   # every file at once, not the first
