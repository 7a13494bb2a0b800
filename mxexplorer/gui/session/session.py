"""DocumentSession: the document, its undo stack and selection, and the small models
panels read (see the package's docstring).

Must not import the main window or any panel.

Signals
-------
document_changed(object): the core ``Change`` after every edit (and after a save)
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QUndoStack

from mxexplorer.core.graph.changes import Change
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.edits import Edit, RenameNodeEdit, mirror_stage_edit
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.bridge import DocumentBridge, Selection
from mxexplorer.gui.commands import EditCommand
from mxexplorer.gui.insight import Insight
from mxexplorer.gui.session.analysis import Analysis
from mxexplorer.gui.session.file import DocumentFile
from mxexplorer.gui.session.inputs import Inputs
from mxexplorer.gui.session.plans import PlanState
from mxexplorer.gui.settings import Settings


class DocumentSession(QObject):
    document_changed = Signal(object)
    #: a line for the status bar, and for how many ms (0: until replaced); the models'
    #: own status lines come through here
    status = Signal(str, int)

    def __init__(self, document: GraphDocument, settings: Settings,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.settings = settings
        self.bridge = DocumentBridge(document, self)
        self.selection = Selection(self)
        self._restore_kinds()
        self.inputs = Inputs(document, settings, self)
        self.file = DocumentFile(document, self.inputs, settings, self)
        self.undo_stack: QUndoStack = self.file.undo_stack
        self.analysis = Analysis(document, self.inputs, settings, self.selection, self)
        self.plans = PlanState(document, self.inputs, self.push_edit, self)
        self.insight = Insight(self)        # colour metric and per-layer profile
        self.plans.status.connect(self.status)
        self.file.status.connect(self.status)
        self.bridge.changed.connect(self._on_document_changed)

    # ---------------------------------------------------------------- edits
    def push_edit(self, edit: Edit) -> str | None:
        """Push a core edit as one undo step; returns why it was refused, else None."""
        if isinstance(edit, RenameNodeEdit):
            try:
                edit.plan(self.document)
            except UserError as exc:
                return str(exc)
        self.undo_stack.push(EditCommand(self.document, edit))
        return None

    def mark_mirror(self, nodes: list[int], on: bool) -> str | None:
        """Tag (or untag) these nodes' operators as mirror stages, one undo step;
        returns why not (no operator among them), else None."""
        try:
            edit = mirror_stage_edit(self.document, tuple(nodes), on)
        except UserError as exc:
            return str(exc)
        return self.push_edit(edit)

    def _restore_kinds(self) -> None:
        """What the user said of variables in this file before (data or parameter)."""
        doc = self.document
        said = self.settings.variable_kinds(doc.path) if doc.path else {}
        kinds = {name: NodeKind(v) for name, v in said.items() if v in ("data", "param")}
        if kinds:
            doc.restore_kinds(kinds)

    @Slot(object)
    def _on_document_changed(self, change: Change) -> None:
        doc = self.document
        if change.kind == "kinds" and doc.path:
            self.settings.set_variable_kinds(doc.path, {
                doc.nodes[i].name: k.value for i, k in doc.kind_overrides.items()})
        if change.kind != "saved":
            # the models first: panels told of the change find the plan dropped (or
            # kept) and the new inference under way
            self.plans.document_edited()
            self.analysis.document_edited()
        self.document_changed.emit(change)

    # -------------------------------------------------------------- lifetime
    def stop(self) -> None:
        """Cancel every job of this session (their late results are dropped)."""
        self.analysis.stop()
        self.plans.cancel(quiet=True)
        self.insight.profiler.cancel(quiet=True)

    def close(self) -> None:
        """The document is going away: stop jobs, drop its recovery file, detach."""
        self.stop()
        self.file.drop_recovery()
        self.bridge.detach()
        self.analysis.detach()
