"""Rules for the resizing ops: ``UpSampling`` (nearest over several inputs, bilinear with
its weight), ``_contrib_AdaptiveAvgPooling2D``, ``_contrib_BilinearResize2D`` (with
MXNet's float32 products and 16-bit sizes) and ``Pad``.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Conflict, Rule, fmt, known, merge, same_type, table
from mxexplorer.core.ops.pool_norm.helpers import (
    FAMILY,
    _cmod,
    _count,
    _dim,
    _f32,
    _i16,
    _i32,
    _label,
    _need_axis,
    _need_rank,
    _put,
    _trunc,
    _tup,
    data_type,
)


# ====================================================================== types
def pad_type(c: Call) -> None:
    """``Pad``: data and output of one type, from whichever is known."""
    dtype = c.ins[0] if c.ins[0] is not None else c.outs[0]
    if dtype is None:
        return
    c.set_in(0, dtype, "its output is")
    c.set_out(0, dtype)


# ================================================================== resizing
def upsampling_shape(c: Call) -> None:
    """``UpSampling``: 'nearest' scales every input's height and width to the first
    input's times ``scale`` (each must divide it) and concatenates or sums their
    channels; 'bilinear' waits for the whole data shape and fills its weight
    ``(channels, 1, k, k)`` with ``k = 2 * scale - scale % 2``."""
    p = c.p
    scale = p["scale"]
    if p["sample_type"] == "nearest":
        n = p["num_args"]
        _count(c, n, f"{n} arrays to upsample", f"num_args={n}")
        data = _need_axis(c, 0, 1, "data", "as the channels")
        mode = p["multi_input_mode"]
        channels = 0
        for i in range(len(c.ins)):
            s = _need_rank(c, i, (4,), "data", "(batch, channel, height, width)")
            oh, ow = _i32(data[2] * scale), _i32(data[3] * scale)
            for axis, size, name in ((2, oh, "height"), (3, ow, "width")):
                if _cmod(size, s[axis]) != 0:
                    if size < 0:
                        c.fail(f"the first input's {name} is not known here, and MXNet "
                               f"1.9.1 checks every input's {name} against it (as -1 "
                               f"times scale): give the first input's full shape",
                               input=i)
                    c.fail(f"{c.input_label(i)} has {name} {s[axis]}, which does not "
                           f"divide the output's {name} {size} (the first input's "
                           f"{data[axis]} times scale {scale}): give it a {name} that "
                           f"divides {size}", input=i)
            if mode == "sum":
                if channels not in (0, s[1]):
                    c.fail(f"{c.input_label(i)} has {_dim(s[1])} channels, but with "
                           f"multi_input_mode 'sum' every input needs the same number "
                           f"({_dim(channels)}, known or not)", input=i)
                channels = s[1]
            else:
                channels += s[1]
        out = (data[0], channels, data[2] * scale, data[3] * scale)
        why = ("MXNet 1.9.1 counts each unknown size as -1 here (adding the inputs' "
               "channels, multiplying by scale); give the inputs' full shapes")
    else:
        _count(c, 2, "data, weight", "sample_type 'bilinear'")
        data = _need_rank(c, 0, (4,), "data", "(batch, channel, height, width)")
        if not known(data):
            return
        k = 2 * scale - scale % 2
        weight = (data[1], 1, k, k)
        try:
            c.ins[1] = merge(c.ins[1], weight)
        except Conflict:
            c.fail(f"{_label(c, 1, 'weight')} has shape {fmt(c.ins[1])}, but for "
                   f"{data[1]} channels at scale {scale} bilinear upsampling needs a weight "
                   f"of shape {fmt(weight)} (channels, 1, 2 * scale - scale % 2, the same)",
                   input=1)
        out = (data[0], data[1], data[2] * scale, data[3] * scale)
        why = ""
    _put(c, 0, out, why)


def adaptive_avg_pool_shape(c: Call) -> None:
    """``_contrib_AdaptiveAvgPooling2D``: waits for the whole data shape; its axes 2 and 3
    become ``output_size`` (one value for both, or two; none: 1 and 1)."""
    _count(c, 1, "data")
    data = c.ins[0]
    if not known(data):
        return
    assert data is not None
    _need_axis(c, 0, 3, "data", "as the width (batch, channel, height, width)")
    size: tuple[int, ...] | None = c.p["output_size"]
    if size is not None and len(size) == 1:
        h, w = size[0], size[0]
    elif size is not None and len(size) == 2:
        h, w = size
    else:
        h, w = 1, 1
    _put(c, 0, data[:2] + (h, w) + data[4:],
         f"output_size {_tup(size or ())} has a negative size", "output_size")


def bilinear_resize_shape(c: Call) -> None:
    """``_contrib_BilinearResize2D``: waits for the whole data shape; the new height and
    width (kept in 16 bits, as MXNet keeps them) by ``mode``: 'size' (height/width, or
    the float32 scales), 'odd_scale', 'like' (the second input's axes 2 and 3), or the
    even/odd rounding modes."""
    p = c.p
    mode = p["mode"]
    n = 2 if mode == "like" else 1
    _count(c, n, "data, like" if n == 2 else "data", f"mode {mode!r}")
    data = c.ins[0]
    if not known(data):
        return
    assert data is not None
    _need_axis(c, 0, 3, "data", "as the width (batch, channel, height, width)")
    h, w = data[2], data[3]
    sh, sw = p["scale_height"], p["scale_width"]

    def scaled(size: int, factor: float) -> int:
        return _trunc(_f32(_f32(size) * _f32(factor)))

    if mode == "size":
        if sh is not None and sw is None:
            c.fail("scale_height is given without scale_width: give both scales (or "
                   "neither, and height and width)", attr="scale_width")
        nh = _i32(scaled(h, sh)) if sh is not None else p["height"]
        nw = _i32(scaled(w, sw)) if sh is not None else p["width"]
    elif mode == "odd_scale":
        if sh is None or sw is None:
            c.fail("mode 'odd_scale' needs both scale_height and scale_width",
                   attr="scale_height" if sh is None else "scale_width")
        nh = _i16(scaled(h, sh)) if h % 2 == 0 else _i16(scaled(h - 1, sh)) + 1
        nw = _i16(scaled(w, sw)) if w % 2 == 0 else _i16(scaled(w - 1, sw)) + 1
    elif mode == "like":
        like = _need_axis(c, 1, 3, "like", "as the height and width to resize to")
        nh, nw = like[2], like[3]
    elif mode == "to_even_down":
        nh, nw = h - h % 2, w - w % 2
    elif mode == "to_even_up":
        nh, nw = h + h % 2, w + w % 2
    elif mode == "to_odd_down":
        nh, nw = h - (1 - h % 2), w - (1 - w % 2)
    else:
        nh, nw = h + (1 - h % 2), w + (1 - w % 2)
    out = data[:2] + (_i16(nh), _i16(nw)) + data[4:]
    why = ("MXNet 1.9.1 keeps the new height and width in 16 bits, so they must come out "
           "from -1 to 32767: give smaller sizes or scales")
    _put(c, 0, out, why)


def pad_shape(c: Call) -> None:
    """The legacy ``Pad``: 4-D or 5-D data (an unknown shape is refused), no padding of
    the batch and channel axes, two ``pad_width`` values per axis; 'reflect' pads less
    than the height and width."""
    _count(c, 1, "data")
    pad: tuple[int, ...] = c.p["pad_width"] or ()
    data = _need_rank(c, 0, (4, 5), "data", "(batch, channel and 2 or 3 spatial axes)")
    rank = len(data)
    if len(pad) < 4 or any(x != 0 for x in pad[:4]):
        c.fail(f"pad_width {_tup(pad)} must start with four 0s: the batch and channel axes "
               "are not padded", attr="pad_width")
    if len(pad) != 2 * rank:
        c.fail(f"pad_width {_tup(pad)} has {len(pad)} values, but {rank}-D data needs "
               f"{2 * rank} (before and after each axis)", attr="pad_width")
    if c.p["mode"] == "reflect":
        for axis, name in ((2, "height"), (3, "width")):
            before, after = pad[2 * axis], pad[2 * axis + 1]
            if before >= data[axis] or after >= data[axis]:
                c.fail(f"reflect padding ({before}, {after}) of the {name} must be smaller "
                       f"than the data's {name} {_dim(data[axis])}"
                       + (" (which is not known here: give the data's full shape)"
                          if data[axis] < 0 else ""), attr="pad_width")
    out = tuple(pad[2 * i] + pad[2 * i + 1] + d for i, d in enumerate(data))
    _put(c, 0, out, "pad_width gives a negative size, or MXNet 1.9.1 added it to an "
                    "unknown size (as -1)", "pad_width")


RULES: dict[str, Rule] = {
    **table(FAMILY, ("UpSampling",), upsampling_shape, data_type),
    **table(FAMILY, ("_contrib_AdaptiveAvgPooling2D",), adaptive_avg_pool_shape, same_type),
    **table(FAMILY, ("_contrib_BilinearResize2D",), bilinear_resize_shape, same_type),
    **table(FAMILY, ("Pad",), pad_shape, pad_type),
}
