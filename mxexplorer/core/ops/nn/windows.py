"""Rules for the sliding-window ops without weights: ``im2col``, ``col2im`` and
``Correlation``.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math

from mxexplorer.core.ops.base import Call, Rule, elemwise_type, fmt
from mxexplorer.core.ops.nn.helpers import (
    _cdiv,
    _entries,
    _f32,
    _i32,
    _no_check,
    _positive,
    _rank,
    _strict_window,
    _too_big,
    _tup,
    _u32,
    _Win,
)


# ============================================================ im2col, col2im
def _im2col_params(c: Call) -> _Win:
    return _strict_window(c)


def im2col_shape(c: Call) -> None:
    """``im2col``: waits for the data's full shape; output ``(N, C × kernel area,
    number of windows)``."""
    win = _im2col_params(c)
    c.expect_inputs("data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    for key in ("kernel", "stride", "dilate"):
        _positive(c, key, getattr(win, key))
    n = win.n
    if len(data) < n + 2:
        _rank(c, data, n, win.kernel)
    windows = 1
    spatial = data[2:n + 2]
    spans = [win.dilated(i) for i in range(n)]
    for i in range(n):
        padded = spatial[i] + 2 * win.pad[i]
        if spans[i] > padded:
            _too_big(c, win.kernel, win.dilate, spatial, win.pad, spans)
        windows *= _cdiv(padded - spans[i], win.stride[i]) + 1
    c.set_out(0, (data[0], _i32(data[1] * math.prod(win.kernel)), _i32(windows)))


def col2im_shape(c: Call) -> None:
    """``col2im``: waits for the data's full shape; its last dimension must be the
    number of windows over ``output_size``, its second a multiple of the kernel area;
    output ``(N, C, *output_size)``."""
    win = _im2col_params(c)
    c.expect_inputs("data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    size = c.p["output_size"]
    n = win.n
    if size is None or len(size) != n:
        c.fail(f"output_size {_tup(size or ())} must have as many dimensions as kernel "
               f"{_tup(win.kernel)} ({n})", attr="output_size")
    _positive(c, "output_size", size)
    for key in ("kernel", "stride", "dilate"):
        _positive(c, key, getattr(win, key))
    windows = 1
    spans = [win.dilated(i) for i in range(n)]
    for i in range(n):
        padded = size[i] + 2 * win.pad[i]
        if spans[i] > padded:
            _too_big(c, win.kernel, win.dilate, size, win.pad, spans)
        windows *= _cdiv(padded - spans[i], win.stride[i]) + 1
    if len(data) < 3:
        c.fail(f"data has shape {fmt(data)}, but col2im needs 3-D data (batch, channels × "
               f"kernel area, windows)", input=0)
    if data[2] != _i32(windows):
        c.fail(f"data has {data[2]} columns (its last dimension), but output_size "
               f"{_tup(size)} with kernel {_tup(win.kernel)} makes {windows} windows",
               input=0)
    area = math.prod(win.kernel)
    if data[1] % area:
        c.fail(f"data's second dimension {data[1]} is not a multiple of the kernel area "
               f"{area} (kernel {_tup(win.kernel)})", input=0)
    c.set_out(0, (data[0], data[1] // area, *size))


def forward_type(c: Call) -> None:
    """The output has the data's type, once it is known (nothing backward)."""
    c.expect_inputs("data")
    if c.ins[0] is not None:
        c.set_out(0, c.ins[0])


# ================================================================ Correlation
def correlation_shape(c: Call) -> None:
    """``CorrelationProp::InferShape``: both inputs must be 4-D (refused while unknown);
    output ``(N, (2 × max_displacement/stride2 + 1)², top height, top width)`` and two
    hidden ``(N, padded height, padded width, C)`` buffers, in MXNet's 32-bit float and
    unsigned arithmetic."""
    c.expect_inputs("data1", "data2")
    d1, d2 = c.ins[0], c.ins[1]
    for i, s in enumerate((d1, d2)):
        if s is None or len(s) != 4:
            c.fail(f"{c.input_label(i)} has shape {fmt(s)}, but Correlation needs 4-D data "
                   f"(batch, channel, height, width)", input=i)
    assert d1 is not None
    pad = int(c.p["pad_size"])
    ks = int(c.p["kernel_size"])
    maxd = int(c.p["max_displacement"])
    s1, s2 = int(c.p["stride1"]), int(c.p["stride2"])
    if s1 == 0 or s2 == 0:
        key = "stride1" if s1 == 0 else "stride2"
        c.fail(f"attribute {key}=0 must be at least 1", attr=key)
    padded_h = _i32(d1[2] + _u32(2 * pad))
    padded_w = _i32(d1[3] + _u32(2 * pad))
    radius = _u32(ks - 1) // 2
    border = _u32(maxd + radius)

    def top(padded: int) -> int:
        value = _f32(_f32(float(_u32(padded - _u32(border * 2)))) / _f32(float(s1)))
        return _u32(math.ceil(value))
    top_w, top_h = top(padded_w), top(padded_h)
    grid = _u32((maxd // s2) * 2 + 1)
    channels = _u32(grid * grid)
    if top_w < 1 or top_h < 1:
        c.fail(f"data1 {fmt(d1)} padded by pad_size={pad} is too small for "
               f"max_displacement={maxd} and kernel_size={ks}: it needs at least "
               f"{2 * border + 1} in height and width", attr="max_displacement")
    c.outs[0] = (d1[0], _i32(channels), _i32(top_h), _i32(top_w))
    buffer = (d1[0], padded_h, padded_w, d1[1])
    for i in range(1, len(c.outs)):
        c.outs[i] = buffer


def correlation_type(c: Call) -> None:
    c.expect_inputs("data1", "data2")
    elemwise_type(c)


RULES: dict[str, Rule] = _entries([
    (("im2col",), _im2col_params, im2col_shape, forward_type),
    (("col2im",), _im2col_params, col2im_shape, forward_type),
    (("Correlation",), _no_check, correlation_shape, correlation_type),
])
