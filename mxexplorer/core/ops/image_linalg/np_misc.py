"""Rules for numpy-style leftovers of MXNet 1.9.1 (``src/operator/numpy/``):
``_npi_ediff1d``, ``_npi_hsplit``/``_npi_dsplit`` (``_split_v2`` along axis 1 (0 for a
vector) or 2), ``_npi_percentile`` and the boolean mask assignments
``_npi_boolean_mask_assign_scalar``/``_tensor`` (which refuse data or a mask of unknown
shape).  Must not import MXNet or Qt.
"""
from __future__ import annotations

import re

from mxexplorer.core.ops.base import Call, Rule, Shape, fmt
from mxexplorer.core.ops.image_linalg.helpers import (
    count,
    fail,
    legacy_first_type,
    plural,
    rank,
    rules,
    size_of,
)
from mxexplorer.core.ops.layout.split_join import split_v2_shape


# ========================================================================= ediff1d
def _ediff1d_count(c: Call) -> None:
    if not 1 <= len(c.ins) <= 3:
        fail(f"has {plural(len(c.ins), 'input')}, but ediff1d takes 1 to 3 (the array, "
             f"to_begin and to_end arrays)")


def _arrays_given(c: Call) -> int:
    """How many of ``to_begin``/``to_end`` are arrays (inputs 1 and 2)."""
    n = int(bool(c.p["to_begin_arr_given"])) + int(bool(c.p["to_end_arr_given"]))
    if len(c.ins) < 1 + n:
        fail(f"has {plural(len(c.ins), 'input')}, but to_begin_arr_given and "
             f"to_end_arr_given ask for {1 + n} (the array and {n} more): give the "
             f"to_begin/to_end arrays as inputs", attr="to_begin_arr_given")
    return n


def ediff1d_shape(c: Call) -> None:
    """``EDiff1DShape``: once the array's shape is fully known, a vector of its size
    less one, plus the sizes of the ``to_begin``/``to_end`` arrays (which must be known)
    or 1 for each scalar given."""
    _ediff1d_count(c)
    if c.ins[0] is None or any(d < 0 for d in c.ins[0]):
        return
    n = size_of(c, 0, "ediff1d")
    out = n - 1 if n > 0 else 0
    arrays = _arrays_given(c)
    for i in range(1, arrays + 1):
        out += size_of(c, i, "ediff1d (to_begin or to_end array)")
    scalars = int(c.p["to_begin_scalar"] is not None) + int(c.p["to_end_scalar"] is not None)
    if arrays == 1:
        out += min(scalars, 1)
    elif arrays == 0:
        out += scalars
    c.set_out(0, (out,))


def ediff1d_type(c: Call) -> None:
    """``EDiff1DType``: the output takes the array's type and the arrays' of
    ``to_begin``/``to_end``, and gives its type back to the array."""
    _ediff1d_count(c)
    c.set_out(0, c.ins[0])
    for i in range(1, _arrays_given(c) + 1):
        c.set_out(0, c.ins[i], f"({c.input_label(i)} has it)")
    c.set_in(0, c.outs[0], "the output has")


# ========================================================================== splits
def hsplit_shape(c: Call) -> None:
    """``HSplitOpShape``: ``_split_v2`` along axis 1 (axis 0 of a vector); a scalar is
    refused."""
    count(c, ("data",))
    d = c.ins[0]
    if d is not None and len(d) == 0:
        fail(f"{c.input_label(0)} is a scalar (0-d), but hsplit needs an array of 1 or "
             f"more dimensions", input=0)
    if d is None:
        return
    c.p["axis"] = 1 if len(d) > 1 else 0
    split_v2_shape(c)


def dsplit_shape(c: Call) -> None:
    """``DSplitOpShape``: ``_split_v2`` along axis 2 of an array of 3 or more
    dimensions."""
    count(c, ("data",))
    d = c.ins[0]
    if d is None:
        return
    if len(d) < 3:
        fail(f"{c.input_label(0)} has shape {fmt(d)}, but dsplit needs an array of 3 or "
             f"more dimensions", input=0)
    c.p["axis"] = 2
    split_v2_shape(c)


def split_type(c: Call) -> None:
    """``SplitOpType``: the data's type must be known; every part takes it."""
    count(c, ("data",))
    legacy_first_type(c)


# ====================================================================== percentile
def _reduced(c: Call, s: Shape) -> Shape:
    """``NumpyReduceAxesShapeImpl`` of the data's full shape over ``axis``."""
    axis = c.p["axis"]
    keep = bool(c.p["keepdims"])
    nd = len(s)
    if nd == 0:
        if axis is not None and len(axis) > 0 and (len(axis) != 1 or axis[0] not in (0, -1)):
            fail(f"axis {fmt(tuple(axis))} does not exist in a scalar: use axis 0, -1 or "
                 f"None", attr="axis")
        return ()
    if axis is None:
        return (1,) * nd if keep else ()
    if len(axis) == 0:
        return s
    axes = sorted(a + nd if a < 0 else a for a in axis)
    if len(set(axes)) != len(axes):
        fail(f"axis {fmt(tuple(axis))} names an axis twice", attr="axis")
    if axes[-1] >= nd or axes[0] < 0:
        fail(f"axis {fmt(tuple(axis))} does not exist in the {nd}-d input {fmt(s)}: use "
             f"axes from {-nd} to {nd - 1}", attr="axis")
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(s))
    return tuple(d for i, d in enumerate(s) if i not in axes)


def percentile_shape(c: Call) -> None:
    """``NumpyPercentileShape``: once the data's shape is fully known, the data reduced
    over ``axis`` (``keepdims``), preceded by the number of percentiles when ``q`` is a
    vector (``q_scalar`` unset: ``q`` is the second input, of known rank 0 or 1)."""
    if not c.ins:
        fail("has no input, but percentile needs the data")
    a = c.ins[0]
    if a is None or any(d < 0 for d in a):
        return
    shape = _reduced(c, a)
    q: Shape | None = ()
    if c.p["q_scalar"] is None:
        if len(c.ins) < 2:
            fail("q_scalar is not set, so percentile reads q from a second input, which "
                 "is missing", attr="q_scalar")
        q = c.ins[1]
        if q is None or len(q) > 1:
            fail(f"{c.input_label(1)} has {rank(q)}, but the percentiles q must be a "
                 f"scalar or a vector (of known rank)", input=1)
    assert q is not None
    c.set_out(0, shape if len(q) == 0 else (q[0],) + shape)


def percentile_type(c: Call) -> None:
    """``NumpyPercentileType``: float64 data gives float64, anything else (unknown
    too) float32."""
    if not c.ins:
        fail("has no input, but percentile needs the data")
    c.set_out(0, "float64" if c.ins[0] == "float64" else "float32")


# ============================================================ boolean mask assign
_STOI = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _start_axis(c: Call) -> int:
    """``std::stoi`` of the raw ``start_axis`` attribute (leading digits; default 0)."""
    text = c.attrs.get("start_axis", "0")
    m = _STOI.match(text)
    if m is None or not -(1 << 31) <= int(m.group(1)) < (1 << 31):
        fail(f"start_axis={text!r} is not an integer", attr="start_axis")
    assert m is not None
    return int(m.group(1))


def _mask_count(c: Call) -> None:
    if len(c.ins) not in (2, 3):
        fail(f"has {plural(len(c.ins), 'input')}, but this layer takes 2 (data, mask) or "
             f"3 (data, mask, value)")


def mask_assign_shape(c: Call) -> None:
    """``BooleanAssignShape``: data and mask of full shape, the mask matching the data
    from ``start_axis`` on; the output has the data's shape; a value array (third input)
    must be a scalar or vector where the mask covers the data, else fit the data's
    dimensions outside the mask."""
    _mask_count(c)
    d, m = c.ins[0], c.ins[1]
    for i, s in ((0, d), (1, m)):
        if s is None or any(x < 0 for x in s):
            fail(f"{c.input_label(i)} has {rank(s)}, but boolean mask assignment needs "
                 f"the full shapes of the data and the mask", input=i)
    assert d is not None and m is not None
    start = _start_axis(c)
    for i, size in enumerate(m):
        k = i + start
        if not 0 <= k < len(d) or d[k] != size:
            fail(f"the mask {fmt(m)} does not match the data {fmt(d)} from start_axis "
                 f"{start} on (dimension {k})", attr="start_axis")
    c.set_out(0, d)
    if len(c.ins) < 3:
        return
    v = c.ins[2]
    if len(m) == len(d):
        if v is None or len(v) > 1:
            fail(f"{c.input_label(2)} has {rank(v)}, but a mask covering the data needs a "
                 f"scalar or vector value (of known rank)", input=2)
        return
    if size_of(c, 2, "boolean mask assignment") <= 1:
        return
    assert v is not None
    outside = list(range(start)) + list(range(start + len(m), len(d)))
    tail = len(d) - start - len(m)
    for k in outside:
        j = k if k < start else len(v) - (len(d) - k)
        if not (0 <= k < len(d) and 0 <= j < len(v)) or d[k] != v[j]:
            fail(f"{c.input_label(2)} has shape {fmt(v)}, which does not fit the data "
                 f"{fmt(d)} outside the mask {fmt(m)} (start_axis {start}, {tail} trailing "
                 f"dimension{'s' if tail != 1 else ''})", input=2)


def mask_assign_type(c: Call) -> None:
    """``BooleanAssignType``: output and data share a type; a value array too, whose
    type must then be known."""
    _mask_count(c)
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0], "the output has")
    if len(c.ins) == 3:
        c.set_in(2, c.ins[0], "the data has")
        c.set_in(0, c.ins[2], "the value has")
        if c.ins[2] is None:
            fail(f"the types of the data and of {c.input_label(2)} are not known: give "
                 f"one of them a dtype", input=2)


RULES: dict[str, Rule] = {
    **rules(["_npi_ediff1d"], ediff1d_shape, ediff1d_type),
    **rules(["_npi_hsplit"], hsplit_shape, split_type),
    **rules(["_npi_dsplit"], dsplit_shape, split_type),
    **rules(["_npi_percentile"], percentile_shape, percentile_type),
    **rules(["_npi_boolean_mask_assign_scalar", "_npi_boolean_mask_assign_tensor"],
            mask_assign_shape, mask_assign_type),
}
