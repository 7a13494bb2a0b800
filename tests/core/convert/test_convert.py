"""ONNX export checked against MXNet (zoo and real corpus files, trained-looking
weights), the pre-flight list, and the model/checkpoint diff."""
from __future__ import annotations

import json
import shutil

import mxnet as mx
import numpy as np
import pytest

from mxexplorer.cli import main
from mxexplorer.core.analysis import diff
from mxexplorer.core.convert import onnx_export
from mxexplorer.core.graph import edits
from mxexplorer.core.graph.document import GraphDocument
from tests.conftest import CORPUS, EXAMPLES, mlp_epoch
from tests.core.convert.exporting import export_checked


def _trained_looking(path) -> None:
    """Gammas, betas and moving statistics away from 1 and 0, in the checkpoint itself
    (so a converter that drops fix_gamma or the statistics gives other numbers)."""
    saved = mx.nd.load(str(path))
    rng = np.random.default_rng(3)
    for key, value in saved.items():
        if key.endswith(("gamma", "running_var", "moving_var")):
            saved[key] = mx.nd.array(rng.uniform(0.5, 1.5, value.shape))
        elif key.endswith(("beta", "running_mean", "moving_mean")):
            saved[key] = mx.nd.array(rng.uniform(-0.2, 0.2, value.shape))
    mx.nd.save(str(path), saved)


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenetv2_1.0", "squeezenet1.1",
                                  "densenet121", "inceptionv3"])
def test_zoo_exports_and_agrees_with_mxnet(zoo, tmp_path, name) -> None:
    size = 299 if name.startswith("inception") else 224
    symbol = zoo(name, size)
    params = symbol.parent / symbol.name.replace("-symbol.json", "-0000.params")
    for path in (symbol, params):
        shutil.copy(path, tmp_path / path.name)
    _trained_looking(tmp_path / params.name)
    doc = GraphDocument.open(str(tmp_path / symbol.name))
    assert doc.params_path
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": (2, 3, size, size)},
                                         str(tmp_path / "out.onnx"), check=True)
    assert report.check is not None and report.check.agree, report.lines()
    assert report.check.outputs[0].top1 == 1.0
    assert "weights of" in report.weights and report.check.verdict().startswith(
        "outputs agree within 0.0001")


CORPUS_CASES = [
    ("1996scarlet__ArcFace-Multiplex-Recognition__model__arcface-symbol.json",
     (1, 3, 112, 112), {"PRelu", "flatten", "fix_gamma"}),         # face recognition
    ("ZHUXUHAN__mxnet_backbone__FaceFeature80M.json", (1, 3, 112, 112),
     {"flatten", "fix_gamma"}),                                      # face recognition
    ("bogireddytejareddy__retinaface-pytorch__mnet.25-symbol.json", (1, 3, 320, 320),
     set()),                                                         # face detection
    ("jessebrizzi__MXNet-Bug__resnet-152-symbol.json", (1, 3, 96, 96),
     {"flatten", "fix_gamma"}),                       # legacy MXNet (global pooling)
    ("fqararyah__tvm-cuda-int8-benchmark__resnet18_v1-symbol.json", (1, 3, 224, 224),
     set()),                                                         # a Gluon export
]


@pytest.mark.corpus
@pytest.mark.parametrize("via", onnx_export.VIAS)
@pytest.mark.parametrize("case", CORPUS_CASES, ids=[c[0][:40] for c in CORPUS_CASES])
def test_corpus_files_export_with_the_faults_fixed_and_agree(case, via, tmp_path) -> None:
    """Both routes agree with MXNet; mx2onnx's faults are fixed and said, ours says
    what it changes (fix_gamma's gammas of one)."""
    name, shape, faults = case
    doc = GraphDocument.open(str(CORPUS / name))
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": shape},
                                         str(tmp_path / "out.onnx"), check=True, via=via)
    assert report.check is not None and report.check.agree, report.lines()
    assert report.via == via
    said = " ".join(report.fixes)
    for fault in faults if via == "mx2onnx" else faults & {"fix_gamma"}:
        assert fault in said, (fault, report.fixes)
    assert "random trained-looking weights" in report.weights


@pytest.mark.corpus
def test_without_the_fix_gamma_fix_the_outputs_differ(tmp_path) -> None:
    """The fault the issue names, shown on InsightFace's ArcFace (its embedding ends in
    a fix_gamma BatchNorm): exported as MXNet's converter does (the stored gamma), the
    embedding is wrong without any error."""
    doc = GraphDocument.open(str(CORPUS / CORPUS_CASES[0][0]))
    nodes = doc.operators()
    broken = onnx_export.export(doc.to_json(), {"data": (1, 3, 112, 112)},
                                str(tmp_path / "b.onnx"), nodes, check=True,
                                fix_gamma=False)
    assert broken.check is not None and not broken.check.agree
    # the first node that differs is named: the fix_gamma BatchNorm, its inputs agreeing
    assert "differs by" in broken.check.verdict()
    assert "; first difference at 'fc1' (BatchNorm): max abs" in broken.check.verdict()
    assert "its inputs agree; fed MXNet's own inputs it still differs" in \
        broken.check.verdict()
    assert broken.to_dict()["check"]["first_difference"]["name"] == "fc1"


@pytest.mark.corpus
def test_an_unsupported_op_gets_the_preflight_list_not_a_traceback(tmp_path, capsys) -> None:
    """A random op has no ONNX meaning to check against: refused before anything is
    written, named by node and op."""
    data = mx.sym.var("data")
    noise = mx.sym.sample_normal(mx.sym.relu(data, name="act"), mx.sym.ones_like(data),
                                 name="noise")
    path = tmp_path / "noisy-symbol.json"
    (noise + data).save(str(path))
    doc = GraphDocument.open(str(path))
    with pytest.raises(onnx_export.UnsupportedOps) as caught:
        onnx_export.export_snapshot(doc.snapshot(), {"data": (2, 3)},
                                    str(tmp_path / "x.onnx"))
    assert [(name, op) for _, name, op in caught.value.nodes] == \
        [("noise", "_sample_normal")]
    assert caught.value.nodes[0][0] == doc.find("noise")[0]
    assert "no ONNX converter" in str(caught.value)          # ours (the default)
    assert not (tmp_path / "x.onnx").exists()
    rc = main(["onnx", str(path), "--shape", "data=2,3", "-o", str(tmp_path / "x.onnx"),
               "--json"])
    captured = capsys.readouterr()
    assert rc == 2 and json.loads(captured.out)["unsupported"][0]["op"] == "_sample_normal"
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "_sample_normal" in err[0] and "Traceback" not in err[0]


def test_cli_onnx_check_says_one_verdict(tmp_path, capsys) -> None:
    out = tmp_path / "r18.onnx"
    x = np.random.default_rng(0).uniform(0, 1, (1, 3, 64, 64)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    rc = main(["onnx", str(EXAMPLES / "resnet18_v1-symbol.json"), "--shape",
               "data=1,3,64,64", "-o", str(out), "--check", "--input",
               str(tmp_path / "x.npy"), "--opset", "12", "--via", "mx2onnx"])
    text = capsys.readouterr().out
    assert rc == 0 and out.exists()
    assert "opset 12" in text and "outputs agree within 0.0001" in text
    assert "inputs from x.npy" in text
    np.save(tmp_path / "bad.npy", x[:, :, :32])
    assert main(["onnx", str(EXAMPLES / "resnet18_v1-symbol.json"), "--shape",
                 "data=1,3,64,64", "-o", str(out), "--check", "--input",
                 str(tmp_path / "bad.npy")]) == 2
    assert "holds shape (1, 3, 32, 64)" in capsys.readouterr().err


# ------------------------------------------------------------------- diff
R18 = str(EXAMPLES / "resnet18_v1-symbol.json")


def test_a_file_against_itself_has_no_difference() -> None:
    a, b = GraphDocument.open(R18), GraphDocument.open(R18)
    result = diff.compare(a, b)
    assert result.same and result.summary() == "no difference"
    assert len(result.pairs) == len(a.nodes) and result.by_structure == 0


def test_a_prefixed_copy_matches_every_node_by_structure() -> None:
    a, b = GraphDocument.open(R18), GraphDocument.open(R18)
    edits.PrefixAllEdit("sha-").apply(b)
    result = diff.compare(a, b)
    assert result.by_structure == len(a.nodes) == len(result.renamed)
    assert all(b.nodes[j].name == "sha-" + a.nodes[i].name for i, j in result.pairs.items())
    assert not (result.added or result.removed or result.changed)


def test_an_edited_copy_shows_the_one_attribute_changed() -> None:
    a, b = GraphDocument.open(R18), GraphDocument.open(R18)
    relu = b.find("resnetv10_stage3_relu0_fwd")[0]
    edits.set_attr((relu,), "act_type", "tanh").apply(b)
    result = diff.compare(a, b)
    assert len(result.changed) == 1 and not result.renamed
    change = result.changed[0]
    assert b.nodes[change.b].name == "resnetv10_stage3_relu0_fwd"
    assert change.attrs == {"act_type": ("relu", "tanh")}


def test_a_node_inserted_upstream_is_added_and_the_rest_still_match() -> None:
    x = mx.sym.var("data")
    a = GraphDocument.from_json(mx.sym.FullyConnected(
        mx.sym.Activation(x, act_type="relu", name="r"), num_hidden=4, name="fc").tojson())
    b = GraphDocument.from_json(mx.sym.FullyConnected(mx.sym.Activation(
        mx.sym.Dropout(x, name="drop"), act_type="relu", name="r2"), num_hidden=4,
        name="fc").tojson())
    result = diff.compare(a, b)
    assert [b.nodes[j].name for j in result.added] == ["drop"]
    assert [(a.nodes[i].name, b.nodes[j].name) for i, j in result.renamed] == [("r", "r2")]


def test_two_checkpoints_of_the_same_graph_differ_in_numbers(mlp_copy, tmp_path,
                                                            capsys) -> None:
    def change(saved) -> None:
        saved["arg:fc1_weight"] = saved["arg:fc1_weight"] + 0.25
        saved["arg:fc2_bias"] = mx.nd.zeros((7,))

    other = mlp_epoch(mlp_copy, tmp_path / "other", change)
    a, b = GraphDocument.open(str(mlp_copy)), GraphDocument.open(str(other))
    result = diff.compare(a, b)
    assert not result.changed
    diff.compare_params(result, a, b, a.params_path, b.params_path)
    by_name = {t.name: t for t in result.tensors}
    assert by_name["fc1_weight"].max_abs == pytest.approx(0.25, rel=1e-6)
    assert by_name["fc2_bias"].max_abs is None              # a shape change
    assert all(t.max_abs == 0 for n, t in by_name.items()
               if n not in ("fc1_weight", "fc2_bias"))
    assert not result.same
    rc = main(["diff", str(mlp_copy), str(other), "--params", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1 and {t["name"] for t in out["tensors"] if t["max_abs"] != 0} == \
        {"fc1_weight", "fc2_bias"}
    assert main(["diff", str(mlp_copy), str(mlp_copy), "--params"]) == 0
    assert capsys.readouterr().out.startswith("no difference")


def test_the_onnx_mapping_stand_in_matches_what_onnx_1_19_removed(monkeypatch) -> None:
    import warnings

    import onnx

    real = onnx.mapping
    monkeypatch.delattr(onnx, "mapping")
    got = onnx_export.load_onnx().mapping
    for dtype in ("float32", "float16", "int64", "int8", "bool", "float64"):
        with warnings.catch_warnings():           # onnx 1.14 deprecates its own table
            warnings.simplefilter("ignore", DeprecationWarning)
            code = real.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
        assert got.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)] == code
        assert got.TENSOR_TYPE_TO_NP_TYPE[code] == np.dtype(dtype)


# ----------------------------------------------- training heads (issue 26, fault 1)
def test_the_bundled_mlp_with_its_softmax_label_exports_and_agrees(tmp_path, capsys) -> None:
    """The Module API's SoftmaxOutput keeps its label input in the saved graph; MXNet's
    converter skipped it and then looked it up by position (IndexError, the bundled
    MLP among the files that failed)."""
    out = tmp_path / "mlp.onnx"
    rc = main(["onnx", str(EXAMPLES / "mlp-symbol.json"), "--shape", "data=4,784", "-o",
               str(out), "--check"])
    text = capsys.readouterr().out
    assert rc == 0 and out.exists(), text
    assert ("SoftmaxOutput 'softmax' exported as softmax over the last axis (its "
            "inference meaning); its label input 'softmax_label' dropped") in text
    assert "outputs agree within 0.0001" in text


@pytest.mark.parametrize("flags, shape, meaning", [
    ({}, (2, 7), "softmax"),                               # a classifier: 2-D
    ({"multi_output": True}, (2, 5, 3, 4), "softmax over axis 1"),   # segmentation
    ({"preserve_shape": True}, (2, 3, 6), "softmax"),      # the last axis
    ({}, (2, 3, 6), "softmax over every axis but the batch"),
])
def test_softmax_heads_become_their_inference_meaning(tmp_path, flags, shape,
                                                      meaning) -> None:
    data = mx.sym.var("data")
    net = mx.sym.SoftmaxOutput(mx.sym.relu(data, name="act"), name="prob", **flags)
    doc = GraphDocument.from_json(net.tojson())
    assert "prob_label" in net.list_arguments()
    report = onnx_export.export(net.tojson(), {"data": shape}, str(tmp_path / "s.onnx"),
                                doc.operators())
    assert [f for f in report.fixes if f"SoftmaxOutput 'prob' exported as {meaning} (" in f]
    # MXNet's own forward of the original head against the exported model
    ort = pytest.importorskip("onnxruntime")
    x = np.random.default_rng(1).uniform(-2, 2, shape).astype("float32")
    exe = net.simple_bind(mx.cpu(), grad_req="null", data=shape)
    exe.arg_dict["data"][:] = x
    want = exe.forward(is_train=False)[0].asnumpy()
    got = ort.InferenceSession(str(tmp_path / "s.onnx"),
                               providers=["CPUExecutionProvider"]).run(None, {"data": x})[0]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(2, 16), (2, 16, 5, 5)])
def test_prelu_slopes_broadcast_as_mxnet_does_at_any_rank(tmp_path, shape) -> None:
    """Issue 26, fault 2: every slope was reshaped to (C, 1, 1), so a PReLU after a
    FullyConnected ((N, C) data) broadcast (1, 16) against (16, 1, 1) into
    (16, 1, 16) and onnxruntime failed further on."""
    data = mx.sym.var("data")
    body = mx.sym.FullyConnected(data, num_hidden=16, name="fc") if len(shape) == 2 \
        else mx.sym.Convolution(data, num_filter=16, kernel=(1, 1), name="conv")
    net = mx.sym.LeakyReLU(body, act_type="prelu", name="prelu")
    net = mx.sym.FullyConnected(net, num_hidden=3, name="head")
    report = export_checked(net, {"data": shape}, tmp_path, name="p.onnx")
    assert report.check is not None and report.check.agree, report.lines()
    reshaped = [f for f in report.fixes if "PRelu slope" in f]
    assert bool(reshaped) == (len(shape) == 4)


def test_an_output_listed_twice_among_the_heads_is_exported_once(tmp_path) -> None:
    """Issue 26, fault 4: the .onnx was written with one output, then the check stopped
    with 'the ONNX model has no output for fc_output (it has )'."""
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=4, name="fc")
    net = mx.sym.Group([fc, mx.sym.relu(fc, name="act"), fc])
    report = export_checked(net, {"data": (2, 3)}, tmp_path, name="d.onnx")
    assert report.check is not None and report.check.agree, report.lines()
    assert [o.name for o in report.check.outputs] == ["fc_output", "act_output"]
    assert any("(fc) listed again among the heads, exported once" in f for f in report.fixes)


def test_the_converters_inner_check_keeps_to_the_opset_asked_for(tmp_path) -> None:
    """Issue 26, fault 3: MXNet's converter checks its graph against the onnx package's
    newest opset whatever --opset says, so a mean with axis failed ("Unrecognized
    attribute: axes for operator ReduceMean"); the model is checked whole, at its own
    opset, after conversion."""
    data = mx.sym.var("data")
    net = mx.sym.mean(mx.sym.relu(data, name="act"), axis=1, name="avg")
    report = export_checked(net, {"data": (2, 5, 3)}, tmp_path, opset=13)
    assert report.check is not None and report.check.agree, report.lines()


def test_a_graph_mxnet_refuses_is_refused_with_mxnets_telling_line(tmp_path, capsys) -> None:
    """Issue 26, fault 6: the refusal's whole line was "MXNet cannot load the graph:
    Traceback (most recent call last):", the header of MXNet's message."""
    data = mx.sym.var("data")
    graph = json.loads(mx.sym.Convolution(data, num_filter=4, kernel=(3, 3),
                                          name="conv").tojson())
    next(n for n in graph["nodes"] if n["name"] == "conv")["attrs"]["kernel"] = "x"
    path = tmp_path / "bad-symbol.json"
    path.write_text(json.dumps(graph))
    assert main(["onnx", str(path), "--shape", "data=1,3,8,8", "-o",
                 str(tmp_path / "bad.onnx"), "--via", "mx2onnx"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "MXNet cannot load the graph: Invalid Parameter format for kernel" in err
    # our converters: the engine's line, naming the node and the attribute
    assert main(["onnx", str(path), "--shape", "data=1,3,8,8", "-o",
                 str(tmp_path / "bad.onnx")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "conv (Convolution): attribute kernel='x'" in err
