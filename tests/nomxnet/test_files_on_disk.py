"""Nothing lost without MXNet (issue 37, on Python 3.12+): a save will not go over a
pair another program wrote since it was read, a killed save is not replayed over such
a pair, and the window asks before it saves over one."""
from __future__ import annotations

import os
import shutil

import pytest
from PySide6.QtWidgets import QMessageBox

from mxexplorer.core.graph import edits
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime import files, tidying
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.window.main_window import MainWindow
from tests.conftest import EXAMPLES, killed_save_journal
from tests.gui.conftest import DialogWatch, _drop_edits, wait_for_workers


@pytest.fixture
def dialogs(qapp):
    watch = DialogWatch()
    yield watch
    watch.close()
    assert not watch.unexpected, f"unexpected dialogs: {watch.unexpected}"


def _pair(tmp_path):
    for name in ("mlp-symbol.json", "mlp-0000.params"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    return tmp_path / "mlp-symbol.json", tmp_path / "mlp-0000.params"


def _rewritten(params) -> bytes:
    """Another program's checkpoint: one weight changed, in place."""
    raw = bytearray(params.read_bytes())
    raw[len(raw) // 2] ^= 1
    params.write_bytes(bytes(raw))
    return bytes(raw)


def test_a_save_over_a_checkpoint_written_since_is_refused(tmp_path) -> None:
    symbol, params = _pair(tmp_path)
    doc = GraphDocument.open(str(symbol))
    edits.RenameNodeEdit(doc.find("fc1")[0], "dense1").apply(doc)
    theirs = _rewritten(params)
    before = symbol.read_bytes()
    try:
        doc.save(str(symbol))
    except files.ChangedOnDisk as exc:
        assert [os.path.basename(p) for p in exc.paths] == ["mlp-0000.params"]
    else:
        raise AssertionError("saved over another program's checkpoint")
    assert (symbol.read_bytes(), params.read_bytes()) == (before, theirs)


def test_a_killed_save_is_kept_aside_not_replayed(tmp_path) -> None:
    symbol, params = _pair(tmp_path)
    journal, _ = killed_save_journal(tmp_path, symbol, "ours1")
    theirs = _rewritten(params)
    (done,) = tidying.tidy(journal, [str(tmp_path)])
    assert params.read_bytes() == theirs
    kept = sorted(os.path.basename(k) for k in done.kept)
    assert [k.endswith(("-0000.params", "-symbol.json")) for k in kept] == [True, True]
    copy = GraphDocument.open(str(tmp_path / kept[1]))
    assert copy.find("ours1") and {p.name for p in copy.params_index()} >= {"ours1_weight"}


def test_the_window_asks_before_it_saves_over_them(qtbot, tmp_path, dialogs) -> None:
    symbol, params = _pair(tmp_path)
    window = MainWindow(Settings(str(tmp_path / "settings.ini")))
    qtbot.addWidget(window, before_close_func=_drop_edits)
    window.show()
    assert window.files.open_path(str(symbol))
    window.files.confirmed_overwrite = True
    window.files.watcher.blockSignals(True)
    window.push_edit(edits.RenameNodeEdit(window.document.find("fc2")[0], "dense2"))
    theirs = _rewritten(params)
    dialogs.answer(QMessageBox.StandardButton.Cancel)
    assert not window.files.save()
    (title, text), = dialogs.take()
    assert title == "Changed on disk" and "mlp-0000.params" in text
    assert params.read_bytes() == theirs and window.is_modified()
    wait_for_workers()
