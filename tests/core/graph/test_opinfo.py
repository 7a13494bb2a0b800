"""The op table and its attribute rules agree with MXNet 1.9.1 itself."""
from __future__ import annotations

import json

import mxnet as mx
import pytest

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.document import GraphDocument


def _v(name: str) -> mx.sym.Symbol:
    return mx.sym.var(name)


def _loaded(op: str, data: mx.sym.Symbol, more: list[str], **attrs: str) -> mx.sym.Symbol:
    """``op`` over ``data`` and variables named ``more``, as MXNet loads it from a file
    (the optimizer updates cannot be composed from Python)."""
    names = [data.name] + more
    nodes = [{"op": "null", "name": n, "inputs": []} for n in names]
    nodes.append({"op": op, "name": "u", "attrs": attrs,
                  "inputs": [[i, 0, 0] for i in range(len(names))]})
    return mx.sym.load_json(json.dumps({"nodes": nodes, "arg_nodes": list(range(len(names))),
                                        "heads": [[len(names), 0, 0]],
                                        "attrs": {"mxnet_version": ["int", 10901]}}))


CASES = {
    "batchnorm": lambda d: mx.sym.BatchNorm(d, name="bn"),
    "batchnorm_mean_var": lambda d: mx.sym.BatchNorm(d, output_mean_var=True, name="bn"),
    "layernorm_mean_var": lambda d: mx.sym.LayerNorm(d, output_mean_var=True, name="ln"),
    "groupnorm": lambda d: mx.sym.GroupNorm(d, name="gn"),
    "instancenorm": lambda d: mx.sym.InstanceNorm(d, name="inn"),
    "pooling": lambda d: mx.sym.Pooling(d, kernel=(2, 2), name="p"),
    "dropout": lambda d: mx.sym.Dropout(d, name="dr"),
    "lrn": lambda d: mx.sym.LRN(d, nsize=3, name="lrn"),
    "rnn_plain": lambda d: mx.sym.RNN(d, _v("p"), _v("s"), state_size=4, num_layers=1,
                                      mode="gru", name="rnn"),
    "rnn_gru_state": lambda d: mx.sym.RNN(d, _v("p"), _v("s"), state_size=4, num_layers=1,
                                          mode="gru", state_outputs=True, name="rnn"),
    "rnn_lstm_state": lambda d: mx.sym.RNN(d, _v("p"), _v("s"), _v("c"), state_size=4,
                                           num_layers=1, mode="lstm", state_outputs=True,
                                           name="rnn"),
    "topk_both": lambda d: mx.sym.topk(d, ret_typ="both", name="tk"),
    "topk_value": lambda d: mx.sym.topk(d, ret_typ="value", name="tk"),
    "topk": lambda d: mx.sym.topk(d, name="tk"),
    "split3": lambda d: mx.sym.split(d, num_outputs=3, name="sp"),
    "split1": lambda d: mx.sym.split(d, num_outputs=1, name="sp"),
    "split_v2": lambda d: mx.sym._internal._split_v2(d, indices=(), sections=3, name="s2"),
    "multibox_target": lambda d: mx.sym.contrib.MultiBoxTarget(_v("a"), _v("l"), d, name="mbt"),
    "box_nms": lambda d: mx.sym.contrib.box_nms(d, name="nms"),
    "moments": lambda d: mx.sym.moments(d, axes=(0,), name="mo"),
    "rrelu": lambda d: mx.sym.LeakyReLU(d, act_type="rrelu", name="lr"),
    "prelu": lambda d: mx.sym.LeakyReLU(d, act_type="prelu", name="lr"),
    "ctc": lambda d: mx.sym.CTCLoss(d, _v("label"), name="ctc"),
    "grid_generator": lambda d: mx.sym.GridGenerator(d, transform_type="affine",
                                                     target_shape=(2, 2), name="gg"),
    "proposal_score": lambda d: mx.sym.contrib.Proposal(_v("c"), _v("b"), d, output_score=True,
                                                        name="prop"),
    "proposal": lambda d: mx.sym.contrib.Proposal(_v("c"), _v("b"), d, name="prop"),
    "sync_bn": lambda d: mx.sym.contrib.SyncBatchNorm(d, key="k", name="sbn"),
    "slogdet": lambda d: mx.sym.linalg.slogdet(d, name="sd"),
    "quantize_v2": lambda d: mx.sym.contrib.quantize_v2(d, name="q"),
    "amp_multicast": lambda d: mx.sym.amp_multicast(d, _v("e"), num_outputs=2, name="amc"),
    "unnamed_batchnorm": lambda d: mx.sym.BatchNorm(d),
    "kl_sparse": lambda d: mx.sym.IdentityAttachKLSparseReg(d, name="kl"),
    "conv_no_bias": lambda d: mx.sym.Convolution(d, kernel=(3, 3), num_filter=2, no_bias=True,
                                                 name="c"),
    "deconv": lambda d: mx.sym.Deconvolution(d, kernel=(3, 3), num_filter=2, name="dc"),
    "deconv_bias": lambda d: mx.sym.Deconvolution(d, kernel=(3, 3), num_filter=2,
                                                  no_bias=False, name="dc"),
    # max pooling keeps a workspace output only where MKL-DNN pools: a kernel of 1-3
    # dimensions and a channels-first layout (a global pool given no kernel has none)
    "bn_relu": lambda d: mx.sym.contrib.BatchNormWithReLU(d, name="b"),
    "bn_relu_mean_var": lambda d: mx.sym.contrib.BatchNormWithReLU(d, output_mean_var=True,
                                                                   name="b"),
    "psroi_pooling": lambda d: mx.sym.contrib.PSROIPooling(d, _v("r"), spatial_scale=1,
                                                           output_dim=2, pooled_size=2,
                                                           name="p"),
    "rroi_align": lambda d: mx.sym.contrib.RROIAlign(d, _v("r"), pooled_size=(2, 2),
                                                     spatial_scale=1, name="p"),
    "multinomial": lambda d: mx.sym.sample_multinomial(d, name="m"),
    "multinomial_prob": lambda d: mx.sym.sample_multinomial(d, get_prob=True, name="m"),
    "unique_zipfian": lambda d: mx.sym.Group([d, mx.sym._internal._sample_unique_zipfian(
        range_max=10, shape=(2, 3), name="z")]),
    "multi_sgd": lambda d: mx.sym.multi_sgd_update(d, _v("g0"), _v("w1"), _v("g1"),
                                                   num_weights=2, lrs=(1, 1), wds=(1, 1),
                                                   name="s"),
    "multi_sgd_one": lambda d: mx.sym.multi_sgd_update(d, _v("g0"), num_weights=1, lrs=(1,),
                                                       wds=(1,), name="s"),
    # the optimizers' states are mutated inputs: auxiliary states to MXNet
    "adam": lambda d: _loaded("adam_update", d, ["g", "m", "v"], lr="0.1"),
    "sgd_mom": lambda d: _loaded("sgd_mom_update", d, ["g", "m"], lr="0.1"),
    "mp_lamb2": lambda d: _loaded("mp_lamb_update_phase2", d, ["g", "r1", "r2", "w32"],
                                  lr="0.1"),
    "dgl_subgraph": lambda d: mx.sym.contrib.dgl_subgraph(d, _v("a"), _v("b"), num_args=3,
                                                          return_mapping=True, name="g"),
    "dgl_compact": lambda d: mx.sym.contrib.dgl_graph_compact(
        d, _v("a"), _v("g2"), _v("a2"), num_args=4, return_mapping=False,
        graph_sizes=(1, 1), name="c"),
    "dgl_uniform": lambda d: mx.sym.contrib.dgl_csr_neighbor_uniform_sample(
        d, _v("a"), _v("b"), num_args=3, name="u"),
    "dgl_non_uniform": lambda d: mx.sym.contrib.dgl_csr_neighbor_non_uniform_sample(
        d, _v("p"), _v("a"), _v("b"), num_args=4, name="n"),
    "randint": lambda d: mx.sym.Group([d, mx.sym.random.randint(0, 5, shape=(2,), name="r")]),
    "global_max_pool": lambda d: mx.sym.Pooling(d, pool_type="max", global_pool=True,
                                                name="p"),
    "nhwc_max_pool": lambda d: mx.sym.Pooling(d, pool_type="max", kernel=(2, 2),
                                              layout="NHWC", name="p"),
    "max_pool_3d": lambda d: mx.sym.Pooling(d, pool_type="max", kernel=(2, 2, 2), name="p"),
    "global_max_pool_kernel": lambda d: mx.sym.Pooling(d, pool_type="max", kernel=(2, 2),
                                                       global_pool=True, name="p"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_internals_arguments_and_aux_match_mxnet(case: str) -> None:
    sym = CASES[case](mx.sym.var("data"))
    doc = GraphDocument.from_json(sym.tojson())
    assert doc.internal_names() == sym.get_internals().list_outputs()
    assert [doc.nodes[i].name for i in doc.arguments()] == sym.list_arguments()
    assert [doc.nodes[i].name for i in doc.aux_states()] == sym.list_auxiliary_states()
    assert [e.name for e in doc.output_entries()] == sym.list_outputs()
    # output counts agree with node_row_ptr, so index validation is exact
    rows = json.loads(sym.tojson())["node_row_ptr"]
    for i in range(len(doc.nodes)):
        assert doc.output_count(i) == rows[i + 1] - rows[i], doc.nodes[i].op


@pytest.mark.parametrize("case", sorted(CASES))
def test_output_counts_without_the_files_row_pointers_match_mxnet(case: str) -> None:
    """What the op table and its rules say alone (a file without node_row_ptr, and the
    engine, which fills every output, hidden ones too)."""
    sym = CASES[case](mx.sym.var("data"))
    graph = json.loads(sym.tojson())
    rows = graph["node_row_ptr"]
    for i, node in enumerate(graph["nodes"]):
        if node["op"] != "null":
            attrs = opinfo.node_attrs(node)
            assert opinfo.outputs(node["op"], attrs)[0] == rows[i + 1] - rows[i], node


def test_aliases_resolve_to_the_name_mxnet_writes() -> None:
    assert opinfo.canonical_op("_Plus") == "elemwise_add"
    assert opinfo.canonical_op("_mul") == "elemwise_mul"
    assert opinfo.canonical_op("flatten") == "Flatten"
    assert opinfo.canonical_op("split") == "SliceChannel"
    assert opinfo.is_registered("Convolution")
    assert not opinfo.is_registered("ChannelwiseConvolution")


def test_attribute_parsing_accepts_python2_literals() -> None:
    assert opinfo.tuple_attr({"k": "(3L, 3L)"}, "k") == (3, 3)
    assert opinfo.tuple_attr({"k": "[1, 2]"}, "k") == (1, 2)
    assert opinfo.int_attr({"n": "8L"}, "n") == 8
    assert opinfo.flag({"b": "true"}, "b") and opinfo.flag({"b": "1"}, "b")
    assert not opinfo.flag({"b": "False"}, "b")


def test_average_pooling_has_one_output_and_max_pooling_two() -> None:
    for pool_type in ("avg", "max", "sum", "lp"):
        sym = mx.sym.Pooling(mx.sym.var("data"), kernel=(2, 2), pool_type=pool_type, name="p")
        doc = GraphDocument.from_json(sym.tojson())
        assert doc.to_dict()["node_row_ptr"] == json.loads(sym.tojson())["node_row_ptr"]
