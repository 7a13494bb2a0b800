"""ShapeFormPanel: the session's input shapes, edited; inference state and errors shown.

One row per data input (in a scroll area, with a filter when there are many), the
session's shapes in them; a batch field sets the first dimension of every row; a
dtype.  Rows follow renames (the session keeps shapes per input node).  Changing a
shape, the batch or the dtype infers again when "infer again" is on.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Slot
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core.analysis.shapes import Shape, parse_shape
from mxexplorer.core.graph.changes import Change
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.host import DialogHost
from mxexplorer.gui.panels.base import SessionPanel
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.text import plain_label
from mxexplorer.gui.theme import set_role

DTYPES = ["float32", "float16", "float64", "uint8", "int32"]
FILTER_FROM = 12          # inputs from which the form offers a filter


def _text(shape: Shape | None) -> str:
    return ",".join(str(d) for d in shape) if shape else ""


class ShapeFormPanel(SessionPanel):
    def __init__(self, session: DocumentSession, settings: Settings, host: DialogHost,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, host, parent)
        self.rows: dict[str, QLineEdit] = {}
        self._row_ids: list[int] = []
        self.batch = QSpinBox()
        self.batch.setRange(1, 1 << 20)
        self.batch.setKeyboardTracking(False)       # typing "64" is one change, not two
        self.dtype = QComboBox()
        self.dtype.addItems(DTYPES)
        self.auto = QCheckBox("infer again after every change")
        self.auto.setChecked(session.inputs.auto_infer)
        self.infer_button = QPushButton("Infer shapes")
        self.message = plain_label()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.filter_edit = QLineEdit(placeholderText="Filter inputs")
        self.filter_edit.setClearButtonEnabled(True)
        self.form_box = QWidget()
        self.form = QFormLayout(self.form_box)
        self.form.setContentsMargins(0, 0, 0, 0)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(self.form_box)
        self.scroll.setFrameShape(QScrollArea.Shape.NoFrame)

        top = QHBoxLayout()
        top.addWidget(plain_label("batch"))
        top.addWidget(self.batch)
        top.addWidget(plain_label("dtype"))
        top.addWidget(self.dtype)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.auto)
        layout.addWidget(self.infer_button)
        layout.addWidget(self.message)

        self._batch_timer = QTimer(self, singleShot=True, interval=150)
        self._batch_timer.timeout.connect(self._apply_batch)
        self._build_rows()
        self._show_shapes()
        self._show_state()

        self.batch.valueChanged.connect(self._on_batch_changed)
        self.dtype.currentTextChanged.connect(self._on_dtype_changed)
        self.auto.toggled.connect(self._on_auto_toggled)
        self.infer_button.clicked.connect(self._on_infer_clicked)
        self.filter_edit.textChanged.connect(self._on_filter_changed)
        session.inputs.changed.connect(self._on_session_shapes_changed)
        session.analysis.changed.connect(self._on_analysis_changed)
        session.analysis.job.started.connect(self._on_inference_started)
        session.analysis.failed.connect(self._on_inference_failed)
        session.document_changed.connect(self._on_document_changed)

    # ------------------------------------------------------------------ rows
    def _build_rows(self) -> None:
        doc = self.session.document
        ids = list(doc.data_inputs())
        names = [doc.nodes[i].name for i in ids]
        if ids == self._row_ids and names == list(self.rows):
            return
        while self.form.rowCount():
            self.form.removeRow(0)
        self.rows = {}
        self._row_ids = ids
        for name in names:
            edit = QLineEdit(placeholderText="e.g. 1,3,224,224 (empty: unknown)")
            edit.editingFinished.connect(self._on_row_edited)
            self.rows[name] = edit
            self.form.addRow(plain_label(name), edit)      # a QFormLayout row label guesses
        if not self.rows:
            self.form.addRow(plain_label("The graph has no data inputs."))
        self.filter_edit.setVisible(len(self.rows) >= FILTER_FROM)
        self._on_filter_changed(self.filter_edit.text())

    def _show_shapes(self) -> None:
        given = self.session.inputs.shapes()
        for name, edit in self.rows.items():
            edit.setText(_text(given.get(name)))
        first = next((s for s in given.values() if s), None)
        self.batch.blockSignals(True)
        # a file's shape hint may hold any number: the box holds what it can
        self.batch.setValue(max(1, min(first[0], self.batch.maximum())) if first else 1)
        self.batch.blockSignals(False)
        self.dtype.blockSignals(True)
        self.dtype.setCurrentText(self.session.inputs.dtype)
        self.dtype.blockSignals(False)

    def shapes(self) -> dict[str, Shape]:
        """The shapes typed in (empty rows left out); UserError on a malformed one."""
        out = {}
        for name, edit in self.rows.items():
            text = edit.text().strip()
            if text:
                try:
                    out[name] = parse_shape(text)
                except UserError as exc:
                    raise UserError(f"{name}: {exc}") from None
        return out

    def set_shapes(self, shapes: dict[str, Shape]) -> None:
        """Give these inputs these shapes (the others keep theirs)."""
        given = self.session.inputs.shapes()
        given.update({k: tuple(v) for k, v in shapes.items()})
        self.session.inputs.set(given)

    def set_message(self, text: str, error: bool = False, role: str | None = None) -> None:
        set_role(self.message, role or ("error" if error else "good"))
        self.message.setText(text)

    def _commit(self, infer: bool | None = None) -> bool:
        try:
            shapes = self.shapes()
        except UserError as exc:
            self.set_message(str(exc), error=True)
            return False
        self.session.inputs.set(shapes, self.dtype.currentText(), infer=infer)
        return True

    # -------------------------------------------------------------- handlers
    @Slot()
    def _on_row_edited(self) -> None:
        self._commit()

    @Slot(int)
    def _on_batch_changed(self, value: int) -> None:
        self._batch_timer.start()

    @Slot()
    def _apply_batch(self) -> None:
        value = self.batch.value()
        for edit in self.rows.values():
            parts = [p.strip() for p in edit.text().split(",") if p.strip()]
            if parts:
                parts[0] = str(value)
                edit.setText(",".join(parts))
        self._commit()

    @Slot(str)
    def _on_dtype_changed(self, dtype: str) -> None:
        self._commit()

    @Slot(bool)
    def _on_auto_toggled(self, on: bool) -> None:
        self.session.inputs.auto_infer = on

    @Slot()
    def _on_infer_clicked(self) -> None:
        if self._commit(infer=False):
            self.session.analysis.infer()

    @Slot(str)
    def _on_filter_changed(self, text: str) -> None:
        needle = text.strip().lower()
        for name, edit in self.rows.items():
            visible = not needle or needle in name.lower()
            self.form.setRowVisible(edit, visible)

    @Slot()
    def _on_session_shapes_changed(self) -> None:
        self._show_shapes()

    @Slot(object)
    def _on_document_changed(self, change: Change) -> None:
        if change.kind in ("names", "structure", "reload", "kinds"):
            self._build_rows()
            self._show_shapes()

    @Slot()
    def _on_inference_started(self) -> None:
        self.set_message("Inferring\u2026")

    @Slot(str)
    def _on_inference_failed(self, message: str) -> None:
        self.set_message(message, error=True)

    @Slot()
    def _on_analysis_changed(self) -> None:
        self._show_state()

    def _show_state(self) -> None:
        analysis = self.session.analysis.result
        if analysis is None:
            self.set_message("")
            return
        result = analysis.shapes
        stale = self.session.analysis.stale()
        if stale is not None:
            self.set_message(f"These shapes are for {stale}: press Infer shapes.",
                             role="stale")
        elif result.error is not None:
            self.set_message(f"Inference stopped at {result.error.one_line()}", error=True)
        elif result.complete:
            self.set_message("All shapes known.")
        else:
            missing = ", ".join(result.missing_inputs[:6])
            self.set_message(f"Partial: no shape for {missing or 'some outputs'}.")
