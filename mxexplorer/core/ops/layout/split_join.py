"""Shape rules for the layout ops that split and join: ``SliceChannel`` (``split``),
``_split_v2``, ``Concat`` and its variant ``_rnn_param_concat`` (which sum only the
inputs whose rank is known) and ``stack``.  A split along an unknown axis is refused, as
MXNet refuses it.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Conflict, MaybeShape, Rule, fmt, known, merge, table
from mxexplorer.core.ops.layout.dtypes import concat_type, known_input_type, one_input_type
from mxexplorer.core.ops.layout.helpers import (
    FAMILY,
    _assign_partial,
    _axis,
    _cdiv,
    _cmod,
    _need_inputs,
    _put_in,
    _put_out,
    _show,
)


# ======================================================================== splits
def slice_channel_shape(c: Call) -> None:
    """``SliceChannel``: ``num_outputs`` equal parts along ``axis`` (the axis removed with
    ``squeeze_axis``); the input's other dimensions are learnt back from the outputs."""
    _need_inputs(c, 1)
    n = int(c.p["num_outputs"])
    axis = int(c.p["axis"])
    squeeze = bool(c.p["squeeze_axis"])
    d = c.ins[0]
    if d is None:
        return
    nd = len(d)
    real = axis + nd if axis < 0 else axis
    if not 0 <= real < nd:
        c.fail(f"axis {axis} is out of range for the {nd}-d input {fmt(d)}: use an axis "
               f"from {-nd} to {nd - 1}", attr="axis")
    dim = d[real]
    if dim < 0 and n != 1:
        c.fail(f"cannot split {c.input_label(0)} of shape {fmt(d)} into {n} parts "
               f"(num_outputs) along axis {real}: that dimension is not known", attr="axis")
    if _cmod(dim, n) != 0:
        c.fail(f"axis {real} of {c.input_label(0)} has size {dim}, which does not split into "
               f"{n} equal parts (num_outputs): use a num_outputs that divides {dim}",
               attr="num_outputs")
    if squeeze and dim != -1 and dim != n:
        c.fail(f"squeeze_axis needs axis {real} of size num_outputs={n}, but "
               f"{c.input_label(0)} has shape {fmt(d)}", attr="squeeze_axis")
    od = list(d)
    if dim >= 0:
        od[real] = dim // n
    if squeeze and (od[real] == 1 or dim == -1):
        del od[real]
    for i in range(n):
        _put_out(c, i, od)
        o = c.outs[i]
        assert o is not None
        back = list(d)
        if squeeze and len(od) == nd - 1:
            for k in range(real):
                back[k] = o[k]
            back[real] = n
            for k in range(real + 1, nd):
                back[k] = o[k - 1]
        else:
            for k in range(nd):
                back[k] = o[k] * n if k == real else o[k]
        c.set_in(0, tuple(-1 if v < 0 else v for v in back), "its outputs need")


def _split_indices(dim: int, sections: int) -> list[int]:
    """``GetSplitIndices`` (C++ arithmetic, an unknown dimension included)."""
    indices = [0] * (sections + 1)
    size_b = _cdiv(dim, sections)
    size_a = size_b + 1
    count_a = _cmod(dim, sections)
    for i in range(sections):
        indices[i + 1] = size_a * (i + 1) if i < count_a else size_b + indices[i]
    return indices


def split_v2_shape(c: Call) -> None:
    """``_split_v2``: parts between ``indices`` (or ``sections`` equal parts) along
    ``axis``; other dimensions learnt back from the outputs."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    nd = len(d)
    axis = int(c.p["axis"])
    sections = int(c.p["sections"])
    squeeze = bool(c.p["squeeze_axis"])
    real = axis + nd if axis < 0 else axis
    if not 0 <= real < nd:
        c.fail(f"axis {axis} is out of range for the {nd}-d input {fmt(d)}: use an axis "
               f"from {-nd} to {nd - 1}", attr="axis")
    dim = d[real]
    if sections > 0:
        idx = _split_indices(dim, sections)
        n = sections
    else:
        given = c.p["indices"]
        if given is None or len(given) == 0:
            c.fail("indices is empty and sections is 0: give the split points (indices) or "
                   "a number of sections", attr="indices")
        idx = [int(v) for v in given]
        n = len(idx)
    squeezed = d[:real] + d[real + 1:]
    for i in range(n):
        start = idx[i]
        end = idx[i + 1] if i < n - 1 else dim
        if dim == 0:
            end = start
        else:
            if not (start <= end and end <= dim):
                if dim < 0:
                    c.fail(f"cannot split {c.input_label(0)} of shape {fmt(d)} along axis "
                           f"{real}: that dimension is not known", attr="axis")
                points = (f"sections={sections}" if sections > 0 else
                          f"indices={_show(idx)}")
                if not start <= end:
                    c.fail(f"part {i} would run from {start} to {end} along axis {real} "
                           f"({points}): the split points must not decrease",
                           attr="indices")
                c.fail(f"part {i} would end at {end} ({points}), past the size {dim} of "
                       f"axis {real} of {c.input_label(0)} {fmt(d)}", attr="indices")
        if squeeze:
            if end - start != 1:
                c.fail(f"squeeze_axis needs parts of size 1, but part {i} has size "
                       f"{end - start}", attr="squeeze_axis")
            _put_out(c, i, squeezed)
        else:
            part = list(d)
            part[real] = end - start
            _put_out(c, i, part)
    o0 = c.outs[0]
    assert o0 is not None
    back = list(d)
    for k in range(real):
        back[k] = o0[k]
    if squeeze:
        back[real] = n
    else:
        total = 0
        for i in range(n):
            oi = c.outs[i]
            assert oi is not None
            total += oi[real]
        back[real] = total
    for k in range(real + 1, nd):
        back[k] = o0[k - 1] if squeeze else o0[k]
    _put_in(c, 0, back, "its outputs add up to")


# ========================================================================= joins
def _concat(c: Call, residual: bool) -> None:
    """``ConcatShape`` and, with ``residual``, ``RNNParamConcatShape``."""
    n = int(c.p["num_args"])
    dim = int(c.p["dim"])
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} inputs, but num_args={n}: use num_args={len(c.ins)}",
               attr="num_args")
    dshape: MaybeShape = None
    total = 0
    missing: list[int] = []
    axis = -1
    for i, s in enumerate(c.ins):
        if s is not None and len(s) > 0:
            axis = _axis(c, dim, len(s), "dim", "dim")
            if s[axis] < 0:
                missing.append(i)
            else:
                total += s[axis]
            tmp = list(s)
            tmp[axis] = -1
            dshape = _assign_partial(dshape, tuple(tmp))
    out = c.outs[0]
    if out is not None and len(out) > 0:
        axis = _axis(c, dim, len(out), "dim", "dim")
        tmp = list(out)
        tmp[axis] = -1
        dshape = _assign_partial(dshape, tuple(tmp))
    if dshape is None:
        return
    if len(dshape) == 0 and not residual:
        c.fail("zero-dimensional arrays cannot be concatenated")
    for i in range(n):
        try:
            merge(c.ins[i], dshape)
        except Conflict:
            c.fail(f"{c.input_label(i)} has shape {fmt(c.ins[i])}, which does not fit "
                   f"{fmt(dshape)}: inputs concatenated along dim {axis} must have one rank "
                   f"and agree on every other dimension", input=i)
        c.set_in(i, dshape)
    full = list(dshape)
    if not missing:
        full[axis] = total
    c.set_out(0, tuple(full), f"(the inputs' sizes along dim {axis} add up to {total})")
    out = c.outs[0]
    assert out is not None
    if residual and missing and out[axis] >= 0:
        rest = out[axis] - total
        if rest < 0:
            c.fail(f"the inputs' known sizes along dim {axis} add up to {total}, more than "
                   f"the output's {out[axis]}")
        if len(missing) > 2:
            c.fail(f"{len(missing)} inputs have an unknown size along dim {axis}, but at most "
                   f"2 can be found from the output")
        for i in missing:
            filled = list(c.ins[i] or ())
            filled[axis] = rest // len(missing)
            c.ins[i] = tuple(filled)


def concat_shape(c: Call) -> None:
    """``Concat``: inputs equal but along ``dim``, whose sizes add up; unknown dimensions
    filled from each other and from the output.  As in MXNet, the sum counts only the
    inputs whose rank is known, and an input's size along ``dim`` is never learnt from
    the output."""
    _concat(c, residual=False)


def rnn_param_concat_shape(c: Call) -> None:
    """``_rnn_param_concat`` (the concat of an RNN's parameters, from Gluon): ``Concat``,
    and one or two inputs of unknown size along ``dim`` share what the known output
    leaves."""
    _concat(c, residual=True)


def stack_shape(c: Call) -> None:
    """``stack``: a new axis of size ``num_args`` at ``axis``; MXNet reads the inputs'
    common shape without checking them (nothing is learnt backwards)."""
    dshape: MaybeShape = None
    for s in c.ins:
        dshape = _assign_partial(dshape, s)
    if not known(dshape):
        return
    assert dshape is not None
    axis = _axis(c, int(c.p["axis"]), len(dshape) + 1, "axis", of="stacked output")
    _put_out(c, 0, dshape[:axis] + (int(c.p["num_args"]),) + dshape[axis:])


RULES: dict[str, Rule] = {
    **table(FAMILY, ["SliceChannel"], slice_channel_shape, one_input_type),
    **table(FAMILY, ["_split_v2"], split_v2_shape, known_input_type),
    **table(FAMILY, ["Concat"], concat_shape, concat_type),
    **table(FAMILY, ["_rnn_param_concat"], rnn_param_concat_shape, concat_type),
    **table(FAMILY, ["stack"], stack_shape),
}
