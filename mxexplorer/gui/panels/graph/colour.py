"""Colour by metric on the graph: the fill of every drawn node (a closed block gets its
members' sum) from the session's insight, and the legend that goes with it (the
viridis scale with units, or the op families)."""
from __future__ import annotations

from typing import Any

from mxexplorer.core.render import drawing, metrics
from mxexplorer.gui.panels.graph.blocks import BlockState
from mxexplorer.gui.panels.graph.legend import GraphLegend
from mxexplorer.gui.panels.graph.scene import SceneBuild

PLAIN_FILL = "#f4f4f4"          # "No colour": every operator alike


def fills_for(graph: drawing.VisibleGraph, insight: Any, blocks: BlockState
              ) -> tuple[dict[int, str] | None, metrics.Scale | None]:
    """Each drawn node's fill for the insight's metric, and the scale (None, None: by
    op family)."""
    metric = insight.metric
    if metric == "family":
        return None, None
    if metric == "none":
        return {n.id: PLAIN_FILL for n in graph.nodes}, None
    if metric == "marks":
        return {n.id: insight.marks.get(n.id, PLAIN_FILL) for n in graph.nodes}, None
    members = {n.id: blocks.members(n.id) for n in graph.nodes if blocks.key_of(n.id)}
    return metrics.fills(metric, (n.id for n in graph.nodes), insight.values(), members)


def export_colours(graph: drawing.VisibleGraph, insight: Any) -> dict[str, Any]:
    """``styled_source``'s fills and key for an exported picture of ``graph``: the
    chosen metric's colours and scale, or nothing (op families)."""
    fills, scale = fills_for(graph, insight, BlockState())
    if fills is None:
        return {}
    if insight.metric == "marks":
        return {"fills": fills, "key": insight.marks_legend}
    return {"fills": fills, "key": metrics.key(scale) if scale is not None else
            [(metrics.NO_VALUE, insight.missing() or "no value")]}


def colour_graph(build: SceneBuild | None, graph: drawing.VisibleGraph | None, insight: Any,
                 blocks: BlockState, legend: GraphLegend, legend_on: bool) -> None:
    """Fill the scene's nodes and show the legend that explains the fills."""
    scale = None
    if build is not None and graph is not None:
        fills, scale = fills_for(graph, insight, blocks)
        build.recolour(fills)
    if not legend_on or graph is None:
        legend.show_graph(None)
    elif insight.metric == "marks":
        legend.show_marks(insight.marks_legend)
    elif insight.metric in metrics.VALUE_METRICS:
        legend.show_scale(scale, insight.missing())
    else:
        legend.show_graph(graph)
