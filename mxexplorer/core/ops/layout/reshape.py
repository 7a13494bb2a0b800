"""Shape rules for the layout ops that reshape and move axes: ``Reshape`` (its codes 0, -1,
-2, -3, -4, ``reverse`` and the deprecated ``target_shape``/``keep_highest``; it does
not compare element counts, MXNet disabled that check), ``reshape_like``, ``Flatten``,
``expand_dims``, ``squeeze``, ``transpose``, ``SwapAxis``, ``depth_to_space`` and
``space_to_depth``.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Sequence

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, fmt, known, table
from mxexplorer.core.ops.layout.dtypes import known_input_type, like_type, one_input_type
from mxexplorer.core.ops.layout.helpers import (
    FAMILY,
    _cdiv,
    _cmod,
    _ndim,
    _need_inputs,
    _put_in,
    _put_out,
    _replace_out,
    _show,
    _size,
)


# ======================================================================= reshape
def _reshape_error(c: Call, d: Shape, codes: Sequence[int], why: str) -> None:
    c.fail(f"cannot reshape {fmt(d)} into {_show(codes)}: {why}", attr="shape")


def _infer_reshape(c: Call, codes: Sequence[int], d: Shape, reverse: bool) -> list[int]:
    """``InferReshapeShape``: the output of ``Reshape(shape=codes)`` on ``d``."""
    dv = list(d)
    pv = list(codes)
    if reverse:
        dv.reverse()
        pv.reverse()
    tmp: list[int] = []
    src = 0
    inf = -1
    i = 0
    n = len(pv)
    while i < n:
        code = pv[i]
        if code == 0:
            if not src < len(dv):
                _reshape_error(c, d, codes, f"code 0 copies input dimension {src}, which a "
                               f"{len(d)}-d input does not have")
            tmp.append(dv[src])
            src += 1
        elif code == -1:
            if inf >= 0:
                _reshape_error(c, d, codes, "only one dimension can be -1 (inferred)")
            inf = i
            tmp.append(1)
            src += 1
        elif code == -2:
            tmp.extend(dv[src:])
            src = max(src, len(dv))
        elif code == -3:
            if not src < len(dv) - 1:
                _reshape_error(c, d, codes, f"code -3 merges input dimensions {src} and "
                               f"{src + 1}, which a {len(d)}-d input does not have")
            d1, d2 = dv[src], dv[src + 1]
            src += 2
            tmp.append(-1 if d1 < 0 or d2 < 0 else d1 * d2)
        elif code == -4:
            if not i + 2 < n:
                _reshape_error(c, d, codes, "code -4 must be followed by the two sizes to "
                               "split into")
            if not src < len(dv):
                _reshape_error(c, d, codes, f"code -4 splits input dimension {src}, which "
                               f"a {len(d)}-d input does not have")
            d0 = dv[src]
            src += 1
            d1, d2 = pv[i + 1], pv[i + 2]
            i += 2
            if d1 == -1 and d2 == -1:
                _reshape_error(c, d, codes, "the two sizes after -4 cannot both be -1")
            if d1 == -1 and d0 >= 0:
                if d2 == 0:
                    _reshape_error(c, d, codes, "code -4 cannot split into a size 0")
                d1 = _cdiv(d0, d2)
            if d2 == -1 and d0 >= 0:
                if d1 == 0:
                    _reshape_error(c, d, codes, "code -4 cannot split into a size 0")
                d2 = _cdiv(d0, d1)
            if not (d1 * d2 == d0 or d0 == -1):
                _reshape_error(c, d, codes, f"code -4 splits dimension {d0} into {d1} x "
                               f"{d2}, which do not multiply to {d0}")
            tmp.append(d1)
            tmp.append(d2)
        else:
            tmp.append(code)
            src += 1
        i += 1
    if inf >= 0 and inf < len(tmp):
        # as MXNet: the inferred size goes to the code's position in ``shape``
        if known(d):
            new_size = 1
            for x in tmp:
                new_size *= x
            if new_size == 0:
                _reshape_error(c, d, codes, "the other sizes multiply to 0, so the -1 "
                               "cannot be inferred")
            if new_size < 0:
                _reshape_error(c, d, codes, "a size cannot be negative")
            tmp[inf] = math.prod(d) // new_size
        else:
            tmp[inf] = -1
    if reverse:
        tmp.reverse()
    return tmp


def _reverse_reshape(c: Call, out: MaybeShape) -> None:
    """``ReverseReshapeInferShape``: a fully known output gives the input's one unknown
    dimension."""
    d = c.ins[0]
    if d is None or out is None or not known(out):
        return
    if known(d):
        return
    missing = [k for k, v in enumerate(d) if v < 0]
    if len(missing) != 1:
        return
    prod = 1
    for v in d:
        if v >= 0:
            prod *= v
    if prod == 0:
        c.fail(f"{c.input_label(0)} has shape {fmt(d)} with a 0 dimension, so its unknown "
               f"dimension cannot be found from the output {fmt(out)}", input=0)
    filled = list(d)
    filled[missing[0]] = math.prod(out) // prod
    c.set_in(0, tuple(filled), "the output's size needs")


def reshape_shape(c: Call) -> None:
    """``Reshape``: ``shape`` with MXNet's codes (0 copy, -1 infer, -2 copy the rest, -3
    merge two, -4 split one; ``reverse`` reads them from the right), else the deprecated
    ``target_shape`` (0 inferred, ``keep_highest``); an input with one unknown dimension
    is completed from a known output.  MXNet 1.9.1 does not compare the element counts."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    shape = c.p["shape"]
    target = c.p["target_shape"]
    if shape is None:
        c.fail("shape=None is not a shape: give the target shape, such as (0, -1)",
               attr="shape")
    o: list[int]
    if len(shape) != 0:
        o = _infer_reshape(c, [int(v) for v in shape], d, bool(c.p["reverse"]))
    elif target is not None:
        o = [int(v) for v in target]
        keep = bool(c.p["keep_highest"])
        if keep:
            if not o:
                c.fail("keep_highest needs a non-empty target_shape", attr="target_shape")
            o[0] = d[0]
        zeros = [k for k in range(1 if keep else 0, len(o)) if o[k] == 0]
        if len(zeros) == 1:
            o[zeros[-1]] = 1
            have = _size(c, d, c.input_label(0), 0)
            rest = 1
            for v in o:
                if v < 0:
                    c.fail(f"target_shape {_show(target)} has a negative size",
                           attr="target_shape")
                rest *= v
            if rest == 0:
                c.fail(f"cannot reshape {fmt(d)} into target_shape {_show(target)}: the "
                       f"other sizes multiply to 0", attr="target_shape")
            o[zeros[-1]] = have // rest
    else:
        _reverse_reshape(c, c.outs[0])
        return
    for v in o:
        if v < -1:
            c.fail(f"cannot reshape {fmt(d)} into {_show(shape or target)}: it would give "
                   f"the negative size {v}", attr="shape")
    _reverse_reshape(c, tuple(o))
    _put_out(c, 0, o, f"(reshaping {fmt(c.ins[0])})")
    _reverse_reshape(c, c.outs[0])


def reshape_like_shape(c: Call) -> None:
    """``reshape_like``: ``lhs`` with its dimensions ``lhs_begin:lhs_end`` replaced by
    ``rhs``'s ``rhs_begin:rhs_end``; both must be known and hold as many elements (MXNet
    reads the first two inputs and ignores any others)."""
    c.expect_at_least(2)
    lhs, rhs = c.ins[0], c.ins[1]

    def span(shape: MaybeShape, side: str) -> tuple[int, int]:
        nd = _ndim(shape)
        begin, end = c.p[f"{side}_begin"], c.p[f"{side}_end"]
        b = 0 if begin is None else int(begin)
        if b < 0:
            b += nd
        e = nd if end is None else int(end)
        if end is not None and e < 0:
            e += nd
        label = c.input_label(0 if side == "lhs" else 1)
        if shape is None:
            c.fail(f"{label} has an unknown shape, but reshape_like needs it", attr=None)
        if not (e <= nd and b < e and e >= 0 and b >= 0):
            c.fail(f"{side}_begin={begin}, {side}_end={end} select no dimensions of the "
                   f"{nd}-d {label}: use {side}_begin < {side}_end within 0..{nd}",
                   attr=f"{side}_begin")
        return b, e

    lb, le = span(lhs, "lhs")
    rb, re_ = span(rhs, "rhs")
    assert lhs is not None and rhs is not None
    oshape = lhs[:lb] + rhs[rb:re_] + lhs[le:]
    have = _size(c, lhs, c.input_label(0), 0)
    want = _size(c, oshape, f"the new shape {fmt(oshape)}")
    if have != want:
        c.fail(f"cannot reshape {c.input_label(0)} {fmt(lhs)} ({have} elements) into "
               f"{fmt(oshape)} ({want} elements)")
    _put_out(c, 0, oshape)


def flatten_shape(c: Call) -> None:
    """``Flatten``: ``(d0, d1*d2*...)``, from a fully known input only."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if not known(d):
        return
    assert d is not None
    if len(d) == 0:
        c.fail(f"{c.input_label(0)} is a scalar (0-d): Flatten needs at least one dimension",
               input=0)
    _put_out(c, 0, (d[0], math.prod(d[1:])))


def expand_dims_shape(c: Call) -> None:
    """``expand_dims``: a dimension of size 1 at ``axis`` (in ``[-ndim-1, ndim]``); works
    both ways."""
    _need_inputs(c, 1)
    i, o = c.ins[0], c.outs[0]
    if i is None and o is None:
        return
    indim = len(i) if i is not None else _ndim(o) - 1
    axis = int(c.p["axis"])
    real = axis + indim + 1 if axis < 0 else axis
    if not 0 <= real <= indim:
        c.fail(f"axis {axis} is out of range for a {indim}-d input: use an axis from "
               f"{-indim - 1} to {indim}", attr="axis")
    ret = [-1] * (indim + 1)
    if i is not None:
        ret[:real] = i[:real]
        ret[real + 1:] = i[real:]
    ret[real] = 1
    _put_out(c, 0, ret)
    o = c.outs[0]
    assert o is not None
    _put_in(c, 0, o[:real] + o[real + 1:])


def squeeze_shape(c: Call) -> None:
    """``squeeze``: drop the size-1 dimensions (those in ``axis``, which must be 1); a
    fully squeezed shape is ``(1,)``."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if not known(d):
        return
    assert d is not None
    nd = len(d)
    marks = list(d)
    axes = c.p["axis"]
    if axes is not None:
        for a in axes:
            a = int(a)
            real = a + nd if a < 0 else a
            if not 0 <= real < nd:
                c.fail(f"axis {a} is out of range for the {nd}-d input {fmt(d)}",
                       attr="axis")
            if d[real] != 1:
                c.fail(f"axis {a} has size {d[real]} in {c.input_label(0)} {fmt(d)}: only "
                       f"axes of size 1 can be squeezed", attr="axis")
            if marks[real] == -1:
                c.fail(f"axis {real} is listed twice in axis={_show(axes)}", attr="axis")
            marks[real] = -1
    else:
        marks = [-1 if v == 1 else v for v in marks]
    out = [v for v in marks if v != -1] or [1]
    _put_out(c, 0, out)


def transpose_shape(c: Call) -> None:
    """``transpose``: dimensions in the order ``axes`` (reversed when empty); works both
    ways.  MXNet does not check that ``axes`` is a permutation."""
    _need_inputs(c, 1)
    shp, out = c.ins[0], c.outs[0]
    if shp is None and out is None:
        return
    sn, on = _ndim(shp), _ndim(out)
    if sn > 6:
        c.fail(f"{c.input_label(0)} has {sn} dimensions, but transpose handles at most 6",
               input=0)
    if sn >= 0 and on >= 0 and sn != on:
        c.fail(f"the output has {on} dimensions, but {c.input_label(0)} has {sn}")
    n = max(sn, on)
    get = [-1] * n
    ret = [-1] * n
    axes = c.p["axes"]
    if axes is not None and len(axes) == 0:
        if shp is not None:
            ret = list(reversed(shp))
        if out is not None:
            if shp is None:
                c.fail("with axes empty, transpose cannot learn its input from its output "
                       "when the input's rank is unknown (MXNet refuses it): give axes",
                       attr="axes")
            get = list(reversed(out))
    else:
        an = _ndim(axes)
        if n != an:
            c.fail(f"axes={_show(axes)} has {max(an, 0)} entries, but the input has {n} "
                   f"dimensions", attr="axes")
        assert axes is not None
        for k in range(max(sn, 0)):
            a = int(axes[k])
            if not 0 <= a < sn:
                c.fail(f"axes={_show(axes)} names axis {a}, which a {sn}-d input does not "
                       f"have: use axes from 0 to {sn - 1}", attr="axes")
            assert shp is not None
            ret[k] = shp[a]
        for k in range(max(on, 0)):
            a = int(axes[k])
            if not 0 <= a < n:
                c.fail(f"axes={_show(axes)} names axis {a}, which a {n}-d input does not "
                       f"have", attr="axes")
            assert out is not None
            get[a] = out[k]
    _put_in(c, 0, get, "the output's order needs")
    _put_out(c, 0, ret)


def swapaxis_shape(c: Call) -> None:
    """``SwapAxis``: dimensions ``dim1`` and ``dim2`` exchanged (forward only)."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    nd = len(d)
    axes = []
    for attr in ("dim1", "dim2"):
        a = int(c.p[attr])
        real = a + nd if a < 0 else a
        if not 0 <= real < nd:
            c.fail(f"{attr}={a} is out of range for the {nd}-d input {fmt(d)}: use an axis "
                   f"from {-nd} to {nd - 1}", attr=attr)
        axes.append(real)
    o = list(d)
    o[axes[0]], o[axes[1]] = o[axes[1]], o[axes[0]]
    _replace_out(c, 0, o)


def _depth_space_checks(c: Call) -> tuple[Shape, int]:
    d = c.ins[0]
    if _ndim(d) != 4:
        what = "an unknown shape" if d is None else f"shape {fmt(d)}"
        c.fail(f"{c.input_label(0)} has {what}, but {c.op} needs a known 4-d input "
               f"(batch, channels, height, width)", input=0)
    assert d is not None
    b = int(c.p["block_size"])
    if b == 0:
        c.fail("block_size=0: use a positive block size", attr="block_size")
    return d, b


def depth_to_space_shape(c: Call) -> None:
    """``depth_to_space``: ``(n, c/b², h*b, w*b)``; the input must be 4-d."""
    _need_inputs(c, 1)
    d, b = _depth_space_checks(c)
    if _cmod(d[1], b * b) != 0:
        c.fail(f"the depth {d[1] if d[1] >= 0 else 'unknown'} of {c.input_label(0)} "
               f"{fmt(d)} is not a multiple of block_size² = {b * b}", attr="block_size")
    out = (d[0], _cdiv(d[1], b * b), d[2] * b, d[3] * b)
    _put_out(c, 0, out, f"(block_size={b})", attr="block_size")


def space_to_depth_shape(c: Call) -> None:
    """``space_to_depth``: ``(n, c*b², h/b, w/b)``; the input must be 4-d."""
    _need_inputs(c, 1)
    d, b = _depth_space_checks(c)
    for k, name in ((2, "height"), (3, "width")):
        if _cmod(d[k], b) != 0:
            c.fail(f"the {name} {d[k] if d[k] >= 0 else 'unknown'} of {c.input_label(0)} "
                   f"{fmt(d)} is not a multiple of block_size={b}", attr="block_size")
    out = (d[0], d[1] * b * b, _cdiv(d[2], b), _cdiv(d[3], b))
    _put_out(c, 0, out, f"(block_size={b})", attr="block_size")


RULES: dict[str, Rule] = {
    **table(FAMILY, ["Reshape"], reshape_shape, one_input_type),
    **table(FAMILY, ["reshape_like"], reshape_like_shape, like_type),
    **table(FAMILY, ["Flatten"], flatten_shape, one_input_type),
    **table(FAMILY, ["expand_dims"], expand_dims_shape, one_input_type),
    **table(FAMILY, ["squeeze"], squeeze_shape, one_input_type),
    **table(FAMILY, ["transpose"], transpose_shape, one_input_type),
    **table(FAMILY, ["SwapAxis"], swapaxis_shape, known_input_type),
    **table(FAMILY, ["depth_to_space"], depth_to_space_shape, one_input_type),
    **table(FAMILY, ["space_to_depth"], space_to_depth_shape, one_input_type),
}
