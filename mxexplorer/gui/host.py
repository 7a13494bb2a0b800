"""DialogHost: how a panel asks the user something without knowing the main window.

Panels get a host in their constructor (with the session and the settings) and
use it for error dialogs, file choosers and status lines.  :class:`WidgetHost` is
the real one; the main window makes one over itself and its status bar.
"""
from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QStatusBar, QWidget

from mxexplorer.gui.text import ask, message_box, warn


class DialogHost(Protocol):
    def show_error(self, title: str, message: str) -> None: ...

    def ask_save_path(self, title: str, start: str, filters: str) -> str: ...

    def show_status(self, text: str, ms: int = 0) -> None: ...

    def ask_yes_no(self, title: str, question: str) -> bool: ...

    def ask_choice(self, title: str, question: str, yes: str, no: str) -> bool | None: ...


class WidgetHost:
    """Dialogs parented to ``widget``; status lines in ``status_bar`` when given."""

    def __init__(self, widget: QWidget, status_bar: QStatusBar | None = None) -> None:
        self.widget = widget
        self.status_bar = status_bar

    def show_error(self, title: str, message: str) -> None:
        warn(self.widget, title, message)

    def ask_save_path(self, title: str, start: str, filters: str) -> str:
        path, _ = QFileDialog.getSaveFileName(self.widget, title, start, filters)
        return str(path or "")

    def show_status(self, text: str, ms: int = 0) -> None:
        """``text`` on the status bar, elided with "…" where it would run into the
        permanent labels on the right (Qt clips it mid-word there)."""
        bar = self.status_bar
        if bar is None:
            return
        lefts = [w.geometry().left() for w in bar.findChildren(
            QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
            if w.isVisible() and w.geometry().left() > 0]
        room = min(lefts, default=bar.width()) - 16
        if room > 40:
            text = bar.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, room)
        bar.showMessage(text, ms)

    def ask_yes_no(self, title: str, question: str) -> bool:
        return ask(self.widget, title, question) == QMessageBox.StandardButton.Yes

    def ask_choice(self, title: str, question: str, yes: str, no: str) -> bool | None:
        """Two ways on, or neither: True for ``yes``, False for ``no``, None for Cancel
        (the buttons are the standard Yes, No and Cancel, with these words)."""
        buttons = (QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
                   | QMessageBox.StandardButton.Cancel)
        box = message_box(self.widget, QMessageBox.Icon.Question, title, question, buttons)
        for button, words in ((QMessageBox.StandardButton.Yes, yes),
                              (QMessageBox.StandardButton.No, no)):
            box.button(button).setText(words)
        box.setDefaultButton(QMessageBox.StandardButton.Yes)
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Cancel:
            return None
        return answer == QMessageBox.StandardButton.Yes
