"""DocumentFile: whether the document differs from its file (its undo stack's clean
state, and a restored recovery), saving it, and the recovery file that keeps unsaved
edits through a crash.

Signals
-------
modified_changed(bool): the document now differs (or no longer) from its file
status(str, int): a line for the status bar, and for how many ms
"""
from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QUndoStack

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.recovery import RecoveryFile, RecoveryStore
from mxexplorer.gui.session.inputs import Inputs
from mxexplorer.gui.settings import Settings


class DocumentFile(QObject):
    modified_changed = Signal(bool)
    status = Signal(str, int)

    def __init__(self, document: GraphDocument, inputs: Inputs, settings: Settings,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        #: the edits since the file was read or written (its clean state is "saved");
        #: the file's child, so it goes after the file has stopped listening to it
        self.undo_stack = undo_stack = QUndoStack(self)
        self.inputs, self.settings = inputs, settings
        #: restored after a crash: differs from its file although nothing was undone
        self.base_modified = False
        self.recovery = RecoveryFile(RecoveryStore(settings.recovery_dir()))
        self._timer = QTimer(self, singleShot=True, interval=1000)
        self._timer.timeout.connect(self.write_recovery)
        undo_stack.indexChanged.connect(self._on_undo_index_changed)
        undo_stack.cleanChanged.connect(self._on_undo_clean_changed)

    def is_modified(self) -> bool:
        """The document differs from its file (edits, or restored after a crash)."""
        return self.base_modified or not self.undo_stack.isClean()

    def save_to(self, path: str, force: bool = False) -> None:
        """Write the document (and its checkpoint) to ``path``; clean afterwards.

        Raises
        ------
        ChangedOnDisk : another program wrote a file this save would overwrite since it
            was read (unless ``force``): nothing written, the edits stay.
        OSError, UserError : the files could not be written, or the checkpoint read
            (the document and its edits stay).
        """
        self.document.save(path, journal_dir=self.settings.saves_dir(), force=force)
        if self.inputs.shapes():
            self.settings.set_last_shapes(path, self.inputs.shapes())
        self.base_modified = False
        self.undo_stack.setClean()
        self.drop_recovery()
        self.settings.add_recent_file(path)
        self.modified_changed.emit(False)

    def mark_restored(self) -> None:
        """The document came from a recovery file: it differs from its file."""
        self.base_modified = True
        self.write_recovery()             # under this process's name from now on
        self.modified_changed.emit(True)

    def discard(self) -> None:
        """Forget the edits (the window closes without saving them)."""
        self.base_modified = False
        self.undo_stack.setClean()

    @Slot(int)
    def _on_undo_index_changed(self, index: int) -> None:
        self.modified_changed.emit(self.is_modified())
        if self.recovery.key is None and self.is_modified():
            # the first edit since the file was opened or saved is written at once:
            # the timer could trail it by seconds on a loaded machine
            self.write_recovery()
        elif not self._timer.isActive():
            # later ones at most once a second, and at least: restarted at each edit,
            # a burst of quick edits kept it from firing until the burst ended
            self._timer.start()

    @Slot(bool)
    def _on_undo_clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(self.is_modified())

    @Slot()
    def write_recovery(self) -> None:
        """Write (or, once nothing is unsaved, remove) this document's recovery file."""
        self._timer.stop()
        if not self.is_modified():
            self.drop_recovery()
            return
        try:
            self.recovery.write(self.document)
        except OSError as exc:
            self.status.emit(f"Cannot write the recovery file ({exc.strerror or exc}): "
                             "save soon", 10000)

    def drop_recovery(self) -> None:
        self._timer.stop()
        self.recovery.remove()
