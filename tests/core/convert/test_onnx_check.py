"""The check's MXNet side (:mod:`onnx_check`): the values it compares are the values
MXNet computes, so the first differing node it names is the one at fault."""
from __future__ import annotations

import mxnet as mx
import numpy as np

from mxexplorer.core.convert import onnx_check, onnx_export
from mxexplorer.core.graph.document import GraphDocument


def _shape_only_reader():
    """GluonCV SSD's MultiPerClassDecoder: a slice whose only reader is ``zeros_like``,
    which reads its shape alone (FIgnoreInputs), so MXNet's memory plan never runs it."""
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    first = mx.sym.slice_axis(fc, axis=-1, begin=0, end=1, name="first")
    bn = mx.sym.BatchNorm(fc, fix_gamma=True, name="bn")
    return mx.sym.broadcast_add(mx.sym.zeros_like(first, name="zeros"),
                                mx.sym.relu(bn, name="act"), name="out")


def test_an_output_only_zeros_like_reads_is_computed_for_the_comparison() -> None:
    """MXNet skips (kNullOp) an output no op reads; its monitor then showed stale memory,
    and the SSD exports were said to differ first at such a slice_axis."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (3, 5)).astype("float32")
    params = {"fc_weight": mx.nd.array(rng.normal(size=(4, 5))),
              "fc_bias": mx.nd.array(rng.normal(size=4)),
              "bn_gamma": mx.nd.ones(4), "bn_beta": mx.nd.zeros(4),
              "bn_moving_mean": mx.nd.zeros(4), "bn_moving_var": mx.nd.ones(4)}
    got = onnx_check.forward_entries(mx, _shape_only_reader(), ["fc_output", "first_output"],
                                     {"data": (3, 5)}, {"data": x}, params)
    np.testing.assert_allclose(got["first_output"], got["fc_output"][:, :1], rtol=1e-6)


def test_the_first_difference_is_not_an_output_mxnet_skipped(tmp_path) -> None:
    net = _shape_only_reader()
    doc = GraphDocument.from_json(net.tojson())
    report = onnx_export.export(net.tojson(), {"data": (3, 5)}, str(tmp_path / "g.onnx"),
                                doc.operators(), check=True, fix_gamma=False)
    assert report.check is not None and not report.check.agree
    first = report.check.first
    assert first is not None and (first.name, first.op, first.inputs_agree) == \
        ("bn", "BatchNorm", True), report.lines()
