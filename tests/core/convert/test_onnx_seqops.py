"""ONNX export of ops MXNet 1.9.1's converters lack or refuse in some modes (erf,
SequenceLast, RNN without state outputs, L2Normalization by instance or spatial), each
checked against MXNet's forward of the original graph on random data."""
from __future__ import annotations

import mxnet as mx

from tests.core.convert.test_onnx_heads import _agrees_with_mxnet


def test_erf_exports_as_onnx_erf(tmp_path) -> None:
    """BERT's GELU: 0.5 x (1 + erf(x / sqrt 2)) (djl's static_bert_qa was refused)."""
    data = mx.sym.var("data")
    net = mx.sym.erf(data * 3, name="erf")
    _agrees_with_mxnet(net, {"data": (2, 7)}, tmp_path, "")
