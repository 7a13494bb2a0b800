"""Every broken file of the corpus opened in the real window: a dialog in plain words,
the open document untouched.  (The drag-and-drop test lives on the wip-windows branch:
with it, this module crashed in Python's garbage collector about once in six runs.)"""
from __future__ import annotations

import shutil

import pytest

from tests.conftest import DATA, EXAMPLES

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
