"""The memory planner's choice widgets (stages, search, threshold, budget, benchmark
time) and the scroll areas around its controls and words, made for :class:`MemoryPanel`."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QScrollArea,
    QSpinBox,
    QWidget,
)

from mxexplorer.core.planning import benchmark


def stages_box(file_has_stages: bool) -> QComboBox:
    box = QComboBox()
    box.addItem("Automatic (cut vertices)", "auto")
    box.addItem("The file's mirror_stage tags", "file")
    if file_has_stages:
        box.setCurrentIndex(1)
    return box


def search_box() -> QComboBox:
    box = QComboBox()
    box.addItem("Best (fast and thorough: the better plan)", "best")
    box.addItem("Fast (a few seconds)", "fast")
    box.addItem("Thorough (the larger budgets)", "thorough")
    box.addItem("Original memonger (9 probes)", "original")
    box.addItem("One threshold", "threshold")
    return box


def threshold_box() -> QSpinBox:
    box = QSpinBox()
    box.setRange(0, 10**6)
    box.setSuffix(" MB")
    box.setValue(100)
    return box


def budget_box() -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(1, 10**7)
    box.setDecimals(0)
    box.setSuffix(" MB")
    box.setValue(8192)
    box.setMaximumWidth(88)
    return box


def bench_time_box() -> QSpinBox:
    box = QSpinBox()
    box.setRange(5, 3600)
    box.setValue(int(benchmark.DEFAULT_BUDGET_S))
    box.setSuffix(" s")
    box.setToolTip("The benchmark's time: as many runs of each graph as fit; a benchmark "
                   "that would take longer offers a smaller batch first")
    return box


def scrolled(widget: QWidget, fixed_width: int | None = None) -> QScrollArea:
    """``widget`` in a frameless, vertically scrolling area (a dock made short by hand
    scrolls it), as wide as it wants up to ``fixed_width`` when given."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    if fixed_width is not None:
        area.setFixedWidth(min(widget.sizeHint().width(), fixed_width)
                           + area.verticalScrollBar().sizeHint().width())
    return area


def row(*widgets: QWidget, stretch_first: bool = True) -> QHBoxLayout:
    """``widgets`` side by side, the first taking the room left when ``stretch_first``."""
    layout = QHBoxLayout()
    for k, widget in enumerate(widgets):
        layout.addWidget(widget, 1 if stretch_first and k == 0 else 0)
    return layout
