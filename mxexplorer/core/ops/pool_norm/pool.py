"""Rules for ``Pooling`` (1-3-D, every convention and layout, global, with MKL-DNN's hidden
workspace output for max pooling) and the legacy ``Pooling_v1``, with the checks MXNet's
parameter parser makes (a kernel or stride with a 0) whether or not shapes are known.
Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from mxexplorer.core.ops.base import Call, Rule, Shape, fmt, table
from mxexplorer.core.ops.pool_norm.helpers import (
    FAMILY,
    _cdiv,
    _count,
    _f32,
    _need_rank,
    _nonzero,
    _put,
    _trunc,
    _tup,
    data_type,
)


# ====================================================================== types
def pooling_type(c: Call) -> None:
    """``PoolingType``: the output takes the data's type as it is (unknown too); the
    MKL-DNN workspace is int32."""
    _pooling_params(c)
    c.outs[0] = c.ins[0] if c.ins else None
    if len(c.outs) > 1:
        c.outs[1] = "int32"


# ==================================================================== pooling
_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}
_AXES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


_POOL_WHY = ("a negative stride or pad leaves no window, or MXNet 1.9.1 computed the size "
             "from the data's unknown sizes (as -1): give positive strides and the data's "
             "full shape")


def _window(size: int, kernel: int, stride: int, pad: int, convention: str,
            one_d: bool) -> int:
    """One axis of a pooled output, computed as MXNet does (C division for 'valid',
    a float32 ceiling otherwise; 'same' only for 1-D)."""
    padded = size + 2 * pad
    if convention == "valid":
        return 1 + _cdiv(padded - kernel, stride)
    if convention == "same" and one_d:
        return _trunc(math.ceil(_f32(_f32(padded) / _f32(stride))))
    return 1 + _trunc(math.ceil(_f32(_f32(padded - kernel) / _f32(stride))))


def _check_window(c: Call, kernel: Sequence[int], spatial: Sequence[int],
                  pad: Sequence[int]) -> None:
    """Each kernel size fits its padded input size (an unknown size counted as -1)."""
    k = len(kernel)
    padded = [spatial[i] + 2 * pad[i] for i in range(k)]
    bad = [i for i in range(k) if kernel[i] > padded[i]]
    if not bad:
        return
    axes = _AXES.get(k, tuple(f"axis {i}" for i in range(k)))
    if any(spatial[i] < 0 for i in bad):
        names = " and ".join(axes[i] for i in bad if spatial[i] < 0)
        c.fail(f"the data's {names} is not known here, and MXNet 1.9.1 checks the "
               f"pooling window (kernel {_tup(kernel)}) against the padded input before "
               f"it is known (counting the size as -1): give the data's full shape",
               attr="kernel")
    fits = tuple(min(kernel[i], padded[i]) for i in range(k))
    c.fail(f"kernel {_tup(kernel)} is larger than the padded input {_tup(padded)} "
           f"(its {' and '.join(axes[i] for i in bad)}): use a kernel of at most "
           f"{_tup(fits)}, or more pad", attr="kernel")


def _pool_spatial(c: Call, data: Shape, kernel: Sequence[int], stride: Sequence[int] | None,
                  pad: Sequence[int] | None, last: bool, convention: str,
                  one_d_same: bool) -> Shape:
    """The output of a windowed pool over ``data``'s spatial axes (channels first, or
    last): checks stride/pad lengths and the window, then each axis."""
    k = len(kernel)
    for attr, value in (("pad", pad), ("stride", stride)):
        if value is None or len(value) < k:
            c.fail(f"{attr} {'None' if value is None else _tup(value)} has fewer values "
                   f"than the {k}-D kernel {_tup(kernel)}: give one per kernel "
                   "dimension", attr=attr)
    assert stride is not None and pad is not None
    spatial = data[1:-1] if last else data[2:]
    _check_window(c, kernel, spatial, pad)
    sizes = tuple(_window(spatial[i], kernel[i], stride[i], pad[i], convention, one_d_same)
                  for i in range(k))
    return (data[0],) + sizes + (data[-1],) if last else (data[0], data[1]) + sizes


def _pooling_params(c: Call) -> tuple[Any, Any, Any, str | None]:
    """What ``Pooling``'s and ``Pooling_v1``'s parsers check and fill in (kernel, stride,
    pad, layout): nonzero kernel and stride, a 1-3-D kernel unless global_pool, the
    default stride and pad (ones and zeros: one per kernel axis, or three), the default
    layout of the kernel's rank."""
    p = c.p
    kernel: tuple[int, ...] | None = p["kernel"]
    nk = -1 if kernel is None else len(kernel)
    _nonzero(c, "kernel", kernel)
    _nonzero(c, "stride", p["stride"])
    axes = "1 to 3" if c.op == "Pooling" else "2 or 3"
    if nk not in (1, 2, 3) and not p["global_pool"]:
        c.fail(f"kernel {'None' if kernel is None else _tup(kernel)} has "
               f"{max(nk, 0)} values, but {c.op} works over {axes} spatial axes: give "
               f"{axes} kernel sizes, or set global_pool", attr="kernel")
    layout: str | None = p.get("layout")
    if c.op == "Pooling" and nk > 0 and layout is None:
        if nk > 3:
            c.fail(f"kernel {_tup(kernel or ())} has {nk} values, more than the 3 spatial "
                   "axes Pooling knows a layout for: give 1 to 3 kernel sizes, or a "
                   "layout", attr="kernel")
        layout = _LAYOUTS[nk][0]
    fill = nk if nk in (1, 2) else 3
    stride = p["stride"] if p["stride"] != () else (1,) * fill
    pad = p["pad"] if p["pad"] != () else (0,) * fill
    return kernel, stride, pad, layout


def pooling_shape(c: Call) -> None:
    """``Pooling``: a window over 1 to 3 spatial axes (channels first or last) or all of
    them (global_pool), in the 'valid', 'full' or (1-D) 'same' convention; waits for the
    data's rank; the MKL-DNN workspace output has the output's shape."""
    _count(c, 1, "data")
    p = c.p
    kernel, stride, pad, layout = _pooling_params(c)
    nk = -1 if kernel is None else len(kernel)
    glob = bool(p["global_pool"])
    data = c.ins[0]
    if data is None:
        return
    rank = len(data)
    convention = p["pooling_convention"]
    if p["pool_type"] == "lp" and p["p_value"] is None:
        c.fail("pool_type 'lp' needs p_value (1 or 2)", attr="p_value")
    if convention == "same":
        if rank != 3:
            c.fail(f"pooling_convention 'same' works on 3-D data (batch, channel, width), "
                   f"not {fmt(data)}", attr="pooling_convention")
        if pad is None or len(pad) < 3:   # MXNet 1.9.1 reads pad[0..2], whatever the kernel
            c.fail(f"pooling_convention 'same' needs pad given as three 0s, pad=(0, 0, 0), "
                   f"in MXNet 1.9.1 (it reads three pad values), not "
                   f"{'None' if pad is None else _tup(pad)}", attr="pad")
        if any(x != 0 for x in pad[:3]):
            c.fail(f"pooling_convention 'same' takes no pad: use pad=(0, 0, 0), not "
                   f"{_tup(pad)}", attr="pad")
    if not 3 <= rank <= 5:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but Pooling needs 3-D, 4-D or "
               "5-D data (batch, channel and 1 to 3 spatial axes)", input=0)
    if layout is None:
        layout = _LAYOUTS[rank - 2][0]
    last = layout.endswith("C")
    if glob:
        channel = rank - 1 if last else 1
        out = tuple(d if i in (0, channel) else 1 for i, d in enumerate(data))
    else:
        assert kernel is not None
        if rank != nk + 2:
            c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but the {nk}-D kernel "
                   f"{_tup(kernel)} needs {nk + 2}-D data (batch, channel and {nk} spatial "
                   "axes)", input=0)
        if layout not in _LAYOUTS[nk]:
            c.fail(f"layout {layout} does not fit the {nk}-D kernel {_tup(kernel)}: use "
                   f"{' or '.join(_LAYOUTS[nk])}", attr="layout")
        out = _pool_spatial(c, data, kernel, stride, pad, last, convention, nk == 1)
    _put(c, 0, out, _POOL_WHY)
    if len(c.outs) > 1:
        _put(c, 1, out, _POOL_WHY)


def pooling_v1_shape(c: Call) -> None:
    """The legacy ``Pooling_v1``: 4-D or 5-D data (an unknown shape is refused), channels
    first, 'valid' or 'full'; a 1-D kernel sets no output."""
    _count(c, 1, "data")
    p = c.p
    kernel, stride, pad, _layout = _pooling_params(c)
    nk = -1 if kernel is None else len(kernel)
    glob = bool(p["global_pool"])
    data = _need_rank(c, 0, (4, 5), "data", "(batch, channel and 2 or 3 spatial axes)")
    if glob:
        out = data[:2] + (1,) * (len(data) - 2)
    elif nk in (2, 3):
        assert kernel is not None
        if len(data) != nk + 2:
            c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but the {nk}-D kernel "
                   f"{_tup(kernel)} needs {nk + 2}-D data (batch, channel and {nk} spatial "
                   "axes)", input=0)
        out = _pool_spatial(c, data, kernel, stride, pad, False, p["pooling_convention"],
                            False)
    else:
        return
    _put(c, 0, out, _POOL_WHY)


def pooling_v1_type(c: Call) -> None:
    """``Pooling_v1``: the data's type must be known; the output has it."""
    _pooling_params(c)
    data_type(c)


RULES: dict[str, Rule] = {
    **table(FAMILY, ("Pooling",), pooling_shape, pooling_type),
    **table(FAMILY, ("Pooling_v1",), pooling_v1_shape, pooling_v1_type),
}
