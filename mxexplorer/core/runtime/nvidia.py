"""Finding MXNet's library and the CUDA 11 runtime wheels, and loading them, without
importing MXNet: for the ``gpu`` extra (mxnet-cu112) the CUDA libraries of the
``nvidia-*-cu11`` wheels are preloaded with ``RTLD_GLOBAL`` so no
``LD_LIBRARY_PATH`` is needed."""
from __future__ import annotations

import ctypes
import glob
import importlib.metadata
import importlib.util
import logging
import os
import sys

_log = logging.getLogger(__name__)

#: Load order of the CUDA 11 runtime libraries mxnet-cu112 links against.
CUDA_LIBS = [
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


def nvidia_roots() -> list[str]:
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
    roots = nvidia_roots()
    for package, pattern in CUDA_LIBS:
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


def mxnet_library() -> str | None:
    """Where the installed MXNet's ``libmxnet.so`` is (without importing MXNet)."""
    try:
        spec = importlib.util.find_spec("mxnet")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], "libmxnet.so")
    return path if os.path.exists(path) else None
