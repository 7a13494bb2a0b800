"""InternalsPanel: every internal output, grouped or flat, sortable and filterable.

Columns: name, op, shape, activation memory, parameters, MACs, from the session's
analysis (greyed, under a banner, while it is for an older graph).  Selection is the
session's; a previewed plan colours the outputs it recomputes.  Right click: copy,
cut here (export the graph up to an output), mark a mirror stage.
"""
from __future__ import annotations

import os

from PySide6.QtCore import QModelIndex, Qt, QTimer, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLineEdit,
    QMenu,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core.convert import export
from mxexplorer.core.graph import tags
from mxexplorer.core.graph.changes import Change, Saved
from mxexplorer.gui.bridge import disconnect_quietly
from mxexplorer.gui.host import DialogHost
from mxexplorer.gui.panels.base import SessionPanel
from mxexplorer.gui.panels.tree.bars import MetricBar
from mxexplorer.gui.panels.tree.model import (  # noqa: F401 - the tree's public names
    COLUMNS,
    ENTRY_ROLE,
    ERROR_BRUSH,
    MIRROR_BRUSH,
    NODE_ROLE,
    RECOMPUTE_BRUSH,
    STALE_BRUSH,
    InternalsModel,
)
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.text import plain_label, tip
from mxexplorer.gui.theme import set_role, themes

FILTER_DELAY_MS = 150      # typing pauses this long before the filter runs
EXPAND_MATCHES = 3000      # a filtered heading with more rows than this stays folded


class InternalsPanel(SessionPanel):
    def __init__(self, session: DocumentSession, settings: Settings, host: DialogHost,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, host, parent)
        self._syncing = False

        self.filter_edit = QLineEdit(placeholderText="Filter by name or op")
        self.filter_edit.setClearButtonEnabled(True)
        self.regex_box = QCheckBox("regex")
        self.grouped_box = QCheckBox("grouped")
        self.grouped_box.setChecked(True)
        # parented: Qt deletes the model after the view, never Python's collector
        # before it (a freed model under a live view crashed a later paint)
        self.model = InternalsModel(self.document, self)
        self.view = QTreeView()
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.stale_label = plain_label()
        self.stale_label.setWordWrap(True)
        self.stale_label.setContentsMargins(4, 2, 4, 2)
        set_role(self.stale_label, "stale")
        self.stale_label.hide()
        self._filter_timer = QTimer(self, singleShot=True, interval=FILTER_DELAY_MS)
        self._filter_timer.timeout.connect(self._apply_filter)

        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.regex_box)
        top.addWidget(self.grouped_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.stale_label)
        layout.addWidget(self.view)

        self.filter_edit.textChanged.connect(self._on_filter_changed)
        self.filter_edit.returnPressed.connect(self._apply_filter)
        self.regex_box.toggled.connect(self._apply_filter)
        self.grouped_box.toggled.connect(self._on_grouped_toggled)
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
        self.view.customContextMenuRequested.connect(self._on_context_menu)
        self.selection.changed.connect(self._on_selection_changed)
        session.document_changed.connect(self._on_document_changed)
        session.analysis.changed.connect(self._on_analysis_changed)
        session.plans.preview_changed.connect(self._on_preview_changed)
        session.insight.colours_changed.connect(self._on_colours_changed)
        session.insight.profile_changed.connect(self._on_colours_changed)
        self.view.setItemDelegate(MetricBar(self.view))
        themes().changed.connect(self.model.set_theme)
        # name, op and shape fit the default dock width; long names lose their start
        # (a model prefix shared by every row: "...stage1_conv0_fwd_output" tells
        # rows apart); the rest of the columns scroll into view
        self.view.setTextElideMode(Qt.TextElideMode.ElideLeft)
        for col, width in enumerate((200, 92, 118, 75, 65, 70, 70)):
            self.view.header().resizeSection(col, width)
        # unfold on the next turn of the event loop: showing thousands of operator rows
        # is the costly part of opening a big graph, kept apart from the rest
        self._unfold_timer = QTimer(self, singleShot=True, interval=0)
        self._unfold_timer.timeout.connect(self._first_unfold)
        self._unfold_timer.start()
        self._on_analysis_changed()
        self._on_preview_changed()
        self._on_colours_changed()

    # ------------------------------------------------------------------ model
    @property
    def grouped(self) -> bool:
        return self.model.grouped

    @Slot()
    def _on_analysis_changed(self) -> None:
        analysis = self.session.analysis.result
        stale = self.session.analysis.stale()
        if analysis is None:
            self.model.set_results(None, None)
        else:
            self.model.set_results(analysis.shapes, analysis.stats, stale is not None)
        self.stale_label.setText(f"Shapes and figures are for {stale}: infer again to "
                                 "update them." if stale else "")
        self.stale_label.setVisible(stale is not None)

    @Slot()
    def _on_preview_changed(self) -> None:
        """Colour the outputs a previewed plan recomputes."""
        self.model.set_preview(self.session.plans.preview_tags() or {})

    @Slot()
    def _on_colours_changed(self) -> None:
        """The time column and the chosen metric's bars (the graph's colours)."""
        insight = self.session.insight
        self.model.times = insight.node_times()
        self.model.time_words = insight.node_words()
        self.model.marked = insight.flags
        self.model.set_bar(insight.metric, insight.values())

    def rebuild(self, structure: bool = True) -> None:
        """Follow the document; the shared selection survives (row removal must not clear
        it) and so do the folded/unfolded groups."""
        self._syncing = True
        try:
            if structure:
                self.model.refresh(structure=True)
                self._expand_defaults()
            else:
                before = self.model.rows.key
                self.model.refresh()
                if self.model.rows.key != before:
                    self._expand_defaults()
        finally:
            self._syncing = False
        self._select_nodes(list(self.selection.nodes))

    def _first_unfold(self) -> None:
        self._expand_defaults()
        self._select_nodes(list(self.selection.nodes))

    def _expand_defaults(self) -> None:
        if not self.grouped:
            return
        # operators and outputs open, the long parameter lists folded; filtered, every
        # heading open and the nodes with several outputs too (when there are few)
        filtered = bool(self.model.filter_text)
        for r in range(self.model.rowCount()):
            idx = self.model.index(r, 0)
            title = str(idx.data() or "")
            if filtered:
                # a broad match stays folded: laying out thousands of rows costs the
                # view a tenth of a second, and nobody reads them all
                if self.model.rowCount(idx) <= EXPAND_MATCHES:
                    self.view.expand(idx)
            elif not title.startswith(("Parameters", "Auxiliary")):
                self.view.expand(idx)
        rows = self.model.rows
        if filtered and len(rows) < 5000:
            for r in list(rows.children):
                if rows.label[r] and rows.entry[r] >= 0 and rows.children[r]:
                    self.view.expand(self.model.createIndex(rows.position[r], 0, r))

    # -------------------------------------------------------------- selection
    def node_rows(self, node: int) -> list[QModelIndex]:
        """Model indexes (column 0) of the rows showing ``node``."""
        return self.model.node_indexes(node)

    def _select_nodes(self, nodes: list[int]) -> None:
        from PySide6.QtCore import QItemSelection, QItemSelectionModel

        was_syncing = self._syncing
        self._syncing = True
        try:
            sel = QItemSelection()
            first = None
            for node in nodes:
                for idx in self.node_rows(node)[:1]:
                    if idx.isValid():
                        sel.select(idx, idx.siblingAtColumn(len(COLUMNS) - 1))
                        first = first or idx
            flags = QItemSelectionModel.SelectionFlag.ClearAndSelect | \
                QItemSelectionModel.SelectionFlag.Rows
            self.view.selectionModel().select(sel, flags)
            if first is not None:
                self.view.scrollTo(first)
        finally:
            self._syncing = was_syncing

    def selected_nodes(self) -> list[int]:
        out = []
        for idx in self.view.selectionModel().selectedRows(0):
            node = idx.data(NODE_ROLE)
            if node is not None and node >= 0:
                out.append(int(node))
        return list(dict.fromkeys(out))

    def _on_view_selection_changed(self, *_: object) -> None:
        if not self._syncing:
            self.selection.set(self.selected_nodes())

    def _on_selection_changed(self, nodes: list) -> None:
        if nodes != self.selected_nodes():
            self._select_nodes(list(nodes))

    # ---------------------------------------------------------------- actions
    @Slot(str)
    def _on_filter_changed(self, text: str) -> None:
        self._filter_timer.start()          # once typing pauses, not per key

    @Slot()
    def _apply_filter(self) -> None:
        self._filter_timer.stop()
        self._syncing = True
        try:
            error = self.model.set_filter(self.filter_edit.text(), self.regex_box.isChecked())
        finally:
            self._syncing = False
        self.filter_edit.setToolTip(tip(error or ""))
        set_role(self.filter_edit, "error" if error else None)
        self._expand_defaults()
        self._select_nodes(list(self.selection.nodes))

    def _on_grouped_toggled(self, on: bool) -> None:
        self.model.set_grouped(on)
        self._expand_defaults()
        self._select_nodes(list(self.selection.nodes))

    @Slot(object)
    def _on_document_changed(self, change: Change) -> None:
        """New rows only when the outline changed (names, kinds, a node's outputs),
        else the cells are asked again; a save changes nothing shown."""
        if not isinstance(change, Saved):
            self.rebuild(structure=False)

    def _on_context_menu(self, pos: object) -> None:
        idx = self.view.indexAt(pos)  # type: ignore[arg-type]
        if not idx.isValid() or idx.data(NODE_ROLE) is None:
            return
        node = int(idx.data(NODE_ROLE))
        entry_index = int(idx.data(ENTRY_ROLE))
        entry = self.document.internals()[entry_index]
        shape_text = idx.siblingAtColumn(2).data() or ""
        menu = QMenu(self)
        menu.addAction("Copy name", lambda: QGuiApplication.clipboard().setText(entry.name))
        act = menu.addAction("Copy shape", lambda: QGuiApplication.clipboard().setText(shape_text))
        act.setEnabled(bool(shape_text))
        menu.addAction("Cut here: export the graph up to this output...",
                       lambda: self.ask_cut(entry.node, entry.index))
        nodes = self.selected_nodes() or [node]
        if not self.document.nodes[node].is_variable:
            on = not tags.is_mirror_stage(self.document.nodes[node].attrs)
            menu.addAction("Mark mirror stage" if on else "Unmark mirror stage",
                           lambda: self.mark_mirror(nodes, on))
        menu.popup(self.view.viewport().mapToGlobal(pos))  # type: ignore[arg-type]
        self._menu = menu

    def mark_mirror(self, nodes: list[int], on: bool) -> None:
        refused = self.session.mark_mirror(nodes, on)
        if refused:
            self.host.show_status(refused, 5000)

    def ask_cut(self, node: int, index: int) -> None:
        stem = export.file_stem(self.document.nodes[node].name)
        start = os.path.join(os.path.dirname(os.path.abspath(self.document.path or ".")),
                             f"{stem}-symbol.json")
        path = self.host.ask_save_path("Export the graph up to this output", start,
                                       "MXNet symbol (*-symbol.json *.json)")
        if path:
            self.export_cut(node, index, path)

    def export_cut(self, node: int, index: int, path: str) -> str | None:
        """Write the graph up to output ``(node, index)`` (and its checkpoint) to
        ``path``; None after telling the user why not."""
        try:
            params = export.export_cut(self.document, node, index, path)
        except OSError as exc:
            self.host.show_error("Export failed", f"{path}: {exc.strerror or exc}")
            return None
        self.host.show_status(f"Exported {path}" + (f" and {params}" if params else ""), 5000)
        return path

    def closeEvent(self, event: object) -> None:  # noqa: N802
        disconnect_quietly((self.session.document_changed, self._on_document_changed),
                             (self.session.analysis.changed, self._on_analysis_changed),
                             (self.session.plans.preview_changed, self._on_preview_changed),
                             (self.session.insight.colours_changed, self._on_colours_changed),
                             (self.session.insight.profile_changed, self._on_colours_changed),
                             (self.selection.changed, self._on_selection_changed),
                           (themes().changed, self.model.set_theme))
        super().closeEvent(event)  # type: ignore[arg-type]
