"""The memory model against MXNet's ``Total N MB allocated`` (batch 32, CPU), unplanned
and with the planner's quick plan: the live peak of :func:`liveness.simulate` and
NNVM's allocator replayed on it (:func:`liveness.mxnet_total_mb`).  Goal (issues 14,
18): within 10 %.

Run: ``python benchmarks/liveness.py [names...]``.
"""
from __future__ import annotations

import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETS = ["resnet18_v1", "resnet50_v1", "resnet152_v1", "resnet50_v2", "densenet121",
        "inceptionv3", "mobilenetv2_1.0", "squeezenet1.1", "vgg16_bn"]


def main() -> None:
    sys.path.insert(0, ROOT)
    from benchmarks.nets import network
    from mxexplorer.core.analysis.shapes import infer_document
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.planning import liveness, memplan

    print(f"{'network':<16} {'MXNet':>7} {'peak':>7} {'alloc':>7} {'error':>7} "
          f"{'planned':>8} {'peak':>7} {'alloc':>7} {'error':>7} {'model ms':>8}")
    for name in sys.argv[1:] or NETS:
        size = 299 if name.startswith("inception") else 224
        doc = GraphDocument.open(network(name))
        shapes = {"data": (32, 3, size, size)}
        result = infer_document(doc, shapes)
        oracle = memplan.CostOracle(shapes)
        base = oracle.cost_of_tags(doc, {})
        start = time.perf_counter()
        alloc = liveness.mxnet_total_mb(doc, result.by_entry)
        ms = (time.perf_counter() - start) * 1000
        peak = liveness.simulate(doc, result.by_entry).peak_mb
        plan = memplan.plan(doc.snapshot(), shapes, stages="auto", mode="quick").best
        tags = plan.tags if plan else {}
        planned = oracle.cost_of_tags(doc, tags)
        peak_p = liveness.simulate(doc, result.by_entry, tags).peak_mb
        alloc_p = liveness.mxnet_total_mb(doc, result.by_entry, tags)
        print(f"{name:<16} {base:>7.0f} {peak:>7.0f} {alloc:>7.0f} {alloc / base - 1:>+7.1%} "
              f"{planned:>8.0f} {peak_p:>7.0f} {alloc_p:>7.0f} {alloc_p / planned - 1:>+7.1%} "
              f"{ms:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
