"""Time training and inference of a graph on a device: the speed price of a plan.

Training iterations are forward + backward, synchronised with ``mx.nd.waitall()``;
warm-up runs first, then repeats; the median and the spread (min, max) are reported.
Inputs and weights are random; inputs (data, labels) get no gradient, weights do (an
input that feeds an ``Embedding`` cannot have one).  On a GPU, the memory actually used is read from
``mx.context.gpu_memory_info`` before binding and after the runs, and the CUDA
context's share from NVML before MXNet's first GPU call; what MXNet's plan leaves out
(convolution workspace, cuDNN and cuBLAS handles, the pool's rounding) is named
beside it.  Each graph is timed in a fresh child process (:func:`compare` with
``isolate``): MXNet's memory pool keeps what the first graph freed, so a second graph
in the same process would be measured short.  No Qt here.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Mapping

from mxexplorer.core.analysis.shapes import Shape, check_allocatable
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.planning.plancost import parse_total_mb
from mxexplorer.core.runtime import gpu, isolated
from mxexplorer.core.runtime.devices import parse_device
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import (
    argument_types,
    context,
    fill_for_timing,
    import_mxnet,
    mxnet_errors,
)
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress


@dataclass(frozen=True)
class Timing:
    median_ms: float
    min_ms: float
    max_ms: float
    runs: int

    def to_dict(self) -> dict[str, float]:
        return {"median_ms": self.median_ms, "min_ms": self.min_ms, "max_ms": self.max_ms,
                "runs": self.runs}


@dataclass(frozen=True)
class BenchResult:
    label: str
    device: str
    batch: int
    train: Timing
    infer: Timing
    planned_mb: float | None         # MXNet's "Total N MB allocated" for training
    gpu_used_mb: float | None        # measured on a GPU, None on the CPU
    context_mb: float | None = None  # the CUDA context, measured before MXNet's first call
    workspace_mb: float | None = None   # the largest convolution workspace limit
    settings: tuple[tuple[str, str], ...] = ()   # MXNet settings made for the run

    @property
    def train_samples_per_s(self) -> float:
        return self.batch * 1000.0 / self.train.median_ms if self.train.median_ms else 0.0

    @property
    def infer_samples_per_s(self) -> float:
        return self.batch * 1000.0 / self.infer.median_ms if self.infer.median_ms else 0.0

    @property
    def memory_mb(self) -> float | None:
        """Memory used on a GPU, else MXNet's planned figure."""
        return self.gpu_used_mb if self.gpu_used_mb is not None else self.planned_mb

    def summary(self) -> str:
        """One line for people: the CLI and the panel both print this."""
        if self.gpu_used_mb is not None:
            mem = f"{self.gpu_used_mb:.0f} MB measured"
        elif self.planned_mb is not None:
            mem = f"{self.planned_mb:.0f} MB planned by MXNet"
        else:
            mem = "? MB"
        line = (f"{self.label}: {self.train.median_ms:.1f} ms/iter "
                f"({self.train.min_ms:.1f}-{self.train.max_ms:.1f}), "
                f"{self.train_samples_per_s:.1f} samples/s, inference "
                f"{self.infer.median_ms:.1f} ms, memory {mem}")
        if self.settings:
            line += " [" + ", ".join(f"{k}={v}" for k, v in self.settings) + "]"
        return line

    def memory_note(self) -> str:
        """Measured against planned memory, with the difference named (GPU only)."""
        return memory_note(self.planned_mb, self.gpu_used_mb, self.context_mb,
                           self.workspace_mb)

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "device": self.device, "batch": self.batch,
                "train": self.train.to_dict(), "infer": self.infer.to_dict(),
                "train_samples_per_s": self.train_samples_per_s,
                "infer_samples_per_s": self.infer_samples_per_s,
                "planned_mb": self.planned_mb, "gpu_used_mb": self.gpu_used_mb,
                "context_mb": self.context_mb, "workspace_mb": self.workspace_mb,
                "settings": dict(self.settings), "memory_note": self.memory_note()}


def memory_note(planned_mb: float | None, used_mb: float | None, context_mb: float | None,
                workspace_mb: float | None) -> str:
    """One sentence: what a GPU run used beside what MXNet planned, and why they differ.

    MXNet's "Total N MB allocated" counts the graph's arrays only; the convolution
    workspace (``workspace``, up to 1024 MB per device by default), cuDNN/cuBLAS handles
    and the memory pool's rounding are outside it, and the CUDA context comes before
    it.  Memonger users have reported 744 MB planned and 5.1 GB seen (apache/mxnet#2682).
    """
    if used_mb is None:
        return ""
    parts = [f"measured {used_mb:.0f} MB"]
    if planned_mb is not None:
        extra = used_mb - planned_mb
        parts.append(f"against MXNet's planned {planned_mb:.0f} MB")
        if extra > 0.5:
            outside = ["convolution workspace"
                       + (f" (limit {workspace_mb:.0f} MB)" if workspace_mb else ""),
                       "cuDNN/cuBLAS handles", "the memory pool's rounding"]
            parts.append(f"{extra:.0f} MB more, outside MXNet's plan: " + ", ".join(outside))
        elif extra < -0.5:
            parts.append(f"{-extra:.0f} MB less (in-place reuse MXNet's count leaves in)")
    line = "; ".join(parts)
    if context_mb is not None and context_mb > 0.5:
        line += f"; the CUDA context takes {context_mb:.0f} MB before any of it"
    return line[0].upper() + line[1:] + "."


def workspace_limit_mb(graph_json: str) -> float | None:
    """The largest ``workspace`` a convolution of the graph may take (MB); MXNet's
    default is 1024 where the attribute is absent.  None: no convolution."""
    import json

    data = json.loads(graph_json)
    most: float | None = None
    for node in data.get("nodes", []) if isinstance(data, dict) else []:
        if node.get("op") not in ("Convolution", "Deconvolution"):
            continue
        attrs = node.get("attrs") or node.get("attr") or node.get("param") or {}
        try:
            value = float(attrs.get("workspace", 1024)) if isinstance(attrs, dict) else 1024.0
        except (TypeError, ValueError):
            value = 1024.0
        most = value if most is None else max(most, value)
    return most


def _timing(samples: list[float]) -> Timing:
    ms = [s * 1000.0 for s in samples]
    return Timing(statistics.median(ms), min(ms), max(ms), len(ms))


def _gpu_free(mx: Any, spec: str) -> int | None:
    kind, index = parse_device(spec)
    if kind != "gpu":
        return None
    try:
        free, _ = mx.context.gpu_memory_info(index)
        return int(free)
    except Exception:  # noqa: BLE001 - not every build reports memory
        return None


def grad_reqs(graph_json: str, shapes: Mapping[str, Shape]) -> dict[str, str]:
    """``grad_req`` for every argument: "null" for the inputs (those given a shape, and
    the data and label variables of the graph), "write" for the weights.  Training
    never needs an input's gradient, and MXNet refuses one for an ``Embedding``'s data.
    """
    inputs = set(shapes)
    try:
        doc = GraphDocument.from_json(graph_json)
        inputs.update(doc.nodes[i].name for i in doc.data_inputs())
    except UserError:
        pass                         # MXNet says what is wrong with it when it loads
    mx = import_mxnet()
    with mxnet_errors("MXNet cannot load the graph"):
        names = mx.sym.load_json(graph_json).list_arguments()
    return {name: "null" if name in inputs else "write" for name in names}


def run(graph_json: str, shapes: Mapping[str, Shape], ctx: str = "cpu", label: str = "graph",
        warmup: int = 2, repeats: int = 5, dtype: str = "float32",
        progress: Progress = no_progress, token: CancelToken | None = None,
        step: tuple[int, int] = (0, 1)) -> BenchResult:
    """Bind ``graph_json`` for training and time it; ``step`` offsets progress when
    several graphs are timed in one job."""
    token = token or CancelToken()
    on_gpu = parse_device(ctx)[0] == "gpu"
    mirrored = on_gpu and gpu.mirrored(graph_json)
    settings = gpu.run_settings(ctx, mirrored)
    untouched = gpu.free_bytes(parse_device(ctx)[1]) if on_gpu else None
    mx = import_mxnet()
    dev = context(ctx, mirrored)
    batch = next(iter(shapes.values()))[0] if shapes else 1
    free_before = _gpu_free(mx, ctx)
    context_mb = (untouched - free_before) / 2**20 \
        if untouched is not None and free_before is not None else None
    with mxnet_errors(f"{label}: MXNet cannot load the graph"):
        sym = mx.sym.load_json(graph_json)
    internals = sym.get_internals()
    try:
        _, out_shapes, _ = internals.infer_shape_partial(**shapes)
    except Exception:  # noqa: BLE001 - the bind below says what is wrong
        out_shapes = None
    if out_shapes:
        check_allocatable(internals.list_outputs(), [tuple(s) if s else None
                                                     for s in out_shapes], "the benchmark")
    with mxnet_errors(f"{label}: MXNet cannot bind the graph"):
        exe = sym.simple_bind(dev, grad_req=grad_reqs(graph_json, shapes),
                              type_dict=argument_types(sym, dtype), **shapes)
    try:
        planned = parse_total_mb(exe.debug_str())
    except UserError:
        planned = None
    head_grads = fill_for_timing(mx, exe, shapes, dev)
    done, total = step
    per_graph = 2 * (warmup + repeats)
    count = 0

    def tick(what: str) -> None:
        nonlocal count
        count += 1
        token.check()
        progress(done * per_graph + count, total * per_graph, f"{label}: {what}")

    try:
        with mxnet_errors(label):
            train: list[float] = []
            for k in range(warmup + repeats):
                start = time.perf_counter()
                exe.forward(is_train=True)
                exe.backward(head_grads)
                mx.nd.waitall()
                if k >= warmup:
                    train.append(time.perf_counter() - start)
                tick("training")
            free_during = _gpu_free(mx, ctx)
            infer: list[float] = []
            for k in range(warmup + repeats):
                start = time.perf_counter()
                exe.forward(is_train=False)
                mx.nd.waitall()
                if k >= warmup:
                    infer.append(time.perf_counter() - start)
                tick("inference")
    finally:
        del exe
    used = None
    if free_before is not None and free_during is not None:
        used = (free_before - free_during) / 2**20
    return BenchResult(label, ctx, int(batch), _timing(train), _timing(infer), planned, used,
                       context_mb, workspace_limit_mb(graph_json) if on_gpu else None,
                       tuple(sorted(settings.items())))


def compare(original_json: str, planned_json: str | None, shapes: Mapping[str, Shape],
            ctx: str = "cpu", warmup: int = 2, repeats: int = 5,
            progress: Progress = no_progress, token: CancelToken | None = None,
            isolate: bool = False) -> list[BenchResult]:
    """The original graph and, when given, the planned one, timed the same way;
    ``isolate``: each in its own child process (a fresh CUDA context and pool).

    Raises
    ------
    UserError : the planned graph is the original one (nothing to compare).
    """
    if planned_json is not None and _same_graph(original_json, planned_json):
        raise UserError("the planned graph is the original graph (the plan tags nothing "
                        "differently): nothing to compare")
    jobs = [("original", original_json)] + ([("planned", planned_json)] if planned_json else [])
    if not isolate:
        return [run(text, shapes, ctx, label, warmup, repeats, progress=progress, token=token,
                    step=(k, len(jobs))) for k, (label, text) in enumerate(jobs)]
    return [isolated.call(run, text, dict(shapes), ctx, label, warmup, repeats,
                          step=(k, len(jobs)), progress=progress, token=token,
                          what=f"the benchmark of the {label} graph")
            for k, (label, text) in enumerate(jobs)]


def _same_graph(a: str, b: str) -> bool:
    """The two graphs run the same way (``mirror_stage`` tags only guide planners)."""
    import json

    if a == b:
        return True

    def runnable(text: str) -> object:
        data = json.loads(text)
        for node in data.get("nodes", []) if isinstance(data, dict) else []:
            for key in ("attrs", "attr"):
                attrs = node.get(key)
                if isinstance(attrs, dict):
                    attrs.pop("__mirror_stage__", None)
                    attrs.pop("mirror_stage", None)
        return data

    return bool(runnable(a) == runnable(b))


def verdict(results: list[BenchResult]) -> str:
    """One sentence on original against planned training time: a difference only when
    the two runs' ranges do not overlap (else it is noise, and said so)."""
    if len(results) < 2:
        return ""
    a, b = results[0].train, results[1].train
    if a.min_ms <= b.max_ms and b.min_ms <= a.max_ms:
        return (f"No measurable difference in training time: the runs overlap "
                f"({a.min_ms:.1f}-{a.max_ms:.1f} against {b.min_ms:.1f}-{b.max_ms:.1f} ms).")
    change = b.median_ms / a.median_ms - 1 if a.median_ms else 0.0
    word = "slower" if change > 0 else "faster"
    return (f"{results[1].label.capitalize()} is {abs(change):.0%} {word} per training "
            f"iteration than {results[0].label} ({b.median_ms:.1f} against "
            f"{a.median_ms:.1f} ms).")
