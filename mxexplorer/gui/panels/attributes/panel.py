"""AttributePanel: read and edit the selected node(s).

Shows op, inputs, outputs (with their shapes, memory, parameters and MACs from the
session's analysis) and every attribute (hidden ``__key__`` ones included); values
are editable, keys can be added and removed, the node renamed (with its own
parameters), and mirror stages toggled.  Operator parameters are checked by MXNet on
a worker before an edit is made; every change goes through the session as a core
edit, and the panel fills again only when a change touches what it shows.
"""
from __future__ import annotations

import functools
from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core.analysis import validate
from mxexplorer.core.analysis.shapes import format_shape
from mxexplorer.core.analysis.stats import human_bytes, human_count
from mxexplorer.core.graph import edits, tags
from mxexplorer.core.graph.changes import Change, Saved
from mxexplorer.core.graph.edits import Edit
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.bridge import disconnect_quietly
from mxexplorer.gui.host import DialogHost
from mxexplorer.gui.panels.attributes.param_stats import ParamStatsView
from mxexplorer.gui.panels.base import SessionPanel
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.text import plain_label
from mxexplorer.gui.theme import set_role
from mxexplorer.gui.workers import JobSlot


class AttributePanel(SessionPanel):
    def __init__(self, session: DocumentSession, settings: Settings, host: DialogHost,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, host, parent)
        self.node: int | None = None
        self._filling = False

        self.title = plain_label("Select a node")
        self.title.setStyleSheet("font-weight: bold;")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.name_edit = QLineEdit()
        self.rename_button = QPushButton("Rename")
        self.with_params = QCheckBox("with its parameters")
        self.with_params.setChecked(True)
        self.kind_box = QComboBox()       # a variable: data input or parameter
        # item data are the kinds' values: Qt gives a str-based enum back as a str
        for text, kind in (("as the graph says", ""), ("data input", NodeKind.DATA.value),
                           ("parameter", NodeKind.PARAM.value)):
            self.kind_box.addItem(text, kind)
        self.kind_box.setToolTip("Whether the variable is fed data (it gets a shape) or "
                                 "learned (counted in the parameters); kept for this file")
        self.mirror_box = QCheckBox("mirror stage (recompute in backward)")
        self.inputs_label = plain_label()
        self.inputs_label.setWordWrap(True)
        self.inputs_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.outputs_label = plain_label()
        self.outputs_label.setWordWrap(True)
        self.outputs_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.figures_label = plain_label()
        self.figures_label.setWordWrap(True)
        self.figures_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note_label = plain_label()
        self.note_label.setWordWrap(True)
        set_role(self.note_label, "muted")
        self.table = QTableWidget(0, 2)
        self.table.setHorizontalHeaderLabels(["attribute", "value"])
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.error_label = plain_label()
        self.error_label.setWordWrap(True)
        set_role(self.error_label, "error")
        self.new_key = QLineEdit(placeholderText="key")
        self.new_value = QLineEdit(placeholderText="value")
        self.add_button = QPushButton("Add")
        self.remove_button = QPushButton("Remove selected")

        rename_row = QHBoxLayout()
        rename_row.addWidget(self.name_edit, 1)
        rename_row.addWidget(self.rename_button)
        form = QFormLayout()
        form.addRow("name", rename_row)
        form.addRow("", self.with_params)
        form.addRow("treat as", self.kind_box)
        form.addRow("inputs", self.inputs_label)
        form.addRow("outputs", self.outputs_label)
        form.addRow("", self.figures_label)
        add_row = QHBoxLayout()
        add_row.addWidget(self.new_key)
        add_row.addWidget(self.new_value)
        add_row.addWidget(self.add_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addLayout(form)
        layout.addWidget(self.mirror_box)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(self.note_label)
        layout.addLayout(add_row)
        layout.addWidget(self.remove_button)
        self.param_stats = ParamStatsView(session, self)     # checkpoint values
        #: MXNet's check of a proposed edit (off the GUI thread)
        self.validator = JobSlot(self)
        self.validator.finished.connect(self._on_validated)
        self.validator.failed.connect(self._on_validation_failed)
        self._proposal: tuple[int, int, dict[str, str | None], str] | None = None
        layout.addWidget(self.param_stats)

        self.rename_button.clicked.connect(self._on_rename_clicked)
        self.name_edit.returnPressed.connect(self._on_rename_clicked)
        self.mirror_box.clicked.connect(self._on_mirror_clicked)
        self.kind_box.activated.connect(self._on_kind_chosen)
        self.table.itemChanged.connect(self._on_item_changed)
        self.add_button.clicked.connect(self._on_add_clicked)
        self.new_value.returnPressed.connect(self._on_add_clicked)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.selection.changed.connect(self._on_selection_changed)
        session.document_changed.connect(self._on_document_changed)
        session.analysis.changed.connect(self._on_analysis_changed)
        self.fill()

    # ------------------------------------------------------------------ view
    def fill(self) -> None:
        self._filling = True
        try:
            self._fill()
        finally:
            self._filling = False

    def _fill(self) -> None:
        doc = self.document
        nodes = [n for n in self.selection.nodes if 0 <= n < len(doc.nodes)]
        self.node = nodes[0] if len(nodes) == 1 else None
        editable = self.node is not None
        for w in (self.name_edit, self.rename_button, self.with_params, self.kind_box,
                  self.table,
                  self.new_key, self.new_value, self.add_button, self.remove_button):
            w.setEnabled(editable)
        ops = [n for n in nodes if not doc.nodes[n].is_variable]
        self.mirror_box.setEnabled(bool(ops))
        self.mirror_box.setChecked(bool(ops) and all(
            tags.is_mirror_stage(doc.nodes[n].attrs) for n in ops))
        if not nodes or len(nodes) > 1:
            self.title.setText(f"{len(nodes)} nodes selected ({len(ops)} operators)"
                               if nodes else "Select a node in the tree")
            self.name_edit.clear()
            self.inputs_label.clear()
            self.outputs_label.clear()
            self.figures_label.clear()
            self.table.setRowCount(0)
            return
        i = nodes[0]
        node = doc.nodes[i]
        kind = doc.kinds()[i].value
        self.title.setText(f"{node.op if not node.is_variable else 'variable'} ({kind})")
        self.name_edit.setText(node.name)
        self.with_params.setEnabled(not node.is_variable)
        self.kind_box.setEnabled(node.is_variable)
        said = doc.kind_overrides.get(i)
        self.kind_box.setCurrentIndex(max(self.kind_box.findData(said.value if said else ""),
                                          0))
        slots = doc.input_slots(i)
        self.inputs_label.setText("\n".join(
            f"{slot}: {doc.nodes[s].name}" + (f"[{k}]" if doc.output_count(s) > 1 else "")
            for slot, (s, k, _) in zip(slots, node.inputs)) or "-")
        self._show_outputs(i)
        self.table.setRowCount(len(node.attrs))
        for row, (key, value) in enumerate(sorted(node.attrs.items())):
            key_item = QTableWidgetItem(key)
            key_item.setData(Qt.ItemDataRole.UserRole, key)
            self.table.setItem(row, 0, key_item)
            self.table.setItem(row, 1, QTableWidgetItem(value))

    def _show_outputs(self, i: int) -> None:
        """Output names with their shapes; memory, parameters and MACs below (grey
        and said so when the analysis is for an older graph)."""
        doc = self.document
        analysis = self.session.analysis.result
        stale = self.session.analysis.stale()
        shapes = analysis.shapes if analysis is not None else None
        names = doc.output_names(i)
        parts = []
        for k, name in enumerate(names):
            shape = shapes.by_entry.get((i, k)) if shapes is not None else None
            parts.append(f"{name}: {format_shape(shape)}" if shape else name)
        self.outputs_label.setText("\n".join(parts))
        if analysis is None:
            self.figures_label.clear()
            return
        st = analysis.stats
        nbytes = sum(st.per_entry_bytes.get((i, k), 0) for k in range(len(names)))
        ns = st.per_node.get(i)
        figures = [f"memory {human_bytes(nbytes)}" if nbytes else ""]
        if ns is not None and ns.params:
            figures.append(f"params {human_count(ns.params)}")
        if ns is not None and ns.macs:
            figures.append(f"MACs {human_count(ns.macs)}")
        text = ", ".join(f for f in figures if f)
        if stale:
            text = f"{text} (for {stale})" if text else f"(shapes are for {stale})"
        set_role(self.figures_label, "muted" if stale else None)
        self.figures_label.setText(text)

    def show_error(self, message: str) -> None:
        self.error_label.setText(message)

    # -------------------------------------------------------------- editing
    def _checked(self, values: dict[str, str | None]) -> bool:
        """The loader's limits (an edit never makes a file mxexplorer refuses to open),
        and a question before an edit that adds thousands of outputs."""
        assert self.node is not None
        problem = edits.attrs_problem(self.document, self.node, values)
        if problem:
            self.show_error(problem)
            return False
        added = edits.outputs_added(self.document, self.node, values)
        if added >= edits.GROWTH_ASK and not self.host.ask_yes_no(
                "A much bigger graph", f"This change gives the node {added:,} more outputs "
                f"(the graph has {len(self.document.internals()):,} now): each becomes a "
                "row, a tensor and an edge. Make it?"):
            return False
        return True

    def _propose(self, values: dict[str, str | None], label: str) -> None:
        """Check the edit here, then ask MXNet whether the node's op accepts these
        attributes on a worker (its answer may take a while the first time); the edit
        is made when it says yes and the graph has not changed meanwhile."""
        if self.node is None or not self._checked(values):
            self.fill()
            return
        node = self.document.nodes[self.node]
        attrs = edits.with_values(node.attrs, values)
        self._proposal = (self.node, self.document.revision, values, label)
        self.validator.start(functools.partial(_mxnet_refusal, node.op, attrs))

    @Slot(object)
    def _on_validated(self, reason: str | None) -> None:
        proposal, self._proposal = self._proposal, None
        if proposal is None:
            return
        node, revision, values, label = proposal
        if node != self.node or revision != self.document.revision:
            self.fill()                      # the graph or the selection moved on
            return
        if reason:
            self.show_error(f"Refused: {reason}")
            self.fill()
            return
        self.show_error("")
        if len(values) == 1:
            (key, value), = values.items()
            self._push(edits.set_attr((node,), key, value))
        else:
            self._push(edits.set_node_attrs(node, values, label))

    @Slot(str)
    def _on_validation_failed(self, message: str) -> None:
        self._proposal = None
        self.show_error(message.strip().splitlines()[-1] if message.strip() else
                        "the attributes could not be checked")
        self.fill()

    @property
    def validating(self) -> bool:
        """An edit waits for MXNet's word on it."""
        return self._proposal is not None

    def _push(self, edit: Edit) -> bool:
        refused = self.session.push_edit(edit)
        if refused:
            self.show_error(refused)
        return refused is None

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if self._filling or self.node is None:
            return
        row = item.row()
        key_item = self.table.item(row, 0)
        value_item = self.table.item(row, 1)
        if key_item is None or value_item is None:
            return
        old_key = str(key_item.data(Qt.ItemDataRole.UserRole))
        new_key = key_item.text().strip()
        value = value_item.text()
        if item.column() == 1:
            self._propose({old_key: value}, f"Set {old_key}")
        elif new_key and new_key != old_key:
            if new_key in self.document.nodes[self.node].attrs:
                self.show_error(f"the node already has an attribute {new_key!r}")
                self.fill()
                return
            self._propose({old_key: None, new_key: value}, f"Rename key {old_key} to {new_key}")
        else:
            self.fill()

    def _on_add_clicked(self) -> None:
        key = self.new_key.text().strip()
        if self.node is None or not key:
            self.show_error("give the new attribute a key")
            return
        self._propose({key: self.new_value.text()}, f"Add {key}")
        self.new_key.clear()
        self.new_value.clear()

    def _on_remove_clicked(self) -> None:
        if self.node is None:
            return
        keys = sorted({str(self.table.item(i.row(), 0).data(Qt.ItemDataRole.UserRole))
                       for i in self.table.selectedIndexes()})
        if keys:
            self._propose({k: None for k in keys}, "Remove " + ", ".join(keys))

    def _on_rename_clicked(self) -> None:
        if self.node is None:
            return
        new = self.name_edit.text().strip()
        if new == self.document.nodes[self.node].name:
            return
        edit = edits.RenameNodeEdit(self.node, new, self.with_params.isChecked())
        try:
            renames = edit.plan(self.document)
        except UserError as exc:
            self.show_error(str(exc))
            return
        self.show_error("")
        note = edit.shared_note(self.document)
        if self._push(edit):
            moved = ", ".join(f"{old} \u2192 {new}" for _, old, new in renames[1:])
            self.note_label.setText(" ".join(t for t in (
                f"Renamed with its parameters: {moved}." if moved else "", note) if t))

    def _on_mirror_clicked(self, checked: bool) -> None:
        refused = self.session.mark_mirror(list(self.selection.nodes), checked)
        if refused:
            self.show_error(refused)

    @Slot(int)
    def _on_kind_chosen(self, index: int) -> None:
        value = self.kind_box.itemData(index)
        kind = NodeKind(value) if value else None
        if self.node is not None and self.document.nodes[self.node].is_variable and \
                kind != self.document.kind_overrides.get(self.node):
            self._push(edits.SetVariableKindEdit(self.node, kind))

    @Slot(list)
    def _on_selection_changed(self, nodes: list) -> None:
        self.show_error("")
        self.note_label.clear()
        self.fill()

    @Slot(object)
    def _on_document_changed(self, change: Change) -> None:
        """Fill again when the change touches what is shown: a selected node, or an
        input of the one shown (its name is listed)."""
        if isinstance(change, Saved):
            return
        # what the last action said (a rename's moved parameters) is over: an undo
        # or another edit changed the graph (the rename sets it after its own change)
        self.note_label.clear()
        doc = self.document
        shown = {n for n in self.selection.nodes if n < len(doc.nodes)}
        if self.node is not None and self.node < len(doc.nodes):
            shown.update(s for s, _, _ in doc.nodes[self.node].inputs)
        if shown & set(change.nodes):
            self.fill()

    @Slot()
    def _on_analysis_changed(self) -> None:
        if self.node is not None:
            self._show_outputs(self.node)

    def closeEvent(self, event: object) -> None:  # noqa: N802
        self.validator.cancel(quiet=True)
        disconnect_quietly((self.session.document_changed, self._on_document_changed),
                             (self.session.analysis.changed, self._on_analysis_changed),
                             (self.selection.changed, self._on_selection_changed))
        super().closeEvent(event)  # type: ignore[arg-type]


def _mxnet_refusal(op: str, attrs: dict[str, str], progress: Any = None,
                   token: Any = None) -> str | None:
    """The reason to refuse these attributes for ``op`` (None: they are taken): the
    engine's parser, and MXNet's where it is installed.  Runs on a worker."""
    return validate.validate_op_attrs(op, attrs)
