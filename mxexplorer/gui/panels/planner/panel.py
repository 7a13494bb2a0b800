"""MemoryPanel: the memory planner's controls, its plots and the benchmark.

Left: the controls and what happened.  Middle: the probes as memory against recompute
(:class:`FrontPlot`) and by threshold (:class:`PlanPlot`), and memory over a step
(:class:`StepChart`); a clicked point, or the least-recompute plan within the budget,
becomes the session's selected plan, which Apply, Export and Benchmark use.  Right:
the benchmark (:class:`BenchView`).  The jobs run in the session; this panel shows them.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QProgressBar,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core.planning import memplan, plansearch
from mxexplorer.core.planning.benchresults import Estimate
from mxexplorer.core.runtime import files
from mxexplorer.core.runtime.devices import Device
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.bridge import disconnect_quietly
from mxexplorer.gui.host import DialogHost
from mxexplorer.gui.mxnet_loader import loader
from mxexplorer.gui.panels.base import SessionPanel
from mxexplorer.gui.panels.planner import choices
from mxexplorer.gui.panels.planner.bench_view import BenchView, over_budget_question
from mxexplorer.gui.panels.planner.device_box import DeviceBox
from mxexplorer.gui.panels.planner.front_plot import FrontPlot
from mxexplorer.gui.panels.planner.plan_plot import PlanPlot
from mxexplorer.gui.panels.planner.step_chart import StepChart
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.text import plain_label
from mxexplorer.gui.theme import set_role

#: the column of a plan's words: a plan's explanation (about 450 characters) in 12
#: lines, within the controls' height
WORDS_WIDTH = 250


class MemoryPanel(SessionPanel):
    """Signals
    -------
    finished(): a search, budget fit or benchmark ended (any way)
    built(): the plots are in (they are made on later turns of the event loop: both
        at once stalled the window 0.1 s)
    """

    finished = Signal()
    built = Signal()

    def __init__(self, session: DocumentSession, settings: Settings, host: DialogHost,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, host, parent)
        self.device = DeviceBox()
        self.device_note = self.device.note
        self.device.listed.connect(self._on_devices_listed)
        self.stages = choices.stages_box(bool(memplan.file_stages(session.document)))
        self.search = choices.search_box()
        self.threshold = choices.threshold_box()
        self.budget = choices.budget_box()
        self.start_button = QPushButton("Plan")
        self.start_button.setToolTip("Search for the mirroring plan with the lowest memory")
        self.start_button.clicked.connect(self.start_plan)
        self.fit_button = QPushButton("Largest batch")
        self.fit_button.setToolTip("The largest batch that trains within the budget, "
                                   "unplanned and planned")
        self.fit_button.clicked.connect(self.start_fit)
        self.least_button = QPushButton("Least recompute")
        self.least_button.setToolTip("Select the plan recomputing least within the budget")
        self.least_button.clicked.connect(self.select_within_budget)
        self.bench_button = QPushButton("Benchmark")
        self.bench_button.setToolTip("Time training and inference: the graph without any "
                                     "plan against the selected plan")
        self.bench_button.clicked.connect(self._on_bench_clicked)
        self.bench_time = choices.bench_time_box()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.setEnabled(False)
        self.apply_button = QPushButton("Apply tags")
        self.apply_button.setToolTip("Put the selected plan's tags into the document "
                                     "(one undo step)")
        self.apply_button.clicked.connect(self._on_apply)
        self.export_button = QPushButton("Export planned JSON\u2026")
        self.export_button.setToolTip("Write the graph with the selected plan's tags")
        self.export_button.clicked.connect(self.export_dialog)
        self.progress = QProgressBar()
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        self.status = plain_label("Choose the stages and press Plan.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self._budget_given = False
        self._over_budget: Estimate | None = None
        self.set_choices(settings.planner_choices())
        self.device.currentIndexChanged.connect(self._on_choice)
        self.search.currentIndexChanged.connect(self._on_choice)
        self.threshold.valueChanged.connect(self._on_choice)
        self.budget.valueChanged.connect(self._on_choice)

        form = QFormLayout()
        form.addRow("device", self.device)
        form.addRow("", self.device_note)
        form.addRow("stages", self.stages)
        form.addRow("search", choices.row(self.search, self.threshold))
        form.addRow("budget", choices.row(self.budget, self.least_button, self.fit_button))
        form.addRow("benchmark", self.bench_time)
        buttons = choices.row(self.start_button, self.bench_button, self.cancel_button,
                              stretch_first=False)
        buttons2 = choices.row(self.apply_button, self.export_button, stretch_first=False)
        left = QVBoxLayout()
        left.setContentsMargins(0, 0, 0, 0)
        left.addLayout(form)
        left.addLayout(buttons)
        left.addLayout(buttons2)
        left.addWidget(self.progress)
        left.addStretch(1)
        self.controls = QWidget()
        self.controls.setLayout(left)
        self.controls.setMaximumWidth(380)
        scroll = choices.scrolled(self.controls, 380)
        # the words of a plan beside the controls, not under them: under them a plan's
        # explanation was cut off below the buttons in a first window's short dock
        self.status.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.words = choices.scrolled(self.status)
        self.words.setMinimumWidth(WORDS_WIDTH)
        self.words.setMaximumWidth(WORDS_WIDTH + 80)
        self.row = QHBoxLayout(self)
        self.row.setContentsMargins(4, 4, 4, 4)
        self.row.addWidget(scroll)
        self.row.addWidget(self.words, 1)
        self.plan_plot: PlanPlot | None = None
        self.front_plot: FrontPlot | None = None
        self.bench_view: BenchView | None = None
        self._parts_timer = QTimer(self, singleShot=True, interval=0)
        self._parts_timer.timeout.connect(self._build_part)

        plans = session.plans
        for job in plans.jobs():
            job.started.connect(self._on_job_started)
            job.progress.connect(self._on_progress)
            job.failed.connect(self._on_failed)
            job.cancelled.connect(self._on_cancelled)
            job.ended.connect(self._on_ended)
        plans.plan_job.partial.connect(self._on_probe)
        session.plans.changed.connect(self._on_plan_changed)
        session.plans.selected_changed.connect(self._on_selected_plan_changed)
        session.plans.bench_changed.connect(self._on_bench_changed)
        session.plans.bench_estimated.connect(self._on_bench_estimated)
        session.plans.bench_over_budget.connect(self._on_bench_over_budget)
        session.plans.fit_changed.connect(self._on_fit_changed)
        loader().state_changed.connect(self._on_mxnet_state)
        if loader().ready:
            self.load_devices()
        self._set_running(True)                # until the plots are in
        self._parts_timer.start()

    @Slot()
    def _build_part(self) -> None:
        """The plot, then the benchmark view, each on its own turn."""
        if self.plan_plot is None:
            self.front_plot, self.plan_plot = FrontPlot(), PlanPlot()
            self.step_chart, self.plots = StepChart(self.session), QTabWidget()
            for tab, title, tip in (
                    (self.front_plot, "Memory vs recompute", "Every plan costed: memory "
                     "against the share of the forward pass recomputed; click one"),
                    (self.plan_plot, "Thresholds", "memonger's view: memory by threshold"),
                    (self.step_chart, "Over a step", "Memory at each step of one training "
                     "iteration, with the selected plan")):
                self.plots.setTabToolTip(self.plots.addTab(tab, title), tip)
            for plot in (self.front_plot, self.plan_plot):
                plot.probe_clicked.connect(self._on_probe_clicked)
            self.row.addWidget(self.plots, 2)
            self._parts_timer.start()
            return
        self.bench_view = BenchView(self.session.plans)
        # a tab beside the plots, not a column of its own: the plots kept too little
        # room in a first window's planner (1280 px wide, beside the controls and words)
        self.plots.addTab(self.bench_view, "Benchmark")
        self._set_running(self.session.plans.busy)
        self._on_plan_changed()
        self._on_selected_plan_changed()
        self.built.emit()

    def needed_height(self) -> int:
        """The height that shows every control (and so a plan's words) unscrolled."""
        margins = self.row.contentsMargins()
        return self.controls.sizeHint().height() + margins.top() + margins.bottom()

    # ------------------------------------------------------------ what tests read
    @property
    def result(self) -> memplan.PlanResult | None:
        return self.session.plans.result

    @property
    def bench(self) -> list[Any] | None:
        """Each graph's timing of the last benchmark."""
        comparison = self.session.plans.bench
        return list(comparison.results) if comparison is not None else None

    @property
    def probes(self) -> list[memplan.Probe]:
        return self.plan_plot.probes if self.plan_plot is not None else []

    @property
    def busy(self) -> bool:
        return self.session.plans.busy

    # ------------------------------------------------------------- choices
    def choices(self) -> dict:
        """What the user picked, to remember between runs (stages follow the file)."""
        return {"device": self.device.currentData() or self.device.wanted,
                "search": self.search.currentData(), "threshold": self.threshold.value(),
                "budget": self.budget.value()}

    def set_choices(self, choices: dict) -> None:
        """Put remembered choices back (a device not seen yet is chosen once listed)."""
        try:
            if "device" in choices:
                self.device.choose(str(choices["device"]))
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
        if self.sender() is self.budget:
            self._budget_given = True
        self.settings.set_planner_choices(self.choices())

    # ------------------------------------------------------------- devices
    @Slot(str)
    def _on_mxnet_state(self, state: str) -> None:
        if state == "ready":
            self.load_devices()

    def load_devices(self) -> None:
        """Ask MXNet for the devices (after it has loaded), on a worker."""
        self.device.load()

    @Slot(list)
    def _on_devices_listed(self, devices: list[Device]) -> None:
        chosen = next((d for d in devices if d.spec == self.device.currentData()), None)
        if chosen is not None and chosen.kind == "gpu" and chosen.free_bytes \
                and not self._budget_given:
            self.budget.blockSignals(True)     # the default budget: that GPU's free memory
            self.budget.setValue(chosen.free_bytes / 2**20)
            self.budget.blockSignals(False)

    # ------------------------------------------------------------- jobs
    def _start(self, what: str, *args: Any) -> bool:
        try:
            getattr(self.session.plans, what)(*args)
        except UserError as exc:
            self._set_status(str(exc), error=True)
            return False
        return True

    def start_plan(self) -> None:
        mode = self.search.currentData()
        threshold = self.threshold.value() if mode == "threshold" else None
        mode = "best" if mode == "threshold" else mode
        if self._start("start_plan", self.device.currentData(), self.stages.currentData(),
                       mode, threshold):
            for plot in self._plots():
                plot.clear()
            self._set_status(f"Planning on {self.device.currentText()}\u2026")

    def start_fit(self) -> None:
        budget = self.budget.value()
        if self._start("start_fit", self.device.currentData(), self.stages.currentData(),
                       budget):
            self._set_status(f"Looking for the largest batch within {budget:.0f} MB\u2026")

    @Slot()
    def _on_bench_clicked(self) -> None:
        self.start_bench()          # not connected directly: clicked(bool) fills ``batch``

    def start_bench(self, batch: int | None = None, ask: bool = True) -> None:
        """Time the original graph against the selected plan within the benchmark time;
        ``batch``: at this batch instead of the inputs'; ``ask``: offer a smaller batch
        when the estimate runs past the time."""
        if self._start("start_bench", self.device.currentData(), float(self.bench_time.value()),
                       batch, ask):
            at = f" at batch {batch}" if batch is not None else ""
            self._set_status(f"Timing training and inference{at}: warming up\u2026")
            if self.bench_view is not None:
                self.plots.setCurrentWidget(self.bench_view)

    def cancel(self) -> None:
        self.session.plans.cancel()

    def _set_running(self, on: bool) -> None:
        for b in (self.start_button, self.fit_button, self.bench_button):
            b.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        self.progress.setRange(0, 0 if on else 1)
        self.progress.setValue(0)

    def _set_status(self, text: str, error: bool = False) -> None:
        set_role(self.status, "error" if error else None)
        self.status.setText(text)

    @Slot()
    def _on_job_started(self) -> None:
        self._set_running(True)

    @Slot(int, int, str)
    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.status.setText(message)

    def _plots(self) -> list[Any]:
        return [p for p in (self.front_plot, self.plan_plot) if p is not None]

    @Slot(object)
    def _on_probe(self, probe: memplan.Probe) -> None:
        for plot in self._plots():
            plot.add_probe(probe)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self._set_status(message.strip().splitlines()[-1], error=True)

    @Slot()
    def _on_cancelled(self) -> None:
        self._set_status("Cancelled.")

    @Slot()
    def _on_ended(self) -> None:
        self._set_running(False)
        self.finished.emit()

    @Slot()
    def _on_fit_changed(self) -> None:
        fit = self.session.plans.fit
        if fit is not None:
            self._set_status(f"Within {fit.budget_mb:.0f} MB: batch {fit.unplanned_batch} "
                             f"unplanned ({fit.unplanned_mb or 0:.0f} MB), batch "
                             f"{fit.planned_batch} planned ({fit.planned_mb or 0:.0f} MB).")

    @Slot()
    def _on_bench_changed(self) -> None:
        if self.bench_view is not None:
            plans = self.session.plans
            self.bench_view.show_results(plans.bench)
            if plans.bench:
                self.plots.setCurrentWidget(self.bench_view)
        self._on_selected_plan_changed()

    @Slot(object)
    def _on_bench_estimated(self, estimate: Estimate) -> None:
        self._set_status(f"Timing training and inference: {estimate.line()}.")

    @Slot(object)
    def _on_bench_over_budget(self, estimate: Estimate) -> None:
        """The benchmark stopped after its estimate: over the time.  Asked on the next
        turn, once its job has ended (a new job started inside that job's signals was
        taken for ended)."""
        self._over_budget = estimate
        QTimer.singleShot(0, self._ask_over_budget)

    @Slot()
    def _ask_over_budget(self) -> None:
        """A smaller batch first, or this one all the same, or nothing."""
        estimate, self._over_budget = self._over_budget, None
        if estimate is None:
            return
        title, question = over_budget_question(estimate)
        if estimate.smaller_batch:
            answer = self.host.ask_choice(title, question, f"Batch {estimate.smaller_batch}",
                                          f"Batch {estimate.batch} anyway")
        else:
            answer = False if self.host.ask_yes_no(title, question) else None
        if answer is None:
            self._set_status(f"Benchmark not run: it would take about "
                             f"{estimate.seconds:.0f} s.")
        elif answer:
            self.start_bench(estimate.smaller_batch, ask=False)
        else:
            self.start_bench(ask=False)

    # ------------------------------------------------------------- the plan
    @Slot()
    def _on_plan_changed(self) -> None:
        result = self.session.plans.result
        if result is not None and self.plan_plot is not None and self.front_plot is not None:
            for plot in (self.plan_plot, self.front_plot):
                plot.set_costed_by(result.costed_by)
            self.plan_plot.show_probes(list(result.probes))
            self.front_plot.show_probes(list(result.probes),
                                        result.best.kept if result.best else None)

    def select_within_budget(self) -> None:
        """The plan that recomputes least within the budget becomes the selected plan."""
        result, budget = self.session.plans.result, self.budget.value()
        if result is None:
            self._set_status("Press Plan first: the budget picks among its plans.")
            return
        if self.front_plot is not None:
            self.front_plot.set_budget(budget)
        try:
            self.session.plans.select_probe(plansearch.pick_within(result.probes, budget))
        except UserError as exc:
            self._set_status(f"{str(exc)[:1].upper()}{str(exc)[1:]}.", error=True)

    @Slot(object)
    def _on_probe_clicked(self, probe: memplan.Probe) -> None:
        if self.session.plans.result is None:
            self._set_status("Wait for the search to finish, then pick a point.")
            return
        self.session.plans.select_probe(probe)

    @Slot()
    def _on_selected_plan_changed(self) -> None:
        """The status names the plan that Apply, Export and Benchmark use."""
        session = self.session
        result, plan = session.plans.result, session.plans.selected
        valid = session.plans.valid()
        applied = session.plans.applied()
        self.apply_button.setEnabled(plan is not None and valid and not applied)
        self.export_button.setEnabled(plan is not None and valid)
        for plot in self._plots():
            plot.set_selected(plan.kept if plan is not None and valid else None)
        if result is None or self.busy:
            return
        failed = [p for p in result.probes if not p.ok]
        extra = f" {len(failed)} probes failed ({failed[0].reason})." if failed else ""
        search = f"{len(result.probes)} probes in {result.seconds:.1f} s.{extra}"
        if plan is None:
            cut = plansearch.cut_words(result)
            self._set_status(f"No plan beats the unplanned graph ({result.baseline_mb:.0f} "
                             f"MB). {cut + ' ' if cut else ''}{search}")
            return
        which = "the least memory" if result.best is not None and \
            plan.kept == result.best.kept else "a plan you picked"
        state = "applied" if applied else "not applied (Apply tags to use it)"
        shapes = "" if result.shapes == session.inputs.shapes() else \
            " Figures are for the input shapes it was planned with."
        self._set_status(f"Selected, {which}, {state}. {plansearch.describe(result, plan)}"
                         f"{shapes} {search}")

    def _on_apply(self) -> None:
        refused = self.session.plans.apply()
        if refused:
            self._set_status(refused, error=True)

    def export_dialog(self) -> None:
        base = self.session.document.path or "planned-symbol.json"
        start = base[:-len("-symbol.json")] + "-planned-symbol.json" \
            if base.endswith("-symbol.json") else base.rsplit(".", 1)[0] + "-planned.json"
        path = self.host.ask_save_path("Export the planned graph", start,
                                       "MXNet symbol (*-symbol.json *.json)")
        if path:
            self.export_to(path)

    def export_to(self, path: str) -> bool:
        """Write the graph with the selected plan's tags to ``path``."""
        try:
            files.write_atomic(path, self.session.plans.planned_json())
        except UserError as exc:
            self._set_status(str(exc), error=True)
            return False
        except OSError as exc:
            self.host.show_error("Export failed", f"{path}: {exc.strerror or exc}")
            return False
        self._set_status(f"Wrote {path}: load it with mx.sym.load and train as usual.")
        return True

    # ------------------------------------------------------------ lifetime
    def stop(self) -> None:
        self._over_budget = None               # no question for a closed panel
        self.session.plans.cancel(quiet=True)
        self.device.stop()

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self.stop()
        disconnect_quietly((loader().state_changed, self._on_mxnet_state))
        super().closeEvent(event)
