"""Shape rules for the layout ops that slice and repeat: ``slice``, ``slice_axis``,
``slice_like``, ``Crop``, ``_slice_assign``, ``_slice_assign_scalar``, ``repeat``,
``tile`` and ``reverse``.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, fmt, known, table
from mxexplorer.core.ops.layout.dtypes import crop_type, like_type, one_input_type, two_input_type
from mxexplorer.core.ops.layout.helpers import (
    FAMILY,
    _legacy_shape,
    _ndim,
    _need_inputs,
    _opt,
    _put_in,
    _put_out,
    _replace_out,
    _show,
    _size,
)


# ======================================================================== reverse
def same_shape(c: Call) -> None:
    """``ElemwiseShape<1, 1>``: input and output of one shape (``reverse``)."""
    _need_inputs(c, 1)
    shape: MaybeShape = c.ins[0]
    if shape is None:
        shape = c.outs[0]
    if shape is None:
        return
    c.set_in(0, shape)
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])


# ======================================================================== slices
def _slice_ranges(c: Call, d: Shape) -> list[int]:
    """``GetIndexRange`` + ``SetSliceOpOutputDimSize``: the sliced shape of ``d``."""
    begin = _opt(c.p["begin"])
    end = _opt(c.p["end"])
    step = _opt(c.p.get("step"))
    nd = len(d)
    bn, en, sn = _ndim(begin), _ndim(end), _ndim(step)
    if nd > 5:
        c.fail(f"{c.input_label(0)} has {nd} dimensions, but slicing handles at most 5",
               input=0)
    if bn > nd or en > nd:
        c.fail(f"begin={_show(begin)} / end={_show(end)} name more axes than the {nd}-d "
               f"input {fmt(d)} has", attr="begin" if bn > nd else "end")
    if bn != en:
        c.fail(f"begin={_show(begin)} and end={_show(end)} must have the same length",
               attr="end")
    if sn > 0 and sn != bn:
        c.fail(f"step={_show(step)} must have as many entries as begin={_show(begin)}",
               attr="step")
    out = list(d)
    for i in range(max(bn, 0)):
        assert begin is not None and end is not None
        s = 1
        if sn > 0:
            assert step is not None
            si = step[i]
            s = si if si is not None else 1
        if s == 0:
            c.fail(f"step {i} is 0: a slice step cannot be 0", attr="step")
        length = d[i]
        if length < 0:
            out[i] = -1
            continue
        b = e = 0
        if length > 0:
            bi, ei = begin[i], end[i]
            b = bi if bi is not None else (length - 1 if s < 0 else 0)
            e = ei if ei is not None else (-1 if s < 0 else length)
            if b < 0:
                b += length
            if e < 0 and ei is not None:
                e += length
            if b < 0 and s > 0:
                b = 0
            if b > length - 1 and s < 0:
                b = length - 1
            if b < 0 or b > length - 1:
                b = -1
            e = max(e, -1)
            e = min(e, length)
        if e != b and b >= 0:
            if s > 0:
                out[i] = (e - b - 1) // s + 1 if e > b else 0
            else:
                out[i] = (b - e - 1) // (-s) + 1 if e < b else 0
        else:
            out[i] = 0
    return out


def slice_shape(c: Call) -> None:
    """``slice`` (``crop``): per axis ``begin:end:step`` with Python's rules (None for the
    ends, negatives from the end); an unknown dimension stays unknown."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    if len(d) == 0:
        c.fail(f"{c.input_label(0)} is a scalar (0-d): slice needs at least one dimension",
               input=0)
    _put_out(c, 0, _slice_ranges(c, d))


def slice_assign_shape(c: Call) -> None:
    """``_slice_assign``: the value (second input) has the sliced shape; the output is the
    data's shape."""
    _need_inputs(c, 2)
    d = c.ins[0]
    if d is None:
        return
    vshape = list(d) if len(d) == 0 else _slice_ranges(c, d)
    _put_in(c, 1, vshape, "the slice it fills has shape")
    _put_out(c, 0, d)


def slice_assign_scalar_shape(c: Call) -> None:
    """``_slice_assign_scalar``: the output is the data's shape, once fully known."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if known(d):
        _put_out(c, 0, d)


def slice_axis_shape(c: Call) -> None:
    """``slice_axis``: ``begin:end`` along ``axis`` (``end`` None: to the end; negatives
    from the end)."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    nd = len(d)
    axis = int(c.p["axis"])
    real = axis + nd if axis < 0 else axis
    if not 0 <= real < nd:
        c.fail(f"axis {axis} is out of range for the {nd}-d input {fmt(d)}: use an axis "
               f"from {-nd} to {nd - 1}", attr="axis")
    size = d[real]
    begin = int(c.p["begin"])
    end_attr = c.p["end"]
    end = -1
    if begin < 0:
        begin += size
    if size > 0:
        end = size if end_attr is None else int(end_attr)
        if end_attr is not None and end < 0:
            end += size
        if not end <= size:
            c.fail(f"end={end_attr} is past the size {size} of axis {real} of "
                   f"{c.input_label(0)} {fmt(d)}", attr="end")
        if not begin < end:
            c.fail(f"begin={c.p['begin']}, end={end_attr} select nothing of axis {real} "
                   f"(size {size}): begin must come before end", attr="begin")
    else:
        begin = end = 0
    if not end >= 0:
        c.fail(f"end={end_attr} is before the start of axis {real} (size {size})",
               attr="end")
    if not begin >= 0:
        c.fail(f"begin={c.p['begin']} is before the start of axis {real} (size {size})",
               attr="begin")
    if size < 0:
        _put_out(c, 0, d)
        return
    out = list(d)
    out[real] = end - begin
    _put_out(c, 0, out)


def slice_like_shape(c: Call) -> None:
    """``slice_like``: the data cut to the second input's sizes (on ``axes``, or on all
    axes); no dimension of the data may be smaller than the cut."""
    _need_inputs(c, 2)
    i, f = c.ins[0], c.ins[1]
    if i is None or f is None:
        return
    axes = c.p["axes"]
    if axes is not None and len(axes) == 0:
        if len(i) != len(f):
            c.fail(f"{c.input_label(0)} {fmt(i)} and {c.input_label(1)} {fmt(f)} have "
                   f"different ranks: slice_like without axes cuts every axis, so give "
                   f"axes", attr="axes")
        for k in range(len(i)):
            if not i[k] >= f[k]:
                c.fail(f"axis {k} of {c.input_label(1)} has size {f[k]}, more than the "
                       f"{'unknown size' if i[k] < 0 else f'size {i[k]}'} of "
                       f"{c.input_label(0)} {fmt(i)}", attr="axes")
        _put_out(c, 0, f)
        return
    shape = list(i)
    for a in axes or ():
        a = int(a)
        real = a + len(i) if a < 0 else a
        if real < 0 or not real < len(i):
            c.fail(f"axis {a} is out of range for the {len(i)}-d {c.input_label(0)}",
                   attr="axes")
        if not real < len(f):
            c.fail(f"axis {a} is out of range for the {len(f)}-d {c.input_label(1)}",
                   attr="axes")
        shape[real] = f[real]
        if not i[real] >= f[real]:
            c.fail(f"axis {real} of {c.input_label(1)} has size {f[real]}, more than the "
                   f"{'unknown size' if i[real] < 0 else f'size {i[real]}'} of "
                   f"{c.input_label(0)} {fmt(i)}", attr="axes")
    _put_out(c, 0, shape)


def crop_shape(c: Call) -> None:
    """``Crop``: the 4-d data cut to ``h_w`` (one input) or to the height and width of
    the second input (two inputs)."""
    n = int(c.p["num_args"])
    if not 1 <= n <= 3:
        c.fail(f"num_args={n}: Crop takes 1 or 2 inputs", attr="num_args")
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} inputs, but num_args={n}", attr="num_args")
    d = c.ins[0]
    if d is not None and len(d) == 0:
        return
    if _ndim(d) != 4:
        what = "an unknown shape" if d is None else f"shape {fmt(d)}"
        c.fail(f"{c.input_label(0)} has {what}, but Crop needs a known 4-d input (batch, "
               f"channels, height, width)", input=0)
    assert d is not None
    if n == 1:
        hw = c.p["h_w"]
        if hw is None or len(hw) < 2:
            c.fail(f"h_w={_show(hw)} must give the height and width", attr="h_w")
        h, w = int(hw[0]), int(hw[1])
        for size, limit, name in ((h, d[2], "height"), (w, d[3], "width")):
            if size < 1:
                c.fail(f"h_w={_show(hw)}: the crop {name} must be at least 1", attr="h_w")
            if size > limit:
                c.fail(f"h_w={_show(hw)}: the crop {name} {size} is larger than the "
                       f"{'unknown' if limit < 0 else limit} {name} of {c.input_label(0)} "
                       f"{fmt(d)}", attr="h_w")
        crop = (h, w)
    elif n == 2:
        like = c.ins[1]
        if like is None or len(like) < 4:
            what = "an unknown shape" if like is None else f"shape {fmt(like)}"
            c.fail(f"{c.input_label(1)} has {what}, but Crop reads its height and width "
                   f"(dimensions 2 and 3)", input=1)
        assert like is not None
        crop = (like[2], like[3])
    else:
        return
    _replace_out(c, 0, (d[0], d[1], crop[0], crop[1]))


# ======================================================================== repeats
def repeat_shape(c: Call) -> None:
    """``repeat``: ``axis`` multiplied by ``repeats`` (a flat array without ``axis``;
    ``(0,)`` for 0 repeats)."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    r = int(c.p["repeats"])
    if r < 0:
        c.fail(f"repeats={r}: the number of repeats cannot be negative", attr="repeats")
    axis = c.p["axis"]
    real = 0
    if axis is not None:
        nd = len(d)
        real = int(axis) + nd if int(axis) < 0 else int(axis)
        if not 0 <= real < nd:
            c.fail(f"axis {axis} is out of range for the {nd}-d input {fmt(d)}: use an "
                   f"axis from {-nd} to {nd - 1}", attr="axis")
    if r == 0:
        _put_out(c, 0, (0,))
        return
    if axis is not None:
        if d[real] < 0 and r > 1:
            c.fail(f"cannot repeat axis {real} of {c.input_label(0)} {fmt(d)} {r} times: its "
                   f"size is not known", attr="axis")
        out = list(d)
        out[real] = r * d[real]
        _put_out(c, 0, out)
    else:
        _put_out(c, 0, (_size(c, d, c.input_label(0), 0) * r,))


def tile_shape(c: Call) -> None:
    """``tile``: the input (aligned from the last axis) times ``reps``; a 0 in the result
    is an unknown dimension, as MXNet reads it with numpy semantics off."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if not known(d):
        return
    assert d is not None
    reps = c.p["reps"]
    rn = _ndim(reps)
    if rn == 0:
        _put_out(c, 0, d)
        return
    n = max(len(d), rn)
    out = [-1] * n
    i1, i2 = len(d) - 1, rn - 1
    for k in range(n - 1, -1, -1):
        if i1 >= 0 and i2 >= 0:
            assert reps is not None
            out[k] = d[i1] * int(reps[i2])
            i1 -= 1
            i2 -= 1
        elif i1 >= 0:
            out[k] = d[i1]
            i1 -= 1
        elif i2 >= 0:
            assert reps is not None
            out[k] = int(reps[i2])
            i2 -= 1
    for v in out:
        if v < 0 and v != -1:
            c.fail(f"reps={_show(reps)} would give {c.input_label(0)} {fmt(d)} the negative "
                   f"size {v}: each repetition count must be 0 or more", attr="reps")
    _put_out(c, 0, _legacy_shape(out))


RULES: dict[str, Rule] = {
    **table(FAMILY, ["slice"], slice_shape, one_input_type),
    **table(FAMILY, ["_slice_assign"], slice_assign_shape, two_input_type),
    **table(FAMILY, ["_slice_assign_scalar"], slice_assign_scalar_shape,
            one_input_type),
    **table(FAMILY, ["slice_axis"], slice_axis_shape, one_input_type),
    **table(FAMILY, ["slice_like"], slice_like_shape, like_type),
    **table(FAMILY, ["Crop"], crop_shape, crop_type),
    **table(FAMILY, ["repeat"], repeat_shape, one_input_type),
    **table(FAMILY, ["tile"], tile_shape, one_input_type),
    **table(FAMILY, ["reverse"], same_shape, one_input_type),
}
