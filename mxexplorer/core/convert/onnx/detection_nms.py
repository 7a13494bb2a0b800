"""SSD's and YOLO's detection outputs, row for row as MXNet 1.9.1's CPU kernels write
them: ``_contrib_MultiBoxDetection`` (box decoding, sort, NMS) and ``_contrib_box_nms``
(filter, sort, NMS per class, format), both through ONNX's NonMaxSuppression
(:meth:`Make.nms`).  Imported by :mod:`detection`.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Sequence

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.registry import converts
from mxexplorer.core.ops import engine

Out = list[str | None]
FLOAT, INT64 = 1, 7             # onnx.TensorProto.FLOAT, INT64
BIG = 2 ** 62


def const(cx: Ctx, value: Any, dtype: str = "float32") -> str:
    """``cx.const``, except that a scalar stays 0-D (``Ctx.initializer`` passes values
    through ``np.ascontiguousarray``, which makes a scalar 1-D; Range and a Reshape to
    a scalar need 0-D)."""
    import numpy as np
    from onnx import numpy_helper

    array = np.asarray(value, dtype)
    if array.ndim:
        return cx.const(array, dtype)
    key = (array.dtype.str, "scalar", array.tobytes())
    found = cx._consts.get(key)
    if found is not None:
        return found
    name = cx.fresh("scalar")
    cx.initializers.append(numpy_helper.from_array(array, name))
    cx.values[name] = array
    cx._consts[key] = name
    return name


class Make:
    """ONNX nodes named after the node converted (``what`` "" names the node's first
    output: its last node), constants through the context (each value once)."""

    def __init__(self, cx: Ctx, node: OpNode):
        self.cx, self.node = cx, node

    def __call__(self, op: str, inputs: Sequence[str], what: str, **attrs: Any) -> str:
        if not what:
            return self.cx.one(op, inputs, self.node.outputs[0], **attrs)
        return self.cx.one(op, inputs, hint=f"{self.node.name}__{what}", **attrs)

    def const(self, value: Any, dtype: str = "float32") -> str:
        return const(self.cx, value, dtype)

    def ints(self, *values: int) -> str:
        return self.cx.ints(values)

    def columns(self, data: str, start: int, stop: int, what: str) -> str:
        """``data[..., start:stop]``."""
        return self("Slice", [data, self.ints(start), self.ints(stop), self.ints(-1)], what)

    def outputs(self, op: str, inputs: Sequence[str], what: str, count: int,
                **attrs: Any) -> list[str]:
        return self.cx.add(op, inputs, count, hint=f"{self.node.name}__{what}", **attrs)

    def topk(self, key: str, count: str, what: str) -> tuple[str, str]:
        """The ``count`` largest of ``key`` down its axis 1 and their indices (equal
        values in index order)."""
        values, indices = self.outputs("TopK", [key, count], what, 2, axis=1)
        return values, indices

    def split(self, data: str, what: str) -> list[str]:
        """The last axis (of 4) in 4 pieces, each keeping the axis."""
        return self.cx.split(data, -1, [1, 1, 1, 1])

    def reduce_max(self, data: str, axis: int, what: str) -> str:
        return self.cx.reduce("ReduceMax", data, [axis], False)

    def filled(self, shape: str, value: float, what: str) -> str:
        from onnx import helper

        return self("ConstantOfShape", [shape], what,
                    value=helper.make_tensor("value", FLOAT, [1], [value]))

    def nms(self, boxes: str, kept: str, threshold: Any, groups: str | None = None) -> str:
        """(N, A) booleans: the rows of ``boxes`` (N, A, 4), sorted by score, that a
        greedy NMS of the ``kept`` (N, A) ones keeps, suppressing a box that overlaps a
        better one by more than ``threshold``; among the rows of each group only when
        ``groups`` (N, G, A) marks them.  NonMaxSuppression is given scores falling by
        place (its own sort ignores ties), zero (left out) for the others; it also
        orders each box's corners."""
        const, ints = self.const, self.ints
        shape = self("Shape", [kept], "nmsshape")
        count = self("Reshape", [self("Slice", [shape, ints(1), ints(2)], "nmscount1"),
                                 ints()], "nmscount")
        count_f = self("Cast", [count], "nmscountf", to=FLOAT)
        place = self("Range", [const(0.0), count_f, const(1.0)], "nmsplace")
        falling = self("Where", [self("Reshape", [kept, ints(0, 1, -1)], "nmskept"),
                                 self("Sub", [count_f, place], "nmsrank"), const(0.0)],
                       "falling")                                               # (N, 1, A)
        if groups is not None:
            falling = self("Where", [groups, falling, const(0.0)], "pergroup")
        chosen = self("NonMaxSuppression", [boxes, falling, count, const(threshold),
                                            const(0.5)], "nms")                # (K, 3)
        ones = self.filled(self("Slice", [self("Shape", [chosen], "kshape"), ints(0),
                                          ints(1)], "k"), 1.0, "ones")
        survived = self("ScatterND", [self.filled(shape, 0.0, "zeros"),
                                      self("Gather", [chosen, ints(0, 2)], "where", axis=1),
                                      ones], "survived")
        return self("Greater", [survived, const(0.5)], "alive")


def _floats(value: Any, default: Sequence[float]) -> list[float]:
    if value is None:
        return list(default)
    return [float(v) for v in (value if isinstance(value, (list, tuple)) else [value])]


def _params(node: OpNode, op: str) -> dict[str, Any]:
    """The attributes, defaults filled in (the old name of an op is read as its
    ``_contrib_`` one's)."""
    if node.p:
        return node.p

    parsed: dict[str, Any] = engine.parsed(op, node.attrs)
    return parsed


@converts("_contrib_MultiBoxDetection", "MultiBoxDetection")
def multibox_detection(cx: Ctx, node: OpNode) -> Out:
    """MXNet 1.9.1's CPU kernel, row for row: (N, A, 6) rows [class, score, xmin, ymin,
    xmax, ymax].  Per anchor: the best foreground class (the first of equal ones), its
    score (valid from ``threshold``), the box decoded from the anchor.  Out come the
    valid rows sorted by score (equal scores in anchor order: TopK's tiebreak), the first
    ``nms_topk`` of them through a greedy NMS (per class, or across classes with
    ``force_suppress``) that sets a suppressed row's class to -1; the valid rows past
    ``nms_topk`` are the valid rows at those places in anchor order, class -1 (the
    kernel marks them before it sorts); then rows of -1.  Without NMS (``nms_threshold``
    outside (0, 1]) the valid rows stay in anchor order.  NonMaxSuppression is given the
    sorted boxes with scores falling by place (its own order ignores ties) and the
    threshold one float below MXNet's (it suppresses above the IoU, MXNet from it; it
    also orders each box's corners, which decoded boxes of ordered anchors already are).
    ``background_id`` is ignored, as the kernel ignores it (class 0 is the background)."""
    import numpy as np

    p = _params(node, "_contrib_MultiBoxDetection")
    prob, loc, anchors = node.inputs[:3]
    make = Make(cx, node)
    const, ints = make.const, make.ints
    var = _floats(p.get("variances"), (0.1, 0.1, 0.2, 0.2))
    nms = np.float32(p.get("nms_threshold", 0.5))             # MXNet's float
    topk = int(p.get("nms_topk", -1))

    # per anchor: the best foreground class and its score, valid from the threshold
    fore = make("Slice", [prob, ints(1), ints(BIG), ints(1)], "fore")
    score = make.reduce_max(fore, 1, "score")                                   # (N, A)
    cls = make("Cast", [make("ArgMax", [fore], "argmax", axis=1, keepdims=0)], "cls",
               to=FLOAT)
    valid = make("And", [make("Greater", [score, const(-1.0)], "above"),
                         make("GreaterOrEqual", [score, const(
                             float(p.get("threshold", 0.01)))], "enough")], "valid")
    ident = make("Where", [valid, cls, const(-1.0)], "id")

    # the box: the anchor's centre moved, its size scaled, by the prediction
    al, at, ar, ab = make.split(make("Gather", [anchors, const(0, "int64")], "anchor",
                                     axis=0), "a")                               # (A, 1)
    px, py, pw, ph = make.split(make("Reshape", [loc, ints(0, -1, 4)], "deltas"), "p")
    edges = []
    for lo, hi, d, s, k, axis in ((al, ar, px, pw, 0, "x"), (at, ab, py, ph, 1, "y")):
        size = make("Sub", [hi, lo], f"{axis}size")
        mid = make("Div", [make("Add", [lo, hi], f"{axis}sum"), const(2.0)], f"{axis}mid")
        moved = make("Mul", [make("Mul", [d, const(var[k])], f"{axis}var"), size],
                     f"{axis}moved")
        centre = make("Add", [moved, mid], f"{axis}centre")
        scale = make("Exp", [make("Mul", [s, const(var[k + 2])], f"{axis}svar")],
                     f"{axis}scale")
        extent = make("Div", [make("Mul", [scale, size], f"{axis}ext2"), const(2.0)],
                      f"{axis}ext")
        edges.append((make("Sub", [centre, extent], f"{axis}min"),
                      make("Add", [centre, extent], f"{axis}max")))
    box = [edges[0][0], edges[1][0], edges[0][1], edges[1][1]]
    if p.get("clip", True):
        box = [make("Clip", [b, const(0.0), const(1.0)], f"clip{k}")
               for k, b in enumerate(box)]
    rows = make("Concat", [make("Reshape", [c, ints(0, -1, 1)], f"col{k}")
                           for k, c in enumerate([ident, score])] + box, "rows", axis=2)

    # the valid rows in anchor order, and all rows by score (the invalid ones last)
    shape = make("Shape", [score], "shape")
    count = make("Slice", [shape, ints(1), ints(2)], "count")                   # [A]
    count_f = make("Cast", [make("Reshape", [count, ints()], "count0")], "countf", to=FLOAT)
    place = make("Range", [const(0.0), count_f, const(1.0)], "place")          # (A,)
    neg = make("Neg", [place], "neg")
    first = make("Where", [valid, neg, make("Sub", [neg, count_f], "later")], "firstkey")
    skey = make("Where", [valid, score, const(-np.inf)], "scorekey")
    order = make.topk(first, count, "order")[1]
    ranking = make.topk(skey, count, "ranking")[1]
    in_order, ranked = (make("GatherND", [rows, make("Reshape", [idx, ints(0, -1, 1)],
                                                     f"{what}3")], what, batch_dims=1)
                        for idx, what in ((order, "inorder"), (ranking, "ranked")))
    valid_place = make("GreaterOrEqual", [make.columns(in_order, 0, 1, "ocls"),
                                          const(0.0)], "validplace")            # (N, A, 1)
    if not 0 < nms <= 1:
        return [make("Where", [valid_place, in_order, const(-1.0)], "")]
    unmarked = make("Concat", [make("Expand", [const([[[-1.0]]]), make(
        "Shape", [valid_place], "vshape")], "minus1"), make.columns(in_order, 1, 6, "ovals")],
        "unmarked", axis=2)
    passed = make("Where", [valid_place, unmarked, const(-1.0)], "passed")
    kept = valid_place
    if topk > 0:
        kept = make("And", [valid_place, make("Less", [make("Reshape", [place, ints(-1, 1)],
                                                            "placecol"), const(float(topk))],
                                              "intopk")], "kept")

    # NMS of the first rows, per class unless forced
    mine = None
    if not p.get("force_suppress", False):
        classes = make("Sub", [make("Slice", [make("Shape", [prob], "pshape"), ints(1),
                                              ints(2)], "classes1"), ints(1)], "fg")
        mine = make("Equal", [
            make("Reshape", [make.columns(ranked, 0, 1, "rcls"), ints(0, 1, -1)], "rcls3"),
            make("Reshape", [make("Range", [const(0.0), make("Cast", [make(
                "Reshape", [classes, ints()], "fg0")], "fgf", to=FLOAT), const(1.0)],
                "classes"), ints(1, -1, 1)], "classes3")], "mine")            # (N, C, A)
    alive = make.nms(make.columns(ranked, 2, 6, "boxes"),
                     make("Reshape", [kept, ints(0, -1)], "kept2"),
                     np.nextafter(nms, np.float32(0)), mine)                   # (N, A)
    marked = make("Concat", [make("Where", [make("Reshape", [alive, ints(0, -1, 1)],
                                                 "alive3"),
                                            make.columns(ranked, 0, 1, "rcls2"),
                                            const(-1.0)], "newcls"),
                             make.columns(ranked, 1, 6, "rvals")], "marked", axis=2)
    return [make("Where", [make("Reshape", [kept, ints(0, -1, 1)], "kept3b"), marked,
                           passed], "")]


def _corners(make: Make, a: str, b: str, c: str, d: str, what: str) -> list[str]:
    """Centre and size to corners."""
    half_w = make("Div", [c, make.const(2.0)], f"{what}halfw")
    half_h = make("Div", [d, make.const(2.0)], f"{what}halfh")
    return [make("Sub", [a, half_w], f"{what}left"), make("Sub", [b, half_h], f"{what}top"),
            make("Add", [a, half_w], f"{what}right"),
            make("Add", [b, half_h], f"{what}bottom")]


@converts("_contrib_box_nms", "box_nms")
def box_nms(cx: Ctx, node: OpNode) -> Out:
    """MXNet 1.9.1's CPU kernel, row for row, over the last two axes (N rows of K
    values; the axes before them are batches).  The valid rows (score above
    ``valid_thresh``; with ``id_index``, class not ``background_id``) sorted by score,
    equal scores in row order (TopK's tiebreak); the first ``topk`` of them through a
    greedy NMS (per class, classes compared as whole numbers, when ``id_index`` is given
    and ``force_suppress`` is not: NonMaxSuppression's class axis over the distinct
    classes); the survivors, whole rows, first and in that order, then rows of -1.  MXNet
    suppresses above the IoU threshold, as NonMaxSuppression does; a box with a negative
    side has area 0 and overlaps nothing for MXNet, so its far corner is moved onto the
    near one before NonMaxSuppression (which would swap them).  An ``out_format`` other
    than ``in_format`` converts the output rows whose first coordinate is not negative
    (the kernel's test for a row of -1); ``topk=0`` returns the rows unchanged.  The
    second output (the kept rows' indices, for the backward) is not exported."""
    import numpy as np

    p = _params(node, "_contrib_box_nms")
    data = node.inputs[0]
    make = Make(cx, node)
    const, ints = make.const, make.ints
    rest: Out = [None] * (len(node.outputs) - 1)
    topk = int(p.get("topk", -1))
    if topk == 0:
        return [make("Identity", [data], "")] + rest
    threshold = np.float32(p.get("overlap_thresh", 0.5))          # MXNet's float
    if threshold < 0:
        raise node.refuse(f"overlap_thresh {threshold} below 0 suppresses boxes that do "
                          "not overlap, which ONNX's NonMaxSuppression cannot")
    first, score_at, id_at = (int(p.get(k, d)) for k, d in (
        ("coord_start", 2), ("score_index", 1), ("id_index", -1)))
    centre = p.get("in_format", "corner") == "center"

    # the rows as (B, N, K), the valid ones by score, the first topk of them
    shape = make("Shape", [data], "shape")
    rows = make("Reshape", [data, make("Concat", [ints(-1), make(
        "Slice", [shape, ints(-2), ints(BIG)], "last2")], "shape3", axis=0)], "rows")
    score = make("Reshape", [make.columns(rows, score_at, score_at + 1, "score3"),
                             ints(0, -1)], "score")                            # (B, N)
    valid = make("Greater", [score, const(float(p.get("valid_thresh", 0)))], "enough")
    if id_at >= 0:
        ident = make("Reshape", [make.columns(rows, id_at, id_at + 1, "id3"), ints(0, -1)],
                     "id")
        valid = make("And", [valid, make("Not", [make("Equal", [ident, const(float(
            p.get("background_id", -1)))], "background")], "foreground")], "valid")
    count = make("Slice", [make("Shape", [score], "bn"), ints(1), ints(2)], "n")   # [N]
    if topk > 0:
        count = make("Min", [count, ints(topk)], "topk")
    best, order = make.topk(make("Where", [valid, score, const(-np.inf)], "key"), count,
                            "order")                                           # (B, T)
    ranked = make("GatherND", [rows, make("Reshape", [order, ints(0, -1, 1)], "order3")],
                  "ranked", batch_dims=1)                                      # (B, T, K)
    kept = make("Greater", [best, const(-np.inf)], "kept")

    # their boxes as corners, a negative side made 0, and each row's class group
    a, b, c, d = make.split(make.columns(ranked, first, first + 4, "box"), "c")
    if centre:
        a, b, c, d = _corners(make, a, b, c, d, "")
    boxes = make("Concat", [a, b, make("Max", [a, c], "right0"),
                            make("Max", [b, d], "bottom0")], "boxes", axis=2)
    groups = None
    if id_at >= 0 and not p.get("force_suppress", False):
        whole = make("Cast", [make.columns(ranked, id_at, id_at + 1, "rid")], "whole",
                     to=INT64)                                                 # (B, T, 1)
        distinct, _, group, _ = make.outputs("Unique", [make("Reshape", [
            whole, ints(-1)], "flat")], "unique", 4, sorted=1)
        group = make("Reshape", [group, make("Shape", [make(
            "Transpose", [whole], "across", perm=[0, 2, 1])], "gshape")], "group")
        classes = make("Range", [const(0, "int64"), make("Reshape", [make(
            "Shape", [distinct], "nclasses1"), ints()], "nclasses"), const(1, "int64")],
            "classes")
        groups = make("Equal", [group, make("Reshape", [classes, ints(1, -1, 1)],
                                            "classes3")], "groups")           # (B, G, T)
    alive = make.nms(boxes, kept, threshold, groups)                          # (B, T)

    # the survivors first, then -1 up to N rows
    tcount = make("Slice", [make("Shape", [alive], "bt"), ints(1), ints(2)], "t")  # [T]
    tcount_f = make("Cast", [make("Reshape", [tcount, ints()], "t0")], "tf", to=FLOAT)
    place = make("Range", [const(0.0), tcount_f, const(1.0)], "place")
    filled, compact = make.topk(make("Where", [alive, make("Sub", [tcount_f, place], "rank"),
                                               const(0.0)], "alivekey"), tcount, "compact")
    out = make("GatherND", [ranked, make("Reshape", [compact, ints(0, -1, 1)], "compact3")],
               "survivors", batch_dims=1)
    out = make("Where", [make("Reshape", [make("Greater", [filled, const(0.5)], "filled"),
                                          ints(0, -1, 1)], "filled3"), out, const(-1.0)],
               "out")
    pads = make("Concat", [ints(0, 0, 0, 0), make("Sub", [make(
        "Slice", [make("Shape", [score], "bn2"), ints(1), ints(2)], "n2"), tcount], "rest"),
        ints(0)], "pads", axis=0)
    out = make("Pad", [out, pads, const(-1.0)], "padded")
    if p.get("out_format", "corner") != p.get("in_format", "corner"):
        a, b, c, d = make.split(make.columns(out, first, first + 4, "obox"), "o")
        if centre:
            new = _corners(make, a, b, c, d, "o")
        else:
            new = [make("Div", [make("Add", [a, c], "xsum"), const(2.0)], "x"),
                   make("Div", [make("Add", [b, d], "ysum"), const(2.0)], "y"),
                   make("Sub", [c, a], "w"), make("Sub", [d, b], "h")]
        head = [make.columns(out, 0, first, "head")] if first > 0 else []
        converted = make("Concat", head + new + [make.columns(out, first + 4, BIG, "tail")],
                         "converted", axis=2)
        out = make("Where", [make("Not", [make("Less", [a, const(0.0)], "negative")], "row"),
                             converted, out], "formatted")
    return [make("Reshape", [out, shape], "")] + rest
