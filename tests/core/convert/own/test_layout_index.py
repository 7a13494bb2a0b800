"""Our exporter's indexing and array-making ops (take, pick, gather_nd, one_hot,
shape_array, size_array, diag, _slice_assign, the constants), judged by MXNet."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest

from tests.core.convert.own.harness import agree

X = mx.sym.var("data")
IDX = mx.sym.var("idx")


def _indices(shape, low, high, dtype="float32", seed=0):
    rng = np.random.default_rng(seed)
    got = rng.integers(low, high, shape)
    if dtype.startswith("float"):
        got = got + rng.uniform(0, 0.9, shape) * np.sign(got)
    return got.astype(dtype)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_take(axis, mode, dtype) -> None:
    shape = (4, 5, 3)
    dim = shape[axis]
    low, high = (0, dim) if mode == "raise" else (-2 * dim, 2 * dim)
    idx = _indices((2, 3), low, high, "int64" if mode == "raise" else dtype).astype(dtype)
    agree(mx.sym.take(X, IDX, axis=axis, mode=mode, name="t"),
          {"data": shape, "idx": (2, 3)}, feed={"idx": idx}, dtypes={"idx": dtype})


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_pick(axis, keepdims, mode) -> None:
    shape = [4, 5, 3]
    dim = shape[axis]
    ishape = list(shape)
    ishape[axis] = 1
    if not keepdims:
        del ishape[axis if axis >= 0 else len(shape) + axis]
    idx = _indices(tuple(ishape), -2 * dim, 2 * dim)
    agree(mx.sym.pick(X, IDX, axis=axis, keepdims=keepdims, mode=mode, name="p"),
          {"data": tuple(shape), "idx": tuple(ishape)}, feed={"idx": idx})


@pytest.mark.parametrize("ishape", [(2, 1), (2, 4), (3, 2, 2), (1, 5)])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_gather_nd(ishape, dtype) -> None:
    shape = (4, 5, 3)
    m = ishape[0]
    idx = np.stack([_indices(ishape[1:], -shape[j] + 1, shape[j], "int64", seed=j)
                    for j in range(m)]).astype(dtype)
    if dtype == "float32":      # MXNet adds the axis size before truncating
        idx = np.where(idx < 0, idx - 0.5, idx).astype(dtype)
        idx.flat[0] = -0.5
    agree(mx.sym.gather_nd(X, IDX, name="g"), {"data": shape, "idx": ishape},
          feed={"idx": idx}, dtypes={"idx": dtype})


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "float16"])
@pytest.mark.parametrize("on,off", [(1.0, 0.0), (2.5, -1.0)])
def test_one_hot(dtype, on, off) -> None:
    idx = _indices((3, 4), -3, 8)
    agree(mx.sym.one_hot(IDX, depth=5, on_value=on, off_value=off, dtype=dtype, name="o"),
          {"idx": (3, 4)}, feed={"idx": idx})


@pytest.mark.parametrize("shape", [(3,), (2, 3, 4)])
def test_shape_size(shape) -> None:
    agree(mx.sym.Group([mx.sym.shape_array(X, name="s"), mx.sym.size_array(X, name="n")]),
          {"data": shape})


@pytest.mark.parametrize("k", [0, 1, -2])
@pytest.mark.parametrize("shape,a1,a2", [((5,), 0, 1), ((4, 5), 0, 1), ((4, 5), 1, 0),
                                         ((3, 4, 5), 0, 2), ((3, 4, 5), 2, 1),
                                         ((2, 3, 4, 5), -1, 1)])
def test_diag(k, shape, a1, a2) -> None:
    agree(mx.sym.diag(X, k=k, axis1=a1, axis2=a2, name="d"), {"data": shape})


@pytest.mark.parametrize("begin,end,step", [((1, None), (3, None), ()),
                                            ((None, 4), (None, 0), (None, -2)),
                                            ((0,), (4,), (2,))])
def test_slice_assign(begin, end, step) -> None:
    region = mx.nd.slice(mx.nd.zeros((4, 5)), begin=begin, end=end, step=step).shape
    agree(mx.sym._internal._slice_assign(X, mx.sym.var("rhs"), begin=begin, end=end,
                                         step=step, name="a"),
          {"data": (4, 5), "rhs": region})
    agree(mx.sym._internal._slice_assign_scalar(X, scalar=2.5, begin=begin, end=end,
                                                step=step, name="b"), {"data": (4, 5)})


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_filled(dtype) -> None:
    net = mx.sym.Group([
        mx.sym.zeros((2, 3), dtype=dtype, name="z") + X.astype(dtype),
        mx.sym.ones((2, 3), dtype=dtype, name="o"),
        mx.sym.full((2, 3), 4.5, dtype=dtype, name="f"),
        mx.sym.eye(3, 4, 1, dtype=dtype, name="e"), mx.sym.eye(3, dtype=dtype, name="e2")])
    agree(net, {"data": (2, 3)})


def test_zeros_shape_from_graph() -> None:
    """A 0 in _zeros' shape takes its size from what it meets."""
    agree(mx.sym.zeros((0, 3), name="z") + X, {"data": (4, 3)})


@pytest.mark.parametrize("kw", [{"start": 3}, {"start": 1, "stop": 7, "step": 2},
                                {"start": 5, "stop": -3, "step": -1.5, "repeat": 2},
                                {"start": 0.5, "stop": 4, "step": 0.25}])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "float64"])
def test_arange(kw, dtype) -> None:
    agree(mx.sym.Group([mx.sym.arange(dtype=dtype, name="a", **kw),
                         mx.sym.Reshape(X, shape=(-1,))]), {"data": (1,)})


@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"start": 2, "step": 0.5, "repeat": 2},
                                {"axis": -1, "start": -1, "step": -2}])
def test_arange_like(kw) -> None:
    agree(mx.sym.contrib.arange_like(X, name="a", **kw), {"data": (3, 4)})
