"""The memory panel in a real window: real searches on MXNet, live plot, apply and undo."""
from __future__ import annotations

import mxnet as mx
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from mxexplorer.core.graph import tags
from mxexplorer.core.render import drawing
from mxexplorer.gui.panels.tree.panel import RECOMPUTE_BRUSH
from tests.conftest import EXAMPLES, WAIT_MS

R18 = EXAMPLES / "resnet18_v1-symbol.json"


def _ready(make_window, qtbot):
    window = make_window(R18)
    window.shape_form.set_shapes({"data": (4, 3, 224, 224)})
    qtbot.waitUntil(lambda: window.memory is not None, timeout=WAIT_MS)
    panel = window.memory
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    qtbot.waitUntil(lambda: window.graph_pane.build is not None
                    and not window.graph_pane.busy_now, timeout=WAIT_MS)
    return window, panel


def test_a_search_runs_to_the_end_and_its_plan_applies_and_undoes(make_window, qtbot,
                                                                   tmp_path) -> None:
    window, panel = _ready(make_window, qtbot)
    panel.search.setCurrentIndex(panel.search.findData("original"))
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.start_button.click()
    result = panel.result
    assert result is not None and result.best is not None
    assert result.planned_mb < result.baseline_mb
    assert len(panel.probes) == len(result.probes)
    shown = len(panel.plan_plot.points.data) + len(panel.plan_plot.local_points.data)
    assert shown == sum(1 for p in result.probes if p.kind != "baseline")
    assert panel.plan_plot.baseline_line.value() == result.baseline_mb
    assert len(panel.plan_plot.best_point.data) == 1
    assert "without a plan; this plan needs" in panel.status.text()
    # the best plan is previewed in the graph, not applied
    doc = window.document
    recomputed = [i for i, v in result.best.tags.items() if v == "True"
                  and i in window.graph_pane.build.node_items and not doc.nodes[i].is_variable]
    pen = window.graph_pane.build.node_items[recomputed[0]].pen()
    assert pen.color().name() == drawing.RECOMPUTE_COLOUR
    assert not any(tags.FORCE_MIRRORING in n.attrs for n in doc.nodes)
    # ... and in the tree: the recomputed rows coloured, with a tooltip that says so
    row = window.tree.node_rows(recomputed[0])[0]
    assert row.data(Qt.ItemDataRole.BackgroundRole) == RECOMPUTE_BRUSH
    assert "recomputes" in row.data(Qt.ItemDataRole.ToolTipRole)
    data = next(i for i, n in enumerate(doc.nodes) if n.name == "data")
    assert result.best.tags.get(data) == "True"                 # tagged, yet an input:
    assert window.tree.node_rows(data)[0].data(Qt.ItemDataRole.BackgroundRole) is None
    assert window.graph_pane.build.node_items[data].pen().color().name() != \
        drawing.RECOMPUTE_COLOUR
    kept = next(i for i, v in result.best.tags.items() if v == "False")
    assert window.tree.node_rows(kept)[0].data(Qt.ItemDataRole.BackgroundRole) \
        != RECOMPUTE_BRUSH
    # apply: one undo step
    steps = window.undo_stack.count()
    panel.apply_button.click()
    assert window.undo_stack.count() == steps + 1
    tagged = {i for i, n in enumerate(doc.nodes) if n.attrs.get(tags.FORCE_MIRRORING)}
    assert tagged == {i for i in result.best.tags if not doc.nodes[i].is_variable}
    assert all(doc.nodes[i].attrs.get(tags.MIRROR_STAGE) == "True" for i in result.stages)
    window.undo_stack.undo()
    assert not any(tags.FORCE_MIRRORING in n.attrs or tags.MIRROR_STAGE in n.attrs
                   for n in doc.nodes)
    # export writes a graph MXNet loads with the tags
    out = tmp_path / "planned-symbol.json"
    assert panel.export_to(str(out))
    attrs = mx.sym.load(str(out)).attr_dict()
    assert sum(1 for a in attrs.values() if a.get("__force_mirroring__") == "False") \
        == len(result.best.kept)


def test_a_search_can_be_cancelled_midway(make_window, qtbot) -> None:
    window, panel = _ready(make_window, qtbot)
    panel.search.setCurrentIndex(panel.search.findData("best"))
    panel.start_button.click()
    qtbot.waitUntil(lambda: len(panel.probes) >= 3, timeout=WAIT_MS)
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.cancel_button.click()
    assert not panel.busy and panel.start_button.isEnabled()
    assert panel.status.text() == "Cancelled."
    count = len(panel.probes)
    qtbot.wait(500)
    assert len(panel.probes) == count     # nothing arrives after a cancel


def test_missing_stages_and_benchmark(make_window, qtbot, dialogs) -> None:
    window, panel = _ready(make_window, qtbot)
    panel.stages.setCurrentIndex(panel.stages.findData("file"))
    panel.start_button.click()                # refused at once, before any child starts
    assert not panel.busy and panel.start_button.isEnabled()
    assert "No node carries mirror_stage" in panel.status.text()
    assert "Ctrl+M" in panel.status.text() and "--stages" not in panel.status.text()
    window.shape_form.set_shapes({"data": (2, 3, 64, 64)})
    panel.bench_time.setValue(5)
    # a busy machine's estimate may run past 5 s: "Batch 2 anyway" (unused when quiet)
    dialogs.answer(QMessageBox.StandardButton.No)
    panel.bench_button.click()
    qtbot.waitUntil(lambda: panel.bench is not None and not panel.busy, timeout=WAIT_MS)
    assert [r.label for r in panel.bench] == ["original"]
    assert "ms/iter" in panel.bench_view.label.text()


def test_mxnet_crashing_on_a_graph_does_not_take_the_window_down(make_window, qtbot,
                                                                 tmp_path) -> None:
    """The loader refuses the graphs MXNet is known to crash on; one it does not know
    of is simulated by breaking a loaded document behind its back (a node input naming
    an output its producer lacks: a real segfault in MXNet's simple_bind)."""
    window = make_window(EXAMPLES / "mlp-symbol.json")
    qtbot.waitUntil(lambda: window.memory is not None, timeout=WAIT_MS)
    panel = window.memory
    doc = window.document
    act = next(i for i, n in enumerate(doc.nodes) if n.op == "Activation")
    producer = doc.nodes[act].inputs[0]
    # far past the end of any table: a sure segfault (100000 landed in mapped
    # memory once in this bigger process, and MXNet only refused the bind)
    doc.nodes[act].inputs[0] = (producer[0], 2_000_000_000, producer[2])
    window.shape_form.set_shapes({"data": (8, 784)})
    panel.bench_time.setValue(5)
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.bench_button.click()
    text = panel.status.text()
    assert text.startswith("MXNet crashed") and "Segmentation fault" in text, text
    assert window.isVisible() and not panel.busy
    # the document is repaired and the same window goes on working
    doc.nodes[act].inputs[0] = producer
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.bench_button.click()
    assert [r.label for r in panel.bench] == ["original"]


def test_planner_choices_are_remembered_between_runs(make_window, qtbot, settings) -> None:
    from mxexplorer.gui.settings import Settings
    from mxexplorer.gui.window.main_window import MainWindow

    window = make_window(EXAMPLES / "mlp-symbol.json")
    qtbot.waitUntil(lambda: window.memory is not None, timeout=WAIT_MS)
    panel = window.memory
    panel.search.setCurrentIndex(panel.search.findData("original"))
    panel.threshold.setValue(250)
    panel.budget.setValue(1234)
    settings.sync()
    again = MainWindow(Settings(settings._s.fileName()))   # the next run: the same file
    qtbot.addWidget(again)
    again.files.open_path(str(EXAMPLES / "mlp-symbol.json"))
    qtbot.waitUntil(lambda: again.memory is not None, timeout=WAIT_MS)
    choices = again.memory.choices()
    assert choices == {"device": "cpu", "search": "original", "threshold": 250,
                       "budget": 1234.0}
    assert again.memory.search.currentText().startswith("Original")


def test_closing_the_window_mid_search_stops_it_and_its_child(make_window, qtbot) -> None:
    from mxexplorer.core.runtime import isolated
    from tests.gui.conftest import wait_for_workers

    window, panel = _ready(make_window, qtbot)
    panel.search.setCurrentIndex(panel.search.findData("best"))
    panel.start_button.click()
    qtbot.waitUntil(lambda: len(panel.probes) >= 3, timeout=WAIT_MS)
    assert isolated.live_children()
    window.undo_stack.setClean()
    window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)  # the fixture's own
    window.close()
    wait_for_workers(5000)
    assert isolated.live_children() == set()


def test_gpus_this_mxnet_cannot_run_are_listed_greyed_with_the_reason(
        make_window, qtbot, monkeypatch) -> None:
    # a doctor report's six-GPU machine (the cu112 build's kernels, NVRTC 11.2),
    # asked for in a child process as the real device list is
    from tests.core.runtime.test_gpu import SIX_GPUS

    monkeypatch.setenv("MXEXPLORER_RECORDED_GPUS", SIX_GPUS)
    window, panel = _ready(make_window, qtbot)
    panel.set_choices({"device": "gpu:4"})             # remembered from another machine
    panel.load_devices()
    qtbot.waitUntil(lambda: panel.device.count() == 7, timeout=WAIT_MS)
    model = panel.device.model()
    enabled = [model.item(k).isEnabled() for k in range(7)]
    assert enabled == [True, True, True, True, True, False, False]
    assert panel.device.itemText(5) == ("GPU 4: NVIDIA H100 80GB HBM3 (9.0, 76.0 of 80.0 GiB "
                                        "free, cannot run this MXNet)")
    tip = panel.device.itemData(5, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("GPU 4 (NVIDIA H100 80GB HBM3) cannot run this MXNet: its kernels")
    assert "container 24.06" in tip and tip == panel.device_note.toolTip().split("\n\n")[0]
    assert "MXNET_USE_FUSION=0" in panel.device.itemData(4, Qt.ItemDataRole.ToolTipRole)
    assert panel.device.currentData() == "cpu"          # never a GPU it cannot run on
    assert not panel.device_note.isHidden()
    assert panel.device_note.text() == "GPUs 4, 5 cannot run this MXNet (why: hover)"
    assert panel.device_note.toolTip().startswith("GPU 4 (NVIDIA H100 80GB HBM3) cannot run "
                                                  "this MXNet: its kernels are built for")
    panel.device.setCurrentIndex(3)                     # a GPU it runs on: chosen
    assert panel.choices()["device"] == "gpu:2"
    # once listed, a remembered greyed GPU is not chosen either (it was, when the list
    # was already in: a race the full suite found)
    panel.set_choices({"device": "gpu:4"})
    assert panel.device.currentData() == "gpu:2"
