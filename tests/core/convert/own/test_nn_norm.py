"""Our exporter's normalisations, activations, dropout, flatten and softmaxes, judged by
MXNet's inference forward."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest

from tests.core.convert.own.harness import agree, export

X = mx.sym.var("data")


@pytest.mark.parametrize("shape,axis", [((4, 3), 1), ((2, 3, 5), 1), ((2, 3, 4, 5), 1),
                                        ((2, 3, 4, 5), -1), ((2, 3, 5), -1),
                                        ((4, 3), -1), ((2, 3, 4, 5), 2)])
@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("global_stats,eps", [(False, 1e-3), (True, 1e-5), (False, 0.1)])
def test_batch_norm(shape, axis, fix_gamma, global_stats, eps) -> None:
    agree(mx.sym.BatchNorm(X, axis=axis, fix_gamma=fix_gamma, use_global_stats=global_stats,
                           eps=eps, name="bn"), {"data": shape})


@pytest.mark.parametrize("fix_gamma", [True, False])
def test_sync_batch_norm(fix_gamma) -> None:
    agree(mx.sym.contrib.SyncBatchNorm(X, fix_gamma=fix_gamma, eps=1e-4, key="k",
                                          name="bn"),
          {"data": (2, 3, 4, 5)})


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "softrelu", "softsign"])
def test_activation(act) -> None:
    agree(mx.sym.Activation(X, act_type=act, name="a"), {"data": (2, 3, 4)}, low=-25,
          high=25)


@pytest.mark.parametrize("kind,slope", [("leaky", 0.25), ("leaky", 0.01), ("elu", 0.25),
                                        ("elu", 1.3), ("selu", 0.25), ("gelu", 0.25)])
def test_leaky_relu(kind, slope) -> None:
    agree(mx.sym.LeakyReLU(X, act_type=kind, slope=slope, name="a"), {"data": (2, 3, 4)},
          low=-3, high=3)


@pytest.mark.parametrize("lower,upper", [(0.125, 0.334), (0.05, 0.5)])
def test_rrelu(lower, upper) -> None:
    """At inference the slope is the mean of the bounds (output 1, the training mask,
    has no meaning there)."""
    agree(mx.sym.LeakyReLU(X, act_type="rrelu", lower_bound=lower, upper_bound=upper,
                           name="a")[0], {"data": (2, 3, 4)})


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5), (2, 3, 2, 2, 2)])
@pytest.mark.parametrize("count", [1, 3])
def test_prelu(shape, count) -> None:
    gamma = mx.sym.var("gamma")
    agree(mx.sym.LeakyReLU(X, gamma=gamma, act_type="prelu", name="a"), {"data": shape},
          values={"gamma": np.linspace(0.1, 0.9, count).astype("float32")})


@pytest.mark.parametrize("axes", [(), (2,)])
def test_dropout(axes) -> None:
    built = agree(mx.sym.Dropout(X, p=0.5, axes=axes, name="d") * 2, {"data": (2, 3, 4)})
    assert not any(n.op_type == "Dropout" for n in built.model.graph.node)


def test_dropout_always_noted() -> None:
    """mode='always' drops at inference too: exported as the identity, and said."""
    built, _ = export(mx.sym.Dropout(X, p=0.5, mode="always", name="d"), {"data": (2, 3)})
    assert any("mode='always'" in note for note in built.notes)


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_flatten(shape) -> None:
    agree(mx.sym.Flatten(X, name="f"), {"data": shape})
    agree(mx.sym.flatten(X, name="f"), {"data": shape})


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("temperature", [None, 1.0, 0.5, 3.0])
def test_softmax(op, axis, temperature) -> None:
    fn = getattr(mx.sym, op)
    agree(fn(X, axis=axis, temperature=temperature, name="s"), {"data": (2, 3, 4)},
          low=-4, high=4)


@pytest.mark.parametrize("op", ["softmax"])
@pytest.mark.parametrize("axis,lengths", [(-1, [[0, 1, 4], [2, 3, 4]]),
                                          (1, [[0, 1, 2, 3], [3, 2, 1, 0]]),
                                          (0, [[1, 2, 0, 1], [2, 2, 1, 0], [1, 1, 1, 1]])])
@pytest.mark.parametrize("temperature", [None, 2.0])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_softmax_length(op, axis, lengths, temperature, dtype) -> None:
    length = mx.sym.var("length")
    fn = getattr(mx.sym, op)
    sym = fn(X, length, axis=axis, temperature=temperature, use_length=True, name="s")
    value = np.asarray(lengths, dtype)
    agree(sym, {"data": (2, 3, 4), "length": value.shape}, feed={"length": value},
          dtypes={"length": dtype}, low=-4, high=4)


@pytest.mark.parametrize("shape,mode", [((2, 5), "instance"), ((2, 3, 4, 5), "instance"),
                                        ((2, 3, 4), "instance"), ((2, 3, 4, 5), "channel"),
                                        ((2, 3, 4), "channel")])
def test_softmax_activation(shape, mode) -> None:
    agree(mx.sym.SoftmaxActivation(X, mode=mode, name="s"), {"data": shape}, low=-4, high=4)


@pytest.mark.parametrize("nsize,alpha,beta,knorm", [(3, 1e-4, 0.75, 2.0),
                                                    (5, 0.3, 0.5, 1.0), (1, 1.0, 2.0, 0.5)])
def test_lrn(nsize, alpha, beta, knorm) -> None:
    agree(mx.sym.LRN(X, nsize=nsize, alpha=alpha, beta=beta, knorm=knorm, name="n"),
          {"data": (2, 6, 4, 5)}, low=-3, high=3)


@pytest.mark.parametrize("shape", [(2, 3, 5), (2, 3, 4, 5), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("eps", [1e-3, 0.5])
def test_instance_norm(shape, eps) -> None:
    agree(mx.sym.InstanceNorm(X, eps=eps, name="n"), {"data": shape})


@pytest.mark.parametrize("shape,axis", [((3, 5), -1), ((2, 3, 5), -1), ((2, 3, 5), 1),
                                        ((2, 3, 4, 5), 1), ((2, 3, 4, 5), 0),
                                        ((2, 3, 4, 5), 3)])
@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("eps", [1e-5, 0.3])
def test_layer_norm(shape, axis, opset, eps) -> None:
    built = agree(mx.sym.LayerNorm(X, axis=axis, eps=eps, name="n"), {"data": shape},
                  opset=opset)
    fused = any(n.op_type == "LayerNormalization" for n in built.model.graph.node)
    assert fused == (opset >= 17 and axis in (-1, len(shape) - 1))


@pytest.mark.parametrize("shape,mode", [((2, 5), "instance"), ((2, 3, 4, 5), "instance"),
                                        ((2, 3, 4), "channel"), ((2, 3, 4, 5), "channel"),
                                        ((2, 3, 4), "spatial"), ((2, 3, 4, 5), "spatial")])
@pytest.mark.parametrize("eps", [1e-10, 0.5])
def test_l2_normalization(shape, mode, eps) -> None:
    agree(mx.sym.L2Normalization(X, mode=mode, eps=eps, name="n"), {"data": shape})


@pytest.mark.parametrize("shape,groups", [((2, 6, 4, 5), 1), ((2, 6, 4, 5), 2),
                                          ((2, 6, 4, 5), 3), ((2, 6, 5), 6),
                                          ((1, 4, 2, 3, 2), 2)])
@pytest.mark.parametrize("eps", [1e-5, 0.5])
def test_group_norm(shape, groups, eps) -> None:
    agree(mx.sym.GroupNorm(X, num_groups=groups, eps=eps, name="n"), {"data": shape})
