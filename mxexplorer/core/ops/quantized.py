"""Rules for MXNet 1.9.1's int8 ops: ``_contrib_quantize`` (and ``_v2``, ``_asym``),
``_contrib_dequantize``, ``_contrib_requantize``, every ``_contrib_quantized_*`` op (each
carries its data's min/max as extra inputs and outputs), ``_contrib_calibrate_entropy``,
and the fused MKL-DNN subgraph ops ``_sg_mkldnn_conv``, ``_sg_mkldnn_fully_connected``,
``_sg_mkldnn_selfatt_qk`` and ``_sg_mkldnn_selfatt_valatt``.

A fused op infers its shapes the way MXNet does: by inferring the small graph it fuses
(the node's ``subgraphs`` field: Convolution, BatchNorm, Activation, the sum ...) with
the engine's own rules (an inner op without one is asked of the pass's oracle,
``Call.oracle``), then adding the min/max entries of the quantized form.  How many
outputs these ops have, their names, their inputs' names and which inputs are auxiliary
states are the graph layer's (:mod:`mxexplorer.core.graph.fused`, which also reads the
fusion flags and the fused graph these rules build on).

C++ arithmetic is kept where MXNet computes a shape from unknown dimensions (-1): a
result below -1 is what MXNet then refuses.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from mxexplorer.core.graph import fused
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.base import (
    Call,
    MaybeShape,
    Rule,
    RuleError,
    Shape,
    fmt,
    table,
)
from mxexplorer.core.ops.params import parse_float

FAMILY = "quantized"
ONE: Shape = (1,)
F32 = "float32"
QUANT = ("int8", "uint8")


# ------------------------------------------------------------------ small helpers
def _cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _bad_dims(shape: MaybeShape) -> bool:
    return shape is not None and any(d < -1 for d in shape)


def _put_out(c: Call, i: int, shape: Any, why: str = "") -> None:
    if i < len(c.outs):
        c.set_out(i, shape, why)


def _overwrite_outs(c: Call, values: Sequence[Any]) -> None:
    """MXNet's ``out_attrs->clear(); push_back(...)``: the outputs are replaced, unchecked."""
    for i, v in enumerate(values):
        if i < len(c.outs):
            c.outs[i] = v


def _ranges(c: Call, first: int, last: int, value: Any = ONE) -> None:
    """Inputs ``first``..``last - 1`` are the (1,)-shaped min/max scalars (or float32)."""
    for i in range(first, min(last, len(c.ins))):
        c.set_in(i, value, "a min/max range input is")


def _count(c: Call, n: int, names: str) -> None:
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} inputs, but this layer takes {n} ({names})")


def _need_type(c: Call, i: int, allowed: Sequence[str], what: str) -> None:
    """MXNet's ``CHECK(type == ...)``: the type must be known already and be one of these."""
    t = c.ins[i] if i < len(c.ins) else None
    if t not in allowed:
        label = c.input_label(i)
        shown = " or ".join(allowed)
        if t is None:
            c.fail(f"{label} has no known type, but {what} needs {shown} there: give the "
                   f"input's dtype", input=i)
        c.fail(f"{label} has type {t}, but {what} takes {shown}", input=i)


def _opt_float(c: Call, key: str) -> float | None:
    text = c.attrs.get(key)
    if text is None or text == "None":
        return None
    try:
        return parse_float(str(text))
    except ValueError:
        raise RuleError(f"attribute {key}={text!r} is not a number", attr=key) from None


def _calibrated(c: Call) -> bool:
    return c.p.get("min_calib_range") is not None and c.p.get("max_calib_range") is not None


def _out_type(c: Call) -> str:
    """``GetQuantizeOutputType``: ``auto`` is uint8 when the calibrated minimum is 0 or
    more, int8 otherwise."""
    kind = c.p.get("out_type") or "int8"
    if kind == "auto":
        low = c.p.get("min_calib_range")
        if low is not None and c.p.get("max_calib_range") is not None and low >= 0.0:
            return "uint8"
        return "int8"
    return str(kind)


# ------------------------------------------------------ quantize / dequantize / requantize
def quantize_shape(c: Call) -> None:
    """``QuantizeShape`` (quantize, requantize), ``DequantizeShape`` and the v2/asym
    forms: the data's shape passes through; back from the output, only the batch
    dimension; the min/max entries are (1,)."""
    _quantize_count(c)
    n_range = len(c.ins) - 1
    data = c.ins[0]
    _ranges(c, 1, 1 + n_range)
    c.set_out(0, data, "(the data's shape)")
    for i in range(1, len(c.outs)):
        c.set_out(i, ONE)
    out = c.outs[0]
    if data is not None and out is not None and len(out) > 0:
        c.set_in(0, (out[0],) + tuple(data[1:]), "the output's batch size makes")


def _quantize_count(c: Call) -> None:
    n_range = 0 if c.op in ("_contrib_quantize_v2", "_contrib_quantize_asym") else 2
    _count(c, 1 + n_range, "data, min_range, max_range" if n_range else "data")


def quantize_type(c: Call) -> None:
    """``_contrib_quantize``: float32 data and ranges in; uint8 or int8 out."""
    _quantize_count(c)
    for i in range(len(c.ins)):
        c.set_in(i, F32, "quantize takes")
    c.set_out(0, _out_type(c))
    for i in range(1, len(c.outs)):
        c.set_out(i, F32)


def quantize_v2_type(c: Call) -> None:
    _quantize_count(c)
    _need_type(c, 0, (F32, "uint8", "int8"), "quantize_v2")
    c.set_out(0, _out_type(c))
    c.set_out(1, F32)
    c.set_out(2, F32)


def quantize_asym_type(c: Call) -> None:
    _quantize_count(c)
    _need_type(c, 0, (F32,), "quantize_asym")
    c.set_out(0, "uint8")
    c.set_out(1, F32)
    c.set_out(2, F32)


def dequantize_type(c: Call) -> None:
    _quantize_count(c)
    _need_type(c, 0, QUANT, "dequantize")
    c.set_in(1, F32, "a range input is")
    c.set_in(2, F32, "a range input is")
    c.set_out(0, F32)


def requantize_type(c: Call) -> None:
    _quantize_count(c)
    c.set_in(0, "int32", "requantize takes")
    c.set_in(1, F32, "a range input is")
    c.set_in(2, F32, "a range input is")
    c.set_out(0, _out_type(c))
    c.set_out(1, F32)
    c.set_out(2, F32)


def calibrate_shape(c: Call) -> None:
    _count(c, 2, "hist, hist_edges")
    c.set_out(0, ONE)
    c.set_out(1, ONE)


def calibrate_type(c: Call) -> None:
    _count(c, 2, "hist, hist_edges")
    _need_type(c, 0, (F32,), "calibrate_entropy")
    c.set_in(1, F32, "calibrate_entropy takes")
    c.set_out(0, F32)
    c.set_out(1, F32)


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


# --------------------------------------------------- quantized activation and flatten
def quantized_act_shape(c: Call) -> None:
    _count(c, 3, "data, min_data, max_data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    _ranges(c, 1, 3)
    _overwrite_outs(c, [data, ONE, ONE])


def quantized_act_type(c: Call) -> None:
    _count(c, 3, "data, min_data, max_data")
    if c.p["act_type"] != "relu":
        c.fail(f"act_type={c.p['act_type']}: a quantized activation does relu only",
               attr="act_type")
    c.set_out(0, "int8")
    _ranges(c, 1, 3, F32)
    c.set_out(1, F32)
    c.set_out(2, F32)


def quantized_flatten_shape(c: Call) -> None:
    _count(c, 3, "data, min_data, max_data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    if len(data) == 0:
        c.fail(f"{c.input_label(0)} is a scalar (0-d): flatten needs at least one "
               "dimension", input=0)
    rest = 1
    for d in data[1:]:
        rest *= d
    _ranges(c, 1, 3)
    c.set_out(0, (data[0], rest))
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_flatten_type(c: Call) -> None:
    _count(c, 3, "data, min_data, max_data")
    _ranges(c, 1, 3, F32)
    if c.ins[0] is not None:
        c.set_out(0, c.ins[0])
    c.set_out(1, F32)
    c.set_out(2, F32)


# ------------------------------------------------------------------- quantized concat
def _assign_loose(y: MaybeShape, x: MaybeShape) -> MaybeShape:
    """MXNet's ``shape_assign`` with its answer ignored: unknown parts of ``y`` filled
    from ``x`` up to the first disagreement."""
    if y is None:
        return x
    if x is None or len(y) != len(x):
        return y
    out = list(y)
    for i, (a, b) in enumerate(zip(y, x)):
        if a == -1:
            out[i] = b
        elif a != b and b >= 0:
            break
    return tuple(out)


def _axis(c: Call, ndim: int) -> int:
    dim = int(c.p["dim"])
    if not -ndim <= dim < ndim:
        c.fail(f"dim {dim} is out of range for {ndim}-d inputs: use a dim from {-ndim} to "
               f"{ndim - 1}", attr="dim")
    return dim + ndim if dim < 0 else dim


def quantized_concat_shape(c: Call) -> None:
    """``QuantizedConcatShape``: the float Concat's rule on the first ``num_args`` inputs
    (forward, and the output back into unknown inputs), then (1,) for every min/max."""
    n = int(c.p["num_args"])
    _count(c, 3 * n, f"{n} data inputs, then a min and a max for each")
    dshape: MaybeShape = None
    size = 0
    unknown = False
    axis = -1
    for i in range(n):
        s = c.ins[i]
        if s is not None and len(s) > 0:
            axis = _axis(c, len(s))
            unknown = unknown or s[axis] == -1
            size += s[axis]
            dshape = _assign_loose(dshape, s[:axis] + (-1,) + s[axis + 1:])
    out = c.outs[0]
    if out is not None and len(out) > 0:
        axis = _axis(c, len(out))
        dshape = _assign_loose(dshape, out[:axis] + (-1,) + out[axis + 1:])
    if dshape is None:
        return
    for i in range(n):
        c.set_in(i, dshape, "the other inputs have (outside the dim axis)")
    if not unknown:
        dshape = dshape[:axis] + (size,) + dshape[axis + 1:]
    c.set_out(0, dshape, "(the inputs joined along dim)")
    _ranges(c, n, 3 * n)
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_concat_type(c: Call) -> None:
    n = int(c.p["num_args"])
    _count(c, 3 * n, f"{n} data inputs, then a min and a max for each")
    dtype = "uint8"
    for i in range(min(n, len(c.ins))):
        if c.ins[i] == "int8":
            dtype = "int8"
        else:
            c.set_in(i, "uint8", "a quantized concat takes int8, else")
    c.set_out(0, dtype)
    c.set_out(1, F32)
    c.set_out(2, F32)


# ----------------------------------------------------- quantized elementwise add / mul
def quantized_add_shape(c: Call) -> None:
    """``_contrib_quantized_elemwise_add``: both operands exactly the same (unknown parts
    included: MXNet compares them as they stand, no filling, and two shapes of unknown
    rank differ); the output follows the first."""
    _count(c, 6, "lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max")
    if c.ins[0] is None or c.ins[0] != c.ins[1]:
        c.fail(f"{c.input_label(0)} has shape {fmt(c.ins[0])} and {c.input_label(1)} "
               f"{fmt(c.ins[1])}: a quantized add needs both the same when it is reached "
               "(MXNet compares them as they stand, unknown parts included, and refuses "
               "two unknown shapes)", input=1)
    _ranges(c, 2, 6)
    c.set_out(0, c.ins[0])
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_add_type(c: Call) -> None:
    _count(c, 6, "lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max")
    for i in range(2):
        if c.ins[i] != "int8":
            c.set_in(i, "uint8", "a quantized add takes int8, else")
    dtype = "int32"
    if _calibrated(c):
        dtype = c.ins[0] if c.ins[0] == c.ins[1] else "int8"
    c.set_out(0, dtype)
    c.set_out(1, F32)
    c.set_out(2, F32)


def quantized_mul_shape(c: Call) -> None:
    _count(c, 6, "lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max")
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None:
        return
    if len(a) != len(b):
        c.fail(f"{c.input_label(0)} has shape {fmt(a)} and {c.input_label(1)} {fmt(b)}: a "
               "quantized multiply does not broadcast; give both the same shape", input=1)
    if a != b:
        c.fail(f"{c.input_label(0)} has shape {fmt(a)} and {c.input_label(1)} {fmt(b)}: a "
               "quantized multiply needs both the same (and both known as far as either "
               "is)", input=1)
    _ranges(c, 2, 6)
    c.set_out(0, a)
    if not c.p["enable_float_output"]:
        _put_out(c, 1, ONE)
        _put_out(c, 2, ONE)


def quantized_mul_type(c: Call) -> None:
    _ranges(c, 2, 6, F32)
    if c.p["enable_float_output"]:
        c.set_out(0, F32)
        return
    c.set_out(0, "int8" if _calibrated(c) else "int32")
    _put_out(c, 1, F32)
    _put_out(c, 2, F32)


# ------------------------------------------------------------- quantized embedding
def quantized_embedding_shape(c: Call) -> None:
    _count(c, 4, "data, weight, min_weight, max_weight")
    data = c.ins[0]
    if data is None:
        return
    c.set_in(1, (c.p["input_dim"], c.p["output_dim"]), "input_dim and output_dim make")
    _ranges(c, 2, 4)
    _overwrite_outs(c, [tuple(data) + (c.p["output_dim"],), ONE, ONE])


def quantized_embedding_type(c: Call) -> None:
    _count(c, 4, "data, weight, min_weight, max_weight")
    if c.ins[0] is None:
        c.fail(f"{c.input_label(0)} has no known type, but a quantized embedding needs "
               "it: give the input's dtype", input=0)
    c.set_in(1, "int8", "a quantized embedding takes")
    _ranges(c, 2, 4, F32)
    _overwrite_outs(c, ["int8", F32, F32])


# ------------------------------------------------------------ quantized batch norm
def quantized_bn_shape(c: Call) -> None:
    _count(c, 7, "data, gamma, beta, moving_mean, moving_var, min_data, max_data")
    data = c.ins[0]
    if data is None:
        return
    axis = int(c.p["axis"])
    channel = axis + len(data) if axis < 0 else axis
    if channel >= len(data) or channel < 0:
        c.fail(f"axis {axis} is out of range for the {len(data)}-d data: use an axis from "
               f"{-len(data)} to {len(data) - 1}", attr="axis")
    ch = (data[channel],)
    for i in range(1, 5):
        c.set_in(i, ch, "the data's channels make")
    _ranges(c, 5, 7)
    c.set_out(0, data)
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_bn_type(c: Call) -> None:
    _count(c, 7, "data, gamma, beta, moving_mean, moving_var, min_data, max_data")
    _need_type(c, 0, QUANT, "a quantized batch norm")
    for i in range(1, 7):
        c.set_in(i, F32, "a quantized batch norm takes")
    c.set_out(0, "int8")
    c.set_out(1, F32)
    c.set_out(2, F32)


# ------------------------------------------------------------------- quantized rnn
def _rnn_param_size(layers: int, inp: int, state: int, dirs: int,
                    proj: int | None) -> int:
    """``GetRnnParamSize`` for an LSTM, with C++'s arithmetic on unknown (-1) sizes."""
    size = state * dirs * 4
    if proj is None:
        first = (inp + state + 2) * size
        other = (state * dirs + state + 2) * size
        return first + (layers - 1) * other
    first = (inp + proj + 2) * size
    other = (proj * dirs + proj + 2) * size
    return first + (layers - 1) * other + proj * state * layers * dirs


def _rnn_lstm(c: Call) -> None:
    if c.p["mode"] != "lstm":
        c.fail(f"mode={c.p['mode']}: the quantized RNN is an LSTM only (mode='lstm')",
               attr="mode")


def quantized_rnn_shape(c: Call) -> None:
    """``QuantizedRnnShape``: an LSTM over (steps, batch, features) uint8 data; states
    (layers x directions, batch, state_size), the flat float parameters; outputs
    replaced.  MXNet computes the parameter count from an unknown feature size as -1."""
    _rnn_lstm(c)
    p = c.p
    _count(c, 6, "data, parameters, state, state_cell, min_data, max_data")
    data = c.ins[0]
    if data is None:
        return
    if len(data) != 3:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but an RNN takes 3-d data "
               "(steps, batch, features)", input=0)
    dirs = 2 if p["bidirectional"] else 1
    layers = int(p["num_layers"])
    state = int(p["state_size"])
    batch = data[1]
    c.set_in(2, (dirs * layers, batch, state), "the layers, batch and state_size make")
    c.set_in(3, (dirs * layers, batch, state), "the layers, batch and state_size make")
    n_params = _rnn_param_size(layers, data[2], state, dirs, p.get("projection_size"))
    if n_params < -1:
        c.fail(f"the parameters would have {n_params} values: num_layers={layers}, "
               f"state_size={state} and {data[2]} features make no LSTM", attr="num_layers")
    c.set_in(1, (n_params,), "the layers and sizes make")
    base = 5 if p["use_sequence_length"] else 4
    _ranges(c, base, 6)
    outs: list[Shape] = [(data[0], batch, dirs * state)]
    if p["state_outputs"]:
        outs += [(dirs * layers, batch, state)] * 2
    _overwrite_outs(c, outs)


def quantized_rnn_type(c: Call) -> None:
    _rnn_lstm(c)
    _count(c, 6, "data, parameters, state, state_cell, min_data, max_data")
    _need_type(c, 0, ("uint8",), "a quantized RNN")
    for i in (1, 2, 3):
        c.set_in(i, F32, "a quantized RNN takes")
    base = 5 if c.p["use_sequence_length"] else 4
    _ranges(c, base, 6, F32)
    for i in range(len(c.outs)):
        c.set_out(i, F32)


# ===================================================================== fused subgraphs
class _Sub(fused.Subgraph):
    """A node's fused graph (:class:`~mxexplorer.core.graph.fused.Subgraph`: its nodes
    in MXNet's order and its variables, the fused op's inputs), inferred by the engine's
    rules."""

    def infer(self, c: Call, ins: Sequence[Any], outs: Sequence[Any]
              ) -> tuple[list[Any], list[Any]]:
        """MXNet's ``DefaultSubgraphOpShape``/``Type``: the fused graph inferred with these
        input and output values (by the engine's rules; an inner op without one is asked
        of the outer pass's oracle, ``c.oracle``); its variables' and heads' values merged
        back."""
        if len(ins) != len(self.variables):
            raise RuleError(f"has {len(ins)} inputs, but its fused graph takes "
                            f"{len(self.variables)} ({self.names()})")
        hints = self.row_hints
        g = engine.graph_of(self.nodes, self.order,
                            (lambda nid: hints[nid]) if hints is not None else None)
        given: dict[int, Any] = {nid: v for nid, v in zip(self.variables, ins) if v is not None}
        for (nid, idx), v in zip(self.heads, outs):
            if v is not None and idx == 0 and self.nodes[nid].op != "null":
                given[nid] = v
        run = engine.infer_shapes if c.kind == "shape" else engine.infer_dtypes
        got = run(g, given, c.oracle)
        if got.failure is not None:
            bad = self.nodes[got.failure.node]
            raise RuleError(f"inside the fused layer, {bad.op} {bad.name!r}: "
                            f"{got.failure.error.message}")
        if got.unruled:         # not known here: say which layer, not a consequence later
            bad = self.nodes[got.unruled[0]]
            raise RuleError(f"mxexplorer has no {c.kind} rule for {bad.op} (inside the fused "
                            f"layer, {bad.name!r}), and MXNet, which could answer, is not "
                            "available")
        new_ins = [got.values.get((nid, 0)) for nid in self.variables]
        new_outs = [got.values.get(h) for h in self.heads]
        return new_ins, new_outs


def _fused_error(exc: fused.FusedError) -> RuleError:
    return RuleError(exc.message, attr=exc.attr)


def _subgraph(extra: Mapping[str, Any] | None) -> _Sub | None:
    try:
        return fused.read_subgraph((extra or {}).get("subgraphs"), _Sub)
    except fused.FusedError as exc:
        raise _fused_error(exc) from None


def _need_sub(c: Call) -> _Sub:
    sub = _subgraph(c.extra)
    if sub is None:
        c.fail(f"{c.op} is a fused layer, but this node has no 'subgraphs' field with the "
               "layers it fuses")
    assert sub is not None
    return sub


# ------------------------------------------------------------------ _sg_mkldnn_conv
class ConvFusion(fused.ConvFlags):
    """What ``SgMKLDNNConvParamParser`` reads from a ``_sg_mkldnn_conv`` node (the flags
    and no_bias: :class:`~mxexplorer.core.graph.fused.ConvFlags`), with the fused
    activations' MKL-DNN post-ops."""

    def __init__(self, attrs: Mapping[str, str], sub: _Sub | None):
        try:
            super().__init__(attrs, sub)
        except fused.FusedError as exc:
            raise _fused_error(exc) from None
        self.act: tuple[str, float] | None = None
        self.postsum_act: tuple[str, float] | None = None
        if sub is None:
            return
        seen_act = False
        for nid in sub.ops():
            node = sub.nodes[nid]
            if node.op == "BatchNorm" and not self.with_bn:
                raise RuleError("the fused graph holds a BatchNorm, but with_bn is not set",
                                attr="with_bn")
            if node.op in ("Activation", "LeakyReLU", "clip"):
                alg = _eltwise(node.op, node.attrs)
                if self.with_act and not seen_act:
                    self.act = alg
                else:
                    self.postsum_act = alg
                seen_act = True

    def output_uint8(self) -> bool:
        if not self.with_sum and self.with_act:
            if self.act is None:
                raise RuleError("with_act is set, but the fused graph holds no activation",
                                attr="with_act")
            return _unsigned(self.act)
        if self.with_postsum_act:
            if self.postsum_act is None:
                raise RuleError("with_postsum_act is set, but the fused graph holds no "
                                "activation after the sum", attr="with_postsum_act")
            return _unsigned(self.postsum_act)
        return False


_ACT_ALG = {"relu": "relu", "sigmoid": "logistic", "tanh": "tanh", "softrelu": "soft_relu"}
_LEAKY_ALG = {"leaky": "relu", "elu": "elu", "gelu": "gelu"}


def _eltwise(op: str, attrs: Mapping[str, str]) -> tuple[str, float]:
    """The MKL-DNN post-op an activation node becomes: (algorithm, alpha)."""
    if op == "Activation":
        kind = str(attrs.get("act_type", ""))
        if kind not in _ACT_ALG:
            raise RuleError(f"the fused activation's act_type {kind!r} cannot be fused "
                            "(relu, sigmoid, tanh or softrelu)", attr="act_type")
        return _ACT_ALG[kind], 0.0
    if op == "LeakyReLU":
        kind = str(attrs.get("act_type", "leaky"))
        if kind not in _LEAKY_ALG:
            raise RuleError(f"the fused LeakyReLU's act_type {kind!r} cannot be fused "
                            "(leaky, elu or gelu)", attr="act_type")
        slope = attrs.get("slope")
        try:
            alpha = parse_float(str(slope)) if slope is not None else 0.25
        except ValueError:
            raise RuleError(f"attribute slope={slope!r} is not a number", attr="slope") from None
        return _LEAKY_ALG[kind], alpha
    if op == "clip":
        return "bounded_relu", 0.0
    if op in ("square", "sqrt", "exp", "abs"):
        return op, 0.0
    raise RuleError(f"{op} cannot be fused into this layer")


def _unsigned(alg: tuple[str, float]) -> bool:
    name, alpha = alg
    return (name == "relu" and alpha == 0.0) or name in ("logistic", "soft_relu",
                                                         "bounded_relu")


def sg_conv_shape(c: Call) -> None:
    sub = _need_sub(c)
    f = ConvFusion(c.attrs, sub)
    if not f.quantized:
        ins, outs = sub.infer(c, c.ins, c.outs[:1])
        for i, v in enumerate(ins):
            c.set_in(i, v, "the fused layers need")
        c.set_out(0, outs[0])
        return
    extra = 4 if f.with_sum else 2
    _count(c, len(sub.variables) + extra,
           f"{sub.names()}, then the min/max of the data" + (" and the sum"
                                                             if f.with_sum else ""))
    n_base = len(c.ins) - extra
    ins, outs = sub.infer(c, c.ins[:n_base], [c.outs[0]])
    for i in range(n_base, len(c.ins)):
        c.set_in(i, ONE, "a min/max range input is")
    c.ins[:n_base] = ins
    c.outs[0] = outs[0]
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def sg_conv_type(c: Call) -> None:
    sub = _need_sub(c)
    f = ConvFusion(c.attrs, sub)
    if not f.quantized:
        ins, outs = sub.infer(c, c.ins, c.outs[:1])
        for i, v in enumerate(ins):
            c.set_in(i, v, "the fused layers need")
        c.set_out(0, outs[0])
        return
    extra = 4 if f.with_sum else 2
    n_base = len(c.ins) - extra
    base = list(c.ins[:n_base])
    orig_data = base[0]
    base[0] = F32
    s = f.sum_index()
    orig_sum = base[s] if f.with_sum and s < n_base else None
    if f.with_sum and s < n_base:
        base[s] = F32
    ins, _ = sub.infer(c, base, [c.outs[0]])
    ins[0] = orig_data
    if f.with_sum and s < n_base:
        ins[s] = orig_sum
    for i in range(n_base, len(c.ins)):
        c.set_in(i, F32, "a min/max range input is")
    c.ins[:n_base] = ins
    if _opt_float(c, "min_calib_range") is not None and \
            _opt_float(c, "max_calib_range") is not None:
        c.set_out(0, "uint8" if f.output_uint8() else "int8")
    else:
        c.set_out(0, "int32")
    c.set_out(1, F32)
    c.set_out(2, F32)


# ---------------------------------------------------------- _sg_mkldnn_fully_connected
class FCFusion(fused.FCFlags):
    """What ``SgMKLDNNFCParamParser`` reads from a ``_sg_mkldnn_fully_connected`` node
    (:class:`~mxexplorer.core.graph.fused.FCFlags`), with the fused activation's post-op."""

    def __init__(self, attrs: Mapping[str, str], sub: _Sub | None):
        try:
            super().__init__(attrs, sub)
        except fused.FusedError as exc:
            raise _fused_error(exc) from None
        self.eltwise: tuple[str, float] | None = None
        if sub is None:
            return
        for nid in sub.ops():
            node = sub.nodes[nid]
            if node.op in ("Activation", "LeakyReLU", "clip", "square", "sqrt", "exp",
                           "abs"):
                self.eltwise = _eltwise(node.op, node.attrs)

    def output_uint8(self) -> bool:
        return self.with_eltwise and self.eltwise is not None and self.eltwise[0] in (
            "relu", "logistic", "soft_relu", "bounded_relu", "square", "sqrt", "exp", "abs")


def sg_fc_shape(c: Call) -> None:
    sub = _need_sub(c)
    f = FCFusion(c.attrs, sub)
    if not f.quantized:
        ins, outs = sub.infer(c, c.ins, c.outs[:1])
        for i, v in enumerate(ins):
            c.set_in(i, v, "the fused layers need")
        c.set_out(0, outs[0])
        return
    _count(c, f.n_inputs(), "data, weight" + ("" if f.no_bias else ", bias")
           + " and their min/max")
    n_base = 2 if f.no_bias else 3
    ins, outs = sub.infer(c, c.ins[:n_base], [c.outs[0]])
    c.ins[:n_base] = ins
    _ranges(c, n_base, len(c.ins))
    c.outs[0] = outs[0]
    if not f.float_output:
        _put_out(c, 1, ONE)
        _put_out(c, 2, ONE)


def sg_fc_type(c: Call) -> None:
    sub = _need_sub(c)
    f = FCFusion(c.attrs, sub)
    if not f.quantized:
        ins, outs = sub.infer(c, c.ins, c.outs[:1])
        for i, v in enumerate(ins):
            c.set_in(i, v, "the fused layers need")
        c.set_out(0, outs[0])
        return
    _need_type(c, 0, QUANT, "a quantized fully connected layer")
    n_base = 2 if f.no_bias else 3
    for i in range(1, len(c.ins)):
        if f.channel_wise or i >= n_base:
            c.set_in(i, F32, "a quantized fully connected layer takes")
        else:
            c.set_in(i, "int8", "a quantized fully connected layer takes")
    if f.float_output:
        c.set_out(0, F32)
        return
    if _opt_float(c, "min_calib_range") is not None and \
            _opt_float(c, "max_calib_range") is not None:
        c.set_out(0, "uint8" if f.output_uint8() else "int8")
    else:
        c.set_out(0, "int32")
    _put_out(c, 1, F32)
    _put_out(c, 2, F32)


# ------------------------------------------------------------- _sg_mkldnn_selfatt_*
def _selfatt_shape(base: int) -> Callable[[Call], None]:
    def rule(c: Call) -> None:
        sub = _need_sub(c)
        if not c.p.get("quantized"):
            ins, outs = sub.infer(c, c.ins, c.outs[:1])
            for i, v in enumerate(ins):
                c.set_in(i, v, "the fused layers need")
            c.set_out(0, outs[0])
            return
        _count(c, 3 * base, "the data inputs and their min/max")
        ins, outs = sub.infer(c, c.ins[:base], [c.outs[0]])
        c.ins[:base] = ins
        _ranges(c, base, len(c.ins))
        c.outs[0] = outs[0]
        if not c.p.get("enable_float_output"):
            _put_out(c, 1, ONE)
            _put_out(c, 2, ONE)
    return rule


def _selfatt_type(valatt: bool) -> Callable[[Call], None]:
    def rule(c: Call) -> None:
        if not c.p.get("quantized"):
            sub = _need_sub(c)
            ins, outs = sub.infer(c, c.ins, c.outs[:1])
            for i, v in enumerate(ins):
                c.set_in(i, v, "the fused layers need")
            c.set_out(0, outs[0])
            return
        if valatt:
            c.set_in(0, "int8", "the fused attention takes")
            c.set_in(1, "uint8", "the fused attention takes")
            _ranges(c, 2, len(c.ins), F32)
        else:
            _need_type(c, 0, ("int8",), "the fused attention")
            _ranges(c, 1, 3, F32)
        if c.p.get("enable_float_output"):
            c.set_out(0, F32)
            return
        c.set_out(0, "int8" if _calibrated(c) else "int32")
        _put_out(c, 1, F32)
        _put_out(c, 2, F32)
    return rule


# ----------------------------------------------------------------------------- table
RULES: dict[str, Rule] = {
    **table(FAMILY, ("_contrib_quantize",), quantize_shape, quantize_type),
    **table(FAMILY, ("_contrib_quantize_v2",), quantize_shape, quantize_v2_type),
    **table(FAMILY, ("_contrib_quantize_asym",), quantize_shape, quantize_asym_type),
    **table(FAMILY, ("_contrib_dequantize",), quantize_shape, dequantize_type),
    **table(FAMILY, ("_contrib_requantize",), quantize_shape, requantize_type),
    **table(FAMILY, ("_contrib_calibrate_entropy",), calibrate_shape, calibrate_type),
    **table(FAMILY, ("_contrib_quantized_conv",), quantized_conv_shape, quantized_conv_type),
    **table(FAMILY, ("_contrib_quantized_fully_connected",), quantized_fc_shape,
            quantized_fc_type),
    **table(FAMILY, ("_contrib_quantized_pooling",), quantized_pooling_shape,
            quantized_pooling_type),
    **table(FAMILY, ("_contrib_quantized_act",), quantized_act_shape, quantized_act_type),
    **table(FAMILY, ("_contrib_quantized_flatten",), quantized_flatten_shape,
            quantized_flatten_type),
    **table(FAMILY, ("_contrib_quantized_concat",), quantized_concat_shape,
            quantized_concat_type),
    **table(FAMILY, ("_contrib_quantized_elemwise_add",), quantized_add_shape,
            quantized_add_type),
    **table(FAMILY, ("_contrib_quantized_elemwise_mul",), quantized_mul_shape,
            quantized_mul_type),
    **table(FAMILY, ("_contrib_quantized_embedding",), quantized_embedding_shape,
            quantized_embedding_type),
    **table(FAMILY, ("_contrib_quantized_batch_norm",), quantized_bn_shape, quantized_bn_type),
    **table(FAMILY, ("_contrib_quantized_rnn",), quantized_rnn_shape, quantized_rnn_type),
    **table(FAMILY, ("_sg_mkldnn_conv",), sg_conv_shape, sg_conv_type),
    **table(FAMILY, ("_sg_mkldnn_fully_connected",), sg_fc_shape, sg_fc_type),
    **table(FAMILY, ("_sg_mkldnn_selfatt_qk",), _selfatt_shape(1), _selfatt_type(False)),
    **table(FAMILY, ("_sg_mkldnn_selfatt_valatt",), _selfatt_shape(2), _selfatt_type(True)),
}

__all__ = ["RULES"]
