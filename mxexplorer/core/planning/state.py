"""A search in progress: what has been costed, the best plan so far, and the
original memonger's own thresholds."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from mxexplorer.core.analysis import stats
from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning.model import Probe, ProbeCallback
from mxexplorer.core.planning.plancost import CostFunction
from mxexplorer.core.planning.plantags import original_tags, tags_for_kept
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import failure as _failure
from mxexplorer.core.runtime.progress import CancelToken, Progress


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
    #: the safety net (:func:`time.perf_counter` seconds): never what decides a plan
    #: on a machine that keeps up, but said when it fires (:attr:`cut`)
    deadline: float = math.inf
    #: the phase the safety net cut ("" while the search runs to its counts)
    cut: str = ""
    #: the memory model's MB for a kept set (ranks a climb's moves), or None
    predict: Callable[[tuple[int, ...]], float | None] | None = None
    total: int = 1
    #: operator nodes every plan keeps (cuDNN BatchNorm on a GPU: see :func:`never_mirrored`)
    fixed: frozenset[int] = frozenset()

    #: kept sets the solver starts from besides the costed ones
    starts: list[tuple[int, ...]] = field(default_factory=list)
    #: the nodes MXNet recomputes under each costed kept set
    mirrored: dict[tuple[int, ...], tuple[int, ...]] = field(default_factory=dict)

    def out_of_time(self, phase: str) -> bool:
        """Whether the safety net has fired; the first phase it stops is recorded
        (:attr:`cut`), so the result can say the search was cut."""
        if time.perf_counter() <= self.deadline:
            return False
        if not self.cut:
            self.cut = phase
        return True

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


def measure_baseline(search: Search) -> float:
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
