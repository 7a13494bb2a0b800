"""A graph drawn as ``mxexplorer render`` and the window draw it, as bytes.  No Qt."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mxexplorer.core.analysis import stats
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.render import blocks, drawing, metrics
from mxexplorer.core.render.layered import layered_layout
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.graphviz import DotTimeout, run_dot

#: a notebook's picture folds the graph into blocks above this many drawn nodes (the
#: window and ``render`` fold above :data:`blocks.COLLAPSE_ABOVE`; a notebook cell is
#: smaller than a window)
NOTEBOOK_BLOCKS_ABOVE = 300
#: graphviz's time for a notebook's picture before mxexplorer's layered layout is drawn
NOTEBOOK_DOT_SECONDS = 15.0


@dataclass(frozen=True, repr=False)
class Picture:
    """A drawing of a graph: its bytes in ``fmt``, the nodes drawn and any notes (graph
    folded into blocks, layered layout used)."""

    data: bytes
    fmt: str
    nodes: int
    edges: int = 0
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        notes = f"; {'; '.join(self.notes)}" if self.notes else ""
        return (f"<mxexplorer.Picture {self.fmt}, {len(self.data):,} bytes, {self.nodes} "
                f"nodes, {self.edges} edges{notes}>")

    def _repr_svg_(self) -> str | None:
        return self.data.decode("utf-8") if self.fmt == "svg" else None

    def _repr_png_(self) -> bytes | None:
        return self.data if self.fmt == "png" else None


def draw(doc: GraphDocument, fmt: str, result: Any = None, *, show_params: bool = False,
         blocks_above: int | None = None, colour: str | None = None,
         title: str | None = None, legend: bool = True, dpi: int | None = None,
         time_limit: float = 60.0) -> Picture:
    """The picture ``mxexplorer render`` and :meth:`Graph.render` draw: the graph folded
    into blocks above ``blocks_above`` nodes, graphviz's layout or, past
    ``time_limit``, mxexplorer's layered one."""
    by_entry = result.by_entry if result is not None else None
    graph = drawing.visible_graph(doc, show_params=show_params)
    limit = blocks.COLLAPSE_ABOVE if blocks_above is None else blocks_above
    tree = None
    notes: list[str] = []
    if len(graph.nodes) > limit:
        tree = blocks.block_tree(doc, graph)
        whole = len(graph.nodes)
        graph = blocks.collapse(graph, tree, blocks.default_expansion(tree))
        if limit:
            notes.append(f"{whole:,} nodes folded into blocks, as the window shows them")
    fills: dict[str, Any] = {}
    if colour:
        if result is None:
            raise UserError(f"colour by {colour} needs the input shapes")
        values = metrics.node_values(colour, stats.compute(doc, result))
        members = {n.id: tree.members(tree.by_id[n.id]) for n in graph.nodes
                   if tree is not None and n.id in tree.by_id}
        shades, scale = metrics.fills(colour, (n.id for n in graph.nodes), values, members)
        fills = {"fills": shades, "key": metrics.key(scale) if scale is not None else None}
    dots = (dpi or drawing.PNG_DPI) if fmt == "png" else 0
    dot_fmt = fmt if fmt != "png" else "png:cairo"

    def source(with_legend: bool) -> str:
        return drawing.styled_source(doc, graph, by_entry, legend=with_legend, title=title,
                                     dpi=dots, **fills)

    try:
        data = run_dot(source(legend), dot_fmt, time_limit=time_limit)
    except DotTimeout:
        layout = layered_layout(graph, drawing.layout_source(graph))
        data = run_dot(drawing.pinned_source(source(False), layout), dot_fmt, pinned=True)
        notes.append(f"graphviz dot did not finish within {time_limit:g} s: drawn with "
                     "mxexplorer's layered layout (straight edges, no legend)")
    return Picture(data, fmt, len(graph.nodes), len(graph.edges), tuple(notes))
