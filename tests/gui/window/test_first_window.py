"""The first window a new user gets fits the screen (issue 23): at 1280x800 and at
1920x1080 the tree shows name, op and shape, and the planner shows Plan, Apply and a
plan's words, none of them scrolled or cut."""
from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QImage

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.gui.window.main_window import MainWindow
from tests.conftest import EXAMPLES, REPO, WAIT_MS, WAIT_S
from tests.gui.conftest import _drop_edits

R18 = EXAMPLES / "resnet18_v1-symbol.json"
SCREENS = [(1280, 800), (1920, 1080)]


def _whole(widget) -> bool:
    """Shown, and not clipped by any scroll area, splitter or dock around it."""
    return widget.isVisible() and widget.visibleRegion().boundingRect() == widget.rect()


@pytest.mark.parametrize("screen", SCREENS, ids=[f"{w}x{h}" for w, h in SCREENS])
def test_the_first_window_fits_the_screen(qtbot, settings, screen) -> None:
    window = MainWindow(settings)
    qtbot.addWidget(window, before_close_func=_drop_edits)
    window.place_first(QRect(0, 0, *screen), maximise=False)
    window.set_document(GraphDocument.open(str(R18)))
    window.show()
    qtbot.waitUntil(lambda: window.mxnet_ready and window.memory is not None
                    and window.memory.bench_view is not None, timeout=WAIT_MS)
    assert (window.width(), window.height()) == (screen if screen[0] <= 1440 else
                                                 (int(screen[0] * 0.85),
                                                  int(screen[1] * 0.85)))
    # the tree: name, op and shape inside the view, unscrolled
    view = window.tree.view
    header, room = view.header(), view.viewport().width()
    for col, title in enumerate(("name", "op", "shape")):
        assert header.model().headerData(col, header.orientation()) == title
        assert 0 <= header.sectionViewportPosition(col) and \
            header.sectionViewportPosition(col) + header.sectionSize(col) <= room, \
            (title, header.sectionViewportPosition(col), header.sectionSize(col), room)
    # the planner: a plan's words beside Plan and Apply, all of them whole
    panel = window.memory
    window.shape_form.set_shapes({"data": (1, 3, 224, 224)})
    panel.search.setCurrentIndex(panel.search.findData("fast"))
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.start_button.click()
    assert panel.result is not None and panel.result.best is not None
    assert "Training activations need" in panel.status.text()
    for button in (panel.start_button, panel.apply_button, panel.export_button,
                   panel.bench_button):
        assert _whole(button), (button.text(), button.visibleRegion().boundingRect(),
                                button.rect())
    words = panel.status
    assert words.height() >= words.heightForWidth(words.width())
    assert panel.words.verticalScrollBar().maximum() == 0, "the words scroll"
    assert _whole(words), (words.visibleRegion().boundingRect(), words.rect())


@pytest.mark.parametrize("screen", SCREENS, ids=[f"{w}x{h}" for w, h in SCREENS])
def test_the_screenshot_pictures_the_first_window_of_a_screen(tmp_path, screen) -> None:
    out = tmp_path / "first.png"
    size = f"{screen[0]}x{screen[1]}"
    done = subprocess.run([sys.executable, "-m", "mxexplorer", str(R18), "--shape",
                           "data=1,3,224,224", "--screenshot", str(out), "--screen", size],
                          capture_output=True, text=True, cwd=str(REPO), timeout=WAIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    image = QImage(str(out))
    expected = screen if screen[0] <= 1440 else (int(screen[0] * 0.85), int(screen[1] * 0.85))
    assert (image.width(), image.height()) == expected
