"""BenchView: training time of the original graph against the planned one, as bars,
with each run's summary and one sentence that says whether they differ at all."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Slot
from PySide6.QtWidgets import QWidget

from mxexplorer.core.planning import benchmark
from mxexplorer.gui.theme import Theme, plot_with_words, style_plot, themes


class BenchView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bench_plot = pg.PlotWidget()
        self.bench_plot.setLabel("left", "ms / training iteration")
        self.bench_plot.getAxis("bottom").setTicks([[(0, "original"), (1, "planned")]])
        self.bars = pg.BarGraphItem(x=[], height=[], width=0.6, brush="#5b9bd5")
        self.spread = pg.ErrorBarItem(x=np.array([]), y=np.array([]), beam=0.2,
                                      pen=pg.mkPen("#333"))
        self.bench_plot.addItem(self.bars)
        self.bench_plot.addItem(self.spread)
        self.label = plot_with_words(self, self.bench_plot, "Benchmark: not run yet.")
        self.apply_theme(themes().current)
        themes().changed.connect(self.apply_theme)

    @Slot(object)
    def apply_theme(self, theme: Theme) -> None:
        style_plot(self.bench_plot, theme)
        self.spread.setOpts(pen=pg.mkPen(theme.plot_fg))

    def show_results(self, results: list[benchmark.BenchResult], verdict: str) -> None:
        """Bars at the median, whiskers over each run's range, and the verdict."""
        x = np.arange(len(results), dtype=float)
        med = np.array([r.train.median_ms for r in results], dtype=float)
        lo = np.array([r.train.median_ms - r.train.min_ms for r in results], dtype=float)
        hi = np.array([r.train.max_ms - r.train.median_ms for r in results], dtype=float)
        self.bars.setOpts(x=x, height=med, width=0.6)
        self.spread.setData(x=x, y=med, top=hi, bottom=lo)
        self.bench_plot.enableAutoRange()
        lines = [line for r in results for line in (r.summary(), r.memory_note()) if line]
        if verdict:
            lines.append(verdict)
        self.label.setText("\n".join(lines))
