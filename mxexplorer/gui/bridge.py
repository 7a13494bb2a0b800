"""DocumentBridge: the one place where core document callbacks become Qt signals."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from mxexplorer.core.graph.changes import Change
from mxexplorer.core.graph.document import GraphDocument


class DocumentBridge(QObject):
    """Signals
    -------
    changed(object): a :class:`~mxexplorer.core.graph.document.Change` after every edit
    """

    changed = Signal(object)

    def __init__(self, document: GraphDocument, parent: QObject | None = None):
        super().__init__(parent)
        self.document = document
        document.subscribe(self._on_document_changed)

    def _on_document_changed(self, doc: GraphDocument, change: Change) -> None:
        self.changed.emit(change)

    def detach(self) -> None:
        self.document.unsubscribe(self._on_document_changed)


def disconnect_quietly(*pairs: tuple[Any, Any]) -> None:
    """Disconnect each (signal, slot) pair; one already gone (its object deleted, or
    never connected) is fine: a closing panel calls this."""
    for signal, slot in pairs:
        try:
            signal.disconnect(slot)
        except (RuntimeError, TypeError):
            pass


class Selection(QObject):
    """Selected node ids, shared by the tree, the inspector and the graph pane.

    Signals
    -------
    changed(list): the selected node ids, in selection order
    """

    changed = Signal(list)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.nodes: list[int] = []

    def set(self, nodes: list[int]) -> None:
        nodes = list(dict.fromkeys(nodes))
        if nodes != self.nodes:
            self.nodes = nodes
            self.changed.emit(list(nodes))
