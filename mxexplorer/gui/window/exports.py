"""Exports: what a window writes or opens from its document besides saving it: the
graph's picture, ONNX (our converters; checked against MXNet where it runs, on a
worker) and a comparison with
another file (matched on a worker, shown in a :class:`CompareWindow`)."""
from __future__ import annotations

import functools
import os
from typing import Any

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QFileDialog

from mxexplorer.core.convert import onnx_export
from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.text import inform, warn
from mxexplorer.gui.window.compare_window import CompareWindow, compare_files
from mxexplorer.gui.workers import JobSlot


def _export_job(snap: Any, shapes: Any, path: str, progress: Any, token: Any) -> Any:
    """The export with its check; the pre-flight's refusal comes back as a result (its
    nodes are selected in the window)."""
    try:
        return onnx_export.export_snapshot(snap, shapes, path, check=True,
                                           progress=progress, token=token)
    except (onnx_export.UnsupportedOps, NoOnnxMeaning) as exc:
        return exc


class Exports(QObject):
    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.last_onnx: Any = None
        #: File > Compare With... windows open (File > Quit closes them too)
        self.compare_windows: list[CompareWindow] = []
        self._compare_titles = ("", "")
        self.onnx_job = JobSlot(self)
        self.onnx_job.finished.connect(self._on_onnx_done)
        self.onnx_job.failed.connect(
            lambda message: window.host.show_error("ONNX export failed", message))
        self.onnx_job.progress.connect(
            lambda done, total, text: window.host.show_status(f"ONNX export: {text}"))
        self.compare_job = JobSlot(self)
        self.compare_job.finished.connect(self._on_compared)
        self.compare_job.failed.connect(
            lambda message: window.host.show_error("Cannot compare", message))

    def jobs(self) -> tuple[JobSlot, JobSlot]:
        return self.onnx_job, self.compare_job

    def graph_picture(self) -> None:
        if self.window.graph_pane is not None:
            self.window.graph_pane.export_dialog()

    def export_onnx(self, path: str | None = None) -> None:
        """Export the document to ONNX (its checkpoint, else trained-looking random
        weights) and check it against MXNet; the report is shown in a dialog."""
        window = self.window
        session = window.session
        if session is None:
            return
        try:
            shapes = session.inputs.for_jobs()
        except UserError as exc:
            window.host.show_error("Cannot export ONNX", str(exc))
            return
        if path is None:
            stem = (session.document.path or "model").removesuffix(".json") \
                .removesuffix("-symbol")
            path = window.host.ask_save_path("Export ONNX", stem + ".onnx",
                                             "ONNX model (*.onnx)")
            if not path:
                return
        window.host.show_status("ONNX export: starting")
        self.onnx_job.start(functools.partial(_export_job, session.document.snapshot(),
                                              shapes, path))

    @Slot(object)
    def _on_onnx_done(self, result: Any) -> None:
        window = self.window
        self.last_onnx = result
        if isinstance(result, onnx_export.UnsupportedOps):
            if window.session is not None:
                window.session.insight.set_flags({
                    i: f"no ONNX converter for {op}: cut the graph before this node to "
                       "export the part before" for i, _, op in result.nodes})
                window.session.selection.set([i for i, _, _ in result.nodes])
            window.host.show_status("ONNX export: ops without a converter (selected)", 10000)
            window.host.show_error("Cannot export ONNX", str(result))
            return
        if isinstance(result, NoOnnxMeaning):
            found = window.session.document.find(result.name) if window.session else []
            if found:
                window.session.insight.set_flags({found[0]: result.why})
                window.session.selection.set(found[:1])
            window.host.show_error("Cannot export ONNX", str(result))
            return
        lines = result.lines()
        window.host.show_status(lines[-1], 15000)
        agree = result.check is None or result.check.agree
        first = result.check.first if result.check is not None else None
        session = window.session
        found = session.document.find(first.name) if first and session else []
        if found:          # the node where MXNet and onnxruntime part: flagged, selected
            session.insight.set_flags({found[0]: first.sentence()})
            session.selection.set(found[:1])
        (inform if agree else warn)(window, "ONNX export", "\n".join(lines))

    def compare_with(self, path: str | None = None) -> None:
        """Compare this document (as it is now) with another file: the matching runs
        on a worker, then a :class:`CompareWindow` opens (``compare_windows``)."""
        window = self.window
        if window.session is None:
            return
        doc = window.session.document
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                window, "Compare with", os.path.dirname(doc.path or ""),
                "MXNet symbol (*.json);;All files (*)")
            if not path:
                return
        window.host.show_status(f"Comparing with {os.path.basename(path)}\u2026")
        self._compare_titles = (os.path.basename(doc.path or "this graph"),
                                os.path.basename(path))
        self.compare_job.start(functools.partial(compare_files, doc.snapshot(), path))

    @Slot(object)
    def _on_compared(self, found: Any) -> None:
        mine, other, result = found
        compare = CompareWindow(mine, other, result, self.window.settings,
                                self._compare_titles)
        self.compare_windows.append(compare)
        compare.destroyed.connect(lambda *_: self.compare_windows.remove(compare)
                                  if compare in self.compare_windows else None)
        self.window.host.show_status(result.summary(), 10000)
        compare.show()
