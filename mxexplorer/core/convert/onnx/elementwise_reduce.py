"""Converters of the reductions (``sum``, ``mean``, ``max``, ``min``, ``prod``,
``nansum``, ``nanprod``, ``norm``), the index searches (``argmax``, ``argmin``,
``argmax_channel``), the sorts (``topk``, ``sort``, ``argsort``) and the products
(``dot``, ``batch_dot``, ``linalg_gemm2``).

MXNet's reductions take ``axis`` None, an int or a tuple; None or ``()`` reduce every
axis (whatever ``exclude`` says), ``exclude=True`` reduces the axes NOT listed, and
reducing everything without ``keepdims`` gives shape ``(1,)``, not a scalar: the ONNX
forms reduce with ``keepdims=1`` and reshape to the engine's output shape.  Indices
come back as floats (``argmax``) or in the ``dtype`` attribute (``topk``, ``argsort``).
Registered on import by :mod:`elementwise`.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

from mxexplorer.core.convert.onnx.context import Ctx, OpNode, onnx_type
from mxexplorer.core.convert.onnx.elementwise import finish, is_float, typed
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]


def reduce_axes(rank: int, axis: Any, exclude: bool = False) -> list[int]:
    """The axes MXNet reduces over."""
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) == 0):
        return list(range(rank))
    listed = {int(a) % rank for a in (axis if isinstance(axis, (tuple, list))
                                     else (axis,))}
    if exclude:
        return [a for a in range(rank) if a not in listed]
    return sorted(listed)


def _kept_shape(shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    return [1 if d in axes else s for d, s in enumerate(shape)]


def reduce_to(cx: Ctx, node: OpNode, op_type: str, x: str, axes: list[int],
              out: str | None) -> str:
    """``op_type`` over ``axes`` keeping them, reshaped to the node's output shape."""
    kept = _kept_shape(node.in_shapes[0], axes)
    want = list(node.out_shapes[0])
    if not axes:
        return cx.identity(x, out) if out else x
    if kept == want:
        return cx.reduce(op_type, x, axes, True, out)
    y = cx.reduce(op_type, x, axes, True)
    return cx.reshape(y, want, out)


REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax",
          "min": "ReduceMin", "prod": "ReduceProd", "nansum": "ReduceSum",
          "nanprod": "ReduceProd"}


@converts(*REDUCE)
def reduction(cx: Ctx, node: OpNode) -> Out:
    """``nansum``/``nanprod`` read NaN as 0/1 (a ``Where`` on ``IsNaN``) first."""
    p = node.p
    axes = reduce_axes(node.rank(), p.get("axis"), bool(p.get("exclude")))
    x, dt = node.inputs[0], node.in_dtypes[0]
    if node.op in ("nansum", "nanprod") and is_float(dt):
        fill = typed(cx, 0 if node.op == "nansum" else 1, dt)
        x = cx.one("Where", [cx.one("IsNaN", [x]), fill, x])
    if node.out_dtypes[0] != dt:
        y = reduce_to(cx, node, REDUCE[node.op], x, axes, None)
        return [finish(cx, y, dt, node.out_dtypes[0], node.outputs[0])]
    return [reduce_to(cx, node, REDUCE[node.op], x, axes, node.outputs[0])]


@converts("norm")
def norm(cx: Ctx, node: OpNode) -> Out:
    """``ord=1``: the sum of magnitudes (``ReduceL1``); ``ord=2``: the root of the sum
    of squares (``ReduceL2``; over two axes the Frobenius norm), over ``axis`` (None:
    all), in ``out_dtype`` when given."""
    p = node.p
    order = int(p.get("ord", 2))
    if order not in (1, 2):
        raise node.refuse(f"norm with ord={order}: MXNet accepts only 1 and 2")
    axes = reduce_axes(node.rank(), p.get("axis"))
    op_type = "ReduceL1" if order == 1 else "ReduceL2"
    dt, want = node.in_dtypes[0], node.out_dtypes[0]
    if dt == want:
        return [reduce_to(cx, node, op_type, node.inputs[0], axes, node.outputs[0])]
    y = reduce_to(cx, node, op_type, node.inputs[0], axes, None)
    return [finish(cx, y, dt, want, node.outputs[0])]


# ---------------------------------------------------------------- index searches
@converts("argmax", "argmin", "argmax_channel")
def arg_search(cx: Ctx, node: OpNode) -> Out:
    """The index of the first largest (smallest) value along ``axis`` as a number in
    the output dtype; ``axis=None`` searches the flattened tensor.  ``argmax_channel``
    is ``argmax(axis=1)``."""
    p = node.p
    op_type = "ArgMin" if node.op == "argmin" else "ArgMax"
    x = node.inputs[0]
    axis: Any = 1 if node.op == "argmax_channel" else p.get("axis")
    keep = False if node.op == "argmax_channel" else bool(p.get("keepdims"))
    if axis is None:
        x = cx.reshape(x, [-1])
        y = cx.one(op_type, [x], axis=0, keepdims=1)
    else:
        y = cx.one(op_type, [x], axis=int(axis), keepdims=int(keep))
    if axis is None and list(node.out_shapes[0]) != [1]:
        y = cx.reshape(y, list(node.out_shapes[0]))
    return [cx.one("Cast", [y], node.outputs[0], to=onnx_type(node.out_dtypes[0]))]


# ---------------------------------------------------------------- sorts
def _top(cx: Ctx, node: OpNode, axis: Any, k: int, ascend: bool
         ) -> tuple[str, str, int, str]:
    """ONNX ``TopK`` (sorted) of the input or, for ``axis=None``, of its flattening:
    (values, int64 indices, the axis used, the tensor searched)."""
    x = node.inputs[0]
    if axis is None:
        x = cx.reshape(x, [-1])
        size, ax = math.prod(node.in_shapes[0]), 0
    else:
        ax = int(axis) % node.rank()
        size = node.in_shapes[0][ax]
    if k < 1 or k > size:
        k = size
    values, indices = cx.add("TopK", [x, cx.ints([k])], 2, hint="topk", axis=ax,
                             largest=0 if ascend else 1, sorted=1)
    return values, indices, ax, x


@converts("topk")
def topk(cx: Ctx, node: OpNode) -> Out:
    """MXNet's ``topk``: ``k < 1`` means the whole axis; ``ret_typ`` value, indices
    (as numbers in ``dtype``), both (values, indices), or mask (1 at the chosen
    places, 0 elsewhere, in the input's dtype and shape)."""
    p = node.p
    ret = p.get("ret_typ") or "indices"
    values, indices, ax, flat = _top(cx, node, p.get("axis"), int(p.get("k", 1)),
                                     bool(p.get("is_ascend")))
    index_type = onnx_type(p.get("dtype") or "float32")
    if ret == "value":
        return [cx.identity(values, node.outputs[0])]
    if ret == "indices":
        return [cx.one("Cast", [indices], node.outputs[0], to=index_type)]
    if ret == "both":
        return [cx.identity(values, node.outputs[0]),
                cx.one("Cast", [indices], node.outputs[1], to=index_type)]
    dt = node.in_dtypes[0]
    zeros = cx.one("Expand", [typed(cx, 0, dt), cx.one("Shape", [flat])])
    ones = cx.one("Expand", [typed(cx, 1, dt), cx.one("Shape", [indices])])
    if p.get("axis") is None:
        mask = cx.one("ScatterElements", [zeros, indices, ones], axis=ax)
        return [cx.reshape(mask, list(node.in_shapes[0]), node.outputs[0])]
    return [cx.one("ScatterElements", [zeros, indices, ones], node.outputs[0], axis=ax)]


@converts("sort")
def sort(cx: Ctx, node: OpNode) -> Out:
    """The values sorted along ``axis`` (None: flattened), ascending unless
    ``is_ascend=False``."""
    p = node.p
    values, _, _, _ = _top(cx, node, p.get("axis"), 0, bool(p.get("is_ascend", True)))
    return [cx.identity(values, node.outputs[0])]


@converts("argsort")
def argsort(cx: Ctx, node: OpNode) -> Out:
    """The sorting permutation along ``axis`` as numbers in ``dtype``."""
    p = node.p
    _, indices, _, _ = _top(cx, node, p.get("axis"), 0, bool(p.get("is_ascend", True)))
    return [cx.one("Cast", [indices], node.outputs[0],
                   to=onnx_type(p.get("dtype") or "float32"))]


# ---------------------------------------------------------------- products
@converts("dot")
def dot(cx: Ctx, node: OpNode) -> Out:
    """MXNet's ``dot`` contracts the LAST axis of ``a`` with the FIRST axis of ``b``
    (``transpose_a``: the first axis of ``a``; ``transpose_b``: the last of ``b``):
    both flattened to matrices around the contracted axis, a ``Gemm``, reshaped to
    the output shape.  Two vectors give shape (1,)."""
    p = node.p
    ta, tb = bool(p.get("transpose_a")), bool(p.get("transpose_b"))
    (a, b), (sa, sb) = node.inputs[:2], node.in_shapes[:2]
    na, nb = math.prod(sa), math.prod(sb)
    if len(sa) == 1 and len(sb) == 1:
        a2, b2 = cx.reshape(a, [1, na]), cx.reshape(b, [nb, 1])
        ta = tb = False
    else:
        a2 = cx.reshape(a, [sa[0], na // sa[0]] if ta else [na // sa[-1], sa[-1]])
        b2 = cx.reshape(b, [nb // sb[-1], sb[-1]] if tb else [sb[0], nb // sb[0]])
    y = cx.one("Gemm", [a2, b2], transA=int(ta), transB=int(tb))
    return [cx.reshape(y, list(node.out_shapes[0]), node.outputs[0])]


def _swap_last(cx: Ctx, x: str, rank: int) -> str:
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    return cx.one("Transpose", [x], perm=perm)


@converts("batch_dot")
def batch_dot(cx: Ctx, node: OpNode) -> Out:
    """Matrix products over the leading (batch) axes: ``MatMul`` with the last two
    axes of ``a``/``b`` swapped for ``transpose_a``/``transpose_b``."""
    p = node.p
    a, b = node.inputs[:2]
    if p.get("transpose_a"):
        a = _swap_last(cx, a, node.rank(0))
    if p.get("transpose_b"):
        b = _swap_last(cx, b, node.rank(1))
    return [cx.one("MatMul", [a, b], node.outputs[0])]


@converts("_linalg_gemm2")
def linalg_gemm2(cx: Ctx, node: OpNode) -> Out:
    """``alpha * op(A) @ op(B)`` over the leading axes, the matrices' rows on axis -2
    (another ``axis`` is refused)."""
    p = node.p
    rank = node.rank(0)
    if int(p.get("axis", -2)) % rank != rank - 2:
        raise node.refuse(f"linalg_gemm2 with axis={p.get('axis')}: only the default "
                          "-2 (rows on the second-last axis) is exported")
    a, b = node.inputs[:2]
    if p.get("transpose_a"):
        a = _swap_last(cx, a, rank)
    if p.get("transpose_b"):
        b = _swap_last(cx, b, node.rank(1))
    alpha = float(p.get("alpha", 1.0))
    if alpha == 1.0:
        return [cx.one("MatMul", [a, b], node.outputs[0])]
    y = cx.one("MatMul", [a, b])
    return [cx.one("Mul", [y, typed(cx, alpha, node.in_dtypes[0])], node.outputs[0])]
