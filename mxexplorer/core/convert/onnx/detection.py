"""Converters of the detection family: SSD's anchors (``MultiBoxPrior``, a constant
computed here as MXNet's kernel computes it), its detections and box NMS
(:mod:`detection_nms`), ``ROIAlign`` (ONNX RoiAlign) and ``box_decode``; the training
targets (``MultiBoxTarget``) are refused.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.detection_nms import _params
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]


def prior_anchors(sizes: list[float], ratios: list[float], steps: list[float],
                  offsets: list[float], clip: bool, height: int, width: int) -> Any:
    """(1, H x W x (len(sizes) + len(ratios) - 1), 4) anchors [xmin, ymin, xmax, ymax],
    in float32 as MXNet's CPU kernel computes them: per cell (row-major) the sizes at
    the first ratio, then the other ratios at the first size; a centre at
    ``(c + offset_x) * step_x``, a half width ``size * H / W * sqrt(ratio) / 2`` and a
    half height ``size / sqrt(ratio) / 2``; steps of 1/H and 1/W unless both are given;
    clipped to [0, 1] with ``clip``."""
    import numpy as np

    f = np.float32
    step_y, step_x = (f(steps[0]), f(steps[1])) if steps[0] > 0 and steps[1] > 0 else \
        (f(1) / f(height), f(1) / f(width))
    shapes = [(f(s), np.sqrt(f(ratios[0])) if ratios else f(1)) for s in sizes]
    shapes += [(f(sizes[0]), np.sqrt(f(r))) for r in ratios[1:]]
    half_w = np.array([s * f(height) / f(width) * r / f(2) for s, r in shapes], "float32")
    half_h = np.array([s / r / f(2) for s, r in shapes], "float32")
    cy = ((np.arange(height, dtype="float32") + f(offsets[0])) * step_y).astype("float32")
    cx = ((np.arange(width, dtype="float32") + f(offsets[1])) * step_x).astype("float32")
    cy = np.broadcast_to(cy[:, None, None], (height, width, len(shapes)))
    cx = np.broadcast_to(cx[None, :, None], (height, width, len(shapes)))
    out = np.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], axis=-1)
    out = out.astype("float32").reshape(1, -1, 4)
    return np.clip(out, 0, 1) if clip else out


@converts("_contrib_MultiBoxPrior", "MultiBoxPrior")
def multibox_prior(cx: Ctx, node: OpNode) -> Out:
    """The anchors depend on the input's height and width only: a constant (what
    feeds the input is pruned unless another output reads it)."""
    p = _params(node, "_contrib_MultiBoxPrior")
    shape = node.out_shapes[0]
    height, width = _spatial(node)
    steps, offsets = list(p.get("steps") or (-1.0, -1.0)), list(p.get("offsets") or
                                                                (0.5, 0.5))
    if len(steps) != 2 or len(offsets) != 2:
        raise node.refuse("steps and offsets take two values each (y, x)")
    value = prior_anchors([float(s) for s in p.get("sizes") or (1.0,)],
                          [float(r) for r in p.get("ratios") or (1.0,)],
                          [float(s) for s in steps], [float(o) for o in offsets],
                          bool(p.get("clip")), height, width)
    if tuple(value.shape) != tuple(shape):
        raise node.refuse(f"anchors of shape {value.shape}, where the shape engine says "
                          f"{shape}")
    const = cx.const(value.astype(node.out_dtypes[0] or "float32"), hint=node.name)
    cx.note(f"MultiBoxPrior '{node.name}' exported as a constant: its anchors depend only "
            "on the input's height and width")
    return [cx.identity(const, node.outputs[0])]


def _spatial(node: OpNode) -> tuple[int, int]:
    """The height and width MultiBoxPrior reads: its input's axes 2 and 3."""
    shape = node.in_shapes[0]
    if len(shape) != 4:
        raise node.refuse(f"{len(shape)}-D input (MXNet reads NCHW)")
    return int(shape[2]), int(shape[3])


@converts("_contrib_MultiBoxTarget", "MultiBoxTarget")
def multibox_target(cx: Ctx, node: OpNode) -> Out:
    raise node.refuse("training targets made from the labels (box offsets, masks and "
                      "classes to learn): no inference meaning; export the detection "
                      "outputs only")


@converts("_contrib_ROIAlign")
def roi_align(cx: Ctx, node: OpNode) -> Out:
    """ONNX RoiAlign (average mode): MXNet's kernel is Detectron's, as ONNX's is.  Rows
    of ``rois`` are [batch, x1, y1, x2, y2] (MXNet's shape check takes 5 columns; its
    kernel reads 4 as batch 0, kept here); a box is
    scaled by ``spatial_scale``; without ``aligned`` its sides are at least 1
    (ONNX's ``output_half_pixel``, RoiAlign-10's only mode), with it shifted by half a
    pixel and not widened (``half_pixel``, opset 16 on); ``sample_ratio`` <= 0 samples
    ceil(side / bins) points per bin, as ONNX's ``sampling_ratio`` 0 does.  A negative
    batch index (MXNet zeroes one value of such a row) is not reproduced."""
    p = node.p
    if p.get("position_sensitive"):
        raise node.refuse("position_sensitive=True (position-sensitive pooling, R-FCN's "
                          "PSRoIAlign) has no ONNX operator")
    aligned = bool(p.get("aligned"))
    if aligned and cx.opset < 16:
        raise node.refuse("aligned=True needs RoiAlign's half_pixel mode, opset 16 on: "
                          "export at opset 16 or newer")
    if node.rank() != 4:
        raise node.refuse(f"{node.rank()}-D data (RoiAlign takes NCHW)")
    data, rois = node.inputs[:2]
    cols = node.in_shapes[1][-1]
    if len(node.in_shapes[1]) != 2 or cols not in (4, 5):
        raise node.refuse(f"rois of shape {node.in_shapes[1]} (MXNet takes (R, 5) or "
                          "(R, 4))")
    rows = node.in_shapes[1][0]
    if rois and node.in_dtypes[1] != node.in_dtypes[0]:
        rois = cx.cast(rois, node.in_dtypes[0])
    if cols == 5:
        boxes = cx.one("Slice", [rois, cx.ints([1]), cx.ints([5]), cx.ints([1])],
                       hint=f"{node.name}__boxes")
        first = cx.one("Slice", [rois, cx.ints([0]), cx.ints([1]), cx.ints([1])],
                       hint=f"{node.name}__batch")
        batch = cx.reshape(cx.cast(first, "int64"), [rows])
    else:
        boxes, batch = rois, cx.const([0] * rows, "int64")
    pooled = list(p["pooled_size"])
    ratio = int(p.get("sample_ratio", -1))
    attrs: dict[str, Any] = {}
    if cx.opset >= 16:
        attrs["coordinate_transformation_mode"] = "half_pixel" if aligned else \
            "output_half_pixel"
    return [cx.one("RoiAlign", [data, boxes, batch], node.outputs[0], mode="avg",
                   output_height=int(pooled[0]), output_width=int(pooled[1]),
                   sampling_ratio=max(ratio, 0),
                   spatial_scale=float(p.get("spatial_scale", 1.0)), **attrs)]


@converts("_contrib_box_decode")
def box_decode(cx: Ctx, node: OpNode) -> Out:
    """MXNet's kernel: deltas (B, N, 4) [dx, dy, dw, dh] against anchors (the first
    N x 4 values; [x, y, w, h] with ``format`` center, corners else):
    ``x = dx * std0 * aw + ax``, ``w/2 = exp(min(dw * std2, clip)) * aw * 0.5`` (clip
    when it is above 0), out as corners [x - w/2, y - h/2, x + w/2, y + h/2]."""
    p = node.p
    shape = node.in_shapes[0]
    if len(shape) != 3 or shape[2] != 4:
        raise node.refuse(f"deltas of shape {shape} (MXNet reads (B, N, 4))")
    n = shape[1]
    size = 1
    for d in node.in_shapes[1]:
        size *= d
    if size < n * 4:
        raise node.refuse(f"anchors of shape {node.in_shapes[1]}: fewer than {n} boxes")
    x, anchors = node.inputs[:2]
    dtype = node.in_dtypes[0]

    def k(value: float) -> str:
        return cx.const(value, dtype)

    if size != n * 4:
        anchors = cx.one("Slice", [cx.reshape(anchors, [-1]), cx.ints([0]),
                                   cx.ints([n * 4])], hint=f"{node.name}__first")
    ax, ay, aw, ah = cx.split(cx.reshape(anchors, [1, n, 4]), -1, [1, 1, 1, 1])
    if p.get("format", "center") == "corner":
        aw = cx.one("Sub", [aw, ax])
        ah = cx.one("Sub", [ah, ay])
        ax = cx.one("Add", [ax, cx.one("Mul", [aw, k(0.5)])])
        ay = cx.one("Add", [ay, cx.one("Mul", [ah, k(0.5)])])
    dx, dy, dw, dh = cx.split(x, -1, [1, 1, 1, 1])
    ox = cx.one("Add", [cx.one("Mul", [cx.one("Mul", [dx, k(p.get("std0", 1.0))]), aw]),
                        ax])
    oy = cx.one("Add", [cx.one("Mul", [cx.one("Mul", [dy, k(p.get("std1", 1.0))]), ah]),
                        ay])
    dw = cx.one("Mul", [dw, k(p.get("std2", 1.0))])
    dh = cx.one("Mul", [dh, k(p.get("std3", 1.0))])
    clip = float(p.get("clip", -1.0))
    if clip > 0:
        dw = cx.one("Min", [dw, k(clip)])
        dh = cx.one("Min", [dh, k(clip)])
    ow = cx.one("Mul", [cx.one("Mul", [cx.one("Exp", [dw]), aw]), k(0.5)])
    oh = cx.one("Mul", [cx.one("Mul", [cx.one("Exp", [dh]), ah]), k(0.5)])
    return [cx.one("Concat", [cx.one("Sub", [ox, ow]), cx.one("Sub", [oy, oh]),
                              cx.one("Add", [ox, ow]), cx.one("Add", [oy, oh])],
                   node.outputs[0], axis=-1)]
