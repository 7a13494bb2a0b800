"""ONNX export without MXNet (the lane of Python 3.12+): our converters write the model,
onnx's checker passes it, onnxruntime runs it; a real checkpoint pair of the corpus
gives the top-5 MXNet computed for the same input (tests/data/onnx_top5.json, written
by benchmarks/onnx_top5.py and re-checked against MXNet in the MXNet lane)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from tests.conftest import EXAMPLES, REPO, WAIT_S
from tests.nomxnet.conftest import HAS_MXNET
from tests.nomxnet.test_cli import RUN

BENCH = REPO / "benchmarks" / "corpus"
TOP5 = json.loads((REPO / "tests" / "data" / "onnx_top5.json").read_text())
SHAPES = json.loads((BENCH / "shapes.json").read_text())
#: a sample of the corpus in the clone: classifiers, detectors, face models, regressions
SAMPLE = ["djl__resnet18_v1-symbol.json", "djl__squeezenet1.0-symbol.json",
          "insightface__det2-symbol.json", "lffd__symbol_10_160_17L_4scales_v1_deploy-symbol.json",
          "sm-mxnet-inf__default_handlers_model-symbol.json", "djl__mlp-symbol.json",
          "tornadomeet-face__lightened_cnn-symbol.json"]


def cli(*args: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, text=True,
                          cwd=str(cwd or REPO), timeout=WAIT_S)


def _run(path, feed=None):
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    feed = feed or {i.name: rng.uniform(-1, 1, i.shape).astype("float32")
                    for i in session.get_inputs()}
    return model, session.run(None, feed)


def _shape_args(name: str) -> list[str]:
    import re

    text = (BENCH / name).read_text()
    names = {n["name"] for n in json.loads(text)["nodes"] if n["op"] == "null"}
    args = []
    for pattern, shape in SHAPES[name]:
        for var in sorted(names):
            if re.match(pattern, var):
                args += ["--shape", f"{var}={','.join(map(str, shape))}"]
    return args


@pytest.mark.parametrize("name", ["resnet18_v1-symbol.json", "mlp-symbol.json"])
def test_the_examples_export_and_run_without_mxnet(tmp_path, name) -> None:
    shape = "data=1,3,64,64" if name.startswith("resnet") else "data=2,784"
    proc = cli("onnx", str(EXAMPLES / name), "--shape", shape, "-o", str(tmp_path / "m.onnx"),
               "--check", "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["via"] == "mxexplorer" and report["opset"] == 13
    check = report["check"]
    if not HAS_MXNET:                             # the lane without MXNet
        assert not check["compared_with_mxnet"]
        assert "no MXNet reference was available" in check["verdict"]
    model, outs = _run(tmp_path / "m.onnx")
    assert [i.name for i in model.graph.input] == ["data"]
    assert all(np.all(np.isfinite(o)) for o in outs)


@pytest.mark.parametrize("name", SAMPLE)
def test_a_corpus_sample_exports_passes_the_checker_and_runs(tmp_path, name) -> None:
    shutil.copy(BENCH / name, tmp_path / name)          # alone: random weights
    proc = cli("onnx", str(tmp_path / name), *_shape_args(name), "-o",
               str(tmp_path / "m.onnx"))
    assert proc.returncode == 0, proc.stderr
    _, outs = _run(tmp_path / "m.onnx")
    assert outs and all(np.all(np.isfinite(o)) for o in outs)


@pytest.mark.parametrize("row", TOP5, ids=[r["prefix"] for r in TOP5])
def test_a_checkpoint_pair_gives_mxnets_top5(tmp_path, row) -> None:
    """``mxexplorer onnx`` of a real checkpoint pair, run in onnxruntime on the seeded
    input: the same top-5 as MXNet's, the same values within 1e-4."""
    for suffix in ("-symbol.json", "-0000.params"):
        shutil.copy(BENCH / (row["prefix"] + suffix), tmp_path / (row["prefix"] + suffix))
    out = tmp_path / "m.onnx"
    proc = cli("onnx", str(tmp_path / (row["prefix"] + "-symbol.json")), "--shape",
               "data=" + ",".join(map(str, row["shape"])), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "weights of " + row["prefix"] + "-0000.params" in proc.stdout
    low, high = row["range"]
    x = np.random.default_rng(0).uniform(low, high, row["shape"]).astype("float32")
    _, outs = _run(out, {"data": x})
    got = outs[0].reshape(-1)
    top = [int(i) for i in np.argsort(-got, kind="stable")[:5]]
    assert top == row["top5"]
    assert np.allclose(got[top], row["values"], rtol=1e-4, atol=1e-5)
