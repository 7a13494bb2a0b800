"""Rules for the reductions (``sum``, ``mean``, ``prod``, ``nansum``, ``nanprod``,
``_square_sum``, ``max``, ``min``, ``norm``, ``moments``), the ops that pick along one
axis (``argmax``, ``argmin``, ``argmax_channel``, ``pick``) and the orderings (``topk``,
``sort``, ``argsort``).  A full reduction gives ``(1,)``;
``max``/``min``/``norm``/``argmax`` and the orderings wait for (or refuse without) the
data's full shape.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Optional

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, fmt, known
from mxexplorer.core.ops.broadcast.helpers import (
    UNARY_TYPE,
    _count,
    _fail,
    _full_data,
    _norm_axis,
    _put_out,
    _rank,
    _rules,
)


# ======================================================================== dtype rules
def norm_type(c: Call) -> None:
    """``NormType``: with ``out_dtype`` the output has it and the data's dtype must be
    known; without, the output has the data's dtype, both ways."""
    _count(c, ("data",))
    out_dtype = c.p.get("out_dtype")
    if out_dtype is not None:
        if c.ins[0] is None:
            _fail(f"{c.input_label(0)} has no known dtype, but norm with out_dtype="
                  f"{out_dtype} needs it: give the data a dtype", attr="out_dtype", input=0)
        c.set_out(0, out_dtype, "(attribute out_dtype)")
        return
    if c.ins[0] is not None:
        c.set_out(0, c.ins[0])
    if c.outs[0] is not None:
        c.set_in(0, c.outs[0], "the output is")


def pick_type(c: Call) -> None:
    """``PickOpType``: the index's dtype must be known (any); the output has the data's
    dtype, both ways."""
    _count(c, ("data", "index"))
    if c.ins[1] is None:
        _fail(f"{c.input_label(1)} has no known dtype, but pick needs the index's dtype: "
              f"give the index a dtype", input=1)
    if c.ins[0] is not None:
        c.set_out(0, c.ins[0])
    if c.outs[0] is not None:
        c.set_in(0, c.outs[0], "the output is")


#: the dtype of the indices sort/topk return (32-bit tensor sizes in MXNet's pip builds)
INDEX_TYPE = "int32"


def topk_type(c: Call) -> None:
    """``TopKType``: indices have ``dtype`` (and a ``value`` topk's hidden indices
    int32); values and the mask have the data's dtype, both ways."""
    _count(c, ("data",))
    ret = c.p["ret_typ"]
    if len(c.outs) > 1:
        c.set_out(1, INDEX_TYPE if ret == "value" else c.p["dtype"],
                  "(the indices topk returns)")
    if ret == "indices":
        c.set_out(0, c.p["dtype"], "(attribute dtype)")
        return
    if c.ins[0] is not None:
        c.set_out(0, c.ins[0])
    if c.outs[0] is not None:
        c.set_in(0, c.outs[0], "the output is")


def sort_type(c: Call) -> None:
    """``SortType``: the sorted values have the data's dtype (both ways); the hidden
    indices are int32."""
    _count(c, ("data",))
    if len(c.outs) > 1:
        c.set_out(1, INDEX_TYPE, "(the indices sort keeps)")
    t = c.ins[0]
    if t is None:
        t = c.outs[0]
    elif c.outs[0] is not None and c.outs[0] != t:
        _fail(f"{c.input_label(0)} has dtype {t}, but the layers that read the sorted "
              f"output need {c.outs[0]}", input=0)
    if t is not None:
        c.set_in(0, t)
        c.set_out(0, t)


def argsort_type(c: Call) -> None:
    """``ArgSortType``: the output has ``dtype``; the data's dtype is free."""
    _count(c, ("data",))
    c.set_out(0, c.p["dtype"], "(attribute dtype)")


def moments_type(c: Call) -> None:
    """``MomentsType``: the mean and the variance have the data's dtype, both ways (in
    MXNet's order: mean and variance from the data, the data from the mean, then from
    the variance)."""
    _count(c, ("data",))
    for i in range(min(2, len(c.outs))):
        if c.ins[0] is not None:
            c.set_out(i, c.ins[0])
    for i in range(min(2, len(c.outs))):
        if c.outs[i] is not None:
            c.set_in(0, c.outs[i], f"{'the mean' if i == 0 else 'the variance'} is")


# ========================================================================= reductions
def _reduce_axes(c: Call, data: MaybeShape, axis: Any, keepdims: bool, exclude: bool,
                 attr: str = "axis") -> Shape:
    """``ReduceAxesShapeImpl``: the shape of ``data`` reduced over ``axis`` (None or ``()``:
    every axis, giving ``(1,)``, or ones with ``keepdims``); ``exclude`` reduces over
    the other axes.  ``data`` of unknown rank (``moments``) refuses any axis."""
    ndim = -1 if data is None else len(data)
    if axis is None or len(axis) == 0:
        return (1,) * ndim if keepdims and data is not None else (1,)
    given = tuple(axis)
    axes = sorted(a + ndim if a < 0 else a for a in given)
    for x, y in zip(axes, axes[1:]):
        if x == y:
            _fail(f"{attr} {given} names an axis twice: give each axis once", attr=attr)
    if data is None:
        _fail(f"{c.input_label(0)} has an unknown shape, but reducing over {attr} "
              f"{given} needs the data's rank", input=0)
    if axes[-1] >= ndim or axes[0] < 0:
        _fail(f"{attr} {given} has an axis the data {fmt(data)} does not have: use axes "
              f"from {-ndim} to {ndim - 1}", attr=attr)
    if keepdims:
        if exclude:
            return tuple(d if i in axes else 1 for i, d in enumerate(data))
        return tuple(1 if i in axes else d for i, d in enumerate(data))
    if exclude:
        return tuple(data[a] for a in axes)
    rest = tuple(d for i, d in enumerate(data) if i not in axes)
    return rest if rest else (1,)


def reduce_axes_shape(c: Call) -> None:
    """``ReduceAxesShape`` (``sum``, ``mean``, ``prod``, ``nansum``, ``nanprod``,
    ``_square_sum``): once the data's rank is known, the reduced shape (unknown sizes
    carried over)."""
    _count(c, ("data",))
    data = c.ins[0]
    if data is None:
        return
    c.set_out(0, _reduce_axes(c, data, c.p.get("axis"), c.p["keepdims"], c.p["exclude"]))


def minmax_shape(c: Call) -> None:
    """``ReduceMinMaxAxesShape`` (``max``, ``min``): as the other reductions, but only once
    the data's full shape is known, and not of an empty array."""
    _count(c, ("data",))
    data = _full_data(c)
    if data is None:
        return
    if 0 in data:
        _fail(f"{c.input_label(0)} has shape {fmt(data)}, which has no elements: "
              f"{c.op} needs at least one", input=0)
    c.set_out(0, _reduce_axes(c, data, c.p.get("axis"), c.p["keepdims"], c.p["exclude"]))


def norm_shape(c: Call) -> None:
    """``NormShape``: once the data's full shape is known, the shape reduced over
    ``axis`` (``keepdims``; no ``exclude``)."""
    _count(c, ("data",))
    data = _full_data(c)
    if data is None:
        return
    c.set_out(0, _reduce_axes(c, data, c.p.get("axis"), c.p["keepdims"], False))


def moments_shape(c: Call) -> None:
    """``MomentsShape``: the mean and the variance have the data's shape reduced over
    ``axes`` (which must be given and not empty); the data's rank must be known."""
    _count(c, ("data",))
    axes = c.p.get("axes")
    out = _reduce_axes(c, c.ins[0], axes, c.p["keepdims"], False, attr="axes")
    if axes is None or len(axes) == 0:
        _fail("moments needs the axes to reduce over (axes); for global moments, list "
              "every axis", attr="axes")
    for i in range(min(2, len(c.outs))):
        c.set_out(i, out)


def _reduce_axis(c: Call, data: Shape, axis: Optional[int], keepdims: bool,
                 attr: str = "axis") -> MaybeShape:
    """``ReduceAxisShapeImpl``: ``data`` without ``axis`` (size 1 with ``keepdims``); no
    axis, or 1-d data, gives ``(1,)`` (ones with ``keepdims``).  Along axis 0 of a 0-d
    array (a numpy op's scalar) the result is unknown, and refused with ``keepdims``."""
    if axis is None or len(data) == 1:
        return (1,) * len(data) if keepdims else (1,)
    if not data:
        if axis not in (0, -1) or keepdims:
            _fail(f"axis {axis} does not exist in {c.input_label(0)}, a scalar (0-d)"
                  f"{' (with keepdims)' if keepdims else ''}", attr=attr)
        return None
    a = _norm_axis(c, axis, len(data), attr)
    if keepdims:
        return data[:a] + (1,) + data[a + 1:]
    return data[:a] + data[a + 1:]


def reduce_axis_shape(c: Call) -> None:
    """``ReduceAxisShape`` (``argmax``, ``argmin``): once the data's full shape is known,
    the shape without ``axis`` (``keepdims``); ``axis=None`` gives ``(1,)``."""
    _count(c, ("data",))
    data = _full_data(c)
    if data is None:
        return
    c.set_out(0, _reduce_axis(c, data, c.p.get("axis"), c.p["keepdims"]))


def argmax_channel_shape(c: Call) -> None:
    """``argmax_channel``: ``argmax`` along axis 1 (fixed), without keepdims."""
    _count(c, ("data",))
    data = _full_data(c)
    if data is None:
        return
    c.set_out(0, _reduce_axis(c, data, 1, False))


def pick_shape(c: Call) -> None:
    """``PickOpShape``: once the data's rank is known, the output is the data without
    ``axis`` (``keepdims``); the index has that shape (with the axis kept as 1 when the
    index has the data's rank).  ``axis=None`` is refused."""
    _count(c, ("data", "index"))
    data = c.ins[0]
    if data is None:
        return
    axis = c.p.get("axis")
    if axis is None:
        _fail("pick needs an axis: axis=None is not supported", attr="axis")
    c.set_out(0, _reduce_axis(c, data, axis, c.p["keepdims"]))
    index = c.ins[1]
    if index is not None and len(index) == 0:
        return
    keep = index is not None and len(index) == len(data)
    c.set_in(1, _reduce_axis(c, data, axis, keep),
             "the data's shape along the picked axis gives")


# ========================================================================= orderings
def _topk_target(c: Call, axis: Optional[int], k: int, mask: bool) -> Shape:
    """``ParseTopKParam``: the shape of what topk/sort/argsort return; needs the data's
    full shape; ``k`` <= 0 means every element; ``axis=None`` flattens the data."""
    data: MaybeShape = c.ins[0]
    if axis is None:
        if not known(data):
            _fail(f"{c.input_label(0)} has {_rank(data)}, but {c.op} over the flattened "
                  f"data (axis=None) needs the data's full shape", input=0)
        assert data is not None
        n = 1
        for d in data:
            n *= d
    else:
        ndim = -1 if data is None else len(data)
        a = axis + ndim if axis < 0 else axis
        if data is None or not 0 <= a < ndim:
            hint = ("" if not data else f": use an axis from {-ndim} to {ndim - 1}, or "
                    f"axis=None for the flattened data")
            _fail(f"axis {axis} does not exist in {c.input_label(0)}, which has "
                  f"{_rank(data)}{hint}", attr="axis")
        assert data is not None
        if not known(data):
            _fail(f"{c.input_label(0)} has shape {fmt(data)}, but {c.op} needs the data's "
                  f"full shape", input=0)
        n = data[a]
    kk = n if k <= 0 else k
    if kk > n:
        _fail(f"k={k} is larger than the {n} elements {c.op} chooses from: use a k up to "
              f"{n} (or k <= 0 for all)", attr="k")
    assert data is not None
    if mask:
        return data
    if axis is None:
        return (kk,)
    a = axis % len(data)
    return data[:a] + (kk,) + data[a + 1:]


def topk_shape(c: Call) -> None:
    """``TopKShape``: ``k`` elements along ``axis`` (the flattened data with
    ``axis=None``) for the values and indices; the mask has the data's shape."""
    _count(c, ("data",))
    ret = c.p["ret_typ"]
    target = _topk_target(c, c.p.get("axis"), c.p["k"], ret == "mask")
    for i in range(1 if ret in ("indices", "mask") else 2):
        _put_out(c, i, target)


def sort_shape(c: Call) -> None:
    """``SortShape``: the sorted values (and the hidden indices) have the data's shape, or
    the flattened data's with ``axis=None``."""
    _count(c, ("data",))
    target = _topk_target(c, c.p.get("axis"), 0, False)
    for i in range(2):
        _put_out(c, i, target)


def argsort_shape(c: Call) -> None:
    """``ArgSortShape``: the indices have the data's shape, or the flattened data's with
    ``axis=None``."""
    _count(c, ("data",))
    _put_out(c, 0, _topk_target(c, c.p.get("axis"), 0, False))


#: ``ReduceAxesShape`` and ``ElemwiseType<1, 1>``
REDUCE = ("sum", "mean", "prod", "nansum", "nanprod", "_square_sum")


RULES: dict[str, Rule] = {
    **_rules(REDUCE, reduce_axes_shape, UNARY_TYPE),
    **_rules(("max", "min"), minmax_shape, UNARY_TYPE),
    **_rules(("norm",), norm_shape, norm_type),
    **_rules(("moments",), moments_shape, moments_type),
    **_rules(("argmax", "argmin"), reduce_axis_shape, UNARY_TYPE),
    **_rules(("argmax_channel",), argmax_channel_shape, UNARY_TYPE),
    **_rules(("pick",), pick_shape, pick_type),
    **_rules(("topk",), topk_shape, topk_type),
    **_rules(("sort",), sort_shape, sort_type),
    **_rules(("argsort",), argsort_shape, argsort_type),
}
