"""GUI fixtures: isolated settings, a main window on a copy of an example."""
from __future__ import annotations

from typing import Any

import pytest

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.window.main_window import MainWindow
from tests.conftest import WAIT_MS


@pytest.fixture(scope="session", autouse=True)
def gui_process(qapp):
    """The test process shares Python with its workers as the application does."""
    from mxexplorer.gui.app import configure_threads

    configure_threads(qapp)
    yield


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(str(tmp_path / "settings.ini"))


@pytest.fixture
def make_window(qtbot, settings, tmp_path):
    """``make_window(path)`` -> a shown MainWindow on that file, MXNet loaded.

    At teardown the edits are dropped without the unsaved-changes question (a modal
    dialog would wait forever offscreen), and the window's threads must have ended.
    """
    windows: list[MainWindow] = []

    def make(path) -> MainWindow:
        window = MainWindow(settings)
        windows.append(window)
        qtbot.addWidget(window, before_close_func=_drop_edits)
        window.set_document(GraphDocument.open(str(path)))
        window.show()
        qtbot.waitUntil(lambda: window.mxnet_ready, timeout=WAIT_MS)
        return window

    yield make
    wait_for_workers()


def _drop_edits(window: MainWindow) -> None:
    try:
        if window.session is not None:
            window.session.undo_stack.setClean()
            window.session.file.base_modified = False
    except RuntimeError:
        pass                             # the test closed (and so deleted) it already


def wait_for_workers(timeout_ms: int = WAIT_MS) -> None:
    """Every worker thread started by any panel has ended (cancelled ones included)."""
    from mxexplorer.gui import workers

    left = workers.wait_all(timeout_ms)
    if left:
        import faulthandler
        import sys

        faulthandler.dump_traceback(sys.stderr, all_threads=True)
        raise AssertionError(f"worker threads still running: {left!r}")


class DialogWatch:
    """Closes every modal dialog a test opens and remembers what it said.

    Offscreen, a modal dialog nobody answers waits forever (a CI run once hung for
    hours on one).  Every 50 ms the active modal widget is answered: with the next
    button queued by :meth:`answer`, else rejected and recorded as unexpected, which
    fails the test at teardown with the dialog's own text.
    """

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.seen: list[tuple[str, str]] = []
        self.unexpected: list[tuple[str, str]] = []
        #: dialogs that would lay markup in their text out as rich text
        self.rich: list[str] = []
        self._answers: list[Any] = []
        self._timer = QTimer()
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._check)
        self._timer.start()

    def answer(self, *buttons: Any) -> None:
        """Queue the buttons (QMessageBox.StandardButton) for the next dialogs."""
        self._answers.extend(buttons)

    def take(self) -> list[tuple[str, str]]:
        """The (title, text) of the dialogs answered so far; clears the list."""
        seen, self.seen = self.seen, []
        return seen

    def take_closed(self) -> list[tuple[str, str]]:
        """The dialogs closed unanswered so far (expected by the caller); clears them."""
        closed, self.unexpected = self.unexpected, []
        return closed

    def _check(self) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtGui import Qt as GuiQt
        from PySide6.QtWidgets import QApplication, QDialog, QMessageBox

        widget = QApplication.activeModalWidget()
        if widget is None:
            for top in QApplication.topLevelWidgets():
                if isinstance(top, QMessageBox) and top.isVisible():
                    widget = top
                    break
        if not isinstance(widget, QDialog):
            return
        text = widget.text() if isinstance(widget, QMessageBox) else ""
        record = (widget.windowTitle(), text)
        if isinstance(widget, QMessageBox) and "<" in text and (
                widget.textFormat() == Qt.TextFormat.RichText
                or (widget.textFormat() == Qt.TextFormat.AutoText
                    and GuiQt.mightBeRichText(text))):
            self.rich.append(text)
        if self._answers and isinstance(widget, QMessageBox):
            self.seen.append(record)
            button = widget.button(self._answers.pop(0))
            assert button is not None, f"dialog {record} has no such button"
            button.click()
            return
        self.unexpected.append(record)
        widget.reject()

    def close(self) -> None:
        self._timer.stop()


@pytest.fixture(autouse=True)
def dialogs(qapp):
    watch = DialogWatch()
    yield watch
    watch.close()
    assert not watch.unexpected, f"unexpected dialogs: {watch.unexpected}"
    assert not watch.rich, f"dialogs reading a file's words as rich text: {watch.rich}"
