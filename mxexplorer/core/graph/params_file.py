"""Read the index of an MXNet ``.params`` file (names, shapes, dtypes) without MXNet.

The file is MXNet's NDArray list format (``mx.nd.save``): a magic number, the arrays,
then their names (``arg:conv0_weight``, ``aux:bn0_moving_mean``).  Only headers are
parsed; array bytes are skipped with ``seek``, so the index of a 200 MB checkpoint is
read in milliseconds.  :func:`rename_keys` rewrites the names and copies the arrays
byte for byte.  Must not import Qt or MXNet.
"""
from __future__ import annotations

import os
import re
import stat
import struct
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable

from mxexplorer.core.runtime.errors import SymbolFileError
from mxexplorer.core.runtime.files import open_regular, open_temp, read_errors, save_together

_LIST_MAGIC = 0x112
_V1_MAGIC = 0xF993FAC8
_V2_MAGIC = 0xF993FAC9
_V3_MAGIC = 0xF993FACA
#: MXNet type flags -> (numpy dtype name, bytes per element)
DTYPES = {0: ("float32", 4), 1: ("float64", 8), 2: ("float16", 2), 3: ("uint8", 1),
          4: ("int32", 4), 5: ("int8", 1), 6: ("int64", 8), 7: ("bool", 1),
          8: ("int16", 2), 9: ("uint16", 2), 10: ("uint32", 4), 11: ("uint64", 8),
          12: ("bfloat16", 2)}


@dataclass(frozen=True)
class ParamInfo:
    name: str  # without the arg:/aux: prefix
    kind: str  # "arg", "aux" or "" (no prefix)
    shape: tuple[int, ...]
    dtype: str
    offset: int = -1     # where the dense values start in the file (-1: sparse, empty)


class _Reader:
    def __init__(self, fh: BinaryIO, size: int):
        self.fh = fh
        self.size = size

    def read(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise ValueError("the file ends early (truncated?)")
        return data

    def u32(self) -> int:
        return int(struct.unpack("<I", self.read(4))[0])

    def i32(self) -> int:
        return int(struct.unpack("<i", self.read(4))[0])

    def u64(self) -> int:
        return int(struct.unpack("<Q", self.read(8))[0])

    def skip(self, n: int) -> None:
        if n < 0 or self.fh.tell() + n > self.size:
            raise ValueError("an array runs past the end of the file")
        self.fh.seek(n, os.SEEK_CUR)


#: the most arrays a checkpoint may hold (real ones: a few thousand); a file claiming
#: more is refused before anything is made of it (10 million empty records took 170 s
#: and 2.7 GB)
MAX_ARRAYS = 100_000
#: the largest dimension read (MXNet 1.x's own limit for an axis)
MAX_DIM = 2**31 - 1


def _shape(r: _Reader, wide: bool) -> tuple[int, ...]:
    ndim = r.i32() if wide else r.u32()
    if ndim < 0:
        return ()
    if ndim > 32:
        raise ValueError(f"an array claims {ndim} dimensions")
    fmt = "<q" if wide else "<I"
    size = 8 if wide else 4
    dims = tuple(int(struct.unpack(fmt, r.read(size))[0]) for _ in range(ndim))
    for d in dims:
        if not 0 <= d <= MAX_DIM:
            raise ValueError(f"an array claims a dimension of {d:,}")
    return dims


def _skip_array(r: _Reader) -> tuple[tuple[int, ...], str, int]:
    """(shape, dtype, where its dense data starts; -1 for sparse or empty arrays)"""
    magic = r.u32()
    if magic in (_V2_MAGIC, _V3_MAGIC):
        stype = r.i32()
        nd_aux = {0: 0, 1: 1, 2: 2}.get(stype)  # default, row_sparse, csr
        if nd_aux is None:
            raise ValueError(f"unknown storage type {stype}")
        storage_shape = _shape(r, True) if nd_aux else ()
        shape = _shape(r, True)
        if len(shape) == 0 or (magic == _V3_MAGIC and not shape):
            return shape, "float32", -1
        r.skip(8)  # context: dev_type, dev_id
        type_flag = r.i32()
        aux_info = []
        for _ in range(nd_aux):
            aux_type = r.i32()
            aux_info.append((aux_type, _shape(r, True)))
        dtype, width = DTYPES.get(type_flag, (f"type{type_flag}", 4))
        data_shape = storage_shape if nd_aux else shape
        offset = -1 if nd_aux else r.fh.tell()
        count = 1
        for d in data_shape:
            count *= max(d, 0)
        r.skip(count * width)
        for aux_type, aux_shape in aux_info:
            n = 1
            for d in aux_shape:
                n *= max(d, 0)
            r.skip(n * DTYPES.get(aux_type, ("", 8))[1])
        return shape, dtype, offset
    if magic == _V1_MAGIC:
        shape = _shape(r, True)
    else:  # legacy: the magic was the ndim
        if magic > 32:
            raise ValueError("not an MXNet NDArray")
        shape = tuple(r.u32() for _ in range(magic))
        for d in shape:
            if d > MAX_DIM:
                raise ValueError(f"an array claims a dimension of {d:,}")
    if not shape:
        return shape, "float32", -1
    r.skip(8)
    type_flag = r.i32()
    dtype, width = DTYPES.get(type_flag, (f"type{type_flag}", 4))
    offset = r.fh.tell()
    count = 1
    for d in shape:
        count *= d
    r.skip(count * width)
    return shape, dtype, offset


def _parse(fh: BinaryIO, size: int
           ) -> tuple[list[tuple[tuple[int, ...], str, int]], list[str], int]:
    r = _Reader(fh, size)
    if r.u64() != _LIST_MAGIC:
        raise ValueError("not an MXNet .params file (wrong magic number)")
    r.u64()  # reserved
    count = r.u64()
    if count > MAX_ARRAYS:
        raise ValueError(f"claims {count:,} arrays; at most {MAX_ARRAYS:,} are read")
    arrays = [_skip_array(r) for _ in range(count)]
    names_at = fh.tell()
    n_names = r.u64()
    if n_names not in (0, count):
        raise ValueError(f"{count} arrays but {n_names} names")
    names = []
    for _ in range(n_names):
        length = r.u64()
        if length > 1 << 20:
            raise ValueError("a name is longer than 1 MB")
        names.append(r.read(length).decode("utf-8", errors="replace"))
    return arrays, names, names_at


def read_params_index(path: str) -> list[ParamInfo]:
    """Names, shapes and dtypes stored in a ``.params`` file."""
    try:
        with read_errors(path), open_regular(path) as fh:
            arrays, names, _ = _parse(fh, os.fstat(fh.fileno()).st_size)
    except (ValueError, struct.error) as exc:
        raise SymbolFileError(f"not a readable MXNet .params file: {exc}", path) from None
    out = []
    for i, (shape, dtype, offset) in enumerate(arrays):
        key = names[i] if names else str(i)
        kind, _, name = key.partition(":") if ":" in key else ("", "", key)
        if kind not in ("arg", "aux"):
            kind, name = "", key
        out.append(ParamInfo(name, kind, shape, dtype, offset))
    return out


def read_array(path: str, info: ParamInfo) -> Any:
    """The values of one dense array of an index (a numpy array, read with one seek).

    Raises
    ------
    SymbolFileError : a sparse array, a dtype numpy cannot hold, or a short file.
    """
    import numpy as np

    if info.offset < 0:
        raise SymbolFileError(f"{info.name} is stored sparse or empty", path)
    if info.dtype == "bfloat16" or info.dtype.startswith("type"):
        raise SymbolFileError(f"{info.name} is {info.dtype}, which numpy cannot read", path)
    count = 1
    for d in info.shape:
        count *= d
    with read_errors(path), open_regular(path) as fh:
        fh.seek(info.offset)
        values = np.fromfile(fh, dtype=np.dtype(info.dtype).newbyteorder("<"), count=count)
    if values.size != count:
        raise SymbolFileError(f"{info.name}: the file ends early (truncated?)", path)
    return values.reshape(info.shape)


def renamed_copy(src: str, rename: Callable[[str], str]) -> Callable[[str], None]:
    """A writer (for :func:`files.save_together`) of ``src`` with every name passed
    through ``rename`` (called with the name without its ``arg:``/``aux:`` prefix): the
    arrays are copied byte for byte, a megabyte at a time, then the new names.  The
    index is read now: a damaged file is refused before anything is written."""
    try:
        with read_errors(src), open_regular(src) as fh:
            _, names, names_at = _parse(fh, os.fstat(fh.fileno()).st_size)
    except (ValueError, struct.error) as exc:
        raise SymbolFileError(f"not a readable MXNet .params file: {exc}", src) from None
    out = [struct.pack("<Q", len(names))]
    for key in names:
        kind, sep, name = key.partition(":")
        new = f"{kind}:{rename(name)}" if sep and kind in ("arg", "aux") else rename(key)
        raw = new.encode("utf-8")
        out.append(struct.pack("<Q", len(raw)) + raw)
    tail = b"".join(out)

    def write(tmp: str) -> None:
        fd = open_temp(tmp)
        with open_regular(src) as fh, os.fdopen(fd, "wb") as dst:
            left = names_at
            while left:
                chunk = fh.read(min(left, 1 << 20))
                if not chunk:
                    raise SymbolFileError("the checkpoint changed while it was copied", src)
                dst.write(chunk)
                left -= len(chunk)
            dst.write(tail)
            dst.flush()
            os.fsync(dst.fileno())

    return write


def rename_keys(src: str, dst: str, rename: Callable[[str], str]) -> None:
    """Copy a ``.params`` file to ``dst`` (atomically) with every name passed through
    ``rename`` (:func:`renamed_copy`)."""
    save_together([(dst, renamed_copy(src, rename))])


_EPOCH = re.compile(r"^(?P<prefix>.*)-(?P<epoch>\d{4,})\.params$")


def find_checkpoint(symbol_path: str) -> tuple[str | None, int | None]:
    """For ``prefix-symbol.json`` the newest ``prefix-NNNN.params`` beside it."""
    base = os.path.basename(symbol_path)
    if not base.endswith("-symbol.json"):
        return None, None
    prefix = os.path.join(os.path.dirname(symbol_path), base[:-len("-symbol.json")])
    folder = os.path.dirname(os.path.abspath(symbol_path))
    best: tuple[int, str] | None = None
    try:
        entries = os.listdir(folder)
    except OSError:
        return None, None
    want = os.path.basename(prefix)
    for entry in entries:
        m = _EPOCH.match(entry)
        if m and m.group("prefix") == want:
            try:          # only a regular file is a checkpoint (a FIFO blocked reads)
                if not stat.S_ISREG(os.stat(os.path.join(folder, entry)).st_mode):
                    continue
            except OSError:                  # a dangling link, a symlink loop
                continue
            epoch = int(m.group("epoch"))
            if best is None or epoch > best[0]:
                best = (epoch, os.path.join(os.path.dirname(symbol_path), entry))
    if best is None:
        return None, None
    return best[1], best[0]


def params_path_for(symbol_path: str, epoch: int) -> str | None:
    """``prefix-symbol.json`` -> ``prefix-NNNN.params`` (None for other names)."""
    if not symbol_path.endswith("-symbol.json"):
        return None
    return f"{symbol_path[:-len('-symbol.json')]}-{epoch:04d}.params"


def symbol_for_params(params_path: str) -> str | None:
    """For ``prefix-NNNN.params`` the ``prefix-symbol.json`` beside it, if it exists."""
    m = _EPOCH.match(os.path.basename(params_path))
    if not m:
        return None
    candidate = os.path.join(os.path.dirname(params_path), m.group("prefix") + "-symbol.json")
    return candidate if os.path.exists(candidate) else None
