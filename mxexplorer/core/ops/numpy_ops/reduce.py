"""Rules for the numpy-style reductions: ``_np_sum``/``_np_prod``, ``_npi_mean``,
``_np_max``/``_np_min``, ``_np_all``/``_np_any``, ``_npi_argmax``/``_npi_argmin``, the
moments ``_npi_std``/``_npi_var``, ``_npi_average`` and ``_npi_norm`` (vector and matrix
norms).  A global reduction gives the scalar shape ``()``.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Optional, Sequence

from mxexplorer.core.ops.base import Call, Rule, Shape, fmt, known, table
from mxexplorer.core.ops.numpy_ops.helpers import (
    FAMILY,
    _count,
    _extra,
    _is_float,
    _label,
    _norm_axis,
    _show_axes,
    bool_out_type,
    same_in_out_type,
)
from mxexplorer.core.ops.params import parse_bool, parse_float, parse_int, parse_tuple


# ============================================================== reductions (shapes)
def _reduce_shape(c: Call, shape: Shape, axis: Optional[tuple[int, ...]], keepdims: bool,
                  attr: str = "axis") -> Shape:
    """NumpyReduceAxesShapeImpl: the shape left after reducing ``axis`` (None: all;
    ``()``: nothing)."""
    ndim = len(shape)
    if ndim == 0:
        if axis:
            if len(axis) != 1 or axis[0] not in (0, -1):
                c.fail(f"{attr}={_show_axes(axis)} does not fit a scalar (0-d) input: use "
                       f"0, -1 or None", attr=attr)
        return ()
    if axis is None:
        return (1,) * ndim if keepdims else ()
    if len(axis) == 0:
        return shape
    axes = sorted(a + ndim if a < 0 else a for a in axis)
    for a, b in zip(axes, axes[1:]):
        if a >= b:
            c.fail(f"{attr}={_show_axes(axis)} names axis {a if a < ndim else a - ndim} "
                   f"twice", attr=attr)
    if axes[-1] >= ndim or axes[0] < 0:
        c.fail(f"{attr}={_show_axes(axis)} is out of range for a {ndim}-d input: use axes "
               f"from {-ndim} to {ndim - 1}", attr=attr)
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduce_shape(c: Call) -> None:
    """_np_sum, _np_prod, _npi_mean, _np_all, _np_any: the input must be fully known."""
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    c.set_out(0, _reduce_shape(c, s, c.p["axis"], c.p["keepdims"]))


def reduce_nonempty_shape(c: Call) -> None:
    """_np_max, _np_min: like reduce_shape, refusing to reduce a zero-size axis."""
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    axis = c.p["axis"]
    if axis is not None:
        for a in axis:
            if 0 <= a < len(s) and s[a] == 0:
                c.fail(f"axis {a} of {_label(c, 0)} has size 0: a maximum or minimum of "
                       f"nothing has no value", attr="axis")
    elif _count(s) == 0:
        c.fail(f"{_label(c, 0)} has no elements (shape {fmt(s)}): a maximum or minimum of "
               f"nothing has no value", input=0)
    c.set_out(0, _reduce_shape(c, s, axis, c.p["keepdims"]))


def reduce_one_axis_shape(c: Call) -> None:
    """_npi_argmax, _npi_argmin: ``axis`` an int or None."""
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    axis = c.p["axis"]
    c.set_out(0, _reduce_shape(c, s, None if axis is None else (axis,), c.p["keepdims"]))


def moments_shape(c: Call) -> None:
    """_npi_std, _npi_var: the reduced shape, twice (the hidden mean too)."""
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    out = _reduce_shape(c, s, c.p["axis"], c.p["keepdims"])
    c.set_out(0, out)
    c.set_out(1, out)


# ============================================================== reductions (dtypes)
def sum_type(c: Call) -> None:
    """_np_sum, _np_prod: ``dtype`` when given (bool input: int32, int64, float32 or
    float64 only); a bool input sums to int64; else the input's type both ways."""
    dtype = c.p.get("dtype")
    t = c.ins[0]
    if dtype is not None:
        if t == "bool" and dtype not in ("int32", "int64", "float32", "float64"):
            c.fail(f"dtype={dtype} is not available for a bool input: use int32, int64, "
                   f"float32 or float64", attr="dtype")
        c.set_out(0, dtype)
    elif t == "bool":
        c.set_out(0, "int64")
    else:
        c.set_out(0, t)
        c.set_in(0, c.outs[0])


def mean_type(c: Call) -> None:
    dtype = c.p.get("dtype")
    t = c.ins[0]
    if dtype is not None:
        c.set_out(0, dtype)
    elif _is_float(t):
        c.set_out(0, t)
        c.set_in(0, c.outs[0])
    else:
        c.set_out(0, "float32")


def argminmax_type(c: Call) -> None:
    if c.ins[0] is None:
        c.fail(f"the type of {_label(c, 0)} is not known yet; argmax/argmin need it", input=0)
    c.set_out(0, "int64")


def moments_type(c: Call) -> None:
    dtype = c.p.get("dtype")
    if dtype is not None:
        c.set_out(0, dtype)
    else:
        c.set_out(0, c.ins[0])
        c.set_in(0, c.outs[0])
    c.set_out(1, c.ins[0])


# ============================================================================ norm
def _optional_shape(text: str) -> tuple[int, ...] | None:
    found = parse_tuple(text)
    return None if found is None else tuple(int(x) for x in found)


def _bool(text: str) -> bool:
    return parse_bool(text)


def _float(text: str) -> float:
    return parse_float(text)


def _int(text: str) -> int:
    return parse_int(text)


def _norm_hidden_empty(c: Call) -> None:
    for i, shape in ((1, (0, 0, 0)), (2, (0, 0)), (3, (0, 0, 0))):
        if i < len(c.outs):
            c.set_out(i, shape)


def _prod(dims: Sequence[int], c: Call) -> int:
    n = 1
    for d in dims:
        if d < 0:
            c.fail(f"{_label(c, 0)} needs known sizes for this norm", input=0)
        n *= d
    return n


def norm_shape(c: Call) -> None:
    """_npi_norm: vector norms over one axis, matrix norms over two (by default the last
    two of a 2-d or larger input), with the hidden outputs MXNet keeps for the gradient.
    Like MXNet, the axes it settles on are kept for the node's later calls."""
    ord_ = _extra(c, "ord", _float, 2.0)
    axis = c.p.get("axis") if "axis" in c.p else _extra(c, "axis", _optional_shape, None)
    keepdims = _extra(c, "keepdims", _bool, False)
    flag = _extra(c, "flag", _int, -1)
    s = c.ins[0]
    ndim = len(s) if s is not None else -1
    if axis is None:
        if flag == -2:
            c.set_out(0, (1,) * ndim if keepdims and ndim >= 0 else None if keepdims else ())
            _norm_hidden_empty(c)
            return
        axis = (ndim - 2, ndim - 1) if ndim >= 2 else (ndim - 1,)
    else:
        axis = tuple(ndim + a if a < 0 else a for a in axis)
    c.p["axis"] = axis
    if len(axis) == 2:
        _matrix_norm(c, axis, ord_, keepdims)
        return
    _norm_hidden_empty(c)
    if not known(s):
        return
    assert s is not None
    if len(axis) > 2:
        c.fail(f"axis={_show_axes(axis)} names more than two axes", attr="axis")
    if (len(axis) == 0 and flag != 0) or (len(axis) == 1 and flag == 2):
        c.fail("this norm order does not fit the input", attr="ord")
    if not keepdims and len(s) == 1:
        c.set_out(0, ())
        return
    c.set_out(0, _legacy_reduce(c, s, axis, keepdims))


def _legacy_reduce(c: Call, s: Shape, axis: tuple[int, ...], keepdims: bool) -> Shape:
    """ReduceAxesShapeImpl (MXNet's older reduction: a (1,) rather than a scalar)."""
    if len(axis) == 0:
        return (1,) * len(s) if keepdims else (1,)
    axes = sorted(a + len(s) if a < 0 else a for a in axis)
    if len(set(axes)) != len(axes):
        c.fail(f"axis={_show_axes(axis)} repeats an axis", attr="axis")
    if axes[-1] >= len(s) or axes[0] < 0:
        c.fail(f"axis={_show_axes(axis)} is out of range for a {len(s)}-d input", attr="axis")
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(s))
    rest = tuple(d for i, d in enumerate(s) if i not in axes)
    return rest or (1,)


def _matrix_norm(c: Call, axis: tuple[int, ...], ord_: float, keepdims: bool) -> None:
    s = c.ins[0]
    if s is None:
        c.fail("the rank of the input must be known for a matrix norm", input=0)
    assert s is not None
    ndim = len(s)
    a0, a1 = axis
    if not (0 <= a0 < ndim and 0 <= a1 < ndim):
        c.fail(f"axis={_show_axes(axis)} is out of range for a {ndim}-d input", attr="axis")
    rest = [d for i, d in enumerate(s) if i not in (a0, a1)]
    row, col = s[a0], s[a1]
    batch = 1
    for d in rest[:ndim - 2]:
        batch *= d
    if keepdims:
        out = list(s)
        out[a0] = 1
        out[a1] = 1
        c.set_out(0, tuple(out))
    else:
        c.set_out(0, tuple(rest[:ndim - 2]))
    hidden: list[Shape]
    if ord_ in (2, -2):
        hidden = [(batch, row, row), (batch, min(row, col)), (batch, row, col)]
    else:
        sum_dim = axis[0] if ord_ in (1, -1) else axis[1]
        whole = list(s)
        whole[sum_dim] = 1
        hidden = [(_prod(whole[:sum_dim], c), 1, _prod(whole[sum_dim + 1:], c)), (0, 0),
                  (0, 0, 0)]
    for i, shape in enumerate(hidden, start=1):
        if any(d < -1 for d in shape):
            c.fail(f"{_label(c, 0)} of shape {fmt(s)} has unknown sizes this norm cannot "
                   f"work with", input=0)
        if i < len(c.outs):
            c.set_out(i, shape)


def norm_type(c: Call) -> None:
    for i in range(len(c.outs)):
        c.set_out(i, c.ins[0])


def average_shape(c: Call) -> None:
    """_npi_average: a's reduction over ``axis``; the weights (when ``weighted``) of a's
    shape, or 1-d along a single axis; a hidden output (the weights' sum)."""
    weighted = c.p["weighted"]
    want = 2 if weighted else 1
    if len(c.ins) != want:
        c.fail(f"has {len(c.ins)} inputs, but average takes {want} with weighted={weighted}")
    a = c.ins[0]
    if not known(a):
        return
    assert a is not None
    axis = c.p["axis"]
    c.set_out(0, _reduce_shape(c, a, axis, False))
    if not weighted:
        if len(c.outs) > 1:
            c.set_out(1, ())
        return
    w = c.ins[1]
    if w is None or len(w) != len(a):
        if w is None or len(w) != 1:
            c.fail(f"{_label(c, 1)} must be known, with a's shape or 1-d", input=1)
        assert w is not None
        if axis is None or len(axis) != 1:
            c.fail("axis must be one axis when the weights are 1-d", attr="axis")
        assert axis is not None
        red = _norm_axis(c, axis[0], len(a), "axis")
        if a[red] != w[0]:
            c.fail(f"{_label(c, 1)} has length {fmt(w)} but axis {axis[0]} of a is "
                   f"{a[red]} long", input=1)
        hidden: Shape = ()
    else:
        if w != a:
            c.fail(f"{_label(c, 1)} has shape {fmt(w)}, but a has {fmt(a)}", input=1)
        hidden = _reduce_shape(c, w, axis, False)
    if len(c.outs) > 1:
        c.set_out(1, hidden)


def average_type(c: Call) -> None:
    c.set_in(0, c.outs[0])
    c.set_out(0, c.ins[0])
    if c.p["weighted"] and len(c.ins) > 1:
        c.set_in(1, c.ins[0], "a is")
    if len(c.outs) > 1:
        c.set_out(1, c.ins[0])


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_np_sum", "_np_prod"), reduce_shape, sum_type),
    **table(FAMILY, ("_npi_mean",), reduce_shape, mean_type),
    **table(FAMILY, ("_np_max", "_np_min"), reduce_nonempty_shape, same_in_out_type),
    **table(FAMILY, ("_np_all", "_np_any"), reduce_shape, bool_out_type),
    **table(FAMILY, ("_npi_argmax", "_npi_argmin"), reduce_one_axis_shape, argminmax_type),
    **table(FAMILY, ("_npi_std", "_npi_var"), moments_shape, moments_type),
    **table(FAMILY, ("_npi_norm",), norm_shape, norm_type),
    **table(FAMILY, ("_npi_average",), average_shape, average_type),
}
