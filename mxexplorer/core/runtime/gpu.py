"""Which GPUs this MXNet can run on, told before anything runs on one.

* The build's kernels: the SASS and PTX architectures in ``libmxnet.so``'s
  ``.nv_fatbin`` ELF section, read from the file (no GPU, no MXNet import).  mxnet-cu112
  1.9.1 carries SASS for sm_50, 60, 70, 80, 86 and no PTX.
* The machine's GPUs: the NVIDIA driver (``libcuda.so.1``) through ctypes, free memory
  through NVML; nothing is allocated.  Run in a child process (:mod:`isolated`): the
  window never touches a GPU.
* A verdict per GPU: SASS for its architecture, or for an older one of the same major
  (binary compatible), or PTX it can compile; else it cannot run MXNet at all ("no
  kernel image is available") and the sentence says what to use instead.  Newer GPUs
  than the NVRTC knows get ``MXNET_USE_FUSION=0`` (pointwise fusion compiles kernels at
  run time for the GPU's own architecture).

Must not import Qt.  The ctypes calls into the driver and NVML have never run on a GPU
here (no machine with one was at hand): they fail to a plain "no driver" reason.
"""
from __future__ import annotations

import collections
import ctypes
import functools
import json
import mmap
import os
import struct
from dataclasses import asdict, dataclass, field
from typing import Union

from mxexplorer.core.runtime.devices import parse_device
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.files import read_regular
from mxexplorer.core.runtime.nvidia import mxnet_library, nvidia_roots

Buffer = Union[bytes, mmap.mmap]

FATBIN_MAGIC = 0xBA55ED50
PTX, SASS = 1, 2

#: the highest virtual architecture each NVRTC compiles for (fusion needs it)
NVRTC_MAX_ARCH = {(11, 0): 80, (11, 1): 86, (11, 2): 86, (11, 8): 90, (12, 0): 90,
                  (12, 8): 120}
#: what to use on a GPU this build cannot run
INSTEAD = ("NVIDIA's MXNet container 24.06 (MXNet 1.9.1 with CUDA 12.4) runs on it; or plan "
           "on the CPU: a plan's tags are the same, only its MB figure differs")


@dataclass(frozen=True)
class BuildArchs:
    """The GPU code a library carries: SASS (machine code) and PTX (compiled at load)."""

    path: str
    sass: tuple[int, ...] = ()
    ptx: tuple[int, ...] = ()

    @property
    def has_gpu_code(self) -> bool:
        return bool(self.sass or self.ptx)

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "sass": list(self.sass), "ptx": list(self.ptx)}

    def describe(self) -> str:
        if not self.has_gpu_code:
            return "no GPU code (a CPU build)"
        sass = ", ".join(f"sm_{a}" for a in self.sass) or "none"
        ptx = ", ".join(f"compute_{a}" for a in self.ptx) or "none"
        return f"SASS {sass}; PTX {ptx}"


def _section(data: Buffer, name: bytes) -> tuple[int, int] | None:
    """(offset, size) of ELF64 section ``name`` in ``data`` (None: absent, not ELF64)."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    endian = "<" if data[5] == 1 else ">"
    shoff, = struct.unpack_from(endian + "Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", data, 0x3A)
    if not shoff or shentsize < 64 or shstrndx >= shnum \
            or shoff + shnum * shentsize > len(data):
        return None

    def header(k: int) -> tuple[int, int, int]:
        base = shoff + k * shentsize
        name_off, = struct.unpack_from(endian + "I", data, base)
        offset, size = struct.unpack_from(endian + "QQ", data, base + 0x18)
        return name_off, offset, size

    _, str_off, str_size = header(shstrndx)
    names = bytes(data[str_off:str_off + str_size])
    for k in range(shnum):
        name_off, offset, size = header(k)
        end = names.find(b"\0", name_off)
        if names[name_off:end] == name and offset + size <= len(data):
            return offset, size
    return None


def fatbin_entries(blob: Buffer, start: int = 0, stop: int | None = None
                   ) -> tuple[int, collections.Counter[tuple[int, int]]]:
    """(containers, count of (kind, architecture) entries) of the fat binaries in
    ``blob[start:stop]``.  A container: a 16-byte header (magic, version, header size,
    size), then entries each with its kind (1 PTX, 2 ELF) and architecture at byte 28
    and its own header and payload sizes.  Only headers are read."""
    entries: collections.Counter[tuple[int, int]] = collections.Counter()
    containers = 0
    pos = start
    limit = len(blob) if stop is None else min(stop, len(blob))
    while pos + 16 <= limit:
        magic, _, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8                      # containers sit on 8-byte boundaries
            continue
        containers += 1
        entry = pos + header_size
        end = min(pos + header_size + fat_size, limit)
        while entry + 32 <= end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", blob, entry)
            arch, = struct.unpack_from("<I", blob, entry + 28)
            entries[(kind, arch)] += 1
            if entry_header <= 0:
                break
            entry += entry_header + payload
        pos = max(end, pos + 8)
    return containers, entries


def parse_fatbin(blob: Buffer, start: int = 0, stop: int | None = None
                 ) -> tuple[set[int], set[int]]:
    """(SASS architectures, PTX architectures) of the fat binaries in ``blob``."""
    _, entries = fatbin_entries(blob, start, stop)
    return ({arch for kind, arch in entries if kind == SASS},
            {arch for kind, arch in entries if kind == PTX})


def build_archs(path: str) -> BuildArchs:
    """What GPU code the library at ``path`` carries (its ``.nv_fatbin``).  The file is
    mapped, not read: only the headers are touched (libmxnet.so of mxnet-cu112 is
    over a gigabyte)."""
    stat = os.stat(path)
    return _build_archs(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _build_archs(path: str, size: int, mtime: int) -> BuildArchs:
    if size < 64:
        return BuildArchs(path)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        where = _section(data, b".nv_fatbin")
        if where is None:
            return BuildArchs(path)
        offset, length = where
        sass, ptx = parse_fatbin(data, offset, offset + length)
    return BuildArchs(path, tuple(sorted(sass)), tuple(sorted(ptx)))


@dataclass(frozen=True)
class Verdict:
    runs: bool
    sentence: str                                   # why (and, when not, what instead)
    env: dict[str, str] = field(default_factory=dict)   # settings MXNet needs there


def verdict(capability: tuple[int, int], archs: BuildArchs, nvrtc_max: int | None
            ) -> Verdict:
    """Whether code of ``archs`` runs on a GPU of compute ``capability`` (8, 6)."""
    major, minor = capability
    cc = major * 10 + minor
    if not archs.has_gpu_code:
        return Verdict(False, "cannot run this MXNet: it is a CPU build; install the gpu "
                              "extra ('mxexplorer[gpu]') for NVIDIA GPUs")
    sass = [a for a in archs.sass if a // 10 == major and a <= cc]
    ptx = [a for a in archs.ptx if a <= cc]
    if not sass and not ptx:
        def cc_list(archs_: tuple[int, ...]) -> str:
            return ", ".join(f"{a // 10}.{a % 10}" for a in archs_)

        ptx_words = (f"PTX only for {cc_list(archs.ptx)}" if archs.ptx
                     else f"no PTX to compile for {major}.{minor}")
        return Verdict(False, f"cannot run this MXNet: its kernels are built for compute "
                              f"capabilities {cc_list(archs.sass) or 'none'} only, with "
                              f"{ptx_words} (\"no kernel image is available\"); {INSTEAD}")
    how = f"sm_{max(sass)} machine code" if sass else f"compute_{max(ptx)} PTX, compiled at load"
    env: dict[str, str] = {}
    note = ""
    if nvrtc_max is None or cc > nvrtc_max:
        env["MXNET_USE_FUSION"] = "0"
        why = (f"this NVRTC compiles up to compute_{nvrtc_max}" if nvrtc_max
               else "no NVRTC was found to compile for it")
        note = f"; pointwise fusion off (MXNET_USE_FUSION=0): {why}"
    return Verdict(True, f"runs ({how}){note}", env)


# ------------------------------------------------------------------ the machine
@dataclass(frozen=True)
class Gpu:
    index: int
    name: str
    capability: tuple[int, int]
    free_bytes: int | None
    total_bytes: int | None


def _driver() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None


#: a machine to report instead of asking the driver and reading libmxnet.so: the JSON
#: that ``mxexplorer doctor --json`` prints on a bug reporter's machine (its ``gpus``,
#: ``build`` and ``nvrtc_max``), so their device list and verdicts are reproduced
#: anywhere; the tests' GPUs come from such files
RECORDED_ENV = "MXEXPLORER_RECORDED_GPUS"


@dataclass(frozen=True)
class Recorded:
    gpus: list[Gpu]
    archs: BuildArchs | None
    nvrtc_max: int | None


def recorded_machine(path: str) -> Recorded:
    """A doctor report's machine; a one-line error when the file is not one."""

    try:
        # a bounded read of a regular file: this variable could name /dev/zero
        data = json.loads(read_regular(path, 16 << 20).decode("utf-8"))
        rows = data["gpus"]
        gpus = [Gpu(int(r["index"]), str(r["name"]),
                    (int(r["capability"][0]), int(r["capability"][1])),
                    None if r.get("free_bytes") is None else int(r["free_bytes"]),
                    None if r.get("total_bytes") is None else int(r["total_bytes"]))
                for r in rows]
        build = data.get("build")
        archs = None if build is None else BuildArchs(
            str(build.get("path", path)), tuple(int(a) for a in build.get("sass", ())),
            tuple(int(a) for a in build.get("ptx", ())))
        nvrtc = data.get("nvrtc_max")
        return Recorded(gpus, archs, None if nvrtc is None else int(nvrtc))
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError,
            OverflowError, RecursionError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UserError(f"{RECORDED_ENV}={path}: not a doctor report of GPUs "
                        f"({type(exc).__name__}: {why[:120]})") from None


def query_gpus() -> tuple[list[Gpu], str]:
    """The GPUs the NVIDIA driver reports, and a reason when there are none."""
    cuda = _driver()
    if cuda is None:
        return [], "no NVIDIA driver (libcuda.so.1 is not on this machine)"
    if cuda.cuInit(0) != 0:
        return [], "the NVIDIA driver did not start (cuInit failed)"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return [], "the NVIDIA driver reports no GPU"
    devices = []
    for index in range(count.value):
        device = ctypes.c_int(0)
        if cuda.cuDeviceGet(ctypes.byref(device), index) != 0:
            continue
        bus_id = ctypes.create_string_buffer(32)
        cuda.cuDeviceGetPCIBusId(bus_id, 32, device)
        devices.append((index, device, bus_id.value))
    memory = _nvml_memory([bus for _, _, bus in devices])
    gpus = []
    for index, device, bus in devices:
        name = ctypes.create_string_buffer(256)
        cuda.cuDeviceGetName(name, 256, device)
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        cuda.cuDeviceGetAttribute(ctypes.byref(major), 75, device)   # CC major
        cuda.cuDeviceGetAttribute(ctypes.byref(minor), 76, device)   # CC minor
        total = ctypes.c_size_t(0)
        cuda.cuDeviceTotalMem_v2(ctypes.byref(total), device)
        free = memory.get(bus, (None, None))[0]
        gpus.append(Gpu(index, name.value.decode(errors="replace") or "NVIDIA GPU",
                        (major.value, minor.value), free, int(total.value) or None))
    return gpus, ""


class _NvmlMemory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong),
                ("used", ctypes.c_ulonglong)]


def _nvml_memory(bus_ids: list[bytes]) -> dict[bytes, tuple[int, int]]:
    """Free and total memory of each GPU by PCI bus id, from NVML: no CUDA context,
    nothing allocated.  By bus id because NVML numbers GPUs in PCI order and ignores
    CUDA_VISIBLE_DEVICES, CUDA does neither."""
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return {}
    if nvml.nvmlInit_v2() != 0:
        return {}
    out = {}
    try:
        for bus in bus_ids:
            handle = ctypes.c_void_p()
            if nvml.nvmlDeviceGetHandleByPciBusId_v2(bus, ctypes.byref(handle)) != 0:
                continue
            info = _NvmlMemory()
            if nvml.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(info)) == 0:
                out[bus] = (int(info.free), int(info.total))
    finally:
        nvml.nvmlShutdown()
    return out


def free_bytes(index: int) -> int | None:
    """Free memory of CUDA device ``index`` without making a CUDA context (NVML):
    read before MXNet's first GPU call, it tells what the context itself takes."""
    if os.environ.get(RECORDED_ENV):
        return None
    cuda = _driver()
    if cuda is None or cuda.cuInit(0) != 0:
        return None
    device = ctypes.c_int(0)
    if cuda.cuDeviceGet(ctypes.byref(device), index) != 0:
        return None
    bus = ctypes.create_string_buffer(32)
    if cuda.cuDeviceGetPCIBusId(bus, 32, device) != 0:
        return None
    return _nvml_memory([bus.value]).get(bus.value, (None, None))[0]


def nvrtc_max_arch() -> int | None:
    """The highest architecture the NVRTC MXNet would use compiles for (None: none
    found).  Reads the library's version; the wheels put it under nvidia/cuda_nvrtc."""
    import glob

    candidates = [p for root in nvidia_roots()
                  for p in sorted(glob.glob(os.path.join(root, "cuda_nvrtc", "lib",
                                                         "libnvrtc.so.11*")))]
    for path in candidates + ["libnvrtc.so.11.2"]:
        try:
            nvrtc = ctypes.CDLL(path)
        except OSError:
            continue
        major, minor = ctypes.c_int(0), ctypes.c_int(0)
        if nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) != 0:
            continue
        version = (major.value, minor.value)
        known = [v for k, v in NVRTC_MAX_ARCH.items() if k <= version]
        return max(known) if known else None
    return None


@dataclass(frozen=True)
class DeviceReport:
    """What the device list shows: each GPU with its verdict, and why there are none."""

    archs: BuildArchs | None
    gpus: tuple[tuple[Gpu, Verdict], ...]
    reason: str
    nvrtc_max: int | None


def device_report(progress: object = None, token: object = None) -> DeviceReport:
    """The machine's GPUs and whether this MXNet runs on each (call it in a child)."""
    recorded_path = os.environ.get(RECORDED_ENV)
    if recorded_path:
        recorded = recorded_machine(recorded_path)
        archs = recorded.archs
        if archs is None:
            library = mxnet_library()
            archs = build_archs(library) if library else None
        judged = tuple((g, verdict(g.capability, archs or BuildArchs(""), recorded.nvrtc_max))
                       for g in recorded.gpus)
        return DeviceReport(archs, judged, "" if judged else f"no GPU in {recorded_path}",
                            recorded.nvrtc_max)
    library = mxnet_library()
    archs = build_archs(library) if library else None
    gpus, reason = query_gpus()
    nvrtc = nvrtc_max_arch() if gpus else None
    judged = tuple((g, verdict(g.capability, archs or BuildArchs(""), nvrtc)) for g in gpus)
    if library is None:
        reason = reason or "MXNet is not installed"
    return DeviceReport(archs, judged, reason, nvrtc)


def gpu_dict(gpu: Gpu) -> dict[str, object]:
    """A GPU as :data:`RECORDED_ENV` reads it back."""
    return asdict(gpu)


def require_runnable(index: int, report: DeviceReport) -> Verdict:
    """The verdict for ``gpu:index``, or UserError with its sentence."""

    for gpu, judged in report.gpus:
        if gpu.index == index:
            if not judged.runs:
                raise UserError(f"gpu:{index} ({gpu.name}, compute capability "
                                f"{gpu.capability[0]}.{gpu.capability[1]}) {judged.sentence}")
            return judged
    have = (f"this machine has {len(report.gpus)} GPU(s), numbered from 0" if report.gpus
            else report.reason or "no GPU")
    raise UserError(f"gpu:{index} is not available: {have}")


def mirrored(graph_json: str) -> bool:
    """Whether any node of the graph is tagged for recomputation in backward."""
    data = json.loads(graph_json)
    for node in data.get("nodes", []) if isinstance(data, dict) else []:
        attrs = node.get("attrs") or node.get("attr") or {}
        if isinstance(attrs, dict) and str(attrs.get("__force_mirroring__",
                                                     attrs.get("force_mirroring", ""))
                                           ).lower() in ("true", "1"):
            return True
    return False


def check(ctx: str) -> Verdict | None:
    """The verdict for device ``ctx`` (None for the CPU); a GPU that is absent or that
    this build cannot run is refused in one line.  Asks the driver, not MXNet."""

    kind, index = parse_device(ctx)
    return require_runnable(index, device_report()) if kind == "gpu" else None


def run_settings(ctx: str, mirrored: bool = False) -> dict[str, str]:
    """The MXNet settings a run on ``ctx`` needs, checked first: a GPU this build
    cannot run on is refused in one line; pointwise fusion is off for ``mirrored``
    graphs (see :func:`mirrored`) and for GPUs newer than the NVRTC knows.  The
    settings are put in ``os.environ`` (MXNet reads ``MXNET_USE_FUSION`` at every bind)
    and returned, for the report.  Called in the child that binds; the CPU needs nothing."""
    judged = check(ctx)
    if judged is None:
        return {}
    settings = dict(judged.env)
    if mirrored:
        settings["MXNET_USE_FUSION"] = "0"
    os.environ.update(settings)
    return settings
