"""The dialog watch itself: an answered question returns its button, an unexpected
warning is closed (so the test ends) and recorded."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox


def test_a_queued_answer_clicks_its_button(dialogs) -> None:
    dialogs.answer(QMessageBox.StandardButton.No)
    answer = QMessageBox.question(None, "Save?", "Save the changes?",
                                  QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
    assert answer == QMessageBox.StandardButton.No
    assert dialogs.take() == [("Save?", "Save the changes?")]


def test_an_unexpected_dialog_is_closed_and_recorded(dialogs) -> None:
    QMessageBox.warning(None, "Oops", "something went wrong")   # returns: the watch closed it
    assert dialogs.take_closed() == [("Oops", "something went wrong")]
