"""GraphLegend: the colour key over the graph's bottom-left corner (op families drawn,
mirror stages, recomputed nodes); it lets mouse events through to the graph."""
from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QLabel, QWidget

from mxexplorer.core import drawing


class GraphLegend(QLabel):
    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setStyleSheet("background: rgba(255,255,255,225); border: 1px solid #ccc;"
                           " border-radius: 4px; padding: 4px;")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self._area = QRect()

    def show_graph(self, graph: drawing.VisibleGraph | None) -> None:
        """The key for ``graph``'s families (None hides it)."""
        if graph is None:
            self.hide()
            return
        rows = []
        for family in graph.families():
            fill, border = drawing.FAMILY_COLOURS[family]
            rows.append(f'<tr><td style="background:{fill}; border:1px solid {border};">'
                        f'&nbsp;&nbsp;&nbsp;&nbsp;</td><td>&nbsp;'
                        f'{drawing.FAMILY_NAMES[family]}</td></tr>')
        rows.append(f'<tr><td style="border:3px solid {drawing.MIRROR_COLOUR};">'
                    '&nbsp;&nbsp;&nbsp;</td><td>&nbsp;mirror stage</td></tr>')
        rows.append(f'<tr><td style="border:2px dashed {drawing.RECOMPUTE_COLOUR};">'
                    '&nbsp;&nbsp;&nbsp;</td><td>&nbsp;recomputed (force_mirroring)</td></tr>')
        self.setText('<table cellspacing="1" style="font-size:8pt;">' + "".join(rows)
                     + "</table>")
        self.adjustSize()
        self.place(self._area)
        self.show()

    def place(self, area: QRect) -> None:
        """Sit in the bottom-left corner of ``area`` (the graph's viewport)."""
        self._area = QRect(area)
        self.move(area.left() + 6, area.bottom() - self.height() - 6)
