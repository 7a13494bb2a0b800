"""What the planner answers with: probes (costed plans), plans, a search's result and
the largest batch that fits."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning.plantags import recompute_macs, tags_for_kept
from mxexplorer.core.runtime.errors import UserError

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
    #: the phase the safety net cut ("": the search ran to its counts) and the net's
    #: seconds; a cut search's plan depends on the machine's speed (:attr:`complete`)
    cut_in: str = ""
    time_limit: float = 0.0
    #: whose figures the MB are: "mxnet" (MXNet's own report for each plan) or "model"
    #: (the memory model, where MXNet does not run)
    costed_by: str = "mxnet"

    @property
    def costed_by_words(self) -> str:
        """``costed_by`` for a sentence: "MXNet" or "the memory model"."""
        return "MXNet" if self.costed_by == "mxnet" else "the memory model"

    @property
    def complete(self) -> bool:
        """The search ran all its counted probes and model calls: the same graph and
        shapes give this plan on any machine.  False when the safety net cut it."""
        return not self.cut_in

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
