"""The fused, int8 and plug-in ops' names, counts, input slots and auxiliary states
(:mod:`mxexplorer.core.graph.fused`, through opinfo) are MXNet 1.9.1's: one op at a
time, and whole int8 graphs made by MXNet's own quantization flow
(``tests/data/quantized``), whose document lists internals, arguments and auxiliary
states exactly as MXNet does."""
from __future__ import annotations

import json
from typing import Any

import mxnet as mx
import pytest

from mxexplorer.core.graph import fused, opinfo
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind
from tests.conftest import DATA

GRAPHS = DATA / "quantized"
INDEX: dict[str, dict[str, list[int]]] = json.loads(
    (GRAPHS / "index.json").read_text(encoding="utf-8"))


def _one_node(op: str, attrs: dict[str, str], n_in: int) -> Any:
    return mx.sym.load_json(json.dumps({
        "nodes": [{"op": "null", "name": f"in{i}", "inputs": []} for i in range(n_in)]
        + [{"op": op, "name": "n", "attrs": attrs, "inputs": [[i, 0, 0] for i in range(n_in)]}],
        "arg_nodes": list(range(n_in)), "heads": [[n_in, 0, 0]],
        "attrs": {"mxnet_version": ["int", 10901]}}))


# --------------------------------------------------------------------- one op
@pytest.mark.parametrize("op,attrs", [
    ("_contrib_quantized_elemwise_mul", {}),
    ("_contrib_quantized_elemwise_mul", {"enable_float_output": "True"}),
    ("_contrib_quantized_rnn", {"mode": "lstm", "state_size": "2", "num_layers": "1"}),
    ("_contrib_quantized_rnn", {"mode": "lstm", "state_size": "2", "num_layers": "1",
                                "state_outputs": "1"}),
])
def test_outputs_are_mxnets(op: str, attrs: dict[str, str]) -> None:
    sym = _one_node(op, attrs, 6)
    names = [n[2:] for n in sym.get_internals().list_outputs() if n.startswith("n_")]
    found = fused.outputs(op, attrs)
    assert found is not None and found[1] == names
    assert opinfo.outputs(op, attrs, 1) == found      # the file's count does not matter


@pytest.mark.parametrize("op,attrs", [
    ("quantized_conv", {"kernel": (3, 3), "num_filter": 4}),
    ("quantized_conv", {"kernel": (3, 3), "num_filter": 4, "no_bias": True}),
    ("quantized_fully_connected", {"num_hidden": 4}),
    ("quantized_fully_connected", {"num_hidden": 4, "no_bias": True}),
])
def test_input_slots_are_mxnets(op: str, attrs: dict[str, Any]) -> None:
    sym = getattr(mx.sym.contrib, op)(name="n", **attrs)
    want = [a[2:] for a in sym.list_arguments()]
    text_attrs = {k: str(v) for k, v in attrs.items()}
    assert fused.input_slots(f"_contrib_{op}", text_attrs) == want
    assert opinfo.input_slots(f"_contrib_{op}", text_attrs, len(want)) == want
    assert opinfo.expected_inputs(f"_contrib_{op}", text_attrs) == want


def test_concat_slots_follow_num_args() -> None:
    spec = opinfo.spec("_contrib_quantized_concat")      # MXNet's names for num_args=2
    assert spec is not None and spec.inputs is not None
    assert fused.input_slots("_contrib_quantized_concat", {"num_args": "2"}) == list(
        spec.inputs)
    three = fused.input_slots("_contrib_quantized_concat", {"num_args": "3"})
    assert three is not None and three[3:5] == ["arg0_min", "arg0_max"]
    want = [a[2:] for a in mx.sym.contrib.quantized_concat(
        *[mx.sym.var(f"v{i}") for i in range(9)], num_args=3, name="n").list_arguments()]
    assert len(want) == 9 and len(three) == 9


def test_fused_names_and_slots() -> None:
    conv = {"with_bn": "true", "with_sum": "true", "quantized": "true"}
    assert fused.outputs("_sg_mkldnn_conv", conv) == (3, ["output", "output_min",
                                                          "output_max"])
    assert fused.outputs("_sg_mkldnn_conv", {}) == (1, ["output"])
    assert fused.outputs("_sg_mkldnn_fully_connected",
                         {"quantized": "True", "enable_float_output": "True"}) == (
        1, ["output"])
    assert fused.input_slots("_sg_mkldnn_conv", conv, n_inputs=11) == [
        "data", "weight", "gamma", "beta", "mean", "var", "sum", "data_min", "data_max",
        "sum_min", "sum_max"]
    assert opinfo.input_slots("_sg_mkldnn_conv", {"with_relu": "1"}, 3) == [
        "data", "weight", "bias"]
    assert fused.input_slots("_sg_mkldnn_selfatt_valatt", {"quantized": "1"}) == [
        "queries_keys_values", "attention", "min_qkv", "max_qkv", "min_attention",
        "max_attention"]
    assert fused.outputs("Convolution", {}) is None
    assert fused.input_slots("Convolution", {}) is None


def _node(graph: dict[str, Any], op: str, without: str | None = None) -> dict[str, Any]:
    return next(n for n in graph["nodes"] if n["op"] == op
                and (without is None or without not in n["attrs"]))


def test_fused_slots_from_the_subgraph() -> None:
    graph = json.loads((GRAPHS / "conv_auto-symbol.json").read_text(encoding="utf-8"))
    conv = _node(graph, "_sg_mkldnn_conv", without="with_sum")
    fc = _node(graph, "_sg_mkldnn_fully_connected")
    op, attrs, subs = conv["op"], conv["attrs"], conv["subgraphs"]
    assert opinfo.input_slots(op, attrs, 9, subs) == [
        "data", "weight", "bias", "gamma", "beta", "mean", "var", "data_min", "data_max"]
    assert opinfo.aux_slots(op, subs) == (5, 6)
    assert opinfo.aux_slots(op) == ()                   # no fused graph: nothing known
    assert opinfo.input_roles(op, attrs, 9, subs) == [
        "data", "weight", "bias", "gamma", "beta", "moving_mean", "moving_var", "data_min",
        "data_max"]
    op, attrs, subs = fc["op"], fc["attrs"], fc["subgraphs"]
    assert opinfo.input_slots(op, attrs, 9, subs) == [
        "flat_output0", "fc_weight0", "fc_bias0", "min_data", "max_data", "min_weight",
        "max_weight", "min_bias", "max_bias"]
    assert opinfo.input_roles(op, attrs, 9, subs)[:3] == ["data", "weight", "bias"]
    assert opinfo.aux_slots(op, subs) == ()


def test_names_never_raise() -> None:
    """What opinfo asks (names, counts, slots) reads a refused value as the default;
    the rules are the ones that refuse it."""
    bad = {"quantized": "maybe", "with_bn": "x", "enable_float_output": "?"}
    assert fused.outputs("_sg_mkldnn_conv", bad) == (1, ["output"])
    assert fused.outputs("_contrib_quantized_rnn", {"state_outputs": "yes"}) == (
        1, ["output"])
    assert fused.input_slots("_sg_mkldnn_conv", bad, {"nodes": 3}, 3) == [
        "data", "weight", "bias"]
    assert opinfo.aux_slots("_sg_mkldnn_conv", [{"nodes": [], "heads": "x"}]) == ()
    assert fused.input_slots("_contrib_quantized_concat", {"num_args": "two"}) is None
    with pytest.raises(fused.FusedError) as err:
        fused.ConvFlags(bad, None)
    assert err.value.attr in ("with_bn", "quantized")


# ------------------------------------------------------------------- plug-ins
def test_plugin_names_and_counts() -> None:
    assert opinfo.outputs("MultiBoxTarget", {}) == (3, ["loc_target", "loc_mask",
                                                        "cls_target"])
    assert opinfo.outputs("MultiBoxTarget", {}, 3)[0] == 3
    assert opinfo.outputs("MultiBoxTarget", {}, 2) == (2, ["output0", "output1"])
    assert opinfo.outputs("QConvolution", {}) == (1, ["output"])
    assert opinfo.input_slots("QConvolution", {}, 2) == ["data", "weight"]
    assert opinfo.input_slots("QConvolution", {"no_bias": "False"}, 3) == [
        "data", "weight", "bias"]
    assert opinfo.input_slots("ChannelwiseConvolution", {}, 3) == ["data", "weight", "bias"]
    assert opinfo.input_slots("WarpCTC", {}, 2) == ["data", "label"]
    for name in ("MultiBoxPrior", "MultiBoxTarget", "MultiBoxDetection"):
        spec = opinfo.spec(f"_contrib_{name}")
        assert spec is not None and spec.inputs is not None
        assert fused.input_slots(name, {}) == list(spec.inputs)
        assert fused.outputs(name, {}) == (spec.total, list(spec.names or ()))


# -------------------------------------------------------------- whole graphs
@pytest.mark.parametrize("name", sorted(INDEX))
def test_document_lists_as_mxnet(name: str) -> None:
    """Internals, arguments and auxiliary states of real int8 and fused graphs."""
    path = GRAPHS / name
    doc = GraphDocument.open(str(path))
    sym = mx.sym.load_json(path.read_text(encoding="utf-8"))
    assert doc.internal_names() == sym.get_internals().list_outputs()
    assert [doc.nodes[i].name for i in doc.arguments()] == sym.list_arguments()
    assert [doc.nodes[i].name for i in doc.aux_states()] == sym.list_auxiliary_states()
    # the data are the inputs the user gives; everything else is learned
    assert [doc.nodes[i].name for i in doc.data_inputs()] == sorted(
        INDEX[name], key=sym.list_arguments().index)
    kinds = doc.kinds()
    assert all(kinds[i] == NodeKind.PARAM for i in doc.parameters())


def test_fused_batchnorm_stats_are_auxiliary() -> None:
    doc = GraphDocument.open(str(GRAPHS / "conv_auto-symbol.json"))
    aux = [doc.nodes[i].name for i in doc.aux_states()]
    assert aux == ["bn1_moving_mean", "bn1_moving_var", "bn2_moving_mean", "bn2_moving_var"]
    conv = next(i for i in doc.order() if doc.nodes[i].op == "_sg_mkldnn_conv")
    assert doc.input_slots(conv)[:3] == ["data", "weight", "bias"]
