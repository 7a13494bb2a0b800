"""``mxexplorer profile``: per-layer time from MXNet's profiler (in a child process)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from mxexplorer.cli import common


def cmd_profile(args: argparse.Namespace) -> int:
    from mxexplorer.core.analysis import profile
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.runtime import gpu

    gpu.check(args.ctx)  # the device first: one line, before any work
    doc = GraphDocument.open(args.file)
    shape_map = common.data_shapes(doc, args)
    bar = common.TerminalProgress()
    result = profile.profile(doc.snapshot(), shape_map, ctx=args.ctx,
                             iterations=args.iterations, train=not args.inference,
                             progress=bar)
    bar.close()
    names = {i: doc.nodes[i].name for i in range(len(doc.nodes))}
    if args.json:
        ops = {i: doc.nodes[i].op for i in range(len(doc.nodes))}
        common.print_json({"file": args.file, **result.to_dict(names, ops),
                           "summary": result.summary()})
        return 0
    out = sys.stdout
    out.write(result.summary() + "\n\n")
    rows = sorted(((result.node_ms(i) or 0.0, i) for i in
                   set(result.forward_ms) | set(result.backward_ms)), reverse=True)
    width = max([len(names[i]) for _, i in rows[:args.top]] + [4])
    out.write(f"{'node':<{width}}  {'op':<18} {'forward ms':>10} {'backward ms':>11} "
              f"{'share':>6}\n")
    total = result.op_total_ms or 1.0
    for ms, i in rows[:args.top]:
        fwd, bwd = result.forward_ms.get(i), result.backward_ms.get(i)
        out.write(f"{names[i]:<{width}}  {doc.nodes[i].op[:18]:<18} "
                  f"{_ms(fwd):>10} {_ms(bwd):>11} {ms / total:>6.1%}\n")
    if len(rows) > args.top:
        out.write(f"... {len(rows) - args.top} more nodes (--top N, or --json for all)\n")
    out.write("\nby op type (forward and backward events):\n")
    for name, ms in sorted(result.by_type_ms.items(), key=lambda kv: -kv[1])[:args.top]:
        out.write(f"  {name:<32} {ms:>9.2f} ms {ms / total:>6.1%}\n")
    if result.other_ms:
        out.write("of which MXNet's own nodes, not the graph's (head gradients, gradient "
                  "sums, copies): " + ", ".join(f"{op} {ms:.2f} ms" for op, ms in
                                               sorted(result.other_ms.items(),
                                                      key=lambda kv: -kv[1])) + "\n")
    if result.unplaced:
        out.write("profiler events matched to no node of MXNet's executor: "
                  + ", ".join(sorted(set(result.unplaced))) + "\n")
    _reasons(out, result, names, args.top)
    return 0


def _reasons(out: Any, result: Any, names: dict[int, str], top: int) -> None:
    """The nodes without a time of their own, grouped by what they say."""
    out.write("\n" + result.coverage_line() + "\n")
    if not result.reasons:
        return
    groups: dict[str, list[int]] = {}
    for i, reason in result.reasons.items():
        groups.setdefault(reason.kind, []).append(i)
    for kind, nodes in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        out.write(f"{kind} ({len(nodes)}):\n")
        for i in sorted(nodes)[:top]:
            out.write(f"  {names[i]}: {result.reasons[i].text}\n")
        if len(nodes) > top:
            out.write(f"  ... {len(nodes) - top} more (--json for all)\n")


def _ms(value: Any) -> str:
    return "" if value is None else f"{value:.3f}"


def add_parser(sub: Any) -> None:
    """Register ``profile``."""
    p = sub.add_parser("profile", help="time every layer with MXNet's profiler (bulk "
                                       "execution off), forward and backward")
    p.add_argument("file")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...", help="input shape")
    p.add_argument("--ctx", default="cpu", metavar="cpu|gpu:N", help="device (cpu)")
    p.add_argument("--iterations", type=int, default=3,
                   help="profiled training iterations, after two of warm-up (3)")
    p.add_argument("--inference", action="store_true",
                   help="profile inference instead: forward only, bound without gradients "
                        "as a deployment binds it (on the CPU oneDNN fuses layers then)")
    p.add_argument("--top", type=int, default=20, help="rows printed (20)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_profile)
