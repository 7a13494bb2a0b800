"""Rules for the numpy-style ops that join arrays: ``_npi_concatenate``, ``_npi_stack``,
``_npi_hstack``, ``_npi_dstack``, ``_npi_vstack`` and ``_npi_column_stack``, with MXNet
1.9.1's quirks (hstack and dstack leave their inputs' joined dimension unknown
afterwards, column_stack writes a 1-d input back as ``(1,)``, vstack and column_stack
add an output size known beforehand to the total).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Callable

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, fmt, known, table
from mxexplorer.core.ops.numpy_ops.helpers import (
    FAMILY,
    _check_axis,
    _count,
    _extra,
    _label,
    _optional_int,
)


# ============================================================================ helpers
def _assign(y: MaybeShape, x: MaybeShape) -> tuple[MaybeShape, bool]:
    """MXNet's ``shape_assign`` as such, for the ops that ignore its verdict: unknown
    dims of ``y`` filled from ``x`` up to the first disagreement (then False)."""
    if y is None:
        return x, True
    if x is None:
        return y, True
    if len(y) != len(x):
        return y, False
    out = list(y)
    for i, (a, b) in enumerate(zip(y, x)):
        if a < 0:
            out[i] = b
        elif b >= 0 and a != b:
            return tuple(out), False
    return tuple(out), True


def _join_check(c: Call, dshape: MaybeShape, shapes: list[MaybeShape], axis: int) -> Shape:
    """Every input (and the output) must agree with ``dshape`` off ``axis``."""
    assert dshape is not None
    for i, s in enumerate(shapes):
        _, ok = _assign(s, dshape)
        if not ok:
            c.fail(f"{_label(c, i)} has shape {fmt(s)}, but the arrays joined along axis "
                   f"{axis} must match {fmt(dshape)} elsewhere", input=i)
    return dshape


def concatenate_shape(c: Call) -> None:
    """_npi_concatenate: join along ``axis`` (None: flatten every input first); the
    other dims agree across inputs and output, both ways."""
    axis = _extra(c, "axis", _optional_int, 0)
    shapes = list(c.ins)
    if axis is None:
        for i, s in enumerate(shapes):
            if not known(s):
                c.fail(f"{_label(c, i)} must have a known shape to be flattened (axis=None)",
                       input=i)
            assert s is not None
            shapes[i] = (_count(s),)
            c.ins[i] = shapes[i]
        axis = 0
    dshape: MaybeShape = None
    total = 0
    unknown = False
    ax = -1
    for s in shapes:
        if s is not None and len(s) > 0:
            ax = _check_axis(c, axis, len(s))
            unknown = unknown or s[ax] < 0
            total += s[ax]
            t = list(s)
            t[ax] = -1
            dshape, _ = _assign(dshape, tuple(t))
    o = c.outs[0]
    if o is not None and len(o) > 0:
        ax = _check_axis(c, axis, len(o))
        t = list(o)
        t[ax] = -1
        dshape, _ = _assign(dshape, tuple(t))
    if dshape is None:
        return
    if len(dshape) == 0:
        c.fail("scalars (0-d arrays) cannot be concatenated")
    _join_check(c, dshape, shapes, ax)
    for i in range(len(shapes)):
        c.ins[i] = _assign(shapes[i], dshape)[0]
    out = list(dshape)
    if not unknown:
        out[ax] = total
    c.set_out(0, tuple(out))


def _stack_like(c: Call, axis: int, lift: Callable[[Shape], Shape], attr: str) -> None:
    """hstack, dstack: inputs lifted to the needed rank, joined along ``axis``; MXNet
    leaves the joined dim of every input unknown afterwards (it overwrites it)."""
    dshape: MaybeShape = None
    total = 0
    unknown = False
    for i, s in enumerate(c.ins):
        if s is None:
            continue
        s = lift(s)
        ax = _check_axis(c, axis, len(s), attr)
        if s[ax] < 0:
            unknown = True
        else:
            total += s[ax]
        t = list(s)
        t[ax] = -1
        c.ins[i] = tuple(t)
        dshape, _ = _assign(dshape, c.ins[i])
    o = c.outs[0]
    if o is not None and len(o) > 0:
        ax = _check_axis(c, axis, len(o), attr)
        t = list(o)
        t[ax] = -1
        dshape, _ = _assign(dshape, tuple(t))
    if dshape is None:
        return
    if len(dshape) == 0:
        c.fail("scalars (0-d arrays) cannot be joined")
    _join_check(c, dshape, list(c.ins), axis)
    for i in range(len(c.ins)):
        c.ins[i] = _assign(c.ins[i], dshape)[0]
    out = list(dshape)
    if not unknown:
        out[axis] = total
    c.set_out(0, tuple(out))


def hstack_shape(c: Call) -> None:
    first = c.ins[0] if c.ins else None
    axis = 1 if first is not None and len(first) > 1 else 0
    _stack_like(c, axis, lambda s: s if len(s) else (1,), "dim")


def dstack_shape(c: Call) -> None:
    def lift(s: Shape) -> Shape:
        if len(s) == 0:
            return (1, 1, 1)
        if len(s) == 1:
            return (1, s[0], 1)
        if len(s) == 2:
            return (s[0], s[1], 1)
        return s
    _stack_like(c, 2, lift, "dim")


def _stack_2d(c: Call, column: bool) -> None:
    """vstack (``column`` False) and column_stack: 0-d and 1-d inputs lifted to 2-d (a
    row for vstack, a column for column_stack), joined along axis 0 or 1.  MXNet's
    quirks are kept: an output size known beforehand is added to the inputs' total, and
    column_stack writes a 1-d input back as (1,)."""
    ax = 1 if column else 0
    tmp: list[MaybeShape] = []
    for s in c.ins:
        if s is not None and len(s) == 0:
            tmp.append((1, 1))
        elif s is not None and len(s) == 1:
            tmp.append((s[0], 1) if column else (1, s[0]))
        else:
            tmp.append(s)
    dshape: MaybeShape = None
    for t in tmp + [c.outs[0]]:
        if t is not None:
            dshape, _ = _assign(dshape, (-1,) * len(t))
    for i, t in enumerate(tmp):
        if t is not None and dshape is not None and len(t) != len(dshape):
            c.fail(f"{_label(c, i)} has {len(c.ins[i] or ())} dimensions, but the others "
                   f"{len(dshape)}", input=i)
        tmp[i] = _assign(t, dshape)[0]
    if c.outs[0] is not None and dshape is not None and len(c.outs[0]) != len(dshape):
        c.fail(f"the output has {len(c.outs[0])} dimensions, but the inputs {len(dshape)}")
    c.set_out(0, dshape)
    if dshape is None:
        return
    count, total, pos = 0, 0, -1
    for i, t in enumerate(tmp):
        assert t is not None
        if t[ax] < 0:
            count, pos = count + 1, i
        else:
            total += t[ax]
        dshape, _ = _assign(dshape, t[:ax] + (-1,) + t[ax + 1:])
    o = c.outs[0]
    assert o is not None and dshape is not None
    if o[ax] < 0:
        count, pos = count + 1, -1
    else:
        total += o[ax]
    dshape, _ = _assign(dshape, o[:ax] + (-1,) + o[ax + 1:])
    for i, t in enumerate(tmp):
        merged, ok = _assign(t, dshape)
        if not ok:
            c.fail(f"{_label(c, i)} has shape {fmt(c.ins[i])}, which does not stack with "
                   f"the others ({fmt(dshape)} apart from the joined axis)", input=i)
        tmp[i] = merged
    c.set_out(0, dshape)
    assert dshape is not None
    if not known(dshape[:ax] + (0,) + dshape[ax + 1:]):
        return
    if count == 0:
        c.set_out(0, dshape[:ax] + (total,) + dshape[ax + 1:],
                  "(MXNet 1.9.1 adds an output size known beforehand to the inputs' total)")
    elif count == 1:
        o = c.outs[0]
        assert o is not None
        if pos >= 0:
            t = tmp[pos]
            assert t is not None
            guess = o[ax] - total
            if guess < -1:
                c.fail(f"{_label(c, pos)} has an unknown size on the joined axis while the "
                       f"output is known: MXNet 1.9.1 cannot infer it (it counts the output "
                       f"in the total)", input=pos)
            tmp[pos] = t[:ax] + (guess,) + t[ax + 1:]
        else:
            c.outs[0] = o[:ax] + (total,) + o[ax + 1:]
    else:
        return
    for i, s in enumerate(c.ins):
        t = tmp[i]
        if s is None or t is None:
            continue
        if len(s) == 1:
            c.ins[i] = (t[1],)
        elif len(s) >= 2:
            c.ins[i] = t


def vstack_shape(c: Call) -> None:
    _stack_2d(c, column=False)


def column_stack_shape(c: Call) -> None:
    _stack_2d(c, column=True)


def stack_shape(c: Call) -> None:
    """_npi_stack: the inputs merged as MXNet merges them (a disagreement is not
    checked), a new axis of ``num_args`` at ``axis``; nothing learnt backwards."""
    dshape: MaybeShape = None
    for s in c.ins:
        dshape, _ = _assign(dshape, s)
    if not known(dshape):
        return
    assert dshape is not None
    ax = _check_axis(c, c.p["axis"], len(dshape) + 1)
    out = list(dshape)
    out.insert(ax, c.p["num_args"])
    c.set_out(0, tuple(out))


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_npi_concatenate",), concatenate_shape),
    **table(FAMILY, ("_npi_hstack",), hstack_shape),
    **table(FAMILY, ("_npi_dstack",), dstack_shape),
    **table(FAMILY, ("_npi_vstack",), vstack_shape),
    **table(FAMILY, ("_npi_column_stack",), column_stack_shape),
    **table(FAMILY, ("_npi_stack",), stack_shape),
}
