"""ONNX export of SSD's box decoding and NMS (``_contrib_MultiBoxDetection``), checked
against MXNet's forward of the original graph and, on more random inputs, row for row."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.convert import onnx_export
from mxexplorer.core.graph.document import GraphDocument

SHAPES = {"data": (1, 4, 3, 3), "cls": (2, 4, 36), "loc": (2, 36 * 4)}


def _detection(ties: bool = False, **attrs):
    """36 anchors (4 per cell of a 3x3 map) that overlap, so NMS suppresses; 3 classes
    and the background; with ``ties``, scores rounded down to eighths (equal scores)."""
    anchors = mx.sym.contrib.MultiBoxPrior(mx.sym.var("data"), sizes=(0.3, 0.6),
                                           ratios=(1, 2, 0.5), name="anchors")
    prob = mx.sym.softmax(mx.sym.var("cls") * 3, axis=1, name="prob")
    if ties:
        prob = mx.sym.floor(prob * 8, name="eighths") / 8
    loc = mx.sym.var("loc") * 0.5
    return mx.sym.contrib.MultiBoxDetection(prob, loc, anchors, name="det", **attrs)


def _export(net, shapes, tmp_path) -> onnx_export.ExportReport:
    doc = GraphDocument.from_json(net.tojson())
    return onnx_export.export(net.tojson(), shapes, str(tmp_path / "m.onnx"),
                              doc.operators(), check=True)


def _mxnet(net, feed):
    exe = net.simple_bind(mx.cpu(), grad_req="null", **{k: v.shape for k, v in feed.items()})
    for k, v in feed.items():
        exe.arg_dict[k][:] = v
    return exe.forward(is_train=False)[0].asnumpy()


def _feeds(seeds):
    for seed in seeds:
        rng = np.random.default_rng(seed)
        yield {k: rng.uniform(-1, 1, v).astype("float32") for k, v in SHAPES.items()}


def _suppressed(out) -> int:
    """Rows MXNet marked -1 but kept a score for (suppressed, or past nms_topk)."""
    return int(((out[..., 0] == -1) & (out[..., 1] != -1)).sum())


@pytest.mark.parametrize("attrs", [
    {},
    {"force_suppress": True},
    {"nms_topk": 7},
    {"force_suppress": True, "nms_topk": 7, "threshold": 0.3},
    {"clip": False, "nms_threshold": 0.3, "variances": (0.2, 0.1, 0.3, 0.25)},
    {"nms_threshold": 0},                  # no NMS: the valid rows in anchor order
    {"threshold": 0.99},                   # nothing valid: all -1
])
@pytest.mark.parametrize("ties", [False, True])
def test_multibox_detection_exports_as_mxnet_computes_it(tmp_path, attrs, ties) -> None:
    """Rows sorted by score (equal scores in anchor order), suppressed ones and those
    past nms_topk keeping their score and box with id -1, the rest -1 throughout."""
    import onnxruntime as ort

    net = _detection(ties, **attrs)
    report = _export(net, SHAPES, tmp_path)
    assert report.check is not None and report.check.agree, report.lines()
    session = ort.InferenceSession(str(tmp_path / "m.onnx"))
    names = [i.name for i in session.get_inputs()]
    marked = 0
    for feed in _feeds(range(5)):
        want = _mxnet(net, feed)
        got = session.run(None, {k: v for k, v in feed.items() if k in names})[0]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
        marked += _suppressed(want)
    if attrs.get("nms_threshold") != 0 and attrs.get("threshold") != 0.99:
        assert marked, "the inputs never made NMS (or nms_topk) mark a row"


@pytest.mark.parametrize("force", [False, True])
def test_boxes_overlapping_by_exactly_the_threshold_are_suppressed(tmp_path, force) -> None:
    """MXNet suppresses from the IoU threshold on, ONNX's NMS above it: twin anchors
    (IoU exactly 1) with nms_threshold=1 are suppressed all the same."""
    anchors = mx.sym.contrib.MultiBoxPrior(mx.sym.var("data"), sizes=(0.3, 0.3),
                                           name="anchors")
    prob = mx.sym.softmax(mx.sym.var("cls") * 3, axis=1, name="prob")
    net = mx.sym.contrib.MultiBoxDetection(prob, mx.sym.var("loc") * 0, anchors,
                                           nms_threshold=1, force_suppress=force,
                                           name="det")
    shapes = {"data": (1, 4, 3, 3), "cls": (2, 4, 18), "loc": (2, 18 * 4)}
    report = _export(net, shapes, tmp_path)
    assert report.check is not None and report.check.agree, report.lines()
    feed = {k: np.random.default_rng(11).uniform(-1, 1, v).astype("float32")
            for k, v in shapes.items()}
    assert _suppressed(_mxnet(net, feed)) >= (9 if force else 1)


@pytest.mark.parametrize("attrs", [{}, {"force_suppress": True, "nms_topk": 7}])
def test_multibox_detection_exports_at_opset_12(tmp_path, attrs) -> None:
    net = _detection(**attrs)
    doc = GraphDocument.from_json(net.tojson())
    report = onnx_export.export(net.tojson(), SHAPES, str(tmp_path / "m.onnx"),
                                doc.operators(), opset=12, check=True)
    assert report.check is not None and report.check.agree, report.lines()

