"""Our exporter's convolution, deconvolution, fully connected and pooling layers, judged
by MXNet's inference forward (with hypothesis tests of their window geometry)."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from tests.core.convert.own.harness import agree, export, run_mxnet, run_onnx

X = mx.sym.var("data")


@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 9), dict(kernel=(3,), num_filter=4)),
    ((2, 3, 9), dict(kernel=(3,), num_filter=4, stride=(2,), pad=(1,), dilate=(2,))),
    ((1, 4, 7, 8), dict(kernel=(3, 3), num_filter=6)),
    ((1, 4, 7, 8), dict(kernel=(3, 2), num_filter=6, stride=(2, 1), pad=(1, 0))),
    ((1, 4, 9, 8), dict(kernel=(3, 3), num_filter=4, dilate=(2, 3), pad=(2, 3))),
    ((1, 4, 7, 8), dict(kernel=(3, 3), num_filter=6, num_group=2, no_bias=True)),
    ((1, 4, 7, 8), dict(kernel=(3, 3), num_filter=4, num_group=4, pad=(1, 1))),
    ((1, 4, 7, 8), dict(kernel=(3, 3), num_filter=8, num_group=4, stride=(2, 2))),
    ((1, 4, 7, 8), dict(kernel=(1, 1), num_filter=5, no_bias=True)),
    ((1, 2, 5, 6, 7), dict(kernel=(3, 3, 3), num_filter=3)),
    ((1, 2, 5, 6, 7), dict(kernel=(2, 3, 1), num_filter=4, stride=(2, 1, 2),
                           pad=(1, 1, 0), dilate=(1, 2, 1), num_group=2)),
])
def test_convolution(shape, kw) -> None:
    agree(mx.sym.Convolution(X, name="c", **kw), {"data": shape})


def test_convolution_nhwc_refused() -> None:
    sym = mx.sym.Convolution(X, kernel=(3, 3), num_filter=4, layout="NHWC", name="c")
    with pytest.raises(NoOnnxMeaning, match="layout NHWC"):
        export(sym, {"data": (1, 8, 8, 3)})


@pytest.mark.parametrize("shape,kw", [
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=3)),
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=3, no_bias=False)),
    ((1, 4, 5, 6), dict(kernel=(4, 4), num_filter=3, stride=(2, 2), pad=(1, 1))),
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=3, stride=(2, 2), pad=(1, 1),
                        adj=(1, 1))),
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=3, stride=(2, 3), pad=(0, 1),
                        adj=(1, 2), no_bias=False)),
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=3, stride=(2, 2), pad=(1, 1),
                        target_shape=(10, 12))),
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=4, num_group=2, stride=(2, 2))),
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=4, num_group=4, no_bias=False)),
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=3, dilate=(2, 2), pad=(1, 2))),
    ((1, 4, 5, 6), dict(kernel=(3, 3), num_filter=3, dilate=(2, 1), stride=(2, 2),
                        adj=(1, 0))),
    ((2, 3, 7), dict(kernel=(3,), num_filter=2, stride=(2,), pad=(1,), adj=(1,))),
    ((1, 2, 3, 4, 5), dict(kernel=(2, 3, 3), num_filter=2, stride=(2, 1, 2))),
])
def test_deconvolution(shape, kw) -> None:
    agree(mx.sym.Deconvolution(X, name="d", **kw), {"data": shape})


@pytest.mark.parametrize("kw", [
    dict(kernel=(4, 4), stride=(2, 2), target_shape=(11, 12)),
    dict(kernel=(3, 3), stride=(2, 2), target_shape=(10, 11), no_bias=False),
    dict(kernel=(3, 3), stride=(3, 2), dilate=(1, 2), target_shape=(14, 13)),
])
def test_deconvolution_target_shape_odd(kw) -> None:
    """An odd padding total (one more at the start than at the end) is what oneDNN's
    kernel refuses, so MXNet judges through the same deconvolution unpadded and cut."""
    sym = mx.sym.Deconvolution(X, num_filter=3, name="d", **kw)
    built, params = export(sym, {"data": (1, 4, 5, 6)})
    data = np.random.default_rng(1).uniform(-1, 1, (1, 4, 5, 6)).astype("float32")
    got = run_onnx(built, {"data": data})[built.outputs[0][1]]
    plain = {k: v for k, v in kw.items() if k != "target_shape"}
    full = mx.sym.Deconvolution(X, num_filter=3, name="d", **plain)
    (h, w), (fh, fw) = kw["target_shape"], full.infer_shape(data=(1, 4, 5, 6))[1][0][2:]
    top, left = (fh - h + 1) // 2, (fw - w + 1) // 2
    cut = mx.sym.slice(full, begin=(None, None, top, left), end=(None, None, top + h,
                                                                  left + w))
    want = run_mxnet(cut, {"data": data}, params)
    np.testing.assert_allclose(got, list(want.values())[0], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("shape,flatten,no_bias", [
    ((3, 5), True, False), ((3, 5), False, True), ((2, 3, 5), True, False),
    ((2, 3, 5), False, False), ((2, 3, 4, 5), True, True), ((2, 3, 4, 5), False, False),
    ((2, 3, 4, 5), False, True),
])
def test_fully_connected(shape, flatten, no_bias) -> None:
    agree(mx.sym.FullyConnected(X, num_hidden=6, flatten=flatten, no_bias=no_bias,
                                name="fc"), {"data": shape})


POOL_CASES = [
    ((1, 2, 9), dict(kernel=(3,), stride=(2,))),
    ((1, 2, 9), dict(kernel=(3,), stride=(2,), pad=(1,), pooling_convention="full")),
    ((1, 2, 7, 8), dict(kernel=(3, 3))),
    ((1, 2, 7, 8), dict(kernel=(3, 3), stride=(2, 2))),
    ((1, 2, 7, 8), dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full")),
    ((1, 2, 7, 8), dict(kernel=(3, 2), stride=(2, 3), pad=(1, 1))),
    ((1, 2, 7, 8), dict(kernel=(3, 2), stride=(2, 3), pad=(1, 1),
                        pooling_convention="full")),
    ((1, 2, 9), dict(kernel=(3,), stride=(2,), pad=(0, 0, 0), pooling_convention="same")),
    ((1, 2, 8), dict(kernel=(2,), stride=(2,), pad=(0, 0, 0), pooling_convention="same")),
    ((1, 2, 7), dict(kernel=(4,), stride=(1,), pad=(0, 0, 0), pooling_convention="same")),
    ((1, 2, 7), dict(kernel=(2,), stride=(3,), pad=(0, 0, 0), pooling_convention="same")),
    ((1, 2, 7, 8), dict(kernel=(2, 2), stride=(2, 2), pad=(2, 2))),
    ((1, 2, 7, 8), dict(kernel=(2, 3), stride=(3, 3), pad=(1, 2),
                        pooling_convention="full")),
    ((1, 2, 5, 6, 7), dict(kernel=(2, 3, 2), stride=(2, 1, 2), pad=(1, 1, 0))),
    ((1, 2, 5, 6, 7), dict(kernel=(2, 3, 2), stride=(2, 2, 2), pooling_convention="full")),
    ((1, 2, 7, 8), dict(kernel=(3, 3), global_pool=True)),
    ((1, 2, 9), dict(kernel=(3,), global_pool=True)),
    ((1, 2, 4, 5, 3), dict(kernel=(1, 1, 1), global_pool=True)),
]


@pytest.mark.parametrize("kind", ["max", "avg", "sum"])
@pytest.mark.parametrize("shape,kw", POOL_CASES)
def test_pooling(kind, shape, kw) -> None:
    _agree_unless_mxnet_fails(mx.sym.Pooling(X, pool_type=kind, name="p", **kw),
                              {"data": shape})


@pytest.mark.parametrize("shape,kw", [c for c in POOL_CASES if "pad" in c[1]
                                      or c[1].get("pooling_convention") == "same"])
def test_pooling_avg_exclude_pad(shape, kw) -> None:
    _agree_unless_mxnet_fails(mx.sym.Pooling(X, pool_type="avg", count_include_pad=False,
                                             name="p", **kw), {"data": shape})


@pytest.mark.parametrize("p_value", [1, 2, 3])
@pytest.mark.parametrize("shape,kw", POOL_CASES)
def test_pooling_lp(p_value, shape, kw) -> None:
    sym = mx.sym.Pooling(X, pool_type="lp", p_value=p_value, name="p", **kw)
    agree(sym, {"data": shape})


def test_pooling_nhwc_refused() -> None:
    sym = mx.sym.Pooling(X, kernel=(2, 2), layout="NHWC", name="p")
    with pytest.raises(NoOnnxMeaning, match="layout NHWC"):
        export(sym, {"data": (1, 8, 8, 3)})


def _agree_unless_mxnet_fails(sym, shapes, hypothesis: bool = False) -> None:
    """agree() (NaN where MXNet gives NaN: its 3-D average of an empty window), where
    MXNet's own kernel (oneDNN's) may refuse the combination at run time ('same'
    max/avg pooling, a padding as large as the kernel): skipped then."""
    built, params = export(sym, shapes)
    rng = np.random.default_rng(3)
    feed = {k: rng.uniform(-1, 1, v).astype("float32") for k, v in shapes.items()}
    got = run_onnx(built, feed)
    try:
        want = run_mxnet(sym, feed, params)
    except mx.base.MXNetError as exc:
        if hypothesis:
            assume(False)
        pytest.skip(f"MXNet refuses to run it: {str(exc).splitlines()[-1][:80]}")
    for entry, name in built.outputs:
        ref = want[entry]
        scale = max(1.0, float(np.nanmax(np.abs(ref)))) if ref.size else 1.0
        np.testing.assert_allclose(got[name], ref, atol=1e-4 * scale, rtol=0)


def _valid(shape, kernel, stride, pad, dilate=None):
    for d, (i, k, p) in enumerate(zip(shape, kernel, pad)):
        kk = (k - 1) * (dilate[d] if dilate else 1) + 1
        if i + 2 * p < kk:
            return False
    return True


@st.composite
def _geometry(draw, dilated: bool):
    n = draw(st.integers(1, 3))
    shape = [draw(st.integers(3, 9)) for _ in range(n)]
    kernel = [draw(st.integers(1, 4)) for _ in range(n)]
    stride = [draw(st.integers(1, 3)) for _ in range(n)]
    pad = [draw(st.integers(0, 2)) for _ in range(n)]
    dilate = [draw(st.integers(1, 3)) for _ in range(n)] if dilated else None
    assume(_valid(shape, kernel, stride, pad, dilate))
    return shape, kernel, stride, pad, dilate


@settings(max_examples=25, deadline=None)
@given(g=_geometry(True), group=st.sampled_from([1, 2]), no_bias=st.booleans())
def test_convolution_geometry(g, group, no_bias) -> None:
    shape, kernel, stride, pad, dilate = g
    sym = mx.sym.Convolution(X, kernel=tuple(kernel), stride=tuple(stride), pad=tuple(pad),
                             dilate=tuple(dilate), num_filter=2 * group, num_group=group,
                             no_bias=no_bias, name="c")
    _assume_mxnet_takes(sym, tuple([1, 2 * group] + shape))
    agree(sym, {"data": tuple([1, 2 * group] + shape)})


@settings(max_examples=25, deadline=None)
@given(g=_geometry(False), kind=st.sampled_from(["max", "avg", "sum", "lp"]),
       convention=st.sampled_from(["valid", "full", "same"]), include=st.booleans())
def test_pooling_geometry(g, kind, convention, include) -> None:
    shape, kernel, stride, pad, _ = g
    if convention == "same":
        shape, kernel, stride, pad = shape[:1], kernel[:1], stride[:1], [0, 0, 0]
    sym = mx.sym.Pooling(X, kernel=tuple(kernel), stride=tuple(stride), pad=tuple(pad),
                         pool_type=kind, pooling_convention=convention,
                         count_include_pad=include, p_value=2, name="p")
    _assume_mxnet_takes(sym, tuple([1, 2] + shape))
    _agree_unless_mxnet_fails(sym, {"data": tuple([1, 2] + shape)}, hypothesis=True)


def _assume_mxnet_takes(sym, shape) -> None:
    try:
        sym.infer_shape(data=shape)
    except mx.base.MXNetError:
        assume(False)


@pytest.mark.parametrize("kind", ["max", "avg", "sum"])
@pytest.mark.parametrize("convention", ["valid", "full"])
@pytest.mark.parametrize("pad", [(0, 0), (1, 1), (2, 1)])
def test_legacy_v1_layers(kind, convention, pad) -> None:
    """Convolution_v1, BatchNorm_v1 and Pooling_v1 (old files); Pooling_v1 pads with
    zeros its max sees and averages over the whole kernel."""
    y = mx.sym.Convolution_v1(X, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c")
    y = mx.sym.BatchNorm_v1(y, fix_gamma=False, name="bn") - 2    # the zeros show
    y = mx.sym.Pooling_v1(y, kernel=(3, 3), stride=(2, 2), pool_type=kind,
                          pad=pad, pooling_convention=convention, name="p")
    agree(y, {"data": (1, 3, 8, 9)})
