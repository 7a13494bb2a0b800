"""Insight: what the graph, the tree and the op summary agree on about "where do memory,
compute and time go" -- the colour metric, and the per-layer profile with the graph
revision it was measured on.  One per session (``session.insight``); it reads the
session's analysis and never touches a panel.

Signals
-------
colours_changed(): the metric, or the values behind it (analysis, profile), changed
profile_changed(): a profile arrived, or the graph changed under it
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal, Slot

from mxexplorer.core.analysis import profile
from mxexplorer.core.render import metrics
from mxexplorer.gui.workers import JobSlot

ITERATIONS = 3             # profiled training iterations (after two of warm-up)

if TYPE_CHECKING:
    from mxexplorer.gui.session import DocumentSession


class Insight(QObject):
    colours_changed = Signal()
    profile_changed = Signal()

    def __init__(self, session: DocumentSession) -> None:
        super().__init__(session)
        self.session = session
        self.metric = "family"
        #: "marks": explicit fills (a comparison's changed, added, removed nodes) with
        #: their legend as (colour, words)
        self.marks: dict[int, str] = {}
        self.marks_legend: list[tuple[str, str]] = []
        #: nodes the tree marks in red, and why (an ONNX pre-flight's refusals), until
        #: the document changes
        self.flags: dict[int, str] = {}
        self.profile: profile.ProfileResult | None = None
        self._profile_revision = -1
        self._pending_revision = -1
        #: the profiling job (in a child process)
        self.profiler = JobSlot(self)
        self.profiler.finished.connect(self._on_profiled)
        session.analysis.changed.connect(self.colours_changed)
        session.document_changed.connect(self._on_document_changed)

    def set_marks(self, marks: dict[int, str], legend: list[tuple[str, str]]) -> None:
        """Colour these nodes these colours (the others plain): metric "marks"."""
        self.marks, self.marks_legend, self.metric = dict(marks), list(legend), "marks"
        self.colours_changed.emit()

    def set_flags(self, flags: dict[int, str]) -> None:
        self.flags = dict(flags)
        self.colours_changed.emit()

    def set_metric(self, metric: str) -> None:
        if metric == "marks" and self.marks:
            return self.set_marks(self.marks, self.marks_legend)
        if metric not in metrics.METRICS:
            raise ValueError(f"unknown metric {metric!r}")
        if metric != self.metric:
            self.metric = metric
            self.colours_changed.emit()

    # ------------------------------------------------------------- values
    def fresh_profile(self) -> profile.ProfileResult | None:
        """The profile, when it was measured on the graph as it is now."""
        if self.profile is not None and \
                self._profile_revision == self.session.document.revision:
            return self.profile
        return None

    def node_times(self) -> dict[int, float]:
        """ms per training iteration (forward + backward) of each profiled node."""
        result = self.fresh_profile()
        if result is None:
            return {}
        return {i: ms for i in set(result.forward_ms) | set(result.backward_ms)
                if (ms := result.node_ms(i)) is not None}

    def node_words(self) -> dict[int, tuple[str, str]]:
        """For the nodes a fresh profile has words on: (the short word shown where a
        node has no time, e.g. "merged"; what hovering it tells, the reason in full
        and what its time includes)."""
        result = self.fresh_profile()
        if result is None:
            return {}
        words: dict[int, tuple[str, str]] = {}
        for i in set(result.reasons) | set(result.notes):
            reason = result.reasons.get(i)
            text = "\n".join(t for t in (reason.text if reason else "",
                                         result.notes.get(i, "")) if t)
            words[i] = (reason.kind if reason else "", text)
        return words

    def values(self, metric: str | None = None) -> dict[int, float]:
        """Each node's value of ``metric`` (the chosen one by default); empty when
        nothing is known (no fresh analysis, no profile)."""
        metric = metric or self.metric
        if metric == "time":
            return self.node_times()
        session = self.session
        fresh = session.analysis.result if session.analysis.fresh_shapes() is not None else None
        return metrics.node_values(metric, fresh.stats if fresh is not None else None)

    def missing(self) -> str:
        """Why the chosen metric colours nothing ("" when it colours something)."""
        if self.metric not in metrics.VALUE_METRICS or \
                any(v > 0 for v in self.values().values()):
            return ""
        if self.metric == "time":
            return "no profile of this graph yet: Profile in the Op summary tab"
        session = self.session
        if session.analysis.result is None:
            return "no shapes yet: give the input shapes"
        stale = session.analysis.stale()
        if stale:
            return f"the figures are for {stale}: infer again"
        error = session.analysis.result.shapes.error
        if error is not None:
            return f"shape inference stopped at {error.node}: no figures to colour by"
        return "every node's value is zero"

    # ------------------------------------------------------------ profile
    def device(self) -> str:
        """The device the user chose in the planner (profiles run there too)."""
        return str(self.session.settings.planner_choices().get("device", "cpu"))

    def start_profile(self, ctx: str | None = None) -> None:
        """Profile every layer on ``ctx`` (the chosen device) in a child process.

        Raises
        ------
        UserError : no input shapes.
        """
        shapes = self.session.inputs.for_jobs()
        self._pending_revision = self.session.document.revision
        self.profiler.start(functools.partial(profile.profile, self.session.document.snapshot(),
                                              shapes, ctx or self.device(), ITERATIONS))

    @Slot(object)
    def _on_profiled(self, result: Any) -> None:
        self.profile = result
        self._profile_revision = self._pending_revision
        self.profile_changed.emit()
        if self.metric == "time":
            self.colours_changed.emit()

    @Slot(object)
    def _on_document_changed(self, change: Any) -> None:
        if self.flags and getattr(change, "kind", "") != "saved":
            self.set_flags({})
        if self.profile is not None and self._profile_revision != \
                self.session.document.revision:
            self.profile_changed.emit()
            if self.metric == "time":
                self.colours_changed.emit()
