"""The planner's long jobs as the CLI and the GUI both run them: in a child process
(:mod:`mxexplorer.core.runtime.isolated`), so a crash inside MXNet costs one line, not the
caller.  Each takes plain data (a snapshot, shapes), ``progress`` and a ``token``.
Must not import Qt.
"""
from __future__ import annotations

from typing import Callable, Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.snapshot import GraphSnapshot
from mxexplorer.core.planning import benchmark, memplan
from mxexplorer.core.planning.benchresults import Comparison, Estimate
from mxexplorer.core.runtime import isolated
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress


def plan(snap: GraphSnapshot, shapes: Mapping[str, Shape], ctx: str = "cpu",
         stages: str | None = None, threshold_mb: int | None = None, mode: str = "best",
         dtype: str = "float32", progress: Progress = no_progress,
         token: CancelToken | None = None,
         on_probe: Callable[[memplan.Probe], None] | None = None,
         target: str | None = None, time_limit: float = memplan.TIME_LIMIT
         ) -> memplan.PlanResult:
    """:func:`memplan.plan` in a child; each probe reaches ``on_probe`` as it is costed."""
    result: memplan.PlanResult = isolated.call(
        memplan.plan, snap, dict(shapes), ctx, stages, threshold_mb, mode, dtype=dtype,
        time_limit=time_limit, progress=progress, token=token, target=target,
        callbacks={"on_probe": on_probe} if on_probe is not None else None,
        what="planning")
    return result


def largest_batch(snap: GraphSnapshot, shapes: Mapping[str, Shape], budget_mb: float,
                  ctx: str = "cpu", stages: str | None = None, progress: Progress = no_progress,
                  token: CancelToken | None = None) -> memplan.BatchFit:
    """:func:`memplan.largest_batch` in a child."""
    fit: memplan.BatchFit = isolated.call(
        memplan.largest_batch, snap, dict(shapes), budget_mb, ctx, stages,
        progress=progress, token=token, what="the batch-size search")
    return fit


def bench(original_json: str, planned_json: str | None, shapes: Mapping[str, Shape],
          ctx: str = "cpu", warmup: int = 1, rounds: int | None = None,
          budget_s: float = benchmark.DEFAULT_BUDGET_S, stop_over_budget: bool = False,
          progress: Progress = no_progress, token: CancelToken | None = None,
          on_estimate: Callable[[Estimate], None] | None = None) -> Comparison:
    """:func:`benchmark.compare` in children: "original" against "planned", timed in
    rounds within ``budget_s``; the estimate reaches ``on_estimate`` before the timed
    rounds start."""
    return benchmark.compare(original_json, planned_json, dict(shapes), ctx=ctx,
                             warmup=warmup, rounds=rounds, budget_s=budget_s,
                             progress=progress, token=token, isolate=True,
                             stop_over_budget=stop_over_budget, on_estimate=on_estimate)


def bench_plan(snap: GraphSnapshot, plan: memplan.Plan | None,
               result: memplan.PlanResult | None, shapes: Mapping[str, Shape],
               ctx: str = "cpu", budget_s: float = benchmark.DEFAULT_BUDGET_S,
               stop_over_budget: bool = False, progress: Progress = no_progress,
               token: CancelToken | None = None,
               on_estimate: Callable[[Estimate], None] | None = None) -> Comparison:
    """The snapshot without any ``force_mirroring`` tag ("original") against it with
    ``plan``'s tags ("planned"; the original alone without a plan)."""
    original = memplan.retagged_json(snap, None)
    planned = memplan.retagged_json(snap, plan, result) \
        if plan is not None and result is not None else None
    return bench(original, planned, shapes, ctx, budget_s=budget_s,
                 stop_over_budget=stop_over_budget, progress=progress, token=token,
                 on_estimate=on_estimate)
