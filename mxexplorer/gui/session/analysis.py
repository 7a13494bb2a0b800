"""Analysis: shape inference and statistics for the document and its input shapes, in
the background, and whether the latest still describes them.

Stale is shown, never hidden: an analysis made for an older graph stays until the new
one arrives, and :meth:`Analysis.stale` says why it is old.

Signals
-------
changed(): a new analysis arrived, or the last one became stale or fresh
failed(str): inference could not run (one line)
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from mxexplorer.core.analysis import shapes, stats
from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.snapshot import GraphSnapshot
from mxexplorer.gui.bridge import Selection, disconnect_quietly
from mxexplorer.gui.mxnet_loader import loader
from mxexplorer.gui.session.inputs import Inputs
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.workers import JobSlot

#: why an analysis no longer matches the document (see :meth:`Analysis.stale`)
STALE_EDIT = "the graph before your last edit"
STALE_SHAPES = "other input shapes"

_Key = tuple[int, tuple[tuple[str, Shape], ...], str]


class _AnalysisJob:
    """Shape inference and statistics on a snapshot (runs on a worker)."""

    def __init__(self, snap: GraphSnapshot, given: dict[str, Shape], dtype: str,
                 use_mxnet: bool) -> None:
        self.snap, self.given, self.dtypes = snap, given, {k: dtype for k in given}
        self.use_mxnet = use_mxnet

    def __call__(self, progress: Any = None, token: Any = None) -> stats.AnalysisResult:
        return stats.analyze(self.snap, self.given, self.dtypes, use_mxnet=self.use_mxnet)


class Analysis(QObject):
    changed = Signal()
    failed = Signal(str)

    def __init__(self, document: GraphDocument, inputs: Inputs, settings: Settings,
                 selection: Selection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document, self.inputs = document, inputs
        self.settings, self.selection = settings, selection
        self.result: stats.AnalysisResult | None = None
        #: inference and statistics
        self.job = JobSlot(self)
        self._key: _Key | None = None
        self._pending_key: _Key | None = None
        self._taking = False
        self.job.finished.connect(self._take)
        self.job.failed.connect(self._on_failed)
        inputs.changed.connect(self._on_inputs_changed)
        loader().state_changed.connect(self._on_mxnet_state)

    # ------------------------------------------------------------ asking
    def _key_now(self) -> _Key:
        return (self.document.structure_key(),) + self.inputs.key()

    def _job(self) -> _AnalysisJob:
        # the engine answers in-process; MXNet, once the window has loaded it (it
        # loads when idle), answers for ops without a rule
        return _AnalysisJob(self.document.snapshot(), self.inputs.shapes(),
                            self.inputs.dtype, use_mxnet=loader().ready)

    def infer(self, start_mxnet: bool = False) -> None:
        """Infer shapes and statistics for the document as it is now, with the engine
        (in the background; an inference already running is superseded).  MXNet is
        not waited for: ``start_mxnet`` only starts its import, for ops the engine has
        no rule for (the analysis is made again when it is in)."""
        if start_mxnet:
            loader().ensure()
        self._pending_key = self._key_now()
        self.job.start(self._job())

    def adopt(self, given: dict[str, Shape], dtype: str,
              analysis: stats.AnalysisResult) -> bool:
        """Take an analysis made elsewhere (as the file was read) when it was made for
        the document as it is and the inputs' shapes and dtype; False otherwise."""
        if analysis.shapes.revision != self.document.revision or \
                (tuple(sorted(given.items())), dtype) != self.inputs.key():
            return False
        self._pending_key = self._key_now()
        self._take(analysis)
        return True

    def infer_blocking(self) -> None:
        """The same inference on the calling thread (the --screenshot path)."""
        self._pending_key = self._key_now()
        self._take(self._job()())

    def document_edited(self) -> None:
        """The graph changed: infer again when the shapes no longer hold (tags alone
        leave them), or say the analysis is stale."""
        if self.result is not None and self.stale() is None:
            return
        if self.inputs.auto_infer and self.inputs.shapes():
            self.infer()
        else:
            self.changed.emit()

    @Slot(bool)
    def _on_inputs_changed(self, infer: bool) -> None:
        if self._taking:
            return
        if infer:
            self.infer()
        elif self.result is not None:
            self.changed.emit()                  # stale, or fresh again

    @Slot(str)
    def _on_mxnet_state(self, state: str) -> None:
        # MXNet can answer for the ops the engine has no rule for: ask again
        if state == "ready" and self.result is not None and \
                self.result.shapes.unruled_ops and self.stale() is None:
            self.infer()

    # ----------------------------------------------------------- answers
    @Slot(object)
    def _take(self, analysis: stats.AnalysisResult) -> None:
        self.result = analysis
        self._key = self._pending_key
        doc = self.document
        result = analysis.shapes
        if result.revision == doc.revision:
            # inputs the inference filled in (from the file's hints) join the shapes;
            # this analysis is for them (no stale state in between, no second emit)
            self._taking = True
            try:
                if self.inputs.take_used(result.inputs_used):
                    self._key = self._key_now()
            finally:
                self._taking = False
            if doc.path and result.error is None:
                self.settings.set_last_shapes(doc.path, self.inputs.shapes())
            if result.error is not None:
                found = doc.find(result.error.node)
                if found:
                    self.selection.set(found[:1])
        self.changed.emit()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.failed.emit(message.strip().splitlines()[-1] if message.strip()
                         else "inference failed")

    def stale(self) -> str | None:
        """Why the analysis does not describe the document and shapes as they are
        (:data:`STALE_EDIT`, :data:`STALE_SHAPES`), or None when it does."""
        if self.result is None or self._key is None:
            return None
        graph, given, dtype = self._key_now()
        if graph != self._key[0]:
            return STALE_EDIT
        if (given, dtype) != self._key[1:]:
            return STALE_SHAPES
        return None

    def fresh_shapes(self) -> shapes.ShapeResult | None:
        """The shapes when they describe the document as it is, else None."""
        if self.result is None or self.stale() is not None:
            return None
        return self.result.shapes

    def stop(self) -> None:
        self.job.cancel(quiet=True)

    def detach(self) -> None:
        disconnect_quietly((loader().state_changed, self._on_mxnet_state))
