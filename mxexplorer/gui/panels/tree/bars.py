"""MetricBar: the tree's delegate that draws the colour metric as a bar under a
column's text (the length: share of the column's largest value; the colour: the one
the graph gives the node)."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRectF, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from mxexplorer.gui.panels.tree.model import BAR_ROLE

BAR_HEIGHT = 4.0


class MetricBar(QStyledItemDelegate):
    def initStyleOption(self, option: QStyleOptionViewItem,
                        index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        # the view elides at the start (names share a model prefix); every other
        # column keeps its start: "FullyConn..." reads, "...yConnected" does not
        if index.column() != 0:
            option.textElideMode = Qt.TextElideMode.ElideRight  # type: ignore[attr-defined]

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        super().paint(painter, option, index)
        bar = index.data(BAR_ROLE)
        if not bar:
            return
        share, colour = bar
        rect = option.rect          # type: ignore[attr-defined]
        width = max(2.0, (rect.width() - 4) * min(1.0, float(share)))
        painter.save()
        painter.fillRect(QRectF(rect.left() + 2, rect.bottom() - BAR_HEIGHT, width,
                                BAR_HEIGHT - 0.5), QColor(colour))
        painter.restore()
