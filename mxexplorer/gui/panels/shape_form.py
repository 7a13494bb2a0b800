"""ShapeFormPanel: shapes for the data inputs in, a request to infer out.

One row per data input, prefilled from the last shapes used for the file, the
file's own hints or a guess from the first layer's weights; a batch-size field sets
the first dimension of every row; a dtype.  Errors from inference are shown here in
plain words.
"""
from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core.document import GraphDocument
from mxexplorer.core.errors import UserError
from mxexplorer.core.shapes import Shape, parse_shape

DTYPES = ["float32", "float16", "float64", "uint8", "int32"]


class ShapeFormPanel(QWidget):
    """Signals
    -------
    infer_requested(dict, str): input shapes by name, and the dtype
    """

    infer_requested = Signal(dict, str)

    def __init__(self, document: GraphDocument, initial: dict[str, Shape],
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.rows: dict[str, QLineEdit] = {}
        self.batch = QSpinBox()
        self.batch.setRange(1, 1 << 20)
        self.dtype = QComboBox()
        self.dtype.addItems(DTYPES)
        self.auto = QCheckBox("infer again after every edit")
        self.auto.setChecked(True)
        self.infer_button = QPushButton("Infer shapes")
        self.message = QLabel()
        self.message.setWordWrap(True)
        form = QFormLayout()
        for i in document.data_inputs():
            name = document.nodes[i].name
            edit = QLineEdit(placeholderText="e.g. 1,3,224,224 (empty: unknown)")
            if name in initial:
                edit.setText(",".join(str(d) for d in initial[name]))
            edit.returnPressed.connect(self._on_infer_clicked)
            self.rows[name] = edit
            form.addRow(name, edit)
        if not self.rows:
            form.addRow(QLabel("The graph has no data inputs."))
        first = next((s for s in initial.values() if s), None)
        self.batch.setValue(first[0] if first else 1)
        top = QHBoxLayout()
        top.addWidget(QLabel("batch"))
        top.addWidget(self.batch)
        top.addWidget(QLabel("dtype"))
        top.addWidget(self.dtype)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(form)
        layout.addWidget(self.auto)
        layout.addWidget(self.infer_button)
        layout.addWidget(self.message)
        layout.addStretch(1)
        self.batch.valueChanged.connect(self._on_batch_changed)
        self.infer_button.clicked.connect(self._on_infer_clicked)

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
        """Show the shapes that were used (e.g. given on the command line)."""
        for name, shape in shapes.items():
            if name in self.rows:
                self.rows[name].setText(",".join(str(d) for d in shape))
        first = next((s for n, s in shapes.items() if n in self.rows and s), None)
        if first:
            self.batch.blockSignals(True)
            self.batch.setValue(first[0])
            self.batch.blockSignals(False)

    def set_message(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #b00000;" if error else "color: #205020;")
        self.message.setText(text)

    def _on_batch_changed(self, value: int) -> None:
        for edit in self.rows.values():
            parts = [p.strip() for p in edit.text().split(",") if p.strip()]
            if parts:
                parts[0] = str(value)
                edit.setText(",".join(parts))

    def _on_infer_clicked(self) -> None:
        try:
            shapes = self.shapes()
        except UserError as exc:
            self.set_message(str(exc), error=True)
            return
        self.infer_requested.emit(shapes, self.dtype.currentText())
