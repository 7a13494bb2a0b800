"""The plugins family: ops MXNet 1.9.1 does not register, which real files use.

No MXNet judges them directly.  Where a plug-in is a registered op under another name
(the SSD fork's ``MultiBox*``, the mobilenet fork's ``ChannelwiseConvolution``) it must
infer what MXNet infers for that op, drawn by hypothesis; BMXNet's ``QConvolution`` and
``QFullyConnected`` without packed weights infer what MXNet's Convolution and
FullyConnected infer (with BMXNet's default ``no_bias=True``); and the real files that
use them (``../shared/corpus``) infer to plausible, consistent shapes (the mobilenet to
(1, 1000) for (1, 3, 224, 224) images).  Registered ops without a rule yet are answered
by MXNet (the engine's oracle, which the pass hands the plug-ins' delegation too).
Their names and input slots are the graph layer's (:mod:`mxexplorer.core.graph.fused`).
"""
from __future__ import annotations

import json
from typing import Any, Optional, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.analysis.oracle import MXNetOracle
from mxexplorer.core.graph import fused, opinfo, symbol_io
from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import engine
from mxexplorer.core.ops import plugins as P
from mxexplorer.core.ops.engine import legacy_to_shape, shape_to_legacy
from tests.conftest import CORPUS
from tests.core.ops.judge import Verdict, mxnet_verdict

FEW = settings(max_examples=40, deadline=None)
SOME = settings(max_examples=100, deadline=None)


#: registered ops the plug-ins are inferred as, without a rule yet: MXNet answers
ORACLE = MXNetOracle()


@pytest.fixture(scope="module")
def oracle() -> Any:
    return ORACLE


def plugin_verdict(op: str, attrs: dict[str, str], values: Sequence[Any],
                   kind: str = "shape") -> Verdict:
    """The engine's answer for a one-node graph of a plug-in op (the judge's form)."""
    nodes = [Node("null", f"in{i}", {}, [], {}) for i in range(len(values))]
    nodes.append(Node(op, "n", dict(attrs), [(i, 0, 0) for i in range(len(values))], {}))
    g = engine.graph_of(nodes, range(len(nodes)))
    if kind == "shape":
        got = engine.infer_shapes(g, {i: legacy_to_shape(v) for i, v in enumerate(values)
                                      if v is not None}, ORACLE)
        show: Any = shape_to_legacy
    else:
        got = engine.infer_dtypes(g, {i: v for i, v in enumerate(values) if v is not None},
                                  ORACLE)
        show = lambda v: v  # noqa: E731
    if got.failure is not None:
        return Verdict(got.failure.error.message)
    n = len(values)
    return Verdict(None, tuple(show(got.values[(i, 0)]) for i in range(n)),
                   tuple(show(got.values[(n, k)]) for k in range(g.counts[-1])))


def same_as(op: str, attrs: dict[str, str], registered: str, reg_attrs: dict[str, str],
            values: Sequence[Any], kind: str = "shape") -> Verdict:
    """The plug-in infers what MXNet infers for the registered op (or both refuse)."""
    theirs = mxnet_verdict(registered, reg_attrs, values, kind)
    ours = plugin_verdict(op, attrs, values, kind)
    assert ours.same_as(theirs), (f"{op} {attrs} {kind}s {list(values)}:\n  MXNet "
                                  f"{registered}: {theirs}\n  engine: {ours}")
    return theirs


def message(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape"
            ) -> str:
    got = plugin_verdict(op, attrs, values, kind)
    assert got.refused is not None, got
    return got.refused


# ----------------------------------------------------------------------- strategies
def tup(values: Sequence[Any]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


dims = st.sampled_from([0, 1, 2, 3, 5, 7, 8, 8, 6])


def shapes(min_ndim: int, max_ndim: int, none: bool = True
           ) -> st.SearchStrategy[Optional[tuple[int, ...]]]:
    s = st.lists(dims, min_size=min_ndim, max_size=max_ndim).map(tuple)
    return st.one_of(st.none(), s) if none else s


@st.composite
def conv2d(draw: st.DrawFn, groups: bool) -> tuple[dict[str, str], list[Any]]:
    """A 2-d convolution's attributes (some wrong) and data (some unknown dims)."""
    channels = draw(st.sampled_from([1, 2, 4, 6, 8]))
    attrs = {"kernel": tup([draw(st.integers(1, 4)) for _ in range(2)]),
             "num_filter": str(draw(st.sampled_from([2, 4, 6, 8, 12])))}
    for key, lo, hi in (("stride", 1, 3), ("pad", 0, 2), ("dilate", 1, 2)):
        if draw(st.booleans()):
            attrs[key] = tup([draw(st.integers(lo, hi)) for _ in range(2)])
    if groups:
        attrs["num_group"] = str(draw(st.sampled_from([channels, channels, 1, 2, 3])))
    data = (draw(st.sampled_from([0, 1, 2, 2])),
            draw(st.sampled_from([channels, channels, channels, 0])),
            draw(st.sampled_from([0, 3, 6, 9, 12, 8])), draw(st.sampled_from([0, 3, 7, 10, 9])))
    shape = None if draw(st.integers(0, 9)) == 0 else data
    return attrs, [shape, None]


# ------------------------------------------------------ ChannelwiseConvolution
@SOME
@given(conv2d(groups=True), st.booleans())
def test_channelwise_is_convolution(case: tuple[dict[str, str], list[Any]],
                                    bias: bool) -> None:
    attrs, ins = case
    attrs = dict(attrs, no_bias=str(not bias))
    ins = ins + [None] if bias else ins
    same_as("ChannelwiseConvolution", attrs, "Convolution", attrs, ins)
    same_as("ChannelwiseConvolution", attrs, "Convolution", attrs,
            ["float32"] + [None] * (len(ins) - 1), "dtype")


@FEW
@given(conv2d(groups=False))
def test_channelwise_groups_default_to_the_channels(case: tuple[dict[str, str], list[Any]]
                                                    ) -> None:
    attrs, ins = case
    attrs = dict(attrs, no_bias="True")
    data = ins[0]
    if data is None or data[1] == 0:       # the groups are not known: nothing inferred
        got = plugin_verdict("ChannelwiseConvolution", attrs, ins)
        assert got.refused is None and got.outs == (None,)
        return
    same_as("ChannelwiseConvolution", attrs, "Convolution",
            dict(attrs, num_group=str(data[1])), ins)


# --------------------------------------------------------------- MultiBox (SSD fork)
@SOME
@given(st.lists(st.sampled_from(["0.1", "0.25", "0.5", "0.9"]), min_size=1, max_size=3),
       st.lists(st.sampled_from(["1", "2", "0.5", "3"]), min_size=1, max_size=4),
       st.booleans(), st.one_of(shapes(4, 4), shapes(4, 4), shapes(4, 4), shapes(2, 5)))
def test_multibox_prior_is_the_contrib_op(sizes: list[str], ratios: list[str], clip: bool,
                                          data: Any) -> None:
    attrs = {"sizes": tup(sizes), "ratios": tup(ratios), "clip": str(clip)}
    same_as("MultiBoxPrior", attrs, "_contrib_MultiBoxPrior", attrs, [data])
    same_as("MultiBoxPrior", attrs, "_contrib_MultiBoxPrior", attrs,
            [None if data is None else "float32"], "dtype")


@SOME
@given(st.sampled_from([0, 4, 12, 12]), st.sampled_from([0, 1, 2, 2]),
       st.sampled_from([0, 3, 5, 5]), st.sampled_from([0, 3, 6, 6]), st.integers(0, 12))
def test_multibox_target_is_the_contrib_op(anchors: int, batch: int, labels: int,
                                           classes: int, drop: int) -> None:
    attrs = {"overlap_threshold": "0.5", "negative_mining_ratio": "3",
             "variances": "(0.1, 0.1, 0.2, 0.2)"}
    ins: list[Any] = [(1, anchors, 4), (batch, labels, 5), (batch, classes, anchors)]
    if drop < 3:
        ins[drop] = None
    same_as("MultiBoxTarget", attrs, "_contrib_MultiBoxTarget", attrs, ins)


@SOME
@given(st.sampled_from([0, 4, 12, 12]), st.sampled_from([0, 1, 2, 2]),
       st.sampled_from([0, 3, 6, 6]), st.integers(0, 12), st.booleans())
def test_multibox_detection_is_the_contrib_op(anchors: int, batch: int, classes: int,
                                              drop: int, clip: bool) -> None:
    attrs = {"clip": str(clip), "threshold": "0.01", "nms_threshold": "0.45"}
    ins: list[Any] = [(batch, classes, anchors), (batch, anchors * 4), (1, anchors, 4)]
    if drop < 3:
        ins[drop] = None
    same_as("MultiBoxDetection", attrs, "_contrib_MultiBoxDetection", attrs, ins)
    same_as("MultiBoxDetection", attrs, "_contrib_MultiBoxDetection", attrs,
            ["float32", None, None], "dtype")


def test_multibox_fork_keys_are_dropped() -> None:
    """A fork's attribute the contrib op does not declare is ignored, not refused."""
    attrs = {"sizes": "(0.5,)", "ratios": "(1, 2)", "fork_only": "7"}
    got = plugin_verdict("MultiBoxPrior", attrs, [(1, 3, 4, 4)])
    assert got.outs == ((1, 32, 4),)


# ---------------------------------------------------------------------- BMXNet
@SOME
@given(conv2d(groups=True), st.booleans())
def test_qconvolution_is_convolution(case: tuple[dict[str, str], list[Any]],
                                     bias: bool) -> None:
    attrs, ins = case
    q_attrs = dict(attrs, act_bit="1")
    if bias:
        q_attrs["no_bias"] = "False"
        ins = ins + [None]
    same_as("QConvolution", q_attrs, "Convolution", dict(attrs, no_bias=str(not bias)), ins)


@SOME
@given(st.integers(1, 9), st.booleans(), shapes(1, 4, none=False))
def test_qfullyconnected_is_fullyconnected(hidden: int, bias: bool, data: Any) -> None:
    attrs = {"num_hidden": str(hidden), "act_bit": "1"}
    ins: list[Any] = [tuple(d or 3 for d in data), None] + ([None] if bias else [])
    if bias:
        attrs["no_bias"] = "False"
    same_as("QFullyConnected", attrs, "FullyConnected",
            {"num_hidden": str(hidden), "no_bias": str(not bias)}, ins)


def test_packed_binary_weights() -> None:
    attrs = {"kernel": "(5, 5)", "num_filter": "64", "binarized_weights_only": "True"}
    got = plugin_verdict("QConvolution", attrs, [(1, 64, 12, 12), None])
    assert got.ins[1] == (64 * 64 * 25 // 64,) and got.outs == ((1, 64, 8, 8),)
    got = plugin_verdict("QConvolution", attrs, ["float32", None], "dtype")
    assert got.ins == ("float32", "float64") and got.outs == ("float32",)
    got = plugin_verdict("QFullyConnected", {"num_hidden": "1000",
                                             "binarized_weights_only": "True"},
                         [(1, 1024), None])
    assert got.ins[1] == (16000,) and got.outs == ((1, 1000),)
    assert "one group" in message("QConvolution", dict(attrs, num_group="2"),
                                  [(1, 64, 12, 12), None])


def test_bmxnet_messages() -> None:
    assert "kernel (3,)" in message("QConvolution", {"kernel": "(3,)", "num_filter": "4"},
                                    [(1, 2, 8), None])
    text = message("QConvolution", {"kernel": "(5, 5)", "num_filter": "4"},
                   [(1, 2, 3, 3), None])
    assert "kernel (5, 5) is larger than the padded input (3, 3)" in text
    text = message("QConvolution", {"kernel": "(3, 3)", "num_filter": "4", "act_bit": "40"},
                   [(1, 2, 8, 8), None])
    assert "act_bit" in text and "1 to 32" in text
    text = message("QConvolution", {"kernel": "(3, 3)"}, [(1, 2, 8, 8), None])
    assert "num_filter is required" in text
    text = message("QActivation", {}, [None], "dtype")
    assert "no known type" in text
    assert plugin_verdict("QActivation", {"act_bit": "2"}, [(2, 0, 3)]).outs == ((2, 0, 3),)


# ---------------------------------------------------------------------- WarpCTC
def test_warpctc() -> None:
    attrs = {"input_length": "30", "label_length": "4"}
    got = plugin_verdict("WarpCTC", attrs, [(60, 63), None])
    assert got.ins == ((60, 63), (8,)) and got.outs == ((60, 63),)
    assert plugin_verdict("WarpCTC", attrs, [(0, 63), None]).ins[1] == (0,)   # unknown
    got = plugin_verdict("WarpCTC", attrs, [None, "float32"], "dtype")
    assert got.ins == ("float32", "int32") and got.outs == ("float32",)
    assert "input_length" in message("WarpCTC", {"label_length": "4"}, [(60, 63), None])
    assert "takes 2" in message("WarpCTC", attrs, [(60, 63)])


def test_names_and_counts() -> None:
    """The graph layer names every plug-in this family has a rule for."""
    assert set(fused.PLUGIN_OPS) == set(P.RULES)
    assert opinfo.outputs("MultiBoxTarget", {}) == (3, ["loc_target", "loc_mask",
                                                        "cls_target"])
    assert fused.outputs("Convolution", {}) is None
    assert opinfo.input_slots("QConvolution", {}, 2) == ["data", "weight"]
    assert opinfo.input_slots("QConvolution", {"no_bias": "False"}, 3) == [
        "data", "weight", "bias"]
    assert opinfo.input_slots("ChannelwiseConvolution", {}, 3) == ["data", "weight", "bias"]
    assert opinfo.input_slots("WarpCTC", {}, 2) == ["data", "label"]
    spec = opinfo.spec("_contrib_MultiBoxDetection")
    assert spec is not None and fused.input_slots("MultiBoxDetection", {}) == list(
        spec.inputs or ())
    got = plugin_verdict("MultiBoxTarget", {}, [(1, 4, 4), (1, 3, 5), (1, 3, 4)])
    assert got.outs == ((1, 16), (1, 16), (1, 4))


# ------------------------------------------------------------------ the real files
def infer_file(name: str, shapes: dict[str, tuple[int, ...]], oracle: Any
               ) -> tuple[list[Node], engine.Inferred, engine.Inferred, list[Any]]:
    """A corpus file inferred by the engine (registered ops without a rule: MXNet)."""
    raw = json.loads((CORPUS / name).read_text(encoding="utf-8"))
    parsed = symbol_io.parse_graph(raw)
    nodes, hints = parsed.nodes, parsed.row_hints
    g = engine.graph_of(nodes, range(len(nodes)), (lambda nid: hints[nid]) if hints else None)
    var = {n.name: i for i, n in enumerate(nodes) if n.is_variable}
    sh = engine.infer_shapes(g, {var[k]: legacy_to_shape(v) for k, v in shapes.items()},
                             oracle)
    dt = engine.infer_dtypes(g, {var[k]: "float32" for k in shapes}, oracle)
    assert sh.failure is None and dt.failure is None, (sh.failure, dt.failure)
    assert not sh.unruled and not dt.unruled
    heads = [shape_to_legacy(sh.values[(h[0], h[1])]) for h in raw["heads"]]
    return nodes, sh, dt, heads


def _plugin_values(nodes: list[Node], got: engine.Inferred, op: str) -> list[Any]:
    out = []
    for nid, node in enumerate(nodes):
        if node.op == op:
            out.append(([got.values[(src, k)] for src, k, _ in node.inputs],
                        got.values[(nid, 0)]))
    return out


@pytest.mark.corpus
def test_mobilenet_infers_to_1000_classes(oracle: Any) -> None:
    nodes, sh, dt, heads = infer_file("KeyKy__mobilenet-mxnet__mobilenet-symbol.json",
                                      {"data": (1, 3, 224, 224)}, oracle)
    assert heads == [(1, 1000)]
    convs = _plugin_values(nodes, sh, "ChannelwiseConvolution")
    assert len(convs) == 13
    for (data, weight), out in convs:
        assert data is not None and weight == (data[1], 1, 3, 3) and out is not None
        assert out[1] == data[1] and out[2] in (data[2], (data[2] + 1) // 2)
    assert all(t == "float32" for (ins, out) in _plugin_values(nodes, dt,
                                                                "ChannelwiseConvolution")
               for t in [*ins, out])


@pytest.mark.corpus
@pytest.mark.parametrize("name,size,classes", [
    ("hpi-xnor__BMXNet__smd_hpi__binary_models__binarized_mnist_64bit-symbol.json",
     (1, 1, 28, 28), 10),
    ("hpi-xnor__BMXNet__smd_hpi__binary_models__binarized_imagenet-resnet18-64bit-symbol.json",
     (1, 3, 224, 224), 1000),
])
def test_binary_networks(oracle: Any, name: str, size: tuple[int, ...], classes: int
                         ) -> None:
    nodes, sh, dt, heads = infer_file(name, {"data": size}, oracle)
    assert heads == [(1, classes)]
    for node in nodes:
        if node.op == "QConvolution":
            (src, k, _), (weight, _, _) = node.inputs
            data, out = sh.values[(src, k)], sh.values[(nodes.index(node), 0)]
            kernel = opinfo.tuple_attr(node.attrs, "kernel") or ()
            filters = int(node.attrs["num_filter"])
            assert data is not None and out is not None
            assert out[:2] == (1, filters) and data[0] == 1
            # the packed weights: one bit per weight, in 64-bit words stored as float64
            assert sh.values[(weight, 0)] == (data[1] * filters * kernel[0] * kernel[1]
                                              // 64,)
            assert dt.values[(weight, 0)] == "float64"
        if node.op == "QActivation":
            src, k, _ = node.inputs[0]
            assert sh.values[(src, k)] == sh.values[(nodes.index(node), 0)]


@pytest.mark.corpus
def test_ocr_warpctc(oracle: Any) -> None:
    nodes, sh, dt, heads = infer_file("gongxijun__ocr_recognition__model__model-symbol.json",
                                      {"data": (2, 30, 80), "label": (2, 4)}, oracle)
    assert heads == [(60, 63)]
    ((data, label), out), = _plugin_values(nodes, sh, "WarpCTC")
    assert data == out == (60, 63) and label == (8,)
    ((data_t, label_t), out_t), = _plugin_values(nodes, dt, "WarpCTC")
    assert (data_t, label_t, out_t) == ("float32", "int32", "float32")


@pytest.mark.corpus
def test_ssd_multibox(oracle: Any) -> None:
    nodes, sh, dt, heads = infer_file("Ellinier__my-mxnet-ssd__model__ssd_300-symbol.json",
                                      {"data": (1, 3, 300, 300), "label": (1, 3, 5)}, oracle)
    priors = _plugin_values(nodes, sh, "MultiBoxPrior")
    assert [out for _, out in priors] == [(1, 4332, 4), (1, 2166, 4), (1, 600, 4),
                                          (1, 150, 4), (1, 54, 4), (1, 6, 4)]
    anchors = sum(out[1] for _, out in priors)
    assert heads == [(1, 3, anchors), (1, 4 * anchors), (1, anchors)]
