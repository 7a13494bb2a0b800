"""Rules for the detection family: anchors, box targets and decoding, non-maximum
suppression and region proposals, as MXNet 1.9.1 infers their shapes and dtypes.

Owns ``_contrib_MultiBoxPrior``, ``_contrib_MultiBoxTarget``,
``_contrib_MultiBoxDetection``, ``_contrib_Proposal`` and ``_contrib_MultiProposal``
(MXNet's legacy operators: float32 only, outputs refilled rather than merged, the hidden
``score`` output of the proposals filled too), and ``_contrib_box_nms`` (alias
``_contrib_box_non_maximum_suppression``, with its hidden second output),
``_contrib_box_iou``, ``_contrib_box_encode``, ``_contrib_box_decode`` and
``_contrib_bipartite_matching`` (one dtype for every input and output, in both
directions).

What comes back from outputs or goes sideways, as in MXNet: the proposals fill
``bbox_pred`` ``(N, 2A, H, W)`` and ``im_info`` ``(N, 3)`` from ``cls_prob``;
``box_encode`` fills ``means`` and ``stds`` as ``(4,)``; nothing else is inferred
backward (a known output only meets what the op computes).  Most of these ops refuse a
data whose rank (or the sizes they check) is unknown when they are reached; the
proposals and ``box_nms`` wait instead.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops.base import Call, Rule, RuleError, Shape, elemwise_type, fmt, table
from mxexplorer.core.ops.sequence import count_inputs, no_negative, put_out

_U32 = 1 << 32


def _i32(x: int) -> int:
    """A value stored into a C ``int``."""
    x %= _U32
    return x - _U32 if x >= 1 << 31 else x


# ------------------------------------------------------------------ shared steps
def _count(c: Call) -> None:
    count_inputs(c, _INPUTS[_canonical(c.op)])


def _canonical(op: str) -> str:
    """The op's own name (``_contrib_box_non_maximum_suppression``, ``_npx_...``
    aliases name it otherwise)."""
    return opinfo.canonical_op(op)


def _shape(c: Call, i: int, need: str) -> Shape:
    """Input ``i``'s shape, which the op reads now: refused when its rank is unknown."""
    s = c.ins[i]
    if s is None:
        c.fail(f"the shape of {c.input_label(i)} is unknown: {_canonical(c.op)} needs "
               f"{need} when it is reached", input=i)
    assert s is not None
    return tuple(s)


def _rank(c: Call, i: int, s: Shape, least: int, exact: bool, what: str) -> None:
    if len(s) < least or (exact and len(s) != least):
        need = f"{least}-d" if exact else f"at least {least}-d"
        c.fail(f"{c.input_label(i)} has shape {fmt(s)}, but {_canonical(c.op)} needs {need} "
               f"{what}", input=i)


def _last4(c: Call, i: int, s: Shape, what: str) -> None:
    if s[-1] != 4:
        c.fail(f"{c.input_label(i)} has shape {fmt(s)}, but its last axis must be 4 "
               f"({what})", input=i)


# ================================================================ legacy dtypes
def float32_only(c: Call) -> None:
    """A legacy operator without its own ``InferType``: every input float32 (or
    unknown, then float32), every output float32."""
    _count(c)
    for i, t in enumerate(c.ins):
        if t is not None and t != "float32":
            c.fail(f"{c.input_label(i)} has type {t}, but {_canonical(c.op)} takes float32 "
                   f"only", input=i)
    c.ins[:] = ["float32"] * len(c.ins)
    for i in range(len(c.outs)):
        put_out(c, i, "float32")


def counted_elemwise(c: Call) -> None:
    """``ElemwiseType<n_in, n_out>``: the input count checked, then one dtype for every
    input and output (hidden ones too)."""
    _count(c)
    elemwise_type(c)


# ================================================================ MultiBoxPrior
def _tuple_len(value: Any) -> int:
    """The length MXNet sees for a tuple attribute (``None`` reads as -1)."""
    return -1 if value is None else len(value)


def multibox_prior_shape(c: Call) -> None:
    """``MultiBoxPriorProp::InferShape``: data at least 4-d with known height and width;
    output ``(1, H*W*(len(sizes)+len(ratios)-1), 4)``; steps must have 2 values."""
    _count(c)
    data = _shape(c, 0, "the data's rank, height and width")
    _rank(c, 0, data, 4, False, "data (batch, channel, height, width)")
    h, w = _i32(data[2]), _i32(data[3])
    if h <= 0:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}: MultiBoxPrior needs its height "
               f"(axis 2) known and above 0", input=0)
    if w <= 0:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}: MultiBoxPrior needs its width "
               f"(axis 3) known and above 0", input=0)
    sizes, ratios = _tuple_len(c.p["sizes"]), _tuple_len(c.p["ratios"])
    put_out(c, 0, (1, _i32(_i32(h * w) * (sizes + ratios - 1)), 4))
    steps = c.p["steps"]
    if _tuple_len(steps) != 2:
        c.fail(f"steps={c.attrs.get('steps')} must have 2 values (step_y, step_x); use -1 "
               f"for automatic steps", attr="steps")
    no_negative(c, f"sizes and ratios give {sizes} + {ratios} - 1 anchors per position: "
                   f"give at least one size and one ratio")


# =============================================================== MultiBoxTarget
def multibox_target_shape(c: Call) -> None:
    """``MultiBoxTargetProp::InferShape``: anchor ``(1, A, 4)``, label ``(N, L, W>=5)``,
    cls_pred ``(N, C, A)``; outputs ``(N, 4A)``, ``(N, 4A)``, ``(N, A)``."""
    _count(c)
    anchor = _shape(c, 0, "the anchors' shape (1, anchors, 4)")
    _rank(c, 0, anchor, 3, True, "anchors (1, anchors, 4)")
    if anchor[0] != 1:
        c.fail(f"{c.input_label(0)} has shape {fmt(anchor)}, but the anchors are shared "
               f"across the batch: its first axis must be 1", input=0)
    if anchor[1] <= 0:
        c.fail(f"{c.input_label(0)} has shape {fmt(anchor)}: MultiBoxTarget needs the "
               f"number of anchors (axis 1) known and above 0", input=0)
    _last4(c, 0, anchor, "xmin, ymin, xmax, ymax")
    label = _shape(c, 1, "the labels' shape (batch, labels, width)")
    _rank(c, 1, label, 3, True, "labels (batch, labels, width)")
    if label[1] <= 0:
        c.fail(f"{c.input_label(1)} has shape {fmt(label)}: MultiBoxTarget needs the "
               f"number of labels (axis 1) known and above 0", input=1)
    if label[2] < 5:
        c.fail(f"{c.input_label(1)} has shape {fmt(label)}: MultiBoxTarget needs label "
               f"rows (axis 2) of at least 5 values (class, xmin, ymin, xmax, ymax)",
               input=1)
    pred = _shape(c, 2, "the predictions' shape (batch, classes, anchors)")
    _rank(c, 2, pred, 3, True, "class predictions (batch, classes, anchors)")
    if pred[2] != anchor[1]:
        c.fail(f"{c.input_label(2)} has shape {fmt(pred)}, but there are {anchor[1]} "
               f"anchors: its axis 2 must be {anchor[1]}", input=2)
    boxes = anchor[0] * anchor[1] * anchor[2]
    put_out(c, 0, (label[0], boxes))
    put_out(c, 1, (label[0], boxes))
    put_out(c, 2, (label[0], anchor[1]))


# ============================================================ MultiBoxDetection
def multibox_detection_shape(c: Call) -> None:
    """``MultiBoxDetectionProp::InferShape``: cls_prob ``(N, C, A)``, loc_pred
    ``(N, 4A)``, anchor ``(1, A, 4)``; output ``(N, A, 6)``."""
    _count(c)
    cls = _shape(c, 0, "the class probabilities' shape (batch, classes, anchors)")
    loc = _shape(c, 1, "the location predictions' shape (batch, 4 x anchors)")
    anchor = _shape(c, 2, "the anchors' shape (1, anchors, 4)")
    _rank(c, 0, cls, 3, True, "class probabilities (batch, classes, anchors)")
    _rank(c, 1, loc, 2, True, "location predictions (batch, 4 x anchors)")
    _rank(c, 2, anchor, 3, True, "anchors (1, anchors, 4)")
    if cls[2] != anchor[1]:
        c.fail(f"{c.input_label(0)} has shape {fmt(cls)}, but {c.input_label(2)} has "
               f"{fmt(anchor)}: the number of anchors (their axes 2 and 1) must agree",
               input=0)
    if cls[2] * 4 != loc[1]:
        if cls[2] < 0:
            c.fail(f"{c.input_label(0)} has shape {fmt(cls)}: MultiBoxDetection needs "
                   f"the number of anchors (axis 2) known", input=0)
        c.fail(f"{c.input_label(1)} has shape {fmt(loc)}, but {cls[2]} anchors need "
               f"{cls[2] * 4} location values (axis 1)", input=1)
    if anchor[1] <= 0:
        c.fail(f"{c.input_label(2)} has shape {fmt(anchor)}: the number of anchors must "
               f"be above 0", input=2)
    _last4(c, 2, anchor, "xmin, ymin, xmax, ymax")
    put_out(c, 0, (cls[0], anchor[1], 6))


# ===================================================== Proposal, MultiProposal
def proposal_shape(c: Call) -> None:
    """``ProposalProp``/``MultiProposalProp::InferShape``: waits for cls_prob
    ``(N, 2A, H, W)`` fully known; bbox_pred ``(N, 4A, H, W)``, im_info ``(N, 3)``;
    outputs ``(R, 5)`` and the score ``(R, 1)``, R = rpn_post_nms_top_n (times N for
    MultiProposal)."""
    _count(c)
    cls = c.ins[0]
    if cls is None or any(d < 0 for d in cls):
        return
    if len(cls) < 4:
        c.fail(f"{c.input_label(0)} has shape {fmt(cls)}, but {_canonical(c.op)} needs 4-d "
               f"class probabilities (batch, 2 x anchors, height, width)", input=0)
    n = cls[0]
    c.set_in(1, (n, cls[1] * 2, cls[2], cls[3]), "the class probabilities need")
    c.set_in(2, (n, 3), "one (height, width, scale) row per image needs")
    post = int(c.p["rpn_post_nms_top_n"])
    rows = n * post if _canonical(c.op) == "_contrib_MultiProposal" else post
    put_out(c, 0, (rows, 5))
    put_out(c, 1, (rows, 1))
    no_negative(c, f"rpn_post_nms_top_n={post} must not be negative")


# ====================================================================== box_nms
def box_nms_shape(c: Call) -> None:
    """``BoxNMSShape``: waits until the data or the output is fully known; data at least
    2-d with rows wide enough for the score, the 4 coordinates and the class id; output
    like the data, the hidden second output with a last axis of 1."""
    _count(c)
    data, out = c.ins[0], c.outs[0]
    if (data is None or any(d < 0 for d in data)) and \
            (out is None or any(d < 0 for d in out)):
        return
    if data is None or len(data) < 2:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but box_nms needs data of rank "
               f"2 or more (..., boxes, box width)", input=0)
    assert data is not None
    width = _i32(data[-1])
    ids = int(c.p["id_index"])
    least = 6 if ids >= 0 else 5
    if width < least:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but box_nms needs rows of at "
               f"least {least} values (score, 4 coordinates"
               f"{', class id' if ids >= 0 else ''}) on the last axis", input=0)
    start = int(c.p["coord_start"])
    end = start + 3
    score = int(c.p["score_index"])
    if not 0 <= score < width:
        c.fail(f"score_index={score} is outside the rows of {width} values: use 0 to "
               f"{width - 1}", attr="score_index")
    if start <= score <= end:
        c.fail(f"score_index={score} falls on the coordinates (coord_start={start}, so "
               f"values {start} to {end})", attr="score_index")
    if not (start >= 0 and end < width):
        c.fail(f"coord_start={start} puts the 4 coordinates at values {start} to {end}, "
               f"outside the rows of {width} values: use 0 to {width - 4}",
               attr="coord_start")
    if ids >= 0:
        if ids >= width:
            c.fail(f"id_index={ids} is outside the rows of {width} values: use 0 to "
                   f"{width - 1}, or -1 for no class id", attr="id_index")
        if start <= ids <= end:
            c.fail(f"id_index={ids} falls on the coordinates (coord_start={start}, so "
                   f"values {start} to {end})", attr="id_index")
        if ids == score:
            c.fail(f"id_index={ids} is the score's position too (score_index={score})",
                   attr="id_index")
    c.set_out(0, data, "(like the data)")
    c.set_out(1, data[:-1] + (1,))


# ====================================================================== box_iou
def box_iou_shape(c: Call) -> None:
    """``BoxOverlapShape``: lhs ``(..., 4)`` and rhs ``(..., 4)``, at least 2-d;
    output ``lhs[:-1] + rhs[:-1]``."""
    _count(c)
    lhs = _shape(c, 0, "the boxes' rank and their last axis of 4")
    _rank(c, 0, lhs, 2, False, "boxes (..., 4)")
    _last4(c, 0, lhs, "the box coordinates")
    rhs = _shape(c, 1, "the boxes' rank and their last axis of 4")
    _rank(c, 1, rhs, 2, False, "boxes (..., 4)")
    _last4(c, 1, rhs, "the box coordinates")
    c.set_out(0, lhs[:-1] + rhs[:-1])


# ========================================================== bipartite_matching
def bipartite_matching_shape(c: Call) -> None:
    """``MatchingShape``: scores ``(..., rows, cols)``; outputs ``(..., rows)`` and
    ``(..., cols)``."""
    _count(c)
    data = _shape(c, 0, "the score matrix's rank")
    _rank(c, 0, data, 2, False, "scores (..., rows, columns)")
    c.set_out(0, data[:-1])
    c.set_out(1, data[:-2] + data[-1:])


# ================================================================== box_encode
def box_encode_shape(c: Call) -> None:
    """``BoxEncodeShape``: samples 2-d, matches at least 2-d, anchors and refs at least
    3-d ending in 4; means and stds ``(4,)``; both outputs like the anchors."""
    _count(c)
    samples = _shape(c, 0, "the samples' rank")
    _rank(c, 0, samples, 2, True, "samples (batch, anchors)")
    matches = _shape(c, 1, "the matches' rank")
    _rank(c, 1, matches, 2, False, "matches (batch, anchors)")
    anchors = _shape(c, 2, "the anchors' rank and their last axis of 4")
    _rank(c, 2, anchors, 3, False, "anchors (batch, anchors, 4)")
    _last4(c, 2, anchors, "the box coordinates")
    refs = _shape(c, 3, "the references' rank and their last axis of 4")
    _rank(c, 3, refs, 3, False, "reference boxes (batch, boxes, 4)")
    _last4(c, 3, refs, "the box coordinates")
    c.set_in(4, (4,), "one value per coordinate needs")
    c.set_in(5, (4,), "one value per coordinate needs")
    c.set_out(0, anchors, "(like the anchors)")
    c.set_out(1, anchors, "(like the anchors)")


# ================================================================== box_decode
def box_decode_shape(c: Call) -> None:
    """``BoxDecodeShape``: data ``(B, N, 4)``, anchors at least 3-d ending in 4; output
    like the data."""
    _count(c)
    data = _shape(c, 0, "the data's rank and its last axis of 4")
    _rank(c, 0, data, 3, True, "box offsets (batch, boxes, 4)")
    _last4(c, 0, data, "the box offsets")
    anchors = _shape(c, 1, "the anchors' rank and their last axis of 4")
    _rank(c, 1, anchors, 3, False, "anchors (1, boxes, 4)")
    _last4(c, 1, anchors, "the box coordinates")
    c.set_out(0, data, "(like the data)")


_INPUTS: dict[str, Sequence[str]] = {
    "_contrib_MultiBoxPrior": ("data",),
    "_contrib_MultiBoxTarget": ("anchor", "label", "cls_pred"),
    "_contrib_MultiBoxDetection": ("cls_prob", "loc_pred", "anchor"),
    "_contrib_Proposal": ("cls_prob", "bbox_pred", "im_info"),
    "_contrib_MultiProposal": ("cls_prob", "bbox_pred", "im_info"),
    "_contrib_box_nms": ("data",),
    "_contrib_box_iou": ("lhs", "rhs"),
    "_contrib_bipartite_matching": ("data",),
    "_contrib_box_encode": ("samples", "matches", "anchors", "refs", "means", "stds"),
    "_contrib_box_decode": ("data", "anchors"),
}

RULES: dict[str, Rule] = {
    **table("detection", ["_contrib_MultiBoxPrior"], multibox_prior_shape, float32_only),
    **table("detection", ["_contrib_MultiBoxTarget"], multibox_target_shape, float32_only),
    **table("detection", ["_contrib_MultiBoxDetection"], multibox_detection_shape,
            float32_only),
    **table("detection", ["_contrib_Proposal", "_contrib_MultiProposal"], proposal_shape,
            float32_only),
    **table("detection", ["_contrib_box_nms"], box_nms_shape, counted_elemwise),
    **table("detection", ["_contrib_box_iou"], box_iou_shape, counted_elemwise),
    **table("detection", ["_contrib_bipartite_matching"], bipartite_matching_shape,
            counted_elemwise),
    **table("detection", ["_contrib_box_encode"], box_encode_shape, counted_elemwise),
    **table("detection", ["_contrib_box_decode"], box_decode_shape, counted_elemwise),
}

__all__ = ["RULES", "RuleError"]
