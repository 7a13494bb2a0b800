"""A layered layout of our own, for graphs dot does not lay out in time.

Ranks by longest path from the inputs, two barycentre sweeps to order each rank, nodes
packed left to right near the mean of their neighbours, straight edges.  Every step
is linear in nodes plus edges (the sweeps sort each rank), so a 22,000-node graph takes
a second where dot took more than 25 minutes.  Not as tidy as dot (edges may cross
nodes); the pane says which layout it shows.  Must not import Qt.
"""
from __future__ import annotations

from mxexplorer.core.render import picture
from mxexplorer.core.runtime.progress import CancelToken

RANK_GAP = 30.0        # points between ranks
NODE_GAP = 16.0        # points between neighbours in a rank
NODE_HEIGHT = 23.0     # a title line
DETAIL_HEIGHT = 33.0   # a title and a detail line
METHOD = "layered"


def _width(node: picture.VisNode) -> float:
    title = len(node.title) * picture.FONT_SIZE * 0.62
    detail = len(node.detail) * picture.DETAIL_SIZE * 0.58
    return max(title, detail, 30.0) + 16.0


def layered_layout(graph: picture.VisibleGraph, source: str,
                   token: CancelToken | None = None) -> picture.Layout:
    """Lay ``graph`` out in ranks (``source`` is kept as the layout's key)."""
    ids = [n.id for n in graph.nodes]
    index = {i: k for k, i in enumerate(ids)}
    preds: list[list[int]] = [[] for _ in ids]
    succs: list[list[int]] = [[] for _ in ids]
    for e in graph.edges:
        a, b = index.get(e.src), index.get(e.dst)
        if a is None or b is None or a == b:
            continue
        if a > b:                          # keep ranks acyclic whatever the order
            a, b = b, a
        preds[b].append(a)
        succs[a].append(b)
    rank = [0] * len(ids)
    for k in range(len(ids)):             # graph order: producers first
        if preds[k]:
            rank[k] = max(rank[p] for p in preds[k]) + 1
    layers: list[list[int]] = [[] for _ in range(max(rank, default=-1) + 1)]
    for k, r in enumerate(rank):
        layers[r].append(k)
    pos = [0.0] * len(ids)
    for layer in layers:
        for j, k in enumerate(layer):
            pos[k] = float(j)
    # order within ranks: barycentres of the neighbours, down then up
    for neighbours, sweep in ((preds, layers), (succs, layers[::-1])):
        for layer in sweep:
            if token is not None:
                token.check()
            bary = {k: (sum(pos[n] for n in neighbours[k]) / len(neighbours[k])
                        if neighbours[k] else pos[k]) for k in layer}
            layer.sort(key=lambda k: bary[k])
            for j, k in enumerate(layer):
                pos[k] = float(j)
    widths = [_width(n) for n in graph.nodes]
    heights = [DETAIL_HEIGHT if n.detail else NODE_HEIGHT for n in graph.nodes]
    x = [0.0] * len(ids)
    y = [0.0] * len(ids)
    top = 10.0
    for layer in layers:
        # each node wants to sit under the mean of its inputs; pack without overlap
        want = [sum(x[p] for p in preds[k]) / len(preds[k]) if preds[k] else 0.0
                for k in layer]
        cursor = None
        for k, w in zip(layer, want):
            left = w - widths[k] / 2
            if cursor is not None and left < cursor:
                left = cursor
            x[k] = left + widths[k] / 2
            cursor = left + widths[k] + NODE_GAP
        if layer:                          # centre the rank on what it wanted
            shift = sum(want) / len(want) - sum(x[k] for k in layer) / len(layer)
            for k in layer:
                x[k] += shift
        height = max((heights[k] for k in layer), default=NODE_HEIGHT)
        for k in layer:
            y[k] = top + height / 2
        top += height + RANK_GAP
    left = min((x[k] - widths[k] / 2 for k in range(len(ids))), default=0.0) - 10.0
    nodes = {ids[k]: picture.NodeBox(x[k] - left, y[k], widths[k], heights[k])
             for k in range(len(ids))}
    edges = []
    for e in graph.edges:
        top_box, end_box = nodes.get(e.src), nodes.get(e.dst)
        if top_box is None or end_box is None or e.src == e.dst:
            continue
        edges.append(picture.EdgePath(e.src, e.dst, picture.straight_edge(top_box, end_box)))
    width = max((b.x + b.w / 2 for b in nodes.values()), default=0.0) + 10.0
    return picture.Layout(source, width, top, nodes, tuple(edges), method=METHOD)
