"""Our exporter's reductions, index searches, sorts and products, judged by MXNet's
inference forward."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from tests.core.convert.own.harness import agree, export

DATA = mx.sym.var("data")
A, B = mx.sym.var("a"), mx.sym.var("b")
SHAPE = (2, 3, 4, 5)
REDUCE = ["sum", "mean", "max", "min", "prod", "nansum", "nanprod"]


@pytest.mark.parametrize("op", REDUCE)
@pytest.mark.parametrize("axis", [None, (), 1, -1, (0, 2), (1, 2, 3)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("exclude", [False, True])
def test_reductions(op, axis, keepdims, exclude) -> None:
    kwargs = {} if axis is None else {"axis": axis}
    sym = getattr(mx.sym, op)(DATA, keepdims=keepdims, exclude=exclude, name="y",
                              **kwargs)
    agree(sym, {"data": SHAPE}, low=0.5, high=1.5)


@pytest.mark.parametrize("op", ["nansum", "nanprod"])
def test_nan_reductions(op) -> None:
    x = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4)).astype("float32")
    x[0, 1] = x[2, 3] = np.nan
    agree(getattr(mx.sym, op)(DATA, axis=1, name="y"), {"data": (3, 4)}, feed={"data": x})


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4).flatmap(lambda r: st.tuples(
    st.just(r), st.lists(st.integers(0, r - 1), unique=True, max_size=r))),
    st.booleans(), st.booleans(), st.sampled_from(["sum", "mean", "max", "prod"]))
def test_reduction_axes_property(rank_axes, keepdims, exclude, op) -> None:
    rank, axes = rank_axes
    shape = (3, 2, 4, 2)[:rank]
    sym = getattr(mx.sym, op)(DATA, axis=tuple(axes), keepdims=keepdims,
                              exclude=exclude, name="y")
    agree(sym, {"data": shape}, low=0.5, high=1.5)


@pytest.mark.parametrize("ord_", [1, 2])
@pytest.mark.parametrize("axis", [None, 1, (0, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm(ord_, axis, keepdims) -> None:
    kwargs = {} if axis is None else {"axis": axis}
    agree(mx.sym.norm(DATA, ord=ord_, keepdims=keepdims, name="y", **kwargs),
          {"data": (3, 4, 5)})


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_arg_search(op, axis, keepdims) -> None:
    agree(getattr(mx.sym, op)(DATA, axis=axis, keepdims=keepdims, name="y"),
          {"data": (3, 4, 5)})


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 4)])
def test_argmax_channel(shape) -> None:
    agree(mx.sym.argmax_channel(DATA, name="y"), {"data": shape})


@pytest.mark.parametrize("ret", ["value", "indices", "both", "mask"])
@pytest.mark.parametrize("axis", [-1, 0, None])
@pytest.mark.parametrize("k,ascend", [(1, False), (3, True), (0, False)])
def test_topk(ret, axis, k, ascend) -> None:
    sym = mx.sym.topk(DATA, ret_typ=ret, axis=axis, k=k, is_ascend=ascend, name="y")
    agree(sym, {"data": (4, 5)})


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_topk_index_dtype(dtype) -> None:
    agree(mx.sym.topk(DATA, k=2, dtype=dtype, name="y"), {"data": (3, 6)})


@pytest.mark.parametrize("axis", [-1, 0, None])
@pytest.mark.parametrize("ascend", [True, False])
def test_sort_argsort(axis, ascend) -> None:
    agree(mx.sym.sort(DATA, axis=axis, is_ascend=ascend, name="y"), {"data": (3, 4, 5)})
    agree(mx.sym.argsort(DATA, axis=axis, is_ascend=ascend, name="y"),
          {"data": (3, 4, 5)})
    agree(mx.sym.argsort(DATA, axis=axis, dtype="int32", name="y"), {"data": (3, 4)})


DOT = [((3, 4), (4, 5), False, False), ((4, 3), (4, 5), True, False),
       ((3, 4), (5, 4), False, True), ((4, 3), (5, 4), True, True),
       ((2, 3, 4), (4, 5), False, False), ((2, 3, 4), (4, 5, 2), False, False),
       ((4, 2, 3), (4, 5), True, False), ((3, 4), (5, 2, 4), False, True),
       ((4,), (4,), False, False), ((4,), (4, 3), False, False),
       ((3, 4), (4,), False, False)]


@pytest.mark.parametrize("sa,sb,ta,tb", DOT)
def test_dot(sa, sb, ta, tb) -> None:
    agree(mx.sym.dot(A, B, transpose_a=ta, transpose_b=tb, name="y"),
          {"a": sa, "b": sb})


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("batch", [(2,), (2, 3)])
def test_batch_dot(ta, tb, batch) -> None:
    sa = batch + ((4, 3) if ta else (3, 4))
    sb = batch + ((5, 4) if tb else (4, 5))
    agree(mx.sym.batch_dot(A, B, transpose_a=ta, transpose_b=tb, name="y"),
          {"a": sa, "b": sb})


@pytest.mark.parametrize("ta,tb,alpha", [(False, False, 1.0), (True, False, 2.5),
                                         (False, True, -0.5), (True, True, 1.0)])
def test_linalg_gemm2(ta, tb, alpha) -> None:
    sa = (2, 4, 3) if ta else (2, 3, 4)
    sb = (2, 5, 4) if tb else (2, 4, 5)
    agree(mx.sym.linalg.gemm2(A, B, transpose_a=ta, transpose_b=tb, alpha=alpha,
                              name="y"), {"a": sa, "b": sb})


def test_linalg_gemm2_other_axis_refused() -> None:
    with pytest.raises(NoOnnxMeaning, match="axis"):
        export(mx.sym.linalg.gemm2(A, B, axis=-3, name="y"),
               {"a": (3, 2, 4), "b": (4, 2, 5)})


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("op", ["max", "mean", "prod", "norm"])
def test_reduction_opsets(op, opset) -> None:
    """Axes are an attribute before opset 18 and an input from 18 (but ReduceSum)."""
    agree(getattr(mx.sym, op)(DATA, axis=(0, 2), name="y"), {"data": (3, 4, 5)},
          opset=opset, low=0.5, high=1.5)
