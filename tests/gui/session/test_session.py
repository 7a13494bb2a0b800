"""Panels agree with each other after an edit (issue 11): one session per document.

Each test is one point a user reported; they drive the real window through its widgets.
"""
from __future__ import annotations

import shutil

import mxnet as mx
import pyqtgraph as pg
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMessageBox

from mxexplorer.core.graph import edits, tags
from mxexplorer.core.planning import memplan
from mxexplorer.gui.panels.tree.panel import RECOMPUTE_BRUSH
from mxexplorer.gui.window.windows import all_windows
from tests.conftest import EXAMPLES, REPO, WAIT_MS, WAIT_S

R18 = EXAMPLES / "resnet18_v1-symbol.json"
MLP = EXAMPLES / "mlp-symbol.json"


def _infer(window, qtbot) -> None:
    """Press Infer and wait for a result made for the document as it is now."""
    window.shape_form.infer_button.click()
    qtbot.waitUntil(lambda: window.shape_result is not None
                    and window.shape_result.revision == window.document.revision,
                    timeout=WAIT_MS)


def test_prefix_all_names_then_infer_works(make_window, qtbot) -> None:
    window = make_window(MLP)
    window.shape_form.set_shapes({"data": (8, 784)})
    _infer(window, qtbot)
    window.push_edit(edits.PrefixAllEdit("sha-"))
    _infer(window, qtbot)
    result = window.shape_result
    assert result.error is None and result.complete, result.error
    assert result.inputs_used["sha-data"] == (8, 784)
    assert "sha-data" in window.shape_form.rows and "data" not in window.shape_form.rows
    # and back: the shapes follow the undo too
    window.undo_stack.undo()
    _infer(window, qtbot)
    assert window.shape_result.error is None
    assert window.shape_result.inputs_used["data"] == (8, 784)


def test_changing_the_batch_infers_again(make_window, qtbot) -> None:
    window = make_window(MLP)
    window.shape_form.set_shapes({"data": (8, 784)})
    _infer(window, qtbot)
    window.shape_form.batch.setValue(3)
    qtbot.waitUntil(lambda: window.shape_result.inputs_used.get("data") == (3, 784),
                    timeout=WAIT_MS)
    fc1 = window.document.find("fc1")[0]
    row = window.tree.node_rows(fc1)[0]
    assert row.siblingAtColumn(2).data().startswith("(3,")


def test_a_result_for_an_older_graph_is_shown_as_stale(make_window, qtbot) -> None:
    window = make_window(MLP)
    window.shape_form.auto.setChecked(False)
    window.shape_form.set_shapes({"data": (8, 784)})
    _infer(window, qtbot)
    pane = window.graph_pane
    qtbot.waitUntil(lambda: pane.build is not None and not pane.busy_now, timeout=WAIT_MS)
    assert pane.build.label_items and not window.tree.stale_label.isVisible()
    fresh_colour = pane.build.label_items[0].brush().color().name()
    fc1 = window.document.find("fc1")[0]
    relu1 = window.document.find("relu1")[0]
    window.push_edit(edits.set_attr((relu1,), "act_type", "tanh"))
    # the tree keeps the old shapes, marked as such
    assert window.tree.stale_label.isVisible()
    assert "before your last edit" in window.tree.stale_label.text()
    row = window.tree.node_rows(fc1)[0]
    assert row.siblingAtColumn(2).data() == "(8, 64)"
    assert row.siblingAtColumn(2).data(Qt.ItemDataRole.ForegroundRole) is not None
    # the graph keeps its shape labels, greyed, once it is drawn again
    qtbot.waitUntil(lambda: not pane.busy_now, timeout=WAIT_MS)
    assert pane.build.label_items
    assert pane.build.label_items[0].brush().color().name() != fresh_colour
    # the status bar keeps its totals and says they are old
    assert "params" in window.totals.text() and "before your last edit" in \
        window.totals.text()
    # inferring again clears every mark
    _infer(window, qtbot)
    assert not window.tree.stale_label.isVisible()
    assert "before your last edit" not in window.totals.text()
    assert window.tree.node_rows(fc1)[0].siblingAtColumn(2).data() == "(8, 64)"
    assert window.tree.node_rows(fc1)[0].siblingAtColumn(2).data(
        Qt.ItemDataRole.ForegroundRole) is None


from PySide6.QtCore import Qt  # noqa: E402


def _planner(make_window, qtbot, path=R18, shape=(4, 3, 224, 224)):
    window = make_window(path)
    window.shape_form.set_shapes({"data": shape})
    _infer(window, qtbot)
    qtbot.waitUntil(lambda: window.memory is not None, timeout=WAIT_MS)
    panel = window.memory
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    panel.search.setCurrentIndex(panel.search.findData("original"))
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.start_button.click()
    return window, panel


def _click_point(panel, probe) -> None:
    """Click the plotted point of ``probe`` (pyqtgraph's own click signal)."""
    for plot in panel.findChildren(pg.PlotWidget):
        for item in plot.getPlotItem().items:
            if isinstance(item, pg.ScatterPlotItem):
                for spot in item.points():
                    if spot.data() == probe:
                        item.sigClicked.emit(item, [spot], None)
                        return
    raise AssertionError(f"no point for {probe}")


def _non_best_point(panel):
    result = panel.result
    best = result.best
    return next(p for p in result.probes if p.ok and p.kind != "baseline"
                and p.kept != best.kept and p.cost_mb > best.cost_mb)


def _tags(nodes) -> dict:
    return {i: n.attrs[tags.FORCE_MIRRORING] for i, n in enumerate(nodes)
            if tags.FORCE_MIRRORING in n.attrs}


def test_apply_and_export_use_the_point_the_user_clicked(make_window, qtbot,
                                                         tmp_path) -> None:
    window, panel = _planner(make_window, qtbot)
    doc = window.document
    point = _non_best_point(panel)
    _click_point(panel, point)
    want = {i: v for i, v in memplan.tags_for_kept(doc, point.kept).items()
            if not doc.nodes[i].is_variable}
    assert f"{point.cost_mb:.0f} MB" in panel.status.text()
    out = tmp_path / "planned-symbol.json"
    assert panel.export_to(str(out))
    exported = {name: a["__force_mirroring__"] for name, a in
                mx.sym.load(str(out)).attr_dict().items() if "__force_mirroring__" in a}
    assert exported == {doc.nodes[i].name: v for i, v in want.items()}
    panel.apply_button.click()
    assert _tags(doc.nodes) == want
    # applied: the tree colours what the document's tags recompute, no preview left
    assert not window.tree.model.preview
    recomputed = next(i for i, v in want.items() if v == "True")
    assert window.tree.node_rows(recomputed)[0].data(Qt.ItemDataRole.BackgroundRole) \
        == RECOMPUTE_BRUSH
    assert "applied" in panel.status.text() and "not applied" not in panel.status.text()
    window.undo_stack.undo()
    assert _tags(doc.nodes) == {}
    assert "not applied" in panel.status.text()


def test_an_edit_ends_the_preview_of_an_older_plan(make_window, qtbot) -> None:
    window, panel = _planner(make_window, qtbot)
    doc = window.document
    assert window.tree.model.preview            # the best plan is previewed
    conv = next(i for i, n in enumerate(doc.nodes) if n.op == "Convolution")
    window.push_edit(edits.set_attr((conv,), "num_filter", "32"))
    assert not window.tree.model.preview
    assert not panel.apply_button.isEnabled()


def test_benchmark_after_apply_compares_untagged_with_the_plan(make_window, qtbot) -> None:
    window, panel = _planner(make_window, qtbot, R18, (4, 3, 64, 64))
    best = panel.result.best
    assert best is not None
    panel.apply_button.click()
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.bench_button.click()
    rows = {r.label: r for r in panel.bench}
    assert set(rows) == {"original", "planned"}
    assert abs(rows["original"].planned_mb - panel.result.baseline_mb) <= 1
    assert abs(rows["planned"].planned_mb - best.cost_mb) <= 1


def test_renaming_a_gluon_layer_carries_its_weights(make_window, qtbot, zoo,
                                                    tmp_path) -> None:
    source = zoo("resnet18_v1")
    for suffix in ("-symbol.json", "-0000.params"):
        shutil.copy(str(source).replace("-symbol.json", suffix),
                    tmp_path / f"net{suffix}")
    window = make_window(tmp_path / "net-symbol.json")
    doc = window.document
    conv = doc.find("resnetv10_conv0_fwd")[0]
    window.selection.set([conv])
    window.inspector.name_edit.setText("stem_conv0_fwd")
    window.inspector.rename_button.click()
    names = {n.name for n in doc.nodes}
    assert "stem_conv0_weight" in names and "resnetv10_conv0_weight" not in names
    bn = doc.find("resnetv10_batchnorm0_fwd")[0]
    window.selection.set([bn])
    window.inspector.name_edit.setText("stem_bn_fwd")
    window.inspector.rename_button.click()
    names = {n.name for n in doc.nodes}
    assert {"stem_bn_gamma", "stem_bn_beta", "stem_bn_running_mean",
            "stem_bn_running_var"} <= names
    assert window.files.write(str(tmp_path / "renamed-symbol.json"))
    sym, args, aux = mx.model.load_checkpoint(str(tmp_path / "renamed"), 0)
    assert "stem_conv0_weight" in args and "stem_bn_running_mean" in aux
    exe = sym.simple_bind(mx.cpu(), grad_req="null", data=(1, 3, 224, 224))
    exe.copy_params_from(args, aux)          # every array finds its place
    exe.forward(is_train=False)
    assert exe.outputs[0].shape == (1, 1000)


def test_quit_closes_every_window_asking_for_each_modified_one(make_window, qtbot,
                                                               dialogs) -> None:
    first = make_window(MLP)
    second = make_window(R18)
    fc1 = first.document.find("fc1")[0]
    first.push_edit(edits.set_attr((fc1,), "num_hidden", "48"))
    assert first.commands['quit'].shortcut() == QKeySequence("Ctrl+Q")
    for window in (first, second):          # the fixture closes (and deletes) them
        window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, False)
    dialogs.answer(QMessageBox.StandardButton.Discard)
    first.commands['quit'].trigger()
    qtbot.waitUntil(lambda: not first.isVisible() and not second.isVisible(), timeout=WAIT_MS)
    asked = dialogs.take()
    assert len(asked) == 1 and "mlp-symbol.json" in asked[0][1]
    assert all_windows() == []


def test_ctrl_y_redoes_as_on_other_desktops(make_window) -> None:
    window = make_window(MLP)
    keys = [k.toString() for k in window.commands['redo'].shortcuts()]
    assert "Ctrl+Y" in keys and "Ctrl+Shift+Z" in keys
    fc1 = window.document.find("fc1")[0]
    window.push_edit(edits.set_attr((fc1,), "num_hidden", "48"))
    window.commands['undo'].trigger()
    assert window.document.nodes[fc1].attrs["num_hidden"] != "48"
    window.commands['redo'].trigger()
    assert window.document.nodes[fc1].attrs["num_hidden"] == "48"


QUIT_SCRIPT = """
import sys
from PySide6.QtCore import QTimer
from mxexplorer.gui.app import _flush_deletes, ensure_app
from mxexplorer.gui.window.main_window import MainWindow
from mxexplorer.gui.settings import Settings

app = ensure_app()
window = MainWindow(Settings(sys.argv[2]))
window.show()
window.files.open_anywhere(sys.argv[1], {})
state = {"asked": False}

def step():
    if window.files.opening or window.document is None:
        return
    if not state["asked"]:
        state["asked"] = True
        window.exports.compare_with(sys.argv[1])
        return
    if window.exports.compare_windows and window.exports.compare_windows[0].isVisible():
        timer.stop()
        print("compare window open", flush=True)
        window.commands['quit'].trigger()

timer = QTimer(interval=50)
timer.timeout.connect(step)
timer.start()
code = app.exec()
_flush_deletes()                 # as mxexplorer.gui.app.run ends
print("ended", code, flush=True)
"""


def test_quit_closes_compare_windows_too_and_the_process_ends(tmp_path) -> None:
    """In a process of its own, as a user runs it: File > Quit with a Compare window
    open must end the event loop (the Compare window kept the process alive)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", QUIT_SCRIPT, str(MLP),
                           str(tmp_path / "settings.ini")], capture_output=True, text=True,
                          cwd=str(REPO), timeout=WAIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["compare window open", "ended 0"], done.stdout


SLOW_JOB_SCRIPT = """
import time
from mxexplorer.gui.app import _flush_deletes, configure_threads, ensure_app
from mxexplorer.gui.workers import JobSlot

app = ensure_app()
configure_threads(app)
slot = JobSlot()
slot.start(lambda progress, token: time.sleep(1.5))   # a job that never looks at its token
time.sleep(0.1)
_flush_deletes(wait_ms=100)      # as mxexplorer.gui.app.run ends, past its patience
print("ended", flush=True)
"""


def test_the_process_ends_cleanly_when_a_job_outlasts_the_wait(tmp_path) -> None:
    """A background job still running when the window's process ends is waited for:
    Qt aborts the process when a running QThread is destroyed (found: a screenshot of a
    261,001-node graph ended in SIGABRT while its step chart was still being made)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", SLOW_JOB_SCRIPT], capture_output=True,
                          text=True, cwd=str(REPO), timeout=WAIT_S)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["ended"], done.stdout
    assert "still running" not in done.stderr
