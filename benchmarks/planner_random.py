"""Our plan against a long randomised search in the same tag space (issue 18).

For each network (batch 32, CPU, automatic stages): our deterministic plan, then a
randomised search of ``SECONDS`` (default 600) over kept sets of any operator: random
restarts from the original's threshold plans at random thresholds, otherwise 1-4 random
flips of the best kept set, each costed by MXNet's own report.  Prints the best memory
each found and ours relative to it (goal: within 2 %, or better).

Run: ``python benchmarks/planner_random.py [--seconds S] [names...]``.
"""
from __future__ import annotations

import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NETS = ["resnet18_v1", "squeezenet1.1", "mobilenetv2_1.0"]


def random_search(doc, shapes, seconds: float, seed: int = 0):
    from mxexplorer.core.analysis import stats
    from mxexplorer.core.analysis.shapes import infer_document
    from mxexplorer.core.graph import opinfo
    from mxexplorer.core.planning import memplan

    result = infer_document(doc, shapes)
    oracle = memplan.CostOracle(shapes)
    ops = [i for i in doc.order() if not doc.nodes[i].is_variable
           and opinfo.canonical_op(doc.nodes[i].op) != "Dropout"]
    stages = {i: "True" for i in memplan.cut_vertices(doc)}
    total = sum(stats.float32_bytes(s) for s in result.by_entry.values()) >> 20
    rng = random.Random(seed)
    best_cost, best_kept, probes = oracle.cost_of_tags(doc, {}), frozenset(), 1
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        if rng.random() < 0.3 or not best_kept:
            tags, _ = memplan.original_tags(doc, result.by_entry, stages,
                                            rng.randint(1, max(total, 2)))
            kept = frozenset(i for i, v in tags.items() if v == "False")
        else:
            kept = set(best_kept)
            for node in rng.sample(ops, rng.randint(1, 4)):
                kept ^= {node}
            kept = frozenset(kept)
        cost = oracle.cost_of_tags(doc, memplan.tags_for_kept(doc, kept))
        probes += 1
        if cost < best_cost:
            best_cost, best_kept = cost, kept
    return best_cost, probes


def main() -> None:
    sys.path.insert(0, ROOT)
    from benchmarks.nets import network
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.planning import memplan

    args = sys.argv[1:]
    seconds = 600.0
    if "--seconds" in args:
        at = args.index("--seconds")
        seconds = float(args[at + 1])
        del args[at:at + 2]
    print(f"{'network':<16} {'unplanned':>9} {'ours':>7} {'ours s':>7} {'random':>7} "
          f"{'probes':>7} {'ours/random':>11}")
    for name in args or NETS:
        doc = GraphDocument.open(network(name))
        shapes = {"data": (32, 3, 224, 224)}
        start = time.perf_counter()
        ours = memplan.plan(doc.snapshot(), shapes, stages="auto")
        took = time.perf_counter() - start
        best, probes = random_search(doc, shapes, seconds)
        print(f"{name:<16} {ours.baseline_mb:>9.0f} {ours.planned_mb:>7.0f} {took:>7.1f} "
              f"{best:>7.0f} {probes:>7} {ours.planned_mb / best:>11.3f}", flush=True)


if __name__ == "__main__":
    main()
