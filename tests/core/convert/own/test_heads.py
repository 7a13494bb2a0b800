"""Our exporter's training heads, judged by MXNet's inference forward: each becomes its
inference meaning, its label not an input."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from tests.core.convert.own.harness import agree, export, run_onnx


def _inputs(built) -> set[str]:
    return {i.name for i in built.model.graph.input}


@pytest.mark.parametrize("flags, shape", [
    ({}, (3, 7)),                                       # rank 2: the last axis
    ({}, (2, 3, 5)),                                    # every axis but the batch
    ({}, (2, 3, 2, 2, 3)),
    ({"multi_output": True}, (2, 4, 5)),                # axis 1
    ({"multi_output": True}, (2, 4, 3, 3)),
    ({"preserve_shape": True}, (2, 3, 5)),              # the last axis
    ({"preserve_shape": True}, (2, 3, 4, 5)),
])
def test_softmax_output_is_softmax_over_mxnets_axes(flags, shape) -> None:
    net = mx.sym.SoftmaxOutput(mx.sym.var("data"), name="softmax", **flags)
    built = agree(net, {"data": shape}, low=-3.0, high=3.0)
    assert _inputs(built) == {"data"}
    assert any("SoftmaxOutput 'softmax' exported as softmax" in n and
               "label input 'softmax_label' dropped" in n for n in built.notes)


def test_softmax_output_on_4d_data_follows_the_documented_meaning() -> None:
    """MXNet's CPU oneDNN kernel takes the last axis of 4-D data; the documented (and
    GPU) meaning is every axis but the batch: the export follows it, and says so."""
    shape = (2, 3, 2, 2)
    net = mx.sym.SoftmaxOutput(mx.sym.var("data"), name="softmax")
    built, _ = export(net, {"data": shape})
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype("float32")
    got = run_onnx(built, {"data": x})["softmax_output"]
    flat = np.exp(x.reshape(2, -1))
    want = (flat / flat.sum(1, keepdims=True)).reshape(shape)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert any("CPU oneDNN" in n for n in built.notes)


def test_the_old_softmax_name_is_softmax_output() -> None:
    net = mx.sym.Softmax(mx.sym.var("data"), name="sm")
    agree(net, {"data": (4, 6)})


@pytest.mark.parametrize("op", ["LinearRegressionOutput", "MAERegressionOutput",
                                "LogisticRegressionOutput", "SVMOutput"])
def test_regression_and_svm_heads_are_their_inference_meaning(op) -> None:
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    net = getattr(mx.sym, op)(fc, name="head")
    built = agree(net, {"data": (2, 5)}, high=3.0, low=-3.0)
    assert _inputs(built) == {"data"}
    assert any(n.startswith(f"{op} 'head' exported as") for n in built.notes)


def test_identity_attach_kl_sparse_reg_is_identity() -> None:
    act = mx.sym.Activation(mx.sym.var("data"), act_type="sigmoid", name="act")
    net = mx.sym.IdentityAttachKLSparseReg(act, name="kl")
    agree(net, {"data": (3, 4)})


def test_warpctc_is_a_softmax_over_the_last_axis() -> None:
    """The plugin's forward (not in MXNet's build: checked against numpy)."""
    graph = ('{"nodes": [{"op": "null", "name": "data", "inputs": []}, '
             '{"op": "null", "name": "label", "inputs": []}, '
             '{"op": "WarpCTC", "name": "ctc", "attrs": {"label_length": "3", '
             '"input_length": "4"}, "inputs": [[0, 0, 0], [1, 0, 0]]}], '
             '"arg_nodes": [0, 1], "heads": [[2, 0, 0]]}')
    built, _ = export(graph, {"data": (8, 5)})
    assert _inputs(built) == {"data"}
    x = np.random.default_rng(1).uniform(-2, 2, (8, 5)).astype("float32")
    got = run_onnx(built, {"data": x})["ctc_output"]
    e = np.exp(x)
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True), rtol=1e-5)


def test_a_ctc_loss_read_by_another_node_is_refused() -> None:
    data = mx.sym.var("data")
    loss = mx.sym.contrib.CTCLoss(data, mx.sym.var("label"), name="ctc")
    net = mx.sym.FullyConnected(loss, num_hidden=2, name="fc")
    with pytest.raises(NoOnnxMeaning, match="CTC"):
        export(net, {"data": (5, 2, 4), "label": (2, 3)})
