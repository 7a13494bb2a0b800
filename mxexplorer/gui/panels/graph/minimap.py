"""GraphMinimap: the whole graph in a corner of the view, the visible part framed;
click or drag in it to go there.  Shown while the graph does not fit the view.

The picture is drawn once per layout from the node boxes (thousands of rectangles:
milliseconds), not by rendering the scene, and only the frame moves as the view does.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt, Slot
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QGraphicsView, QWidget

from mxexplorer.core.render import drawing

SIZE = 170.0        # the longer side of the minimap, px


class GraphMinimap(QWidget):
    def __init__(self, view: QGraphicsView) -> None:
        super().__init__(view)
        self.view = view
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._pixmap: QPixmap | None = None
        self._scale = 1.0
        view.horizontalScrollBar().valueChanged.connect(self._on_view_moved)
        view.verticalScrollBar().valueChanged.connect(self._on_view_moved)
        self.hide()

    def show_layout(self, graph: drawing.VisibleGraph, layout: drawing.Layout,
                    canvas: str) -> None:
        """Draw ``layout``'s boxes in their family colours (once per layout)."""
        if layout.width <= 0 or layout.height <= 0:
            self._pixmap = None
            self.hide()
            return
        scale = SIZE / max(layout.width, layout.height)
        w, h = max(int(layout.width * scale), 24), max(int(layout.height * scale), 24)
        pixmap = QPixmap(w, h)
        pixmap.fill(QColor(canvas))
        painter = QPainter(pixmap)
        families = {n.id: n.family for n in graph.nodes}
        for node_id, box in layout.nodes.items():
            fill, _ = drawing.FAMILY_COLOURS[families.get(node_id, "other")]
            rect = QRectF((box.x - box.w / 2) * scale, (box.y - box.h / 2) * scale,
                          max(box.w * scale, 1.0), max(box.h * scale, 1.0))
            painter.fillRect(rect, QColor(fill).darker(115))
        painter.end()
        self._pixmap, self._scale = pixmap, scale
        self.resize(w + 2, h + 2)
        self.place()
        self.update_visibility()

    def place(self) -> None:
        """Bottom-right corner of the view, clear of its scroll bars."""
        area = self.view.viewport().geometry()
        self.move(area.right() - self.width() - 8, area.bottom() - self.height() - 8)

    def update_visibility(self) -> None:
        """Shown while the view shows only part of the graph."""
        if self._pixmap is None:
            self.hide()
            return
        seen = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        scene = self.view.sceneRect().adjusted(20, 20, -20, -20)
        self.setVisible(not seen.contains(scene))
        self.update()

    @Slot()
    def _on_view_moved(self) -> None:
        if self.isVisible():
            self.update()

    def paintEvent(self, event: Any) -> None:  # noqa: N802
        if self._pixmap is None:
            return
        painter = QPainter(self)
        painter.setOpacity(0.92)
        painter.drawPixmap(1, 1, self._pixmap)
        painter.setOpacity(1.0)
        painter.setPen(QPen(QColor("#888888"), 1))
        painter.drawRect(0, 0, self.width() - 1, self.height() - 1)
        seen = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        s = self._scale
        frame = QRectF(1 + seen.left() * s, 1 + seen.top() * s, seen.width() * s,
                       seen.height() * s).intersected(QRectF(self.rect()))
        painter.setPen(QPen(QColor("#d0021b"), 1.6))
        painter.drawRect(frame)
        painter.end()

    def _go(self, event: Any) -> None:
        pos = event.position()
        self.view.centerOn(QPointF((pos.x() - 1) / self._scale, (pos.y() - 1) / self._scale))
        self.update()

    def mousePressEvent(self, event: Any) -> None:  # noqa: N802
        self._go(event)

    def mouseMoveEvent(self, event: Any) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._go(event)
