"""The top-5 MXNet computes for real checkpoint pairs of the corpus, on a seeded input:
the reference the lane without MXNet checks its own export against
(tests/nomxnet/test_onnx.py), and the MXNet lane checks it still holds
(tests/core/convert/own/test_top5.py).

Run (with MXNet): ``python benchmarks/onnx_top5.py`` rewrites ``tests/data/onnx_top5.json``.
"""
from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(ROOT, "tests", "data", "onnx_top5.json")

#: checkpoint pair prefix (in benchmarks/corpus), input shape, input range
PAIRS = [("sm-mxnet-inf__dummy_hosting_model", [1, 1, 28, 28], [0.0, 1.0]),
         ("insightface__model", [1, 3, 112, 112], [0.0, 255.0])]


def seeded_input(shape: list[int], low: float, high: float):
    """The same input on every numpy (PCG64's uniform stream is stable)."""
    import numpy as np

    return np.random.default_rng(0).uniform(low, high, shape).astype("float32")


def mxnet_top5(prefix: str, shape: list[int], low: float, high: float) -> dict:
    import mxnet as mx
    import numpy as np

    path = os.path.join(HERE, "corpus", prefix)
    sym, args, aux = mx.model.load_checkpoint(path, 0)
    x = seeded_input(shape, low, high)
    exe = sym.simple_bind(mx.cpu(), grad_req="null", data=tuple(shape))
    for name, arr in exe.arg_dict.items():
        arr[:] = x if name == "data" else args[name] if name in args else 0
    for name, arr in exe.aux_dict.items():
        arr[:] = aux[name]
    out = exe.forward(is_train=False)[0].asnumpy().reshape(-1)
    top = np.argsort(-out, kind="stable")[:5]
    return {"prefix": prefix, "shape": shape, "range": [low, high],
            "output": sym.list_outputs()[0], "top5": [int(i) for i in top],
            "values": [float(out[i]) for i in top]}


def main() -> int:
    rows = [mxnet_top5(prefix, shape, *span) for prefix, shape, span in PAIRS]
    with open(OUT, "w") as fh:
        json.dump(rows, fh, indent=1)
        fh.write("\n")
    for row in rows:
        print(row["prefix"], row["top5"], [round(v, 4) for v in row["values"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
