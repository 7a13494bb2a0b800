"""The main window's File > Export ONNX... and File > Compare With... (a mixin of
:class:`~mxexplorer.gui.main_window.MainWindow`, as :mod:`window_files` is)."""
from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFileDialog

from mxexplorer.core import onnx_export
from mxexplorer.core.errors import UserError
from mxexplorer.gui.compare_window import CompareWindow, compare_files
from mxexplorer.gui.text import inform, warn
from mxexplorer.gui.workers import JobSlot

if TYPE_CHECKING:
    from mxexplorer.gui.main_window import MainWindow


def _export_job(snap: Any, shapes: Any, path: str, progress: Any, token: Any) -> Any:
    """The export with its check; the pre-flight's refusal comes back as a result (its
    nodes are selected in the window)."""
    try:
        return onnx_export.export_snapshot(snap, shapes, path, check=True,
                                           progress=progress, token=token)
    except onnx_export.UnsupportedOps as exc:
        return exc


class WindowConvert:
    onnx_job: JobSlot | None = None
    compare_job: JobSlot | None = None
    last_onnx: Any = None
    compare_windows: list[Any]             # set by MainWindow.__init__
    _compare_titles = ("", "")

    def export_onnx(self: MainWindow, path: str | None = None) -> None:
        """Export the document to ONNX (its checkpoint, else trained-looking random
        weights) and check it against MXNet; the report is shown in a dialog."""
        session = self.session
        if session is None:
            return
        try:
            shapes = session.inputs.for_jobs()
        except UserError as exc:
            self.show_error("Cannot export ONNX", str(exc))
            return
        if path is None:
            stem = (self.document.path or "model").removesuffix(".json") \
                .removesuffix("-symbol")
            path = self.host.ask_save_path("Export ONNX", stem + ".onnx",
                                           "ONNX model (*.onnx)")
            if not path:
                return
        if self.onnx_job is None:
            self.onnx_job = JobSlot(self)
            self.onnx_job.finished.connect(self._on_onnx_done)
            self.onnx_job.failed.connect(
                lambda message: self.show_error("ONNX export failed", message))
            self.onnx_job.progress.connect(
                lambda done, total, text: self.host.show_status(f"ONNX export: {text}"))
        self.host.show_status("ONNX export: starting")
        self.onnx_job.start(functools.partial(_export_job, session.document.snapshot(),
                                              shapes, path))

    def _on_onnx_done(self: MainWindow, result: Any) -> None:
        self.last_onnx = result
        if isinstance(result, onnx_export.UnsupportedOps):
            if self.session is not None:
                self.session.insight.set_flags({
                    i: f"MXNet's ONNX converter has no rule for {op}: cut the graph "
                       "before this node to export the part before" for i, _, op in result.nodes})
                self.session.selection.set([i for i, _, _ in result.nodes])
            self.host.show_status("ONNX export: ops without a converter (selected)", 10000)
            self.show_error("Cannot export ONNX", str(result))
            return
        lines = result.lines()
        self.host.show_status(lines[-1], 15000)
        agree = result.check is None or result.check.agree
        (inform if agree else warn)(self, "ONNX export", "\n".join(lines))

    def compare_with(self: MainWindow, path: str | None = None) -> None:
        """Compare this document (as it is now) with another file: the matching runs
        on a worker, then a :class:`CompareWindow` opens (``compare_windows``)."""
        if self.session is None:
            return
        if path is None:
            path, _ = QFileDialog.getOpenFileName(
                self, "Compare with", os.path.dirname(self.document.path or ""),
                "MXNet symbol (*.json);;All files (*)")
            if not path:
                return
        if self.compare_job is None:
            self.compare_job = JobSlot(self)
            self.compare_job.finished.connect(self._on_compared)
            self.compare_job.failed.connect(
                lambda message: self.show_error("Cannot compare", message))
        self.host.show_status(f"Comparing with {os.path.basename(path)}\u2026")
        self._compare_titles = (os.path.basename(self.document.path or "this graph"),
                                os.path.basename(path))
        self.compare_job.start(functools.partial(compare_files,
                                                 self.session.document.snapshot(), path))

    def _on_compared(self: MainWindow, found: Any) -> None:
        mine, other, result = found
        window = CompareWindow(mine, other, result, self.settings, self._compare_titles)
        self.compare_windows.append(window)
        window.destroyed.connect(lambda *_: self.compare_windows.remove(window)
                                 if window in self.compare_windows else None)
        self.host.show_status(result.summary(), 10000)
        window.show()
