"""Print the GPU code a shared library carries (its .nv_fatbin), as JSON.

    python tools/read_fatbin.py path/to/libmxnet.so

How tests/data/fatbin/mxnet-cu112-1.9.1.json was recorded: from the libmxnet.so of
the mxnet_cu112-1.9.1-py3-none-manylinux2014_x86_64.whl wheel (unzip it first; the
library is 891 MB, its .nv_fatbin section 534 MB).  Only headers are read.
"""
from __future__ import annotations

import json
import mmap
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from mxexplorer.core.runtime import gpu  # noqa: E402


def main(path: str) -> None:
    archs = gpu.build_archs(path)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        offset, size = gpu._section(data, b".nv_fatbin") or (0, 0)
        containers, entries = gpu.fatbin_entries(data, offset, offset + size)
    names = {f"{'ptx' if kind == gpu.PTX else 'sm'}_{arch}": n
             for (kind, arch), n in sorted(entries.items())}
    print(json.dumps({"library": os.path.basename(path), "bytes": os.path.getsize(path),
                      "nv_fatbin": {"offset": offset, "bytes": size},
                      "containers": containers, "entries": names,
                      "build": archs.to_dict() | {"path": os.path.basename(path)}},
                     indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
