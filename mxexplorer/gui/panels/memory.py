"""MemoryPanel: the memory planner and the benchmark, each run in a worker.

Left: controls (device, stages, search, budget) and the outcome.  Middle: cost against
threshold, one point per probe as it finishes, the unplanned baseline as a line, the
best plan as a star, failed probes as red crosses; click a point to preview its tags
in the graph.  Right: the benchmark, original against planned.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core import benchmark, isolated, memplan, symbol_io
from mxexplorer.core.document import GraphDocument
from mxexplorer.core.errors import UserError
from mxexplorer.core.mxnet_env import Device, list_devices
from mxexplorer.core.shapes import Shape
from mxexplorer.gui import workers

ShapesProvider = Callable[[], tuple[dict[str, Shape], str]]


def _devices_job(progress: Any, token: Any) -> list[Device]:
    return list_devices()


class MemoryPanel(QWidget):
    """Signals
    -------
    apply_requested(object): a core edit that puts the plan into the document
    preview_requested(object): ``{node: "True"/"False"}`` tags to preview, or None
    finished(): a search, budget fit or benchmark ended (any way)
    choices_changed(dict): device, search mode, threshold or budget changed (to remember)
    """

    apply_requested = Signal(object)
    preview_requested = Signal(object)
    finished = Signal()
    choices_changed = Signal(dict)

    def __init__(self, document: GraphDocument, shapes: ShapesProvider,
                 parent: QWidget | None = None, choices: dict | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.shapes_provider = shapes
        self.result: memplan.PlanResult | None = None
        self.snapshot: Any = None
        self.bench: list[benchmark.BenchResult] | None = None
        self.fit: memplan.BatchFit | None = None
        self.probes: list[memplan.Probe] = []
        self._job: workers.FunctionWorker | None = None
        self._kind = ""

        self.device = QComboBox()
        self.device.addItem("CPU", "cpu")
        self.stages = QComboBox()
        self.stages.addItem("Automatic (cut vertices)", "auto")
        self.stages.addItem("The file's mirror_stage tags", "file")
        if memplan.file_stages(document):
            self.stages.setCurrentIndex(1)
        self.search = QComboBox()
        self.search.addItem("Best (sweep + local search)", "best")
        self.search.addItem("Original memonger (9 probes)", "original")
        self.search.addItem("One threshold", "threshold")
        self.threshold = QSpinBox()
        self.threshold.setRange(0, 10**6)
        self.threshold.setSuffix(" MB")
        self.threshold.setValue(100)
        self.budget = QDoubleSpinBox()
        self.budget.setRange(1, 10**7)
        self.budget.setDecimals(0)
        self.budget.setSuffix(" MB")
        self.budget.setValue(8192)
        self.start_button = QPushButton("Plan")
        self.start_button.setToolTip("Search for the mirroring plan with the lowest memory")
        self.start_button.clicked.connect(self.start_plan)
        self.fit_button = QPushButton("Largest batch")
        self.fit_button.setToolTip("The largest batch that trains within the budget, "
                                   "unplanned and planned")
        self.fit_button.clicked.connect(self.start_fit)
        self.bench_button = QPushButton("Benchmark")
        self.bench_button.setToolTip("Time training and inference, original against planned")
        self.bench_button.clicked.connect(self.start_bench)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        self.apply_button = QPushButton("Apply tags")
        self.apply_button.setToolTip("Put the plan's tags into the document (one undo step)")
        self.apply_button.clicked.connect(self._on_apply)
        self.export_button = QPushButton("Export planned JSON\u2026")
        self.export_button.clicked.connect(self.export_dialog)
        for b in (self.apply_button, self.export_button):
            b.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        self.status = QLabel("Choose the stages and press Plan.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self._redraw_timer = QTimer(self, singleShot=True, interval=100)
        self._redraw_timer.timeout.connect(self._redraw)
        self._wanted_device = "cpu"
        self._budget_given = False
        self.set_choices(choices or {})
        self.device.currentIndexChanged.connect(self._on_choice)
        self.search.currentIndexChanged.connect(self._on_choice)
        self.threshold.valueChanged.connect(self._on_choice)
        self.budget.valueChanged.connect(self._on_choice)

        form = QFormLayout()
        form.addRow("device", self.device)
        form.addRow("stages", self.stages)
        threshold_row = QHBoxLayout()
        threshold_row.addWidget(self.search, 1)
        threshold_row.addWidget(self.threshold)
        form.addRow("search", threshold_row)
        budget_row = QHBoxLayout()
        budget_row.addWidget(self.budget, 1)
        budget_row.addWidget(self.fit_button)
        form.addRow("budget", budget_row)
        buttons = QHBoxLayout()
        for b in (self.start_button, self.bench_button, self.cancel_button):
            buttons.addWidget(b)
        buttons2 = QHBoxLayout()
        buttons2.addWidget(self.apply_button)
        buttons2.addWidget(self.export_button)
        left = QVBoxLayout()
        left.addLayout(form)
        left.addLayout(buttons)
        left.addLayout(buttons2)
        left.addWidget(self.progress)
        left.addWidget(self.status, 1)

        pg.setConfigOptions(antialias=True, background="w", foreground="#333")
        self.plot = pg.PlotWidget()
        self.plot.setLabel("bottom", "threshold", units="MB")
        self.plot.setLabel("left", "training memory", units="MB")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.addLegend(offset=(-10, 10))
        self.baseline_line = pg.InfiniteLine(angle=0, pen=pg.mkPen("#888", width=1.5,
                                                                    style=Qt.PenStyle.DashLine),
                                             label="unplanned", labelOpts={"position": 0.1})
        self.baseline_line.hide()
        self.plot.addItem(self.baseline_line)
        self.points = pg.ScatterPlotItem(size=8, pen=pg.mkPen("#1f5fa8"),
                                         brush=pg.mkBrush("#5b9bd5"), name="threshold probe")
        self.local_points = pg.ScatterPlotItem(size=6, pen=None, brush=pg.mkBrush("#9ab"),
                                               name="local search")
        self.failed_points = pg.ScatterPlotItem(size=10, symbol="x", pen=pg.mkPen("#c00000"),
                                                brush=pg.mkBrush("#c00000"), name="failed")
        self.best_point = pg.ScatterPlotItem(size=18, symbol="star", pen=pg.mkPen("#7a5200"),
                                             brush=pg.mkBrush("#ffbf00"), name="best plan")
        for item in (self.points, self.local_points, self.failed_points, self.best_point):
            self.plot.addItem(item)
        self.points.sigClicked.connect(self._on_point_clicked)
        self.local_points.sigClicked.connect(self._on_point_clicked)
        self.best_point.sigClicked.connect(self._on_point_clicked)

        self.bench_plot = pg.PlotWidget()
        self.bench_plot.setLabel("left", "ms / training iteration")
        self.bench_plot.getAxis("bottom").setTicks([[(0, "original"), (1, "planned")]])
        self.bench_bars = pg.BarGraphItem(x=[], height=[], width=0.6, brush="#5b9bd5")
        self.bench_plot.addItem(self.bench_bars)
        self.bench_label = QLabel("Benchmark: not run yet.")
        self.bench_label.setWordWrap(True)
        right = QVBoxLayout()
        right.addWidget(self.bench_plot, 1)
        right.addWidget(self.bench_label)

        row = QHBoxLayout(self)
        row.setContentsMargins(4, 4, 4, 4)
        left_box = QWidget()
        left_box.setLayout(left)
        left_box.setMaximumWidth(380)
        right_box = QWidget()
        right_box.setLayout(right)
        right_box.setMaximumWidth(320)
        row.addWidget(left_box)
        row.addWidget(self.plot, 2)
        row.addWidget(right_box, 1)

    # ------------------------------------------------------------- choices
    def choices(self) -> dict:
        """What the user picked, to remember between runs (stages follow the file)."""
        return {"device": self.device.currentData() or self._wanted_device,
                "search": self.search.currentData(), "threshold": self.threshold.value(),
                "budget": self.budget.value()}

    def set_choices(self, choices: dict) -> None:
        """Put remembered choices back (a device not seen yet is chosen once listed)."""
        try:
            if "device" in choices:
                self._wanted_device = str(choices["device"])
                index = self.device.findData(self._wanted_device)
                if index >= 0:
                    self.device.setCurrentIndex(index)
            index = self.search.findData(choices.get("search"))
            if index >= 0:
                self.search.setCurrentIndex(index)
            if "threshold" in choices:
                self.threshold.setValue(int(choices["threshold"]))
            if "budget" in choices:
                self.budget.setValue(float(choices["budget"]))
                self._budget_given = True
        except (TypeError, ValueError):
            pass                               # a damaged entry: the defaults stay

    @Slot()
    def _on_choice(self) -> None:
        if self.sender() is self.device and self.device.currentData():
            self._wanted_device = self.device.currentData()
        if self.sender() is self.budget:
            self._budget_given = True
        self.choices_changed.emit(self.choices())

    # ------------------------------------------------------------- devices
    def load_devices(self) -> None:
        """Ask MXNet for the devices (after it has loaded), on a worker."""
        worker = workers.FunctionWorker(_devices_job)
        worker.finished.connect(self._on_devices)
        workers.start(self, worker)
        self._devices_job = worker

    @Slot(object)
    def _on_devices(self, devices: list[Device]) -> None:
        wanted = self._wanted_device
        self.device.blockSignals(True)
        self.device.clear()
        for dev in devices:
            self.device.addItem(dev.label, dev.spec)
        index = self.device.findData(wanted)
        self.device.setCurrentIndex(max(index, 0))
        self.device.blockSignals(False)
        chosen = next((d for d in devices if d.spec == self.device.currentData()), None)
        if chosen is not None and chosen.kind == "gpu" and chosen.free_bytes \
                and not self._budget_given:
            self.budget.blockSignals(True)     # the default budget: that GPU's free memory
            self.budget.setValue(chosen.free_bytes / 2**20)
            self.budget.blockSignals(False)

    # ------------------------------------------------------------- jobs
    @property
    def busy(self) -> bool:
        return self._job is not None

    def _shapes(self) -> tuple[dict[str, Shape], str] | None:
        try:
            given, dtype = self.shapes_provider()
        except UserError as exc:
            self._set_status(str(exc), error=True)
            return None
        if not given:
            self._set_status("Give the input shapes in the Input shapes panel first.",
                             error=True)
            return None
        return given, dtype

    def _run(self, kind: str, job: Callable[..., Any]) -> workers.FunctionWorker:
        self.cancel()
        worker = workers.FunctionWorker(job)
        worker.progress.connect(self._on_progress)
        worker.partial.connect(self._on_probe)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        self._job, self._kind = worker, kind
        self._set_running(True)
        workers.start(self, worker)
        return worker

    def start_plan(self) -> None:
        got = self._shapes()
        if got is None:
            return
        given, dtype = got
        snap = self.document.snapshot()
        ctx, stages = self.device.currentData(), self.stages.currentData()
        mode = self.search.currentData()
        threshold = self.threshold.value() if mode == "threshold" else None
        mode = "best" if mode == "threshold" else mode
        self.snapshot = snap
        self.result = None
        self.probes = []
        self._redraw()
        self.preview_requested.emit(None)
        holder: dict[str, Any] = {}

        def job(progress: Any, token: Any) -> memplan.PlanResult:
            return isolated.call(memplan.plan, snap, given, ctx, stages, threshold, mode,
                                 dtype=dtype, progress=progress, token=token,
                                 callbacks={"on_probe": holder["emit"]}, what="planning")

        worker = self._run("plan", job)
        holder["emit"] = worker.partial.emit
        self._set_status(f"Planning on {self.device.currentText()}\u2026")

    def start_fit(self) -> None:
        got = self._shapes()
        if got is None:
            return
        given, _ = got
        snap = self.document.snapshot()
        ctx, stages, budget = self.device.currentData(), self.stages.currentData(), \
            self.budget.value()

        def job(progress: Any, token: Any) -> memplan.BatchFit:
            return isolated.call(memplan.largest_batch, snap, given, budget, ctx, stages,
                                 progress=progress, token=token,
                                 what="the batch-size search")

        self._run("fit", job)
        self._set_status(f"Looking for the largest batch within {budget:.0f} MB\u2026")

    def start_bench(self) -> None:
        got = self._shapes()
        if got is None:
            return
        given, _ = got
        snap = self.document.snapshot()
        plan = self.result if self.result is not None and self.result.best is not None \
            else None
        plan_snap = self.snapshot
        ctx = self.device.currentData()

        def job(progress: Any, token: Any) -> list[benchmark.BenchResult]:
            planned = memplan.planned_json(plan_snap, plan, indent=None) \
                if plan is not None and plan_snap is not None else None
            return isolated.call(benchmark.compare, snap.json, planned, given, ctx,
                                 progress=progress, token=token, what="the benchmark")

        self._run("bench", job)
        self._set_status("Timing training and inference\u2026")

    def cancel(self) -> None:
        if self._job is not None:
            self._job.request_cancel()
            self._job = None
            self._set_running(False)
            self._set_status("Cancelled.")
            self.finished.emit()

    def _set_running(self, on: bool) -> None:
        for b in (self.start_button, self.fit_button, self.bench_button):
            b.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        self.progress.setRange(0, 0 if on else 1)
        self.progress.setValue(0)

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status.setStyleSheet("color: #b00000;" if error else "")
        self.status.setText(text)

    def _mine(self) -> bool:
        return self._job is not None and self.sender() is self._job

    @Slot(int, int, str)
    def _on_progress(self, done: int, total: int, message: str) -> None:
        if not self._mine():
            return
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.status.setText(message)

    @Slot(object)
    def _on_probe(self, probe: memplan.Probe) -> None:
        if not self._mine():
            return
        self.probes.append(probe)
        if not self._redraw_timer.isActive():   # at most ~10 redraws a second
            self._redraw_timer.start()

    @Slot(object)
    def _on_finished(self, result: Any) -> None:
        if not self._mine():
            return
        self._job = None
        self._set_running(False)
        if self._kind == "plan":
            self.result = result
            self._show_plan()
        elif self._kind == "fit":
            self.fit = result
            self._set_status(f"Within {result.budget_mb:.0f} MB: batch "
                             f"{result.unplanned_batch} unplanned "
                             f"({result.unplanned_mb or 0:.0f} MB), batch "
                             f"{result.planned_batch} planned ({result.planned_mb or 0:.0f} MB).")
        else:
            self.bench = result
            self._show_bench()
        self.finished.emit()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if not self._mine():
            return
        self._job = None
        self._set_running(False)
        self._set_status(message.strip().splitlines()[-1], error=True)
        self.finished.emit()

    # ------------------------------------------------------------- showing
    @staticmethod
    def _probe_x(probe: memplan.Probe, best: float) -> float | None:
        """Where a probe sits on the threshold axis (local-search probes: at ``best``,
        the best threshold's)."""
        if probe.threshold_mb is not None:
            return float(probe.threshold_mb)
        return best if probe.kind == "local" else None

    def _best_threshold(self) -> float:
        ok = [p for p in self.probes if p.ok and p.threshold_mb is not None]
        if not ok:
            return 0.0
        return float(min(ok, key=lambda p: p.cost_mb or 0).threshold_mb or 0)

    def _redraw(self) -> None:
        base = next((p.cost_mb for p in self.probes if p.kind == "baseline"), None)
        if base is not None:
            self.baseline_line.setValue(base)
            self.baseline_line.show()
        else:
            self.baseline_line.hide()
        spots, local, failed = [], [], []
        best_x = self._best_threshold()        # once: per probe it was O(n^2) a redraw
        for p in self.probes:
            if p.kind == "baseline":
                continue
            x = self._probe_x(p, best_x)
            if x is None:
                continue
            if not p.ok:
                failed.append({"pos": (x, base or 0), "data": p})
            elif p.kind == "local":
                local.append({"pos": (x, p.cost_mb), "data": p})
            else:
                spots.append({"pos": (x, p.cost_mb), "data": p})
        self.points.setData(spots)
        self.local_points.setData(local)
        self.failed_points.setData(failed)
        ok = [p for p in self.probes if p.ok and p.kind != "baseline"]
        if ok:
            best = min(ok, key=lambda p: p.cost_mb or 0)
            x = self._probe_x(best, best_x) or 0.0
            self.best_point.setData([{"pos": (x, best.cost_mb), "data": best}])
        else:
            self.best_point.setData([])

    def _show_plan(self) -> None:
        result = self.result
        assert result is not None
        self._redraw_timer.stop()
        self._redraw()
        failed = [p for p in result.probes if not p.ok]
        extra = f" {len(failed)} probes failed ({failed[0].reason})." if failed else ""
        best = result.best
        if best is None:
            self._set_status(f"No plan beats the unplanned graph ({result.baseline_mb:.0f} MB)."
                             f" {len(result.probes)} probes.{extra}")
        else:
            saving = 1 - best.cost_mb / result.baseline_mb
            where = f"threshold {best.threshold_mb:.0f} MB" if best.threshold_mb is not None \
                else "local search"
            self._set_status(
                f"<b>{best.cost_mb:.0f} MB</b> instead of {result.baseline_mb:.0f} MB "
                f"(saves {saving:.0%}), {where}; {len(best.kept)} of {len(result.stages)} "
                f"stage nodes kept; recomputes {best.recompute_share:.0%} of a forward pass. "
                f"{len(result.probes)} probes in {result.seconds:.1f} s.{extra}")
            self.preview_requested.emit(best.tags)
        self.apply_button.setEnabled(best is not None)
        self.export_button.setEnabled(best is not None)

    def _show_bench(self) -> None:
        results = self.bench or []
        heights = [r.train.median_ms for r in results]
        self.bench_bars.setOpts(x=np.arange(len(heights)), height=heights, width=0.6)
        self.bench_plot.enableAutoRange()
        self.bench_label.setText("\n".join(r.summary() for r in results))
        if self.result is None:
            self._set_status("Benchmark done.")
        else:
            self._show_plan()

    @Slot(object, object)
    def _on_point_clicked(self, item: Any, points: Any, *_: Any) -> None:
        if not len(points):
            return
        probe = points[0].data()
        if isinstance(probe, memplan.Probe) and probe.ok:
            self.preview_requested.emit(memplan.tags_for_kept(self.document, probe.kept))
            self._set_status(f"Preview: {probe.cost_mb:.0f} MB with {len(probe.kept)} stage "
                             "nodes kept (not applied).")

    # ------------------------------------------------------------- outputs
    def _fresh(self) -> bool:
        if self.result is None or self.result.best is None:
            return False
        if self.result.revision != self.document.revision:
            self._set_status("The graph changed since this plan: plan again.", error=True)
            return False
        return True

    def _on_apply(self) -> None:
        if not self._fresh():
            return
        assert self.result is not None
        from mxexplorer.core.edits import NodesAttrsEdit

        changes = memplan.plan_edits(self.document, self.result)
        self.apply_requested.emit(NodesAttrsEdit(changes, "Apply memory plan"))
        self.preview_requested.emit(None)

    def export_dialog(self) -> None:
        if self.result is None or self.result.best is None:
            return
        base = self.document.path or "planned-symbol.json"
        start = base[:-len("-symbol.json")] + "-planned-symbol.json" \
            if base.endswith("-symbol.json") else base.rsplit(".", 1)[0] + "-planned.json"
        path, _ = QFileDialog.getSaveFileName(self, "Export the planned graph", start,
                                              "MXNet symbol (*-symbol.json *.json)")
        if path:
            self.export_to(path)

    def export_to(self, path: str) -> bool:
        assert self.result is not None and self.snapshot is not None
        try:
            symbol_io.write_atomic(path, memplan.planned_json(self.snapshot, self.result))
        except OSError as exc:
            QMessageBox.warning(self, "Export failed", f"{path}: {exc.strerror or exc}")
            return False
        self._set_status(f"Wrote {path}: load it with mx.sym.load and train as usual.")
        return True

    def stop(self) -> None:
        self.cancel()

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self.stop()
        super().closeEvent(event)
