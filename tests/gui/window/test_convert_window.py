"""File > Export ONNX... and File > Compare With... in a real window."""
from __future__ import annotations

import mxnet as mx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from mxexplorer.core.convert import onnx_export
from mxexplorer.core.graph import edits
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.gui.window import compare_window
from tests.conftest import EXAMPLES, WAIT_MS, mlp_epoch

R18 = EXAMPLES / "resnet18_v1-symbol.json"


def test_export_onnx_writes_checks_and_reports(make_window, qtbot, dialogs, tmp_path) -> None:
    window = make_window(R18)
    window.infer_blocking({"data": (1, 3, 64, 64)})
    dialogs.answer(QMessageBox.StandardButton.Ok)
    window.exports.export_onnx(str(tmp_path / "r18.onnx"))
    qtbot.waitUntil(lambda: window.exports.last_onnx is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: bool(dialogs.seen), timeout=WAIT_MS)
    report = window.exports.last_onnx
    assert isinstance(report, onnx_export.ExportReport) and report.check.agree
    assert (tmp_path / "r18.onnx").stat().st_size == report.size_bytes
    title, text = dialogs.take()[0]
    assert title == "ONNX export" and "outputs agree within 0.0001" in text


def test_export_onnx_of_the_bundled_mlp_drops_its_label_and_agrees(make_window, qtbot,
                                                                   dialogs, tmp_path) -> None:
    """File > Export ONNX on the MLP (its SoftmaxOutput keeps softmax_label) failed with
    the converter's IndexError."""
    window = make_window(EXAMPLES / "mlp-symbol.json")
    window.infer_blocking({"data": (4, 784)})
    dialogs.answer(QMessageBox.StandardButton.Ok)
    window.exports.export_onnx(str(tmp_path / "mlp.onnx"))
    qtbot.waitUntil(lambda: bool(dialogs.seen), timeout=WAIT_MS)
    title, text = dialogs.take()[0]
    assert title == "ONNX export", text
    assert "label input 'softmax_label' dropped" in text
    assert "outputs agree within 0.0001" in text


def test_export_onnx_of_an_unsupported_op_selects_it(make_window, qtbot, dialogs,
                                                     tmp_path) -> None:
    data = mx.sym.var("data")
    noise = mx.sym.sample_normal(mx.sym.relu(data, name="act"), mx.sym.ones_like(data),
                                 name="noise")
    path = tmp_path / "noisy-symbol.json"
    (noise + data).save(str(path))
    window = make_window(path)
    window.infer_blocking({"data": (2, 3)})
    dialogs.answer(QMessageBox.StandardButton.Ok)
    window.exports.export_onnx(str(tmp_path / "noisy.onnx"))
    qtbot.waitUntil(lambda: bool(dialogs.seen), timeout=WAIT_MS)
    title, text = dialogs.take()[0]
    assert title == "Cannot export ONNX" and "noise (_sample_normal)" in text
    found = window.document.find("noise")
    assert window.selection.nodes == found
    assert not (tmp_path / "noisy.onnx").exists()
    # the tree marks it in red, saying why, until the graph changes
    cell = window.tree.node_rows(found[0])[0]
    assert cell.data(Qt.ItemDataRole.ForegroundRole) is not None
    assert "no ONNX converter for _sample_normal" in cell.data(Qt.ItemDataRole.ToolTipRole)
    window.push_edit(edits.set_attr((found[0],), "mirror_stage", "True"))
    assert cell.data(Qt.ItemDataRole.ForegroundRole) is None


def test_a_differing_export_selects_its_first_differing_node(make_window, qtbot, dialogs,
                                                             tmp_path) -> None:
    """A SoftmaxOutput over 4-D data is exported as MXNet documents it (every axis but
    the batch); MXNet's CPU oneDNN kernel takes the last axis, so they part at that node,
    and the window selects and flags it.  (MXNet's Lp pooling of signed values was this
    test's example until our converter made it agree; box_nms before that.)"""
    data = mx.sym.var("data")
    act = mx.sym.Activation(data, act_type="tanh", name="act")
    net = mx.sym.SoftmaxOutput(act, name="prob")
    path = tmp_path / "prob-symbol.json"
    net.save(str(path))
    window = make_window(path)
    window.infer_blocking({"data": (1, 2, 3, 3)})
    dialogs.answer(QMessageBox.StandardButton.Ok)
    window.exports.export_onnx(str(tmp_path / "prob.onnx"))
    qtbot.waitUntil(lambda: bool(dialogs.seen), timeout=WAIT_MS)
    title, text = dialogs.take()[0]
    assert title == "ONNX export"
    assert "first difference at 'prob' (SoftmaxOutput)" in text and "its inputs agree" in text
    assert "fed MXNet's own inputs it still differs" in text
    found = window.document.find("prob")
    assert window.selection.nodes == found
    cell = window.tree.node_rows(found[0])[0]
    assert "first difference at 'prob'" in cell.data(Qt.ItemDataRole.ToolTipRole)


def test_compare_with_colours_both_graphs_and_steps_through(make_window, qtbot,
                                                            tmp_path) -> None:
    edited = GraphDocument.open(str(R18))
    relu = edited.find("resnetv10_stage3_relu0_fwd")[0]
    edits.set_attr((relu,), "act_type", "tanh").apply(edited)
    other = tmp_path / "edited-symbol.json"
    other.write_text(edited.to_json())
    window = make_window(R18)
    window.push_edit(edits.PrefixAllEdit("sha-"))          # unsaved: compared as it is
    window.exports.compare_with(str(other))
    qtbot.waitUntil(lambda: bool(window.exports.compare_windows), timeout=WAIT_MS)
    compare = window.exports.compare_windows[0]
    a_pane, b_pane = compare.panes
    for pane in compare.panes:
        qtbot.waitUntil(lambda p=pane: p.build is not None and not p.busy_now,
                        timeout=WAIT_MS)
    result = compare.result
    assert len(result.renamed) == len(window.document.nodes)     # every name prefixed
    assert len(result.changed) == 1 and not (result.added or result.removed)
    change = result.changed[0]
    fill = a_pane.build.node_items[change.a].brush().color().name()
    assert fill == compare_window.CHANGED
    assert b_pane.build.node_items[change.b].brush().color().name() == compare_window.CHANGED
    assert "changed" in a_pane.legend.text() and "removed" in a_pane.legend.text()
    # the list: the change first; selecting it selects the node on both sides
    assert compare.list.count() == len(compare.rows) and "act_type" in \
        compare.list.item(0).text()
    compare.list.setCurrentRow(0)
    assert compare.sessions[0].selection.nodes == [change.a]
    assert compare.sessions[1].selection.nodes == [change.b]
    # the main window's document, colours and selection are its own
    assert window.session.insight.metric == "family" and window.selection.nodes == []
    compare.close()


def test_compare_with_another_checkpoint_lists_the_tensors_that_moved(make_window, qtbot,
                                                                      mlp_copy,
                                                                      tmp_path) -> None:
    def change(saved) -> None:
        saved["arg:fc1_weight"] = saved["arg:fc1_weight"] * 2

    other = mlp_epoch(mlp_copy, tmp_path / "epoch2", change)
    window = make_window(mlp_copy)
    fc1 = window.document.find("fc1")[0]
    window.push_edit(edits.RenameNodeEdit(fc1, "first"))   # unsaved: fc1_weight is first_weight
    window.exports.compare_with(str(other))
    qtbot.waitUntil(lambda: bool(window.exports.compare_windows), timeout=WAIT_MS)
    compare = window.exports.compare_windows[0]
    rows = [text for text, _, _ in compare.rows]
    tensor_rows = [r for r in rows if r.startswith("tensor")]
    assert len(tensor_rows) == 1 and "fc1_weight" in tensor_rows[0]
    k = rows.index(tensor_rows[0])
    compare.list.setCurrentRow(k)
    a_node, b_node = compare.sessions[0].selection.nodes, compare.sessions[1].selection.nodes
    assert compare.sessions[0].document.nodes[a_node[0]].name == "first_weight"
    assert compare.sessions[1].document.nodes[b_node[0]].name == "fc1_weight"
    compare.close()


def test_compare_with_a_file_that_is_not_a_graph_says_so(make_window, qtbot, dialogs,
                                                         tmp_path) -> None:
    bad = tmp_path / "bad-symbol.json"
    bad.write_text("{not json")
    window = make_window(R18)
    dialogs.answer(QMessageBox.StandardButton.Ok)
    window.exports.compare_with(str(bad))
    qtbot.waitUntil(lambda: bool(dialogs.seen), timeout=WAIT_MS)
    title, text = dialogs.take()[0]
    assert title == "Cannot compare" and "bad-symbol.json" in text
    assert "Traceback" not in text and not window.exports.compare_windows
