"""ONNX export of ``_contrib_box_nms`` as MXNet 1.9.1's CPU kernel computes it, checked
against MXNet's forward of the original graph and, on more random inputs, row for row."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.convert import onnx_export
from mxexplorer.core.runtime.errors import UserError
from tests.core.convert.exporting import export_checked, mxnet_forward
from tests.core.convert.own.test_detection import BOX_NMS_FORMATS

#: the fields a row is made of, by number: class, score, 4 coordinates, and a spare one
CORNER, CENTER = (0, 1, 2, 3, 4, 5), (0, 1, 6, 7, 8, 9)


def _rows(order=CORNER, ties=False, disordered=False):
    """Rows of the fields ``order`` names, from uniform ``raw`` (..., N, 6): classes
    0, 1 and 2, scores in [-1, 1] (quarters with ``ties``), boxes of sides 0.3 to 0.7
    within 0.3 of the origin, so many overlap (with ``disordered``, some sides are
    negative).  Fields 2-5 are corners, 6-9 centre and size, 10 something else."""
    raw = mx.sym.var("raw")

    def col(k):
        return mx.sym.slice_axis(raw, axis=-1, begin=k, end=k + 1)

    score = mx.sym.floor(col(1) * 4) / 4 if ties else col(1)
    x, y = col(2) * 0.3, col(3) * 0.3
    w, h = (0.1 + 0.3 * col(4), 0.1 + 0.3 * col(5)) if disordered else \
        (0.5 + 0.2 * col(4), 0.5 + 0.2 * col(5))
    fields = [mx.sym.floor(col(0) * 1.5 + 1.5), score, x, y, x + w, y + h,
              x + w / 2, y + h / 2, w, h, col(4) * 7]
    return mx.sym.concat(*[fields[k] for k in order], dim=-1)


def _agrees_row_for_row(net, shape, tmp_path, opset=onnx_export.DEFAULT_OPSET, seeds=6):
    """Our check agrees, and onnxruntime gives MXNet's rows on more random inputs;
    the rows each input had before and after (valid, kept) for the caller to judge."""
    import onnxruntime as ort

    report = export_checked(net, {"raw": shape}, tmp_path, opset=opset)
    assert report.check is not None and report.check.agree, report.lines()
    session = ort.InferenceSession(str(tmp_path / "m.onnx"))
    counts = []
    for seed in range(seeds):
        feed = {"raw": np.random.default_rng(seed).uniform(-1, 1, shape).astype("float32")}
        want = mxnet_forward(net, feed)
        got = session.run(None, feed)[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6, err_msg=f"seed {seed}")
        counts.append(int((want != -1).any(axis=-1).sum()))
    return counts


def _valid(net_input, shape, seeds, **attrs) -> list[int]:
    """Rows box_nms would keep without suppression (overlap_thresh 1)."""
    net = mx.sym.contrib.box_nms(net_input, **{**attrs, "overlap_thresh": 1.0})
    return [int((mxnet_forward(net, {"raw": np.random.default_rng(s).uniform(
        -1, 1, shape).astype("float32")}) != -1).any(axis=-1).sum()) for s in range(seeds)]


@pytest.mark.parametrize("attrs", [
    {},                                                   # one class: ids not read
    {"id_index": 0},                                      # per class
    {"id_index": 0, "force_suppress": True},              # across classes
    {"id_index": 0, "topk": 5},                           # NMS of the best 5 only
    {"topk": 5, "valid_thresh": 0.3, "overlap_thresh": 0.3},
    {"id_index": 0, "topk": 100, "overlap_thresh": 0.4},  # topk past the rows
    {"id_index": 0, "background_id": 1},                  # class 1 left out
    {"id_index": 0, "background_id": 0, "valid_thresh": -0.5},
])
@pytest.mark.parametrize("ties", [False, True])
def test_box_nms_exports_as_mxnet_computes_it(tmp_path, attrs, ties) -> None:
    """The valid rows (score above valid_thresh, class not the background) sorted by
    score, equal scores in row order; the best topk through a greedy NMS (per class
    when id_index is given and force_suppress is not); the survivors first, in that
    order, then rows of -1."""
    shape = (2, 16, 6)
    rows = _rows(ties=ties)
    counts = _agrees_row_for_row(mx.sym.contrib.box_nms(rows, **attrs), shape, tmp_path)
    assert counts != _valid(rows, shape, len(counts), **attrs), \
        "the inputs never made NMS suppress a row"


@pytest.mark.parametrize("order, attrs", BOX_NMS_FORMATS)
def test_box_nms_reads_its_columns_and_formats(tmp_path, order, attrs) -> None:
    """Rows of other layouts (coord_start, score_index, id_index, a spare column) and
    boxes as centre and size; out_format other than in_format converts the rows whose
    first coordinate is not negative (MXNet's kernel skips the others)."""
    _agrees_row_for_row(mx.sym.contrib.box_nms(_rows(order), **attrs), (2, 16, len(order)),
                        tmp_path)


@pytest.mark.parametrize("shape", [(16, 6), (2, 3, 12, 6)])
def test_box_nms_of_two_and_four_dimensional_rows(tmp_path, shape) -> None:
    """Every axis before the last two is a batch axis; (N, K) is one batch."""
    net = mx.sym.contrib.box_nms(_rows(), id_index=0, topk=8)
    _agrees_row_for_row(net, shape, tmp_path)


def test_box_nms_of_boxes_with_negative_sides(tmp_path) -> None:
    """A box whose right edge is left of its left one (or bottom above top) has area 0
    for MXNet and overlaps nothing: it neither suppresses nor is suppressed (ONNX's NMS
    would reorder its corners)."""
    _agrees_row_for_row(mx.sym.contrib.box_nms(_rows(disordered=True), overlap_thresh=0.2),
                        (2, 16, 6), tmp_path)


@pytest.mark.parametrize("attrs", [{"topk": 0}, {"valid_thresh": 1.0}])
def test_box_nms_with_nothing_to_do(tmp_path, attrs) -> None:
    """topk=0 passes the rows through unchanged; nothing valid gives rows of -1."""
    _agrees_row_for_row(mx.sym.contrib.box_nms(_rows(), **attrs), (2, 16, 6), tmp_path,
                        seeds=2)


@pytest.mark.parametrize("threshold, kept", [(0.5, 2), (float(np.nextafter(
    np.float32(0.5), np.float32(0))), 1)])
def test_boxes_overlapping_by_exactly_the_threshold_are_kept(tmp_path, threshold,
                                                             kept) -> None:
    """MXNet suppresses above the IoU threshold, not from it: boxes (0, 0, 1, 1) and
    (0, 0, 2, 1) overlap by 0.5 exactly, so at 0.5 both stay (twins are suppressed)."""
    raw = mx.sym.var("raw")
    score = mx.sym.slice_axis(raw, axis=-1, begin=1, end=2)
    right = 1 + mx.sym.floor(mx.sym.slice_axis(raw, axis=-1, begin=2, end=3) + 1)
    rows = mx.sym.concat(score * 0, score, score * 0, score * 0, right, score * 0 + 1, dim=-1)
    net = mx.sym.contrib.box_nms(rows, overlap_thresh=threshold, valid_thresh=-2)
    _agrees_row_for_row(net, (1, 8, 6), tmp_path, seeds=2)
    feed = {"raw": np.random.default_rng(0).uniform(-1, 1, (1, 8, 6)).astype("float32")}
    assert int((mxnet_forward(net, feed)[0, :, 1] != -1).sum()) == kept


@pytest.mark.parametrize("attrs", [{"id_index": 0}, {"id_index": 0, "topk": 5,
                                                     "force_suppress": True}])
def test_box_nms_needs_opset_13_on_the_mx2onnx_route(tmp_path, attrs) -> None:
    """Converted with our converter (opset 13 or newer): at 12 one line naming the node."""
    with pytest.raises(UserError, match="box_nms.*opset 13 or newer"):
        _agrees_row_for_row(mx.sym.contrib.box_nms(_rows(), **attrs), (2, 16, 6), tmp_path,
                            opset=12, seeds=2)
