"""Our exporter as a user meets it: the default of ``mxexplorer onnx``, ``Graph.to_onnx``
and ``export_snapshot``; weights as initializers; the check against MXNet (naming the
first node that differs) and without it; the refusals, one line each."""
from __future__ import annotations

import json
import shutil

import mxnet as mx
import numpy as np
import onnx
import pytest

import mxexplorer
from mxexplorer.cli import main
from mxexplorer.core.convert import onnx_export
from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from mxexplorer.core.graph.document import GraphDocument
from tests.conftest import EXAMPLES, REPO

BENCH = REPO / "benchmarks" / "corpus"
R18 = EXAMPLES / "resnet18_v1-symbol.json"


def test_the_cli_exports_with_our_converters_by_default(tmp_path, capsys) -> None:
    out = tmp_path / "r18.onnx"
    rc = main(["onnx", str(R18), "--shape", "data=1,3,64,64", "-o", str(out), "--check",
               "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0, report
    assert report["via"] == "mxexplorer" and report["opset"] == 13
    assert report["check"]["agree"] and report["check"]["compared_with_mxnet"]
    model = onnx.load(str(out))
    assert [i.name for i in model.graph.input] == ["data"]       # weights are initializers
    assert len(model.graph.initializer) >= 100
    assert model.producer_name == "mxexplorer"
    assert [o.name for o in model.graph.output] == ["resnetv10_dense0_fwd_output"]


def test_the_mx2onnx_route_stays_behind_a_flag(tmp_path, capsys) -> None:
    out = tmp_path / "r18.onnx"
    rc = main(["onnx", str(R18), "--shape", "data=1,3,64,64", "-o", str(out), "--check",
               "--json", "--via", "mx2onnx"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["via"] == "mx2onnx" and report["check"]["agree"]


def test_a_checkpoint_pair_exports_its_weights_as_initializers(tmp_path) -> None:
    """InsightFace's age-gender model: every one of its weights an initializer (the
    mx2onnx route listed them all as graph inputs), the check against MXNet agrees."""
    for name in ("insightface__model-symbol.json", "insightface__model-0000.params"):
        shutil.copy(BENCH / name, tmp_path / name)
    graph = mxexplorer.open(str(tmp_path / "insightface__model-symbol.json"))
    report = graph.to_onnx(tmp_path / "m.onnx", data=(1, 3, 112, 112))
    assert report.via == "mxexplorer" and "weights of insightface__model-0000.params" \
        in report.weights
    assert report.check is not None and report.check.agree, report.lines()
    model = onnx.load(str(tmp_path / "m.onnx"))
    stored = {k.split(":", 1)[1] for k in mx.nd.load(str(tmp_path /
                                                         "insightface__model-0000.params"))}
    inits = {t.name for t in model.graph.initializer}
    assert [i.name for i in model.graph.input] == ["data"]
    # every stored array is an initializer, but the gammas fix_gamma replaces by ones
    ones = {n for n in stored if n.endswith("gamma") and n not in inits}
    assert stored - ones <= inits and len(stored - ones) >= 100
    assert any("fix_gamma=True" in f for f in report.fixes) or not ones


def test_the_check_names_the_first_node_that_differs(tmp_path) -> None:
    """A SoftmaxOutput over 4-D data: exported as MXNet documents it (every axis but
    the batch); MXNet's CPU kernel takes the last axis, so the check parts there, and
    the verdict names that node with its inputs agreeing."""
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv")
    net = mx.sym.SoftmaxOutput(mx.sym.relu(conv, name="act"), name="prob")
    doc = GraphDocument.from_json(net.tojson())
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": (1, 3, 5, 5)},
                                         str(tmp_path / "m.onnx"), check=True)
    check = report.check
    assert check is not None and not check.agree
    assert check.first is not None and check.first.name == "prob" and \
        check.first.inputs_agree
    assert "first difference at 'prob' (SoftmaxOutput)" in check.verdict()


def test_without_the_mxnet_reference_the_verdict_says_so(tmp_path) -> None:
    graph = mxexplorer.open(str(R18))
    report = graph.to_onnx(tmp_path / "m.onnx", data=(1, 3, 32, 32), reference=False)
    assert report.check is not None and not report.check.compared and report.check.agree
    assert "no MXNet reference was available" in report.check.verdict()
    assert report.to_dict()["check"]["compared_with_mxnet"] is False


def test_a_use_onnx_cannot_express_is_refused_at_its_node(tmp_path, capsys) -> None:
    """A channels-last convolution (MXNet runs it on GPU only): refused in one line that
    names the node, its op and the attribute; nothing is written."""
    data = mx.sym.var("data")
    net = mx.sym.Convolution(data, kernel=(3, 3), num_filter=2, layout="NHWC", name="conv")
    path = tmp_path / "nhwc-symbol.json"
    net.save(str(path))
    doc = GraphDocument.open(str(path))
    with pytest.raises(NoOnnxMeaning) as caught:
        onnx_export.export_snapshot(doc.snapshot(), {"data": (1, 8, 8, 3)},
                                    str(tmp_path / "x.onnx"))
    assert caught.value.name == "conv" and "layout NHWC" in str(caught.value)
    assert not (tmp_path / "x.onnx").exists()
    rc = main(["onnx", str(path), "--shape", "data=1,8,8,3", "-o", str(tmp_path / "x.onnx")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "'conv' (Convolution): layout NHWC" in err[0]


def test_an_output_named_like_an_input_is_kept(tmp_path) -> None:
    """A head that is the input itself (a state passed through) keeps an output of its
    own; the check finds every output."""
    state = mx.sym.var("state")
    data = mx.sym.var("data")
    net = mx.sym.Group([mx.sym.relu(data, name="act"), state])
    doc = GraphDocument.from_json(net.tojson())
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": (2, 3), "state": (2, 4)},
                                         str(tmp_path / "m.onnx"), check=True)
    assert report.check is not None and report.check.agree, report.lines()
    assert [o.name for o in report.check.outputs] == ["act_output", "state"]
    model = onnx.load(str(tmp_path / "m.onnx"))
    assert len(model.graph.output) == 2 and \
        len({o.name for o in model.graph.output}) == 2


def test_duplicate_node_names_export_and_the_check_runs(tmp_path) -> None:
    data = mx.sym.var("data")
    a = mx.sym.relu(data, name="same")
    b = mx.sym.sigmoid(a, name="same")
    doc = GraphDocument.from_json(b.tojson())
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": (2, 3)},
                                         str(tmp_path / "m.onnx"), check=True)
    assert report.check is not None and report.check.agree, report.lines()


def test_the_opset_can_be_chosen_and_a_too_low_one_is_refused(tmp_path, capsys) -> None:
    out = tmp_path / "m.onnx"
    assert main(["onnx", str(R18), "--shape", "data=1,3,32,32", "-o", str(out),
                 "--opset", "17"]) == 0
    assert onnx.load(str(out)).opset_import[0].version == 17
    assert main(["onnx", str(R18), "--shape", "data=1,3,32,32", "-o", str(out),
                 "--opset", "11"]) == 2
    assert "opset 11" in capsys.readouterr().err


def test_the_check_reads_a_npy_input(tmp_path, capsys) -> None:
    x = np.random.default_rng(0).uniform(0, 1, (1, 3, 32, 32)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    rc = main(["onnx", str(R18), "--shape", "data=1,3,32,32", "-o", str(tmp_path / "m.onnx"),
               "--check", "--input", str(tmp_path / "x.npy")])
    text = capsys.readouterr().out
    assert rc == 0 and "inputs from x.npy" in text and "outputs agree" in text


def test_an_output_named_like_an_input_keeps_both(tmp_path) -> None:
    """A node 'state' (its output 'state_output') beside an input called 'state_output':
    ONNX names each tensor once; both stay, and the check finds the output."""
    data = mx.sym.var("data")
    passed = mx.sym.var("state_output")
    net = mx.sym.Group([mx.sym.tanh(data + passed, name="state"), passed])
    doc = GraphDocument.from_json(net.tojson())
    report = onnx_export.export_snapshot(
        doc.snapshot(), {"data": (2, 3), "state_output": (2, 3)}, str(tmp_path / "m.onnx"),
        check=True)
    assert report.check is not None and report.check.agree, report.lines()
    assert [o.name for o in report.check.outputs] == ["state_output", "state_output (2)"]
    model = onnx.load(str(tmp_path / "m.onnx"))
    assert sorted(i.name for i in model.graph.input) == ["data", "state_output"]
    assert len({o.name for o in model.graph.output}) == 2


def test_attribute_texts_other_front_ends_write_are_read_as_mxnet_reads_them(
        tmp_path) -> None:
    """``layout 'None'``, ``global_pool '0'``, ``no_bias 'true'``, ``(3L, 3L)``: what
    MXNet's C++ API and other front ends write; they broke MXNet's converters."""
    data = mx.sym.var("data")
    conv = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, name="conv")
    pool = mx.sym.Pooling(conv, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool")
    graph = json.loads(pool.tojson())
    for node in graph["nodes"]:
        if node["op"] == "Convolution":
            node["attrs"].update({"layout": "None", "no_bias": "true", "kernel": "(3L, 3L)"})
            node["inputs"] = node["inputs"][:2]
        if node["op"] == "Pooling":
            node["attrs"].update({"global_pool": "0", "cudnn_off": "False"})
    graph["nodes"] = [n for n in graph["nodes"] if n["name"] != "conv_bias"]
    names = [n["name"] for n in json.loads(pool.tojson())["nodes"]]
    keep = {names.index(n["name"]): k for k, n in enumerate(graph["nodes"])}
    for node in graph["nodes"]:
        node["inputs"] = [[keep[i], j, v] for i, j, v in node["inputs"]]
    graph["arg_nodes"] = [k for k, n in enumerate(graph["nodes"]) if n["op"] == "null"]
    graph["heads"] = [[len(graph["nodes"]) - 1, 0, 0]]
    graph.pop("node_row_ptr", None)
    doc = GraphDocument.from_json(json.dumps(graph))
    report = onnx_export.export_snapshot(doc.snapshot(), {"data": (1, 3, 8, 8)},
                                         str(tmp_path / "m.onnx"), check=True)
    assert report.check is not None and report.check.agree, report.lines()
