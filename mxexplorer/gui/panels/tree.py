"""InternalsPanel: every internal output, grouped or flat, sortable and filterable.

Columns: name, op, shape, activation memory, parameters, MACs.  Selection is shared
through :class:`~mxexplorer.gui.bridge.Selection`.
"""
from __future__ import annotations

import math
import re

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication, QStandardItem, QStandardItemModel
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

from mxexplorer.core import edits
from mxexplorer.core.document import GraphDocument, NodeKind
from mxexplorer.core.shapes import ShapeResult, format_shape
from mxexplorer.core.stats import GraphStats, human_bytes, human_count
from mxexplorer.gui.bridge import DocumentBridge, Selection

NODE_ROLE = Qt.ItemDataRole.UserRole + 1
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 2
SORT_ROLE = Qt.ItemDataRole.UserRole + 3
COLUMNS = ["name", "op", "shape", "memory", "params", "MACs"]
MIRROR_BRUSH = QBrush(QColor(255, 236, 179))
GROUPS = [("Data inputs", NodeKind.DATA), ("Parameters", NodeKind.PARAM),
          ("Auxiliary states", NodeKind.AUX), ("Operators", NodeKind.OP)]


class _Proxy(QSortFilterProxyModel):
    """Filters on name and op (substring, or a regular expression)."""

    def __init__(self) -> None:
        super().__init__()
        self.setRecursiveFilteringEnabled(True)
        self.setSortRole(SORT_ROLE)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self._needle = ""
        self._regex: re.Pattern[str] | None = None

    def set_filter(self, text: str, use_regex: bool) -> str | None:
        """Apply the filter; returns an error for an invalid regular expression."""
        self._needle = text.lower()
        self._regex = None
        error = None
        if use_regex and text:
            try:
                self._regex = re.compile(text, re.IGNORECASE)
            except re.error as exc:
                error = f"invalid regular expression: {exc}"
                self._needle = "\0never"
        self.invalidateFilter()
        return error

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:  # noqa: N802
        if not self._needle:
            return True
        model = self.sourceModel()
        name = str(model.index(row, 0, parent).data() or "")
        op = str(model.index(row, 1, parent).data() or "")
        if model.index(row, 0, parent).data(NODE_ROLE) is None:
            return False  # group rows show when a child matches (recursive filtering)
        if self._regex is not None:
            return bool(self._regex.search(name) or self._regex.search(op))
        return self._needle in name.lower() or self._needle in op.lower()


class InternalsPanel(QWidget):
    """Signals
    -------
    cut_requested(int, int): export the graph up to (node, output index)
    mirror_requested(list, bool): tag/untag mirror_stage on these nodes
    """

    cut_requested = Signal(int, int)
    mirror_requested = Signal(list, bool)

    def __init__(self, bridge: DocumentBridge, selection: Selection, parent: QWidget | None = None):
        super().__init__(parent)
        self.bridge = bridge
        self.document: GraphDocument = bridge.document
        self.selection = selection
        self.shapes: ShapeResult | None = None
        self.stats: GraphStats | None = None
        self.grouped = True
        self._syncing = False
        self._sized = False

        self.filter_edit = QLineEdit(placeholderText="Filter by name or op")
        self.filter_edit.setClearButtonEnabled(True)
        self.regex_box = QCheckBox("regex")
        self.grouped_box = QCheckBox("grouped")
        self.grouped_box.setChecked(True)
        self.model = QStandardItemModel(0, len(COLUMNS))
        self.model.setHorizontalHeaderLabels(COLUMNS)
        self.proxy = _Proxy()
        self.proxy.setSourceModel(self.model)
        self.view = QTreeView()
        self.view.setModel(self.proxy)
        self.view.setUniformRowHeights(True)
        self.view.setSortingEnabled(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

        top = QHBoxLayout()
        top.addWidget(self.filter_edit, 1)
        top.addWidget(self.regex_box)
        top.addWidget(self.grouped_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.view)

        self.filter_edit.textChanged.connect(self._on_filter_changed)
        self.regex_box.toggled.connect(self._on_filter_changed)
        self.grouped_box.toggled.connect(self._on_grouped_toggled)
        self.view.selectionModel().selectionChanged.connect(self._on_view_selection_changed)
        self.view.customContextMenuRequested.connect(self._on_context_menu)
        self.selection.changed.connect(self._on_selection_changed)
        self.bridge.changed.connect(self._on_document_changed)
        self.rebuild()

    # ------------------------------------------------------------------ model
    def set_results(self, shapes: ShapeResult | None, stats: GraphStats | None) -> None:
        self.shapes, self.stats = shapes, stats
        self.rebuild()

    def _row(self, entry_index: int, label: str | None = None) -> list[QStandardItem]:
        doc = self.document
        entry = doc.internals()[entry_index]
        node = doc.nodes[entry.node]
        shape = self.shapes.internal_shapes[entry_index] if self.shapes and \
            entry_index < len(self.shapes.internal_shapes) else None
        nbytes = self.stats.per_entry_bytes.get((entry.node, entry.index), 0) if self.stats else 0
        ns = self.stats.per_node.get(entry.node) if self.stats else None
        params = ns.params if ns and entry.index == 0 else 0
        macs = ns.macs if ns and entry.index == 0 else 0
        texts = [label or entry.name, "" if node.is_variable else node.op,
                 format_shape(shape) if shape else "", human_bytes(nbytes) if nbytes else "",
                 human_count(params) if params else "", human_count(macs) if macs else ""]
        elements = float(math.prod(shape)) if shape else -1.0
        sort_keys: list[object] = [entry_index, texts[1], elements,
                                   float(nbytes), float(params), float(macs)]
        mirrored = edits.is_mirror_stage(node.attrs)
        items = []
        for text, key in zip(texts, sort_keys):
            item = QStandardItem(text)
            item.setData(entry.node, NODE_ROLE)
            item.setData(entry_index, ENTRY_ROLE)
            item.setData(key, SORT_ROLE)
            if mirrored:
                item.setBackground(MIRROR_BRUSH)
            items.append(item)
        if mirrored:
            items[0].setToolTip("mirror_stage: recomputed in backward by the memory planner")
            font = QFont()
            font.setBold(True)
            items[0].setFont(font)
        if self.shapes and self.shapes.error and self.shapes.error.node == node.name:
            for item in items:
                item.setForeground(QBrush(QColor(200, 0, 0)))
            items[0].setToolTip(self.shapes.error.message)
        return items

    def _group(self, title: str, count: int) -> list[QStandardItem]:
        head = QStandardItem(f"{title} ({count})")
        head.setData(-1, SORT_ROLE)
        font = QFont()
        font.setBold(True)
        head.setFont(font)
        rest = [QStandardItem("") for _ in COLUMNS[1:]]
        return [head, *rest]

    def rebuild(self) -> None:
        """Refill the model; the shared selection survives (row removal must not clear it)."""
        self._syncing = True
        try:
            self._rebuild()
        finally:
            self._syncing = False

    def _rebuild(self) -> None:
        doc = self.document
        selected = list(self.selection.nodes)
        self.view.setUpdatesEnabled(False)
        self.model.removeRows(0, self.model.rowCount())
        internals = doc.internals()
        root = self.model.invisibleRootItem()
        if not self.grouped:
            for k in range(len(internals)):
                root.appendRow(self._row(k))
        else:
            kinds = doc.kinds()
            by_kind: dict[NodeKind, list[int]] = {k: [] for _, k in GROUPS}
            for k, entry in enumerate(internals):
                by_kind[kinds[entry.node]].append(k)
            for title, kind in GROUPS:
                rows = by_kind[kind]
                if kind == NodeKind.OP:
                    nodes = list(dict.fromkeys(internals[k].node for k in rows))
                    group = self._group(title, len(nodes))
                    seen: dict[int, list[QStandardItem]] = {}
                    for k in rows:
                        nid = internals[k].node
                        if len(doc.output_names(nid)) == 1:
                            group[0].appendRow(self._row(k))
                        else:
                            if nid not in seen:
                                parent = self._row(k, doc.nodes[nid].name)
                                for item in parent[2:]:
                                    item.setText("")
                                seen[nid] = parent
                                group[0].appendRow(parent)
                            seen[nid][0].appendRow(self._row(k))
                else:
                    group = self._group(title, len(rows))
                    for k in rows:
                        group[0].appendRow(self._row(k))
                root.appendRow(group)
            outputs = doc.output_entries()
            group = self._group("Graph outputs", len(outputs))
            index_of = {(e.node, e.index): k for k, e in enumerate(internals)}
            for e in outputs:
                if (e.node, e.index) in index_of:
                    group[0].appendRow(self._row(index_of[(e.node, e.index)]))
            root.appendRow(group)
        self.view.setUpdatesEnabled(True)
        if self.grouped:
            # operators and outputs open, the long parameter lists folded
            for r in range(self.proxy.rowCount()):
                idx = self.proxy.index(r, 0)
                title = str(idx.data() or "")
                if not title.startswith(("Parameters", "Auxiliary")) or self.filter_edit.text():
                    self.view.expand(idx)
        if not self._sized:
            for col, width in enumerate((290, 105, 125, 75, 65, 70)):
                self.view.header().resizeSection(col, width)
            self._sized = True
        self._select_nodes(selected)

    # -------------------------------------------------------------- selection
    def node_rows(self, node: int) -> list[QModelIndex]:
        """Source-model indexes (column 0) of the rows showing ``node``."""
        return self.model.match(self.model.index(0, 0), NODE_ROLE, node, -1,
                                Qt.MatchFlag.MatchExactly | Qt.MatchFlag.MatchRecursive)

    def _select_nodes(self, nodes: list[int]) -> None:
        from PySide6.QtCore import QItemSelection, QItemSelectionModel

        was_syncing = self._syncing
        self._syncing = True
        try:
            sel = QItemSelection()
            first = None
            for node in nodes:
                for src in self.node_rows(node)[:1]:
                    idx = self.proxy.mapFromSource(src)
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
    def _on_filter_changed(self, *_: object) -> None:
        error = self.proxy.set_filter(self.filter_edit.text(), self.regex_box.isChecked())
        self.filter_edit.setToolTip(error or "")
        self.filter_edit.setStyleSheet("color: #b00;" if error else "")
        if self.grouped:
            self.view.expandAll()

    def _on_grouped_toggled(self, on: bool) -> None:
        self.grouped = on
        self.rebuild()

    def _on_document_changed(self, change: object) -> None:
        self.rebuild()

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
                       lambda: self.cut_requested.emit(entry.node, entry.index))
        nodes = self.selected_nodes() or [node]
        if not self.document.nodes[node].is_variable:
            on = not edits.is_mirror_stage(self.document.nodes[node].attrs)
            menu.addAction("Mark mirror stage" if on else "Unmark mirror stage",
                           lambda: self.mirror_requested.emit(nodes, on))
        menu.popup(self.view.viewport().mapToGlobal(pos))  # type: ignore[arg-type]
        self._menu = menu

    def closeEvent(self, event: object) -> None:  # noqa: N802
        self.bridge.changed.disconnect(self._on_document_changed)
        super().closeEvent(event)  # type: ignore[arg-type]
