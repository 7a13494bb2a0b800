"""A memory plan and the search behind it (:meth:`Graph.plan`).  No Qt."""
from __future__ import annotations

import os
from typing import Any

from mxexplorer.api.common import write_text
from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.snapshot import GraphSnapshot
from mxexplorer.core.planning import memplan, plansearch, plantags
from mxexplorer.core.planning.model import Plan, PlanResult, Probe
from mxexplorer.core.runtime.mxnet_env import import_mxnet


class PlanReport:
    """A memory plan and the search behind it (:meth:`Graph.plan`).

    ``baseline_mb`` and ``planned_mb`` are the MB for training without and with the
    plan: MXNet's own ``Total N MB allocated`` where MXNet runs, else the memory model's
    (``costed_by`` says which); ``front`` the plans no other beats on both memory and
    recompute; :meth:`symbol` the planned graph to bind and train.
    """

    def __init__(self, snapshot: GraphSnapshot, result: PlanResult, plan: Plan | None,
                 ctx: str = "cpu", within_mb: float | None = None):
        self._snap = snapshot
        #: the search's result (every probe, the stages, the figures)
        self.result = result
        #: the chosen plan (None: the unplanned graph, nothing tagged)
        self.plan = plan
        #: the device the figures were measured on
        self.ctx = ctx
        #: the budget the plan was chosen within (None: the least memory)
        self.within_mb = within_mb

    @property
    def baseline_mb(self) -> float:
        """The MB for training the graph without a plan (see :attr:`costed_by`)."""
        return self.result.baseline_mb

    @property
    def costed_by(self) -> str:
        """Whose figures the MB are: "mxnet" (MXNet's report of a bind of each plan) or
        "model" (the memory model, where MXNet does not run)."""
        return self.result.costed_by

    @property
    def planned_mb(self) -> float:
        """The plan's MB (the unplanned graph's when no plan beats it)."""
        return self.plan.cost_mb if self.plan is not None else self.result.baseline_mb

    @property
    def saving(self) -> float:
        """The share of the unplanned graph's memory the plan saves."""
        base = self.result.baseline_mb
        return 1 - self.planned_mb / base if base else 0.0

    @property
    def recompute_share(self) -> float:
        """The share of the forward pass's MACs recomputed in backward."""
        return self.plan.recompute_share if self.plan is not None else 0.0

    @property
    def summary(self) -> str:
        """The plan in words."""
        if self.plan is None and self.within_mb is not None:
            return (f"The unplanned graph needs {self.result.baseline_mb:,.0f} MB, within the "
                    f"{self.within_mb:,.0f} MB asked: nothing is recomputed.")
        if self.plan is None:
            cut = plansearch.cut_words(self.result)
            return "No plan beats the unplanned graph; nothing is tagged." + \
                (f" {cut}" if cut else "")
        return plansearch.describe(self.result, self.plan)

    @property
    def complete(self) -> bool:
        """False when the search's safety net cut it (the plan then depends on the
        machine's speed, and the summary says so)."""
        return self.result.complete

    @property
    def probes(self) -> tuple[Probe, ...]:
        """Every plan the search costed."""
        return self.result.probes

    @property
    def front(self) -> list[Probe]:
        """The plans no other beats on both memory and recompute, by memory."""
        return plansearch.front(self.result.probes)

    def within(self, mb: float) -> PlanReport:
        """The plan of this search that recomputes least within ``mb`` MB: the
        unplanned graph itself (no plan, nothing recomputed) when it fits.

        Raises
        ------
        UserError : no plan needs ``mb`` MB or less (the least is named).
        """
        if self.result.baseline_mb <= mb:
            return PlanReport(self._snap, self.result, None, self.ctx, within_mb=mb)
        doc = GraphDocument.from_snapshot(self._snap)
        pick = plansearch.pick_within(self.result.probes, mb)
        return PlanReport(self._snap, self.result, self.result.plan_for(doc, pick),
                          self.ctx, within_mb=mb)

    def to_json(self, indent: int | None = 2) -> str:
        """The planned graph: symbol JSON with the plan's ``__force_mirroring__`` tags."""
        if self.plan is None:         # the graph without any force_mirroring tag
            doc = GraphDocument.from_snapshot(self._snap)
            return symbol_io.dumps(plantags.tagged_dict(doc, {}), indent=indent)
        return memplan.planned_json(self._snap, self.result, indent=indent, plan=self.plan)

    def symbol(self) -> Any:
        """The planned graph as an ``mx.sym.Symbol``, ready to bind and train."""
        return import_mxnet().sym.load_json(self.to_json(indent=None))

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the planned graph atomically; an existing file is kept unless
        ``overwrite``."""
        write_text(path, self.to_json(), overwrite)

    def to_dict(self) -> dict[str, Any]:
        """What ``mxexplorer plan --json`` prints (less the file and output fields)."""
        best, result = self.plan, self.result
        return {
            "device": self.ctx,
            "costed_by": result.costed_by,
            "shapes": {k: list(v) for k, v in result.shapes.items()},
            "baseline_mb": result.baseline_mb, "planned_mb": self.planned_mb,
            "saving": self.saving,
            "threshold_mb": best.threshold_mb if best else None,
            "stages": len(result.stages), "stage_source": result.stage_source,
            "kept": len(best.kept) if best else 0,
            "recompute_macs": best.recompute_macs if best else 0,
            "forward_macs": best.forward_macs if best else 0,
            "recompute_share": best.recompute_share if best else 0.0,
            "seconds": result.seconds,
            # False when the safety net cut the search: the plan then depends on the machine
            "complete": result.complete,
            "summary": self.summary if best or self.within_mb is not None else
            plansearch.cut_words(result),
            "state_bytes": result.state_bytes,
            "front": [{"cost": p.cost_mb, "recompute_share": p.recompute_share}
                      for p in self.front],
            "probes": [p.to_dict() for p in result.probes],
        }

    def __repr__(self) -> str:
        change = -self.saving + 0.0         # + 0.0: no "-0%"
        return (f"<mxexplorer.PlanReport: {self.baseline_mb:,.0f} MB unplanned, "
                f"{self.planned_mb:,.0f} MB planned ({change:+.0%}), recomputes "
                f"{self.recompute_share:.0%} of a forward pass; costed by "
                f"{self.result.costed_by_words}>")
