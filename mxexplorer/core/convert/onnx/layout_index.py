"""Converters of the layout family's indexing and array-making ops: ``take``,
``pick``, ``gather_nd``, ``one_hot``, ``shape_array``/``size_array``, ``diag``,
``_slice_assign``, and the constants (``_zeros``, ``_ones``, ``_full``, ``_eye``,
``_arange``, ``_contrib_arange_like``), whose static shape and dtype the engine gives.

MXNet reads indices of any dtype by truncating them to integers (a C++ cast, as
ONNX's ``Cast`` to int64 does), then clips or wraps them as the op's ``mode`` says;
ONNX's own negative-index rule is never relied on.  Imported by :mod:`layout`.  Must
not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Any

from mxexplorer.core.convert.onnx.context import Ctx, OpNode, onnx_type
from mxexplorer.core.convert.onnx.layout import axis_of, empty, nonempty, slice_ranges
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]
FLOATS = ("float16", "float32", "float64", "bfloat16")


def as_int64(cx: Ctx, name: str, dtype: str) -> str:
    """``name`` as int64, truncated toward zero as MXNet's ``static_cast`` does."""
    return name if dtype == "int64" else cx.cast(name, "int64")


def bounded(cx: Ctx, idx: str, dim: int, mode: str) -> str:
    """int64 indices into an axis of ``dim``: ``clip`` clamps to [0, dim-1], ``wrap``
    takes them modulo ``dim`` (non-negative), ``raise`` leaves them (MXNet stops on
    an index out of range; in range the two agree)."""
    if mode == "clip":
        return cx.one("Clip", [idx, cx.const(0, "int64"), cx.const(dim - 1, "int64")],
                      hint="clip")
    if mode == "wrap":
        return cx.one("Mod", [idx, cx.const(dim, "int64")], hint="wrap", fmod=0)
    return idx


@converts("take")
@nonempty
def take(cx: Ctx, node: OpNode) -> Out:
    """``take``: rows of ``axis`` picked by the indices (modes clip, the default,
    wrap and raise): a ``Gather`` of bounded int64 indices."""
    axis = axis_of(int(node.p.get("axis", 0)), node.rank())
    mode = str(node.p.get("mode") or "clip")
    idx = bounded(cx, as_int64(cx, node.inputs[1], node.in_dtypes[1]),
                  node.in_shapes[0][axis], mode)
    if mode == "raise":
        cx.note("take with mode 'raise': indices out of range stop MXNet; the ONNX "
                "model leaves them to the runtime")
    return [cx.one("Gather", [node.inputs[0], idx], node.outputs[0], axis=axis)]


@converts("pick")
@nonempty
def pick(cx: Ctx, node: OpNode) -> Out:
    """``pick``: one item of ``axis`` per position (the index array has the data's
    shape without the axis, or with it as 1), clip or wrap: a ``GatherElements``."""
    if node.p.get("axis") is None:
        raise node.refuse("axis None is not supported by MXNet's pick")
    shape = list(node.in_shapes[0])
    axis = axis_of(int(node.p["axis"]), len(shape))
    idx = bounded(cx, as_int64(cx, node.inputs[1], node.in_dtypes[1]), shape[axis],
                  str(node.p.get("mode") or "clip"))
    kept = shape[:axis] + [1] + shape[axis + 1:]
    if list(node.in_shapes[1]) != kept:
        idx = cx.reshape(idx, kept)
    got = cx.one("GatherElements", [node.inputs[0], idx], hint=node.name, axis=axis)
    return [cx.reshape(got, node.out_shapes[0], node.outputs[0])]


@converts("gather_nd")
@nonempty
def gather_nd(cx: Ctx, node: OpNode) -> Out:
    """``gather_nd``: MXNet's indices are (M, Y...) with the index tuple on the first
    axis, ONNX's ``GatherND`` wants (Y..., M): a ``Transpose``.  MXNet wraps each
    index as ``int(i + dim) % dim`` (the sum in the index dtype): the same here."""
    idx, dtype = node.inputs[1], node.in_dtypes[1]
    rank = len(node.in_shapes[1])
    m = node.in_shapes[1][0]
    dims = list(node.in_shapes[0][:m])
    if rank > 1:
        idx = cx.one("Transpose", [idx], hint=node.name, perm=list(range(1, rank)) + [0])
    if dtype in FLOATS:
        if dtype != "float64":
            dtype = "float32"
            idx = cx.cast(idx, dtype) if node.in_dtypes[1] != "float32" else idx
        idx = cx.cast(cx.one("Add", [idx, cx.const(dims, dtype)], hint="shift"), "int64")
    else:
        idx = cx.one("Add", [as_int64(cx, idx, dtype), cx.ints(dims)], hint="shift")
    idx = cx.one("Mod", [idx, cx.ints(dims)], hint="wrap", fmod=0)
    return [cx.one("GatherND", [node.inputs[0], idx], node.outputs[0])]


@converts("one_hot")
@nonempty
def one_hot(cx: Ctx, node: OpNode) -> Out:
    """``one_hot``: ``on_value`` where the (truncated) index equals the position on
    a new last axis of ``depth``, ``off_value`` elsewhere; an index outside
    [0, depth) gives a row of ``off_value`` (ONNX's ``OneHot`` would wrap negatives,
    so ``Equal`` and ``Where`` are used)."""
    import numpy as np

    depth = int(node.p["depth"])
    dtype = node.out_dtypes[0]
    if dtype == "bfloat16":
        raise node.refuse("dtype bfloat16 has no constant form here")
    idx = cx.unsqueeze(as_int64(cx, node.inputs[0], node.in_dtypes[0]), [-1])
    hit = cx.one("Equal", [idx, cx.ints(list(range(depth)))], hint="hit")
    on = cx.const(np.asarray(node.p.get("on_value", 1.0)).astype(dtype), dtype)
    off = cx.const(np.asarray(node.p.get("off_value", 0.0)).astype(dtype), dtype)
    return [cx.one("Where", [hit, on, off], node.outputs[0])]


@converts("shape_array")
def shape_array(cx: Ctx, node: OpNode) -> Out:
    """``shape_array``: the data's shape as a 1-D int64 array (ONNX's ``Shape``)."""
    if node.out_dtypes[0] != "int64":
        got = cx.one("Shape", [node.inputs[0]], hint=node.name)
        return [cx.one("Cast", [got], node.outputs[0], to=_onnx(node.out_dtypes[0]))]
    return [cx.one("Shape", [node.inputs[0]], node.outputs[0])]


@converts("size_array")
def size_array(cx: Ctx, node: OpNode) -> Out:
    """``size_array``: the element count as a 1-element int64 array (ONNX's ``Size``
    is 0-D: reshaped to (1,))."""
    got = cx.one("Size", [node.inputs[0]], hint=node.name)
    if node.out_dtypes[0] != "int64":
        got = cx.cast(got, node.out_dtypes[0])
    return [cx.reshape(got, [1], node.outputs[0])]


def _onnx(dtype: str) -> int:
    return onnx_type(dtype)


def _constant(cx: Ctx, node: OpNode, value: Any) -> Out:
    """Output 0 as an Identity of the constant ``value`` (the engine's dtype)."""
    import numpy as np

    dtype = node.out_dtypes[0]
    if dtype == "bfloat16":
        raise node.refuse("dtype bfloat16 has no constant form here")
    array = np.asarray(value).astype(dtype).reshape(node.out_shapes[0])
    return [cx.identity(cx.const(array, dtype, node.name), node.outputs[0])]


@converts("_zeros", "_ones", "_full", "_zeros_without_dtype")
def filled(cx: Ctx, node: OpNode) -> Out:
    """``_zeros``/``_ones``/``_full``: the engine's output shape (a 0 in ``shape``
    filled in from the graph) and dtype, filled with 0, 1 or ``value``: a
    ``ConstantOfShape``."""
    import numpy as np
    from onnx import numpy_helper

    dtype = node.out_dtypes[0]
    if dtype == "bfloat16":
        raise node.refuse("dtype bfloat16 has no constant form here")
    fill = {"_ones": 1.0, "_full": float(node.p.get("value") or 0.0)}.get(node.op, 0.0)
    got = empty(cx, node)
    if got is not None:
        return [got]
    value = numpy_helper.from_array(np.asarray([fill]).astype(dtype), "value")
    return [cx.one("ConstantOfShape", [cx.ints(node.out_shapes[0])], node.outputs[0],
                   value=value)]


@converts("_eye")
def eye(cx: Ctx, node: OpNode) -> Out:
    """``_eye``: N x M (0: N) with ones on diagonal ``k``."""
    import numpy as np

    n = int(node.p["N"])
    m = int(node.p.get("M") or 0) or n
    return _constant(cx, node, np.eye(n, m, int(node.p.get("k") or 0)))


def _range(dtype: str, count: int, start: float, step: float, repeat: int) -> Any:
    """MXNet's ``range_fwd``: ``start + (i / repeat) * step`` with start and step cast
    to the dtype first (through int64 for unsigned types)."""
    import numpy as np

    k = np.arange(count, dtype="int64") // max(repeat, 1)
    if dtype in FLOATS:
        work = "float32" if dtype in ("float16", "bfloat16") else dtype
        s0, s1 = np.asarray(start).astype(work), np.asarray(step).astype(work)
        if dtype == "float16":
            s0, s1 = s0.astype("float16").astype(work), s1.astype("float16").astype(work)
        return (k.astype(work) * s1 + s0).astype(dtype)
    first = np.asarray(int(start)).astype(dtype).astype("int64")
    stride = np.asarray(int(step)).astype(dtype).astype("int64")
    return (k * stride + first).astype(dtype)


@converts("_arange")
def arange(cx: Ctx, node: OpNode) -> Out:
    """``_arange``: ``start``, ``stop`` (None: from 0 to ``start``), ``step``, each value
    ``repeat`` times: a constant of the engine's length and dtype."""
    p = node.p
    start, stop = float(p.get("start") or 0.0), p.get("stop")
    if stop is None and not p.get("infer_range"):
        start = 0.0
    count = node.out_shapes[0][0] if node.out_shapes[0] else 1
    return _constant(cx, node, _range(node.out_dtypes[0], count, start,
                                      float(p.get("step") or 1.0),
                                      int(p.get("repeat") or 1)))


@converts("_contrib_arange_like")
def arange_like(cx: Ctx, node: OpNode) -> Out:
    """``_contrib_arange_like``: a range shaped like the data (or the length of its
    ``axis``), in its dtype: a constant (the data's values are not read)."""
    p = node.p
    count = math.prod(node.out_shapes[0])
    return _constant(cx, node, _range(node.out_dtypes[0], count,
                                      float(p.get("start") or 0.0),
                                      float(p.get("step") or 1.0),
                                      int(p.get("repeat") or 1)))


@converts("diag")
@nonempty
def diag(cx: Ctx, node: OpNode) -> Out:
    """``diag``: of a vector, the square matrix with it on diagonal ``k`` (a ``Gather``
    from the vector with a zero appended); of an array, diagonal ``k`` of the
    (``axis1``, ``axis2``) planes as a new last axis (a ``GatherND`` after moving the
    two axes first)."""
    import numpy as np

    k = int(node.p.get("k") or 0)
    shape = list(node.in_shapes[0])
    x = node.inputs[0]
    if len(shape) == 1:
        n = shape[0]
        side = n + abs(k)
        i, j = np.indices((side, side))
        idx = np.where(j == i + k, np.minimum(i, j), n)
        zero = cx.const(np.zeros([1], node.in_dtypes[0]), node.in_dtypes[0])
        padded = cx.one("Concat", [x, zero], hint=node.name, axis=0)
        return [cx.one("Gather", [padded, cx.const(idx, "int64")], node.outputs[0],
                       axis=0)]
    a1 = axis_of(int(node.p.get("axis1", 0)), len(shape))
    a2 = axis_of(int(node.p.get("axis2", 1)), len(shape))
    rest = [d for d in range(len(shape)) if d not in (a1, a2)]
    length = node.out_shapes[0][-1]
    line = np.arange(length)
    idx = np.stack([line + max(-k, 0), line + max(k, 0)], axis=1)
    moved = cx.one("Transpose", [x], hint=node.name, perm=[a1, a2] + rest)
    if not rest:
        return [cx.one("GatherND", [moved, cx.const(idx, "int64")], node.outputs[0])]
    got = cx.one("GatherND", [moved, cx.const(idx, "int64")], hint=node.name)
    return [cx.one("Transpose", [got], node.outputs[0],
                   perm=list(range(1, len(rest) + 1)) + [0])]


@converts("_slice_assign", "_slice_assign_scalar")
def slice_assign(cx: Ctx, node: OpNode) -> Out:
    """``_slice_assign`` (``_slice_assign_scalar``): the data with the ``slice`` region
    (begin/end/step) replaced by the second input (by ``scalar``): a ``ScatterND``
    into the flattened data at the region's constant positions."""
    import numpy as np

    shape = list(node.in_shapes[0])
    ranges = slice_ranges(node, shape)
    if any(n == 0 for _, n, _ in ranges) or not shape:
        return [cx.identity(node.inputs[0], node.outputs[0])]
    lines = [b + s * np.arange(n) for b, n, s in ranges]
    where = np.arange(math.prod(shape)).reshape(shape)[np.ix_(*lines)].reshape(-1, 1)
    flat = cx.reshape(node.inputs[0], [-1])
    if node.op == "_slice_assign":
        update = cx.reshape(node.inputs[1], [-1])
    else:
        dtype = node.in_dtypes[0]
        if dtype == "bfloat16":
            raise node.refuse("dtype bfloat16 has no constant form here")
        update = cx.const(np.full(len(where), float(node.p.get("scalar") or 0.0))
                          .astype(dtype), dtype)
    done = cx.one("ScatterND", [flat, cx.const(where, "int64"), update], hint=node.name)
    return [cx.reshape(done, shape, node.outputs[0])]
