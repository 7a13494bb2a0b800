"""Our exporter's detection ops (SSD's anchors, detections and box NMS, ROIAlign,
box_decode), judged by MXNet's inference forward, row for row."""
from __future__ import annotations

import json

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from tests.core.convert.own.harness import agree, export

SHAPES = {"data": (1, 4, 3, 3), "cls": (2, 4, 36), "loc": (2, 36 * 4)}


@pytest.mark.parametrize("attrs, shape", [
    ({"sizes": (0.2, 0.4), "ratios": (1, 2, 0.5)}, (1, 3, 8, 6)),
    ({"sizes": (0.5, 0.9), "ratios": (1, 3), "clip": True, "steps": (0.1, 0.2),
      "offsets": (0.3, 0.7)}, (2, 3, 5, 7)),
    ({}, (1, 2, 3, 3)),
    ({"sizes": (0.7,), "ratios": (2, 1, 0.25), "clip": True}, (1, 1, 4, 9)),
])
def test_multibox_prior_is_mxnets_anchors_as_a_constant(attrs, shape) -> None:
    net = mx.sym.contrib.MultiBoxPrior(mx.sym.var("data"), name="anchors", **attrs)
    built = agree(net, {"data": shape}, tolerance=1e-7)
    assert [n.op_type for n in built.model.graph.node] == ["Identity"]
    assert not built.model.graph.input


def test_the_old_multibox_prior_name_gives_the_same_anchors() -> None:
    """mxnet-ssd's graphs (the corpus's ssd_300) name the op MultiBoxPrior."""
    net = mx.sym.contrib.MultiBoxPrior(mx.sym.var("data"), sizes=(0.3, 0.6),
                                       ratios=(1, 2), clip=True, name="anchors")
    graph = json.loads(net.tojson())
    want = export(net.tojson(), {"data": (1, 3, 4, 5)})[0]
    graph["nodes"][1]["op"] = "MultiBoxPrior"
    got = export(json.dumps(graph), {"data": (1, 3, 4, 5)})[0]
    assert got.model.graph.initializer[0] == want.model.graph.initializer[0]


def _detection(**attrs):
    anchors = mx.sym.contrib.MultiBoxPrior(mx.sym.var("data"), sizes=(0.3, 0.6),
                                           ratios=(1, 2, 0.5), name="anchors")
    return mx.sym.contrib.MultiBoxDetection(mx.sym.var("cls"), mx.sym.var("loc"), anchors,
                                            name="det", **attrs)


def _feed(seed: int, ties: bool, shapes=SHAPES) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    e = np.exp(3 * rng.uniform(-1, 1, shapes["cls"]))
    prob = e / e.sum(1, keepdims=True)
    if ties:
        prob = np.floor(prob * 8) / 8
    return {"cls": prob.astype("float32"),
            "loc": (0.5 * rng.uniform(-1, 1, shapes["loc"])).astype("float32")}


#: MultiBoxDetection attribute sets (the mx2onnx route's tests use them too)
MULTIBOX_CASES = [
    {},
    {"force_suppress": True},
    {"nms_topk": 7},
    {"force_suppress": True, "nms_topk": 7, "threshold": 0.3},
    {"clip": False, "nms_threshold": 0.3, "variances": (0.2, 0.1, 0.3, 0.25)},
    {"nms_threshold": 0},                  # no NMS: the valid rows in anchor order
    {"threshold": 0.99},                   # nothing valid: all -1
]


@pytest.mark.parametrize("attrs", MULTIBOX_CASES)
@pytest.mark.parametrize("ties", [False, True])
def test_multibox_detection_is_mxnets_rows(attrs, ties) -> None:
    net = _detection(**attrs)
    for seed in range(3):
        agree(net, SHAPES, feed=_feed(seed, ties), tolerance=1e-5)


def test_twin_boxes_at_nms_threshold_one_are_suppressed() -> None:
    """MXNet suppresses from the IoU threshold on, ONNX's NMS above it."""
    anchors = mx.sym.contrib.MultiBoxPrior(mx.sym.var("data"), sizes=(0.3, 0.3),
                                           name="anchors")
    net = mx.sym.contrib.MultiBoxDetection(mx.sym.var("cls"), mx.sym.var("loc"), anchors,
                                           nms_threshold=1, name="det")
    shapes = {"data": (1, 4, 3, 3), "cls": (2, 4, 18), "loc": (2, 18 * 4)}
    feed = _feed(11, False, shapes)
    feed["loc"] *= 0
    agree(net, shapes, feed=feed, tolerance=1e-6)


# ------------------------------------------------------------------ box_nms
CORNER, CENTER = (0, 1, 2, 3, 4, 5), (0, 1, 6, 7, 8, 9)


def _rows(shape, seed, order=CORNER, ties=False, disordered=False) -> np.ndarray:
    """Rows of the fields ``order`` names: classes 0-2, scores in [-1, 1] (quarters
    with ``ties``), boxes of sides 0.3 to 0.7 near the origin (negative sides with
    ``disordered``); fields 2-5 corners, 6-9 centre and size, 10 a spare value."""
    raw = np.random.default_rng(seed).uniform(-1, 1, shape[:-1] + (6,))
    col = [raw[..., k:k + 1] for k in range(6)]
    score = np.floor(col[1] * 4) / 4 if ties else col[1]
    x, y = col[2] * 0.3, col[3] * 0.3
    w, h = (0.1 + 0.3 * col[4], 0.1 + 0.3 * col[5]) if disordered else \
        (0.5 + 0.2 * col[4], 0.5 + 0.2 * col[5])
    fields = [np.floor(col[0] * 1.5 + 1.5), score, x, y, x + w, y + h,
              x + w / 2, y + h / 2, w, h, col[4] * 7]
    return np.concatenate([fields[k] for k in order], axis=-1).astype("float32")


def _nms_agrees(shape, order=CORNER, seeds=4, ties=False, disordered=False,
                **attrs) -> None:
    net = mx.sym.contrib.box_nms(mx.sym.var("raw"), name="nms", **attrs)
    shape = shape[:-1] + (len(order),)
    for seed in range(seeds):
        agree(net, {"raw": shape}, feed={"raw": _rows(shape, seed, order, ties,
                                                      disordered)}, tolerance=1e-6)


@pytest.mark.parametrize("attrs", [
    {}, {"id_index": 0}, {"id_index": 0, "force_suppress": True},
    {"id_index": 0, "topk": 5}, {"topk": 5, "valid_thresh": 0.3, "overlap_thresh": 0.3},
    {"id_index": 0, "topk": 100, "overlap_thresh": 0.4},
    {"id_index": 0, "background_id": 1},
    {"id_index": 0, "background_id": 0, "valid_thresh": -0.5},
    {"topk": 0}, {"valid_thresh": 1.0},
])
@pytest.mark.parametrize("ties", [False, True])
def test_box_nms_is_mxnets_rows(attrs, ties) -> None:
    _nms_agrees((2, 16, 6), ties=ties, **attrs)


#: box_nms column orders and formats (the mx2onnx route's tests use them too)
BOX_NMS_FORMATS = [
    ((2, 3, 4, 5, 1, 0), {"coord_start": 0, "score_index": 4, "id_index": 5}),
    ((10, 1, 0, 2, 3, 4, 5), {"coord_start": 3, "score_index": 1, "id_index": 2,
                              "topk": 9}),
    (CENTER, {"in_format": "center", "out_format": "center", "id_index": 0}),
    (CENTER, {"in_format": "center", "out_format": "corner", "force_suppress": True,
              "id_index": 0}),
    (CORNER, {"in_format": "corner", "out_format": "center", "topk": 7}),
]


@pytest.mark.parametrize("order, attrs", BOX_NMS_FORMATS)
def test_box_nms_reads_its_columns_and_formats(order, attrs) -> None:
    _nms_agrees((2, 16, 6), order, **attrs)


@pytest.mark.parametrize("shape", [(16, 6), (2, 3, 12, 6)])
def test_box_nms_of_two_and_four_dimensional_rows(shape) -> None:
    _nms_agrees(shape, id_index=0, topk=8)


def test_box_nms_of_boxes_with_negative_sides() -> None:
    _nms_agrees((2, 16, 6), disordered=True, overlap_thresh=0.2)


def test_box_nms_at_opset_18() -> None:
    net = mx.sym.contrib.box_nms(mx.sym.var("raw"), id_index=0, topk=5, name="nms")
    built = agree(net, {"raw": (2, 16, 6)}, feed={"raw": _rows((2, 16, 6), 0)},
                  opset=18, tolerance=1e-6)
    assert built.opset == 18


# ------------------------------------------------------------------ ROIAlign
def _rois(count: int, batch: int, size: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0, size * 0.7, (count, 2))
    b = a + rng.uniform(0.3, size * 0.5, (count, 2))
    return np.concatenate([rng.integers(0, batch, (count, 1)), a, b],
                          axis=1).astype("float32")


@pytest.mark.parametrize("attrs", [
    {"pooled_size": (2, 2), "spatial_scale": 1.0},
    {"pooled_size": (3, 2), "spatial_scale": 0.5, "sample_ratio": 2},
    {"pooled_size": (2, 3), "spatial_scale": 0.25},
    {"pooled_size": (2, 2), "spatial_scale": 0.5, "aligned": True},
    {"pooled_size": (3, 3), "spatial_scale": 1.0, "sample_ratio": 1, "aligned": True},
])
def test_roi_align_is_onnx_roialign(attrs) -> None:
    shape, scale = (2, 3, 9, 11), attrs["spatial_scale"]
    net = mx.sym.contrib.ROIAlign(mx.sym.var("data"), mx.sym.var("rois"), name="roi",
                                  **attrs)
    rois = _rois(5, 2, 10 / scale)
    opset = 16 if attrs.get("aligned") else None
    agree(net, {"data": shape, "rois": rois.shape}, feed={"rois": rois}, opset=opset)
    if not attrs.get("aligned"):
        agree(net, {"data": shape, "rois": rois.shape}, feed={"rois": rois}, opset=16)


def test_roi_align_refuses_what_onnx_lacks() -> None:
    net = mx.sym.contrib.ROIAlign(mx.sym.var("data"), mx.sym.var("rois"), name="roi",
                                  pooled_size=(2, 2), spatial_scale=1.0, aligned=True)
    with pytest.raises(NoOnnxMeaning, match="opset 16"):
        export(net, {"data": (1, 2, 5, 5), "rois": (3, 5)})
    net = mx.sym.contrib.ROIAlign(mx.sym.var("data"), mx.sym.var("rois"), name="roi",
                                  pooled_size=(2, 2), spatial_scale=1.0,
                                  position_sensitive=True)
    with pytest.raises(NoOnnxMeaning, match="position_sensitive"):
        export(net, {"data": (1, 4, 5, 5), "rois": (3, 5)})


# ------------------------------------------------------------------ box_decode
@pytest.mark.parametrize("attrs", [
    {}, {"format": "corner"}, {"std0": 0.1, "std1": 0.2, "std2": 0.3, "std3": 0.4},
    {"format": "corner", "clip": 0.2, "std2": 2.0},
])
def test_box_decode_is_mxnets(attrs) -> None:
    net = mx.sym.contrib.box_decode(mx.sym.var("deltas"), mx.sym.var("anchors"),
                                    name="dec", **attrs)
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 0.5, (1, 7, 2))
    anchors = np.concatenate([a, a + rng.uniform(0.1, 0.5, (1, 7, 2))], -1)
    agree(net, {"deltas": (3, 7, 4), "anchors": (1, 7, 4)},
          feed={"anchors": anchors.astype("float32")})


def test_multibox_target_is_refused() -> None:
    anchors = mx.sym.contrib.MultiBoxPrior(mx.sym.var("data"), sizes=(0.3,), name="a")
    target = mx.sym.contrib.MultiBoxTarget(anchors, mx.sym.var("label"), mx.sym.var("cls"),
                                           name="target")
    net = mx.sym.FullyConnected(target[0], num_hidden=2, name="fc")
    with pytest.raises(NoOnnxMeaning, match="training targets"):
        export(net, {"data": (1, 2, 3, 3), "label": (1, 2, 5), "cls": (1, 2, 9)})


@pytest.mark.parametrize("topk, rows", [(400, 1200), (1600, 900)])
def test_box_nms_as_the_corpus_detectors_use_it(topk, rows) -> None:
    """djl's ssd_512_resnet50_v1 (topk 400) and a YOLOv3 (topk 1600): per-class NMS at
    0.45 of rows [class, score, box] with scores from 0.01."""
    net = mx.sym.contrib.box_nms(mx.sym.var("raw"), coord_start=2, score_index=1,
                                 id_index=0, overlap_thresh=0.45, topk=topk,
                                 valid_thresh=0.01, force_suppress=False, name="nms")
    shape = (1, rows, 6)
    data = _rows(shape, 5)
    data[..., 1] = np.abs(data[..., 1])
    agree(net, {"raw": shape}, feed={"raw": data}, tolerance=1e-6)
