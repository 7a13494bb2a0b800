"""The window opens every bundled example, and --screenshot writes a real picture."""
from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtGui import QImage

from mxexplorer.core.document import GraphDocument
from mxexplorer.gui.main_window import MainWindow
from tests.conftest import EXAMPLES, REPO


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*-symbol.json")), ids=lambda p: p.name)
def test_window_lists_the_internals_of_each_example(qtbot, path) -> None:
    window = MainWindow()
    qtbot.addWidget(window)
    doc = GraphDocument.open(str(path))
    window.set_document(doc)
    assert window.tree.topLevelItemCount() == len(doc.internals())
    assert window.tree.topLevelItem(0).text(0) == doc.internal_names()[0]
    assert path.name in window.windowTitle()


def test_screenshot_option_writes_a_png(tmp_path) -> None:
    out = tmp_path / "shot.png"
    proc = subprocess.run([sys.executable, "-m", "mxexplorer",
                           str(EXAMPLES / "resnet18_v1-symbol.json"),
                           "--shape", "data=1,3,224,224", "--screenshot", str(out)],
                          capture_output=True, text=True, cwd=str(REPO), timeout=120)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert image.width() >= 800 and image.height() >= 600


def test_screenshot_of_a_bad_file_exits_2(tmp_path) -> None:
    bad = tmp_path / "bad-symbol.json"
    bad.write_text("{")
    proc = subprocess.run([sys.executable, "-m", "mxexplorer", str(bad),
                           "--screenshot", str(tmp_path / "x.png")],
                          capture_output=True, text=True, cwd=str(REPO), timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("mxexplorer: error:") and "Traceback" not in proc.stderr
    assert not (tmp_path / "x.png").exists()
