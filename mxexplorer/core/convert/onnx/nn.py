"""Converters of the neural-network layers: convolutions, fully connected, pooling,
normalisations, activations, dropout, flatten, softmax; the rest (group norm, embedding,
up-sampling, resizing, Crop, grids and samplers, ROI pooling, refusals) in
:mod:`nn_more`, which registers on import below.

Each reads the node's attributes as MXNet's parser does (``node.p``, defaults filled
in) and the engine's shapes; layouts other than channels-first are refused by name
(MXNet runs them on GPU only).  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]


def _tuple(value: Sequence[int] | None, n: int, default: int) -> list[int]:
    got = list(value or ())
    return got if len(got) == n else [default] * n


def _channels_first(node: OpNode) -> None:
    layout = node.p.get("layout")
    if layout and not layout.startswith("NC"):
        raise node.refuse(f"layout {layout}: only channels-first layouts are exported "
                          "(MXNet runs the others on GPU only)")


@converts("Convolution", "Convolution_v1")
def convolution(cx: Ctx, node: OpNode) -> Out:
    _channels_first(node)
    p = node.p
    k = list(p["kernel"])
    n = len(k)
    pad = _tuple(p.get("pad"), n, 0)
    inputs = node.inputs[:2] if p.get("no_bias") else node.inputs[:3]
    return [cx.one("Conv", inputs, node.outputs[0], kernel_shape=k,
                   strides=_tuple(p.get("stride"), n, 1),
                   dilations=_tuple(p.get("dilate"), n, 1), pads=pad + pad,
                   group=int(p.get("num_group") or 1))]


@converts("Deconvolution")
def deconvolution(cx: Ctx, node: OpNode) -> Out:
    """ConvTranspose; MXNet's ``adj`` (and the padding ``target_shape`` implies) as
    less padding at the end, else as ``output_padding``."""
    _channels_first(node)
    p = node.p
    k = list(p["kernel"])
    n = len(k)
    stride, dilate = _tuple(p.get("stride"), n, 1), _tuple(p.get("dilate"), n, 1)
    ins = node.in_shapes[0][2:]
    outs = node.out_shapes[0][2:]
    begin, end, extra = [], [], []
    for d in range(n):
        full = (ins[d] - 1) * stride[d] + dilate[d] * (k[d] - 1) + 1
        if p.get("target_shape") and any(p["target_shape"]):
            total = full - outs[d]
            pad = (total + 1) // 2 if total > 0 else 0
            adj = total % 2 if total > 0 else 0
        else:
            pad, adj = _tuple(p.get("pad"), n, 0)[d], _tuple(p.get("adj"), n, 0)[d]
        if pad >= adj:
            begin.append(pad)
            end.append(pad - adj)
            extra.append(0)
        else:
            begin.append(pad)
            end.append(pad)
            extra.append(adj)
    inputs = node.inputs[:2] if p.get("no_bias", True) else node.inputs[:3]
    return [cx.one("ConvTranspose", inputs, node.outputs[0], kernel_shape=k, strides=stride,
                   dilations=dilate, pads=begin + end,
                   output_padding=extra if any(extra) else None,
                   group=int(p.get("num_group") or 1))]


@converts("FullyConnected")
def fully_connected(cx: Ctx, node: OpNode) -> Out:
    p = node.p
    x = node.inputs[0]
    bias = None if p.get("no_bias") else node.inputs[2]
    if p.get("flatten", True):
        if node.rank() != 2:
            x = cx.one("Flatten", [x], hint=node.name, axis=1)
        return [cx.one("Gemm", [x, node.inputs[1]] + ([bias] if bias else []),
                       node.outputs[0], transB=1)]
    wt = cx.one("Transpose", [node.inputs[1]], hint=node.name, perm=[1, 0])
    if bias is None:
        return [cx.one("MatMul", [x, wt], node.outputs[0])]
    y = cx.one("MatMul", [x, wt], hint=node.name)
    return [cx.one("Add", [y, bias], node.outputs[0])]


@converts("Pooling", "Pooling_v1")
def pooling(cx: Ctx, node: OpNode) -> Out:
    """MXNet's windows start at ``o*stride - pad``; 'valid' keeps those inside the
    padded input, 'full' (and 'same', 1-D with no padding) also those that run past its
    end, cut there: the ONNX form pads the end by what the last window needs (explicitly,
    with a Pad node, when a padding reaches a kernel size, which ONNX pools refuse).
    max ignores the padding (an all-padding window is float's lowest, as MXNet's);
    sum adds the window's elements; avg divides the sum by the window cut at the padded
    input's end (and at the input when ``count_include_pad`` is False); lp is
    ``(sum x**p) ** (1/p)`` with signed x (MXNet takes no absolute value) for p 1..3.
    Pooling_v1 pads with zeros that max pooling sees, and its avg divides by the whole
    kernel."""
    _channels_first(node)
    p = node.p
    kind = p.get("pool_type") or "max"
    x, out = node.inputs[0], node.outputs[0]
    if p.get("global_pool"):
        return [_global_pool(cx, node, kind, x, out)]
    k = list(p["kernel"])
    n = len(k)
    stride, pad = _tuple(p.get("stride"), n, 1), _tuple(p.get("pad"), n, 0)
    if (p.get("pooling_convention") or "valid") == "same":
        pad = [0] * n
    ins, want = list(node.in_shapes[0][2:]), list(node.out_shapes[0][2:])
    legacy = node.op == "Pooling_v1"
    if legacy and any(pad):         # zeros padded in, which max pooling sees too
        x = cx.one("Pad", [x, cx.ints([0, 0] + pad + [0, 0] + pad)], hint=node.name,
                   mode="constant")
        ins, pad = [i + 2 * q for i, q in zip(ins, pad)], [0] * n
    end = [max(pad[d], (want[d] - 1) * stride[d] + k[d] - ins[d] - pad[d])
           for d in range(n)]
    if any(b >= kk or e >= kk for b, e, kk in zip(pad, end, k)):
        import numpy as np

        dtype = node.in_dtypes[0] or "float32"
        lowest = float(np.finfo(dtype).min) if kind == "max" else 0.0
        x = cx.one("Pad", [x, cx.ints([0, 0] + pad + [0, 0] + end),
                           cx.const(lowest, dtype)],
                   hint=node.name, mode="constant")
        attrs: dict[str, Any] = {"kernel_shape": k, "strides": stride}
        include = True
    else:
        attrs = {"kernel_shape": k, "strides": stride, "pads": pad + end}
        include = p.get("count_include_pad") is not False
    if kind == "max":
        return [cx.one("MaxPool", [x], out, **attrs)]
    if kind == "avg" and end == pad and "pads" in attrs:
        return [cx.one("AveragePool", [x], out, count_include_pad=int(include), **attrs)]
    power = int(p.get("p_value") or 1) if kind == "lp" else 1
    if power not in (1, 2, 3):
        raise node.refuse(f"p_value {power}: MXNet pools with p 1, 2 or 3 only")
    y = _powered(cx, x, power)
    y = cx.one("AveragePool", [y], hint=node.name, count_include_pad=1, **attrs)
    total = cx.one("Mul", [y, cx.scalar(float(math.prod(k)))],
                   out if kind == "sum" or (kind == "lp" and power == 1) else None)
    if kind == "lp":
        return [total if power == 1 else _root(cx, total, power, out)]
    if kind == "sum":
        return [total]
    if legacy:                      # Pooling_v1 divides by the whole kernel
        return [cx.one("Div", [total, cx.scalar(float(math.prod(k)))], out)]
    include = p.get("count_include_pad") is not False
    return [cx.one("Div", [total, cx.const(_window_sizes(ins, want, k, stride, pad,
                                                         include))], out)]


def _powered(cx: Ctx, x: str, power: int) -> str:
    if power == 1:
        return x
    sq = cx.one("Mul", [x, x])
    return sq if power == 2 else cx.one("Mul", [sq, x])


def _root(cx: Ctx, x: str, power: int, out: str) -> str:
    """MXNet's root of an Lp pool: sqrt for 2, the signed cube root for 3."""
    if power == 2:
        return cx.one("Sqrt", [x], out)
    mag = cx.one("Pow", [cx.one("Abs", [x]), cx.scalar(1.0 / 3.0)])
    return cx.one("Mul", [cx.one("Sign", [x]), mag], out)


def _global_pool(cx: Ctx, node: OpNode, kind: str, x: str, out: str) -> str:
    spatial = list(range(2, node.rank()))
    if kind == "max":
        return cx.one("GlobalMaxPool", [x], out)
    if kind == "avg":
        return cx.one("GlobalAveragePool", [x], out)
    if kind == "sum":
        return cx.reduce("ReduceSum", x, spatial, True, out)
    power = int(node.p.get("p_value") or 1)
    if power not in (1, 2, 3):
        raise node.refuse(f"p_value {power}: MXNet pools with p 1, 2 or 3 only")
    total = cx.reduce("ReduceSum", _powered(cx, x, power), spatial, True,
                      out if power == 1 else None)
    return total if power == 1 else _root(cx, total, power, out)


def _window_sizes(ins: Sequence[int], outs: Sequence[int], k: Sequence[int],
                  stride: Sequence[int], pad: Sequence[int], include: bool) -> Any:
    """What MXNet divides each average by (pool.h): the window cut at the padded
    input's end (and at the input itself when padding does not count).  A window past
    the padding (which 'full' makes) is empty and sums to 0: MXNet's 1-D and 2-D
    kernels give 0 there (a divisor of 1 here), its 3-D kernel NaN when the size is 0
    (a divisor of 0 here, so 0/0 is NaN too)."""
    import numpy as np

    sizes = np.ones(tuple(outs), "float32")
    for d in range(len(k)):
        start = np.arange(outs[d]) * stride[d] - pad[d]
        stop = np.minimum(start + k[d], ins[d] + pad[d])
        if not include:
            start, stop = np.maximum(start, 0), np.minimum(stop, ins[d])
        shape = [1] * len(k)
        shape[d] = outs[d]
        sizes = sizes * (stop - start).astype("float32").reshape(shape)
    if len(k) < 3:
        sizes[sizes == 0] = 1
    return sizes


def _channel_shape(rank: int, axis: int, size: int) -> list[int]:
    shape = [1] * rank
    shape[axis] = size
    return shape


@converts("BatchNorm", "BatchNorm_v1", "SyncBatchNorm", "_contrib_SyncBatchNorm",
          "CuDNNBatchNorm")
def batch_norm(cx: Ctx, node: OpNode) -> Out:
    """Inference: the moving statistics; ``fix_gamma`` (MXNet's default) as gammas of
    one, said once.  Axis 1 is BatchNormalization; another axis is the same formula
    with the statistics shaped to broadcast along it."""
    p = node.p
    x, gamma, beta, mean, var = node.inputs[:5]
    eps = float(p.get("eps", 1e-3))
    axis = int(p.get("axis", 1)) % node.rank()
    channels = node.in_shapes[0][axis]
    if p.get("fix_gamma", True):
        gamma = cx.const([1.0] * channels, node.in_dtypes[0] if node.in_dtypes[0] in
                         ("float16", "float64") else "float32", "ones")
        cx.note("BatchNorm with fix_gamma=True (MXNet's default) exported with gammas of "
                "one, as MXNet computes it")
    if axis == 1 or node.rank() == 1:
        y = cx.one("BatchNormalization", [x, gamma, beta, mean, var], node.outputs[0],
                   epsilon=eps)
        return [y, None, None]
    shape = _channel_shape(node.rank(), axis, channels)
    g, b, m, v = (cx.reshape(t, shape) for t in (gamma, beta, mean, var))
    std = cx.one("Sqrt", [cx.one("Add", [v, cx.scalar(eps)])])
    scale = cx.one("Div", [g, std])
    shift = cx.one("Sub", [b, cx.one("Mul", [m, scale])])
    y = cx.one("Add", [cx.one("Mul", [x, scale]), shift], node.outputs[0])
    return [y, None, None]


def _gelu(cx: Ctx, x: str, out: str) -> str:
    half = cx.one("Mul", [x, cx.scalar(0.5)])
    erf = cx.one("Erf", [cx.one("Mul", [x, cx.scalar(1 / math.sqrt(2.0))])])
    return cx.one("Mul", [half, cx.one("Add", [erf, cx.scalar(1.0)])], out)


def _softplus(cx: Ctx, x: str, out: str | None = None) -> str:
    return cx.one("Softplus", [x], out)


@converts("Activation")
def activation(cx: Ctx, node: OpNode) -> Out:
    kind, x, out = node.p.get("act_type"), node.inputs[0], node.outputs[0]
    simple = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh",
              "softrelu": "Softplus", "softsign": "Softsign"}
    if kind in simple:
        return [cx.one(simple[kind], [x], out)]
    if kind == "log_sigmoid":
        return [cx.one("Neg", [_softplus(cx, cx.one("Neg", [x]))], out)]
    if kind == "mish":
        return [cx.one("Mul", [x, cx.one("Tanh", [_softplus(cx, x)])], out)]
    raise node.refuse(f"act_type {kind!r} has no ONNX form")


@converts("LeakyReLU", reads=None)
def leaky_relu(cx: Ctx, node: OpNode) -> Out:
    p = node.p
    kind, x, out = p.get("act_type") or "leaky", node.inputs[0], node.outputs[0]
    slope = float(p.get("slope", 0.25))
    if kind == "leaky":
        return [cx.one("LeakyRelu", [x], out, alpha=slope)]
    if kind == "elu":
        return [cx.one("Elu", [x], out, alpha=slope)]
    if kind == "selu":
        return [cx.one("Selu", [x], out, alpha=1.6732632423543772,
                       gamma=1.0507009873554805)]
    if kind == "gelu":
        return [_gelu(cx, x, out)]
    if kind == "rrelu":             # inference: the mean of the bounds
        mean = (float(p.get("lower_bound", 0.125)) + float(p.get("upper_bound", 0.334))) / 2
        return [cx.one("LeakyRelu", [x], out, alpha=mean)]
    if kind == "prelu":
        gamma = node.inputs[1]
        count = node.in_shapes[1][0] if node.in_shapes[1] else 1
        if node.rank() > 2 and count > 1:
            gamma = cx.reshape(gamma, _channel_shape(node.rank(), 1, count)[1:])
        elif node.rank() == 2 and count > 1:
            gamma = cx.reshape(gamma, [count])
        return [cx.one("PRelu", [x, gamma], out)]
    raise node.refuse(f"act_type {kind!r} has no ONNX form")


@converts("Dropout")
def dropout(cx: Ctx, node: OpNode) -> Out:
    if node.p.get("mode") == "always":
        cx.note(f"Dropout '{node.name}' with mode='always' (random at inference too) "
                "exported as the identity")
    return [cx.identity(node.inputs[0], node.outputs[0]), None]


@converts("Flatten")
def flatten(cx: Ctx, node: OpNode) -> Out:
    return [cx.one("Flatten", node.inputs[:1], node.outputs[0], axis=1)]


def softmax_over(cx: Ctx, x: str, axis: int, out: str | None, log: bool = False,
                 temperature: float | None = None) -> str:
    if temperature not in (None, 1.0):
        x = cx.one("Div", [x, cx.scalar(float(temperature or 1.0))])
    return cx.one("LogSoftmax" if log else "Softmax", [x], out, axis=axis)


@converts("softmax", "log_softmax")
def softmax(cx: Ctx, node: OpNode) -> Out:
    """``exp(x/t) / sum exp(x/t)`` along ``axis`` (its log for log_softmax), in
    ``dtype`` when given.  With ``use_length`` (softmax only) a second input holds, per
    row along ``axis``, how many leading entries count (truncated to an integer): the
    rest are masked out of the sum and written as 0."""
    p = node.p
    x = node.inputs[0]
    if p.get("dtype") and p["dtype"] != node.in_dtypes[0]:
        x = cx.cast(x, p["dtype"])
    axis = int(p.get("axis", -1)) % node.rank()
    log = node.op == "log_softmax"
    if not p.get("use_length"):
        return [softmax_over(cx, x, axis, node.outputs[0], log, p.get("temperature"))]
    import numpy as np

    dtype = node.out_dtypes[0] or "float32"
    rank, size = node.rank(), node.in_shapes[0][axis]
    lens = cx.cast(node.inputs[1], "int64")
    lens = cx.unsqueeze(lens, [axis]) if rank > 1 else cx.reshape(lens, [1])
    positions = cx.const(np.arange(size).reshape(_channel_shape(rank, axis, size)),
                         "int64")
    mask = cx.one("Less", [positions, lens], hint=node.name)
    if p.get("temperature") not in (None, 1.0):
        x = cx.one("Div", [x, cx.scalar(float(p["temperature"]), dtype)])
    x = cx.one("Where", [mask, x, cx.const(float(np.finfo(dtype).min), dtype)])
    y = softmax_over(cx, x, axis, None, log)
    return [cx.one("Where", [mask, y, cx.const(0.0, dtype)], node.outputs[0])]


@converts("SoftmaxActivation")
def softmax_activation(cx: Ctx, node: OpNode) -> Out:
    """'channel': softmax along axis 1; 'instance': MXNet flattens to 2-D keeping the
    LAST axis (mshadow's FlatTo2D), so it is a softmax along the last axis."""
    axis = 1 if node.p.get("mode") == "channel" else -1
    return [cx.one("Softmax", node.inputs[:1], node.outputs[0], axis=axis)]


@converts("LRN")
def lrn(cx: Ctx, node: OpNode) -> Out:
    p = node.p
    return [cx.one("LRN", node.inputs[:1], node.outputs[0], alpha=float(p.get("alpha", 1e-4)),
                   beta=float(p.get("beta", 0.75)), bias=float(p.get("knorm", 2.0)),
                   size=int(p["nsize"])), None]


@converts("InstanceNorm")
def instance_norm(cx: Ctx, node: OpNode) -> Out:
    return [cx.one("InstanceNormalization", node.inputs[:3], node.outputs[0],
                   epsilon=float(node.p.get("eps", 1e-3)))]


@converts("LayerNorm")
def layer_norm(cx: Ctx, node: OpNode) -> Out:
    p = node.p
    x, gamma, beta = node.inputs[:3]
    rank = node.rank()
    axis = int(p.get("axis", -1)) % rank
    eps = float(p.get("eps", 1e-5))
    if axis == rank - 1 and cx.opset >= 17:
        y = cx.one("LayerNormalization", [x, gamma, beta], node.outputs[0], axis=axis,
                   epsilon=eps)
        return [y, None, None]
    mean = cx.reduce("ReduceMean", x, [axis], True)
    d = cx.one("Sub", [x, mean])
    var = cx.reduce("ReduceMean", cx.one("Mul", [d, d]), [axis], True)
    norm = cx.one("Div", [d, cx.one("Sqrt", [cx.one("Add", [var, cx.scalar(eps)])])])
    if axis != rank - 1:
        shape = _channel_shape(rank, axis, node.in_shapes[0][axis])
        gamma, beta = cx.reshape(gamma, shape), cx.reshape(beta, shape)
    y = cx.one("Add", [cx.one("Mul", [norm, gamma]), beta], node.outputs[0])
    return [y, None, None]


@converts("L2Normalization")
def l2_normalization(cx: Ctx, node: OpNode) -> Out:
    mode = node.p.get("mode") or "instance"
    x, rank = node.inputs[0], node.rank()
    axes = list(range(1, rank)) if mode == "instance" else [1] if mode == "channel" \
        else list(range(2, rank))
    total = cx.reduce("ReduceSum", cx.one("Mul", [x, x]), axes, True)
    norm = cx.one("Sqrt", [cx.one("Add", [total, cx.scalar(float(node.p.get("eps",
                                                                           1e-10)))])])
    return [cx.one("Div", [x, norm], node.outputs[0]), None]

