"""GraphLegend: the colour key in a strip under the graph (op families drawn, mirror
stages, recomputed nodes), so it never covers a node; the Legend button folds it."""
from __future__ import annotations

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from mxexplorer.core.render import drawing, metrics
from mxexplorer.gui.text import esc
from mxexplorer.gui.theme import current

ENTRY_WIDTH = 150          # px per key entry: the strip holds width // this a row


class GraphLegend(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Maximum)
        self._graph: drawing.VisibleGraph | None = None
        self._per_row = 0
        self.restyle()

    def restyle(self) -> None:
        theme = current()
        self.setStyleSheet(f"background: {theme.legend_bg}; border-top: 1px solid "
                           f"{theme.legend_border}; padding: 2px 6px;")

    def show_graph(self, graph: drawing.VisibleGraph | None) -> None:
        """The key for ``graph``'s families (None hides it)."""
        self._graph = graph
        if graph is None:
            self.hide()
            return
        self._per_row = max(1, self.width() // ENTRY_WIDTH)
        cells = []
        for family in graph.families():
            fill, border = drawing.FAMILY_COLOURS[family]
            cells.append(f'<td style="background:{fill}; border:1px solid {border};">'
                         f'&nbsp;&nbsp;&nbsp;&nbsp;</td><td>&nbsp;'
                         f'{drawing.FAMILY_NAMES[family]}&nbsp;&nbsp;&nbsp;</td>')
        cells.append(f'<td style="border:3px solid {drawing.MIRROR_COLOUR};">'
                     '&nbsp;&nbsp;&nbsp;</td><td>&nbsp;mirror stage&nbsp;&nbsp;&nbsp;</td>')
        cells.append(f'<td style="border:2px dashed {drawing.RECOMPUTE_COLOUR};">'
                     '&nbsp;&nbsp;&nbsp;</td><td>&nbsp;recomputed (force_mirroring)</td>')
        per_row = self._per_row
        rows = ["<tr>" + "".join(cells[k:k + per_row]) + "</tr>"
                for k in range(0, len(cells), per_row)]
        self.setText('<table cellspacing="2" style="font-size:8pt;">' + "".join(rows)
                     + "</table>")
        self.show()

    def show_marks(self, items: list[tuple[str, str]]) -> None:
        """A key of explicit colours: (colour, words) each."""
        self._graph = None
        cells = "".join(f'<td style="background:{colour}; border:1px solid #777;">'
                        f"&nbsp;&nbsp;&nbsp;&nbsp;</td><td>&nbsp;{words}&nbsp;&nbsp;&nbsp;</td>"
                        for colour, words in items)
        self.setText(f'<table cellspacing="2" style="font-size:8pt;"><tr>{cells}</tr></table>')
        self.show()

    def show_scale(self, scale: metrics.Scale | None, note: str = "") -> None:
        """The colour scale of a metric: its name and unit, a viridis ramp with values
        under it (its ends and evenly spaced between), and the grey of no value."""
        self._graph = None
        if scale is None:
            self.setText(f"<i>{esc(note or 'no values to colour by')}</i>")
            self.show()
            return
        steps = 24
        ramp = "".join(f'<td width="11" style="background:{metrics.viridis(k / (steps - 1))};">'
                       "&nbsp;</td>" for k in range(steps))
        ticks = scale.ticks()
        aligns = ["left"] + ["center"] * (len(ticks) - 2) + ["right"]
        labels = "".join(f'<td colspan="{steps // len(ticks)}" align="{align}">'
                         f"&nbsp;{text}&nbsp;</td>" for (_, text), align in zip(ticks, aligns))
        self.setText(f'<table cellspacing="0" style="font-size:8pt;"><tr><td rowspan="2">'
                     f"{scale.title}&nbsp;&nbsp;</td>{ramp}<td rowspan=\"2\">&nbsp;&nbsp;"
                     f'</td><td style="background:{metrics.NO_VALUE};" rowspan="2">'
                     "&nbsp;&nbsp;&nbsp;&nbsp;</td><td rowspan=\"2\">&nbsp;no value</td>"
                     f"</tr><tr>{labels}</tr></table>")
        self.show()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self._graph is not None and self.width() // ENTRY_WIDTH != self._per_row:
            self.show_graph(self._graph)          # the entries flow to the new width
