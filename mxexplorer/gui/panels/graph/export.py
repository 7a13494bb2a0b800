"""GraphExporter: the graph pane's picture written through graphviz ``dot`` (SVG, PNG
or PDF) on a worker, the outcome told through the host."""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject, Signal, Slot

from mxexplorer.core.render import drawing
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui import workers
from mxexplorer.gui.host import DialogHost
from mxexplorer.gui.panels.graph.colour import export_colours


class GraphExporter(QObject):
    """Signals
    -------
    exported(str): a picture was written to this path
    """

    exported = Signal(str)

    def __init__(self, source: Callable[[int], str], host: DialogHost,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._source = source           # dpi -> the DOT source to draw
        self.host = host
        self._job = workers.JobSlot(self)
        self._job.finished.connect(self._on_exported)
        self._job.failed.connect(self._on_failed)

    def ask(self, document_path: str | None) -> None:
        """Ask where to write the picture (beside the symbol file), then write it."""
        base = document_path or "graph"
        stem = base[:-len("-symbol.json")] if base.endswith("-symbol.json") else \
            base.rsplit(".", 1)[0]
        path = self.host.ask_save_path(
            "Export graph", stem + ".svg",
            "SVG picture (*.svg);;PNG image (*.png);;PDF document (*.pdf)")
        if not path:
            return
        if "." not in path.rsplit("/", 1)[-1]:
            path += ".svg"
        self.export_to(path)

    def export_to(self, path: str) -> None:
        try:
            fmt = drawing.format_for(path)
        except UserError as exc:
            self.host.show_error("Cannot export the graph", str(exc))
            return
        source = self._source(drawing.PNG_DPI if fmt == "png" else 0)

        def job(progress: Any, token: Any) -> str:
            drawing.render_file(source, path, token)
            return path

        self._job.start(job)

    @Slot(object)
    def _on_exported(self, path: str) -> None:
        self.host.show_status(f"Exported {path}", 5000)
        self.exported.emit(path)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.host.show_error("Cannot export the graph", message.strip().splitlines()[-1])

    def stop(self) -> None:
        self._job.cancel(quiet=True)


def picture_source(session: Any, show_params: bool, legend: bool, dpi: int = 0) -> str:
    """The DOT source of the session's graph as the pane shows it: its colours, and the
    shapes on the edges when they are fresh."""
    doc = session.document
    graph = drawing.visible_graph(doc, show_params)
    result = session.analysis.fresh_shapes()
    shapes = result.by_entry if result is not None else None
    return drawing.styled_source(doc, graph, shapes, dpi=dpi, legend=legend,
                                 **export_colours(graph, session.insight))
