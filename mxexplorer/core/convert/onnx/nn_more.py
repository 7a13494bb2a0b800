"""More neural-network layers (the rest of :mod:`nn`): group normalisation, embedding,
adaptive pooling, up-sampling and resizing, Crop, the spatial transformer's grid and
sampler, ROI pooling, and the layers ONNX cannot express (refused by name).
Must not import MXNet or Qt.
"""
from __future__ import annotations

import math

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]


@converts("GroupNorm")
def group_norm(cx: Ctx, node: OpNode) -> Out:
    """MXNet 1.9.1: the channels split into ``num_groups`` groups, each normalised over
    its channels and positions (``(x - mean) / sqrt(var + eps)``), then scaled and
    shifted per GROUP (gamma and beta have ``num_groups`` entries)."""
    p = node.p
    x, gamma, beta = node.inputs[:3]
    shape = list(node.in_shapes[0])
    groups = int(p.get("num_groups") or 1)
    eps = float(p.get("eps", 1e-5))
    g = cx.reshape(x, [shape[0], groups, -1])
    mean = cx.reduce("ReduceMean", g, [2], True)
    d = cx.one("Sub", [g, mean])
    var = cx.reduce("ReduceMean", cx.one("Mul", [d, d]), [2], True)
    norm = cx.one("Div", [d, cx.one("Sqrt", [cx.one("Add", [var, cx.scalar(eps)])])])
    y = cx.one("Add", [cx.one("Mul", [norm, cx.reshape(gamma, [groups, 1])]),
                       cx.reshape(beta, [groups, 1])])
    return [cx.reshape(y, shape, node.outputs[0]), None, None]


@converts("Embedding", "_contrib_SparseEmbedding")
def embedding(cx: Ctx, node: OpNode) -> Out:
    """Gather of the rows; MXNet clips an index into range (``mode=clip`` of ``take``)."""
    ids = cx.cast(node.inputs[0], "int64")
    high = int(node.p.get("input_dim") or node.in_shapes[1][0]) - 1
    ids = cx.one("Clip", [ids, cx.const(0, "int64"), cx.const(high, "int64")])
    return [cx.one("Gather", [node.inputs[1], ids], node.outputs[0], axis=0)]


@converts("_contrib_AdaptiveAvgPooling2D")
def adaptive_avg_pooling(cx: Ctx, node: OpNode) -> Out:
    """MXNet averages output cell ``o`` over input rows ``floor(o*I/O)`` to
    ``ceil((o+1)*I/O)`` (and so for columns): a global or a strided average pool when
    the sizes allow, else two matrix products with those averaging matrices."""
    import numpy as np

    ins, outs = node.in_shapes[0][2:], node.out_shapes[0][2:]
    x, out = node.inputs[0], node.outputs[0]
    if all(o == 1 for o in outs):
        return [cx.one("GlobalAveragePool", [x], out)]
    if all(i % o == 0 for i, o in zip(ins, outs)):
        k = [i // o for i, o in zip(ins, outs)]
        return [cx.one("AveragePool", [x], out, kernel_shape=k, strides=k)]
    mats = []
    for size, count in zip(ins, outs):
        mat = np.zeros((count, size), node.in_dtypes[0] or "float32")
        for o in range(count):
            start, stop = (o * size) // count, -(-((o + 1) * size) // count)
            mat[o, start:stop] = 1.0 / (stop - start)
        mats.append(mat)
    rows = cx.one("MatMul", [cx.const(mats[0]), x], hint=node.name)
    return [cx.one("MatMul", [rows, cx.const(mats[1].T.copy())], out)]


@converts("UpSampling")
def up_sampling(cx: Ctx, node: OpNode) -> Out:
    """'nearest': each pixel repeated ``scale`` times (each further input repeated to
    the first's output size), the inputs concatenated on channels or summed
    (``multi_input_mode``).  'bilinear': MXNet's Deconvolution of its weight input,
    kernel ``2*scale - scale%2``, stride ``scale``, pad ``ceil((scale-1)/2)``, one group
    per filter (``num_filter``), no bias."""
    p = node.p
    scale = int(p.get("scale") or 1)
    if (p.get("sample_type") or "nearest") == "nearest":
        height = node.out_shapes[0][2]
        single = len(node.inputs) == 1
        parts = []
        for name, shape in zip(node.inputs, node.in_shapes):
            factor = float(height // shape[2])
            target = node.outputs[0] if single else None
            if factor == 1.0:
                parts.append(cx.identity(name, node.outputs[0]) if single else name)
                continue
            scales = cx.const([1.0, 1.0, factor, factor], "float32")
            parts.append(cx.one("Resize", [name, "", scales], target, hint=node.name,
                                mode="nearest", coordinate_transformation_mode="asymmetric",
                                nearest_mode="floor"))
        if single:
            return [parts[0]]
        if (p.get("multi_input_mode") or "concat") == "sum":
            return [cx.one("Sum", parts, node.outputs[0])]
        return [cx.one("Concat", parts, node.outputs[0], axis=1)]
    k = 2 * scale - scale % 2
    pad = int(math.ceil((scale - 1) / 2.0))
    groups = int(p.get("num_filter") or node.in_shapes[0][1])
    return [cx.one("ConvTranspose", node.inputs[:2], node.outputs[0], kernel_shape=[k, k],
                   strides=[scale, scale], pads=[pad, pad, pad, pad], group=groups)]


@converts("_contrib_BilinearResize2D", reads=1)
def bilinear_resize(cx: Ctx, node: OpNode) -> Out:
    """Resize (linear) to the size the engine found (every ``mode`` only picks that
    size; 'like' reads it off the second input).  MXNet maps output index ``o`` to
    ``o*(I-1)/(O-1)`` with ``align_corners`` (its default), else to
    ``(o+0.5)*I/O - 0.5`` cut at 0 and 0 when O is 1: ONNX's 'pytorch_half_pixel'."""
    align = node.p.get("align_corners", True)
    sizes = cx.ints(list(node.out_shapes[0]))
    return [cx.one("Resize", [node.inputs[0], "", "", sizes], node.outputs[0],
                   mode="linear", coordinate_transformation_mode="align_corners"
                   if align else "pytorch_half_pixel")]


@converts("Crop", reads=1)
def crop(cx: Ctx, node: OpNode) -> Out:
    """The spatial window MXNet's legacy Crop takes: ``offset``, or centred; its size
    ``h_w``, or the second input's (only its shape is read)."""
    p = node.p
    (h, w), (ih, iw) = node.out_shapes[0][2:4], node.in_shapes[0][2:4]
    if p.get("center_crop"):
        top, left = (ih - h) // 2, (iw - w) // 2
    else:
        top, left = (list(p.get("offset") or (0, 0)) + [0, 0])[:2]
    return [cx.one("Slice", [node.inputs[0], cx.ints([top, left]),
                             cx.ints([top + h, left + w]), cx.ints([2, 3])],
                   node.outputs[0])]


@converts("_contrib_DeformableConvolution", "_contrib_ModulatedDeformableConvolution")
def deformable_convolution(cx: Ctx, node: OpNode) -> Out:
    raise node.refuse("a deformable convolution samples its input at learned offsets: "
                      "only ONNX 19's DeformConv expresses it, which onnxruntime does not run")


@converts("Correlation")
def correlation(cx: Ctx, node: OpNode) -> Out:
    raise node.refuse("Correlation (FlowNet's patch comparison of two feature maps) has no "
                      "ONNX form")


@converts("Custom")
def custom(cx: Ctx, node: OpNode) -> Out:
    kind = node.attrs.get("op_type", "?")
    raise node.refuse(f"a Python custom op (op_type {kind!r}): its code is not in the file")


def _affine_grid(cx: Ctx, theta: str, batch: int, height: int, width: int,
                 out: str | None) -> str:
    """MXNet's affine grid: ``theta`` (batch, 6) as (2, 3) matrices times the target's
    (x, y, 1), x and y running from -1 to 1 over the width and the height; (batch, 2,
    height, width)."""
    import numpy as np

    index = np.arange(height * width)
    with np.errstate(divide="ignore", invalid="ignore"):
        base = np.stack([-1.0 + (index % width) * (2.0 / (width - 1)),
                         -1.0 + (index // width) * (2.0 / (height - 1)),
                         np.ones(height * width)]).astype("float32")
    grid = cx.one("MatMul", [cx.reshape(theta, [batch, 2, 3]), cx.const(base)])
    return cx.reshape(grid, [batch, 2, height, width], out)


@converts("GridGenerator")
def grid_generator(cx: Ctx, node: OpNode) -> Out:
    """'affine': :func:`_affine_grid` at ``target_shape``; 'warp': the flow plus each
    pixel's (x, y), divided by ((W-1)/2, (H-1)/2), less 1."""
    import numpy as np

    n, _, h, w = node.out_shapes[0]
    if (node.p.get("transform_type") or "affine") == "affine":
        return [_affine_grid(cx, node.inputs[0], n, h, w, node.outputs[0]), None]
    ys, xs = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    where = cx.const(np.stack([xs, ys])[None].astype("float32"))
    half = cx.const(np.array([(w - 1) / 2.0, (h - 1) / 2.0], "float32").reshape(1, 2, 1, 1))
    moved = cx.one("Div", [cx.one("Add", [node.inputs[0], where]), half])
    return [cx.one("Sub", [moved, cx.scalar(1.0)], node.outputs[0]), None]


def _sample(cx: Ctx, data: str, grid: str, out: str) -> str:
    """MXNet's bilinear sampler: grid (batch, 2, h, w) of (x, y) in [-1, 1] with -1 and
    1 the corner pixels' centres, each of the four neighbours outside the input read
    as 0: GridSample with align_corners=1 and zero padding."""
    nhwc = cx.one("Transpose", [grid], perm=[0, 2, 3, 1])
    return cx.one("GridSample", [data, nhwc], out, mode="bilinear", padding_mode="zeros",
                  align_corners=1)


@converts("BilinearSampler", opset=16)
def bilinear_sampler(cx: Ctx, node: OpNode) -> Out:
    return [_sample(cx, node.inputs[0], node.inputs[1], node.outputs[0]), None]


@converts("SpatialTransformer", opset=16)
def spatial_transformer(cx: Ctx, node: OpNode) -> Out:
    """The affine grid of ``loc`` at ``target_shape``, sampled bilinearly."""
    p = node.p
    if (p.get("transform_type") or "affine") != "affine" or \
            (p.get("sampler_type") or "bilinear") != "bilinear":
        raise node.refuse("SpatialTransformer other than affine and bilinear")
    n, _, h, w = node.out_shapes[0]
    grid = _affine_grid(cx, node.inputs[1], n, h, w, None)
    return [_sample(cx, node.inputs[0], grid, node.outputs[0]), None, None]


@converts("ROIPooling")
def roi_pooling(cx: Ctx, node: OpNode) -> Out:
    """MaxRoiPool: each roi (batch index, x1, y1, x2, y2) scaled by ``spatial_scale``
    and rounded (half away from zero, as both do), cut into ``pooled_size`` bins
    (floor/ceil of the bin edges), the max of each; an empty bin is 0 in both."""
    p = node.p
    return [cx.one("MaxRoiPool", node.inputs[:2], node.outputs[0],
                   pooled_shape=[int(v) for v in p["pooled_size"]],
                   spatial_scale=float(p["spatial_scale"])), None]
