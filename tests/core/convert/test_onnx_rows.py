"""Detection outputs (rows sorted by score) compared as MXNet defines them: rows whose
scores are equal within the tolerance may come in either order; anything else that
differs still differs (:mod:`onnx_rows`)."""
from __future__ import annotations

import mxnet as mx
import numpy as np

from mxexplorer.core.convert import onnx_check, onnx_rows
from tests.core.convert.exporting import export_checked

#: 1,600 anchors of a 20x20 map, 21 classes of near-equal logits: with the check's
#: random inputs, two rows' scores come out one ulp apart in MXNet and in onnxruntime,
#: in opposite orders (rows 844 and 845; of an SSD with random weights, ssd-tvm's)
SIDE, CLASSES = 20, 21
#: rows reordered: 2 with MXNet 1.9.1's and onnxruntime 1.16.3's CPU kernels as measured
#: here (x86-64); another CPU's rounding may leave them in order
SWAPPED = (0, 2)
SHAPES = {"data": (1, 4, SIDE, SIDE), "cls": (1, CLASSES, SIDE * SIDE * 4),
          "loc": (1, SIDE * SIDE * 16)}


def _ssd_head(data=None):
    data = mx.sym.var("data") if data is None else data
    anchors = mx.sym.contrib.MultiBoxPrior(data, sizes=(0.2, 0.4),
                                           ratios=(1, 2, 0.5), name="anchors")
    prob = mx.sym.softmax(mx.sym.var("cls") * 0.1, axis=1, name="prob")
    return mx.sym.contrib.MultiBoxDetection(prob, mx.sym.var("loc") * 0.5, anchors,
                                            name="det")


def test_detections_of_scores_an_ulp_apart_agree_in_either_order(tmp_path) -> None:
    """Compared element by element, the swap read as a difference of 7 (a class id
    against -1) and the export was said to differ."""
    report = export_checked(_ssd_head(), SHAPES, tmp_path)
    check = report.check
    assert check is not None and check.agree, report.lines()
    (det,) = check.outputs
    assert det.reordered in SWAPPED, report.lines()
    assert det.max_rel <= 1e-4
    if det.reordered:
        assert "2 rows of equal scores in another order (det_output)" in check.verdict()


def test_another_difference_beside_reordered_detections_is_still_named(tmp_path) -> None:
    """Lp pooling with p=3 is converted wrong (ONNX's LpPool takes |x|): beside the
    detections, it still differs, and the search passes the detection node (its rows
    matched) to name it."""
    data = mx.sym.var("data")
    lp = mx.sym.Pooling(mx.sym.Activation(data, act_type="tanh", name="act"),
                        kernel=(2, 2), pool_type="lp", p_value=3, name="lp")
    net = mx.sym.Group([_ssd_head(data), lp])
    report = export_checked(net, SHAPES, tmp_path)
    check = report.check
    assert check is not None and not check.agree, report.lines()
    det, pooled = check.outputs
    assert det.reordered in SWAPPED and det.max_rel <= 1e-4, report.lines()
    assert pooled.max_rel > 1, report.lines()
    assert check.first is not None and check.first.name == "lp", report.lines()


def _rows(k: int = 8):
    """(1, k, 6) rows [class, score, 4 coordinates], by falling score."""
    rng = np.random.default_rng(5)
    rows = np.concatenate([rng.integers(0, 3, (1, k, 1)),
                           np.sort(rng.uniform(0.1, 0.9, (1, k, 1)), axis=1)[:, ::-1],
                           rng.uniform(0, 1, (1, k, 4))], axis=2).astype("float32")
    return np.ascontiguousarray(rows)


def _compare(ref, got, rows):
    return onnx_check.compare(["det_output"], [ref], {"det": got}, 1e-4, "test",
                              {"det_output": rows})


def test_rows_of_clearly_different_scores_in_another_order_still_differ() -> None:
    ref = _rows()
    got = ref.copy()
    got[0, [2, 3]] = got[0, [3, 2]]
    report = _compare(ref, got, onnx_rows.Rows("det_output", 1))
    assert not report.agree and report.outputs[0].reordered == 0


def test_tied_rows_that_the_nms_resolved_differently_still_differ() -> None:
    """Two boxes of equal score that overlap: MXNet kept the first and suppressed the
    second (class -1), the other side the other way round: not the same detections."""
    ref = _rows()
    ref[0, 3, 1] = ref[0, 2, 1]
    got = ref.copy()
    got[0, [2, 3]] = got[0, [3, 2]]
    got[0, 2, 0], got[0, 3, 0] = ref[0, 2, 0], -1
    ref[0, 3, 0] = -1
    report = _compare(ref, got, onnx_rows.Rows("det_output", 1))
    assert not report.agree


def test_tied_rows_in_another_order_agree_and_are_counted() -> None:
    ref = _rows()
    ref[0, 3, 1] = np.nextafter(ref[0, 2, 1], np.float32(0))
    got = ref.copy()
    got[0, [2, 3]] = got[0, [3, 2]]
    report = _compare(ref, got, onnx_rows.Rows("det_output", 1))
    assert report.agree and report.outputs[0].reordered == 2, report.verdict()
    # the same arrays, not known to be detections: they differ
    plain = onnx_check.compare(["det_output"], [ref], {"det": got}, 1e-4, "test")
    assert not plain.agree


def _yolo_heads():
    """GluonCV's YOLOv3 ends: box_nms, its first rows, and their ids, scores and boxes
    (three column slices), each a head."""
    nms = mx.sym.contrib.box_nms(mx.sym.var("raw"), overlap_thresh=0.45, topk=10,
                                 valid_thresh=0.01, id_index=0, score_index=1,
                                 coord_start=2, name="nms")
    first = mx.sym.slice_axis(nms, axis=1, begin=0, end=4, name="first")
    return mx.sym.Group([first] + [mx.sym.slice_axis(first, axis=-1, begin=b, end=e,
                                                     name=f"col{b}")
                                   for b, e in ((0, 1), (1, 2), (2, None))])


def test_slices_of_the_rows_move_together_and_a_row_past_the_prefix_differs() -> None:
    rows = onnx_rows.sorted_rows(_yolo_heads().tojson())
    assert set(rows) == {"nms_output", "first_output", "col0_output", "col1_output",
                         "col2_output"}
    assert [onnx_rows.grouping(rows[f"col{b}_output"], (1, 4, k)) for b, k in
            ((0, 1), (1, 1), (2, 4))] == [(("nms_output", 4), None),
                                          (("nms_output", 4), 0), (("nms_output", 4), None)]
    ref = _rows(4)
    ref[0, 2, 1] = ref[0, 1, 1]
    got = ref.copy()
    got[0, [1, 2]] = got[0, [2, 1]]
    names = ["first_output", "col0_output", "col1_output", "col2_output"]

    def parts(a):
        return [a, a[..., :1], a[..., 1:2], a[..., 2:]]

    report = onnx_check.compare(names, parts(ref), dict(zip(
        ["first", "col0", "col1", "col2"], parts(got))), 1e-4, "test",
        {n: rows[n] for n in names})
    assert report.agree and [o.reordered for o in report.outputs] == [2] * 4
    # the ids and boxes alone cannot be matched (no scores with them): they differ
    alone = onnx_check.compare(names[1:2], parts(ref)[1:2], {"col0": parts(got)[1]},
                               1e-4, "test", {"col0_output": rows["col0_output"]})
    assert not alone.agree
    # a row of a score tied with the last kept one, past the prefix on one side
    got2 = ref.copy()
    got2[0, 3] = _rows(6)[0, 5]
    got2[0, 3, 1] = ref[0, 3, 1]
    assert not onnx_check.compare(names[:1], [ref], {"first": got2}, 1e-4, "test",
                                  {"first_output": rows["first_output"]}).agree
