"""BenchView: training time of the original graph against the planned one, as bars,
with each run's summary and the verdict (from the interval of the time ratio); while a
benchmark runs, its estimate and a progress bar with the time left."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Slot
from PySide6.QtWidgets import QProgressBar, QVBoxLayout, QWidget

from mxexplorer.core.planning.benchresults import Comparison, Estimate
from mxexplorer.gui.session.plans import PlanState
from mxexplorer.gui.text import plain_label
from mxexplorer.gui.theme import Theme, plot_with_words, style_plot, themes


class BenchView(QWidget):
    """Follows ``plans``' benchmark job: its start, estimate, progress and end."""

    def __init__(self, plans: PlanState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plans = plans
        self.bench_plot = pg.PlotWidget()
        self.bench_plot.setLabel("left", "ms / training iteration")
        self.bench_plot.getAxis("bottom").setTicks([[(0, "original"), (1, "planned")]])
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.6, brush="#5b9bd5")
        self.spread = pg.ErrorBarItem(x=np.array([]), y=np.array([]), beam=0.2,
                                      pen=pg.mkPen("#333"))
        self.bench_plot.addItem(self.bars)
        self.bench_plot.addItem(self.spread)
        #: the running benchmark's estimate ("About 52 s: 12 runs of each graph.")
        self.estimate = plain_label("")
        self.estimate.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setTextVisible(True)
        top = QWidget()
        column = QVBoxLayout(top)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.estimate)
        column.addWidget(self.bar)
        column.addWidget(self.bench_plot, 1)
        self.label = plot_with_words(self, top, "Benchmark: not run yet.")
        self.stop_progress()
        self.apply_theme(themes().current)
        themes().changed.connect(self.apply_theme)
        job = plans.bench_job
        job.started.connect(self.start_progress)
        job.progress.connect(self.show_progress)
        job.ended.connect(self.stop_progress)
        plans.bench_estimated.connect(self.show_estimate)
        if job.busy:
            self.start_progress()
            if plans.bench_estimate is not None:
                self.show_estimate(plans.bench_estimate)

    @Slot(object)
    def apply_theme(self, theme: Theme) -> None:
        style_plot(self.bench_plot, theme)
        self.spread.setOpts(pen=pg.mkPen(theme.plot_fg))

    # ------------------------------------------------------------ a run
    @Slot()
    def start_progress(self) -> None:
        """A benchmark started: warming up, no estimate yet."""
        self.estimate.setText("Warming up: the estimate follows the first run of each "
                              "graph.")
        self.estimate.show()
        self.bar.setRange(0, 0)
        self.bar.setFormat("warming up")
        self.bar.show()

    @Slot(object)
    def show_estimate(self, estimate: Estimate) -> None:
        line = estimate.line()
        self.estimate.setText(line[:1].upper() + line[1:] + ".")
        self.bar.setRange(0, max(estimate.rounds, 1))
        self.bar.setValue(0)
        self.bar.setFormat(f"about {estimate.seconds:.0f} s left")

    @Slot(int, int, str)
    def show_progress(self, done: int, total: int, message: str) -> None:
        """Timed runs ``done`` of ``total``; ``message`` says the time left (the
        warm-up's steps come before the estimate and leave the bar busy)."""
        if total <= 0 or self.plans.bench_estimate is None:
            return
        self.bar.setRange(0, total)
        self.bar.setValue(done)
        self.bar.setFormat(message)

    @Slot()
    def stop_progress(self) -> None:
        self.estimate.hide()
        self.bar.hide()

    # ------------------------------------------------------------ the result
    def show_results(self, comparison: Comparison | None) -> None:
        """Bars at the median, whiskers over each graph's range, and the words: each
        graph's summary, the verdict and what made the times noisy."""
        self.stop_progress()
        results = list(comparison.results) if comparison is not None else []
        x = np.arange(len(results), dtype=float)
        med = np.array([r.train.median_ms for r in results], dtype=float)
        lo = np.array([r.train.median_ms - r.train.min_ms for r in results], dtype=float)
        hi = np.array([r.train.max_ms - r.train.median_ms for r in results], dtype=float)
        self.bars.setOpts(x=x, height=med, width=0.6)
        self.spread.setData(x=x, y=med, top=hi, bottom=lo)
        self.bench_plot.enableAutoRange()
        self.label.setText("\n".join(comparison.lines()) if comparison is not None
                           else "Benchmark: not run yet.")


def over_budget_question(estimate: Estimate) -> tuple[str, str]:
    """The title and words of the question a benchmark over its time asks: a smaller
    batch first when one would fit, else whether to run it all the same."""
    graphs = "both graphs" if estimate.graphs > 1 else "the graph"
    said = (f"Timing {graphs} at batch {estimate.batch} would take about "
            f"{estimate.seconds:.0f} s ({estimate.rounds} runs of each graph, about "
            f"{estimate.round_s:.0f} s a run), over the {estimate.budget_s:.0f} s "
            "benchmark time.")
    if estimate.smaller_batch:
        smaller_s = estimate.smaller_seconds or 0.0
        about = ("about the benchmark time" if smaller_s <= estimate.budget_s else
                 f"about {smaller_s:.0f} s: the smallest batch, still over the time")
        return ("The benchmark would run long",
                f"{said}\n\nTime them at batch {estimate.smaller_batch} instead ({about})? "
                "The price of a plan in time is much the same at a smaller batch.")
    return "The benchmark would run long", f"{said}\n\nRun it all the same?"
