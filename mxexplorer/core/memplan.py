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

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from mxexplorer.core import opinfo, stats, symbol_io
from mxexplorer.core.document import GraphDocument, GraphSnapshot
from mxexplorer.core.errors import UserError
from mxexplorer.core.kinds import NodeKind
from mxexplorer.core.mxnet_env import failure as _failure

# the tagging and the cost functions live in their own modules; their names stay
# reachable here for the callers that know them as memplan's
from mxexplorer.core.plancost import (  # noqa: F401
    CostFactory,
    CostFunction,
    CostOracle,
    Measured,
    ModelCost,
    MXNetCost,
    model_cost,
    mxnet_cost,
    parse_total_mb,
)
from mxexplorer.core.plantags import (  # noqa: F401
    applied_tags,
    original_tags,
    recompute_macs,
    retag,
    tagged_dict,
    tags_for_kept,
)
from mxexplorer.core.progress import CancelToken, Progress, no_progress
from mxexplorer.core.shapes import Shape, check_allocatable, infer_document
from mxexplorer.core.tags import FORCE_MIRRORING, MIRROR_STAGE

MB = 1 << 20
ProbeCallback = Callable[["Probe"], None]


class NoStagesError(UserError):
    """Planning from the file's own stages, and no node carries ``mirror_stage``."""


@dataclass(frozen=True)
class Probe:
    """One costed plan.  ``threshold_mb`` is None for the baseline and local moves."""

    kind: str                 # "baseline", "threshold", "local", "original"
    threshold_mb: float | None
    cost_mb: float | None     # None when the probe failed
    ok: bool
    reason: str = ""
    kept: tuple[int, ...] = ()   # stage nodes kept (force_mirroring False)
    seconds: float = 0.0
    #: forward MACs of the nodes MXNet's gradient pass recomputes, read from its
    #: ``_mirror`` copies in the bind's report rather than assumed from the tags
    recompute_macs: int | None = None
    recompute_share: float | None = None   # of the forward pass's MACs

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "threshold": self.threshold_mb, "cost": self.cost_mb,
                "ok": self.ok, "reason": self.reason, "kept": len(self.kept),
                "recompute_macs": self.recompute_macs, "recompute_share": self.recompute_share}


@dataclass(frozen=True)
class Plan:
    """A tagging: ``tags[node]`` is the ``__force_mirroring__`` value to set."""

    tags: dict[int, str]
    cost_mb: float
    threshold_mb: float | None
    kept: tuple[int, ...]
    recompute_macs: int
    forward_macs: int

    @property
    def recompute_share(self) -> float:
        return self.recompute_macs / self.forward_macs if self.forward_macs else 0.0


@dataclass(frozen=True)
class PlanResult:
    baseline_mb: float
    best: Plan | None            # None: no plan beats the unplanned graph
    probes: tuple[Probe, ...]
    stages: tuple[int, ...]
    stage_source: str            # "file" or "auto"
    revision: int
    shapes: dict[str, Shape]
    seconds: float = 0.0
    #: forward MACs of every operator node (what a recomputed node costs again)
    node_macs: dict[int, int] = field(default_factory=dict)
    forward_macs: int = 0
    #: bytes of the trained parameters (float32): their gradients as much again
    state_bytes: int = 0

    @property
    def planned_mb(self) -> float:
        return self.best.cost_mb if self.best is not None else self.baseline_mb

    def plan_for(self, doc: GraphDocument, probe: Probe) -> Plan:
        """The plan a probe costed (any point of the search, not only the best).

        ``doc`` is the planned document (or one with the same graph: tags aside)."""
        if not probe.ok or probe.cost_mb is None or probe.kind == "baseline":
            raise UserError("that point is not a plan (a failed probe, or no plan at all)")
        tags = tags_for_kept(doc, probe.kept)
        macs = probe.recompute_macs if probe.recompute_macs is not None else \
            recompute_macs(doc, self.node_macs, tags)
        return Plan(tags, probe.cost_mb, probe.threshold_mb, tuple(probe.kept), macs,
                    self.forward_macs)

    def stage_tags(self) -> dict[int, str] | None:
        """The ``mirror_stage`` tags a plan adds (automatic stages), else None."""
        return {i: "True" for i in self.stages} if self.stage_source == "auto" else None


# ------------------------------------------------------------------ stages
def file_stages(doc: GraphDocument) -> dict[int, str]:
    """Nodes the file tags ``mirror_stage``, with the tag's value (a group name or True)."""
    out = {}
    for i in doc.order():
        attrs = doc.nodes[i].attrs
        value = attrs.get(MIRROR_STAGE, attrs.get("mirror_stage"))
        if value is not None:
            out[i] = value
    return out


def cut_vertices(doc: GraphDocument) -> list[int]:
    """Operator nodes every path from the data inputs to the outputs passes through.

    Parameter and auxiliary variables are not inputs here, nor are inputs read only by
    a loss (labels).  In topological order, a node is on every path exactly when no
    edge between a node reachable from the inputs and a node that reaches an output
    jumps over it.
    """
    order = doc.order()
    pos = {n: k for k, n in enumerate(order)}
    kinds = doc.kinds()
    users = doc.consumers()
    sources = [i for i in doc.data_inputs()
               if any(opinfo.op_family(doc.nodes[c].op) != "output" for c, _ in users[i])]
    if not sources:
        sources = list(doc.data_inputs())
    reach = [False] * len(doc.nodes)
    for s in sources:
        reach[s] = True
    for i in order:
        if not reach[i] and any(reach[s] for s, _, _ in doc.nodes[i].inputs
                                if kinds[s] == NodeKind.OP or reach[s]):
            reach[i] = True
    to_out = [False] * len(doc.nodes)
    for h in doc.heads:
        to_out[h[0]] = True
    for i in reversed(order):
        if to_out[i]:
            for s, _, _ in doc.nodes[i].inputs:
                to_out[s] = True
    # sweep: the farthest position any relevant edge starting before p reaches
    span_end = [0] * (len(order) + 1)
    for i in order:
        if not (reach[i] and to_out[i]):
            continue
        for s, _, _ in doc.nodes[i].inputs:
            if reach[s] and to_out[s]:
                a, b = pos[s], pos[i]
                span_end[a] = max(span_end[a], b)
    out = []
    furthest = -1
    for k, i in enumerate(order):
        node = doc.nodes[i]
        if (not node.is_variable and reach[i] and to_out[i] and furthest <= k
                and opinfo.canonical_op(node.op) != "Dropout"):
            out.append(i)
        furthest = max(furthest, span_end[k])
    return out


# ------------------------------------------------------------------ tagging
def retagged_json(snap: GraphSnapshot, plan: Plan | None,
                  result: PlanResult | None = None) -> str:
    """A snapshot's graph with ``plan``'s tags (None: with no ``force_mirroring`` tag
    at all), from its JSON alone: the document it came from was checked already."""
    data = json.loads(snap.json)
    if plan is None or result is None:
        return symbol_io.dumps(retag(data, {}))
    return symbol_io.dumps(retag(data, plan.tags, result.stage_tags()))


def is_applied(doc: GraphDocument, plan: Plan) -> bool:
    """The document carries exactly this plan's tags on its operators."""
    want = {i: v for i, v in plan.tags.items() if not doc.nodes[i].is_variable}
    return applied_tags(doc) == want


# ------------------------------------------------------------------ search
@dataclass
class Search:
    doc: GraphDocument
    by_entry: Mapping[tuple[int, int], Shape]
    stages: dict[int, str]
    stage_source: str
    oracle: CostFunction
    gstats: stats.GraphStats
    progress: Progress
    token: CancelToken
    on_probe: ProbeCallback | None
    probes: list[Probe] = field(default_factory=list)
    costs: dict[tuple[int, ...], float | None] = field(default_factory=dict)
    best_kept: tuple[int, ...] | None = None
    best_cost: float = math.inf
    best_threshold: float | None = None
    best_recompute: float = math.inf
    least_cost: float = math.inf
    deadline: float = math.inf
    #: the memory model's MB for a kept set (ranks a climb's moves), or None
    predict: Callable[[tuple[int, ...]], float | None] | None = None
    total: int = 1
    #: operator nodes every plan keeps (cuDNN BatchNorm on a GPU: see :func:`never_mirrored`)
    fixed: frozenset[int] = frozenset()

    #: kept sets the solver starts from besides the costed ones
    starts: list[tuple[int, ...]] = field(default_factory=list)
    #: the nodes MXNet recomputes under each costed kept set
    mirrored: dict[tuple[int, ...], tuple[int, ...]] = field(default_factory=dict)

    def macs_of(self, nodes: Iterable[int]) -> int:
        per_node = self.gstats.per_node
        return sum(per_node[i].macs for i in nodes if i in per_node)

    def emit(self, probe: Probe) -> None:
        self.probes.append(probe)
        if self.on_probe is not None:
            self.on_probe(probe)
        ok = [p.cost_mb for p in self.probes if p.ok and p.cost_mb is not None]
        best = f", best {min(ok):.0f} MB" if ok else ""
        self.progress(min(len(self.probes), self.total - 1), self.total,
                      f"probe {len(self.probes)}{best}")

    def cost_of(self, kept: tuple[int, ...], kind: str, threshold: float | None,
                tags: Mapping[int, str] | None = None) -> float | None:
        """Cost of a plan (cached by its kept set); records a probe for new ones."""
        self.token.check()
        key = tuple(sorted(set(kept) | self.fixed))
        if key in self.costs:
            known = self.costs[key]
            if kind == "original":   # the original's own probes are always shown
                self.emit(Probe(kind, threshold, known, known is not None, "", key))
            return known
        start = time.perf_counter()
        if tags is not None and self.fixed:
            tags = {**tags, **{i: "False" for i in self.fixed}}
        macs: int | None = None
        try:
            measured = self.oracle.measure(
                self.doc, tags if tags is not None else tags_for_kept(self.doc, key))
            cost: float | None = measured.mb
            self.mirrored[key] = measured.recomputed
            macs, reason = self.macs_of(measured.recomputed), ""
        except Exception as exc:  # noqa: BLE001 - a failed probe is data, the search goes on
            cost, reason = None, _failure(exc)
        self.costs[key] = cost
        share = macs / self.gstats.macs if macs is not None and self.gstats.macs else None
        self.emit(Probe(kind, threshold, cost, cost is not None, reason, key,
                        time.perf_counter() - start, macs, share))
        if cost is not None and self.better(cost, macs or 0):
            self.best_cost, self.best_kept, self.best_threshold = cost, key, threshold
            self.best_recompute = macs or 0
        return cost

    def better(self, cost: float, macs: int) -> bool:
        """The least memory; within half a MB of the least seen, the least recompute."""
        self.least_cost = min(self.least_cost, cost)
        if cost < self.best_cost - 0.5:
            return True
        return cost <= self.least_cost + 0.5 and macs < self.best_recompute

    def threshold_plan(self, threshold_mb: float, kind: str = "threshold"
                       ) -> tuple[tuple[int, ...], dict[str, int], dict[int, str]]:
        tags, info = original_tags(self.doc, self.by_entry, self.stages, int(threshold_mb))
        kept = tuple(sorted(i for i, v in tags.items() if v == "False"))
        return kept, info, tags


def _baseline(search: Search) -> float:
    start = time.perf_counter()
    try:
        cost = search.oracle.baseline(search.doc)
    except Exception as exc:  # noqa: BLE001
        raise UserError(f"MXNet cannot bind the graph for training: {_failure(exc)}") from None
    search.emit(Probe("baseline", None, cost, True, "", (), time.perf_counter() - start))
    return cost


def original_thresholds(search: Search, ntrial: int = 6, probe: bool = True) -> list[int]:
    """The thresholds the original ``search_plan`` probes, run from the untouched graph
    (they follow from the plans' sizes alone, not their costs); each costed by MXNet
    when ``probe``, else only its kept set noted for the search (:attr:`Search.starts`)."""
    thresholds: list[int] = []
    threshold = 0
    min_threshold: int | None = None

    def take(t: int) -> dict[str, int]:
        kept, info, tags = search.threshold_plan(t)
        if probe:
            search.cost_of(kept, "original", t, tags)
        else:
            search.starts.append(kept)
        thresholds.append(t)
        return info

    for _ in range(3):
        info = take(threshold)
        save, local = info["save_size"] >> 20, info["max_size"] >> 20
        guess = int(math.sqrt(save * local / 2))
        if min_threshold is None or local < min_threshold:
            min_threshold = local
        threshold = guess
    assert min_threshold is not None
    max_threshold = threshold * math.sqrt(2)
    step = int((max_threshold - min_threshold) / ntrial)
    threshold = min_threshold + step
    if step > 0:
        for _ in range(ntrial):
            take(threshold)
            threshold += step
    return thresholds


def plan(snap: GraphSnapshot, shapes: Mapping[str, Shape], ctx: str = "cpu",
         stages: str | None = None, threshold_mb: int | None = None, mode: str = "best",
         time_limit: float = 300.0, dtype: str = "float32",
         progress: Progress = no_progress, token: CancelToken | None = None,
         on_probe: ProbeCallback | None = None, target: str | None = None,
         cost: CostFactory | None = None) -> PlanResult:
    """Plan a document snapshot for training at ``shapes`` on ``ctx``.

    Parameters
    ----------
    stages : "file" (the file's ``mirror_stage`` tags), "auto" (cut vertices), or None:
        the file's when it has any, else automatic (as memonger's users expect).
    threshold_mb : plan at this threshold exactly as the original algorithm does.
    mode : "best" (the solver, then climb, trim and front: :mod:`plansearch`; probes
        and model calls by graph size, the same plan on any machine), "fast" (the same
        with the small budgets: a few seconds), "thorough" (the larger budgets at any
        size: "best" takes the small ones from 500 operators), "quick" (the original's
        probes and a 10-point sweep) or "original" (the original's 9 probes).
    time_limit : a safety net in seconds, not reached on the benchmark networks.
    target : the device the plan is for, when not ``ctx`` (plan on the CPU for a GPU:
        the GPU's rules apply, see :func:`plansearch.never_mirrored`).
    cost : what a plan costs (:data:`CostFactory`); by default MXNet's own report
        (:func:`mxnet_cost`), :func:`model_cost` for the memory model without MXNet.

    Raises
    ------
    NoStagesError : ``stages="file"`` and no node is tagged.
    UserError : shapes that do not fit the graph, a graph MXNet cannot bind.
    """
    started = time.perf_counter()
    token = token or CancelToken()
    if stages not in ("file", "auto", None):
        raise UserError(f"unknown stage source {stages!r}: use file or auto")
    if mode not in ("best", "fast", "thorough", "original", "quick"):
        raise UserError(f"unknown search mode {mode!r}: use best, fast, thorough or original")
    doc = GraphDocument.from_snapshot(snap)
    progress(0, 1, "inferring shapes")
    result = infer_document(doc, snap.json, shapes, {k: dtype for k in shapes},
                            snap.param_shapes, snap.revision)
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
    oracle = (cost or mxnet_cost)(doc, result.by_entry, shapes, ctx, dtype)
    search = Search(doc, result.by_entry, stage_map, stages, oracle, gstats, progress,
                    token, on_probe)
    from mxexplorer.core import plansearch

    search.fixed = plansearch.never_mirrored(doc, target or ctx)
    search.deadline = started + time_limit
    n_ops = sum(not n.is_variable for n in doc.nodes)
    budget, model_calls = plansearch.budgets(n_ops, mode)
    search.total = 2 if threshold_mb is not None else (11 if mode == "original" else
                                                       budget + 10)
    baseline = _baseline(search)
    if threshold_mb is not None:
        kept, _, tags = search.threshold_plan(threshold_mb)
        search.cost_of(kept, "threshold", threshold_mb, tags)
    else:
        original_thresholds(search, probe=not plansearch.fast_budgets(n_ops, mode))
        if mode == "quick":
            plansearch.sweep(search, 10)
        if mode in ("best", "fast", "thorough"):
            plansearch.search_best(search, budget, model_calls)
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
                      node_macs, gstats.macs, gstats.param_bytes)


def planned_dict(doc: GraphDocument, plan: Plan | None, result: PlanResult) -> dict[str, Any]:
    """The document's graph with a plan's tags (and automatic stages), ready to train;
    ``plan=None``: the graph without any ``force_mirroring`` tag."""
    if plan is None:
        return tagged_dict(doc, {})
    return tagged_dict(doc, plan.tags, result.stage_tags())


def planned_json(snap: GraphSnapshot, result: PlanResult, indent: int | None = 2,
                 plan: Plan | None = None) -> str:
    """The snapshot's graph with ``plan``'s tags (by default the best), ready to train."""
    doc = GraphDocument.from_snapshot(snap)
    return symbol_io.dumps(planned_dict(doc, plan or result.best, result), indent=indent)


def plan_edits(doc: GraphDocument, plan: Plan, result: PlanResult
               ) -> list[tuple[int, dict[str, str | None]]]:
    """Per node, the attribute changes that put ``plan`` into a document."""
    changes = []
    stages = result.stage_tags() or {}
    for i, node in enumerate(doc.nodes):
        if node.is_variable:
            continue
        want: dict[str, str | None] = {}
        value = plan.tags.get(i)
        if node.attrs.get(FORCE_MIRRORING) != value:
            want[FORCE_MIRRORING] = value
        if i in stages and node.attrs.get(MIRROR_STAGE) != "True":
            want[MIRROR_STAGE] = "True"
        if want:
            changes.append((i, want))
    return changes


@dataclass(frozen=True)
class BatchFit:
    budget_mb: float
    unplanned_batch: int
    unplanned_mb: float | None
    planned_batch: int
    planned_mb: float | None
    probes: tuple[tuple[str, int, float | None], ...]   # (which, batch, cost or None)

    def to_dict(self) -> dict[str, Any]:
        return {"budget_mb": self.budget_mb, "unplanned_batch": self.unplanned_batch,
                "unplanned_mb": self.unplanned_mb, "planned_batch": self.planned_batch,
                "planned_mb": self.planned_mb,
                "probes": [{"graph": w, "batch": b, "cost": c} for w, b, c in self.probes]}


def with_batch(shapes: Mapping[str, Shape], batch: int) -> dict[str, Shape]:
    return {k: (batch,) + tuple(v[1:]) for k, v in shapes.items()}


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
            oracle = CostOracle(with_batch(shapes, batch), ctx)
            cost: float | None = oracle(tagged_dict(GraphDocument.from_snapshot(snap), {}))
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
