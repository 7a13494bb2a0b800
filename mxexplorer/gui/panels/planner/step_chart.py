"""StepChart: memory over one training step, without a plan and with the selected plan.

The live bytes at each step of :mod:`~mxexplorer.core.planning.liveness`'s model (forward,
then backward with the recomputed copies), from the session's analysis and its
selected plan; each peak marked and named.  Worked out on a thread (a snapshot of the
document, never the live one); clicking the curve selects that step's node.
"""
from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, QTimer, Slot
from PySide6.QtWidgets import QWidget

from mxexplorer.core.analysis.stats import human_bytes
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import liveness
from mxexplorer.gui import workers
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.theme import Theme, plot_with_words, style_plot, themes

#: how the chart names a tensor's copy (the model's words: fwd, mirror, grad, gsum)
COPY_WORDS = {"fwd": "", "mirror": " (recomputed)", "grad": " gradient",
              "gsum": " gradient sum"}


def _timelines(snap: Any, by_entry: Any, tags: dict[int, str] | None, token: Any = None
               ) -> tuple[list[str], liveness.Timeline, liveness.Timeline | None]:
    """The step's timelines without and with the plan; ``token`` stops them (a window
    closing while a large graph's were made waited for them, then Qt aborted)."""
    check = token.check if token is not None else None
    doc = GraphDocument.from_snapshot(snap)
    model = liveness.Model(doc, by_entry)
    return ([n.name for n in doc.nodes], model.simulate({}, check),
            model.simulate(tags, check) if tags else None)


class StepChart(QWidget):
    def __init__(self, session: DocumentSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.names: list[str] = []
        self.unplanned: liveness.Timeline | None = None
        self.planned: liveness.Timeline | None = None
        self.plot = pg.PlotWidget()
        self.plot.setLabel("bottom", "step (forward, then backward)")
        self.plot.setLabel("left", "live tensors", units="MB")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        # one row across the top, over headroom the y range keeps free (a column of
        # three entries at the top left covered a third of a short plot's curves)
        self.legend = self.plot.addLegend(offset=(10, 2), colCount=3)
        self.plot.getViewBox().enableAutoRange(axis="y", enable=False)
        self.base_bytes = 0          # parameters, their gradients and auxiliary states
        self.band = self.plot.plot([], [], pen=pg.mkPen("#b9a37a", width=1), fillLevel=0,
                                   brush=pg.mkBrush(185, 163, 122, 90),
                                   name="params & grads")
        self.curve = self.plot.plot([], [], pen=pg.mkPen("#888", width=1.5), name="no plan")
        self.plan_curve = self.plot.plot([], [], pen=pg.mkPen("#1f5fa8", width=2),
                                         name="plan")
        self.peaks = pg.ScatterPlotItem(size=12, symbol="t", pen=pg.mkPen("#c00000"),
                                        brush=pg.mkBrush("#c00000"))
        self.plot.addItem(self.peaks)
        self.turn = pg.InfiniteLine(angle=90, pen=pg.mkPen("#aaa", style=Qt.PenStyle.DashLine))
        self.plot.addItem(self.turn)
        self.plot.scene().sigMouseClicked.connect(self._on_clicked)
        self.note = plot_with_words(self, self.plot,
                                    "Infer shapes to see memory over a training step.")
        self._job = workers.JobSlot(self)
        self._job.finished.connect(self._on_done)
        self._later = QTimer(self, singleShot=True, interval=150)   # one job per burst
        self._later.timeout.connect(self.refresh)
        for signal in (session.analysis.changed, session.plans.selected_changed,
                       session.document_changed):
            signal.connect(self._later.start)
        self.apply_theme(themes().current)
        themes().changed.connect(self.apply_theme)
        self._later.start()

    @Slot(object)
    def apply_theme(self, theme: Theme) -> None:
        style_plot(self.plot, theme)

    @Slot()
    def refresh(self) -> None:
        session = self.session
        analysis = session.analysis.result
        if analysis is None or session.analysis.stale() is not None \
                or not analysis.shapes.complete:
            self._job.cancel()
            self.unplanned = self.planned = None
            self._draw()
            return
        plan = session.plans.selected if session.plans.valid() else None
        snap, by_entry = session.document.snapshot(), dict(analysis.shapes.by_entry)
        tags = dict(plan.tags) if plan is not None else None
        st = analysis.stats
        self.base_bytes = 2 * st.param_bytes + st.aux_bytes       # and the gradients
        self._job.start(lambda progress, token: _timelines(snap, by_entry, tags, token))

    @Slot(object)
    def _on_done(self, result: Any) -> None:
        self.names, self.unplanned, self.planned = result
        self._draw()

    def _draw(self) -> None:
        base, plan = self.unplanned, self.planned
        if base is None:
            for curve in (self.curve, self.plan_curve, self.band):
                curve.setData([], [])
            self.peaks.setData([])
            self.note.setText("Infer shapes to see memory over a training step.")
            return
        mb, under = 1.0 / liveness.MB, self.base_bytes
        longest = max(len(base.steps), len(plan.steps) if plan else 0)
        self.band.setData([0, max(1, longest - 1)], [under * mb] * 2)
        self.curve.setData([(s.live_bytes + under) * mb for s in base.steps])
        self.plan_curve.setData([(s.live_bytes + under) * mb for s in plan.steps]
                                if plan else [])
        self.turn.setValue(sum(1 for s in base.steps if s.phase == "forward"))
        self._set_headroom(max((max(c.yData) for c in (self.curve, self.plan_curve)
                                if c.yData is not None and len(c.yData)), default=1.0))
        marks, words = [], []
        for label, timeline in (("no plan", base), ("the selected plan", plan)):
            if timeline is None or timeline.peak_step < 0:
                continue
            step = timeline.steps[timeline.peak_step]
            marks.append({"pos": (timeline.peak_step, (timeline.peak_bytes + under) * mb)})
            alive = sorted(timeline.peak_tensors, key=lambda t: -t[3])[:3]
            words.append(f"with {label}: peak {human_bytes(timeline.peak_bytes)} of "
                         f"activations at {self.names[step.node]} ({step.phase}), the "
                         "largest alive: " + ", ".join(
                             f"{self.names[n]}{COPY_WORDS.get(ph, ' ' + ph)} "
                             f"{human_bytes(b)}" for n, _, ph, b in alive))
        self.peaks.setData(marks)
        self.note.setText(f"Live tensors over one step on top of {human_bytes(under)} of "
                          "parameters, gradients and auxiliary states (the optimizer's "
                          "state comes on top); " + "; ".join(words) + ". MXNet's planner "
                          "reuses buffers: its total is in the planner's figures.")

    def _set_headroom(self, top_mb: float) -> None:
        """The y range from 0 to the highest curve, plus the room the legend's row takes
        (in pixels, whatever the plot's height) and a little air."""
        box = self.plot.getViewBox()
        height = max(box.height(), 1.0)
        legend = self.legend.boundingRect().height() + 8 if self.legend is not None else 0
        share = min(0.6, (legend + 6) / height)
        box.setYRange(0, top_mb / (1 - share), padding=0)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.unplanned is not None:
            self._draw()

    def step_at(self, x: float) -> int | None:
        """The node computed at step ``x`` of the curve shown last (the plan's if any)."""
        timeline = self.planned or self.unplanned
        if timeline is None or not timeline.steps:
            return None
        k = min(max(int(round(x)), 0), len(timeline.steps) - 1)
        return timeline.steps[k].node

    @Slot(object)
    def _on_clicked(self, event: Any) -> None:
        where = self.plot.plotItem.vb.mapSceneToView(QPointF(event.scenePos()))
        node = self.step_at(where.x())
        if node is not None:
            self.session.selection.set([node])
