"""``mxexplorer render``: the graph drawn as the window draws it (blocks above 1,500
nodes; our layered layout when dot is too slow)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from mxexplorer.cli import common
from mxexplorer.core.runtime.errors import UserError


def cmd_render(args: argparse.Namespace) -> int:
    from mxexplorer import api
    from mxexplorer.core.render import blocks, drawing

    drawing.format_for(args.output)  # a bad extension fails before any work
    graph = api.open(args.file)
    shape_map = common.shape_args(args.shape)
    if args.colour and not shape_map:
        raise UserError(f"--colour {args.colour} needs the input shapes (--shape NAME=D1,...)")
    folding = 0 if args.blocks else (10**9 if args.all else blocks.COLLAPSE_ABOVE)
    picture = graph.render(args.output, shapes=shape_map or None,
                           show_params=args.show_params, blocks_above=folding,
                           colour=args.colour, title=args.title, legend=not args.no_legend,
                           dpi=args.dpi, time_limit=args.time_limit)
    edges = picture.edges
    sys.stderr.write(f"wrote {args.output} ({picture.nodes} nodes, {edges} edges, "
                     f"{len(picture.data):,} bytes)\n")
    for note in picture.notes:
        if "folded into blocks" in note:
            note += " (--all draws every node)"
        sys.stderr.write(f"note: {note}\n")
    return 0


def add_parser(sub: Any) -> None:
    """Register ``render``."""
    p = sub.add_parser("render", help="draw the graph with graphviz to SVG, PNG or PDF")
    p.add_argument("file")
    p.add_argument("-o", "--output", required=True, metavar="OUT.svg|png|pdf")
    p.add_argument("--shape", action="append", metavar="NAME=D1,D2,...",
                   help="infer shapes and label every edge with its shape")
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
