"""Time training and inference of a graph on a device: the speed price of a plan.

Training iterations are forward + backward, synchronised with ``mx.nd.waitall()``;
inputs and weights are random; inputs (data, labels) get no gradient, weights do
(an input that feeds an ``Embedding`` cannot have one).

Two graphs are timed in one child process, both bound, in rounds (:func:`time_graphs`):
each round trains each graph once, then runs each once for inference, the graph that
goes first alternating between rounds (A B, then B A), so that what the machine does
meanwhile falls on both and neither always runs second.  The warm-up's last round
calibrates: it gives the time of a round, hence how many rounds fit the time budget
(:class:`Estimate`, reported before the timed rounds start); a small graph's sample
takes several iterations so it lasts at least :data:`MIN_SAMPLE_S` (pyperf's loops).
:mod:`benchstats` turns the per-round pairs into the ratio, its interval and the
verdict.

On a GPU, the memory actually used is read from ``mx.context.gpu_memory_info`` before
binding and after the runs, and the CUDA context's share from NVML before MXNet's first
GPU call; what MXNet's plan leaves out (convolution workspace, cuDNN and cuBLAS
handles, the pool's rounding) is named beside it.  That measurement needs each graph in
a fresh child process (:func:`run`, from :func:`compare`): MXNet's memory pool keeps
what the first graph freed, so a second graph in the same process would be measured
short.  No Qt here.
"""
from __future__ import annotations

import dataclasses
import math
import os
import statistics
import time
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Mapping, Sequence

from mxexplorer.core.analysis.binding import grad_reqs
from mxexplorer.core.analysis.shapes import Shape, check_allocatable
from mxexplorer.core.planning import benchstats
from mxexplorer.core.planning.benchresults import (
    BenchResult,
    Comparison,
    Estimate,
    Timing,
    workspace_limit_mb,
)
from mxexplorer.core.planning.plancost import parse_total_mb
from mxexplorer.core.runtime import gpu, isolated
from mxexplorer.core.runtime.devices import parse_device
from mxexplorer.core.runtime.errors import MXNetMissingError, UserError
from mxexplorer.core.runtime.mxnet_env import (
    argument_types,
    context,
    fill_for_timing,
    import_mxnet,
    mxnet_errors,
)
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

#: the whole benchmark's time, when not told (seconds)
DEFAULT_BUDGET_S = 60.0
#: fewer rounds make an interval too wide to tell anything but a large difference
MIN_ROUNDS = 6
#: more rounds narrow the interval little (it shrinks as one over their square root)
MAX_ROUNDS = 200
#: a timed sample lasts at least this long: a small graph's sample is several iterations
MIN_SAMPLE_S = 0.01


def _timing(ms: Sequence[float]) -> Timing:
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


@dataclass
class _Bound:
    """One graph bound for training, with what a timed run needs."""

    label: str
    exe: Any
    heads: list[Any]
    planned_mb: float | None


def _bind(mx: Any, dev: Any, label: str, graph_json: str, shapes: Mapping[str, Shape],
          dtype: str) -> _Bound:
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
                              type_dict=argument_types(sym, dtype,
                                                       {k: dtype for k in shapes}),
                              **shapes)
    try:
        planned = parse_total_mb(exe.debug_str())
    except UserError:
        planned = None
    with mxnet_errors(f"{label}: MXNet cannot fill the graph's arrays"):
        heads = fill_for_timing(mx, exe, shapes, dev)
    return _Bound(label, exe, heads, planned)


def _batch(shapes: Mapping[str, Shape]) -> int:
    return int(next(iter(shapes.values()))[0]) if shapes else 1


def _mxnet() -> ModuleType:
    """MXNet, or an error that says the benchmark needs it and where to get it."""
    try:
        return import_mxnet()
    except MXNetMissingError as exc:
        raise MXNetMissingError(
            f"The benchmark needs MXNet (it times MXNet training the graph): {exc}") from None


def run(graph_json: str, shapes: Mapping[str, Shape], ctx: str = "cpu", label: str = "graph",
        warmup: int = 2, repeats: int = 5, dtype: str = "float32",
        progress: Progress = no_progress, token: CancelToken | None = None,
        step: tuple[int, int] = (0, 1)) -> BenchResult:
    """Bind ``graph_json`` for training and time it alone, with the GPU memory it uses
    (run it in a fresh child for that: :func:`compare`); ``step`` offsets progress when
    several graphs are run in one job."""
    token = token or CancelToken()
    on_gpu = parse_device(ctx)[0] == "gpu"
    mirrored = on_gpu and gpu.mirrored(graph_json)
    settings = gpu.run_settings(ctx, mirrored)
    untouched = gpu.free_bytes(parse_device(ctx)[1]) if on_gpu else None
    mx = _mxnet()
    dev = context(ctx, mirrored)
    free_before = _gpu_free(mx, ctx)
    context_mb = (untouched - free_before) / 2**20 \
        if untouched is not None and free_before is not None else None
    bound = _bind(mx, dev, label, graph_json, shapes, dtype)
    done, total = step
    per_graph = 2 * (warmup + repeats)
    count = 0

    def tick(what: str) -> None:
        nonlocal count
        count += 1
        token.check()
        progress(done * per_graph + count, total * per_graph, f"{label}: {what}")

    exe, planned = bound.exe, bound.planned_mb
    try:
        with mxnet_errors(label):
            train: list[float] = []
            for k in range(warmup + repeats):
                ms = _train_ms(mx, bound, 1)
                if k >= warmup:
                    train.append(ms)
                tick("training")
            free_during = _gpu_free(mx, ctx)
            infer: list[float] = []
            for k in range(warmup + repeats):
                ms = _infer_ms(mx, bound, 1)
                if k >= warmup:
                    infer.append(ms)
                tick("inference")
    finally:
        del exe, bound
    used = None
    if free_before is not None and free_during is not None:
        used = (free_before - free_during) / 2**20
    return BenchResult(label, ctx, _batch(shapes), _timing(train), _timing(infer),
                       planned, used, context_mb,
                       workspace_limit_mb(graph_json) if on_gpu else None,
                       tuple(sorted(settings.items())))


def _train_ms(mx: Any, bound: _Bound, loops: int) -> float:
    """Milliseconds per training iteration, over ``loops`` iterations in a row."""
    start = time.perf_counter()
    for _ in range(loops):
        bound.exe.forward(is_train=True)
        bound.exe.backward(bound.heads)
        mx.nd.waitall()
    return (time.perf_counter() - start) * 1000.0 / loops


def _infer_ms(mx: Any, bound: _Bound, loops: int) -> float:
    start = time.perf_counter()
    for _ in range(loops):
        bound.exe.forward(is_train=False)
        mx.nd.waitall()
    return (time.perf_counter() - start) * 1000.0 / loops


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                   # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):        # pragma: no cover - Windows
        return None


def _smaller_batch(batch: int, budget_s: float, warm_rounds: int,
                   round_s: float) -> int | None:
    """A batch whose warm-up and :data:`MIN_ROUNDS` rounds fit the budget, taking a
    round's time as proportional to the batch; a power of two below ``batch``, or 1,
    the shortest there is, when none fits (a busy machine: batch 1 still runs past the
    time, and the question says so).  None when ``batch`` fits or is 1 already.  The
    set-up (loading, binding) hardly shrinks with the batch and is not counted, as in
    :attr:`Estimate.over_budget`."""
    room = budget_s
    fits = batch * room / ((warm_rounds + MIN_ROUNDS) * round_s) if round_s > 0 else batch
    if fits >= batch or batch <= 1:
        return None
    smaller = 1 << int(math.log2(fits)) if fits >= 1 else 1
    return smaller if smaller < batch else None


def time_graphs(graphs: Sequence[tuple[str, str]], shapes: Mapping[str, Shape],
                ctx: str = "cpu", warmup: int = 1, rounds: int | None = None,
                budget_s: float = DEFAULT_BUDGET_S, started: float | None = None,
                stop_over_budget: bool = False, dtype: str = "float32",
                progress: Progress = no_progress, token: CancelToken | None = None,
                on_estimate: Callable[[Estimate], None] | None = None) -> Comparison:
    """Bind every graph of ``graphs`` ((label, JSON) pairs) and time them in rounds.

    ``warmup`` rounds first (the last one, timed, calibrates: a round's time, and how
    many iterations make a sample of :data:`MIN_SAMPLE_S`; a round under a second is
    timed once more, at that many); then ``rounds`` timed rounds, or as many as fit in
    what is left of ``budget_s`` since ``started`` (a ``time.time()``), between
    :data:`MIN_ROUNDS` and :data:`MAX_ROUNDS`.  The estimate
    reaches ``on_estimate`` before the timed rounds start; with ``stop_over_budget``,
    a benchmark that would run past the budget stops there (``complete`` False).  The
    GPU memory figures are not measured here: both graphs share one memory pool.
    """
    token = token or CancelToken()
    started = time.time() if started is None else started
    load_before = _load()
    on_gpu = parse_device(ctx)[0] == "gpu"
    mirrored = on_gpu and any(gpu.mirrored(text) for _, text in graphs)
    settings = tuple(sorted(gpu.run_settings(ctx, mirrored).items()))
    mx = _mxnet()
    dev = context(ctx, mirrored)
    bound = [_bind(mx, dev, label, text, shapes, dtype) for label, text in graphs]
    labels = [b.label for b in bound]
    train: dict[str, list[float]] = {label: [] for label in labels}
    infer: dict[str, list[float]] = {label: [] for label in labels}
    order: list[str] = []

    def one_round(k: int, loops: int, record: bool) -> tuple[dict[str, list[float]], float]:
        start = time.perf_counter()
        seq = bound if k % 2 == 0 else bound[::-1]       # A B, then B A
        times: dict[str, list[float]] = {}
        for b in seq:
            token.check()
            times[b.label] = [_train_ms(mx, b, loops)]
        for b in seq:
            token.check()
            times[b.label].append(_infer_ms(mx, b, loops))
        if record:
            order.extend(b.label for b in seq)
            for label, (t, i) in times.items():
                train[label].append(t)
                infer[label].append(i)
        return times, time.perf_counter() - start

    round_s = 0.0
    with mxnet_errors("the benchmark"):
        calibration: dict[str, list[float]] | None = None
        for k in range(warmup):
            progress(k, warmup, f"warming up ({k + 1} of {warmup})")
            calibration, round_s = one_round(k, 1, False)
        loops, first = 1, 0
        if calibration is None:          # no warm-up: the first timed round calibrates
            calibration, round_s = one_round(0, 1, True)
            first = 1
        else:
            fastest = min(t for t, _ in calibration.values()) / 1000.0
            loops = max(1, math.ceil(MIN_SAMPLE_S / fastest)) if fastest > 0 else 1
            if loops > 1 or round_s < 1.0:
                # a small graph's first round is mostly one-time work (half of it at
                # ResNet-18, batch 4, 64x64): time one more, at the loops the samples
                # will have (under a second)
                _, round_s = one_round(warmup, loops, False)
        spent = time.time() - started
        count = rounds if rounds is not None else min(
            MAX_ROUNDS, max(MIN_ROUNDS, int((budget_s - spent) // max(round_s, 1e-9))))
        count = max(count, first)
        estimate = Estimate(count, round_s, (count - first) * round_s, spent, budget_s,
                            len(bound), _batch(shapes), loops)
        if estimate.over_budget:
            estimate = dataclasses.replace(estimate, smaller_batch=_smaller_batch(
                estimate.batch, budget_s, max(warmup, 1), round_s / loops))
        if on_estimate is not None:
            on_estimate(estimate)
        if stop_over_budget and rounds is None and estimate.over_budget:
            partial = tuple(BenchResult(b.label, ctx, estimate.batch,
                                        _timing(calibration[b.label][:1]),
                                        _timing(calibration[b.label][1:]), b.planned_mb,
                                        None, settings=settings) for b in bound)
            return Comparison(partial, estimate, complete=False,
                              load=load_before, cores=_cores())
        cpu_before, wall_before = os.times(), time.perf_counter()
        progress(first, count, f"about {estimate.seconds:.0f} s left")
        for k in range(first, count):
            one_round(k, loops, True)
            done = k + 1 - first
            left = (count - k - 1) * (time.perf_counter() - wall_before) / done
            progress(k + 1, count, f"run {k + 1} of {count}, about {left:.0f} s left")
    cpu_after, wall = os.times(), time.perf_counter() - wall_before
    own = ((cpu_after.user + cpu_after.system - cpu_before.user - cpu_before.system)
           / wall) if wall > 0 else 0.0
    after = _load()
    # the load average counts this process's own threads: what is left is the others'
    loads = [x for x in (load_before, after - own if after is not None else None)
             if x is not None]
    load = max(loads) if loads else None
    results = tuple(BenchResult(b.label, ctx, estimate.batch, _timing(train[b.label]),
                                _timing(infer[b.label]), b.planned_mb, None,
                                settings=settings) for b in bound)
    pairs = tuple(zip(train[labels[0]], train[labels[1]])) if len(labels) > 1 else ()
    stats = benchstats.ratio_stats(pairs)
    spread = {label: benchstats.spread(train[label]) for label in labels}
    return Comparison(results, estimate, pairs, tuple(order), stats, load, _cores(),
                      tuple(benchstats.noise_notes(stats, load, _cores(), spread)),
                      benchstats.verdict(stats, labels, len(pairs)))


def compare(original_json: str, planned_json: str | None, shapes: Mapping[str, Shape],
            ctx: str = "cpu", warmup: int = 1, rounds: int | None = None,
            budget_s: float = DEFAULT_BUDGET_S, progress: Progress = no_progress,
            token: CancelToken | None = None, isolate: bool = False,
            stop_over_budget: bool = False,
            on_estimate: Callable[[Estimate], None] | None = None,
            dtype: str = "float32") -> Comparison:
    """The original graph and, when given, the planned one, timed round by round
    (:func:`time_graphs`).  ``isolate``: in a child process; on a GPU, each graph's
    memory is first measured in a child of its own (:func:`run`: a fresh CUDA context
    and pool), and that time counts in the budget.

    Raises
    ------
    UserError : the planned graph is the original one (nothing to compare).
    """
    if planned_json is not None and _same_graph(original_json, planned_json):
        raise UserError("the planned graph is the original graph (the plan tags nothing "
                        "differently): nothing to compare")
    started = time.time()
    graphs = [("original", original_json)] + (
        [("planned", planned_json)] if planned_json else [])
    memory: dict[str, BenchResult] = {}
    if parse_device(ctx)[0] == "gpu":
        for k, (label, text) in enumerate(graphs):
            args = (text, dict(shapes), ctx, label, 1, 1, dtype)
            memory[label] = isolated.call(
                run, *args, step=(k, len(graphs)), progress=progress, token=token,
                what=f"the memory of the {label} graph") if isolate else \
                run(*args, progress=progress, token=token, step=(k, len(graphs)))
    args2 = (graphs, dict(shapes), ctx, warmup, rounds, budget_s, started,
             stop_over_budget, dtype)
    if isolate:
        result: Comparison = isolated.call(
            time_graphs, *args2, progress=progress, token=token, what="the benchmark",
            callbacks={"on_estimate": on_estimate} if on_estimate is not None else None)
    else:
        result = time_graphs(*args2, progress=progress, token=token,
                             on_estimate=on_estimate)
    if not memory:
        return result
    results = tuple(dataclasses.replace(
        r, gpu_used_mb=memory[r.label].gpu_used_mb, context_mb=memory[r.label].context_mb,
        workspace_mb=memory[r.label].workspace_mb) for r in result.results)
    return dataclasses.replace(result, results=results)


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
