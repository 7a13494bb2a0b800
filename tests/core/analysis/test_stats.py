"""Parameters, activation memory and MACs, against hand counts, MXNet and papers."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.analysis import shapes, stats
from mxexplorer.core.graph.document import GraphDocument


def _stats(sym: mx.sym.Symbol, **given):
    doc = GraphDocument.from_json(sym.tojson())
    result = shapes.infer(doc.to_json(), given)
    assert result.error is None
    return doc, stats.compute(doc, result)


def _node_macs(doc: GraphDocument, st: stats.GraphStats, name: str) -> int:
    return st.per_node[doc.find(name)[0]].macs


def test_convolution_with_groups_dilation_and_bias() -> None:
    x = mx.sym.var("data")
    conv = mx.sym.Convolution(x, kernel=(3, 3), num_filter=8, num_group=2, dilate=(2, 2),
                              pad=(2, 2), name="c")
    doc, st = _stats(conv, data=(2, 4, 10, 10))
    out = 2 * 8 * 10 * 10
    assert _node_macs(doc, st, "c") == out * (4 // 2) * 9 + out
    assert st.params == 8 * 2 * 3 * 3 + 8
    nobias = mx.sym.Convolution(x, kernel=(1, 1), num_filter=3, no_bias=True, name="c")
    doc, st = _stats(nobias, data=(1, 5, 4, 4))
    assert _node_macs(doc, st, "c") == 3 * 4 * 4 * 5


def test_deconvolution_fully_connected_pooling_batchnorm() -> None:
    x = mx.sym.var("data")
    de = mx.sym.Deconvolution(x, kernel=(4, 4), stride=(2, 2), num_filter=6, name="d")
    doc, st = _stats(de, data=(1, 3, 5, 5))
    assert _node_macs(doc, st, "d") == 3 * 5 * 5 * 6 * 16
    fc = mx.sym.FullyConnected(x, num_hidden=7, name="f")
    doc, st = _stats(fc, data=(3, 2, 5))
    assert _node_macs(doc, st, "f") == 3 * 7 * 10 + 3 * 7
    pool = mx.sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="p")
    doc, st = _stats(pool, data=(1, 2, 8, 8))
    assert _node_macs(doc, st, "p") == 2 * 4 * 4 * 4
    gpool = mx.sym.Pooling(x, kernel=(1, 1), global_pool=True, pool_type="max", name="g")
    doc, st = _stats(gpool, data=(1, 2, 8, 8))
    assert _node_macs(doc, st, "g") == 2 * 64
    bn = mx.sym.BatchNorm(x, name="bn")
    doc, st = _stats(bn, data=(2, 3, 4, 4))
    assert _node_macs(doc, st, "bn") == 2 * 3 * 16
    assert st.params == 6 and st.aux_values == 6


def test_elementwise_activation_softmax_and_uncounted() -> None:
    a, b = mx.sym.var("a"), mx.sym.var("b")
    net = mx.sym.softmax(mx.sym.Activation(mx.sym.broadcast_add(a, b, name="add"),
                                           act_type="relu", name="act"), name="sm")
    net = mx.sym.sort(net, name="srt")
    doc, st = _stats(net, a=(4, 5), b=(1, 5))
    assert _node_macs(doc, st, "add") == 20
    assert _node_macs(doc, st, "act") == 20
    assert _node_macs(doc, st, "sm") == 60
    assert st.uncounted_ops == ("sort",)
    assert st.macs == 100 and st.flops == 200
    assert st.activation_bytes == 4 * 20 * 4


def test_flatten_and_reshape_are_free() -> None:
    x = mx.sym.var("data")
    doc, st = _stats(mx.sym.Flatten(mx.sym.Reshape(x, shape=(0, -1)), name="f"), data=(2, 3, 4))
    assert st.macs == 0 and st.uncounted_ops == () and "Flatten" in st.free_ops


@pytest.mark.parametrize("name,expected_gmacs,paper_params", [
    # ResNet-50 v1 (stride in the 1x1 conv, as the paper): 3.8-3.9 G multiply-adds.
    ("resnet50_v1", 3.87, 25.56e6),
    # v2 (stride in the 3x3 conv): the "about 4.1 G MACs" usually quoted for ResNet-50.
    ("resnet50_v2", 4.10, 25.55e6),
])
def test_resnet50_matches_published_figures(zoo, name, expected_gmacs, paper_params) -> None:
    path = str(zoo(name))
    doc = GraphDocument.open(path)
    result = shapes.infer(doc.to_json(), {"data": (1, 3, 224, 224)})
    st = stats.compute(doc, result)
    assert st.macs / 1e9 == pytest.approx(expected_gmacs, rel=0.02)
    assert st.params == pytest.approx(paper_params, rel=0.01)
    # parameters equal the sizes MXNet itself infers for the parameter arguments
    sym = mx.sym.load(path)
    arg_shapes, _, aux_shapes = sym.infer_shape(data=(1, 3, 224, 224))
    mx_params = sum(int(np.prod(s)) for n, s in zip(sym.list_arguments(), arg_shapes)
                    if n != "data")
    assert st.params == mx_params
    assert st.aux_values == sum(int(np.prod(s)) for s in aux_shapes)
    assert st.uncounted_ops == ()
