"""A search in progress: what has been costed, the best plan so far, and the
original memonger's own thresholds."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping

from mxexplorer.core.analysis import stats
from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning import liveness
from mxexplorer.core.planning.model import Probe, ProbeCallback
from mxexplorer.core.planning.plancost import CostFunction
from mxexplorer.core.planning.plantags import original_tags, tagging_walk, tags_for_kept
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
    #: probes made by a forked search that ran before this one, or beside it (for the
    #: progress)
    before: int = 0
    #: MXNet's figure for the unplanned graph (:func:`measure_baseline`), once known
    baseline: float | None = None
    #: "best" may run its fast half beside the thorough one in a forked process
    #: (:mod:`mxexplorer.core.runtime.forked`)
    parallel: bool = False
    #: called before each report: passes on what a search run beside this one reported
    drain: Callable[[], None] | None = None

    #: kept sets the solver starts from besides the costed ones
    starts: list[tuple[int, ...]] = field(default_factory=list)
    #: the nodes MXNet recomputes under each costed kept set
    mirrored: dict[tuple[int, ...], tuple[int, ...]] = field(default_factory=dict)
    #: what the cost said of each kept set (MB or None, recomputed nodes, reason),
    #: shared with the searches :meth:`fork` makes: a plan both cost is bound once
    measured: dict[tuple[int, ...], tuple[float | None, tuple[int, ...], str]] = \
        field(default_factory=dict)
    #: the memory model of the graph (one, made by the first search that needs it) and
    #: its figure for each kept set, shared likewise (:class:`plansolve.ModelSearch`)
    models: list[liveness.Model] = field(default_factory=list)
    figures: dict[tuple[int, ...], float] = field(default_factory=dict)
    #: the original's plan at each threshold (:meth:`threshold_plan`), shared likewise
    thresholds: dict[int, tuple[tuple[int, ...], dict[str, int], dict[int, str]]] = \
        field(default_factory=dict)
    #: what the original's tagging walks (:func:`plantags.tagging_walk`), made once
    walk: list[tuple[int, int]] | None = None

    def fork(self) -> Search:
        """A search of the same graph with nothing costed yet, its own probes and best,
        sharing the measurements (the same plan costs the same, so a search run in a
        fork follows exactly the path it follows alone)."""
        return replace(self, probes=[], costs={}, best_kept=None, best_cost=math.inf,
                       best_threshold=None, best_recompute=math.inf,
                       least_cost=math.inf, cut="", predict=None, starts=[], mirrored={})

    def absorb(self, other: Search, after: int = 1) -> None:
        """Take in a forked search's probes (placed after the first ``after`` of this
        one's, where it ran) and its best plan when it is better by :meth:`better`'s
        rule against both searches' least memory."""
        self.probes[after:after] = other.probes
        if self.baseline is None:
            self.baseline = other.baseline
        self.before = 0
        self.cut = self.cut or other.cut
        if other.best_kept is None:
            return
        least = min(self.least_cost, other.least_cost)
        if self.best_kept is None or other.best_cost < self.best_cost - 0.5 or (
                other.best_cost <= least + 0.5 and other.best_recompute < self.best_recompute):
            self.best_kept, self.best_cost = other.best_kept, other.best_cost
            self.best_threshold, self.best_recompute = other.best_threshold, \
                other.best_recompute
        self.least_cost = least

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
        if self.drain is not None:
            self.drain()         # what the search beside reported first: it may cancel
            self.token.check()
        self.probes.append(probe)
        if self.on_probe is not None:
            self.on_probe(probe)
        self.report_progress()

    def report_progress(self) -> None:
        """The probes reported so far, this search's and those of a search beside it,
        and the least memory among this one's."""
        ok = [p.cost_mb for p in self.probes if p.ok and p.cost_mb is not None]
        best = f", best {min(ok):.0f} MB" if ok else ""
        done = len(self.probes) + self.before
        self.progress(min(done, self.total - 1), self.total, f"probe {done}{best}")

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
        if key not in self.measured:
            # threshold plans come with their tags: those tags_for_kept gives their key
            try:
                measured = self.oracle.measure(
                    self.doc, tags if tags is not None else tags_for_kept(self.doc, key))
                self.measured[key] = (measured.mb, measured.recomputed, "")
            except Exception as exc:  # noqa: BLE001 - a failed probe is data, go on
                self.measured[key] = (None, (), _failure(exc))
        cost, recomputed, reason = self.measured[key]
        macs: int | None = None
        if cost is not None:
            self.mirrored[key] = recomputed
            macs = self.macs_of(recomputed)
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
        """The original's tagging at ``threshold_mb`` (made once per threshold and
        shared with forks, from one walk of the graph: 3 ms each on a 1001-layer ResNet,
        50 ms when each walked it; 33 per search)."""
        threshold = int(threshold_mb)
        if threshold not in self.thresholds:
            if self.walk is None:
                self.walk = tagging_walk(self.doc, self.by_entry)
            tags, info = original_tags(self.doc, self.by_entry, self.stages, threshold,
                                       self.walk)
            kept = tuple(sorted(i for i, v in tags.items() if v == "False"))
            self.thresholds[threshold] = (kept, info, tags)
        kept, info, tags = self.thresholds[threshold]
        return kept, dict(info), dict(tags)


def measure_baseline(search: Search) -> float:
    start = time.perf_counter()
    try:
        cost = search.oracle.baseline(search.doc)
    except Exception as exc:  # noqa: BLE001
        raise UserError(f"MXNet cannot bind the graph for training: {_failure(exc)}") from None
    search.baseline = cost
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
