"""Words from a file shown as words.

Qt guesses rich text: a QLabel in its default format, a QMessageBox, every tooltip and a
QFormLayout's row label lay out anything that looks like HTML, and ``<img src=...>``
makes Qt read that file (a node named ``<img src="/dev/zero">`` took the whole
application down on a click).  Labels that show a file's words are plain text
(:func:`plain_label`, :func:`make_plain`); where Qt always guesses (tooltips) or where
our own markup surrounds a file's words, the words are escaped (:func:`tip`,
:func:`esc`).  ``tests/gui/test_plain_text.py`` walks every widget to keep it so.
"""
from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QLabel, QMessageBox, QWidget


def esc(text: object) -> str:
    """``text`` for a place in our own rich text: shown as it is, never as markup."""
    return html.escape(str(text), quote=True)


def tip(text: str) -> str:
    """A tooltip that shows ``text`` as it is.  Qt guesses a tooltip's format; one that
    would guess rich is escaped inside an explicit ``<qt>`` (plain ones stay as they are:
    escaped, they would show their entities)."""
    if not text or not GuiQt.mightBeRichText(text):
        return text
    return "<qt>" + esc(text).replace("\n", "<br/>") + "</qt>"


def make_plain(label: QLabel) -> QLabel:
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def plain_label(text: str = "", parent: QWidget | None = None) -> QLabel:
    """A label that never reads its text as markup."""
    return make_plain(QLabel(text, parent))


def rich_label(html_text: str = "", parent: QWidget | None = None) -> QLabel:
    """A label of our own markup (file words inside it go through :func:`esc`)."""
    label = QLabel(html_text, parent)
    label.setTextFormat(Qt.TextFormat.RichText)
    return label


def message_box(parent: QWidget | None, icon: QMessageBox.Icon, title: str, text: str,
                buttons: QMessageBox.StandardButton = QMessageBox.StandardButton.Ok
                ) -> QMessageBox:
    """A message box whose text is plain (QMessageBox's static functions guess)."""
    box = QMessageBox(icon, title, text, buttons, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box


def warn(parent: QWidget | None, title: str, text: str) -> None:
    message_box(parent, QMessageBox.Icon.Warning, title, text).exec()


def inform(parent: QWidget | None, title: str, text: str) -> None:
    message_box(parent, QMessageBox.Icon.Information, title, text).exec()


def ask(parent: QWidget | None, title: str, text: str,
        buttons: QMessageBox.StandardButton = (QMessageBox.StandardButton.Yes
                                               | QMessageBox.StandardButton.No),
        default: QMessageBox.StandardButton | None = None) -> QMessageBox.StandardButton:
    """A question in plain text; the button pressed."""
    box = message_box(parent, QMessageBox.Icon.Question, title, text, buttons)
    if default is not None:
        box.setDefaultButton(default)
    return QMessageBox.StandardButton(box.exec())
