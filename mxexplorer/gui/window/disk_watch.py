"""DiskWatch: what a window's files are on disk, and what another program wrote.

It watches the document's files (the symbol file and its ``.params``) and their
folders, and looks once the events settle: an unmodified document is read again; a
modified one asks: Reload (the edits kept in recovery), Keep Mine, or Compare.  A save
that found a file written since it was read asks before it goes over it
(:meth:`ask_save_over`), and a save over another program's checkpoint that lacks this
graph's parameters asks again (:meth:`pair_fits`): the pair would not load.
"""
from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Slot
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QMessageBox

from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime import files as disk
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.text import ask, message_box


def _label(box: QMessageBox, words: dict[QMessageBox.StandardButton, str]) -> None:
    """Name a message box's buttons for what they do here (the standard buttons' own
    icons, a tick or a reset arrow, would say something else)."""
    for which, text in words.items():
        button = box.button(which)
        button.setText(text)
        button.setIcon(QIcon())


class DiskWatch(QObject):
    def __init__(self, files: Any) -> None:
        super().__init__(files)
        #: the window's FileController (reload, opening)
        self.files = files
        self.window = files.window
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._on_event)
        self.watcher.directoryChanged.connect(self._on_event)
        #: events come in bursts (a write, a rename, two files): looked at once settled
        self._timer = QTimer(self, singleShot=True, interval=400)
        self._timer.timeout.connect(self.check)
        #: the changed files the user was told about, as they were then
        self._told: dict[str, disk.FileIdentity | None] = {}
        self._asking = False
        #: the user chose to keep their edits over another program's files
        self.kept_over = False

    def pair_fits(self, doc: GraphDocument) -> bool:
        """Before a save over another program's checkpoint (the user said so): when it
        lacks parameters this graph needs, the pair would not load; ask again."""
        if not doc.params_path:
            return True
        # the checkpoint's index as it is now; the files stay unaccepted until the
        # save is done (a No here leaves the next Save asking from the start)
        doc.reread_params()
        try:
            found = doc.checkpoint_mismatch()
        except UserError:
            return True                        # the save itself says it cannot read it
        name = os.path.basename(doc.params_path)
        if doc.params_error:
            if doc.param_renames:
                return True                    # copied with the renames: the save fails
            why = f"The checkpoint on disk ({name}) cannot be read: {doc.params_error}."
        else:
            missing = list(found.lacking) if found is not None else []
            if not missing:
                return True
            shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more"
                                              if len(missing) > 4 else "")
            why = (f"The checkpoint on disk ({name}, written by another program) lacks "
                   f"{len(missing)} array{'s' if len(missing) > 1 else ''} this graph "
                   f"needs: {shown}.")
        answer = ask(self.window, "The pair would not load",
                     why + "\nSaved beside it, this graph will not load in MXNet.\n\n"
                     "Save anyway?", default=QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def describe_changes(self, paths: list[str]) -> str:
        lines = []
        for p in paths:
            now = disk.identify(p, digest=False)
            when = f"written {now.stamp()}" if now else "removed"
            lines.append(f"  {os.path.basename(p)} ({when})")
        return "\n".join(lines)

    def ask_save_over(self, paths: list[str]) -> QMessageBox.StandardButton:
        """A save found ``paths`` written by another program: Yes (overwrite), Save
        (Save As) or Cancel."""
        doc = self.window.document
        pair = ""
        if doc is not None and doc.params_path and \
                os.path.abspath(doc.params_path) in paths:
            pair = ("\nThe checkpoint is no longer the one these edits were made on: "
                    "overwriting writes this graph beside the arrays now on disk.")
        box = message_box(
            self.window, QMessageBox.Icon.Warning, "Changed on disk",
            "Another program wrote these files after they were opened here:\n"
            + self.describe_changes(paths) + pair
            + "\n\nOverwrite them with your edits? Save As keeps both.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Cancel)
        _label(box, {QMessageBox.StandardButton.Yes: "Overwrite",
                     QMessageBox.StandardButton.Save: "Save As\u2026"})
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return QMessageBox.StandardButton(box.exec())

    # ---------------------------------------------------------- on the disk
    def watch(self, doc: GraphDocument | None) -> None:
        """Watch ``doc``'s files (and their folders: an atomic replace is a new file)."""
        old = self.watcher.files() + self.watcher.directories()
        if old:
            self.watcher.removePaths(old)
        self._told = {}
        self.kept_over = False
        if doc is None:
            return
        paths = [p for p in doc.disk if os.path.exists(p)]
        folders = sorted({d for p in doc.disk if os.path.isdir(d := os.path.dirname(p))})
        if paths + folders:
            self.watcher.addPaths(paths + folders)

    @Slot(str)
    def _on_event(self, _path: str) -> None:
        self._timer.start()

    @Slot()
    def check(self) -> None:
        """Look at the document's files: an unmodified document is read again when one
        changed; a modified one asks (reload, keep mine, compare)."""
        doc, session = self.window.document, self.window.session
        if doc is None or session is None or self._asking or self.files.opening:
            return
        missing = [p for p in doc.disk if os.path.exists(p) and p not in self.watcher.files()]
        if missing:
            self.watcher.addPaths(missing)          # re-armed after a replace
        changed = doc.changed_on_disk()
        now = {p: disk.identify(p, digest=False) for p in changed}
        if not changed or now == self._told:
            return
        self._told = now
        if not doc.path or not os.path.exists(doc.path):
            return                              # removed: Save writes it again
        if not session.file.is_modified():
            self.files.reload()
            return
        self._asking = True
        try:
            box = message_box(
                self.window, QMessageBox.Icon.Warning, "Changed on disk",
                "Another program wrote these files while you were editing them:\n"
                + self.describe_changes(changed)
                + "\n\nReload shows the files as they are now (your edits are kept: "
                "File \u203a Restore Unsaved Edits brings them back). Keep Mine goes on "
                "with your edits; Save will then write over the other program's files. "
                "Compare shows what differs.",
                QMessageBox.StandardButton.Reset | QMessageBox.StandardButton.Ignore
                | QMessageBox.StandardButton.Apply)
            _label(box, {QMessageBox.StandardButton.Reset: "Reload",
                         QMessageBox.StandardButton.Ignore: "Keep Mine",
                         QMessageBox.StandardButton.Apply: "Compare"})
            box.setDefaultButton(QMessageBox.StandardButton.Ignore)
            answer = box.exec()
        finally:
            self._asking = False
        if self.window.document is not doc:
            return
        if answer == QMessageBox.StandardButton.Reset:
            self.files.reload()
        elif answer == QMessageBox.StandardButton.Apply:
            self.window.exports.compare_with(doc.path)
        elif answer == QMessageBox.StandardButton.Ignore:
            doc.accept_disk()
            self._told = {}
            self.kept_over = True
            session.file.write_recovery()
