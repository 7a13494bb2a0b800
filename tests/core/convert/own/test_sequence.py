"""Our exporter's sequence ops (SequenceMask, SequenceLast, SequenceReverse, the fused
RNN), judged by MXNet's inference forward."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from tests.core.convert.own.harness import agree, export


def _lengths(batch: int, steps: int, seed: int = 0, whole: bool = False) -> np.ndarray:
    """Lengths from 1 to ``steps`` (with fractions unless ``whole``: MXNet reads the
    integer part)."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, steps + 1, batch).astype("float32")
    return lens if whole else lens + rng.uniform(0, 0.9, batch).astype("float32")


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(6, 5), (6, 5, 3), (6, 5, 2, 3)])
@pytest.mark.parametrize("lengths", [False, True])
@pytest.mark.parametrize("value", [0.0, -7.5])
def test_sequence_mask(axis, shape, lengths, value) -> None:
    data = mx.sym.var("data")
    if not lengths:
        net = mx.sym.SequenceMask(data, axis=axis, value=value, name="mask")
        agree(net, {"data": shape})
        return
    batch, steps = shape[1 - axis], shape[axis]
    net = mx.sym.SequenceMask(data, mx.sym.var("lens"), use_sequence_length=True,
                              axis=axis, value=value, name="mask")
    agree(net, {"data": shape, "lens": (batch,)},
          feed={"lens": _lengths(batch, steps)})


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("shape", [(6, 5), (6, 5, 3), (6, 5, 2, 3)])
@pytest.mark.parametrize("lengths", [False, True])
def test_sequence_last(axis, shape, lengths) -> None:
    data = mx.sym.var("data")
    if not lengths:
        agree(mx.sym.SequenceLast(data, axis=axis, name="last"), {"data": shape})
        return
    batch, steps = shape[1 - axis], shape[axis]
    net = mx.sym.SequenceLast(data, mx.sym.var("lens"), use_sequence_length=True,
                              axis=axis, name="last")
    agree(net, {"data": shape, "lens": (batch,)}, feed={"lens": _lengths(batch, steps)})


@pytest.mark.parametrize("shape", [(6, 5), (6, 5, 3), (7, 2, 2, 3)])
@pytest.mark.parametrize("lengths", [False, True])
def test_sequence_reverse(shape, lengths) -> None:
    data = mx.sym.var("data")
    if not lengths:
        agree(mx.sym.SequenceReverse(data, name="rev"), {"data": shape})
        return
    net = mx.sym.SequenceReverse(data, mx.sym.var("lens"), use_sequence_length=True,
                                 name="rev")
    agree(net, {"data": shape, "lens": (shape[1],)},
          feed={"lens": _lengths(shape[1], shape[0], whole=True)})


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["mask", "last", "reverse"]), st.integers(0, 1),
       st.integers(1, 5), st.integers(1, 4), st.integers(0, 2), st.integers(0, 99))
def test_sequence_ops_at_random_shapes(op, axis, steps, batch, extra, seed) -> None:
    axis = 0 if op == "reverse" else axis
    shape = [steps, batch] if axis == 0 else [batch, steps]
    shape += [2] * extra
    lens = _lengths(batch, steps, seed, whole=op == "reverse")
    data, var = mx.sym.var("data"), mx.sym.var("lens")
    net = {"mask": lambda: mx.sym.SequenceMask(data, var, use_sequence_length=True,
                                               axis=axis, value=1.5, name="m"),
           "last": lambda: mx.sym.SequenceLast(data, var, use_sequence_length=True,
                                               axis=axis, name="l"),
           "reverse": lambda: mx.sym.SequenceReverse(data, var, use_sequence_length=True,
                                                     name="r")}[op]()
    agree(net, {"data": tuple(shape), "lens": (batch,)}, feed={"lens": lens})


def _rnn(mode: str, layers: int, bidirectional: bool, state_outputs: bool):
    cell = [mx.sym.var("state_cell")] if mode == "lstm" else []
    return mx.sym.RNN(mx.sym.var("data"), mx.sym.var("params"), mx.sym.var("state"),
                      *cell, state_size=6, num_layers=layers, mode=mode,
                      bidirectional=bidirectional, state_outputs=state_outputs, p=0.3,
                      name="rnn")


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layers, bidirectional", [(1, False), (2, False), (1, True),
                                                   (3, True)])
@pytest.mark.parametrize("state_outputs", [True, False])
def test_rnn(mode, layers, bidirectional, state_outputs) -> None:
    dirs = 2 if bidirectional else 1
    shapes = {"data": (5, 3, 4), "state": (layers * dirs, 3, 6)}
    if mode == "lstm":
        shapes["state_cell"] = (layers * dirs, 3, 6)
    built = agree(_rnn(mode, layers, bidirectional, state_outputs), shapes)
    assert len(built.outputs) == (1 if not state_outputs else 3 if mode == "lstm" else 2)


def test_rnn_parameters_computed_in_the_graph_are_refused() -> None:
    params = mx.sym.Activation(mx.sym.var("p"), act_type="relu", name="act")
    net = mx.sym.RNN(mx.sym.var("data"), params, mx.sym.var("state"), state_size=4,
                     num_layers=1, mode="gru", name="rnn")
    with pytest.raises(NoOnnxMeaning, match="not a constant"):
        export(net, {"data": (3, 2, 5), "p": (3 * 4 * (5 + 4 + 2),), "state": (1, 2, 4)})


def test_rnn_with_a_projection_is_refused() -> None:
    net = mx.sym.RNN(mx.sym.var("data"), mx.sym.var("params"), mx.sym.var("state"),
                     mx.sym.var("cell"), state_size=4, projection_size=2, num_layers=1,
                     mode="lstm", name="rnn")
    with pytest.raises((NoOnnxMeaning, AssertionError)):
        export(net, {"data": (3, 2, 5), "state": (1, 2, 2), "cell": (1, 2, 4)})
