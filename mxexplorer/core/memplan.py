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
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol

from mxexplorer.core import opinfo, stats, symbol_io
from mxexplorer.core.document import GraphDocument, GraphSnapshot, NodeKind
from mxexplorer.core.edits import FORCE_MIRRORING, MIRROR_STAGE
from mxexplorer.core.errors import UserError
from mxexplorer.core.mxnet_env import context, import_mxnet
from mxexplorer.core.mxnet_env import failure as _failure
from mxexplorer.core.progress import CancelToken, Progress, no_progress
from mxexplorer.core.shapes import Shape, check_allocatable, infer_document
from mxexplorer.core.stats import float32_bytes

MB = 1 << 20
_TOTAL_RE = re.compile(r"Total\s+(\d+(?:\.\d+)?)\s+MB allocated")
_MIRROR_RE = re.compile(r"^Op:\w+, Name=(.+)_mirror$", re.M)
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
def _is_param_name(name: str) -> bool:
    """The original's test for "parameter" outputs, by name."""
    if name == "data":
        return False
    return name.endswith(("weight", "bias", "beta", "gamma"))


def original_tags(doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape],
                  stages: Mapping[int, str], threshold_mb: int
                  ) -> tuple[dict[int, str], dict[str, int]]:
    """The original ``make_mirror_plan``'s tagging for an integer threshold in MB.

    Walks ``get_internals()`` outputs in order, sizes as float32; returns the
    ``force_mirroring`` value of every tagged node and ``{"max_size", "save_size"}``."""
    threshold = int(threshold_mb) << 20
    tags: dict[int, str] = {}
    local = save = max_size = 0
    last_stage = ""
    decision = ""
    for entry in doc.internals():
        if _is_param_name(entry.name):
            continue
        size = float32_bytes(by_entry.get((entry.node, entry.index)))
        local += size
        tags[entry.node] = "True"
        stage = stages.get(entry.node)
        if stage is None:
            continue
        if stage == "True" or stage != last_stage:
            if local > threshold:
                save += size
                max_size = max(max_size, local)
                local = 0
                decision = "False"
                tags[entry.node] = "False"
            else:
                decision = "True"
            last_stage = stage
        elif decision == "False":
            save += size
            tags[entry.node] = "False"
    return tags, {"max_size": max_size, "save_size": save}


def tags_for_kept(doc: GraphDocument, kept: Iterable[int]) -> dict[int, str]:
    """Every non-parameter output recomputed, except the kept stage nodes."""
    tags = {e.node: "True" for e in doc.internals() if not _is_param_name(e.name)}
    for k in kept:
        tags[k] = "False"
    return tags


def retag(data: dict[str, Any], tags: Mapping[int, str],
          stages: Mapping[int, str] | None = None) -> dict[str, Any]:
    """Symbol JSON data (as a document writes it) with exactly these
    ``__force_mirroring__`` tags on its operators (any others removed) and, when
    given, these ``__mirror_stage__`` tags added; changed in place and returned."""
    for i, node in enumerate(data["nodes"]):
        attrs = node.get("attrs")
        if attrs is not None:
            attrs.pop(FORCE_MIRRORING, None)
            attrs.pop("force_mirroring", None)
        if node.get("op") == "null":
            continue
        value = tags.get(i)
        if value is not None:
            node.setdefault("attrs", {})[FORCE_MIRRORING] = value
        if stages and i in stages:
            node.setdefault("attrs", {})[MIRROR_STAGE] = stages[i]
    return data


def tagged_dict(doc: GraphDocument, tags: Mapping[int, str],
                stages: Mapping[int, str] | None = None) -> dict[str, Any]:
    """The document as JSON data with exactly these ``__force_mirroring__`` tags (any
    others removed) and, when given, these ``__mirror_stage__`` tags added."""
    return retag(doc.to_dict(), tags, stages)


def retagged_json(snap: GraphSnapshot, plan: Plan | None,
                  result: PlanResult | None = None) -> str:
    """A snapshot's graph with ``plan``'s tags (None: with no ``force_mirroring`` tag
    at all), from its JSON alone: the document it came from was checked already."""
    data = json.loads(snap.json)
    if plan is None or result is None:
        return symbol_io.dumps(retag(data, {}))
    return symbol_io.dumps(retag(data, plan.tags, result.stage_tags()))


def recompute_macs(doc: GraphDocument, node_macs: Mapping[int, int],
                   tags: Mapping[int, str]) -> int:
    """Forward MACs done again in backward: every op tagged True (Dropout never is)."""
    total = 0
    for i, value in tags.items():
        node = doc.nodes[i]
        if value == "True" and not node.is_variable \
                and opinfo.canonical_op(node.op) != "Dropout":
            total += node_macs.get(i, 0)
    return total


def untagged_key(doc: GraphDocument) -> int:
    """A fingerprint of the graph with every mirroring tag left out: a plan made for
    one graph stays valid for another with the same key (only tags differ)."""
    def build() -> int:
        skip = {FORCE_MIRRORING, "force_mirroring", MIRROR_STAGE, "mirror_stage"}
        parts = []
        for node in doc.nodes:
            attrs = tuple(sorted((k, v) for k, v in node.attrs.items() if k not in skip))
            parts.append((node.op, node.name, tuple(node.inputs), attrs))
        return hash((tuple(parts), tuple(doc.heads)))
    key: int = doc.cached("untagged_key", build)
    return key


def applied_tags(doc: GraphDocument) -> dict[int, str]:
    """The ``__force_mirroring__`` tags operator nodes carry now."""
    return {i: n.attrs[FORCE_MIRRORING] for i, n in enumerate(doc.nodes)
            if not n.is_variable and FORCE_MIRRORING in n.attrs}


def is_applied(doc: GraphDocument, plan: Plan) -> bool:
    """The document carries exactly this plan's tags on its operators."""
    want = {i: v for i, v in plan.tags.items() if not doc.nodes[i].is_variable}
    return applied_tags(doc) == want


# ------------------------------------------------------------------ cost
class CostOracle:
    """``Total N MB allocated`` for training a graph, from MXNet's own planner.

    Tags never change the arguments, so their arrays are made once (``nd.empty``:
    never written, so they cost address space, not memory) and every probe binds to
    them; ``simple_bind`` would zero-fill fresh arrays each time and MXNet's pool
    would keep them (tens of GB over a search).  The report is the same number.
    """

    def __init__(self, shapes: Mapping[str, Shape], ctx_spec: str = "cpu",
                 type_dict: Mapping[str, str] | None = None):
        self.mx = import_mxnet()
        self.ctx = context(ctx_spec, mirrored=True)   # probes are mirrored graphs
        self.shapes = dict(shapes)
        self.type_dict = dict(type_dict) if type_dict else {}
        self.calls = 0
        self.mirrored: frozenset[str] = frozenset()   # the last graph's _mirror nodes
        self._arrays: tuple[list[Any], list[Any], list[Any]] | None = None
        #: the loaded graph, a handle per operator node, the tag each carries now
        self._nodes: tuple[Any, dict[int, Any], dict[int, str]] | None = None

    def _make_arrays(self, sym: Any) -> tuple[list[Any], list[Any], list[Any]]:
        mx = self.mx
        arg_s, _, aux_s = sym.infer_shape(**self.shapes)
        arg_t, _, aux_t = sym.infer_type(**self.type_dict) if self.type_dict else \
            (None, None, None)
        if arg_s is None or any(s is None for s in arg_s):
            raise UserError("the input shapes do not determine every argument's shape")
        arg_t = arg_t or ["float32"] * len(arg_s)
        aux_t = aux_t or ["float32"] * len(aux_s)
        args = [mx.nd.empty(s, self.ctx, dtype=t) for s, t in zip(arg_s, arg_t)]
        grads = [mx.nd.empty(s, self.ctx, dtype=t) for s, t in zip(arg_s, arg_t)]
        aux = [mx.nd.empty(s, self.ctx, dtype=t) for s, t in zip(aux_s, aux_t)]
        return args, grads, aux

    def cost_of_tags(self, doc: GraphDocument, tags: Mapping[int, str]) -> float:
        """The cost of ``doc`` with exactly these ``__force_mirroring__`` tags on its
        operators.  The graph is loaded once and each probe sets only the tags that
        changed, on MXNet's own nodes (``mirror_stage`` tags are memonger's, MXNet does
        not read them): a third less time per probe than writing and loading the JSON,
        the same report.  Falls back to the JSON when node names are not unique."""
        if self._nodes is None:
            sym = self.mx.sym.load_json(symbol_io.dumps(tagged_dict(doc, {})))
            internals = sym.get_internals()
            by_name: dict[str, Any] = {}
            for k in range(len(internals.list_outputs())):
                handle = internals[k]
                by_name.setdefault(handle.name, handle)
            ops = [(i, n.name) for i, n in enumerate(doc.nodes) if not n.is_variable]
            unique = len({name for _, name in ops}) == len(ops)
            self._nodes = (sym, {i: by_name[name] for i, name in ops if name in by_name}
                           if unique else {}, {})
        sym, handles, current = self._nodes
        if not handles:
            return self(tagged_dict(doc, tags))
        for i, handle in handles.items():
            value = tags.get(i, "False")
            if current.get(i) != value:
                handle._set_attr(**{FORCE_MIRRORING: value})
                current[i] = value
        return self._bind_cost(sym)

    def __call__(self, graph: dict[str, Any] | str) -> float:
        mx = self.mx
        text = graph if isinstance(graph, str) else symbol_io.dumps(graph)
        return self._bind_cost(mx.sym.load_json(text))

    def _bind_cost(self, sym: Any) -> float:
        self.calls += 1
        if self._arrays is None:
            self._arrays = self._make_arrays(sym)
        args, grads, aux = self._arrays
        exe = sym.bind(self.ctx, args=args, args_grad=grads, grad_req="write",
                       aux_states=aux)
        try:
            report = exe.debug_str()
            self.mirrored = frozenset(_MIRROR_RE.findall(report))
            return parse_total_mb(report)
        finally:
            del exe


def parse_total_mb(debug_str: str) -> float:
    match = _TOTAL_RE.search(debug_str)
    if match is None:
        raise UserError("MXNet's executor report has no 'Total N MB allocated' line")
    return float(match.group(1))


@dataclass(frozen=True)
class Measured:
    """What a plan costs: MB for training, and the operators recomputed in backward."""

    mb: float
    recomputed: tuple[int, ...]


class CostFunction(Protocol):
    """What the search asks of a cost: the unplanned graph's MB, and a tagging's."""

    #: what the figures are, for the words of a plan ("MXNet", "the memory model")
    source: str

    def baseline(self, doc: GraphDocument) -> float: ...

    def measure(self, doc: GraphDocument, tags: Mapping[int, str]) -> Measured: ...


#: builds the cost of one search: (document, per-entry shapes, input shapes, device)
CostFactory = Callable[[GraphDocument, Mapping[tuple[int, int], Shape],
                        Mapping[str, Shape], str, str], CostFunction]


class MXNetCost:
    """MXNet's own ``Total N MB allocated`` (:class:`CostOracle`), and the nodes its
    gradient pass really recomputes, read from the same bind's ``_mirror`` copies."""

    source = "MXNet"

    def __init__(self, oracle: CostOracle):
        self.oracle = oracle
        self._op_index: dict[str, int] = {}

    def baseline(self, doc: GraphDocument) -> float:
        return self.oracle(tagged_dict(doc, {}))

    def measure(self, doc: GraphDocument, tags: Mapping[int, str]) -> Measured:
        mb = self.oracle.cost_of_tags(doc, tags)
        if not self._op_index:
            self._op_index.update((n.name, i) for i, n in enumerate(doc.nodes)
                                  if not n.is_variable)
        nodes = (self._op_index.get(name) for name in self.oracle.mirrored)
        return Measured(mb, tuple(sorted(i for i in nodes if i is not None)))


def mxnet_cost(doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape],
               shapes: Mapping[str, Shape], ctx: str, dtype: str) -> CostFunction:
    """The default :data:`CostFactory`: MXNet binds every plan (10-500 ms each)."""
    return MXNetCost(CostOracle(shapes, ctx, {k: dtype for k in shapes}))


class ModelCost:
    """The memory model's figures (:mod:`liveness`, a few ms a plan, no MXNet): its
    median error is 0.8 % against MXNet's over the benchmark searches.  For tests of the
    search itself, and for estimates where MXNet cannot run."""

    source = "the memory model"

    def __init__(self, doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape]):
        from mxexplorer.core import liveness

        self.model = liveness.Model(doc, by_entry)

    def baseline(self, doc: GraphDocument) -> float:
        return self.model.total_mb({})

    def measure(self, doc: GraphDocument, tags: Mapping[int, str]) -> Measured:
        return Measured(self.model.total_mb(tags),
                        tuple(sorted(self.model.recomputed_by(tags))))


def model_cost(doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape],
               shapes: Mapping[str, Shape], ctx: str, dtype: str) -> CostFunction:
    """A :data:`CostFactory` of the memory model (:class:`ModelCost`)."""
    return ModelCost(doc, by_entry)


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
