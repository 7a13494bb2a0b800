"""FrontPlot: training memory against recompute, one point per plan the search costed.

The memory-recompute front (the plans no other beats on both) is a line of larger
points; every other plan is a small grey point, the best plan a star, the selected
plan a ring, the unplanned graph a dashed line and a memory budget a dotted one.
"""
from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QWidget

from mxexplorer.core.planning import memplan, plansearch
from mxexplorer.gui.panels.planner.plan_plot import ProbePlot


class FrontPlot(ProbePlot):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("recomputed in backward (% of the forward pass)", None, 0.9, parent)
        self._best: tuple[int, ...] | None = None
        self.budget_line = pg.InfiniteLine(
            angle=0, pen=pg.mkPen("#c00000", width=1.2, style=Qt.PenStyle.DotLine),
            label="budget", labelOpts={"position": 0.9})
        self.budget_line.hide()
        self.plot.addItem(self.budget_line)
        self.others = pg.ScatterPlotItem(size=5, pen=None, brush=pg.mkBrush(150, 160, 170, 140))
        self.front_line = pg.PlotDataItem(pen=pg.mkPen("#1f5fa8", width=1.5))
        self.front_points = pg.ScatterPlotItem(size=10, pen=pg.mkPen("#1f5fa8"),
                                               brush=pg.mkBrush("#5b9bd5"))
        self._add_items([self.others, self.front_line, self.front_points],
                        [self.others, self.front_points])

    def clear(self) -> None:
        self._best = None
        super().clear()

    def show_probes(self, probes: list[memplan.Probe],
                    best: tuple[int, ...] | None = None) -> None:
        """The search's whole list and its best plan, drawn at once."""
        self._best = tuple(best) if best is not None else None
        super().show_probes(probes)

    def set_budget(self, budget_mb: float | None) -> None:
        if budget_mb is None:
            self.budget_line.hide()
        else:
            self.budget_line.setValue(budget_mb)
            self.budget_line.show()

    @staticmethod
    def _spot(p: memplan.Probe) -> dict[str, Any]:
        return {"pos": (100.0 * (p.recompute_share or 0.0), p.cost_mb), "data": p}

    @Slot()
    def redraw(self) -> None:
        self._show_baseline()
        front = plansearch.front(self.probes)
        on_front = {id(p) for p in front}
        measured = [p for p in self.probes if p.ok and p.kind != "baseline"
                    and p.recompute_share is not None]
        self.others.setData([self._spot(p) for p in measured if id(p) not in on_front])
        spots = [self._spot(p) for p in front]
        self.front_points.setData(spots)
        self.front_line.setData([s["pos"][0] for s in spots], [s["pos"][1] for s in spots])
        best = next((p for p in measured if self._best is not None
                     and tuple(p.kept) == self._best), front[0] if front else None)
        self.best_point.setData([self._spot(best)] if best is not None else [])
        chosen = next((p for p in measured if self._selected is not None
                       and tuple(p.kept) == self._selected), None)
        self.selected_point.setData([self._spot(chosen)] if chosen is not None else [])
