"""The per-layer profile accounts for every operator node: a time from MXNet's profiler,
matched to the node by its name in MXNet's executor graph, or the reason it has none
-- and each kind of reason is checked against MXNet itself on a small graph."""
from __future__ import annotations

import json
import os

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.cli import main
from mxexplorer.core.analysis import profile, profile_trace
from mxexplorer.core.graph.document import GraphDocument

SHAPES = {"data": (2, 3, 8, 8)}


def _small() -> mx.sym.Symbol:
    """Convolution+BatchNorm, Flatten, Reshape, scalar ops, BlockGrad, Dropout;
    ``flat_b`` and ``twice_b`` are exact twins of ``flat_a`` and ``twice_a`` (same op,
    attributes and input); ``ones`` (ones_like) has a zero gradient, so ``lift`` reads
    nothing that needs one; ``both`` (elemwise_add) hands its gradient on unchanged;
    ``side`` is read by ``bg`` (BlockGrad) alone: no gradient comes back to it."""
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), name="conv")
    bn = mx.sym.BatchNorm(conv, name="bn")
    relu = mx.sym.Activation(bn, act_type="relu", name="relu")
    flat_a = mx.sym.Flatten(relu, name="flat_a")
    flat_b = mx.sym.Flatten(relu, name="flat_b")
    resh = mx.sym.Reshape(flat_a, shape=(0, -1), name="resh")
    twice_a = mx.sym._internal._mul_scalar(resh, scalar=2.0, name="twice_a")
    twice_b = mx.sym._internal._mul_scalar(resh, scalar=2.0, name="twice_b")
    plus = mx.sym._internal._plus_scalar(twice_a, scalar=1.0, name="plus")
    both = mx.sym.elemwise_add(plus, twice_b, name="both")
    ones = mx.sym.ones_like(resh, name="ones")
    lift = mx.sym._internal._plus_scalar(ones, scalar=1.0, name="lift")
    mix = mx.sym.elemwise_mul(both, lift, name="mix")
    drop = mx.sym.Dropout(mix, p=0.5, name="drop")
    fc = mx.sym.FullyConnected(drop, num_hidden=3, name="fc")
    side = mx.sym.SoftmaxActivation(flat_b, name="side")
    bg = mx.sym.BlockGrad(side, name="bg")
    return mx.sym.Group([fc, bg])


def _doc(tmp_path, sym: mx.sym.Symbol) -> GraphDocument:
    path = tmp_path / "small-symbol.json"
    sym.save(str(path))
    return GraphDocument.open(str(path))


def _ids(doc: GraphDocument) -> dict[str, int]:
    return {doc.nodes[i].name: i for i in range(len(doc.nodes)) if not doc.nodes[i].is_variable}


def _accounted(doc: GraphDocument, result: profile.ProfileResult) -> None:
    """Every operator node has a forward time (and a backward one in training) or a
    reason, and no reason is 'unexplained'."""
    ops = [i for i in range(len(doc.nodes)) if not doc.nodes[i].is_variable]
    assert sorted(result.operators) == ops
    for i in ops:
        assert i in result.forward_ms or i in result.reasons, doc.nodes[i].name
        if result.train:
            assert i in result.backward_ms or i in result.reasons, doc.nodes[i].name
    assert not result.unexplained(), {doc.nodes[i].name: r.text
                                      for i, r in result.reasons.items()}
    cover = result.coverage()
    assert cover["operators"] == len(ops) and cover["unexplained"] == 0
    assert cover["timed"] + sum(cover["explained"].values()) == len(ops)


@pytest.fixture(scope="module")
def small_train(tmp_path_factory):
    doc = _doc(tmp_path_factory.mktemp("train"), _small())
    return doc, profile.profile(doc.snapshot(), SHAPES, iterations=1)


@pytest.fixture(scope="module")
def small_infer(tmp_path_factory):
    doc = _doc(tmp_path_factory.mktemp("infer"), _small())
    return doc, profile.profile(doc.snapshot(), SHAPES, iterations=1, train=False)


# ------------------------------------------------------------- the trace itself
def _events(*runs: tuple[str, int, int]) -> dict:
    ev = []
    for name, start, end in runs:
        ev += [{"cat": "operator", "ph": "B", "name": name, "ts": start, "pid": 0, "tid": 1},
               {"cat": "operator", "ph": "E", "name": name, "ts": end, "pid": 0, "tid": 1}]
    return {"traceEvents": ev}


def test_back_to_back_runs_of_one_op_stay_two_runs() -> None:
    # two Flatten nodes one after the other: the second starts in the microsecond the
    # first ends (the old reader merged them as if nested, and lost a node's time)
    runs = profile_trace.operator_runs(_events(("Flatten", 721, 727), ("Flatten", 727, 731),
                                               ("_mul_scalar", 731, 731),
                                               ("_mul_scalar", 731, 734)))
    assert [name for name, _ in runs] == ["Flatten", "Flatten", "_mul_scalar", "_mul_scalar"]
    assert [ms for _, ms in runs] == pytest.approx([0.006, 0.004, 0.0, 0.003])


def test_alignment_skips_nodes_without_a_run_and_runs_of_no_node() -> None:
    ops = ["Convolution", "_grad_add", "Activation", "_backward_Activation"]
    runs = [("Convolution", 1.0), ("Activation", 2.0), ("DeleteVariable", 9.0),
            ("_backward_Activation", 3.0)] * 2
    total, seen, unplaced = profile_trace.align(runs, ops, 2)
    assert total == pytest.approx([2.0, 0.0, 4.0, 6.0]) and seen == [2, 0, 2, 2]
    assert unplaced == ["DeleteVariable", "DeleteVariable"]


def test_executor_nodes_are_read_from_mxnets_debug_text() -> None:
    text = ("Symbol Outputs:\n\toutput[0]=fc(0)\n\toutput[1]=fc_backward(1)\n"
            "Variable:data\n--------------------\nOp:FullyConnected, Name=fc\nInputs:\n"
            "\targ[0]=data(0) version=0\nAttrs:\n\tnum_hidden=3\n"
            "Variable:_head_grad_0\n--------------------\n"
            "Op:_backward_FullyConnected, Name=fc_backward\nInputs:\n"
            "\targ[0]=_head_grad_0(0) version=0\nControl deps:\n\tcdep[0]=fc\n")
    nodes = profile_trace.executor_nodes(text, forward_outputs=1)
    assert nodes == [profile_trace.ExecNode("fc", "FullyConnected", True, None),
                     profile_trace.ExecNode("fc_backward", "_backward_FullyConnected",
                                            False, "fc")]


# ------------------------------------------------------------------ training
def test_training_times_every_node_mxnet_runs_and_says_why_for_the_rest(small_train) -> None:
    doc, result = small_train
    _accounted(doc, result)
    ids = _ids(doc)
    for name in ("conv", "bn", "relu", "flat_a", "resh", "twice_a", "plus", "both", "ones",
                 "lift", "mix", "drop", "fc", "side", "bg"):
        assert result.forward_ms[ids[name]] >= 0, name
    for name in ("conv", "bn", "relu", "flat_a", "resh", "twice_a", "plus", "mix", "drop",
                 "fc"):
        assert ids[name] in result.backward_ms, name
    # the twins: MXNet computes each once, under the first one's name
    for twin, kept in (("flat_b", "flat_a"), ("twice_b", "twice_a")):
        reason = result.reasons[ids[twin]]
        assert reason.kind == "merged" and f"'{kept}'" in reason.text
        assert ids[twin] not in result.forward_ms
    # forward only, each for its own reason
    words = {n: result.reasons[ids[n]] for n in ("both", "ones", "lift", "side", "bg")}
    assert all(r.kind == "no backward" for r in words.values())
    assert "unchanged" in words["both"].text and "elemwise_add" in words["both"].text
    assert "zero" in words["ones"].text and "ones_like" in words["ones"].text
    assert "nothing it reads needs a gradient" in words["lift"].text
    assert "'ones'" in words["lift"].text
    assert "no gradient comes back to it ('bg' passes none back)" in words["side"].text
    assert "BlockGrad is zero" in words["bg"].text
    # MXNet's own nodes (head gradients, gradient sums) are told apart, not put on a node
    assert {"_identity_with_attr_like_rhs", "add_n"} <= set(result.other_ms)
    assert not result.unplaced
    assert result.node_ms(ids["conv"]) == pytest.approx(
        result.forward_ms[ids["conv"]] + result.backward_ms[ids["conv"]])


def test_the_reasons_are_what_mxnet_does(small_train) -> None:
    sym = _small()
    ran = sym.simple_bind(mx.cpu(), grad_req="write", **SHAPES).debug_str()
    # merged: the twin is not in MXNet's executor graph, its original is ...
    assert "Name=flat_b\n" not in ran and "Name=flat_a\n" in ran
    assert "Name=twice_b\n" not in ran and "Name=twice_a\n" in ran
    # ... because of MXNet's common-subexpression elimination: without it both run
    os.environ["MXNET_ELIMINATE_COMMON_EXPR"] = "0"
    try:
        apart = sym.simple_bind(mx.cpu(), grad_req="write", **SHAPES).debug_str()
    finally:
        del os.environ["MXNET_ELIMINATE_COMMON_EXPR"]
    assert "Name=flat_b\n" in apart and "Name=twice_b\n" in apart
    # no backward: no gradient node of MXNet's is tied to these, while their
    # neighbours have theirs
    for name in ("both", "ones", "lift", "side", "bg"):
        assert f"cdep[0]={name}\n" not in ran
    for name in ("plus", "mix", "resh", "flat_a"):
        assert f"cdep[0]={name}\n" in ran


def _zero_or_pass(op: str, t: mx.sym.Symbol) -> mx.sym.Symbol:
    if op.endswith("_scalar"):
        return getattr(mx.sym._internal, op)(t, scalar=0.0, name="z")
    if op.startswith(("_equal", "_not", "_greater", "_lesser", "broadcast_",
                      "elemwise", "add_n")):
        fn = getattr(mx.sym._internal, op, None) or getattr(mx.sym, op)
        return fn(t, t, name="z")
    if op.startswith("arg") and op != "argsort" and op != "argmax_channel":
        return getattr(mx.sym, op)(t, axis=1, keepdims=True, name="z")
    if op.startswith("_contrib_"):
        return getattr(mx.sym.contrib, op[len("_contrib_"):])(t, name="z")
    return getattr(mx.sym, op)(t, name="z")


@pytest.mark.parametrize("op", sorted(profile.ZERO_GRADIENT | profile.PASS_THROUGH))
def test_the_ops_said_to_have_no_backward_node_have_none_in_mxnet(op) -> None:
    x = mx.sym.var("x")
    t = mx.sym.Activation(x, act_type="tanh", name="t")
    z = _zero_or_pass(op, t)
    assert json.loads(z.tojson())["nodes"][-1]["op"] == op
    # zero gradients: beside another gradient of t, the zeros are left out of the sum
    # pass-through: t's gradient comes through z alone, with no node of z's
    joined = mx.sym.broadcast_add(mx.sym.reshape(z, shape=(2, -1)), t) \
        if op in profile.ZERO_GRADIENT else z
    out = mx.sym.FullyConnected(joined, num_hidden=2, name="fc")
    ran = out.simple_bind(mx.cpu(), grad_req="write", x=(2, 4)).debug_str()
    assert "cdep[0]=z\n" not in ran and "cdep[0]=t\n" in ran


def test_a_mirrored_node_is_timed_again_where_backward_recomputes_it(tmp_path) -> None:
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), name="conv")
    relu = mx.sym.Activation(conv, act_type="relu", name="relu")
    relu._set_attr(force_mirroring="True")
    sym = mx.sym.FullyConnected(relu, num_hidden=3, name="fc")
    assert "Name=relu_mirror\n" in sym.simple_bind(mx.cpu(), **SHAPES).debug_str()
    doc = _doc(tmp_path, sym)
    result = profile.profile(doc.snapshot(), SHAPES, iterations=1)
    _accounted(doc, result)
    relu_id = _ids(doc)["relu"]
    assert set(result.recompute_ms) == {relu_id}
    assert result.node_ms(relu_id) == pytest.approx(
        result.forward_ms[relu_id] + result.backward_ms[relu_id] + result.recompute_ms[relu_id])
    rows = {row["node"]: row for row in result.to_dict({relu_id: "relu"})["nodes"]}
    assert rows[relu_id]["recompute_ms"] == result.recompute_ms[relu_id]


# ------------------------------------------------------------------ inference
def test_inference_names_the_fused_node_and_what_onednn_removed(small_infer) -> None:
    doc, result = small_infer
    _accounted(doc, result)
    ids = _ids(doc)
    assert not result.backward_ms and not result.train
    conv_bn = [result.reasons[ids[n]] for n in ("bn", "relu")]
    assert all(r.kind == "fused" and "'sg_mkldnn_conv_bn_act_0'" in r.text for r in conv_bn)
    assert all("'conv'" in r.text for r in conv_bn)          # where their time went
    assert ids["conv"] in result.forward_ms and "'bn'" in result.notes[ids["conv"]]
    assert ids["fc"] in result.forward_ms                   # fused alone: still its own
    assert result.reasons[ids["drop"]].kind == "removed"
    assert result.reasons[ids["flat_b"]].kind == "merged"
    # what MXNet itself made of the graph for inference
    sym = mx.sym.load_json(doc.to_json())
    opt = json.loads(sym.simple_bind(mx.cpu(), grad_req="null", **SHAPES)
                     .get_optimized_symbol().tojson())
    fused = {n["name"]: [m["name"] for s in n.get("subgraphs", []) for m in s["nodes"]]
             for n in opt["nodes"]}
    assert {"conv", "bn", "relu"} <= set(fused["sg_mkldnn_conv_bn_act_0"])
    assert not any("drop" in members or name == "drop" for name, members in fused.items())


def _shared_fc() -> tuple[mx.sym.Symbol, dict]:
    x = mx.sym.var("x")
    fc = mx.sym.FullyConnected(x, num_hidden=3, name="fc")
    twice = mx.sym._internal._mul_scalar(fc, scalar=2.0, name="twice")
    return mx.sym.elemwise_add(twice, mx.sym.exp(fc, name="e"), name="out"), {"x": (2, 4)}


def _shared_conv() -> tuple[mx.sym.Symbol, dict]:
    # a residual unit as LFFD's face detector has it: conv2 read by a relu and an add
    data = mx.sym.var("data")
    conv2 = mx.sym.Convolution(data, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv2")
    relu = mx.sym.Activation(conv2, act_type="relu", name="e")
    conv3 = mx.sym.Convolution(relu, num_filter=4, kernel=(3, 3), pad=(1, 1), name="conv3")
    return mx.sym.elemwise_add(conv2, conv3, name="out"), {"data": (1, 4, 6, 6)}


@pytest.mark.parametrize("make", [_shared_fc, _shared_conv])
def test_an_op_onednn_drops_after_a_shared_node_is_named(make, tmp_path) -> None:
    sym, shapes = make()
    doc = _doc(tmp_path, sym)
    result = profile.profile(doc.snapshot(), shapes, iterations=1, train=False)
    _accounted(doc, result)
    reason = result.reasons[_ids(doc)["e"]]
    assert reason.kind == "dropped" and "wrong" in reason.text
    assert ("'fc'" if "x" in shapes else "'conv2'") in reason.text
    # MXNet's own inference leaves 'e' out, and computes another result than without
    # oneDNN's fusion
    outputs = {}
    for backend in ("MKLDNN", "NONE"):
        os.environ["MXNET_SUBGRAPH_BACKEND"] = backend
        try:
            exe = sym.simple_bind(mx.cpu(), grad_req="null", **shapes)
        finally:
            del os.environ["MXNET_SUBGRAPH_BACKEND"]
        for arr in exe.arg_dict.values():
            arr[:] = mx.nd.arange(arr.size).reshape(arr.shape) / arr.size - 0.5
        outputs[backend] = exe.forward()[0].asnumpy()
        names = [n["name"] for n in json.loads(exe.get_optimized_symbol().tojson())["nodes"]]
        assert ("e" in names) == (backend == "NONE")
    assert not np.allclose(outputs["MKLDNN"], outputs["NONE"], rtol=1e-3)
    if "x" in shapes:          # out = 2 * fc + exp(fc); with the defect, 3 * fc
        args = {k: v.asnumpy() for k, v in exe.arg_dict.items()}
        fc_out = args["x"] @ args["fc_weight"].T + args["fc_bias"]
        assert np.allclose(outputs["NONE"], 2 * fc_out + np.exp(fc_out), rtol=1e-5)
        assert np.allclose(outputs["MKLDNN"], 3 * fc_out, rtol=1e-5)


# ------------------------------------------------------------------ gluon, CLI
def test_a_gluon_export_is_fully_accounted_for(tmp_path) -> None:
    from mxnet.gluon import nn

    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Conv2D(4, 3), nn.BatchNorm(), nn.Activation("relu"), nn.Flatten(),
                nn.Dropout(0.2), nn.Dense(3))
    net.initialize()
    net.hybridize()
    net(mx.nd.ones(SHAPES["data"]))
    net.export(str(tmp_path / "net"))
    doc = GraphDocument.open(str(tmp_path / "net-symbol.json"))
    for train in (True, False):
        result = profile.profile(doc.snapshot(), SHAPES, iterations=1, train=train)
        _accounted(doc, result)
    assert {r.kind for r in result.reasons.values()} == {"fused", "removed"}


def test_cli_json_has_every_operator_with_a_time_or_a_reason(tmp_path, capsys) -> None:
    doc = _doc(tmp_path, _small())
    assert doc.path is not None
    assert main(["profile", doc.path, "--shape", "data=2,3,8,8", "--iterations", "1",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    ops = [n.name for n in doc.nodes if not n.is_variable]
    assert sorted(n["name"] for n in out["nodes"]) == sorted(ops)
    for row in out["nodes"]:
        assert row["forward_ms"] is not None or row["reason"], row
        assert row["backward_ms"] is not None or row["reason"], row
    assert out["coverage"]["unexplained"] == 0 and out["coverage"]["explained"]["merged"] == 2
    assert main(["profile", doc.path, "--shape", "data=2,3,8,8", "--iterations", "1",
                 "--inference"]) == 0
    text = capsys.readouterr().out
    assert "fused into 'sg_mkldnn_conv_bn_act_0'" in text and "0 unexplained" in text


def test_a_language_model_is_profiled_for_training(tmp_path) -> None:
    """The profile bound every argument with a gradient, and MXNet refuses one for an
    Embedding's data ("Embedding layer doesn't support calculate data gradient"): BERT
    and lstm_ptb could not be profiled for training.  Inputs get no gradient."""
    data = mx.sym.var("data")
    embed = mx.sym.Embedding(data, input_dim=50, output_dim=8, name="embed")
    net = mx.sym.FullyConnected(embed, num_hidden=50, flatten=False, name="scores")
    doc = _doc(tmp_path, net)
    result = profile.profile(doc.snapshot(), {"data": (2, 5)}, iterations=1)
    _accounted(doc, result)
    assert _ids(doc)["embed"] in result.forward_ms
