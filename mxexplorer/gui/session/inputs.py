"""Inputs: the data inputs' shapes and the dtype, kept per input node (so they follow
renames and prefixes), first from what this file was last inferred with, else guessed.

Signals
-------
changed(bool): the shapes or the dtype changed; the flag says whether to infer again
"""
from __future__ import annotations

from typing import Mapping

from PySide6.QtCore import QObject, Signal

from mxexplorer.core.analysis import shapes
from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.settings import Settings


class Inputs(QObject):
    changed = Signal(bool)

    def __init__(self, document: GraphDocument, settings: Settings,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document, self.settings = document, settings
        self.dtype = "float32"
        #: infer again whenever the shapes change (the shape form's "Auto" box)
        self.auto_infer = True
        self._by_node: dict[int, Shape] = self._ids(self._remembered())

    def _remembered(self) -> dict[str, Shape]:
        doc = self.document
        inputs = {doc.nodes[i].name for i in doc.data_inputs()}
        remembered = self.settings.last_shapes(doc.path) if doc.path else {}
        return {k: v for k, v in remembered.items() if k in inputs} or \
            shapes.guess_input_shapes(doc)

    def _ids(self, by_name: Mapping[str, Shape]) -> dict[int, Shape]:
        doc = self.document
        return {i: tuple(by_name[doc.nodes[i].name]) for i in doc.data_inputs()
                if doc.nodes[i].name in by_name}

    def shapes(self) -> dict[str, Shape]:
        """The data inputs' shapes, by their current names (empty ones left out)."""
        doc = self.document
        return {doc.nodes[i].name: self._by_node[i] for i in doc.data_inputs()
                if i in self._by_node}

    def key(self) -> tuple[tuple[tuple[str, Shape], ...], str]:
        """What an analysis made for these shapes remembers of them."""
        return tuple(sorted(self.shapes().items())), self.dtype

    def set(self, by_name: Mapping[str, Shape], dtype: str | None = None,
            infer: bool | None = None) -> None:
        """Replace the shapes (inputs left out have none); ``infer`` (by default the
        auto-infer setting) asks for inference when they changed."""
        new = self._ids(by_name)
        dtype = dtype or self.dtype
        if new == self._by_node and dtype == self.dtype:
            return
        self._by_node, self.dtype = new, dtype
        self.changed.emit(self.auto_infer if infer is None else infer)

    def take_used(self, used: Mapping[str, Shape]) -> bool:
        """Inputs an inference filled in (from the file's hints) join the shapes; True
        when that changed them (``changed`` is emitted, asking for no inference)."""
        new = self._ids(used)
        if not new or all(self._by_node.get(i) == s for i, s in new.items()):
            return False
        self._by_node.update(new)
        self.changed.emit(False)
        return True

    def for_jobs(self) -> dict[str, Shape]:
        """The shapes a plan, fit or benchmark needs.

        Raises
        ------
        UserError : there are none.
        """
        given = self.shapes()
        if not given:
            raise UserError("Give the input shapes in the Input shapes panel first.")
        return given
