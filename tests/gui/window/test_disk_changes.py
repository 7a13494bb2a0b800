"""Nothing lost when another program writes the files an editor has open (issue 37):
the window notices, asks before a save goes over them, never writes a symbol beside
a checkpoint it does not match unasked, and says so in a dialog when a checkpoint
cannot be read at save time."""
from __future__ import annotations

import os

import mxnet as mx
import pytest
from PySide6.QtWidgets import QMessageBox

from mxexplorer.core.graph import edits
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.recovery import RecoveryStore
from mxexplorer.gui.window.main_window import MainWindow
from tests.conftest import WAIT_MS, killed_save_journal
from tests.gui.conftest import _drop_edits, wait_for_workers

B = QMessageBox.StandardButton


@pytest.fixture(autouse=True)
def _jobs_end():
    """The reloads and inferences these tests start have ended before the next test
    (one in the same process froze the heap's count while they ran)."""
    yield
    wait_for_workers()


def _open(qtbot, settings, path) -> MainWindow:
    window = MainWindow(settings)
    qtbot.addWidget(window, before_close_func=_drop_edits)
    window.show()
    assert window.files.open_path(str(path))
    return window


def _rename(window: MainWindow, old: str, new: str) -> None:
    node = window.document.find(old)[0]
    window.push_edit(edits.RenameNodeEdit(node, new))


def _training_script_writes(symbol_path, rename_to: str = "hidden1") -> None:
    """What a training script does: a new checkpoint pair written over the old one
    (its first layer renamed, so its names differ from the editor's)."""
    sym, args, aux = mx.model.load_checkpoint(str(symbol_path)[:-len("-symbol.json")], 0)
    text = sym.tojson().replace('"fc1', f'"{rename_to}')
    new = mx.sym.load_json(text)
    args = {k.replace("fc1", rename_to): v for k, v in args.items()}
    mx.model.save_checkpoint(str(symbol_path)[:-len("-symbol.json")], 0, new, args, aux)


def _names_on_disk(symbol_path) -> tuple[set[str], set[str]]:
    sym = mx.sym.load(str(symbol_path))
    params = mx.nd.load(str(symbol_path).replace("-symbol.json", "-0000.params"))
    return set(sym.list_arguments()), {k.split(":", 1)[1] for k in params}


def test_an_unmodified_document_is_read_again_when_the_pair_changes(
        qtbot, settings, mlp_copy, dialogs) -> None:
    window = _open(qtbot, settings, mlp_copy)
    _training_script_writes(mlp_copy)
    qtbot.waitUntil(lambda: window.document is not None
                    and bool(window.document.find("hidden1")), timeout=WAIT_MS)
    assert not window.is_modified()
    assert dialogs.take() == []


def test_a_modified_document_asks_and_keep_mine_then_saves_over(
        qtbot, settings, mlp_copy, dialogs) -> None:
    window = _open(qtbot, settings, mlp_copy)
    _rename(window, "fc2", "dense2")
    dialogs.answer(B.Ignore)                              # "Keep Mine"
    _training_script_writes(mlp_copy)
    qtbot.waitUntil(lambda: len(dialogs.seen) == 1, timeout=WAIT_MS)
    (title, text), = dialogs.take()
    assert title == "Changed on disk"
    assert "mlp-symbol.json" in text and "mlp-0000.params" in text and "Reload" in text
    assert window.document.find("dense2")                 # the edits stay
    # the user said "mine"; but the checkpoint on disk is the script's now and lacks
    # fc1's arrays: Save says the pair would not load, and No writes nothing
    theirs = mlp_copy.read_bytes()
    dialogs.answer(B.Yes, B.No)             # "Overwrite the original?", "Save anyway?"
    assert not window.files.save()
    (t1, _), (t2, text) = dialogs.take()
    assert (t1, t2) == ("Overwrite the original?", "The pair would not load")
    assert "lacks 2 arrays this graph needs: fc1_weight, fc1_bias" in text
    assert mlp_copy.read_bytes() == theirs and window.is_modified()
    # Yes: the user's word; our graph goes beside their arrays, no other question
    dialogs.answer(B.Yes)
    assert window.files.save()
    assert [t for t, _ in dialogs.take()] == ["The pair would not load"]
    args, keys = _names_on_disk(mlp_copy)
    assert "dense2_weight" in args and "fc1_weight" in args and "hidden1_weight" in keys


def test_reload_keeps_the_edits_in_recovery(qtbot, settings, mlp_copy, dialogs) -> None:
    window = _open(qtbot, settings, mlp_copy)
    _rename(window, "fc2", "dense2")
    dialogs.answer(B.Reset)                                # "Reload"
    _training_script_writes(mlp_copy)
    qtbot.waitUntil(lambda: bool(window.document.find("hidden1")), timeout=WAIT_MS)
    assert [t for t, _ in dialogs.take()] == ["Changed on disk"]
    assert not window.is_modified() and not window.document.find("dense2")
    kept = RecoveryStore(settings.recovery_dir()).orphans()
    assert len(kept) == 1 and kept[0].path == str(mlp_copy)
    # File > Restore Unsaved Edits brings them back, in a window of their own
    dialogs.answer(B.Yes)
    window.files.restore_edits()
    (title, _), = dialogs.take()
    assert title == "Restore unsaved edits?"
    from mxexplorer.gui.window.windows import all_windows
    restored = [w for w in all_windows() if w is not window and w.document is not None
                and w.document.find("dense2")]
    assert len(restored) == 1
    qtbot.addWidget(restored[0], before_close_func=_drop_edits)


def test_save_over_a_rewritten_pair_asks_and_cancel_keeps_both(
        qtbot, settings, mlp_copy, dialogs) -> None:
    window = _open(qtbot, settings, mlp_copy)
    window.files.confirmed_overwrite = True
    _rename(window, "fc2", "dense2")
    window.files.watcher.blockSignals(True)              # saved before the watcher tells
    _training_script_writes(mlp_copy)
    theirs = mlp_copy.read_bytes(), (mlp_copy.parent / "mlp-0000.params").read_bytes()
    dialogs.answer(B.Cancel)
    assert not window.files.save()
    (title, text), = dialogs.take()
    assert title == "Changed on disk" and "Another program wrote" in text
    assert "Overwrite them with your edits? Save As keeps both." in text
    assert (mlp_copy.read_bytes(), (mlp_copy.parent / "mlp-0000.params").read_bytes()) \
        == theirs
    assert window.is_modified() and window.document.find("dense2")


def test_params_rewritten_alone_is_not_paired_with_our_symbol_unasked(
        qtbot, settings, mlp_copy, dialogs) -> None:
    window = _open(qtbot, settings, mlp_copy)
    window.files.confirmed_overwrite = True
    window.files.watcher.blockSignals(True)
    _rename(window, "relu1", "act1")                      # an edit of no parameter
    params = mlp_copy.parent / "mlp-0000.params"
    arrays = mx.nd.load(str(params))
    mx.nd.save(str(params), {k.replace("fc1", "other"): v for k, v in arrays.items()})
    theirs = params.read_bytes()
    before = mlp_copy.read_bytes()
    dialogs.answer(B.Cancel)
    assert not window.files.save()
    (title, text), = dialogs.take()
    assert title == "Changed on disk" and "mlp-0000.params" in text
    assert "writes this graph beside the arrays now on disk" in text
    assert mlp_copy.read_bytes() == before and params.read_bytes() == theirs
    assert window.is_modified()


def test_a_truncated_checkpoint_at_save_time_is_a_dialog_and_the_edits_stay(
        qtbot, settings, mlp_copy, dialogs, capfd) -> None:
    window = _open(qtbot, settings, mlp_copy)
    window.files.confirmed_overwrite = True
    window.files.watcher.blockSignals(True)
    _rename(window, "fc1", "dense1")                     # its weights must be copied
    params = mlp_copy.parent / "mlp-0000.params"
    params.write_bytes(params.read_bytes()[:1000])       # truncated by another program
    before = mlp_copy.read_bytes()
    dialogs.answer(B.Yes)                                 # "Overwrite" the changed file
    dialogs.answer(B.Ok)                                  # the failure
    assert not window.files.save()
    (t1, _), (t2, text) = dialogs.take()
    assert (t1, t2) == ("Changed on disk", "Save failed")
    assert "not a readable MXNet .params file" in text and "Your edits are kept" in text
    assert mlp_copy.read_bytes() == before and params.stat().st_size == 1000
    assert window.is_modified() and window.document.find("dense1")
    assert "Traceback" not in capfd.readouterr().err
    assert not [n for n in os.listdir(mlp_copy.parent) if n.endswith(".tmp")]
    # the window goes on with a checkpoint it can no longer read: edits, the status
    # bar's note, a snapshot for the planner's charts (it raised in a Qt slot)
    _rename(window, "fc2", "dense2")
    assert "mlp-0000.params" in window.checkpoint_note.text()
    assert "cannot be read" in window.checkpoint_note.text()
    assert "an array runs past the end" in window.checkpoint_note.toolTip()
    assert window.document.snapshot().param_shapes["dense1_bias"] == (64,)    # as it was read


def test_two_windows_on_one_file_the_second_save_asks(qtbot, settings, mlp_copy,
                                                       dialogs) -> None:
    first = _open(qtbot, settings, mlp_copy)
    second = MainWindow(settings)
    qtbot.addWidget(second, before_close_func=_drop_edits)
    second.show()
    second.set_document(GraphDocument.open(str(mlp_copy)))   # as another process would
    second.files.watch_disk()
    for window in (first, second):
        window.files.confirmed_overwrite = True
    second.files.watcher.blockSignals(True)
    _rename(first, "fc1", "first1")
    _rename(second, "fc2", "second2")
    assert first.files.save()
    dialogs.answer(B.Cancel)
    assert not second.files.save()
    (title, text), = dialogs.take()
    assert title == "Changed on disk" and "mlp-symbol.json" in text
    args, keys = _names_on_disk(mlp_copy)
    assert "first1_weight" in args and "second2_weight" not in args and args - {
        "data", "softmax_label"} <= keys


def test_a_restored_document_is_inferred_again(qtbot, settings, mlp_copy, dialogs,
                                               tmp_path) -> None:
    doc = GraphDocument.open(str(mlp_copy))
    edits.RenameNodeEdit(doc.find("fc1")[0], "dense1").apply(doc)
    RecoveryStore(settings.recovery_dir()).keep(doc)
    settings.set_last_shapes(str(mlp_copy), {"data": (4, 784)})
    window = MainWindow(settings)
    qtbot.addWidget(window, before_close_func=_drop_edits)
    window.show()
    dialogs.answer(B.Yes)
    assert window.files.offer_recovery() == 1
    qtbot.waitUntil(lambda: window.session.analysis.fresh_shapes() is not None,
                    timeout=WAIT_MS)
    assert window.session.analysis.fresh_shapes().output_shapes == ((4, 10),)
    assert window.is_modified() and window.document.find("dense1")


def test_a_save_kept_aside_at_start_is_said_in_a_dialog(qtbot, settings, mlp_copy,
                                                        dialogs, tmp_path) -> None:
    """A save killed after its journal said "committed", then a training script wrote
    the pair: the next start leaves the script's files and says, in a dialog, where
    the interrupted save was kept (not a 15 s status line)."""
    from mxexplorer.core.runtime import tidying
    journal, _ = killed_save_journal(tmp_path, mlp_copy, "ours1")
    _training_script_writes(mlp_copy)
    theirs = mlp_copy.read_bytes()
    window = MainWindow(settings)
    qtbot.addWidget(window, before_close_func=_drop_edits)
    window.show()
    dialogs.answer(B.Ok)
    window.files.report_tidied(tidying.tidy(journal, [str(mlp_copy.parent)]))
    qtbot.waitUntil(lambda: len(dialogs.seen) == 1, timeout=WAIT_MS)
    (title, text), = dialogs.take()
    assert title == "An interrupted save was kept aside"
    kept = sorted(n for n in os.listdir(mlp_copy.parent) if "-recovered-" in n)
    assert len(kept) == 2 and all(name in text for name in kept)
    assert mlp_copy.read_bytes() == theirs


def test_no_to_a_pair_that_would_not_load_is_asked_again_at_the_next_save(
        qtbot, settings, mlp_copy, dialogs) -> None:
    """Overwrite, then No to "the pair would not load": nothing written, and the next
    Save asks again from the start (it went through unasked)."""
    window = _open(qtbot, settings, mlp_copy)
    window.files.confirmed_overwrite = True
    window.files.watcher.blockSignals(True)
    _rename(window, "fc2", "dense2")
    _training_script_writes(mlp_copy)
    theirs = mlp_copy.read_bytes()
    for _ in range(2):
        dialogs.answer(B.Yes, B.No)                # "Overwrite", "Save anyway?": No
        assert not window.files.save()
        assert [t for t, _ in dialogs.take()] == ["Changed on disk",
                                                  "The pair would not load"]
        assert mlp_copy.read_bytes() == theirs and window.is_modified()
