"""The CLI on the engine: info, infer, plan, render and diff print figures without MXNet,
in a fresh process as a user runs them; bench says plainly that it needs MXNet."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

from tests.conftest import EXAMPLES, REPO, WAIT_S
from tests.nomxnet.conftest import HAS_MXNET

R18 = EXAMPLES / "resnet18_v1-symbol.json"
MLP = EXAMPLES / "mlp-symbol.json"

#: runs the CLI, then says on stderr whether MXNet was imported
RUN = ("import sys; from mxexplorer.cli import main; rc = main(sys.argv[1:]); "
       "sys.stderr.write(f'\\nMXNET_IMPORTED={\"mxnet\" in sys.modules}\\n'); sys.exit(rc)")


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True,
                          cwd=str(cwd or REPO), timeout=WAIT_S)


def mxnet_imported(proc: subprocess.CompletedProcess[str]) -> bool:
    return "MXNET_IMPORTED=True" in proc.stderr


def test_infer_prints_every_shape_and_the_totals_without_mxnet() -> None:
    proc = cli("infer", str(R18), "--shape", "data=1,3,224,224", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["complete"] and data["error"] is None
    assert data["outputs"][0]["shape"] == [1, 1000]
    assert data["params"] == 11_689_512                  # ResNet-18's, as MXNet counts them
    assert data["macs"] > 1.8e9
    assert all(row["shape"] for row in data["internals"])
    assert not mxnet_imported(proc)                      # the engine, in-process


def test_infer_text_and_a_located_error_in_plain_words() -> None:
    proc = cli("infer", str(MLP), "--shape", "data=2,100")
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()[0]
    assert line.startswith("mxexplorer: error: shape inference stopped at fc1 "
                           "(FullyConnected)")
    assert "(64, 784)" in line and "Traceback" not in proc.stderr
    assert not mxnet_imported(proc)


def test_plan_prints_figures_and_says_whose() -> None:
    proc = cli("plan", str(R18), "--shape", "data=16,3,224,224", "--search", "fast",
               "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["costed_by"] == ("mxnet" if HAS_MXNET else "model")
    assert 0 < data["planned_mb"] < data["baseline_mb"]
    text = cli("plan", str(R18), "--shape", "data=16,3,224,224", "--search", "fast")
    assert text.returncode == 0, text.stderr
    assert ("costed by   MXNet" if HAS_MXNET else "costed by   the memory model") in text.stdout


def test_render_labels_edges_with_shapes(tmp_path) -> None:
    out = tmp_path / "mlp.svg"
    proc = cli("render", str(MLP), "--shape", "data=4,784", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    svg = out.read_text(encoding="utf-8")
    assert "4×64" in svg or "(4, 64)" in svg or "4x64" in svg
    assert not mxnet_imported(proc)


def test_diff_compares_two_graphs(tmp_path) -> None:
    other = tmp_path / "mlp2-symbol.json"
    data = json.loads(MLP.read_text(encoding="utf-8"))
    for node in data["nodes"]:
        if node["name"] == "fc1":
            node["attrs"]["num_hidden"] = "32"
    other.write_text(json.dumps(data), encoding="utf-8")
    shutil.copy(MLP, tmp_path / "mlp-symbol.json")
    proc = cli("diff", str(tmp_path / "mlp-symbol.json"), str(other), "--shape",
               "data=1,784", "--json")
    assert proc.returncode == 1, proc.stderr       # as diff(1): 1 when they differ
    found = json.loads(proc.stdout)
    fc1 = next(c for c in found["changed"] if c["a"] == "fc1")
    assert "num_hidden" in json.dumps(fc1) and "32" in json.dumps(fc1["shapes"])
    assert not mxnet_imported(proc)


def test_bench_says_it_needs_mxnet_and_where_to_get_it() -> None:
    """Without MXNet bench says why it needs it and what to do on this Python; with it
    (the first lane) it times the graph."""
    if HAS_MXNET:
        proc = cli("bench", str(MLP), "--shape", "data=1,784", "--budget", "2")
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "ms/iter" in proc.stdout and "planned by MXNet" in proc.stdout
        return
    proc = cli("bench", str(MLP), "--shape", "data=1,784")
    assert proc.returncode == 2
    line = proc.stderr.strip().splitlines()[0]
    assert line.startswith("mxexplorer: error: bench needs MXNet (it times MXNet training")
    assert "Python 3.11" in line and "Traceback" not in proc.stderr


def test_info_says_a_checkpoint_does_not_belong_to_its_graph(tmp_path) -> None:
    """Issue 37, without MXNet: the ``.params`` index alone says which arrays a
    checkpoint lacks and which it holds for no variable of the graph."""
    shutil.copy(R18, tmp_path / "net-symbol.json")
    shutil.copy(EXAMPLES / "mlp-0000.params", tmp_path / "net-0000.params")
    proc = cli("info", str(tmp_path / "net-symbol.json"))
    assert proc.returncode == 0, proc.stderr
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("mismatch")), "")
    assert line == ("mismatch    net-0000.params does not match the graph: it lacks 62 of "
                    "the graph's 62 parameters (resnetv10_conv0_weight, "
                    "resnetv10_batchnorm0_gamma, resnetv10_batchnorm0_beta, +59 more) and "
                    "40 of its 40 auxiliary states (resnetv10_batchnorm0_running_mean, "
                    "resnetv10_batchnorm0_running_var, "
                    "resnetv10_stage1_batchnorm0_running_mean, +37 more); 10 of its 10 "
                    "arrays are not in the graph (fc1_weight, fc1_bias, bn1_gamma, "
                    "+7 more)")
    assert not mxnet_imported(proc)
    proc = cli("info", str(MLP))                          # the pair that belongs
    assert proc.returncode == 0 and "mismatch" not in proc.stdout
