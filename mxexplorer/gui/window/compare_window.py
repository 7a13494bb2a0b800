"""CompareWindow: two graphs side by side (File > Compare With...), the differing nodes
coloured in both, and a list of the differences to step through.

Each side is a private session over a copy (the document in the main window is never
touched, nor its colours or selection); the matching is :mod:`mxexplorer.core.analysis.diff`,
worked out on a worker before the window opens (:func:`compare_files`).  Selecting a
difference selects (and centres) its node in both graphs.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core.analysis import diff
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.gui.host import WidgetHost
from mxexplorer.gui.panels.graph.pane import GraphPane
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.text import esc, plain_label, rich_label

CHANGED, ADDED, REMOVED, RENAMED = "#f5a623", "#7ed321", "#e8675c", "#8fb8e8"
LEGEND_A = [(CHANGED, "changed"), (RENAMED, "renamed"), (REMOVED, "only here (removed)")]
LEGEND_B = [(CHANGED, "changed"), (RENAMED, "renamed"), (ADDED, "only here (added)")]


def compare_files(snap: Any, path: str, progress: Any = None, token: Any = None
                  ) -> tuple[GraphDocument, GraphDocument, diff.GraphDiff]:
    """A worker's job: the snapshot's document against the file at ``path``, and their
    checkpoints when both have one (read whole: seconds for big ones)."""
    other = GraphDocument.open(path)
    mine = GraphDocument.from_snapshot(snap)
    result = diff.compare(mine, other)
    if mine.params_path and other.params_path:
        diff.compare_params(result, mine, other, mine.params_path, other.params_path)
    return mine, other, result


def describe(result: diff.GraphDiff, a: GraphDocument, b: GraphDocument
             ) -> list[tuple[str, int | None, int | None]]:
    """One line per difference, with the node in A and in B it is about."""
    rows: list[tuple[str, int | None, int | None]] = []
    for c in result.changed:
        what = ", ".join(f"{k}: {x} \u2192 {y}" for k, (x, y) in c.attrs.items())
        if c.shapes:
            what += ("; " if what else "") + "output shapes differ"
        rows.append((f"changed  {a.nodes[c.a].name}: {what}", c.a, c.b))
    rows += [(f"renamed  {a.nodes[i].name} \u2192 {b.nodes[j].name}", i, j)
             for i, j in result.renamed]
    rows += [(f"removed  {a.nodes[i].name} ({a.nodes[i].op})", i, None)
             for i in result.removed]
    rows += [(f"added    {b.nodes[j].name} ({b.nodes[j].op})", None, j)
             for j in result.added]
    for t in sorted(result.tensors, key=lambda t: -(t.max_abs if t.max_abs is not None
                                                     else float("inf"))):
        if t.max_abs == 0:
            continue
        what = f"shape {t.shape[0]} → {t.shape[1]}" if t.max_abs is None else \
            f"max abs {t.max_abs:.4g}, max rel {t.max_rel:.4g}"
        rows.append((f"tensor   {t.name}: {what}", a.node_named(a.param_renames.get(
            t.name, t.name)), b.node_named(t.name_b)))
    return rows


class CompareWindow(QMainWindow):
    def __init__(self, a: GraphDocument, b: GraphDocument, result: diff.GraphDiff,
                 settings: Settings, titles: tuple[str, str],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setWindowTitle(f"{titles[0]} \u2194 {titles[1]} - mxexplorer")
        self.result = result
        self.rows = describe(self.result, a, b)
        self.sessions = [DocumentSession(doc, settings, self) for doc in (a, b)]
        host = WidgetHost(self, self.statusBar())
        self.panes = [GraphPane(s, settings, host) for s in self.sessions]
        for session, pane, legend in zip(self.sessions, self.panes, (LEGEND_A, LEGEND_B)):
            session.inputs.auto_infer = False
            session.insight.set_marks(self._marks(pane is self.panes[0]), legend)
        sides = QSplitter()
        for pane, title in zip(self.panes, titles):
            side = QWidget()
            column = QVBoxLayout(side)
            column.setContentsMargins(0, 0, 0, 0)
            label = rich_label(f"<b>{esc(title)}</b>")
            label.setContentsMargins(6, 2, 6, 2)
            column.addWidget(label)
            column.addWidget(pane, 1)
            sides.addWidget(side)
        self.summary = plain_label(self.result.summary())
        self.summary.setContentsMargins(6, 2, 6, 2)
        self.list = QListWidget()
        for text, _, _ in self.rows:
            self.list.addItem(QListWidgetItem(text))
        self.list.currentRowChanged.connect(self.show_row)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(sides)
        bottom = QWidget()
        rows = QVBoxLayout(bottom)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.addWidget(self.summary)
        rows.addWidget(self.list)
        split.addWidget(bottom)
        split.setSizes([600, 180])
        self.setCentralWidget(split)
        self.resize(1400, 860)

    def _marks(self, side_a: bool) -> dict[int, str]:
        r = self.result
        marks: dict[int, str] = {}
        for i, j in r.renamed:
            marks[i if side_a else j] = RENAMED
        for c in r.changed:
            marks[c.a if side_a else c.b] = CHANGED
        for node in (r.removed if side_a else r.added):
            marks[node] = REMOVED if side_a else ADDED
        return marks

    @Slot(int)
    def show_row(self, row: int) -> None:
        """Select (and centre) the difference's node in each graph that has it."""
        if not 0 <= row < len(self.rows):
            return
        _, i, j = self.rows[row]
        for session, node in zip(self.sessions, (i, j)):
            session.selection.set([node] if node is not None else [])

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        for pane in self.panes:
            pane.stop()
        for session in self.sessions:
            session.close()
        super().closeEvent(event)
