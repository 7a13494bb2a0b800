"""The nn family against MXNet 1.9.1 (the judge): for each rule, attributes and input
shapes (partly unknown, missing, or wrong) drawn by hypothesis, on which the engine and
MXNet infer the same shapes and dtypes or both refuse; the output learnt from a layer
that reads it (backward inference); and the plain-words messages.

Shapes are given in MXNet's legacy convention (0 an unknown dimension, None not given).
A few attribute values crash MXNet natively (``num_group=0``, ``stride2=0`` divide by
zero; a ``target_shape`` with unknown input sizes reads unset memory): the strategies
draw values MXNet handles.
"""
from __future__ import annotations

import json
import warnings
from typing import Any, Optional, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.engine import legacy_to_shape, shape_to_legacy
from tests.core.ops.judge import Verdict, agree, message

FEW = settings(max_examples=40, deadline=None)
SOME = settings(max_examples=80, deadline=None)
MANY = settings(max_examples=150, deadline=None)

DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64"]
Legacy = Optional[tuple[int, ...]]
dtypes = st.one_of(st.none(), st.sampled_from(DTYPES))


def tup(values: Sequence[Any]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"



def pinned(op: str, attrs: dict[str, str], values: Sequence[Any], pin: Any,
           kind: str = "shape") -> None:
    """``op``'s output added (``elemwise_add``) to a variable of shape (or dtype) ``pin``: the op
    learns its output from the layer that reads it, as in a real graph.  The engine and
    MXNet agree on the op's inputs and output (or both refuse)."""
    import mxnet as mx
    import numpy as np

    n = len(values)
    nodes: list[dict[str, Any]] = [{"op": "null", "name": f"in{i}", "inputs": []}
                                   for i in range(n)]
    nodes.append({"op": op, "name": "n", "attrs": dict(attrs),
                  "inputs": [[i, 0, 0] for i in range(n)]})
    nodes.append({"op": "null", "name": "pin", "inputs": []})
    nodes.append({"op": "elemwise_add", "name": "fix", "inputs": [[n, 0, 0], [n + 1, 0, 0]]})
    text = json.dumps({"nodes": nodes, "arg_nodes": [k for k, d in enumerate(nodes)
                                                     if d["op"] == "null"],
                       "heads": [[n + 2, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})
    given_ = {f"in{i}": v for i, v in enumerate(values) if v is not None}
    if pin is not None:
        given_["pin"] = pin

    def legacy(v: Any) -> Any:
        if kind == "dtype":
            return None if v is None else np.dtype(v).name
        return tuple(int(d) for d in v) if v is not None and len(v) else None
    try:
        internals = mx.sym.load_json(text).get_internals()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "shape":
                a, o, _ = internals.infer_shape_partial(**given_)
            else:
                a, o, _ = internals.infer_type_partial(
                    **{k: np.dtype(v) for k, v in given_.items()})
        by_arg = dict(zip(internals.list_arguments(), a))
        by_out = dict(zip(internals.list_outputs(), o))
        theirs = Verdict(None, tuple(legacy(by_arg[f"in{i}"]) for i in range(n)),
                         (legacy(by_out["n_output"]),))
    except mx.base.MXNetError as exc:
        theirs = Verdict(str(exc).split("\n")[0][:300])
    graph_nodes = [Node(d["op"], d["name"], dict(d.get("attrs", {})),
                        [tuple(e) for e in d["inputs"]], {}) for d in nodes]
    g = engine.graph_of(graph_nodes, list(range(len(graph_nodes))))
    index = {d["name"]: k for k, d in enumerate(nodes)}
    if kind == "shape":
        got = engine.infer_shapes(g, {index[k]: legacy_to_shape(v) for k, v in given_.items()})
        show: Any = shape_to_legacy
    else:
        got = engine.infer_dtypes(g, {index[k]: v for k, v in given_.items()})
        show = lambda v: v  # noqa: E731
    if got.failure is not None:
        ours = Verdict(got.failure.error.message)
    else:
        ours = Verdict(None, tuple(show(got.values[(i, 0)]) for i in range(n)),
                       (show(got.values[(n, 0)]),))
    assert ours.same_as(theirs), (
        f"{op} {attrs} {kind}s {list(values)} pinned to {pin}:\n  MXNet:  {theirs}\n"
        f"  engine: {ours}")


# -------------------------------------------------------------------- strategies
@st.composite
def varied(draw: st.DrawFn, base: Sequence[int], keep: int = 8, wrong: int = 12,
           holes: int = 4, changes: int = 2) -> Legacy:
    """``base`` with some dims unknown (0; ``holes`` in 24), a few changed (``changes`` in
    24), the rank changed now and then (1 in ``wrong + 1``), or the whole shape missing
    (1 in ``max(keep, wrong) + 1``)."""
    r = draw(st.sampled_from(range(max(keep, wrong) + 1)))
    if r == 0:
        return None
    out = []
    for d in base:
        k = draw(st.sampled_from(range(24)))
        out.append(0 if k < holes else d + 1 if k < holes + changes else d)
    if r == wrong and out:
        out = out[:-1] if draw(st.booleans()) else out + [2]
    return tuple(out) if out else None


def window(draw: st.DrawFn, n: int, key: str, lo: int, hi: int, attrs: dict[str, str],
           often: int = 2) -> tuple[int, ...]:
    """A stride/dilate/pad attribute: left out, ``()`` or ``n`` values (rarely another
    count); returns the values the op will use."""
    fill = 0 if key in ("pad", "adj") else 1
    r = draw(st.integers(0, 12))
    if r < often:
        return (fill,) * n
    if r == often:
        attrs[key] = "()"
        return (fill,) * n
    values = tuple(draw(st.integers(lo, hi)) for _ in range(n))
    if r == 12:
        values = values + (fill,) if draw(st.booleans()) or n == 1 else values[:-1]
    attrs[key] = tup(values)
    return values


LAYOUTS = {1: ["NCW"], 2: ["NCHW", "NHWC"], 3: ["NCDHW", "NDHWC"]}
ALL_LAYOUTS = ["NCW", "NCHW", "NHWC", "NCDHW", "NDHWC"]


def layout(draw: st.DrawFn, n: int, attrs: dict[str, str], fits: Sequence[str] = (),
           others: Sequence[str] = ALL_LAYOUTS) -> bool:
    """Draw a layout (mostly one that fits a kernel of ``n`` dimensions, now and then any
    of ``others``); True when channels come last."""
    r = draw(st.integers(0, 9))
    if r < 4:
        return False
    chosen = draw(st.sampled_from(list(fits or LAYOUTS[n]) if r < 9 else list(others)))
    attrs["layout"] = chosen
    return chosen in ("NHWC", "NDHWC") and chosen in LAYOUTS[n]


def place(shape: Sequence[int], last: bool) -> tuple[int, ...]:
    """An NC... shape in the layout (channels moved last)."""
    s = list(shape)
    return tuple([s[0], *s[2:], s[1]]) if last else tuple(s)


def out_size(size: int, k: int, s: int, d: int, p: int) -> int:
    return (size + 2 * p - (1 + (k - 1) * d)) // s + 1


# =================================================================== Convolution
@st.composite
def convolution_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Legacy], Legacy]:
    n = draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    if draw(st.integers(0, 15)) == 0:
        kernel = kernel[:-1] + (0,) if draw(st.booleans()) else kernel + (1,) * (4 - n)
    attrs = {"kernel": tup(kernel)}
    stride = window(draw, n, "stride", 1, 3, attrs)
    dilate = window(draw, n, "dilate", 1, 2, attrs, often=6)
    pad = window(draw, n, "pad", 0, 2, attrs)
    groups = draw(st.sampled_from([1, 1, 1, 2, 3, 4]))
    if groups != 1 or draw(st.booleans()):
        attrs["num_group"] = str(groups)
    nf = groups * draw(st.integers(1, 3)) + (draw(st.integers(0, 1)) if groups > 1 else 0)
    attrs["num_filter"] = str(nf if draw(st.integers(0, 30)) else 0)
    no_bias = draw(st.booleans())
    if no_bias or draw(st.booleans()):
        attrs["no_bias"] = str(no_bias)
    last = layout(draw, n, attrs)
    channels = groups * draw(st.integers(1, 3)) + (draw(st.integers(0, 1)) if groups > 1
                                                   else 0)
    spatial = [max(1, kernel[i] + draw(st.integers(-2, 4))) if i < len(kernel) else 3
               for i in range(n)]
    base = place([draw(st.integers(1, 3)), channels, *spatial], last)
    data = draw(varied(base))
    weight_base = place([nf, max(channels // groups, 1), *kernel[:n]], last)
    values: list[Legacy] = [data, draw(varied(weight_base, keep=2))]
    if not no_bias:
        values.append(draw(varied((nf,), keep=2)))
    out = None
    if len(kernel) == n and all(k > 0 for k in kernel):
        full = [base[0], nf] + [max(out_size(spatial[i], kernel[i],
                                             stride[i] if i < len(stride) else 1,
                                             dilate[i] if i < len(dilate) else 1,
                                             pad[i] if i < len(pad) else 0), 0)
                                for i in range(n)]
        out = draw(varied(place(full, last), keep=3))
    return attrs, values, out


@MANY
@given(convolution_case())
def test_convolution(case: tuple[dict[str, str], list[Legacy], Legacy]) -> None:
    attrs, values, _ = case
    agree("Convolution", attrs, values)


@SOME
@given(convolution_case(), st.data())
def test_convolution_learns_from_its_output(
        case: tuple[dict[str, str], list[Legacy], Legacy], data: st.DataObject) -> None:
    attrs, values, out = case
    if values[0] is not None and values[0] and values[0][-1] != 0:
        values[0] = values[0][:-1] + (0,)       # let the output fill a size in
    if out is not None and data.draw(st.integers(0, 4)) == 0:
        out = tuple(data.draw(st.integers(0, 6)) for _ in out)
    pinned("Convolution", attrs, values, out)


@FEW
@given(st.sampled_from([
    ("Convolution", {"kernel": "(1,)", "num_filter": "2", "pad": "(2,)"},
     [(1, 3, 0), None, None], (1, 2, 1)),
    ("Convolution", {"kernel": "(1,)", "num_filter": "2", "pad": "(1,)"},
     [(1, 3, 0), None, None], (1, 2, 1)),
    ("Convolution", {"kernel": "(3, 3)", "num_filter": "2", "layout": "NHWC"},
     [(0, 0, 0, 3), None, None], (4, 7, 9, 2)),
    ("Convolution", {"kernel": "(3, 3)", "num_filter": "2", "stride": "(2, 1)"},
     [(0, 3, 0, 0), None, None], (4, 2, 7, 9)),
    ("FullyConnected", {"num_hidden": "2", "flatten": "False"}, [(0, 0, 4), None, None],
     (5, 3, 2)),
    ("_contrib_ModulatedDeformableConvolution",
     {"kernel": "(3, 3)", "num_filter": "2", "pad": "(2, 2)"},
     [(0, 2, 0, 0), (0, 18, 1, 1), (0, 9, 1, 1), None, None], (3, 2, 1, 1)),
    ("_contrib_DeformableConvolution", {"kernel": "(3, 3)", "num_filter": "2", "pad": "(1, 1)"},
     [(2, 2, 5, 5), (2, 18, 5, 5), None, None], (2, 2, 5, 5)),
    ("Correlation", {}, [(1, 2, 5, 5), (1, 2, 5, 5)], (1, 9, 5, 5)),
    ("Embedding", {"input_dim": "2", "output_dim": "3"}, [(0, 4), None], (5, 4, 3)),
    ("Deconvolution", {"kernel": "(3,)", "num_filter": "2"}, [(0, 3, 0), None], (4, 2, 9)),
]))
def test_outputs_learnt_from_a_reader(case: tuple[str, dict[str, str], list[Legacy], Legacy]
                                      ) -> None:
    """Backward inference (the batch, sizes at stride 1) and its absence, and the ops that
    write their output over what a reader said (Correlation, Embedding)."""
    op, attrs, values, pin = case
    pinned(op, attrs, values, pin)


@FEW
@given(st.sampled_from(["Convolution", "Deconvolution"]), st.booleans(), st.data())
def test_weighted_dtypes(op: str, no_bias: bool, data: st.DataObject) -> None:
    attrs = {"kernel": "(3, 3)", "num_filter": "4", "no_bias": str(no_bias)}
    values = [data.draw(dtypes) for _ in range(2 if no_bias else 3)]
    agree(op, attrs, values, "dtype")
    pinned(op, attrs, values, data.draw(dtypes), "dtype")


@FEW
@given(st.sampled_from(["(3, 3, 3, 3)", "()", "None"]), st.sampled_from(DTYPES))
def test_bad_kernels_refused_in_every_pass(kernel: str, t: str) -> None:
    agree("Convolution", {"kernel": kernel, "num_filter": "4"}, [t, None, None], "dtype")
    agree("Convolution", {"kernel": kernel, "num_filter": "4"}, [(1, 2, 5, 5), None, None])


# ================================================================= Deconvolution
@st.composite
def deconvolution_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Legacy]]:
    n = draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 4)) for _ in range(n))
    attrs = {"kernel": tup(kernel)}
    stride = window(draw, n, "stride", 1, 3, attrs)
    window(draw, n, "dilate", 1, 2, attrs, often=7)
    window(draw, n, "pad", 0, 2, attrs)
    window(draw, n, "adj", 0, 2, attrs, often=7)
    groups = draw(st.sampled_from([1, 1, 1, 2, 3, 4]))
    if groups != 1 or draw(st.booleans()):
        attrs["num_group"] = str(groups)
    nf = groups * draw(st.integers(1, 3)) + (draw(st.integers(0, 1)) if groups > 1 else 0)
    attrs["num_filter"] = str(nf)
    no_bias = draw(st.sampled_from([True, True, False]))
    if not no_bias or draw(st.booleans()):
        attrs["no_bias"] = str(no_bias)
    last = layout(draw, n, attrs)
    channels = groups * draw(st.integers(1, 3)) + (draw(st.integers(0, 1)) if groups > 1
                                                   else 0)
    spatial = [draw(st.integers(1, 5)) for _ in range(n)]
    base = place([draw(st.integers(1, 3)), channels, *spatial], last)
    data = draw(varied(base))
    if draw(st.integers(0, 3)) == 0:
        # target_shape: MXNet reads unset memory when an input size is unknown
        target = [draw(st.sampled_from([0, s * stride[i] if i < len(stride) else s,
                                        s * 2 + 1, 1, 40]))
                  for i, s in enumerate(spatial)]
        attrs["target_shape"] = tup(target)
        data = base
    weight = place([channels, max(nf // groups, 1), *kernel], last)
    values: list[Legacy] = [data, draw(varied(weight, keep=2))]
    if not no_bias:
        values.append(draw(varied((nf,), keep=2)))
    return attrs, values


@MANY
@given(deconvolution_case())
def test_deconvolution(case: tuple[dict[str, str], list[Legacy]]) -> None:
    attrs, values = case
    agree("Deconvolution", attrs, values)


@FEW
@given(deconvolution_case(), st.data())
def test_deconvolution_takes_nothing_from_its_output(
        case: tuple[dict[str, str], list[Legacy]], data: st.DataObject) -> None:
    attrs, values = case
    pin = data.draw(st.one_of(st.none(), st.lists(st.integers(0, 9), min_size=3,
                                                  max_size=5).map(tuple)))
    pinned("Deconvolution", attrs, values, pin)


# ================================================================ FullyConnected
@st.composite
def fully_connected_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Legacy], Legacy]:
    nh = draw(st.integers(1, 5))
    attrs = {"num_hidden": str(nh)}
    flatten = draw(st.booleans())
    if not flatten or draw(st.booleans()):
        attrs["flatten"] = str(flatten)
    no_bias = draw(st.booleans())
    if no_bias or draw(st.booleans()):
        attrs["no_bias"] = str(no_bias)
    base = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    features = 1
    for d in base[1:]:
        features *= d
    if not flatten:
        features = base[-1]
    values: list[Legacy] = [draw(varied(base)), draw(varied((nh, features), keep=2))]
    if not no_bias:
        bias = draw(st.sampled_from([(nh,), (nh, 1), (nh, 2), (nh + 1,), (0,), (0, 1),
                                     (nh, 1, 1)]))
        values.append(draw(st.one_of(st.none(), st.just(bias))))
    out_base = (*base[:-1], nh) if not flatten else (base[0], nh)
    return attrs, values, draw(varied(out_base, keep=3))


@MANY
@given(fully_connected_case())
def test_fully_connected(case: tuple[dict[str, str], list[Legacy], Legacy]) -> None:
    attrs, values, _ = case
    agree("FullyConnected", attrs, values)


@SOME
@given(fully_connected_case())
def test_fully_connected_learns_its_batch(
        case: tuple[dict[str, str], list[Legacy], Legacy]) -> None:
    attrs, values, out = case
    pinned("FullyConnected", attrs, values, out)


@FEW
@given(st.booleans(), st.data())
def test_fully_connected_dtypes(no_bias: bool, data: st.DataObject) -> None:
    attrs = {"num_hidden": "3", "no_bias": str(no_bias)}
    values = [data.draw(dtypes) for _ in range(2 if no_bias else 3)]
    agree("FullyConnected", attrs, values, "dtype")
    pinned("FullyConnected", attrs, values, data.draw(dtypes), "dtype")


# ===================================================================== Embedding
EMBEDDINGS = st.sampled_from(["Embedding", "_contrib_SparseEmbedding"])


@SOME
@given(EMBEDDINGS, st.integers(1, 6), st.integers(1, 6),
       st.one_of(st.none(), st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)),
       st.data())
def test_embedding(op: str, dim_in: int, dim_out: int, data_shape: Legacy,
                   data: st.DataObject) -> None:
    attrs = {"input_dim": str(dim_in), "output_dim": str(dim_out)}
    weight = data.draw(varied((dim_in, dim_out), keep=2))
    agree(op, attrs, [data_shape, weight])
    pinned(op, attrs, [data_shape, weight],
           data.draw(varied((*(data_shape or (2,)), dim_out), keep=3)))


@SOME
@given(st.data())
def test_embedding_dtypes(data: st.DataObject) -> None:
    op = data.draw(EMBEDDINGS)
    choices = ["float32", "float16", "float64", "int32", "uint8"]
    if op == "Embedding":
        choices += ["int8", "int64"]    # bfloat16: MXNet's Python API shows "void16"
    attrs = {"input_dim": "4", "output_dim": "3"}
    if data.draw(st.booleans()):
        attrs["dtype"] = data.draw(st.sampled_from(choices))
    values = [data.draw(dtypes), data.draw(dtypes)]
    agree(op, attrs, values, "dtype")
    pinned(op, attrs, values, data.draw(dtypes), "dtype")


# ================================================================ Convolution_v1
@st.composite
def convolution_v1_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Legacy]]:
    n = draw(st.integers(2, 3)) if draw(st.integers(0, 20)) else 1
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    attrs = {"kernel": tup(kernel)}
    window(draw, n, "stride", 1, 3, attrs)
    window(draw, n, "dilate", 1, 2, attrs, often=7)
    window(draw, n, "pad", 0, 2, attrs)
    groups = draw(st.sampled_from([1, 1, 2, 3, 4]))
    if groups != 1:
        attrs["num_group"] = str(groups)
    nf = groups * draw(st.integers(1, 3)) + (draw(st.integers(0, 1)) if groups > 1 else 0)
    attrs["num_filter"] = str(nf)
    no_bias = draw(st.booleans())
    attrs["no_bias"] = str(no_bias)
    last = layout(draw, max(n, 2), attrs, others=["NCHW", "NHWC", "NCDHW", "NDHWC"])
    channels = groups * draw(st.integers(1, 3))
    spatial = [kernel[i] + draw(st.integers(-1, 3)) for i in range(n)]
    base = place([draw(st.integers(1, 3)), channels, *spatial], last)
    values: list[Legacy] = [draw(varied(base)),
                            draw(varied(place([nf, channels // groups, *kernel], last), 2))]
    if not no_bias:
        values.append(draw(varied((nf,), keep=2)))
    return attrs, values


@MANY
@given(convolution_v1_case())
def test_convolution_v1(case: tuple[dict[str, str], list[Legacy]]) -> None:
    attrs, values = case
    agree("Convolution_v1", attrs, values)


@FEW
@given(st.sampled_from(["Convolution_v1", "_contrib_DeformableConvolution",
                        "_contrib_ModulatedDeformableConvolution"]), st.booleans(), st.data())
def test_legacy_convolution_dtypes(op: str, no_bias: bool, data: st.DataObject) -> None:
    count = {"Convolution_v1": 2, "_contrib_DeformableConvolution": 3,
             "_contrib_ModulatedDeformableConvolution": 4}[op] + (0 if no_bias else 1)
    attrs = {"kernel": "(3, 3)", "num_filter": "4", "no_bias": str(no_bias)}
    values = [data.draw(dtypes) for _ in range(count)]
    agree(op, attrs, values, "dtype")


# ====================================================== deformable convolutions
@st.composite
def deformable_case(draw: st.DrawFn, modulated: bool) -> tuple[dict[str, str], list[Legacy]]:
    kernel: tuple[int, ...] = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    if draw(st.integers(0, 25)) == 0:
        kernel = kernel + (1,)
    attrs = {"kernel": tup(kernel)}
    stride = window(draw, 2, "stride", 1, 2, attrs)
    dilate = window(draw, 2, "dilate", 1, 2, attrs, often=7)
    pad = window(draw, 2, "pad", 0, 2, attrs)
    groups = draw(st.sampled_from([1, 1, 2]))
    ndg = draw(st.sampled_from([1, 1, 2, 3]))
    if groups != 1:
        attrs["num_group"] = str(groups)
    if ndg != 1:
        attrs["num_deformable_group"] = str(ndg)
    nf = groups * ndg * draw(st.integers(1, 2)) + draw(st.sampled_from([0, 0, 0, 1]))
    attrs["num_filter"] = str(nf)
    no_bias = draw(st.booleans())
    attrs["no_bias"] = str(no_bias)
    if modulated and draw(st.integers(0, 3)) == 0:
        attrs["im2col_step"] = str(draw(st.integers(1, 3)))
    if draw(st.integers(0, 8)) == 0:
        attrs["layout"] = draw(st.sampled_from(["NCHW", "NCW", "NCDHW"]))
    channels = groups * ndg * draw(st.integers(1, 2)) + draw(st.sampled_from([0, 0, 0, 1]))
    spatial = [kernel[i] + draw(st.integers(-1, 3)) for i in range(2)]
    batch = draw(st.integers(1, 5))
    outs = [max(out_size(spatial[i], kernel[i], stride[i] if i < len(stride) else 1,
                         dilate[i] if i < len(dilate) else 1, pad[i] if i < len(pad) else 0),
                0) for i in range(2)]
    area = kernel[0] * kernel[1]
    holes = 1 if modulated else 3
    data = draw(varied((batch, channels, *spatial), keep=12, wrong=30, holes=holes,
                       changes=1))
    values: list[Legacy] = [data, draw(varied((batch, 2 * area * ndg, *outs), keep=12,
                                              wrong=30, holes=holes, changes=1))]
    if modulated:
        values.append(draw(varied((batch, area * ndg, *outs), keep=12, wrong=30,
                                  holes=holes, changes=1)))
    values.append(draw(varied((nf, max(channels // groups, 1), *kernel[:2]), keep=2)))
    if not no_bias:
        values.append(draw(varied((nf,), keep=2)))
    return attrs, values


@MANY
@given(deformable_case(False))
def test_deformable_convolution(case: tuple[dict[str, str], list[Legacy]]) -> None:
    attrs, values = case
    agree("_contrib_DeformableConvolution", attrs, values)


@MANY
@given(deformable_case(True))
def test_modulated_deformable_convolution(case: tuple[dict[str, str], list[Legacy]]
                                          ) -> None:
    attrs, values = case
    agree("_contrib_ModulatedDeformableConvolution", attrs, values)


# ================================================================ im2col, col2im
@st.composite
def sliding_case(draw: st.DrawFn, col2im: bool) -> tuple[dict[str, str], list[Legacy]]:
    n = draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    attrs = {"kernel": tup(kernel)}
    stride = window(draw, n, "stride", 1, 3, attrs)
    dilate = window(draw, n, "dilate", 1, 2, attrs, often=6)
    pad = window(draw, n, "pad", 0, 2, attrs)
    spatial = [max(1, kernel[i] + draw(st.integers(-2, 3))) for i in range(n)]
    batch, channels = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    if not col2im:
        return attrs, [draw(varied((batch, channels, *spatial), keep=4))]
    size = spatial if draw(st.integers(0, 9)) else spatial[:-1]
    attrs["output_size"] = tup(size)
    windows = 1
    for i in range(n):
        windows *= max(out_size(spatial[i], kernel[i], stride[i] if i < len(stride) else 1,
                                dilate[i] if i < len(dilate) else 1,
                                pad[i] if i < len(pad) else 0), 0)
    area = 1
    for k in kernel:
        area *= k
    return attrs, [draw(varied((batch, channels * area, windows), keep=4))]


@SOME
@given(sliding_case(False))
def test_im2col(case: tuple[dict[str, str], list[Legacy]]) -> None:
    attrs, values = case
    agree("im2col", attrs, values)


@SOME
@given(sliding_case(True))
def test_col2im(case: tuple[dict[str, str], list[Legacy]]) -> None:
    attrs, values = case
    agree("col2im", attrs, values)


@FEW
@given(st.sampled_from(["im2col", "col2im"]), dtypes, dtypes)
def test_sliding_dtypes(op: str, t: Any, pin: Any) -> None:
    attrs = {"kernel": "(2, 2)"}
    if op == "col2im":
        attrs["output_size"] = "(3, 3)"
    agree(op, attrs, [t], "dtype")
    pinned(op, attrs, [t], pin, "dtype")


# =================================================================== Correlation
@MANY
@given(st.data())
def test_correlation(data: st.DataObject) -> None:
    attrs: dict[str, str] = {}
    for key, lo, hi in (("kernel_size", 0, 3), ("max_displacement", 0, 3),
                        ("stride1", 1, 3), ("stride2", 1, 3), ("pad_size", 0, 3)):
        if data.draw(st.booleans()):
            attrs[key] = str(data.draw(st.integers(lo, hi)))
    if data.draw(st.booleans()):
        attrs["is_multiply"] = str(data.draw(st.booleans()))
    base = (data.draw(st.integers(1, 2)), data.draw(st.integers(1, 3)),
            data.draw(st.integers(1, 9)), data.draw(st.integers(1, 9)))
    values = [data.draw(varied(base, keep=10)), data.draw(varied(base, keep=10))]
    agree("Correlation", attrs, values)


@FEW
@given(dtypes, dtypes)
def test_correlation_dtypes(a: Any, b: Any) -> None:
    agree("Correlation", {}, [a, b], "dtype")


# ========================================================= plain-words messages
def test_grouped_convolution_says_which_groups_fit() -> None:
    text = message("Convolution", {"kernel": "(3, 3)", "num_filter": "6", "num_group": "3"},
                   [(1, 8, 5, 5), None, None])
    assert text.startswith("8 input channels do not divide into 3 groups (num_group)"), text
    assert "1 or 2" in text, text       # divide both 8 and num_filter=6
    text = message("Convolution", {"kernel": "(3, 3)", "num_filter": "5", "num_group": "2"},
                   [(1, 8, 5, 5), None, None])
    assert "num_filter=5 does not divide into 2 groups (num_group)" in text, text


def test_kernel_larger_than_padded_input() -> None:
    text = message("Convolution", {"kernel": "(5, 5)", "num_filter": "2"},
                   [(1, 3, 3, 3), None, None])
    assert text.startswith("kernel (5, 5) is larger than the padded input (3, 3)"), text
    assert "at most (3, 3)" in text and "pad (1, 1)" in text, text
    text = message("Convolution", {"kernel": "(3,)", "num_filter": "2", "dilate": "(2,)",
                                   "pad": "(1,)"}, [(1, 3, 2), None, None])
    assert "kernel (3,) dilated by (2,) spans (5,)" in text, text
    assert "padded input (4,)" in text and "at most (2,)" in text, text


def test_weight_of_the_wrong_shape() -> None:
    text = message("Convolution", {"kernel": "(3, 3)", "num_filter": "8"},
                   [(1, 4, 9, 9), (8, 3, 3, 3), None])
    assert text.startswith("input 'in1' (weight) has shape (8, 3, 3, 3)"), text
    assert text.endswith("(8, 4, 3, 3)") and "4 input channels" in text, text
    text = message("FullyConnected", {"num_hidden": "10"}, [(2, 3, 4), (10, 11), None])
    assert "input 'in1' (weight) has shape (10, 11)" in text and "(10, 12)" in text, text
    text = message("Deconvolution", {"kernel": "(2, 2)", "num_filter": "6"},
                   [(1, 4, 3, 3), (6, 4, 2, 2)])
    assert "(weight) has shape (6, 4, 2, 2)" in text and "(4, 6, 2, 2)" in text, text


def test_data_of_the_wrong_rank() -> None:
    text = message("Convolution", {"kernel": "(3, 3)", "num_filter": "2"},
                   [(1, 3, 9), None, None])
    assert text.startswith("data has 3 dimensions (1, 3, 9), but the 2-D kernel (3, 3) "
                           "needs 4-D data (batch, channel, height, width)"), text
    assert "kernel of 1 dimension" in text, text
    text = message("Convolution", {"kernel": "(3, 3, 3)", "num_filter": "2",
                                   "layout": "NDHWC"}, [(1, 9, 9, 3), None, None])
    assert "needs 5-D data (batch, depth, height, width, channel)" in text, text


def test_messages_name_the_attribute() -> None:
    assert "stride" in message("Convolution", {"kernel": "(3, 3)", "num_filter": "2",
                                               "stride": "(1,)"}, [(1, 2, 5, 5), None, None])
    assert "layout NHWC" in message("Convolution", {"kernel": "(3,)", "num_filter": "2",
                                                    "layout": "NHWC"},
                                    [(1, 2, 5), None, None])
    assert "num_filter" in message("Convolution", {"kernel": "(3, 3)", "num_filter": "0"},
                                   [(1, 2, 5, 5), None, None])
    assert "adj (2, 2) must be smaller than stride (2, 2)" in message(
        "Deconvolution", {"kernel": "(3, 3)", "num_filter": "2", "stride": "(2, 2)",
                          "adj": "(2, 2)"}, [(1, 2, 5, 5), None])
    assert "target_shape" in message(
        "Deconvolution", {"kernel": "(3, 3)", "num_filter": "2", "target_shape": "(40, 40)"},
        [(1, 2, 5, 5), None])
    assert "pad (3,) is too large" in message(
        "Deconvolution", {"kernel": "(1,)", "num_filter": "2", "pad": "(3,)"}, [(1, 2, 2), None])
    assert "output_size" in message("col2im", {"kernel": "(2, 2)", "output_size": "(3,)"},
                                    [(1, 4, 4)])
    assert "max_displacement" in message("Correlation", {"max_displacement": "4"},
                                         [(1, 2, 3, 3), (1, 2, 3, 3)])
    assert "num_deformable_group" in message(
        "_contrib_DeformableConvolution",
        {"kernel": "(1, 1)", "num_filter": "2", "num_deformable_group": "3"},
        [(1, 4, 3, 3), (1, 6, 3, 3), None, None])


def test_messages_name_the_input() -> None:
    text = message("FullyConnected", {"num_hidden": "3"}, [(2, 0, 4), None, None])
    assert "flatten" in text and "(2, ?, 4)" in text, text
    text = message("FullyConnected", {"num_hidden": "3"}, [(2, 4), None, (3, 2)])
    assert "input 'in2' (bias) has shape (3, 2)" in text and "(3,) or (3, 1)" in text, text
    text = message("_contrib_DeformableConvolution", {"kernel": "(3, 3)", "num_filter": "2"},
                   [(1, 2, 5, 5), (1, 18, 4, 3), None, None])
    assert "input 'in1' (offset)" in text and "(3, 3)" in text, text
    text = message("_contrib_DeformableConvolution", {"kernel": "(3, 3)", "num_filter": "2"},
                   [(1, 2, 5, 5), (1, 9, 3, 3), None, None])
    assert "needs 18" in text, text
    assert "data1" in message("Correlation", {}, [None, (1, 2, 3, 3)])
    text = message("Convolution", {"kernel": "(3, 3)", "num_filter": "2"},
                   ["float16", "float32", None], "dtype")
    assert "input 'in1' (weight) has type float32" in text and "float16" in text, text
    assert "type of data" in message("Embedding", {"input_dim": "3", "output_dim": "2"},
                                     [None, "float32"], "dtype")
    assert "has 2 inputs" in message("Convolution", {"kernel": "(3, 3)", "num_filter": "2"},
                                     [(1, 2, 5, 5), None])
