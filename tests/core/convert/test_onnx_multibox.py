"""ONNX export of SSD's box decoding and NMS (``_contrib_MultiBoxDetection``), checked
against MXNet's forward of the original graph and, on more random inputs, row for row;
and of SSD's training graph, its training-only heads dropped."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.convert import onnx_export
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime.errors import UserError
from tests.conftest import CORPUS, require_corpus
from tests.core.convert.exporting import export_checked, mxnet_forward
from tests.core.convert.own.test_detection import MULTIBOX_CASES

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


def _feeds(seeds):
    for seed in seeds:
        rng = np.random.default_rng(seed)
        yield {k: rng.uniform(-1, 1, v).astype("float32") for k, v in SHAPES.items()}


def _suppressed(out) -> int:
    """Rows MXNet marked -1 but kept a score for (suppressed, or past nms_topk)."""
    return int(((out[..., 0] == -1) & (out[..., 1] != -1)).sum())


@pytest.mark.parametrize("attrs", MULTIBOX_CASES)
@pytest.mark.parametrize("ties", [False, True])
def test_multibox_detection_exports_as_mxnet_computes_it(tmp_path, attrs, ties) -> None:
    """Rows sorted by score (equal scores in anchor order), suppressed ones and those
    past nms_topk keeping their score and box with id -1, the rest -1 throughout."""
    import onnxruntime as ort

    net = _detection(ties, **attrs)
    report = export_checked(net, SHAPES, tmp_path)
    assert report.check is not None and report.check.agree, report.lines()
    session = ort.InferenceSession(str(tmp_path / "m.onnx"))
    names = [i.name for i in session.get_inputs()]
    marked = 0
    for feed in _feeds(range(5)):
        want = mxnet_forward(net, feed)
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
    report = export_checked(net, shapes, tmp_path)
    assert report.check is not None and report.check.agree, report.lines()
    feed = {k: np.random.default_rng(11).uniform(-1, 1, v).astype("float32")
            for k, v in shapes.items()}
    assert _suppressed(mxnet_forward(net, feed)) >= (9 if force else 1)


@pytest.mark.parametrize("attrs", [{}, {"force_suppress": True, "nms_topk": 7}])
def test_multibox_detection_needs_opset_13_on_the_mx2onnx_route(tmp_path, attrs) -> None:
    """mx2onnx's route converts it with our converter, which writes opset 13 or newer:
    at 12 it says so in one line naming the node; at 13 it agrees."""
    net = _detection(**attrs)
    with pytest.raises(UserError, match="'det' .*opset 13 or newer"):
        export_checked(net, SHAPES, tmp_path, opset=12)
    report = export_checked(net, SHAPES, tmp_path, opset=13)
    assert report.check is not None and report.check.agree, report.lines()


def _ssd_training():
    """SSD's training heads as mxnet-ssd writes them (the corpus's boats model):
    class probabilities, a smooth-L1 loss of the box offsets against MultiBoxTarget's
    targets, those targets (BlockGrad), and the detections."""
    anchors = mx.sym.contrib.MultiBoxPrior(mx.sym.var("data"), sizes=(0.3, 0.6),
                                           ratios=(1, 2, 0.5), name="anchors")
    cls_pred, loc_pred = mx.sym.var("cls_pred"), mx.sym.var("loc_pred")
    target = mx.sym.contrib.MultiBoxTarget(anchors, mx.sym.var("label"), cls_pred,
                                           name="multibox_target")
    loc_target, loc_mask, cls_target = target[0], target[1], target[2]
    cls_prob = mx.sym.SoftmaxOutput(cls_pred, cls_target, ignore_label=-1,
                                    use_ignore=True, multi_output=True,
                                    normalization="valid", name="cls_prob")
    loc_loss = mx.sym.MakeLoss(mx.sym.smooth_l1(loc_mask * (loc_pred - loc_target),
                                                scalar=1.0, name="loc_loss_"),
                               normalization="valid", name="loc_loss")
    cls_label = mx.sym.BlockGrad(cls_target, name="cls_label")
    det = mx.sym.contrib.MultiBoxDetection(cls_prob, loc_pred, anchors, nms_threshold=0.45,
                                           nms_topk=20, name="detection")
    det = mx.sym.MakeLoss(det, grad_scale=0, name="det_out")
    return mx.sym.Group([cls_prob, loc_loss, cls_label, det])


def test_ssd_training_heads_drop_the_loss_and_the_targets(tmp_path) -> None:
    """The smooth-L1 loss and MultiBoxTarget's targets need labels and mean nothing at
    inference: dropped (so their ops need no converter); the class probabilities and the
    detections are exported and agree."""
    shapes = {"data": (1, 4, 3, 3), "cls_pred": (2, 4, 36), "loc_pred": (2, 36 * 4),
              "label": (2, 3, 5)}
    report = export_checked(_ssd_training(), shapes, tmp_path)
    assert report.check is not None and report.check.agree, report.lines()
    assert [o.name for o in report.check.outputs] == ["cls_prob_output", "det_out_output"]
    fixes = " | ".join(report.fixes)
    assert "head 'loc_loss' dropped: a training loss" in fixes, fixes
    assert "head 'cls_label' dropped: the training targets" in fixes, fixes


@pytest.mark.corpus
def test_the_boats_ssd_training_graph_exports_its_probabilities_and_detections(
        tmp_path) -> None:
    """laurentCoach's boat detector (mxnet-ssd's training graph) was refused for
    MultiBoxTarget and smooth_l1.  Its class probabilities agree, and so do its
    detections: with random weights two rows of scores an ulp apart swap on upstream
    rounding, matched as rows of equal scores (they were said to differ, "rounding")."""
    require_corpus()
    path = CORPUS / ("laurentCoach__Boats-Detection-With-Google-Maps__model__"
                     "model_algo_1-symbol.json")
    doc = GraphDocument.open(str(path))
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": (1, 3, 512, 512),
                                                          "label": (1, 10, 6)},
                                         str(tmp_path / "boats.onnx"), check=True)
    assert report.check is not None
    probs, detections = report.check.outputs
    assert (probs.name, detections.name) == ("cls_prob_output", "det_out_output")
    assert probs.max_rel <= onnx_export.TOLERANCE, report.lines()
    assert report.check.agree and report.check.first is None, report.lines()
    assert detections.reordered in (0, 2), report.lines()     # 2 here (x86-64)
    dropped = [f for f in report.fixes if " dropped: " in f and f.startswith("head ")]
    assert [f.split("'")[1] for f in dropped] == ["loc_loss", "cls_label"], report.fixes


def test_an_input_only_the_anchors_read_leaves_the_other_inputs_their_shapes(
        tmp_path) -> None:
    """The anchors fold to constants, so an input only MultiBoxPrior reads (for its
    shape) is no input of the ONNX model; the shapes handed to MXNet's converter still
    counted it, and the input after it got its shape ("onnxruntime cannot run the
    exported model: Please fix either the inputs or the model", no node named)."""
    pooled = mx.sym.Pooling(mx.sym.var("x"), kernel=(2, 2), pool_type="max", name="pool")
    net = mx.sym.Group([_detection(), pooled])
    report = export_checked(net, {**SHAPES, "x": (1, 2, 4, 4)}, tmp_path)
    assert report.check is not None and report.check.agree, report.lines()
