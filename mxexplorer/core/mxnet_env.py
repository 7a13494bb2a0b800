"""Loading MXNet lazily, and the devices it offers.

Owns the one place that imports ``mxnet``: the window appears before MXNet is
loaded, and a missing MXNet becomes one line naming the extra to install.  For the
``gpu`` extra (mxnet-cu112) it preloads the CUDA 11 runtime libraries from the
``nvidia-*-cu11`` wheels with ``RTLD_GLOBAL`` so no ``LD_LIBRARY_PATH`` is needed.
Must not import Qt.
"""
from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib
import importlib.metadata
import logging
import os
import sys
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterator

from mxexplorer.core.errors import MXNetMissingError, UserError, telling_line

_lock = threading.Lock()
_log = logging.getLogger(__name__)

#: Load order of the CUDA 11 runtime libraries mxnet-cu112 links against.
_CUDA_LIBS = [
    ("cuda_runtime", "libcudart.so.11*"),
    ("cublas", "libcublasLt.so.11*"),
    ("cublas", "libcublas.so.11*"),
    ("cufft", "libcufft.so.10*"),
    ("curand", "libcurand.so.10*"),
    ("cusolver", "libcusolver.so.11*"),
    ("cuda_nvrtc", "libnvrtc.so.11*"),
    ("nvtx", "libnvToolsExt.so.1*"),
    ("nccl", "libnccl.so.2*"),
    ("cudnn", "libcudnn*.so.8*"),
]


def installed_mxnet_distribution() -> str | None:
    """``mxnet``, ``mxnet-cu112`` ... whichever distribution provides the module."""
    for dist in ("mxnet", "mxnet-cu112", "mxnet-cu110", "mxnet-cu102", "mxnet-mkl"):
        try:
            importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
        return dist
    return None


def _nvidia_roots() -> list[str]:
    roots = []
    for base in sys.path:
        path = os.path.join(base, "nvidia")
        if os.path.isdir(path):
            roots.append(path)
    return roots


def preload_cuda_libraries() -> list[str]:
    """dlopen the CUDA wheels' libraries by path, in dependency order.

    Returns the files loaded.  Missing ones are skipped: MXNet's import then names the
    first library it cannot find, which :func:`import_mxnet` turns into one line.
    """
    loaded = []
    roots = _nvidia_roots()
    for package, pattern in _CUDA_LIBS:
        for root in roots:
            for path in sorted(glob.glob(os.path.join(root, package, "lib", pattern))):
                try:
                    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                    loaded.append(path)
                except OSError as exc:  # pragma: no cover - depends on the machine
                    _log.debug("could not preload %s: %s", path, exc)
    return loaded


def preload_libmxnet() -> bool:
    """dlopen libmxnet.so through a ctypes call, which releases the GIL.

    MXNet's own ``ctypes.CDLL`` holds the GIL while the library loads and runs its
    static initialisers (about a tenth of a second, more on a busy machine): any other
    thread wanting Python waits, the GUI thread included.  Loaded here first, MXNet's
    dlopen of the same path just takes another reference.  Returns whether it loaded.
    """
    from mxexplorer.core.gpu import mxnet_library

    path = mxnet_library()
    if path is None:
        return False
    try:
        dlopen = ctypes.CDLL(None).dlopen
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        return False
    dlopen.restype = ctypes.c_void_p
    dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
    return bool(dlopen(os.fsencode(path), os.RTLD_NOW | os.RTLD_LOCAL))


def import_mxnet() -> ModuleType:
    """Import MXNet once (thread-safe), or raise :class:`MXNetMissingError`."""
    with _lock:
        if "mxnet" in sys.modules and hasattr(sys.modules["mxnet"], "sym"):
            return sys.modules["mxnet"]
        dist = installed_mxnet_distribution()
        if dist is None:
            raise MXNetMissingError(
                "MXNet is not installed; install the cpu extra (pip install "
                "'mxexplorer[cpu]') or, for NVIDIA GPUs, the gpu extra ('mxexplorer[gpu]')")
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
            raise MXNetMissingError(
                f"MXNet does not work with this numpy ({exc}); install numpy<1.24") from None
        return mx


def mxnet_available() -> bool:
    return installed_mxnet_distribution() is not None


@dataclass(frozen=True)
class Device:
    """A context to compute on, and whether this MXNet can run there (and why not)."""

    kind: str  # "cpu" or "gpu"
    index: int
    name: str
    free_bytes: int | None = None
    total_bytes: int | None = None
    capability: tuple[int, int] | None = None
    runs: bool = True
    why: str = ""               # the verdict's sentence (why not; or what is set there)

    @property
    def label(self) -> str:
        if self.kind == "cpu":
            return "CPU"
        facts = [f"{self.capability[0]}.{self.capability[1]}"] if self.capability else []
        if self.free_bytes is not None and self.total_bytes is not None:
            facts.append(f"{self.free_bytes / 2**30:.1f} of {self.total_bytes / 2**30:.1f} "
                         "GiB free")
        elif self.total_bytes is not None:
            facts.append(f"{self.total_bytes / 2**30:.1f} GiB")
        if not self.runs:
            facts.append("cannot run this MXNet")
        return f"GPU {self.index}: {self.name}" + (f" ({', '.join(facts)})" if facts else "")

    @property
    def spec(self) -> str:
        return "cpu" if self.kind == "cpu" else f"gpu:{self.index}"


def parse_device(spec: str) -> tuple[str, int]:
    """``cpu``, ``gpu``, ``gpu:1`` -> (kind, index); a clear error otherwise."""
    text = spec.strip().lower()
    if text in ("cpu", "cpu:0"):
        return "cpu", 0
    if text == "gpu":
        return "gpu", 0
    if text.startswith("gpu:") and text[4:].isdigit() and len(text) < 10:
        return "gpu", int(text[4:])
    raise UserError(f"unknown device {spec!r}: use cpu, gpu or gpu:N")


def list_devices(progress: Any = None, token: Any = None) -> list[Device]:
    """The CPU and every GPU the driver reports, each with its verdict for this MXNet.

    Asks the NVIDIA driver and NVML, not MXNet (no CUDA context is made, MXNet is not
    imported); the GUI calls it in a child process all the same."""
    from mxexplorer.core import gpu

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
    from mxexplorer.core import gpu

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
