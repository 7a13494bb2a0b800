"""Rules for the region and sampling ops: ``ROIPooling``, ``_contrib_ROIAlign``,
``_contrib_RROIAlign``, ``_contrib_PSROIPooling``, ``_contrib_DeformablePSROIPooling``,
``BilinearSampler``, ``GridGenerator`` and ``SpatialTransformer``.  Must not import
MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, DtypeFn, Rule, Shape, fmt, known, table
from mxexplorer.core.ops.pool_norm.helpers import (
    FAMILY,
    _cdiv,
    _cmod,
    _count,
    _label,
    _need_rank,
    _pair,
    _put,
    _shape_text,
    _tup,
)


# ====================================================================== types
def uniform_type(c: Call) -> None:
    """The first known input's type for every input and output; another known type is
    refused, and so is no type at all (``BilinearSampler``, ``GridGenerator``,
    ``SpatialTransformer``)."""
    dtype: str | None = None
    for i, t in enumerate(c.ins):
        if dtype is None:
            dtype = t
        elif t is not None and t != dtype:
            c.fail(f"{c.input_label(i)} is {t}, but {c.op} needs every input of one type "
                   f"({dtype})", input=i)
    if dtype is None:
        c.fail(f"no input's type is known here, and {c.op} needs one: give the data a "
               "dtype")
    c.ins[:] = [dtype] * len(c.ins)
    c.outs[:] = [dtype] * len(c.outs)


def _region_type(second: str | None, pair: bool = True) -> DtypeFn:
    """The region ops: data and boxes of one known type (not filled in); the output of
    it, and a second output of ``second`` ("data": the data's type).  ``pair``: the op's
    pooled_size is a pair its parser checks."""
    def rule(c: Call) -> None:
        if pair:
            _pair(c)
        if len(c.ins) < 2:
            c.fail(f"{c.op} has {len(c.ins)} inputs, but it takes data and rois")
        dtype, boxes = c.ins[0], c.ins[1]
        if dtype != boxes:
            if dtype is None or boxes is None:
                which = 0 if dtype is None else 1
                c.fail(f"the type of {_label(c, which, ('data', 'rois')[which])} is not "
                       f"known here, and {c.op} needs the data and the boxes given one "
                       f"type ({dtype or boxes})", input=which)
            c.fail(f"{_label(c, 1, 'rois')} is {boxes}, but the data is {dtype}: "
                   f"{c.op} needs both of one type", input=1)
        if dtype is None:
            c.fail(f"the types of the data and the boxes are not known here, and {c.op} "
                   "needs them: give both inputs a dtype", input=0)
        c.outs[:] = [dtype] + [dtype if second == "data" else second] * (len(c.outs) - 1)
    return rule


# ==================================================================== regions
def _boxes(c: Call, width: int) -> tuple[Shape, Shape]:
    """4-D data and ``(boxes, width)`` rois, checked at once (unknown shapes refused)."""
    data = _need_rank(c, 0, (4,), "data", "(batch, channel, height, width)")
    rois = c.ins[1]
    fields = "(batch index, x1, y1, x2, y2)" if width == 5 else \
        "(batch index, centre x, centre y, width, height, angle)"
    if rois is None or len(rois) != 2 or rois[1] != width:
        c.fail(f"{_label(c, 1, 'rois')} has {_shape_text(rois)}, but {c.op} needs boxes "
               f"of shape (number of boxes, {width}): {fields} per box", input=1)
    assert rois is not None
    return data, rois


_POOLED_WHY = "pooled_size gives a negative size: use positive sizes"


def roi_pooling_shape(c: Call) -> None:
    """``ROIPooling``: output and hidden argmax ``(boxes, channels, ph, pw)``."""
    ph, pw = _pair(c)
    _count(c, 2, "data, rois")
    data, rois = _boxes(c, 5)
    out = (rois[0], data[1], ph, pw)
    _put(c, 0, out, _POOLED_WHY, "pooled_size")
    _put(c, 1, out, _POOLED_WHY, "pooled_size")


def roi_align_shape(c: Call) -> None:
    """``_contrib_ROIAlign``: ``(boxes, channels, ph, pw)``; position_sensitive divides
    the channels by ``ph * pw`` (an unknown count is -1 there)."""
    ph, pw = _pair(c)
    _count(c, 2, "data, rois")
    data, rois = _boxes(c, 5)
    channels = data[1]
    if c.p["position_sensitive"]:
        cells = ph * pw
        if _cmod(channels, cells) != 0:
            if channels < 0:
                c.fail(f"the data's channels are not known here, and with "
                       f"position_sensitive MXNet 1.9.1 divides them (as -1) by "
                       f"pooled_size {ph}x{pw}: give the data's channels",
                       attr="pooled_size")
            c.fail(f"{channels} channels do not divide by the {cells} cells of pooled_size "
                   f"{_tup((ph, pw))} (position_sensitive): use a pooled_size whose "
                   f"height times width divides {channels}", attr="pooled_size")
        channels = _cdiv(_cdiv(channels, ph), pw)
    _put(c, 0, (rois[0], channels, ph, pw), _POOLED_WHY, "pooled_size")


def rroi_align_shape(c: Call) -> None:
    """``_contrib_RROIAlign``: rotated boxes of 6 values; ``(boxes, channels, ph, pw)``."""
    ph, pw = _pair(c)
    _count(c, 2, "data, rois")
    data, rois = _boxes(c, 6)
    _put(c, 0, (rois[0], data[1], ph, pw), _POOLED_WHY, "pooled_size")


def psroi_pooling_shape(c: Call) -> None:
    """``_contrib_PSROIPooling`` and ``_contrib_DeformablePSROIPooling``: ``(boxes,
    output_dim, pooled_size, pooled_size)``; the deformable one takes a 4-D ``trans``
    unless no_trans, and has a hidden count output of the same shape."""
    p = c.p
    deformable = c.op == "_contrib_DeformablePSROIPooling"
    if deformable and not p["no_trans"]:
        _count(c, 3, "data, rois, trans", "no_trans=False")
        _need_rank(c, 2, (4,), "trans", "(boxes, 2, part height, part width)")
    else:
        _count(c, 2, "data, rois")
    _data, rois = _boxes(c, 5)
    size = p["pooled_size"]
    out = (rois[0], p["output_dim"], size, size)
    why = "output_dim and pooled_size must not be negative"
    attr = "output_dim" if p["output_dim"] < -1 else "pooled_size"
    _put(c, 0, out, why, attr)
    if len(c.outs) > 1:
        _put(c, 1, out, why, attr)


# ==================================================================== sampling
def _target(c: Call) -> tuple[int, int]:
    """``target_shape`` (height, width), both above 0."""
    t: tuple[int, ...] | None = c.p["target_shape"]
    if t is None or len(t) < 2 or t[0] <= 0 or t[1] <= 0:
        c.fail(f"target_shape {'None' if t is None else _tup(t)} must give the output's "
               "height and width, both above 0, as in target_shape=(32, 32)",
               attr="target_shape")
    assert t is not None
    return t[0], t[1]


def bilinear_sampler_shape(c: Call) -> None:
    """``BilinearSampler``: waits for the whole data and grid shapes; 4-D data and a grid
    ``(batch, 2, h, w)`` of the same batch; output ``(batch, channels, h, w)`` and a
    hidden ``(batch, h, w, 2)``."""
    _count(c, 2, "data, grid")
    data, grid = c.ins
    if not known(data):
        return
    _need_rank(c, 0, (4,), "data", "(batch, channel, height, width)")
    if not known(grid):
        return
    assert data is not None and grid is not None
    if len(grid) != 4 or grid[0] != data[0] or grid[1] != 2:
        c.fail(f"{c.input_label(1)} has shape {fmt(grid)}, but for data {fmt(data)} "
               f"BilinearSampler needs a grid of shape ({data[0]}, 2, height, width)",
               input=1)
    _put(c, 0, (data[0], data[1], grid[2], grid[3]))
    _put(c, 1, (grid[0], grid[2], grid[3], 2))


def grid_generator_shape(c: Call) -> None:
    """``GridGenerator``: 'affine' takes ``(batch, 6)`` and gives ``(batch, 2, h, w)`` of
    target_shape; 'warp' takes a flow ``(batch, 2, h, w)`` and gives its shape; an
    unknown shape is refused."""
    _count(c, 1, "data")
    if c.p["transform_type"] == "affine":
        data = _need_rank(c, 0, (2,), "data", "(batch, 6): the affine matrices")
        if data[1] != 6:
            c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but transform_type 'affine' "
                   f"needs (batch, 6): six affine values per sample", input=0)
        h, w = _target(c)
        _put(c, 0, (data[0], 2, h, w))
        _put(c, 1, (3, h * w))
    else:
        data = _need_rank(c, 0, (4,), "data", "(batch, 2, height, width): the flow")
        if data[1] != 2:
            c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but transform_type 'warp' "
                   "needs a flow of 2 channels (batch, 2, height, width)", input=0)
        _put(c, 0, data)
        _put(c, 1, (2, data[2], data[3]))


def spatial_transformer_shape(c: Call) -> None:
    """``SpatialTransformer``: waits for the whole data and loc shapes; 4-D data and
    ``(batch, 6)`` affine values; output ``(batch, channels, h, w)`` of target_shape and
    two hidden grids."""
    _count(c, 2, "data, loc")
    data, loc = c.ins
    if not known(data):
        return
    _need_rank(c, 0, (4,), "data", "(batch, channel, height, width)")
    if not known(loc):
        return
    assert data is not None and loc is not None
    if len(loc) != 2 or loc[1] != 6:
        c.fail(f"{c.input_label(1)} has shape {fmt(loc)}, but SpatialTransformer needs "
               "(batch, 6): six affine values per sample", input=1)
    h, w = _target(c)
    _put(c, 0, (data[0], data[1], h, w))
    _put(c, 1, (3, h * w))
    _put(c, 2, (data[0], 2, h * w))


RULES: dict[str, Rule] = {
    **table(FAMILY, ("ROIPooling",), roi_pooling_shape, _region_type("int32")),
    **table(FAMILY, ("_contrib_ROIAlign",), roi_align_shape, _region_type(None)),
    **table(FAMILY, ("_contrib_RROIAlign",), rroi_align_shape, _region_type(None)),
    **table(FAMILY, ("_contrib_PSROIPooling", "_contrib_DeformablePSROIPooling"),
            psroi_pooling_shape, _region_type("data", pair=False)),
    **table(FAMILY, ("BilinearSampler",), bilinear_sampler_shape, uniform_type),
    **table(FAMILY, ("GridGenerator",), grid_generator_shape, uniform_type),
    **table(FAMILY, ("SpatialTransformer",), spatial_transformer_shape, uniform_type),
}
