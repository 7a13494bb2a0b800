"""Converters of plug-in ops MXNet 1.9.1's wheel lacks (the engine infers them from their
sources, :mod:`mxexplorer.core.ops.plugins`): ``ChannelwiseConvolution`` is a
Convolution with one group per input channel; BMXNet's binarized layers are refused
(their arithmetic is BMXNet's own, and no MXNet that runs them is at hand to check an
export against).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from dataclasses import replace

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.nn import convolution
from mxexplorer.core.convert.onnx.registry import converts
from mxexplorer.core.ops import engine

Out = list[str | None]


@converts("ChannelwiseConvolution")
def channelwise_convolution(cx: Ctx, node: OpNode) -> Out:
    attrs = {k: v for k, v in node.attrs.items() if not k.startswith("__")}
    attrs.setdefault("num_group", str(node.in_shapes[0][1]))
    try:
        p = engine.parsed("Convolution", attrs)
    except ValueError as exc:
        raise node.refuse(str(exc)) from None
    return convolution(cx, replace(node, p=p))


@converts("QActivation", "QConvolution", "QFullyConnected")
def bmxnet(cx: Ctx, node: OpNode) -> Out:
    raise node.refuse("a BMXNet binarized layer: its arithmetic is BMXNet's own and no "
                      "MXNet that runs it is at hand to check an export against")
