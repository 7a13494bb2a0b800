"""Pooling and normalisation rules against MXNet 1.9.1: drawn attributes and input
shapes (partly unknown ones included); the engine and MXNet give the same shapes and
dtypes, or both refuse."""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.core.ops.judge import agree, engine_verdict

SOME = settings(max_examples=100, deadline=None)
dim = st.integers(1, 9)


def tup(values: Any) -> str:
    values = list(values)
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


@st.composite
def partly(draw: st.DrawFn, shape: Any) -> tuple[int, ...]:
    """``shape``, sometimes with dimensions unknown (0)."""
    shape = tuple(shape)
    if draw(st.integers(0, 2)) == 0:
        return hide(shape, draw(st.lists(st.booleans(), min_size=len(shape),
                                         max_size=len(shape))))
    return shape


def hide(shape: tuple[int, ...], mask: list[bool]) -> tuple[int, ...]:
    """Some dimensions unknown (0, MXNet's legacy convention)."""
    return tuple(0 if m else d for d, m in zip(shape, mask))


@SOME
@given(st.integers(2, 5).flatmap(lambda n: st.tuples(st.lists(dim, min_size=n, max_size=n),
                                                      st.integers(-n - 1, n))),
       st.booleans(), st.sampled_from(["float32", "float16", "float64"]))
def test_batch_norm(data_axis, hide_channel, dtype) -> None:
    data, axis = data_axis
    shape = tuple(data)
    if hide_channel:
        shape = hide(shape, [k == 0 for k in range(len(shape))])      # the batch unknown
    attrs = {"axis": str(axis)}
    agree("BatchNorm", attrs, [shape, None, None, None, None])
    agree("BatchNorm", attrs, [dtype, None, None, None, None], kind="dtype")


@SOME
@given(st.integers(1, 3), st.data())
def test_pooling(k, data) -> None:
    spatial = data.draw(st.lists(st.integers(1, 12), min_size=k, max_size=k))
    kernel = data.draw(st.lists(st.integers(1, 5), min_size=k, max_size=k))
    stride = data.draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    pad = data.draw(st.lists(st.integers(0, 2), min_size=k, max_size=k))
    attrs: dict[str, str] = {"kernel": tup(kernel)}
    if data.draw(st.booleans()):
        attrs["stride"] = tup(stride)
    if data.draw(st.booleans()):
        attrs["pad"] = tup(pad)
    attrs["pool_type"] = data.draw(st.sampled_from(["max", "avg", "sum"]))
    convention = data.draw(st.sampled_from(["valid", "full", "same"]))
    if convention == "same":
        assume(k == 1)
        attrs.pop("pad", None)
    attrs["pooling_convention"] = convention
    if data.draw(st.booleans()):
        attrs["global_pool"] = data.draw(st.sampled_from(["True", "1", "true"]))
    if data.draw(st.integers(0, 4)) == 0 and k > 1:
        attrs["layout"] = {2: "NHWC", 3: "NDHWC"}[k]
    shape = (data.draw(dim), data.draw(dim)) + tuple(spatial)
    if attrs.get("layout"):
        shape = (shape[0],) + tuple(spatial) + (shape[1],)
    if data.draw(st.integers(0, 3)) == 0:
        shape = hide(shape, [i == 0 for i in range(len(shape))])
    agree("Pooling", attrs, [shape])
    agree("Pooling", attrs, ["float32"], kind="dtype")


@SOME
@given(st.integers(2, 5).flatmap(lambda n: st.tuples(st.lists(dim, min_size=n, max_size=n),
                                                      st.integers(-n - 1, n))))
def test_layer_norm(data_axis) -> None:
    data, axis = data_axis
    agree("LayerNorm", {"axis": str(axis)}, [tuple(data), None, None])
    agree("LayerNorm", {"axis": str(axis)}, [hide(tuple(data), [True] + [False] * 4)[
        :len(data)], None, None])
    agree("LayerNorm", {"axis": str(axis)}, ["float16", None, None], kind="dtype")


@SOME
@given(st.lists(dim, min_size=3, max_size=5).flatmap(partly), st.integers(1, 4))
def test_group_and_instance_norm(shape, groups) -> None:
    agree("GroupNorm", {"num_groups": str(groups)}, [shape, None, None])
    agree("InstanceNorm", {}, [shape, None, None])
    agree("InstanceNorm", {}, ["float32", None, None], kind="dtype")


@SOME
@given(st.lists(dim, min_size=2, max_size=5).flatmap(partly),
       st.sampled_from(["instance", "channel", "spatial"]))
def test_l2_normalization_and_lrn(shape, mode) -> None:
    agree("L2Normalization", {"mode": mode}, [shape])
    agree("L2Normalization", {"mode": mode}, ["float32"], kind="dtype")
    agree("LRN", {"nsize": "3"}, [shape])


@SOME
@given(st.lists(dim, min_size=4, max_size=4), st.integers(1, 4), st.integers(1, 3),
       st.sampled_from(["concat", "sum"]), st.booleans())
def test_upsampling(data, scale, n, mode, bilinear) -> None:
    shape = tuple(data)
    if bilinear:
        attrs = {"scale": str(scale), "sample_type": "bilinear", "num_filter": str(shape[1]),
                 "num_args": "2"}
        agree("UpSampling", attrs, [shape, None])
        return
    attrs = {"scale": str(scale), "sample_type": "nearest", "num_args": str(n),
             "multi_input_mode": mode}
    others = [(shape[0], shape[1], shape[2] * scale, shape[3] * scale)] * (n - 1)
    agree("UpSampling", attrs, [shape] + others)


@SOME
@given(st.lists(dim, min_size=4, max_size=4).flatmap(partly),
       st.lists(st.integers(1, 7), max_size=2),
       st.sampled_from(["size", "odd_scale", "to_even_down", "to_even_up", "to_odd_down",
                        "to_odd_up", "like"]), st.integers(1, 3), st.integers(1, 3))
def test_adaptive_pool_and_bilinear_resize(shape, size, mode, sh, sw) -> None:
    agree("_contrib_AdaptiveAvgPooling2D", {"output_size": tup(size)}, [shape])
    attrs = {"mode": mode, "height": "5", "width": "6"}
    if mode == "odd_scale":
        attrs.update(scale_height=str(sh), scale_width=str(sw))
    values: list[Any] = [shape, (1, 1, 4, 7)] if mode == "like" else [shape]
    agree("_contrib_BilinearResize2D", attrs, values)


@SOME
@given(st.lists(dim, min_size=4, max_size=4), dim, st.integers(1, 3), st.integers(1, 3),
       st.booleans())
def test_roi_align_and_pooling(data, boxes, ph, pw, sensitive) -> None:
    shape = tuple(data)
    attrs = {"pooled_size": tup((ph, pw)), "spatial_scale": "0.5",
             "position_sensitive": str(sensitive)}
    agree("_contrib_ROIAlign", attrs, [shape, (boxes, 5)])
    agree("_contrib_ROIAlign", attrs, ["float32", "float32"], kind="dtype")
    agree("ROIPooling", {"pooled_size": tup((ph, pw)), "spatial_scale": "0.5"},
          [shape, (boxes, 5)])


@SOME
@given(st.lists(dim, min_size=4, max_size=5).flatmap(partly), st.data())
def test_pad(shape, draw) -> None:
    widths = [0, 0, 0, 0] + draw.draw(st.lists(st.integers(0, 3), min_size=2 * len(shape) - 4,
                                               max_size=2 * len(shape) - 4))
    mode = draw.draw(st.sampled_from(["constant", "edge", "reflect"]))
    agree("Pad", {"mode": mode, "pad_width": tup(widths)}, [shape])


def test_messages_name_what_would_fit() -> None:
    said = engine_verdict("Pooling", {"kernel": "(5, 5)"}, [(1, 3, 3, 3)]).refused
    assert said is not None and "kernel (5, 5) is larger than the padded input (3, 3)" in said
    said = engine_verdict("BatchNorm", {"axis": "4"}, [(1, 3, 8, 8)] + [None] * 4).refused
    assert said == ("axis 4 is out of range for data of 4 dimensions (1, 3, 8, 8): use an "
                    "axis from -4 to 3")
    said = engine_verdict("GroupNorm", {"num_groups": "3"}, [(1, 8, 4, 4), None, None]).refused
    assert said is not None and "8 channels do not divide into 3 groups" in said


@pytest.mark.parametrize("kind", ["shape", "dtype"])
def test_batch_norm_learns_its_parameters_from_the_data(kind) -> None:
    values: list[Any] = [(2, 16, 5, 5)] if kind == "shape" else ["float16"]
    got = agree("BatchNorm", {}, values + [None] * 4, kind=kind)
    assert got.ins[1:] == ((16,),) * 4 if kind == "shape" else ("float32",) * 4


@SOME
@given(st.lists(dim, min_size=2, max_size=5).flatmap(partly),
       st.sampled_from(["float32", "float16", "float64"]))
def test_the_older_batch_norms(shape, dtype) -> None:
    for op, attrs in (("BatchNorm_v1", {}), ("_contrib_SyncBatchNorm", {"key": "k"})):
        agree(op, attrs, [shape, None, None, None, None])
        agree(op, attrs, [dtype, None, None, None, None], kind="dtype")
