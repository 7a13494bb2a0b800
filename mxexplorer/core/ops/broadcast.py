"""Rules for the broadcast family: the ops that broadcast, reduce, contract and order.

Owns the shape and dtype rules of MXNet 1.9.1's binary broadcast ops (``broadcast_add``
... ``broadcast_logical_xor``, with the aliases ``broadcast_plus``, ``_npi_maximum`` ...),
``where``, the broadcasters (``broadcast_axis``/``broadcast_axes``, ``broadcast_to``,
``broadcast_like``), the reductions over axes (``sum``, ``mean``, ``prod``, ``nansum``,
``nanprod``, ``max``, ``min``, ``_square_sum``, ``norm``, ``moments``), the reductions
along one axis (``argmax``, ``argmin``, ``argmax_channel``, ``pick``), the orderings
(``sort``, ``argsort``, ``topk``), the products (``dot``, ``batch_dot``, ``_linalg_gemm``,
``_linalg_gemm2``, ``khatri_rao``, BERT's ``_contrib_interleaved_matmul_*``) and
``_contrib_allclose``.

Each rule follows its op's ``FInferShape``/``FInferType`` in MXNet 1.9.1, quirks included,
because MXNet is the judge: a binary broadcast leaves a dimension unknown when either side
does and infers nothing backwards, the legacy comparisons keep their inputs' dtype, a
full reduction gives ``(1,)``, ``max``/``min``/``norm``/``argmax``/``broadcast_axis`` and
the orderings wait for (or refuse without) the data's full shape, ``dot`` refuses an
unknown contracted dimension, ``where`` infers only among ``x``, ``y`` and the output,
``khatri_rao`` and the attention products compute with unknown sizes as C++ does (a
negative size is refused).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, NoReturn, Optional, Sequence

from mxexplorer.core.ops.base import (
    Call,
    Conflict,
    DtypeFn,
    MaybeShape,
    Rule,
    RuleError,
    Shape,
    ShapeFn,
    elemwise_type,
    fmt,
    known,
    merge,
    table,
)

FAMILY = "broadcast"
#: ``check_large_dim``: the linear-algebra ops refuse matrix sizes past a C++ int
INT_MAX = (1 << 31) - 1


# =================================================================== small helpers
def _fail(message: str, attr: str | None = None, input: int | None = None) -> NoReturn:
    raise RuleError(message, attr=attr, input=input)


def _cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _cmod(a: int, b: int) -> int:
    """C++ ``%`` (the sign of the dividend)."""
    return a - _cdiv(a, b) * b


def _rank(shape: MaybeShape) -> str:
    return "an unknown shape" if shape is None else f"shape {fmt(shape)}"


def _count(c: Call, names: Sequence[str]) -> None:
    """MXNet checks the number of inputs."""
    if len(c.ins) != len(names):
        n = len(c.ins)
        _fail(f"has {n} input{'s' if n != 1 else ''}, but this layer takes {len(names)} "
              f"({', '.join(names)})")


def _put_out(c: Call, i: int, shape: Sequence[int], why: str = "",
             attr: str | None = None) -> None:
    """``SHAPE_ASSIGN_CHECK`` of a computed shape into output ``i``.  A size below -1
    (arithmetic on an unknown size) is refused where it would be stored, and ignored
    where the output already knows that dimension, as MXNet does."""
    if i >= len(c.outs):
        return
    old = c.outs[i]
    dims = list(shape)
    for k, d in enumerate(dims):
        if d < -1:
            if old is None or len(old) != len(dims) or old[k] < 0:
                name = "the output" if len(c.outs) == 1 else f"output {i}"
                shown = ", ".join("?" if x == -1 else str(x) for x in shape)
                _fail(f"{name} would have size {d} in dimension {k}: ({shown})"
                      f"{' ' + why if why else ''}, and a size cannot be negative",
                      attr=attr)
            dims[k] = -1
    c.set_out(i, tuple(dims), why)


def _norm_axis(c: Call, axis: int, ndim: int, attr: str, what: str = "the data") -> int:
    """MXNet's ``CheckAxis``: ``axis`` in ``[-ndim, ndim)``, counted from the end when
    negative."""
    if not -ndim <= axis < ndim:
        _fail(f"axis {axis} does not exist in {what}, which has {ndim} dimension"
              f"{'s' if ndim != 1 else ''}: use an axis from {-ndim} to {ndim - 1}",
              attr=attr)
    return axis % ndim


def _full_data(c: Call, i: int = 0) -> Shape | None:
    """The input's shape when fully known (the ops that wait for it), else None."""
    s = c.ins[i]
    return s if known(s) else None


# ============================================================ dtype rules
def _counted(names: Sequence[str], rule: DtypeFn = elemwise_type) -> DtypeFn:
    """A dtype rule after MXNet's check of the input count."""
    def counted(c: Call) -> None:
        _count(c, names)
        rule(c)
    counted.__name__ = counted.__qualname__ = f"{rule.__name__}_{len(names)}"
    counted.__doc__ = f"{rule.__doc__} ({len(names)} inputs: {', '.join(names)})"
    return counted


UNARY_TYPE = _counted(("data",))
BINARY_TYPE = _counted(("lhs", "rhs"))


def broadcast_like_type(c: Call) -> None:
    """``broadcast_like``: nothing until ``rhs``'s dtype is known; then ``lhs`` and the
    output have one dtype (``rhs`` keeps its own)."""
    _count(c, ("lhs", "rhs"))
    if c.ins[1] is None:
        return
    t = c.ins[0] if c.ins[0] is not None else c.outs[0]
    if t is None:
        return
    c.set_in(0, t, "the output is")
    c.set_out(0, t)


def where_type(c: Call) -> None:
    """``WhereOpType``: ``x``, ``y`` and the output share one dtype (when any is known and
    they agree; a disagreement is left alone); the condition's dtype is free."""
    _count(c, ("condition", "x", "y"))
    t: Optional[str] = None
    for v in (c.ins[1], c.ins[2], c.outs[0]):
        if v is None:
            continue
        if t is None:
            t = v
        elif t != v:
            return
    if t is None:
        return
    c.set_in(1, t)
    c.set_in(2, t)
    c.set_out(0, t)


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


def khatri_rao_type(c: Call) -> None:
    """Every input and the output of one dtype (no count check)."""
    elemwise_type(c)


def allclose_type(c: Call) -> None:
    """``AllCloseType``: the output is uint8; the inputs' dtypes are free."""
    _count(c, ("a", "b"))
    c.set_out(0, "uint8", "(allclose's verdict)")


# ================================================================ binary broadcast
def broadcast_binary_shape(c: Call) -> None:
    """``BinaryBroadcastShape``: once both ranks are known, the output has the larger
    rank, each dimension (aligned from the right, missing ones read as 1) the one that is
    not 1; a dimension either side does not know stays unknown; two known sizes that
    differ and are both not 1 are refused.  Equal input shapes give the output that shape.
    Nothing is inferred backwards."""
    _count(c, ("lhs", "rhs"))
    lhs, rhs = c.ins
    if lhs is None or rhs is None:
        return
    if lhs == rhs:
        c.set_out(0, lhs)
        return
    n = max(len(lhs), len(rhs))
    bl, br = n - len(lhs), n - len(rhs)
    out = []
    for i in range(n):
        left = lhs[i - bl] if i >= bl else 1
        right = rhs[i - br] if i >= br else 1
        if left < 0 or right < 0:
            out.append(-1)
        elif left != right:
            if left != 1 and right != 1:
                _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} "
                      f"cannot be broadcast together: sizes {left} and {right} differ "
                      f"(aligned from the right, dimension {i} of the result) and neither "
                      f"is 1", input=1)
            out.append(right if left == 1 else left)
        else:
            out.append(left)
    c.set_out(0, tuple(out), f"(broadcasting {fmt(lhs)} with {fmt(rhs)})")


# ============================================================================ where
def where_shape(c: Call) -> None:
    """``WhereOpShape``: with the condition's full shape known, ``x``, ``y`` and the output
    share one shape (a disagreement among them is left alone).  A condition of their rank
    is only compared with it (silently); a 1-d condition must have as many elements as
    their first dimension, which must be known."""
    _count(c, ("condition", "x", "y"))
    cond = c.ins[0]
    if not known(cond):
        return
    assert cond is not None
    try:
        t = merge(merge(c.ins[1], c.ins[2]), c.outs[0])
    except Conflict:
        return
    c.set_in(1, t)
    c.set_in(2, t)
    c.set_out(0, t)
    if t is not None and len(cond) == len(t):
        return
    if len(cond) == 1:
        if t is None or t[0] < 0:
            _fail(f"{c.input_label(0)} has shape {fmt(cond)}: a 1-d condition picks rows, "
                  f"and x and y have {_rank(t)}, whose first dimension is not known; give "
                  f"x or y a shape", input=0)
        assert t is not None
        if cond[0] != t[0]:
            _fail(f"{c.input_label(0)} has shape {fmt(cond)}, but x and y have shape "
                  f"{fmt(t)}: a 1-d condition needs one element per row ({t[0]})",
                  input=0)


# ===================================================================== broadcasters
def broadcast_axis_shape(c: Call) -> None:
    """``BroadcastAxesShape``: needs the data's full shape; each axis of ``axis`` (from 0
    to ndim - 1; no negative axes) must have size 1 and takes the size of ``size``."""
    _count(c, ("data",))
    data = _full_data(c)
    if data is None:
        return
    axes, sizes = tuple(c.p["axis"] or ()), tuple(c.p["size"] or ())
    if len(axes) != len(sizes):
        _fail(f"axis {axes} names {len(axes)} axes but size {sizes} gives {len(sizes)} "
              f"sizes: give one size per axis", attr="size")
    out = list(data)
    for a, s in zip(axes, sizes):
        if not 0 <= a < len(data):
            _fail(f"axis {a} (in axis {axes}) does not exist in {c.input_label(0)} "
                  f"{fmt(data)}: use axes from 0 to {len(data) - 1} (negative axes are not "
                  f"accepted here)", attr="axis")
        if out[a] != 1:
            _fail(f"axis {a} of {c.input_label(0)} {fmt(tuple(out))} has size {out[a]}, but "
                  f"broadcast_axis can only broadcast axes of size 1", attr="axis")
        out[a] = s
    _put_out(c, 0, out, f"from size {sizes}", attr="size")


def broadcast_to_shape(c: Call) -> None:
    """``BroadcastToShape``: ``shape`` has the data's rank; each of its sizes must equal
    the data's or the data's must be 1; a 0 keeps the data's size (known or not)."""
    _count(c, ("data",))
    data = c.ins[0]
    if data is None:
        return
    target = c.p["shape"]
    if target is None or len(target) != len(data):
        what = "None" if target is None else f"{tuple(target)}"
        _fail(f"shape {what} does not have the rank of {c.input_label(0)} {fmt(data)}: "
              f"give a shape of {len(data)} dimensions (0 keeps the data's size)",
              attr="shape")
    assert target is not None
    out = list(target)
    for i, (d, s) in enumerate(zip(data, target)):
        if s != 0:
            if d != s and d != 1:
                _fail(f"{c.input_label(0)} {fmt(data)} cannot be broadcast to shape "
                      f"{tuple(target)}: dimension {i} has size "
                      f"{'unknown' if d < 0 else d}, which is neither {s} nor 1",
                      attr="shape")
        else:
            out[i] = d
    _put_out(c, 0, out, f"from shape {tuple(target)}", attr="shape")


def broadcast_like_shape(c: Call) -> None:
    """``BroadcastLikeShape``: without ``lhs_axes``/``rhs_axes``, ``lhs`` has ``rhs``'s
    rank and each of its sizes equals ``rhs``'s or is 1 (an unknown ``rhs`` size keeps
    ``lhs``'s); with them, each ``lhs`` axis (of size 1) takes the size of the matching
    ``rhs`` axis."""
    _count(c, ("lhs", "rhs"))
    lhs, rhs = c.ins
    if lhs is None or rhs is None:
        return
    la, ra = c.p.get("lhs_axes"), c.p.get("rhs_axes")
    if la is None or ra is None:
        if len(lhs) != len(rhs):
            _fail(f"{c.input_label(0)} {fmt(lhs)} cannot be broadcast like "
                  f"{c.input_label(1)} {fmt(rhs)}: without lhs_axes and rhs_axes both need "
                  f"the same rank", input=0)
        out = list(rhs)
        for i, (left, right) in enumerate(zip(lhs, rhs)):
            if right != -1:
                if left != right and left != 1:
                    _fail(f"{c.input_label(0)} {fmt(lhs)} cannot be broadcast like "
                          f"{c.input_label(1)} {fmt(rhs)}: dimension {i} has size "
                          f"{'unknown' if left < 0 else left}, which is neither {right} "
                          f"nor 1", input=0)
            else:
                out[i] = left
        _put_out(c, 0, out)
        return
    la, ra = tuple(la), tuple(ra)
    if len(la) != len(ra):
        _fail(f"lhs_axes {la} and rhs_axes {ra} have different lengths: give one rhs axis "
              f"per lhs axis", attr="rhs_axes")
    if not la:
        _fail("lhs_axes and rhs_axes are empty: name at least one axis (or leave both "
              "out)", attr="lhs_axes")
    out = list(lhs)
    for a, b in zip(la, ra):
        src = a + len(lhs) if a < 0 else a
        if not 0 <= src < len(lhs):
            _fail(f"lhs_axes has axis {a}, which does not exist in {c.input_label(0)} "
                  f"{fmt(lhs)}", attr="lhs_axes")
        dst = b + len(rhs) if b < 0 else b
        if not 0 <= dst < len(rhs):
            _fail(f"rhs_axes has axis {b}, which does not exist in {c.input_label(1)} "
                  f"{fmt(rhs)}", attr="rhs_axes")
        if lhs[src] != 1:
            _fail(f"axis {a} of {c.input_label(0)} {fmt(lhs)} has size "
                  f"{'unknown' if lhs[src] < 0 else lhs[src]}, but only axes of size 1 can "
                  f"be broadcast (lhs_axes)", attr="lhs_axes")
        out[src] = rhs[dst]
    _put_out(c, 0, out)


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


# =========================================================================== products
def dot_shape(c: Call) -> None:
    """``DotShape``: once both ranks are known, the contracted sizes (``lhs``'s last, or
    first with ``transpose_a``; ``rhs``'s first, or last with ``transpose_b``) must be known
    and equal; the output is ``lhs`` without it followed by ``rhs`` without it (two
    vectors give ``(1,)`` and cannot be transposed)."""
    _count(c, ("lhs", "rhs"))
    lhs, rhs = c.ins
    if lhs is None or rhs is None:
        return
    ta, tb = bool(c.p["transpose_a"]), bool(c.p["transpose_b"])
    for i, s in enumerate((lhs, rhs)):
        if not s:
            _fail(f"{c.input_label(i)} is a scalar (0-d), which dot does not take",
                  input=i)
    if len(lhs) == 1 and len(rhs) == 1:
        if ta or tb:
            _fail("dot of two vectors cannot transpose them: set transpose_a and "
                  "transpose_b to false", attr="transpose_a" if ta else "transpose_b")
        if lhs[0] != rhs[0]:
            _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} have "
                  f"different lengths: the dot of two vectors needs equal lengths", input=1)
        c.set_out(0, (1,))
        return
    lk = lhs[0] if ta else lhs[-1]
    rk = rhs[-1] if tb else rhs[0]
    for k, side, i in ((lk, "lhs", 0), (rk, "rhs", 1)):
        if k < 0:
            _fail(f"{c.input_label(i)} has shape {fmt(c.ins[i])}, whose contracted "
                  f"dimension is unknown: dot needs the size it sums over ({side})",
                  input=i)
        if k == 0:
            break
    else:
        if lk != rk:
            _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} cannot "
                  f"be multiplied: the lhs sums over {lk} elements "
                  f"({'first' if ta else 'last'} dimension{', transpose_a' if ta else ''}) "
                  f"but the rhs over {rk} ({'last' if tb else 'first'} dimension"
                  f"{', transpose_b' if tb else ''})", input=1)
    out: tuple[int, ...] = ()
    if len(lhs) > 1:
        out += lhs[1:] if ta else lhs[:-1]
    if len(rhs) > 1:
        out += rhs[:-1] if tb else rhs[1:]
    c.set_out(0, out)


def batch_dot_shape(c: Call) -> None:
    """``BatchDotShape``: both of one rank of 3 or more, with equal batch dimensions
    (compared as given); nothing until ``lhs``'s last and ``rhs``'s second-to-last sizes
    are known; the contracted sizes (per ``transpose_a``/``transpose_b``) equal."""
    _count(c, ("lhs", "rhs"))
    lhs, rhs = c.ins
    if lhs is None or rhs is None:
        return
    if not (len(lhs) >= 3 and len(rhs) >= 3 and len(lhs) == len(rhs)):
        _fail(f"batch_dot multiplies two arrays of one rank of 3 or more (batch, rows, "
              f"columns), but {c.input_label(0)} has shape {fmt(lhs)} and "
              f"{c.input_label(1)} {fmt(rhs)}", input=0 if len(lhs) < 3 else 1)
    n = len(lhs)
    if lhs[-1] < 0 or rhs[-2] < 0:
        return
    if lhs[:-2] != rhs[:-2]:
        _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} have "
              f"different batch dimensions {fmt(lhs[:-2])} and {fmt(rhs[:-2])}: batch_dot "
              f"needs them equal (both known or both unknown)", input=1)
    ta, tb = bool(c.p["transpose_a"]), bool(c.p["transpose_b"])
    m, lk = (lhs[n - 1], lhs[n - 2]) if ta else (lhs[n - 2], lhs[n - 1])
    cols, rk = (rhs[n - 2], rhs[n - 1]) if tb else (rhs[n - 1], rhs[n - 2])
    if lk != rk:
        _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} cannot be "
              f"multiplied: the lhs matrices sum over {'?' if lk < 0 else lk} elements"
              f"{' (transpose_a)' if ta else ''} but the rhs matrices over "
              f"{'?' if rk < 0 else rk}{' (transpose_b)' if tb else ''}", input=1)
    c.set_out(0, lhs[:-2] + (m, cols))


def _gemm(c: Call, three: bool) -> None:
    """``LaMatrixMultMacOpShape`` (``_linalg_gemm``, ``_linalg_gemm2``): once A and B have
    one rank of 2 or more, the matrices lie on ``axis`` (rows) and the last axis; the
    other dimensions must be equal (as given), the contracted sizes too; the output (and
    gemm's C) is the product's shape.  Otherwise nothing (no backward inference)."""
    _count(c, ("A", "B", "C") if three else ("A", "B"))
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None or len(a) < 2 or len(a) != len(b):
        return
    n = len(a)
    param = int(c.p["axis"])
    axis = n + param if param < 0 else param
    if not 0 <= axis < n - 1:
        _fail(f"axis {param} cannot be the row axis of {n}-d matrices: use an axis from "
              f"{-n} to -2 or from 0 to {n - 2}", attr="axis")
    for d in (a[axis], a[n - 1], b[axis], b[n - 1]):
        if d > INT_MAX:
            _fail(f"a matrix size {d} is larger than {INT_MAX}, which linalg supports")
    ta, tb = bool(c.p["transpose_a"]), bool(c.p["transpose_b"])
    out = list(a)
    for i in range(n - 1):
        if i != axis and a[i] != b[i]:
            _fail(f"{c.input_label(0)} {fmt(a)} and {c.input_label(1)} {fmt(b)} differ in "
                  f"dimension {i}: apart from the matrix axes ({axis} and {n - 1}) they "
                  f"must be equal (both known or both unknown)", input=1)
    lk = a[axis] if ta else a[n - 1]
    rk = b[n - 1] if tb else b[axis]
    if lk != rk:
        _fail(f"{c.input_label(0)} {fmt(a)} and {c.input_label(1)} {fmt(b)} cannot be "
              f"multiplied: A's matrices sum over {'?' if lk < 0 else lk} elements"
              f"{' (transpose_a)' if ta else ''}, B's over {'?' if rk < 0 else rk}"
              f"{' (transpose_b)' if tb else ''}", input=1)
    out[axis] = a[n - 1] if ta else a[axis]
    out[n - 1] = b[axis] if tb else b[n - 1]
    c.set_out(0, tuple(out))
    if three:
        c.set_in(2, tuple(out), "A times B gives")


def gemm_shape(c: Call) -> None:
    """``_linalg_gemm``: A times B (per ``transpose_a``/``transpose_b``, rows on
    ``axis``), and C of the product's shape."""
    _gemm(c, True)


def gemm2_shape(c: Call) -> None:
    """``_linalg_gemm2``: A times B (per ``transpose_a``/``transpose_b``, rows on
    ``axis``)."""
    _gemm(c, False)


def khatri_rao_shape(c: Call) -> None:
    """``KhatriRaoShape``: every input needs a known rank of 2 or more (only the first two
    dimensions count); all have one number of columns (as given, unknown or not); the
    output is (product of the row counts, columns), computed as C++ does (an unknown row
    count is -1)."""
    if not c.ins:
        _fail("khatri_rao needs at least one input matrix", attr="num_args")
    n_args = c.p.get("num_args")
    if n_args is not None and n_args != len(c.ins):
        _fail(f"khatri_rao has {len(c.ins)} inputs, but num_args={n_args}: give as many "
              f"inputs as num_args", attr="num_args")
    rows = 1
    cols = None
    for i, s in enumerate(c.ins):
        if s is None or len(s) < 2:
            _fail(f"{c.input_label(i)} has {_rank(s)}, but khatri_rao needs matrices "
                  f"(2-d) of known shape", input=i)
        assert s is not None
        if cols is None:
            cols = s[1]
        if s[1] != cols:
            _fail(f"{c.input_label(i)} has shape {fmt(s)}, but the first matrix has "
                  f"{'?' if cols < 0 else cols} columns: khatri_rao needs the same number "
                  f"of columns in every matrix", input=i)
        rows *= s[0]
    assert cols is not None
    if rows > INT_MAX or rows < -INT_MAX - 1:
        _fail(f"khatri_rao's {rows} rows overflow a C++ int")
    _put_out(c, 0, (rows, cols), "= (product of the row counts, columns), an "
             "unknown row count counting as -1")


def _three_d(c: Call, i: int, layout: str) -> Shape:
    s: MaybeShape = c.ins[i]
    if s is None or len(s) != 3:
        _fail(f"{c.input_label(i)} has {_rank(s)}, but {c.op} needs a 3-d input "
              f"({layout})", input=i)
    assert s is not None
    return s


def _heads(c: Call) -> int:
    return int(c.p["heads"])


def selfatt_qk_shape(c: Call) -> None:
    """``_contrib_interleaved_matmul_selfatt_qk``: 3-d (sequence, batch, 3 * heads *
    head size) gives (batch * heads, sequence, sequence)."""
    _count(c, ("queries_keys_values",))
    qkv = _three_d(c, 0, "sequence, batch, 3 * projection")
    _put_out(c, 0, (_heads(c) * qkv[1], qkv[0], qkv[0]), f"= (batch * heads, sequence, "
             f"sequence) with heads={_heads(c)} (an unknown batch counts as -1)", attr="heads")


def selfatt_valatt_shape(c: Call) -> None:
    """``_contrib_interleaved_matmul_selfatt_valatt``: the attention (batch * heads,
    sequence, sequence) over the 3-d interleaved projections (sequence, batch, 3 * proj)
    gives (sequence, batch, proj)."""
    _count(c, ("queries_keys_values", "attention"))
    qkv = _three_d(c, 0, "sequence, batch, 3 * projection")
    att = _three_d(c, 1, "batch * heads, sequence, sequence")
    if qkv[0] != att[1] or qkv[0] != att[2]:
        _fail(f"{c.input_label(1)} has shape {fmt(att)}, but the sequence length of "
              f"{c.input_label(0)} {fmt(qkv)} is {fmt(qkv[:1])[1:-2]}: the attention's "
              f"last two dimensions must both be it (as given, known or not)", input=1)
    if _cmod(qkv[2], 3) != 0:
        _fail(f"{c.input_label(0)} has shape {fmt(qkv)}: its last dimension "
              f"({'unknown' if qkv[2] < 0 else qkv[2]}) must be a known multiple of 3 "
              f"(queries, keys and values)", input=0)
    _put_out(c, 0, (qkv[0], qkv[1], _cdiv(qkv[2], 3)))


def encdec_qk_shape(c: Call) -> None:
    """``_contrib_interleaved_matmul_encdec_qk``: queries (sequence, batch, proj) and
    interleaved keys/values (kv sequence, batch, 2 * proj) give (batch * heads,
    sequence, kv sequence)."""
    _count(c, ("queries", "keys_values"))
    q = _three_d(c, 0, "sequence, batch, projection")
    kv = _three_d(c, 1, "sequence, batch, 2 * projection")
    if q[2] * 2 != kv[2]:
        _fail(f"{c.input_label(1)} has shape {fmt(kv)}, but the queries {fmt(q)} need "
              f"keys and values of twice their last dimension (known)", input=1)
    if q[1] != kv[1]:
        _fail(f"{c.input_label(1)} has shape {fmt(kv)}, but the queries {fmt(q)} have "
              f"batch size {fmt(q[1:2])[1:-2]}: both need one batch size (as given, known "
              f"or not)", input=1)
    _put_out(c, 0, (q[1] * _heads(c), q[0], kv[0]), f"= (batch * heads, sequence, kv "
             f"sequence) with heads={_heads(c)} (an unknown batch counts as -1)", attr="heads")


def encdec_valatt_shape(c: Call) -> None:
    """``_contrib_interleaved_matmul_encdec_valatt``: the attention (batch * heads,
    sequence, kv sequence) over the interleaved keys/values (kv sequence, batch,
    2 * proj) gives (sequence, batch, proj)."""
    _count(c, ("keys_values", "attention"))
    kv = _three_d(c, 0, "sequence, batch, 2 * projection")
    att = _three_d(c, 1, "batch * heads, sequence, kv sequence")
    if kv[0] != att[2]:
        _fail(f"{c.input_label(1)} has shape {fmt(att)}, but the keys and values {fmt(kv)} "
              f"have sequence length {fmt(kv[:1])[1:-2]}: the attention's last dimension "
              f"must be it (as given, known or not)", input=1)
    if kv[1] * _heads(c) != att[0]:
        _fail(f"{c.input_label(1)} has shape {fmt(att)}, but the keys and values {fmt(kv)} "
              f"with heads={_heads(c)} need an attention of batch * heads = "
              f"{'?' if kv[1] < 0 else kv[1] * _heads(c)} in its first dimension",
              attr="heads", input=1)
    _put_out(c, 0, (att[1], kv[1], _cdiv(kv[2], 2)))


def allclose_shape(c: Call) -> None:
    """``AllCloseShape``: the verdict is a scalar (0-d); the inputs are free."""
    _count(c, ("a", "b"))
    c.set_out(0, ())


# ============================================================================= tables
#: ``BinaryBroadcastShape`` and ``ElemwiseType<2, 1>`` (comparisons keep the dtype)
BINARY = (
    "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_mod",
    "broadcast_power", "broadcast_maximum", "broadcast_minimum", "broadcast_hypot",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
    "broadcast_logical_or", "broadcast_logical_xor",
)

#: ``ReduceAxesShape`` and ``ElemwiseType<1, 1>``
REDUCE = ("sum", "mean", "prod", "nansum", "nanprod", "_square_sum")


def _rules(names: Sequence[str], shape: ShapeFn, dtype: DtypeFn) -> dict[str, Rule]:
    return table(FAMILY, names, shape, dtype)


RULES: dict[str, Rule] = {
    **_rules(BINARY, broadcast_binary_shape, BINARY_TYPE),
    **_rules(("where",), where_shape, where_type),
    **_rules(("broadcast_axis",), broadcast_axis_shape, UNARY_TYPE),
    **_rules(("broadcast_to",), broadcast_to_shape, UNARY_TYPE),
    **_rules(("broadcast_like",), broadcast_like_shape, broadcast_like_type),
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
    **_rules(("dot",), dot_shape, BINARY_TYPE),
    **_rules(("batch_dot",), batch_dot_shape, BINARY_TYPE),
    **_rules(("_linalg_gemm",), gemm_shape, _counted(("A", "B", "C"))),
    **_rules(("_linalg_gemm2",), gemm2_shape, _counted(("A", "B"))),
    **_rules(("khatri_rao",), khatri_rao_shape, khatri_rao_type),
    **_rules(("_contrib_interleaved_matmul_selfatt_qk",), selfatt_qk_shape, UNARY_TYPE),
    **_rules(("_contrib_interleaved_matmul_selfatt_valatt",), selfatt_valatt_shape,
             _counted(("queries_keys_values", "attention"))),
    **_rules(("_contrib_interleaved_matmul_encdec_qk",), encdec_qk_shape,
             _counted(("queries", "keys_values"))),
    **_rules(("_contrib_interleaved_matmul_encdec_valatt",), encdec_valatt_shape,
             _counted(("keys_values", "attention"))),
    **_rules(("_contrib_allclose",), allclose_shape, allclose_type),
}
