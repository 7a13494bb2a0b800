"""Our exporter's embedding, adaptive pooling, up-sampling, resizing, Crop, spatial
transformer pieces, ROI pooling and the refused layers, judged by MXNet's inference
forward."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from tests.core.convert.own.harness import agree, export

X = mx.sym.var("data")


@pytest.mark.parametrize("ids,dtype", [
    ([[0, 1, 4], [3, 2, 2]], "float32"),
    ([[0.7, 1.2, 3.9], [-0.6, 2.5, 4.0]], "float32"),       # truncated toward 0
    ([[-3, 7, 1], [100, -1, 4]], "float32"),                # out of range: clipped
    ([[-3, 7, 1], [100, -1, 4]], "int32"),
    ([[[0, 4], [2, 9]]], "int64"),
])
def test_embedding(ids, dtype) -> None:
    value = np.asarray(ids, dtype)
    agree(mx.sym.Embedding(X, input_dim=5, output_dim=3, name="e"), {"data": value.shape},
          feed={"data": value}, dtypes={"data": dtype})


@pytest.mark.parametrize("shape,size", [((1, 2, 8, 6), (1, 1)), ((1, 2, 8, 6), (4, 3)),
                                        ((1, 2, 7, 5), (3, 2)), ((2, 3, 5, 9), (4, 4)),
                                        ((1, 2, 5, 5), (7, 6)), ((1, 2, 6, 6), (1,))])
def test_adaptive_avg_pooling(shape, size) -> None:
    agree(mx.sym.contrib.AdaptiveAvgPooling2D(X, output_size=size, name="a"),
          {"data": shape})


@pytest.mark.parametrize("scale", [1, 2, 3])
def test_up_sampling_nearest(scale) -> None:
    agree(mx.sym.UpSampling(X, scale=scale, sample_type="nearest", name="u"),
          {"data": (1, 2, 3, 4)})


@pytest.mark.parametrize("mode", ["concat", "sum"])
def test_up_sampling_nearest_inputs(mode) -> None:
    a, b = mx.sym.var("a"), mx.sym.var("b")
    sym = mx.sym.UpSampling(a, b, scale=2, sample_type="nearest", num_args=2,
                            multi_input_mode=mode, name="u")
    agree(sym, {"a": (1, 2, 4, 6), "b": (1, 2, 2, 3)})


@pytest.mark.parametrize("scale,channels", [(2, 3), (3, 2), (4, 1)])
def test_up_sampling_bilinear(scale, channels) -> None:
    """As gluon and the symbol API build it: one bilinear filter per channel."""
    weight = mx.sym.var("u_weight")
    sym = mx.sym.UpSampling(X, weight, scale=scale, sample_type="bilinear",
                            num_filter=channels, name="u")
    k = 2 * scale - scale % 2
    value = mx.nd.zeros((channels, 1, k, k))
    mx.init.Bilinear()._init_weight("u_weight", value)
    agree(sym, {"data": (1, channels, 3, 4)}, values={"u_weight": value.asnumpy()})


@pytest.mark.parametrize("kw", [
    dict(height=7, width=9), dict(height=2, width=3), dict(height=1, width=1),
    dict(height=5, width=8), dict(scale_height=2.0, scale_width=1.5, mode="size"),
    dict(scale_height=2.0, scale_width=3.0, mode="odd_scale"),
    dict(mode="to_even_down"), dict(mode="to_even_up"), dict(mode="to_odd_down"),
    dict(mode="to_odd_up"),
])
@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize("shape", [(1, 2, 4, 5), (2, 1, 5, 6)])
def test_bilinear_resize(kw, align, shape) -> None:
    agree(mx.sym.contrib.BilinearResize2D(X, align_corners=align, name="r", **kw),
          {"data": shape})


@pytest.mark.parametrize("align", [True, False])
def test_bilinear_resize_like(align) -> None:
    like = mx.sym.var("like")
    agree(mx.sym.contrib.BilinearResize2D(X, like, mode="like", align_corners=align,
                                          name="r"), {"data": (1, 2, 4, 5), "like": (1, 1, 7, 3)})


@pytest.mark.parametrize("kw", [dict(h_w=(3, 4)), dict(h_w=(3, 4), offset=(1, 2)),
                                dict(h_w=(2, 5), center_crop=True),
                                dict(h_w=(3, 3), center_crop=True)])
def test_crop(kw) -> None:
    agree(mx.sym.Crop(X, num_args=1, name="c", **kw), {"data": (1, 2, 6, 7)})


@pytest.mark.parametrize("kw", [dict(), dict(offset=(2, 1)), dict(center_crop=True)])
def test_crop_like(kw) -> None:
    like = mx.sym.var("like")
    agree(mx.sym.Crop(X, like, num_args=2, name="c", **kw),
          {"data": (1, 2, 6, 7), "like": (1, 5, 3, 4)})


@pytest.mark.parametrize("target", [(3, 4), (5, 2), (4, 4)])
def test_grid_generator_affine(target) -> None:
    agree(mx.sym.GridGenerator(X, transform_type="affine", target_shape=target, name="g"),
          {"data": (2, 6)})


def test_grid_generator_warp() -> None:
    agree(mx.sym.GridGenerator(X, transform_type="warp", name="g"), {"data": (2, 2, 3, 5)},
          low=-2, high=2)


@pytest.mark.parametrize("grid_shape,spread", [((1, 2, 3, 4), 1.0), ((2, 2, 5, 5), 1.5),
                                               ((2, 2, 4, 6), 0.5)])
def test_bilinear_sampler(grid_shape, spread) -> None:
    grid = mx.sym.var("grid")
    agree(mx.sym.BilinearSampler(X, grid, name="s"),
          {"data": (grid_shape[0], 3, 4, 5), "grid": grid_shape}, low=-spread, high=spread)


@pytest.mark.parametrize("target", [(3, 4), (6, 5)])
def test_spatial_transformer(target) -> None:
    loc = mx.sym.var("loc")
    theta = np.array([[0.9, 0.1, 0.05, -0.2, 1.1, 0.1], [1.2, 0.0, -0.3, 0.0, 0.7, 0.2]],
                     "float32")
    agree(mx.sym.SpatialTransformer(X, loc, target_shape=target, transform_type="affine",
                                    sampler_type="bilinear", name="st"),
          {"data": (2, 3, 5, 6), "loc": (2, 6)}, feed={"loc": theta})


@pytest.mark.parametrize("pooled,scale", [((2, 2), 1.0), ((3, 2), 0.5), ((1, 1), 0.25),
                                          ((4, 3), 0.5)])
def test_roi_pooling(pooled, scale) -> None:
    rois = mx.sym.var("rois")
    boxes = np.array([[0, 0, 0, 7, 7], [1, 2.4, 1.5, 9.6, 6.2], [0, 3, 3, 3, 3],
                      [1, 5.5, 0.5, 15, 13]], "float32")
    agree(mx.sym.ROIPooling(X, rois, pooled_size=pooled, spatial_scale=scale, name="r"),
          {"data": (2, 3, 8, 10), "rois": boxes.shape}, feed={"rois": boxes})


@pytest.mark.parametrize("sym,shapes,match", [
    (lambda: mx.sym.contrib.DeformableConvolution(X, mx.sym.var("off"), kernel=(3, 3),
                                                  num_filter=2, name="d"),
     {"data": (1, 2, 5, 5), "off": (1, 18, 3, 3)}, "deformable"),
    (lambda: mx.sym.Correlation(X, mx.sym.var("b"), name="c"),
     {"data": (1, 2, 5, 5), "b": (1, 2, 5, 5)}, "Correlation"),
])
def test_refused(sym, shapes, match) -> None:
    with pytest.raises(NoOnnxMeaning, match=match):
        export(sym(), shapes)


def test_custom_refused() -> None:
    """The engine stops at a Custom node before any converter runs (its shapes are the
    Python code's); the converter, called as build would, refuses it by name."""
    from mxexplorer.core.convert.onnx import registry
    from mxexplorer.core.convert.onnx.context import Ctx, OpNode

    node = OpNode(1, "Custom", "c", {"op_type": "mine"}, {"op_type": "mine"}, ["data"],
                  [(1, 2)], ["float32"], [(1, 2)], ["float32"], ["c_output"])
    conv = registry.converter_for("Custom")
    assert conv is not None
    with pytest.raises(NoOnnxMeaning, match="custom op .*its code is not in the file"):
        conv.convert(Ctx(13), node)


CORPUS = ["crfasrnn__net-symbol.json",                  # Deconvolution, Crop, Pooling full
          "djl__squeezenet1.0-symbol.json",             # Pooling full, Dropout
          "insightface__det2-symbol.json",              # PReLU, FullyConnected, softmax
          "lffd__symbol_10_160_17L_4scales_v1_deploy-symbol.json",
          "tornadomeet-face__lightened_cnn-symbol.json"]


@pytest.mark.parametrize("name", CORPUS, ids=[n[:30] for n in CORPUS])
def test_corpus_file(name) -> None:
    """Real files made of this family's layers, exported whole (random weights)."""
    import json
    import re
    from pathlib import Path

    folder = Path(__file__).resolve().parents[4] / "benchmarks" / "corpus"
    if not (folder / name).exists():
        pytest.skip(f"{name} is not here")
    text = (folder / name).read_text()
    spec = json.loads((folder / "shapes.json").read_text())[name]
    args = mx.sym.load_json(text).list_arguments()
    agree(text, {a: tuple(shape) for a in args for pattern, shape in spec
                 if re.match(pattern, a)})
