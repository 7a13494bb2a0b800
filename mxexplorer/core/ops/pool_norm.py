"""Rules for pooling, normalisation, resizing and region ops: Pooling (1-3-D, every
convention and layout, global), BatchNorm and its older and synchronised forms,
LayerNorm, GroupNorm, InstanceNorm, L2Normalization, LRN, UpSampling,
AdaptiveAvgPooling2D, BilinearResize2D, ROIAlign, ROIPooling and Pad.

MXNet's rules compute with an unknown size as the number -1 (its numpy-style shapes)
and several of them overwrite what was known of an output instead of checking it; the
rules here do the same where MXNet does, so that the engine says what MXNet says.  Must
not import MXNet or Qt.
"""
from __future__ import annotations

import math

from mxexplorer.core.ops.base import (
    Call,
    Rule,
    RuleError,
    Shape,
    elemwise_type,
    fmt,
    same_type,
    table,
)

FAMILY = "pool_norm"


def _cdiv(a: int, b: int) -> int:
    """C++ integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _cmod(a: int, b: int) -> int:
    """C++ remainder (the sign of the dividend)."""
    return a - _cdiv(a, b) * b


def _put(c: Call, i: int, shape: Shape) -> None:
    """An output MXNet overwrites (no check against what was known)."""
    if any(d < -1 for d in shape):
        raise RuleError(f"the output would have a negative size {fmt(shape)}: the input's "
                        "unknown sizes leave it undefined")
    if i < len(c.outs):
        c.outs[i] = shape


def _put_in(c: Call, i: int, shape: Shape) -> None:
    if i < len(c.ins):
        c.ins[i] = shape


def _need_inputs(c: Call, n: int, names: str) -> None:
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} inputs, but this layer takes {n} ({names})")


# ------------------------------------------------------------------ batch norm
def batch_norm_shape(c: Call) -> None:
    """BatchNorm: gamma, beta, moving mean and variance hold one value per channel of
    the ``axis``; two hidden outputs of that size (MXNet overwrites them all)."""
    _need_inputs(c, 5, "data, gamma, beta, moving_mean, moving_var")
    data = c.ins[0]
    if data is None:
        return
    axis = c.p["axis"]
    real = axis + len(data) if axis < 0 else axis
    if not 0 <= real < len(data):
        c.fail(f"axis {axis} is out of range for data of {len(data)} dimensions "
               f"{fmt(data)}: use an axis from {-len(data)} to {len(data) - 1}", attr="axis")
    channels = (data[real],)
    for i in range(1, 5):
        _put_in(c, i, channels)
    _put(c, 0, data)
    _put(c, 1, channels)
    _put(c, 2, channels)


def _param_type(dtype: str) -> str:
    """What BatchNorm keeps its parameters in: float32 for half precision."""
    if dtype in ("float16", "bfloat16"):
        return "float32"
    if dtype not in ("float32", "float64"):
        raise RuleError(f"BatchNorm works on float16, bfloat16, float32 or float64 data, "
                        f"not {dtype}")
    return dtype


def batch_norm_type(c: Call) -> None:
    dtype = c.ins[0]
    if dtype is None:
        if not c.outs or c.outs[0] is None:
            return
        dtype = c.outs[0]
        c.ins[0] = dtype
        param = _param_type(dtype)
    else:
        param = _param_type(dtype)
        c.outs[:] = [dtype] + [param] * (len(c.outs) - 1)
    names = ("data", "gamma", "beta", "moving_mean", "moving_var")
    for i in range(1, len(c.ins)):
        if c.ins[i] is None:
            c.ins[i] = param
        elif c.ins[i] != param:
            raise RuleError(f"{c.input_label(i)} is {c.ins[i]}, but with {dtype} data "
                            f"{names[i] if i < len(names) else 'it'} must be {param}",
                            input=i)


def legacy_norm_shape(c: Call) -> None:
    """BatchNorm_v1 and SyncBatchNorm (older operator forms): per channel of axis 1."""
    n_args = 3
    if len(c.ins) < n_args:
        c.fail(f"has {len(c.ins)} inputs, but this layer takes data, gamma and beta (and "
               "its moving mean and variance)")
    data = c.ins[0]
    if data is None or (c.op == "_contrib_SyncBatchNorm" and min(data) < 0):
        return
    if len(data) < 2:
        c.fail(f"data {fmt(data)} has no channel axis (axis 1)")
    channels = (data[1],)
    for i in range(1, len(c.ins)):
        c.set_in(i, channels)
    _put(c, 0, data)
    _put(c, 1, channels)
    _put(c, 2, channels)


def legacy_type(c: Call) -> None:
    """The older operators' rule: every input of the first input's type, which must be
    known; every output of it."""
    dtype = c.ins[0] if c.ins else None
    if dtype is None:
        raise RuleError("the data's type is not known here (give the input a dtype)")
    for i in range(len(c.ins)):
        c.set_in(i, dtype, "the data is")
    c.outs[:] = [dtype] * len(c.outs)


def legacy_norm_type(c: Call) -> None:
    """BatchNorm_v1/SyncBatchNorm: float16 data keeps its parameters in float32."""
    dtype = c.ins[0] if c.ins else None
    if dtype is None:
        raise RuleError("the data's type is not known here (give the input a dtype)")
    param = "float32" if dtype == "float16" else dtype
    for i in range(1, len(c.ins)):
        c.set_in(i, param, f"with {dtype} data the parameters are")
    c.outs[:] = [dtype] + [param] * (len(c.outs) - 1)


# -------------------------------------------------------------- layer / group
def layer_norm_shape(c: Call) -> None:
    _need_inputs(c, 3, "data, gamma, beta")
    data = c.ins[0]
    if data is None:
        return
    axis = c.p["axis"]
    real = axis + len(data) if axis < 0 else axis
    if not 0 <= real < len(data):
        c.fail(f"axis {axis} is out of range for data of {len(data)} dimensions "
               f"{fmt(data)}: use an axis from {-len(data)} to {len(data) - 1}", attr="axis")
    channels = (data[real],)
    c.set_in(1, channels, f"the normalised axis {axis} of the data has")
    c.set_in(2, channels, f"the normalised axis {axis} of the data has")
    moments = tuple(1 if k == real else d for k, d in enumerate(data))
    _put(c, 0, data)
    _put(c, 1, moments)
    _put(c, 2, moments)


def group_norm_shape(c: Call) -> None:
    _need_inputs(c, 3, "data, gamma, beta")
    data = c.ins[0]
    if data is None:
        return
    if len(data) < 3:
        c.fail(f"data {fmt(data)} has {len(data)} dimensions; GroupNorm needs at least 3 "
               "(batch, channel, ...)")
    groups = c.p["num_groups"]
    if groups == 0 or _cmod(data[1], groups) != 0:
        c.fail(f"{data[1] if data[1] >= 0 else 'an unknown number of'} channels do not "
               f"divide into {groups} groups (num_groups): use a num_groups that divides "
               "the channels", attr="num_groups")
    c.ins[1] = (groups,)
    c.ins[2] = (groups,)
    _put(c, 0, data)
    _put(c, 1, (data[0], groups))
    _put(c, 2, (data[0], groups))


def instance_norm_shape(c: Call) -> None:
    _need_inputs(c, 3, "data, gamma, beta")
    data = c.ins[0]
    if data is None:
        return
    if len(data) < 2:
        c.fail(f"data {fmt(data)} has no channel axis (axis 1)")
    c.set_in(1, (data[1],))
    c.set_in(2, (data[1],))
    _put(c, 0, data)
    _put(c, 1, (data[0], data[1]))
    _put(c, 2, (data[0], data[1]))


def l2_norm_shape(c: Call) -> None:
    _need_inputs(c, 1, "data")
    data = c.ins[0]
    if data is None:
        return
    mode = c.p["mode"]
    if mode != "instance" and len(data) < 3:
        c.fail(f"mode {mode!r} needs data of at least 3 dimensions, not {fmt(data)}",
               attr="mode")
    _put(c, 0, data)
    if mode == "instance":
        _put(c, 1, (data[0],))
    elif mode == "channel":
        _put(c, 1, tuple(1 if k == 1 else d for k, d in enumerate(data)))
    else:
        _put(c, 1, (data[0], data[1]))


def l2_norm_type(c: Call) -> None:
    dtype = c.ins[0]
    for v in c.outs[:2]:
        if dtype is None:
            dtype = v
    if dtype is None:
        return
    c.set_in(0, dtype)
    for i in range(min(2, len(c.outs))):
        c.set_out(i, dtype)


def lrn_shape(c: Call) -> None:
    _need_inputs(c, 1, "data")
    data = c.ins[0]
    if data is None or min(data, default=0) < 0:
        return
    _put(c, 0, data)
    _put(c, 1, data)


# ----------------------------------------------------------------- pooling
_LAYOUTS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


def _pool_layout(layout: str | None, ndim: int, kernel: tuple[int, ...]) -> str:
    if layout is not None:
        return layout
    return ("NCW", "NCHW", "NCDHW")[max(min((len(kernel) or ndim - 2), 3), 1) - 1]


def pooling_shape(c: Call) -> None:
    """Pooling: a window over the last 1-3 axes (channels first or last), or the whole
    of them (global_pool); valid, full (ceil) or same convention."""
    _need_inputs(c, 1, "data")
    data = c.ins[0]
    if data is None:
        return
    p = c.p
    kernel: tuple[int, ...] = p["kernel"] or ()
    if p["pool_type"] == "lp" and p["p_value"] is None:
        c.fail("lp pooling needs p_value", attr="p_value")
    k = len(kernel)
    stride = p["stride"] or (1,) * max(k, 1 if k else 3)
    pad = p["pad"] or (0,) * max(k, 1 if k else 3)
    if k and not p["global_pool"] and k not in (1, 2, 3):
        c.fail(f"kernel {kernel} has {k} dimensions; pooling works over 1 to 3", attr="kernel")
    if p["pooling_convention"] == "same":
        if len(data) != 3:
            c.fail(f"pooling_convention 'same' works on 3-D data (batch, channel, width), "
                   f"not {fmt(data)}", attr="pooling_convention")
        if len(pad) < 3:      # MXNet 1.9.1 reads pad[0..2] here, whatever the kernel
            c.fail("pooling_convention 'same' fails in MXNet 1.9.1 unless pad has three "
                   "values, all 0 (as in pad=(0, 0, 0))", attr="pad")
        if any(x != 0 for x in pad[:3]):
            c.fail("pooling_convention 'same' takes no pad", attr="pad")
    if not 3 <= len(data) <= 5:
        c.fail(f"data {fmt(data)} has {len(data)} dimensions; pooling needs 3, 4 or 5 "
               "(batch, channel, then 1 to 3 spatial axes)")
    layout = _pool_layout(p["layout"], len(data), kernel)
    last = layout.endswith("C")
    if p["global_pool"]:
        channel = len(data) - 1 if last else 1
        out = tuple(d if i in (0, channel) else 1 for i, d in enumerate(data))
        _put(c, 0, out)
        if len(c.outs) > 1:
            _put(c, 1, out)
        return
    if k == 0:
        return
    if len(data) != k + 2:
        c.fail(f"data {fmt(data)} has {len(data)} dimensions, but the {k}-D kernel {kernel} "
               f"needs {k + 2} (batch, channel and {k} spatial axes)", attr="kernel")
    if layout not in _LAYOUTS[k + 2]:
        c.fail(f"layout {layout} does not fit {k}-D pooling: use "
               f"{' or '.join(_LAYOUTS[k + 2])}", attr="layout")
    if len(stride) < k or len(pad) < k:
        c.fail(f"stride {stride} and pad {pad} need one value per kernel dimension "
               f"({k})", attr="stride" if len(stride) < k else "pad")
    spatial = data[1:-1] if last else data[2:]
    sizes = []
    for axis in range(k):
        size, kk, s, pd = spatial[axis], kernel[axis], stride[axis], pad[axis]
        padded = size + 2 * pd
        if kk > padded:
            known = size >= 0
            c.fail(f"kernel {kernel} is larger than the padded input "
                   + (f"({', '.join(str(x + 2 * q) for x, q in zip(spatial, pad))})"
                      if known else "(its size is not known here)")
                   + f": use a kernel of at most {padded if known else 'the input size'} on "
                   f"axis {axis}, or more pad", attr="kernel")
        if s == 0:
            c.fail("stride 0 would not move the window: use a stride of 1 or more",
                   attr="stride")
        convention = p["pooling_convention"]
        if convention == "valid":
            sizes.append(1 + _cdiv(padded - kk, s))
        elif convention == "full" or k > 1:
            sizes.append(1 + int(math.ceil(float(padded - kk) / s)))
        else:
            sizes.append(int(math.ceil(float(padded) / s)))
    out = (data[0],) + tuple(sizes) + (data[-1],) if last else \
        (data[0], data[1]) + tuple(sizes)
    _put(c, 0, out)
    if len(c.outs) > 1:
        _put(c, 1, out)


def pooling_type(c: Call) -> None:
    c.outs[0] = c.ins[0] if c.ins else None
    if len(c.outs) > 1:
        c.outs[1] = "int32"


# --------------------------------------------------------------- resizing
def upsampling_shape(c: Call) -> None:
    p = c.p
    scale = p["scale"]
    if not c.ins:
        c.fail("has no input")
    data = c.ins[0]
    if p["sample_type"] == "nearest":
        if len(c.ins) != p["num_args"]:
            c.fail(f"has {len(c.ins)} inputs, but num_args is {p['num_args']}",
                   attr="num_args")
        if data is None or len(data) != 4:
            if data is None:
                raise RuleError("the data's shape is not known here: nearest upsampling "
                                "needs 4-D inputs (batch, channel, height, width)")
            c.fail(f"data {fmt(data)} is not 4-D (batch, channel, height, width)")
        channels = 0
        for i, s in enumerate(c.ins):
            if s is None or len(s) != 4:
                c.fail(f"{c.input_label(i)} {fmt(s)} is not 4-D (batch, channel, height, "
                       "width)", input=i)
            oh, ow = data[2] * scale, data[3] * scale
            if s[2] == 0 or s[3] == 0 or _cmod(oh, s[2]) != 0 or _cmod(ow, s[3]) != 0:
                c.fail(f"{c.input_label(i)} {fmt(s)}: its height and width must divide "
                       f"the output's ({oh}, {ow})", input=i)
            if p["multi_input_mode"] == "sum":
                if channels not in (0, s[1]):
                    c.fail("with multi_input_mode 'sum' every input needs the same number "
                           f"of channels ({channels}, not {s[1]})", input=i)
                channels = s[1]
            else:
                channels += s[1]
        out = (data[0], channels, data[2] * scale, data[3] * scale)
    else:
        _need_inputs(c, 2, "data, weight")
        if data is None or len(data) != 4:
            if data is None:
                raise RuleError("the data's shape is not known here: bilinear upsampling "
                                "needs 4-D data (batch, channel, height, width)")
            c.fail(f"data {fmt(data)} is not 4-D (batch, channel, height, width)")
        if min(data) < 0:
            return
        kernel = 2 * scale - scale % 2
        c.set_in(1, (data[1], 1, kernel, kernel), f"scale {scale} needs")
        out = (data[0], data[1], data[2] * scale, data[3] * scale)
    _put(c, 0, out)


def upsampling_type(c: Call) -> None:
    dtype = c.ins[0] if c.ins else None
    if dtype is None:
        raise RuleError("the data's type is not known here (give the input a dtype)")
    for i in range(len(c.ins)):
        c.set_in(i, dtype, "the first input is")
    c.outs[:] = [dtype]


def adaptive_avg_pool_shape(c: Call) -> None:
    _need_inputs(c, 1, "data")
    data = c.ins[0]
    if data is None or min(data) < 0:      # MXNet waits for the whole shape
        return
    if len(data) < 4:
        c.fail(f"data {fmt(data)} is not 4-D (batch, channel, height, width)")
    size: tuple[int, ...] = c.p["output_size"] or ()
    h, w = (size[0], size[0]) if len(size) == 1 else \
        (size[0], size[1]) if len(size) == 2 else (1, 1)
    _put(c, 0, data[:2] + (h, w) + data[4:])


def _int16(value: float) -> int:
    """C++'s conversion to int16_t (MXNet keeps the new size in one)."""
    v = int(value) & 0xFFFF
    return v - 0x10000 if v >= 0x8000 else v


def bilinear_resize_shape(c: Call) -> None:
    p = c.p
    mode = p["mode"]
    expected = 2 if mode == "like" else 1
    if len(c.ins) != expected:
        c.fail(f"has {len(c.ins)} inputs, but mode {mode!r} takes {expected}", attr="mode")
    data = c.ins[0]
    if data is None or min(data) < 0:      # MXNet waits for the whole shape
        return
    if len(data) < 4:
        c.fail(f"data {fmt(data)} is not 4-D (batch, channel, height, width)")
    h, w = data[2], data[3]
    sh, sw = p["scale_height"], p["scale_width"]
    if mode == "size":
        nh = _int16(sh * h) if sh is not None else _int16(p["height"])
        nw = _int16(sw * w) if sh is not None else _int16(p["width"])
        if sh is not None and sw is None:
            c.fail("scale_height is given without scale_width", attr="scale_width")
    elif mode == "odd_scale":
        if sh is None or sw is None:
            c.fail("mode 'odd_scale' needs scale_height and scale_width", attr="mode")
        nh = _int16(h * sh) if _cmod(h, 2) == 0 else _int16((h - 1) * sh) + 1
        nw = _int16(w * sw) if _cmod(w, 2) == 0 else _int16((w - 1) * sw) + 1
    elif mode == "like":
        like = c.ins[1]
        if like is None or len(like) < 4:
            if like is None:
                return
            c.fail(f"the second input {fmt(like)} is not 4-D", input=1)
        nh, nw = _int16(like[2]), _int16(like[3])
    elif mode == "to_even_down":
        nh, nw = (h if _cmod(h, 2) == 0 else h - 1), (w if _cmod(w, 2) == 0 else w - 1)
    elif mode == "to_even_up":
        nh, nw = (h if _cmod(h, 2) == 0 else h + 1), (w if _cmod(w, 2) == 0 else w + 1)
    elif mode == "to_odd_down":
        nh, nw = (h if _cmod(h, 2) == 1 else h - 1), (w if _cmod(w, 2) == 1 else w - 1)
    else:
        nh, nw = (h if _cmod(h, 2) == 1 else h + 1), (w if _cmod(w, 2) == 1 else w + 1)
    _put(c, 0, data[:2] + (_int16(nh), _int16(nw)) + data[4:])


# ------------------------------------------------------------------ regions
def _region_inputs(c: Call) -> tuple[Shape, Shape]:
    _need_inputs(c, 2, "data, rois")
    data, rois = c.ins
    if data is None or len(data) != 4:
        raise RuleError(f"data {fmt(data)} is not 4-D (batch, channel, height, width)")
    if rois is None or len(rois) != 2 or rois[1] != 5:
        raise RuleError(f"{c.input_label(1)} {fmt(rois)} is not (number of boxes, 5): "
                        "(batch index, x1, y1, x2, y2) per box", input=1)
    return data, rois


def roi_align_shape(c: Call) -> None:
    data, rois = _region_inputs(c)
    ph, pw = c.p["pooled_size"][0], c.p["pooled_size"][1]
    channels = data[1]
    if c.p["position_sensitive"]:
        if ph * pw == 0 or _cmod(channels, ph * pw) != 0:
            c.fail(f"{channels} channels do not divide by pooled_size {ph}x{pw} "
                   "(position_sensitive)", attr="pooled_size")
        channels = _cdiv(_cdiv(channels, ph), pw)
    _put(c, 0, (rois[0], channels, ph, pw))


def roi_pooling_shape(c: Call) -> None:
    data, rois = _region_inputs(c)
    ph, pw = c.p["pooled_size"][0], c.p["pooled_size"][1]
    out = (rois[0], data[1], ph, pw)
    _put(c, 0, out)
    _put(c, 1, out)


def region_type(c: Call) -> None:
    dtype = c.ins[0]
    if dtype != c.ins[1]:
        raise RuleError(f"data is {dtype} and the boxes {c.ins[1]}: give both one type")
    if dtype is None:
        raise RuleError("the data's type is not known here (give the input a dtype)")
    c.outs[0] = dtype
    if len(c.outs) > 1:
        c.outs[1] = "int32"


# --------------------------------------------------------------------- pad
def pad_shape(c: Call) -> None:
    _need_inputs(c, 1, "data")
    data = c.ins[0]
    if data is None:
        return
    pad: tuple[int, ...] = c.p["pad_width"] or ()
    if len(data) not in (4, 5):
        c.fail(f"data {fmt(data)} has {len(data)} dimensions; Pad works on 4-D or 5-D data")
    if any(x != 0 for x in pad[:4]):
        c.fail(f"pad_width {pad} pads the batch or channel axis: its first four values "
               "must be 0", attr="pad_width")
    if len(pad) != 2 * len(data):
        c.fail(f"pad_width {pad} has {len(pad)} values; {len(data)}-D data needs "
               f"{2 * len(data)} (before and after each axis)", attr="pad_width")
    if c.p["mode"] == "reflect" and (pad[4] >= data[2] or pad[5] >= data[2]
                                     or pad[6] >= data[3] or pad[7] >= data[3]):
        c.fail(f"reflect padding {pad} must be smaller than the input {fmt(data)}",
               attr="pad_width")
    _put(c, 0, tuple(pad[2 * i] + pad[2 * i + 1] + d for i, d in enumerate(data)))


def pad_type(c: Call) -> None:
    dtype = c.ins[0] if c.ins[0] is not None else c.outs[0]
    if dtype is None:
        return
    c.set_in(0, dtype)
    c.set_out(0, dtype)


RULES: dict[str, Rule] = {
    **table(FAMILY, ("BatchNorm",), batch_norm_shape, batch_norm_type),
    **table(FAMILY, ("BatchNorm_v1", "_contrib_SyncBatchNorm"), legacy_norm_shape,
            legacy_norm_type),
    **table(FAMILY, ("LayerNorm",), layer_norm_shape, elemwise_type),
    **table(FAMILY, ("GroupNorm",), group_norm_shape, elemwise_type),
    **table(FAMILY, ("InstanceNorm",), instance_norm_shape, legacy_type),
    **table(FAMILY, ("L2Normalization",), l2_norm_shape, l2_norm_type),
    **table(FAMILY, ("LRN",), lrn_shape, legacy_type),
    **table(FAMILY, ("Pooling",), pooling_shape, pooling_type),
    **table(FAMILY, ("UpSampling",), upsampling_shape, upsampling_type),
    **table(FAMILY, ("_contrib_AdaptiveAvgPooling2D",), adaptive_avg_pool_shape, same_type),
    **table(FAMILY, ("_contrib_BilinearResize2D",), bilinear_resize_shape, same_type),
    **table(FAMILY, ("_contrib_ROIAlign",), roi_align_shape, region_type),
    **table(FAMILY, ("ROIPooling",), roi_pooling_shape, region_type),
    **table(FAMILY, ("Pad",), pad_shape, pad_type),
}
