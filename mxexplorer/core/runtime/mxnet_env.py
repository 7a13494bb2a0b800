"""Loading MXNet lazily, and the devices it offers.

Owns the one place that imports ``mxnet``: the window appears before MXNet is
loaded, and a missing MXNet becomes one line naming the extra to install.  For the
``gpu`` extra (mxnet-cu112) it preloads the CUDA 11 runtime libraries from the
``nvidia-*-cu11`` wheels with ``RTLD_GLOBAL`` so no ``LD_LIBRARY_PATH`` is needed.
Must not import Qt.
"""
from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import logging
import os
import sys
import threading
from types import ModuleType
from typing import Any, Iterator, Mapping

from mxexplorer.core.runtime import gpu
from mxexplorer.core.runtime.devices import Device, parse_device
from mxexplorer.core.runtime.errors import MXNetMissingError, UserError, telling_line
from mxexplorer.core.runtime.nvidia import (
    installed_mxnet_distribution,
    preload_cuda_libraries,
    preload_libmxnet,
)

_lock = threading.Lock()
_log = logging.getLogger(__name__)

def mxnet_installable(version: tuple[int, int] | None = None, system: str | None = None,
                      machine: str | None = None) -> str | None:
    """None where MXNet 1.9.1 can be installed beside this Python, else why not (the
    facts of its wheels: Python 3.9-3.11 because it imports only beside numpy<1.24;
    Linux x86_64/aarch64 and Intel macOS)."""
    import platform

    version = version or sys.version_info[:2]
    system = system or platform.system()
    machine = (machine or platform.machine()).lower()
    if system == "Windows":
        return "MXNet 1.9.1 has no build for Windows (none after 1.7.0)"
    if system == "Darwin" and machine in ("arm64", "aarch64"):
        return "MXNet 1.9.1 has no build for Apple silicon"
    if version >= (3, 12):
        return (f"MXNet 1.9.1 needs numpy<1.24, which has no build for Python "
                f"{version[0]}.{version[1]} (it runs on Python 3.9-3.11)")
    return None


def install_advice(version: tuple[int, int] | None = None, system: str | None = None,
                   machine: str | None = None) -> str:
    """What to do to get MXNet here: the extra to install, or, where MXNet cannot be
    installed, where it can run (every other feature works without it)."""
    import platform

    why = mxnet_installable(version, system, machine)
    if why is None:
        return ("install the cpu extra (pip install 'mxexplorer[cpu]') or, for NVIDIA GPUs, "
                "the gpu extra ('mxexplorer[gpu]')")
    system = system or platform.system()
    machine = (machine or platform.machine()).lower()
    if system == "Windows":
        where = "use WSL 2 (Ubuntu) with Python 3.11 and pip install 'mxexplorer[cpu]' there"
    elif system == "Darwin" and machine in ("arm64", "aarch64"):
        where = ("use an Intel Python 3.11 under Rosetta 2 (arch -x86_64 python3.11 -m venv "
                 "env; env/bin/pip install 'mxexplorer[cpu]') or a Linux machine")
    else:
        where = ("install Python 3.11 beside this one (pyenv, uv python install 3.11, or "
                 "deadsnakes) and pip install 'mxexplorer[cpu]' in a venv of it")
    return f"{why}; {where}"


def import_mxnet() -> ModuleType:
    """Import MXNet once (thread-safe), or raise :class:`MXNetMissingError`."""
    with _lock:
        if "mxnet" in sys.modules and hasattr(sys.modules["mxnet"], "sym"):
            return sys.modules["mxnet"]
        dist = installed_mxnet_distribution()
        if dist is None:
            raise MXNetMissingError(f"MXNet is not installed; {install_advice()}")
        if dist.startswith("mxnet-cu"):
            preload_cuda_libraries()
        os.environ.setdefault("MXNET_SUBGRAPH_VERBOSE", "0")
        preload_libmxnet()
        try:
            mx = importlib.import_module("mxnet")
        except OSError as exc:
            missing = str(exc).split(":")[0]
            if "libcuda.so" in str(exc):
                raise MXNetMissingError(
                    f"{dist} needs the NVIDIA driver (libcuda.so.1), which this machine "
                    "lacks; install the cpu extra instead ('mxexplorer[cpu]')") from None
            raise MXNetMissingError(
                f"{dist} cannot load {missing}; reinstall the gpu extra "
                "('mxexplorer[gpu]')") from None
        except AttributeError as exc:
            fix = "install numpy<1.24" if mxnet_installable() is None else install_advice()
            raise MXNetMissingError(
                f"MXNet does not work with this numpy ({exc}); {fix}") from None
        return mx


def mxnet_available() -> bool:
    return installed_mxnet_distribution() is not None


def list_devices(progress: Any = None, token: Any = None) -> list[Device]:
    """The CPU and every GPU the driver reports, each with its verdict for this MXNet.

    Asks the NVIDIA driver and NVML, not MXNet (no CUDA context is made, MXNet is not
    imported); the GUI calls it in a child process all the same."""
    report = gpu.device_report()
    devices = [Device("cpu", 0, "CPU")]
    for g, verdict in report.gpus:
        devices.append(Device("gpu", g.index, g.name, g.free_bytes, g.total_bytes,
                              g.capability, verdict.runs, verdict.sentence))
    return devices


def context(spec: str, mirrored: bool = False) -> Any:
    """An ``mx.Context`` for ``cpu`` / ``gpu:N``.  A GPU is checked first (one line when
    it is absent or this build cannot run on it) and the settings it needs are made
    (:func:`gpu.run_settings`: fusion off for ``mirrored`` graphs and new GPUs)."""
    kind, index = parse_device(spec)
    if kind == "gpu":
        gpu.run_settings(spec, mirrored)
    mx = import_mxnet()
    if kind == "cpu":
        return mx.cpu()
    try:
        count = int(mx.context.num_gpus())
    except Exception:  # noqa: BLE001 - CPU build or no driver
        count = 0
    if index >= count:
        have = "no GPU" if count == 0 else f"only {count} GPU(s)"
        raise UserError(f"gpu:{index} is not available: MXNet sees {have} on this machine")
    return mx.gpu(index)


def failure(exc: BaseException) -> str:
    """MXNet's exception as one line, its telling line (:func:`errors.telling_line`:
    the first line was "Traceback (most recent call last):"); "out of memory" whatever
    the allocator said around it."""
    text = str(exc).strip()
    if "out of memory" in text.lower():
        return "out of memory"
    return telling_line(text, limit=300) if text else type(exc).__name__


@contextlib.contextmanager
def mxnet_errors(what: str) -> Iterator[None]:
    """Anything MXNet raises inside becomes one :class:`UserError` line, ``what: why``;
    a UserError or a cancellation passes through as it is."""
    try:
        yield
    except UserError:
        raise
    except Exception as exc:  # noqa: BLE001 - out of memory and friends
        if type(exc).__name__ == "Cancelled":
            raise
        raise UserError(f"{what}: {failure(exc)}") from None


def argument_types(sym: Any, dtype: str = "float32",
                   given: Mapping[str, str] | None = None) -> dict[str, str]:
    """A type for every argument of ``sym``, as ``simple_bind`` types them: ``given``
    first, then what MXNet infers from it (float16 data leaves BatchNorm's gamma and
    beta float32: giving them the data's type made MXNet refuse the graph), then
    ``dtype`` for the rest (MXNet cannot infer an index's type: a label fed to
    ``one_hot`` stopped plan and bench with "Index type must be set")."""
    import numpy as np

    given = {k: np.dtype(v).name for k, v in (given or {}).items()}
    names = sym.list_arguments()
    inferred: list[Any] = [None] * len(names)
    if given:
        try:
            found, _, _ = sym.infer_type_partial(**given)
            inferred = list(found or inferred)
        except Exception:  # noqa: BLE001 - MXNet says why when the graph is bound
            pass
    return {name: given.get(name) or (np.dtype(t).name if t is not None else dtype)
            for name, t in zip(names, inferred)}


def fill_for_timing(mx: Any, exe: Any, shapes: Mapping[str, tuple[int, ...]], dev: Any
                    ) -> list[Any]:
    """Values a timed run can use (inputs in [-1, 1], small weights, unit auxiliary
    states) in a bound executor; returns head gradients of ones for backward."""
    for name, arr in exe.arg_dict.items():
        bound = 1.0 if name in shapes else 0.05
        arr[:] = mx.random.uniform(-bound, bound, arr.shape, ctx=dev)
    for arr in exe.aux_dict.values():
        arr[:] = 1.0
    return [mx.nd.ones(o.shape, ctx=dev) for o in exe.outputs]
