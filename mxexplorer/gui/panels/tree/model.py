"""InternalsModel: the internals as a lazy item model, with its filter proxy.

Rows are a light index (:mod:`mxexplorer.core.analysis.outline`) built once per document
structure; every cell is computed when a view asks for it.  Shapes and statistics
come from the session's analysis; when that analysis is stale (made for the graph
before an edit, or for other input shapes) its figures are drawn grey.
"""
from __future__ import annotations

import copy
import math

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QObject,
    Qt,
    Slot,
)
from PySide6.QtGui import QBrush, QColor, QFont

from mxexplorer.core.analysis.outline import Kids, Outline, matching, outline
from mxexplorer.core.analysis.shapes import ShapeResult, format_shape
from mxexplorer.core.analysis.stats import GraphStats, human_bytes, human_count
from mxexplorer.core.graph import tags
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.render import metrics
from mxexplorer.gui.text import tip
from mxexplorer.gui.theme import LIGHT, Theme, current

NODE_ROLE = Qt.ItemDataRole.UserRole + 1
ENTRY_ROLE = Qt.ItemDataRole.UserRole + 2
BAR_ROLE = Qt.ItemDataRole.UserRole + 3     # (share of the column's largest, colour)
_ROOT = QModelIndex()
COLUMNS = ["name", "op", "shape", "memory", "params", "MACs", "time"]
#: the column that carries each colour metric's bar
BAR_COLUMNS = {"memory": 3, "params": 4, "macs": 5, "time": 6}


#: rows of one list shown at first, and added each time the view scrolls to its end
FETCH_ROWS = 500


class _Brushes:
    """The tree's row colours for one theme."""

    def __init__(self, theme: Theme) -> None:
        self.mirror = QBrush(QColor(theme.mirror_row))
        self.recompute = QBrush(QColor(theme.recompute_row))  # the graph's recompute orange
        self.error = QBrush(QColor(theme.error))
        self.stale = QBrush(QColor(theme.stale_text))        # figures for an older graph


_LIGHT = _Brushes(LIGHT)
MIRROR_BRUSH, RECOMPUTE_BRUSH = _LIGHT.mirror, _LIGHT.recompute
ERROR_BRUSH, STALE_BRUSH = _LIGHT.error, _LIGHT.stale


class InternalsModel(QAbstractItemModel):
    """The internals as a lazy item model: the rows are a light index built once per
    document structure; every cell is computed when a view asks for it.

    (A QStandardItemModel made 50,000 items for a 1001-layer ResNet: 0.3 s per rebuild,
    after every inference.)  Results and tag previews only emit ``dataChanged``.
    Filtering and sorting happen here, on the index, not in a QSortFilterProxyModel:
    a proxy calls back into Python for every row it maps (70,000 calls, a third of a
    second, per filter change on 22,747 internals; a recursive filter took minutes).
    """

    def __init__(self, document: GraphDocument, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.shapes: ShapeResult | None = None
        self.stats: GraphStats | None = None
        self.preview: dict[int, bool] = {}
        self.times: dict[int, float] = {}          # ms per iteration, of a fresh profile
        #: the profile's words on a node: (shown where it has no time, on hover)
        self.time_words: dict[int, tuple[str, str]] = {}
        self.marked: dict[int, str] = {}           # nodes marked in red, and why (not
        # "flags": a QAbstractItemModel method of that name is called by every view)
        self.bar: tuple[int, dict[int, float], metrics.Scale | None] = (-1, {}, None)
        self.filter_text = ""
        self.filter_regex = False
        self.filter_error: str | None = None
        self.sort_column = -1                      # -1: graph order
        self.sort_order = Qt.SortOrder.AscendingOrder
        self.stale = False
        self.brushes = _Brushes(current())
        self.grouped = True
        self.rows = outline(document, True)
        #: rows of a long list shown so far (a heading's 18,000 operators arrive a few
        #: thousand at a time, as the view scrolls: expanding them all at once stalled
        #: the window 0.2 s)
        self.fetched: dict[int, int] = {}
        self._parents: tuple[Outline | None, list[int]] = (None, [])
        self._font_bold = QFont()
        self._font_bold.setBold(True)

    # ------------------------------------------------------------- structure
    def refresh(self, structure: bool = False) -> None:
        """Follow the document: new rows when its structure changed (or
        ``structure``), else every cell is simply asked again."""
        rows = self._base()
        if structure or rows.key != self.rows.key:
            self.beginResetModel()
            self.fetched = {}
            self.rows = self._sorted(rows)
            self.endResetModel()
        else:
            self.rows = self._sorted(rows)
            self.cells_changed()

    def _base(self) -> Outline:
        """The outline for the filter, in graph order (cached when unfiltered)."""
        keep, self.filter_error = matching(self.document, self.filter_text, self.filter_regex)
        if keep is not None and len(keep) == len(self.document.internals()):
            keep = None                   # everything matches: the cached outline
        return outline(self.document, self.grouped, keep)

    def cells_changed(self) -> None:
        last = len(COLUMNS) - 1
        rows = self.rows
        if rows.top:
            self.dataChanged.emit(self.index(0, 0), self.index(len(rows.top) - 1, last))
        if self._parents[0] is not rows:         # rows with children, once per outline
            self._parents = (rows, [r for r, kids in rows.children.items() if kids])
        for r in self._parents[1]:
            kids = rows.children[r]
            shown = self._shown(r, kids)
            if shown:
                self.dataChanged.emit(self.createIndex(0, 0, kids[0]),
                                      self.createIndex(shown - 1, last, kids[shown - 1]))

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Qt's sort: siblings reordered by the column (-1: graph order)."""
        if column < 0 and self.sort_column < 0:
            return                        # graph order already (the view asks at start)
        self.sort_column, self.sort_order = column, order
        self.layoutAboutToBeChanged.emit()
        persistent = self.persistentIndexList()
        self.rows = self._sorted(self._base())
        self.changePersistentIndexList(
            persistent, [self.createIndex(self.rows.position[i.internalId()], i.column(),
                                          i.internalId()) if i.isValid() else i
                         for i in persistent])
        self.layoutChanged.emit()

    def _sorted(self, rows: Outline) -> Outline:
        """``rows`` with siblings in the sort order; a copy (outlines are cached) made
        the model's rows, so the cells it sorts by are read from it."""
        if self.sort_column < 0:
            return rows                   # graph order: as built
        column = self.sort_column
        out = copy.copy(rows)
        out.position = list(rows.position)
        out.top = list(rows.top)
        out.children = Kids({r: list(kids) for r, kids in rows.children.items()})
        self.rows = out

        def key(r: int) -> object:
            return r if column < 0 else self._sort_key(r, column)    # row ids: graph order

        reverse = self.sort_order == Qt.SortOrder.DescendingOrder and column >= 0
        for siblings in [out.top, *out.children.values()]:
            if len(siblings) > 1 and out.entry[siblings[0]] >= 0:   # headings stay put
                siblings.sort(key=key, reverse=reverse)
                for k, r in enumerate(siblings):
                    out.position[r] = k
        return out

    def set_filter(self, text: str, regex: bool) -> str | None:
        """Show only the outputs whose name or op matches; returns a bad pattern's
        error (then nothing shows)."""
        self.filter_text, self.filter_regex = text, regex
        self.refresh()
        return self.filter_error

    def set_grouped(self, on: bool) -> None:
        self.grouped = on
        self.refresh(structure=True)

    def set_results(self, shapes: ShapeResult | None, stats: GraphStats | None,
                    stale: bool = False) -> None:
        """Figures to show; ``stale`` ones (for an older graph) are drawn grey."""
        self.shapes, self.stats, self.stale = shapes, stats, stale
        self.cells_changed()

    @Slot(object)
    def set_theme(self, theme: Theme) -> None:
        self.brushes = _Brushes(theme)
        self.cells_changed()

    def set_preview(self, tags: dict[int, bool]) -> None:
        self.preview = dict(tags)
        self.cells_changed()

    def set_times(self, times: dict[int, float]) -> None:
        self.times = times
        self.cells_changed()

    def set_bar(self, metric: str, values: dict[int, float]) -> None:
        """Bars for ``metric`` in its column, coloured as the graph colours nodes."""
        self.bar = (BAR_COLUMNS.get(metric, -1), values,
                    metrics.scale_for(metric, values.values()))
        self.cells_changed()

    def node_indexes(self, node: int) -> list[QModelIndex]:
        rows = self.rows
        out = []
        for r in rows.rows_of(node):
            up = rows.parent[r]
            if up >= 0 and rows.position[r] >= self._shown(up, rows.children[up]):
                self._fetch(up, rows.position[r] + 1)    # a row not shown yet: now it is
            out.append(self.createIndex(rows.position[r], 0, r))
        return out

    # --------------------------------------------------------- long lists
    def _shown(self, r: int, kids: list[int]) -> int:
        return min(len(kids), self.fetched.get(r, FETCH_ROWS))

    def _fetch(self, r: int, upto: int) -> None:
        kids = self.rows.children[r]
        shown = self._shown(r, kids)
        upto = min(len(kids), max(upto, shown + FETCH_ROWS))
        if upto <= shown:
            return
        parent = self.createIndex(self.rows.position[r], 0, r)
        self.beginInsertRows(parent, shown, upto - 1)
        self.fetched[r] = upto
        self.endInsertRows()

    def canFetchMore(self, parent: QModelIndex) -> bool:  # noqa: N802
        if not parent.isValid() or parent.column() != 0:
            return False
        r = parent.internalId()
        kids = self.rows.children[r]
        return self._shown(r, kids) < len(kids)

    def fetchMore(self, parent: QModelIndex) -> None:  # noqa: N802
        if parent.isValid():
            self._fetch(parent.internalId(), 0)

    # ------------------------------------------------------------ Qt's model
    def index(self, row: int, column: int, parent: QModelIndex = _ROOT) -> QModelIndex:
        rows = self.rows
        siblings = rows.children[parent.internalId()] if parent.isValid() else rows.top
        count = self._shown(parent.internalId(), siblings) if parent.isValid() else len(siblings)
        if 0 <= row < count and 0 <= column < len(COLUMNS):
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
        r = parent.internalId()
        return self._shown(r, self.rows.children[r])

    def columnCount(self, parent: QModelIndex = _ROOT) -> int:  # noqa: N802
        return len(COLUMNS)

    def hasChildren(self, parent: QModelIndex = _ROOT) -> bool:  # noqa: N802
        if not parent.isValid():
            return bool(self.rows.top)
        return parent.column() == 0 and bool(self.rows.children[parent.internalId()])

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
        if role == BAR_ROLE:
            return self._bar(r, col)
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(r, col)
        node_id = rows.node[r]
        node = self.document.nodes[node_id]
        error = self.shapes.error if self.shapes else None
        culprit = error is not None and error.node == node.name or node_id in self.marked
        if role == Qt.ItemDataRole.ForegroundRole:
            if culprit and not self.stale:
                return self.brushes.error
            return self.brushes.stale if self.stale and col >= 2 else None
        mirrored = tags.is_mirror_stage(node.attrs)
        # a previewed plan, else the tags the document carries (an applied plan)
        recompute = self.preview.get(node_id) if self.preview else \
            (None if node.is_variable or tags.FORCE_MIRRORING not in node.attrs
             else node.attrs[tags.FORCE_MIRRORING] == "True")
        if role == Qt.ItemDataRole.BackgroundRole:
            if recompute:
                return self.brushes.recompute
            return self.brushes.mirror if mirrored else None
        if col == BAR_COLUMNS["time"] and role == Qt.ItemDataRole.ToolTipRole:
            words = self.time_words.get(node_id) if self._first_output(r) else None
            return tip(words[1]) if words else None
        if col != 0:
            return None
        if role == Qt.ItemDataRole.FontRole:
            return self._font_bold if mirrored else None
        if role == Qt.ItemDataRole.ToolTipRole:
            # the whole name first: the column elides long ones
            tips = [str(self.data(index, Qt.ItemDataRole.DisplayRole) or "")]
            if culprit:
                tips.append(self.marked.get(node_id) or error.message)  # type: ignore[union-attr]
            if mirrored:
                tips.append("mirror_stage: recomputed in backward by the memory planner")
            if recompute is not None:
                whose = "the previewed plan" if self.preview else "its force_mirroring tag"
                tips.append(f"{whose} recomputes this output in backward" if recompute
                            else f"{whose} keeps this output")
            return tip("\n".join(t for t in tips if t)) or None
        return None

    def _shape(self, r: int) -> tuple[int, ...] | None:
        shapes = self.shapes
        entry = self.rows.entry[r]
        if shapes and entry < len(shapes.internal_shapes):
            return shapes.internal_shapes[entry]
        return None

    def _bar(self, r: int, col: int) -> tuple[float, str] | None:
        column, values, scale = self.bar
        entry = self.rows.entry[r]
        if col != column or scale is None or self.rows.label[r] or \
                self.document.internals()[entry].index != 0:
            return None
        value = values.get(self.rows.node[r])
        if not value:
            return None
        return value / scale.high, scale.colour(value)

    def _first_output(self, r: int) -> bool:
        """The row of a node's first output (where its per-node figures show)."""
        return self.document.internals()[self.rows.entry[r]].index == 0

    def _numbers(self, r: int) -> tuple[float, float, float, float]:
        entry = self.document.internals()[self.rows.entry[r]]
        ms = self.times.get(entry.node, 0.0) if entry.index == 0 else 0.0
        st = self.stats
        if st is None:
            return 0, 0, 0, ms
        nbytes = st.per_entry_bytes.get((entry.node, entry.index), 0)
        ns = st.per_node.get(entry.node)
        if entry.index != 0 or ns is None:
            return nbytes, 0, 0, ms
        return nbytes, ns.params, ns.macs, ms

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
        if not value and col == BAR_COLUMNS["time"] and self._first_output(r):
            return self.time_words.get(self.rows.node[r], ("", ""))[0]
        if not value:
            return ""
        if col == 6:
            return metrics.format_ms(value)
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
