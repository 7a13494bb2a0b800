"""InternalsPanel: every internal output, grouped or flat, sortable and filterable.

Columns: name, op, shape, activation memory, parameters, MACs.  Selection is shared
through :class:`~mxexplorer.gui.bridge.Selection`.
"""
from __future__ import annotations

import math

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    QRegularExpression,
    QSortFilterProxyModel,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QGuiApplication
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
from mxexplorer.core.document import GraphDocument
from mxexplorer.core.outline import outline
from mxexplorer.core.shapes import ShapeResult, format_shape
from mxexplorer.core.stats import GraphStats, human_bytes, human_count
from mxexplorer.gui.bridge import DocumentBridge, Selection

NODE_ROLE = Qt.ItemDataRole.UserRole + 1
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 2
SORT_ROLE = Qt.ItemDataRole.UserRole + 3
FILTER_ROLE = Qt.ItemDataRole.UserRole + 4
_ROOT = QModelIndex()
COLUMNS = ["name", "op", "shape", "memory", "params", "MACs"]
MIRROR_BRUSH = QBrush(QColor(255, 236, 179))
RECOMPUTE_BRUSH = QBrush(QColor(255, 214, 170))     # the graph's recompute orange, light
ERROR_BRUSH = QBrush(QColor(200, 0, 0))


class _Proxy(QSortFilterProxyModel):
    """Filters on name and op (substring, or a regular expression).

    Qt's own filter on :data:`FILTER_ROLE` ("name\\nop", nothing for group rows): with no
    filter it asks the model nothing, where a Python ``filterAcceptsRow`` was called
    once per row whenever a level was shown."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setSortRole(SORT_ROLE)
        self.setFilterRole(FILTER_ROLE)

    def set_filter(self, text: str, use_regex: bool) -> str | None:
        """Apply the filter; returns an error for an invalid regular expression."""
        options = QRegularExpression.PatternOption.CaseInsensitiveOption
        pattern = text if use_regex else QRegularExpression.escape(text)
        regex = QRegularExpression(pattern, options)
        error = None
        if not regex.isValid():
            error = f"invalid regular expression: {regex.errorString()}"
            regex = QRegularExpression("(?!)")        # matches nothing
        self.setFilterRegularExpression(regex)
        return error


class InternalsModel(QAbstractItemModel):
    """The internals as a lazy item model: the rows are a light index built once per
    document structure; every cell is computed when a view asks for it.

    (A QStandardItemModel made 50,000 items for a 1001-layer ResNet: 0.3 s per rebuild,
    after every inference.)  Results and tag previews only emit ``dataChanged``.
    """

    def __init__(self, document: GraphDocument, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.shapes: ShapeResult | None = None
        self.stats: GraphStats | None = None
        self.preview: dict[int, bool] = {}
        self.grouped = True
        self.rows = outline(document, True)
        self._font_bold = QFont()
        self._font_bold.setBold(True)

    # ------------------------------------------------------------- structure
    def refresh(self, structure: bool = False) -> None:
        """Follow the document: new rows when its structure changed (or
        ``structure``), else every cell is simply asked again."""
        rows = outline(self.document, self.grouped)
        if structure or rows.key != self.rows.key:
            self.beginResetModel()
            self.rows = rows
            self.endResetModel()
        else:
            self.rows = rows
            self.cells_changed()

    def cells_changed(self) -> None:
        last = len(COLUMNS) - 1
        rows = self.rows
        if rows.top:
            self.dataChanged.emit(self.index(0, 0), self.index(len(rows.top) - 1, last))
        for kids in rows.children:
            if kids:
                self.dataChanged.emit(self.createIndex(0, 0, kids[0]),
                                      self.createIndex(len(kids) - 1, last, kids[-1]))

    def set_grouped(self, on: bool) -> None:
        self.grouped = on
        self.refresh(structure=True)

    def set_results(self, shapes: ShapeResult | None, stats: GraphStats | None) -> None:
        self.shapes, self.stats = shapes, stats
        self.cells_changed()

    def set_preview(self, tags: dict[int, bool]) -> None:
        self.preview = dict(tags)
        self.cells_changed()

    def node_indexes(self, node: int) -> list[QModelIndex]:
        rows = self.rows
        return [self.createIndex(rows.position[r], 0, r) for r in rows.by_node.get(node, [])]

    # ------------------------------------------------------------ Qt's model
    def index(self, row: int, column: int, parent: QModelIndex = _ROOT) -> QModelIndex:
        rows = self.rows
        siblings = rows.children[parent.internalId()] if parent.isValid() else rows.top
        if 0 <= row < len(siblings) and 0 <= column < len(COLUMNS):
            return self.createIndex(row, column, siblings[row])
        return QModelIndex()

    def parent(self, index: QModelIndex = _ROOT) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        up = self.rows.parent[index.internalId()]
        if up < 0:
            return QModelIndex()
        return self.createIndex(self.rows.position[up], 0, up)

    def rowCount(self, parent: QModelIndex = _ROOT) -> int:  # noqa: N802
        if not parent.isValid():
            return len(self.rows.top)
        if parent.column() != 0:
            return 0
        return len(self.rows.children[parent.internalId()])

    def columnCount(self, parent: QModelIndex = _ROOT) -> int:  # noqa: N802
        return len(COLUMNS)

    def hasChildren(self, parent: QModelIndex = _ROOT) -> bool:  # noqa: N802
        return self.rowCount(parent) > 0

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> object:
        if not index.isValid():
            return None
        r = index.internalId()
        rows = self.rows
        col = index.column()
        entry = rows.entry[r]
        if entry < 0:                                       # a group heading
            if role == SORT_ROLE:
                return -1
            if col != 0:
                return None
            if role == Qt.ItemDataRole.DisplayRole:
                return rows.label[r]
            if role == Qt.ItemDataRole.FontRole:
                return self._font_bold
            return None
        if role == NODE_ROLE:
            return rows.node[r]
        if role == ENTRY_ROLE:
            return entry
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(r, col)
        if role == FILTER_ROLE:
            return f"{self._text(r, 0)}\n{self._text(r, 1)}" if col == 0 else None
        if role == SORT_ROLE:
            return self._sort_key(r, col)
        node_id = rows.node[r]
        node = self.document.nodes[node_id]
        error = self.shapes.error if self.shapes else None
        culprit = error is not None and error.node == node.name
        if role == Qt.ItemDataRole.ForegroundRole:
            return ERROR_BRUSH if culprit else None
        mirrored = edits.is_mirror_stage(node.attrs)
        recompute = self.preview.get(node_id)
        if role == Qt.ItemDataRole.BackgroundRole:
            if recompute:
                return RECOMPUTE_BRUSH
            return MIRROR_BRUSH if mirrored else None
        if col != 0:
            return None
        if role == Qt.ItemDataRole.FontRole:
            return self._font_bold if mirrored else None
        if role == Qt.ItemDataRole.ToolTipRole:
            # the whole name first: the column elides long ones
            tips = [str(self.data(index, Qt.ItemDataRole.DisplayRole) or "")]
            if culprit:
                tips.append(error.message)              # type: ignore[union-attr]
            if mirrored:
                tips.append("mirror_stage: recomputed in backward by the memory planner")
            if recompute is not None:
                tips.append("the previewed plan recomputes this output in backward"
                            if recompute else "the previewed plan keeps this output")
            return "\n".join(t for t in tips if t) or None
        return None

    def _shape(self, r: int) -> tuple[int, ...] | None:
        shapes = self.shapes
        entry = self.rows.entry[r]
        if shapes and entry < len(shapes.internal_shapes):
            return shapes.internal_shapes[entry]
        return None

    def _numbers(self, r: int) -> tuple[int, int, int]:
        st = self.stats
        if st is None:
            return 0, 0, 0
        entry = self.document.internals()[self.rows.entry[r]]
        nbytes = st.per_entry_bytes.get((entry.node, entry.index), 0)
        ns = st.per_node.get(entry.node)
        if entry.index != 0 or ns is None:
            return nbytes, 0, 0
        return nbytes, ns.params, ns.macs

    def _text(self, r: int, col: int) -> str:
        doc = self.document
        label = self.rows.label[r]
        if col == 0:
            return label or doc.internals()[self.rows.entry[r]].name
        if col == 1:
            node = doc.nodes[self.rows.node[r]]
            return "" if node.is_variable else node.op
        if label:                         # the parent row of a multi-output node
            return ""
        if col == 2:
            shape = self._shape(r)
            return format_shape(shape) if shape else ""
        value = self._numbers(r)[col - 3]
        if not value:
            return ""
        return human_bytes(value) if col == 3 else human_count(value)

    def _sort_key(self, r: int, col: int) -> object:
        if col == 0:
            return self.rows.entry[r]
        if col == 1:
            return self._text(r, 1)
        if col == 2:
            shape = self._shape(r)
            return float(math.prod(shape)) if shape else -1.0
        return float(self._numbers(r)[col - 3])


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
        self._syncing = False

        self.filter_edit = QLineEdit(placeholderText="Filter by name or op")
        self.filter_edit.setClearButtonEnabled(True)
        self.regex_box = QCheckBox("regex")
        self.grouped_box = QCheckBox("grouped")
        self.grouped_box.setChecked(True)
        # parented: Qt deletes the models after the view, never Python's collector
        # before it (a freed proxy under a live view crashed a later paint)
        self.model = InternalsModel(self.document, self)
        self.proxy = _Proxy(self)
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
        # name, op and shape fit the default dock width; long names lose their start
        # (a model prefix shared by every row: "...stage1_conv0_fwd_output" tells
        # rows apart); the rest of the columns scroll into view
        self.view.setTextElideMode(Qt.TextElideMode.ElideLeft)
        for col, width in enumerate((200, 92, 118, 75, 65, 70)):
            self.view.header().resizeSection(col, width)
        # unfold on the next turn of the event loop: showing thousands of operator rows
        # is the costly part of opening a big graph, kept apart from the rest
        self._unfold_timer = QTimer(self, singleShot=True, interval=0)
        self._unfold_timer.timeout.connect(self._first_unfold)
        self._unfold_timer.start()

    # ------------------------------------------------------------------ model
    @property
    def grouped(self) -> bool:
        return self.model.grouped

    def set_results(self, shapes: ShapeResult | None, stats: GraphStats | None) -> None:
        self.model.set_results(shapes, stats)

    def set_preview(self, tags: dict[int, bool]) -> None:
        """Colour the outputs a previewed plan recomputes ({} ends the preview)."""
        self.model.set_preview(tags)

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
        # operators and outputs open, the long parameter lists folded
        for r in range(self.proxy.rowCount()):
            idx = self.proxy.index(r, 0)
            title = str(idx.data() or "")
            if not title.startswith(("Parameters", "Auxiliary")) or self.filter_edit.text():
                self.view.expand(idx)

    # -------------------------------------------------------------- selection
    def node_rows(self, node: int) -> list[QModelIndex]:
        """Source-model indexes (column 0) of the rows showing ``node``."""
        return self.model.node_indexes(node)

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
        self.model.set_grouped(on)
        self._expand_defaults()
        self._select_nodes(list(self.selection.nodes))

    def _on_document_changed(self, change: object) -> None:
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
