"""Converters of the layout family: reshapes, transposes, joins and splits, slices,
tiling and repetition, reversal, padding, broadcasting, block rearrangements.

Every shape is static (the engine gives each input's and output's shape), so a
converter writes concrete numbers: a ``Reshape`` (whatever its special codes 0, -1,
-2, -3, -4, ``reverse`` or legacy ``target_shape``) is a ``Reshape`` to the engine's
output shape, a slice's ``None`` entries and negative steps become the exact start and
end ONNX's ``Slice`` needs.  An output with no elements is a constant (ONNX ``Reshape``
would read a 0 in its target as 'copy').  The indexing and array-making ops live in
:mod:`layout_index`.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import functools
import math
from typing import Callable, Sequence

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]
Conv = Callable[[Ctx, OpNode], Out]


def empty(cx: Ctx, node: OpNode, k: int = 0) -> str | None:
    """``node``'s output ``k`` as an Identity of an empty constant when it has no
    elements (None otherwise)."""
    import numpy as np

    shape = node.out_shapes[k]
    if math.prod(shape) != 0:
        return None
    if node.out_dtypes[k] == "bfloat16":
        raise node.refuse("an empty bfloat16 output has no constant form here")
    value = np.zeros(shape, dtype=node.out_dtypes[k])
    return cx.identity(cx.const(value, node.out_dtypes[k], "empty"), node.outputs[k])


def nonempty(fn: Conv) -> Conv:
    """A one-output converter whose empty outputs are constants."""
    @functools.wraps(fn)
    def convert(cx: Ctx, node: OpNode) -> Out:
        got = empty(cx, node)
        return [got] if got is not None else fn(cx, node)
    return convert


def axis_of(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def reshape_to_output(cx: Ctx, node: OpNode) -> Out:
    """A ``Reshape`` to the engine's output shape (exact: the shape is static)."""
    return [cx.reshape(node.inputs[0], node.out_shapes[0], node.outputs[0])]


@converts("Reshape", "reshape_like")
@nonempty
def reshape(cx: Ctx, node: OpNode) -> Out:
    """MXNet's ``Reshape`` (special codes 0 copy, -1 infer, -2 copy the rest, -3 merge
    two, -4 split one, ``reverse`` matching from the right, the legacy
    ``target_shape``/``keep_highest``) and ``reshape_like`` (the ``lhs``/``rhs``
    ranges) all give a static shape the engine computed: a ``Reshape`` to it."""
    return reshape_to_output(cx, node)


@converts("transpose")
def transpose(cx: Ctx, node: OpNode) -> Out:
    """``transpose``: ``axes`` empty reverses the axes."""
    rank = node.rank()
    axes = [axis_of(a, rank) for a in node.p.get("axes") or ()] or \
        list(range(rank))[::-1]
    return [cx.one("Transpose", [node.inputs[0]], node.outputs[0], perm=axes)]


@converts("SwapAxis")
def swap_axis(cx: Ctx, node: OpNode) -> Out:
    """``SwapAxis``/``swapaxes``: a ``Transpose`` exchanging ``dim1`` and ``dim2``."""
    rank = node.rank()
    perm = list(range(rank))
    a, b = axis_of(int(node.p["dim1"]), rank), axis_of(int(node.p["dim2"]), rank)
    perm[a], perm[b] = perm[b], perm[a]
    if perm == list(range(rank)):
        return [cx.identity(node.inputs[0], node.outputs[0])]
    return [cx.one("Transpose", [node.inputs[0]], node.outputs[0], perm=perm)]


@converts("Concat")
@nonempty
def concat(cx: Ctx, node: OpNode) -> Out:
    """``Concat`` along ``dim`` (negative counts from the end)."""
    dim = axis_of(int(node.p.get("dim", 1)), node.rank())
    if len(node.inputs) == 1:
        return [cx.identity(node.inputs[0], node.outputs[0])]
    return [cx.one("Concat", node.inputs, node.outputs[0], axis=dim)]


@converts("stack")
@nonempty
def stack(cx: Ctx, node: OpNode) -> Out:
    """``stack``: each input gains a unit axis at ``axis`` (of the output's rank),
    then they are concatenated along it."""
    axis = axis_of(int(node.p.get("axis", 0)), node.rank() + 1)
    if len(node.inputs) == 1:
        return [cx.unsqueeze(node.inputs[0], [axis], node.outputs[0])]
    parts = [cx.unsqueeze(x, [axis]) for x in node.inputs]
    return [cx.one("Concat", parts, node.outputs[0], axis=axis)]


def _pieces(cx: Ctx, node: OpNode, axis: int, starts: Sequence[int],
            sizes: Sequence[int], squeeze: bool) -> Out:
    """Output k is ``sizes[k]`` items from ``starts[k]`` along ``axis`` (without that
    axis when ``squeeze``): one ``Split`` when the pieces tile the axis, else
    ``Slice``s."""
    x, n = node.inputs[0], len(sizes)
    dim = node.in_shapes[0][axis]
    outs: Out = []
    if n == 1 and starts[0] == 0 and sizes[0] == dim:
        if squeeze:
            return [cx.squeeze(x, [axis], node.outputs[0])]
        return [cx.identity(x, node.outputs[0])]
    tiles = starts[0] == 0 and sum(sizes) == dim and all(sizes) and \
        all(starts[k + 1] == starts[k] + sizes[k] for k in range(n - 1))
    if tiles:
        names = cx.split(x, axis, sizes, None if squeeze else node.outputs)
        if not squeeze:
            return list(names)
        return [cx.squeeze(p, [axis], o) for p, o in zip(names, node.outputs)]
    for k in range(n):
        got = empty(cx, node, k)
        if got is None:
            piece = cx.one("Slice", [x, cx.ints([starts[k]]),
                                     cx.ints([starts[k] + sizes[k]]), cx.ints([axis])],
                           None if squeeze else node.outputs[k], hint="slice")
            got = cx.squeeze(piece, [axis], node.outputs[k]) if squeeze else piece
        outs.append(got)
    return outs


@converts("SliceChannel")
def slice_channel(cx: Ctx, node: OpNode) -> Out:
    """``SliceChannel``/``split``: ``num_outputs`` equal pieces along ``axis``, the
    axis dropped when ``squeeze_axis`` (pieces of one).  A ``Split`` whose sizes are an
    input holds any number of outputs."""
    axis = axis_of(int(node.p.get("axis", 1)), node.rank())
    n = int(node.p["num_outputs"])
    size = node.in_shapes[0][axis] // n
    return _pieces(cx, node, axis, [k * size for k in range(n)], [size] * n,
                   bool(node.p.get("squeeze_axis")))


@converts("_split_v2")
def split_v2(cx: Ctx, node: OpNode) -> Out:
    """``_split_v2``: with ``sections`` equal pieces; else output k runs from
    ``indices[k]`` to ``indices[k+1]`` (the last to the axis's end)."""
    axis = axis_of(int(node.p.get("axis", 0)), node.rank())
    dim = node.in_shapes[0][axis]
    sections = int(node.p.get("sections") or 0)
    if sections > 0:
        starts = [k * (dim // sections) for k in range(sections)]
    else:
        starts = [int(i) for i in node.p.get("indices") or (0,)]
    ends = starts[1:] + [dim]
    return _pieces(cx, node, axis, starts, [e - s for s, e in zip(starts, ends)],
                   bool(node.p.get("squeeze_axis")))


def slice_range(dim: int, begin: int | None, end: int | None, step: int | None
                ) -> tuple[int, int, int]:
    """(first index, count, step) of MXNet's slice of one axis of size ``dim``
    (``GetIndexRange`` and ``SetSliceOpOutputDimSize`` of matrix_op-inl.h)."""
    s = 1 if step is None else int(step)
    if s == 0:
        raise ValueError("slice step 0")
    if dim == 0:
        return 0, 0, s
    b = int(begin) if begin is not None else (dim - 1 if s < 0 else 0)
    e = int(end) if end is not None else (-1 if s < 0 else dim)
    if b < 0:
        b += dim
    if e < 0 and end is not None:
        e += dim
    b = 0 if (b < 0 and s > 0) else b
    b = dim - 1 if (b > dim - 1 and s < 0) else b
    b = -1 if (b < 0 or b > dim - 1) else b
    e = max(e, -1)
    e = min(e, dim)
    if e == b or b < 0:
        return b, 0, s
    if s > 0:
        return b, ((e - b - 1) // s + 1 if e > b else 0), s
    return b, ((b - e - 1) // (-s) + 1 if e < b else 0), s


def slice_ranges(node: OpNode, shape: Sequence[int]) -> list[tuple[int, int, int]]:
    """(first, count, step) per axis of ``slice``'s begin/end/step on ``shape``."""
    begin = list(node.p.get("begin") or ())
    end = list(node.p.get("end") or ())
    step = list(node.p.get("step") or ())
    out = []
    for i, dim in enumerate(shape):
        if i < len(begin):
            out.append(slice_range(dim, begin[i], end[i] if i < len(end) else None,
                                   step[i] if i < len(step) else None))
        else:
            out.append((0, dim, 1))
    return out


def slice_nodes(cx: Ctx, x: str, shape: Sequence[int],
                ranges: Sequence[tuple[int, int, int]], out: str | None) -> str:
    """A ``Slice`` taking ``count`` items from ``first`` by ``step`` on each axis that
    changes (a negative step's end before index 0 written as -(dim+1))."""
    axes, starts, ends, steps = [], [], [], []
    for i, (b, n, s) in enumerate(ranges):
        if (b, n, s) == (0, shape[i], 1):
            continue
        stop = b + n * s
        axes.append(i)
        starts.append(b)
        ends.append(stop if stop >= 0 else -(shape[i] + 1))
        steps.append(s)
    if not axes:
        return cx.identity(x, out) if out else x
    return cx.one("Slice", [x, cx.ints(starts), cx.ints(ends), cx.ints(axes),
                            cx.ints(steps)], out, hint="slice")


@converts("slice")
@nonempty
def slice_op(cx: Ctx, node: OpNode) -> Out:
    """``slice``/``crop``: ``begin``/``end``/``step`` per leading axis, ``None`` meaning
    the whole axis in the step's direction, negatives counting from the end."""
    shape = node.in_shapes[0]
    return [slice_nodes(cx, node.inputs[0], shape, slice_ranges(node, shape),
                        node.outputs[0])]


@converts("slice_axis")
@nonempty
def slice_axis(cx: Ctx, node: OpNode) -> Out:
    """``slice_axis``: items ``begin`` to ``end`` (None: the end) of ``axis``."""
    axis = axis_of(int(node.p["axis"]), node.rank())
    dim = node.in_shapes[0][axis]
    b = int(node.p.get("begin") or 0)
    b = b + dim if b < 0 else b
    end = node.p.get("end")
    e = dim if end is None else int(end) + (dim if int(end) < 0 else 0)
    return [slice_nodes(cx, node.inputs[0], node.in_shapes[0],
                        [(b, e - b, 1) if i == axis else (0, d, 1)
                         for i, d in enumerate(node.in_shapes[0])], node.outputs[0])]


@converts("slice_like")
@nonempty
def slice_like(cx: Ctx, node: OpNode) -> Out:
    """``slice_like``: the leading part of the data of the second input's size on
    ``axes`` (all when empty): a ``Slice`` from 0 to the engine's output shape."""
    shape = node.in_shapes[0]
    return [slice_nodes(cx, node.inputs[0], shape,
                        [(0, n, 1) for n in node.out_shapes[0]], node.outputs[0])]


@converts("expand_dims")
def expand_dims(cx: Ctx, node: OpNode) -> Out:
    """``expand_dims``: a unit axis at ``axis`` (negative: of the output's rank)."""
    axis = axis_of(int(node.p["axis"]), node.rank() + 1)
    return [cx.unsqueeze(node.inputs[0], [axis], node.outputs[0])]


@converts("squeeze")
def squeeze(cx: Ctx, node: OpNode) -> Out:
    """``squeeze``: the unit axes named (None: all); squeezing every axis leaves
    MXNet's shape (1,), so that case is a ``Reshape`` to the output shape."""
    shape, rank = node.in_shapes[0], node.rank()
    given = node.p.get("axis")
    axes = sorted({axis_of(int(a), rank) for a in given}) if given is not None else \
        [i for i, d in enumerate(shape) if d == 1]
    kept = tuple(d for i, d in enumerate(shape) if i not in axes)
    if not axes:
        return [cx.identity(node.inputs[0], node.outputs[0])]
    if kept == tuple(node.out_shapes[0]):
        return [cx.squeeze(node.inputs[0], axes, node.outputs[0])]
    return reshape_to_output(cx, node)


@converts("tile")
@nonempty
def tile(cx: Ctx, node: OpNode) -> Out:
    """``tile``: ``reps`` shorter than the rank are padded with leading 1s; longer,
    the data gains leading unit axes."""
    shape = list(node.in_shapes[0])
    reps = [int(r) for r in node.p["reps"]]
    x = node.inputs[0]
    if len(reps) < len(shape):
        reps = [1] * (len(shape) - len(reps)) + reps
    elif len(reps) > len(shape):
        x = cx.reshape(x, [1] * (len(reps) - len(shape)) + shape)
    if all(r == 1 for r in reps):
        return [cx.identity(x, node.outputs[0])]
    return [cx.one("Tile", [x, cx.ints(reps)], node.outputs[0])]


@converts("repeat")
@nonempty
def repeat(cx: Ctx, node: OpNode) -> Out:
    """``repeat``: each item ``repeats`` times in a row along ``axis`` (None: of the
    flattened data): a unit axis after it, tiled, merged back."""
    r = int(node.p["repeats"])
    shape = list(node.in_shapes[0])
    x = node.inputs[0]
    if node.p.get("axis") is None:
        shape, axis = [math.prod(shape)], 0
        x = cx.reshape(x, shape)
    else:
        axis = axis_of(int(node.p["axis"]), len(shape))
    grown = cx.unsqueeze(x, [axis + 1])
    reps = [1] * (len(shape) + 1)
    reps[axis + 1] = r
    tiled = cx.one("Tile", [grown, cx.ints(reps)], hint=node.name)
    return [cx.reshape(tiled, node.out_shapes[0], node.outputs[0])]


@converts("reverse")
@nonempty
def reverse(cx: Ctx, node: OpNode) -> Out:
    """``reverse``/``flip``: the axes named read backwards (a ``Slice`` of step -1)."""
    shape = node.in_shapes[0]
    axes = {axis_of(int(a), len(shape)) for a in node.p["axis"]}
    return [slice_nodes(cx, node.inputs[0], shape,
                        [(d - 1, d, -1) if i in axes and d > 1 else (0, d, 1)
                         for i, d in enumerate(shape)], node.outputs[0])]


@converts("Pad")
def pad(cx: Ctx, node: OpNode) -> Out:
    """``Pad``/``pad``: ``pad_width`` is (before, after) per axis in order; ONNX's
    ``pads`` are every before then every after.  Modes constant (with
    ``constant_value``), edge and reflect are ONNX's own."""
    width = [int(w) for w in node.p.get("pad_width") or ()]
    rank = node.rank()
    width += [0] * (2 * rank - len(width))
    pads = width[0::2] + width[1::2]
    mode = str(node.p.get("mode") or "constant")
    if mode not in ("constant", "edge", "reflect"):
        raise node.refuse(f"mode {mode!r} has no ONNX Pad form")
    inputs = [node.inputs[0], cx.ints(pads)]
    if mode == "constant":
        dtype = node.in_dtypes[0]
        if dtype == "bfloat16":
            raise node.refuse("a bfloat16 constant pad value has no constant form here")
        inputs.append(cx.const(float(node.p.get("constant_value") or 0.0), dtype))
    if not any(pads):
        return [cx.identity(node.inputs[0], node.outputs[0])]
    return [cx.one("Pad", inputs, node.outputs[0], mode=mode)]


@converts("broadcast_axis", "broadcast_to", "broadcast_like")
@nonempty
def broadcast(cx: Ctx, node: OpNode) -> Out:
    """``broadcast_axis`` (``axis``/``size``), ``broadcast_to`` (``shape``, 0 keeping
    the axis) and ``broadcast_like`` (``lhs_axes``/``rhs_axes``) stretch unit axes:
    an ``Expand`` to the engine's output shape."""
    x = node.inputs[0]
    if tuple(node.in_shapes[0]) == tuple(node.out_shapes[0]):
        return [cx.identity(x, node.outputs[0])]
    return [cx.one("Expand", [x, cx.ints(node.out_shapes[0])], node.outputs[0])]


@converts("depth_to_space")
def depth_to_space(cx: Ctx, node: OpNode) -> Out:
    """``depth_to_space``: MXNet reads the channels as (block, block, C) (ONNX's DCR)."""
    return [cx.one("DepthToSpace", [node.inputs[0]], node.outputs[0],
                   blocksize=int(node.p["block_size"]), mode="DCR")]


@converts("space_to_depth")
def space_to_depth(cx: Ctx, node: OpNode) -> Out:
    """``space_to_depth``: channels written as (block, block, C), as ONNX does."""
    return [cx.one("SpaceToDepth", [node.inputs[0]], node.outputs[0],
                   blocksize=int(node.p["block_size"]))]

