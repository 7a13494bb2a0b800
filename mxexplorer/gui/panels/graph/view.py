"""GraphView: the QGraphicsView of the graph pane: zoom, pan, click, lazy tooltips."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QPainter
from PySide6.QtWidgets import QGraphicsItem, QGraphicsView, QToolTip, QWidget

from mxexplorer.gui.panels.graph.scene import NODE_KEY, TEXT_MIN_SCALE

MIN_FIT = TEXT_MIN_SCALE    # below this zoom no text shows: Fit shows the top instead


class GraphView(QGraphicsView):
    """Wheel and key zoom, drag to pan, click (Ctrl to add) to select, lazy tooltips.

    Signals
    -------
    clicked(int, bool): a node id (-1 for the background) and whether Ctrl was held
    menu_requested(int, QPoint): right click on a node, global position
    zoomed(float): the new scale
    double_clicked(int): a node id (-1 for the background)
    resized(): the viewport changed size (the legend or a scroll bar came or went,
    or the pane was resized)
    """

    clicked = Signal(int, bool)
    menu_requested = Signal(int, QPoint)
    zoomed = Signal(float)
    double_clicked = Signal(int)
    resized = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHints(QPainter.RenderHint.Antialiasing
                            | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.tooltip_for: Any = None   # callable(node id) -> html, set by the pane
        self._press: QPoint | None = None
        self._make_actions()


    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.resized.emit()
    def node_at(self, pos: QPoint) -> int:
        for item in self.items(pos):
            node = item.data(NODE_KEY)
            if node is not None:
                return int(node)
        return -1

    @property
    def scale_factor(self) -> float:
        return float(self.transform().m11())

    def zoom_by(self, factor: float, anchor_mouse: bool = True) -> None:
        scale = self.scale_factor
        factor = max(0.01 / scale, min(factor, 4.0 / scale))
        if not anchor_mouse:
            self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.scale(factor, factor)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.zoomed.emit(self.scale_factor)

    def set_zoom(self, scale: float) -> None:
        self.zoom_by(scale / self.scale_factor, anchor_mouse=False)

    def fit(self) -> None:
        """The whole graph when it can be seen so; a graph that would shrink to a line
        (a 1001-layer ResNet: 0 %) shows its top at the smallest readable size instead,
        the minimap giving the rest."""
        rect = self.sceneRect()
        vp = self.viewport().rect()
        if rect.isEmpty() or vp.isEmpty():
            return
        scale = min(vp.width() / rect.width(), vp.height() / rect.height())
        if scale >= MIN_FIT:
            self.fitInView(rect.adjusted(-10, -10, 10, 10), Qt.AspectRatioMode.KeepAspectRatio)
            self.zoomed.emit(self.scale_factor)
            return
        self.set_zoom(max(MIN_FIT, min(1.0, vp.width() / rect.width())))
        self.centerOn(rect.center().x(), rect.top() + vp.height() / (2 * self.scale_factor))

    def initial_view(self) -> None:
        """Small graphs fit the window; big ones open readable, at the inputs."""
        rect = self.sceneRect()
        vp = self.viewport().rect()
        if rect.isEmpty() or vp.isEmpty():
            return
        fit = min(vp.width() / rect.width(), vp.height() / rect.height())
        if fit >= 0.6:
            self.fit()
            return
        self.set_zoom(max(fit, min(1.15, vp.width() / rect.width())))
        top = rect.top() + vp.height() / (2 * self.scale_factor)
        self.centerOn(rect.center().x(), top)

    def anchor(self, items: dict[int, QGraphicsItem]) -> tuple[int, QPointF] | None:
        """The node nearest the view's centre, and the centre's offset from it."""
        centre = self.mapToScene(self.viewport().rect().center())
        best, best_d = None, float("inf")
        for node, item in items.items():
            d = item.boundingRect().center() - centre
            dist = d.x() * d.x() + d.y() * d.y()
            if dist < best_d:
                best, best_d = node, dist
        if best is None:
            return None
        return best, items[best].boundingRect().center() - centre

    def restore_anchor(self, anchor: tuple[int, QPointF],
                       items: dict[int, QGraphicsItem]) -> None:
        """Put the anchor node back where it was on screen (after a new layout)."""
        node, offset = anchor
        item = items.get(node)
        if item is not None:
            self.centerOn(item.boundingRect().center() - offset)

    def wheelEvent(self, event: Any) -> None:  # noqa: N802
        delta = event.angleDelta().y()
        if delta == 0 or event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            super().wheelEvent(event)
            return
        self.zoom_by(1.0015 ** delta)
        event.accept()

    def _make_actions(self) -> None:
        """The view's keys as actions (so Help > Keyboard Shortcuts and the command
        palette know them), active while the view has the focus."""
        for text, keys, slot in (
                ("Zoom In", ("+", "="), self.zoom_in),
                ("Zoom Out", ("-",), self.zoom_out),
                ("Fit the Graph", ("0", "F"), self.fit),
                ("Actual Size", ("1",), self.actual_size)):
            action = QAction(text, self)
            action.setShortcuts([QKeySequence(k) for k in keys])
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            action.triggered.connect(slot)
            self.addAction(action)

    def zoom_in(self) -> None:
        self.zoom_by(1.25, anchor_mouse=False)

    def zoom_out(self) -> None:
        self.zoom_by(0.8, anchor_mouse=False)

    def actual_size(self) -> None:
        self.set_zoom(1.0)

    def mousePressEvent(self, event: Any) -> None:  # noqa: N802
        self._press = event.position().toPoint()
        if event.button() == Qt.MouseButton.RightButton:
            self._press = None
            self.menu_requested.emit(self.node_at(event.position().toPoint()),
                                     event.globalPosition().toPoint())
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseDoubleClickEvent(self, event: Any) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self.double_clicked.emit(self.node_at(event.position().toPoint()))
            event.accept()
            return
        super().mouseDoubleClickEvent(event)

    def mouseReleaseEvent(self, event: Any) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        pos = event.position().toPoint()
        if self._press is not None and event.button() == Qt.MouseButton.LeftButton \
                and (pos - self._press).manhattanLength() <= 4:
            ctrl = bool(event.modifiers() & (Qt.KeyboardModifier.ControlModifier
                                             | Qt.KeyboardModifier.MetaModifier))
            self.clicked.emit(self.node_at(pos), ctrl)
        self._press = None

    def viewportEvent(self, event: Any) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip and self.tooltip_for is not None:
            node = self.node_at(event.pos())
            if node >= 0:
                QToolTip.showText(event.globalPos(), self.tooltip_for(node), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)
