"""GPU truth (issue 13): which GPUs this MXNet runs on, told from the library's own
kernels, and every GPU path ending in a result or one line.

Recorded inputs: the architecture list read from mxnet-cu112 1.9.1's libmxnet.so
(tests/data/fatbin/mxnet-cu112-1.9.1.json, by tools/read_fatbin.py), a small library
nvcc built for sm_75/sm_86 + compute_86 PTX (its fat binary is parsed for real here),
and a doctor report of a six-GPU machine (tests/data/gpus/).  No machine with a GPU
was at hand: the driver and NVML calls in core/gpu.py have never run on one.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from mxexplorer.core.planning import benchresults
from mxexplorer.core.runtime import devices, gpu, mxnet_env, nvidia
from mxexplorer.core.runtime.errors import UserError
from tests.conftest import REPO, WAIT_S

DATA = os.path.join(REPO, "tests", "data")
SIX_GPUS = os.path.join(DATA, "gpus", "cu112-six-gpus.json")
EXAMPLE = os.path.join(REPO, "mxexplorer", "resources", "examples", "resnet18_v1-symbol.json")


def cu112() -> gpu.BuildArchs:
    with open(os.path.join(DATA, "fatbin", "mxnet-cu112-1.9.1.json")) as fh:
        record = json.load(fh)
    build = record["build"]
    return gpu.BuildArchs(build["path"], tuple(build["sass"]), tuple(build["ptx"]))


def test_the_recorded_cu112_library_carries_sm50_to_86_and_no_ptx() -> None:
    with open(os.path.join(DATA, "fatbin", "mxnet-cu112-1.9.1.json")) as fh:
        record = json.load(fh)
    assert record["containers"] == 198 and record["bytes"] == 891384744
    assert cu112().sass == (50, 60, 70, 80, 86) and cu112().ptx == ()


def test_a_real_fat_binary_is_parsed_from_its_elf_section() -> None:
    path = os.path.join(DATA, "fatbin", "libkernels-sm75-sm86-ptx86.so")
    archs = gpu.build_archs(path)
    assert (archs.sass, archs.ptx) == ((75, 86), (86,))
    assert archs.describe() == "SASS sm_75, sm_86; PTX compute_86"


def test_a_library_without_gpu_code_is_a_cpu_build(tmp_path) -> None:
    assert not gpu.build_archs(sys.executable).has_gpu_code
    library = nvidia.mxnet_library()
    assert library is not None and not gpu.build_archs(library).has_gpu_code
    (tmp_path / "short.so").write_bytes(b"\x7fELF\x02")
    assert not gpu.build_archs(str(tmp_path / "short.so")).has_gpu_code


@pytest.mark.parametrize("capability, runs, how, fusion_off", [
    ((7, 5), True, "sm_70 machine code", False),      # T4: 7.0 code, same major
    ((8, 0), True, "sm_80 machine code", False),      # A100
    ((8, 6), True, "sm_86 machine code", False),      # A10, RTX 30xx
    ((8, 9), True, "sm_86 machine code", True),       # L4, RTX 40xx: NVRTC 11.2 lacks 89
    ((9, 0), False, "", False),                       # H100: no kernel image
    ((10, 0), False, "", False),                      # B200
])
def test_verdicts_for_the_cu112_build(capability, runs, how, fusion_off) -> None:
    judged = gpu.verdict(capability, cu112(), nvrtc_max=86)
    assert judged.runs is runs
    if runs:
        assert judged.sentence.startswith(f"runs ({how})")
        assert (judged.env == {"MXNET_USE_FUSION": "0"}) is fusion_off
    else:
        cc = f"{capability[0]}.{capability[1]}"
        assert judged.sentence.startswith(
            "cannot run this MXNet: its kernels are built for compute capabilities "
            f"5.0, 6.0, 7.0, 8.0, 8.6 only, with no PTX to compile for {cc}")
        assert "container 24.06" in judged.sentence and "plan on the CPU" in judged.sentence
        assert "\n" not in judged.sentence


def test_nvrtc_11_8_keeps_fusion_on_ada_and_ptx_reaches_newer_gpus() -> None:
    assert gpu.verdict((8, 9), cu112(), nvrtc_max=90).env == {}
    assert gpu.verdict((8, 9), cu112(), nvrtc_max=None).env == {"MXNET_USE_FUSION": "0"}
    with_ptx = gpu.BuildArchs("x", (75, 86), (86,))
    judged = gpu.verdict((9, 0), with_ptx, nvrtc_max=90)
    assert judged.runs and "compute_86 PTX" in judged.sentence
    assert not gpu.verdict((7, 0), with_ptx, nvrtc_max=90).runs   # 7.5 code: not on 7.0
    assert not gpu.verdict((8, 6), gpu.BuildArchs("cpu"), 86).runs


def test_a_recorded_machine_is_judged_like_the_driver_would_be(monkeypatch) -> None:
    monkeypatch.setenv(gpu.RECORDED_ENV, SIX_GPUS)
    report = gpu.device_report()
    assert [g.capability for g, _ in report.gpus] == [(7, 5), (8, 0), (8, 6), (8, 9),
                                                       (9, 0), (10, 0)]
    assert [v.runs for _, v in report.gpus] == [True, True, True, True, False, False]
    devices = mxnet_env.list_devices()
    assert [d.spec for d in devices] == ["cpu"] + [f"gpu:{k}" for k in range(6)]
    assert devices[5].label == ("GPU 4: NVIDIA H100 80GB HBM3 (9.0, 76.0 of 80.0 GiB free, "
                                "cannot run this MXNet)")
    assert gpu.require_runnable(3, report).env == {"MXNET_USE_FUSION": "0"}
    with pytest.raises(UserError, match=r"^gpu:4 \(NVIDIA H100 80GB HBM3, compute "
                                        r"capability 9\.0\) cannot run this MXNet"):
        gpu.require_runnable(4, report)
    with pytest.raises(UserError, match="gpu:9 is not available: this machine has 6 GPU"):
        gpu.require_runnable(9, report)


_ROW = '{"index": 0, "name": "G", "capability": [8, 6], "free_bytes": %s, "total_bytes": 1}'


@pytest.mark.parametrize("content", [
    '{"gpus": [{"index": 0}]}',
    '{"gpus": [%s]}' % (_ROW % "Infinity"),          # OverflowError: internal error
    '{"gpus": [%s]}' % (_ROW % "1e400"),
    '{"gpus": ' + "[" * 100000 + "]" * 100000 + "}",  # RecursionError: internal error
    None,                                           # /dev/zero: read 7.5 GB
    "fifo",                                         # a FIFO: waits for good
], ids=["field", "infinity", "1e400", "nesting", "dev-zero", "fifo"])
def test_a_bad_recorded_machine_is_one_line(tmp_path, monkeypatch, content) -> None:
    import os

    bad = tmp_path / "bad.json"
    if content is None:
        bad = "/dev/zero"
    elif content == "fifo":
        os.mkfifo(bad)
    else:
        bad.write_text(content)
    monkeypatch.setenv(gpu.RECORDED_ENV, str(bad))
    with pytest.raises(UserError, match="not a doctor report of GPUs") as info:
        gpu.device_report()
    assert "\n" not in str(info.value)


def test_without_a_driver_the_gpu_is_refused_before_mxnet_is_asked(monkeypatch) -> None:
    monkeypatch.delenv(gpu.RECORDED_ENV, raising=False)
    gpus, reason = gpu.query_gpus()
    assert gpus == [] and "libcuda.so.1" in reason          # this machine has no GPU
    with pytest.raises(UserError, match="^gpu:0 is not available: no NVIDIA driver"):
        gpu.run_settings("gpu:0")
    assert gpu.run_settings("cpu") == {}
    assert gpu.free_bytes(0) is None
    assert mxnet_env.list_devices() == [devices.Device("cpu", 0, "CPU")]


def test_mirrored_graphs_get_fusion_off(monkeypatch) -> None:
    with open(EXAMPLE) as fh:
        text = fh.read()
    assert not gpu.mirrored(text)
    data = json.loads(text)
    data["nodes"][5].setdefault("attrs", {})["__force_mirroring__"] = "True"
    assert gpu.mirrored(json.dumps(data))
    monkeypatch.setenv(gpu.RECORDED_ENV, SIX_GPUS)
    monkeypatch.delenv("MXNET_USE_FUSION", raising=False)
    assert gpu.run_settings("gpu:2") == {}
    assert gpu.run_settings("gpu:2", mirrored=True) == {"MXNET_USE_FUSION": "0"}
    assert os.environ["MXNET_USE_FUSION"] == "0"


def run_cli(*args: str, recorded: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop(gpu.RECORDED_ENV, None)
    if recorded:
        env[gpu.RECORDED_ENV] = recorded
    return subprocess.run([sys.executable, "-m", "mxexplorer", *args], capture_output=True,
                          text=True, cwd=REPO, env=env, timeout=WAIT_S)


@pytest.mark.parametrize("command", [["bench"], ["plan", "--stages", "auto"],
                                     ["plan"]])   # the device is checked before the stages
def test_the_cli_refuses_a_gpu_this_mxnet_cannot_run_in_one_line(command) -> None:
    proc = run_cli(*command, EXAMPLE, "--shape", "data=1,3,32,32", "--ctx", "gpu:4",
                   recorded=SIX_GPUS)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("mxexplorer: error: gpu:4 (NVIDIA H100 80GB HBM3, compute "
                                  "capability 9.0) cannot run this MXNet")
    assert proc.stderr.count("\n") == 1 and "container 24.06" in proc.stderr
    proc = run_cli(*command, EXAMPLE, "--shape", "data=1,3,32,32", "--ctx", "gpu:0")
    assert proc.returncode == 2
    assert proc.stderr == ("mxexplorer: error: gpu:0 is not available: no NVIDIA driver "
                           "(libcuda.so.1 is not on this machine)\n")


def test_the_cpu_path_is_unchanged() -> None:
    proc = run_cli("bench", EXAMPLE, "--shape", "data=2,3,112,112", "--repeats", "1",
                   "--warmup", "0", "--json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert result["device"] == "cpu" and result["gpu_used_mb"] is None
    assert result["planned_mb"] > 0 and result["settings"] == {}
    assert result["memory_note"] == "" and result["context_mb"] is None


def test_the_memory_note_names_what_mxnet_leaves_out() -> None:
    note = benchresults.memory_note(744.0, 5100.0, 310.0, 1024.0)
    assert note == ("Measured 5100 MB; against MXNet's planned 744 MB; 4356 MB more, outside "
                    "MXNet's plan: convolution workspace (limit 1024 MB), cuDNN/cuBLAS "
                    "handles, the memory pool's rounding; the CUDA context takes 310 MB "
                    "before any of it.")
    assert benchresults.memory_note(744.0, None, None, None) == ""
    assert benchresults.memory_note(None, 800.0, None, None) == "Measured 800 MB."
    with open(EXAMPLE) as fh:
        assert benchresults.workspace_limit_mb(fh.read()) == 1024.0     # none given: default
    graph = {"nodes": [{"op": "Convolution", "name": "c", "attrs": {"workspace": "256"}},
                       {"op": "Convolution", "name": "d", "attrs": {"workspace": "512"}}]}
    assert benchresults.workspace_limit_mb(json.dumps(graph)) == 512.0
    assert benchresults.workspace_limit_mb('{"nodes": []}') is None


def test_doctor_prints_what_a_bug_report_needs() -> None:
    proc = run_cli("doctor", recorded=SIX_GPUS)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for heading in ("System", "MXNet", "CUDA", "GPUs", "graphviz", "Qt"):
        assert f"\n{heading}\n" in "\n" + out
    assert "numpy           1.23" in out and "features" in out and "MKLDNN" in out
    assert "GPUs read from  " + SIX_GPUS in out
    assert "gpu:3  NVIDIA L4 (compute capability 8.9" in out
    assert "gpu:4  NVIDIA H100 80GB HBM3 (compute capability 9.0, 76.0 of 80.0 GiB free): " \
           "cannot run this MXNet" in out
    assert "dot - graphviz version" in out and "PySide6" in out
    proc = run_cli("doctor", "--json")
    data = json.loads(proc.stdout)
    assert data["gpus"] == [] and data["GPUs"] == {"none": "no NVIDIA driver (libcuda.so.1 "
                                                           "is not on this machine)"}
    assert data["build"]["sass"] == [] and data["MXNet"]["version"] == "1.9.1"
