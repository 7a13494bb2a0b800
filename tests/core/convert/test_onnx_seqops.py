"""ONNX export of ops MXNet 1.9.1's converters lack or refuse in some modes (erf,
SequenceLast, RNN without state outputs, L2Normalization by instance or spatial), each
checked against MXNet's forward of the original graph on random data."""
from __future__ import annotations

import mxnet as mx
import pytest

from tests.core.convert.test_onnx_heads import _agrees_with_mxnet


def test_erf_exports_as_onnx_erf(tmp_path) -> None:
    """BERT's GELU: 0.5 x (1 + erf(x / sqrt 2)) (djl's static_bert_qa was refused)."""
    data = mx.sym.var("data")
    net = mx.sym.erf(data * 3, name="erf")
    _agrees_with_mxnet(net, {"data": (2, 7)}, tmp_path, "")


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(6, 5, 3), (6, 5, 2, 3)])
@pytest.mark.parametrize("lengths", [False, True])
def test_sequence_last_exports_on_both_axes(tmp_path, axis, shape, lengths) -> None:
    """Sockeye's encoder state (ParaBank's rewriter): the step at each batch entry's
    length less one, the batch on the axis that is not the sequence's; lengths from
    random data (integers in [1, T])."""
    data = mx.sym.var("data")
    if not lengths:
        net = mx.sym.SequenceLast(data * 2, axis=axis, name="last")
        _agrees_with_mxnet(net, {"data": shape}, tmp_path, "")
        return
    steps, batch = shape[axis], shape[1 - axis]
    seen = mx.sym.clip(mx.sym.floor((mx.sym.var("lens") + 1) * (steps / 2.0)), 1, steps)
    net = mx.sym.SequenceLast(data * 2, seen, use_sequence_length=True, axis=axis,
                              name="last")
    _agrees_with_mxnet(net, {"data": shape, "lens": (batch,)}, tmp_path, "")
