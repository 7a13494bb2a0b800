"""The planner's plots, one point per probe of a plan search.

:class:`ProbePlot` holds what both share: the probes, the plot, the unplanned cost as a
dashed line, the best plan a star, the selected plan a ring; points arrive as the
search probes (redrawn at most ten times a second) and a clicked point says so through
``probe_clicked``.  :class:`PlanPlot` is memonger's view, memory cost against threshold
(failed probes red crosses); :class:`~mxexplorer.gui.panels.planner.front_plot.FrontPlot` is
memory against recompute.
"""
from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QVBoxLayout, QWidget

from mxexplorer.core.planning import memplan
from mxexplorer.gui.theme import Theme, style_plot, themes


class ProbePlot(QWidget):
    """Signals
    -------
    probe_clicked(object): the :class:`~mxexplorer.core.planning.memplan.Probe` of a clicked point
    """

    probe_clicked = Signal(object)

    def __init__(self, x_label: str, x_units: str | None, baseline_at: float,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.probes: list[memplan.Probe] = []
        self._selected: tuple[int, ...] | None = None
        pg.setConfigOptions(antialias=True)
        self.plot = pg.PlotWidget()
        self.plot.setLabel("bottom", x_label, units=x_units)
        self.plot.setLabel("left", "training memory", units="MB")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.baseline_line = pg.InfiniteLine(angle=0, pen=pg.mkPen("#888", width=1.5,
                                                                    style=Qt.PenStyle.DashLine),
                                             label="unplanned",
                                             labelOpts={"position": baseline_at})
        self.baseline_line.hide()
        self.plot.addItem(self.baseline_line)
        self.best_point = pg.ScatterPlotItem(size=18, symbol="star", pen=pg.mkPen("#7a5200"),
                                             brush=pg.mkBrush("#ffbf00"), name="best plan")
        self.selected_point = pg.ScatterPlotItem(size=22, symbol="o", brush=None,
                                                 pen=pg.mkPen("#d0021b", width=2.5),
                                                 name="selected plan")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot)
        self._redraw_timer = QTimer(self, singleShot=True, interval=100)
        self._redraw_timer.timeout.connect(self.redraw)

    def set_costed_by(self, key: str) -> None:
        """Whose figures the points are: the axis says it ("mxnet" or "model")."""
        whose = "MXNet's report" if key == "mxnet" else "memory model"
        self.plot.setLabel("left", f"training memory ({whose})", units="MB")

    def _add_items(self, items: list[Any], clickable: list[Any]) -> None:
        """Put the subclass's items (then the star and the ring) on the plot."""
        for item in items + [self.best_point, self.selected_point]:
            self.plot.addItem(item)
        for item in clickable + [self.best_point]:
            item.sigClicked.connect(self._on_point_clicked)
        self.apply_theme(themes().current)
        themes().changed.connect(self.apply_theme)

    @Slot(object)
    def apply_theme(self, theme: Theme) -> None:
        style_plot(self.plot, theme)
        self.baseline_line.label.setColor(theme.plot_fg)

    def clear(self) -> None:
        self.probes = []
        self._selected = None
        self.redraw()

    def add_probe(self, probe: memplan.Probe) -> None:
        self.probes.append(probe)
        if not self._redraw_timer.isActive():   # at most ~10 redraws a second
            self._redraw_timer.start()

    def show_probes(self, probes: list[memplan.Probe]) -> None:
        """The search's whole list (its final word), drawn at once."""
        self._redraw_timer.stop()
        self.probes = list(probes)
        self.redraw()

    def set_selected(self, kept: tuple[int, ...] | None) -> None:
        """Ring the point whose plan keeps these nodes (None: no ring)."""
        self._selected = tuple(kept) if kept is not None else None
        self.redraw()

    def _show_baseline(self) -> float | None:
        base = next((p.cost_mb for p in self.probes if p.kind == "baseline"), None)
        if base is not None:
            self.baseline_line.setValue(base)
            self.baseline_line.show()
        else:
            self.baseline_line.hide()
        return base

    @Slot()
    def redraw(self) -> None:
        raise NotImplementedError

    @Slot(object, object)
    def _on_point_clicked(self, item: Any, points: Any, *_: Any) -> None:
        if not len(points):
            return
        probe = points[0].data()
        if isinstance(probe, memplan.Probe) and probe.ok:
            self.probe_clicked.emit(probe)


class PlanPlot(ProbePlot):
    """Memory cost against threshold: memonger's view."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("threshold", "MB", 0.1, parent)
        self.plot.addLegend(offset=(-10, 10))
        self.points = pg.ScatterPlotItem(size=8, pen=pg.mkPen("#1f5fa8"),
                                         brush=pg.mkBrush("#5b9bd5"), name="threshold probe")
        self.local_points = pg.ScatterPlotItem(size=6, pen=None, brush=pg.mkBrush("#9ab"),
                                               name="local search")
        self.failed_points = pg.ScatterPlotItem(size=10, symbol="x", pen=pg.mkPen("#c00000"),
                                                brush=pg.mkBrush("#c00000"), name="failed")
        self._add_items([self.points, self.local_points, self.failed_points],
                        [self.points, self.local_points])

    @staticmethod
    def _probe_x(probe: memplan.Probe, best: float) -> float | None:
        """Where a probe sits on the threshold axis (probes of the climb, the trim and
        the front: at ``best``, the best threshold's)."""
        if probe.threshold_mb is not None:
            return float(probe.threshold_mb)
        return best if probe.kind in ("local", "trim", "front", "solver") else None

    def _best_threshold(self) -> float:
        ok = [p for p in self.probes if p.ok and p.threshold_mb is not None]
        if not ok:
            return 0.0
        return float(min(ok, key=lambda p: p.cost_mb or 0).threshold_mb or 0)

    #: said above the plot when the search costed no threshold with MXNet
    NO_THRESHOLDS = "No threshold costed by MXNet (a fast search leaves them to the model)"

    @Slot()
    def redraw(self) -> None:
        base = self._show_baseline()
        spots, local, failed, selected = [], [], [], []
        best_x = self._best_threshold()        # once: per probe it was O(n^2) a redraw
        # without a threshold probe the axis means nothing: say so, draw no point
        bare = not any(p.threshold_mb is not None for p in self.probes)
        others = any(p.kind != "baseline" for p in self.probes)
        self.plot.setTitle(self.NO_THRESHOLDS if bare and others else None, size="9pt")
        for p in self.probes:
            if p.kind == "baseline" or bare:
                continue
            x = self._probe_x(p, best_x)
            if x is None:
                continue
            if not p.ok:
                failed.append({"pos": (x, base or 0), "data": p})
                continue
            spot = {"pos": (x, p.cost_mb), "data": p}
            (spots if p.threshold_mb is not None else local).append(spot)
            if self._selected is not None and tuple(p.kept) == self._selected \
                    and not selected:
                selected.append(dict(spot))
        self.points.setData(spots)
        self.local_points.setData(local)
        self.failed_points.setData(failed)
        self.selected_point.setData(selected)
        ok = [p for p in self.probes if p.ok and p.kind != "baseline"]
        if ok and not bare:
            best = min(ok, key=lambda p: p.cost_mb or 0)
            x = self._probe_x(best, best_x) or 0.0
            self.best_point.setData([{"pos": (x, best.cost_mb), "data": best}])
        else:
            self.best_point.setData([])
