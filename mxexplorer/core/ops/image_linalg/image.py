"""Rules for MXNet 1.9.1's image ops (``src/operator/image/``), which Gluon's hybridized
transforms export: ``_image_to_tensor`` ((H, W, C) or (N, H, W, C) of any type to
(C, H, W) or (N, C, H, W) float32), ``_image_normalize``, ``_image_crop``,
``_image_resize`` and the augmenters that keep an (H, W, C) image's shape (the flips,
``_image_random_brightness`` ... ``_image_random_color_jitter``,
``_image_adjust_lighting``, ``_image_random_lighting``).

As in MXNet, the augmenters, crop, resize and normalize refuse an input of unknown rank
and an unknown channel count (1 or 3 channels only), and pass nothing back from their
output; ``_image_to_tensor`` waits for its input's full shape.  Must not import MXNet or
Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, Shape, fmt
from mxexplorer.core.ops.image_linalg.helpers import (
    cdiv,
    count,
    counted,
    dim,
    fail,
    int32,
    need_input,
    put_out,
    rank,
    rules,
    short,
)

#: the augmenters registered with ``MXNET_REGISTER_IMAGE_AUG_OP`` (shape kept)
AUGMENTERS = ["_image_flip_left_right", "_image_flip_top_bottom",
              "_image_random_flip_left_right", "_image_random_flip_top_bottom",
              "_image_random_brightness", "_image_random_contrast",
              "_image_random_saturation", "_image_random_hue",
              "_image_random_color_jitter", "_image_adjust_lighting",
              "_image_random_lighting"]


def _channels_ok(n: int) -> bool:
    return n in (1, 3)


def _image(c: Call, ranks: tuple[int, ...], layout: str) -> Shape:
    """The input's shape, refused unless of one of ``ranks``."""
    need_input(c, "an image")
    d: Shape | None = c.ins[0]
    if d is None or len(d) not in ranks:
        fail(f"{c.input_label(0)} has {rank(d)}, but {short(c.op)} needs an image "
             f"{layout}", input=0)
    assert d is not None
    return d


def augment_shape(c: Call) -> None:
    """``ImageShape``: an (H, W, C) image with 1 or 3 channels (known), kept as it is;
    the output teaches the input nothing."""
    d = _image(c, (3,), "(height, width, channels)")
    if not _channels_ok(d[2]):
        fail(f"{c.input_label(0)} has shape {fmt(d)}, but {short(c.op)} needs an image of 1 or 3 "
             f"channels (the last dimension, known)", input=0)
    c.set_out(0, d)


def to_tensor_shape(c: Call) -> None:
    """``ToTensorShape``: once the input's shape is fully known, (H, W, C) gives
    (C, H, W) and (N, H, W, C) gives (N, C, H, W)."""
    count(c, ("data",))
    d = c.ins[0]
    if d is None or any(x < 0 for x in d):
        return
    if len(d) == 3:
        c.set_out(0, (d[2], d[0], d[1]))
    elif len(d) == 4:
        c.set_out(0, (d[0], d[3], d[1], d[2]))
    else:
        fail(f"{c.input_label(0)} has shape {fmt(d)}, but to_tensor needs an image "
             f"(height, width, channels) or a batch of them (N, height, width, channels)",
             input=0)


def to_tensor_type(c: Call) -> None:
    """``ToTensorType``: the output is float32 whatever the input's type."""
    count(c, ("data",))
    c.set_out(0, "float32")


def normalize_shape(c: Call) -> None:
    """``NormalizeOpShape``: a (C, H, W) or (N, C, H, W) tensor with 1 or 3 channels
    (known); ``mean`` and ``std`` have 1 value or one per channel; the shape is kept
    (nothing passed back)."""
    need_input(c, "a tensor")
    d = c.ins[0]
    if d is not None and len(d) == 0:
        return
    if d is None or len(d) not in (3, 4):
        fail(f"{c.input_label(0)} has {rank(d)}, but normalize needs a tensor "
             f"(channels, height, width) or (N, channels, height, width)", input=0)
    assert d is not None
    axis = 0 if len(d) == 3 else 1
    n = d[axis]
    if not _channels_ok(n):
        fail(f"{c.input_label(0)} has shape {fmt(d)}, but normalize needs 1 or 3 channels "
             f"in dimension {axis} (known)", input=0)
    for name in ("mean", "std"):
        values = c.p[name] or ()
        if len(values) != 1 and len(values) != n:
            fail(f"{name} has {len(values)} values, but the input {fmt(d)} has {n} "
                 f"channel{'s' if n != 1 else ''}: give 1 value or {n}", attr=name)
    c.set_out(0, d)


def normalize_type(c: Call) -> None:
    """``NormalizeOpType``: the output has the input's type and the input the
    output's."""
    count(c, ("data",))
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0], "the output has")


def _unknown(size: int) -> str:
    return " (an unknown size, which MXNet compares as -1)" if size < 0 else ""


def crop_shape(c: Call) -> None:
    """``CropShape``: an (H, W, C) or (N, H, W, C) image with 1 or 3 channels (known);
    a ``width`` x ``height`` box at (``x``, ``y``) inside it (compared as given, unknown
    sizes counting as -1)."""
    d = _image(c, (3, 4), "(height, width, channels) or (N, height, width, channels)")
    if not _channels_ok(d[-1]):
        fail(f"{c.input_label(0)} has shape {fmt(d)}, but crop needs an image of 1 or 3 "
             f"channels (the last dimension, known)", input=0)
    x, y = int(c.p["x"]), int(c.p["y"])
    width, height = int(c.p["width"]), int(c.p["height"])
    if height <= 0 or width <= 0:
        fail(f"the crop is {width} wide and {height} high: width and height must be "
             f"greater than 0", attr="width" if width <= 0 else "height")
    w_in, h_in = d[-2], d[-3]
    if int32(x + width) > w_in:
        fail(f"the crop from x={x} of width {width} ends at {x + width}, past the width "
             f"{dim(w_in)} of the image {fmt(d)}{_unknown(w_in)}", attr="width")
    if int32(y + height) > h_in:
        fail(f"the crop from y={y} of height {height} ends at {y + height}, past the "
             f"height {dim(h_in)} of the image {fmt(d)}{_unknown(h_in)}", attr="height")
    if len(d) == 3:
        c.set_out(0, (height, width, d[2]))
    else:
        c.set_out(0, (d[0], height, width, d[3]))


def _resized(c: Call, h: int, w: int) -> tuple[int, int]:
    """``GetHeightAndWidth``: ``size`` is (side) or (width, height); with ``keep_ratio``
    one side scales the other (C++ int arithmetic, an unknown side counting as -1)."""
    size = tuple(c.p["size"] or ())
    if len(size) not in (1, 2):
        fail(f"size has {len(size)} values, but resize needs 1 (both sides, or the short "
             f"side with keep_ratio) or 2 (width, height)", attr="size")
    for v in size:
        if v <= 0:
            fail(f"size {fmt(size) if len(size) > 1 else size[0]} has a side of {v}: each "
                 f"must be greater than 0", attr="size")
    if len(size) == 2:
        return size[1], size[0]
    s = size[0]
    if not c.p["keep_ratio"]:
        return s, s
    if h > w:
        if w == 0:
            fail("the image has width 0: keep_ratio cannot scale it", attr="keep_ratio")
        return int32(cdiv(int32(h * s), w)), s
    if h == 0:
        fail("the image has height 0: keep_ratio cannot scale it", attr="keep_ratio")
    return s, int32(cdiv(int32(w * s), h))


def resize_shape(c: Call) -> None:
    """``ResizeShape``: an (H, W, C) or (N, H, W, C) image of known rank takes the new
    height and width; the rest is kept (no channel check)."""
    d = _image(c, (3, 4), "(height, width, channels) or (N, height, width, channels)")
    if len(d) == 3:
        h, w = _resized(c, d[0], d[1])
        put_out(c, 0, (h, w, d[2]), "(keep_ratio scales by an unknown side)")
    else:
        h, w = _resized(c, d[1], d[2])
        put_out(c, 0, (d[0], h, w, d[3]), "(keep_ratio scales by an unknown side)")


ONE = counted(("data",), 1)

RULES: dict[str, Rule] = {
    **rules(AUGMENTERS, augment_shape, ONE),
    **rules(["_image_to_tensor"], to_tensor_shape, to_tensor_type),
    **rules(["_image_normalize"], normalize_shape, normalize_type),
    **rules(["_image_crop"], crop_shape, ONE),
    **rules(["_image_resize"], resize_shape, ONE),
}
