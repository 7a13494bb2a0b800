"""Rules for the quantized layers with weights or windows: ``_contrib_quantized_conv``,
``_contrib_quantized_fully_connected`` and ``_contrib_quantized_pooling``; each carries
its data's (and weight's, bias's) min/max as extra inputs and outputs.  C++ arithmetic
is kept where MXNet computes a shape from unknown dimensions (-1): a result below -1 is
what MXNet then refuses.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math

from mxexplorer.core.ops.base import Call, Rule, fmt, table
from mxexplorer.core.ops.quantized.helpers import (
    F32,
    FAMILY,
    ONE,
    QUANT,
    _bad_dims,
    _cdiv,
    _count,
    _need_type,
    _overwrite_outs,
    _ranges,
)


# ------------------------------------------------------------------ quantized conv
def _window_lists(c: Call, k: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """stride, dilate and pad with MXNet's defaults for a ``k``-d kernel, checked to have
    ``k`` values (ConvolutionParamParser)."""
    out: list[tuple[int, ...]] = []
    for key, default in (("stride", 1), ("dilate", 1), ("pad", 0)):
        value = c.p.get(key) or ()
        if len(value) == 0:
            value = (default,) * k
        elif len(value) != k:
            c.fail(f"{key} {tuple(value)} has {len(value)} values, but the kernel "
                   f"{tuple(c.p['kernel'])} has {k}: give {k}", attr=key)
        out.append(tuple(value))
    return out[0], out[1], out[2]


def _conv_parsed(c: Call) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...],
                                      tuple[int, ...]]:
    """kernel, stride, dilate, pad as ``ConvolutionParamParser`` accepts them, and the
    input count (both checked before any inference)."""
    kernel = tuple(c.p["kernel"] or ())
    k = len(kernel)
    if k not in (1, 2, 3):
        c.fail(f"kernel {kernel} has {k} dimensions: a convolution takes 1 to 3",
               attr="kernel")
    stride, dilate, pad = _window_lists(c, k)
    no_bias = bool(c.p["no_bias"])
    _count(c, 6 if no_bias else 9,
           "data, weight, min/max of data and weight" if no_bias
           else "data, weight, bias and their min/max")
    return kernel, stride, dilate, pad


def quantized_conv_shape(c: Call) -> None:
    """``QuantizedConvShape`` (MKL-DNN build): NCHW or NCDHW data of known rank, one
    group; the weight is (num_filter, channels, *kernel); no back inference to the data."""
    p = c.p
    kernel, stride, dilate, pad = _conv_parsed(c)
    k = len(kernel)
    if p["num_group"] != 1:
        c.fail(f"num_group={p['num_group']}: a quantized convolution has one group only "
               "(num_group=1)", attr="num_group")
    no_bias = bool(p["no_bias"])
    layout = p.get("layout") or {1: "NCW", 2: "NCHW", 3: "NCDHW"}[k]
    if layout not in ("NCHW", "NCDHW"):
        c.fail(f"layout {layout}: a quantized convolution takes NCHW or NCDHW data "
               f"(with a 2-d or 3-d kernel)", attr="layout" if p.get("layout") else "kernel")
    data = c.ins[0]
    nd = None if data is None else len(data)
    if nd is None or nd not in (4, 5):
        what = "no known shape" if data is None else f"shape {fmt(data)}"
        c.fail(f"{c.input_label(0)} has {what}, but a quantized convolution needs 4-d "
               f"(NCHW) or 5-d (NCDHW) data", input=0)
    assert data is not None and nd is not None
    if stride and min(stride) == 0:
        c.fail(f"stride {stride} has a 0: strides must be 1 or more", attr="stride")
    if k < nd - 2:
        c.fail(f"the kernel {kernel} has {k} dimensions, but the {nd}-d data has {nd - 2} "
               f"spatial ones", attr="kernel")
    k = nd - 2          # a 3-d kernel on 4-d data: MXNet reads its first two values
    kernel = kernel[:k]
    spatial = []
    for j in range(k):
        d = data[2 + j]
        eff = 1 + (kernel[j] - 1) * dilate[j]
        spatial.append(_cdiv(d + 2 * pad[j] - eff, stride[j]) + 1)
    out = (data[0], p["num_filter"], *spatial)
    if _bad_dims(out):
        unknown = data[2 + next(j for j in range(k) if spatial[j] < -1)] < 0
        padded = fmt(tuple(data[2 + j] + 2 * pad[j] if data[2 + j] >= 0 else -1
                           for j in range(k)))
        if unknown:
            c.fail(f"{c.input_label(0)} has shape {fmt(data)}: a quantized convolution "
                   "computes its output size even from unknown spatial sizes, and here it "
                   "comes out negative, which MXNet refuses; give the data's full shape",
                   input=0)
        c.fail(f"the kernel {kernel}" + (f" with dilate {dilate[:k]}" if max(dilate) > 1
                                         else "")
               + f" is larger than the padded input {padded}", attr="kernel")
    c.set_in(1, (p["num_filter"], data[1], *kernel), "the data and kernel make")
    end = 6 if no_bias else 9
    _ranges(c, 2 if no_bias else 3, end)
    if not no_bias:
        c.set_in(2, (p["num_filter"],), "num_filter makes")
    c.set_out(0, out)
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_conv_type(c: Call) -> None:
    _conv_parsed(c)
    no_bias = bool(c.p["no_bias"])
    c.set_in(1, "int8", "a quantized convolution takes")
    if not no_bias:
        c.set_in(2, "int8", "a quantized convolution takes")
    for i in range(2 if no_bias else 3, len(c.ins)):
        c.set_in(i, F32, "a min/max range input is")
    c.set_out(0, "int32")
    c.set_out(1, F32)
    c.set_out(2, F32)


# ---------------------------------------------------------- quantized fully connected
def quantized_fc_shape(c: Call) -> None:
    """``QuantizedFullyConnectedShape``: weight (num_hidden, features), where features
    are the data's last dimension (flatten=False) or all but the first, which must then
    be known; back from the output, the batch dimension only."""
    p = c.p
    no_bias = bool(p["no_bias"])
    n = 2 if no_bias else 3
    _count(c, 3 * n, "data, weight, " + ("" if no_bias else "bias, ") + "and their min/max")
    data = c.ins[0]
    if data is None:
        return
    hidden = p["num_hidden"]
    if not p["flatten"]:
        if len(data) == 0:
            c.fail(f"{c.input_label(0)} is a scalar (0-d): a fully connected layer needs "
                   "at least one dimension", input=0)
        features = data[-1]
    else:
        rest = data[1:]
        if any(d < 0 for d in rest):
            c.fail(f"{c.input_label(0)} has shape {fmt(data)}: a quantized fully connected "
                   "layer with flatten=True needs every dimension after the first known",
                   input=0)
        features = 1
        for d in rest:
            features *= d
    c.set_in(1, (hidden, features), "num_hidden and the data make")
    if not no_bias:
        c.set_in(2, (hidden,), "num_hidden makes")
    _ranges(c, n, 3 * n)
    if not p["flatten"]:
        c.set_out(0, tuple(data[:-1]) + (hidden,))
    else:
        c.set_out(0, (data[0] if data else -1, hidden))
    c.set_out(1, ONE)
    c.set_out(2, ONE)
    out = c.outs[0]
    if out is not None and len(out) > 0 and len(data) > 0:
        c.set_in(0, (out[0],) + tuple(data[1:]), "the output's batch size makes")


def quantized_fc_type(c: Call) -> None:
    n = 2 if c.p["no_bias"] else 3
    _count(c, 3 * n, "data, weight, " + ("" if n == 2 else "bias, ") + "and their min/max")
    _need_type(c, 0, QUANT, "a quantized fully connected layer")
    for i in range(1, n):
        c.set_in(i, "int8", "a quantized fully connected layer takes")
    for i in range(n, len(c.ins)):
        c.set_in(i, F32, "a min/max range input is")
    c.set_out(0, "int32")
    c.set_out(1, F32)
    c.set_out(2, F32)


# ------------------------------------------------------------------ quantized pooling
def _pool_parsed(c: Call) -> tuple[tuple[int, ...], str | None, tuple[int, ...],
                                      tuple[int, ...]]:
    """kernel, layout, stride and pad as ``PoolingParamParser`` settles them (the layout
    from the kernel's rank when not given; stride 1 and pad 0 of the kernel's rank)."""
    p = c.p
    kernel = tuple(p.get("kernel") or ())
    k = len(kernel)
    layout = p.get("layout")
    if k > 0 and layout is None:
        if k > 3:
            c.fail(f"kernel {kernel} has {k} dimensions: pooling takes 1 to 3", attr="kernel")
        layout = {1: "NCW", 2: "NCHW", 3: "NCDHW"}[k]
    if k not in (1, 2, 3) and not p["global_pool"]:
        c.fail(f"kernel {kernel or '()'} has {k} dimensions: pooling takes 1 to 3 (or "
               "global_pool)", attr="kernel")
    n = k if k in (1, 2) else 3
    stride = tuple(p.get("stride") or ()) or (1,) * n
    pad = tuple(p.get("pad") or ()) or (0,) * n
    return kernel, layout, stride, pad


def quantized_pooling_shape(c: Call) -> None:
    """``QuantizedPoolingShape`` (MKL-DNN build): 4-d/5-d NCHW/NCDHW data of fully known
    shape, a 2-d/3-d kernel that fits the padded input; the outputs are replaced."""
    p = c.p
    kernel, layout, stride, pad = _pool_parsed(c)
    _count(c, 3, "data, min_data, max_data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    nd = len(data)
    if nd not in (4, 5):
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but a quantized pooling needs "
               "4-d (NCHW) or 5-d (NCDHW) data", input=0)
    if layout is None:
        layout = {4: "NCHW", 5: "NCDHW"}[nd]
    if layout not in ("NCHW", "NCDHW"):
        c.fail(f"layout {layout}: a quantized pooling takes NCHW or NCDHW data",
               attr="layout" if p.get("layout") else "kernel")
    k = len(kernel)
    if k not in (2, 3):
        c.fail(f"kernel {kernel or '()'} has {k} dimensions: a quantized pooling takes a "
               "2-d or 3-d kernel (give one even with global_pool)", attr="kernel")
    n_sp = nd - 2
    if k < n_sp and not p["global_pool"]:
        c.fail(f"the kernel {kernel} has {k} dimensions, but the {nd}-d data has {n_sp} "
               "spatial ones", attr="kernel")
    for key, value in (("stride", stride), ("pad", pad)):
        if len(value) < k:
            c.fail(f"{key} {value} has {len(value)} values, but the kernel {kernel} has {k}:"
                   f" give {k}", attr=key)
    # the kernel's values are checked against the last k dimensions (a 3-d kernel on
    # 4-d data reaches into the channels), the output uses its first nd - 2
    for j in range(k):
        d = data[nd - k + j]
        if kernel[j] > d + 2 * pad[j]:
            c.fail(f"kernel {kernel} is larger than the padded input "
                   f"{fmt(tuple(data[nd - k + i] + 2 * pad[i] for i in range(k)))}",
                   attr="kernel")
    if p["global_pool"]:
        spatial = [1] * n_sp
    else:
        if min(stride[:n_sp]) <= 0:
            c.fail(f"stride {stride} has a 0: strides must be 1 or more", attr="stride")
        span = [data[2 + j] + 2 * pad[j] - kernel[j] for j in range(n_sp)]
        if p["pooling_convention"] == "valid":
            spatial = [1 + span[j] // stride[j] for j in range(n_sp)]
        else:   # full (and 'same', which this op computes as full)
            spatial = [1 + math.ceil(span[j] / stride[j]) for j in range(n_sp)]
    _ranges(c, 1, 3)
    _overwrite_outs(c, [(data[0], data[1], *spatial), ONE, ONE])


def quantized_pooling_type(c: Call) -> None:
    _pool_parsed(c)
    _count(c, 3, "data, min_data, max_data")
    if c.p["pool_type"] not in ("max", "avg"):
        c.fail(f"pool_type={c.p['pool_type']}: a quantized pooling does max or avg only",
               attr="pool_type")
    if c.ins[0] is not None:
        c.set_out(0, c.ins[0])
    _ranges(c, 1, 3, F32)
    c.set_out(1, F32)
    c.set_out(2, F32)


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_contrib_quantized_conv",), quantized_conv_shape, quantized_conv_type),
    **table(FAMILY, ("_contrib_quantized_fully_connected",), quantized_fc_shape,
            quantized_fc_type),
    **table(FAMILY, ("_contrib_quantized_pooling",), quantized_pooling_shape,
            quantized_pooling_type),
}
