"""The memory planner: memonger's mirroring plans, their cost, and a better search.

Model (Chen et al. 2016, "Training deep nets with sublinear memory cost", as the
original ``memonger.py`` implements it for MXNet): operator outputs are recomputed in
backward when their node carries ``__force_mirroring__ = True``; nodes tagged
``mirror_stage`` are stage boundaries, kept (``False``) or recomputed depending on how
much has been recomputed since the last kept one, compared with a threshold in MB.
A plan's cost is MXNet's own report for training the tagged graph:
``simple_bind(ctx, grad_req='write').debug_str()``'s ``Total N MB allocated``.

What differs from the original search (and why):

* every probe plans from the untouched graph and the unplanned graph is always a
  candidate, so a plan is never worse than no plan;
* a graph without ``mirror_stage`` tags is refused with a hint (the original then
  mirrors everything and returns a plan worse than none); :func:`cut_vertices` gives
  automatic stages instead;
* thresholds are swept densely (plans that tag the same nodes are costed once, the
  original's own nine thresholds are among them), then :mod:`plansearch` climbs,
  trims and spreads the front, its moves ranked by :mod:`liveness`'s memory model.

No Qt here; MXNet only where it must answer (shapes, cost).
"""
from __future__ import annotations

import math
import time
from typing import Callable, Mapping, Sequence

from mxexplorer.core.analysis import stats
from mxexplorer.core.analysis.shapes import (
    MAX_ELEMENTS,
    Shape,
    check_allocatable,
    infer_document,
)
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.snapshot import GraphSnapshot

# the planner's parts live in their own modules; their names stay reachable here for
# the callers that know them as memplan's
from mxexplorer.core.graph.structure import cut_vertices as cut_vertices
from mxexplorer.core.graph.structure import file_stages as file_stages
from mxexplorer.core.planning import plansearch
from mxexplorer.core.planning.model import MB as MB
from mxexplorer.core.planning.model import BatchFit as BatchFit
from mxexplorer.core.planning.model import NoStagesError as NoStagesError
from mxexplorer.core.planning.model import Plan as Plan
from mxexplorer.core.planning.model import PlanResult as PlanResult
from mxexplorer.core.planning.model import Probe as Probe
from mxexplorer.core.planning.model import ProbeCallback as ProbeCallback
from mxexplorer.core.planning.model import with_batch as with_batch
from mxexplorer.core.planning.plancost import CostFactory as CostFactory
from mxexplorer.core.planning.plancost import CostFunction as CostFunction
from mxexplorer.core.planning.plancost import CostOracle as CostOracle
from mxexplorer.core.planning.plancost import Measured as Measured
from mxexplorer.core.planning.plancost import ModelCost as ModelCost
from mxexplorer.core.planning.plancost import MXNetCost as MXNetCost
from mxexplorer.core.planning.plancost import default_cost as default_cost
from mxexplorer.core.planning.plancost import model_cost as model_cost
from mxexplorer.core.planning.plancost import mxnet_cost as mxnet_cost
from mxexplorer.core.planning.plancost import parse_total_mb as parse_total_mb
from mxexplorer.core.planning.plantags import applied_tags as applied_tags
from mxexplorer.core.planning.plantags import original_tags as original_tags
from mxexplorer.core.planning.plantags import recompute_macs as recompute_macs
from mxexplorer.core.planning.plantags import retag as retag
from mxexplorer.core.planning.plantags import tagged_dict as tagged_dict
from mxexplorer.core.planning.plantags import tags_for_kept as tags_for_kept
from mxexplorer.core.planning.retag import is_applied as is_applied
from mxexplorer.core.planning.retag import plan_edits as plan_edits
from mxexplorer.core.planning.retag import planned_dict as planned_dict
from mxexplorer.core.planning.retag import planned_json as planned_json
from mxexplorer.core.planning.retag import retagged_json as retagged_json
from mxexplorer.core.planning.state import Search as Search
from mxexplorer.core.planning.state import measure_baseline
from mxexplorer.core.planning.state import original_thresholds as original_thresholds
from mxexplorer.core.runtime import forked
from mxexplorer.core.runtime.devices import parse_device
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.gcpause import frozen_heap
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

#: the planner's safety net in seconds (:func:`plan`'s ``time_limit``)
TIME_LIMIT = 300.0


def plan(snap: GraphSnapshot, shapes: Mapping[str, Shape], ctx: str = "cpu",
         stages: str | None = None, threshold_mb: int | None = None, mode: str = "best",
         time_limit: float = TIME_LIMIT, dtype: str = "float32",
         progress: Progress = no_progress, token: CancelToken | None = None,
         on_probe: ProbeCallback | None = None, target: str | None = None,
         cost: CostFactory | None = None, parallel: bool = True) -> PlanResult:
    """Plan a document snapshot for training at ``shapes`` on ``ctx``.

    Parameters
    ----------
    stages : "file" (the file's ``mirror_stage`` tags), "auto" (cut vertices), or None:
        the file's when it has any, else automatic (as memonger's users expect).
    threshold_mb : plan at this threshold exactly as the original algorithm does.
    mode : "best" (the solver, then climb, trim and front: :mod:`plansearch`; probes
        and model calls by graph size, the same plan on any machine), "fast" (the same
        with the small budgets: a few seconds), "thorough" (the larger budgets at any
        size), "quick" (the original's
        probes and a 10-point sweep) or "original" (the original's 9 probes).  "best"
        runs both the fast and the thorough search, side by side where it can
        (``parallel``), and takes the better plan (:func:`plansearch.search_modes`):
        never worse than "fast", and below 500 operators than "thorough".
    time_limit : a safety net in seconds, not reached on the benchmark networks: the
        searches stop on their counts.  When it fires the result says so
        (:attr:`PlanResult.complete`) and its plan is still the best costed, never
        worse than the solver's.
    target : the device the plan is for, when not ``ctx`` (plan on the CPU for a GPU:
        the GPU's rules apply, see :func:`plansearch.never_mirrored`).
    cost : what a plan costs (:data:`CostFactory`); by default MXNet's own report where
        MXNet runs, else the memory model (:func:`default_cost`); the result says which
        (:attr:`PlanResult.costed_by`).
    parallel : "best" runs its fast half in a forked process beside the thorough one
        where that is safe (Linux, two cores, ``ctx`` a CPU: :func:`forked.available`);
        the plan is the same either way, only the wall time differs.

    Raises
    ------
    NoStagesError : ``stages="file"`` and no node is tagged.
    UserError : shapes that do not fit the graph, a graph MXNet cannot bind.
    """
    with frozen_heap():      # the memory model's garbage is all the collector sees
        return _plan(snap, shapes, ctx, stages, threshold_mb, mode, time_limit, dtype,
                     progress, token, on_probe, target, cost, parallel)


def _plan(snap: GraphSnapshot, shapes: Mapping[str, Shape], ctx: str, stages: str | None,
          threshold_mb: int | None, mode: str, time_limit: float, dtype: str,
          progress: Progress, token: CancelToken | None, on_probe: ProbeCallback | None,
          target: str | None, cost: CostFactory | None, parallel: bool) -> PlanResult:
    started = time.perf_counter()
    token = token or CancelToken()
    if stages not in ("file", "auto", None):
        raise UserError(f"unknown stage source {stages!r}: use file or auto")
    if mode not in ("best", "fast", "thorough", "original", "quick"):
        raise UserError(f"unknown search mode {mode!r}: use best, fast, thorough or original")
    doc = GraphDocument.from_snapshot(snap)
    progress(0, 1, "inferring shapes")
    result = infer_document(doc, shapes, {k: dtype for k in shapes}, snap.param_shapes,
                            snap.revision)
    if result.error is not None:
        raise UserError(f"shape inference stopped at {result.error.one_line()}")
    if not result.complete:
        missing = ", ".join(result.missing_inputs[:5]) or "some outputs"
        raise UserError(f"shapes are not all known (no shape for {missing}); "
                        "give every data input a shape")
    check_allocatable(doc.internal_names(), result.internal_shapes, "planning")
    if stages is None:
        stages = "file" if file_stages(doc) else "auto"
    stage_map = file_stages(doc) if stages == "file" else \
        {i: "True" for i in cut_vertices(doc)}
    if not stage_map:
        if stages == "file":
            raise NoStagesError("no node carries mirror_stage")
        raise UserError("the graph has no cut vertex to use as a stage")
    gstats = stats.compute(doc, result)
    node_macs = {i: ns.macs for i, ns in gstats.per_node.items() if ns.macs}
    oracle = (cost or default_cost)(doc, result.by_entry, shapes, ctx, dtype)
    search = Search(doc, result.by_entry, stage_map, stages, oracle, gstats, progress,
                    token, on_probe)
    search.fixed = plansearch.never_mirrored(doc, target or ctx)
    search.deadline = started + time_limit
    # a CUDA context cannot cross a fork: planning on a GPU runs its searches in turn
    search.parallel = parallel and forked.available() and parse_device(ctx)[0] == "cpu"
    n_ops = sum(not n.is_variable for n in doc.nodes)
    budget, model_calls = plansearch.budgets(n_ops, mode)
    search.total = 2 if threshold_mb is not None else (11 if mode == "original" else
                                                       budget + 10)
    if mode == "best" and threshold_mb is None:     # the fast search runs besides
        search.total += plansearch.budgets(n_ops, "fast")[0] + 10
    if threshold_mb is not None or not plansearch.forks_beside(search, mode):
        measure_baseline(search)       # else the search forked beside costs it
    if threshold_mb is not None:
        kept, _, tags = search.threshold_plan(threshold_mb)
        search.cost_of(kept, "threshold", threshold_mb, tags)
    else:
        if mode in ("best", "fast", "thorough"):
            plansearch.search_modes(search, n_ops, mode)
        else:
            original_thresholds(search)
        if mode == "quick":
            plansearch.sweep(search, 10)
    baseline = search.baseline
    assert baseline is not None        # measured here or beside, or an error was raised
    best: Plan | None = None
    if search.best_kept is not None and (search.best_cost < baseline or
                                         threshold_mb is not None):
        kept = search.best_kept
        tags = tags_for_kept(doc, kept)  # what original_tags gives for a threshold, too
        best = Plan(tags, search.best_cost, search.best_threshold, kept,
                    int(search.best_recompute), gstats.macs)
    progress(1, 1, "done")
    return PlanResult(baseline, best, tuple(search.probes), tuple(stage_map), stages,
                      snap.revision, dict(shapes), time.perf_counter() - started,
                      node_macs, gstats.macs, gstats.param_bytes, search.cut, time_limit,
                      oracle.key)


def too_big(shapes: Sequence[Shape | None]) -> bool:
    """A tensor over the 2^31 elements MXNet allocates (a batch that cannot fit)."""
    return any(s and math.prod(s) > MAX_ELEMENTS for s in shapes)


def largest_batch(snap: GraphSnapshot, shapes: Mapping[str, Shape], budget_mb: float,
                  ctx: str = "cpu", stages: str | None = "auto", max_batch: int = 65536,
                  progress: Progress = no_progress, token: CancelToken | None = None
                  ) -> BatchFit:
    """The largest batch (first dimension of every input) whose training cost fits in
    ``budget_mb``, for the unplanned graph and for a quick plan at each batch."""
    token = token or CancelToken()
    probes: list[tuple[str, int, float | None]] = []

    def unplanned(batch: int) -> float | None:
        token.check()
        try:
            at = with_batch(shapes, batch)
            doc = GraphDocument.from_snapshot(snap)
            found = infer_document(doc, at, None, snap.param_shapes)
            if found.error is not None:
                raise UserError(f"shape inference stopped at {found.error.one_line()}")
            cost: float | None = None
            if not too_big(found.internal_shapes):
                cost = default_cost(doc, found.by_entry, at, ctx, "float32").baseline(doc)
        except UserError:
            raise
        except Exception:  # noqa: BLE001 - out of memory counts as over budget
            cost = None
        probes.append(("unplanned", batch, cost))
        progress(len(probes), len(probes) + 8, f"unplanned batch {batch}: "
                 f"{'failed' if cost is None else f'{cost:.0f} MB'}")
        return cost

    def planned(batch: int) -> float | None:
        token.check()
        try:
            result = plan(snap, with_batch(shapes, batch), ctx, stages, mode="quick",
                          token=token)
            cost: float | None = result.planned_mb
        except NoStagesError:
            raise
        except UserError:
            cost = None
        probes.append(("planned", batch, cost))
        progress(len(probes), len(probes) + 8, f"planned batch {batch}: "
                 f"{'failed' if cost is None else f'{cost:.0f} MB'}")
        return cost

    def search(cost_of: Callable[[int], float | None]) -> tuple[int, float | None]:
        best, best_cost = 0, None
        batch = 1
        while batch <= max_batch:
            cost = cost_of(batch)
            if cost is None or cost > budget_mb:
                break
            best, best_cost = batch, cost
            batch *= 2
        low, high = best, min(batch, max_batch + 1)
        while high - low > 1:
            mid = (low + high) // 2
            cost = cost_of(mid)
            if cost is not None and cost <= budget_mb:
                low, best, best_cost = mid, mid, cost
            else:
                high = mid
        return best, best_cost

    ub, uc = search(unplanned)
    pb, pc = search(planned)
    return BatchFit(budget_mb, ub, uc, pb, pc, tuple(probes))
