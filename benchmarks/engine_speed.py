"""Shape inference in-process with the engine against MXNet's: seconds per graph.

For each graph: the engine (``infer_document(use_mxnet=False)`` on an opened document,
what the window, the CLI and the API now do; once after an edit, every cache of the
document rebuilt, and once with new input shapes on the same graph, the shape form's
case) against MXNet 1.9.1 answering the same question, both as it did in-process once
imported (``infer_with_mxnet``) and as a fresh child process that imports MXNet first
(what a caller without MXNet loaded pays).
Graphs: ResNet-152 (the Gluon zoo's, exported here), the 1001-layer ResNet of
``benchmarks/nets.py``, the largest real file of the corpora (ParaBank's unrolled
sequence-to-sequence model, 18,451 nodes) and a 261,001-node residual chain written as
JSON here.

Run with MXNet installed: ``python benchmarks/engine_speed.py [--repeat 5] [--skip-child]``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

CHILD = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.perf_counter()
import mxnet as mx
t1 = time.perf_counter()
sym = mx.sym.load(sys.argv[1]).get_internals()
shapes = json.loads(sys.argv[2])
sym.infer_shape_partial(**{k: tuple(v) for k, v in shapes.items()})
import numpy as np
sym.infer_type_partial(**{k: np.float32 for k in shapes})
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "infer": t2 - t1}))
"""


def chain(blocks: int, width: int = 64) -> dict:
    """A residual MLP of ``blocks`` blocks (FullyConnected, relu, add): 5 nodes each."""
    nodes = [{"op": "null", "name": "data", "inputs": []}]
    prev = 0
    for b in range(blocks):
        base = len(nodes)
        nodes += [
            {"op": "null", "name": f"fc{b}_weight", "inputs": []},
            {"op": "null", "name": f"fc{b}_bias", "inputs": []},
            {"op": "FullyConnected", "name": f"fc{b}",
             "attrs": {"num_hidden": str(width)},
             "inputs": [[prev, 0, 0], [base, 0, 0], [base + 1, 0, 0]]},
            {"op": "Activation", "name": f"relu{b}", "attrs": {"act_type": "relu"},
             "inputs": [[base + 2, 0, 0]]},
            {"op": "elemwise_add", "name": f"add{b}",
             "inputs": [[base + 3, 0, 0], [prev, 0, 0]]},
        ]
        prev = base + 4
    return {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
            "heads": [[prev, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}


def graphs(folder: str) -> list[tuple[str, str, dict[str, list[int]]]]:
    import mxnet as mx
    from mxnet.gluon.model_zoo import vision

    from benchmarks import nets

    out = []
    path = os.path.join(folder, "resnet152_v1-symbol.json")
    net = vision.get_model("resnet152_v1", pretrained=False)
    net.initialize()
    net.hybridize()
    net(mx.nd.zeros((1, 3, 224, 224)))
    net.export(os.path.join(folder, "resnet152_v1"))
    out.append(("ResNet-152", path, {"data": [32, 3, 224, 224]}))
    path = os.path.join(folder, "resnet1001-symbol.json")
    with open(path, "w") as fh:
        fh.write(nets.resnet_cifar(1001).tojson())
    out.append(("1001-layer ResNet", path, {"data": [64, 3, 32, 32]}))
    # the largest real file of the corpora (18,451 nodes, 22,747 internals), when
    # ../shared/corpus is beside the clone
    path = os.path.join(ROOT, os.pardir, "shared", "corpus",
                        "decompositional-semantics-initiative__ParaBank-rewriter__symbol.json")
    if os.path.exists(path):
        out.append(("ParaBank (corpus)", path,
                    {"source": [1, 100, 1], "target": [1, 100], "target_label": [1, 100]}))
    path = os.path.join(folder, "chain-symbol.json")
    with open(path, "w") as fh:
        json.dump(chain(52_200), fh)
    out.append(("261k-node chain", path, {"data": [32, 64]}))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-child", action="store_true")
    args = parser.parse_args()
    from mxexplorer.core.analysis import mxnet_shapes as M
    from mxexplorer.core.analysis import shapes as S
    from mxexplorer.core.graph.document import GraphDocument

    with tempfile.TemporaryDirectory() as folder:
        for label, path, given in graphs(folder):
            doc = GraphDocument.open(path, use_mxnet=False)
            shapes = {k: tuple(v) for k, v in given.items()}
            engine, again, mxnet = [], [], []
            for run in range(args.repeat):
                doc.revision += 1           # an edit: every cache of the document rebuilt
                t = time.perf_counter()
                ours = S.infer_document(doc, shapes, use_mxnet=False)
                engine.append(time.perf_counter() - t)
                other = {k: (v[0] + run + 1,) + tuple(v[1:]) for k, v in shapes.items()}
                t = time.perf_counter()     # the form's case: new input shapes, same graph
                S.infer_document(doc, other, use_mxnet=False)
                again.append(time.perf_counter() - t)
                t = time.perf_counter()
                theirs = M.infer_with_mxnet(doc, doc.to_json(indent=None), shapes)
                mxnet.append(time.perf_counter() - t)
            assert ours.internal_shapes == theirs.internal_shapes, label
            child = []
            if not args.skip_child:
                for _ in range(args.repeat):
                    t = time.perf_counter()
                    subprocess.run([sys.executable, "-c", CHILD, path, json.dumps(given)],
                                   check=True, capture_output=True)
                    child.append(time.perf_counter() - t)
            e, m = statistics.median(engine), statistics.median(mxnet)
            a = statistics.median(again)
            line = (f"{label:<20} {len(doc.nodes):>8,} nodes  engine {e:7.3f} s "
                    f"(new shapes {a:7.3f} s)  MXNet in-process {m:7.3f} s ({m / e:5.1f}x)")
            if child:
                c = statistics.median(child)
                line += f"  MXNet child {c:7.3f} s ({c / e:5.1f}x; {c / a:5.1f}x)"
            print(line + f"  [{len(ours.internal_shapes):,} internals, equal]", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
