"""Help: every action of a window by name (for the shortcut list and the command
palette), the Keyboard Shortcuts dialog and the About dialog.

Nothing here is written by hand per shortcut: the list comes from the window's action
table (:mod:`.actions`, which also builds its menus) and the actions panels add to
their widgets, so it cannot go stale.
"""
from __future__ import annotations

import importlib.metadata
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

import mxexplorer
from mxexplorer.gui.text import esc, rich_label
from mxexplorer.gui.window.actions import Actions, clean


@dataclass(frozen=True)
class NamedAction:
    """An action with the path a user knows it by ("File > Save As")."""

    path: str
    action: QAction

    @property
    def keys(self) -> str:
        return ", ".join(k.toString(QKeySequence.SequenceFormat.NativeText)
                         for k in self.action.shortcuts())


def _clean(text: str) -> str:
    return clean(text)


def window_actions(window: QWidget) -> list[NamedAction]:
    """Every action of ``window``: its action table (else its menus, submenus
    included) in menu order, then the actions its panels add to their own widgets
    ("Graph > Zoom In")."""
    out: list[NamedAction] = []
    seen: set[int] = set()
    table = getattr(window, "commands", None)
    if isinstance(table, Actions):
        for path, action in table.named():
            seen.add(_key(action))
            out.append(NamedAction(path, action))
        return out + _panel_actions(window, seen)
    # never QAction.menu(): in PySide6 6.9 the wrapper it returns deletes the menu when
    # Python lets go of it (File and Edit lost their actions that way)
    menus = {_key(m.menuAction()): m for m in window.findChildren(QMenu)}

    def walk(menu: QMenu, prefix: str) -> None:
        for action in menu.actions():
            if action.isSeparator():
                continue
            sub = menus.get(_key(action))
            if sub is not None:
                walk(sub, f"{prefix}{_clean(action.text())} > ")
            elif action.text():
                seen.add(_key(action))
                out.append(NamedAction(prefix + _clean(action.text()), action))

    bar = getattr(window, "menuBar", None)
    if bar is not None:
        for top in bar().actions():
            if _key(top) in menus:
                walk(menus[_key(top)], f"{_clean(top.text())} > ")
    return out + _panel_actions(window, seen)


def _panel_actions(window: QWidget, seen: set[int]) -> list[NamedAction]:
    out: list[NamedAction] = []
    for widget in window.findChildren(QWidget):
        area = widget.property("mx_action_area")
        for action in widget.actions():
            if area and action.text() and _key(action) not in seen:
                seen.add(_key(action))
                out.append(NamedAction(f"{area} > {_clean(action.text())}", action))
    return out


def _key(obj: object) -> int:
    """The C++ object's address: Python wrappers come and go, this does not."""
    from shiboken6 import getCppPointer

    return int(getCppPointer(obj)[0])


def shortcut_rows(window: QWidget) -> list[tuple[str, str]]:
    """(keys, what they do) for every action that has a shortcut."""
    return [(named.keys, named.path) for named in window_actions(window) if named.keys]


class ShortcutsDialog(QDialog):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Keyboard Shortcuts")
        rows = shortcut_rows(window)
        self.table = QTableWidget(len(rows), 2)
        self.table.setHorizontalHeaderLabels(["keys", "action"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for r, (keys, path) in enumerate(rows):
            self.table.setItem(r, 0, QTableWidgetItem(keys))
            self.table.setItem(r, 1, QTableWidgetItem(path))
        self.table.resizeColumnToContents(0)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        self.resize(520, 480)


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def dot_version() -> str:
    """graphviz ``dot -V`` (it prints to stderr), or why there is none."""
    dot = shutil.which("dot")
    if dot is None:
        return "not found (apt-get install graphviz)"
    try:
        done = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unusable ({exc})"
    text = (done.stderr or done.stdout).strip()
    return text.replace("dot - graphviz version ", "") or "unknown"


def versions() -> list[tuple[str, str]]:
    """What a bug report needs to name (MXNet's version is read without importing it)."""
    from PySide6 import __version__ as pyside
    from PySide6.QtCore import qVersion

    mxnet = next((f"{_version(d)} ({d})" for d in ("mxnet", "mxnet-cu112", "mxnet-cu117")
                  if _version(d) != "not installed"), "not installed")
    return [("mxexplorer", mxexplorer.__version__), ("MXNet", mxnet),
            ("Qt", f"{qVersion()} (PySide6 {pyside})"), ("graphviz dot", dot_version()),
            ("numpy", _version("numpy")), ("pyqtgraph", _version("pyqtgraph")),
            ("Python", f"{platform.python_version()} on {sys.platform}")]


class AboutDialog(QDialog):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("About mxexplorer")
        rows = "".join(f"<tr><td><b>{esc(name)}</b>&nbsp;&nbsp;</td><td>{esc(value)}</td></tr>"
                       for name, value in versions())
        self.label = rich_label(
            "<h3>mxexplorer</h3><p>See inside MXNet 1.x symbol graphs, fix them, and make "
            f"them fit in GPU memory.</p><table>{rows}</table>")
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.label)
        layout.addWidget(buttons)
