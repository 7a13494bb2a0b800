"""Opening files in the real window: drag-and-drop (a checkpoint finds its symbol
file; the file shown already only comes forward), and every broken file of the corpus
(a dialog in plain words, the open document untouched)."""
from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from tests.conftest import DATA, EXAMPLES


def _drop(window, paths) -> bool:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(window.rect().center(), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    if not enter.isAccepted():
        return False
    drop = QDropEvent(QPointF(window.rect().center()), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    return True


def test_drop_a_checkpoint_then_the_same_file_again(make_window, mlp_copy, qtbot,
                                                    tmp_path) -> None:
    window = make_window(EXAMPLES / "resnet18_v1-symbol.json")
    (tmp_path / "notes.txt").write_text("hello")
    assert not _drop(window, [tmp_path / "notes.txt"])          # not ours: refused
    params = mlp_copy.parent / "mlp-0000.params"
    assert _drop(window, [params])                              # replaces the graph
    qtbot.waitUntil(lambda: not window.opening and window.document.path == str(mlp_copy),
                    timeout=20000)
    assert window.document.params_path == str(params)           # found its symbol file
    document = window.document
    assert _drop(window, [mlp_copy])                            # shown already:
    assert not window.opening and window.document is document   # nothing reopened


BROKEN = sorted((DATA / "broken").iterdir()) + [DATA / "unknown_op-symbol.json"]


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.name)
def test_every_broken_file_says_what_is_wrong(make_window, qtbot, dialogs, path,
                                              tmp_path) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    before = window.document
    window.open_file(str(path))
    qtbot.waitUntil(lambda: not window.opening, timeout=20000)
    if path.name == "unknown_op-symbol.json":
        # opens: the graph shows and the status bar names the op
        assert window.document is not before and "unknown" in \
            window.statusBar().currentMessage().lower()
        return
    qtbot.waitUntil(lambda: bool(dialogs.unexpected), timeout=5000)
    (title, text), = dialogs.take_closed()
    assert title == "Cannot open the file"
    assert "\n" not in text and "Traceback" not in text and len(text) < 300
    assert window.document is before                           # nothing lost
    assert window.isVisible()


def test_a_params_file_without_its_symbol_file(make_window, qtbot, dialogs,
                                               tmp_path) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    lone = tmp_path / "lonely-0000.params"
    shutil.copy(EXAMPLES / "mlp-0000.params", lone)
    window.open_file(str(lone))
    qtbot.waitUntil(lambda: bool(dialogs.unexpected), timeout=20000)
    (title, text), = dialogs.take_closed()
    assert "without its -symbol.json" in text
