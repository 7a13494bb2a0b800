"""The main window.  For now a plain window with the internals list of one document
(the full window with docks, editor and panels is the main-window issue).
"""
from __future__ import annotations

import os
from typing import Mapping

from PySide6.QtWidgets import QMainWindow, QMessageBox, QTreeWidget, QTreeWidgetItem

from mxexplorer.core.document import GraphDocument
from mxexplorer.core.shapes import format_shape


class MainWindow(QMainWindow):
    def __init__(self) -> None:
        super().__init__()
        self.document: GraphDocument | None = None
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["name", "op", "shape"])
        self.tree.setUniformRowHeights(True)
        self.setCentralWidget(self.tree)
        self.setWindowTitle("mxexplorer")

    def set_document(self, doc: GraphDocument) -> None:
        self.document = doc
        self.setWindowTitle(f"{os.path.basename(doc.path or 'untitled')} - mxexplorer")
        self._fill({})

    def _fill(self, shapes: Mapping[int, tuple[int, ...] | None]) -> None:
        doc = self.document
        if doc is None:
            return
        self.tree.clear()
        items = []
        for k, entry in enumerate(doc.internals()):
            node = doc.nodes[entry.node]
            op = "" if node.is_variable else node.op
            items.append(QTreeWidgetItem([entry.name, op, format_shape(shapes.get(k))
                                          if k in shapes else ""]))
        self.tree.addTopLevelItems(items)
        self.tree.resizeColumnToContents(0)
        self.statusBar().showMessage(f"{len(doc.nodes)} nodes, {len(items)} internals")

    def infer_now(self, shapes: Mapping[str, tuple[int, ...]]) -> None:
        from mxexplorer.core import shapes as shape_mod

        doc = self.document
        if doc is None:
            return
        result = shape_mod.infer(doc.to_json(indent=None), shapes,
                                 param_shapes=doc.param_shapes())
        self._fill(dict(enumerate(result.internal_shapes)))
        if result.error is not None:
            self.statusBar().showMessage(result.error.one_line())

    def show_error(self, title: str, message: str) -> None:
        QMessageBox.warning(self, title, message)
