"""GraphPane: the network laid out by graphviz ``dot``, drawn as a QGraphicsScene.

``dot -Tplain`` runs on a worker (cancellable; a newer request supersedes an older
one) and returns coordinates only; this module draws the scene itself, a chunk at a
time so the event loop never waits long, and swaps it in when complete.  Drawing our
own items (instead of rendering dot's SVG with QSvgRenderer, as STYLE.md suggests)
keeps 8,000-node graphs smooth to scroll (Qt paints only the visible items, text is
skipped when zoomed out) and lets tags and inferred shapes restyle the picture
without a new layout.  Exports go through dot itself (:mod:`mxexplorer.core.drawing`)
for a publication-quality SVG, PNG or PDF.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRectF, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QKeySequence,
    QPainter,
    QPainterPath,
    QPen,
    QShortcut,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.core import drawing
from mxexplorer.core.document import Change, GraphDocument
from mxexplorer.core.edits import FORCE_MIRRORING, MIRROR_STAGE, is_mirror_stage
from mxexplorer.core.errors import UserError
from mxexplorer.core.shapes import ShapeResult, format_shape
from mxexplorer.gui import workers
from mxexplorer.gui.bridge import DocumentBridge, Selection

NODE_KEY = 0        # item.data(NODE_KEY): the node id an item belongs to
TEXT_MIN_SCALE = 0.42   # below this zoom, node text is not drawn
LABEL_MIN_SCALE = 0.6   # below this zoom, edge shapes are not drawn
CHUNK_SECONDS = 0.02    # scene building works in slices this long
SELECTED_COLOUR = QColor("#1769e0")
EDGE_COLOUR = QColor("#5a5a5a")
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


class _Styles:
    """Pens, brushes and fonts, made once."""

    def __init__(self) -> None:
        self.brush = {f: QBrush(QColor(fill)) for f, (fill, _) in drawing.FAMILY_COLOURS.items()}
        self.pen = {}
        for family, (_, border) in drawing.FAMILY_COLOURS.items():
            pen = QPen(QColor(border), 1.1)
            pen.setCosmetic(False)
            self.pen[family] = pen
        self.mirror = QPen(QColor(drawing.MIRROR_COLOUR), 3.0)
        self.recompute = QPen(QColor(drawing.RECOMPUTE_COLOUR), 2.2, Qt.PenStyle.DashLine)
        self.both = QPen(QColor(drawing.MIRROR_COLOUR), 3.0, Qt.PenStyle.DashLine)
        self.selected = QPen(SELECTED_COLOUR, 3.2)
        self.edge = QPen(EDGE_COLOUR, 1.0)
        self.edge_brush = QBrush(EDGE_COLOUR)
        self.title = QFont(drawing.FONT)
        self.title.setPixelSize(int(drawing.FONT_SIZE))
        self.title.setBold(True)
        self.plain = QFont(drawing.FONT)
        self.plain.setPixelSize(int(drawing.FONT_SIZE))
        self.detail = QFont(drawing.FONT)
        self.detail.setPixelSize(int(round(drawing.DETAIL_SIZE)))
        self.label = QFont(drawing.FONT)
        self.label.setPixelSize(int(drawing.EDGE_FONT_SIZE))
        self.label_brush = QBrush(QColor("#404040"))
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


class GraphView(QGraphicsView):
    """Wheel and key zoom, drag to pan, click (Ctrl to add) to select, lazy tooltips.

    Signals
    -------
    clicked(int, bool): a node id (-1 for the background) and whether Ctrl was held
    menu_requested(int, QPoint): right click on a node, global position
    zoomed(float): the new scale
    """

    clicked = Signal(int, bool)
    menu_requested = Signal(int, QPoint)
    zoomed = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHints(QPainter.RenderHint.Antialiasing
                            | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setBackgroundBrush(QBrush(QColor("#fbfbfb")))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.tooltip_for: Any = None   # callable(node id) -> html, set by the pane
        self._press: QPoint | None = None

    def node_at(self, pos: QPoint) -> int:
        for item in self.items(pos):
            node = item.data(NODE_KEY)
            if node is not None:
                return int(node)
        return -1

    @property
    def scale_factor(self) -> float:
        return float(self.transform().m11())

    def zoom_by(self, factor: float, anchor_mouse: bool = True) -> None:
        scale = self.scale_factor
        factor = max(0.01 / scale, min(factor, 4.0 / scale))
        if not anchor_mouse:
            self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self.scale(factor, factor)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.zoomed.emit(self.scale_factor)

    def set_zoom(self, scale: float) -> None:
        self.zoom_by(scale / self.scale_factor, anchor_mouse=False)

    def fit(self) -> None:
        rect = self.sceneRect()
        if rect.isEmpty():
            return
        self.fitInView(rect.adjusted(-10, -10, 10, 10), Qt.AspectRatioMode.KeepAspectRatio)
        self.zoomed.emit(self.scale_factor)

    def wheelEvent(self, event: Any) -> None:  # noqa: N802
        delta = event.angleDelta().y()
        if delta == 0 or event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            super().wheelEvent(event)
            return
        self.zoom_by(1.0015 ** delta)
        event.accept()

    def keyPressEvent(self, event: Any) -> None:  # noqa: N802
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.25, anchor_mouse=False)
        elif key == Qt.Key.Key_Minus:
            self.zoom_by(0.8, anchor_mouse=False)
        elif key in (Qt.Key.Key_0, Qt.Key.Key_F):
            self.fit()
        elif key == Qt.Key.Key_1:
            self.set_zoom(1.0)
        else:
            super().keyPressEvent(event)

    def mousePressEvent(self, event: Any) -> None:  # noqa: N802
        self._press = event.position().toPoint()
        if event.button() == Qt.MouseButton.RightButton:
            self._press = None
            self.menu_requested.emit(self.node_at(event.position().toPoint()),
                                     event.globalPosition().toPoint())
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: Any) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        pos = event.position().toPoint()
        if self._press is not None and event.button() == Qt.MouseButton.LeftButton \
                and (pos - self._press).manhattanLength() <= 4:
            ctrl = bool(event.modifiers() & (Qt.KeyboardModifier.ControlModifier
                                             | Qt.KeyboardModifier.MetaModifier))
            self.clicked.emit(self.node_at(pos), ctrl)
        self._press = None

    def viewportEvent(self, event: Any) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip and self.tooltip_for is not None:
            node = self.node_at(event.pos())
            if node >= 0:
                QToolTip.showText(event.globalPos(), self.tooltip_for(node), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)


class _SceneBuild:
    """Everything to draw one layout; :meth:`step` does a slice of it."""

    def __init__(self, graph: drawing.VisibleGraph, layout: drawing.Layout,
                 styles: _Styles, selected: set[int], owner: QObject):
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


class GraphPane(QWidget):
    """The graph, its toolbar, a progress strip with Cancel, and a legend.

    Signals
    -------
    mirror_requested(list, bool): tag (or untag) these nodes as mirror stages
    drawn(): a layout is on screen (after opening, an edit, a toggle)
    layout_failed(str): dot failed or is missing (the message the pane shows)
    exported(str): a picture was written to this path
    """

    mirror_requested = Signal(list, bool)
    drawn = Signal()
    layout_failed = Signal(str)
    exported = Signal(str)

    def __init__(self, bridge: DocumentBridge, selection: Selection,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.document: GraphDocument = bridge.document
        self.selection = selection
        self.styles = _Styles()
        self.show_params = False
        self.shape_result: ShapeResult | None = None
        self.graph: drawing.VisibleGraph | None = None      # what the scene shows
        self.layout: drawing.Layout | None = None
        self.build: _SceneBuild | None = None               # the scene on screen
        self._pending: _SceneBuild | None = None            # a scene being built
        self._wanted_source = ""                            # the layout asked for last
        self._job: workers.FunctionWorker | None = None
        self._export_job: workers.FunctionWorker | None = None
        self._matches: list[int] = []
        self._match_at = -1
        self._first_draw = True
        self._preview: dict[int, str] | None = None
        self._shown_selection: set[int] = set()   # nodes drawn with the selection pen
        self._own_change = False                   # the selection came from a click here
        self.last_layout_seconds = 0.0
        self._started = 0.0

        self.view = GraphView()
        self.view.tooltip_for = self.tooltip
        self.view.clicked.connect(self._on_clicked)
        self.view.menu_requested.connect(self._on_menu_requested)
        self.view.zoomed.connect(self._on_zoomed)
        self.message = QLabel()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setStyleSheet("color: #555; padding: 20px;")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.message)

        self.search = QLineEdit()
        self.search.setPlaceholderText("Find node (name or op), Enter for next")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.find_next)
        self.search.textChanged.connect(self._on_search_changed)
        self.match_label = QLabel()
        self.match_label.setMinimumWidth(60)
        self.zoom_label = QLabel("100%")
        self.zoom_label.setMinimumWidth(44)
        self.params_button = self._tool("Parameters", self._on_params_toggled, checkable=True,
                                        tip="Show parameter and auxiliary variables")
        self.legend_button = self._tool("Legend", self._on_legend_toggled, checkable=True,
                                        tip="Show the colour legend")
        self.legend_button.blockSignals(True)
        self.legend_button.setChecked(True)
        self.legend_button.blockSignals(False)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.search, 1)
        bar.addWidget(self.match_label)
        bar.addWidget(self._tool("\u2212", self.zoom_out, tip="Zoom out (-)"))
        bar.addWidget(self.zoom_label)
        bar.addWidget(self._tool("+", self.zoom_in, tip="Zoom in (+)"))
        bar.addWidget(self._tool("Fit", self.view.fit, tip="Fit the graph to the window (0)"))
        bar.addWidget(self.params_button)
        bar.addWidget(self.legend_button)
        bar.addWidget(self._tool("Export\u2026", self.export_dialog,
                                 tip="Save the graph as SVG, PNG or PDF"))

        self.busy = QFrame()
        self.busy.setFrameShape(QFrame.Shape.StyledPanel)
        self.busy_label = QLabel()
        self.busy_bar = QProgressBar()
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(160)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_layout)
        busy_row = QHBoxLayout(self.busy)
        busy_row.setContentsMargins(6, 2, 6, 2)
        busy_row.addWidget(self.busy_label, 1)
        busy_row.addWidget(self.busy_bar)
        busy_row.addWidget(self.cancel_button)
        self.busy.hide()

        self.legend = QLabel(self.view)
        self.legend.setStyleSheet("background: rgba(255,255,255,225); border: 1px solid #ccc;"
                                  " border-radius: 4px; padding: 4px;")
        self.legend.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(bar)
        layout.addWidget(self.busy)
        layout.addWidget(self.stack, 1)

        find = QShortcut(QKeySequence.StandardKey.Find, self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self._focus_search)
        again = QShortcut(QKeySequence(Qt.Key.Key_F5), self)
        again.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        again.activated.connect(self.relayout)
        self._build_timer = QTimer(self)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._build_step)
        self._relayout_timer = QTimer(self)
        self._relayout_timer.setSingleShot(True)
        self._relayout_timer.setInterval(120)
        self._relayout_timer.timeout.connect(self.refresh)

        bridge.changed.connect(self._on_document_changed)
        selection.changed.connect(self._on_selection_changed)
        self.refresh()

    def zoom_in(self) -> None:
        self.view.zoom_by(1.25, anchor_mouse=False)

    def zoom_out(self) -> None:
        self.view.zoom_by(0.8, anchor_mouse=False)

    def _tool(self, text: str, slot: Any, checkable: bool = False, tip: str = "") -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        button.setCheckable(checkable)
        button.setAutoRaise(True)
        (button.toggled if checkable else button.clicked).connect(slot)
        return button

    # ------------------------------------------------------------------ layout
    @property
    def busy_now(self) -> bool:
        return self._job is not None or self._pending is not None

    def relayout(self) -> None:
        """Lay the graph out again even if nothing changed (after a cancel or a failure)."""
        self.cancel_layout(quiet=True)
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Bring the picture in line with the document: restyle when the layout
        would not change, else lay it out again (superseding any run in flight)."""
        graph = self._visible()
        source = drawing.document_layout_source(self.document, self.show_params)
        if source == self._wanted_source and not force:
            self._restyle(graph)
            return
        if not force and self.layout is not None and source == self.layout.source \
                and self._job is None:
            self._cancel_pending()
            self._wanted_source = source
            self._restyle(graph)
            return
        self.cancel_layout(quiet=True)
        self._wanted_source = source
        self._next_graph = graph
        if drawing.dot_program() is None:
            self._fail(drawing.missing_message())
            return
        self._started = time.perf_counter()

        def job(progress: Any, token: Any) -> drawing.Layout:
            return drawing.compute_layout(source, token)

        worker = workers.FunctionWorker(job)
        worker.finished.connect(self._on_layout_finished)
        worker.failed.connect(self._on_layout_failed)
        workers.start(self, worker)
        self._job = worker
        n = len(graph.nodes)
        self._show_busy(f"Laying out {n:,} nodes with graphviz dot\u2026")

    def cancel_layout(self, quiet: bool = False) -> None:
        """Stop the layout in flight (dot is killed) and any scene being built."""
        if self._job is not None:
            self._job.request_cancel()
            self._job = None
        self._cancel_pending()
        self._wanted_source = self.layout.source if self.layout is not None else ""
        self.busy.hide()
        if not quiet and self.layout is None:
            self._show_message("Layout cancelled. Press F5 or toggle Parameters to lay "
                               "the graph out again.")

    def _cancel_pending(self) -> None:
        self._build_timer.stop()
        if self._pending is not None:
            self._pending.close()
            self._pending.scene.deleteLater()
            self._pending = None

    def _show_busy(self, text: str) -> None:
        self.busy_label.setText(text)
        self.busy.show()

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        self.legend.hide()

    def _fail(self, message: str) -> None:
        self._job = None
        self.busy.hide()
        self._wanted_source = self.layout.source if self.layout is not None else ""
        self._show_message(message)
        self.layout_failed.emit(message)

    @Slot(object)
    def _on_layout_finished(self, layout: drawing.Layout) -> None:
        if layout.source != self._wanted_source:
            return  # superseded
        self._job = None
        graph = self._visible()
        if drawing.document_layout_source(self.document, self.show_params) != layout.source:
            self.refresh()   # the document moved on while dot ran
            return
        self._cancel_pending()
        self._pending = _SceneBuild(graph, layout, self.styles, set(self.selection.nodes),
                                    self)
        self._show_busy(f"Drawing {len(graph.nodes):,} nodes\u2026")
        self._build_timer.start()

    @Slot(str)
    def _on_layout_failed(self, message: str) -> None:
        if self._job is None or self.sender() is not self._job:
            return
        self._fail(message.strip().splitlines()[-1])

    @Slot()
    def _build_step(self) -> None:
        build = self._pending
        if build is None:
            self._build_timer.stop()
            return
        if not build.step():
            return
        self._build_timer.stop()
        self._pending = None
        self._swap_in(build)

    def _swap_in(self, build: _SceneBuild) -> None:
        anchor = self._view_anchor()
        old = self.build
        self.build, self.layout, self.graph = build, build.layout, build.graph
        self.view.setScene(build.scene)
        if old is not None:
            old.scene.deleteLater()
        self.stack.setCurrentWidget(self.view)
        self.busy.hide()
        self._place_labels()
        if self._first_draw:
            self._first_draw = False
            self._initial_view()
        elif anchor is not None:
            node, offset = anchor
            item = build.node_items.get(node)
            if item is not None:
                self.view.centerOn(item.boundingRect().center() - offset)
        self._apply_lod(self.view.scale_factor)
        self._update_legend()
        self.last_layout_seconds = time.perf_counter() - self._started
        self.drawn.emit()

    def _view_anchor(self) -> tuple[int, QPointF] | None:
        """The node nearest the view's centre, and the centre's offset from it."""
        if self.build is None:
            return None
        centre = self.view.mapToScene(self.view.viewport().rect().center())
        best, best_d = None, float("inf")
        for node, item in self.build.node_items.items():
            d = item.boundingRect().center() - centre
            dist = d.x() * d.x() + d.y() * d.y()
            if dist < best_d:
                best, best_d = node, dist
        if best is None:
            return None
        return best, self.build.node_items[best].boundingRect().center() - centre

    def _initial_view(self) -> None:
        """Small graphs fit the window; big ones open readable, at the inputs."""
        rect = self.view.sceneRect()
        vp = self.view.viewport().rect()
        if rect.isEmpty() or vp.isEmpty():
            return
        fit = min(vp.width() / rect.width(), vp.height() / rect.height())
        if fit >= 0.6:
            self.view.fit()
            return
        self.view.set_zoom(max(fit, min(1.15, vp.width() / rect.width())))
        top = rect.top() + vp.height() / (2 * self.view.scale_factor)
        self.view.centerOn(rect.center().x(), top)

    # ---------------------------------------------------------------- styling
    def _visible(self) -> drawing.VisibleGraph:
        """What to draw: the document's graph, with a previewed plan's tags if any."""
        graph = drawing.visible_graph(self.document, self.show_params)
        tags = self._preview
        if tags is None:
            return graph
        nodes = tuple(dataclasses.replace(n, recompute=tags.get(n.id) == "True")
                      for n in graph.nodes)
        return dataclasses.replace(graph, nodes=nodes)

    def preview(self, tags: dict[int, str] | None) -> None:
        """Show a plan's ``force_mirroring`` tags without touching the document
        (None: back to the document's own tags)."""
        self._preview = dict(tags) if tags is not None else None
        if self.build is not None:
            self._restyle(self._visible())

    def _restyle(self, graph: drawing.VisibleGraph) -> None:
        """Tags changed (not the layout): new pens on the nodes whose look changed."""
        build = self.build
        if build is None or self.graph is None:
            return
        old = {n.id: n for n in self.graph.nodes}
        selected = set(self.selection.nodes)
        for node in graph.nodes:
            if old.get(node.id) != node and node.id in build.node_items:
                build.node_items[node.id].setPen(
                    self.styles.node_pen(node, node.id in selected))
        self.graph = build.graph = graph
        self._update_legend()

    def _update_selection_pens(self, before: set[int], after: set[int]) -> None:
        if self.build is None or self.graph is None:
            return
        nodes = {n.id: n for n in self.graph.nodes}
        for node_id in before ^ after:
            item = self.build.node_items.get(node_id)
            if item is not None and node_id in nodes:
                item.setPen(self.styles.node_pen(nodes[node_id], node_id in after))
                item.setZValue(1 if node_id in after else 0)

    def set_shapes(self, result: ShapeResult | None) -> None:
        """Label every edge with its shape (None removes the labels)."""
        self.shape_result = result
        self._place_labels()

    def _place_labels(self) -> None:
        build = self.build
        if build is None:
            return
        for item in build.label_items:
            build.scene.removeItem(item)
        build.label_items = []
        result = self.shape_result
        if result is None or result.revision != self.document.revision:
            return
        by_pair: dict[tuple[int, int], list[drawing.VisEdge]] = {}
        for e in build.graph.edges:
            by_pair.setdefault((e.src, e.dst), []).append(e)
        used: dict[tuple[int, int], int] = {}
        st = self.styles
        for item, path in zip(build.edge_items, (e for e in build.layout.edges
                                                 if len(e.points) >= 4)):
            pair = (path.src, path.dst)
            k = used.get(pair, 0)
            used[pair] = k + 1
            candidates = by_pair.get(pair, [])
            if k >= len(candidates):
                continue
            edge = candidates[k]
            shape = result.by_entry.get((edge.src, edge.index))
            if not shape:
                continue
            label = QGraphicsSimpleTextItem(drawing.format_dims(shape), build.label_layer)
            label.setFont(st.label)
            label.setBrush(st.label_brush)
            label.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
            mid = item.path().pointAtPercent(0.45)
            label.setPos(mid.x() + 4, mid.y() - drawing.EDGE_FONT_SIZE / 2)
            build.label_items.append(label)
        self._apply_lod(self.view.scale_factor)

    def _apply_lod(self, scale: float) -> None:
        if self.build is None:
            return
        self.build.text_layer.setVisible(scale >= TEXT_MIN_SCALE)
        self.build.label_layer.setVisible(scale >= LABEL_MIN_SCALE)

    @Slot(float)
    def _on_zoomed(self, scale: float) -> None:
        self.zoom_label.setText(f"{scale * 100:.0f}%")
        self._apply_lod(scale)

    def _update_legend(self) -> None:
        graph = self.graph
        if graph is None or not self.legend_button.isChecked():
            self.legend.hide()
            return
        rows = []
        for family in graph.families():
            fill, border = drawing.FAMILY_COLOURS[family]
            rows.append(f'<tr><td style="background:{fill}; border:1px solid {border};">'
                        f'&nbsp;&nbsp;&nbsp;&nbsp;</td><td>&nbsp;'
                        f'{drawing.FAMILY_NAMES[family]}</td></tr>')
        rows.append(f'<tr><td style="border:3px solid {drawing.MIRROR_COLOUR};">'
                    '&nbsp;&nbsp;&nbsp;</td><td>&nbsp;mirror stage</td></tr>')
        rows.append(f'<tr><td style="border:2px dashed {drawing.RECOMPUTE_COLOUR};">'
                    '&nbsp;&nbsp;&nbsp;</td><td>&nbsp;recomputed (force_mirroring)</td></tr>')
        self.legend.setText('<table cellspacing="1" style="font-size:8pt;">'
                            + "".join(rows) + "</table>")
        self.legend.adjustSize()
        self._place_legend()
        self.legend.show()

    def _place_legend(self) -> None:
        area = self.view.viewport().geometry()
        self.legend.move(area.left() + 6, area.bottom() - self.legend.height() - 6)

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._place_legend()

    # ------------------------------------------------------------- selection
    @Slot(int, bool)
    def _on_clicked(self, node: int, ctrl: bool) -> None:
        current = list(self.selection.nodes)
        if node < 0:
            if not ctrl:
                self.selection.set([])
            return
        if ctrl:
            nodes = [n for n in current if n != node] if node in current else current + [node]
        else:
            nodes = [node]
        self._own_change = True
        try:
            self.selection.set(nodes)
        finally:
            self._own_change = False

    @Slot(list)
    def _on_selection_changed(self, nodes: list) -> None:
        before = self._shown_selection
        after = set(nodes)
        self._shown_selection = after
        self._update_selection_pens(before, after)
        if nodes and not self._own_change:
            self.center_on(nodes[-1])

    def visible_node_for(self, node: int) -> int | None:
        """The drawn node standing for ``node`` (a hidden parameter: its consumer)."""
        if self.build is None:
            return None
        if node in self.build.node_items:
            return node
        for consumer, _ in self.document.consumers()[node] if node < len(
                self.document.nodes) else ():
            if consumer in self.build.node_items:
                return consumer
        return None

    def center_on(self, node: int) -> bool:
        target = self.visible_node_for(node)
        if target is None or self.build is None:
            return False
        item = self.build.node_items[target]
        if self.view.scale_factor < TEXT_MIN_SCALE:
            self.view.set_zoom(0.9)
        self.view.centerOn(item.boundingRect().center())
        return True

    # ------------------------------------------------------------ search
    def _focus_search(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    @Slot(str)
    def _on_search_changed(self, text: str) -> None:
        needle = text.strip().lower()
        self._matches = []
        self._match_at = -1
        if needle and self.graph is not None:
            nodes = self.document.nodes
            self._matches = [n.id for n in self.graph.nodes
                             if needle in nodes[n.id].name.lower() or needle in n.title.lower()]
        self.match_label.setText(f"{len(self._matches)} found" if needle else "")

    @Slot()
    def find_next(self) -> None:
        if not self._matches:
            self._on_search_changed(self.search.text())
        if not self._matches:
            return
        self._match_at = (self._match_at + 1) % len(self._matches)
        node = self._matches[self._match_at]
        self.selection.set([node])
        self.center_on(node)
        self.match_label.setText(f"{self._match_at + 1} of {len(self._matches)}")

    # ------------------------------------------------------------ menu, tips
    @Slot(int, QPoint)
    def _on_menu_requested(self, node: int, where: QPoint) -> None:
        if node < 0:
            return
        if node not in self.selection.nodes:
            self._on_clicked(node, False)
        nodes = list(self.selection.nodes)
        doc = self.document
        ops = [n for n in nodes if not doc.nodes[n].is_variable]
        menu = QMenu(self)
        if ops:
            tagged = all(is_mirror_stage(doc.nodes[n].attrs) for n in ops)
            act = menu.addAction("Mirror stage" if len(ops) == 1
                                 else f"Mirror stage ({len(ops)} nodes)")
            act.setCheckable(True)
            act.setChecked(tagged)
            act.triggered.connect(lambda on: self.mirror_requested.emit(ops, on))
        names = "\n".join(doc.nodes[n].name for n in nodes)
        menu.addAction("Copy name" if len(nodes) == 1 else "Copy names",
                       lambda: QGuiApplication.clipboard().setText(names))
        menu.popup(where)
        self._menu = menu

    def tooltip(self, node_id: int) -> str:
        doc = self.document
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
        result = self.shape_result
        if result is not None and result.revision == doc.revision:
            for src, index, _ in node.inputs:
                shape = result.by_entry.get((src, index))
                text = format_shape(shape) if shape else "?"
                rows.append(f"in {esc(doc.nodes[src].name)}: {text}")
            for k, name in enumerate(doc.output_names(node_id)):
                shape = result.by_entry.get((node_id, k))
                rows.append(f"out {esc(name)}: {format_shape(shape) if shape else '?'}")
        if is_mirror_stage(node.attrs):
            rows.append(f'<span style="color:{drawing.MIRROR_COLOUR}">mirror stage</span>')
        if FORCE_MIRRORING in node.attrs:
            rows.append(f'<span style="color:{drawing.RECOMPUTE_COLOUR}">recomputed in '
                        "backward (force_mirroring)</span>")
        return "<br/>".join(rows)

    # ------------------------------------------------------------ toggles
    @Slot(bool)
    def _on_params_toggled(self, on: bool) -> None:
        self.show_params = on
        self.refresh()

    @Slot(bool)
    def _on_legend_toggled(self, on: bool) -> None:
        self._update_legend()

    @Slot(object)
    def _on_document_changed(self, change: Change) -> None:
        if change.kind == "saved":
            return
        if self.shape_result is not None:
            self.shape_result = None
            self._place_labels()
        self._relayout_timer.start()

    # ------------------------------------------------------------ export
    def export_source(self, dpi: int = 0) -> str:
        graph = drawing.visible_graph(self.document, self.show_params)
        result = self.shape_result
        shapes = result.by_entry if result is not None and \
            result.revision == self.document.revision else None
        return drawing.styled_source(self.document, graph, shapes,
                                     legend=self.legend_button.isChecked(), dpi=dpi)

    def export_dialog(self) -> None:
        base = self.document.path or "graph"
        stem = base[:-len("-symbol.json")] if base.endswith("-symbol.json") else \
            base.rsplit(".", 1)[0]
        path, chosen = QFileDialog.getSaveFileName(
            self, "Export graph", stem + ".svg",
            "SVG picture (*.svg);;PNG image (*.png);;PDF document (*.pdf)")
        if not path:
            return
        if "." not in path.rsplit("/", 1)[-1]:
            path += "." + chosen.split("*.")[1][:3]
        self.export_to(path)

    def export_to(self, path: str) -> None:
        """Write the picture in a worker; ``exported`` or a dialog tells the outcome."""
        try:
            fmt = drawing.format_for(path)
        except UserError as exc:
            self._export_failed(str(exc))
            return
        source = self.export_source(dpi=drawing.PNG_DPI if fmt == "png" else 0)

        def job(progress: Any, token: Any) -> str:
            drawing.render_file(source, path, token)
            return path

        worker = workers.FunctionWorker(job)
        worker.finished.connect(self._on_exported)
        worker.failed.connect(self._on_export_failed)
        workers.start(self, worker)
        self._export_job = worker

    @Slot(object)
    def _on_exported(self, path: str) -> None:
        self._export_job = None
        self.exported.emit(path)

    @Slot(str)
    def _on_export_failed(self, message: str) -> None:
        self._export_job = None
        self._export_failed(message.strip().splitlines()[-1])

    def _export_failed(self, message: str) -> None:
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.warning(self, "Cannot export the graph", message)

    # ------------------------------------------------------------ lifetime
    def stop(self) -> None:
        self.cancel_layout(quiet=True)
        self._relayout_timer.stop()
        if self._export_job is not None:
            self._export_job.request_cancel()

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self.stop()
        build, self.build = self.build, None
        if build is not None:
            self.view.setScene(None)
            build.close()
            build.scene.deleteLater()
        try:
            self.bridge.changed.disconnect(self._on_document_changed)
            self.selection.changed.disconnect(self._on_selection_changed)
        except (RuntimeError, TypeError):
            pass
        super().closeEvent(event)
