"""Rules for ``Convolution`` (1-D, 2-D, 3-D, every layout), ``Deconvolution``,
``FullyConnected``, ``Embedding`` and ``_contrib_SparseEmbedding``: what each fills in
either direction (weight and bias from the data, the data's batch and, at stride 1, its
spatial size from the output), when it waits (data not known yet) and what it refuses.
Must not import MXNet or Qt.
"""
from __future__ import annotations

import math

from mxexplorer.core.ops.base import Call, Conflict, Rule, elemwise_type, fmt, merge
from mxexplorer.core.ops.nn.helpers import (
    _axis,
    _cdiv,
    _count,
    _count_of,
    _entries,
    _filter_split,
    _from_nc,
    _group_split,
    _groups,
    _layout,
    _no_check,
    _num_filter,
    _positive,
    _rank,
    _set_bias,
    _strict_window,
    _to_nc,
    _too_big,
    _tup,
    _u32,
    _weight_why,
    _Win,
)


# ================================================================= Convolution
def _conv_params(c: Call) -> _Win:
    win = _strict_window(c)
    _num_filter(c)
    return win


def convolution_shape(c: Call) -> None:
    """``ConvolutionShape``: weight ``(num_filter, C/num_group, *kernel)`` (in the
    layout) and bias ``(num_filter,)`` from the data; the output's batch, and at stride 1
    its spatial size, back into the data.  Waits for the data's rank."""
    win = _conv_params(c)
    nf = int(c.p["num_filter"])
    no_bias = bool(c.p["no_bias"])
    _count(c, no_bias, ("data", "weight", "bias"))
    data = c.ins[0]
    if data is None:
        return
    n = win.n
    last = c.p.get("layout") in ("NHWC", "NDHWC")
    _rank(c, data, n, win.kernel, last)
    last = _layout(c, n + 2)
    g = _groups(c)
    for key in ("kernel", "stride", "dilate"):
        _positive(c, key, getattr(win, key))
    dn = _to_nc(data, last)
    channels = dn[1]
    weight = list(_from_nc((nf // g, channels // g if channels >= 0 else -1, *win.kernel),
                           last))
    weight[0] *= g
    c.set_in(1, tuple(weight), _weight_why(nf, g, win.kernel, channels))
    if not no_bias:
        _set_bias(c, 2, nf)
    if channels >= 0 and channels % g:
        _group_split(c, channels, g, nf)
    if nf % g:
        _filter_split(c, nf, g)
    spans = [win.dilated(i) for i in range(n)]
    spatial = dn[2:]
    if any(d >= 0 and spans[i] > d + 2 * win.pad[i] for i, d in enumerate(spatial)):
        _too_big(c, win.kernel, win.dilate, spatial, win.pad, spans)
    out = [dn[0], nf] + [_cdiv(d + 2 * win.pad[i] - spans[i], win.stride[i]) + 1
                         if d != -1 else -1 for i, d in enumerate(spatial)]
    c.set_out(0, _from_nc(out, last))
    on = _to_nc(c.outs[0], last)
    back = list(dn)
    back[0] = on[0]
    for i in range(n):
        if on[2 + i] != -1 and win.stride[i] == 1:
            back[2 + i] = on[2 + i] + spans[i] - 1 - 2 * win.pad[i]
    c.set_in(0, _from_nc(back, last), "the output's shape needs")
    spatial = back[2:]
    if any(d != -1 and spans[i] > d + 2 * win.pad[i] for i, d in enumerate(spatial)):
        _too_big(c, win.kernel, win.dilate, spatial, win.pad, spans)


def weighted_type(c: Call) -> None:
    """``ConvolutionType``/``DeconvolutionType``: the data's type (else the output's)
    for every input and the output; an input of another type is refused."""
    dtype = c.ins[0] if c.ins else None
    if dtype is None:
        if not c.outs or c.outs[0] is None:
            return
        dtype = c.outs[0]
    else:
        c.outs[0] = dtype
    for i in range(len(c.ins)):
        c.set_in(i, dtype, "the data's type is")


# =============================================================== Deconvolution
def _deconv_params(c: Call) -> _Win:
    win = _strict_window(c, ("stride", "dilate", "pad", "adj"))
    _num_filter(c)
    return win


def deconvolution_shape(c: Call) -> None:
    """``DeconvolutionShape``: weight ``(C, num_filter/num_group, *kernel)`` and bias
    from the data, the output from the data (``target_shape`` chooses pad and adj);
    nothing back from the output."""
    win = _deconv_params(c)
    nf = int(c.p["num_filter"])
    no_bias = bool(c.p["no_bias"])
    _count(c, no_bias, ("data", "weight", "bias"))
    data = c.ins[0]
    if data is None:
        return
    n = win.n
    _rank(c, data, n, win.kernel, c.p.get("layout") in ("NHWC", "NDHWC"))
    last = _layout(c, n + 2)
    g = _groups(c)
    dn = _to_nc(data, last)
    channels = dn[1]
    c.set_in(1, _from_nc((channels, nf // g, *win.kernel), last),
             _weight_why(nf, g, win.kernel, channels, deconv=True))
    if not no_bias:
        _set_bias(c, 2, nf)
    spans = [win.dilated(i) for i in range(n)]
    target = tuple(c.p["target_shape"] or ())
    pad = list(win.pad)
    adj = list(win.adj)
    if any(t != 0 for t in target):
        for i in range(n):
            size = dn[2 + i]
            if size == -1:
                pad[i] = adj[i] = 0     # MXNet leaves them unset: the output is unknown
                continue
            if i >= len(target):
                c.fail(f"target_shape {_tup(target)} has "
                       f"{_count_of(len(target), 'dimension')}, but kernel "
                       f"{_tup(win.kernel)} has {n}: give target_shape "
                       f"{_count_of(n, 'value')}", attr="target_shape")
            full = win.stride[i] * (size - 1) + spans[i]
            if full < target[i]:
                c.fail(f"target_shape {_tup(target)} is larger than this deconvolution "
                       f"can make: at most {full} in {_axis(n, i)} (stride × (input - 1) + "
                       f"dilated kernel)", attr="target_shape")
            diff = full - target[i]
            adj[i] = diff % 2
            pad[i] = (diff + 1) // 2
    if _u32(channels) % g:
        if channels < 0:
            c.fail(f"the data's channel count is unknown, and a deconvolution with "
                   f"num_group={g} needs it to check the groups (give the data's channels)",
                   input=0)
        _group_split(c, channels, g, nf)
    if nf % g:
        _filter_split(c, nf, g)
    for key in ("kernel", "stride", "dilate"):
        _positive(c, key, getattr(win, key))
    if n == 3 and any(d != 1 for d in win.dilate):
        c.fail(f"dilate {_tup(win.dilate)} is not supported by a 3-D deconvolution: "
               f"leave dilate at (1, 1, 1)", attr="dilate")
    for i in range(n):
        if adj[i] > win.stride[i] - 1:
            what = f"adj {_tup(adj)}" if not any(t != 0 for t in target) else \
                f"target_shape {_tup(target)} (which needs adj {_tup(adj)})"
            c.fail(f"{what} must be smaller than stride {_tup(win.stride)} in every "
                   f"dimension", attr="target_shape" if any(t != 0 for t in target) else "adj")
    out = [dn[0], nf]
    for i in range(n):
        size = dn[2 + i]
        out.append(win.stride[i] * (size - 1) + spans[i] - 2 * pad[i] + adj[i]
                   if size != -1 else -1)
    if len(target) >= n:
        for i in range(n):
            if target[i] > 0 and target[i] != out[2 + i]:
                c.fail(f"target_shape {_tup(target)} cannot be reached: the data's "
                       f"{_axis(n, i)} is unknown" if out[2 + i] == -1 else
                       f"target_shape {_tup(target)} cannot be reached from data "
                       f"{fmt(data)}", attr="target_shape")
    for i in range(n):
        if out[2 + i] < -1:
            c.fail(f"pad {_tup(pad)} is too large for data {fmt(data)}: the output would "
                   f"have {_axis(n, i)} {out[2 + i]}", attr="pad")
    c.set_out(0, _from_nc(out, last))


# ============================================================= FullyConnected
def fully_connected_shape(c: Call) -> None:
    """``FullyConnectedShape``: weight ``(num_hidden, features)`` and bias
    ``(num_hidden,)`` (or ``(num_hidden, 1)``) from the data; the output's batch back."""
    nh = int(c.p["num_hidden"])
    no_bias = bool(c.p["no_bias"])
    flatten = bool(c.p["flatten"])
    _count(c, no_bias, ("data", "weight", "bias"))
    data = c.ins[0]
    out_before = c.outs[0]
    if data is None:
        return
    if len(data) == 0:
        c.fail("data is a scalar (0 dimensions): FullyConnected needs at least 1", input=0)
    if flatten:
        if any(d < 0 for d in data[1:]):
            c.fail(f"data has shape {fmt(data)}: with flatten=True FullyConnected needs "
                   f"every dimension but the first known to count its input features "
                   f"(give the data's full shape, or set flatten=False)", input=0)
        features = math.prod(data[1:])
    else:
        features = data[-1]
    c.set_in(1, (nh, features),
             f"num_hidden={nh} and {'?' if features < 0 else features} input features need")
    if not no_bias:
        bias = c.ins[2]
        for want in ((nh,), (nh, 1)):
            try:
                c.ins[2] = merge(bias, want)
                break
            except Conflict:
                continue
        else:
            c.fail(f"{c.input_label(2)} has shape {fmt(bias)}, but num_hidden={nh} needs "
                   f"({nh},) or ({nh}, 1)", input=2)
    out = (*data[:-1], nh) if not flatten else (data[0], nh)
    c.set_out(0, out)
    if out_before is not None and len(out_before) > 0:
        back = list(data)
        back[0] = out_before[0]
        c.set_in(0, tuple(back), "the output's batch needs")


# ================================================================== Embedding
def embedding_shape(c: Call) -> None:
    """``EmbeddingOpShape``: weight ``(input_dim, output_dim)``; the output is the data's
    shape plus ``output_dim`` (written over what was known of it)."""
    c.expect_inputs("data", "weight")
    data = c.ins[0]
    if data is None:
        return
    dim_in, dim_out = int(c.p["input_dim"]), int(c.p["output_dim"])
    c.set_in(1, (dim_in, dim_out), f"input_dim={dim_in} and output_dim={dim_out} need")
    c.outs[0] = (*data, dim_out)


def embedding_type(c: Call) -> None:
    """``EmbeddingOpType``: the indices may be of any type but must be known; the
    weight's and output's type is the one of them known, else the ``dtype`` attribute."""
    c.expect_inputs("data", "weight")
    if c.ins[0] is None:
        c.fail("the type of data (the indices) is unknown: this layer needs it known (give "
               "the input a dtype)", input=0)
    weight, out = c.ins[1], c.outs[0]
    if weight is not None and out is not None and weight != out:
        c.fail(f"{c.input_label(1)} has type {weight}, but the output has {out}: they must "
               f"be one type", input=1)
    dtype = weight if weight is not None else out if out is not None else str(c.p["dtype"])
    if c.ins[1] is None:
        c.ins[1] = dtype
    c.outs[0] = dtype


RULES: dict[str, Rule] = _entries([
    (("Convolution",), _conv_params, convolution_shape, weighted_type),
    (("Deconvolution",), _deconv_params, deconvolution_shape, weighted_type),
    (("FullyConnected",), _no_check, fully_connected_shape, elemwise_type),
    (("Embedding", "_contrib_SparseEmbedding"), _no_check, embedding_shape,
     embedding_type),
])
