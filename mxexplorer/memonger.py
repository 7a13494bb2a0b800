"""A drop-in for dmlc's memonger: change one import, keep the training script.

::

    from mxexplorer import memonger          # was: import memonger
    net = memonger.search_plan(net, data=(64, 3, 224, 224))
    mod = mx.mod.Module(net, ...); mod.bind(...)

The three functions keep memonger's names, arguments and return values:

* :func:`make_mirror_plan` tags exactly as memonger's does for a threshold;
* :func:`get_cost` is MXNet's ``Total N MB allocated`` for training the graph, on the
  CPU unless ``ctx`` says otherwise (memonger's own asked for ``mx.gpu()``, which is why
  a laptop could not plan);
* :func:`search_plan` returns an ``mx.sym.Symbol`` whose ``__force_mirroring__`` tags
  are mxexplorer's plan (its search keeps the unplanned graph among its candidates, so
  the plan is never worse than none, and starts from memonger's own thresholds: below
  memonger's plan on each of the 16 benchmark networks compared), with the
  stages from the graph's ``mirror_stage`` tags when it has any, else automatic (cut
  vertices).  Keyword arguments of ours: ``search``, ``within_mb``, ``ctx``,
  ``for_device``, ``stages``, ``plan_info``.

The search logs one line per result on the ``mxexplorer.memonger`` logger instead of
printing.  Never imports Qt.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping

from mxexplorer.api import Graph, PlanReport, as_shapes
from mxexplorer.core.analysis.shapes import infer_document
from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.structure import file_stages
from mxexplorer.core.planning import plantags
from mxexplorer.core.planning.plancost import CostOracle
from mxexplorer.core.runtime import gpu
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import import_mxnet, mxnet_errors

__all__ = ["get_cost", "make_mirror_plan", "search_plan"]

log = logging.getLogger("mxexplorer.memonger")


def _ctx(ctx: Any) -> str:
    """"cpu", "gpu:N", or an ``mx.Context`` as that spelling."""
    if ctx is None:
        return "cpu"
    if isinstance(ctx, str):
        return ctx
    kind = getattr(ctx, "device_type", None)
    if kind in ("cpu", "cpu_pinned", "cpu_shared"):
        return "cpu"
    if kind == "gpu":
        return f"gpu:{int(getattr(ctx, 'device_id', 0))}"
    raise UserError(f"ctx must be 'cpu', 'gpu:N' or an mx.Context, not {ctx!r}")


def _is_shape(value: Any) -> bool:
    return isinstance(value, (tuple, list)) and bool(value) and \
        all(isinstance(d, int) and not isinstance(d, bool) for d in value)


def _claim_shapes(sym: Any, options: dict[str, Any], defaults: Mapping[str, Any],
                  shapes: dict[str, Any]) -> None:
    """memonger takes the input shapes as keywords: an input named like one of our
    options (``ctx``, ``search`` ...) that was given a shape is that input's shape, and
    the option keeps its default."""
    names = set(sym.list_arguments())
    for key, value in list(options.items()):
        if key in names and _is_shape(value):
            shapes[key] = tuple(value)
            options[key] = defaults[key]


def _dtype(type_dict: Mapping[str, Any] | None) -> str:
    """The one dtype of ``type_dict`` (memonger's argument) as a name."""
    if not type_dict:
        return "float32"
    import numpy as np

    names = {np.dtype(t).name for t in type_dict.values()}
    if len(names) > 1:
        raise UserError("type_dict gives the inputs different dtypes "
                        f"({', '.join(sorted(names))}); plan with one dtype")
    return names.pop()


def make_mirror_plan(sym: Any, threshold: int, plan_info: dict[str, Any] | None = None,
                     **kwargs: Any) -> Any:
    """memonger's tagging at ``threshold`` MB, as memonger does it.

    Walks ``sym.get_internals()`` in order, adding up float32 output sizes; every
    non-parameter output is tagged ``force_mirroring``; at each ``mirror_stage`` node
    past ``threshold`` MB the output is kept (tag False) and the count starts again.

    Parameters
    ----------
    sym : mx.sym.Symbol, with ``mirror_stage`` tags on the nodes that may be kept.
    threshold : MB per stage block (whole number).
    plan_info : filled with ``max_size`` and ``save_size`` (bytes), as memonger fills it.
    **kwargs : the input shapes (``data=(32, 3, 224, 224)``).

    Returns
    -------
    mx.sym.Symbol : a copy of ``sym`` with the tags.
    """
    mx = import_mxnet()
    graph = Graph.from_symbol(sym)
    doc = graph.document
    result = infer_document(doc, as_shapes(None, kwargs))
    if result.error is not None:
        raise UserError(f"shape inference stopped at {result.error.one_line()}")
    tags, info = plantags.original_tags(doc, result.by_entry, file_stages(doc),
                                        int(threshold))
    if plan_info is not None:
        plan_info.update(info)
    return mx.sym.load_json(symbol_io.dumps(plantags.tagged_dict(doc, tags), indent=None))


def get_cost(sym: Any, type_dict: Mapping[str, Any] | None = None, ctx: Any = None,
             **kwargs: Any) -> int:
    """MB MXNet allocates to train ``sym`` at the shapes given (``Total N MB
    allocated`` of its bind report), on the CPU unless ``ctx`` names a GPU.

    Raises
    ------
    UserError : a device that is absent or that this MXNet cannot run, in one line.
    """
    options = {"type_dict": type_dict, "ctx": ctx}
    _claim_shapes(sym, options, {"type_dict": None, "ctx": None}, kwargs)
    type_dict, spec = options["type_dict"], _ctx(options["ctx"])
    gpu.check(spec)
    with mxnet_errors("MXNet cannot bind the graph"):
        oracle = CostOracle(as_shapes(None, kwargs), spec,
                            dict(type_dict) if type_dict else None)
        return int(oracle(sym.tojson()))


def search_plan(sym: Any, ntrial: int = 6, type_dict: Mapping[str, Any] | None = None, *,
                search: str = "best", within_mb: float | None = None, ctx: Any = None,
                for_device: str | None = None, stages: str | None = None,
                plan_info: dict[str, Any] | None = None, isolate: bool = True,
                **kwargs: Any) -> Any:
    """The planned graph, to bind and train in place of ``sym``.

    Parameters
    ----------
    sym : mx.sym.Symbol (with ``mirror_stage`` tags, or without: automatic stages).
    ntrial : memonger's grid size; kept for its callers (``search="original"`` probes
        memonger's own thresholds, 3 guesses and 6 trials, whatever it says).
    type_dict : the inputs' dtype, as memonger takes it (one dtype).
    search : "best", "fast", "thorough", or "original" (memonger's own search, from the
        untouched graph, the unplanned graph kept as a candidate).
    within_mb : the plan that recomputes least within this many MB, not the least memory.
    ctx : the device whose cost is measured ("cpu" by default, "gpu:N", or an
        ``mx.Context``).
    for_device : "gpu" to plan on the CPU for a GPU (cuDNN BatchNorm never recomputed).
    stages : "file", "auto" or None (the graph's ``mirror_stage`` tags when it has any).
    plan_info : filled with ``baseline_mb``, ``planned_mb``, ``summary`` and ``report``
        (the :class:`mxexplorer.PlanReport`).
    isolate : run MXNet's probes in a child process (a crash costs an error only).
    **kwargs : the input shapes.  An input named like one of the options above that is
        given a shape is that input's shape (memonger's callers name inputs freely).

    Returns
    -------
    mx.sym.Symbol : ``sym`` with the plan's ``__force_mirroring__`` tags (unchanged
        when no plan beats the unplanned graph).
    """
    defaults = {"ntrial": 6, "type_dict": None, "search": "best", "within_mb": None,
                "ctx": None, "for_device": None, "stages": None, "isolate": True}
    options = {"ntrial": ntrial, "type_dict": type_dict, "search": search,
               "within_mb": within_mb, "ctx": ctx, "for_device": for_device,
               "stages": stages, "isolate": isolate}
    _claim_shapes(sym, options, defaults, kwargs)
    # ntrial is memonger's grid size; mxexplorer's search sizes itself
    search = options["search"]
    report: PlanReport = Graph.from_symbol(sym).plan(
        kwargs, search=search, ctx=_ctx(options["ctx"]), stages=options["stages"],
        within_mb=options["within_mb"], for_device=options["for_device"],
        dtype=_dtype(options["type_dict"]), isolate=options["isolate"])
    log.info("unplanned %.0f MB, planned %.0f MB (%s search, %d plans costed)",
             report.baseline_mb, report.planned_mb, search, len(report.probes))
    if plan_info is not None:
        plan_info.update(baseline_mb=report.baseline_mb, planned_mb=report.planned_mb,
                         summary=report.summary, report=report)
    return report.symbol()
