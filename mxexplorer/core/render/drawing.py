"""The network as a picture: what is drawn, how it looks, and graphviz ``dot`` to lay it out.

One description serves both consumers:

* the GUI asks :func:`layout_source` for a DOT graph with labels only, runs
  :func:`run_dot` in ``plain`` format on a worker and draws its own scene from
  :func:`parse_plain` (restyling on tags and adding shapes needs no new layout);
* ``mxexplorer render`` and the GUI's export ask :func:`styled_source` for the same
  graph with colours, tags, edge shapes and a legend, and let ``dot`` write SVG, PNG
  or PDF (:func:`render_file`).

Node ids in DOT are ``n<index>`` so renames never move anything.  No Qt here.
"""
from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import replace
from typing import Iterable, Mapping, Sequence

from mxexplorer.core.graph import opinfo, oplabels
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.core.graph.tags import FORCE_MIRRORING, is_mirror_stage
from mxexplorer.core.render import layered, metrics
from mxexplorer.core.render.picture import (  # noqa: F401 - drawing's callers use these
    DETAIL_SIZE as DETAIL_SIZE,
)
from mxexplorer.core.render.picture import (
    EDGE_FONT_SIZE as EDGE_FONT_SIZE,
)
from mxexplorer.core.render.picture import (
    FAMILY_COLOURS as FAMILY_COLOURS,
)
from mxexplorer.core.render.picture import (
    FAMILY_NAMES as FAMILY_NAMES,
)
from mxexplorer.core.render.picture import (
    FONT as FONT,
)
from mxexplorer.core.render.picture import (
    FONT_SIZE as FONT_SIZE,
)
from mxexplorer.core.render.picture import (
    MIRROR_COLOUR as MIRROR_COLOUR,
)
from mxexplorer.core.render.picture import (
    PNG_DPI as PNG_DPI,
)
from mxexplorer.core.render.picture import (
    RECOMPUTE_COLOUR as RECOMPUTE_COLOUR,
)
from mxexplorer.core.render.picture import (
    EdgePath as EdgePath,
)
from mxexplorer.core.render.picture import (
    Layout as Layout,
)
from mxexplorer.core.render.picture import (
    NodeBox as NodeBox,
)
from mxexplorer.core.render.picture import (
    VisEdge as VisEdge,
)
from mxexplorer.core.render.picture import (
    VisibleGraph as VisibleGraph,
)
from mxexplorer.core.render.picture import (
    VisNode as VisNode,
)
from mxexplorer.core.render.picture import (
    straight_edge as straight_edge,
)
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.files import write_atomic
from mxexplorer.core.runtime.graphviz import (  # noqa: F401 - drawing's callers use these names
    DotTimeout,
    GraphvizMissing,
    dot_program,
    install_hint,
    missing_message,
    run_dot,
)
from mxexplorer.core.runtime.progress import CancelToken


def visible_graph(doc: GraphDocument, show_params: bool = False) -> VisibleGraph:
    """The nodes and edges drawn: operators and data inputs, plus parameter and
    auxiliary variables when ``show_params`` (``plot_network(hide_weights=False)``).
    Computed once per document revision."""
    graph: VisibleGraph = doc.cached(f"visible_graph:{show_params}",
                                     lambda: _visible_graph(doc, show_params))
    return graph


def matching(graph: VisibleGraph, doc: GraphDocument, needle: str) -> list[int]:
    """The drawn nodes whose title or node name holds ``needle`` (any case)."""
    needle = needle.lower()
    if not needle:
        return []
    nodes = doc.nodes
    return [n.id for n in graph.nodes if needle in n.title.lower()
            or (n.id < len(nodes) and needle in nodes[n.id].name.lower())]


def document_layout_source(doc: GraphDocument, show_params: bool = False) -> str:
    """:func:`layout_source` of the document's visible graph, once per revision."""
    source: str = doc.cached(f"layout_source:{show_params}",
                             lambda: layout_source(visible_graph(doc, show_params)))
    return source


def _visible_graph(doc: GraphDocument, show_params: bool) -> VisibleGraph:
    kinds = doc.kinds()
    shown: dict[int, VisNode] = {}
    for i in doc.order():
        node = doc.nodes[i]
        if node.is_variable:
            if kinds[i] != NodeKind.DATA and not show_params:
                continue
            family = "input" if kinds[i] == NodeKind.DATA else "parameter"
            shown[i] = VisNode(i, node.name, "", family, False, False)
            continue
        if opinfo.is_registered(node.op):
            family = oplabels.op_family(node.op)
            detail = oplabels.describe_params(node.op, node.attrs)
        else:
            family, detail = "unknown", "not in MXNet 1.9.1"
        shown[i] = VisNode(i, node.op, detail, family, is_mirror_stage(node.attrs),
                           opinfo.flag(node.attrs, FORCE_MIRRORING))
    edges = []
    for i in shown:
        for src, index, _ in doc.nodes[i].inputs:
            if src in shown:
                edges.append(VisEdge(src, index, i))
    return VisibleGraph(tuple(shown.values()), tuple(edges), show_params)


# ------------------------------------------------------------------ DOT text
def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def node_label(node: VisNode) -> str:
    """An HTML-like DOT label: the op in bold, its key parameters under it."""
    title = f'<b>{_html(node.title)}</b>' if node.family not in ("input", "parameter") \
        else _html(node.title)
    if node.detail:
        return (f'<{title}<br/><font point-size="{DETAIL_SIZE:g}">'
                f'{_html(node.detail)}</font>>')
    return f"<{title}>"


_GRAPH_HEAD = (
    "digraph mxnet {",
    '  graph [rankdir=TB, nodesep=0.22, ranksep=0.42, bgcolor="transparent", '
    'outputorder=edgesfirst];',
    f'  node [shape=box, style="rounded,filled", fontname="{FONT}", '
    f'fontsize={FONT_SIZE:g}, height=0.32, margin="0.10,0.04", penwidth=1.1];',
    '  edge [arrowsize=0.65, color="#555555", penwidth=1.0];',
)


#: a node with more edges than this on one side is a hub (an unrolled network's label
#: slices feeding 130 steps): dot gets only its first edge there, the others are drawn
#: straight afterwards (with all of them a 300-node overview took dot over a minute)
HUB_EDGES = 16


def layout_edges(edges: tuple[VisEdge, ...]) -> list[VisEdge]:
    """The edges dot lays out: all but a hub's second and later ones."""
    out_count = Counter(e.src for e in edges)
    in_count = Counter(e.dst for e in edges)
    seen_out: set[int] = set()
    seen_in: set[int] = set()
    keep = []
    for e in edges:
        if out_count[e.src] > HUB_EDGES:
            if e.src in seen_out:
                continue
            seen_out.add(e.src)
        if in_count[e.dst] > HUB_EDGES:
            if e.dst in seen_in:
                continue
            seen_in.add(e.dst)
        keep.append(e)
    return keep


def layout_source(graph: VisibleGraph) -> str:
    """DOT text whose layout depends only on what changes node sizes or edges (not
    on names, tags or shapes): equal text, equal layout."""
    lines = list(_GRAPH_HEAD)
    for n in graph.nodes:
        lines.append(f"  n{n.id} [label={node_label(n)}];")
    for e in layout_edges(graph.edges):
        lines.append(f"  n{e.src} -> n{e.dst};")
    lines.append("}")
    return "\n".join(lines)


def with_hub_edges(layout: Layout, graph: VisibleGraph) -> Layout:
    """``layout`` with the edges dot was not given (a hub's) drawn straight."""
    laid = Counter((e.src, e.dst) for e in layout.edges)
    extra = []
    for e in graph.edges:
        if laid[(e.src, e.dst)] > 0:
            laid[(e.src, e.dst)] -= 1
            continue
        a, b = layout.nodes.get(e.src), layout.nodes.get(e.dst)
        if a is not None and b is not None and e.src != e.dst:
            extra.append(EdgePath(e.src, e.dst, straight_edge(a, b)))
    return replace(layout, edges=layout.edges + tuple(extra)) if extra else layout


def format_dims(shape: Iterable[int]) -> str:
    return "\u00d7".join(str(d) for d in shape)


def node_style(node: VisNode) -> dict[str, str]:
    fill, border = FAMILY_COLOURS[node.family]
    style = {"fillcolor": fill, "color": border}
    if node.recompute:
        style.update(color=RECOMPUTE_COLOUR, penwidth="2.2", style='"rounded,filled,dashed"')
    if node.mirror_stage:
        style.update(color=MIRROR_COLOUR, penwidth="3.0")
    return style


def styled_source(doc: GraphDocument, graph: VisibleGraph,
                  shapes: Mapping[tuple[int, int], tuple[int, ...]] | None = None,
                  legend: bool = True, title: str | None = None, dpi: int = 0,
                  fills: Mapping[int, str] | None = None,
                  key: Sequence[tuple[str, str]] | None = None) -> str:
    """DOT text for a finished picture: colours, tags, shapes on edges, a legend.

    ``shapes`` maps ``(node, output index)`` to a shape (``ShapeResult.by_entry``).
    ``fills``: each node's fill instead of its family's (colour by metric), explained
    by ``key``, (colour, words) rows of the legend ("" colour: a heading).
    Node ``id``s in an SVG are ``n<index>``, with the node name as tooltip.
    """
    lines = list(_GRAPH_HEAD)
    if dpi:
        lines.insert(2, f"  graph [dpi={int(dpi)}];")
    if title:
        lines.insert(2, f'  graph [label={_quote(title)}, labelloc=t, fontname="{FONT}", '
                        "fontsize=14];")
    for n in graph.nodes:
        attrs = node_style(n)
        if fills is not None and n.id in fills:
            attrs["fillcolor"] = fills[n.id]
            attrs["fontcolor"] = f'"{metrics.text_colour(fills[n.id])}"'
        attrs["label"] = node_label(n)
        attrs["id"] = f'"n{n.id}"'
        attrs["tooltip"] = _quote(doc.nodes[n.id].name if n.id < len(doc.nodes)
                                  else n.title)
        if attrs["color"].startswith("#"):
            attrs["color"] = f'"{attrs["color"]}"'
        attrs["fillcolor"] = f'"{attrs["fillcolor"]}"'
        body = ", ".join(f"{k}={v}" for k, v in attrs.items())
        lines.append(f"  n{n.id} [{body}];")
    ranked = {id(e) for e in layout_edges(graph.edges)}
    for k, e in enumerate(graph.edges):
        # a hub's other edges do not rank nodes (with them, dot took minutes)
        extra = "" if id(e) in ranked else ", constraint=false"
        shape = shapes.get(e.entry) if shapes else None
        if shape:
            extra += (f', label={_quote(" " + format_dims(shape))}, fontsize={EDGE_FONT_SIZE:g}, '
                     f'fontname="{FONT}", fontcolor="#444444"')
        lines.append(f'  n{e.src} -> n{e.dst} [id="e{k}"{extra}];')
    if legend:
        lines.extend(_legend(graph, key))
    lines.append("}")
    return "\n".join(lines)


def _legend(graph: VisibleGraph, key: Sequence[tuple[str, str]] | None = None) -> list[str]:
    rows = []
    for colour, words in key or ():
        cell = f'<td bgcolor="{colour}" border="1" color="#777777" width="18"></td>' \
            if colour else "<td></td>"
        rows.append(f'<tr>{cell}<td align="left">{_html(words)}</td></tr>')
    for family in graph.families() if key is None else ():
        fill, border = FAMILY_COLOURS[family]
        rows.append(f'<tr><td bgcolor="{fill}" border="1" color="{border}" width="18"></td>'
                    f'<td align="left">{_html(FAMILY_NAMES[family])}</td></tr>')
    if any(n.mirror_stage for n in graph.nodes):
        rows.append(f'<tr><td border="3" color="{MIRROR_COLOUR}" width="18"></td>'
                    '<td align="left">mirror stage</td></tr>')
    if any(n.recompute for n in graph.nodes):
        rows.append(f'<tr><td border="2" color="{RECOMPUTE_COLOUR}" bgcolor="#fff4e8" '
                    'width="18"></td><td align="left">recomputed (force_mirroring)</td></tr>')
    table = ('<<table border="0" cellborder="0" cellspacing="3" cellpadding="2">'
             + "".join(rows) + "</table>>")
    return ["  subgraph cluster_legend {",
            '    graph [label="Legend", fontname="' + FONT + '", fontsize=10, '
            'style="rounded", color="#bbbbbb"];',
            f'    legend [shape=plaintext, style="", fontsize=9, label={table}];',
            "  }"]


# ------------------------------------------------------------------ plain output
def _node_id(token: str) -> int:
    token = token.strip('"')
    if not token.startswith("n") or not token[1:].isdigit():
        raise UserError(f"graphviz dot wrote an unexpected node name {token!r}")
    return int(token[1:])


#: the largest coordinate taken from dot, in inches (a graph 2.5 km tall)
_MAX_INCHES = 1e5


def _inches(token: str) -> float:
    value = float(token)
    if not math.isfinite(value) or abs(value) > _MAX_INCHES:
        raise ValueError(f"a coordinate of {token[:20]}")
    return value


def parse_plain(text: str, source: str = "") -> Layout:
    """Read ``dot -Tplain`` output into point coordinates with y pointing down.

    Raises
    ------
    UserError : dot wrote something that is not a layout (NaN or absurd coordinates,
        short lines): one line saying so, never a traceback.
    """
    pts = 72.0
    width = height = 0.0
    nodes: dict[int, NodeBox] = {}
    edges: list[EdgePath] = []
    try:
        for line in text.splitlines():
            if line.startswith("node "):
                parts = line.split(" ", 6)
                nodes[_node_id(parts[1])] = NodeBox(
                    _inches(parts[2]) * pts, height - _inches(parts[3]) * pts,
                    _inches(parts[4]) * pts, _inches(parts[5]) * pts)
            elif line.startswith("edge "):
                parts = line.split(" ")
                count = int(parts[3])
                if not 0 < count <= 100_000:
                    raise ValueError(f"an edge of {count} points")
                coords = parts[4:4 + 2 * count]
                points = tuple((_inches(coords[2 * k]) * pts,
                                height - _inches(coords[2 * k + 1]) * pts)
                               for k in range(count))
                edges.append(EdgePath(_node_id(parts[1]), _node_id(parts[2]), points))
            elif line.startswith("graph "):
                parts = line.split()
                width, height = _inches(parts[2]) * pts, _inches(parts[3]) * pts
    except (ValueError, IndexError) as exc:
        raise UserError(f"graphviz dot wrote a layout mxexplorer cannot read ({exc})") \
            from None
    return Layout(source, width, height, nodes, tuple(edges))


def compute_layout(source: str, token: CancelToken | None = None,
                   graph: VisibleGraph | None = None, time_limit: float | None = None
                   ) -> Layout:
    """Lay out ``layout_source`` text (the worker's whole job).  With ``graph`` and a
    ``time_limit``, a dot that runs longer is stopped and our layered layout of
    ``graph`` is returned instead (its ``note`` says so)."""
    try:
        out = run_dot(source, "plain", token, time_limit=time_limit)
    except DotTimeout:
        if graph is None:
            raise
        layout = layered.layered_layout(graph, source, token)
        return replace(layout, note=f"dot took over {time_limit:.0f} s")
    if token is not None:
        token.check()
    try:
        layout = parse_plain(out.decode("utf-8", "replace"), source)
    except UserError as exc:
        if graph is None:
            raise
        # a broken dot (a build that prints NaN): our own layout, and why
        note = str(exc)[len("graphviz "):]
        return replace(layered.layered_layout(graph, source, token), note=note)
    return with_hub_edges(layout, graph) if graph is not None else layout


# ------------------------------------------------------------------ files
FORMATS = ("svg", "png", "pdf")


def format_for(path: str) -> str:
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in FORMATS:
        raise UserError(f"{path}: cannot tell the picture format; use .svg, .png or .pdf")
    return ext


def pinned_source(source: str, layout: Layout) -> str:
    """``source`` (:func:`styled_source`'s DOT, without a legend) with every node at its
    place in ``layout`` and straight edges, for ``run_dot(..., pinned=True)``: graphviz
    then only draws, in seconds, where its own layout of the graph took minutes."""
    lines = source.split("\n")
    out = [lines[0], "  graph [splines=false, overlap=true];"]
    for line in lines[1:]:
        head = line.split(" [", 1)[0].strip()
        if line.startswith("  n") and head[1:].isdigit():
            box = layout.nodes.get(int(head[1:]))
            if box is not None:
                line = line.replace(" [", f' [pos="{box.x:.1f},{layout.height - box.y:.1f}!", ', 1)
        out.append(line)
    return "\n".join(out)


def render_file(source: str, path: str, token: CancelToken | None = None,
                time_limit: float | None = None, pinned: bool = False) -> int:
    """Write ``source`` drawn by dot to ``path`` (format from the extension), atomically
    (``pinned``: positions given, see :func:`pinned_source`).  Returns the number of
    bytes written."""
    fmt = format_for(path)
    data = run_dot(source, fmt if fmt != "png" else "png:cairo", token, time_limit=time_limit,
                   pinned=pinned)
    if token is not None:
        token.check()
    write_atomic(path, data)
    return len(data)
