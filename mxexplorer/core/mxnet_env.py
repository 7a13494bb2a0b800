"""Loading MXNet lazily, and the devices it offers.

Owns the one place that imports ``mxnet``: the window appears before MXNet is
loaded, and a missing MXNet becomes one line naming the extra to install.  For the
``gpu`` extra (mxnet-cu112) it preloads the CUDA 11 runtime libraries from the
``nvidia-*-cu11`` wheels with ``RTLD_GLOBAL`` so no ``LD_LIBRARY_PATH`` is needed.
Must not import Qt.
"""
from __future__ import annotations

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
from typing import Any

from mxexplorer.core.errors import MXNetMissingError, UserError

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
    import importlib.util

    try:
        spec = importlib.util.find_spec("mxnet")
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    path = os.path.join(list(spec.submodule_search_locations)[0], "libmxnet.so")
    if not os.path.exists(path):
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
    """A context MXNet can compute on."""

    kind: str  # "cpu" or "gpu"
    index: int
    name: str
    free_bytes: int | None = None
    total_bytes: int | None = None

    @property
    def label(self) -> str:
        if self.kind == "cpu":
            return "CPU"
        mem = ""
        if self.free_bytes is not None and self.total_bytes is not None:
            mem = f" ({self.free_bytes / 2**30:.1f} of {self.total_bytes / 2**30:.1f} GiB free)"
        return f"GPU {self.index}: {self.name}{mem}"

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
    if text.startswith("gpu:") and text[4:].isdigit():
        return "gpu", int(text[4:])
    raise UserError(f"unknown device {spec!r}: use cpu, gpu or gpu:N")


def _gpu_name(index: int) -> str:
    try:
        cudart = ctypes.CDLL("libcudart.so.11.0")
    except OSError:
        return "NVIDIA GPU"
    buf = ctypes.create_string_buffer(1024)
    # cudaDeviceProp starts with char name[256]; the struct is < 1 KB in CUDA 11.
    if cudart.cudaGetDeviceProperties(buf, index) != 0:
        return "NVIDIA GPU"
    return buf.raw[:256].split(b"\0", 1)[0].decode(errors="replace") or "NVIDIA GPU"


def list_devices() -> list[Device]:
    """The CPU and every GPU MXNet sees, each with free/total memory when known."""
    devices = [Device("cpu", 0, "CPU")]
    try:
        mx = import_mxnet()
        count = int(mx.context.num_gpus())
    except (MXNetMissingError, Exception):  # noqa: BLE001 - no GPU runtime: CPU only
        return devices
    for i in range(count):
        free = total = None
        try:
            free, total = mx.context.gpu_memory_info(i)
        except Exception:  # noqa: BLE001 - device busy or lost
            pass
        devices.append(Device("gpu", i, _gpu_name(i), free, total))
    return devices


def context(spec: str) -> Any:
    """An ``mx.Context`` for ``cpu`` / ``gpu:N``; a one-line error when the GPU is absent."""
    kind, index = parse_device(spec)
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
