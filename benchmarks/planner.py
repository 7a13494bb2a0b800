"""Memory planner on the Gluon model zoo, batch 32, CPU: unplanned cost, the original
memonger search after automatic (cut-vertex) stages, and ours; recompute overhead and
planning time.  Goal: ours <= original on every network, geometric mean of
planned/unplanned <= 0.43 (the original's is 0.480), ResNet-152 planned within 10 s.

Run: ``python benchmarks/planner.py [names...]``.
"""
from __future__ import annotations

import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETS = ["resnet18_v1", "resnet50_v1", "resnet152_v1", "resnet50_v2", "densenet121",
        "inceptionv3", "mobilenetv2_1.0", "squeezenet1.1", "vgg16_bn"]


def main() -> None:
    sys.path.insert(0, ROOT)
    from benchmarks.nets import network
    from mxexplorer.core import memplan
    from mxexplorer.core.document import GraphDocument

    names = sys.argv[1:] or NETS
    print(f"{'network':<16} {'unplanned':>9} {'original':>9} {'ours':>7} {'ours/unpl':>9} "
          f"{'orig/unpl':>9} {'recompute':>9} {'probes':>6} {'time s':>7}")
    ours_ratios, orig_ratios = [], []
    for name in names:
        size = 299 if name.startswith("inception") else 224
        doc = GraphDocument.open(network(name))
        snap = doc.snapshot()
        shapes = {"data": (32, 3, size, size)}
        original = memplan.plan(snap, shapes, stages="auto", mode="original")
        start = time.perf_counter()
        ours = memplan.plan(snap, shapes, stages="auto", mode="best")
        seconds = time.perf_counter() - start
        share = ours.best.recompute_share if ours.best else 0.0
        ours_ratios.append(ours.planned_mb / ours.baseline_mb)
        orig_ratios.append(original.planned_mb / original.baseline_mb)
        print(f"{name:<16} {ours.baseline_mb:>9.0f} {original.planned_mb:>9.0f} "
              f"{ours.planned_mb:>7.0f} {ours_ratios[-1]:>9.3f} {orig_ratios[-1]:>9.3f} "
              f"{share:>9.0%} {len(ours.probes):>6} {seconds:>7.1f}", flush=True)
    geo = math.exp(sum(math.log(r) for r in ours_ratios) / len(ours_ratios))
    geo_orig = math.exp(sum(math.log(r) for r in orig_ratios) / len(orig_ratios))
    print(f"geometric mean planned/unplanned: ours {geo:.3f}, original {geo_orig:.3f}")


if __name__ == "__main__":
    main()
