"""ParamStatsView: the checkpoint's values of the selected node's parameters -- min,
max, mean, std, share of zeros and a small histogram per tensor, NaN and Inf in red.

Shown under the inspector's attributes when a ``.params`` file is open.  The values
are read from the file on a worker (a 400 MB weight takes a while); a newer selection
supersedes an older read.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from mxexplorer.core.analysis import param_stats
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.gui.bridge import disconnect_quietly
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.text import esc
from mxexplorer.gui.theme import current, set_role
from mxexplorer.gui.workers import JobSlot

SPARK = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"
MAX_TENSORS = 8            # an op with more parameter inputs shows the first ones


def sparkline(histogram: tuple[int, ...]) -> str:
    """The histogram as block characters (empty bins a thin floor)."""
    top = max(histogram) if histogram else 0
    if not top:
        return ""
    return "".join(SPARK[min(len(SPARK) - 1, (h * len(SPARK)) // (top + 1))] if h else " "
                   for h in histogram)


def tensor_html(name: str, got: param_stats.TensorStats | str) -> str:
    if isinstance(got, str):
        return f"<b>{esc(name)}</b>: <i>{esc(got)}</i>"
    words = (f"<b>{esc(name)}</b> {esc(got.dtype)} {'x'.join(map(str, got.shape))}<br/>"
             f"min {got.minimum:.4g} &nbsp;max {got.maximum:.4g} &nbsp;mean {got.mean:.4g} "
             f"&nbsp;std {got.std:.4g} &nbsp;zeros {got.zeros:.1%}<br/>"
             f'<span style="font-family:monospace">{sparkline(got.histogram)}</span>')
    if got.broken:
        words += (f'<br/><span style="color:{current().error}"><b>{got.nans:,} NaN, '
                  f"{got.infs:,} Inf</b>: this checkpoint is broken here</span>")
    return words


class ParamStatsView(QWidget):
    def __init__(self, session: DocumentSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.reader = JobSlot(self)
        self.reader.finished.connect(self._on_read)
        self.reader.failed.connect(self._on_failed)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        set_role(self.label, "muted")
        # scrolls in a short strip: a long list never makes the window taller
        scroll = QScrollArea()
        scroll.setWidget(self.label)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumHeight(40)
        self.setMaximumHeight(170)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(scroll)
        self.stats: dict[str, Any] = {}
        self._shown: list[tuple[str, str]] = []
        session.selection.changed.connect(self._on_selection_changed)
        # a rename or a prefix changes the names shown (the file's keys stay)
        session.document_changed.connect(self._on_document_changed)
        self.hide()

    def names_for(self, nodes: list[int]) -> list[tuple[str, str]]:
        """(name shown, name in the file) of the checkpoint tensors of ``nodes``: a
        parameter itself, or an operator's parameter and auxiliary inputs."""
        doc = self.session.document
        kinds = doc.kinds()
        learned = (NodeKind.PARAM, NodeKind.AUX)
        picked: list[int] = []
        for node in nodes[:1]:
            if doc.nodes[node].is_variable:
                picked += [node] if kinds[node] in learned else []
            else:
                picked += [s for s, _, _ in doc.nodes[node].inputs if kinds[s] in learned]
        return [(doc.nodes[i].name, doc.file_key(doc.nodes[i].name))
                for i in picked[:MAX_TENSORS]]

    @Slot(list)
    def _on_selection_changed(self, nodes: list) -> None:
        path = self.session.document.params_path
        names = self.names_for(list(nodes)) if path else []
        if not names:
            self.reader.cancel(quiet=True)
            self.hide()
            return
        self._shown = names
        self.label.setText("Reading the checkpoint\u2026")
        self.show()
        files = [f for _, f in names]
        self.reader.start(lambda progress, token: param_stats.read_stats(path, files))

    @Slot()
    def _on_document_changed(self, *_: object) -> None:
        nodes = [n for n in self.session.selection.nodes
                 if n < len(self.session.document.nodes)]
        if self.names_for(nodes) != self._shown or self.isHidden():
            self._on_selection_changed(nodes)

    @Slot(object)
    def _on_read(self, got: Any) -> None:
        self.stats = {shown: got.get(in_file, "not read") for shown, in_file in self._shown}
        self.label.setText("<br/>".join(tensor_html(n, s) for n, s in self.stats.items()))

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.label.setText(f"<i>{esc(message.splitlines()[-1] if message else 'failed')}</i>")

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self.reader.cancel(quiet=True)
        disconnect_quietly((self.session.selection.changed, self._on_selection_changed),
                           (self.session.document_changed, self._on_document_changed))
        super().closeEvent(event)

