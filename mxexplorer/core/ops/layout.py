"""Rules for the layout family: the ops that move, slice, join, reshape and create data.

Owns the shape and dtype rules of MXNet 1.9.1's ``SliceChannel`` (``split``), ``Concat``
and its variant ``_rnn_param_concat``, ``stack``, ``_split_v2``, ``Reshape`` (its codes 0,
-1, -2, -3, -4, ``reverse`` and the deprecated ``target_shape``/``keep_highest``),
``reshape_like``, ``Flatten``, ``expand_dims``, ``squeeze``, ``transpose``, ``SwapAxis``,
``depth_to_space``, ``space_to_depth``, the slicers (``slice``, ``slice_axis``,
``slice_like``, ``Crop``, ``_slice_assign``, ``_slice_assign_scalar``), ``repeat``,
``tile``, ``reverse``, the gatherers (``take``, ``batch_take``, ``gather_nd``,
``scatter_nd``, ``one_hot``, ``_contrib_index_copy``, ``_ravel_multi_index``,
``_unravel_index``, ``diag``), the shape readers (``shape_array``, ``size_array``,
``_contrib_index_array``), the array makers (``_zeros``, ``_ones``, ``_full``, ``_eye``,
``_arange``, ``_linspace``, ``_zeros_without_dtype``, ``_contrib_arange_like``),
``_histogram`` and the two legacy NDArray functions without a shape rule
(``_onehot_encode``, ``fill_element_0index``).

Each rule follows its op's ``FInferShape``/``FInferType`` in MXNet 1.9.1, including its
quirks, because MXNet is the judge: ``Reshape`` does not compare element counts (MXNet
disabled that check), ``Concat`` sums only the inputs whose rank is known, a split along an
unknown axis is refused, ``take`` refuses an unknown data shape.  Integer arithmetic is
C++'s (division truncates toward zero), and a dimension below -1 that an op computes is
refused, as MXNet's shape checks refuse it.  The array makers read their ``shape`` as
MXNet does with numpy semantics off: ``()`` is an unknown shape, a 0 an unknown dimension.
Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from mxexplorer.core.ops.base import (
    DTYPE_CODES,
    Call,
    Conflict,
    DtypeFn,
    MaybeShape,
    Rule,
    RuleError,
    Shape,
    elemwise_type,
    first_input_type,
    fmt,
    known,
    merge,
    same_type,
    table,
)

FAMILY = "layout"
#: MXNet 1.9.1's pip builds have 32-bit tensor sizes: an array maker refuses 2**31 - 1
#: elements or more
SIZE_LIMIT = (1 << 31) - 1


# =================================================================== small helpers
def _cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _cmod(a: int, b: int) -> int:
    """C++ ``%`` (the sign of the dividend)."""
    return a - b * _cdiv(a, b)


def _show(shape: Sequence[Any] | None) -> str:
    """A shape as the user wrote it (negative codes shown as they are)."""
    if shape is None:
        return "None"
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _ndim(shape: Sequence[Any] | None) -> int:
    """MXNet's ``ndim()``: -1 for an unknown rank."""
    return -1 if shape is None else len(shape)


def _need_inputs(c: Call, n: int) -> None:
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} input{'s' if len(c.ins) != 1 else ''}, but this layer "
               f"takes {n}")


def _size(c: Call, shape: MaybeShape, what: str, input: int | None = None) -> int:
    """Number of elements; refused when any dimension is unknown (MXNet's ``Size()``)."""
    if shape is None:
        c.fail(f"{what} has an unknown shape, but this layer needs its number of elements",
               input=input)
    assert shape is not None
    n = 1
    for d in shape:
        if d < 0:
            c.fail(f"{what} has shape {fmt(shape)} with an unknown dimension, but this layer "
                   f"needs its number of elements", input=input)
        n *= d
    return n


def _axis(c: Call, axis: int, ndim: int, attr: str, what: str = "axis",
          of: str = "input") -> int:
    """MXNet's ``CheckAxis``: ``axis`` in ``[-ndim, ndim)``, counted from the end when
    negative."""
    if ndim == 0:
        if axis not in (0, -1):
            c.fail(f"{what} {axis} does not exist: the {of} is a scalar (0-d)", attr=attr)
        return 0
    if not -ndim <= axis < ndim:
        c.fail(f"{what} {axis} is out of range for a {ndim}-d {of}: use an axis from "
               f"{-ndim} to {ndim - 1}", attr=attr)
    return (axis + ndim) % ndim


def _put(c: Call, side: str, i: int, shape: Sequence[int] | None, why: str = "",
         attr: str | None = None) -> None:
    """``SHAPE_ASSIGN_CHECK``: merge ``shape`` into input or output ``i``.  A dimension
    below -1 (a negative size an op computed) is refused where it would be stored, and
    ignored where the entry already knows that dimension, as MXNet does."""
    if shape is None:
        return
    old = c.ins[i] if side == "in" else c.outs[i]
    dims = list(shape)
    for k, d in enumerate(dims):
        if d < -1:
            if old is None or len(old) != len(dims) or old[k] < 0:
                where = (c.input_label(i) if side == "in" else
                         "the output" if len(c.outs) == 1 else f"output {i}")
                c.fail(f"{where} would have size {d} in dimension {k} "
                       f"({_show(shape)}){' ' + why if why else ''}: a size cannot be "
                       f"negative", attr=attr)
            dims[k] = -1
    if side == "in":
        c.set_in(i, tuple(dims), why)
    else:
        c.set_out(i, tuple(dims), why)


def _put_in(c: Call, i: int, shape: Sequence[int] | None, why: str = "",
            attr: str | None = None) -> None:
    _put(c, "in", i, shape, why, attr)


def _put_out(c: Call, i: int, shape: Sequence[int] | None, why: str = "",
             attr: str | None = None) -> None:
    _put(c, "out", i, shape, why, attr)


def _replace_out(c: Call, i: int, shape: Sequence[int], attr: str | None = None) -> None:
    """The output becomes ``shape`` whatever it was (ops that clear their outputs:
    ``take``, ``Crop``, ``SwapAxis``)."""
    for k, d in enumerate(shape):
        if d < -1:
            c.fail(f"the output would have size {d} in dimension {k} ({_show(shape)}): a "
                   f"size cannot be negative", attr=attr)
    c.outs[i] = tuple(shape)


def _assign_partial(y: MaybeShape, x: MaybeShape) -> MaybeShape:
    """MXNet's ``shape_assign`` when its verdict is ignored: ``y`` takes ``x`` if ``y``'s
    rank is unknown; with equal ranks, ``y``'s unknown dimensions are filled from ``x`` in
    order until the first disagreement."""
    if y is None:
        return x
    if x is None or len(x) != len(y):
        return y
    out = list(y)
    for k, (a, b) in enumerate(zip(y, x)):
        if a == -1:
            out[k] = b
        elif a != b and b >= 0:
            break
    return tuple(out)


def _legacy_shape(shape: Sequence[int] | None) -> MaybeShape:
    """A shape attribute as MXNet reads it with numpy semantics off
    (``ConvertToNumpyShape``): ``()`` unknown, each 0 an unknown dimension."""
    if shape is None or len(shape) == 0:
        return None
    return tuple(-1 if d == 0 else d for d in shape)


def _walk_known(c: Call, shape: Sequence[int], attr: str | None = None) -> bool:
    """MXNet's ``shape_is_known`` on a computed shape: stops at the first unknown
    dimension, refuses a negative size before it."""
    for d in shape:
        if d < -1:
            c.fail(f"shape {_show(shape)} has the negative size {d}", attr=attr)
        if d == -1:
            return False
    return True


def _opt(value: Any) -> tuple[Optional[int], ...] | None:
    """A ``Tuple<optional<int>>`` attribute as parsed (``None`` entries allowed); None when
    the whole attribute is ``None`` (MXNet's unknown tuple, rank -1)."""
    if value is None:
        return None
    return tuple(None if v is None else int(v) for v in value)


# ======================================================================== dtypes
def _dtype_code(c: Call, value: Any, attr: str = "dtype") -> str | None:
    """A dtype attribute (a name, or one of MXNet's numbers) -> a dtype name."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    code = int(value)
    if code == -1:
        return None
    if code not in DTYPE_CODES:
        c.fail(f"dtype {code} is not one of MXNet's dtype numbers (0 float32 ... 12 "
               f"bfloat16)", attr=attr)
    return DTYPE_CODES[code]


def _counted(n: int, rule: DtypeFn) -> DtypeFn:
    """``rule`` after MXNet's check that the node has ``n`` inputs."""
    def counted(c: Call) -> None:
        _need_inputs(c, n)
        rule(c)
    counted.__doc__ = f"{rule.__doc__} (with exactly {n} input{'s' if n != 1 else ''})"
    return counted


def _dtype_attr_out(c: Call) -> None:
    c.set_out(0, _dtype_code(c, c.p.get("dtype")), "(its dtype attribute)")


def param_dtype(c: Call) -> None:
    """``InitType``: the output has the dtype the ``dtype`` attribute names."""
    _need_inputs(c, 0)
    _dtype_attr_out(c)


def linspace_dtype(c: Call) -> None:
    """``_linspace``: its own ``dtype`` attribute (read as written; see
    :func:`linspace_shape`)."""
    _need_inputs(c, 0)
    c.set_out(0, str(c.attrs.get("dtype", "float32")).strip("'\""), "(its dtype attribute)")


def int64_out(c: Call) -> None:
    """``shape_array``, ``size_array``, ``_contrib_index_array``: int64 whatever the
    input."""
    _need_inputs(c, 1)
    c.set_out(0, "int64", "(this layer always gives int64)")


def concat_type(c: Call) -> None:
    """``ConcatType``: the inputs must agree; the output takes their type, or the inputs
    take the output's when none is known."""
    t: str | None = None
    for i, v in enumerate(c.ins):
        if t is None:
            t = v
        elif v is not None and v != t:
            c.fail(f"{c.input_label(i)} has type {v}, but the inputs before it are {t}: "
                   f"concatenated inputs must share one type", input=i)
    out = c.outs[0]
    if t is not None and out is None:
        c.outs[0] = t
        c.ins[:] = [t] * len(c.ins)
    elif out is not None and t is None:
        c.ins[:] = [out] * len(c.ins)
    elif out is not None and t is not None and out != t:
        c.fail(f"the output would have type {t}, but the layers that read it need {out}")


def one_input_type(c: Call) -> None:
    """``ElemwiseType<1, 1>`` and its like: one input, the output's type (checked)."""
    _need_inputs(c, 1)
    elemwise_type(c)


def two_input_type(c: Call) -> None:
    """``ElemwiseType<2, 1>`` (``_slice_assign``): both inputs and the output of one type."""
    _need_inputs(c, 2)
    elemwise_type(c)


def like_type(c: Call) -> None:
    """``slice_like``, ``reshape_like``: the first input and the output share a type; the
    second input (read for its shape only) is free, but MXNet infers nothing until its
    type is known."""
    _need_inputs(c, 2)
    if c.ins[1] is None:
        return
    t = c.ins[0] if c.ins[0] is not None else c.outs[0]
    if t is None:
        return
    c.set_in(0, t)
    c.set_out(0, t)


def _index_needed(c: Call, i: int, what: str) -> None:
    if c.ins[i] is None:
        c.fail(f"the type of {c.input_label(i)} ({what}) is not known: give it a dtype",
               input=i)


def take_type(c: Call) -> None:
    """``take``: the indices' type must be known; output and data share a type."""
    _need_inputs(c, 2)
    _index_needed(c, 1, "the indices")
    first_input_type(c)


def batch_take_type(c: Call) -> None:
    """``batch_take``: output and data share a type; the indices are int32."""
    _need_inputs(c, 2)
    first_input_type(c)
    c.set_in(1, "int32", "batch_take's indices must be")


def one_hot_type(c: Call) -> None:
    """``one_hot``: the indices' type must be known; the output is ``dtype``."""
    _need_inputs(c, 1)
    _index_needed(c, 0, "the indices")
    _dtype_attr_out(c)


def known_input_type(c: Call) -> None:
    """``SwapAxis``, ``_split_v2``: the input's type must be known; every output takes it
    (replacing what was there)."""
    _need_inputs(c, 1)
    _index_needed(c, 0, "the data")
    c.outs[:] = [c.ins[0]] * len(c.outs)


def crop_type(c: Call) -> None:
    """``Crop`` (a legacy layer without a type rule of its own): float32 only."""
    n = int(c.p.get("num_args") or 1)
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} inputs, but num_args={n}", attr="num_args")
    for i, t in enumerate(c.ins):
        if t is not None and t != "float32":
            c.fail(f"{c.input_label(i)} has type {t}, but Crop works on float32 only",
                   input=i)
    c.ins[:] = ["float32"] * len(c.ins)
    c.outs[:] = ["float32"] * len(c.outs)


def histogram_type(c: Call) -> None:
    """``_histogram``: the counts are int64, the bin edges of the data's type."""
    if not c.ins:
        c.fail("has no inputs, but _histogram takes its data")
    c.set_out(0, "int64", "(histogram counts are int64)")
    if c.ins and c.ins[0] is not None:
        c.set_out(1, c.ins[0])


# ================================================================ shape: elementwise
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


def no_shape(c: Call) -> None:
    """Legacy NDArray functions with no shape rule (``_onehot_encode``,
    ``fill_element_0index``): MXNet learns nothing from them."""


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


# ====================================================================== gatherers
def take_shape(c: Call) -> None:
    """``take``: the indices' shape in place of ``axis`` of the data.  The indices must be
    fully known, and MXNet refuses a data shape of unknown rank."""
    _need_inputs(c, 2)
    arr, idx = c.ins[0], c.ins[1]
    if not known(idx):
        return
    assert idx is not None
    an = _ndim(arr)
    axis = int(c.p["axis"])
    if not -an <= axis < an:
        if arr is None:
            c.fail(f"the shape of {c.input_label(0)} is not known, so axis {axis} cannot be "
                   f"checked (MXNet refuses it): give the data's shape", input=0)
        c.fail(f"axis {axis} is out of range for the {an}-d {c.input_label(0)}: use an "
               f"axis from {-an} to {an - 1}", attr="axis")
    assert arr is not None
    real = axis + an if axis < 0 else axis
    _replace_out(c, 0, arr[:real] + idx + arr[real + 1:])


def batch_take_shape(c: Call) -> None:
    """``batch_take``: the output has the indices' shape; the data (at least 2-d) and the
    output must be fully known and the data hold one row per index."""
    _need_inputs(c, 2)
    a, idx = c.ins[0], c.ins[1]
    if idx is not None and len(idx) != 0:
        _put_out(c, 0, idx)
    elif idx is not None and c.outs[0] is not None and len(c.outs[0]) != 0:
        _put_in(c, 1, c.outs[0])
    if a is not None and len(a) == 0:
        return
    if _ndim(a) < 2:
        what = "an unknown shape" if a is None else f"shape {fmt(a)}"
        c.fail(f"{c.input_label(0)} has {what}, but batch_take needs a known data shape of "
               f"at least 2 dimensions", input=0)
    o = c.outs[0]
    if o is not None and len(o) == 0:
        return
    assert a is not None
    have = _size(c, a, c.input_label(0), 0)
    if a[-1] == 0:
        c.fail(f"{c.input_label(0)} {fmt(a)} has a last dimension of size 0", input=0)
    want = _size(c, o, "the indices (the output)")
    if have // a[-1] != want:
        c.fail(f"{c.input_label(1)} has {want} entries, but {c.input_label(0)} {fmt(a)} has "
               f"{have // a[-1]} rows: one index per row", input=1)


def one_hot_shape(c: Call) -> None:
    """``one_hot``: the indices' shape with a last dimension of size ``depth``."""
    _need_inputs(c, 1)
    i = c.ins[0]
    if not known(i):
        return
    assert i is not None
    depth = int(c.p["depth"])
    if depth < 0:
        c.fail(f"depth={depth}: the depth must be 0 or more", attr="depth")
    _put_out(c, 0, i + (depth,))


def gather_nd_shape(c: Call) -> None:
    """``gather_nd``: indices ``(M, Y...)`` into data ``(X0..XM-1, Z...)`` give
    ``(Y..., Z...)``; both must be fully known."""
    _need_inputs(c, 2)
    d, i = c.ins[0], c.ins[1]
    if not known(d) or not known(i):
        return
    assert d is not None and i is not None
    if not len(i) > 1:
        c.fail(f"{c.input_label(1)} has shape {fmt(i)}, but gather_nd needs indices of at "
               f"least 2 dimensions (M, ...)", input=1)
    if not i[0] <= len(d):
        c.fail(f"{c.input_label(1)} {fmt(i)} indexes {i[0]} axes, but {c.input_label(0)} "
               f"{fmt(d)} has {len(d)}", input=1)
    if not i[0] <= 10:
        c.fail(f"{c.input_label(1)} {fmt(i)} indexes {i[0]} axes, but gather_nd handles at "
               f"most 10", input=1)
    _put_out(c, 0, i[1:] + d[i[0]:])


def scatter_nd_shape(c: Call) -> None:
    """``scatter_nd``: the output is ``shape`` (read as written: a 0 is a size 0); data,
    indices and output must then fit together as in ``gather_nd``."""
    _need_inputs(c, 2)
    shape = c.p["shape"]
    if shape is not None:
        _put_out(c, 0, tuple(int(v) for v in shape), "(its shape attribute)", attr="shape")
    d, i, o = c.ins[0], c.ins[1], c.outs[0]
    if not (known(d) and known(i) and known(o)):
        return
    assert d is not None and i is not None and o is not None
    if not len(i) > 1:
        c.fail(f"{c.input_label(1)} has shape {fmt(i)}, but scatter_nd needs indices of at "
               f"least 2 dimensions (M, ...)", input=1)
    if not i[0] <= len(o):
        c.fail(f"{c.input_label(1)} {fmt(i)} indexes {i[0]} axes, but the output "
               f"shape={fmt(o)} has {len(o)}", attr="shape")
    if not i[0] <= 10:
        c.fail(f"{c.input_label(1)} {fmt(i)} indexes {i[0]} axes, but scatter_nd handles at "
               f"most 10", input=1)
    want = i[1:] + o[i[0]:]
    if d != want:
        c.fail(f"{c.input_label(0)} has shape {fmt(d)}, but indices {fmt(i)} into "
               f"shape={fmt(o)} need data of shape {fmt(want)}", input=0)


def index_copy_shape(c: Call) -> None:
    """``_contrib_index_copy``: the output is the old tensor's shape; the new tensor has
    one row per index and the old tensor's other dimensions."""
    _need_inputs(c, 3)
    old, idx, new = c.ins
    if _ndim(idx) != 1:
        what = "an unknown shape" if idx is None else f"shape {fmt(idx)}"
        c.fail(f"{c.input_label(1)} has {what}, but index_copy needs a known 1-d index "
               f"vector", input=1)
    assert idx is not None
    if _ndim(old) != _ndim(new):
        c.fail(f"{c.input_label(0)} ({fmt(old)}) and {c.input_label(2)} ({fmt(new)}) must "
               f"have the same rank", input=2)
    if old is not None and new is not None:
        for k in range(len(old)):
            if (k == 0 and not old[0] >= new[0]) or (k > 0 and old[k] != new[k]):
                c.fail(f"{c.input_label(2)} {fmt(new)} does not fit {c.input_label(0)} "
                       f"{fmt(old)}: the same dimensions but the first, which can be no "
                       f"larger (unknown dimensions must be unknown in both)", input=2)
    if new is None or len(new) == 0:
        c.fail(f"{c.input_label(2)} has an unknown shape, but index_copy needs it", input=2)
    assert new is not None
    if idx[0] != new[0]:
        c.fail(f"{c.input_label(1)} has {idx[0] if idx[0] >= 0 else 'an unknown number of'} "
               f"entries, but {c.input_label(2)} {fmt(new)} has "
               f"{new[0] if new[0] >= 0 else 'an unknown number of'} rows", input=1)
    _put_out(c, 0, old)
    _put_in(c, 0, c.outs[0])


def diag_shape(c: Call) -> None:
    """``diag``: a 1-d input gives the ``(n+|k|, n+|k|)`` matrix; otherwise the ``k``-th
    diagonal of axes ``axis1``/``axis2`` becomes the last axis.  MXNet refuses a result
    with an unknown or empty diagonal."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    k = int(c.p["k"])
    if len(d) == 1:
        s = d[0] + abs(k)
        out = [s, s]
    else:
        nd = len(d)
        x1 = _axis(c, int(c.p["axis1"]), nd, "axis1")
        x2 = _axis(c, int(c.p["axis2"]), nd, "axis2")
        if x1 == x2:
            c.fail(f"axis1 and axis2 both name axis {x1}: use two different axes",
                   attr="axis2")
        h, w = d[x1], d[x2]
        if k > 0:
            w -= k
        elif k < 0:
            h += k
        s = min(h, w)
        if s < 0:
            s = -1
        out = [d[i] for i in range(nd) if i not in (x1, x2)] + [s]
    if any(v < 0 for v in out):
        c.fail(f"the diagonal k={k} of {c.input_label(0)} {fmt(d)} does not exist or its "
               f"size is not known", attr="k")
    _put_out(c, 0, out)


def ravel_shape(c: Call) -> None:
    """``_ravel_multi_index``: ``(len(shape), N)`` indices -> ``(N,)``, both ways."""
    _need_inputs(c, 1)
    shape = c.p["shape"]
    sn = _ndim(shape)
    if not sn > 0:
        c.fail("shape is empty: give the shape of the array the indices address",
               attr="shape")
    i, o = c.ins[0], c.outs[0]
    if i is not None and len(i) > 0:
        if len(i) != 2:
            c.fail(f"{c.input_label(0)} has shape {fmt(i)}, but ravel_multi_index needs a "
                   f"2-d input ({sn}, N)", input=0)
        if i[0] != sn:
            c.fail(f"{c.input_label(0)} has shape {fmt(i)}, but shape={_show(shape)} needs "
                   f"{sn} rows", input=0)
        _put_out(c, 0, (i[1],))
        return
    if o is not None and len(o) > 0:
        _put_in(c, 0, (sn, o[0]))


def unravel_shape(c: Call) -> None:
    """``_unravel_index``: ``(N,)`` flat indices -> ``(len(shape), N)``, both ways."""
    _need_inputs(c, 1)
    shape = c.p["shape"]
    sn = _ndim(shape)
    if not sn > 0:
        c.fail("shape is empty: give the shape of the array the indices address",
               attr="shape")
    i, o = c.ins[0], c.outs[0]
    if i is not None and len(i) > 0:
        _put_out(c, 0, (sn, i[0]))
        return
    if o is not None and len(o) > 0:
        if len(o) != 2 or o[0] != sn:
            c.fail(f"the output has shape {fmt(o)}, but shape={_show(shape)} gives ({sn}, N)")
        _put_in(c, 0, (o[1],))


# ================================================================== shape readers
def shape_array_shape(c: Call) -> None:
    """``shape_array``: ``(ndim,)``."""
    _need_inputs(c, 1)
    _put_out(c, 0, (_ndim(c.ins[0]),))


def size_array_shape(c: Call) -> None:
    """``size_array``: ``(1,)``."""
    _need_inputs(c, 1)
    _put_out(c, 0, (1,))


def index_array_shape(c: Call) -> None:
    """``_contrib_index_array``: the input's shape plus a last axis of ``len(axes)`` (or
    ndim)."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    axes = c.p["axes"]
    _put_out(c, 0, d + (len(axes) if axes is not None else len(d),))


def arange_like_shape(c: Call) -> None:
    """``_contrib_arange_like``: the input's shape, or ``(size of axis,)``."""
    _need_inputs(c, 1)
    d = c.ins[0]
    axis = c.p["axis"]
    if axis is None:
        _put_out(c, 0, d)
        return
    nd = _ndim(d)
    real = int(axis) + nd if int(axis) < 0 else int(axis)
    if not 0 <= real < nd:
        if d is None:
            c.fail(f"the shape of {c.input_label(0)} is not known, so axis {axis} cannot be "
                   f"read (MXNet refuses it)", input=0)
        c.fail(f"axis {axis} is out of range for the {nd}-d input {fmt(d)}", attr="axis")
    assert d is not None
    _put_out(c, 0, (d[real],))


def histogram_shape(c: Call) -> None:
    """``_histogram``: ``(bin_cnt,)`` counts and ``(bin_cnt+1,)`` edges, or from given
    bin edges ``(n,)``: ``(n-1,)`` and ``(n,)``."""
    has_cnt = c.p.get("bin_cnt") is not None
    has_range = str(c.attrs.get("range", "None")).strip() != "None"
    _need_inputs(c, 1 if has_cnt else 2)
    if has_cnt != has_range:
        c.fail("bin_cnt and range go together: give both or neither",
               attr="range" if has_cnt else "bin_cnt")
    if has_cnt:
        n = int(c.p["bin_cnt"])
        _put_out(c, 0, (n,), "(bin_cnt)", attr="bin_cnt")
        _put_out(c, 1, (n + 1,), "(bin_cnt + 1 edges)", attr="bin_cnt")
        return
    b = c.ins[1]
    if _ndim(b) != 1:
        what = "an unknown shape" if b is None else f"shape {fmt(b)}"
        c.fail(f"{c.input_label(1)} has {what}, but the bin edges must be a known 1-d "
               f"vector", input=1)
    assert b is not None
    count = _size(c, b, c.input_label(1), 1)
    if count < 2:
        c.fail(f"{c.input_label(1)} has {count} bin edge{'s' if count != 1 else ''}, but a "
               f"histogram needs at least 2", input=1)
    _put_out(c, 0, (b[0] - 1,))
    _put_out(c, 1, b)


# ==================================================================== array makers
def init_shape(c: Call) -> None:
    """``_zeros``, ``_ones``, ``_full``, ``_zeros_without_dtype``: the output is ``shape``,
    read with numpy semantics off (``()`` unknown, 0 an unknown dimension); at most
    2**31 - 2 elements."""
    if c.ins:
        c.fail(f"has {len(c.ins)} inputs, but {c.op} takes none")
    shape = c.p.get("shape")
    if shape is not None and len(shape) > 0:
        dims = [int(v) for v in shape]
        if _walk_known(c, dims, "shape"):
            if math.prod(dims) >= SIZE_LIMIT:
                c.fail(f"shape={_show(dims)} holds {math.prod(dims)} elements, but MXNet "
                       f"(built with 32-bit sizes) allows fewer than 2**31 - 1", attr="shape")
    conv = _legacy_shape(None if shape is None else [int(v) for v in shape])
    if known(c.outs[0]) and not known(conv):
        return
    if conv is not None:
        for v in conv:
            if v < -1:
                c.fail(f"shape={_show(shape)} has the negative size {v}", attr="shape")
    _put_out(c, 0, conv, "(its shape attribute)", attr="shape")


def eye_shape(c: Call) -> None:
    """``_eye``: ``(N, M)``, ``M`` = ``N`` when 0."""
    if c.ins:
        c.fail(f"has {len(c.ins)} inputs, but _eye takes none")
    n = int(c.p["N"])
    m = int(c.p["M"])
    if n < -1:
        c.fail(f"N={n}: the number of rows cannot be negative", attr="N")
    _put_out(c, 0, (n, m if m > 0 else n), "(N, M)", attr="N")


def arange_shape(c: Call) -> None:
    """``_arange``: ``ceil((stop - start) / step) * repeat`` values (``start`` alone is the
    stop); unknown with ``infer_range`` and no ``stop``."""
    if c.ins:
        c.fail(f"has {len(c.ins)} inputs, but _arange takes none")
    start = float(c.p["start"])
    stop = c.p["stop"]
    step = float(c.p["step"])
    repeat = int(c.p["repeat"])
    infer = bool(c.p["infer_range"])
    if not infer and stop is None:
        start, stop = 0.0, start
    if step == 0:
        c.fail("step=0: the step between values cannot be 0", attr="step")
    if not repeat > 0:
        c.fail(f"repeat={repeat}: repeat must be 1 or more", attr="repeat")
    if infer and stop is None:
        return
    stop = float(stop)
    if step > 0 and not start < stop:
        c.fail(f"start={start:g} is not below stop={stop:g}: with a positive step the range "
               f"is empty", attr="stop")
    if not step > 0 and not start > stop:
        c.fail(f"start={start:g} is not above stop={stop:g}: with a negative step the range "
               f"is empty", attr="stop")
    count = math.ceil((stop - start) / step) * repeat
    if not math.isfinite(count):
        c.fail(f"the range from {start:g} to {stop:g} by {step:g} is not finite",
               attr="stop")
    n = int(count)
    if n >= SIZE_LIMIT:
        c.fail(f"the range holds {n} values, but MXNet (built with 32-bit sizes) allows "
               f"fewer than 2**31 - 1", attr="stop")
    _put_out(c, 0, (n,))


def linspace_shape(c: Call) -> None:
    """``_linspace``: ``(num,)``.  MXNet parses its node with LinspaceParam (``start``,
    ``stop``, ``num``, ``endpoint``, ``ctx``, ``dtype``), not the fields it documents, so
    ``num`` is read from the attributes as written."""
    if c.ins:
        c.fail(f"has {len(c.ins)} inputs, but _linspace takes none")
    text = c.attrs.get("num")
    if text is None:
        c.fail("attribute num is required (the number of values)", attr="num")
    try:
        num = int(str(text).strip())
    except ValueError:
        c.fail(f"attribute num={text!r} is not a whole number", attr="num")
    if num < 0:
        c.fail(f"num={num}: the number of values cannot be negative", attr="num")
    _put_out(c, 0, (num,))


# ======================================================================== the table
RULES: dict[str, Rule] = {
    **table(FAMILY, ["SliceChannel"], slice_channel_shape, one_input_type),
    **table(FAMILY, ["_split_v2"], split_v2_shape, known_input_type),
    **table(FAMILY, ["Concat"], concat_shape, concat_type),
    **table(FAMILY, ["_rnn_param_concat"], rnn_param_concat_shape, concat_type),
    **table(FAMILY, ["stack"], stack_shape),
    **table(FAMILY, ["Reshape"], reshape_shape, one_input_type),
    **table(FAMILY, ["reshape_like"], reshape_like_shape, like_type),
    **table(FAMILY, ["Flatten"], flatten_shape, one_input_type),
    **table(FAMILY, ["expand_dims"], expand_dims_shape, one_input_type),
    **table(FAMILY, ["squeeze"], squeeze_shape, one_input_type),
    **table(FAMILY, ["transpose"], transpose_shape, one_input_type),
    **table(FAMILY, ["SwapAxis"], swapaxis_shape, known_input_type),
    **table(FAMILY, ["depth_to_space"], depth_to_space_shape, one_input_type),
    **table(FAMILY, ["space_to_depth"], space_to_depth_shape, one_input_type),
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
    **table(FAMILY, ["take"], take_shape, take_type),
    **table(FAMILY, ["batch_take"], batch_take_shape, batch_take_type),
    **table(FAMILY, ["one_hot"], one_hot_shape, one_hot_type),
    **table(FAMILY, ["gather_nd"], gather_nd_shape, _counted(2, first_input_type)),
    **table(FAMILY, ["scatter_nd"], scatter_nd_shape, _counted(2, first_input_type)),
    **table(FAMILY, ["_contrib_index_copy"], index_copy_shape, _counted(3, first_input_type)),
    **table(FAMILY, ["diag"], diag_shape, one_input_type),
    **table(FAMILY, ["_ravel_multi_index"], ravel_shape, one_input_type),
    **table(FAMILY, ["_unravel_index"], unravel_shape, one_input_type),
    **table(FAMILY, ["shape_array"], shape_array_shape, int64_out),
    **table(FAMILY, ["size_array"], size_array_shape, int64_out),
    **table(FAMILY, ["_contrib_index_array"], index_array_shape, int64_out),
    **table(FAMILY, ["_contrib_arange_like"], arange_like_shape, one_input_type),
    **table(FAMILY, ["_histogram"], histogram_shape, histogram_type),
    **table(FAMILY, ["_zeros", "_ones", "_full", "_zeros_without_dtype"], init_shape,
            param_dtype),
    **table(FAMILY, ["_eye"], eye_shape, param_dtype),
    **table(FAMILY, ["_arange"], arange_shape, param_dtype),
    **table(FAMILY, ["_linspace"], linspace_shape, linspace_dtype),
    **table(FAMILY, ["_onehot_encode", "fill_element_0index"], no_shape, same_type),
}

__all__ = ["RULES", "RuleError"]
