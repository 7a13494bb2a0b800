"""OpSummaryPanel: one row per op type -- how many nodes, their parameters, MACs and
output memory, each with its share -- sortable by any column; clicking a row selects
those nodes in the tree and the graph.  Follows the session's analysis (the same
figures as ``mxexplorer infer --by-op``)."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core.analysis import report
from mxexplorer.core.analysis.stats import human_bytes, human_count
from mxexplorer.core.render.metrics import format_ms
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.host import DialogHost
from mxexplorer.gui.panels.base import SessionPanel
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.text import plain_label

#: time first after a profile (it is why one profiles); shares right of their values.
#: Time was last: in the dock's 430 px it sat off to the right, unseen
COLUMNS = ("op", "count", "time", "time %", "MACs", "MACs %", "memory", "memory %",
           "params")
TIME_COLUMNS = (2, 3)
SHARE_TIPS = {"time %": "share of the profiled time", "MACs %": "share of all MACs",
              "memory %": "share of all operator outputs' memory"}


class _Cell(QTableWidgetItem):
    """Shows words, sorts by the number behind them."""

    def __init__(self, text: str, key: Any) -> None:
        super().__init__(text)
        self.key = key
        if not isinstance(key, str):
            self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _Cell) and type(self.key) is type(other.key):
            return bool(self.key < other.key)
        return super().__lt__(other)


class OpSummaryPanel(SessionPanel):
    def __init__(self, session: DocumentSession, settings: Settings, host: DialogHost,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, host, parent)
        self.rows: list[dict[str, Any]] = []
        self.table = QTableWidget(0, len(COLUMNS))
        for c, title in enumerate(COLUMNS):
            item = QTableWidgetItem("%" if title in SHARE_TIPS else title)
            item.setToolTip(SHARE_TIPS.get(title, ""))
            item.setData(Qt.ItemDataRole.UserRole, title)
            self.table.setHorizontalHeaderItem(c, item)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.
                                                           ResizeToContents)
        self.table.horizontalHeader().setSortIndicator(COLUMNS.index("MACs"),
                                                       Qt.SortOrder.DescendingOrder)
        self.table.itemClicked.connect(self._on_clicked)
        self.note = plain_label()
        self.note.setWordWrap(True)
        self.profile_button = QPushButton("Profile")
        self.profile_button.setToolTip("Time every layer with MXNet's profiler (bulk "
                                       "execution off) on the planner's device, in a child "
                                       "process; fills the time columns here and in the tree")
        self.profile_button.clicked.connect(self.start_profile)
        self.busy = QProgressBar()
        self.busy.setMaximumHeight(14)
        self.busy.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.hide()
        row = QHBoxLayout()
        row.addWidget(self.profile_button)
        row.addWidget(self.busy, 1)
        row.addWidget(self.cancel_button)
        row.addStretch()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.note)
        slot = session.insight.profiler
        self.cancel_button.clicked.connect(lambda: slot.cancel())
        slot.progress.connect(self._on_progress)
        slot.ended.connect(self._on_ended)
        slot.failed.connect(self._on_failed)
        session.analysis.changed.connect(self.refresh)
        # not on document changes: its rows are the analysis's, which follows them
        # (a failed inference after an edit leaves the rows stale: they go)
        session.analysis.failed.connect(self.refresh)
        session.insight.profile_changed.connect(self.refresh)
        session.plans.bench_changed.connect(self.refresh)
        self.refresh()

    @Slot()
    def start_profile(self) -> None:
        try:
            self.session.insight.start_profile()
        except UserError as exc:
            self.host.show_error("Cannot profile", str(exc))
            return
        self.profile_button.setEnabled(False)
        self.busy.setRange(0, 0)
        self.busy.show()
        self.cancel_button.show()

    @Slot(int, int, str)
    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.busy.setRange(0, total)
        self.busy.setValue(done)
        self.busy.setFormat(message)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.host.show_error("Profiling failed", message)

    @Slot()
    def _on_ended(self) -> None:
        self.profile_button.setEnabled(True)
        self.busy.hide()
        self.cancel_button.hide()

    @Slot()
    def refresh(self) -> None:
        session = self.session
        analysis = session.analysis.result
        fresh = analysis is not None and session.analysis.stale() is None
        profile = session.insight.fresh_profile()
        times = session.insight.node_times() if profile is not None else None
        self.rows = report.by_op(session.document, analysis.stats, times) \
            if fresh and analysis is not None else []
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(self.rows))
        self.table.clearContents()
        for r, row in enumerate(self.rows):
            cells = {"op": _Cell(row["op"], row["op"]),
                     "count": _Cell(str(row["count"]), row["count"]),
                     "MACs": _Cell(human_count(row["macs"]), row["macs"]),
                     "MACs %": _Cell(f"{row['macs_share']:.1%}", row["macs_share"]),
                     "memory": _Cell(human_bytes(row["activation_bytes"]),
                                     row["activation_bytes"]),
                     "memory %": _Cell(f"{row['activation_bytes_share']:.1%}",
                                       row["activation_bytes_share"]),
                     "params": _Cell(human_count(row["params"]), row["params"])}
            if times is not None:
                cells["time"] = _Cell(format_ms(row["time_ms"]), row["time_ms"])
                cells["time %"] = _Cell(f"{row['time_ms_share']:.1%}", row["time_ms_share"])
            for title, cell in cells.items():
                cell.setData(Qt.ItemDataRole.UserRole, r)
                self.table.setItem(r, COLUMNS.index(title), cell)
        for c in TIME_COLUMNS:
            self.table.setColumnHidden(c, times is None)
        self.table.setSortingEnabled(True)
        self.profile_button.setText(f"Profile on {session.insight.device()}")
        words = "Click a row to select its nodes." if self.rows else \
            "Infer shapes to see where parameters, compute and memory go."
        if profile is not None:
            words += " " + profile.summary() + "."
            bench = session.plans.bench
            plain = [r for r in (bench.results if bench is not None else ())
                     if r.label == "original"]
            if plain and plain[0].device == profile.ctx:
                words += (f" The benchmark (threaded engine, bulk execution on) measured "
                          f"{plain[0].train.median_ms:.1f} ms per training iteration"
                          f" at batch {plain[0].batch}.")
            if profile.reasons:
                words += (" Nodes without a time of their own say why in the tree's time "
                          "column (hover it).")
        self.note.setText(words)

    def row_nodes(self, table_row: int) -> list[int]:
        """The nodes of the op type shown in ``table_row`` (as sorted now)."""
        item = self.table.item(table_row, 0)
        if item is None:
            return []
        return list(self.rows[int(item.data(Qt.ItemDataRole.UserRole))]["nodes"])

    @Slot(object)
    def _on_clicked(self, item: QTableWidgetItem) -> None:
        nodes = self.row_nodes(item.row())
        if nodes:
            self.session.selection.set(nodes)
