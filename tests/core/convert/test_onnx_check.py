"""The check's MXNet side (:mod:`onnx_check`): the values it compares are the values
MXNet computes, so the first differing node it names is the one at fault."""
from __future__ import annotations

import mxnet as mx
import numpy as np

from mxexplorer.core.convert import onnx_check, onnx_export
from tests.core.convert.exporting import export_checked


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
    report = export_checked(net, {"data": (3, 5)}, tmp_path, name="g.onnx", fix_gamma=False)
    assert report.check is not None and not report.check.agree
    first = report.check.first
    assert first is not None and (first.name, first.op, first.inputs_agree) == \
        ("bn", "BatchNorm", True), report.lines()



def test_random_weights_give_a_batchnorm_a_positive_variance_whatever_its_name(
        tmp_path) -> None:
    """sterling239's omg_challenge model names its moving variances
    'bn_data_moving__tree_0_var': the check's random weights, chosen by name, gave them
    values in [-0.1, 0.1]; the square root of a negative variance is NaN, which MXNet's
    ReLU made 0 and onnxruntime's kept ("NaN in one runtime and not the other")."""
    data = mx.sym.var("data")
    bn = mx.sym.BatchNorm(data, mx.sym.var("bn_data__tree_0_gamma"),
                          mx.sym.var("bn_data__tree_0_beta"),
                          mx.sym.var("bn_data_moving__tree_0_mean"),
                          mx.sym.var("bn_data_moving__tree_0_var"), fix_gamma=False,
                          name="bn__tree_0_data")
    net = mx.sym.FullyConnected(mx.sym.relu(bn, name="act"), num_hidden=3, name="fc")
    report = export_checked(net, {"data": (2, 16, 3, 3)}, tmp_path, name="g.onnx")
    assert report.check is not None and report.check.agree, report.lines()
    params, _ = onnx_export._params(mx, net, {"data": (2, 16, 3, 3)}, None, {})
    assert float(params["bn_data_moving__tree_0_var"].min().asscalar()) > 0


def test_a_softmax_output_over_4d_data_says_what_cpu_mxnet_computes(tmp_path) -> None:
    """ellinier's ssd vgg16_reduced: a SoftmaxOutput on (N, C, H, W) data without
    multi_output is, as MXNet documents it and computes it on GPU and in training, a
    softmax over every axis but the batch, and so exported; MXNet's CPU oneDNN kernel
    takes the last axis at inference.  The check against CPU MXNet differs at that node
    (running MXNet without oneDNN instead broke its fused RNN graphs), and the report
    says why."""
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, num_filter=5, kernel=(3, 3), pad=(1, 1), name="conv")
    net = mx.sym.SoftmaxOutput(conv, name="prob")
    report = export_checked(net, {"data": (2, 3, 4, 4)}, tmp_path, name="p.onnx")
    assert any("softmax over every axis but the batch, as MXNet documents it" in f and
               "CPU oneDNN kernel takes the last axis of 4-D data" in f
               for f in report.fixes), report.fixes
    check = report.check
    assert check is not None
    assert check.agree or (check.first is not None and check.first.name == "prob")


def test_the_first_differing_node_says_its_share_in_plain_percent() -> None:
    """Seen in the window: "(2e+02% of its largest value)"; and 2e-4, past the 1e-4
    tolerance, was printed "0.0%"."""
    from mxexplorer.core.convert.onnx_check import NodeDifference

    assert "(200.0% of its largest value)" in \
        NodeDifference("lp", "Pooling", 2.15, 2.0, True, 2).sentence()
    assert "(0.02% of its largest value)" in \
        NodeDifference("exp", "exp", 0.01, 2e-4, True, 9).sentence()
