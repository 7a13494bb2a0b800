"""The benchmark in the window: its estimate before the timed runs, a progress bar with
the time left, the verdict from the interval, cancel, and a smaller batch offered when
the estimate runs past the benchmark time.  Real MXNet in child processes."""
from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from tests.conftest import EXAMPLES, WAIT_MS


def _window(make_window, qtbot, path, shapes):
    window = make_window(path)
    window.shape_form.set_shapes(shapes)
    qtbot.waitUntil(lambda: window.memory is not None
                    and window.memory.bench_view is not None, timeout=WAIT_MS)
    return window, window.memory


def test_the_estimate_comes_first_then_progress_then_the_verdict(make_window, qtbot,
                                                                  dialogs) -> None:
    """On a busy machine even these 6 runs may take past the 8 s: the question comes
    then, and "Batch 2 anyway" (queued here, unused on a quiet machine) goes on."""
    window, panel = _window(make_window, qtbot, EXAMPLES / "resnet18_v1-symbol.json",
                            {"data": (2, 3, 32, 32)})
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    panel.search.setCurrentIndex(panel.search.findData("original"))
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.start_button.click()
    assert window.session.plans.selected is not None           # original against planned
    view = panel.bench_view
    panel.bench_time.setValue(8)              # about 2 s to start, 6 runs well within
    dialogs.answer(QMessageBox.StandardButton.No)
    seen: list[str] = []
    window.session.plans.bench_job.progress.connect(
        lambda d, t, m: seen.append(view.bar.format()))
    with qtbot.waitSignal(window.session.plans.bench_estimated, timeout=WAIT_MS):
        panel.bench_button.click()
    assert not view.estimate.isHidden() and not view.bar.isHidden()
    assert view.estimate.text().startswith("About ")
    assert " runs of each graph" in view.estimate.text()
    over = window.session.plans.bench_estimate.over_budget
    assert view.estimate.text().endswith(" runs of each graph.") != over
    assert view.bar.format().startswith("about ") and view.bar.format().endswith(" s left")
    qtbot.waitUntil(lambda: window.session.plans.bench is not None, timeout=WAIT_MS)
    assert len(dialogs.take()) == int(over)
    assert any(text.startswith("run ") and text.endswith(" s left") for text in seen), seen
    assert view.estimate.isHidden() and view.bar.isHidden()
    comparison = window.session.plans.bench
    assert [r.label for r in panel.bench] == ["original", "planned"]
    words = view.label.text()
    assert comparison.verdict and comparison.verdict in words
    assert words.startswith(comparison.verdict) and "original: " in words and "ms/iter" in words
    assert all(note in words for note in comparison.notes)


def test_a_benchmark_can_be_cancelled_midway(make_window, qtbot) -> None:
    from mxexplorer.core.runtime import isolated

    window, panel = _window(make_window, qtbot, EXAMPLES / "resnet18_v1-symbol.json",
                            {"data": (2, 3, 64, 64)})
    panel.bench_time.setValue(600)
    with qtbot.waitSignal(window.session.plans.bench_estimated, timeout=WAIT_MS):
        panel.bench_button.click()
    assert isolated.live_children()
    with qtbot.waitSignal(panel.finished, timeout=WAIT_MS):
        panel.cancel_button.click()
    assert panel.status.text() == "Cancelled." and panel.bench is None
    assert panel.bench_view.bar.isHidden() and panel.bench_button.isEnabled()
    qtbot.waitUntil(lambda: not isolated.live_children(), timeout=WAIT_MS)


def test_a_benchmark_over_its_time_offers_a_smaller_batch_first(make_window, qtbot,
                                                                dialogs) -> None:
    """ResNet-18 at batch 16: a round takes seconds here, far past 6 runs in 5 s (a
    real long graph: a few seconds of warm-up is this test's price)."""
    window, panel = _window(make_window, qtbot, EXAMPLES / "resnet18_v1-symbol.json",
                            {"data": (16, 3, 224, 224)})
    panel.bench_time.setValue(5)
    dialogs.answer(QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(window.session.plans.bench_over_budget, timeout=WAIT_MS) as asked:
        panel.bench_button.click()
    estimate = asked.args[0]
    assert estimate.over_budget and estimate.smaller_batch is not None
    assert estimate.smaller_batch < 16 and estimate.batch == 16
    qtbot.waitUntil(lambda: window.session.plans.bench is not None, timeout=WAIT_MS)
    (title, text), = dialogs.take()
    assert title == "The benchmark would run long"
    assert text.startswith("Timing the graph at batch 16 would take about ")
    assert "over the 5 s benchmark time" in text
    assert f"at batch {estimate.smaller_batch} instead" in text
    assert [r.batch for r in panel.bench] == [estimate.smaller_batch]
    # the inputs stay as they were: the smaller batch was for this benchmark only
    assert window.session.inputs.shapes() == {"data": (16, 3, 224, 224)}
