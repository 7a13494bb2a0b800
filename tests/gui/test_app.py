"""The main window, driven through its real widgets."""
from __future__ import annotations

import subprocess
import sys

import mxnet as mx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from mxexplorer.core.graph import edits, tags
from mxexplorer.gui.panels.tree.panel import NODE_ROLE
from tests.conftest import EXAMPLES, REPO, WAIT_MS, WAIT_S


def _rows(model, parent=None):
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    for r in range(model.rowCount(parent)):
        idx = model.index(r, 0, parent)
        yield idx
        yield from _rows(model, idx)


def _shown_nodes(panel) -> list:
    return [i.data(NODE_ROLE) for i in _rows(panel.model) if i.data(NODE_ROLE) is not None]


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*-symbol.json")), ids=lambda p: p.name)
def test_tree_shows_every_internal_grouped_and_flat(make_window, path) -> None:
    window = make_window(path)
    doc = window.document
    tree = window.tree
    tree.grouped_box.setChecked(False)
    names = [i.data() for i in _rows(tree.model)]
    assert names == doc.internal_names()
    tree.grouped_box.setChecked(True)
    groups = [tree.model.index(r, 0).data() for r in range(tree.model.rowCount())]
    assert [g.split(" (")[0] for g in groups] == ["Data inputs", "Parameters", "Auxiliary states",
                                                  "Operators", "Graph outputs"]
    assert path.name in window.windowTitle()


def _filter(tree, qtbot, text: str) -> None:
    """Type a filter and wait for it (it runs once typing pauses)."""
    tree.filter_edit.setText(text)
    qtbot.waitUntil(lambda: tree.model.filter_text == text, timeout=WAIT_MS)


def test_filter_by_substring_and_regex(make_window, qtbot) -> None:
    window = make_window(EXAMPLES / "resnet18_v1-symbol.json")
    tree = window.tree
    tree.grouped_box.setChecked(False)
    _filter(tree, qtbot, "stage4_conv")
    shown = [i.data() for i in _rows(tree.model)]
    assert shown and all("stage4_conv" in n for n in shown)
    _filter(tree, qtbot, "Pooling")  # ops match too
    assert [i.data() for i in _rows(tree.model)] == ["resnetv10_pool0_fwd_output",
                                                     "resnetv10_pool1_fwd_output"]
    tree.regex_box.setChecked(True)
    pattern = r"^resnetv10_stage[12]_conv\d_weight$"
    _filter(tree, qtbot, pattern)
    import re

    expected = [n for n in window.document.internal_names() if re.search(pattern, n)]
    assert [i.data() for i in _rows(tree.model)] == expected and len(expected) == 9
    _filter(tree, qtbot, "stage[")
    assert "invalid regular expression" in tree.filter_edit.toolTip()
    assert list(_rows(tree.model)) == []


def test_selection_is_shared_with_the_inspector(make_window, qtbot) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    doc = window.document
    fc1 = doc.find("fc1")[0]
    idx = window.tree.node_rows(fc1)[0]
    window.tree.view.selectionModel().select(
        idx, window.tree.view.selectionModel().SelectionFlag.ClearAndSelect
        | window.tree.view.selectionModel().SelectionFlag.Rows)
    assert window.selection.nodes == [fc1]
    assert window.inspector.name_edit.text() == "fc1"
    assert "FullyConnected" in window.inspector.title.text()
    keys = [window.inspector.table.item(r, 0).text()
            for r in range(window.inspector.table.rowCount())]
    assert "num_hidden" in keys
    window.selection.set([doc.find("fc2")[0], fc1])
    assert sorted(window.tree.selected_nodes()) == sorted([fc1, doc.find("fc2")[0]])
    assert "2 nodes selected" in window.inspector.title.text()


def _edit_value(window, key: str, value: str) -> None:
    table = window.inspector.table
    row = [table.item(r, 0).text() for r in range(table.rowCount())].index(key)
    table.item(row, 1).setText(value)
    _validated(window)


def _validated(window) -> None:
    """MXNet checks a proposed edit on a worker: wait for its word."""
    from pytestqt.qtbot import QtBot

    QtBot(window).waitUntil(lambda: not window.inspector.validating, timeout=WAIT_MS)


def test_attribute_edit_valid_invalid_and_undo(make_window, qtbot) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    doc = window.document
    fc2 = doc.find("fc2")[0]
    window.selection.set([fc2])
    window.shape_form.rows["data"].setText("4,784")
    window.shape_form.infer_button.click()
    qtbot.waitUntil(lambda: window.shape_result is not None, timeout=WAIT_MS)
    table = window.inspector.table
    row = [table.item(r, 0).text() for r in range(table.rowCount())].index("num_hidden")
    table.item(row, 1).setText("sixteen")
    # MXNet's check runs on a worker: the GUI thread is free, nothing is changed yet
    assert window.inspector.validating and window.inspector.validator.busy
    assert doc.nodes[fc2].attrs["num_hidden"] == "32"
    _validated(window)
    assert doc.nodes[fc2].attrs["num_hidden"] == "32"
    assert "num_hidden" in window.inspector.error_label.text()
    assert window.undo_stack.count() == 0
    _edit_value(window, "num_hidden", "16")
    assert doc.nodes[fc2].attrs["num_hidden"] == "16"
    assert window.isWindowModified()
    assert window.commands['undo'].text().startswith("&Undo Set num_hidden")
    # shapes are inferred again after the edit: the checkpoint's fc2_weight (32, 64)
    # no longer fits 16 hidden units, and the form says so at fc2
    qtbot.waitUntil(lambda: window.shape_result is not None
                    and window.shape_result.revision == doc.revision, timeout=WAIT_MS)
    assert window.shape_result.error.node == "fc2"
    assert "(32, 64)" in window.shape_form.message.text()
    window.undo_stack.undo()
    assert doc.nodes[fc2].attrs["num_hidden"] == "32"
    assert not window.isWindowModified()
    window.undo_stack.redo()
    assert doc.nodes[fc2].attrs["num_hidden"] == "16"
    # add and remove a hidden key
    window.inspector.new_key.setText("__lr_mult__")
    window.inspector.new_value.setText("0.5")
    window.inspector.add_button.click()
    _validated(window)
    assert doc.nodes[fc2].attrs["__lr_mult__"] == "0.5"
    table = window.inspector.table
    row = [table.item(r, 0).text() for r in range(table.rowCount())].index("__lr_mult__")
    table.selectRow(row)
    window.inspector.remove_button.click()
    _validated(window)
    assert "__lr_mult__" not in doc.nodes[fc2].attrs


def test_rename_prefix_mirror_then_save_and_reload(make_window, mlp_copy, tmp_path, qtbot,
                                                   monkeypatch) -> None:
    window = make_window(mlp_copy)
    doc = window.document
    fc1 = doc.find("fc1")[0]
    window.selection.set([fc1])
    window.inspector.name_edit.setText("stem")
    window.inspector.rename_button.click()
    assert "stem_weight" in doc.internal_names()
    window.undo_stack.undo()
    assert "fc1_weight" in doc.internal_names()
    window.undo_stack.redo()
    window.inspector.name_edit.setText("fc2")  # taken: refused, nothing changes
    window.inspector.rename_button.click()
    assert "already used" in window.inspector.error_label.text()
    assert window.undo_stack.count() == 1
    # mirror stage from the inspector checkbox, marked in the tree
    relu = doc.find("relu1")[0]
    window.selection.set([relu])
    window.inspector.mirror_box.click()
    assert tags.is_mirror_stage(doc.nodes[relu].attrs)
    row = window.tree.node_rows(relu)[0]
    assert row.data(Qt.ItemDataRole.BackgroundRole) is not None
    window.push_edit(edits.PrefixAllEdit("sha-"))
    assert all(n.startswith("sha-") for n in doc.internal_names())
    assert window.undo_stack.count() == 3
    out = tmp_path / "out-symbol.json"
    monkeypatch.setattr("PySide6.QtWidgets.QFileDialog.getSaveFileName",
                        lambda *a, **k: (str(out), ""))
    assert window.files.save_as()
    assert window.undo_stack.isClean() and not window.isWindowModified()
    sym, args, aux = mx.model.load_checkpoint(str(tmp_path / "out"), 0)
    assert "sha-stem_weight" in args
    assert sym.get_internals()["sha-relu1_output"].list_attr()["__mirror_stage__"] == "True"
    exe = sym.simple_bind(mx.cpu(), **{"sha-data": (2, 784)}, grad_req="write")
    exe.copy_params_from(args, aux, allow_extra_params=True)
    exe.forward(is_train=True)
    exe.backward()
    assert exe.outputs[0].shape == (2, 10)
    # the original was not touched
    assert "fc1_weight" in mx.sym.load(str(mlp_copy)).list_arguments()


def test_inconsistent_shape_selects_the_culprit(make_window, qtbot) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    window.shape_form.rows["data"].setText("2,100")
    window.shape_form.infer_button.click()
    qtbot.waitUntil(lambda: window.shape_result is not None, timeout=WAIT_MS)
    assert window.selection.nodes == window.document.find("fc1")
    text = window.shape_form.message.text()
    assert "fc1 (FullyConnected)" in text and "(64, 784)" in text


def test_batch_field_updates_every_input(make_window, qtbot) -> None:
    window = make_window(EXAMPLES / "resnet18_v1-symbol.json")
    window.shape_form.rows["data"].setText("1,3,224,224")
    window.shape_form.batch.setValue(32)
    qtbot.waitUntil(lambda: window.shape_form.rows["data"].text() == "32,3,224,224",
                    timeout=WAIT_MS)
    assert window.session.inputs.shapes() == {"data": (32, 3, 224, 224)}


def test_screenshot_option_writes_a_png(tmp_path) -> None:
    out = tmp_path / "shot.png"
    proc = subprocess.run([sys.executable, "-m", "mxexplorer",
                           str(EXAMPLES / "resnet18_v1-symbol.json"),
                           "--shape", "data=1,3,224,224", "--screenshot", str(out)],
                          capture_output=True, text=True, cwd=str(REPO), timeout=WAIT_S)
    assert proc.returncode == 0, proc.stderr
    assert "Fatal" not in proc.stderr
    image = QImage(str(out))
    # exactly the size asked for: the planner's controls once pushed it to 1400x865
    assert (image.width(), image.height()) == (1400, 860)


def test_screenshot_of_a_bad_file_exits_2(tmp_path) -> None:
    bad = tmp_path / "bad-symbol.json"
    bad.write_text("{")
    proc = subprocess.run([sys.executable, "-m", "mxexplorer", str(bad),
                           "--screenshot", str(tmp_path / "x.png")],
                          capture_output=True, text=True, cwd=str(REPO), timeout=WAIT_S)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("mxexplorer: error:") and "Traceback" not in proc.stderr
    assert not (tmp_path / "x.png").exists()


def test_typing_into_one_attribute_merges_into_one_undo_step(make_window) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    doc = window.document
    relu = doc.find("relu1")[0]
    window.push_edit(edits.set_attr((relu,), "act_type", "tanh"))
    window.push_edit(edits.set_attr((relu,), "act_type", "sigmoid"))
    assert window.undo_stack.count() == 1
    window.undo_stack.undo()
    assert doc.nodes[relu].attrs["act_type"] == "relu"


def test_cut_here_and_open_another_file(make_window, tmp_path) -> None:
    window = make_window(EXAMPLES / "resnet18_v1-symbol.json")
    doc = window.document
    entry = doc.internals()[doc.internal_names().index("resnetv10_pool1_fwd_output")]
    out = tmp_path / "features-symbol.json"
    assert window.tree.export_cut(entry.node, entry.index, str(out)) == str(out)
    assert mx.sym.load(str(out)).list_outputs() == ["resnetv10_pool1_fwd_output"]
    assert window.files.open_path(str(out))
    assert window.document.internal_names()[-1] == "resnetv10_pool1_fwd_output"
    assert "features-symbol.json" in window.windowTitle()
    assert window.settings.recent_files()[0] == str(out.resolve())


def test_dock_layout_is_remembered(qtbot, settings) -> None:
    from mxexplorer.gui.window.main_window import MainWindow

    first = MainWindow(settings)
    qtbot.addWidget(first)
    first.show()
    qtbot.waitUntil(lambda: first.mxnet_ready and not first.files.opening, timeout=WAIT_MS)
    first.memory_dock.hide()
    first.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)   # pytest-qt closes it
    first.close()
    assert settings.window_state() is not None
    second = MainWindow(settings)
    qtbot.addWidget(second)
    second.restore_layout()
    second.show()
    qtbot.waitUntil(lambda: second.mxnet_ready and not second.files.opening, timeout=WAIT_MS)
    assert second.memory_dock.isHidden() and not second.tree_dock.isHidden()


def test_status_totals_say_when_they_are_partial(make_window, qtbot) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    window.infer_blocking({"data": (4, 100)})
    assert "partial" in window.totals.text()
    window.infer_blocking({"data": (4, 784)})
    assert "partial" not in window.totals.text() and "params 52.78 K" in window.totals.text()


def test_opening_with_shapes_brings_them_with_the_document(make_window, qtbot) -> None:
    """Shapes known as a file opens (given, or remembered) are inferred by the worker
    that reads it: the document arrives with its analysis, and no second inference runs
    (a 261,001-node graph came up with shapes 1.5 s sooner)."""
    window = make_window(EXAMPLES / "mlp-symbol.json")
    target = EXAMPLES / "resnet18_v1-symbol.json"
    at_arrival = []
    # connected after the window's own slot: runs as the document has just been shown
    window.files.job.finished.connect(lambda _: at_arrival.append(window.shape_result))
    window.files.open_file(str(target), {"data": (2, 3, 224, 224)})
    qtbot.waitUntil(lambda: bool(at_arrival), timeout=WAIT_MS)
    analysis = window.session.analysis
    assert not analysis.job.busy                      # nothing left to infer
    result, = at_arrival
    assert result is not None and result.complete and analysis.stale() is None
    fc = window.document.find("resnetv10_dense0_fwd")[0]
    assert result.by_entry[(fc, 0)] == (2, 1000)
    window.session.inputs.set({"data": (4, 3, 224, 224)})  # the form still infers
    qtbot.waitUntil(lambda: window.shape_result.by_entry[(fc, 0)] == (4, 1000),
                    timeout=WAIT_MS)


def test_open_file_reads_in_the_background_and_reports_a_bad_file(make_window, qtbot,
                                                                   tmp_path, dialogs) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    target = EXAMPLES / "resnet18_v1-symbol.json"
    window.files.open_file(str(target))
    assert window.files.opening                       # returned at once; the worker reads
    qtbot.waitUntil(lambda: not window.files.opening and window.document.path == str(target),
                    timeout=WAIT_MS)
    assert window.tree.model.rowCount() == 5    # the groups of the new document
    bad = tmp_path / "broken-symbol.json"
    bad.write_text('{"nodes": [')
    window.files.open_file(str(bad))
    qtbot.waitUntil(lambda: bool(dialogs.unexpected), timeout=WAIT_MS)
    (title, text), = dialogs.take_closed()
    assert title == "Cannot open the file" and "truncated" in text
    assert window.document.path == str(target)  # the open document is untouched
