"""GUI fixtures: isolated settings, a main window on a copy of an example."""
from __future__ import annotations

import shutil

import pytest

from mxexplorer.core.document import GraphDocument
from mxexplorer.gui.main_window import MainWindow
from mxexplorer.gui.settings import Settings
from tests.conftest import EXAMPLES


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
        qtbot.addWidget(window, before_close_func=lambda w: w.undo_stack.setClean())
        window.set_document(GraphDocument.open(str(path)))
        window.show()
        qtbot.waitUntil(lambda: window.mxnet_ready, timeout=30000)
        return window

    yield make
    for window in windows:
        for thread, _ in list(window._jobs):
            assert thread.wait(10000), "a worker thread is still running"
    wait_for_workers()


def wait_for_workers(timeout_ms: int = 20000) -> None:
    """Every worker thread started by any panel has ended (cancelled ones included)."""
    from mxexplorer.gui import workers

    registry = workers._registry
    if registry is not None:
        for thread, _ in list(registry.running.values()):
            assert thread.wait(timeout_ms), "a worker thread is still running"


@pytest.fixture
def mlp_copy(tmp_path):
    for name in ("mlp-symbol.json", "mlp-0000.params"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path / "mlp-symbol.json"
