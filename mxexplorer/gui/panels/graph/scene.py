"""Graph scenes: the styles, and the scene built from one dot layout, a slice at a time.

A :class:`SceneBuild` turns a :class:`~mxexplorer.core.render.drawing.Layout` into
QGraphicsItems in chunks of about 20 ms (the event loop never waits long for a big
graph), and places shape labels on its edges.  Drawing our own items (instead of
rendering dot's SVG with QSvgRenderer, as STYLE.md suggests) keeps 8,000-node graphs
smooth to scroll (Qt paints only the visible items, text is skipped when zoomed out)
and lets tags and inferred shapes restyle the picture without a new layout.
"""
from __future__ import annotations

import time
from typing import Any, Mapping

from PySide6.QtCore import QObject, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
)

from mxexplorer.core.analysis.shapes import Shape, format_shape
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.tags import FORCE_MIRRORING, MIRROR_STAGE, is_mirror_stage
from mxexplorer.core.render import drawing, metrics
from mxexplorer.gui.theme import Theme

NODE_KEY = 0        # item.data(NODE_KEY): the node id an item belongs to
TEXT_MIN_SCALE = 0.42   # below this zoom, node text is not drawn
LABEL_MIN_SCALE = 0.6   # below this zoom, edge shapes are not drawn
CHUNK_SECONDS = 0.02    # scene building works in slices this long
HIDDEN_ATTRS = (MIRROR_STAGE, FORCE_MIRRORING)


def _layer(scene: QGraphicsScene, z: float) -> QGraphicsPathItem:
    item = QGraphicsPathItem()
    item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, True)
    item.setZValue(z)
    scene.addItem(item)
    return item


def _spline(points: tuple[tuple[float, float], ...]) -> QPainterPath:
    """A B-spline from dot's control points, with an arrowhead at the end."""
    path = QPainterPath(QPointF(*points[0]))
    for k in range(1, len(points) - 2, 3):
        path.cubicTo(QPointF(*points[k]), QPointF(*points[k + 1]), QPointF(*points[k + 2]))
    end = QPointF(*points[-1])
    before = QPointF(*points[-2]) if len(points) > 1 else end - QPointF(0, 1)
    d = end - before
    length = (d.x() ** 2 + d.y() ** 2) ** 0.5 or 1.0
    ux, uy = d.x() / length, d.y() / length
    tip = end + QPointF(ux * 6.5, uy * 6.5)
    side = QPointF(-uy * 3.0, ux * 3.0)
    path.moveTo(end + side)
    path.lineTo(tip)
    path.lineTo(end - side)
    path.closeSubpath()
    return path


class SceneStyles:
    """Pens, brushes and fonts, made once."""

    def __init__(self, theme: Theme) -> None:
        self.theme = theme
        self.brush = {f: QBrush(QColor(fill)) for f, (fill, _) in drawing.FAMILY_COLOURS.items()}
        self.pen = {}
        for family, (_, border) in drawing.FAMILY_COLOURS.items():
            pen = QPen(QColor(border), 1.1)
            pen.setCosmetic(False)
            self.pen[family] = pen
        self.mirror = QPen(QColor(drawing.MIRROR_COLOUR), 3.0)
        self.recompute = QPen(QColor(drawing.RECOMPUTE_COLOUR), 2.2, Qt.PenStyle.DashLine)
        self.both = QPen(QColor(drawing.MIRROR_COLOUR), 3.0, Qt.PenStyle.DashLine)
        self.selected = QPen(QColor(theme.selected), 3.2)
        self.edge = QPen(QColor(theme.edge), 1.0)
        self.edge_brush = QBrush(QColor(theme.edge))
        self.title = QFont(drawing.FONT)
        self.title.setPixelSize(int(drawing.FONT_SIZE))
        self.title.setBold(True)
        self.plain = QFont(drawing.FONT)
        self.plain.setPixelSize(int(drawing.FONT_SIZE))
        self.detail = QFont(drawing.FONT)
        self.detail.setPixelSize(int(round(drawing.DETAIL_SIZE)))
        self.label = QFont(drawing.FONT)
        self.label.setPixelSize(int(drawing.EDGE_FONT_SIZE))
        self.label_brush = QBrush(QColor(theme.label))
        self.stale_label_brush = QBrush(QColor(theme.stale_label))   # of an older graph
        self._metrics: dict[int, QFontMetricsF] = {}

    def node_pen(self, node: drawing.VisNode, selected: bool) -> QPen:
        if selected:
            return self.selected
        if node.mirror_stage and node.recompute:
            return self.both
        if node.mirror_stage:
            return self.mirror
        if node.recompute:
            return self.recompute
        return self.pen[node.family]

    def width(self, font: QFont, text: str) -> float:
        metrics = self._metrics.get(id(font))
        if metrics is None:
            metrics = self._metrics[id(font)] = QFontMetricsF(font)
        return metrics.horizontalAdvance(text)


class SceneBuild:
    """Everything to draw one layout; :meth:`step` does a slice of it."""

    def __init__(self, graph: drawing.VisibleGraph, layout: drawing.Layout,
                 styles: SceneStyles, selected: set[int], owner: QObject):
        self.graph = graph
        self.layout = layout
        self.styles = styles
        # owned by the pane: Qt deletes it with the pane, never Python's collector
        self.scene = QGraphicsScene(owner)
        self.scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        margin = 20.0
        self.scene.setSceneRect(QRectF(-margin, -margin, layout.width + 2 * margin,
                                       layout.height + 2 * margin))
        self.edge_layer = _layer(self.scene, 0)
        self.node_layer = _layer(self.scene, 1)
        self.text_layer = _layer(self.scene, 2)
        self.label_layer = _layer(self.scene, 3)
        self.node_items: dict[int, QGraphicsPathItem] = {}
        self.edge_items: list[QGraphicsPathItem] = []
        self.label_items: list[QGraphicsSimpleTextItem] = []
        self.text_items: dict[int, list[QGraphicsSimpleTextItem]] = {}
        self.fills: dict[int, str] | None = None     # colour by metric (None: families)
        self.selected = selected
        self._work = self._steps()
        self.done = False

    def _steps(self) -> Any:
        st = self.styles
        for node in self.graph.nodes:
            box = self.layout.nodes.get(node.id)
            if box is None:
                continue
            path = QPainterPath()
            rect = QRectF(box.x - box.w / 2, box.y - box.h / 2, box.w, box.h)
            path.addRoundedRect(rect, 5.0, 5.0)
            item = QGraphicsPathItem(path, self.node_layer)
            item.setBrush(st.brush[node.family])
            item.setPen(st.node_pen(node, node.id in self.selected))
            item.setData(NODE_KEY, node.id)
            self.node_items[node.id] = item
            self._text(node, rect)
            yield
        paths = [e for e in self.layout.edges if len(e.points) >= 4]
        for edge in paths:
            item = QGraphicsPathItem(_spline(edge.points), self.edge_layer)
            item.setPen(st.edge)
            item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
            self.edge_items.append(item)
            yield

    def _text(self, node: drawing.VisNode, rect: QRectF) -> None:
        st = self.styles
        is_op = node.family not in ("input", "parameter")
        lines = [(node.title, st.title if is_op else st.plain)]
        if node.detail:
            lines.append((node.detail, st.detail))
        heights = [f.pixelSize() * 1.22 for _, f in lines]
        y = rect.center().y() - sum(heights) / 2
        for (text, font), h in zip(lines, heights):
            item = QGraphicsSimpleTextItem(text, self.text_layer)
            item.setFont(font)
            width = st.width(font, text)
            room = rect.width() - 6
            scale = min(1.0, room / width) if width > 0 else 1.0
            if scale < 1.0:
                item.setScale(scale)
            item.setPos(rect.center().x() - width * scale / 2, y + (h - h * scale) / 2)
            item.setData(NODE_KEY, node.id)
            item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
            self.text_items.setdefault(node.id, []).append(item)
            y += h

    def close(self) -> None:
        """Drop the generator: its frame refers to this object, a cycle that only the
        garbage collector (on any thread) would break, deleting the scene there."""
        self._work = iter(())

    def step(self, budget: float = CHUNK_SECONDS) -> bool:
        """Work for up to ``budget`` seconds; True when the scene is complete."""
        end = time.perf_counter() + budget
        for _ in self._work:
            if time.perf_counter() >= end:
                return False
        self.close()
        if not self.done:
            self.scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)
            self.done = True
        return True


    def recolour(self, fills: dict[int, str] | None) -> None:
        """Fill every node from ``fills`` (text black or white, whichever reads), or by
        op family again (None).  Call when the scene is complete."""
        if fills == self.fills:
            return
        self.fills = fills
        st = self.styles
        black, white = QBrush(QColor("#000000")), QBrush(QColor("#ffffff"))
        for node in self.graph.nodes:
            item = self.node_items.get(node.id)
            if item is None:
                continue
            fill = fills.get(node.id, metrics.NO_VALUE) if fills is not None else None
            item.setBrush(st.brush[node.family] if fill is None else QBrush(QColor(fill)))
            text = white if fill is not None and metrics.text_colour(fill) == "#ffffff" \
                else black
            for label in self.text_items.get(node.id, ()):
                label.setBrush(text)

    def restyle(self, graph: drawing.VisibleGraph, selected: set[int]) -> None:
        """The same layout with new tags: new pens on the nodes whose look changed."""
        old = {n.id: n for n in self.graph.nodes}
        for node in graph.nodes:
            if old.get(node.id) != node and node.id in self.node_items:
                self.node_items[node.id].setPen(
                    self.styles.node_pen(node, node.id in selected))
        self.graph = graph

    def set_selected(self, before: set[int], after: set[int]) -> None:
        """Selection pens: off for ``before``, on for ``after`` (only those that
        changed), selected nodes raised."""
        nodes = {n.id: n for n in self.graph.nodes}
        for node_id in before ^ after:
            item = self.node_items.get(node_id)
            if item is not None and node_id in nodes:
                item.setPen(self.styles.node_pen(nodes[node_id], node_id in after))
                item.setZValue(1 if node_id in after else 0)

    def place_labels(self, shapes: Mapping[tuple[int, int], Shape] | None,
                     stale: bool = False) -> None:
        """Label every edge with the shape it carries (``stale``: greyed, for the
        graph before an edit); None removes the labels."""
        for item in self.label_items:
            self.scene.removeItem(item)
        self.label_items = []
        if shapes is None:
            return
        by_pair: dict[tuple[int, int], list[drawing.VisEdge]] = {}
        for e in self.graph.edges:
            by_pair.setdefault((e.src, e.dst), []).append(e)
        used: dict[tuple[int, int], int] = {}
        st = self.styles
        brush = st.stale_label_brush if stale else st.label_brush
        free = _FreeSpace()
        for box in self.layout.nodes.values():
            # with room for the border pens (a selected node's is 3.2 wide)
            free.take(QRectF(box.x - box.w / 2 - 2, box.y - box.h / 2 - 2, box.w + 4,
                             box.h + 4))
        for item, path in zip(self.edge_items, (e for e in self.layout.edges
                                                if len(e.points) >= 4)):
            pair = (path.src, path.dst)
            k = used.get(pair, 0)
            used[pair] = k + 1
            candidates = by_pair.get(pair, [])
            if k >= len(candidates):
                continue
            edge = candidates[k]
            shape = shapes.get(edge.entry)
            if not shape:
                continue
            text = drawing.format_dims(shape)
            label = QGraphicsSimpleTextItem(text, self.label_layer)
            label.setFont(st.label)
            label.setBrush(brush)
            label.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
            size = label.boundingRect()          # what it covers, not only the text
            spot = free.place(item.path(), size.width() + 1, size.height() + 1)
            label.setPos(spot.topLeft())
            self.label_items.append(label)


class _FreeSpace:
    """Rectangles taken on the scene (nodes, labels placed), in a grid, so that a new
    label goes where it overlaps nothing: the first free of a few spots along its edge,
    right of the line, then left."""

    CELL = 64.0
    SPOTS = (0.45, 0.3, 0.6, 0.2, 0.7, 0.38, 0.52, 0.12, 0.8, 0.25, 0.65, 0.05, 0.9)

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[QRectF]] = {}

    def _keys(self, rect: QRectF) -> list[tuple[int, int]]:
        c = self.CELL
        return [(i, j) for i in range(int(rect.left() // c), int(rect.right() // c) + 1)
                for j in range(int(rect.top() // c), int(rect.bottom() // c) + 1)]

    def take(self, rect: QRectF) -> None:
        for key in self._keys(rect):
            self.cells.setdefault(key, []).append(rect)

    def is_free(self, rect: QRectF) -> bool:
        return not any(r.intersects(rect) for key in self._keys(rect)
                       for r in self.cells.get(key, ()))

    def place(self, path: QPainterPath, width: float, height: float) -> QRectF:
        """Where a ``width`` x ``height`` label of this edge goes (taken from now on)."""
        first = None
        for t in self.SPOTS:
            p = path.pointAtPercent(t)
            for x in (p.x() + 4, p.x() - 4 - width):
                rect = QRectF(x, p.y() - height / 2, width, height)
                if first is None:
                    first = rect
                if self.is_free(rect):
                    self.take(rect)
                    return rect
        assert first is not None
        # a crowded spot (a short edge into a wide concat): further out to the sides
        for step in range(1, 9):
            for dx in (step * 14.0, -step * 14.0 - width):
                rect = QRectF(first.left() + dx, first.top(), width, height)
                if self.is_free(rect):
                    self.take(rect)
                    return rect
        self.take(first)                 # nowhere free: where it was always put
        return first


def node_tooltip(doc: GraphDocument, node_id: int,
                 shapes: Mapping[tuple[int, int], Shape] | None) -> str:
    """A node's tooltip: name, op, attributes, the shapes in and out (when known for
    the graph as it is) and its mirroring tags."""
    if node_id >= len(doc.nodes):
        return ""
    node = doc.nodes[node_id]
    esc = drawing._html
    kind = "variable" if node.is_variable else node.op
    rows = [f"<b>{esc(node.name)}</b>", f"op: {esc(kind)}"]
    attrs = [(k, v) for k, v in node.attrs.items() if k not in HIDDEN_ATTRS]
    for k, v in attrs[:14]:
        rows.append(f"{esc(k)} = {esc(str(v))[:80]}")
    if len(attrs) > 14:
        rows.append(f"\u2026 {len(attrs) - 14} more")
    if shapes is not None:
        for src, index, _ in node.inputs:
            shape = shapes.get((src, index))
            rows.append(f"in {esc(doc.nodes[src].name)}: "
                        f"{format_shape(shape) if shape else '?'}")
        for k, name in enumerate(doc.output_names(node_id)):
            shape = shapes.get((node_id, k))
            rows.append(f"out {esc(name)}: {format_shape(shape) if shape else '?'}")
    if is_mirror_stage(node.attrs):
        rows.append(f'<span style="color:{drawing.MIRROR_COLOUR}">mirror stage</span>')
    if FORCE_MIRRORING in node.attrs:
        rows.append(f'<span style="color:{drawing.RECOMPUTE_COLOUR}">recomputed in '
                    "backward (force_mirroring)</span>")
    return "<br/>".join(rows)
