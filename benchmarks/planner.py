"""Memory planner on the Gluon model zoo, batch 32, CPU: unplanned cost, the original
memonger search after automatic (cut-vertex) stages, and ours; what our least-memory
plan recomputes (read from MXNet's report), the points of the memory-recompute front,
probes and planning time.  Goals (issue 18): ours <= original on every network,
geometric mean of planned/unplanned <= 0.40 (the original's is 0.480); ResNet-152
within 3 s and the 1001-layer ResNet (batch 64, its hand tags) within 10 s.

Run: ``python benchmarks/planner.py [--untuned] [--twice] [--fast|--thorough] [names...]``:
``--untuned`` the six networks the search was never tuned on, ``--twice`` plans each
twice and says whether the plans are identical (they must be: the search counts probes
and model calls, not seconds), ``--fast`` and ``--thorough`` those searches;
``resnet1001_tagged`` is the memonger paper's case.
"""
from __future__ import annotations

import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETS = ["resnet18_v1", "resnet50_v1", "resnet152_v1", "resnet50_v2", "densenet121",
        "inceptionv3", "mobilenetv2_1.0", "squeezenet1.1", "vgg16_bn"]
UNTUNED = ["resnet34_v1", "resnet101_v2", "densenet169", "vgg19_bn", "mobilenet1.0",
           "squeezenet1.0"]


def main() -> None:
    sys.path.insert(0, ROOT)
    from benchmarks.nets import network
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.planning import memplan, plansearch

    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    mode = "fast" if "--fast" in flags else "thorough" if "--thorough" in flags else "best"
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or \
        (UNTUNED if "--untuned" in flags else NETS)
    print(f"{'network':<16} {'unplanned':>9} {'original':>9} {'ours':>7} {'ours/unpl':>9} "
          f"{'orig/unpl':>9} {'recompute':>9} {'front':>5} {'probes':>6} {'time s':>7} "
          f"{'exported':>8}"
          + ("  same twice" if "--twice" in flags else ""))
    ours_ratios, orig_ratios = [], []
    for name in names:
        size = 299 if name.startswith("inception") else 224
        doc = GraphDocument.open(network(name))
        snap = doc.snapshot()
        shapes = {"data": (32, 3, size, size)}
        stages = "auto"
        if name == "resnet1001_tagged":      # the memonger paper's case: its hand tags
            shapes, stages = {"data": (64, 3, 32, 32)}, "file"
        original = memplan.plan(snap, shapes, stages=stages, mode="original")
        start = time.perf_counter()
        ours = memplan.plan(snap, shapes, stages=stages, mode=mode)
        seconds = time.perf_counter() - start
        share = ours.best.recompute_share if ours.best else 0.0
        # the exported JSON, loaded and bound afresh, costs what the plan promised
        exported = memplan.CostOracle(shapes)(memplan.planned_json(snap, ours))
        checked = "yes" if abs(exported - ours.planned_mb) <= 1 else f"{exported:.0f}"
        same = ""
        if "--twice" in flags:
            again = memplan.plan(snap, shapes, stages=stages, mode=mode)
            same = "  " + str([(p.kept, p.cost_mb) for p in again.probes]
                              == [(p.kept, p.cost_mb) for p in ours.probes])
        ours_ratios.append(ours.planned_mb / ours.baseline_mb)
        orig_ratios.append(original.planned_mb / original.baseline_mb)
        print(f"{name:<16} {ours.baseline_mb:>9.0f} {original.planned_mb:>9.0f} "
              f"{ours.planned_mb:>7.0f} {ours_ratios[-1]:>9.3f} {orig_ratios[-1]:>9.3f} "
              f"{share:>9.0%} {len(plansearch.front(ours.probes)):>5} "
              f"{len(ours.probes):>6} {seconds:>7.1f} {checked:>8}{same}", flush=True)
    geo = math.exp(sum(math.log(r) for r in ours_ratios) / len(ours_ratios))
    geo_orig = math.exp(sum(math.log(r) for r in orig_ratios) / len(orig_ratios))
    print(f"geometric mean planned/unplanned: ours {geo:.3f}, original {geo_orig:.3f}")


if __name__ == "__main__":
    main()
