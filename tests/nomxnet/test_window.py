"""The window on the engine: shapes, memory and MACs in the tree and a plan in the
planner, whether MXNet is there or not; the screenshot a user takes."""
from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtGui import QImage

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.window.main_window import MainWindow
from tests.conftest import EXAMPLES, REPO, WAIT_MS, WAIT_S
from tests.gui.conftest import _drop_edits, wait_for_workers
from tests.nomxnet.conftest import HAS_MXNET

R18 = EXAMPLES / "resnet18_v1-symbol.json"


@pytest.fixture(scope="session", autouse=True)
def gui_process(qapp):
    from mxexplorer.gui.app import configure_threads

    configure_threads(qapp)
    yield


@pytest.fixture
def window(qtbot, tmp_path):
    made = MainWindow(Settings(str(tmp_path / "settings.ini")))
    qtbot.addWidget(made, before_close_func=_drop_edits)
    made.set_document(GraphDocument.open(str(R18)))
    made.show()
    yield made
    made.session.stop()
    wait_for_workers()


def test_the_tree_shows_shapes_and_memory_without_waiting_for_mxnet(window, qtbot) -> None:
    window.session.inputs.set({"data": (2, 3, 224, 224)})
    qtbot.waitUntil(lambda: window.shape_result is not None, timeout=WAIT_MS)
    result = window.shape_result
    assert result.error is None and result.complete and result.inferred_by == "engine"
    doc = window.document
    fc = doc.find("resnetv10_dense0_fwd")[0]
    row = window.tree.node_rows(fc)[0]
    assert row.siblingAtColumn(2).data() == "(2, 1000)"
    texts = [row.siblingAtColumn(c).data() for c in range(window.tree.model.columnCount())]
    assert any(t and "KiB" in str(t) for t in texts), texts          # memory shown
    assert "params 11.69 M" in window.totals.text()


def test_the_planner_plans_and_says_whose_figures(window, qtbot) -> None:
    window.session.inputs.set({"data": (8, 3, 224, 224)})
    qtbot.waitUntil(lambda: window.shape_result is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.memory is not None, timeout=WAIT_MS)
    panel = window.memory
    qtbot.waitUntil(lambda: panel.bench_view is not None, timeout=WAIT_MS)
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    panel.search.setCurrentIndex(panel.search.findData("fast"))
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.start_button.click()
    result = window.session.plans.result
    assert result is not None and result.best is not None
    assert result.costed_by == ("mxnet" if HAS_MXNET else "model")
    label = panel.plan_plot.plot.getAxis("left").labelText
    assert ("MXNet" if HAS_MXNET else "memory model") in label


def test_the_benchmark_says_it_needs_mxnet_and_where_to_get_it(window, qtbot) -> None:
    """Without MXNet the plan works and the benchmark button says why it cannot, with
    what to do on this Python (found on Python 3.13: the bare 'MXNet is not installed'
    in the planner's status, as if the plan had failed); with MXNet it starts timing."""
    window.session.inputs.set({"data": (2, 3, 224, 224)})
    qtbot.waitUntil(lambda: window.shape_result is not None, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: window.memory is not None, timeout=WAIT_MS)
    panel = window.memory
    panel.bench_button.click()
    assert panel.status.text().startswith("Timing training and inference")
    if HAS_MXNET:
        with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
            panel.cancel()
        return
    qtbot.waitUntil(lambda: not panel.status.text().startswith("Timing"), timeout=WAIT_MS)
    text = panel.status.text()
    assert text.startswith("The benchmark needs MXNet (it times MXNet training the graph)")
    assert "Python 3.11" in text and "pip install" in text


def test_a_screenshot_shows_the_shapes(tmp_path) -> None:
    out = tmp_path / "shot.png"
    proc = subprocess.run([sys.executable, "-m", "mxexplorer", str(R18), "--shape",
                           "data=1,3,224,224", "--screenshot", str(out)],
                          capture_output=True, text=True, cwd=str(REPO), timeout=WAIT_S)
    assert proc.returncode == 0, proc.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1400, 860)


def test_file_export_onnx_works_without_mxnet_and_says_what_was_checked(
        window, qtbot, tmp_path) -> None:
    """File > Export ONNX with our converters: the model is written and run in
    onnxruntime; without MXNet the dialog says that no MXNet reference was available
    (with MXNet, that the outputs agree)."""
    from PySide6.QtWidgets import QMessageBox

    from tests.gui.conftest import DialogWatch

    watch = DialogWatch()
    try:
        window.infer_blocking({"data": (1, 3, 32, 32)})
        watch.answer(QMessageBox.StandardButton.Ok)
        window.exports.export_onnx(str(tmp_path / "r18.onnx"))
        qtbot.waitUntil(lambda: bool(watch.seen), timeout=WAIT_MS)
        title, text = watch.take()[0]
    finally:
        watch.close()
    assert title == "ONNX export", text
    assert (tmp_path / "r18.onnx").stat().st_size > 40_000_000
    if HAS_MXNET:
        assert "outputs agree within 0.0001" in text
    else:
        assert "no MXNet reference was available" in text
