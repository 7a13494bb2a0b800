"""Text from a file is plain text wherever the window shows it (issue 24).

A node named ``<img src="/dev/zero">`` made Qt read /dev/zero as an image when the node
was clicked (std::bad_alloc, every window gone): labels guess rich text.  Here every
name, op, attribute and the file's own path carry markup whose image is harmless; the
node is selected, shapes inferred, a plan made, and every widget, tooltip, item view
and graph item is walked: none may interpret the markup.
"""
from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import Qt as GuiQt  # Qt.mightBeRichText lives in QtGui's Qt
from PySide6.QtWidgets import QAbstractItemView, QApplication, QLabel, QMessageBox, QWidget

from tests.conftest import WAIT_MS

MARK = '<img src="/nonexistent/mxexplorer-mark.png">'


def _graph() -> dict:
    """An MLP whose every name, the op of one node and an attribute carry markup."""
    def name(base: str) -> str:
        return f"{base}{MARK}"

    nodes = [{"op": "null", "name": name("data"), "inputs": []},
             {"op": "null", "name": name("fc1") + "_weight", "inputs": []},
             {"op": "null", "name": name("fc1") + "_bias", "inputs": []},
             {"op": "FullyConnected", "name": name("fc1"),
              "attrs": {"num_hidden": "8", f"note{MARK}": f"value{MARK}"},
              "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
             {"op": "Activation", "name": name("relu1"), "attrs": {"act_type": "relu"},
              "inputs": [[3, 0, 0]]},
             {"op": f"Mystery{MARK}", "name": name("odd"), "inputs": [[4, 0, 0]]}]
    return {"nodes": nodes, "arg_nodes": [0, 1, 2], "heads": [[4, 0, 0], [5, 0, 0]]}


def _rich(text: str, fmt: Qt.TextFormat) -> bool:
    """Would Qt lay ``text`` out as rich text in this format, with our markup raw?"""
    if MARK not in text:
        return False
    return fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText
                                             and GuiQt.mightBeRichText(text))


def _tooltip_rich(text: str) -> bool:
    """Tooltips always guess: the raw markup in one that guesses rich is interpreted."""
    return bool(text) and MARK in text and GuiQt.mightBeRichText(text)


def _view_tooltips(view: QAbstractItemView) -> list[str]:
    model = view.model()
    found: list[str] = []
    if model is None:
        return found

    def walk(parent: QModelIndex) -> None:
        for row in range(min(model.rowCount(parent), 200)):
            for col in range(model.columnCount(parent)):
                index = model.index(row, col, parent)
                tip = index.data(Qt.ItemDataRole.ToolTipRole)
                if isinstance(tip, str) and _tooltip_rich(tip):
                    found.append(tip)
            walk(model.index(row, 0, parent))

    walk(QModelIndex())
    return found


def _interpreting() -> list[str]:
    bad: list[str] = []
    for top in QApplication.topLevelWidgets():
        for widget in [top] + top.findChildren(QWidget):
            if isinstance(widget, QLabel) and _rich(widget.text(), widget.textFormat()):
                bad.append(f"label {widget.objectName() or type(widget.parent()).__name__}: "
                           f"{widget.text()[:80]}")
            if isinstance(widget, QMessageBox) and _rich(widget.text(), widget.textFormat()):
                bad.append(f"dialog: {widget.text()[:80]}")
            if _tooltip_rich(widget.toolTip()):
                bad.append(f"tooltip of {type(widget).__name__}: {widget.toolTip()[:80]}")
            if isinstance(widget, QAbstractItemView):
                bad += [f"item tooltip in {type(widget).__name__}: {t[:80]}"
                        for t in _view_tooltips(widget)]
            scene = getattr(widget, "scene", None)
            if callable(scene) and scene() is not None and hasattr(scene(), "items"):
                for item in scene().items():
                    if _tooltip_rich(item.toolTip()):
                        bad.append(f"graph item tooltip: {item.toolTip()[:80]}")
    return bad


@pytest.fixture
def marked(tmp_path):
    folder = tmp_path / f"models{MARK[:4]}b>"
    folder.mkdir()
    path = folder / f"m{MARK[:4]}b>-symbol.json"
    path.write_text(json.dumps(_graph()))
    return path


def test_nothing_from_a_file_is_read_as_rich_text(make_window, qtbot, marked, dialogs,
                                                  tmp_path) -> None:
    window = make_window(marked)
    doc = window.document
    pane = window.graph_pane
    qtbot.waitUntil(lambda: not pane.busy_now, timeout=WAIT_MS)
    fc1 = next(i for i, n in enumerate(doc.nodes) if n.op == "FullyConnected")
    odd = next(i for i, n in enumerate(doc.nodes) if n.op.startswith("Mystery"))
    for node in (fc1, odd):
        window.selection.set([node])
        qtbot.wait(50)
        assert not _interpreting(), _interpreting()
    # shapes inferred (and stopped at the unknown op, named in the status and the form)
    data = next(doc.nodes[i].name for i in doc.data_inputs())
    window.shape_form.set_shapes({data: (2, 16)})
    window.session.analysis.infer()
    qtbot.waitUntil(lambda: window.session.analysis.result is not None, timeout=WAIT_MS)
    window.selection.set([fc1])
    qtbot.wait(50)
    bad = _interpreting()
    assert not bad, bad
    # refusals that name the file's nodes and ops: planning, ONNX export, a broken file
    panel = window.memory
    qtbot.waitUntil(lambda: window.memory is not None, timeout=WAIT_MS)
    panel = window.memory
    panel.start_button.click()
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_MS)
    assert "odd" in panel.status.text() or "shape" in panel.status.text().lower()
    window.exports.export_onnx(str(tmp_path / "m.onnx"))
    qtbot.waitUntil(lambda: bool(dialogs.unexpected), timeout=WAIT_MS)
    (title, text), = dialogs.take_closed()
    assert title == "Cannot export ONNX" and "Mystery" in text
    broken = marked.parent / f"broken{MARK[:4]}b>-symbol.json"
    broken.write_text('{"nodes": [')
    window.files.open_file(str(broken))
    qtbot.waitUntil(lambda: bool(dialogs.unexpected), timeout=WAIT_MS)
    (title, text), = dialogs.take_closed()
    assert title == "Cannot open the file" and "broken<img" in text
    bad = _interpreting()
    assert not bad, bad
