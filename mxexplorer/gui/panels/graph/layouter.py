"""SceneLayouter: a graph laid out and its scene built, off the event loop's back.

dot runs on a worker (past its time limit, our layered layout is used instead); the
scene is then built a slice at a time on timer turns.  The newest request wins: an
older layout that arrives is dropped.  The pane asks for a layout of what it wants to
show and swaps the finished scene in.
"""
from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from mxexplorer.core.render import drawing
from mxexplorer.gui import workers
from mxexplorer.gui.panels.graph.scene import SceneBuild, SceneStyles

DOT_TIME_LIMIT = 20.0

#: what to draw now: (graph, layout source), asked again when a layout arrives
Wanted = Callable[[], "tuple[drawing.VisibleGraph, str]"]


class SceneLayouter(QObject):
    """Signals
    -------
    busy(str): what it is doing ("Laying out 3,342 nodes ...")
    built(object): a finished :class:`SceneBuild` to show
    failed(str): dot is missing or failed (one line)
    """

    busy = Signal(str)
    built = Signal(object)
    failed = Signal(str)

    def __init__(self, wanted: Wanted, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._wanted = wanted
        self.layout: drawing.Layout | None = None     # the last one built
        self.wanted_source = ""                       # the layout asked for last
        #: seconds dot may take before our layered layout is drawn instead
        self.time_limit = DOT_TIME_LIMIT
        self.styles: SceneStyles | None = None
        self.selected: Callable[[], set[int]] = set
        self._pending: SceneBuild | None = None
        self._job = workers.JobSlot(self)
        self._job.finished.connect(self._on_layout_finished)
        self._job.failed.connect(self._on_layout_failed)
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._build_step)

    @property
    def busy_now(self) -> bool:
        return self._job.busy or self._pending is not None

    def request(self, graph: drawing.VisibleGraph, source: str, force: bool = False) -> bool:
        """Lay ``graph`` out unless its layout is the one shown or coming; True when a
        new layout started (else the caller restyles what is shown)."""
        if source == self.wanted_source and not force:
            return False
        if not force and self.layout is not None and source == self.layout.source \
                and not self._job.busy:
            self.cancel_build()
            self.wanted_source = source
            return False
        self.cancel()
        self.wanted_source = source
        if drawing.dot_program() is None:
            self._fail(drawing.missing_message())
            return True
        limit = self.time_limit

        def job(progress: Any, token: Any) -> drawing.Layout:
            return drawing.compute_layout(source, token, graph, limit)

        self._job.start(job)
        self.busy.emit(f"Laying out {len(graph.nodes):,} nodes with graphviz dot\u2026")
        return True

    def rebuild(self) -> None:
        """A new scene from the shown layout (new colours: no new dot run)."""
        graph, source = self._wanted()
        if self.layout is not None and source == self.layout.source:
            self._build(graph, self.layout)

    def cancel(self) -> None:
        """Stop the layout in flight (dot is killed) and any scene being built."""
        self._job.cancel(quiet=True)
        self.cancel_build()
        self.wanted_source = self.layout.source if self.layout is not None else ""

    def cancel_build(self) -> None:
        self._timer.stop()
        if self._pending is not None:
            self._pending.close()
            self._pending.scene.deleteLater()
            self._pending = None

    def _fail(self, message: str) -> None:
        self.wanted_source = self.layout.source if self.layout is not None else ""
        self.failed.emit(message)

    @Slot(object)
    def _on_layout_finished(self, layout: drawing.Layout) -> None:
        if layout.source != self.wanted_source:
            return  # superseded
        graph, source = self._wanted()
        if source != layout.source:
            self.wanted_source = ""
            self.request(graph, source)   # the document moved on while dot ran
            return
        self._build(graph, layout)

    def _build(self, graph: drawing.VisibleGraph, layout: drawing.Layout) -> None:
        assert self.styles is not None
        self.cancel_build()
        self._pending = SceneBuild(graph, layout, self.styles, self.selected(), self.parent())
        self.busy.emit(f"Drawing {len(graph.nodes):,} nodes\u2026")
        self._timer.start()

    @Slot(str)
    def _on_layout_failed(self, message: str) -> None:
        self._fail(message.strip().splitlines()[-1])

    @Slot()
    def _build_step(self) -> None:
        build = self._pending
        if build is None:
            self._timer.stop()
            return
        if not build.step():
            return
        self._timer.stop()
        self._pending = None
        self.layout = build.layout
        self.built.emit(build)
