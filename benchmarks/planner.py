"""Memory planner on the Gluon model zoo, batch 32, CPU: unplanned cost, the original
memonger search after automatic (cut-vertex) stages, and ours; what our least-memory
plan recomputes (read from MXNet's report), the points of the memory-recompute front,
probes and planning time.  Goals (issue 18): ours <= original on every network,
geometric mean of planned/unplanned <= 0.40 (the original's is 0.480); ResNet-152
within 3 s and the 1001-layer ResNet (batch 64, its hand tags) within 10 s with fast.
Issue 27: best never worse than fast, and from 500 operators as good as thorough.

Run: ``python benchmarks/planner.py [--untuned] [--twice] [--fast|--thorough] [--serial]
[--modes best,thorough] [--hog] [names...]``: ``--untuned`` the six networks the search
was never tuned on, ``--twice`` plans each twice and says whether the plans are
identical (they must be: the search counts probes and model calls, not seconds),
``--fast`` and ``--thorough`` those searches; ``--modes`` several searches side by
side (MB, wall and CPU seconds, whether the search ran to its counts, and a digest of
the plan's kept nodes to compare runs); ``--hog`` runs beside two busy-looping
processes (a loaded machine: the plans must not change); ``--serial`` runs best's two
searches one after the other in one process instead of side by side (the same plans);
``resnet1001_tagged`` is the memonger paper's case.  MXNet is imported before the first
plan and its import timed on its own line.  Each row ends with the 1-minute load
average before and after.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETS = ["resnet18_v1", "resnet50_v1", "resnet152_v1", "resnet50_v2", "densenet121",
        "inceptionv3", "mobilenetv2_1.0", "squeezenet1.1", "vgg16_bn"]
UNTUNED = ["resnet34_v1", "resnet101_v2", "densenet169", "vgg19_bn", "mobilenet1.0",
           "squeezenet1.0"]


def _digest(kept: tuple[int, ...]) -> str:
    return hashlib.sha1(repr(kept).encode()).hexdigest()[:8]


def _setup(name: str):
    from benchmarks.nets import network
    from mxexplorer.core.graph.document import GraphDocument

    size = 299 if name.startswith("inception") else 224
    snap = GraphDocument.open(network(name)).snapshot()
    if name == "resnet1001_tagged":      # the memonger paper's case: its hand tags
        return snap, {"data": (64, 3, 32, 32)}, "file"
    return snap, {"data": (32, 3, size, size)}, "auto"


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (best's forked search)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def modes_table(names: list[str], modes: list[str], serial: bool = False) -> None:
    """Several searches side by side: MB, wall and CPU seconds, complete, plan digest."""
    from mxexplorer.core.planning import memplan
    from mxexplorer.core.runtime.mxnet_env import import_mxnet

    # MXNet's import (about 2 s) is the process's, not a plan's: timed on its own, and the
    # CLI's and the window's plans pay it once more, in their child process
    start = time.perf_counter()
    import_mxnet()
    print(f"importing MXNet: {time.perf_counter() - start:.1f} s (not in the plans' seconds)")
    head = "".join(f" {m + ' MB':>12} {'s':>6} {'cpu s':>6} {'plan':>8}" for m in modes)
    print(f"{'network':<18} {'ops':>5} {'unplanned':>9}{head}  load")
    for name in names:
        snap, shapes, stages = _setup(name)
        n_ops = sum(1 for n in json.loads(snap.json)["nodes"] if n["op"] != "null")
        cells, base = [], 0.0
        load = os.getloadavg()[0]
        for mode in modes:
            start, cpu = time.perf_counter(), _cpu()
            result = memplan.plan(snap, shapes, stages=stages, mode=mode,
                                  parallel=not serial)
            wall, cpu = time.perf_counter() - start, _cpu() - cpu
            base = result.baseline_mb
            mark = "" if result.complete else "*"
            kept = result.best.kept if result.best else ()
            cells.append(f" {result.planned_mb:>11.0f}{mark or ' '} {wall:>6.1f} {cpu:>6.1f}"
                         f" {_digest(kept):>8}")
        print(f"{name:<18} {n_ops:>5} {base:>9.0f}{''.join(cells)}  "
              f"{load:.2f}-{os.getloadavg()[0]:.2f}", flush=True)
    print("(* the safety net cut the search; s: wall seconds, cpu s: CPU seconds of the "
          "process and of the search it forked beside (best), MXNet's threads included)")


def main() -> None:
    sys.path.insert(0, ROOT)
    flags = {a for a in sys.argv[1:] if a.startswith("--") and "=" not in a}
    options = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    names = [a for a in sys.argv[1:] if not a.startswith("--")] or \
        (UNTUNED if "--untuned" in flags else NETS)
    hogs = []
    if "--hog" in flags:        # a busy machine: one busy loop per core
        hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(os.cpu_count() or 2)]
        print(f"beside {len(hogs)} busy-looping processes")
    try:
        if "modes" in options:
            modes_table(names, options["modes"].split(","), "--serial" in flags)
        else:
            zoo_table(names, flags)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def zoo_table(names: list[str], flags: set[str]) -> None:
    from mxexplorer.core.planning import memplan, plansearch

    mode = "fast" if "--fast" in flags else "thorough" if "--thorough" in flags else "best"
    print(f"{'network':<16} {'unplanned':>9} {'original':>9} {'ours':>7} {'ours/unpl':>9} "
          f"{'orig/unpl':>9} {'recompute':>9} {'front':>5} {'probes':>6} {'time s':>7} "
          f"{'exported':>8}"
          + ("  same twice" if "--twice" in flags else ""))
    ours_ratios, orig_ratios = [], []
    for name in names:
        snap, shapes, stages = _setup(name)
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
              f"{len(ours.probes):>6} {seconds:>7.1f} {checked:>8}{same}"
              + ("" if ours.complete else "  cut by the safety net"), flush=True)
    geo = math.exp(sum(math.log(r) for r in ours_ratios) / len(ours_ratios))
    geo_orig = math.exp(sum(math.log(r) for r in orig_ratios) / len(orig_ratios))
    print(f"geometric mean planned/unplanned: ours {geo:.3f}, original {geo_orig:.3f}")


if __name__ == "__main__":
    main()
