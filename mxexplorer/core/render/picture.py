"""What a picture of a graph is made of: the drawn nodes and edges, their boxes and
paths once laid out, and the look they share (op family colours, fonts)."""
from __future__ import annotations

from dataclasses import dataclass, field

# (fill, border) per op family; pastel fills after mx.viz.plot_network's palette
FAMILY_COLOURS: dict[str, tuple[str, str]] = {
    "input": ("#bfe6df", "#3f8f83"),
    "parameter": ("#f4f4f4", "#a8a8a8"),
    "convolution": ("#fbc9c0", "#b8473a"),
    "dense": ("#f6b3a8", "#a33a2c"),
    "normalization": ("#d9d5f0", "#675da6"),
    "activation": ("#fff3b0", "#a68d10"),
    "pooling": ("#c6dcef", "#3b75a6"),
    "concat": ("#fddcb5", "#bf7417"),
    "shape": ("#eadfcb", "#8a7049"),
    "elementwise": ("#dcefc3", "#5f8f27"),
    "output": ("#c9e8b5", "#437f24"),
    "recurrent": ("#f5cfe3", "#9c4576"),
    "dropout": ("#e4e4e4", "#777777"),
    "other": ("#ececec", "#7c7c7c"),
    "unknown": ("#ffffff", "#d02020"),
    "block": ("#e6ecf5", "#4a6b9a"),
}
FAMILY_NAMES: dict[str, str] = {
    "input": "data input", "parameter": "parameter / aux", "convolution": "convolution",
    "dense": "fully connected", "normalization": "normalization",
    "activation": "activation", "pooling": "pooling", "concat": "concat / slice",
    "shape": "reshape / cast", "elementwise": "element-wise", "output": "output / loss",
    "recurrent": "recurrent / embedding", "dropout": "dropout", "other": "other op",
    "unknown": "op unknown to MXNet", "block": "block (double-click opens it)",
}
MIRROR_COLOUR = "#7b2cbf"     # a mirror-stage boundary: thick solid border
RECOMPUTE_COLOUR = "#e07000"  # recomputed in backward (force_mirroring): dashed border
FONT = "Helvetica"
FONT_SIZE = 10.0
DETAIL_SIZE = 8.5
EDGE_FONT_SIZE = 8.0
PNG_DPI = 150          # exported PNGs: sharp enough to print


@dataclass(frozen=True)
class VisNode:
    id: int
    title: str
    detail: str
    family: str
    mirror_stage: bool
    recompute: bool


@dataclass(frozen=True)
class VisEdge:
    src: int
    index: int   # output index of ``origin``
    dst: int
    origin: int | None = None    # the node whose output it carries, when ``src`` is a block

    @property
    def entry(self) -> tuple[int, int]:
        """The internal output the edge carries: ``(node, index)``."""
        return (self.src if self.origin is None else self.origin, self.index)


@dataclass(frozen=True)
class VisibleGraph:
    """What the picture shows: nodes in document order and the edges between them."""

    nodes: tuple[VisNode, ...]
    edges: tuple[VisEdge, ...]
    show_params: bool

    def families(self) -> list[str]:
        seen = dict.fromkeys(n.family for n in self.nodes)
        return [f for f in FAMILY_COLOURS if f in seen]

    @property
    def has_tags(self) -> bool:
        return any(n.mirror_stage or n.recompute for n in self.nodes)


@dataclass(frozen=True)
class NodeBox:
    """A node's box in points, y growing downwards; (x, y) is its centre."""

    x: float
    y: float
    w: float
    h: float


@dataclass(frozen=True)
class EdgePath:
    src: int
    dst: int
    points: tuple[tuple[float, float], ...]   # cubic B-spline control points (1 + 3k)


@dataclass(frozen=True)
class Layout:
    source: str
    width: float
    height: float
    nodes: dict[int, NodeBox]
    edges: tuple[EdgePath, ...] = field(default=())
    method: str = "dot"      # or "layered": ours, when dot ran out of time
    note: str = ""           # why (for the pane to say)


def straight_edge(a: NodeBox, b: NodeBox) -> tuple[tuple[float, float], ...]:
    """Control points of a straight edge from ``a``'s bottom to above ``b``'s top."""
    p0 = (a.x, a.y + a.h / 2)
    p3 = (b.x, b.y - b.h / 2 - 6.5)          # room for the arrowhead
    dx, dy = p3[0] - p0[0], p3[1] - p0[1]
    return (p0, (p0[0] + dx / 3, p0[1] + dy / 3), (p0[0] + 2 * dx / 3, p0[1] + 2 * dy / 3), p3)
