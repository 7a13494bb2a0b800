"""``mxexplorer render``: the graph drawn as the window draws it (blocks above 1,500
nodes; our layered layout when dot is too slow)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from mxexplorer.cli import common
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.graphviz import DotTimeout


def cmd_render(args: argparse.Namespace) -> int:
    from mxexplorer.core.analysis import shapes
    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.core.render import drawing

    fmt = drawing.format_for(args.output)  # a bad extension fails before any work
    doc = GraphDocument.open(args.file)
    shape_map = common.shape_args(args.shape)
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
    from mxexplorer.core.render import blocks

    if args.blocks or (not args.all and len(graph.nodes) > blocks.COLLAPSE_ABOVE):
        # what the window shows: above COLLAPSE_ABOVE nodes, the graph folded into blocks
        tree = blocks.block_tree(doc, graph)
        whole = len(graph.nodes)
        graph = blocks.collapse(graph, tree, blocks.default_expansion(tree))
        if not args.blocks:
            notes.append(f"{whole:,} nodes folded into blocks, as the window shows them "
                         "(--all draws every node)")
    dpi = (args.dpi or drawing.PNG_DPI) if fmt == "png" else 0
    colours = render_colours(args.colour, doc, graph, result if by_entry else None, tree)

    def source(legend: bool) -> str:
        return drawing.styled_source(doc, graph, by_entry, legend=legend, title=args.title,
                                     dpi=dpi, **colours)

    try:
        size = drawing.render_file(source(not args.no_legend), args.output,
                                   time_limit=args.time_limit)
    except DotTimeout:
        # the window's fallback: our own layered layout, which graphviz only draws
        from mxexplorer.core.render.layered import layered_layout

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


def render_colours(metric: str | None, doc: Any, graph: Any, result: Any,
                   tree: Any = None) -> dict[str, Any]:
    """``render --colour``: the fills and legend of ``metric`` for ``graph`` (a closed
    block: its members' sum); needs the shapes."""
    from mxexplorer.core.runtime.errors import UserError

    if not metric:
        return {}
    if result is None:
        raise UserError(f"--colour {metric} needs the input shapes (--shape NAME=D1,...)")
    from mxexplorer.core.analysis import stats
    from mxexplorer.core.render import metrics

    values = metrics.node_values(metric, stats.compute(doc, result))
    members = {n.id: tree.members(tree.by_id[n.id]) for n in graph.nodes
               if tree is not None and n.id in tree.by_id}
    fills, scale = metrics.fills(metric, (n.id for n in graph.nodes), values, members)
    return {"fills": fills, "key": metrics.key(scale) if scale is not None else None}


def add_parser(sub: Any) -> None:
    """Register ``render``."""
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
