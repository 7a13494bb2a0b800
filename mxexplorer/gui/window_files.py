"""WindowFiles: what a main window does with files and with other windows.

Open (in the background, one window per file, a file already shown comes forward),
drag and drop, recent files, save and save as (atomic; the original is never
overwritten without asking), the unsaved-changes question (naming the file), and the
edits a crashed run left behind.  Mixed into :class:`MainWindow`, whose session,
settings, host and open job it uses.
"""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint, Slot
from PySide6.QtWidgets import QFileDialog, QMessageBox

from mxexplorer.core import blocks, drawing, outline
from mxexplorer.core.document import GraphDocument
from mxexplorer.core.errors import UserError
from mxexplorer.core.recovery import RecoveryStore
from mxexplorer.core.shapes import Shape
from mxexplorer.gui.text import ask, message_box

if TYPE_CHECKING:
    from mxexplorer.gui.main_window import MainWindow


def _same_file_key(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _dropped_files(mime: Any) -> list[str]:
    """Local symbol files and checkpoints among dropped URLs (the rest is ignored)."""
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls()
            if url.toLocalFile().lower().endswith((".json", ".params"))]




class WindowFiles:
    """File and window handling of :class:`MainWindow` (a mixin: no state of its own)."""

    def open_file(self, path: str, shapes: dict[str, Shape] | None = None) -> None:
        """Open ``path`` in the background: read and index it on a worker, then show it
        (after the unsaved-changes question) and infer ``shapes`` if given.  The window
        stays live meanwhile.  A file this window already shows only comes forward."""
        if self.shows(path):
            self.bring_forward()
            return
        self._open_shapes = dict(shapes or {})
        self._opening_path = path

        def job(progress: Any, token: Any) -> GraphDocument:
            doc = GraphDocument.open(path)
            token.check()
            outline.warm(doc)
            graph = drawing.visible_graph(doc)
            if len(graph.nodes) > blocks.COLLAPSE_ABOVE:
                blocks.block_tree(doc, graph)     # the overview the pane will draw
            else:
                drawing.document_layout_source(doc)
            return doc

        self._open_job.start(job)
        self.statusBar().showMessage(f"Opening {os.path.basename(path)}\u2026")

    @Slot(object)
    def _on_file_opened(self, doc: GraphDocument) -> None:
        self._opening_path = None
        self.statusBar().clearMessage()
        if self.session is not None and not self.maybe_save():
            return
        session = self.set_document(doc)
        self._mxnet_deadline = time.monotonic() + 15.0
        if self._open_shapes:
            session.inputs.set({**session.inputs.shapes(), **self._open_shapes},
                                     infer=False)
        if session.inputs.shapes() and session.inputs.auto_infer:
            session.analysis.infer(start_mxnet=False)     # once MXNet is in (started when idle)

    @Slot(str)
    def _on_file_open_failed(self, message: str) -> None:
        self._opening_path = None
        self.statusBar().clearMessage()
        self.show_error("Cannot open the file", message.strip().splitlines()[-1])
        if self._made_for_file and self.session is None:
            self.close()         # a window made for this file only: nothing to show

    @property
    def opening(self) -> bool:
        """A file is being read in the background."""
        return self._open_job.busy

    def open_path(self, path: str) -> bool:
        """Open ``path`` now, on this thread (tests, restore)."""
        try:
            doc = GraphDocument.open(path)
        except UserError as exc:
            self.show_error("Cannot open the file", str(exc))
            return False
        if self.session is not None and not self.maybe_save():
            return False
        self.set_document(doc)
        return True

    # ---------------------------------------------------------------- files
    def _on_open_triggered(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open symbol file", self.settings.last_open_dir(),
            "MXNet symbol (*-symbol.json *.json *.params);;All files (*)")
        if path:
            self.open_anywhere(path)

    def open_anywhere(self: MainWindow, path: str,
                      shapes: dict[str, Shape] | None = None) -> MainWindow:
        """Open ``path`` where it belongs: the window already showing it comes forward;
        else this window if it is empty, else a new window.  Returns that window."""
        from mxexplorer.gui.windows import all_windows

        for window in all_windows():
            if window.shows(path):
                window.bring_forward()
                return window
        target = self
        if self.session is not None or self.opening:
            target = self.new_window()
            target._made_for_file = True
        target.open_file(path, shapes)
        return target

    def new_window(self: MainWindow) -> MainWindow:
        from mxexplorer.gui.main_window import MainWindow

        window = MainWindow(self.settings)
        window.resize(self.size())
        window.move(self.pos() + QPoint(32, 32))
        window.show()
        return window

    def shows(self, path: str) -> bool:
        """This window shows (or is opening) ``path`` (its symbol file or checkpoint)."""
        doc = self.document
        mine = {_same_file_key(p) for p in (doc.path, doc.params_path) if p} if doc else set()
        if self._opening_path:
            mine.add(_same_file_key(self._opening_path))
        return _same_file_key(path) in mine

    def bring_forward(self) -> None:
        if self.isMinimized():
            self.showNormal()
        self.raise_()
        self.activateWindow()

    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802
        if _dropped_files(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: Any) -> None:  # noqa: N802
        self.dragEnterEvent(event)

    def dropEvent(self, event: Any) -> None:  # noqa: N802
        files = _dropped_files(event.mimeData())
        if not files:
            event.ignore()
            return
        event.acceptProposedAction()
        for path in files:
            self.open_anywhere(path)

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        for path in self.settings.recent_files():
            # "&" in a menu marks a shortcut key: a path shows its own doubled
            self.recent_menu.addAction(path.replace("&", "&&"), lambda p=path: self._open_recent(p))
        if not self.recent_menu.actions():
            self.recent_menu.addAction("(none)").setEnabled(False)

    def _open_recent(self, path: str) -> None:
        if not os.path.exists(path):
            self.settings.remove_recent_file(path)
            self.show_error("File not found", f"{path} no longer exists; removed from the list.")
            return
        self.open_anywhere(path)

    def save(self) -> bool:
        doc = self.document
        if doc is None:
            return False
        if not doc.path or doc.upgraded:
            return self.save_as()
        if not self._confirmed_overwrite:
            answer = ask(
                self, "Overwrite the original?",
                f"Save over {doc.path}" + (" and its checkpoint" if doc.param_renames else "")
                + "?\nUse Save As to keep the original.")
            if answer != QMessageBox.StandardButton.Yes:
                return False
            self._confirmed_overwrite = True
        return self._write(doc.path)

    def save_as(self) -> bool:
        doc = self.document
        if doc is None:
            return False
        start = doc.path or os.path.join(self.settings.last_open_dir(), "untitled-symbol.json")
        if doc.path and doc.path.endswith("-symbol.json"):
            start = doc.path[:-len("-symbol.json")] + "-edited-symbol.json"
        path, _ = QFileDialog.getSaveFileName(self, "Save symbol as", start,
                                              "MXNet symbol (*-symbol.json *.json)")
        if not path:
            return False
        self._confirmed_overwrite = True
        return self._write(path)

    def _write(self, path: str) -> bool:
        assert self.session is not None
        try:
            self.session.file.save_to(path)
        except OSError as exc:
            self.show_error("Save failed", f"{path}: {exc.strerror or exc}\n"
                                           "Your edits are kept; try another folder.")
            return False
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 4000)
        return True

    def maybe_save(self) -> bool:
        """Ask before unsaved edits are dropped; True when it is fine to go on."""
        if not self.is_modified():
            return True
        doc = self.document
        name = os.path.basename(doc.path) if doc is not None and doc.path else "untitled"
        self.bring_forward()
        answer = ask(
            self, "Unsaved changes", f"{name} has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    # ------------------------------------------------------------- recovery
    def offer_recovery(self) -> int:
        """Offer back the unsaved edits a crashed or killed mxexplorer left; returns
        how many documents were restored (each in a window of its own)."""
        store = RecoveryStore(self.settings.recovery_dir())
        orphans = store.orphans()
        if not orphans:
            return 0
        names = "\n".join("  " + o.label for o in orphans[:10])
        box = message_box(self, QMessageBox.Icon.Question, "Restore unsaved edits?",
                          "mxexplorer stopped before these edits were saved:\n" + names
                          + "\n\nRestore them? (Later keeps them for the next start.)",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel)
        box.setStyleSheet("QLabel#qt_msgbox_label { min-width: 420px; }")
        box.button(QMessageBox.StandardButton.Yes).setText("Restore")
        box.button(QMessageBox.StandardButton.Cancel).setText("Later")
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Discard:
            for orphan in orphans:
                store.discard(orphan)
            return 0
        if answer != QMessageBox.StandardButton.Yes:
            return 0
        restored = 0
        for orphan in orphans:
            try:
                doc = store.restore(orphan)
            except UserError as exc:
                self.show_error("Cannot restore", f"{orphan.label}: {exc}")
                continue
            target = self if self.session is None and not self.opening else \
                self.new_window()
            target.set_document(doc).file.mark_restored()
            target.statusBar().showMessage(
                f"Restored the unsaved edits of {orphan.label}: save to keep them")
            store.discard(orphan)
            restored += 1
        return restored
