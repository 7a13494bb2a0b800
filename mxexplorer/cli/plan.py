"""``mxexplorer plan`` and ``mxexplorer bench``: the memonger plan, the largest batch
within a budget, and the timing of the original against the planned graph."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from mxexplorer.cli import common
from mxexplorer.core.runtime.errors import UserError


def cmd_plan(args: argparse.Namespace) -> int:
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.planning import memplan
    from mxexplorer.core.runtime import gpu

    gpu.check(args.ctx)  # the device first: one line, before any work
    doc = GraphDocument.open(args.file)
    shape_map = common.data_shapes(doc, args)
    snap = doc.snapshot()
    bar = common.TerminalProgress()
    try:
        return _plan(args, doc, shape_map, snap, bar)
    except memplan.NoStagesError:
        raise UserError("no node carries mirror_stage: tag the stage nodes mirror_stage, "
                        "or plan with --stages auto (cut vertices)") from None


def _plan(args: argparse.Namespace, doc: Any, shape_map: dict[str, tuple[int, ...]],
          snap: Any, bar: common.TerminalProgress) -> int:
    import textwrap

    from mxexplorer import api
    from mxexplorer.core.planning import jobs, plansearch

    if args.budget is not None:
        fit = jobs.largest_batch(snap, shape_map, args.budget, ctx=args.ctx,
                                 stages=args.stages, progress=bar)
        bar.close()
        data = fit.to_dict()
        if args.json:
            common.print_json(data)
        else:
            sys.stdout.write(f"budget      {args.budget:.0f} MB on {args.ctx}\n"
                             f"unplanned   largest batch {fit.unplanned_batch} "
                             f"({fit.unplanned_mb or 0:.0f} MB)\n"
                             f"planned     largest batch {fit.planned_batch} "
                             f"({fit.planned_mb or 0:.0f} MB)\n")
        return 0
    report = api.Graph(doc).plan(shape_map, search=args.search, ctx=args.ctx,
                                 stages=args.stages, threshold_mb=args.threshold,
                                 within_mb=args.within, for_device=args.target,
                                 time_limit=args.time_limit, progress=bar)
    bar.close()
    result, best = report.result, report.plan
    if args.output:
        report.save(args.output, overwrite=True)
    data: dict[str, Any] = {"file": args.file}
    for key, value in report.to_dict().items():
        data[key] = value
        if key == "seconds":
            data["output"] = args.output
    if args.json:
        common.print_json(data)
        return 0
    out = sys.stdout
    out.write(f"stages      {len(result.stages)} ({result.stage_source})\n")
    out.write(f"costed by   {COSTED_BY[result.costed_by]}\n")
    out.write(f"unplanned   {result.baseline_mb:.0f} MB\n")
    if best is None and report.within_mb is not None:
        out.write(textwrap.fill(report.summary, 88) + "\n")
    elif best is None:
        out.write("planned     no plan beats the unplanned graph; nothing tagged\n")
        if not result.complete:
            out.write(textwrap.fill(plansearch.cut_words(result), 88) + "\n")
    else:
        thr = f" (threshold {best.threshold_mb:.0f} MB)" if best.threshold_mb is not None \
            else ""
        out.write(f"planned     {best.cost_mb:.0f} MB{thr}, saving {data['saving']:.0%}; "
                  f"{len(best.kept)} outputs kept for backward\n")
        out.write(f"recompute   {best.recompute_share:.0%} of a forward pass "
                  f"({best.recompute_macs / 1e9:.2f} G MACs)\n")
        out.write(textwrap.fill(plansearch.describe(result, best), 88) + "\n")
        front = plansearch.front(result.probes)
        if len(front) > 1:
            out.write("front       " + ", ".join(
                f"{p.cost_mb:,.0f} MB/{p.recompute_share or 0:.0%}" for p in front) + "\n")
    failed = [p for p in result.probes if not p.ok]
    out.write(f"probes      {len(result.probes)} in {result.seconds:.1f} s"
              + (f", {len(failed)} failed ({failed[0].reason})" if failed else "") + "\n")
    if args.output:
        out.write(f"wrote       {args.output}\n")
    return 0


#: whose figures a plan's MB are, as the plan's text says it
COSTED_BY = {
    "mxnet": "MXNet (its own report for training each plan)",
    "model": "the memory model (MXNet does not run here; the model replays MXNet's "
             "allocator)",
}


def cmd_bench(args: argparse.Namespace) -> int:
    from mxexplorer.core.graph import symbol_io
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.planning import jobs, plantags
    from mxexplorer.core.planning.benchresults import Estimate
    from mxexplorer.core.runtime import gpu

    gpu.check(args.ctx)  # the device first: one line, before any work
    doc = GraphDocument.open(args.file)
    shape_map = common.data_shapes(doc, args)
    # "original" is what the user would train without a plan: every force_mirroring
    # tag removed; a file that carries tags is itself the planned graph
    original = symbol_io.dumps(plantags.tagged_dict(doc, {}))
    planned = None
    if args.planned:
        GraphDocument.open(args.planned)  # a clear error for a bad file
        with open(args.planned, encoding="utf-8") as fh:
            planned = fh.read()
    elif plantags.applied_tags(doc):
        planned = doc.to_json(indent=None)
    if args.budget <= 0 or args.warmup < 0 or (args.repeats is not None and args.repeats < 1):
        raise UserError("give --budget above 0 seconds, --warmup from 0 and --repeats "
                        "from 1")
    bar = common.TerminalProgress()

    def estimated(estimate: Estimate) -> None:
        bar.close()
        sys.stderr.write(estimate.line() + "\n")
        sys.stderr.flush()

    comparison = jobs.bench(original, planned, shape_map, ctx=args.ctx, warmup=args.warmup,
                            rounds=args.repeats, budget_s=args.budget, progress=bar,
                            on_estimate=estimated)
    bar.close()
    if args.json:
        common.print_json({"file": args.file, "budget_s": args.budget,
                           **comparison.to_dict()})
        return 0
    out = sys.stdout
    for r in comparison.results:
        out.write(r.summary() + "\n")
        if r.memory_note():
            out.write("  " + r.memory_note() + "\n")
    for line in ([comparison.verdict] if comparison.verdict else []) + list(comparison.notes):
        out.write(line + "\n")
    return 0


def add_parser(sub: Any) -> None:
    """Register ``plan`` and ``bench``."""
    p = sub.add_parser("plan", help="plan mirroring (memonger) to cut training memory")
    p.add_argument("file")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...", help="input shape")
    p.add_argument("--ctx", default="cpu", metavar="cpu|gpu:N", help="device (cpu)")
    p.add_argument("--stages", choices=("file", "auto"), default=None,
                   help="the file's mirror_stage tags, or automatic (cut vertices); by "
                        "default the file's when it has any, else automatic")
    p.add_argument("--threshold", type=int, metavar="MB",
                   help="plan at this threshold exactly as the original memonger does")
    p.add_argument("--search", choices=("best", "fast", "thorough", "original"),
                   default="best", help="best: the fast and the thorough search side by "
                   "side, the better plan (never worse than fast); fast: solver and local "
                   "search in a few seconds; thorough: the larger budgets; original: "
                   "memonger's 9 probes")
    p.add_argument("--budget", type=float, metavar="MB",
                   help="find the largest batch that trains within this memory")
    p.add_argument("--time-limit", type=float, default=300.0, metavar="SECONDS",
                   help="the search's safety net (300): the searches stop on their "
                        "counts of probes, so the plan is the same on any machine; a "
                        "search this cuts says so (--json: complete false)")
    p.add_argument("--within", type=float, metavar="MB",
                   help="the plan that recomputes least within MB (not the least memory)")
    p.add_argument("--for", dest="target", choices=("cpu", "gpu"),
                   help="the device the plan is for, when not --ctx (gpu: cuDNN BatchNorm "
                        "is never recomputed)")
    p.add_argument("-o", "--output", metavar="PLANNED.json", help="write the planned graph")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_plan)
    p = sub.add_parser("bench", help="time training and inference, original vs planned")
    p.add_argument("file")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...", help="input shape")
    p.add_argument("--ctx", default="cpu", metavar="cpu|gpu:N", help="device (cpu)")
    p.add_argument("--planned", metavar="PLANNED.json", help="a planned graph to compare")
    p.add_argument("--budget", type=float, default=60.0, metavar="SECONDS",
                   help="the whole benchmark's time: as many runs as fit (60); the "
                        "estimate is printed before the timed runs start")
    p.add_argument("--warmup", type=int, default=1,
                   help="untimed runs of each graph first (1); the last one calibrates")
    p.add_argument("--repeats", type=int, metavar="N",
                   help="exactly N timed runs of each graph, whatever the budget")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench)
