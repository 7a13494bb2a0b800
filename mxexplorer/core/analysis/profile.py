"""Per-layer time: MXNet's own profiler, run in a child process, attributed to nodes.

MXNet's profiler names an operator event by its op type only ("Convolution"), and under
bulk execution it merges whole segments into one event.  So the child sets
``MXNET_EXEC_BULK_EXEC_TRAIN=0`` and ``MXNET_EXEC_BULK_EXEC_INFERENCE=0`` and the
synchronous ``NaiveEngine`` before MXNet loads: every operator then runs alone, in the
executor's topological order, and the k-th event of an op type in a forward pass is the
k-th node of that type in the graph's order.  Backward events (``_backward_Conv...``)
are attributed the same way in reverse order when their count matches; the rest stay
per op type.  The wall time of the same passes with the profiler off is measured too,
so the overhead of profiling is stated, not hidden.  Must not import Qt.
"""
from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph.document import GraphDocument, GraphSnapshot
from mxexplorer.core.runtime import isolated
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import context, fill_for_timing, import_mxnet, mxnet_errors
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

PROFILE_ENV = {"MXNET_EXEC_BULK_EXEC_TRAIN": "0", "MXNET_EXEC_BULK_EXEC_INFERENCE": "0",
               "MXNET_ENGINE_TYPE": "NaiveEngine"}
NOISE = 0.05             # an overhead this small is not told apart from noise
# engine housekeeping, not a graph operator
_NOT_OPS = {"DeleteVariable", "CopyCPU2CPU", "CopyCPU2GPU", "CopyGPU2CPU", "CopyGPU2GPU",
            "WaitForVar", "_zeros", "_ones", "_full"}


@dataclass(frozen=True)
class ProfileResult:
    """Milliseconds per iteration: per node (forward; backward where attributed), per
    op type, and the passes' wall time with and without the profiler."""

    ctx: str
    iterations: int
    forward_ms: dict[int, float]
    backward_ms: dict[int, float]
    by_type_ms: dict[str, float]            # every event name, forward and backward
    unmatched: tuple[str, ...]              # op types whose events could not be placed
    profiled_ms: float                      # forward+backward wall, profiler on
    plain_ms: float                         # the same, profiler off
    forward_plain_ms: float
    settings: tuple[tuple[str, str], ...] = field(default=())

    def node_ms(self, node: int) -> float | None:
        if node not in self.forward_ms and node not in self.backward_ms:
            return None
        return self.forward_ms.get(node, 0.0) + self.backward_ms.get(node, 0.0)

    @property
    def op_total_ms(self) -> float:
        return sum(self.by_type_ms.values())

    @property
    def overhead(self) -> float:
        """How much slower a profiled iteration is than a plain one."""
        return self.profiled_ms / self.plain_ms - 1 if self.plain_ms > 0 else 0.0

    def summary(self) -> str:
        cost = "within the run-to-run noise" if abs(self.overhead) < NOISE else \
            f"{self.overhead:+.0%}"
        return (f"{self.op_total_ms:.1f} ms in operators per forward+backward iteration "
                f"({self.iterations} profiled after warm-up, {self.ctx}); the same "
                f"iteration takes {self.plain_ms:.1f} ms without the profiler and "
                f"{self.profiled_ms:.1f} ms with it (profiling overhead {cost}); "
                "bulk execution off, NaiveEngine")

    def to_dict(self, names: Mapping[int, str]) -> dict[str, Any]:
        nodes = sorted(set(self.forward_ms) | set(self.backward_ms))
        return {"ctx": self.ctx, "iterations": self.iterations,
                "profiled_ms": self.profiled_ms, "plain_ms": self.plain_ms,
                "forward_plain_ms": self.forward_plain_ms, "overhead": self.overhead,
                "op_total_ms": self.op_total_ms, "unmatched": list(self.unmatched),
                "by_type_ms": dict(sorted(self.by_type_ms.items(), key=lambda kv: -kv[1])),
                "nodes": [{"node": n, "name": names.get(n, str(n)),
                           "forward_ms": self.forward_ms.get(n),
                           "backward_ms": self.backward_ms.get(n)} for n in nodes]}


def operator_runs(trace: Mapping[str, Any]) -> list[tuple[str, float, float]]:
    """(op name, start, end) in µs per operator run of a chrome trace, in start order.
    MXNet writes two nested begin/end pairs per run (engine and operator): merged."""
    open_at: dict[tuple[Any, str], list[float]] = {}
    spans: list[tuple[str, float, float]] = []
    for ev in trace.get("traceEvents", []):
        if ev.get("cat") != "operator" or ev.get("ph") not in ("B", "E"):
            continue
        key = (ev.get("pid"), ev.get("name", ""))
        if ev["ph"] == "B":
            open_at.setdefault(key, []).append(float(ev["ts"]))
        elif open_at.get(key):
            spans.append((key[1], open_at[key].pop(0), float(ev["ts"])))
    spans.sort(key=lambda s: (s[1], -s[2]))
    runs: list[tuple[str, float, float]] = []
    for name, start, end in spans:
        if runs and runs[-1][0] == name and start <= runs[-1][2] and end >= runs[-1][1]:
            last = runs[-1]
            runs[-1] = (name, min(last[1], start), max(last[2], end))
        else:
            runs.append((name, start, end))
    return [r for r in runs if r[0] not in _NOT_OPS]


def attribute(runs: list[tuple[str, float, float]], op_nodes: list[tuple[int, str]],
              iterations: int) -> tuple[dict[int, float], dict[int, float], dict[str, float],
                                        tuple[str, ...]]:
    """Per-node forward and backward ms per iteration from ``runs`` of ``iterations``
    forward+backward passes; ``op_nodes``: (node, canonical op) in graph order."""
    by_type: dict[str, list[float]] = {}
    for name, start, end in runs:
        by_type.setdefault(name, []).append((end - start) / 1000.0)
    nodes_of: dict[str, list[int]] = {}
    for node, op in op_nodes:
        nodes_of.setdefault(op, []).append(node)
    forward: dict[int, float] = {}
    backward: dict[int, float] = {}
    unmatched: list[str] = []
    for name, times in by_type.items():
        is_backward = name.startswith("_backward_")
        op = name[len("_backward_"):] if is_backward else name
        nodes = nodes_of.get(op, [])
        if not nodes or len(times) != len(nodes) * iterations:
            unmatched.append(name)
            continue
        order = list(reversed(nodes)) if is_backward else nodes
        target = backward if is_backward else forward
        for k, ms in enumerate(times):
            node = order[k % len(order)]
            target[node] = target.get(node, 0.0) + ms / iterations
    totals = {name: sum(t) / iterations for name, t in by_type.items()}
    return forward, backward, totals, tuple(sorted(unmatched))


def run(graph_json: str, shapes: Mapping[str, Shape], op_nodes: list[tuple[int, str]],
        ctx: str = "cpu", warmup: int = 2, iterations: int = 3,
        progress: Progress = no_progress, token: CancelToken | None = None) -> ProfileResult:
    """Profile ``iterations`` training passes of ``graph_json`` (after ``warmup``).  Run
    it in a child (:func:`mxexplorer.core.runtime.isolated.call`): it sets MXNet's environment
    before importing MXNet, which only a fresh process allows."""
    token = token or CancelToken()
    if iterations < 1 or warmup < 0:
        raise UserError(f"profile at least one iteration (asked {iterations}, warm-up "
                        f"{warmup})")
    for key, value in PROFILE_ENV.items():
        os.environ[key] = value
    mx = import_mxnet()
    dev = context(ctx, False)
    with mxnet_errors("MXNet cannot bind the graph for profiling"):
        sym = mx.sym.load_json(graph_json)
        exe = sym.simple_bind(dev, grad_req="write", **{k: tuple(v) for k, v in shapes.items()})
    heads = fill_for_timing(mx, exe, shapes, dev)
    total = warmup + 3 * iterations

    def step(train: bool, k: int) -> float:
        token.check()
        progress(k, total, "profiling: warm-up" if k < warmup else "profiling")
        start = time.perf_counter()
        exe.forward(is_train=train)
        if train:
            exe.backward(heads)
        mx.nd.waitall()
        return (time.perf_counter() - start) * 1000.0

    with mxnet_errors("profiling failed"):
        for k in range(warmup):
            step(True, k)
        plain = [step(True, warmup + k) for k in range(iterations)]
        forward_plain = [step(False, warmup + iterations + k) for k in range(iterations)]
        with tempfile.TemporaryDirectory(prefix="mxexplorer-profile-") as folder:
            trace_path = os.path.join(folder, "trace.json")
            mx.profiler.set_config(profile_all=True, aggregate_stats=False,
                                   filename=trace_path)
            mx.profiler.set_state("run")
            profiled = [step(True, warmup + 2 * iterations + k) for k in range(iterations)]
            mx.profiler.set_state("stop")
            mx.profiler.dump()
            with open(trace_path, encoding="utf-8") as fh:
                trace = json.load(fh)
    forward, backward, by_type, unmatched = attribute(operator_runs(trace), op_nodes,
                                                      iterations)
    return ProfileResult(ctx, iterations, forward, backward, by_type, unmatched,
                         statistics.median(profiled), statistics.median(plain),
                         statistics.median(forward_plain), tuple(sorted(PROFILE_ENV.items())))


def profile(snap: GraphSnapshot, shapes: Mapping[str, Shape], ctx: str = "cpu",
            iterations: int = 3, progress: Progress = no_progress,
            token: CancelToken | None = None) -> ProfileResult:
    """:func:`run` on the snapshot's graph as it is (its tags too), in a child."""
    nodes = [(i, op) for i, _, op in GraphDocument.from_snapshot(snap).operators()]
    result: ProfileResult = isolated.call(run, snap.json, dict(shapes), nodes, ctx,
                                          iterations=iterations, progress=progress,
                                          token=token, what="profiling")
    return result
