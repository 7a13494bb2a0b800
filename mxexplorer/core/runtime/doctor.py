"""``mxexplorer doctor``: what a bug report needs, gathered without touching a GPU here.

Python, numpy, the MXNet build (distribution, version, ``mx.runtime.Features``, the GPU
code in its ``libmxnet.so``), the CUDA libraries found and where from, the NVIDIA
driver, each GPU with its verdict, graphviz's ``dot`` and the Qt platform (the xcb
plugin's missing libraries).  MXNet is imported in a child process (:mod:`isolated`):
a broken install is one line in the report, not a crash of the report.  Must not
import Qt (its version and plugin are read from the installed files).
"""
from __future__ import annotations

import ctypes
import glob
import importlib.metadata
import importlib.util
import os
import platform
import subprocess
import sys
from typing import Any

from mxexplorer import __version__
from mxexplorer.core.runtime import gpu, graphviz, isolated, nvidia
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.mxnet_env import import_mxnet, install_advice

Section = tuple[str, list[tuple[str, str]]]


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def mxnet_facts(progress: Any = None, token: Any = None) -> dict[str, Any]:
    """In a child: MXNet's version and features (imports MXNet)."""
    mx = import_mxnet()
    features = mx.runtime.Features()
    enabled = sorted(name for name in features.keys() if features.is_enabled(name))
    return {"version": str(mx.__version__), "features": enabled}


def _mxnet_section() -> Section:
    rows: list[tuple[str, str]] = []
    dist = nvidia.installed_mxnet_distribution()
    if dist is None:
        return "MXNet", [("installed", "no: shapes, memory, FLOPs and plans come from "
                                       "mxexplorer's own engine; bench, profile and the "
                                       "ONNX check against MXNet need MXNet"),
                         ("to install", install_advice())]
    rows.append(("distribution", f"{dist} {_version(dist)}"))
    library = nvidia.mxnet_library()
    rows.append(("libmxnet.so", library or "not found"))
    if library:
        rows.append(("GPU code", gpu.build_archs(library).describe()))
    try:
        facts = isolated.call(mxnet_facts, what="importing MXNet")
    except UserError as exc:
        rows.append(("import", f"fails: {exc}"))
    else:
        rows.append(("version", facts["version"]))
        rows.append(("features", " ".join(facts["features"]) or "none"))
    return "MXNet", rows


def _cuda_section() -> Section:
    rows: list[tuple[str, str]] = []
    roots = nvidia.nvidia_roots()
    for package, pattern in nvidia.CUDA_LIBS:
        found = [p for root in roots
                 for p in sorted(glob.glob(os.path.join(root, package, "lib", pattern)))]
        if found:
            rows.append((pattern.split(".so")[0], ", ".join(found)))
    if not rows:
        rows.append(("CUDA 11 wheels", "none found (the gpu extra is not installed)"))
    nvrtc = gpu.nvrtc_max_arch()
    if nvrtc is not None:
        rows.append(("NVRTC compiles up to", f"compute_{nvrtc}"))
    rows.append(("NVIDIA driver", _driver_version()))
    return "CUDA", rows


def _driver_version() -> str:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return "none (libcuda.so.1 is not on this machine)"
    version = ctypes.c_int(0)
    if cuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return "libcuda.so.1 found; its version could not be read"
    return f"libcuda.so.1, CUDA {version.value // 1000}.{version.value % 1000 // 10}"


def _gpu_section(report: gpu.DeviceReport) -> Section:
    if not report.gpus:
        return "GPUs", [("none", report.reason or "no GPU")]
    rows = []
    for g, verdict in report.gpus:
        memory = ""
        if g.total_bytes:
            free = f"{g.free_bytes / 2**30:.1f} of " if g.free_bytes is not None else ""
            memory = f", {free}{g.total_bytes / 2**30:.1f} GiB free" if free \
                else f", {g.total_bytes / 2**30:.1f} GiB"
        rows.append((f"gpu:{g.index}", f"{g.name} (compute capability "
                                       f"{g.capability[0]}.{g.capability[1]}{memory}): "
                                       f"{verdict.sentence}"))
    return "GPUs", rows


def _dot_version() -> str:
    dot = graphviz.dot_program()
    if dot is None:
        return "not found: " + graphviz.install_hint()
    try:
        proc = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{dot}: does not run ({exc})"
    return f"{dot}: {(proc.stderr or proc.stdout).strip()}"


def _qt_section() -> Section:
    rows = [("PySide6", _version("PySide6-Essentials") or _version("PySide6") or "not installed")]
    env = {k: os.environ[k] for k in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")
           if os.environ.get(k)}
    rows.append(("platform", ", ".join(f"{k}={v}" for k, v in env.items())
                 or "no display set (DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM unset)"))
    spec = importlib.util.find_spec("PySide6")
    if spec and spec.submodule_search_locations:
        plugin = os.path.join(list(spec.submodule_search_locations)[0], "Qt", "plugins",
                              "platforms", "libqxcb.so")
        rows.append(("xcb plugin", _missing_libraries(plugin)))
    return "Qt", rows


def _missing_libraries(path: str) -> str:
    if not os.path.exists(path):
        return "absent"
    try:
        proc = subprocess.run(["ldd", path], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "present (ldd did not run)"
    missing = sorted({line.split()[0] for line in proc.stdout.splitlines()
                      if "not found" in line})
    return "all libraries found" if not missing else \
        "missing " + ", ".join(missing) + " (make qt-libs installs them)"


def gather() -> tuple[list[Section], gpu.DeviceReport]:
    """Every section of the report, and the device report it holds."""
    report = gpu.device_report()
    system = [("mxexplorer", __version__),
              ("Python", f"{platform.python_version()} ({sys.executable})"),
              ("system", f"{platform.system()} {platform.release()} {platform.machine()}"),
              ("numpy", _version("numpy") or "not installed")]
    if os.environ.get(gpu.RECORDED_ENV):
        system.append(("GPUs read from", os.environ[gpu.RECORDED_ENV]))
    sections = [("System", system), _mxnet_section(), _cuda_section(), _gpu_section(report),
                ("graphviz", [("dot", _dot_version())]), _qt_section()]
    return sections, report


def as_text(sections: list[Section]) -> str:
    lines = []
    for title, rows in sections:
        lines.append(title)
        width = max((len(k) for k, _ in rows), default=0)
        lines.extend(f"  {k.ljust(width)}  {v}" for k, v in rows)
    return "\n".join(lines) + "\n"


def as_dict(sections: list[Section], report: gpu.DeviceReport) -> dict[str, Any]:
    """The report as JSON data; ``gpus`` is what :data:`gpu.RECORDED_ENV` reads back."""
    out: dict[str, Any] = {title: dict(rows) for title, rows in sections}
    out["gpus"] = [gpu.gpu_dict(g) for g, _ in report.gpus]
    out["verdicts"] = [{"index": g.index, "runs": v.runs, "sentence": v.sentence,
                        "env": v.env} for g, v in report.gpus]
    out["build"] = report.archs.to_dict() if report.archs else None
    out["nvrtc_max"] = report.nvrtc_max
    return out
