"""Rules for MXNet 1.9.1's numpy-style operators registered under their own names
(``_npi_*``, ``_np_*``, ``_npx_*``): numpy broadcasting arithmetic and comparisons, the
``*_scalar`` ops and their numpy dtype rules, unary math, reductions and moments, the
layout ops (``_np_reshape``, ``_npx_reshape`` and its codes, transpose, concatenate,
stack ...), the array makers (``_npi_zeros``, ``_npi_arange``, ``_npi_eye`` ...), the
products (``_np_dot``, ``_npi_matmul``, ``_npi_tensordot``, ``_npi_einsum``), ``where``
and the random samplers.  The numpy names that are aliases of legacy ops
(``_npx_convolution`` -> ``Convolution``) resolve to those ops' rules by themselves.

Shapes follow MXNet's numpy-style convention inside the pass: ``()`` is a real scalar
shape (a global reduction's output), ``0`` a real zero-size dimension.  A graph loaded
with numpy semantics off (the product's way, and MXNet's default) has its given 0 dims
and ``()`` shapes turned into "unknown" before the rules see them; the ops that read a
shape attribute (``_npi_zeros``'s ``shape``) do the same to it, as MXNet does.  The ops
that end in a scalar (a global reduction, ``_np_dot`` of two vectors, ``_np_trace`` of a
matrix, ``_npx_constraint_check``, ``_npi_share_memory``, a sampler without ``size``,
``_npi_einsum`` with an empty output, ``_np_squeeze`` of all ones, ``_npi_norm`` of a
vector) give ``()``, which MXNet's Python API reports as an unknown shape in that mode.

MXNet 1.9.1's own quirks are kept, since the engine must say what MXNet says: hstack and
dstack leave their inputs' joined dimension unknown afterwards, column_stack writes a 1-d
input back as ``(1,)``, vstack and column_stack add an output size known beforehand to
the total, ``_npi_where`` and the samplers count an operand of unknown rank as a scalar,
``_np_diag``/``_npi_pad`` do arithmetic on unknown sizes, ``_np_atleast_*`` of an input
of unknown rank is all ones, and several ops refuse an input partly known or of unknown
rank (``_np_diagonal``, ``_npi_tril``, ``_np_roll`` with an axis, ``_npi_rot90``,
``_npi_cholesky``, ``_npi_matmul`` with an unknown batch dimension).  Where MXNet's
behaviour is undefined (``_npi_tensordot`` with repeated or out-of-range axes,
``_np_moveaxis`` with an axis below -ndim, ``_npx_reshape``'s -6 followed by a 0) the
engine refuses in plain words.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

from mxexplorer.core.ops.base import (
    Call,
    MaybeShape,
    Rule,
    Shape,
    elemwise_type,
    fmt,
    known,
    merge,
    size,
    table,
)
from mxexplorer.core.ops.params import parse_bool, parse_float, parse_int, parse_tuple

FAMILY = "numpy_ops"

INTS = ("uint8", "int8", "int32", "int64")
FLOATS = ("float16", "float32", "float64")


# ------------------------------------------------------------------ small helpers
def _is_int(t: str | None) -> bool:
    return t in INTS


def _is_float(t: str | None) -> bool:
    return t in FLOATS


def _legacy(shape: Sequence[int] | None) -> MaybeShape:
    """A shape attribute as MXNet reads it with numpy semantics off: ``()`` unknown, 0
    dims unknown."""
    if shape is None or len(shape) == 0:
        return None
    return tuple(-1 if d == 0 else d for d in shape)


def _count(shape: Shape) -> int:
    return size(shape)


def _label(c: Call, i: int) -> str:
    return c.input_label(i)


def _norm_axis(c: Call, axis: int, ndim: int, attr: str, what: str = "axis") -> int:
    """``axis`` counted from the end when negative; refused outside ``[-ndim, ndim)``."""
    if not -ndim <= axis < ndim:
        if ndim == 0:
            c.fail(f"{what} {axis} does not exist: the input is a scalar (0-d)", attr=attr)
        c.fail(f"{what} {axis} is out of range for a {ndim}-d input: use an axis from "
               f"{-ndim} to {ndim - 1}", attr=attr)
    return axis + ndim if axis < 0 else axis


def _set_all_outs(c: Call, shape: MaybeShape) -> None:
    for i in range(len(c.outs)):
        c.set_out(i, shape)


# ================================================================ shapes: elementwise
def same_shape(c: Call) -> None:
    """ElemwiseShape: every input and output of one shape, known from any of them."""
    shape: MaybeShape = None
    for i, s in enumerate(c.ins):
        if s is None:
            continue
        try:
            shape = merge(shape, s)
        except Exception:
            c.set_in(i, shape, "the other inputs have shape")
    for i, s in enumerate(c.outs):
        if s is None:
            continue
        try:
            shape = merge(shape, s)
        except Exception:
            c.set_out(i, shape)
    if shape is None:
        return
    for i in range(len(c.ins)):
        c.set_in(i, shape, "the other inputs have shape")
    for i in range(len(c.outs)):
        c.set_out(i, shape)


def broadcast_shape(c: Call) -> None:
    """numpy broadcasting of two inputs (BinaryBroadcastShape): dims aligned from the
    end, each pair equal or one of them 1; unknown dims stay unknown; nothing is learnt
    backwards."""
    lhs, rhs = c.ins[0], c.ins[1]
    if lhs is None or rhs is None:
        return
    if lhs == rhs:
        c.set_out(0, lhs)
        return
    n = max(len(lhs), len(rhs))
    out = [-1] * n
    for i in range(n):
        j, k = i - (n - len(lhs)), i - (n - len(rhs))
        left = lhs[j] if j >= 0 else 1
        right = rhs[k] if k >= 0 else 1
        if left < 0 or right < 0:
            continue
        if left != right and left != 1 and right != 1:
            c.fail(f"{_label(c, 0)} of shape {fmt(lhs)} and {_label(c, 1)} of shape "
                   f"{fmt(rhs)} cannot be broadcast together: {left} against {right}; "
                   f"aligned from the last axis, each pair of dimensions must be equal "
                   f"or one of them 1")
        out[i] = right if left == 1 else left
    c.set_out(0, tuple(out))


# ================================================================= dtypes: elementwise
def _more_precise(a: str, b: str) -> str:
    """MXNet's ``get_more_precise_type``."""
    if a == b:
        return a
    if _is_float(a) and _is_float(b):
        for t in ("float64", "float32"):
            if t in (a, b):
                return t
        return "float16"
    if _is_float(a) or _is_float(b):
        return a if _is_float(a) else b
    for t in ("int64", "int32", "uint8"):
        if t in (a, b):
            return t
    return "int8"


def _np_binary_out(a: str, b: str) -> str:
    if {a, b} == {"uint8", "int8"}:
        return "int32"
    return _more_precise(a, b)


def mixed_precision_type(c: Call) -> None:
    """``_npi_add``...: two known, different input types give the more precise one
    (uint8 with int8 gives int32); otherwise every type the same."""
    lt, rt = c.ins[0], c.ins[1]
    if lt is not None and rt is not None and lt != rt:
        c.set_out(0, _np_binary_out(lt, rt), f"from {lt} with {rt}")
        return
    elemwise_type(c)


def _true_divide_out(lt: str, rt: str) -> str:
    if _is_float(lt) and _is_float(rt):
        return _more_precise(lt, rt)
    if _is_float(lt) or _is_float(rt):
        return lt if _is_float(lt) else rt
    return "float32"


def true_divide_type(c: Call) -> None:
    """Division: the float input's type (the more precise of two), float32 for integers;
    every input must be known."""
    if any(t is None for t in c.ins):
        return
    lt = c.ins[0]
    assert lt is not None
    rt = c.ins[1] if len(c.ins) == 2 else (lt if _is_float(lt) else "float32")
    assert rt is not None
    c.set_out(0, _true_divide_out(lt, rt))


def scalar_type(c: Call) -> None:
    """NumpyBinaryScalarType: an integer array with a non-integer scalar (is_int=False)
    gives float64; a bool array gives int64 (float64 with a non-integer scalar); else the
    input's type, both ways."""
    t = c.ins[0]
    is_int = bool(c.p.get("is_int", True))
    if _is_int(t) and not is_int:
        c.set_out(0, "float64", f"({t} with a non-integer scalar)")
    elif t == "bool":
        c.set_out(0, "int64" if is_int else "float64", "(bool with a scalar)")
    else:
        c.set_out(0, t)
        c.set_in(0, c.outs[0])


def logic_type(c: Call) -> None:
    """Comparisons of two arrays: both inputs of one type, a bool output."""
    if c.ins[0] is None and c.ins[1] is None:
        return
    c.set_in(0, c.ins[1], "the other input is")
    c.set_in(1, c.ins[0], "the other input is")
    c.set_out(0, "bool")


def scalar_logic_type(c: Call) -> None:
    """Comparisons with a scalar, and isnan/isinf...: a bool output once the input's
    type is known."""
    if c.ins[0] is None:
        return
    c.set_out(0, "bool")


def int_type(c: Call) -> None:
    """ElemwiseIntType: the first input must be an integer (or bool) array, known."""
    t = c.ins[0]
    if t not in INTS + ("bool",):
        c.fail(f"{_label(c, 0)} has type {t or 'unknown'}, but this operator takes integer "
               f"or bool arrays only", input=0)
    elemwise_type(c)


def float_pair_type(c: Call) -> None:
    """arctan2, hypot: one type for both inputs and the output, a float type, known
    from the first input (or the output)."""
    for t in (c.ins[0], c.ins[1]):
        if t is not None:
            c.set_out(0, t)
    c.set_in(0, c.outs[0])
    c.set_in(1, c.outs[0])
    if not _is_float(c.ins[0]):
        c.fail(f"{_label(c, 0)} has type {c.ins[0] or 'unknown'}, but this operator takes "
               f"float16, float32 or float64 arrays", input=0)


def around_type(c: Call) -> None:
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])
    if c.ins[0] == "float16":
        c.fail(f"{_label(c, 0)} is float16, which around does not support: use float32 "
               f"or float64", input=0)


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


def _show_axes(axis: Sequence[int]) -> str:
    return "(" + ", ".join(str(a) for a in axis) + ("," if len(axis) == 1 else "") + ")"


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


def same_in_out_type(c: Call) -> None:
    """The output of the input's type, both ways (no check of the kind)."""
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])


def bool_out_type(c: Call) -> None:
    c.set_out(0, "bool")


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



# ===================================================================== layout helpers
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


def _extra(c: Call, name: str, parse: Callable[[str], Any], default: Any) -> Any:
    """A parameter MXNet's parser reads that the op table does not declare (``axis`` of
    ``_npi_concatenate``...): from ``c.p`` once declared, else from the attribute text."""
    value = c.p.get(name)
    if name in c.p and not isinstance(value, str):
        return value
    # declared without a type MXNet names (``M : , optional``): read the text here
    text = value if isinstance(value, str) else c.attrs.get(name)
    if text is None:
        return default
    try:
        return parse(text)
    except ValueError:
        c.fail(f"attribute {name}={text!r} is not valid", attr=name)
    return default


def _optional_int(text: str) -> int | None:
    return None if text == "None" else parse_int(text)


# ====================================================================== layout rules
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


def _check_axis(c: Call, axis: int, ndim: int, attr: str = "axis") -> int:
    """MXNet's CheckAxis: a scalar takes 0 or -1."""
    if ndim == 0:
        if axis not in (0, -1):
            c.fail(f"axis {axis} does not exist on a scalar (0-d) input", attr=attr)
        return 0
    return _norm_axis(c, axis, ndim, attr)


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



# ================================================================= array makers
_MAX_ELEMENTS = 2**31 - 1   # MXNet 1.9.1's pip builds lack 64-bit tensor sizes


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


# ======================================================================== products
def _in(c: Call, i: int) -> Shape:
    s: MaybeShape = c.ins[i]
    assert s is not None
    return s


def dot_shape(c: Call) -> None:
    """_np_dot: numpy dot (vector inner product, matrix product, scaling by a scalar,
    sum over a's last axis and b's second-to-last), both ways where MXNet does."""
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None:
        return
    if len(a) == 1 and len(b) == 1:
        c.set_in(0, b, "the other vector has shape")
        c.set_in(1, c.ins[0], "the other vector has shape")
        c.set_out(0, ())
    elif len(a) == 2 and len(b) == 2:
        c.set_in(0, (-1, b[0]), "b's first dimension is")
        c.set_in(1, (_in(c, 0)[1], -1), "a's last dimension is")
        c.set_out(0, (_in(c, 0)[0], _in(c, 1)[1]))
    elif len(a) == 0 or len(b) == 0:
        c.set_out(0, b if len(a) == 0 else a)
    elif len(b) == 1:
        c.set_in(0, (-1,) * (len(a) - 1) + (b[0],), "b's length is")
        a = _in(c, 0)
        c.set_in(1, (a[-1],), "a's last dimension is")
        c.set_out(0, a[:-1])
    else:
        c.set_in(0, (-1,) * (len(a) - 1) + (b[-2],), "b's second-to-last dimension is")
        a = _in(c, 0)
        c.set_in(1, (-1,) * (len(b) - 2) + (a[-1], -1), "a's last dimension is")
        a, b = _in(c, 0), _in(c, 1)
        c.set_out(0, a[:-1] + b[:-2] + (b[-1],))


def matmul_shape(c: Call) -> None:
    """_npi_matmul: numpy matmul (no scalars; 1-d operands promoted; stacks of matrices
    broadcast, an unknown batch dimension against a known one other than 1 refused, as
    in MXNet)."""
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None:
        return
    if len(a) == 0 or len(b) == 0:
        c.fail(f"{_label(c, 0 if len(a) == 0 else 1)} is a scalar: matmul multiplies "
               f"arrays of 1 or more dimensions (use multiply for scalars)",
               input=0 if len(a) == 0 else 1)
    if len(a) == 1 and len(b) == 1:
        c.set_in(0, b, "the other vector has shape")
        c.set_in(1, c.ins[0], "the other vector has shape")
        c.set_out(0, ())
    elif len(a) == 2 and len(b) == 2:
        c.set_in(0, (-1, b[0]), "b's first dimension is")
        c.set_in(1, (_in(c, 0)[1], -1), "a's last dimension is")
        c.set_out(0, (_in(c, 0)[0], _in(c, 1)[1]))
    elif len(b) == 1:
        c.set_in(0, (-1,) * (len(a) - 1) + (b[0],), "b's length is")
        a = _in(c, 0)
        c.set_in(1, (a[-1],), "a's last dimension is")
        c.set_out(0, a[:-1])
    elif len(a) == 1:
        c.set_in(1, (-1,) * (len(b) - 2) + (a[0], -1), "a's length is")
        b = _in(c, 1)
        c.set_in(0, (b[-2],), "b's second-to-last dimension is")
        c.set_out(0, b[:-2] + (b[-1],))
    else:
        c.set_in(0, (-1,) * (len(a) - 1) + (b[-2],), "b's second-to-last dimension is")
        a = _in(c, 0)
        c.set_in(1, (-1,) * (len(b) - 2) + (a[-1], -1), "a's last dimension is")
        a, b = _in(c, 0), _in(c, 1)
        n = max(len(a), len(b))
        out = [-1] * n
        out[-1], out[-2] = b[-1], a[-2]
        for p in range(n - 3, -1, -1):
            pa, pb = p - (n - len(a)), p - (n - len(b))
            if pa >= 0 and pb >= 0:
                if a[pa] == 1:
                    out[p] = b[pb]
                elif b[pb] == 1:
                    out[p] = a[pa]
                else:
                    if a[pa] != b[pb]:
                        c.fail(f"the stacks of matrices {fmt(a)} and {fmt(b)} cannot be "
                               f"broadcast together: {fmt((a[pa],))[1:-2]} against "
                               f"{fmt((b[pb],))[1:-2]} (each pair of batch dimensions must be "
                               f"equal, or one of them 1, and known)")
                    out[p] = b[pb]
            elif pa >= 0:
                out[p] = a[pa]
            elif pb >= 0:
                out[p] = b[pb]
        c.set_out(0, tuple(out))


def _tensordot(c: Call, a_sum: list[int], b_sum: list[int]) -> None:
    a, b = _in(c, 0), _in(c, 1)
    for axes, nd, attr in ((a_sum, len(a), "a_axes_summed"), (b_sum, len(b),
                                                                 "b_axes_summed")):
        if len(set(axes)) != len(axes) or any(not 0 <= x < nd for x in axes):
            c.fail(f"{attr} must name distinct axes of a {nd}-d input", attr=attr)
    a_rem = [i for i in range(len(a)) if i not in a_sum]
    b_rem = [i for i in range(len(b)) if i not in b_sum]
    if len(a_sum) != len(b_sum):
        c.fail(f"{len(a_sum)} axes of a are summed against {len(b_sum)} of b: give as many "
               f"of each", attr="b_axes_summed")
    out = tuple(a[i] for i in a_rem) + tuple(b[i] for i in b_rem)
    c.set_out(0, out)
    out = c.outs[0]
    assert out is not None
    t1 = [-1] * len(a)
    for k, i in enumerate(a_rem):
        t1[i] = out[k]
    for i, j in zip(a_sum, b_sum):
        t1[i] = b[j]
    c.set_in(0, tuple(t1), "the summed axes of b and the output give")
    a = _in(c, 0)
    t2 = [-1] * len(b)
    for k, i in enumerate(b_rem):
        t2[i] = out[len(a_rem) + k]
    for i, j in zip(a_sum, b_sum):
        t2[j] = a[i]
    c.set_in(1, tuple(t2), "the summed axes of a and the output give")


def _tensordot_scalar(c: Call) -> bool:
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None:
        return True
    if len(a) == 0:
        c.set_out(0, b)
        c.set_in(1, c.outs[0])
        return True
    if len(b) == 0:
        c.set_out(0, a)
        c.set_in(0, c.outs[0])
        return True
    return False


def tensordot_shape(c: Call) -> None:
    """_npi_tensordot: sum over ``a_axes_summed`` of a against ``b_axes_summed`` of b."""
    if _tensordot_scalar(c):
        return
    na, nb = len(_in(c, 0)), len(_in(c, 1))
    # MXNet wraps an axis modulo the rank ((axis + ndim) % ndim)
    a_sum = [(x + na) % na if x >= -na else x for x in c.p["a_axes_summed"] or ()]
    b_sum = [(x + nb) % nb if x >= -nb else x for x in c.p["b_axes_summed"] or ()]
    _tensordot(c, a_sum, b_sum)


def tensordot_int_shape(c: Call) -> None:
    """_npi_tensordot_int_axes: the last ``axes`` axes of a against the first of b."""
    if _tensordot_scalar(c):
        return
    n = c.p["axes"]
    na, nb = len(_in(c, 0)), len(_in(c, 1))
    if n > na or n > nb:
        c.fail(f"axes={n} is more than the inputs' dimensions ({na} and {nb})", attr="axes")
    _tensordot(c, [na - n + i for i in range(max(n, 0))], list(range(max(n, 0))))


# =========================================================================== where
def where_shape(c: Call) -> None:
    """_npi_where: condition, x and y broadcast together (an operand of unknown rank
    counts as a scalar, as in MXNet)."""
    ops = [c.ins[0], c.ins[1], c.ins[2]]
    if ops[0] == ops[1] == ops[2]:
        c.set_out(0, ops[0])
        return
    n = max(len(s) if s is not None else -1 for s in ops)
    out = []
    for i in range(n):
        vals = []
        for s in ops:
            k = i - (n - len(s)) if s is not None else -1
            vals.append(s[k] if s is not None and k >= 0 else 1)
        s1, s2, s3 = vals
        if not s1 == s2 == s3:
            if not ((s1 == 1 and s2 == 1) or (s1 == 1 and s3 == 1) or (s2 == 1 and s3 == 1)
                    or (s1 == 1 and s2 == s3) or (s2 == 1 and s1 == s3)
                    or (s3 == 1 and s1 == s2)):
                c.fail(f"condition {fmt(ops[0])}, x {fmt(ops[1])} and y {fmt(ops[2])} cannot "
                       f"be broadcast together (each dimension must be equal or 1, and "
                       f"known)")
            out.append(max(vals))
        else:
            out.append(s1)
    c.set_out(0, tuple(out))


def where_type(c: Call) -> None:
    """x, y and the output of one type, checked; only the output is filled (MXNet works
    on a copy of x's and y's types); the condition free."""
    sub = Call(c.op, c.p, c.attrs, list(c.ins[1:]), c.outs, c.slots[1:], c.kind)
    elemwise_type(sub)


def where_scalar2_type(c: Call) -> None:
    c.set_out(0, "float32")


# ==================================================================== one-input misc
def cumsum_shape(c: Call) -> None:
    """_np_cumsum: the input's shape, flattened when ``axis`` is None (which needs the
    input fully known)."""
    if c.p["axis"] is not None:
        same_shape(c)
        return
    s = c.ins[0]
    if not known(s):
        c.fail(f"{_label(c, 0)} must have a known shape to be flattened (axis=None)", input=0)
    assert s is not None
    c.set_out(0, (_count(s),))


def cumsum_type(c: Call) -> None:
    dtype = c.p.get("dtype")
    if dtype is not None:
        c.set_out(0, dtype)
        return
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])
    if c.outs[0] == "bool":
        c.outs[0] = "int64"


def _diagonal_missing(c: Call, what: str = "Diagonal") -> None:
    c.fail(f"{_label(c, 0)} needs a fully known shape here ({what.lower()} of a partly "
           f"known shape is refused by MXNet 1.9.1)", input=0)


def tril_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None:
        return
    out = (s[0], s[0]) if len(s) == 1 else s
    if not known(out):
        _diagonal_missing(c)
    c.set_out(0, out)


def diag_shape(c: Call) -> None:
    """_np_diag: a 1-d input makes a square matrix (n + |k|), a 2-d one gives its k-th
    diagonal.  MXNet's arithmetic on unknown sizes is kept (an unknown diagonal length
    reads as 0)."""
    s = c.ins[0]
    if s is None:
        return
    k = c.p["k"]
    if len(s) > 2:
        c.fail(f"{_label(c, 0)} has {len(s)} dimensions; diag takes a 1-d or 2-d array",
               input=0)
    if len(s) == 0:
        c.fail(f"{_label(c, 0)} is a scalar; diag takes a 1-d or 2-d array", input=0)
    if len(s) == 1:
        n = s[0] + abs(k)
        out: Shape = (n, n)
    else:
        h, w = s
        if k > 0:
            w -= k
        elif k < 0:
            h += k
        out = (max(min(h, w), 0),)
    if not known(out):
        _diagonal_missing(c)
    c.set_out(0, out)


def diagonal_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None or len(s) < 2:
        c.fail(f"{_label(c, 0)} must be known to be 2-d or more for diagonal", input=0)
    assert s is not None
    x1 = _check_axis(c, c.p["axis1"], len(s), "axis1")
    x2 = _check_axis(c, c.p["axis2"], len(s), "axis2")
    if x1 == x2:
        c.fail(f"axis1 and axis2 both name axis {x1}: give two different axes", attr="axis2")
    h, w = s[x1], s[x2]
    k = c.p["offset"]
    if k > 0:
        w -= k
    elif k < 0:
        h += k
    n = max(min(h, w), 0)
    out = tuple(d for i, d in enumerate(s) if i not in (x1, x2)) + (n,)
    if not known(out):
        _diagonal_missing(c)
    c.set_out(0, out)


def diagflat_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None:
        return
    k = c.p["k"]
    if len(s) == 0:
        c.fail(f"{_label(c, 0)} is a scalar; diagflat takes an array", input=0)
    if len(s) == 1:
        n = s[0] + abs(k)
    else:
        n = 1
        for d in s:
            if d >= 2:
                n *= d
        n += abs(k)
    if n < 0:
        _diagonal_missing(c)
    c.set_out(0, (n, n))


def trace_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None or len(s) < 2:
        return
    x1 = _check_axis(c, c.p["axis1"], len(s), "axis1")
    x2 = _check_axis(c, c.p["axis2"], len(s), "axis2")
    if x1 == x2:
        c.fail(f"axis1 and axis2 both name axis {x1}: give two different axes", attr="axis2")
    c.set_out(0, tuple(d for i, d in enumerate(s) if i not in (x1, x2)))


def diff_shape(c: Call) -> None:
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    n = c.p["n"]
    if n < 0:
        c.fail(f"n={n} is negative: the number of differences must be 0 or more", attr="n")
    if len(s) == 0:
        c.fail(f"{_label(c, 0)} is a scalar: diff needs an axis to take differences along",
               input=0)
    ax = _check_axis(c, c.p["axis"], len(s))
    out = list(s)
    out[ax] = 0 if n >= s[ax] else s[ax] - n
    c.set_out(0, tuple(out))


def _pad_widths(c: Call) -> list[tuple[int, ...]]:
    """``pad_width`` (a tuple of tuples; a lone number inside counts as a 1-tuple)."""
    text = c.attrs.get("pad_width", "").strip()
    if len(text) < 2 or text[0] not in "([" or text[-1] not in ")]":
        c.fail(f"pad_width={text!r} is not a tuple of (before, after) pairs",
               attr="pad_width")
    body = text[1:-1].strip()
    out: list[tuple[int, ...]] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch in " ,":
            i += 1
            continue
        if ch in "([":
            close = body.find(")" if ch == "(" else "]", i)
            if close < 0:
                break
            item = parse_tuple(body[i:close + 1])
            i = close + 1
        else:
            j = i
            while j < len(body) and body[j] not in " ,":
                j += 1
            item = parse_tuple(body[i:j])
            i = j
        if item is None:
            c.fail(f"pad_width={text!r} is not a tuple of (before, after) pairs",
                   attr="pad_width")
        assert item is not None
        out.append(tuple(item))
    return out


def pad_shape(c: Call) -> None:
    """_npi_pad: each dim grows by its (before, after) pair; MXNet's arithmetic on an
    unknown dim is kept (it adds to -1)."""
    s = c.ins[0]
    if s is None:
        return
    try:
        widths = _pad_widths(c)
    except ValueError:
        c.fail("pad_width is not a tuple of (before, after) pairs", attr="pad_width")
        return

    def width(i: int, j: int) -> int:
        if i >= len(widths) or j >= len(widths[i]):
            c.fail(f"pad_width has no entry [{i}][{j}]: give a (before, after) pair for each "
                   f"of the {len(s)} axes", attr="pad_width")
        return widths[i][j]
    if len(s) == 1:
        out: Shape = (s[0] + width(0, 0) + width(1, 0),)
    elif len(s) >= 2:
        dims = [0] * len(s)
        for i in range(len(s) - 1, -1, -1):
            dims[i] = s[i] + width(i, 0) + width(i, 1)
        out = tuple(dims)
    else:
        out = (-1, -1)
    if not known(out):
        c.fail(f"padding {_label(c, 0)} of shape {fmt(s)} by pad_width gives no valid shape",
               attr="pad_width")
    c.set_out(0, out)


def scalar_out_when_known(c: Call) -> None:
    """_npx_constraint_check: a scalar output once the input is known."""
    if known(c.ins[0]):
        c.set_out(0, ())


def scalar_out(c: Call) -> None:
    c.set_out(0, ())


def constraint_type(c: Call) -> None:
    if c.ins[0] != "bool":
        c.fail(f"{_label(c, 0)} has type {c.ins[0] or 'unknown'}, but a constraint check "
               f"takes a bool array", input=0)
    c.set_out(0, "bool")


def int64_out(c: Call) -> None:
    c.set_out(0, "int64")


def no_shape(c: Call) -> None:
    """An op whose output shape depends on the data (MXNet has no shape rule for it)."""



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



# ========================================================================== einsum
_EINSUM_SYMBOLS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(c: Call, subscripts: str, shapes: list[Shape]) -> tuple[list[str], str]:
    """MXNet's ``_parse_einsum_input``: the input terms and the output term, ellipses
    expanded."""
    def refuse(why: str) -> None:
        c.fail(f"subscripts={subscripts!r}: {why}", attr="subscripts")
    if not shapes:
        refuse("einsum needs at least one operand")
    text = subscripts.replace(" ", "")
    for ch in text:
        if ch not in ".,->" and ch not in _EINSUM_SYMBOLS:
            refuse(f"{ch!r} is not a letter")
    if "-" in text or ">" in text:
        if text.count("-") > 1 or text.count(">") > 1 or text.count("->") != 1:
            refuse("it may contain one '->' only")
    if "." in text:
        used = {ch for ch in text if ch not in ".,->"}
        free = "".join(ch for ch in _EINSUM_SYMBOLS if ch not in used)
        longest = 0
        if "->" in text:
            inputs, output = text.split("->")
            terms = inputs.split(",")
        else:
            terms, output = text.split(","), None
        for i, term in enumerate(terms):
            if "." in term:
                if term.count(".") != 3 or term.count("...") != 1:
                    refuse("an ellipsis is written '...'")
                if i >= len(shapes):
                    refuse("it has more terms than there are operands")
                n = 0 if len(shapes[i]) == 0 else max(len(shapes[i]), 1) - (len(term) - 3)
                longest = max(longest, n)
                if n < 0:
                    refuse(f"operand {i} has fewer dimensions than term {term!r} names")
                terms[i] = term.replace("...", free[len(free) - n:] if n else "")
        out_ellipsis = free[len(free) - longest:] if longest else ""
        text = ",".join(terms)
        if output is not None:
            if "..." not in output:
                refuse("the output needs '...' when the inputs have one")
            text += "->" + output.replace("...", out_ellipsis, 1)
        else:
            letters = sorted(ch for ch in text if ch != ",")
            single = [ch for ch in letters if letters.count(ch) == 1 and ch not in out_ellipsis]
            text += "->" + out_ellipsis + "".join(single)
    if "->" in text:
        left, right = text.split("->")
    else:
        left = text
        letters = sorted(ch for ch in text if ch != ",")
        right = "".join(ch for ch in letters if letters.count(ch) == 1)
    for ch in right:
        if ch not in left:
            refuse(f"the output letter {ch!r} does not appear in the inputs")
    if left.count(",") + 1 != len(shapes):
        refuse(f"it has {left.count(',') + 1} terms for {len(shapes)} operands (num_args)")
    return left.split(","), right


def einsum_shape(c: Call) -> None:
    """_npi_einsum: the output's letters' sizes, once every operand is fully known."""
    if len(c.ins) != c.p["num_args"]:
        c.fail(f"has {len(c.ins)} inputs, but num_args={c.p['num_args']}", attr="num_args")
    if not all(known(s) for s in c.ins):
        return
    shapes = [s for s in c.ins if s is not None]
    terms, output = _einsum_parse(c, c.p["subscripts"], shapes)
    sizes: dict[str, int] = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        if len(shape) != len(term):
            c.fail(f"term {term!r} names {len(term)} axes, but {_label(c, i)} has shape "
                   f"{fmt(shape)}", attr="subscripts")
        for ch, d in zip(term, shape):
            if ch in sizes:
                if sizes[ch] == 1:
                    sizes[ch] = d
                if d != 1 and d != sizes[ch]:
                    c.fail(f"subscripts={c.p['subscripts']!r}: letter {ch!r} is {sizes[ch]} "
                           f"in one place and {d} in {_label(c, i)}; the sizes of one "
                           f"letter must match (or be 1)",
                           attr="subscripts")
            else:
                sizes[ch] = d
    out = tuple(sizes[ch] for ch in output)
    c.set_out(0, out)
    for i, shape in enumerate(shapes):
        if _count(shape) > _MAX_ELEMENTS:
            c.fail(f"{_label(c, i)} has more than 2**31 elements", input=i)
    if _count(out) > _MAX_ELEMENTS:
        c.fail("the output would have more than 2**31 elements", attr="subscripts")



# ====================================================================== a few more
def diag_indices_from_shape(c: Call) -> None:
    """_npi_diag_indices_from: (ndim, n) for an input with every side n."""
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    if len(s) < 2:
        c.fail(f"{_label(c, 0)} has {len(s)} dimension(s); it must be 2-d or more", input=0)
    if any(d != s[0] for d in s):
        c.fail(f"{_label(c, 0)} has shape {fmt(s)}; all its sides must be equal", input=0)
    c.set_out(0, (len(s), s[0]))


def polyval_shape(c: Call) -> None:
    """_npi_polyval: p a 1-d array (known); the output has x's shape, both ways."""
    p = c.ins[0]
    if p is None or len(p) != 1:
        c.fail(f"{_label(c, 0)} must be known to be a 1-d array of coefficients", input=0)
    c.set_out(0, c.ins[1])
    c.set_in(1, c.outs[0], "the output has shape")


def unique_type(c: Call) -> None:
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])
    for i in range(1, len(c.outs)):
        c.set_out(i, "int64")


def delete_type(c: Call) -> None:
    wanted = 1 if c.p["step"] is not None or c.p["int_ind"] is not None else 2
    if len(c.ins) != wanted:
        c.fail(f"has {len(c.ins)} inputs, but with these attributes delete takes {wanted}")
    same_in_out_type(c)


def bincount_type(c: Call) -> None:
    if not c.p["has_weights"]:
        elemwise_type(c)
        return
    if len(c.ins) != 2:
        c.fail(f"has {len(c.ins)} inputs, but with has_weights=True bincount takes 2")
    c.set_out(0, c.ins[1])
    c.set_in(1, c.outs[0])



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



# ========================================================================== linalg
def _square_check(c: Call, s: Shape, what: str) -> None:
    if len(s) < 2:
        c.fail(f"{what} has shape {fmt(s)}; it must be 2-d or more", input=0)
    if s[-2] != s[-1]:
        c.fail(f"{what} has shape {fmt(s)}; its last two dimensions must be equal (square "
               f"matrices, and known)", input=0)


def solve_shape(c: Call) -> None:
    """_npi_solve: A (..., n, n) and B (..., n) or (..., n, k); the output is B's shape
    (unknown sizes must agree as unknown, as in MXNet)."""
    a, b = c.ins[0], c.ins[1]
    if a is None:
        return
    _square_check(c, a, _label(c, 0))
    nb = len(b) if b is not None else -1
    if len(a) == nb + 1:
        assert b is not None
        if a[-1] != b[-1]:
            c.fail(f"{_label(c, 0)} {fmt(a)} and {_label(c, 1)} {fmt(b)} disagree on the "
                   f"last dimension", input=1)
    elif len(a) == nb:
        assert b is not None
        if a[-1] != b[-2]:
            c.fail(f"{_label(c, 0)} {fmt(a)} and {_label(c, 1)} {fmt(b)} disagree on the "
                   f"matrix size", input=1)
    else:
        c.fail(f"{_label(c, 1)} must have the rank of A or one less (A is {fmt(a)}, B "
               f"{fmt(b)})", input=1)
    assert b is not None
    for i in range(len(a) - 2):
        if a[i] != b[i]:
            c.fail(f"{_label(c, 0)} {fmt(a)} and {_label(c, 1)} {fmt(b)} disagree on the "
                   f"batch dimensions", input=1)
    c.set_out(0, b)


def linalg_type(c: Call) -> None:
    """float16 refused; float32 inputs stay float32, anything else gives float64."""
    for i, t in enumerate(c.ins):
        if t == "float16":
            c.fail(f"{_label(c, i)} is float16, which linalg does not support: use float32 "
                   f"or float64", input=i)
    out = c.ins[-1] if all(t == "float32" for t in c.ins) else "float64"
    for i in range(len(c.outs)):
        c.set_out(i, out)


def cholesky_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None or len(s) < 2:
        c.fail(f"{_label(c, 0)} must be known to be 2-d or more", input=0)
    same_shape(c)


def eig_shape(c: Call) -> None:
    """_npi_eig, _npi_eigh: eigenvalues (A's shape less its last axis) and eigenvectors
    (A's shape); backwards from the outputs when A is not fully known."""
    a = c.ins[0]
    w, v = c.outs[0], c.outs[1]
    if known(a):
        assert a is not None
        _square_check(c, a, _label(c, 0))
        c.set_out(0, a[:-1])
        c.set_out(1, a)
        return
    if known(w) and known(v):
        assert w is not None and v is not None
        if len(v) < 2 or v[-2] != v[-1] or len(w) + 1 != len(v) or w != v[:-1]:
            c.fail(f"the outputs' shapes {fmt(w)} and {fmt(v)} do not fit eigenvalues and "
                   f"eigenvectors")
        c.set_in(0, v, "the eigenvectors have shape")
    elif known(w):
        assert w is not None
        if len(w) < 1:
            c.fail("the eigenvalues must be 1-d or more")
        full = w + (w[-1],)
        c.set_in(0, full, "the eigenvalues give")
        c.set_out(1, full)
    else:
        if v is None or len(v) < 2 or v[-2] != v[-1]:
            c.fail(f"{_label(c, 0)} must be known (square matrices) for eig", input=0)
        assert v is not None
        c.set_in(0, v, "the eigenvectors have shape")
        c.set_out(0, v[:-1])


def eigvals_shape(c: Call) -> None:
    a, w = c.ins[0], c.outs[0]
    if known(a):
        assert a is not None
        _square_check(c, a, _label(c, 0))
        c.set_out(0, a[:-1])
    elif known(w):
        assert w is not None
        if len(w) < 1:
            c.fail("the eigenvalues must be 1-d or more")
        c.set_in(0, w + (w[-1],), "the eigenvalues give")


# ======================================================================== the table
BROADCAST_MIXED = ("_npi_add", "_npi_subtract", "_npi_multiply", "_npi_mod", "_npi_power")
BROADCAST_SAME = ("_npi_copysign", "_npi_ldexp")
BROADCAST_INT = ("_npi_lcm", "_npi_bitwise_and", "_npi_bitwise_or", "_npi_bitwise_xor")
BROADCAST_FLOAT = ("_npi_arctan2", "_npi_hypot")
BROADCAST_LOGIC = ("_npi_equal", "_npi_not_equal", "_npi_greater", "_npi_less",
                   "_npi_greater_equal", "_npi_less_equal")
SCALAR = ("_npi_add_scalar", "_npi_subtract_scalar", "_npi_rsubtract_scalar",
          "_npi_multiply_scalar", "_npi_mod_scalar", "_npi_rmod_scalar", "_npi_power_scalar",
          "_npi_rpower_scalar", "_npi_copysign_scalar", "_npi_rcopysign_scalar",
          "_npi_arctan2_scalar", "_npi_rarctan2_scalar", "_npi_ldexp_scalar",
          "_npi_rldexp_scalar")
SCALAR_INT = ("_npi_lcm_scalar", "_npi_bitwise_and_scalar", "_npi_bitwise_or_scalar",
              "_npi_bitwise_xor_scalar")
SCALAR_DIVIDE = ("_npi_true_divide_scalar", "_npi_rtrue_divide_scalar")
SCALAR_LOGIC = ("_npi_equal_scalar", "_npi_not_equal_scalar", "_npi_greater_scalar",
                "_npi_less_scalar", "_npi_greater_equal_scalar", "_npi_less_equal_scalar")
UNARY = ("_npx_relu", "_npx_sigmoid", "_np_copy", "_npi_negative", "_npi_reciprocal",
         "_npi_absolute", "_npi_sign", "_npi_rint", "_npi_ceil", "_npi_floor",
         "_npi_bitwise_not", "_npi_trunc", "_npi_fix", "_npi_square", "_npi_sqrt",
         "_npi_cbrt", "_npi_exp", "_npi_log", "_npi_log10", "_npi_log2", "_npi_log1p",
         "_npi_expm1", "_npi_sin", "_npi_cos", "_npi_tan", "_npi_arcsin", "_npi_arccos",
         "_npi_arctan", "_npi_degrees", "_npi_radians", "_npi_sinh", "_npi_cosh",
         "_npi_tanh", "_npi_arcsinh", "_npi_arccosh", "_npi_arctanh", "_npi_nan_to_num")
UNARY_BOOL = ("_npi_logical_not", "_npi_isnan", "_npi_isinf", "_npi_isposinf",
              "_npi_isneginf", "_npi_isfinite")

RULES: dict[str, Rule] = {
    **table(FAMILY, BROADCAST_MIXED, broadcast_shape, mixed_precision_type),
    **table(FAMILY, BROADCAST_SAME, broadcast_shape, elemwise_type),
    **table(FAMILY, BROADCAST_INT, broadcast_shape, int_type),
    **table(FAMILY, BROADCAST_FLOAT, broadcast_shape, float_pair_type),
    **table(FAMILY, BROADCAST_LOGIC, broadcast_shape, logic_type),
    **table(FAMILY, ("_npi_true_divide",), broadcast_shape, true_divide_type),
    **table(FAMILY, SCALAR, same_shape, scalar_type),
    **table(FAMILY, SCALAR_INT, same_shape, int_type),
    **table(FAMILY, SCALAR_DIVIDE, same_shape, true_divide_type),
    **table(FAMILY, SCALAR_LOGIC + UNARY_BOOL, same_shape, scalar_logic_type),
    **table(FAMILY, UNARY, same_shape, elemwise_type),
    **table(FAMILY, ("_npi_around",), same_shape, around_type),
    **table(FAMILY, ("_np_sum", "_np_prod"), reduce_shape, sum_type),
    **table(FAMILY, ("_npi_mean",), reduce_shape, mean_type),
    **table(FAMILY, ("_np_max", "_np_min"), reduce_nonempty_shape, same_in_out_type),
    **table(FAMILY, ("_np_all", "_np_any"), reduce_shape, bool_out_type),
    **table(FAMILY, ("_npi_argmax", "_npi_argmin"), reduce_one_axis_shape, argminmax_type),
    **table(FAMILY, ("_npi_std", "_npi_var"), moments_shape, moments_type),
    **table(FAMILY, ("_np_transpose",), transpose_shape),
    **table(FAMILY, ("_np_reshape",), np_reshape_shape),
    **table(FAMILY, ("_npx_reshape",), npx_reshape_shape),
    **table(FAMILY, ("_np_squeeze",), squeeze_shape),
    **table(FAMILY, ("_npi_concatenate",), concatenate_shape),
    **table(FAMILY, ("_npi_hstack",), hstack_shape),
    **table(FAMILY, ("_npi_dstack",), dstack_shape),
    **table(FAMILY, ("_npi_vstack",), vstack_shape),
    **table(FAMILY, ("_npi_column_stack",), column_stack_shape),
    **table(FAMILY, ("_npi_stack",), stack_shape),
    **table(FAMILY, ("_np_roll",), roll_shape),
    **table(FAMILY, ("_npi_flip",), same_shape),
    **table(FAMILY, ("_np_moveaxis",), moveaxis_shape),
    **table(FAMILY, ("_npi_rot90",), rot90_shape),
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
    **table(FAMILY, ("_np_dot",), dot_shape),
    **table(FAMILY, ("_npi_matmul",), matmul_shape),
    **table(FAMILY, ("_npi_tensordot",), tensordot_shape),
    **table(FAMILY, ("_npi_tensordot_int_axes",), tensordot_int_shape),
    **table(FAMILY, ("_npi_where",), where_shape, where_type),
    **table(FAMILY, ("_npi_where_lscalar", "_npi_where_rscalar"), broadcast_shape,
            where_type),
    **table(FAMILY, ("_npi_where_scalar2",), same_shape, where_scalar2_type),
    **table(FAMILY, ("_np_cumsum",), cumsum_shape, cumsum_type),
    **table(FAMILY, ("_npi_tril",), tril_shape),
    **table(FAMILY, ("_np_diag",), diag_shape, same_in_out_type),
    **table(FAMILY, ("_np_diagonal",), diagonal_shape, same_in_out_type),
    **table(FAMILY, ("_np_diagflat",), diagflat_shape, same_in_out_type),
    **table(FAMILY, ("_np_trace",), trace_shape),
    **table(FAMILY, ("_npi_diff",), diff_shape, same_in_out_type),
    **table(FAMILY, ("_npi_pad",), pad_shape, same_in_out_type),
    **table(FAMILY, ("_npx_constraint_check",), scalar_out_when_known, constraint_type),
    **table(FAMILY, ("_npi_share_memory",), scalar_out, bool_out_type),
    **table(FAMILY, ("_npx_nonzero",), no_shape, int64_out),
    **table(FAMILY, ("_npi_uniform", "_npi_normal", "_npi_gamma", "_npi_bernoulli"),
            sampler_shape, sampler_type),
    **table(FAMILY, ("_npi_exponential", "_npi_pareto", "_npi_rayleigh", "_npi_weibull",
                     "_npi_logistic", "_npi_gumbel", "_npi_powerd"),
            sampler_shape, float32_sampler_type),
    **table(FAMILY, ("_npi_uniform_n", "_npi_normal_n"), sampler_n_shape, sampler_type),
    **table(FAMILY, ("_npi_norm",), norm_shape, norm_type),
    **table(FAMILY, ("_npi_einsum",), einsum_shape),
    **table(FAMILY, ("_npi_diag_indices_from",), diag_indices_from_shape, int64_out),
    **table(FAMILY, ("_npi_polyval",), polyval_shape),
    **table(FAMILY, ("_npi_unique",), no_shape, unique_type),
    **table(FAMILY, ("_npi_delete",), no_shape, delete_type),
    **table(FAMILY, ("_npi_bincount",), no_shape, bincount_type),
    **table(FAMILY, ("_npi_broadcast_to",), broadcast_to_shape),
    **table(FAMILY, ("_npi_average",), average_shape, average_type),
    **table(FAMILY, ("_npi_solve",), solve_shape, linalg_type),
    **table(FAMILY, ("_npi_cholesky",), cholesky_shape),
    **table(FAMILY, ("_npi_eig", "_npi_eigh"), eig_shape, linalg_type),
    **table(FAMILY, ("_npi_eigvals", "_npi_eigvalsh"), eigvals_shape, linalg_type),
}

