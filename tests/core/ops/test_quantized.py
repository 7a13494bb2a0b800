"""The quantized family against MXNet 1.9.1 (the judge).

For each rule, attributes and input shapes (partly unknown, missing, or wrong) and
dtypes drawn by hypothesis, on which the engine and MXNet infer the same or both refuse;
the plain-words messages; and whole int8 graphs made by MXNet's own quantization flow
(``tests/data/quantized``, written by ``make_graphs.py`` there): every internal's name,
shape and dtype, every argument and auxiliary state, as MXNet lists and infers them.
The fused ``_sg_mkldnn_*`` nodes hold a graph of float ops (Convolution, BatchNorm ...)
that other families own; where one of those has no rule yet, MXNet answers for it (the
oracle the engine's pass hands each rule, ``Call.oracle``), as it does for the outer
graph's float ops.  The names, counts, input slots and auxiliary states are the graph
layer's (:mod:`mxexplorer.core.graph.fused`, through opinfo).
"""
from __future__ import annotations

import json
import warnings
from typing import Any, Optional, Sequence

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from mxexplorer.core.analysis.mxnet_shapes import infer_with_mxnet
from mxexplorer.core.analysis.shapes import infer_document
from mxexplorer.core.graph import opinfo, symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.engine import legacy_to_shape, shape_to_legacy
from tests.conftest import DATA
from tests.core.ops.judge import agree, message

GRAPHS = DATA / "quantized"
INDEX: dict[str, dict[str, list[int]]] = json.loads(
    (GRAPHS / "index.json").read_text(encoding="utf-8"))
DTYPES = ["float32", "float16", "float64", "uint8", "int8", "int32", "int64"]
FEW = settings(max_examples=40, deadline=None)
SOME = settings(max_examples=100, deadline=None)



# ----------------------------------------------------------------------- strategies
dims = st.sampled_from([0, 1, 2, 3, 4, 5, 2, 3])


def shapes(min_ndim: int = 1, max_ndim: int = 4, none: bool = True
           ) -> st.SearchStrategy[Optional[tuple[int, ...]]]:
    """Legacy-convention shapes: 0 an unknown dim; None (sometimes) not given."""
    s = st.lists(dims, min_size=min_ndim, max_size=max_ndim).map(tuple)
    return st.one_of(st.none(), s) if none else s


#: what a min/max input may be given as: mostly not, (1,), or wrong
ranges = st.sampled_from([None, None, None, (1,), (2,), (1, 1)])
dtypes = st.one_of(st.none(), st.sampled_from(DTYPES))
qtypes = st.sampled_from([None, "int8", "uint8", "int8", "uint8", "float32", "int32"])
calib = st.sampled_from([{}, {}, {"min_calib_range": "-1.5", "max_calib_range": "2"},
                         {"min_calib_range": "0", "max_calib_range": "3.5"},
                         {"min_calib_range": "0.5"}])


@st.composite
def typed(draw: st.DrawFn, first: Sequence[Optional[str]], rest: Sequence[Optional[str]],
          n: int = 9) -> list[Optional[str]]:
    """Input dtypes: the leading ones drawn from ``first`` (one list per input), the rest
    mostly not given or as expected (``rest[i]``), now and then wrong."""
    out: list[Optional[str]] = [draw(st.sampled_from(list(first)))]
    for i in range(1, n):
        want = rest[min(i - 1, len(rest) - 1)]
        r = draw(st.integers(0, 11))
        out.append(None if r < 7 else want if r < 11 else draw(st.sampled_from(DTYPES)))
    return out


def qdata(first: Sequence[Optional[str]] = (None, "int8", "uint8", "int8", "uint8",
                                            "float32", "int32"),
          rest: Sequence[Optional[str]] = ("float32",), n: int = 9
          ) -> st.SearchStrategy[list[Optional[str]]]:
    return typed(first, rest, n)


def tup(values: Sequence[int]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


# ------------------------------------------------- quantize / dequantize / requantize
RANGED = ("_contrib_quantize", "_contrib_dequantize", "_contrib_requantize")
PLAIN = ("_contrib_quantize_v2", "_contrib_quantize_asym")


@st.composite
def quantize_case(draw: st.DrawFn) -> tuple[str, dict[str, str]]:
    op = draw(st.sampled_from(RANGED + PLAIN + ("_contrib_calibrate_entropy",)))
    attrs: dict[str, str] = {}
    if op == "_contrib_quantize":
        kind = draw(st.sampled_from([None, "int8", "uint8"]))
        if kind:
            attrs["out_type"] = kind
    elif op in ("_contrib_quantize_v2", "_contrib_requantize"):
        kind = draw(st.sampled_from([None, "auto", "int8", "uint8"]))
        if kind:
            attrs["out_type"] = kind
        attrs.update(draw(calib))
    elif op == "_contrib_quantize_asym":
        attrs.update(draw(calib))
    return op, attrs


def _n_inputs(op: str) -> int:
    return {"_contrib_calibrate_entropy": 2}.get(op, 1 if op in PLAIN else 3)


@SOME
@given(quantize_case(), shapes(), st.lists(ranges, min_size=2, max_size=2),
       st.integers(-1, 12))
def test_quantize_shapes(case: tuple[str, dict[str, str]], data: Any, rng: list[Any],
                         wrong: int) -> None:
    op, attrs = case
    n = _n_inputs(op)
    if wrong == -1:         # now and then a wrong input count
        n += 1
    agree(op, attrs, [data, *rng, None][:n])


@SOME
@given(quantize_case(), typed([None, "float32", "float32", "uint8", "int8", "int32",
                               "float16"], ["float32"], n=3), st.integers(-1, 12))
def test_quantize_dtypes(case: tuple[str, dict[str, str]], types: list[Any],
                         wrong: int) -> None:
    op, attrs = case
    n = _n_inputs(op) + (1 if wrong == -1 else 0)
    agree(op, attrs, (types + [None])[:n], "dtype")


def test_quantize_backward_fills_the_batch_only() -> None:
    v = agree("_contrib_quantize_v2", {}, [(0, 3, 0)])
    assert v.outs == ((0, 3, 0), (1,), (1,))


# ------------------------------------------------------------------- quantized conv
CONV_FAULTS = ["none"] * 8 + ["data rank", "kernel rank", "window", "group", "layout",
                               "weight", "bias", "no data"]


@st.composite
def conv_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Any]]:
    """Mostly a valid quantized convolution (some unknown dims), else one fault."""
    fault = draw(st.sampled_from(CONV_FAULTS))
    nd = draw(st.sampled_from([4, 4, 5]))
    k = nd - 2
    if fault == "kernel rank":
        k = draw(st.sampled_from([1, 4, 3 if nd == 4 else 4]))
    data_nd = draw(st.sampled_from([3, 6])) if fault == "data rank" else nd
    attrs = {"kernel": tup([draw(st.integers(1, 4)) for _ in range(k)]),
             "num_filter": str(draw(st.integers(1, 8)))}
    bad_key = draw(st.sampled_from(["stride", "pad", "dilate"]))
    for key, lo, hi in (("stride", 1, 3), ("pad", 0, 2), ("dilate", 1, 2)):
        if fault == "window" and key == bad_key:
            attrs[key] = tup([lo] * (k + 1 if k < 3 else k - 1))
        elif draw(st.booleans()):
            attrs[key] = tup([draw(st.integers(lo, hi)) for _ in range(k)])
    if fault == "group" or draw(st.integers(0, 9)) == 0:
        attrs["num_group"] = "2" if fault == "group" else "1"
    no_bias = draw(st.booleans())
    if no_bias or draw(st.booleans()):
        attrs["no_bias"] = str(no_bias)
    if fault == "layout":
        attrs["layout"] = draw(st.sampled_from(["NHWC", "NCW", "NDHWC"]))
    elif draw(st.integers(0, 5)) == 0:
        attrs["layout"] = draw(st.sampled_from(["NCHW", "NCDHW"]))
    sizes = st.sampled_from([0, 1, 2, 3, 5, 6, 7, 8, 9, 9, 8, 7, 6, 5])
    data = None if fault == "no data" else tuple(
        draw(st.lists(sizes, min_size=data_nd, max_size=data_nd)))
    n_in = 6 if no_bias else 9
    ins: list[Any] = [data] + [None] * (n_in - 1)
    if fault == "weight" or draw(st.integers(0, 2)) == 0:
        kernel = [int(v) for v in attrs["kernel"].strip("()").split(",") if v.strip()]
        w = [int(attrs["num_filter"]), data[1] if data else 3] + (kernel + [3, 3])[:nd - 2]
        w[draw(st.integers(0, len(w) - 1))] += 1 if fault == "weight" else 0
        ins[1] = tuple(w)
    if not no_bias and (fault == "bias" or draw(st.integers(0, 5)) == 0):
        ins[2] = (int(attrs["num_filter"]) + (1 if fault == "bias" else 0),)
    ins[-1] = draw(ranges)
    return attrs, ins


@SOME
@given(conv_case())
def test_quantized_conv_shapes(case: tuple[dict[str, str], list[Any]]) -> None:
    attrs, ins = case
    agree("_contrib_quantized_conv", attrs, ins)


@FEW
@given(conv_case(), qdata(rest=("int8", "int8", "float32", "float32", "float32")))
def test_quantized_conv_dtypes(case: tuple[dict[str, str], list[Any]], types: list[Any]
                               ) -> None:
    attrs, ins = case
    agree("_contrib_quantized_conv", attrs, types[:len(ins)], "dtype")


def test_quantized_conv_messages() -> None:
    base = {"kernel": "(3, 3)", "num_filter": "4"}
    text = message("_contrib_quantized_conv", dict(base, num_group="2"),
                   [(1, 4, 8, 8)] + [None] * 8)
    assert "num_group" in text and "one group" in text
    text = message("_contrib_quantized_conv", base, [None] * 9)
    assert "4-d" in text and "data" in text
    text = message("_contrib_quantized_conv", dict(base, kernel="(5, 5)"),
                   [(1, 3, 2, 2)] + [None] * 8)
    assert "kernel (5, 5)" in text and "larger than the padded input (2, 2)" in text
    text = message("_contrib_quantized_conv", dict(base, layout="NHWC"),
                   [(1, 3, 8, 8)] + [None] * 8)
    assert "layout NHWC" in text
    text = message("_contrib_quantized_conv", dict(base, stride="(1, 1, 1)"),
                   [(1, 3, 8, 8)] + [None] * 8)
    assert "stride (1, 1, 1)" in text and "give 2" in text
    text = message("_contrib_quantized_conv", base, [(1, 3, 8, 8)] + [None] * 7)
    assert "8 inputs" in text and "takes 9" in text


# ---------------------------------------------------------- quantized fully connected
@st.composite
def fc_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Any]]:
    attrs = {"num_hidden": str(draw(st.integers(1, 6)))}
    no_bias = draw(st.booleans())
    if no_bias or draw(st.booleans()):
        attrs["no_bias"] = str(no_bias)
    if draw(st.booleans()):
        attrs["flatten"] = str(draw(st.booleans()))
    n = 6 if no_bias else 9
    ins: list[Any] = [draw(shapes(1, 4))] + [None] * (n - 1)
    if draw(st.booleans()):
        ins[1] = (int(attrs["num_hidden"]) + draw(st.sampled_from([0, 0, 1])),
                  draw(st.integers(1, 12)))
    ins[-2] = draw(ranges)
    return attrs, ins


@SOME
@given(fc_case())
def test_quantized_fc_shapes(case: tuple[dict[str, str], list[Any]]) -> None:
    agree("_contrib_quantized_fully_connected", *case)


@FEW
@given(fc_case(), qdata(rest=("int8", "int8", "float32", "float32", "float32")))
def test_quantized_fc_dtypes(case: tuple[dict[str, str], list[Any]], types: list[Any]
                             ) -> None:
    attrs, ins = case
    agree("_contrib_quantized_fully_connected", attrs, types[:len(ins)], "dtype")


def test_quantized_fc_messages() -> None:
    text = message("_contrib_quantized_fully_connected", {"num_hidden": "3"},
                   [(2, 0, 4)] + [None] * 8)
    assert "every dimension after the first" in text
    text = message("_contrib_quantized_fully_connected", {"num_hidden": "3"},
                   ["float32"] + [None] * 8, "dtype")
    assert "type float32" in text and "int8 or uint8" in text


# ---------------------------------------------------------------- quantized pooling
@st.composite
def pool_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Any]]:
    nd = draw(st.sampled_from([4, 4, 5, 3]))
    glob = draw(st.integers(0, 4)) == 0
    k = draw(st.sampled_from([nd - 2, nd - 2, 2, 3, 0, 1]))
    if k < nd - 2 and not glob or k < 1 and not glob:
        k = max(nd - 2, 2)
    attrs: dict[str, str] = {}
    if k:
        attrs["kernel"] = tup([draw(st.integers(1, 4)) for _ in range(k)])
    if glob:
        attrs["global_pool"] = "True"
    n = k if k in (1, 2) else 3
    if draw(st.booleans()):
        attrs["stride"] = tup([draw(st.integers(1, 3)) for _ in range(n)])
    if draw(st.booleans()):
        attrs["pad"] = tup([draw(st.integers(0, 2)) for _ in range(n)])
    attrs["pool_type"] = draw(st.sampled_from(["max", "avg", "max", "sum"]))
    conv = draw(st.sampled_from([None, "valid", "full", "same"]))
    if conv:
        attrs["pooling_convention"] = conv
    if draw(st.integers(0, 6)) == 0:
        attrs["layout"] = draw(st.sampled_from(["NCHW", "NCDHW", "NHWC"]))
    data = draw(st.one_of(st.none(), st.lists(st.sampled_from([0, 1, 2, 3, 5, 7, 8]),
                                              min_size=nd, max_size=nd).map(tuple)))
    return attrs, [data, draw(ranges), None]


@SOME
@given(pool_case())
def test_quantized_pooling_shapes(case: tuple[dict[str, str], list[Any]]) -> None:
    agree("_contrib_quantized_pooling", *case)


@FEW
@given(pool_case(), qdata(n=3))
def test_quantized_pooling_dtypes(case: tuple[dict[str, str], list[Any]],
                                  types: list[Any]) -> None:
    agree("_contrib_quantized_pooling", case[0], types, "dtype")


def test_quantized_pooling_messages() -> None:
    text = message("_contrib_quantized_pooling", {"kernel": "(3, 3)"},
                   [(1, 2, 2, 2), None, None])
    assert "kernel (3, 3) is larger than the padded input (2, 2)" in text
    text = message("_contrib_quantized_pooling", {"kernel": "(2, 2)", "pool_type": "sum"},
                   ["int8", None, None], "dtype")
    assert "pool_type=sum" in text and "max or avg" in text


# ------------------------------------------------ activation, flatten, embedding, bn
@FEW
@given(st.sampled_from(["relu", "relu", "tanh"]), shapes(), ranges, qdata(n=3))
def test_quantized_act(act: str, data: Any, rng: Any, types: list[Any]) -> None:
    agree("_contrib_quantized_act", {"act_type": act}, [data, rng, None])
    agree("_contrib_quantized_act", {"act_type": act}, types, "dtype")


@FEW
@given(shapes(), ranges, qdata(n=3))
def test_quantized_flatten(data: Any, rng: Any, types: list[Any]) -> None:
    agree("_contrib_quantized_flatten", {}, [data, rng, None])
    agree("_contrib_quantized_flatten", {}, types, "dtype")


@FEW
@given(st.integers(1, 12), st.integers(1, 6), shapes(), st.sampled_from([None, (12, 6), (7,)]),
       qdata(first=(None, "float32", "int32", "int8"), rest=("int8", "float32"), n=4))
def test_quantized_embedding(n_in: int, n_out: int, data: Any, weight: Any,
                             types: list[Any]) -> None:
    attrs = {"input_dim": str(n_in), "output_dim": str(n_out)}
    agree("_contrib_quantized_embedding", attrs, [data, weight, None, None])
    agree("_contrib_quantized_embedding", attrs, types, "dtype")


@SOME
@given(st.integers(-3, 3), shapes(1, 4), st.sampled_from([None, None, (3,), (4,)]),
       ranges, qdata(rest=("float32",), n=7))
def test_quantized_batch_norm(axis: int, data: Any, gamma: Any, rng: Any,
                              types: list[Any]) -> None:
    attrs = {"axis": str(axis)} if axis != 1 else {}
    assume(data is None or axis >= -len(data))    # MXNet reads before a short shape
    agree("_contrib_quantized_batch_norm", attrs, [data, gamma, None, None, None, rng, None])
    agree("_contrib_quantized_batch_norm", attrs, types, "dtype")


# -------------------------------------------------------------------- concat, add, mul
@st.composite
def concat_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Any]]:
    n = draw(st.integers(1, 3))
    attrs = {"num_args": str(n)}
    rank = draw(st.integers(1, 3))
    dim = draw(st.integers(-rank, rank - 1)) if draw(st.integers(0, 7)) else rank
    if dim != 1:
        attrs["dim"] = str(dim)
    base = [draw(st.integers(1, 4)) for _ in range(rank)]
    ins: list[Any] = []
    for _ in range(n):
        r = draw(st.integers(0, 9))
        if r == 0:
            ins.append(None)
        elif r == 1:
            ins.append(tuple(draw(st.lists(dims, min_size=1, max_size=3))))
        else:
            ins.append(tuple(0 if draw(st.integers(0, 4)) == 0 else
                             d + draw(st.sampled_from([0, 0, 0, 1])) for d in base))
    return attrs, ins + [draw(ranges)] + [None] * (2 * n - 1)


@SOME
@given(concat_case(), typed([None, "int8", "uint8", "float32"],
                           ["uint8", "int8", None, "float32", "float32", "float32"]))
def test_quantized_concat(case: tuple[dict[str, str], list[Any]], types: list[Any]) -> None:
    attrs, ins = case
    agree("_contrib_quantized_concat", attrs, ins)
    agree("_contrib_quantized_concat", attrs, types[:len(ins)], "dtype")


@st.composite
def pair(draw: st.DrawFn) -> list[Any]:
    a = draw(shapes(1, 3))
    r = draw(st.integers(0, 5))
    b = a if r < 3 else draw(shapes(1, 3))
    return [a, b]


@SOME
@given(st.sampled_from(["_contrib_quantized_elemwise_add", "_contrib_quantized_elemwise_mul"]),
       calib, st.booleans(), pair(), ranges, typed([None, "int8", "uint8", "float32"],
                                                    ["int8", "float32"], n=6))
def test_quantized_add_mul(op: str, cal: dict[str, str], float_out: bool, ab: list[Any],
                           rng: Any, types: list[Any]) -> None:
    attrs = dict(cal)
    if op.endswith("mul") and float_out:
        attrs["enable_float_output"] = "True"
    agree(op, attrs, ab + [rng, None, None, None])
    agree(op, attrs, types, "dtype")


def test_quantized_add_messages() -> None:
    text = message("_contrib_quantized_elemwise_add", {},
                   [(2, 3), (2, 0), None, None, None, None])
    assert "(2, 3)" in text and "(2, ?)" in text and "the same" in text


# ---------------------------------------------------------------------- quantized rnn
@st.composite
def rnn_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Any]]:
    attrs = {"mode": draw(st.sampled_from(["lstm", "lstm", "lstm", "gru"])),
             "state_size": str(draw(st.integers(1, 5))),
             "num_layers": str(draw(st.integers(1, 3)))}
    for key in ("bidirectional", "state_outputs", "use_sequence_length"):
        if draw(st.integers(0, 2)) == 0:
            attrs[key] = "True"
    if draw(st.integers(0, 4)) == 0:
        attrs["projection_size"] = str(draw(st.integers(1, 3)))
    data = draw(shapes(2, 4))
    state = draw(st.sampled_from([None, None, (2, 2, 3), (1, 0, 5)]))
    return attrs, [data, draw(st.sampled_from([None, None, (80,)])), state, None,
                   draw(ranges), None]


@SOME
@given(rnn_case(), qdata(first=(None, "uint8", "uint8", "int8"), n=6))
def test_quantized_rnn(case: tuple[dict[str, str], list[Any]], types: list[Any]) -> None:
    attrs, ins = case
    agree("_contrib_quantized_rnn", attrs, ins)
    agree("_contrib_quantized_rnn", attrs, types, "dtype")


def test_quantized_rnn_unknown_features_make_a_parameter_count() -> None:
    # MXNet computes the parameter count from the unknown feature size as -1
    v = agree("_contrib_quantized_rnn", {"mode": "lstm", "state_size": "4",
                                         "num_layers": "1"}, [(5, 2, 0)] + [None] * 5)
    assert v.ins[1] == (80,)
    text = message("_contrib_quantized_rnn", {"mode": "gru", "state_size": "4",
                                              "num_layers": "1"}, [(5, 2, 3)] + [None] * 5)
    assert "mode=gru" in text and "LSTM" in text


# ------------------------------------------------------------------- whole graphs
def _mx() -> Any:
    import mxnet as mx
    return mx


class Ours:
    """A file as the engine infers it (MXNet answering for inner and outer ops without a
    rule yet, through the pass's oracle), with opinfo's names, counts and auxiliary
    states."""

    def __init__(self, text: str, shapes: dict[str, tuple[int, ...]], oracle: Any):
        parsed = symbol_io.parse_graph(json.loads(text))
        self.nodes = parsed.nodes
        hints = parsed.row_hints
        g = engine.graph_of(self.nodes, range(len(self.nodes)),
                            (lambda nid: hints[nid]) if hints else None)
        var = {n.name: nid for nid, n in enumerate(self.nodes) if n.is_variable}
        self.shapes = engine.infer_shapes(
            g, {var[k]: legacy_to_shape(v) for k, v in shapes.items()}, oracle)
        self.dtypes = engine.infer_dtypes(g, {var[k]: "float32" for k in shapes}, oracle)
        self.internals: list[tuple[str, tuple[int, int]]] = []
        aux: set[int] = set()
        for nid, node in enumerate(self.nodes):
            if node.is_variable:
                self.internals.append((node.name, (nid, 0)))
                continue
            _, names = opinfo.outputs(node.op, node.attrs, hints[nid] if hints else None)
            self.internals += [(f"{node.name}_{name}", (nid, i))
                               for i, name in enumerate(names)]
            aux.update(node.inputs[s][0] for s in opinfo.aux_slots(
                node.op, node.extra.get("subgraphs")) if s < len(node.inputs))
        self.args = [n.name for k, n in enumerate(self.nodes) if n.is_variable and k not in aux]
        self.aux = [n.name for k, n in enumerate(self.nodes) if n.is_variable and k in aux]
        self.variables = var

    def failure(self, kind: str) -> str | None:
        got = self.shapes if kind == "shape" else self.dtypes
        if got.failure is None:
            return None
        return f"{self.nodes[got.failure.node].name}: {got.failure.error.message}"

    def value(self, entry: tuple[int, int], kind: str) -> Any:
        if kind == "shape":
            return shape_to_legacy(self.shapes.values.get(entry))
        return self.dtypes.values.get(entry)


def theirs(text: str, shapes: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """MXNet's internals, arguments, auxiliary states, shapes and dtypes of a file."""
    mx = _mx()
    import numpy as np

    sym = mx.sym.load_json(text)
    internals = sym.get_internals()
    names = internals.list_outputs()
    out: dict[str, Any] = {"internals": names, "args": sym.list_arguments(),
                           "aux": sym.list_auxiliary_states()}

    def norm(v: Any) -> Any:
        return tuple(int(d) for d in v) if v is not None and len(v) else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, o, x = internals.infer_shape_partial(**shapes)
        out["shape"] = dict(zip(names, [norm(v) for v in o]))
        out["vars"] = {**dict(zip(internals.list_arguments(), [norm(v) for v in a])),
                       **dict(zip(internals.list_auxiliary_states(), [norm(v) for v in x]))}
        a, o, x = internals.infer_type_partial(**{k: np.float32 for k in shapes})
        out["dtype"] = dict(zip(names, [np.dtype(v).name if v is not None else None
                                        for v in o]))
    return out


def differences(text: str, shapes: dict[str, tuple[int, ...]]) -> list[str]:
    """Everything the engine says otherwise than MXNet about a file, in words."""
    from mxexplorer.core.analysis.oracle import MXNetOracle

    mine = Ours(text, shapes, MXNetOracle())
    ref = theirs(text, shapes)
    diffs: list[str] = []
    names = [n for n, _ in mine.internals]
    if names != ref["internals"]:
        diffs.append(f"internal names differ: {sorted(set(names) ^ set(ref['internals']))}")
    if mine.args != ref["args"]:
        diffs.append(f"arguments: engine {mine.args}, MXNet {ref['args']}")
    if mine.aux != ref["aux"]:
        diffs.append(f"auxiliary states: engine {mine.aux}, MXNet {ref['aux']}")
    for kind in ("shape", "dtype"):
        if mine.failure(kind):
            diffs.append(f"the engine's {kind}s broke at {mine.failure(kind)}")
            continue
        for name, entry in mine.internals:
            if mine.value(entry, kind) != ref[kind].get(name):
                diffs.append(f"{kind} of {name}: engine {mine.value(entry, kind)}, "
                             f"MXNet {ref[kind].get(name)}")
    for var, want in ref["vars"].items():
        got = mine.value((mine.variables[var], 0), "shape")
        if got != want:
            diffs.append(f"shape of {var}: engine {got}, MXNet {want}")
    return diffs


@pytest.mark.parametrize("name", sorted(INDEX))
def test_whole_graph_equals_mxnet(name: str) -> None:
    text = (GRAPHS / name).read_text(encoding="utf-8")
    shapes = {k: tuple(v) for k, v in INDEX[name].items()}
    assert differences(text, shapes) == []


def test_whole_graph_partly_known_and_broken() -> None:
    """A batch left unknown, and a data shape the fused convolution refuses: the engine
    and MXNet agree on what is known, and both refuse the second."""
    text = (GRAPHS / "conv_auto-symbol.json").read_text(encoding="utf-8")
    assert differences(text, {"data": (0, 3, 8, 8)}) == []
    from mxexplorer.core.analysis.oracle import MXNetOracle

    mine = Ours(text, {"data": (2, 5, 8, 8, 1)}, MXNetOracle())
    assert mine.failure("shape") is not None
    assert "inside the fused layer" in (mine.failure("shape") or "")
    with pytest.raises(_mx().base.MXNetError):
        theirs(text, {"data": (2, 5, 8, 8, 1)})


def test_fused_layer_messages() -> None:
    from mxexplorer.core.analysis.oracle import MXNetOracle

    graph = json.loads((GRAPHS / "conv_auto-symbol.json").read_text(encoding="utf-8"))
    fused = next(n for n in graph["nodes"] if n["op"] == "_sg_mkldnn_conv")
    del fused["subgraphs"]
    mine = Ours(json.dumps(graph), {"data": (2, 3, 8, 8)}, MXNetOracle())
    assert "no 'subgraphs' field" in (mine.failure("shape") or "")
    graph = json.loads((GRAPHS / "conv_auto-symbol.json").read_text(encoding="utf-8"))
    fused = next(n for n in graph["nodes"] if n["op"] == "_sg_mkldnn_conv")
    fused["inputs"] = fused["inputs"][:-1]
    mine = Ours(json.dumps(graph), {"data": (2, 3, 8, 8)}, MXNetOracle())
    assert "has 8 inputs, but this layer takes 9" in (mine.failure("shape") or "")
    fused = next(n for n in graph["nodes"] if n["op"] == "_sg_mkldnn_conv")
    fused["inputs"].append(fused["inputs"][-1])
    fused["attrs"]["with_bn"] = "maybe"
    mine = Ours(json.dumps(graph), {"data": (2, 3, 8, 8)}, MXNetOracle())
    assert "with_bn='maybe'" in (mine.failure("shape") or "")


@pytest.mark.parametrize("name", sorted(INDEX))
def test_document_infers_as_mxnet(name: str) -> None:
    """The document of a real int8 graph inferred by the engine alone (no MXNet, inside
    the fused layers too) gives every internal MXNet's shape and dtype."""
    path = GRAPHS / name
    doc = GraphDocument.open(str(path))
    shapes = {k: tuple(v) for k, v in INDEX[name].items()}
    mine = infer_document(doc, shapes, use_mxnet=False)
    ref = infer_with_mxnet(doc, path.read_text(encoding="utf-8"), shapes)
    assert ref.error is None, ref.error
    assert mine.error is None, mine.error.one_line()
    wrong = [f"{e.name}: engine {got} {got_t}, MXNet {want} {want_t}"
             for e, got, want, got_t, want_t in zip(
                 doc.internals(), mine.internal_shapes, ref.internal_shapes,
                 mine.internal_dtypes, ref.internal_dtypes)
             if (got, got_t) != (want, want_t)]
    assert wrong == []
