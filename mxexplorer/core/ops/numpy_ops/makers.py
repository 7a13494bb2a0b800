"""Rules for the numpy-style ops that make arrays: ``_npi_zeros``, ``_npi_ones``,
``_npi_identity``, ``_npi_full_like``, ``_npi_arange``, ``_npi_eye``, ``_npi_indices``,
``_npi_logspace``, the windows (``_npi_hanning`` ...), ``_np_atleast_1d``/``2d``/``3d``
and the random samplers (``_npi_uniform``, ``_npi_normal`` ... and their ``_n`` forms,
which count an operand of unknown rank as a scalar).  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Callable

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, elemwise_type, fmt, known, table
from mxexplorer.core.ops.numpy_ops.helpers import (
    _MAX_ELEMENTS,
    FAMILY,
    _count,
    _extra,
    _label,
    _legacy,
    _optional_int,
    _show_axes,
    same_shape,
)


def init_shape(c: Call) -> None:
    """_npi_zeros, _npi_ones, _npi_identity: ``shape`` read as MXNet reads it with numpy
    semantics off (0 dims and ``()`` unknown)."""
    shape = c.p["shape"]
    if shape is not None and all(d >= 0 for d in shape) and _count(tuple(shape)) >= \
            _MAX_ELEMENTS:
        c.fail(f"shape={_show_axes(shape)} has {_count(tuple(shape)):,} elements; MXNet "
               f"1.9.1 allows fewer than 2**31 per array", attr="shape")
    target = _legacy(shape)
    if known(c.outs[0]) and not known(target):
        return
    c.set_out(0, target)


def init_type(c: Call) -> None:
    """The output's type is ``dtype``."""
    c.set_out(0, c.p["dtype"])


def full_like_type(c: Call) -> None:
    dtype = c.p.get("dtype")
    c.set_out(0, dtype if dtype is not None else c.ins[0])


def arange_shape(c: Call) -> None:
    """_npi_arange: ceil((stop - start) / step) elements (a lone ``start`` is the stop)."""
    start, stop, step = c.p["start"], c.p["stop"], c.p["step"]
    if not c.p["infer_range"] and stop is None:
        start, stop = 0.0, start
    if step == 0:
        c.fail("step=0 would never reach stop: use a step other than 0", attr="step")
    if c.p["repeat"] != 1:
        c.fail(f"repeat={c.p['repeat']} is not supported by the numpy arange: use 1",
               attr="repeat")
    if stop is None:
        c.fail("stop is required (infer_range is not supported here)", attr="stop")
    if not all(math.isfinite(v) for v in (start, stop, step)):
        c.fail("start, stop and step must be finite numbers", attr="stop")
    size_f = math.ceil((stop - start) / step)
    c.set_out(0, (max(int(size_f), 0),))


def eye_shape(c: Call) -> None:
    n = c.p["N"]
    m = _extra(c, "M", _optional_int, None)
    m = n if m is None else m
    if n < 0:
        c.fail(f"N={n} is negative: an identity-like matrix needs N of 0 or more", attr="N")
    if m < 0:
        c.fail(f"M={m} is negative: use 0 or more", attr="M")
    c.set_out(0, (n, m))


def indices_shape(c: Call) -> None:
    dims = c.p["dimensions"]
    if dims is None or not all(d >= 0 for d in dims):
        return
    c.set_out(0, (len(dims),) + tuple(dims))


def logspace_shape(c: Call) -> None:
    num = c.p["num"]
    if num < 0:
        c.fail(f"num={num} is negative: the number of samples must be 0 or more",
               attr="num")
    c.set_out(0, (num,))


def window_shape(c: Call) -> None:
    """_npi_hanning, _npi_hamming, _npi_blackman: ``M`` points (none below 1)."""
    m = _extra(c, "M", _optional_int, None)
    if m is None:
        c.fail("M is required: the number of points of the window", attr="M")
    c.set_out(0, (max(m, 0),))


def atleast_shape(n: int) -> Callable[[Call], None]:
    """_np_atleast_1d/2d/3d: each input raised to ``n`` dims (an input of unknown rank
    counts as fewer, as in MXNet: its output is all ones)."""
    def rule(c: Call) -> None:
        for i, s in enumerate(c.ins):
            if i >= len(c.outs):
                break
            if s is None or len(s) < n:
                new = [1] * n
                if s is not None and len(s) == 1 and n >= 2:
                    new[1] = s[0]
                elif s is not None and len(s) == 2 and n == 3:
                    new[0], new[1] = s[0], s[1]
                c.set_out(i, tuple(new))
            else:
                c.set_out(i, s)
    return rule


def atleast_type(c: Call) -> None:
    elemwise_type(c)


# ========================================================================= samplers
def _check_broadcastable(c: Call, i: int, target: Shape) -> None:
    s = c.ins[i]
    if s is None:
        return
    for k in range(len(target)):
        j = k - (len(target) - len(s))
        left = s[j] if j >= 0 else 1
        right = target[k]
        if left < 0 or right < 0:
            continue
        if left != right and left != 1 and right != 1:
            c.fail(f"{_label(c, i)} of shape {fmt(s)} does not broadcast to size="
                   f"{fmt(target)}", attr="size")


def _param_broadcast(c: Call) -> MaybeShape:
    """The parameters given as arrays broadcast together (an unknown rank counts as a
    scalar); () when every parameter is a number."""
    if len(c.ins) == 0:
        return ()
    if len(c.ins) == 1:
        only: MaybeShape = c.ins[0]
        return only
    lhs, rhs = c.ins[0], c.ins[1]
    n = max(len(lhs) if lhs is not None else -1, len(rhs) if rhs is not None else -1)
    if n < 0:
        return None
    out = [-1] * n
    for i in range(n):
        j = i - (n - len(lhs)) if lhs is not None else -1
        k = i - (n - len(rhs)) if rhs is not None else -1
        left = lhs[j] if lhs is not None and j >= 0 else 1
        right = rhs[k] if rhs is not None and k >= 0 else 1
        if left < 0 or right < 0:
            continue
        if left != right and left != 1 and right != 1:
            c.fail(f"{_label(c, 0)} of shape {fmt(lhs)} and {_label(c, 1)} of shape "
                   f"{fmt(rhs)} cannot be broadcast together")
        out[i] = right if left == 1 else left
    return tuple(out)


def sampler_shape(c: Call) -> None:
    """_npi_uniform, _npi_normal ...: ``size`` when given (each parameter array must
    broadcast to it), else the parameter arrays broadcast together, else a scalar; a
    hidden second output of the same shape."""
    size_ = c.p["size"]
    if size_ is not None:
        c.set_out(0, tuple(size_))
        out = c.outs[0]
        assert out is not None
        for i in range(len(c.ins)):
            _check_broadcastable(c, i, out)
    else:
        c.set_out(0, _param_broadcast(c))
    if len(c.outs) == 2:
        c.set_out(1, c.outs[0])


def sampler_n_shape(c: Call) -> None:
    """_npi_uniform_n, _npi_normal_n: ``size`` followed by the parameters' broadcast
    shape."""
    base = _param_broadcast(c)
    size_ = c.p["size"]
    if size_ is not None:
        c.set_out(0, tuple(size_) + (base if base is not None else ()))
    else:
        c.set_out(0, base)
    if len(c.outs) == 2:
        c.set_out(1, c.outs[0])


def sampler_type(c: Call) -> None:
    """The ``dtype`` attribute (float32 by default), written over whatever was there, as
    MXNet does; a hidden second output is float32."""
    dtype = c.p.get("dtype") or "float32"
    c.outs[0] = dtype
    if len(c.outs) == 2 and c.op not in ("_npi_uniform", "_npi_uniform_n", "_npi_gamma"):
        c.outs[1] = "float32"


def float32_sampler_type(c: Call) -> None:
    c.outs[:] = ["float32"] * len(c.outs)


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_npi_zeros", "_npi_ones", "_npi_identity"), init_shape, init_type),
    **table(FAMILY, ("_npi_full_like",), same_shape, full_like_type),
    **table(FAMILY, ("_npi_arange",), arange_shape, init_type),
    **table(FAMILY, ("_npi_eye",), eye_shape, init_type),
    **table(FAMILY, ("_npi_indices",), indices_shape, init_type),
    **table(FAMILY, ("_npi_logspace",), logspace_shape, init_type),
    **table(FAMILY, ("_npi_hanning", "_npi_hamming", "_npi_blackman"), window_shape,
            init_type),
    **table(FAMILY, ("_np_atleast_1d",), atleast_shape(1), atleast_type),
    **table(FAMILY, ("_np_atleast_2d",), atleast_shape(2), atleast_type),
    **table(FAMILY, ("_np_atleast_3d",), atleast_shape(3), atleast_type),
    **table(FAMILY, ("_npi_uniform", "_npi_normal", "_npi_gamma", "_npi_bernoulli"),
            sampler_shape, sampler_type),
    **table(FAMILY, ("_npi_exponential", "_npi_pareto", "_npi_rayleigh", "_npi_weibull",
                     "_npi_logistic", "_npi_gumbel", "_npi_powerd"),
            sampler_shape, float32_sampler_type),
    **table(FAMILY, ("_npi_uniform_n", "_npi_normal_n"), sampler_n_shape, sampler_type),
}
