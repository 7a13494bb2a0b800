"""Rules for the numpy-style ops that reshape or move axes: ``_np_transpose``,
``_np_reshape``, ``_npx_reshape`` (and its codes), ``_np_squeeze``, ``_np_roll``,
``_npi_flip``, ``_np_moveaxis``, ``_npi_rot90`` and ``_npi_broadcast_to``.  Must not
import MXNet or Qt.
"""
from __future__ import annotations

from typing import Sequence

from mxexplorer.core.ops.base import Call, Rule, Shape, fmt, known, table
from mxexplorer.core.ops.numpy_ops.helpers import (
    FAMILY,
    _count,
    _label,
    _norm_axis,
    _show_axes,
    same_shape,
)


# ======================================================== reshape, transpose, axes
def transpose_shape(c: Call) -> None:
    """_np_transpose: ``axes`` a permutation (None: reversed), both ways."""
    s, o = c.ins[0], c.outs[0]
    if s is not None and len(s) > 6:
        c.fail(f"{_label(c, 0)} has {len(s)} dimensions; transpose takes at most 6", input=0)
    ndim = len(s) if s is not None else len(o) if o is not None else -1
    if ndim < 0:
        return
    if s is not None and o is not None and len(s) != len(o):
        c.fail(f"{_label(c, 0)} has {len(s)} dimensions but the output {len(o)}", input=0)
    axes = c.p["axes"]
    if axes is not None:
        if len(axes) != ndim:
            c.fail(f"axes={_show_axes(axes)} has {len(axes)} entries for a {ndim}-d input: "
                   f"give one per dimension", attr="axes")
        perm = [_norm_axis(c, a, ndim, "axes", "axes entry") for a in axes]
        if len(set(perm)) != ndim:
            c.fail(f"axes={_show_axes(axes)} repeats an axis: give a permutation of 0 to "
                   f"{ndim - 1}", attr="axes")
    else:
        perm = list(range(ndim - 1, -1, -1))
    if s is not None:
        c.set_out(0, tuple(s[a] for a in perm))
    o = c.outs[0]
    if o is not None:
        back = [-1] * ndim
        for i, a in enumerate(perm):
            back[a] = o[i]
        c.set_in(0, tuple(back))


def _reshape_fill(c: Call, src: Shape, dst: Shape, what: str) -> Shape | None:
    """NumpyReshapeInferShape: ``dst`` with its one unknown dim from ``src``'s size."""
    if known(src) and known(dst):
        if _count(src) != _count(dst):
            c.fail(f"cannot reshape {what} into newshape {fmt(dst)}: {_count(src)} elements "
                   f"against {_count(dst)}", attr="newshape")
        return dst
    if not known(src):
        return None
    unknown = [i for i, d in enumerate(dst) if d < 0]
    if len(unknown) > 1:
        return None
    prod = 1
    for d in dst:
        if d >= 0:
            prod *= d
    if prod == 0 or _count(src) % prod:
        c.fail(f"cannot reshape {what}: {_count(src)} elements do not fill shape "
               f"{fmt(dst)}", attr="newshape")
    out = list(dst)
    out[unknown[0]] = _count(src) // prod
    return tuple(out)


def np_reshape_shape(c: Call) -> None:
    """_np_reshape: ``newshape`` with at most one -1 (filled from the size), both ways."""
    newshape = c.p["newshape"]
    if newshape is not None:
        if any(d < -1 for d in newshape):
            c.fail(f"newshape={_show_axes(newshape)} has a negative size other than -1: use "
                   f"-1 for the one size to infer", attr="newshape")
        if sum(1 for d in newshape if d == -1) > 1:
            c.fail(f"newshape={_show_axes(newshape)} has more than one -1: only one size "
                   f"can be inferred", attr="newshape")
    s = c.ins[0]
    target = tuple(newshape) if newshape is not None else None
    done = None
    if s is not None and target is not None:
        done = _reshape_fill(c, s, target, f"{_label(c, 0)} of shape {fmt(s)}")
    c.set_out(0, done if done is not None else target)
    if done is None:
        o = c.outs[0]
        if o is not None and s is not None:
            back = _reshape_fill(c, o, s, f"to the output's shape {fmt(o)}")
            if back is not None:
                c.set_in(0, back)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _npx_reshape_forward(c: Call, src: Shape, target: Sequence[int], what: str) -> Shape:
    """NumpyXReshapeInferShape with a known input: -1 infer, -2 copy, -3 drop a 1,
    -4 copy the rest, -5 merge two, -6 split one into the next two values."""
    def refuse(why: str) -> None:
        c.fail(f"cannot reshape {what} into newshape={_show_axes(target)}: {why}",
               attr="newshape")
    if all(d >= 0 for d in target):
        if _count(src) != _count(tuple(target)):
            refuse(f"{_count(src)} elements against {_count(tuple(target))}")
        return tuple(target)
    out: list[int] = []
    unknown = -1
    prod = 1
    k = 0
    i = 0
    n = len(src)
    while i < len(target):
        d = target[i]
        if d == -1:
            if unknown >= 0:
                refuse("only one size can be inferred")
            unknown = len(out)
            out.append(-1)
            k += 1
        elif d == -2:
            if k >= n:
                refuse("-2 has no input dimension left to copy")
            prod *= src[k]
            out.append(src[k])
            k += 1
        elif d == -3:
            if k >= n:
                refuse("-3 has no input dimension left to drop")
            if src[k] != 1:
                refuse(f"-3 drops only a dimension of size 1, not {src[k]}")
            k += 1
        elif d == -4:
            while k < n:
                prod *= src[k]
                out.append(src[k])
                k += 1
        elif d == -5:
            if k >= n - 1:
                refuse("-5 needs two input dimensions left to merge")
            prod *= src[k] * src[k + 1]
            out.append(src[k] * src[k + 1])
            k += 2
        elif d == -6:
            if i + 2 >= len(target):
                refuse("-6 must be followed by the two sizes to split into")
            if k >= n:
                refuse("-6 has no input dimension left to split")
            d0 = src[k]
            k += 1
            d1, d2 = target[i + 1], target[i + 2]
            i += 2
            if d1 == -1 and d2 == -1:
                refuse("the two sizes after -6 cannot both be -1")
            if d1 == -1:
                if d2 == 0:
                    refuse("the size after -6 cannot be 0")
                d1 = _trunc_div(d0, d2)
            if d2 == -1:
                if d1 == 0:
                    refuse("the size after -6 cannot be 0")
                d2 = _trunc_div(d0, d1)
            if d1 * d2 != d0:
                refuse(f"{d1} x {d2} does not split the input dimension {d0}")
            prod *= d0
            out.extend((d1, d2))
        else:
            prod *= d
            out.append(d)
            k += 1
        i += 1
    if unknown >= 0:
        if prod == 0 or _count(src) % prod:
            refuse(f"{_count(src)} elements do not fill it")
        out[unknown] = _count(src) // prod
    if any(d < 0 for d in out) or _count(tuple(out)) != _count(src):
        refuse(f"{_count(src)} elements against {_show_axes(out)}")
    return tuple(out)


def npx_reshape_shape(c: Call) -> None:
    """_npx_reshape: numpy reshape with MXNet's codes (-1 infer, -2 copy, -3 drop a 1,
    -4 copy the rest, -5 merge two, -6 split), ``reverse`` reading from the right; forward
    only, once the input is fully known."""
    newshape = c.p["newshape"]
    if newshape is None:
        return
    if any(d < -6 for d in newshape):
        c.fail(f"newshape={_show_axes(newshape)} has a code below -6: the codes are -1 to -6",
               attr="newshape")
    if sum(1 for d in newshape if d == -1) > 1:
        c.fail(f"newshape={_show_axes(newshape)} has more than one -1: only one size can be "
               f"inferred", attr="newshape")
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    what = f"{_label(c, 0)} of shape {fmt(s)}"
    if c.p["reverse"]:
        out = _npx_reshape_forward(c, s[::-1], tuple(newshape)[::-1], what)[::-1]
    else:
        out = _npx_reshape_forward(c, s, tuple(newshape), what)
    c.set_out(0, out)


def squeeze_shape(c: Call) -> None:
    """_np_squeeze: drop the size-1 axes (those of ``axis``, which must be 1); a scalar
    when nothing is left."""
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    axis = c.p["axis"]
    if len(s) == 0:
        if axis is not None and (len(axis) != 1 or axis[0] not in (0, -1)):
            c.fail(f"axis={_show_axes(axis)} does not fit a scalar (0-d) input", attr="axis")
        c.set_out(0, ())
        return
    drop = set()
    if axis is not None:
        for a in axis:
            k = _norm_axis(c, a, len(s), "axis")
            if s[k] != 1:
                c.fail(f"axis {a} of {_label(c, 0)} has size {s[k]}: only axes of size 1 "
                       f"can be squeezed", attr="axis")
            drop.add(k)
    else:
        drop = {i for i, d in enumerate(s) if d == 1}
    c.set_out(0, tuple(d for i, d in enumerate(s) if i not in drop))


def roll_shape(c: Call) -> None:
    """_np_roll: ``shift`` required; ``axis`` checked against the input's rank (an
    unknown rank refuses every axis, as in MXNet); same shape."""
    shift, axis = c.p["shift"], c.p["axis"]
    if shift is None:
        c.fail("shift is required: give the number of places to shift", attr="shift")
    if len(shift) > 1 and axis is not None and len(axis) != len(shift):
        c.fail(f"shift={_show_axes(shift)} and axis={_show_axes(axis)} must have the same "
               f"length", attr="axis")
    if axis is None and len(shift) > 1:
        c.fail(f"shift={_show_axes(shift)} must be one number when no axis is given",
               attr="shift")
    if axis is not None:
        s = c.ins[0]
        ndim = len(s) if s is not None else -1
        if ndim < 0:
            c.fail("the rank of the input must be known before roll's axis can be checked",
                   attr="axis")
        if not axis:
            c.fail("axis=() names no axis: give one or more, or None", attr="axis")
        axes = sorted(a + ndim if a < 0 else a for a in axis)
        if len(set(axes)) != len(axes):
            c.fail(f"axis={_show_axes(axis)} repeats an axis", attr="axis")
        if axes[-1] >= ndim or axes[0] < 0:
            c.fail(f"axis={_show_axes(axis)} is out of range for a {ndim}-d input: use axes "
                   f"from {-ndim} to {ndim - 1}", attr="axis")
    same_shape(c)


def moveaxis_shape(c: Call) -> None:
    """_np_moveaxis: ``source`` axes moved to ``destination``; forward only."""
    s = c.ins[0]
    src, dst = c.p["source"], c.p["destination"]
    if s is not None and len(s) > 6:
        c.fail(f"{_label(c, 0)} has {len(s)} dimensions; moveaxis takes at most 6", input=0)
    if src is None or dst is None:
        return
    if len(src) != len(dst):
        c.fail(f"source={_show_axes(src)} and destination={_show_axes(dst)} must have the "
               f"same length", attr="destination")
    if s is None:
        if src:
            c.fail("the rank of the input must be known before moveaxis can place axes",
                   attr="source")
        return
    ndim = len(s)
    real_src = [_norm_axis(c, a, ndim, "source", "source axis") for a in src]
    real_dst = [_norm_axis(c, a, ndim, "destination", "destination axis") for a in dst]
    if ndim > 1:
        if len(set(real_src)) != len(real_src):
            c.fail(f"source={_show_axes(src)} repeats an axis", attr="source")
        if len(set(real_dst)) != len(real_dst):
            c.fail(f"destination={_show_axes(dst)} repeats an axis", attr="destination")
    perm = [-1] * ndim
    for a, b in zip(real_src, real_dst):
        perm[b] = a
    free = [a for a in range(ndim) if a not in real_src]
    for i in range(ndim):
        if perm[i] < 0 and free:
            perm[i] = free.pop(0)
    c.set_out(0, tuple(s[a] for a in perm))


def rot90_shape(c: Call) -> None:
    """_npi_rot90: ``axes`` two distinct axes; odd ``k`` swaps their sizes."""
    axes = c.p["axes"]
    if axes is None or len(axes) != 2:
        c.fail("axes must name two axes, such as (0, 1)", attr="axes")
    s = c.ins[0]
    ndim = len(s) if s is not None else -1
    real = [a + ndim if a < 0 else a for a in axes]
    if real[0] == real[1]:
        c.fail(f"axes={_show_axes(axes)} names one axis twice", attr="axes")
    if s is None:
        c.fail("the rank of the input must be known before rot90's axes can be checked",
               attr="axes")
    if any(a > ndim or a < 0 for a in real):
        c.fail(f"axes={_show_axes(axes)} is out of range for a {ndim}-d input", attr="axes")
    assert s is not None
    k = c.p["k"] % 4
    if k % 2 == 0:
        c.set_out(0, s)
        return
    if any(a >= ndim for a in real):
        c.fail(f"axes={_show_axes(axes)} is out of range for a {ndim}-d input", attr="axes")
    out = list(s)
    out[real[0]], out[real[1]] = s[real[1]], s[real[0]]
    c.set_out(0, tuple(out))


def broadcast_to_shape(c: Call) -> None:
    """_npi_broadcast_to: the input (fully known) broadcast to ``shape``; -2 copies the
    input's dimension."""
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    target = list(c.p["shape"] or ())
    if len(s) > len(target):
        c.fail(f"{_label(c, 0)} of shape {fmt(s)} has more dimensions than shape="
               f"{_show_axes(target)}", attr="shape")
    for i in range(len(target) - 1, -1, -1):
        j = i - len(target) + len(s)
        if j < 0:
            break
        if target[i] == -2:
            target[i] = s[j]
        if s[j] != target[i] and s[j] != 1:
            c.fail(f"{_label(c, 0)} of shape {fmt(s)} cannot be broadcast to shape="
                   f"{_show_axes(c.p['shape'] or ())}", attr="shape")
    if any(d < 0 for d in target):
        c.fail(f"shape={_show_axes(c.p['shape'] or ())} must be fully known (-2 only where "
               f"the input has a dimension to copy)", attr="shape")
    c.set_out(0, tuple(target))


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_np_transpose",), transpose_shape),
    **table(FAMILY, ("_np_reshape",), np_reshape_shape),
    **table(FAMILY, ("_npx_reshape",), npx_reshape_shape),
    **table(FAMILY, ("_np_squeeze",), squeeze_shape),
    **table(FAMILY, ("_np_roll",), roll_shape),
    **table(FAMILY, ("_npi_flip",), same_shape),
    **table(FAMILY, ("_np_moveaxis",), moveaxis_shape),
    **table(FAMILY, ("_npi_rot90",), rot90_shape),
    **table(FAMILY, ("_npi_broadcast_to",), broadcast_to_shape),
}
