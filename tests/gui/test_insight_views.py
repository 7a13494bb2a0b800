"""Insight in the window: colour by metric (graph, legend, tree bars, blocks), the
per-layer profile from the Op summary tab, and checkpoint values in the inspector."""
from __future__ import annotations

import shutil

import mxnet as mx
import numpy as np
import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QMessageBox

from mxexplorer.core.graph import edits
from mxexplorer.core.render import drawing, metrics
from mxexplorer.gui.panels.tree.model import BAR_COLUMNS, BAR_ROLE
from tests.conftest import EXAMPLES, WAIT_MS

R18 = EXAMPLES / "resnet18_v1-symbol.json"


@pytest.fixture
def inferred(make_window, qtbot):
    def make(path=R18, shape=(1, 3, 64, 64)):
        window = make_window(path)
        pane = window.graph_pane
        qtbot.waitUntil(lambda: pane.build is not None and not pane.busy_now, timeout=WAIT_MS)
        window.infer_blocking({"data": shape})
        return window, pane
    return make


def _fill(pane, node: int) -> str:
    return pane.build.node_items[node].brush().color().name()


def test_colour_by_memory_paints_graph_legend_and_tree_bars_alike(inferred, qtbot) -> None:
    window, pane = inferred()
    doc, session = window.document, window.session
    convs = [i for i in doc.order() if doc.nodes[i].op == "Convolution"]
    family = _fill(pane, convs[0])
    assert family == QColor(drawing.FAMILY_COLOURS["convolution"][0]).name()
    box = pane.toolbar.metric_box
    box.setCurrentIndex(box.findData("memory"))
    assert session.insight.metric == "memory"
    values = session.insight.values()
    shown = {n.id: values[n.id] for n in pane.graph.nodes if n.id in values}
    scale = metrics.scale_for("memory", shown.values())
    assert scale is not None
    biggest = max(shown, key=shown.get)
    assert _fill(pane, biggest) == metrics.viridis(1.0)
    for node in convs:
        assert _fill(pane, node) == scale.colour(values[node])
    # dark fills get white words
    dark = next(n for n in shown if metrics.text_colour(scale.colour(shown[n])) == "#ffffff")
    assert pane.build.text_items[dark][0].brush().color().name() == "#ffffff"
    assert "Activation memory" in pane.legend.text() and "log scale" in pane.legend.text()
    # the tree: a bar in the memory column, the same colour as the node
    index = window.tree.node_rows(convs[2])[0].siblingAtColumn(BAR_COLUMNS["memory"])
    share, colour = index.data(BAR_ROLE)
    assert colour == _fill(pane, convs[2]) and 0 < share <= 1
    assert index.siblingAtColumn(BAR_COLUMNS["macs"]).data(BAR_ROLE) is None
    # an exported picture carries the same colours and the scale as its legend
    source = pane.export_source()
    assert f'fillcolor="{_fill(pane, biggest)}"' in source
    assert "Activation memory (bytes, log scale)" in source
    # MACs: the biggest convolution is the brightest node
    box.setCurrentIndex(box.findData("macs"))
    macs = session.insight.values()
    assert _fill(pane, max(macs, key=macs.get)) == metrics.viridis(1.0)
    # an edit leaves no fresh figures: grey and a note, not old colours
    session.inputs.auto_infer = False
    session.push_edit(edits.set_attr((convs[1],), "num_filter", "32"))
    assert _fill(pane, convs[0]) == metrics.NO_VALUE
    assert "for the graph before your last edit: infer again" in pane.legend.text()
    session.analysis.infer()
    qtbot.waitUntil(lambda: session.analysis.stale() is None, timeout=WAIT_MS)
    # fresh figures: colours back, with the edited graph's new picture (not twice)
    qtbot.waitUntil(lambda: not pane.busy_now, timeout=WAIT_MS)
    assert _fill(pane, convs[0]) != metrics.NO_VALUE
    box.setCurrentIndex(box.findData("family"))
    qtbot.waitUntil(lambda: pane.build is not None and not pane.busy_now, timeout=WAIT_MS)
    assert _fill(pane, convs[0]) == family
    assert "mirror stage" in pane.legend.text()


def test_time_needs_a_profile_then_colours_and_fills_the_columns(inferred, qtbot,
                                                                 dialogs) -> None:
    window, pane = inferred()
    doc, session = window.document, window.session
    box = pane.toolbar.metric_box
    box.setCurrentIndex(box.findData("time"))
    assert "no profile" in pane.legend.text()
    conv = next(i for i in doc.order() if doc.nodes[i].op == "Convolution")
    assert _fill(pane, conv) == metrics.NO_VALUE
    ops = window.op_summary
    assert ops.profile_button.text() == "Profile on cpu"
    # a benchmark first: the op summary's words quote its time beside the profile's
    qtbot.waitUntil(lambda: window.memory is not None
                    and window.memory.bench_view is not None, timeout=WAIT_MS)
    window.memory.bench_time.setValue(5)
    qtbot.waitUntil(lambda: window.memory.bench_button.isEnabled(), timeout=WAIT_MS)
    # a busy machine's estimate may run past 5 s: batch 1 "all the same" (unused when
    # quiet)
    dialogs.answer(QMessageBox.StandardButton.Yes)
    window.memory.bench_button.click()
    qtbot.waitUntil(lambda: session.plans.bench is not None, timeout=WAIT_MS)
    with qtbot.waitSignal(session.insight.profile_changed, timeout=WAIT_MS):
        ops.profile_button.click()
    profile = session.insight.fresh_profile()
    assert profile is not None
    assert set(profile.forward_ms) == {i for i in doc.order() if not doc.nodes[i].is_variable}
    times = session.insight.values()
    assert _fill(pane, max(times, key=times.get)) == metrics.viridis(1.0)
    assert "Measured time" in pane.legend.text()
    # the op summary: time and its share per op type; the tree: a time column
    headers = [ops.table.horizontalHeaderItem(c).text() for c in range(ops.table.columnCount())]
    col = headers.index("time")
    row = next(r for r in range(ops.table.rowCount())
               if ops.table.item(r, 0).text() == "Convolution")
    conv_ms = sum(times[i] for i in doc.order() if doc.nodes[i].op == "Convolution")
    assert ops.table.item(row, col).text() == metrics.format_ms(conv_ms)
    assert "overhead" in ops.note.text()
    assert "The benchmark (threaded engine, bulk execution on) measured " in ops.note.text()
    # in a first window at 1280x800 the time and its share are in sight, not off to
    # the right of the dock (they were the last two of nine columns)
    window.place_first(QRect(0, 0, 1280, 800), maximise=False)
    window.ops_dock.raise_()
    qtbot.waitUntil(lambda: ops.table.isVisible(), timeout=WAIT_MS)
    header, room = ops.table.horizontalHeader(), ops.table.viewport().width()
    for c in (col, col + 1):
        assert header.sectionViewportPosition(c) + header.sectionSize(c) <= room, \
            (headers[c], header.sectionViewportPosition(c), header.sectionSize(c), room)
    cell = window.tree.node_rows(conv)[0].siblingAtColumn(BAR_COLUMNS["time"])
    assert cell.data() == metrics.format_ms(times[conv]) and cell.data(BAR_ROLE) is not None
    # the graph changes: the profile was for the old one, and nothing shows it
    session.push_edit(edits.set_attr((conv,), "num_filter", "32"))
    assert session.insight.fresh_profile() is None
    assert cell.data() == "" and "no profile" in pane.legend.text()
    assert ops.table.columnCount() == 9 and ops.table.item(row, col) is None


def test_a_closed_block_is_coloured_by_its_members_sum(make_window, qtbot, zoo) -> None:
    window = make_window(zoo("resnet50_v1", 64))
    pane = window.graph_pane
    qtbot.waitUntil(lambda: pane.build is not None and not pane.busy_now, timeout=WAIT_MS)
    pane.toolbar.blocks_button.click()          # a mid-sized graph: every block open
    tree = pane.blocks.tree
    assert tree is not None
    key = next(k for k, b in tree.blocks.items() if b.children == () and b.ops > 3)
    with qtbot.waitSignal(pane.drawn, timeout=WAIT_MS):
        pane.close_block(key)
    window.infer_blocking({"data": (1, 3, 64, 64)})
    pane.toolbar.metric_box.setCurrentIndex(pane.toolbar.metric_box.findData("macs"))
    from mxexplorer.core.render import blocks

    closed = [n.id for n in pane.graph.nodes if blocks.is_block(n.id)]
    assert closed
    values = window.session.insight.values()
    summed = {b: sum(values.get(m, 0) for m in pane.blocks.members(b)) for b in closed}
    drawn = metrics.block_values(values, {b: pane.blocks.members(b) for b in closed})
    shown = {n.id: drawn[n.id] for n in pane.graph.nodes if n.id in drawn}
    scale = metrics.scale_for("macs", shown.values())
    for block in closed:
        assert _fill(pane, block) == scale.colour(summed[block])


def test_the_inspector_shows_checkpoint_values_and_flags_nan(make_window, qtbot,
                                                             tmp_path) -> None:
    for name in ("mlp-symbol.json", "mlp-0000.params"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    params = str(tmp_path / "mlp-0000.params")
    saved = mx.nd.load(params)
    weight = saved["arg:fc2_weight"].asnumpy()
    weight[0, :3] = np.nan
    saved["arg:fc2_weight"] = mx.nd.array(weight)
    mx.nd.save(params, saved)
    window = make_window(tmp_path / "mlp-symbol.json")
    doc = window.document
    view = window.inspector.param_stats
    fc1 = doc.find("fc1")[0]
    window.selection.set([fc1])
    qtbot.waitUntil(lambda: "fc1_weight" in view.stats, timeout=WAIT_MS)
    got = view.stats["fc1_weight"]
    fc1_weight = saved["arg:fc1_weight"].asnumpy()
    assert got.mean == pytest.approx(float(fc1_weight.astype(np.float64).mean()))
    assert got.maximum == pytest.approx(float(fc1_weight.max()))
    assert set(view.stats) == {"fc1_weight", "fc1_bias"} and "NaN" not in view.label.text()
    window.selection.set([doc.find("fc2_weight")[0]])
    qtbot.waitUntil(lambda: "fc2_weight" in view.stats, timeout=WAIT_MS)
    assert view.stats["fc2_weight"].nans == 3
    assert "3 NaN" in view.label.text() and "broken" in view.label.text()
    window.selection.set([doc.find("data")[0]])          # no tensor: nothing shown
    assert view.isHidden()


def test_checkpoint_values_follow_a_rename_and_a_prefix(make_window, qtbot, mlp_copy) -> None:
    """After a rename or a prefix the values stay (read under the file's own keys) and
    show the tensors' new names; they showed the old names until another click."""
    from mxexplorer.core.graph import edits

    window = make_window(mlp_copy)
    doc = window.document
    view = window.inspector.param_stats
    fc1 = doc.find("fc1")[0]
    window.selection.set([fc1])
    qtbot.waitUntil(lambda: "fc1_weight" in view.stats, timeout=WAIT_MS)
    before = view.stats["fc1_weight"].mean
    assert window.push_edit(edits.RenameNodeEdit(fc1, "dense1"))
    qtbot.waitUntil(lambda: "dense1_weight" in view.stats, timeout=WAIT_MS)
    assert set(view.stats) == {"dense1_weight", "dense1_bias"}
    assert view.stats["dense1_weight"].mean == before
    assert "fc1_weight" not in view.label.text() and "dense1_weight" in view.label.text()
    assert window.push_edit(edits.PrefixAllEdit("sha-"))
    qtbot.waitUntil(lambda: "sha-dense1_weight" in view.stats, timeout=WAIT_MS)
    assert view.stats["sha-dense1_weight"].mean == before


def test_the_tree_says_why_a_node_has_no_time_and_the_note_counts_them(
        inferred, qtbot, tmp_path) -> None:
    from tests.core.analysis.test_profile import _small

    path = tmp_path / "small-symbol.json"
    _small().save(str(path))
    window, _ = inferred(path, (2, 3, 8, 8))
    doc, session = window.document, window.session
    ids = {doc.nodes[i].name: i for i in range(len(doc.nodes))}
    with qtbot.waitSignal(session.insight.profile_changed, timeout=WAIT_MS):
        window.op_summary.profile_button.click()
    profile = session.insight.fresh_profile()
    assert profile is not None and not profile.unexplained()

    def cell(name: str):
        return window.tree.node_rows(ids[name])[0].siblingAtColumn(BAR_COLUMNS["time"])

    # a twin MXNet computes once: the reason's word in the column, its words on hover
    merged = cell("flat_b")
    assert merged.data() == "merged"
    assert "merged with 'flat_a'" in merged.data(Qt.ItemDataRole.ToolTipRole)
    # forward time, no backward: the time, and why there is no more on hover
    side = cell("side")
    assert side.data() == metrics.format_ms(profile.node_ms(ids["side"]))
    assert "no backward: no gradient comes back" in side.data(Qt.ItemDataRole.ToolTipRole)
    assert cell("conv").data(Qt.ItemDataRole.ToolTipRole) is None
    assert profile.coverage_line() in window.op_summary.note.text()
    assert "0 unexplained" in window.op_summary.note.text()
