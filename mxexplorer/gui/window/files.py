"""FileController: a window's files and the windows files open in: open (in the
background, or now), open anywhere (the window that shows it, this one when empty, or
a new one), drop, recent files, save and save as (never over the original without
asking), the unsaved-changes question, and the recovery of a crashed run's edits.

Its :class:`DiskWatch` watches the files on disk (the symbol file and its ``.params``):
when another program (or another window) writes one, an unmodified document is read
again, and a modified one asks: reload (the edits kept in recovery), keep mine, or
compare.  A save over a file written since it was read asks first.

It holds no widget of its own: it asks its window (``set_document``, ``session``,
``host``, the status bar) and makes new windows through ``make_window``.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import QObject, QPoint, QTimer, Slot
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox

from mxexplorer.core.analysis import outline, shapes, stats
from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.recovery import RecoveryStore
from mxexplorer.core.render import blocks, drawing
from mxexplorer.core.runtime import files as disk
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.mxnet_loader import loader
from mxexplorer.gui.text import ask, message_box, warn
from mxexplorer.gui.window.disk_watch import DiskWatch
from mxexplorer.gui.window.windows import all_windows
from mxexplorer.gui.workers import JobSlot


def same_file_key(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def dropped_files(mime: Any) -> list[str]:
    """Local symbol files and checkpoints among dropped URLs (the rest is ignored)."""
    if not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls()
            if url.toLocalFile().lower().endswith((".json", ".params"))]


def _read(path: str, progress: Any, token: Any, wanted: _Wanted | None = None) -> _Opened:
    """Read and index a file on a worker: what every view asks for first is ready, and
    with the shapes the window will infer with (``wanted``), their analysis too."""
    doc = GraphDocument.open(path)
    token.check()
    analysis = None
    if wanted is not None:
        given, dtype = wanted.shapes_for(doc), wanted.dtype
        if given:
            analysis = (given, dtype, stats.analyze_document(
                doc, given, {k: dtype for k in given}, use_mxnet=wanted.use_mxnet))
        token.check()
    outline.warm(doc)
    graph = drawing.visible_graph(doc)
    if len(graph.nodes) > blocks.COLLAPSE_ABOVE:
        blocks.block_tree(doc, graph)     # the overview the pane will draw
    else:
        drawing.document_layout_source(doc)
    return _Opened(doc, analysis)


@dataclass(frozen=True)
class _Wanted:
    """The input shapes a window will infer a file with as it opens: those it was
    asked to open it with over those remembered for it (as :class:`Inputs` takes
    them; guessed from the file's hints when neither)."""

    given: dict[str, Shape]
    remembered: dict[str, Shape]
    dtype: str
    use_mxnet: bool

    def shapes_for(self, doc: GraphDocument) -> dict[str, Shape]:
        names = {doc.nodes[i].name for i in doc.data_inputs()}
        first = {k: v for k, v in self.remembered.items() if k in names} or \
            shapes.guess_input_shapes(doc)
        return {k: tuple(v) for k, v in {**first, **self.given}.items() if k in names}


@dataclass(frozen=True)
class _Opened:
    doc: GraphDocument
    #: (shapes, dtype, the analysis made for them) when shapes were known at opening
    analysis: tuple[dict[str, Shape], str, stats.AnalysisResult] | None


class FileController(QObject):
    def __init__(self, window: Any, make_window: Callable[[], Any]) -> None:
        super().__init__(window)
        self.window = window
        self.settings = window.settings
        self.make_window = make_window
        self.confirmed_overwrite = False
        #: opened by open_anywhere: the window closes if the file fails
        self.made_for_file = False
        self.opened_at = 0.0                 # when the last document came in
        self._opening_path: str | None = None
        self._open_shapes: dict[str, Shape] = {}
        self.job = JobSlot(self)
        self.job.finished.connect(self._on_opened)
        self.job.failed.connect(self._on_open_failed)
        #: what the document's files are on disk, and another program's writes
        self.disk_watch = DiskWatch(self)
        self.watcher = self.disk_watch.watcher
        self._reloading = False

    # ---------------------------------------------------------------- open
    def open_file(self, path: str, shapes: dict[str, Shape] | None = None) -> None:
        """Open ``path`` in the background: read and index it on a worker, then show it
        (after the unsaved-changes question) and infer ``shapes`` if given.  The window
        stays live meanwhile.  A file this window already shows only comes forward."""
        if self.shows(path):
            self.bring_forward()
            return
        self._read_in_background(path, dict(shapes or {}), "Opening")

    def _read_in_background(self, path: str, shapes: dict[str, Shape], doing: str) -> None:
        """Read ``path`` on a worker (with ``shapes`` over the remembered ones); the
        document is shown when it comes (:meth:`_on_opened`)."""
        self._open_shapes = shapes
        self._opening_path = path
        wanted = _Wanted(shapes, self.settings.last_shapes(path), "float32", loader().ready)
        self.job.start(lambda progress, token: _read(path, progress, token, wanted))
        self.window.statusBar().showMessage(f"{doing} {os.path.basename(path)}\u2026")

    @Slot(object)
    def _on_opened(self, opened: _Opened) -> None:
        doc = opened.doc
        window = self.window
        self._opening_path = None
        reloading, self._reloading = self._reloading, False
        window.statusBar().clearMessage()
        if window.session is not None and not reloading and not self.maybe_save():
            return
        self.show_document(doc, opened.analysis)
        if reloading:
            window.statusBar().showMessage(
                f"Reloaded {os.path.basename(doc.path or '')} from disk", 8000)

    def show_document(self, doc: GraphDocument, analysis: Any = None) -> Any:
        """Show ``doc`` in this window, watch its files, and infer its shapes when they
        are known (``analysis``: made as the file was read, for those shapes)."""
        window = self.window
        session = window.set_document(doc)
        self.opened_at = time.monotonic()
        self.watch_disk()
        if self._open_shapes:
            session.inputs.set({**session.inputs.shapes(), **self._open_shapes},
                               infer=False)
            self._open_shapes = {}
        if session.inputs.shapes() and session.inputs.auto_infer:
            # the engine, in-process: no MXNet needed; made as the file was read when
            # the shapes were known then
            if analysis is None or not session.analysis.adopt(*analysis):
                session.analysis.infer()
        return session

    @Slot(str)
    def _on_open_failed(self, message: str) -> None:
        self._opening_path = None
        self._reloading = False
        self.window.statusBar().clearMessage()
        self.window.host.show_error("Cannot open the file", message.strip().splitlines()[-1])
        if self.made_for_file and self.window.session is None:
            self.window.close()      # a window made for this file only: nothing to show

    @property
    def opening(self) -> bool:
        """A file is being read in the background."""
        return self.job.busy

    def open_path(self, path: str) -> bool:
        """Open ``path`` now, on this thread (tests, restore)."""
        try:
            doc = GraphDocument.open(path)
        except UserError as exc:
            self.window.host.show_error("Cannot open the file", str(exc))
            return False
        if self.window.session is not None and not self.maybe_save():
            return False
        self.window.set_document(doc)
        self.watch_disk()
        return True

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window, "Open symbol file", self.settings.last_open_dir(),
            "MXNet symbol (*-symbol.json *.json *.params);;All files (*)")
        if path:
            self.open_anywhere(path)

    def open_anywhere(self, path: str, shapes: dict[str, Shape] | None = None) -> Any:
        """Open ``path`` where it belongs: the window already showing it comes forward;
        else this window if it is empty, else a new window.  Returns that window."""
        for window in all_windows():
            if window.files.shows(path):
                window.files.bring_forward()
                return window
        target = self.window
        if target.session is not None or self.opening:
            target = self.new_window()
            target.files.made_for_file = True
        target.files.open_file(path, shapes)
        return target

    def new_window(self) -> Any:
        window = self.make_window()
        window.resize(self.window.size())
        window.move(self.window.pos() + QPoint(32, 32))
        window.show()
        return window

    def shows(self, path: str) -> bool:
        """This window shows (or is opening) ``path`` (its symbol file or checkpoint)."""
        doc = self.window.document
        mine = {same_file_key(p) for p in (doc.path, doc.params_path) if p} if doc else set()
        if self._opening_path:
            mine.add(same_file_key(self._opening_path))
        return same_file_key(path) in mine

    def bring_forward(self) -> None:
        window: QMainWindow = self.window
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()

    def drop(self, mime: Any) -> bool:
        """Open the files dropped on the window; False when none is a symbol file."""
        files = dropped_files(mime)
        for path in files:
            self.open_anywhere(path)
        return bool(files)

    def fill_recent_menu(self) -> None:
        menu = self.window.commands.recent_menu
        menu.clear()
        for path in self.settings.recent_files():
            # "&" in a menu marks a shortcut key: a path shows its own doubled
            menu.addAction(path.replace("&", "&&"), lambda p=path: self.open_recent(p))
        if not menu.actions():
            menu.addAction("(none)").setEnabled(False)

    def open_recent(self, path: str) -> None:
        if not os.path.exists(path):
            self.settings.remove_recent_file(path)
            self.window.host.show_error("File not found",
                                        f"{path} no longer exists; removed from the list.")
            return
        self.open_anywhere(path)

    # ---------------------------------------------------------------- save
    def save(self) -> bool:
        doc = self.window.document
        if doc is None:
            return False
        if not doc.path or doc.upgraded:
            return self.save_as()
        if not self.confirmed_overwrite:
            answer = ask(
                self.window, "Overwrite the original?",
                f"Save over {doc.path}" + (" and its checkpoint" if doc.param_renames else "")
                + "?\nUse Save As to keep the original.")
            if answer != QMessageBox.StandardButton.Yes:
                return False
            self.confirmed_overwrite = True
        return self.write(doc.path)

    def save_as(self) -> bool:
        doc = self.window.document
        if doc is None:
            return False
        start = doc.path or os.path.join(self.settings.last_open_dir(), "untitled-symbol.json")
        if doc.path and doc.path.endswith("-symbol.json"):
            start = doc.path[:-len("-symbol.json")] + "-edited-symbol.json"
        path, _ = QFileDialog.getSaveFileName(self.window, "Save symbol as", start,
                                              "MXNet symbol (*-symbol.json *.json)")
        if not path:
            return False
        self.confirmed_overwrite = True
        return self.write(path)

    def write(self, path: str, force: bool = False) -> bool:
        """Save to ``path``; a file another program wrote since it was read here is
        overwritten only when the user says so (``force``: they did)."""
        session = self.window.session
        assert session is not None
        if (force or self.disk_watch.kept_over) and \
                not self.disk_watch.pair_fits(session.document):
            return False
        try:
            session.file.save_to(path, force=force)
        except disk.ChangedOnDisk as exc:
            answer = self.disk_watch.ask_save_over(exc.paths)
            if answer == QMessageBox.StandardButton.Yes:
                return self.write(path, force=True)
            return answer == QMessageBox.StandardButton.Save and self.save_as()
        except (OSError, UserError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.window.host.show_error(
                "Save failed", f"{path}: {reason}\nYour edits are kept; nothing was "
                "written. Try Save As, or another folder.")
            return False
        self.watch_disk()
        self.window.update_title()
        self.window.statusBar().showMessage(f"Saved {path}", 4000)
        return True

    def watch_disk(self) -> None:
        """Watch the files of the document shown now (after an open or a save)."""
        self.disk_watch.watch(self.window.document)

    def reload(self) -> None:
        """Read the document's file again; unsaved edits are kept in recovery first."""
        session = self.window.session
        doc = self.window.document
        if session is None or doc is None or not doc.path:
            return
        if session.file.is_modified():
            try:
                RecoveryStore(self.settings.recovery_dir()).keep(doc)
            except OSError as exc:
                warn(self.window, "Cannot keep the edits",
                     f"The edits cannot be kept in recovery ({exc.strerror or exc}); "
                     "nothing was reloaded.")
                return
        self._reloading = True
        self._read_in_background(doc.path, {}, "Reloading")

    def restore_edits(self) -> None:
        """File > Restore Unsaved Edits: the edits kept by a reload or a crashed run."""
        if not self.offer_recovery():
            self.window.statusBar().showMessage("No unsaved edits to restore", 4000)

    def maybe_save(self) -> bool:
        """Ask before unsaved edits are dropped; True when it is fine to go on."""
        session = self.window.session
        if session is None or not session.file.is_modified():
            return True
        doc = session.document
        name = os.path.basename(doc.path) if doc.path else "untitled"
        self.bring_forward()
        answer = ask(
            self.window, "Unsaved changes", f"{name} has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    # ------------------------------------------------------------- recovery
    def report_tidied(self, tidied: list[disk.Tidied]) -> None:
        """What the start did about saves a kill cut short: a save's result kept beside
        files another program wrote since gets a dialog (once the window is up); the
        rest a status line."""
        if not tidied:
            return
        kept = [t for t in tidied if getattr(t, "kept", ())]
        self.window.statusBar().showMessage("; ".join(tidied).capitalize(), 15000)
        if kept:
            text = ("mxexplorer was stopped while it saved, and another program wrote the "
                    "same files before this start. Their files were left as they are; "
                    "the interrupted save is kept beside them:\n"
                    + "\n".join(f"  {path}" for t in kept for path in t.kept)
                    + "\n\nOpen a kept file to see those edits, or compare it with the "
                    "other program's.")
            QTimer.singleShot(0, self.window, lambda: message_box(
                self.window, QMessageBox.Icon.Warning, "An interrupted save was kept aside",
                text).exec())

    def offer_recovery(self) -> int:
        """Offer back the unsaved edits a crashed or killed mxexplorer (or a reload)
        left; returns how many documents were restored (each in a window of its own)."""
        store = RecoveryStore(self.settings.recovery_dir())
        orphans = store.orphans()
        if not orphans:
            return 0
        names = "\n".join("  " + o.label for o in orphans[:10])
        box = message_box(self.window, QMessageBox.Icon.Question, "Restore unsaved edits?",
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
                self.window.host.show_error("Cannot restore", f"{orphan.label}: {exc}")
                continue
            target = self.window if self.window.session is None and not self.opening \
                else self.new_window()
            target.files.show_document(doc).file.mark_restored()
            target.statusBar().showMessage(
                f"Restored the unsaved edits of {orphan.label}: save to keep them")
            store.discard(orphan)
            restored += 1
        return restored
