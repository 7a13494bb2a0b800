"""ONNX export of ops MXNet 1.9.1's converters lack or refuse in some modes (erf,
SequenceLast, RNN without state outputs, L2Normalization by instance or spatial), each
checked against MXNet's forward of the original graph on random data."""
from __future__ import annotations

import mxnet as mx
import pytest

from tests.core.convert.exporting import agrees_with_mxnet


def test_erf_exports_as_onnx_erf(tmp_path) -> None:
    """BERT's GELU: 0.5 x (1 + erf(x / sqrt 2)) (djl's static_bert_qa was refused)."""
    data = mx.sym.var("data")
    net = mx.sym.erf(data * 3, name="erf")
    agrees_with_mxnet(net, {"data": (2, 7)}, tmp_path, "")


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
        agrees_with_mxnet(net, {"data": shape}, tmp_path, "")
        return
    steps, batch = shape[axis], shape[1 - axis]
    seen = mx.sym.clip(mx.sym.floor((mx.sym.var("lens") + 1) * (steps / 2.0)), 1, steps)
    net = mx.sym.SequenceLast(data * 2, seen, use_sequence_length=True, axis=axis,
                              name="last")
    agrees_with_mxnet(net, {"data": shape, "lens": (batch,)}, tmp_path, "")


def _rnn(mode: str, layers: int, zeros: bool = False):
    """A fused RNN without state outputs (as a BucketingModule's FusedRNNCell saves it:
    lstm_ptb), its begin states inputs or, with ``zeros``, ``_zeros`` of batch 0."""
    data = mx.sym.var("data")
    if zeros:
        states = [mx.sym.zeros((layers, 0, 6), name=f"begin{k}") for k in range(2)]
    else:
        states = [mx.sym.var(f"state{k}") for k in range(2)]
    cell = [states[1]] if mode == "lstm" else []
    return mx.sym.RNN(data * 2, mx.sym.var("params"), states[0], *cell, state_size=6,
                      num_layers=layers, mode=mode, state_outputs=False, name="rnn")


@pytest.mark.parametrize("mode, layers", [("lstm", 1), ("lstm", 2), ("gru", 1),
                                          ("rnn_tanh", 2)])
def test_an_rnn_without_state_outputs_exports(tmp_path, mode, layers) -> None:
    """MXNet's converter refuses state_outputs=False; its consumers read output 0 only,
    so the graph pass asks for the states too and nothing else changes."""
    net = mx.sym.FullyConnected(mx.sym.Reshape(_rnn(mode, layers), shape=(-1, 6)),
                                num_hidden=3, name="fc")
    shapes = {"data": (5, 2, 6), "state0": (layers, 2, 6)}
    if mode == "lstm":
        shapes["state1"] = (layers, 2, 6)
    agrees_with_mxnet(net, shapes, tmp_path, "RNN node(s) (rnn) exported with "
                                              "state_outputs=True")


def test_an_rnn_head_with_zero_begin_states_exports(tmp_path) -> None:
    """lstm_ptb's shape: begin states ``_zeros`` of batch 0 (inferred), the RNN a
    head."""
    agrees_with_mxnet(_rnn("lstm", 2, zeros=True), {"data": (5, 2, 6)}, tmp_path,
                       "RNN node(s) (rnn)")


@pytest.mark.parametrize("mode, shape, eps", [
    ("instance", (3, 8), 1e-10), ("instance", (2, 3, 4, 5), 1e-10),
    ("instance", (3, 8), 0.5), ("spatial", (2, 3, 5), 1e-10),
    ("spatial", (2, 3, 4, 5), 0.5), ("channel", (2, 3, 4, 5), 1e-10),
    ("channel", (2, 3, 4, 5), 0.5),
    ("channel", (2, 3, 5), 1e-10)])
def test_l2_normalization_exports_in_every_mode(tmp_path, mode, shape, eps) -> None:
    """ArcFace's embedding (instance mode; leaderface, mario-facerec): x over the square
    root of its sum of squares plus eps, over every axis but the batch (instance), the
    spatial axes (spatial) or the channels (channel).  MXNet's own converter took only
    channel, as LpNormalization without eps: 37 % off at eps 0.5."""
    data = mx.sym.var("data")
    net = mx.sym.L2Normalization(data * 2, mode=mode, eps=eps, name="l2")
    agrees_with_mxnet(net, {"data": shape}, tmp_path, "")
