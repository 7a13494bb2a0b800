"""PlanState: the memory plan, the point of it the user selected (what Apply, Export
and the benchmark use), the largest batch and the benchmark, each computed by its own
job slot.  The three measure memory or time, so one runs at a time: starting one
cancels the others.

Signals
-------
changed(): a memory plan arrived or was dropped (the graph changed under it)
selected_changed(): the selected point, or whether it is applied, changed
preview_changed(): :meth:`PlanState.preview_tags` changed
bench_changed(): a benchmark result arrived (or was dropped for a new run)
bench_estimated(object): the :class:`Estimate` of the running benchmark, before its
    timed runs
bench_over_budget(object): the benchmark stopped after its estimate, which ran past the
    time budget (the :class:`Estimate`; ask the user, then :meth:`start_bench` again)
fit_changed(): a largest-batch result arrived
status(str, int): a line for the status bar, and for how many ms
"""
from __future__ import annotations

import functools
from typing import Callable

from PySide6.QtCore import QObject, Signal, Slot

from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.edits import Edit, set_many_attrs
from mxexplorer.core.planning import benchmark, jobs, memplan
from mxexplorer.core.planning.benchresults import Comparison, Estimate
from mxexplorer.core.planning.model import with_batch
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.gui.session.inputs import Inputs
from mxexplorer.gui.workers import JobSlot


class PlanState(QObject):
    changed = Signal()
    selected_changed = Signal()
    preview_changed = Signal()
    bench_changed = Signal()
    bench_estimated = Signal(object)
    bench_over_budget = Signal(object)
    fit_changed = Signal()
    status = Signal(str, int)

    def __init__(self, document: GraphDocument, inputs: Inputs,
                 push_edit: Callable[[Edit], str | None],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document, self.inputs, self._push_edit = document, inputs, push_edit
        self.result: memplan.PlanResult | None = None
        self.selected: memplan.Plan | None = None
        self.bench: Comparison | None = None
        self.bench_estimate: Estimate | None = None
        self.fit: memplan.BatchFit | None = None
        self.plan_job, self.fit_job, self.bench_job = (JobSlot(self), JobSlot(self),
                                                       JobSlot(self))
        self._key: int | None = None
        self._pending_key: int | None = None
        self._preview: dict[int, bool] | None = None
        self.plan_job.finished.connect(self._on_planned)
        self.fit_job.finished.connect(self._on_fitted)
        self.bench_job.finished.connect(self._on_benched)
        self.bench_job.partial.connect(self._on_bench_estimated)

    # ------------------------------------------------------------- jobs
    def jobs(self) -> tuple[JobSlot, JobSlot, JobSlot]:
        return self.plan_job, self.fit_job, self.bench_job

    @property
    def busy(self) -> bool:
        return any(job.busy for job in self.jobs())

    def cancel(self, quiet: bool = False) -> None:
        for job in self.jobs():
            job.cancel(quiet=quiet)

    def _only(self, job: JobSlot) -> None:
        for other in self.jobs():
            if other is not job:
                other.cancel(quiet=True)

    def start_plan(self, ctx: str, stages: str, mode: str, threshold: int | None) -> None:
        """Search for mirroring plans (in a child process); probes arrive through
        ``plan_job.partial``, the result through ``changed``.

        Raises
        ------
        UserError : no input shapes, or the file's stages asked for and none tagged.
        """
        if stages == "file" and not memplan.file_stages(self.document):
            raise UserError("No node carries mirror_stage: tag some in the tree or the "
                            "graph (Ctrl+M), or choose automatic stages (cut vertices).")
        job = functools.partial(jobs.plan, self.document.snapshot(), self.inputs.for_jobs(),
                                ctx, stages, threshold, mode, self.inputs.dtype)
        self.drop()
        self._pending_key = self.document.structure_key()
        self._only(self.plan_job)
        self.plan_job.start(job, partial=True)     # partial: each probe as it comes

    def start_fit(self, ctx: str, stages: str, budget_mb: float) -> None:
        """The largest batch that trains within ``budget_mb``, unplanned and planned."""
        job = functools.partial(jobs.largest_batch, self.document.snapshot(),
                                self.inputs.for_jobs(), budget_mb, ctx, stages)
        self._only(self.fit_job)
        self.fit_job.start(job)

    def start_bench(self, ctx: str, budget_s: float = benchmark.DEFAULT_BUDGET_S,
                    batch: int | None = None, ask: bool = True) -> None:
        """Time the graph without any ``force_mirroring`` tag ("original") against the
        selected plan ("planned"; the original alone when no plan is selected), in
        rounds within ``budget_s``; ``batch``: at this batch instead of the inputs';
        ``ask``: stop after the estimate when it runs past the budget
        (``bench_over_budget``).

        Raises
        ------
        UserError : no input shapes.
        """
        plan = self.selected if self.valid() else None
        shapes = self.inputs.for_jobs()
        if batch is not None:
            shapes = with_batch(shapes, batch)
        job = functools.partial(jobs.bench_plan, self.document.snapshot(), plan, self.result,
                                shapes, ctx, budget_s, ask)
        self._only(self.bench_job)
        self.bench_estimate = None
        self.bench_job.start(job, partial=True)   # partial: the estimate, before the runs

    @property
    def bench_verdict(self) -> str:
        return self.bench.verdict if self.bench is not None else ""

    @Slot(object)
    def _on_planned(self, result: memplan.PlanResult) -> None:
        self.result = result
        self._key = self._pending_key
        if self.document.structure_key() != self._key:
            self.drop()                      # the graph changed while it ran
            self.status.emit("The graph changed while planning: plan again.", 6000)
            return
        self.selected = result.best
        self.changed.emit()
        self.selected_changed.emit()
        self._update_preview()

    @Slot(object)
    def _on_fitted(self, result: memplan.BatchFit) -> None:
        self.fit = result
        self.fit_changed.emit()

    @Slot(object)
    def _on_bench_estimated(self, estimate: Estimate) -> None:
        self.bench_estimate = estimate
        self.bench_estimated.emit(estimate)

    @Slot(object)
    def _on_benched(self, result: Comparison) -> None:
        if not result.complete and result.estimate is not None:
            self.bench_over_budget.emit(result.estimate)
            return
        self.bench = result
        self.bench_changed.emit()

    # ------------------------------------------------------------ the plan
    def document_edited(self) -> None:
        """The graph changed: a plan for another graph goes; tags alone keep it."""
        if self.result is None:
            return
        if self.document.structure_key() != self._key:
            self.drop()
        else:
            self.selected_changed.emit()     # applied, or no longer
            self._update_preview()

    def select_probe(self, probe: memplan.Probe) -> None:
        """The user picked this point of the search: it is the plan from now on."""
        if self.result is None or not self.valid():
            return
        try:
            self.selected = self.result.plan_for(self.document, probe)
        except UserError as exc:
            self.status.emit(str(exc), 5000)
            return
        self.selected_changed.emit()
        self._update_preview()

    def valid(self) -> bool:
        """The plan was made for this graph (tags aside)."""
        return self.result is not None and self.document.structure_key() == self._key

    def applied(self) -> bool:
        """The document carries exactly the selected plan's tags."""
        plan = self.selected
        return plan is not None and self.valid() and memplan.is_applied(self.document, plan)

    def preview_tags(self) -> dict[int, bool] | None:
        """Operator nodes the selected plan recomputes (True) or keeps (False), while
        it is previewed (not applied); None when there is nothing to preview."""
        return self._preview

    def _update_preview(self) -> None:
        plan = self.selected
        preview = None
        if plan is not None and self.valid() and not self.applied():
            doc = self.document
            # a plan tags variables too (MXNet ignores it there): inputs are never
            # recomputed
            preview = {i: v == "True" for i, v in plan.tags.items()
                       if not doc.nodes[i].is_variable}
        if preview != self._preview:
            self._preview = preview
            self.preview_changed.emit()

    def drop(self) -> None:
        had = self.result is not None or self.selected is not None
        self.result = None
        self.selected = None
        self._key = None
        if had:
            self.changed.emit()
            self.selected_changed.emit()
        self._update_preview()

    def apply(self) -> str | None:
        """Put the selected plan's tags into the document (one undo step); returns why
        not, else None."""
        plan, result = self.selected, self.result
        if plan is None or result is None:
            return "No plan is selected: press Plan, then pick a point."
        if not self.valid():
            return "The graph changed since this plan: plan again."
        changes = memplan.plan_edits(self.document, plan, result)
        return self._push_edit(set_many_attrs(changes, f"Apply memory plan "
                                                       f"({plan.cost_mb:.0f} MB)"))

    def planned_json(self) -> str:
        """The document with the selected plan's tags, ready to train.

        Raises
        ------
        UserError : no valid plan is selected.
        """
        plan, result = self.selected, self.result
        if plan is None or result is None or not self.valid():
            raise UserError("no plan for this graph is selected: plan again")
        return symbol_io.dumps(memplan.planned_dict(self.document, plan, result), indent=2)
