"""Plan a Gluon ``HybridBlock``: the block as a symbol in memory, planned, handed back
ready to train with the plan.

MXNet honours ``__force_mirroring__`` only in its graph executor (``simple_bind``,
``bind``, the Module API: ``src/executor/graph_executor.cc`` passes a mirror function to
the gradient pass).  A hybridized block trains through a ``CachedOp``, whose gradient
pass gets none (``src/imperative/cached_op.h``, MXNet 1.9.1), so a Gluon training loop
(``autograd.record()`` + ``Trainer``) never recomputes, tags or not.  The plan is
therefore handed back as a bound Module sharing nothing but the block's current values
(:meth:`BlockPlan.module`), and as a ``SymbolBlock`` over the block's own parameters
(:meth:`BlockPlan.symbol_block`: for inference, export and saving; its training does
not follow the plan).  Never imports Qt.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from mxexplorer.api import Graph, PlanReport, ShapeMap, as_shapes
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import import_mxnet
from mxexplorer.core.runtime.progress import Progress

__all__ = ["BlockPlan", "plan_block"]


def block_symbol(block: Any, names: Sequence[str],
                 loss: Callable[[Any], Any] | None = None) -> tuple[Any, list[str]]:
    """``block`` called on symbolic inputs ``names`` (a HybridBlock gives its graph),
    with ``loss`` applied to its output when given; and the block's own output names."""
    mx = import_mxnet()
    if not isinstance(block, mx.gluon.HybridBlock):
        raise UserError(f"plan_block needs a gluon HybridBlock, not {type(block).__name__} "
                        "(a plain Block has no graph to plan)")
    out = block(*[mx.sym.var(n) for n in names])
    if isinstance(out, (list, tuple)):
        out = mx.sym.Group(list(out))
    heads = list(out.list_outputs())
    return (loss(out) if loss is not None else out), heads


def plan_block(block: Any, shapes: ShapeMap | None = None, *,
               loss: Callable[[Any], Any] | None = None, search: str = "best",
               ctx: str = "cpu", stages: str | None = None, within_mb: float | None = None,
               for_device: str | None = None, dtype: str = "float32", isolate: bool = True,
               progress: Progress | None = None, **shape_kw: Sequence[int]) -> BlockPlan:
    """Plan training memory for a Gluon ``HybridBlock``.

    Parameters
    ----------
    block : the network (its parameters need not be initialised to plan; to train the
        plan they must be).
    shapes : the inputs' shapes by name, e.g. ``data=(32, 3, 224, 224)``.
    loss : a function from the block's output symbol to the training graph's head
        (``lambda out: mx.sym.SoftmaxOutput(out, name="softmax")``); its memory is part
        of training's, and :meth:`BlockPlan.module` trains through it.
    search, ctx, stages, within_mb, for_device, dtype, isolate, progress : as for
        :meth:`mxexplorer.Graph.plan`.
    """
    given = as_shapes(shapes, shape_kw)
    if not given:
        raise UserError("give the block's input shapes, e.g. data=(32, 3, 224, 224)")
    sym, heads = block_symbol(block, list(given), loss)
    report = Graph.from_symbol(sym).plan(given, search=search, ctx=ctx, stages=stages,
                                         within_mb=within_mb, for_device=for_device,
                                         dtype=dtype, isolate=isolate, progress=progress)
    return BlockPlan(block, report, dict(given), heads, dtype)


class BlockPlan:
    """A Gluon block's plan: ``report`` (:class:`mxexplorer.PlanReport`), the planned
    ``symbol()``, and the ways to run it."""

    def __init__(self, block: Any, report: PlanReport, shapes: dict[str, tuple[int, ...]],
                 heads: Sequence[str] = (), dtype: str = "float32"):
        self.block = block
        self.dtype = dtype
        self.report = report
        self.shapes = shapes
        #: the block's own outputs (the loss, when given, reads them)
        self.heads = list(heads)

    def symbol(self) -> Any:
        """The planned graph (the block, and its loss when given, with the tags)."""
        return self.report.symbol()

    def params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The block's current values as ``(arg_params, aux_params)`` by the planned
        graph's names."""
        sym = self.symbol()
        values = {name: p.data() for name, p in self.block.collect_params().items()}
        args = {n: values[n] for n in sym.list_arguments() if n in values}
        aux = {n: values[n] for n in sym.list_auxiliary_states() if n in values}
        return args, aux

    def module(self, context: Any = None, for_training: bool = True) -> Any:
        """An ``mx.mod.Module`` of the planned graph, bound at the planned shapes with
        the block's values: training it follows the plan (the graph executor reads the
        tags).  Labels are the graph's arguments that are neither inputs nor the
        block's parameters (``softmax_label``), their shapes inferred."""
        mx = import_mxnet()
        sym = self.symbol()
        args, aux = self.params()
        labels = [n for n in sym.list_arguments() if n not in args and n not in self.shapes]
        arg_shapes, _, _ = sym.infer_shape(**self.shapes)
        by_name = dict(zip(sym.list_arguments(), arg_shapes or []))
        mod = mx.mod.Module(sym, data_names=list(self.shapes), label_names=labels,
                            context=context or mx.cpu())
        mod.bind(data_shapes=list(self.shapes.items()),
                 label_shapes=[(n, by_name[n]) for n in labels] or None,
                 for_training=for_training)
        mod.set_params(args, aux, allow_missing=False)
        return mod

    def symbol_block(self) -> Any:
        """A ``SymbolBlock`` of the planned graph over the block's own parameters (the
        same values, shared).  Gluon trains it through a CachedOp, which does not
        recompute: use :meth:`module` to train with the plan."""
        mx = import_mxnet()
        sym = self.symbol()
        if self.heads and list(sym.list_outputs()) != self.heads:   # leave the loss out
            internals = sym.get_internals()
            sym = mx.sym.Group([internals[name] for name in self.heads])
        inputs = [mx.sym.var(n, dtype=self.dtype) for n in self.shapes]
        return mx.gluon.SymbolBlock(sym, inputs, params=self.block.collect_params())

    def __repr__(self) -> str:
        return f"<mxexplorer.BlockPlan of {type(self.block).__name__}: {self.report!r}>"
