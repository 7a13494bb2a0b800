"""The command line, run as a user runs it: a real process, real files."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import mxnet as mx
import pytest

from mxexplorer.cli import main
from tests.conftest import DATA, EXAMPLES, REPO, WAIT_S
from tests.core.graph.test_symbol_io import BROKEN


def run(*args: str, env: dict | None = None, python: list[str] | None = None):
    cmd = (python or [sys.executable]) + ["-m", "mxexplorer", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(REPO),
                          timeout=WAIT_S)


def _one_error_line(proc: subprocess.CompletedProcess) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("mxexplorer:")]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    return lines[0]


def test_info_json_lists_internals_in_mxnet_order(zoo) -> None:
    path = str(zoo("resnet18_v1"))
    proc = run("info", path, "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["internals"] == mx.sym.load(path).get_internals().list_outputs()
    assert data["inputs"] == ["data"] and data["ops"]["Convolution"] == 20
    assert data["params_file"].endswith("-0000.params")


def test_info_text_on_a_legacy_file_with_duplicates() -> None:
    proc = run("info", str(DATA / "duplicate_names-symbol.json"))
    assert proc.returncode == 0
    assert "duplicates" in proc.stdout and "internals" in proc.stdout


def test_infer_json_has_every_internal_and_totals() -> None:
    path = str(EXAMPLES / "resnet18_v1-symbol.json")
    proc = run("infer", path, "--shape", "data=1,3,224,224", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    sym = mx.sym.load(path)
    _, out_shapes, _ = sym.get_internals().infer_shape(data=(1, 3, 224, 224))
    assert [r["name"] for r in data["internals"]] == sym.get_internals().list_outputs()
    assert [tuple(r["shape"]) for r in data["internals"]] == [tuple(s) for s in out_shapes]
    for key in ("arguments", "aux", "outputs", "params", "macs", "flops", "activation_bytes"):
        assert key in data
    assert data["params"] == 11689512  # ResNet-18: 11.7 M
    assert data["flops"] == 2 * data["macs"] and 1.7e9 < data["macs"] < 1.9e9
    assert data["outputs"] == [{"name": "resnetv10_dense0_fwd_output", "shape": [1, 1000]}]


def test_infer_text_table() -> None:
    proc = run("infer", str(EXAMPLES / "mlp-symbol.json"), "--shape", "data=32,784")
    assert proc.returncode == 0, proc.stderr
    assert "fc1_output" in proc.stdout and "(32, 64)" in proc.stdout
    assert "parameters  " in proc.stdout and "MACs" in proc.stdout


def test_infer_inconsistent_shape_exits_2_naming_the_node() -> None:
    proc = run("infer", str(EXAMPLES / "mlp-symbol.json"), "--shape", "data=4,100")
    assert proc.returncode == 2
    line = _one_error_line(proc)
    assert "fc1 (FullyConnected)" in line and "(64, 784)" in line


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_files_exit_2_with_one_line(name: str) -> None:
    proc = run("info", str(DATA / "broken" / name))
    assert proc.returncode == 2
    assert BROKEN[name] in _one_error_line(proc)


@pytest.mark.parametrize("args,needle", [
    (["info", "/no/such-symbol.json"], "no such file"),
    (["infer", str(EXAMPLES / "mlp-symbol.json"), "--shape", "data=1,x"], "not a whole number"),
    (["infer", str(EXAMPLES / "mlp-symbol.json"), "--shape", "1,784"], "expected NAME=D1"),
    (["infer", str(EXAMPLES / "mlp-symbol.json"), "--shape", "img=1,784"], "no input named"),
    (["infer", str(EXAMPLES / "mlp-symbol.json")], "give the input shapes"),
])
def test_bad_arguments_exit_2(args, needle) -> None:
    proc = run(*args)
    assert proc.returncode == 2
    assert needle in _one_error_line(proc)


def test_without_mxnet_info_and_infer_work() -> None:
    # -S leaves site-packages (and so MXNet, and numpy) out; mxexplorer comes from the
    # source tree: the engine infers with neither
    env = dict(os.environ, PYTHONPATH=str(REPO))
    python = [sys.executable, "-S"]
    info = run("info", str(EXAMPLES / "resnet18_v1-symbol.json"), env=env, python=python)
    assert info.returncode == 0, info.stderr
    infer = run("infer", str(EXAMPLES / "mlp-symbol.json"), "--shape", "data=1,784",
                env=env, python=python)
    assert infer.returncode == 0, infer.stderr
    assert "(1, 10)" in infer.stdout       # (bench without MXNet: tests/nomxnet/test_cli.py)


def test_render_svg_with_shapes_on_the_edges(tmp_path) -> None:
    out = tmp_path / "r18.svg"
    proc = run("render", str(EXAMPLES / "resnet18_v1-symbol.json"), "-o", str(out),
               "--shape", "data=1,3,224,224")
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and "1\u00d764\u00d756\u00d756" in text
    assert "resnetv10_stage1_conv0_weight" not in text
    proc = run("render", str(EXAMPLES / "resnet18_v1-symbol.json"), "-o",
               str(tmp_path / "p.png"), "--show-params")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_render_bad_format_and_missing_dot_are_one_line(tmp_path) -> None:
    path = str(EXAMPLES / "mlp-symbol.json")
    proc = run("render", path, "-o", str(tmp_path / "x.gif"))
    assert proc.returncode == 2 and ".svg, .png or .pdf" in _one_error_line(proc)
    env = dict(os.environ, MXEXPLORER_DOT=str(tmp_path / "no-dot"))
    proc = run("render", path, "-o", str(tmp_path / "x.pdf"), env=env)
    assert proc.returncode == 2 and "install it with" in _one_error_line(proc)
    assert not (tmp_path / "x.pdf").exists()


def test_plan_json_and_planned_file(tmp_path) -> None:
    out = tmp_path / "planned-symbol.json"
    proc = run("plan", str(EXAMPLES / "resnet18_v1-symbol.json"), "--shape",
               "data=4,3,224,224", "--stages", "auto", "-o", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for key in ("baseline_mb", "planned_mb", "threshold_mb", "stages", "recompute_macs",
                "probes"):
        assert key in data
    assert data["planned_mb"] < data["baseline_mb"] and data["stages"] > 10
    assert data["complete"] is True and "safety net" not in data["summary"]
    assert all({"threshold", "cost", "ok"} <= set(p) for p in data["probes"])
    sym = mx.sym.load(str(out))
    assert any(a.get("__force_mirroring__") == "False" for a in sym.attr_dict().values())
    proc = run("plan", str(EXAMPLES / "resnet18_v1-symbol.json"), "--shape",
               "data=4,3,224,224", "--stages", "auto", "--threshold", "40")
    assert proc.returncode == 0 and "(threshold 40 MB)" in proc.stdout, proc.stderr
    # a search its safety net cut says so, in JSON and in words (issue 27)
    proc = run("plan", str(EXAMPLES / "resnet18_v1-symbol.json"), "--shape",
               "data=4,3,112,112", "--stages", "auto", "--search", "fast",
               "--time-limit", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["complete"] is False and "cut by its safety net" in data["summary"]
    proc = run("plan", str(EXAMPLES / "resnet18_v1-symbol.json"), "--shape",
               "data=4,3,112,112", "--stages", "auto", "--search", "fast",
               "--time-limit", "0")
    assert proc.returncode == 0 and "cut by its safety net" in proc.stdout, proc.stderr


def test_plan_errors_are_one_line(tmp_path) -> None:
    path = str(EXAMPLES / "resnet18_v1-symbol.json")
    # a file without mirror_stage tags plans on automatic stages, as the window does;
    # asked for the file's own, the refusal names the option a CLI user has
    proc = run("plan", path, "--shape", "data=4,3,224,224", "--search", "original",
               "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["stage_source"] == "auto"
    proc = run("plan", path, "--shape", "data=4,3,224,224", "--stages", "file")
    line = _one_error_line(proc)
    assert proc.returncode == 2 and "no node carries mirror_stage" in line
    assert "--stages auto" in line and "tree" not in line
    proc = run("plan", path, "--shape", "data=4,3,224,224", "--stages", "auto",
               "--ctx", "gpu:0")
    assert proc.returncode == 2 and "gpu:0 is not available" in _one_error_line(proc)
    proc = run("plan", path, "--shape", "data=4,3,2", "--stages", "auto")
    assert proc.returncode == 2 and "shape inference stopped" in _one_error_line(proc)
    proc = run("bench", path)
    assert proc.returncode == 2 and "--shape" in _one_error_line(proc)


def test_bench_json(tmp_path) -> None:
    path = str(EXAMPLES / "mlp-symbol.json")
    planned = tmp_path / "p-symbol.json"
    assert run("plan", path, "--shape", "data=8,784", "--stages", "auto", "--threshold", "0",
               "-o", str(planned)).returncode == 0
    proc = run("bench", path, "--shape", "data=8,784", "--planned", str(planned),
               "--budget", "4", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    results = out["results"]
    assert [r["label"] for r in results] == ["original", "planned"]
    assert all(r["train"]["median_ms"] > 0 and r["train_samples_per_s"] > 0 for r in results)
    # the ratio planned/original, its interval, and a verdict that follows from it
    low, high = out["ratio_interval"]
    assert low <= out["ratio"] <= high and out["budget_s"] == 4.0
    if low <= 1 <= high:
        assert out["verdict"].startswith("No measurable difference")
    else:
        assert out["verdict"].startswith("Planned is ")
    rounds = out["estimate"]["rounds"]
    assert len(out["pairs"]) == rounds == results[0]["train"]["runs"] >= 6
    assert out["order"][:4] == ["original", "planned", "planned", "original"]
    # the estimate was said before the timed runs, on stderr (stdout is the JSON)
    assert f"{rounds} runs of each graph" in proc.stderr
    assert re.search(r"^about \d+ s: \d+ runs of each graph", proc.stderr, re.M)
    # a planned file alone: "original" is that file without its tags
    proc = run("bench", str(planned), "--shape", "data=8,784", "--repeats", "1",
               "--warmup", "0", "--json")
    assert [r["label"] for r in json.loads(proc.stdout)["results"]] == ["original", "planned"]
    # the same graph twice is refused in one line
    proc = run("bench", path, "--shape", "data=8,784", "--planned", path)
    assert proc.returncode == 2 and "nothing to compare" in _one_error_line(proc)
    proc = run("bench", path, "--shape", "data=8,784", "--repeats", "1", "--warmup", "0")
    assert proc.returncode == 0 and proc.stdout.startswith("original: ") \
        and "ms/iter" in proc.stdout, proc.stderr
    proc = run("bench", path, "--shape", "data=8,784", "--budget", "0")
    assert proc.returncode == 2 and "--budget above 0" in _one_error_line(proc)


def test_bench_times_a_language_model_whose_input_feeds_an_embedding(tmp_path) -> None:
    """Issue 27: MXNet refused the gradient of the Embedding's input; inputs get none."""
    data, label = mx.sym.var("data"), mx.sym.var("softmax_label")
    embed = mx.sym.Embedding(data, input_dim=50, output_dim=16, name="embed")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.flatten(embed), num_hidden=50),
                               label, name="softmax")
    path = tmp_path / "lm-symbol.json"
    path.write_text(net.tojson())
    proc = run("bench", str(path), "--shape", "data=4,8", "--repeats", "2")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("original: ") and "ms/iter" in proc.stdout


def test_infer_by_op_sums_to_the_per_node_totals() -> None:
    path = str(EXAMPLES / "resnet18_v1-symbol.json")
    proc = run("infer", path, "--shape", "data=2,3,224,224", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    rows = data["by_op"]
    assert sum(r["macs"] for r in rows) == data["macs"] == \
        sum(r["macs"] for r in data["internals"])
    assert sum(r["params"] for r in rows) == sum(r["params"] for r in data["internals"])
    assert sum(r["activation_bytes"] for r in rows) == data["activation_bytes"]
    info = json.loads(run("info", path, "--json").stdout)
    assert {r["op"]: r["count"] for r in rows} == info["ops"]
    for key in ("macs_share", "params_share", "activation_bytes_share"):
        assert abs(sum(r[key] for r in rows) - 1) < 1e-9
    assert rows[0]["op"] == "Convolution" and len(rows[0]["nodes"]) == 20
    text = run("infer", path, "--shape", "data=2,3,224,224", "--by-op").stdout
    assert text.splitlines()[1].startswith("Convolution") and "share" in text.splitlines()[0]


def test_debug_works_before_and_after_a_subcommand(capsys) -> None:
    """Every internal error says "run with --debug": it must be accepted where users
    put it, before the subcommand and after it."""
    path = str(EXAMPLES / "mlp-symbol.json")
    for argv in (["--debug", "info", path], ["info", path, "--debug"],
                 ["info", "--debug", path]):
        assert main(argv) == 0, argv
        assert "FullyConnected" in capsys.readouterr().out


def test_diff_with_shapes_says_where_one_side_stops_inferring(tmp_path, capsys) -> None:
    """One side no longer infers: one line says where it stops, instead of a line of
    ``-> [None]`` for every node after it (117 on this graph)."""
    from mxexplorer.core.graph import edits
    from mxexplorer.core.graph.document import GraphDocument

    a = EXAMPLES / "resnet18_v1-symbol.json"
    doc = GraphDocument.open(str(a))
    conv = doc.find("resnetv10_stage3_conv0_fwd")[0]
    edits.set_attr((conv,), "kernel", "(30, 30)").apply(doc)
    b = tmp_path / "b-symbol.json"
    b.write_text(doc.to_json())
    assert main(["diff", str(a), str(b), "--shape", "data=1,3,224,224"]) == 1
    out = capsys.readouterr().out
    assert "None" not in out, out
    assert "B: shape inference stops at resnetv10_stage3_conv0_fwd (Convolution)" in out
    assert "kernel: '(3, 3)' -> '(30, 30)'" in out
    assert len(out.splitlines()) <= 4, out
    assert main(["diff", str(a), str(b), "--shape", "data=1,3,224,224", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["inference"] == {"a": None, "b": data["inference"]["b"]}
    assert data["inference"]["b"].startswith("resnetv10_stage3_conv0_fwd (Convolution)")


def _residual_chain(blocks: int) -> dict:
    """``blocks`` residual blocks of FullyConnected - relu - FullyConnected + add."""
    nodes = [{"op": "null", "name": "data", "inputs": []}]
    x = 0
    for b in range(blocks):
        k = len(nodes)
        nodes += [{"op": "null", "name": f"b{b}_fc1_weight", "inputs": []},
                  {"op": "FullyConnected", "name": f"b{b}_fc1", "inputs": [[x, 0, 0], [k, 0, 0]],
                   "attrs": {"num_hidden": "16", "no_bias": "True"}},
                  {"op": "Activation", "name": f"b{b}_relu", "attrs": {"act_type": "relu"},
                   "inputs": [[k + 1, 0, 0]]},
                  {"op": "null", "name": f"b{b}_fc2_weight", "inputs": []},
                  {"op": "FullyConnected", "name": f"b{b}_fc2",
                   "inputs": [[k + 2, 0, 0], [k + 3, 0, 0]],
                   "attrs": {"num_hidden": "16", "no_bias": "True"}},
                  {"op": "elemwise_add", "name": f"b{b}_add",
                   "inputs": [[k + 4, 0, 0], [x, 0, 0]]}]
        x = k + 5
    return {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
            "heads": [[x, 0, 0]]}


def test_render_draws_a_big_graph_as_the_window_does(tmp_path) -> None:
    """6,001 nodes: folded into blocks at once, as the window shows them (it waited out
    dot's 300 s, then refused); every node asked for and dot too slow: the layered
    layout the window falls back to, drawn by graphviz without a layout of its own."""
    path = tmp_path / "big-symbol.json"
    path.write_text(json.dumps(_residual_chain(1500)))
    proc = run("render", str(path), "-o", str(tmp_path / "overview.svg"))
    assert proc.returncode == 0, proc.stderr
    assert "6,001 nodes folded into blocks" in proc.stderr and "--all" in proc.stderr
    proc = run("render", str(path), "-o", str(tmp_path / "all.svg"), "--all",
               "--time-limit", "0.01")
    assert proc.returncode == 0, proc.stderr
    assert "drawn with mxexplorer's layered layout" in proc.stderr
    svg = (tmp_path / "all.svg").read_text()
    assert svg.count('class="node"') == 6001 and 'id="n6000"' in svg


def test_errors_stay_one_line_with_mxnets_telling_line(tmp_path) -> None:
    """A node name with a newline broke the one-line error; MXNet's "Possible
    Arguments" listing (dozens of lines) was passed on; a probe's reason was often
    only "Traceback (most recent call last):"."""
    from mxexplorer.core.runtime.errors import telling_line

    x = mx.sym.var("data")
    bad = mx.sym.FullyConnected(x, num_hidden=4, name="fc\n1")
    graph = json.loads(bad.tojson())
    graph["nodes"][1]["name"] = "fc\n1_weight"          # its weight, named with it
    path = tmp_path / "nl-symbol.json"
    path.write_text(json.dumps(graph))
    proc = run("infer", str(path), "--shape", "data=2,3", "--shape", "fc\n1_weight=5,5")
    err = [ln for ln in proc.stderr.splitlines() if ln.startswith("mxexplorer:")]
    assert proc.returncode == 2 and len(err) == 1, proc.stderr
    assert "fc\\n1" in err[0] and "Traceback" not in err[0]
    try:
        mx.sym.Convolution(x, kernel=(3, 3), num_filter=2, foo=3)
    except mx.base.MXNetError as exc:
        line = telling_line(str(exc))
    assert line == "Cannot find argument 'foo' (MXNet lists what it accepts)"
    traced = ('Traceback (most recent call last):\n  File "../src/c_api/x.cc", line 1\n'
              "MXNetError: Check failed: x > 0: too small\n")
    assert telling_line(traced) == "Check failed: x > 0: too small"
    assert telling_line("Traceback (most recent call last):\n  File \"a\"\nOSError: "
                        "the disk\n") == "OSError: the disk"


def test_plan_within_a_budget_the_unplanned_graph_fits_says_so(capsys) -> None:
    """``--within`` at or above the unplanned graph's MB: nothing needs recomputing, and
    the output says that (it said "no plan beats the unplanned graph")."""
    import json

    from mxexplorer.cli import main

    args = ["plan", str(EXAMPLES / "resnet18_v1-symbol.json"), "--shape",
            "data=2,3,64,64", "--search", "fast", "--within", "100000"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "nothing is recomputed" in text and "no plan beats" not in text
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "nothing is recomputed" in data["summary"] and data["recompute_share"] == 0


def test_info_and_onnx_say_a_checkpoint_does_not_belong_to_its_graph(tmp_path) -> None:
    """Issue 37: a pair whose names do not belong together opened as if they did, and
    ``onnx`` then asked for ``--shape`` of the 40 BatchNorm moving statistics."""
    from tests.core.graph.test_checkpoint_match import mismatched_pair

    path = str(mismatched_pair(tmp_path))
    proc = run("info", path)
    assert proc.returncode == 0, proc.stderr
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("mismatch")), "")
    assert "net-0000.params does not match the graph: it lacks 62 of the graph's 62 " \
           "parameters (resnetv10_conv0_weight, " in line, proc.stdout
    assert "+37 more" in line and "10 of its 10 arrays are not in the graph" in line
    data = json.loads(run("info", path, "--json").stdout)
    sym = mx.sym.load(path)
    assert data["checkpoint_mismatch"]["lacking_aux"] == sym.list_auxiliary_states()
    assert data["checkpoint_mismatch"]["unused"][:2] == ["fc1_weight", "fc1_bias"]
    proc = run("onnx", path, "--shape", "data=1,3,32,32", "-o", str(tmp_path / "x.onnx"))
    assert proc.returncode == 2
    err = _one_error_line(proc)
    assert "net-0000.params does not match the graph: it lacks 62 of the graph's 62 " \
           "parameters" in err and "40 of its 40 auxiliary states" in err
    assert "--shape" not in err and "no shape for" not in err
    assert not (tmp_path / "x.onnx").exists()
    # the pair that belongs together: no such line
    proc = run("info", str(EXAMPLES / "mlp-symbol.json"))
    assert "checkpoint  " in proc.stdout and "mismatch" not in proc.stdout
