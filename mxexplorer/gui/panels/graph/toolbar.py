"""GraphToolbar: the graph pane's bar (find, zoom, Parameters, Legend, Export) and its
progress strip with Cancel.  It holds widgets only and says what was asked through
signals; the pane acts.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core.render.metrics import METRICS, SHORT
from mxexplorer.gui.text import plain_label


def _tool(text: str, slot: Any, checkable: bool = False, tip: str = "") -> QToolButton:
    button = QToolButton()
    button.setText(text)
    button.setToolTip(tip)
    button.setCheckable(checkable)
    button.setAutoRaise(True)
    (button.toggled if checkable else button.clicked).connect(slot)
    return button


class GraphToolbar(QWidget):
    """Signals
    -------
    zoom_in_requested(), zoom_out_requested(), fit_requested(), export_requested()
    cancel_requested(): the user pressed Cancel on the progress strip
    find_next_requested(): Enter in the find box
    params_toggled(bool), legend_toggled(bool), blocks_toggled(bool)
    metric_chosen(str): colour the nodes by this metric (a key of ``metrics.METRICS``)
    """

    zoom_in_requested = Signal()
    zoom_out_requested = Signal()
    fit_requested = Signal()
    export_requested = Signal()
    cancel_requested = Signal()
    find_next_requested = Signal()
    params_toggled = Signal(bool)
    legend_toggled = Signal(bool)
    blocks_toggled = Signal(bool)
    metric_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find node (name or op), Enter for next")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(110)
        self.search.returnPressed.connect(self.find_next_requested)
        self.match_label = plain_label()
        self.zoom_label = plain_label("100%")
        self.zoom_label.setMinimumWidth(44)
        self.params_button = _tool("Parameters", self.params_toggled, checkable=True,
                                   tip="Show parameter and auxiliary variables")
        self.legend_button = _tool("Legend", self.legend_toggled, checkable=True,
                                   tip="Show the colour legend")
        self.blocks_button = _tool("Blocks", self.blocks_toggled, checkable=True,
                                   tip="Fold repeated structure into blocks (double-click "
                                       "a block to open it)")
        self.metric_box = QComboBox()
        for key in METRICS:
            self.metric_box.addItem(SHORT[key], key)
        self.metric_box.setToolTip("Colour the nodes by op family or by a metric (on a "
                                   "viridis scale; the tree shows it as bars)")
        self.metric_box.currentIndexChanged.connect(
            lambda _: self.metric_chosen.emit(self.metric_box.currentData()))
        self.layout_label = plain_label()
        self.legend_button.blockSignals(True)
        self.legend_button.setChecked(True)
        self.legend_button.blockSignals(False)
        # a tool bar, not a row: what does not fit folds into its >> menu (a row's least
        # width, 640 px, squeezed the internals dock of a 1280-pixel window)
        self.bar = bar = QToolBar()
        bar.setContentsMargins(4, 0, 4, 0)
        self.search.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        bar.addWidget(self.search)
        bar.addWidget(self.match_label)
        for widget in (_tool("\u2212", self.zoom_out_requested, tip="Zoom out (-)"),
                       self.zoom_label,
                       _tool("+", self.zoom_in_requested, tip="Zoom in (+)"),
                       _tool("Fit", self.fit_requested, tip="Fit the graph to the window (0)"),
                       self.metric_box, self.blocks_button, self.params_button,
                       self.legend_button,
                       _tool("Export\u2026", self.export_requested,
                             tip="Save the graph as SVG, PNG or PDF"),
                       self.layout_label):
            bar.addWidget(widget)

        self.busy = QFrame()
        self.busy.setFrameShape(QFrame.Shape.StyledPanel)
        self.busy_label = plain_label()
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_requested)
        busy_row = QHBoxLayout(self.busy)
        busy_row.setContentsMargins(6, 2, 6, 2)
        busy_row.addWidget(self.busy_label, 1)
        busy_row.addWidget(self.busy_bar)
        busy_row.addWidget(self.cancel_button)
        self.busy.hide()

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(bar)
        layout.addWidget(self.busy)

    def show_busy(self, text: str) -> None:
        self.busy_label.setText(text)
        self.busy.show()

    def hide_busy(self) -> None:
        self.busy.hide()

    def set_zoom(self, scale: float) -> None:
        self.zoom_label.setText(f"{scale * 100:.0f}%")

    def focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    def set_matches(self, text: str) -> None:
        self.match_label.setText(text)

    def set_metric(self, metric: str) -> None:
        self.metric_box.blockSignals(True)
        if self.metric_box.findData(metric) < 0:          # "marks": a comparison's
            self.metric_box.addItem("Differences", metric)
        self.metric_box.setCurrentIndex(max(0, self.metric_box.findData(metric)))
        self.metric_box.blockSignals(False)

    def set_blocks(self, on: bool) -> None:
        self.blocks_button.blockSignals(True)
        self.blocks_button.setChecked(on)
        self.blocks_button.blockSignals(False)

    def set_layout_note(self, method: str, note: str, nodes: int) -> None:
        """Which layout is on screen; a fallback says why."""
        if method == "dot":
            self.layout_label.setText("")
            self.layout_label.setToolTip(f"{nodes:,} nodes laid out by graphviz dot")
            return
        self.layout_label.setText("layered layout" + (f" ({note})" if note else ""))
        self.layout_label.setToolTip(f"{nodes:,} nodes in mxexplorer's own layered layout, "
                                     "drawn when graphviz dot does not finish in time")
