"""QUndoCommand wrappers: redo -> edit.apply, undo -> edit.revert, text from describe()."""
from __future__ import annotations

from PySide6.QtGui import QUndoCommand

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.edits import Edit, SetAttrs

_MERGE_ID = 0x6D78


class EditCommand(QUndoCommand):
    def __init__(self, document: GraphDocument, edit: Edit):
        super().__init__()
        self.document = document
        self.edit = edit
        self._described = False

    def redo(self) -> None:
        self.edit.apply(self.document)
        self.setText(self.edit.describe())

    def undo(self) -> None:
        self.edit.revert(self.document)

    def id(self) -> int:  # noqa: A003 - Qt's name
        edit = self.edit
        return _MERGE_ID if isinstance(edit, SetAttrs) and edit.single_key else -1

    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt override
        """Typing into one attribute of one node again is one undo step."""
        if not isinstance(other, EditCommand):
            return False
        a, b = self.edit, other.edit
        if not (isinstance(a, SetAttrs) and isinstance(b, SetAttrs)) or not a.merge(b):
            return False
        self.setText(a.describe())
        return True
