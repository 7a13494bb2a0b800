"""Each panel on its own: a session, settings and a host, no MainWindow."""
from __future__ import annotations

import mxnet as mx
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from mxexplorer.core.graph import edits, tags
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import memplan
from mxexplorer.gui.host import WidgetHost
from mxexplorer.gui.panels.attributes.panel import AttributePanel
from mxexplorer.gui.panels.inputs.panel import ShapeFormPanel
from mxexplorer.gui.panels.planner.panel import MemoryPanel
from mxexplorer.gui.panels.tree.panel import InternalsPanel
from mxexplorer.gui.session import DocumentSession
from tests.conftest import EXAMPLES, WAIT_MS
from tests.gui.conftest import wait_for_workers


@pytest.fixture
def alone(qtbot, settings):
    """``alone(PanelClass, doc)`` -> (panel, session): the panel shown by itself."""
    made = []

    def make(cls, doc):
        holder = QWidget()
        qtbot.addWidget(holder)
        session = DocumentSession(doc, settings, holder)
        panel = cls(session, settings, WidgetHost(holder))
        qtbot.addWidget(panel)
        panel.show()
        made.append(session)
        return panel, session

    yield make
    for session in made:
        session.stop()
    wait_for_workers()


def _mlp() -> GraphDocument:
    return GraphDocument.open(str(EXAMPLES / "mlp-symbol.json"))


def test_tree_alone_shows_shapes_then_marks_them_stale(alone) -> None:
    tree, session = alone(InternalsPanel, _mlp())
    session.inputs.auto_infer = False
    session.inputs.set({"data": (4, 784)})
    session.analysis.infer_blocking()
    fc2 = session.document.find("fc2")[0]
    cell = tree.node_rows(fc2)[0].siblingAtColumn(2)
    assert cell.data() == "(4, 32)" and not tree.stale_label.isVisible()
    relu = session.document.find("relu1")[0]
    session.push_edit(edits.set_attr((relu,), "act_type", "tanh"))
    assert tree.stale_label.isVisible()
    assert cell.data() == "(4, 32)"                  # kept, and greyed
    assert cell.data(Qt.ItemDataRole.ForegroundRole) is not None
    assert "before your last edit" in tree.stale_label.text()
    session.analysis.infer_blocking()
    assert not tree.stale_label.isVisible()
    session.inputs.set({"data": (2, 784)})     # auto is off: stale for shapes too
    assert "other input shapes" in tree.stale_label.text()
    assert cell.data() == "(4, 32)"


def test_inspector_alone_shows_the_output_shape_memory_and_macs(alone) -> None:
    inspector, session = alone(AttributePanel, _mlp())
    session.inputs.set({"data": (4, 784)}, infer=False)
    session.analysis.infer_blocking()
    fc1 = session.document.find("fc1")[0]
    session.selection.set([fc1])
    assert "fc1_output: (4, 64)" in inspector.outputs_label.text()
    figures = inspector.figures_label.text()
    assert figures == "memory 1.0 KiB, params 50.24 K, MACs 200.96 K"
    inspector.name_edit.setText("dense1")
    inspector.rename_button.click()
    assert "fc1_weight \u2192 dense1_weight" in inspector.note_label.text()
    session.undo_stack.undo()           # the note said what no longer is
    assert inspector.note_label.text() == ""
    assert inspector.name_edit.text() == "fc1"


def test_shape_form_alone_scrolls_and_filters_150_inputs(alone, qtbot) -> None:
    inputs = [mx.sym.var(f"in{k:03d}") for k in range(150)]
    doc = GraphDocument.from_json(mx.sym.add_n(*inputs, name="sum").tojson())
    form, session = alone(ShapeFormPanel, doc)
    assert len(form.rows) == 150
    form.resize(320, 500)
    assert form.sizeHint().height() < 600 and form.minimumSizeHint().height() < 600
    assert form.scroll.verticalScrollBar().maximum() > 0       # the rows scroll
    assert form.filter_edit.isVisible()
    form.filter_edit.setText("in14")
    shown = [n for n, e in form.rows.items() if e.isVisibleTo(form)]
    assert shown == [f"in14{k}" for k in range(10)]
    form.rows["in140"].setText("2,3")
    form.rows["in140"].editingFinished.emit()
    assert session.inputs.shapes() == {"in140": (2, 3)}


def test_planner_alone_plans_selects_a_point_and_applies_it(alone, qtbot) -> None:
    doc = GraphDocument.open(str(EXAMPLES / "resnet18_v1-symbol.json"))
    panel, session = alone(MemoryPanel, doc)
    session.inputs.set({"data": (4, 3, 64, 64)}, infer=False)
    qtbot.waitUntil(lambda: panel.bench_view is not None, timeout=WAIT_MS)   # plots in
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    panel.search.setCurrentIndex(panel.search.findData("original"))
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.start_button.click()
    result = session.plans.result
    assert result is not None and session.plans.selected is result.best
    other = next(p for p in result.probes if p.ok and p.kind != "baseline"
                 and p.kept != result.best.kept)
    session.plans.select_probe(other)
    assert session.plans.selected.kept == other.kept
    assert len(panel.plan_plot.selected_point.data) == 1
    panel.apply_button.click()
    assert session.plans.applied() and not panel.apply_button.isEnabled()
    kept = {i for i, n in enumerate(doc.nodes) if n.attrs.get(tags.FORCE_MIRRORING) == "False"}
    assert kept == set(other.kept)


def test_inspector_alone_flips_a_variable_and_the_file_remembers(alone, settings,
                                                                 tmp_path, qtbot) -> None:
    import mxnet as mx

    from mxexplorer.core.graph.kinds import NodeKind

    sym = mx.sym.broadcast_add(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=4),
                               mx.sym.var("offset"))
    path = tmp_path / "net-symbol.json"
    sym.save(str(path))
    inspector, session = alone(AttributePanel, GraphDocument.open(str(path)))
    doc = session.document
    offset = doc.find("offset")[0]
    session.selection.set([offset])
    assert inspector.kind_box.isEnabled()
    inspector.kind_box.setCurrentIndex(inspector.kind_box.findData(NodeKind.PARAM.value))
    inspector.kind_box.activated.emit(inspector.kind_box.currentIndex())
    assert doc.kinds()[offset] == NodeKind.PARAM and session.undo_stack.count() == 1
    assert "offset" not in session.inputs.shapes()
    # the next time this file opens, offset is a parameter still
    again, _ = alone(AttributePanel, GraphDocument.open(str(path)))
    assert again.document.kinds()[offset] == NodeKind.PARAM
    session.undo_stack.undo()
    assert doc.kinds()[offset] == NodeKind.DATA
    assert settings.variable_kinds(str(path)) == {}


def test_tree_alone_shows_a_long_list_as_it_scrolls_and_finds_any_row(alone,
                                                                      qtbot) -> None:
    """18,000 operators expanded at once stalled the window: the rows arrive a few
    hundred at a time, and a node selected elsewhere is always found."""
    from mxexplorer.gui.panels.tree.model import FETCH_ROWS

    x = mx.sym.var("data")
    for k in range(3 * FETCH_ROWS):
        x = mx.sym.relu(x, name=f"relu{k}")
    tree, session = alone(InternalsPanel, GraphDocument.from_json(x.tojson()))
    model = tree.model
    ops = next(model.index(r, 0) for r in range(model.rowCount())
               if str(model.index(r, 0).data()).startswith("Operators"))
    assert model.rowCount(ops) == FETCH_ROWS and model.canFetchMore(ops)
    model.fetchMore(ops)
    assert model.rowCount(ops) == 2 * FETCH_ROWS
    last = session.document.find(f"relu{3 * FETCH_ROWS - 1}")[0]
    session.selection.set([last])                  # from the graph, say
    assert tree.selected_nodes() == [last]
    assert model.rowCount(ops) == 3 * FETCH_ROWS and not model.canFetchMore(ops)


def _click_spot(qtbot, plot, x: float, y: float) -> None:
    """A real mouse click on the plot where the data point (x, y) is drawn."""
    from PySide6.QtCore import QPointF

    plot.resize(640, 420)
    plot.show()
    qtbot.waitExposed(plot)
    scene = plot.plotItem.vb.mapViewToScene(QPointF(x, y))
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton,
                     pos=plot.mapFromScene(scene))


def test_the_front_fills_a_clicked_point_applies_exactly_and_a_budget_picks_least_recompute(
        alone, qtbot) -> None:
    from mxexplorer.core.planning import plansearch

    doc = GraphDocument.open(str(EXAMPLES / "resnet18_v1-symbol.json"))
    panel, session = alone(MemoryPanel, doc)
    session.inputs.set({"data": (8, 3, 112, 112)}, infer=False)
    qtbot.waitUntil(lambda: panel.bench_view is not None, timeout=WAIT_MS)
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    panel.search.setCurrentIndex(panel.search.findData("best"))
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.start_button.click()
    result = session.plans.result
    front = plansearch.front(result.probes)
    assert len(front) >= 4                          # memory traded for recompute
    assert [p.cost_mb for p in front] == sorted(p.cost_mb for p in front)
    assert all(a.recompute_macs > b.recompute_macs for a, b in zip(front, front[1:]))
    plot = panel.front_plot
    assert len(plot.front_points.data) == len(front) and len(plot.others.data) > 0
    assert plot.baseline_line.value() == result.baseline_mb
    assert "recomputes" in panel.status.text() and "without a plan" in panel.status.text()
    # click a front point that is not the best: it becomes the selected plan...
    target = front[len(front) // 2]
    assert target.kept != result.best.kept
    _click_spot(qtbot, plot.plot, 100 * target.recompute_share, target.cost_mb)
    qtbot.waitUntil(lambda: session.plans.selected.kept == target.kept, timeout=WAIT_MS)
    assert len(plot.selected_point.data) == 1
    assert session.plans.preview_tags() is not None                  # previewed, not applied
    # ... and Apply puts exactly its tags in the document, whose cost is the point's
    panel.apply_button.click()
    assert session.plans.applied()
    kept = {i for i, n in enumerate(doc.nodes) if n.attrs.get(tags.FORCE_MIRRORING) == "False"}
    assert kept == set(target.kept)
    oracle = memplan.CostOracle({"data": (8, 3, 112, 112)})
    assert abs(oracle(doc.to_json()) - target.cost_mb) <= 1
    # a budget: the least recompute among the plans that fit it
    budget = float((front[0].cost_mb + front[-1].cost_mb) // 2)   # whole MB: the box's
    panel.budget.setValue(budget)
    panel.least_button.click()
    chosen = session.plans.selected
    fits = [p for p in result.probes if p.ok and p.kind != "baseline"
            and p.cost_mb <= budget and p.recompute_macs is not None]
    assert chosen.cost_mb <= budget
    assert chosen.recompute_macs == min(p.recompute_macs for p in fits)
    assert plot.budget_line.isVisible() and plot.budget_line.value() == budget
    panel.budget.setValue(1)
    panel.least_button.click()
    assert "No plan needs 1 MB or less" in panel.status.text()


def test_memory_over_a_step_follows_the_analysis_and_the_selected_plan(alone, qtbot) -> None:
    from PySide6.QtCore import QPointF

    from mxexplorer.core.analysis.shapes import infer_document
    from mxexplorer.core.planning import liveness

    doc = GraphDocument.open(str(EXAMPLES / "resnet18_v1-symbol.json"))
    panel, session = alone(MemoryPanel, doc)
    qtbot.waitUntil(lambda: panel.bench_view is not None, timeout=WAIT_MS)   # plots in
    chart = panel.step_chart
    assert chart.unplanned is None and "Infer shapes" in chart.note.text()
    shapes = {"data": (8, 3, 112, 112)}
    session.inputs.set(shapes)                      # infers
    qtbot.waitUntil(lambda: chart.unplanned is not None, timeout=WAIT_MS)
    expected = liveness.Model(doc, infer_document(doc, shapes).by_entry)
    assert chart.unplanned.peak_bytes == expected.simulate({}).peak_bytes
    assert len(chart.curve.yData) == len(chart.unplanned.steps) and chart.planned is None
    assert "with no plan: peak" in chart.note.text()
    # parameters, their gradients and the auxiliary states are the band under the curve
    st = session.analysis.result.stats
    band = 4 * (2 * st.params + st.aux_values)
    assert chart.base_bytes == band and chart.band.yData[0] == band / liveness.MB
    peak = chart.unplanned.peak_step
    assert chart.curve.yData[peak] == pytest.approx(
        (chart.unplanned.peak_bytes + band) / liveness.MB)
    assert "parameters, gradients and auxiliary states" in chart.note.text()
    biggest = max(chart.unplanned.peak_tensors, key=lambda t: t[3])
    assert doc.nodes[biggest[0]].name in chart.note.text()      # what is alive there
    # a plan: its curve comes in, lower at its peak
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    panel.search.setCurrentIndex(panel.search.findData("original"))
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.start_button.click()
    qtbot.waitUntil(lambda: chart.planned is not None, timeout=WAIT_MS)
    assert chart.planned.peak_bytes < chart.unplanned.peak_bytes
    assert chart.planned.peak_bytes == expected.simulate(session.plans.selected.tags).peak_bytes
    assert "recompute" in {s.phase for s in chart.planned.steps}
    assert "with the selected plan: peak" in chart.note.text()
    # clicking the curve at a step selects that step's node
    panel.plots.setCurrentWidget(chart)
    chart.plot.resize(600, 300)
    qtbot.waitUntil(chart.plot.isVisible, timeout=WAIT_MS)
    k = chart.planned.peak_step
    scene = chart.plot.plotItem.vb.mapViewToScene(QPointF(k, 1.0))
    qtbot.mouseClick(chart.plot.viewport(), Qt.MouseButton.LeftButton,
                     pos=chart.plot.mapFromScene(scene))
    qtbot.waitUntil(lambda: session.selection.nodes == [chart.planned.steps[k].node],
                    timeout=WAIT_MS)
    # the legend covers no point of either curve, in a short plot too (it covered a
    # third of one in a first window's planner)
    for height in (300, 160):
        chart.resize(420, height)
        qtbot.waitUntil(lambda h=height: chart.plot.height() < h, timeout=WAIT_MS)
        box = chart.plot.plotItem.legend.sceneBoundingRect()
        vb = chart.plot.plotItem.vb
        for curve in (chart.curve, chart.plan_curve):
            for x, y in zip(curve.xData, curve.yData):
                assert not box.contains(vb.mapViewToScene(QPointF(x, y))), (height, x, y)
    # other shapes, not inferred yet: the chart says so instead of showing old figures
    session.inputs.set({"data": (8, 3, 96, 96)}, infer=False)
    qtbot.waitUntil(lambda: chart.unplanned is None, timeout=WAIT_MS)
    assert "Infer shapes" in chart.note.text() and not len(chart.curve.yData or [])


def test_op_summary_alone_follows_the_analysis_sorts_and_selects(alone, qtbot) -> None:
    from mxexplorer.core.analysis import report, stats
    from mxexplorer.gui.panels.ops.panel import OpSummaryPanel

    doc = GraphDocument.open(str(EXAMPLES / "resnet18_v1-symbol.json"))
    panel, session = alone(OpSummaryPanel, doc)
    assert panel.table.rowCount() == 0 and "Infer shapes" in panel.note.text()
    session.inputs.set({"data": (2, 3, 224, 224)})
    qtbot.waitUntil(lambda: panel.table.rowCount() > 0, timeout=WAIT_MS)
    expected = report.by_op(doc, stats.analyze(doc.snapshot(), {"data": (2, 3, 224, 224)}
                                               ).stats)
    assert [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())] == \
        [row["op"] for row in expected]                       # the largest MACs first
    assert sum(r["count"] for r in panel.rows) == \
        sum(1 for n in doc.nodes if not n.is_variable)
    # sorted by count (a number, not words): Convolution and BatchNorm (20) first
    panel.table.sortItems(1, Qt.SortOrder.DescendingOrder)
    assert panel.table.item(0, 1).text() == "20"
    assert [int(panel.table.item(r, 1).text()) for r in range(panel.table.rowCount())] == \
        sorted((r["count"] for r in expected), reverse=True)
    # a click on a row selects that op's nodes
    row = next(r for r in range(panel.table.rowCount())
               if panel.table.item(r, 0).text() == "Pooling")
    rect = panel.table.visualItemRect(panel.table.item(row, 0))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    pools = [i for i, n in enumerate(doc.nodes) if n.op == "Pooling"]
    assert sorted(session.selection.nodes) == pools
    # an edit leaves the figures stale until inferred again: the table says so
    session.inputs.set({"data": (2, 3, 112, 112)}, infer=False)
    assert panel.table.rowCount() == 0


def test_the_threshold_view_says_when_no_threshold_was_costed(qtbot) -> None:
    """A fast search costs memonger's thresholds with the memory model only: the view
    said nothing and drew the best plan at threshold 0 on an axis from -0.4 to 0.4
    (seen in a screenshot of ResNet-152's fast plan)."""
    from mxexplorer.gui.panels.planner.plan_plot import PlanPlot

    plot = PlanPlot()
    qtbot.addWidget(plot)
    base = memplan.Probe("baseline", None, 100.0, True)
    solver = memplan.Probe("solver", None, 40.0, True, "", (3,), 0.0, 10, 0.5)
    plot.show_probes([base, solver])
    title = plot.plot.plotItem.titleLabel
    assert title.text == PlanPlot.NO_THRESHOLDS and title.isVisible()
    assert len(plot.local_points.data) == 0 and len(plot.best_point.data) == 0
    threshold = memplan.Probe("original", 50.0, 60.0, True, "", (2,), 0.0, 5, 0.2)
    plot.show_probes([base, threshold, solver])
    assert not title.isVisible()
    assert len(plot.points.data) == 1 and len(plot.local_points.data) == 1
    assert len(plot.best_point.data) == 1


def test_tree_elides_names_at_their_start_and_ops_at_their_end(alone) -> None:
    """A long name loses its shared prefix ("...stage1_conv0_fwd_output"); an op keeps
    its start ("FullyConn..." told apart, where "...yConnected" read as noise)."""
    from PySide6.QtWidgets import QStyleOptionViewItem

    tree, session = alone(InternalsPanel, _mlp())
    fc1 = session.document.find("fc1")[0]
    name_cell = tree.node_rows(fc1)[0]
    elide = {}
    for col in (0, 1, 2):
        option = QStyleOptionViewItem()
        option.textElideMode = tree.view.textElideMode()
        tree.view.itemDelegate().initStyleOption(option, name_cell.siblingAtColumn(col))
        elide[col] = option.textElideMode
    assert elide == {0: Qt.TextElideMode.ElideLeft, 1: Qt.TextElideMode.ElideRight,
                     2: Qt.TextElideMode.ElideRight}
