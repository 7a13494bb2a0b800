"""The attribute editor keeps the loader's limits and asks before a change that
multiplies the graph (issue 24)."""
from __future__ import annotations

import json

from PySide6.QtWidgets import QMessageBox

from tests.conftest import EXAMPLES, WAIT_MS
from tests.gui.test_app import _edit_value


def test_a_nul_or_a_count_past_the_loaders_limit_is_refused(make_window, tmp_path) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    doc = window.document
    fc1 = doc.find("fc1")[0]
    window.selection.set([fc1])
    before = dict(doc.nodes[fc1].attrs)
    _edit_value(window, "num_hidden", "12\x0034")
    assert "NUL" in window.inspector.error_label.text()
    assert doc.nodes[fc1].attrs == before and not window.is_modified()
    window.inspector.name_edit.setText("fc\x001")
    window.inspector.rename_button.click()
    assert "NUL" in window.inspector.error_label.text() and doc.nodes[fc1].name == "fc1"


def _split_file(tmp_path):
    path = tmp_path / "split-symbol.json"
    path.write_text(json.dumps({
        "nodes": [{"op": "null", "name": "data", "inputs": []},
                  {"op": "SliceChannel", "name": "split", "attrs": {"num_outputs": "2"},
                   "inputs": [[0, 0, 0]]}],
        "arg_nodes": [0], "heads": [[1, 0, 0], [1, 1, 0]]}))
    return path


def test_a_change_that_multiplies_the_graph_asks_first(make_window, tmp_path,
                                                       dialogs) -> None:
    window = make_window(_split_file(tmp_path))
    doc = window.document
    split = doc.find("split")[0]
    window.selection.set([split])
    _edit_value(window, "num_outputs", "5000000")           # past the loader's limit
    assert "at most 100,000" in window.inspector.error_label.text()
    assert doc.output_count(split) == 2
    dialogs.answer(QMessageBox.StandardButton.No)
    _edit_value(window, "num_outputs", "60000")
    asked = dialogs.take()
    assert len(asked) == 1 and "59,998 more outputs" in asked[0][1]
    assert doc.output_count(split) == 2                    # said no: unchanged
    dialogs.answer(QMessageBox.StandardButton.Yes)
    _edit_value(window, "num_outputs", "12000")
    assert len(dialogs.take()) == 1 and doc.output_count(split) == 12000


def test_shapes_past_mxnets_limit_are_one_line_in_the_form(make_window, qtbot,
                                                           dialogs) -> None:
    """--shape data=2147483648 was an internal error; in the window the batch box
    raised OverflowError (a traceback)."""
    window = make_window(EXAMPLES / "mlp-symbol.json")
    form = window.shape_form
    form.rows["data"].setText("2147483648,784")
    form.rows["data"].editingFinished.emit()
    assert "out of range" in form.message.text()
    window.session.inputs.set({"data": (2**40, 784)}, infer=False)   # a file's hint
    assert form.batch.value() == form.batch.maximum()
    form.rows["data"].setText("3000000,784")
    form.rows["data"].editingFinished.emit()
    qtbot.waitUntil(lambda: "2^31" in form.message.text() or
                    "2^31" in window.statusBar().currentMessage(), timeout=WAIT_MS)
