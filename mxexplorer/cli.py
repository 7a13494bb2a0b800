"""Command line: ``mxexplorer FILE`` opens the GUI; subcommands work headless.

``info`` and ``infer`` need no display; the GUI package is imported only when a
window is asked for.  Bad input exits 2 with one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from mxexplorer import __version__
from mxexplorer.core.errors import MXNetMissingError, UserError

SUBCOMMANDS = ("info", "infer", "render", "plan", "bench", "profile", "onnx", "diff",
               "doctor")


def _shape_args(values: Sequence[str] | None) -> dict[str, tuple[int, ...]]:
    from mxexplorer.core.shapes import parse_shape_arg

    shapes: dict[str, tuple[int, ...]] = {}
    for text in values or ():
        name, shape = parse_shape_arg(text)
        shapes[name] = shape
    return shapes


def _print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")


def cmd_info(args: argparse.Namespace) -> int:
    from mxexplorer.core import report
    from mxexplorer.core.document import GraphDocument

    doc = GraphDocument.open(args.file)
    data = report.info(doc)
    if args.json:
        _print_json(data)
        return 0
    out = sys.stdout
    out.write(f"file        {data['file']}\n")
    if data["params_file"]:
        out.write(f"checkpoint  {data['params_file']}\n")
    upgraded = f", upgraded by {data['upgraded_by']}" if data["upgraded_by"] else ""
    out.write(f"format      {data['format']}, saved by MXNet {_version(data['mxnet_version'])}"
              f"{upgraded}\n")
    out.write(f"nodes       {data['nodes']} ({data['operators']} operators), "
              f"{data['internals_count']} internals\n")
    out.write(f"inputs      {_list(data['inputs'])}\n")
    out.write(f"outputs     {_list(data['outputs'])}\n")
    out.write(f"parameters  {len(data['parameters'])}\n")
    out.write(f"aux states  {len(data['aux'])}\n")
    if data["unknown_ops"]:
        out.write(f"unknown ops {', '.join(data['unknown_ops'])} (not in MXNet 1.9.1; "
                  "shape inference will fail)\n")
    if data["duplicate_names"]:
        out.write(f"duplicates  {len(data['duplicate_names'])} names used twice or more: "
                  f"{_list(data['duplicate_names'])}\n")
    out.write("ops\n")
    for op, count in data["ops"].items():
        out.write(f"  {count:6d}  {op}\n")
    return 0


def _version(v: int) -> str:
    return f"{v // 10000}.{(v // 100) % 100}.{v % 100}"


def _list(items: list[str], limit: int = 8) -> str:
    if not items:
        return "-"
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def cmd_infer(args: argparse.Namespace) -> int:
    from mxexplorer.core import report, shapes, stats
    from mxexplorer.core.document import GraphDocument
    from mxexplorer.core.stats import human_bytes, human_count

    shape_map = _shape_args(args.shape)
    doc = GraphDocument.open(args.file)
    if not shape_map:
        shape_map = {k: v for k, v in doc.shape_hints().items()
                     if k in {doc.nodes[i].name for i in doc.data_inputs()}}
    if not shape_map:
        inputs = ", ".join(doc.nodes[i].name for i in doc.data_inputs()) or "none"
        raise UserError(f"give the input shapes with --shape NAME=D1,D2,... "
                        f"(inputs: {inputs})")
    dtypes = {name: args.dtype for name in shape_map}
    analysis = stats.analyze(doc.snapshot(), shape_map, dtypes)
    result = analysis.shapes
    data = report.inference(doc, result, analysis.stats)
    if args.json:
        _print_json(data)
    elif result.error is None and args.by_op:
        sys.stdout.write(f"{'op':<22} {'count':>6} {'params':>10} {'MACs':>10} {'share':>5} "
                         f"{'memory':>10} {'share':>5}\n")
        for row in data["by_op"]:
            sys.stdout.write(
                f"{row['op']:<22} {row['count']:>6} {human_count(row['params']):>10} "
                f"{human_count(row['macs']):>10} {row['macs_share']:>5.0%} "
                f"{human_bytes(row['activation_bytes']):>10} "
                f"{row['activation_bytes_share']:>5.0%}\n")
    elif result.error is None:
        out = sys.stdout
        width = max((len(r["name"]) for r in data["internals"]), default=10)
        width = min(width, 60)
        out.write(f"{'internal':<{width}}  {'op':<18} {'shape':<22} {'memory':>10} "
                  f"{'params':>10} {'MACs':>10}\n")
        for row in data["internals"]:
            shape = shapes.format_shape(row["shape"]) if row["shape"] else "?"
            op = row["op"] if row["op"] != "null" else "-"
            out.write(f"{row['name']:<{width}}  {op:<18} {shape:<22} "
                      f"{human_bytes(row['bytes']) if row['bytes'] else '':>10} "
                      f"{human_count(row['params']) if row['params'] else '':>10} "
                      f"{human_count(row['macs']) if row['macs'] else '':>10}\n")
        out.write(f"\nparameters  {data['params']:,} ({human_count(data['params'])})\n")
        out.write(f"MACs        {data['macs']:,} ({human_count(data['macs'])}); "
                  f"FLOPs = 2 x MACs = {human_count(data['flops'])}\n")
        out.write(f"activations {human_bytes(data['activation_bytes'])} "
                  "(all operator outputs, one forward pass)\n")
        if data["uncounted_ops"]:
            out.write(f"uncounted   {', '.join(data['uncounted_ops'])} (0 MACs assumed)\n")
        if data["missing_inputs"] and not result.error:
            out.write(f"unknown     no shape for {_list(data['missing_inputs'])}\n")
    if result.error is not None:
        sys.stderr.write(f"mxexplorer: error: shape inference stopped at "
                         f"{result.error.one_line()}\n")
        return 2
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from mxexplorer.core import drawing, shapes
    from mxexplorer.core.document import GraphDocument

    fmt = drawing.format_for(args.output)  # a bad extension fails before any work
    doc = GraphDocument.open(args.file)
    shape_map = _shape_args(args.shape)
    by_entry = None
    if shape_map:
        result = shapes.infer_document(doc, doc.to_json(indent=None), shape_map,
                                       param_shapes=doc.param_shapes())
        if result.error is not None:
            raise UserError(f"shape inference stopped at {result.error.one_line()}")
        by_entry = result.by_entry
    graph = drawing.visible_graph(doc, show_params=args.show_params)
    tree = None
    notes = []
    from mxexplorer.core import blocks

    if args.blocks or (not args.all and len(graph.nodes) > blocks.COLLAPSE_ABOVE):
        # what the window shows: above COLLAPSE_ABOVE nodes, the graph folded into blocks
        tree = blocks.block_tree(doc, graph)
        whole = len(graph.nodes)
        graph = blocks.collapse(graph, tree, blocks.default_expansion(tree))
        if not args.blocks:
            notes.append(f"{whole:,} nodes folded into blocks, as the window shows them "
                         "(--all draws every node)")
    from mxexplorer.cli_convert import render_colours
    dpi = (args.dpi or drawing.PNG_DPI) if fmt == "png" else 0
    colours = render_colours(args.colour, doc, graph, result if by_entry else None, tree)

    def source(legend: bool) -> str:
        return drawing.styled_source(doc, graph, by_entry, legend=legend, title=args.title,
                                     dpi=dpi, **colours)

    try:
        size = drawing.render_file(source(not args.no_legend), args.output,
                                   time_limit=args.time_limit)
    except drawing.DotTimeout:
        # the window's fallback: our own layered layout, which graphviz only draws
        from mxexplorer.core.layered import layered_layout

        layout = layered_layout(graph, drawing.layout_source(graph))
        size = drawing.render_file(drawing.pinned_source(source(False), layout),
                                   args.output, pinned=True)
        notes.append(f"graphviz dot did not finish within {args.time_limit:g} s: drawn "
                     "with mxexplorer's layered layout (straight edges, no legend)")
    sys.stderr.write(f"wrote {args.output} ({len(graph.nodes)} nodes, "
                     f"{len(graph.edges)} edges, {size:,} bytes)\n")
    for note in notes:
        sys.stderr.write(f"note: {note}\n")
    return 0


def _data_shapes(doc: Any, args: argparse.Namespace) -> dict[str, tuple[int, ...]]:
    shape_map = _shape_args(args.shape)
    if not shape_map:
        inputs = ", ".join(doc.nodes[i].name for i in doc.data_inputs()) or "none"
        raise UserError(f"give the input shapes with --shape NAME=D1,D2,... (inputs: {inputs})")
    return shape_map


class _TerminalProgress:
    """Progress on stderr, one rewritten line, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()

    def __call__(self, done: int, total: int, message: str) -> None:
        if self.live:
            sys.stderr.write(f"\r{message[:70]:<70}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.live:
            sys.stderr.write("\r" + " " * 70 + "\r")


def cmd_plan(args: argparse.Namespace) -> int:
    from mxexplorer.core import gpu, memplan
    from mxexplorer.core.document import GraphDocument

    gpu.check(args.ctx)  # the device first: one line, before any work
    doc = GraphDocument.open(args.file)
    shape_map = _data_shapes(doc, args)
    snap = doc.snapshot()
    bar = _TerminalProgress()
    try:
        return _plan(args, doc, shape_map, snap, bar)
    except memplan.NoStagesError as exc:
        raise UserError(f"{exc}: tag the stage nodes mirror_stage, or plan with "
                        "--stages auto (cut vertices)") from None


def _plan(args: argparse.Namespace, doc: Any, shape_map: dict[str, tuple[int, ...]],
          snap: Any, bar: _TerminalProgress) -> int:
    import textwrap

    from mxexplorer.core import jobs, memplan, plansearch, symbol_io
    from mxexplorer.core.document import GraphDocument

    if args.budget is not None:
        fit = jobs.largest_batch(snap, shape_map, args.budget, ctx=args.ctx,
                                 stages=args.stages, progress=bar)
        bar.close()
        data = fit.to_dict()
        if args.json:
            _print_json(data)
        else:
            sys.stdout.write(f"budget      {args.budget:.0f} MB on {args.ctx}\n"
                             f"unplanned   largest batch {fit.unplanned_batch} "
                             f"({fit.unplanned_mb or 0:.0f} MB)\n"
                             f"planned     largest batch {fit.planned_batch} "
                             f"({fit.planned_mb or 0:.0f} MB)\n")
        return 0
    result = jobs.plan(snap, shape_map, ctx=args.ctx, stages=args.stages,
                       threshold_mb=args.threshold, mode=args.search, progress=bar,
                       target=args.target)
    bar.close()
    best = result.best
    if args.within is not None:
        pick = plansearch.pick_within(result.probes, args.within)
        best = result.plan_for(GraphDocument.from_snapshot(snap), pick)
    if args.output:
        symbol_io.write_atomic(args.output, memplan.planned_json(snap, result, plan=best))
    planned_mb = best.cost_mb if best is not None else result.baseline_mb
    data = {
        "file": args.file, "device": args.ctx, "shapes": {k: list(v) for k, v in shape_map.items()},
        "baseline_mb": result.baseline_mb, "planned_mb": planned_mb,
        "saving": 1 - planned_mb / result.baseline_mb if result.baseline_mb else 0.0,
        "threshold_mb": best.threshold_mb if best else None,
        "stages": len(result.stages), "stage_source": result.stage_source,
        "kept": len(best.kept) if best else 0,
        "recompute_macs": best.recompute_macs if best else 0,
        "forward_macs": best.forward_macs if best else 0,
        "recompute_share": best.recompute_share if best else 0.0,
        "seconds": result.seconds, "output": args.output,
        "summary": plansearch.describe(result, best) if best else "",
        "state_bytes": result.state_bytes,
        "front": [{"cost": p.cost_mb, "recompute_share": p.recompute_share}
                  for p in plansearch.front(result.probes)],
        "probes": [p.to_dict() for p in result.probes],
    }
    if args.json:
        _print_json(data)
        return 0
    out = sys.stdout
    out.write(f"stages      {len(result.stages)} ({result.stage_source})\n")
    out.write(f"unplanned   {result.baseline_mb:.0f} MB\n")
    if best is None:
        out.write("planned     no plan beats the unplanned graph; nothing tagged\n")
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


def cmd_bench(args: argparse.Namespace) -> int:
    from mxexplorer.core import benchmark, gpu, jobs, memplan, symbol_io
    from mxexplorer.core.document import GraphDocument

    gpu.check(args.ctx)  # the device first: one line, before any work
    doc = GraphDocument.open(args.file)
    shape_map = _data_shapes(doc, args)
    # "original" is what the user would train without a plan: every force_mirroring
    # tag removed; a file that carries tags is itself the planned graph
    original = symbol_io.dumps(memplan.tagged_dict(doc, {}))
    planned = None
    if args.planned:
        GraphDocument.open(args.planned)  # a clear error for a bad file
        with open(args.planned, encoding="utf-8") as fh:
            planned = fh.read()
    elif memplan.applied_tags(doc):
        planned = doc.to_json(indent=None)
    bar = _TerminalProgress()
    results = jobs.bench(original, planned, shape_map, ctx=args.ctx, warmup=args.warmup,
                         repeats=args.repeats, progress=bar)
    bar.close()
    verdict = benchmark.verdict(results)
    if args.json:
        _print_json({"file": args.file, "results": [r.to_dict() for r in results],
                     "verdict": verdict})
        return 0
    for r in results:
        sys.stdout.write(r.summary() + "\n")
        if r.memory_note():
            sys.stdout.write("  " + r.memory_note() + "\n")
    if verdict:
        sys.stdout.write(verdict + "\n")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from mxexplorer.core import doctor

    sections, report = doctor.gather()
    if args.json:
        _print_json(doctor.as_dict(sections, report))
    else:
        sys.stdout.write(doctor.as_text(sections))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mxexplorer",
        description="Explore, fix and fit MXNet symbol graphs. Without a subcommand, "
                    "opens the GUI (on FILE if given).")
    parser.add_argument("--version", action="version", version=f"mxexplorer {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # every subcommand takes --debug too (after it, as users type it)
    original_add = sub.add_parser

    def add_parser(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        p = original_add(name, **kwargs)
        p.add_argument("--debug", action="store_true", help="show tracebacks")
        return p

    sub.add_parser = add_parser  # type: ignore[method-assign]

    p = sub.add_parser("info", help="format, counts, inputs, outputs and ops of a file")
    p.add_argument("file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("infer", help="every internal's shape, with parameters and MACs")
    p.add_argument("file")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                   help="shape of a data input (repeat for several)")
    p.add_argument("--dtype", default="float32", help="dtype of the inputs (float32)")
    p.add_argument("--by-op", action="store_true",
                   help="one row per op type (count, params, MACs, memory and their shares)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_infer)

    p = sub.add_parser("render", help="draw the graph with graphviz to SVG, PNG or PDF")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, metavar="OUT.svg|png|pdf")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                   help="infer shapes (needs MXNet) and label every edge with its shape")
    p.add_argument("--show-params", action="store_true",
                   help="draw parameter and auxiliary variables too")
    p.add_argument("--no-legend", action="store_true", help="leave the legend out")
    p.add_argument("--title", help="a title above the graph")
    p.add_argument("--dpi", type=int, default=None, help="resolution of a PNG (150)")
    folding = p.add_mutually_exclusive_group()
    folding.add_argument("--blocks", action="store_true",
                         help="draw repeated structure folded into blocks (the default "
                              "above 1,500 nodes, as in the window)")
    folding.add_argument("--all", action="store_true",
                         help="draw every node, however many")
    p.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                   help="graphviz's layout time before mxexplorer's own layered layout "
                        "is drawn instead (60)")
    p.add_argument("--colour", choices=("memory", "macs", "params"),
                   help="colour the nodes by this metric on a viridis scale (needs --shape)")
    p.set_defaults(func=cmd_render)

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
                   default="best", help="best: solver and local search (as fast from 500 "
                   "operators); fast: a few seconds; thorough: the larger budgets at any "
                   "size; original: memonger's 9 probes")
    p.add_argument("--budget", type=float, metavar="MB",
                   help="find the largest batch that trains within this memory")
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
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_bench)

    from mxexplorer import cli_convert, cli_profile

    cli_profile.add_parser(sub)
    cli_convert.add_parsers(sub)
    p = sub.add_parser("doctor", help="what a bug report needs: Python, MXNet build, CUDA, "
                                      "GPUs and whether this MXNet runs on each, dot, Qt")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (its 'gpus' can be replayed with "
                        "MXEXPLORER_RECORDED_GPUS)")
    p.set_defaults(func=cmd_doctor)
    return parser


def build_gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mxexplorer", description="Open the mxexplorer window.")
    parser.add_argument("files", nargs="*", metavar="FILE", help="symbol files to open")
    parser.add_argument("--shape", action="append", metavar="NAME=D1,D2,...")
    parser.add_argument("--screenshot", metavar="OUT.png",
                        help="write a PNG of the window once loaded, then exit")
    parser.add_argument("--screen", metavar="WxH", type=_screen_size,
                        help="with --screenshot: the screen size the first window is "
                             "made for (1400x860)")
    parser.add_argument("--theme", choices=("system", "light", "dark"),
                        help="colours for this run (View > Theme remembers a choice)")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--install-desktop", action="store_true",
                       help="register mxexplorer with the desktop for this user: menu entry, "
                       "icon, the MXNet symbol file type, default application")
    group.add_argument("--uninstall-desktop", action="store_true",
                       help="remove exactly what --install-desktop added")
    parser.add_argument("--debug", action="store_true")
    return parser


def _screen_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT") from None
    if not (320 <= width <= 16384 and 240 <= height <= 16384):
        raise argparse.ArgumentTypeError(f"{text}: width 320-16384, height 240-16384")
    return width, height


def _desktop(install: bool) -> int:
    from mxexplorer import desktop

    report = desktop.install() if install else desktop.uninstall()
    for line in report.lines():
        sys.stdout.write(line + "\n")
    sys.stdout.write(("installed: symbol files now open with mxexplorer\n" if install
                      else "uninstalled\n"))
    return 0


def _fail(message: str, code: int = 2) -> int:
    sys.stderr.write(f"mxexplorer: error: {message}\n")
    return code


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    # --debug before the subcommand as after it: every internal error asks for it
    lead = 0
    while lead < len(argv) and argv[lead] == "--debug":
        lead += 1
    if lead and lead < len(argv) and argv[lead] in SUBCOMMANDS:
        argv = argv[lead:] + ["--debug"]
    if argv and argv[0] in SUBCOMMANDS:
        # a short run that makes millions of objects and no cycles: the collector's
        # passes over a growing heap were a third of `info` on a 100,000-node graph
        import gc

        gc.disable()
    for stream in (sys.stdout, sys.stderr):     # a name may hold anything: print it all
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help", "--version")):
            args = build_parser().parse_args(argv)
            return int(args.func(args))
        gui_args = build_gui_parser().parse_args(argv)
        if gui_args.install_desktop or gui_args.uninstall_desktop:
            return _desktop(gui_args.install_desktop)
        shapes = _shape_args(gui_args.shape)
        from mxexplorer.gui.app import run

        if gui_args.screen and not gui_args.screenshot:
            raise UserError("--screen goes with --screenshot (the window itself fits the "
                            "screen it opens on)")
        return run(gui_args.files, shapes=shapes, screenshot=gui_args.screenshot,
                   theme=gui_args.theme, screen=gui_args.screen)
    except MXNetMissingError as exc:
        return _fail(str(exc))
    except UserError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        return _fail("out of memory: the file, or the shapes given, are larger than this "
                     "machine can hold")
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        except OSError:
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - one line for the user, unless --debug
        if debug:
            raise
        return _fail(f"internal error: {type(exc).__name__}: {exc} "
                     "(run with --debug for the traceback)", 1)


if __name__ == "__main__":
    raise SystemExit(main())
