"""MainWindow: docks and the status bar around one document session, with the parts
it is made of: ``files`` (:class:`FileController`: open, save, recent, drop,
recovery), ``exports`` (:class:`Exports`: picture, ONNX, compare) and ``commands``
(:class:`Actions`: the menus, built from one table the command palette and the
shortcut list read).

Left: the internals tree.  Middle: the graph pane.  Right: the attribute editor and
the input shapes.  Bottom: the memory planner.  Everything two panels must agree on
lives in the :class:`~mxexplorer.gui.session.DocumentSession`; the window builds the
panels from it and wires nothing between them.
"""
from __future__ import annotations

import os
import time
from typing import Any

from PySide6.QtCore import QRect, Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QDockWidget,
    QInputDialog,
    QMainWindow,
    QSizePolicy,
)

from mxexplorer.core.analysis import report, stats
from mxexplorer.core.analysis.shapes import Shape, ShapeResult
from mxexplorer.core.graph import checkpoint_match, edits, tags
from mxexplorer.core.graph.changes import AttrsChanged, Change, NamesChanged, Saved
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.edits import Edit
from mxexplorer.gui.bridge import disconnect_quietly
from mxexplorer.gui.host import WidgetHost
from mxexplorer.gui.mxnet_loader import loader
from mxexplorer.gui.panels.attributes.panel import AttributePanel
from mxexplorer.gui.panels.graph.pane import GraphPane
from mxexplorer.gui.panels.inputs.panel import ShapeFormPanel
from mxexplorer.gui.panels.ops.panel import OpSummaryPanel
from mxexplorer.gui.panels.planner.panel import MemoryPanel
from mxexplorer.gui.panels.tree.panel import InternalsPanel
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.text import plain_label, tip
from mxexplorer.gui.theme import set_role
from mxexplorer.gui.window.actions import Actions
from mxexplorer.gui.window.command_palette import CommandPalette
from mxexplorer.gui.window.exports import Exports
from mxexplorer.gui.window.files import FileController, dropped_files
from mxexplorer.gui.window.help import AboutDialog, ShortcutsDialog
from mxexplorer.gui.window.windows import (
    INSPECTOR_SHARE,
    INSPECTOR_WIDTH,
    TREE_WIDTH,
    first_geometry,
    placeholder,
    quit_all,
    register,
    unregister,
)


class MainWindow(QMainWindow):
    def __init__(self, settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.session: DocumentSession | None = None
        self.host = WidgetHost(self, self.statusBar())
        self.tree: InternalsPanel | None = None
        self.inspector: AttributePanel | None = None
        self.shape_form: ShapeFormPanel | None = None
        self.op_summary: OpSummaryPanel | None = None
        self.graph_pane: GraphPane | None = None
        self.memory: MemoryPanel | None = None
        self._building_memory: MemoryPanel | None = None
        self._shown = False
        #: no saved layout: the docks are sized for this window on its first show, and
        #: the planner's dock again once its panel is in
        self._first_layout = self.settings.window_state() is None
        self.files = FileController(self, lambda: type(self)(self.settings))
        self.exports = Exports(self)

        self.setWindowTitle("mxexplorer")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.setDockNestingEnabled(True)
        self.setCentralWidget(placeholder("Open a symbol file (File > Open, or drop it here)."))
        self._make_docks()
        self.commands = Actions(self, [self.tree_dock, self.ops_dock, self.inspector_dock,
                                       self.shapes_dock, self.memory_dock])
        self.totals = plain_label()
        self.mxnet_label = plain_label()
        # MXNet's state keeps its room; the totals give way (whole in their tooltip)
        self.mxnet_label.setMinimumWidth(
            self.mxnet_label.fontMetrics().horizontalAdvance("MXNet: unavailable") + 8)
        self.totals.setMinimumWidth(120)
        self.totals.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        #: a checkpoint not of this graph, said while shown (status lines come and go)
        self.checkpoint_note = plain_label()
        set_role(self.checkpoint_note, "error")
        self.checkpoint_note.hide()
        self.statusBar().addPermanentWidget(self.checkpoint_note)
        self.statusBar().addPermanentWidget(self.totals)
        self.statusBar().addPermanentWidget(self.mxnet_label)
        self.setAcceptDrops(True)
        register(self)
        # a child timer dies with the window (a singleShot to a method outlived it)
        self._memory_timer = QTimer(self, singleShot=True, interval=50)
        self._memory_timer.timeout.connect(self._install_memory_panel)
        # MXNet's import takes the GIL for a second: with it, every Qt call back into
        # Python waits its turn and a graph took 5x longer to show, in stalls up to a
        # second.  So it starts when the window is idle: at once without a file, else
        # once the graph is drawn (or after 15 s of drawing), or when a job needs it.
        self._mxnet_deadline = time.monotonic() + 15.0
        self._mxnet_timer = QTimer(self, interval=100)
        self._mxnet_timer.timeout.connect(self._start_mxnet_when_idle)
        self._mxnet_timer.start()
        loader().state_changed.connect(self._on_mxnet_state)
        self._on_mxnet_state(loader().state)

    # ------------------------------------------------------ the session's parts
    @property
    def document(self) -> GraphDocument | None:
        return self.session.document if self.session is not None else None

    @property
    def undo_stack(self) -> Any:
        return self.session.undo_stack if self.session is not None else None

    @property
    def selection(self) -> Any:
        return self.session.selection if self.session is not None else None

    @property
    def shape_result(self) -> ShapeResult | None:
        """The latest shapes (perhaps stale: see the session)."""
        analysis = self.session.analysis.result if self.session is not None else None
        return analysis.shapes if analysis is not None else None

    @property
    def mxnet_ready(self) -> bool:
        return loader().ready

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
        self.ops_dock = QDockWidget("Op summary", self)
        self.ops_dock.setObjectName("op_summary_dock")
        for dock in (self.tree_dock, self.inspector_dock, self.shapes_dock, self.memory_dock,
                     self.ops_dock):
            dock.setWidget(placeholder(""))
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.tree_dock)
        self.tabifyDockWidget(self.tree_dock, self.ops_dock)     # a tab beside the tree
        self.tree_dock.raise_()
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.inspector_dock)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.shapes_dock)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.memory_dock)
        # the attribute editor and the input shapes keep the full height: under them the
        # planner's dock could not be taller than what their least heights left
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.resizeDocks([self.tree_dock, self.inspector_dock], [760, 380],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.memory_dock], [250], Qt.Orientation.Vertical)

    @Slot()
    def _update_undo_actions(self) -> None:
        stack = self.undo_stack
        self.commands.set_undo(bool(stack and stack.canUndo()), stack.undoText() if stack else "",
                              bool(stack and stack.canRedo()), stack.redoText() if stack else "")

    def undo(self) -> None:
        if self.undo_stack is not None:
            self.undo_stack.undo()

    def redo(self) -> None:
        if self.undo_stack is not None:
            self.undo_stack.redo()

    def quit(self) -> None:
        """File > Quit: every window of the process (each asks about its edits)."""
        quit_all()

    def show_command_palette(self) -> CommandPalette:
        palette = CommandPalette(self)
        palette.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        palette.show()
        palette.query.setFocus()
        return palette

    def show_shortcuts(self) -> None:
        ShortcutsDialog(self).exec()

    def show_about(self) -> None:
        AboutDialog(self).exec()

    # ------------------------------------------------------------- document
    def set_document(self, doc: GraphDocument) -> DocumentSession:
        """Show ``doc`` in a new session; the window owns it from now on."""
        old = self.session
        for panel in (self.tree, self.inspector, self.shape_form, self.graph_pane,
                      self.op_summary, self.memory or self._building_memory):
            if panel is not None:
                panel.close()
                panel.deleteLater()      # Qt deletes it, children in order
        if old is not None:
            old.close()
            old.deleteLater()
        session = self.session = DocumentSession(doc, self.settings, self)
        self.files.confirmed_overwrite = False
        self._mxnet_deadline = time.monotonic() + 15.0
        host = self.host
        self.tree = InternalsPanel(session, self.settings, host)
        self.tree_dock.setWidget(self.tree)
        self.inspector = AttributePanel(session, self.settings, host)
        self.inspector_dock.setWidget(self.inspector)
        self.shape_form = ShapeFormPanel(session, self.settings, host)
        self.shapes_dock.setWidget(self.shape_form)
        self.op_summary = OpSummaryPanel(session, self.settings, host)
        self.ops_dock.setWidget(self.op_summary)
        self.graph_pane = GraphPane(session, self.settings, host)
        self.setCentralWidget(self.graph_pane)
        self.memory = self._building_memory = None
        # the planner's plots are built on the next turn: opening a big graph stays
        # in steps under 100 ms
        self._memory_timer.start()
        session.analysis.changed.connect(self._update_totals)
        session.document_changed.connect(self._on_document_changed)
        session.file.modified_changed.connect(self._on_modified_changed)
        session.status.connect(self.statusBar().showMessage)
        session.analysis.failed.connect(self._on_inference_failed)
        session.undo_stack.indexChanged.connect(self._update_undo_actions)
        session.undo_stack.cleanChanged.connect(self._update_undo_actions)
        self.commands.set_document(True)
        self._update_undo_actions()
        if doc.path:
            self.settings.add_recent_file(doc.path)
            self.settings.set_last_open_dir(os.path.dirname(os.path.abspath(doc.path)))
        self.update_title()
        self._update_totals()
        self._update_checkpoint_note()
        if doc.unknown_ops():
            self.statusBar().showMessage("Ops unknown to MXNet 1.9.1: "
                                         + report.unknown_ops_words(doc))
        return session

    @Slot()
    def _install_memory_panel(self) -> None:
        if self.session is None or self.memory is not None:
            return
        panel = MemoryPanel(self.session, self.settings, self.host)
        self.memory_dock.setWidget(panel)
        panel.built.connect(self._on_memory_built)
        self._building_memory = panel

    @Slot()
    def _on_memory_built(self) -> None:
        """The planner panel is whole (its plots come on later turns)."""
        panel = self._building_memory
        if panel is not None and self.memory_dock.widget() is panel:
            self.memory = panel
            if self._first_layout:
                self._fit_memory_dock()
        self._building_memory = None

    def _fit_memory_dock(self) -> None:
        """The planner's dock as tall as its controls (Plan, Apply and the plan's words
        unscrolled), at most 45 % of the window: a first window gave it 90 px."""
        if self.memory is None or self.memory_dock.isFloating():
            return
        title = self.memory_dock.style().pixelMetric(
            self.memory_dock.style().PixelMetric.PM_TitleBarHeight) + 6
        wanted = min(self.memory.needed_height() + title, int(self.height() * 0.45))
        if self.memory_dock.height() < wanted:
            self.resizeDocks([self.memory_dock], [wanted], Qt.Orientation.Vertical)

    def show_error(self, title: str, message: str) -> None:
        self.host.show_error(title, message)

    # ---------------------------------------------------------------- edits
    def push_edit(self, edit: Edit) -> bool:
        """Push a core edit as one undo step; a refused edit shows why, changes nothing."""
        if self.session is None:
            return False
        refused = self.session.push_edit(edit)
        if refused:
            self.show_error("Cannot apply the edit", refused)
        return refused is None

    def toggle_mirror_stage(self) -> None:
        doc = self.document
        if doc is None or not self.selection.nodes:
            return
        nodes = list(self.selection.nodes)
        ops = [n for n in nodes if not doc.nodes[n].is_variable]
        on = not all(tags.is_mirror_stage(doc.nodes[n].attrs) for n in ops)
        refused = self.session.mark_mirror(nodes, on) if self.session is not None else None
        if refused:
            self.statusBar().showMessage(refused, 5000)

    def prefix_all_names(self) -> None:
        prefix, ok = QInputDialog.getText(self, "Prefix all names",
                                          "Prefix for every node name (weight sharing):",
                                          text="sha-")
        if ok and prefix:
            self.push_edit(edits.PrefixAllEdit(prefix))

    def infer_blocking(self, given: dict[str, Shape], dtype: str = "float32") -> None:
        """Inference on the calling thread (the --screenshot path)."""
        if self.session is not None:
            self.session.inputs.set({**self.session.inputs.shapes(), **given}, dtype,
                                          infer=False)
            self.session.analysis.infer_blocking()

    # ---------------------------------------------------------------- status
    @Slot()
    @Slot(object)
    def _on_document_changed(self, change: Change) -> None:
        """Counts change with the graph (a node's outputs, names); tags and saves
        leave them, and an inference already under way brings them with its figures."""
        if isinstance(change, (Saved, NamesChanged)):
            self._update_checkpoint_note()   # saved as another pair; a rename finds an array
        if isinstance(change, Saved) or (isinstance(change, AttrsChanged)
                                         and change.tags_only):
            return
        if self.session is None or not self.session.analysis.job.busy:
            self._update_totals()

    def _update_checkpoint_note(self) -> None:
        """Say what the open checkpoint lacks and holds for nothing, or that it cannot
        be read (the names in its tooltip); nothing when it belongs to the graph."""
        doc = self.document
        text, words = checkpoint_match.describe(doc) if doc is not None else ("", "")
        self.checkpoint_note.setText(text)
        self.checkpoint_note.setToolTip(tip(words))
        self.checkpoint_note.setVisible(bool(text))

    def _update_totals(self, *_: object) -> None:
        session = self.session
        if session is None:
            self.totals.setText("")
            return
        doc = session.document
        text = f"{len(doc.nodes)} nodes, {len(doc.internals())} internals"
        analysis = session.analysis.result
        if analysis is not None:
            st: stats.GraphStats = analysis.stats
            text += (f" | params {stats.human_count(st.params)} | FLOPs "
                     f"{stats.human_count(st.flops)} | forward outputs "
                     f"{stats.human_bytes(st.activation_bytes)}")
            stale = session.analysis.stale()
            if stale is not None:
                text += f" (for {stale})"
            elif not analysis.shapes.complete:
                text += " (partial: not every shape is known)"
            set_role(self.totals, "muted" if stale else None)
        self.totals.setText(text)
        self.totals.setToolTip(tip(text + "\nforward outputs: every operator output of one "
                               "forward pass, each in its own buffer. Training needs less "
                               "than their sum (MXNet reuses buffers) but adds backward's: "
                               "the memory planner's 'training activations' is MXNet's own "
                               "plan for forward and backward."))

    @Slot(str)
    def _on_inference_failed(self, message: str) -> None:
        self.statusBar().showMessage(message, 8000)
        self._update_totals()

    @Slot(bool)
    def _on_modified_changed(self, modified: bool) -> None:
        self.setWindowModified(modified)

    def update_title(self) -> None:
        doc = self.document
        name = os.path.basename(doc.path) if doc and doc.path else "untitled"
        self.setWindowTitle(f"{name}[*] - mxexplorer")

    def is_modified(self) -> bool:
        return self.session is not None and self.session.file.is_modified()

    # ------------------------------------------------------------------ MXNet
    def _start_mxnet_when_idle(self) -> None:
        if loader().started:
            self._mxnet_timer.stop()
            return
        if self.files.opening:
            return
        pane = self.graph_pane
        if pane is None or not pane.busy_now or time.monotonic() > self._mxnet_deadline:
            loader().ensure()

    @Slot(str)
    def _on_mxnet_state(self, state: str) -> None:
        text = {"idle": "", "loading": "MXNet: loading...", "ready": "MXNet ready",
                "unavailable": "MXNet: unavailable"}[state]
        self.mxnet_label.setText(text)
        self.mxnet_label.setToolTip(tip(
            f"{loader().message}\nShapes, memory, FLOPs and plans come from mxexplorer's "
            "own engine; Benchmark and Profile need MXNet.") if state == "unavailable"
            else "")
        if state != "idle":
            self._mxnet_timer.stop()

    # ---------------------------------------------------------------- window
    def restore_layout(self, screen: QRect | None = None) -> None:
        """The saved size, position and docks; without them, a first window fitted to
        ``screen`` (by default the available area of the screen it opens on)."""
        geometry = self.settings.window_geometry()
        if geometry is None:
            if screen is None:
                where = self.screen()
                screen = where.availableGeometry() if where is not None else \
                    QRect(0, 0, 1280, 800)
            self.place_first(screen)
        if geometry is not None:
            self.restoreGeometry(geometry)
            screen = self.screen()
            if screen is not None and not screen.availableGeometry().intersects(self.geometry()):
                self.move(screen.availableGeometry().topLeft())
        state = self.settings.window_state()
        if state is not None:
            self.restoreState(state)

    def place_first(self, screen: QRect, maximise: bool = True) -> None:
        """A first window on a screen whose available area is ``screen``: all of a small
        screen (maximised, so a window manager fits its frame), 85 % of a large one."""
        rect, fill = first_geometry(screen)
        self.setGeometry(rect)
        if fill and maximise:
            self.setWindowState(self.windowState() | Qt.WindowState.WindowMaximized)

    def stop_jobs(self) -> None:
        """Cancel every job of this window (threads end on their own; the app waits
        for them before it exits)."""
        for panel in (self.graph_pane, self.memory):
            if panel is not None:
                panel.stop()
        if self.session is not None:
            self.session.stop()
        self.files.job.cancel(quiet=True)
        for job in self.exports.jobs():
            job.cancel(quiet=True)

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if not self.files.maybe_save():
            event.ignore()
            return
        self.settings.save_window(self.saveGeometry(), self.saveState())
        self.settings.sync()
        self.stop_jobs()
        if self.session is not None:
            self.session.close()         # saved or discarded: nothing left to recover
        disconnect_quietly((loader().state_changed, self._on_mxnet_state))
        unregister(self)
        super().closeEvent(event)

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._shown and self._first_layout:
            self.resizeDocks([self.tree_dock, self.inspector_dock],
                             [min(TREE_WIDTH, int(self.width() * 0.34)),
                              max(INSPECTOR_WIDTH, int(self.width() * INSPECTOR_SHARE))],
                             Qt.Orientation.Horizontal)
            self._fit_memory_dock()
        self._shown = True
        self._fit_tree_dock()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        if event.size().width() > event.oldSize().width():
            self._fit_tree_dock()      # maximised: the tree gets room for its columns

    def _fit_tree_dock(self) -> None:
        """Widen the internals dock to show name, op and shape when the window has the
        room (a window shown small, then maximised, left it 175 px wide)."""
        if not self.tree_dock.isVisible() or self.tree_dock.isFloating():
            return
        wanted = min(TREE_WIDTH, int(self.width() * 0.34))
        if self.tree_dock.width() < wanted:
            self.resizeDocks([self.tree_dock], [wanted], Qt.Orientation.Horizontal)

    # ---------------------------------------------------------- drag and drop
    def dragEnterEvent(self, event: Any) -> None:  # noqa: N802
        if dropped_files(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: Any) -> None:  # noqa: N802
        self.dragEnterEvent(event)

    def dropEvent(self, event: Any) -> None:  # noqa: N802
        if self.files.drop(event.mimeData()):
            event.acceptProposedAction()
        else:
            event.ignore()
