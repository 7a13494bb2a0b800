"""The process's main windows: which are open (the active one first), Quit for all of
them, and where a first window goes on its screen.  Imports no window module: the
window, its file handling and the app ask here."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QLabel

from mxexplorer.gui.theme import set_role


def register(window: Any) -> None:
    """A new main window (kept here: a window opened for a second file has no other
    Python owner)."""
    _OPEN.append(window)


def unregister(window: Any) -> None:
    if window in _OPEN:
        _OPEN.remove(window)


#: every main window not yet closed: a window opened for a second file has no other
#: Python owner, and a wrapper collected takes its window with it
_OPEN: list[Any] = []


def all_windows() -> list[Any]:
    """The open main windows of this process, the active one first."""
    from PySide6.QtWidgets import QApplication
    from shiboken6 import isValid

    _OPEN[:] = [w for w in _OPEN if isValid(w)]     # deleted without a close: gone
    windows = [w for w in _OPEN if w.isVisible()]
    active = QApplication.activeWindow()
    windows.sort(key=lambda w: w is not active)
    return windows


def quit_all() -> bool:
    """Close every window, asking once for each modified document; stops at the first
    Cancel (True when all closed).  Then every other window of the process (Compare
    windows, the command palette, help): one left open kept the process running."""
    from PySide6.QtWidgets import QApplication

    for window in all_windows():
        if not window.close():
            return False
    for top in QApplication.topLevelWidgets():
        if top.isWindow() and top.isVisible():
            top.close()
    return True


#: what the internals dock needs for its name, op and shape columns (and a scroll bar)
TREE_WIDTH = 430
#: the attribute editor's share of a first window's width, and its least width
INSPECTOR_SHARE, INSPECTOR_WIDTH = 0.22, 280
#: screens up to this size get a first window that fills them (a laptop's 1280x800);
#: larger ones a window of 85 % of each side, centred
FILL_SCREEN_UP_TO = (1440, 900)


def first_geometry(available: QRect) -> tuple[QRect, bool]:
    """Where a first window (no saved layout) goes on a screen's available area, and
    whether it is maximised."""
    fill = available.width() <= FILL_SCREEN_UP_TO[0] or \
        available.height() <= FILL_SCREEN_UP_TO[1]
    width, height = (available.width(), available.height()) if fill else \
        (int(available.width() * 0.85), int(available.height() * 0.85))
    rect = QRect(0, 0, width, height)
    rect.moveCenter(available.center())
    return rect, fill


def standard_keys(standard: QKeySequence.StandardKey, fallback: str) -> list[QKeySequence]:
    """The platform's keys for a standard action, or ``fallback`` where it has none
    (Quit has no binding on some platforms)."""
    return QKeySequence.keyBindings(standard) or [QKeySequence(fallback)]


def placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    set_role(label, "muted")
    label.setWordWrap(True)
    return label
