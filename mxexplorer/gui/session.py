"""DocumentSession: one open document and everything its panels must agree on.

A session owns the :class:`GraphDocument`, its undo stack, the selection, the input
shapes (kept per data-input node, so they follow renames and prefixes), the latest
analysis (shapes and statistics) with the graph it was made for, the memory plan,
the point of it the user selected (which is what Apply, Export and the benchmark
use), benchmark and batch-fit results, the jobs computing them (one slot per kind:
a newer request supersedes an older one), the recovery file of unsaved edits, and
saving.  Panels are built from a session and read it; they never read each other.

Stale is shown, never hidden: an analysis made for an older graph stays until the
new one arrives, and :meth:`analysis_stale` says why it is old.

Must not import the main window or any panel.
"""
from __future__ import annotations

import functools
from typing import Any, Mapping

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QUndoStack

from mxexplorer.core import benchmark, jobs, memplan, shapes, stats, symbol_io
from mxexplorer.core.document import Change, GraphDocument, GraphSnapshot, NodeKind
from mxexplorer.core.edits import Edit, NodesAttrsEdit, RenameNodeEdit, mirror_stage_edit
from mxexplorer.core.errors import UserError
from mxexplorer.core.recovery import RecoveryFile, RecoveryStore
from mxexplorer.core.shapes import Shape
from mxexplorer.gui.bridge import DocumentBridge, Selection, disconnect_quietly
from mxexplorer.gui.commands import EditCommand
from mxexplorer.gui.insight import Insight
from mxexplorer.gui.mxnet_loader import loader
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.workers import JobSlot

#: why an analysis no longer matches the document (see :meth:`analysis_stale`)
STALE_EDIT = "the graph before your last edit"
STALE_SHAPES = "other input shapes"


class _AnalysisJob:
    """Shape inference and statistics on a snapshot (runs on a worker)."""

    def __init__(self, snap: GraphSnapshot, given: dict[str, Shape], dtype: str) -> None:
        self.snap, self.given, self.dtypes = snap, given, {k: dtype for k in given}

    def __call__(self, progress: Any = None, token: Any = None) -> stats.AnalysisResult:
        return stats.analyze(self.snap, self.given, self.dtypes)


class DocumentSession(QObject):
    """Signals
    -------
    document_changed(object): the core ``Change`` after every edit (and after a save)
    input_shapes_changed(): the input shapes or the dtype changed
    analysis_changed(): a new analysis arrived, or the last one became stale or fresh
    inference_failed(str): inference could not run (one line)
    plan_changed(): a memory plan arrived or was dropped (the graph changed under it)
    selected_plan_changed(): the selected point, or whether it is applied, changed
    preview_changed(): :meth:`preview_tags` changed
    bench_changed(): a benchmark result arrived
    fit_changed(): a largest-batch result arrived
    modified_changed(bool): the document now differs (or no longer) from its file
    status(str, int): a line for the status bar, and for how many ms (0: until replaced)
    """

    document_changed = Signal(object)
    input_shapes_changed = Signal()
    analysis_changed = Signal()
    inference_failed = Signal(str)
    plan_changed = Signal()
    selected_plan_changed = Signal()
    preview_changed = Signal()
    bench_changed = Signal()
    fit_changed = Signal()
    modified_changed = Signal(bool)
    status = Signal(str, int)

    def __init__(self, document: GraphDocument, settings: Settings,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self.settings = settings
        self.bridge = DocumentBridge(document, self)
        self.undo_stack = QUndoStack(self)
        self.selection = Selection(self)
        #: inference and statistics
        self.inference = JobSlot(self)
        #: planning, largest batch and benchmark: one at a time (they time and
        #: measure; two at once would disturb each other)
        self.planner = JobSlot(self)
        self.dtype = "float32"
        self.auto_infer = True
        self.analysis: stats.AnalysisResult | None = None
        self.plan: memplan.PlanResult | None = None
        self.selected_plan: memplan.Plan | None = None
        self.bench: list[benchmark.BenchResult] | None = None
        self.bench_verdict = ""
        self.fit: memplan.BatchFit | None = None
        self.planner_kind = ""                 # "plan", "fit" or "bench": the last started
        self._shapes: dict[int, Shape] = {}
        self._analysis_key: tuple[int, tuple[tuple[str, Shape], ...], str] | None = None
        self._pending_key: tuple[int, tuple[tuple[str, Shape], ...], str] | None = None
        self._plan_key: int | None = None
        self._pending_plan_key: int | None = None
        self._infer_when_ready = False
        self._preview: dict[int, bool] | None = None
        self.base_modified = False          # restored after a crash: differs from its file
        self.recovery = RecoveryFile(RecoveryStore(settings.recovery_dir()))
        self._recovery_timer = QTimer(self, singleShot=True, interval=1000)
        self._recovery_timer.timeout.connect(self.write_recovery)

        self.bridge.changed.connect(self._on_document_changed)
        self.undo_stack.indexChanged.connect(self._on_undo_index_changed)
        self.undo_stack.cleanChanged.connect(self._on_undo_clean_changed)
        self.inference.finished.connect(self._on_inference_finished)
        self.inference.failed.connect(self._on_inference_failed)
        self.planner.finished.connect(self._on_planner_finished)
        loader().state_changed.connect(self._on_mxnet_state)
        self._restore_kinds()
        self._shapes = self._ids(self._initial_shapes())
        self.insight = Insight(self)        # colour metric and per-layer profile

    # ---------------------------------------------------------------- edits
    def push_edit(self, edit: Edit) -> str | None:
        """Push a core edit as one undo step; returns why it was refused, else None."""
        if isinstance(edit, RenameNodeEdit):
            try:
                edit.plan(self.document)
            except UserError as exc:
                return str(exc)
        self.undo_stack.push(EditCommand(self.document, edit))
        return None

    def mark_mirror(self, nodes: list[int], on: bool) -> str | None:
        """Tag (or untag) these nodes' operators as mirror stages, one undo step;
        returns why not (no operator among them), else None."""
        try:
            edit = mirror_stage_edit(self.document, tuple(nodes), on)
        except UserError as exc:
            return str(exc)
        return self.push_edit(edit)

    def is_modified(self) -> bool:
        """The document differs from its file (edits, or restored after a crash)."""
        return self.base_modified or not self.undo_stack.isClean()

    def _restore_kinds(self) -> None:
        """What the user said of variables in this file before (data or parameter)."""
        doc = self.document
        said = self.settings.variable_kinds(doc.path) if doc.path else {}
        kinds = {name: NodeKind(v) for name, v in said.items() if v in ("data", "param")}
        if kinds:
            doc.restore_kinds(kinds)

    @Slot(object)
    def _on_document_changed(self, change: Change) -> None:
        doc = self.document
        if change.kind == "kinds" and doc.path:
            self.settings.set_variable_kinds(doc.path, {
                doc.nodes[i].name: k.value for i, k in doc.kind_overrides.items()})
        self.document_changed.emit(change)
        if change.kind == "saved":
            return
        if self.plan is not None:
            if memplan.untagged_key(self.document) != self._plan_key:
                self._drop_plan()            # made for another graph
            else:
                self.selected_plan_changed.emit()    # applied, or no longer
                self._update_preview()
        if self.analysis is not None and self.analysis_stale() is None:
            return                           # tags only: the shapes still hold
        if self.auto_infer and self.input_shapes():
            self.infer()
        else:
            self.analysis_changed.emit()     # the old analysis is stale now

    # --------------------------------------------------------- input shapes
    def _initial_shapes(self) -> dict[str, Shape]:
        doc = self.document
        inputs = {doc.nodes[i].name for i in doc.data_inputs()}
        remembered = self.settings.last_shapes(doc.path) if doc.path else {}
        return {k: v for k, v in remembered.items() if k in inputs} or \
            shapes.guess_input_shapes(doc)

    def _ids(self, by_name: Mapping[str, Shape]) -> dict[int, Shape]:
        doc = self.document
        return {i: tuple(by_name[doc.nodes[i].name]) for i in doc.data_inputs()
                if doc.nodes[i].name in by_name}

    def input_shapes(self) -> dict[str, Shape]:
        """The data inputs' shapes, by their current names (empty ones left out)."""
        doc = self.document
        return {doc.nodes[i].name: self._shapes[i] for i in doc.data_inputs()
                if i in self._shapes}

    def set_input_shapes(self, by_name: Mapping[str, Shape], dtype: str | None = None,
                         infer: bool | None = None) -> None:
        """Replace the input shapes (inputs left out have no shape); infers again
        when they changed and ``infer`` (by default: the auto-infer setting)."""
        new = self._ids(by_name)
        dtype = dtype or self.dtype
        if new == self._shapes and dtype == self.dtype:
            return
        self._shapes, self.dtype = new, dtype
        self.input_shapes_changed.emit()
        if self.auto_infer if infer is None else infer:
            self.infer()
        elif self.analysis is not None:
            self.analysis_changed.emit()     # stale: made for other shapes

    # -------------------------------------------------------------- analysis
    def _key_now(self) -> tuple[int, tuple[tuple[str, Shape], ...], str]:
        return (memplan.untagged_key(self.document),
                tuple(sorted(self.input_shapes().items())), self.dtype)

    def infer(self, start_mxnet: bool = True) -> None:
        """Infer shapes and statistics for the document as it is now (in the
        background; an inference already running is superseded).  Without MXNet yet,
        it runs once MXNet is in; ``start_mxnet=False`` leaves starting its import to
        the window (which waits until the graph is drawn)."""
        if not loader().ready and loader().state != "unavailable":
            self._infer_when_ready = True
            if start_mxnet:
                loader().ensure()
            return
        self._infer_when_ready = False
        self._pending_key = self._key_now()
        self.inference.start(_AnalysisJob(self.document.snapshot(), self.input_shapes(),
                                          self.dtype))

    def infer_blocking(self) -> None:
        """The same inference on the calling thread (the --screenshot path)."""
        self._pending_key = self._key_now()
        job = _AnalysisJob(self.document.snapshot(), self.input_shapes(), self.dtype)
        self._take_analysis(job())
        loader().mark_imported()

    @Slot(str)
    def _on_mxnet_state(self, state: str) -> None:
        if state == "ready" and self._infer_when_ready:
            self.infer()
        elif state == "unavailable" and self._infer_when_ready:
            self._infer_when_ready = False
            self.inference_failed.emit(f"MXNet is unavailable: {loader().message}")

    @Slot(object)
    def _on_inference_finished(self, analysis: stats.AnalysisResult) -> None:
        self._take_analysis(analysis)

    def _take_analysis(self, analysis: stats.AnalysisResult) -> None:
        self.analysis = analysis
        self._analysis_key = self._pending_key
        doc = self.document
        result = analysis.shapes
        if result.revision == doc.revision:
            # inputs the inference filled in (from the file's hints) join the shapes
            used = self._ids({k: v for k, v in result.inputs_used.items()})
            if used and any(self._shapes.get(i) != s for i, s in used.items()):
                self._shapes.update(used)
                self._analysis_key = self._key_now()
                self.input_shapes_changed.emit()
            if doc.path and result.error is None:
                self.settings.set_last_shapes(doc.path, self.input_shapes())
            if result.error is not None:
                found = doc.find(result.error.node)
                if found:
                    self.selection.set(found[:1])
        self.analysis_changed.emit()

    @Slot(str)
    def _on_inference_failed(self, message: str) -> None:
        self.inference_failed.emit(message.strip().splitlines()[-1] if message.strip()
                                   else "inference failed")

    def analysis_stale(self) -> str | None:
        """Why the analysis does not describe the document and shapes as they are
        (:data:`STALE_EDIT`, :data:`STALE_SHAPES`), or None when it does."""
        if self.analysis is None or self._analysis_key is None:
            return None
        graph, given, dtype = self._key_now()
        if graph != self._analysis_key[0]:
            return STALE_EDIT
        if (given, dtype) != self._analysis_key[1:]:
            return STALE_SHAPES
        return None

    def fresh_shapes(self) -> shapes.ShapeResult | None:
        """The shapes when they describe the document as it is, else None."""
        if self.analysis is None or self.analysis_stale() is not None:
            return None
        return self.analysis.shapes

    # ------------------------------------------------------------ the plan
    def start_plan(self, ctx: str, stages: str, mode: str, threshold: int | None) -> None:
        """Search for mirroring plans (in a child process); probes arrive through
        ``planner.partial``, the result through ``plan_changed``.

        Raises
        ------
        UserError : no input shapes, or the file's stages asked for and none tagged.
        """
        if stages == "file" and not memplan.file_stages(self.document):
            raise UserError("No node carries mirror_stage: tag some in the tree or the "
                            "graph (Ctrl+M), or choose automatic stages (cut vertices).")
        job = functools.partial(jobs.plan, self.document.snapshot(), self.shapes_for_jobs(),
                                ctx, stages, threshold, mode, self.dtype)
        self._drop_plan()
        self._pending_plan_key = memplan.untagged_key(self.document)
        self.planner_kind = "plan"
        self.planner.start(job, partial=True)     # partial: each probe as it comes

    def start_fit(self, ctx: str, stages: str, budget_mb: float) -> None:
        """The largest batch that trains within ``budget_mb``, unplanned and planned."""
        job = functools.partial(jobs.largest_batch, self.document.snapshot(),
                                self.shapes_for_jobs(), budget_mb, ctx, stages)
        self.planner_kind = "fit"
        self.planner.start(job)

    def start_bench(self, ctx: str) -> None:
        """Time the graph without any ``force_mirroring`` tag ("original") against the
        selected plan ("planned"; the original alone when no plan is selected).

        Raises
        ------
        UserError : no input shapes.
        """
        plan = self.selected_plan if self.plan_valid() else None
        job = functools.partial(jobs.bench_plan, self.document.snapshot(), plan, self.plan,
                                self.shapes_for_jobs(), ctx)
        self.planner_kind = "bench"
        self.planner.start(job)

    def shapes_for_jobs(self) -> dict[str, Shape]:
        given = self.input_shapes()
        if not given:
            raise UserError("Give the input shapes in the Input shapes panel first.")
        return given

    @Slot(object)
    def _on_planner_finished(self, result: object) -> None:
        if self.planner_kind == "plan":
            assert isinstance(result, memplan.PlanResult)
            self.plan = result
            self._plan_key = self._pending_plan_key
            if memplan.untagged_key(self.document) != self._plan_key:
                self._drop_plan()            # the graph changed while it ran
                self.status.emit("The graph changed while planning: plan again.", 6000)
                return
            self.selected_plan = result.best
            self.plan_changed.emit()
            self.selected_plan_changed.emit()
            self._update_preview()
        elif self.planner_kind == "fit":
            self.fit = result  # type: ignore[assignment]
            self.fit_changed.emit()
        else:
            self.bench = list(result)  # type: ignore[call-overload]
            self.bench_verdict = benchmark.verdict(self.bench)
            self.bench_changed.emit()

    def select_probe(self, probe: memplan.Probe) -> None:
        """The user picked this point of the search: it is the plan from now on."""
        if self.plan is None or not self.plan_valid():
            return
        try:
            self.selected_plan = self.plan.plan_for(self.document, probe)
        except UserError as exc:
            self.status.emit(str(exc), 5000)
            return
        self.selected_plan_changed.emit()
        self._update_preview()

    def plan_valid(self) -> bool:
        """The plan was made for this graph (tags aside)."""
        return self.plan is not None and \
            memplan.untagged_key(self.document) == self._plan_key

    def plan_applied(self) -> bool:
        """The document carries exactly the selected plan's tags."""
        plan = self.selected_plan
        return plan is not None and self.plan_valid() and \
            memplan.is_applied(self.document, plan)

    def preview_tags(self) -> dict[int, bool] | None:
        """Operator nodes the selected plan recomputes (True) or keeps (False), while
        it is previewed (not applied); None when there is nothing to preview."""
        return self._preview

    def _update_preview(self) -> None:
        plan = self.selected_plan
        preview = None
        if plan is not None and self.plan_valid() and not self.plan_applied():
            doc = self.document
            # a plan tags variables too (MXNet ignores it there): inputs are never
            # recomputed
            preview = {i: v == "True" for i, v in plan.tags.items()
                       if not doc.nodes[i].is_variable}
        if preview != self._preview:
            self._preview = preview
            self.preview_changed.emit()

    def _drop_plan(self) -> None:
        had = self.plan is not None or self.selected_plan is not None
        self.plan = None
        self.selected_plan = None
        self._plan_key = None
        if had:
            self.plan_changed.emit()
            self.selected_plan_changed.emit()
        self._update_preview()

    def apply_plan(self) -> str | None:
        """Put the selected plan's tags into the document (one undo step); returns why
        not, else None."""
        plan, result = self.selected_plan, self.plan
        if plan is None or result is None:
            return "No plan is selected: press Plan, then pick a point."
        if not self.plan_valid():
            return "The graph changed since this plan: plan again."
        changes = memplan.plan_edits(self.document, plan, result)
        return self.push_edit(NodesAttrsEdit(changes, f"Apply memory plan "
                                                      f"({plan.cost_mb:.0f} MB)"))

    def planned_json(self) -> str:
        """The document with the selected plan's tags, ready to train.

        Raises
        ------
        UserError : no valid plan is selected.
        """
        plan, result = self.selected_plan, self.plan
        if plan is None or result is None or not self.plan_valid():
            raise UserError("no plan for this graph is selected: plan again")
        return symbol_io.dumps(memplan.planned_dict(self.document, plan, result), indent=2)

    # ---------------------------------------------------------------- saving
    def save_to(self, path: str) -> None:
        """Write the document (and its checkpoint) to ``path``; clean afterwards.

        Raises
        ------
        OSError : the file could not be written (the document and its edits stay).
        """
        self.document.save(path, journal_dir=self.settings.saves_dir())
        if self.input_shapes():
            self.settings.set_last_shapes(path, self.input_shapes())
        self.base_modified = False
        self.undo_stack.setClean()
        self.drop_recovery()
        self.settings.add_recent_file(path)
        self.modified_changed.emit(False)

    def mark_restored(self) -> None:
        """The document came from a recovery file: it differs from its file."""
        self.base_modified = True
        self.write_recovery()             # under this process's name from now on
        self.modified_changed.emit(True)

    @Slot(int)
    def _on_undo_index_changed(self, index: int) -> None:
        self.modified_changed.emit(self.is_modified())
        if self.recovery.key is None and self.is_modified():
            # the first edit since the file was opened or saved is written at once:
            # the timer could trail it by seconds on a loaded machine
            self.write_recovery()
        else:
            self._recovery_timer.start()        # later ones at most once a second

    @Slot(bool)
    def _on_undo_clean_changed(self, clean: bool) -> None:
        self.modified_changed.emit(self.is_modified())

    @Slot()
    def write_recovery(self) -> None:
        """Write (or, once nothing is unsaved, remove) this document's recovery file."""
        self._recovery_timer.stop()
        if not self.is_modified():
            self.drop_recovery()
            return
        try:
            self.recovery.write(self.document)
        except OSError as exc:
            self.status.emit(f"Cannot write the recovery file ({exc.strerror or exc}): "
                             "save soon", 10000)

    def drop_recovery(self) -> None:
        self._recovery_timer.stop()
        self.recovery.remove()

    # -------------------------------------------------------------- lifetime
    def stop(self) -> None:
        """Cancel every job of this session (their late results are dropped)."""
        self.inference.cancel(quiet=True)
        self.planner.cancel(quiet=True)
        self.insight.profiler.cancel(quiet=True)
        self._infer_when_ready = False

    def close(self) -> None:
        """The document is going away: stop jobs, drop its recovery file, detach."""
        self.stop()
        self.drop_recovery()
        self.bridge.detach()
        disconnect_quietly((loader().state_changed, self._on_mxnet_state))
