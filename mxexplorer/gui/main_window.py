"""MainWindow: assembles docks, menus and workers around one document; stays thin.

Left: the internals tree.  Middle: the graph pane (its own issue).  Right: the
attribute editor and the shape form.  Bottom: the memory panel (its own issue).
"""
from __future__ import annotations

import os
import time
from typing import Any

from PySide6.QtCore import QPoint, Qt, QThread, QTimer, Slot
from PySide6.QtGui import QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QSizePolicy,
)

from mxexplorer.core import drawing, edits, export, shapes, stats
from mxexplorer.core.document import GraphDocument
from mxexplorer.core.errors import UserError
from mxexplorer.core.mxnet_env import import_mxnet
from mxexplorer.core.recovery import RecoveryStore
from mxexplorer.core.shapes import Shape, ShapeResult
from mxexplorer.gui import workers
from mxexplorer.gui.bridge import DocumentBridge, Selection
from mxexplorer.gui.commands import EditCommand
from mxexplorer.gui.panels.graph_view import GraphPane
from mxexplorer.gui.panels.inspector import AttributePanel
from mxexplorer.gui.panels.memory import MemoryPanel
from mxexplorer.gui.panels.shape_form import ShapeFormPanel
from mxexplorer.gui.panels.tree import InternalsPanel
from mxexplorer.gui.settings import Settings


def _import_mxnet_job(progress: Any, token: Any) -> bool:
    import_mxnet()
    return True


#: every main window not yet closed: a window opened for a second file has no other
#: Python owner, and a wrapper collected takes its window with it
_OPEN: list[MainWindow] = []


def all_windows() -> list[MainWindow]:
    """The open main windows of this process, the active one first."""
    from PySide6.QtWidgets import QApplication
    from shiboken6 import isValid

    _OPEN[:] = [w for w in _OPEN if isValid(w)]     # deleted without a close: gone
    windows = [w for w in _OPEN if w.isVisible()]
    active = QApplication.activeWindow()
    windows.sort(key=lambda w: w is not active)
    return windows


def _same_file_key(path: str) -> str:
    return os.path.realpath(os.path.expanduser(path))


def _dropped_files(mime: Any) -> list[str]:
    """Local symbol files and checkpoints among dropped URLs (the rest is ignored)."""
    if not mime.hasUrls():
        return []
    out = []
    for url in mime.urls():
        path = url.toLocalFile()
        if path and path.lower().endswith((".json", ".params")):
            out.append(path)
    return out


def _placeholder(text: str) -> QLabel:
    label = QLabel(text)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setStyleSheet("color: #777;")
    label.setWordWrap(True)
    return label


class MainWindow(QMainWindow):
    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.document: GraphDocument | None = None
        self.bridge: DocumentBridge | None = None
        self.selection = Selection(self)
        self.undo_stack = QUndoStack(self)
        self.tree: InternalsPanel | None = None
        self.inspector: AttributePanel | None = None
        self.shape_form: ShapeFormPanel | None = None
        self.graph_pane: GraphPane | None = None
        self.memory: MemoryPanel | None = None
        self.shape_result: ShapeResult | None = None
        self.graph_stats: stats.GraphStats | None = None
        self.last_shapes: dict[str, Shape] = {}
        self.last_dtype = "float32"
        self._confirmed_overwrite = False
        self._jobs: list[tuple[QThread, workers.FunctionWorker]] = []
        self._infer_job: tuple[QThread, workers.FunctionWorker] | None = None
        self.mxnet_ready = False
        self._shown = False
        # unsaved edits go to a recovery file a second after each change
        self.recovery = RecoveryStore(self.settings.recovery_dir())
        self._recovery_key: str | None = None
        self._base_modified = False      # a restored document differs from its file
        self._recovery_timer = QTimer(self, singleShot=True, interval=1000)
        self._recovery_timer.timeout.connect(self.write_recovery)

        self.setWindowTitle("mxexplorer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setDockNestingEnabled(True)
        self.setCentralWidget(_placeholder("Open a symbol file (File > Open, or drop it here)."))
        self._make_docks()
        self._make_actions()
        self.undo_stack.cleanChanged.connect(self._on_undo_clean_changed)
        self.undo_stack.indexChanged.connect(self._on_undo_index_changed)
        self.totals = QLabel()
        self.mxnet_label = QLabel()
        # MXNet's state keeps its room; the totals give way (whole in their tooltip)
        self.mxnet_label.setMinimumWidth(
            self.mxnet_label.fontMetrics().horizontalAdvance("MXNet: unavailable") + 8)
        self.totals.setMinimumWidth(120)
        self.totals.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        self.statusBar().addPermanentWidget(self.totals)
        self.statusBar().addPermanentWidget(self.mxnet_label)
        self._open_job: workers.FunctionWorker | None = None
        self._opening_path: str | None = None
        self._made_for_file = False    # opened by open_anywhere: closes if the file fails
        self.setAcceptDrops(True)
        _OPEN.append(self)
        # a child timer dies with the window (a singleShot to a method outlived it)
        self._memory_timer = QTimer(self, singleShot=True, interval=50)
        self._memory_timer.timeout.connect(self._install_memory_panel)
        self._open_shapes: dict[str, Shape] = {}
        self._pending_inference: dict[str, Shape] = {}
        self._mxnet_started = False
        # MXNet's import takes the GIL for a second: with it, every Qt call back into
        # Python waits its turn and a graph took 5x longer to show, in stalls up to a
        # second.  So it starts when the window is idle: at once without a file, else
        # once the graph is drawn (or after 15 s of drawing), or when a job needs it.
        self._mxnet_deadline = time.monotonic() + 15.0
        self._mxnet_timer = QTimer(self, interval=100)
        self._mxnet_timer.timeout.connect(self._start_mxnet_import_when_idle)
        self._mxnet_timer.start()

    # ------------------------------------------------------------- building
    def _make_docks(self) -> None:
        self.tree_dock = QDockWidget("Internals", self)
        self.tree_dock.setObjectName("internals_dock")
        self.inspector_dock = QDockWidget("Attributes", self)
        self.inspector_dock.setObjectName("attributes_dock")
        self.shapes_dock = QDockWidget("Input shapes", self)
        self.shapes_dock.setObjectName("shapes_dock")
        self.memory_dock = QDockWidget("Memory planner", self)
        self.memory_dock.setObjectName("memory_dock")
        self.memory_dock.setWidget(_placeholder(
            "Memory planner and benchmark: tag mirror stages in the tree now; the planner "
            "panel arrives with its own issue."))
        for dock in (self.tree_dock, self.inspector_dock, self.shapes_dock, self.memory_dock):
            dock.setWidget(dock.widget() or _placeholder(""))
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.tree_dock)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.inspector_dock)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.shapes_dock)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.memory_dock)
        self.resizeDocks([self.tree_dock, self.inspector_dock], [760, 380],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.memory_dock], [250], Qt.Orientation.Vertical)

    def _make_actions(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.open_action = file_menu.addAction("&Open...", QKeySequence.StandardKey.Open,
                                               self._on_open_triggered)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.save_action = file_menu.addAction("&Save", QKeySequence.StandardKey.Save,
                                               self.save)
        self.save_as_action = file_menu.addAction("Save &As...", QKeySequence.StandardKey.SaveAs,
                                                  self.save_as)
        self.export_graph_action = file_menu.addAction("&Export Graph Picture...",
                                                       QKeySequence("Ctrl+E"),
                                                       self._on_export_graph_triggered)
        file_menu.addSeparator()
        file_menu.addAction("&Quit", QKeySequence.StandardKey.Quit, self.close)
        edit_menu = bar.addMenu("&Edit")
        self.undo_action = self.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcuts(QKeySequence.StandardKey.Undo)
        self.redo_action = self.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts(QKeySequence.StandardKey.Redo)
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        edit_menu.addSeparator()
        self.prefix_action = edit_menu.addAction("&Prefix All Names...", self._on_prefix_triggered)
        self.mirror_action = edit_menu.addAction("Toggle &Mirror Stage",
                                                 QKeySequence("Ctrl+M"),
                                                 self._on_toggle_mirror_triggered)
        view_menu = bar.addMenu("&View")
        for dock in (self.tree_dock, self.inspector_dock, self.shapes_dock, self.memory_dock):
            view_menu.addAction(dock.toggleViewAction())
        self._set_document_actions(False)

    def _set_document_actions(self, on: bool) -> None:
        for action in (self.save_action, self.save_as_action, self.prefix_action,
                       self.mirror_action, self.export_graph_action):
            action.setEnabled(on)

    # ------------------------------------------------------------- document
    def set_document(self, doc: GraphDocument) -> None:
        """Show ``doc``; the window owns it from now on (one document per window)."""
        if self.bridge is not None:
            self.bridge.detach()
        self._drop_recovery()          # the old document's edits were saved or dropped
        self._base_modified = False
        for panel in (self.tree, self.inspector, self.graph_pane, self.memory):
            if panel is not None:
                panel.close()
                panel.deleteLater()      # Qt deletes it, children in order
        self.document = doc
        self.shape_result = None
        self.graph_stats = None
        self.last_shapes = {}
        self._confirmed_overwrite = False
        self.bridge = DocumentBridge(doc, self)
        self.bridge.changed.connect(self._on_document_changed)
        self.tree = InternalsPanel(self.bridge, self.selection)
        self.tree.cut_requested.connect(self._on_cut_requested)
        self.tree.mirror_requested.connect(self._on_mirror_requested)
        self.tree_dock.setWidget(self.tree)
        self.inspector = AttributePanel(self.bridge, self.selection)
        self.inspector.edit_requested.connect(self._on_edit_requested)
        self.inspector_dock.setWidget(self.inspector)
        initial = self.settings.last_shapes(doc.path) if doc.path else {}
        inputs = {doc.nodes[i].name for i in doc.data_inputs()}
        initial = {k: v for k, v in initial.items() if k in inputs} or \
            shapes.guess_input_shapes(doc)
        self.shape_form = ShapeFormPanel(doc, initial)
        self.shape_form.infer_requested.connect(self._on_infer_requested)
        self.shapes_dock.setWidget(self.shape_form)
        self.graph_pane = GraphPane(self.bridge, self.selection)
        self.graph_pane.mirror_requested.connect(self._on_mirror_requested)
        self.graph_pane.exported.connect(self._on_graph_exported)
        self.setCentralWidget(self.graph_pane)
        self.memory = None
        # the planner's plots are built on the next turn: opening a big graph stays
        # in steps under 100 ms
        self._memory_timer.start()
        self.undo_stack.clear()
        self._set_document_actions(True)
        if doc.path:
            self.settings.add_recent_file(doc.path)
            self.settings.set_last_open_dir(os.path.dirname(os.path.abspath(doc.path)))
        self._update_title()
        self._update_totals()
        if doc.unknown_ops():
            self.statusBar().showMessage(
                "Ops unknown to MXNet 1.9.1: " + ", ".join(doc.unknown_ops())
                + " (the graph shows; shape inference will stop there)")

    def open_file(self, path: str, shapes: dict[str, Shape] | None = None) -> None:
        """Open ``path`` in the background: read and index it on a worker, then show it
        (after the unsaved-changes question) and infer ``shapes`` if given.  The window
        stays live meanwhile.  A file this window already shows only comes forward."""
        if self.shows(path):
            self.bring_forward()
            return
        self._open_shapes = dict(shapes or {})
        self._opening_path = path
        if self._open_job is not None:
            self._open_job.request_cancel()

        def job(progress: Any, token: Any) -> GraphDocument:
            doc = GraphDocument.open(path)
            token.check()
            doc.warm()
            drawing.document_layout_source(doc)
            return doc

        worker = workers.FunctionWorker(job)
        worker.finished.connect(self._on_file_opened)
        worker.failed.connect(self._on_file_open_failed)
        worker.cancelled.connect(self._on_file_open_cancelled)
        self._open_job = worker
        self._keep(workers.start(self, worker), worker)
        self.statusBar().showMessage(f"Opening {os.path.basename(path)}\u2026")

    @Slot(object)
    def _on_file_opened(self, doc: GraphDocument) -> None:
        if self.sender() is not self._open_job:
            return          # superseded by a newer open
        self._open_job = None
        self._opening_path = None
        self.statusBar().clearMessage()
        if self.document is not None and not self.maybe_save():
            return
        self.set_document(doc)
        self._mxnet_deadline = time.monotonic() + 15.0
        if self._open_shapes:
            # inference needs MXNet: run it once MXNet is in (see _mxnet_timer)
            self._pending_inference = dict(self._open_shapes)
            if self.mxnet_ready:
                self._run_pending_inference()

    @Slot(str)
    def _on_file_open_failed(self, message: str) -> None:
        if self.sender() is not self._open_job:
            return
        self._open_job = None
        self._opening_path = None
        self.statusBar().clearMessage()
        self.show_error("Cannot open the file", message.strip().splitlines()[-1])
        if self._made_for_file and self.document is None:
            self.close()         # a window made for this file only: nothing to show

    @Slot()
    def _on_file_open_cancelled(self) -> None:
        if self.sender() is self._open_job:
            self._open_job = None
            self._opening_path = None

    @property
    def opening(self) -> bool:
        """A file is being read in the background."""
        return self._open_job is not None

    @Slot()
    def _install_memory_panel(self) -> None:
        doc = self.document
        if doc is None or self.memory is not None:
            return
        self.memory = MemoryPanel(doc, self._current_shapes,
                                  choices=self.settings.planner_choices())
        self.memory.choices_changed.connect(self.settings.set_planner_choices)
        self.memory.apply_requested.connect(self._on_edit_requested)
        self.memory.preview_requested.connect(self._on_preview_requested)
        self.memory_dock.setWidget(self.memory)
        if self.mxnet_ready:
            self.memory.load_devices()

    def open_path(self, path: str) -> bool:
        try:
            doc = GraphDocument.open(path)
        except UserError as exc:
            self.show_error("Cannot open the file", str(exc))
            return False
        if self.document is not None and not self.maybe_save():
            return False
        self.set_document(doc)
        return True

    def show_error(self, title: str, message: str) -> None:
        QMessageBox.warning(self, title, message)

    # ---------------------------------------------------------------- edits
    def push_edit(self, edit: Any) -> bool:
        """Push a core edit as one undo step; a refused edit shows why, changes nothing."""
        if self.document is None:
            return False
        if isinstance(edit, edits.RenameNodeEdit):
            try:
                edit.plan(self.document)
            except UserError as exc:
                self.show_error("Cannot rename", str(exc))
                return False
        self.undo_stack.push(EditCommand(self.document, edit))
        return True

    @Slot(object)
    def _on_edit_requested(self, edit: Any) -> None:
        self.push_edit(edit)

    @Slot(list, bool)
    def _on_mirror_requested(self, nodes: list, on: bool) -> None:
        assert self.document is not None
        try:
            self.push_edit(edits.mirror_stage_edit(self.document, tuple(nodes), on))
        except UserError as exc:
            self.statusBar().showMessage(str(exc), 5000)

    def _on_toggle_mirror_triggered(self) -> None:
        doc = self.document
        if doc is None or not self.selection.nodes:
            return
        ops = [n for n in self.selection.nodes if not doc.nodes[n].is_variable]
        on = not all(edits.is_mirror_stage(doc.nodes[n].attrs) for n in ops)
        self._on_mirror_requested(list(self.selection.nodes), on)

    def _current_shapes(self) -> tuple[dict[str, Shape], str]:
        """The input shapes the shape form holds now (UserError if one is malformed)."""
        if self.shape_form is None:
            return {}, "float32"
        return self.shape_form.shapes(), self.shape_form.dtype.currentText()

    @Slot(object)
    def _on_preview_requested(self, tags: object) -> None:
        """A plan's ``force_mirroring`` tags shown in the graph and the tree (None ends
        the preview); the document is untouched until Apply."""
        doc = self.document
        if doc is None:
            return
        # a plan tags variables too (MXNet ignores it there): inputs are never recomputed
        ops = None if tags is None else {
            int(k): str(v) for k, v in dict(tags).items()  # type: ignore[call-overload]
            if not doc.nodes[int(k)].is_variable}
        if self.graph_pane is not None:
            self.graph_pane.preview(ops)
        if self.tree is not None:
            self.tree.set_preview({k: v == "True" for k, v in (ops or {}).items()})

    def _on_export_graph_triggered(self) -> None:
        if self.graph_pane is not None:
            self.graph_pane.export_dialog()

    @Slot(str)
    def _on_graph_exported(self, path: str) -> None:
        self.statusBar().showMessage(f"Exported {path}", 5000)

    def _on_prefix_triggered(self) -> None:
        prefix, ok = QInputDialog.getText(self, "Prefix all names",
                                          "Prefix for every node name (weight sharing):",
                                          text="sha-")
        if ok and prefix:
            self.push_edit(edits.PrefixAllEdit(prefix))

    def _on_document_changed(self, change: object) -> None:
        if getattr(change, "kind", "") == "saved":
            return
        self.shape_result = None
        self.graph_stats = None
        if self.shape_form is not None and self.shape_form.auto.isChecked() and self.last_shapes:
            self._start_inference(self.last_shapes, self.last_dtype)
        self._update_totals()

    def _on_undo_clean_changed(self, clean: bool) -> None:
        self.setWindowModified(self.is_modified())

    def _on_undo_index_changed(self, index: int) -> None:
        self.setWindowModified(self.is_modified())
        self._recovery_timer.start()

    def is_modified(self) -> bool:
        """The document differs from its file (edits, or restored after a crash)."""
        return self.document is not None and (self._base_modified
                                              or not self.undo_stack.isClean())

    # ------------------------------------------------------------- recovery
    @Slot()
    def write_recovery(self) -> None:
        """Write (or, once nothing is unsaved, remove) this document's recovery file."""
        self._recovery_timer.stop()
        if not self.is_modified():
            self._drop_recovery()
            return
        assert self.document is not None
        if self._recovery_key is None:
            self._recovery_key = self.recovery.new_key()
        try:
            self.recovery.write(self._recovery_key, self.document)
        except OSError as exc:
            self.statusBar().showMessage(
                f"Cannot write the recovery file ({exc.strerror or exc}): save soon", 10000)

    def _drop_recovery(self) -> None:
        self._recovery_timer.stop()
        if self._recovery_key is not None:
            self.recovery.remove(self._recovery_key)
            self._recovery_key = None

    def offer_recovery(self) -> int:
        """Offer back the unsaved edits a crashed or killed mxexplorer left; returns
        how many documents were restored (each in a window of its own)."""
        orphans = self.recovery.orphans()
        if not orphans:
            return 0
        names = "\n".join("  " + o.label for o in orphans[:10])
        box = QMessageBox(QMessageBox.Icon.Question, "Restore unsaved edits?",
                          "mxexplorer stopped before these edits were saved:\n" + names
                          + "\n\nRestore them? (Later keeps them for the next start.)",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Discard
                          | QMessageBox.StandardButton.Cancel, self)
        box.setStyleSheet("QLabel#qt_msgbox_label { min-width: 420px; }")
        box.button(QMessageBox.StandardButton.Yes).setText("Restore")
        box.button(QMessageBox.StandardButton.Cancel).setText("Later")
        answer = box.exec()
        if answer == QMessageBox.StandardButton.Discard:
            for orphan in orphans:
                self.recovery.discard(orphan)
            return 0
        if answer != QMessageBox.StandardButton.Yes:
            return 0
        restored = 0
        for orphan in orphans:
            try:
                doc = self.recovery.restore(orphan)
            except UserError as exc:
                self.show_error("Cannot restore", f"{orphan.label}: {exc}")
                continue
            target = self if self.document is None and not self.opening else \
                self._new_window()
            target.set_document(doc)
            target._base_modified = True
            target.setWindowModified(True)
            target.write_recovery()        # under this process's name from now on
            target.statusBar().showMessage(
                f"Restored the unsaved edits of {orphan.label}: save to keep them")
            self.recovery.discard(orphan)
            restored += 1
        return restored

    def _update_title(self) -> None:
        doc = self.document
        name = os.path.basename(doc.path) if doc and doc.path else "untitled"
        self.setWindowTitle(f"{name}[*] - mxexplorer")

    # ------------------------------------------------------------ inference
    def _start_mxnet_import_when_idle(self) -> None:
        if self._mxnet_started or self._open_job is not None:
            return
        pane = self.graph_pane
        if pane is None or not pane.busy_now or time.monotonic() > self._mxnet_deadline:
            self._start_mxnet_import()

    def _run_pending_inference(self) -> None:
        given, self._pending_inference = self._pending_inference, {}
        if given and self.document is not None:
            self._start_inference(given, "float32")

    def ensure_mxnet(self) -> None:
        """Start importing MXNet now (something needs it)."""
        if not self._mxnet_started:
            self._start_mxnet_import()

    def _start_mxnet_import(self) -> None:
        """Import MXNet on a worker thread: the window and the tree never wait for it."""
        self._mxnet_started = True
        self._mxnet_timer.stop()
        worker = workers.FunctionWorker(_import_mxnet_job)
        worker.finished.connect(self._on_mxnet_loaded)
        worker.failed.connect(self._on_mxnet_failed)
        thread = workers.start(self, worker)
        self._keep(thread, worker)
        self.mxnet_label.setText("MXNet: loading...")

    @Slot(object)
    def _on_mxnet_loaded(self, _: object = None) -> None:
        if self.mxnet_ready:
            return
        self._mxnet_started = True
        self._mxnet_timer.stop()
        self.mxnet_ready = True
        self.mxnet_label.setText("MXNet ready")
        self._run_pending_inference()
        if self.memory is not None:
            self.memory.load_devices()

    @Slot(str)
    def _on_mxnet_failed(self, message: str) -> None:
        self.mxnet_label.setText("MXNet: unavailable")
        self.mxnet_label.setToolTip(message.strip().splitlines()[-1])

    def _keep(self, thread: QThread, worker: workers.FunctionWorker) -> None:
        self._jobs.append((thread, worker))
        thread.finished.connect(self._on_thread_finished)

    @Slot()
    def _on_thread_finished(self) -> None:
        self._jobs = [(t, w) for t, w in self._jobs if t.isRunning()]

    @Slot(dict, str)
    def _on_infer_requested(self, given: dict, dtype: str) -> None:
        self._start_inference(given, dtype)

    def _analysis_job(self, given: dict[str, Shape], dtype: str) -> Any:
        """Snapshot the document (here, on the GUI thread) and return the job to run:
        inference and statistics on the snapshot, wherever it runs."""
        assert self.document is not None
        self.last_shapes, self.last_dtype = dict(given), dtype
        snap = self.document.snapshot()
        dtypes = {k: dtype for k in given}

        def job(progress: Any = None, token: Any = None) -> stats.AnalysisResult:
            return stats.analyze(snap, given, dtypes)

        return job

    def _start_inference(self, given: dict[str, Shape], dtype: str) -> None:
        if self.document is None:
            return
        self.ensure_mxnet()
        if self._infer_job is not None:
            self._infer_job[1].request_cancel()
        worker = workers.FunctionWorker(self._analysis_job(given, dtype))
        worker.finished.connect(self._on_inference_finished)
        worker.failed.connect(self._on_inference_failed)
        thread = workers.start(self, worker)
        self._keep(thread, worker)
        self._infer_job = (thread, worker)
        if self.shape_form is not None:
            self.shape_form.set_message("Inferring...")

    def infer_blocking(self, given: dict[str, Shape], dtype: str = "float32") -> None:
        """The same job on the calling thread (the --screenshot path)."""
        if self.document is not None:
            self._on_inference_finished(self._analysis_job(given, dtype)())
            self._on_mxnet_loaded()        # it imported MXNet here

    @Slot(object)
    def _on_inference_finished(self, analysis: stats.AnalysisResult) -> None:
        doc = self.document
        result = analysis.shapes
        if doc is None or result.revision != doc.revision:
            return  # stale: the document changed while this ran
        self.shape_result = result
        self.graph_stats = analysis.stats
        assert self.tree is not None and self.shape_form is not None
        inputs = {doc.nodes[i].name for i in doc.data_inputs()}
        used = {k: v for k, v in result.inputs_used.items() if k in inputs}
        self.shape_form.set_shapes(used)
        if doc.path and result.error is None:
            self.settings.set_last_shapes(doc.path, used)
        self.tree.set_results(result, self.graph_stats)
        if self.graph_pane is not None:
            self.graph_pane.set_shapes(result)
        if result.error is not None:
            err = result.error
            self.shape_form.set_message(
                f"Inference stopped at {err.node} ({err.op}): {err.message}", error=True)
            found = doc.find(err.node)
            if found:
                self.selection.set(found[:1])
        elif result.complete:
            self.shape_form.set_message("All shapes known.")
        else:
            missing = ", ".join(result.missing_inputs[:6])
            self.shape_form.set_message(f"Partial: no shape for {missing or 'some outputs'}.")
        self._update_totals()

    @Slot(str)
    def _on_inference_failed(self, message: str) -> None:
        if self.shape_form is not None:
            self.shape_form.set_message(message.strip().splitlines()[-1], error=True)

    def _update_totals(self) -> None:
        doc = self.document
        if doc is None:
            self.totals.setText("")
            return
        text = f"{len(doc.nodes)} nodes, {len(doc.internals())} internals"
        st = self.graph_stats
        if st is not None:
            text += (f" | params {stats.human_count(st.params)} | FLOPs "
                     f"{stats.human_count(st.flops)} | activations "
                     f"{stats.human_bytes(st.activation_bytes)}")
            if self.shape_result is not None and not self.shape_result.complete:
                text += " (partial: not every shape is known)"
        self.totals.setText(text)
        self.totals.setToolTip(text)

    # ---------------------------------------------------------------- files
    def _on_open_triggered(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open symbol file", self.settings.last_open_dir(),
            "MXNet symbol (*-symbol.json *.json *.params);;All files (*)")
        if path:
            self.open_anywhere(path)

    def open_anywhere(self, path: str, shapes: dict[str, Shape] | None = None) -> MainWindow:
        """Open ``path`` where it belongs: the window already showing it comes forward;
        else this window if it is empty, else a new window.  Returns that window."""
        for window in all_windows():
            if window.shows(path):
                window.bring_forward()
                return window
        target = self
        if self.document is not None or self.opening:
            target = self._new_window()
            target._made_for_file = True
        target.open_file(path, shapes)
        return target

    def _new_window(self) -> MainWindow:
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

    # ------------------------------------------------------------ drag and drop
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
            self.recent_menu.addAction(path, lambda p=path: self._open_recent(p))
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
            answer = QMessageBox.question(
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
        doc = self.document
        assert doc is not None
        try:
            doc.save(path)
        except OSError as exc:
            self.show_error("Save failed", f"{path}: {exc.strerror or exc}\n"
                                           "Your edits are kept; try another folder.")
            return False
        self._base_modified = False
        self.undo_stack.setClean()
        self.setWindowModified(False)
        self._drop_recovery()
        self.settings.add_recent_file(path)
        self._update_title()
        self.statusBar().showMessage(f"Saved {path}", 4000)
        return True

    @Slot(int, int)
    def _on_cut_requested(self, node: int, index: int) -> None:
        doc = self.document
        if doc is None:
            return
        name = doc.nodes[node].name or "cut"
        start = os.path.join(os.path.dirname(doc.path or "."), f"{name}-symbol.json")
        path, _ = QFileDialog.getSaveFileName(self, "Export the graph up to this output", start,
                                              "MXNet symbol (*-symbol.json *.json)")
        if path:
            self.export_cut(node, index, path)

    def export_cut(self, node: int, index: int, path: str) -> str | None:
        assert self.document is not None
        try:
            params = export.export_cut(self.document, node, index, path)
        except OSError as exc:
            self.show_error("Export failed", f"{path}: {exc.strerror or exc}")
            return None
        self.statusBar().showMessage(f"Exported {path}" + (f" and {params}" if params else ""),
                                     5000)
        return path

    def maybe_save(self) -> bool:
        """Ask before unsaved edits are dropped; True when it is fine to go on."""
        if not self.is_modified():
            return True
        answer = QMessageBox.question(
            self, "Unsaved changes", "The graph has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    # ---------------------------------------------------------------- window
    def restore_layout(self) -> None:
        geometry = self.settings.window_geometry()
        if geometry is not None:
            self.restoreGeometry(geometry)
            screen = self.screen()
            if screen is not None and not screen.availableGeometry().intersects(self.geometry()):
                self.move(screen.availableGeometry().topLeft())
        state = self.settings.window_state()
        if state is not None:
            self.restoreState(state)

    def stop_jobs(self, timeout: float = 15.0) -> None:
        """Cancel every worker and wait for its thread (GIL released between waits)."""
        if self.graph_pane is not None:
            self.graph_pane.stop()
        if self.memory is not None:
            self.memory.stop()
        for thread, worker in self._jobs:
            worker.request_cancel()
            thread.quit()
        deadline = time.monotonic() + timeout
        while any(t.isRunning() for t, _ in self._jobs) and time.monotonic() < deadline:
            time.sleep(0.01)  # lets a worker holding on to Python (an import) finish
        self._jobs = []  # any still running stay alive in workers' registry

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if not self.maybe_save():
            event.ignore()
            return
        self.settings.save_window(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self._drop_recovery()          # saved or discarded: nothing left to recover
        self.stop_jobs()
        if self.bridge is not None:
            self.bridge.detach()
        if self in _OPEN:
            _OPEN.remove(self)
        super().closeEvent(event)

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._shown and self.settings.window_state() is None:
            self.resizeDocks([self.tree_dock, self.inspector_dock],
                             [int(self.width() * 0.3), int(self.width() * 0.24)],
                             Qt.Orientation.Horizontal)
        self._shown = True
