"""Plans made without MXNet against MXNet's figure for the same plans: the nine zoo
networks (batch 32, CPU).  Each network is planned with the memory model as the only
cost (what a machine without MXNet does: ``plan`` there says ``costed_by: model``); then
MXNet binds the unplanned graph and the chosen plan, and the table puts MXNet's
``Total N MB allocated`` beside the model's figures.

Run with MXNet installed: ``python benchmarks/model_vs_mxnet.py [--search best] [names]``.
"""
from __future__ import annotations

import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.planner import NETS, _setup  # noqa: E402


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    search = "best"
    if "--search" in sys.argv:
        search = sys.argv[sys.argv.index("--search") + 1]
        args = [a for a in args if a != search]
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.planning import memplan
    from mxexplorer.core.planning.plancost import CostOracle, model_cost

    print(f"{'network':<18} {'unplanned':>21} {'planned (same plan)':>25} {'seconds':>8}")
    print(f"{'':<18} {'model':>10} {'MXNet':>10} {'model':>10} {'MXNet':>10} {'diff':>6}")
    ratios = []
    for name in args or NETS:
        snap, shapes, stages = _setup(name)
        started = time.perf_counter()
        result = memplan.plan(snap, shapes, stages=stages, mode=search, cost=model_cost,
                              parallel=False)
        seconds = time.perf_counter() - started
        assert result.costed_by == "model"
        doc = GraphDocument.from_snapshot(snap)
        oracle = CostOracle(shapes, "cpu")
        base_mx = oracle.cost_of_tags(doc, {})
        tags = result.best.tags if result.best is not None else {}
        planned_mx = oracle.cost_of_tags(doc, tags)
        planned = result.planned_mb
        diff = (planned - planned_mx) / planned_mx
        ratios.append(planned_mx / base_mx)
        print(f"{name:<18} {result.baseline_mb:>10,.0f} {base_mx:>10,.0f} {planned:>10,.0f} "
              f"{planned_mx:>10,.0f} {diff:>+6.1%} {seconds:>8.1f}", flush=True)
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print(f"geometric mean of MXNet's planned/unplanned for the model's plans: {gm:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
