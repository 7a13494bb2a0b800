"""The pool_norm rules against MXNet 1.9.1: attributes and input shapes (or dtypes) drawn
widely, unknown dimensions, inputs not given and invalid combinations included; the
engine and MXNet give the same shapes and dtypes of every input and visible output, or
both refuse.  A few two-node graphs check what flows back from a reader of the output,
and example tests check that refusals name the attribute or input at fault."""
from __future__ import annotations

import json
import warnings
from typing import Any, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.base import RuleError
from mxexplorer.core.ops.engine import legacy_to_shape, shape_to_legacy
from tests.core.ops.judge import agree

SOME = settings(max_examples=120, deadline=None)
MANY = settings(max_examples=150, deadline=None)
FEW = settings(max_examples=60, deadline=None)

DTYPES = ["float32", "float16", "float64", "int32", "uint8"]


def tup(values: Sequence[Any]) -> str:
    values = list(values)
    return "(" + ", ".join(map(str, values)) + ("," if len(values) == 1 else "") + ")"


@st.composite
def shapes(draw: st.DrawFn, low: int = 1, high: int = 5, size: int = 9,
           unknown: float = 0.15, none: float = 0.1) -> tuple[int, ...] | None:
    """A shape of ``low``-``high`` dimensions, some of them unknown (0), or None (not
    given)."""
    if draw(st.floats(0, 1)) < none:
        return None
    rank = draw(st.integers(low, high))
    dims = draw(st.lists(st.integers(1, size), min_size=rank, max_size=rank))
    mask = draw(st.lists(st.floats(0, 1), min_size=rank, max_size=rank))
    return tuple(0 if m < unknown else d for d, m in zip(dims, mask))


def hidden(shape: tuple[int, ...], mask: Sequence[bool]) -> tuple[int, ...]:
    return tuple(0 if m else d for d, m in zip(shape, mask))


def dtypes(none: float = 0.3) -> st.SearchStrategy[str | None]:
    return st.one_of(st.sampled_from(DTYPES), st.none()) if none else st.sampled_from(DTYPES)


def params(n: int, none: float = 0.6) -> st.SearchStrategy[list[Any]]:
    """Shapes for parameter inputs: mostly not given, sometimes of any shape."""
    return st.lists(shapes(1, 2, 6, none=none), min_size=n, max_size=n)


def both(op: str, attrs: dict[str, str], values: Sequence[Any],
         types: Sequence[Any]) -> None:
    agree(op, attrs, values)
    agree(op, attrs, types, kind="dtype")


# ================================================================ batch norms
@SOME
@given(st.sampled_from(["BatchNorm", "_contrib_BatchNormWithReLU"]), shapes(),
       st.one_of(st.none(), st.integers(-6, 5)), params(4), st.booleans(), dtypes(0.2),
       st.lists(dtypes(0.7), min_size=4, max_size=4))
def test_batch_norm(op, data, axis, gamma_etc, mean_var, dtype, param_types) -> None:
    attrs = {} if axis is None else {"axis": str(axis)}
    if mean_var and op == "BatchNorm":      # (the op table shows ReLU's form one output)
        attrs["output_mean_var"] = "True"
    both(op, attrs, [data, *gamma_etc], [dtype, *param_types])


@SOME
@given(st.sampled_from(["BatchNorm_v1", "_contrib_SyncBatchNorm"]), shapes(), params(4),
       dtypes(0.2), st.lists(dtypes(0.7), min_size=4, max_size=4))
def test_the_older_batch_norms(op, data, gamma_etc, dtype, param_types) -> None:
    attrs = {"key": "k"} if op == "_contrib_SyncBatchNorm" else {}
    both(op, attrs, [data, *gamma_etc], [dtype, *param_types])


@pytest.mark.parametrize("kind", ["shape", "dtype"])
def test_batch_norm_learns_its_parameters_from_the_data(kind) -> None:
    values: list[Any] = [(2, 16, 5, 5)] if kind == "shape" else ["float16"]
    got = agree("BatchNorm", {}, values + [None] * 4, kind=kind)
    assert got.ins[1:] == (((16,),) * 4 if kind == "shape" else ("float32",) * 4)
    got = agree("BatchNorm", {"axis": "-1"}, [(2, 5, 7)] + [None] * 4)
    assert got.ins[1:] == ((7,),) * 4


# ====================================================== layer / group / instance
@SOME
@given(st.sampled_from(["LayerNorm", "GroupNorm", "InstanceNorm"]), shapes(),
       st.integers(-6, 5), st.sampled_from([1, 2, 3, 4, -1, -2]), params(2), st.booleans(),
       dtypes(0.3), st.lists(dtypes(0.7), min_size=2, max_size=2))
def test_layer_group_and_instance_norm(op, data, axis, groups, gamma_beta, mean_var, dtype,
                                       param_types) -> None:
    attrs: dict[str, str] = {}
    if op == "LayerNorm":
        attrs["axis"] = str(axis)
    if op == "GroupNorm":          # num_groups 0 crashes MXNet itself (a division by 0)
        attrs["num_groups"] = str(groups)
    if op != "InstanceNorm" and mean_var:
        attrs["output_mean_var"] = "True"
    both(op, attrs, [data, *gamma_beta], [dtype, *param_types])


@SOME
@given(shapes(), st.sampled_from(["instance", "channel", "spatial"]), dtypes(0.3))
def test_l2_normalization_and_lrn(data, mode, dtype) -> None:
    both("L2Normalization", {"mode": mode}, [data], [dtype])
    both("LRN", {"nsize": "3"}, [data], [dtype])


# ==================================================================== pooling
def _some_of(draw: st.DrawFn, n: int, values: st.SearchStrategy[int]) -> str:
    return tup(draw(st.lists(values, min_size=n, max_size=n)))


@st.composite
def any_pooling(draw: st.DrawFn) -> tuple[str, dict[str, str], Any]:
    """Pooling or Pooling_v1 with attributes drawn freely (most combinations refused)."""
    op = draw(st.sampled_from(["Pooling", "Pooling_v1"]))
    k = draw(st.sampled_from([0, 1, 2, 2, 3, 4]))
    attrs: dict[str, str] = {}
    if k or draw(st.booleans()):
        attrs["kernel"] = _some_of(draw, k, st.integers(0, 5))
    for name, values in (("stride", st.integers(-1, 3)), ("pad", st.integers(-1, 2))):
        if draw(st.booleans()):
            attrs[name] = _some_of(draw, draw(st.sampled_from([k, k, 1, 3])), values)
    types = ["max", "avg", "sum"] + (["lp"] if op == "Pooling" else [])
    attrs["pool_type"] = draw(st.sampled_from(types))
    if attrs["pool_type"] == "lp" and draw(st.booleans()):
        attrs["p_value"] = draw(st.sampled_from(["1", "2"]))
    conventions = ["valid", "full"] + (["same"] if op == "Pooling" else [])
    attrs["pooling_convention"] = draw(st.sampled_from(conventions))
    if draw(st.booleans()):
        attrs["global_pool"] = draw(st.sampled_from(["True", "False", "1"]))
    if op == "Pooling" and draw(st.integers(0, 2)) == 0:
        attrs["layout"] = draw(st.sampled_from(["NCW", "NWC", "NCHW", "NHWC", "NCDHW",
                                                "NDHWC"]))
    return op, attrs, draw(shapes(2, 6, 12))


@MANY
@given(any_pooling(), dtypes(0.3))
def test_pooling_drawn_freely(drawn, dtype) -> None:
    op, attrs, data = drawn
    both(op, attrs, [data], [dtype])


@st.composite
def fitting_pooling(draw: st.DrawFn) -> tuple[str, dict[str, str], Any]:
    """Pooling or Pooling_v1 with a kernel that fits the data's rank and layout (mostly
    accepted; small windows, big ones, negative strides and pads sometimes)."""
    op = draw(st.sampled_from(["Pooling", "Pooling_v1"]))
    k = draw(st.sampled_from([1, 2, 3] if op == "Pooling" else [2, 3]))
    attrs = {"kernel": _some_of(draw, k, st.integers(1, 5))}
    if draw(st.integers(0, 4)):
        attrs["stride"] = _some_of(draw, k, st.sampled_from([1, 1, 2, 2, 3, 4, -1]))
    if draw(st.integers(0, 4)):
        attrs["pad"] = _some_of(draw, k, st.sampled_from([0, 0, 1, 1, 2, 3, -1]))
    attrs["pool_type"] = draw(st.sampled_from(["max", "avg", "sum"]))
    conventions = ["valid", "full"] + (["same"] if op == "Pooling" and k == 1 else [])
    attrs["pooling_convention"] = draw(st.sampled_from(conventions))
    if attrs["pooling_convention"] == "same":
        attrs["pad"] = draw(st.sampled_from(["(0, 0, 0)", "(0, 0, 0, 0)", "(0,)", "(0, 1, 0)"]))
    if draw(st.integers(0, 4)) == 0:
        attrs["global_pool"] = "True"
    last = False
    if op == "Pooling" and draw(st.booleans()):
        attrs["layout"] = draw(st.sampled_from({1: ["NCW", "NWC"], 2: ["NCHW", "NHWC"],
                                                3: ["NCDHW", "NDHWC"]}[k]))
        last = attrs["layout"].endswith("C")
    spatial = draw(st.lists(st.integers(1, 14), min_size=k, max_size=k))
    batch, channels = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    shape = (batch, *spatial, channels) if last else (batch, channels, *spatial)
    mask = draw(st.lists(st.integers(0, 7), min_size=len(shape), max_size=len(shape)))
    return op, attrs, hidden(shape, [m == 0 for m in mask])


@MANY
@given(fitting_pooling(), dtypes(0.3))
def test_pooling_that_fits(drawn, dtype) -> None:
    op, attrs, data = drawn
    both(op, attrs, [data], [dtype])


@pytest.mark.parametrize("attrs, workspace", [
    ({"kernel": "(2, 2)"}, True),
    ({"kernel": "(2, 2)", "pool_type": "avg"}, False),
    ({"kernel": "(2, 2)", "layout": "NHWC"}, False),
    ({"kernel": "(3,)", "global_pool": "True"}, True),
    ({"global_pool": "True"}, False),
])
def test_max_pooling_keeps_a_workspace_where_mkldnn_pools(attrs, workspace) -> None:
    """The hidden second output is counted and filled (the pass would not finish
    otherwise)."""
    data = (1, 2, 6, 6) if "(3,)" not in attrs.get("kernel", "") else (1, 2, 6)
    nodes = [Node("null", "x", {}, [], {}), Node("Pooling", "p", attrs, [(0, 0, 0)], {})]
    got = engine.infer_shapes(engine.graph_of(nodes, [0, 1]), {0: data})
    assert got.failure is None
    assert ((1, 1) in got.values) == workspace
    if workspace:
        assert got.values[(1, 1)] == got.values[(1, 0)]
    types = engine.infer_dtypes(engine.graph_of(nodes, [0, 1]), {0: "float32"})
    assert types.values.get((1, 1), "int32") == "int32"


# ================================================================== resizing
@st.composite
def nearest_inputs(draw: st.DrawFn, scale: int, n: int) -> list[Any]:
    """The first input and ``n - 1`` more, most of them of a size that divides the
    output's."""
    data = draw(shapes(3, 5, 6, none=0.1))
    ins = [data]
    for _ in range(n - 1):
        if data is not None and len(data) == 4 and draw(st.integers(0, 3)):
            f = draw(st.sampled_from([1, 1, 2, scale]))
            other = (data[0], draw(st.sampled_from([data[1], 2, 3])),
                     data[2] * scale // f, data[3] * scale // f)
            mask = draw(st.lists(st.integers(0, 4), min_size=4, max_size=4))
            ins.append(hidden(other, [m == 0 for m in mask]))
        else:
            ins.append(draw(shapes(3, 5, 8)))
    return ins


@SOME
@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from(["concat", "sum"]), st.data())
def test_nearest_upsampling(scale, n, mode, data) -> None:
    attrs = {"scale": str(scale), "sample_type": "nearest", "num_args": str(n),
             "multi_input_mode": mode}
    ins = data.draw(nearest_inputs(scale, n))
    types = [data.draw(dtypes(0.2))] + data.draw(st.lists(dtypes(0.6), min_size=n - 1,
                                                          max_size=n - 1))
    both("UpSampling", attrs, ins, types)


@SOME
@given(st.integers(1, 4), shapes(3, 5, 6, unknown=0.1), shapes(3, 5, 6, none=0.6),
       dtypes(0.2), dtypes(0.6))
def test_bilinear_upsampling(scale, data, weight, dtype, weight_type) -> None:
    channels = data[1] if data and len(data) > 1 and data[1] else 1
    attrs = {"scale": str(scale), "sample_type": "bilinear", "num_filter": str(channels),
             "num_args": "2"}
    both("UpSampling", attrs, [data, weight], [dtype, weight_type])


@SOME
@given(shapes(2, 5), st.one_of(st.none(), st.lists(st.integers(-2, 7), max_size=3)),
       dtypes(0.3))
def test_adaptive_avg_pooling(data, size, dtype) -> None:
    attrs = {} if size is None else {"output_size": tup(size)}
    both("_contrib_AdaptiveAvgPooling2D", attrs, [data], [dtype])


SCALES = st.sampled_from([0.3, 0.5, 0.7, 1.1, 1.5, 2.0, 3.0, 0.123457, 2.718282])


@SOME
@given(st.sampled_from(["size", "odd_scale", "to_even_down", "to_even_up", "to_odd_down",
                        "to_odd_up", "like"]),
       st.one_of(st.none(), st.integers(1, 40)), st.one_of(st.none(), st.integers(1, 40)),
       st.one_of(st.none(), SCALES), st.one_of(st.none(), SCALES),
       shapes(2, 5, 30), shapes(2, 5, 30, none=0.2), dtypes(0.3), dtypes(0.3))
def test_bilinear_resize(mode, height, width, sh, sw, data, like, dtype, like_type) -> None:
    attrs = {"mode": mode}
    for name, value in (("height", height), ("width", width), ("scale_height", sh),
                        ("scale_width", sw)):
        if value is not None:
            attrs[name] = str(value)
    two = mode == "like"
    both("_contrib_BilinearResize2D", attrs, [data, like] if two else [data],
         [dtype, like_type] if two else [dtype])


@FEW
@given(st.sampled_from(["size", "odd_scale"]), st.floats(0.05, 4.0), st.floats(0.05, 4.0),
       st.integers(1, 3000), st.integers(1, 3000))
def test_bilinear_resize_scales_in_float32(mode, sh, sw, h, w) -> None:
    """MXNet multiplies in float32 and keeps the result in 16 bits."""
    attrs = {"mode": mode, "scale_height": repr(sh), "scale_width": repr(sw)}
    agree("_contrib_BilinearResize2D", attrs, [(1, 2, h, w)])


@SOME
@given(shapes(3, 6), st.sampled_from([4, 5, None]), st.data())
def test_pad(data, rank, draw) -> None:
    rank = rank or (len(data) if data else 4)
    widths = [0, 0, 0, 0] + draw.draw(st.lists(st.integers(0, 3), min_size=2 * rank - 4,
                                               max_size=2 * rank - 4))
    if draw.draw(st.integers(0, 5)) == 0:
        widths[draw.draw(st.integers(0, len(widths) - 1))] = draw.draw(st.sampled_from(
            [1, -1, -3]))
    attrs = {"mode": draw.draw(st.sampled_from(["constant", "edge", "reflect"])),
             "pad_width": tup(widths)}
    both("Pad", attrs, [data], [draw.draw(dtypes(0.3))])


# ==================================================================== regions
@st.composite
def boxes(draw: st.DrawFn, width: int) -> Any:
    if draw(st.integers(0, 4)) == 0:
        return draw(shapes(1, 3, 7, none=0.3))
    n = draw(st.integers(0, 7))
    return (n, width if draw(st.integers(0, 5)) else draw(st.sampled_from([0, 4, 6])))


@SOME
@given(st.sampled_from(["ROIPooling", "_contrib_ROIAlign", "_contrib_RROIAlign"]),
       st.one_of(shapes(4, 4, 9, unknown=0.1, none=0.05), shapes(3, 5, 9)), st.data(),
       st.sampled_from([(1, 1), (2, 2), (2, 3), (3, 1), (2,), (2, 0), (2, -1), (-2, 1),
                        (1, 2, 1)]),
       st.booleans(), dtypes(0.1), dtypes(0.2), st.booleans())
def test_roi_pooling_and_align(op, data, draw, pooled, sensitive, dtype, other, same) -> None:
    rois = draw.draw(boxes(6 if op == "_contrib_RROIAlign" else 5))
    attrs = {"pooled_size": tup(pooled), "spatial_scale": "0.5"}
    if op == "_contrib_ROIAlign" and sensitive:
        attrs["position_sensitive"] = "True"
    both(op, attrs, [data, rois], [dtype, dtype if same else other])


@SOME
@given(st.sampled_from(["_contrib_PSROIPooling", "_contrib_DeformablePSROIPooling"]),
       st.one_of(shapes(4, 4, 9, unknown=0.1, none=0.05), shapes(3, 5, 9)), st.data(),
       st.integers(-2, 4), st.integers(-2, 4), st.booleans(), shapes(3, 5, 4),
       dtypes(0.1), dtypes(0.2), st.booleans())
def test_position_sensitive_roi_pooling(op, data, draw, output_dim, pooled, no_trans, trans,
                                        dtype, other, same) -> None:
    rois = draw.draw(boxes(5))
    attrs = {"spatial_scale": "0.5", "output_dim": str(output_dim),
             "pooled_size": str(pooled)}
    values = [data, rois]
    types = [dtype, dtype if same else other]
    if op == "_contrib_DeformablePSROIPooling":
        attrs["group_size"] = "2"
        if no_trans:
            attrs["no_trans"] = "True"
        else:
            values.append(trans)
            types.append(other)
    both(op, attrs, values, types)


# ==================================================================== sampling
@SOME
@given(st.sampled_from(["affine", "warp"]), st.one_of(st.none(), st.lists(
    st.integers(-1, 5), min_size=1, max_size=3)), shapes(1, 5, 7), st.booleans(), dtypes(0.3))
def test_grid_generator(transform, target, data, fit, dtype) -> None:
    attrs = {"transform_type": transform}
    if target is not None:
        attrs["target_shape"] = tup(target)
    if fit and data is not None:
        data = (data[0], 6) if transform == "affine" else (data[0], 2, *data[2:])
    both("GridGenerator", attrs, [data], [dtype])


@SOME
@given(st.sampled_from(["BilinearSampler", "SpatialTransformer"]),
       shapes(3, 5, 6, unknown=0.05), shapes(1, 5, 7, unknown=0.05), st.booleans(),
       st.one_of(st.none(), st.lists(st.integers(-1, 5), min_size=1, max_size=3)),
       dtypes(0.4), dtypes(0.4))
def test_bilinear_sampler_and_spatial_transformer(op, data, second, fit, target, dtype,
                                                  other) -> None:
    attrs: dict[str, str] = {}
    if op == "SpatialTransformer":
        attrs = {"transform_type": "affine", "sampler_type": "bilinear"}
        if target is not None:
            attrs["target_shape"] = tup(target)
        if fit and second is not None:
            second = (second[0], 6)
    elif fit and data is not None and second is not None and len(second) > 3:
        second = (data[0], 2, second[2], second[3])
    both(op, attrs, [data, second], [dtype, other])


# ============================================== what flows back from a reader
INPUTS = {"BatchNorm": 5, "_contrib_BatchNormWithReLU": 5, "BatchNorm_v1": 5,
          "LayerNorm": 3, "GroupNorm": 3, "InstanceNorm": 3}


def chain(op: str, attrs: dict[str, str], given: dict[int, Any], tail: Any,
          kind: str) -> None:
    """``op`` over variables ``in0``..., its output read by ``elemwise_add`` with a
    variable ``y`` of the value ``tail``: MXNet and the engine agree on the op's inputs
    and output (or both refuse)."""
    import mxnet as mx
    import numpy as np

    n = INPUTS.get(op, 1)
    json_nodes: list[dict[str, Any]] = [{"op": "null", "name": f"in{i}", "inputs": []}
                                        for i in range(n)]
    json_nodes += [{"op": op, "name": "n", "attrs": attrs,
                    "inputs": [[i, 0, 0] for i in range(n)]},
                   {"op": "null", "name": "y", "inputs": []},
                   {"op": "elemwise_add", "name": "t", "inputs": [[n, 0, 0], [n + 1, 0, 0]]}]
    text = json.dumps({"nodes": json_nodes, "arg_nodes": [*range(n), n + 1],
                       "heads": [[n + 2, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})
    values = {f"in{i}": v for i, v in given.items()}
    values["y"] = tail
    theirs: Any
    try:
        sym = mx.sym.load_json(text).get_internals()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "dtype":
                a, o, x = sym.infer_type_partial(**{k: np.dtype(v) for k, v in values.items()})
            else:
                a, o, x = sym.infer_shape_partial(**values)
        by_name = dict(zip(sym.list_arguments() + sym.list_auxiliary_states(), [*a, *x]))

        def show(v: Any) -> Any:
            if kind == "dtype":
                return None if v is None else np.dtype(v).name
            return tuple(v) if v is not None and len(v) else None
        theirs = ([show(by_name[f"in{i}"]) for i in range(n)],
                  show(o[sym.list_outputs().index("n_output")]))
    except mx.base.MXNetError:
        theirs = "refused"
    nodes = [Node("null", f"in{i}", {}, [], {}) for i in range(n)]
    nodes += [Node(op, "n", dict(attrs), [(i, 0, 0) for i in range(n)], {}),
              Node("null", "y", {}, [], {}),
              Node("elemwise_add", "t", {}, [(n, 0, 0), (n + 1, 0, 0)], {})]
    g = engine.graph_of(nodes, list(range(len(nodes))))
    known = {**given, n + 1: tail}
    if kind == "dtype":
        got = engine.infer_dtypes(g, known)
        back: Any = lambda v: v  # noqa: E731
    else:
        got = engine.infer_shapes(g, {k: legacy_to_shape(v) for k, v in known.items()})
        back = shape_to_legacy
    ours = "refused" if got.failure is not None else (
        [back(got.values[(i, 0)]) for i in range(n)], back(got.values[(n, 0)]))
    assert ours == theirs, f"{op} {attrs} {given} <- {tail}:\n  MXNet: {theirs}\n  engine: {ours}"


PAD = {"mode": "constant", "pad_width": "(0, 0, 0, 0, 1, 1, 1, 1)"}


@pytest.mark.parametrize("op, attrs, given, tail", [
    ("BatchNorm", {}, {}, "float16"),              # data float16, parameters float32
    ("BatchNorm", {}, {1: "float16"}, "float16"),  # and a float16 gamma is refused
    ("BatchNorm", {}, {}, "int32"),
    ("_contrib_BatchNormWithReLU", {}, {}, "float64"),
    ("BatchNorm_v1", {}, {}, "float16"),           # the legacy one needs the data's type
    ("LayerNorm", {}, {}, "float16"),
    ("GroupNorm", {}, {}, "float64"),
    ("InstanceNorm", {}, {}, "float16"),
    ("L2Normalization", {}, {}, "float16"),
    ("LRN", {"nsize": "3"}, {}, "float16"),
    ("Pad", PAD, {}, "float16"),
    ("Pooling", {"kernel": "(2, 2)"}, {}, "float16"),
    ("_contrib_AdaptiveAvgPooling2D", {}, {}, "float16"),
    ("_contrib_BilinearResize2D", {}, {}, "float64"),
    ("_contrib_BilinearResize2D", {}, {0: "float32"}, "float16"),
])
def test_types_flowing_back(op, attrs, given, tail) -> None:
    chain(op, attrs, given, tail, "dtype")


@pytest.mark.parametrize("op, attrs, given, tail", [
    ("BatchNorm", {}, {}, (2, 3, 4)),
    ("LayerNorm", {}, {0: (2, 0, 4)}, (2, 3, 0)),  # the output is replaced, not merged
    ("Pooling", {"kernel": "(2, 2)"}, {}, (1, 2, 3, 3)),
    ("Pooling", {"kernel": "(2, 2)"}, {0: (1, 2, 0, 5)}, (1, 2, 3, 4)),
    ("Pad", PAD, {}, (1, 2, 3, 3)),
    ("L2Normalization", {}, {}, (1, 2, 3, 3)),
    ("LRN", {"nsize": "3"}, {0: (1, 0, 3, 3)}, (1, 2, 3, 3)),
])
def test_shapes_flowing_back(op, attrs, given, tail) -> None:
    chain(op, attrs, given, tail, "shape")


# ================================================================= messages
def refusal(op: str, attrs: dict[str, str], values: Sequence[Any],
            kind: str = "shape") -> RuleError:
    """The engine's refusal (MXNet refuses too, unless it would crash)."""
    nodes = [Node("null", f"in{i}", {}, [], {}) for i in range(len(values))]
    nodes.append(Node(op, "n", dict(attrs), [(i, 0, 0) for i in range(len(values))], {}))
    g = engine.graph_of(nodes, list(range(len(nodes))))
    given = {i: (legacy_to_shape(v) if kind == "shape" else v)
             for i, v in enumerate(values) if v is not None}
    got = engine.infer_shapes(g, given) if kind == "shape" else engine.infer_dtypes(g, given)
    assert got.failure is not None
    return got.failure.error


def test_a_window_larger_than_the_padded_input_names_the_kernel() -> None:
    said = refusal("Pooling", {"kernel": "(5, 5)"}, [(1, 3, 3, 3)])
    assert said.attr == "kernel"
    assert said.message == ("kernel (5, 5) is larger than the padded input (3, 3) (its "
                            "height and width): use a kernel of at most (3, 3), or more pad")
    said = refusal("Pooling", {"kernel": "(4, 2)", "pad": "(1, 0)"}, [(1, 3, 1, 3)])
    assert "larger than the padded input (3, 3) (its height)" in said.message
    assert "at most (3, 2)" in said.message
    said = refusal("Pooling", {"kernel": "(3, 3)"}, [(1, 3, 0, 8)])
    assert said.attr == "kernel" and "height is not known here" in said.message


def test_a_batch_norm_axis_out_of_range_names_the_axis_and_the_rank() -> None:
    said = refusal("BatchNorm", {"axis": "4"}, [(1, 3, 8, 8)] + [None] * 4)
    assert said.attr == "axis"
    assert said.message == ("axis 4 is out of range for data of 4 dimensions (1, 3, 8, 8): "
                            "use an axis from -4 to 3")
    said = refusal("LayerNorm", {"axis": "-3"}, [(2, 5), None, None])
    assert said.attr == "axis" and "from -2 to 1" in said.message


@pytest.mark.parametrize("op, attrs, values, attr, words", [
    ("GroupNorm", {"num_groups": "3"}, [(1, 8, 4, 4), None, None], "num_groups",
     "8 channels do not divide into 3 groups (num_groups): use a num_groups that divides 8"),
    ("GroupNorm", {"num_groups": "0"}, [(1, 8, 4, 4), None, None], "num_groups",
     "num_groups 0 cannot divide"),
    ("Pooling", {"kernel": "(2, 0)"}, [None], "kernel", "kernel (2, 0) has a 0"),
    ("Pooling", {"kernel": "(2, 2)", "stride": "(1, 0)"}, [None], "stride", "stride (1, 0)"),
    ("Pooling", {}, [None], "kernel", "or set global_pool"),
    ("Pooling", {"kernel": "(2,)", "pooling_convention": "same"}, [(1, 2, 5)], "pad",
     "pad=(0, 0, 0)"),
    ("Pooling", {"kernel": "(2, 2)", "layout": "NWC"}, [(1, 2, 5, 5)], "layout",
     "use NCHW or NHWC"),
    ("Pooling", {"kernel": "(2,)", "pool_type": "lp"}, [(1, 2, 5)], "p_value", "p_value"),
    ("_contrib_ROIAlign", {"pooled_size": "(2,)", "spatial_scale": "1"}, [None, None],
     "pooled_size", "two values"),
    ("_contrib_ROIAlign", {"pooled_size": "(2, 2)", "spatial_scale": "1",
                           "position_sensitive": "True"}, [(1, 6, 5, 5), (3, 5)],
     "pooled_size", "6 channels do not divide by the 4 cells"),
    ("Pad", {"mode": "constant", "pad_width": "(0, 0, 1, 1, 1, 1, 1, 1)"}, [(1, 2, 3, 3)],
     "pad_width", "must start with four 0s"),
    ("Pad", {"mode": "reflect", "pad_width": "(0, 0, 0, 0, 3, 1, 1, 1)"}, [(1, 2, 3, 3)],
     "pad_width", "smaller than the data's height 3"),
    ("_contrib_BilinearResize2D", {"height": "40000"}, [(1, 2, 3, 3)], None, "16 bits"),
    ("_contrib_BilinearResize2D", {"scale_height": "2"}, [(1, 2, 3, 3)], "scale_width",
     "give both scales"),
    ("_contrib_AdaptiveAvgPooling2D", {"output_size": "(-3,)"}, [(1, 2, 3, 3)],
     "output_size", "output_size (-3,)"),
    ("GroupNorm", {"num_groups": "-3"}, [(1, 3, 4, 4), None, None], "num_groups",
     "use a positive num_groups"),
    ("GridGenerator", {"transform_type": "affine"}, [(2, 6)], "target_shape",
     "target_shape (0, 0) must give the output's height and width"),
    ("L2Normalization", {"mode": "spatial"}, [(2, 3)], "mode", "3 or more dimensions"),
])
def test_refusals_name_the_attribute(op, attrs, values, attr, words) -> None:
    said = refusal(op, attrs, values)
    assert said.attr == attr and words in said.message, said.message


@pytest.mark.parametrize("op, attrs, values, slot, words", [
    ("UpSampling", {"scale": "2", "sample_type": "nearest", "num_args": "2"},
     [(1, 2, 4, 4), (1, 2, 3, 3)], 1, "height 3, which does not divide the output's height 8"),
    ("UpSampling", {"scale": "2", "sample_type": "nearest", "num_args": "2",
                    "multi_input_mode": "sum"}, [(1, 2, 4, 4), (1, 3, 8, 8)], 1,
     "has 3 channels, but with multi_input_mode 'sum'"),
    ("ROIPooling", {"pooled_size": "(2, 2)", "spatial_scale": "1"}, [(1, 2, 5, 5), (3, 4)],
     1, "(number of boxes, 5)"),
    ("_contrib_RROIAlign", {"pooled_size": "(2, 2)", "spatial_scale": "1"},
     [(1, 2, 5, 5), (3, 5)], 1, "(rois) has shape (3, 5)"),
    ("InstanceNorm", {}, [None, None, None], 0, "give it a shape"),
    ("BilinearSampler", {}, [(2, 3, 4, 4), (3, 2, 5, 5)], 1, "a grid of shape (2, 2, "),
    ("LayerNorm", {}, [(2, 5), (4,), None], 1, "but the data's axis -1 (5 values) needs (5,)"),
    ("UpSampling", {"scale": "2", "sample_type": "bilinear", "num_args": "2"},
     [(1, 2, 4, 4), (2, 1, 3, 3)], 1, "(weight) has shape (2, 1, 3, 3), but for 2 channels "
     "at scale 2 bilinear upsampling needs a weight of shape (2, 1, 4, 4)"),
])
def test_refusals_name_the_input(op, attrs, values, slot, words) -> None:
    said = refusal(op, attrs, values)
    assert said.input == slot and words in said.message, said.message


@pytest.mark.parametrize("op, attrs, values, slot, words", [
    ("BatchNorm", {}, ["int32", None, None, None, None], 0,
     "works on floating-point data only"),
    ("BatchNorm", {}, ["float16", "float16", None, None, None], 1,
     "with float16 data BatchNorm keeps its parameters in float32"),
    ("InstanceNorm", {}, ["float16", None, None], 0, "works on float32 only"),
    ("LRN", {"nsize": "3"}, [None], 0, "give the input a dtype"),
    ("ROIPooling", {"pooled_size": "(2, 2)", "spatial_scale": "1"}, ["float32", "float16"],
     1, "needs both of one type"),
    ("GridGenerator", {"transform_type": "warp"}, [None], None, "give the data a dtype"),
])
def test_type_refusals_name_the_input(op, attrs, values, slot, words) -> None:
    said = refusal(op, attrs, values, kind="dtype")
    assert said.input == slot and words in said.message, said.message
    assert agree(op, attrs, values, "dtype").refused is not None
