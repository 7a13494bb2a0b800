"""The detection family against MXNet 1.9.1 (the judge): MultiBoxPrior/Target/Detection,
Proposal and MultiProposal, box_nms, box_iou, bipartite_matching, box_encode and
box_decode, with attributes and input shapes or dtypes (partly unknown, missing, or
wrong) drawn by hypothesis, on which the engine and MXNet infer the same or both refuse;
and the plain-words messages.

Shapes are given in MXNet's legacy convention (0 an unknown dim, None not given); the
op's visible outputs may be "pinned" by a reader (see :func:`test_sequence.check`).
"""
from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.core.ops.test_sequence import (
    DTYPES,
    Legacy,
    check,
    dims,
    dtypes,
    message,
    mostly,
    shapes,
    varied,
)

FEW = settings(max_examples=40, deadline=None)
SOME = settings(max_examples=80, deadline=None)
MANY = settings(max_examples=120, deadline=None)

floats = st.sampled_from(["0.5", "1", "0.25", "2", "0.75"])


def ftuple(draw: st.DrawFn, lo: int, hi: int) -> str:
    items = draw(st.lists(floats, min_size=lo, max_size=hi))
    return "(" + ",".join(items) + ("," if len(items) == 1 else "") + ")"


def count_off(draw: st.DrawFn, values: list[Any]) -> list[Any]:
    """Now and then one input too few or too many."""
    if draw(st.integers(0, 12)) == 1:
        return values[:-1] if draw(st.booleans()) else values + [values[0]]
    return values


def float32_mostly() -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), st.just("float32"), st.just("float32"),
                     st.sampled_from(DTYPES))


# ================================================================ MultiBoxPrior
@MANY
@given(st.data())
def test_multibox_prior(data: st.DataObject) -> None:
    attrs: dict[str, str] = {}
    draw = data.draw
    if draw(st.booleans()):
        attrs["sizes"] = draw(st.sampled_from(["None", "()"])) if draw(
            st.integers(0, 8)) == 1 else ftuple(draw, 1, 3)
    if draw(st.booleans()):
        attrs["ratios"] = ftuple(draw, 0, 3)
    if draw(st.integers(0, 3)) == 1:
        attrs["steps"] = ftuple(draw, 1, 3)
    if draw(st.booleans()):
        attrs["offsets"] = "(0.5,0.5)"
    attrs["clip"] = str(draw(st.booleans()))
    n, ch, h, w = draw(st.tuples(dims, dims, dims, dims))
    shape = draw(mostly((n, ch, h, w), st.one_of(st.none(), shapes(1, 5)), 5))
    values = count_off(data.draw, [shape])
    sizes = len(attrs.get("sizes", "(1,)").strip("()").split(",")) if "sizes" in attrs \
        else 1
    k = max(sizes + len(attrs.get("ratios", "(1,)").strip("()").strip(",").split(",")) - 1,
            1)
    pin = draw(st.one_of(st.none(), varied((1, h * w * k, 4), 8)))
    check("_contrib_MultiBoxPrior", attrs, values, pins=[pin])


@FEW
@given(float32_mostly(), float32_mostly(), st.integers(0, 8))
def test_multibox_prior_dtypes(t: Any, pin: Any, extra: int) -> None:
    values = [t, "float32"] if extra == 1 else [t]
    check("_contrib_MultiBoxPrior", {}, values, "dtype", pins=[pin])


# =============================================================== MultiBoxTarget
@MANY
@given(st.data())
def test_multibox_target(data: st.DataObject) -> None:
    draw = data.draw
    n, a, labels, width, classes = draw(st.tuples(dims, dims, dims, st.sampled_from(
        [5, 6, 4, 0]), dims))
    anchor = draw(varied((1, a, 4), 8))
    label = draw(varied((n, labels, width), 8))
    pred = draw(varied((n, classes, a), 8))
    values = count_off(draw, [anchor, label, pred])
    pins = [draw(st.one_of(st.none(), varied(s, 8)))
            for s in ((n, 4 * a), (n, 4 * a), (n, a))]
    attrs = {"overlap_threshold": "0.5"}
    check("_contrib_MultiBoxTarget", attrs, values, pins=pins)


@FEW
@given(float32_mostly(), float32_mostly(), float32_mostly(), float32_mostly())
def test_multibox_target_dtypes(a: Any, b: Any, c: Any, pin: Any) -> None:
    check("_contrib_MultiBoxTarget", {}, [a, b, c], "dtype", pins=[pin, None, pin])


# ============================================================ MultiBoxDetection
@MANY
@given(st.data())
def test_multibox_detection(data: st.DataObject) -> None:
    draw = data.draw
    n, classes, a = draw(st.tuples(dims, dims, dims))
    cls = draw(varied((n, classes, a), 8))
    loc = draw(varied((n, 4 * a), 8))
    anchor = draw(varied((1, a, 4), 8))
    values = count_off(draw, [cls, loc, anchor])
    pin = draw(st.one_of(st.none(), varied((n, a, 6), 8)))
    check("_contrib_MultiBoxDetection", {"nms_topk": "5"}, values, pins=[pin])


@FEW
@given(float32_mostly(), float32_mostly(), float32_mostly(), float32_mostly())
def test_multibox_detection_dtypes(a: Any, b: Any, c: Any, pin: Any) -> None:
    check("_contrib_MultiBoxDetection", {}, [a, b, c], "dtype", pins=[pin])


# ===================================================== Proposal, MultiProposal
@MANY
@given(st.sampled_from(["_contrib_Proposal", "_contrib_MultiProposal"]), st.booleans(),
       st.sampled_from([300, 5, 1, 0, -1, -3]), st.data())
def test_proposals(op: str, score: bool, post: int, data: st.DataObject) -> None:
    draw = data.draw
    n, a, h, w = draw(st.tuples(dims, dims, dims, dims))
    cls = draw(mostly((n, 2 * a, h, w), st.one_of(st.none(), shapes(1, 5)), 6))
    bbox = draw(varied((n, 4 * a, h, w), 8))
    info = draw(varied((n, 3), 8))
    values = count_off(draw, [cls, bbox, info])
    rows = n * post if op == "_contrib_MultiProposal" else post
    pins = [draw(st.one_of(st.none(), varied((max(rows, 1), k), 8))) for k in (5, 1)]
    attrs = {"rpn_post_nms_top_n": str(post), "output_score": str(score)}
    check(op, attrs, values, pins=pins)


@FEW
@given(st.sampled_from(["_contrib_Proposal", "_contrib_MultiProposal"]), st.booleans(),
       float32_mostly(), float32_mostly(), float32_mostly(), float32_mostly())
def test_proposal_dtypes(op: str, score: bool, a: Any, b: Any, c: Any, pin: Any) -> None:
    check(op, {"output_score": str(score)}, [a, b, c], "dtype", pins=[pin, pin])


# ====================================================================== box_nms
@MANY
@given(st.sampled_from(["_contrib_box_nms", "_contrib_box_non_maximum_suppression"]),
       st.integers(1, 4), st.sampled_from([5, 6, 7, 4, 0]), st.data())
def test_box_nms(op: str, ndim: int, width: int, data: st.DataObject) -> None:
    draw = data.draw
    attrs = {"coord_start": str(draw(st.sampled_from([2, 2, 1, 0, 3, -1]))),
             "score_index": str(draw(st.sampled_from([1, 1, 0, 5, 2, -1, 6]))),
             "id_index": str(draw(st.sampled_from([-1, -1, 0, 5, 6, 1, 3]))),
             "background_id": str(draw(st.sampled_from([-1, 0, 2]))),
             "out_format": draw(st.sampled_from(["corner", "center"])),
             "topk": str(draw(st.sampled_from([-1, 3])))}
    shape = tuple(draw(st.lists(dims, min_size=ndim - 1, max_size=ndim - 1))) + (width,)
    values = count_off(draw, [draw(varied(shape, 8))])
    pin = draw(st.one_of(st.none(), varied(shape, 8)))
    check(op, attrs, values, pins=[pin])


# ====================================================================== box_iou
@MANY
@given(st.sampled_from(["corner", "center"]), st.data())
def test_box_iou(fmt: str, data: st.DataObject) -> None:
    draw = data.draw
    lhs = tuple(draw(st.lists(dims, min_size=0, max_size=3))) + (4,)
    rhs = tuple(draw(st.lists(dims, min_size=0, max_size=3))) + (4,)
    values = count_off(draw, [draw(varied(lhs, 8)), draw(varied(rhs, 8))])
    pin = draw(st.one_of(st.none(), varied(lhs[:-1] + rhs[:-1], 8)))
    check("_contrib_box_iou", {"format": fmt}, values, pins=[pin])


# ========================================================== bipartite_matching
@MANY
@given(shapes(), st.data())
def test_bipartite_matching(shape: Legacy, data: st.DataObject) -> None:
    draw = data.draw
    values = count_off(draw, [shape])
    pins: list[Legacy] = [None, None]
    if shape is not None and len(shape) >= 2:
        pins = [draw(st.one_of(st.none(), varied(shape[:-1], 8))),
                draw(st.one_of(st.none(), varied(shape[:-2] + shape[-1:], 8)))]
    check("_contrib_bipartite_matching", {"threshold": "0.5", "topk": "2"}, values,
          pins=pins)


# ================================================================== box_encode
@MANY
@given(st.data())
def test_box_encode(data: st.DataObject) -> None:
    draw = data.draw
    b, n, m = draw(st.tuples(dims, dims, dims))
    values = [draw(varied((b, n), 8)), draw(varied((b, n), 8)),
              draw(varied((b, n, 4), 8)), draw(varied((b, m, 4), 8)),
              draw(varied((4,), 8)), draw(varied((4,), 8))]
    values = count_off(draw, values)
    pins = [draw(st.one_of(st.none(), varied((b, n, 4), 8))) for _ in range(2)]
    check("_contrib_box_encode", {}, values, pins=pins)


# ================================================================== box_decode
@MANY
@given(st.sampled_from(["corner", "center"]), st.data())
def test_box_decode(fmt: str, data: st.DataObject) -> None:
    draw = data.draw
    b, n = draw(st.tuples(dims, dims))
    values = count_off(draw, [draw(varied((b, n, 4), 8)), draw(varied((1, n, 4), 8))])
    pin = draw(st.one_of(st.none(), varied((b, n, 4), 8)))
    check("_contrib_box_decode", {"format": fmt, "clip": "2"}, values, pins=[pin])


# ================================================================ shared dtypes
@SOME
@given(st.sampled_from([("_contrib_box_nms", 1, 1), ("_contrib_box_iou", 2, 1),
                        ("_contrib_bipartite_matching", 1, 2),
                        ("_contrib_box_encode", 6, 2), ("_contrib_box_decode", 2, 1)]),
       st.data())
def test_box_dtypes(spec: tuple[str, int, int], data: st.DataObject) -> None:
    op, n, visible = spec
    attrs = {"threshold": "0.5"} if op == "_contrib_bipartite_matching" else {}
    first = data.draw(dtypes)
    types = [data.draw(mostly(first, dtypes, 3)) for _ in range(n)]
    types = count_off(data.draw, types)
    pins = [data.draw(st.one_of(st.none(), st.just(first), dtypes)) for _ in range(visible)]
    check(op, attrs, types, "dtype", pins=pins)


# ============================================================== chosen examples
@given(st.just(None))
@settings(max_examples=1, deadline=None)
def test_chosen_shapes(_: None) -> None:
    verdict = check("_contrib_MultiBoxPrior", {"sizes": "(0.5,0.25)", "ratios": "(1,2,0.5)"},
                    [(1, 3, 4, 5)])
    assert verdict.outs == ((1, 80, 4),)
    verdict = check("_contrib_MultiProposal", {"output_score": "1",
                                               "rpn_post_nms_top_n": "7"},
                    [(2, 6, 5, 5), None, None])
    assert verdict.ins == ((2, 6, 5, 5), (2, 12, 5, 5), (2, 3))
    assert verdict.outs == ((14, 5), (14, 1))
    verdict = check("_contrib_box_encode", {}, [(2, 6), (2, 6), (2, 6, 4), (2, 3, 4), None,
                                               None])
    assert verdict.ins[4:] == ((4,), (4,)) and verdict.outs == ((2, 6, 4), (2, 6, 4))
    verdict = check("_contrib_bipartite_matching", {"threshold": "0.5"}, [(2, 6, 5)])
    assert verdict.outs == ((2, 6), (2, 5))
    verdict = check("_contrib_MultiBoxPrior", {}, [None], "dtype")
    assert verdict.ins == ("float32",)


# ====================================================================== messages
def test_multibox_prior_messages() -> None:
    assert "height" in message("_contrib_MultiBoxPrior", {}, [(1, 3, 0, 5)])
    assert "4-d" in message("_contrib_MultiBoxPrior", {}, [(1, 3, 5)])
    assert "steps" in message("_contrib_MultiBoxPrior", {"steps": "(1,2,3)"}, [(1, 3, 4, 5)])
    text = message("_contrib_MultiBoxPrior", {"sizes": "()", "ratios": "()"}, [(1, 3, 4, 5)])
    assert "sizes" in text and "ratios" in text
    text = message("_contrib_MultiBoxPrior", {}, ["float16"], "dtype")
    assert "'in0' (data)" in text and "float32" in text


def test_multibox_target_messages() -> None:
    text = message("_contrib_MultiBoxTarget", {}, [(2, 5, 4), (2, 3, 5), (2, 3, 5)])
    assert "'in0' (anchor)" in text and "first axis must be 1" in text
    text = message("_contrib_MultiBoxTarget", {}, [(1, 5, 4), (2, 3, 4), (2, 3, 5)])
    assert "'in1' (label)" in text and "at least 5" in text
    text = message("_contrib_MultiBoxTarget", {}, [(1, 5, 4), (2, 3, 5), (2, 3, 6)])
    assert "'in2' (cls_pred)" in text and "must be 5" in text


def test_multibox_detection_messages() -> None:
    text = message("_contrib_MultiBoxDetection", {}, [(2, 3, 5), (2, 16), (1, 5, 4)])
    assert "'in1' (loc_pred)" in text and "20" in text
    text = message("_contrib_MultiBoxDetection", {}, [(2, 3, 5), (2, 20), (1, 6, 4)])
    assert "anchors" in text


def test_proposal_messages() -> None:
    text = message("_contrib_Proposal", {}, [(2, 6, 5, 5), (2, 10, 5, 5), None])
    assert "'in1' (bbox_pred)" in text and "(2, 12, 5, 5)" in text
    assert "rpn_post_nms_top_n" in message("_contrib_Proposal",
                                           {"rpn_post_nms_top_n": "-3"},
                                           [(2, 6, 5, 5), None, None])
    assert "4-d" in message("_contrib_MultiProposal", {}, [(2, 6, 5), None, None])


def test_box_nms_messages() -> None:
    assert "score_index=3" in message("_contrib_box_nms", {"score_index": "3"}, [(2, 6)])
    assert "id_index=1" in message("_contrib_box_nms", {"id_index": "1"}, [(2, 6)])
    assert "coord_start=3" in message("_contrib_box_nms", {"coord_start": "3"}, [(2, 6)])
    text = message("_contrib_box_nms", {"id_index": "0"}, [(2, 5)])
    assert "at least 6" in text and "class id" in text


def test_box_op_messages() -> None:
    text = message("_contrib_box_iou", {}, [(2, 5), (3, 4)])
    assert "'in0' (lhs)" in text and "last axis must be 4" in text
    assert "unknown" in message("_contrib_box_iou", {}, [None, (3, 4)])
    text = message("_contrib_box_encode", {}, [(2, 6, 1), (2, 6), (2, 6, 4), (2, 3, 4),
                                               None, None])
    assert "'in0' (samples)" in text and "2-d" in text
    text = message("_contrib_box_encode", {}, [(2, 6), (2, 6), (2, 6, 4), (2, 3, 4),
                                               (3,), None])
    assert "'in4' (means)" in text and "(4,)" in text
    text = message("_contrib_box_decode", {}, [(2, 6, 4), (6, 4)])
    assert "'in1' (anchors)" in text and "3-d" in text
    assert "2 (data, anchors)" in message("_contrib_box_decode", {}, [(2, 6, 4)])
