"""GraphPane: the network laid out by graphviz ``dot``, drawn as a QGraphicsScene.

``dot -Tplain`` runs on a worker (cancellable; a newer request supersedes an older
one) and returns coordinates only; :mod:`graph_scene` draws the scene a chunk at a
time and the pane swaps it in when complete.  Shapes on the edges come from the
session's analysis (greyed while it is for an older graph), the recompute marks from
the session's plan preview, the selection from the session.  Exports go through dot
itself (:mod:`mxexplorer.core.render.drawing`) for a publication-quality SVG, PNG or PDF.
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import QStackedWidget, QVBoxLayout, QWidget

from mxexplorer.core.graph.changes import AttrsChanged, Change, Saved
from mxexplorer.core.render import drawing
from mxexplorer.gui.bridge import disconnect_quietly
from mxexplorer.gui.host import DialogHost
from mxexplorer.gui.panels.base import SessionPanel
from mxexplorer.gui.panels.graph.blocks import BlockState
from mxexplorer.gui.panels.graph.colour import colour_graph
from mxexplorer.gui.panels.graph.export import GraphExporter, picture_source
from mxexplorer.gui.panels.graph.layouter import SceneLayouter
from mxexplorer.gui.panels.graph.legend import GraphLegend
from mxexplorer.gui.panels.graph.menu import node_menu
from mxexplorer.gui.panels.graph.minimap import GraphMinimap
from mxexplorer.gui.panels.graph.scene import (
    LABEL_MIN_SCALE,
    TEXT_MIN_SCALE,
    SceneBuild,
    SceneStyles,
    node_tooltip,
)
from mxexplorer.gui.panels.graph.toolbar import GraphToolbar
from mxexplorer.gui.panels.graph.view import GraphView
from mxexplorer.gui.session import DocumentSession
from mxexplorer.gui.settings import Settings
from mxexplorer.gui.text import plain_label
from mxexplorer.gui.theme import Theme, set_role, themes
from mxexplorer.gui.theme import current as current_theme


class GraphPane(SessionPanel):
    """The graph, its toolbar, a progress strip with Cancel, and a legend.

    Signals
    -------
    drawn(): a layout is on screen (after opening, an edit, a toggle)
    layout_failed(str): dot failed or is missing (the message the pane shows)
    exported(str): a picture was written to this path (the exporter's signal)
    """

    drawn = Signal()
    layout_failed = Signal(str)

    def __init__(self, session: DocumentSession, settings: Settings, host: DialogHost,
                 parent: QWidget | None = None) -> None:
        super().__init__(session, settings, host, parent)
        self.styles = SceneStyles(current_theme())
        self.show_params = False
        self.graph: drawing.VisibleGraph | None = None      # what the scene shows
        self.build: SceneBuild | None = None                # the scene on screen
        self.layouter = SceneLayouter(self._shown, self)
        self.layouter.styles = self.styles
        self.layouter.selected = self._drawn_selection
        self.layouter.built.connect(self._swap_in)
        self.layouter.failed.connect(self._on_layout_failed)
        self.exporter = GraphExporter(self.export_source, host, self)
        self.exported = self.exporter.exported
        self._matches: list[int] = []
        self._styled = -1                # the document revision the pens were last set for
        self._match_at = -1
        self._first_draw = True
        self._shown_selection: set[int] = set()   # nodes drawn with the selection pen
        self._own_change = False                   # the selection came from a click here
        self.last_layout_seconds = 0.0
        self._started = 0.0
        self.blocks = BlockState()

        self.view = GraphView()
        self.setProperty("mx_action_area", "Graph")      # its actions, by that name
        self.view.setProperty("mx_action_area", "Graph")
        self.view.tooltip_for = self.tooltip
        self.view.clicked.connect(self._on_clicked)
        self.view.menu_requested.connect(self._on_menu_requested)
        self.view.zoomed.connect(self._on_zoomed)
        self.view.double_clicked.connect(self._on_double_clicked)
        self.message = plain_label()
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setContentsMargins(20, 20, 20, 20)
        set_role(self.message, "muted")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.view)
        self.stack.addWidget(self.message)

        self.toolbar = GraphToolbar()
        bar = self.toolbar
        self.search = bar.search
        self.params_button = bar.params_button
        self.legend_button = bar.legend_button
        self.cancel_button = bar.cancel_button
        bar.search.textChanged.connect(self._on_search_changed)
        bar.find_next_requested.connect(self.find_next)
        bar.zoom_in_requested.connect(self.view.zoom_in)
        bar.zoom_out_requested.connect(self.view.zoom_out)
        bar.fit_requested.connect(self.view.fit)
        bar.export_requested.connect(self.export_dialog)
        bar.cancel_requested.connect(self.cancel_layout)
        bar.params_toggled.connect(self._on_params_toggled)
        bar.legend_toggled.connect(self._update_legend)
        bar.blocks_toggled.connect(self._on_blocks_toggled)
        bar.metric_chosen.connect(session.insight.set_metric)
        self.layouter.busy.connect(bar.show_busy)

        self.legend = GraphLegend()
        self.minimap = GraphMinimap(self.view)
        # the viewport changes size without the pane (the legend or a scroll bar comes
        # and goes): the minimap's corner moves with it
        self.view.resized.connect(self.minimap.place)
        self.view.setBackgroundBrush(QColor(self.styles.theme.canvas))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.legend)

        find = self.toolbar.focus_search
        for text, key, slot in (("Find Node", QKeySequence.StandardKey.Find, find),
                                ("Lay Out Again", QKeySequence(Qt.Key.Key_F5), self.relayout)):
            action = QAction(text, self)
            action.setShortcut(key)
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(slot)
            self.addAction(action)
        self._relayout_timer = QTimer(self)
        self._relayout_timer.setSingleShot(True)
        self._relayout_timer.setInterval(120)
        self._relayout_timer.timeout.connect(self.refresh)

        session.document_changed.connect(self._on_document_changed)
        session.analysis.changed.connect(self._on_analysis_changed)
        session.plans.preview_changed.connect(self._on_preview_changed)
        session.insight.colours_changed.connect(self._on_colours_changed)
        self.selection.changed.connect(self._on_selection_changed)
        themes().changed.connect(self._on_theme_changed)
        # the first layout is asked for on the next turn: opening stays in short steps
        self._first_timer = QTimer(self, singleShot=True, interval=0)
        self._first_timer.timeout.connect(self.refresh)
        self._first_timer.start()

    # ------------------------------------------------------------------ layout
    @property
    def busy_now(self) -> bool:
        """A layout is asked for (after an edit, a short wait), running or being drawn."""
        return self.layouter.busy_now or self._first_timer.isActive() or \
            self._relayout_timer.isActive()

    @property
    def layout(self) -> drawing.Layout | None:
        return self.layouter.layout

    def relayout(self) -> None:
        """Lay the graph out again even if nothing changed (after a cancel or a failure)."""
        self.layouter.cancel()
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Bring the picture in line with the document: restyle when the layout
        would not change, else lay it out again (superseding any run in flight)."""
        graph, source = self._shown()
        self._started = time.perf_counter()
        if not self.layouter.request(graph, source, force):
            self._restyle(graph)

    def cancel_layout(self, quiet: bool = False) -> None:
        """Stop the layout in flight (dot is killed) and any scene being built."""
        self._first_timer.stop()
        self.layouter.cancel()
        self.toolbar.hide_busy()
        if not quiet and self.build is not None:   # the old picture stays: up to date
            self._place_labels()
            self._update_legend()
        if not quiet and self.layout is None:
            self._show_message("Layout cancelled. Press F5 or toggle Parameters to lay "
                               "the graph out again.")

    def _show_message(self, text: str) -> None:
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)
        self.legend.hide()

    @Slot(str)
    def _on_layout_failed(self, message: str) -> None:
        self.toolbar.hide_busy()
        self._show_message(message)
        self.layout_failed.emit(message)

    @Slot(object)
    def _swap_in(self, build: SceneBuild) -> None:
        anchor = self.view.anchor(self.build.node_items) if self.build is not None \
            else None
        old = self.build
        self.build, self.graph = build, build.graph
        self.view.setScene(build.scene)
        if old is not None:
            old.scene.deleteLater()
        self.stack.setCurrentWidget(self.view)
        self.toolbar.hide_busy()
        self._place_labels()
        if self._first_draw:
            self._first_draw = False
            self.view.initial_view()
        elif anchor is not None:
            self.view.restore_anchor(anchor, build.node_items)
        self._apply_lod(self.view.scale_factor)
        self._update_legend()
        self.minimap.show_layout(build.graph, build.layout, self.styles.theme.canvas)
        self.toolbar.set_blocks(self.blocks.tree is not None)
        self.toolbar.set_layout_note(build.layout.method, build.layout.note,
                                     len(build.graph.nodes))
        self.last_layout_seconds = time.perf_counter() - self._started
        self.drawn.emit()

    # ---------------------------------------------------------------- styling
    def _shown(self) -> tuple[drawing.VisibleGraph, str]:
        """What to draw (the document's graph with the session's plan preview, big ones
        as blocks) and its layout source."""
        graph = drawing.visible_graph(self.document, self.show_params)
        preview = self.session.plans.preview_tags()
        previewed = graph
        if preview is not None:
            nodes = tuple(dataclasses.replace(n, recompute=bool(preview.get(n.id)))
                          for n in graph.nodes)
            previewed = dataclasses.replace(graph, nodes=nodes)
        return self.blocks.shown(self.document, graph, previewed)

    def _visible(self) -> drawing.VisibleGraph:
        return self._shown()[0]

    def _drawn_selection(self) -> set[int]:
        return self.blocks.drawn(self.selection.nodes)

    @Slot()
    def _on_preview_changed(self) -> None:
        if self.build is not None:
            self._restyle(self._visible())

    def _restyle(self, graph: drawing.VisibleGraph) -> None:
        """Tags changed (not the layout): new pens on the nodes whose look changed."""
        if self.build is None or self.graph is None:
            return
        self.build.restyle(graph, set(self.selection.nodes))
        self.graph, self._styled = graph, self.document.revision
        self._update_legend()

    @Slot()
    def _on_analysis_changed(self) -> None:
        if self._now():
            self._place_labels()

    @Slot()
    def _on_colours_changed(self) -> None:
        if self._now():
            self._update_legend()

    def _now(self) -> bool:
        """Redo labels and colours now, unless a new layout brings them (stale: now)."""
        return not self.busy_now or self.session.analysis.fresh_shapes() is None

    def _place_labels(self) -> None:
        """Shapes on the edges: the session's analysis, greyed when it is stale."""
        if self.build is None:
            return
        analysis = self.session.analysis.result
        shapes = analysis.shapes.by_entry if analysis is not None else None
        self.build.place_labels(shapes, stale=self.session.analysis.stale() is not None)
        self._apply_lod(self.view.scale_factor)

    def _apply_lod(self, scale: float) -> None:
        if self.build is None:
            return
        self.build.text_layer.setVisible(scale >= TEXT_MIN_SCALE)
        self.build.label_layer.setVisible(scale >= LABEL_MIN_SCALE)

    @Slot(float)
    def _on_zoomed(self, scale: float) -> None:
        self.toolbar.set_zoom(scale)
        self._apply_lod(scale)
        self.minimap.update_visibility()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.minimap.place()
        self.minimap.update_visibility()

    def _update_legend(self, *_: object) -> None:
        """The fills by the chosen metric, and the legend explaining them."""
        self.toolbar.set_metric(self.session.insight.metric)
        colour_graph(self.build, self.graph, self.session.insight, self.blocks, self.legend,
                     self.legend_button.isChecked())

    # ------------------------------------------------------------- selection
    @Slot(int, bool)
    def _on_clicked(self, node: int, ctrl: bool) -> None:
        current = list(self.selection.nodes)
        if node < 0:
            if not ctrl:
                self.selection.set([])
            return
        picked = self.blocks.members(node) or [node]      # a block: what it holds
        if ctrl:
            nodes = [n for n in current if n not in picked] if picked[0] in current \
                else current + picked
        else:
            nodes = picked
        self._own_change = True
        try:
            self.selection.set(nodes)
        finally:
            self._own_change = False

    @Slot(list)
    def _on_selection_changed(self, nodes: list) -> None:
        before = self._shown_selection
        after = self._drawn_selection()
        self._shown_selection = after
        if self.build is not None:
            self.build.set_selected(before, after)
        if nodes and not self._own_change:
            self.center_on(nodes[-1])

    def visible_node_for(self, node: int) -> int | None:
        """The drawn node standing for ``node`` (a hidden parameter: its consumer)."""
        if self.build is None:
            return None
        if node in self.build.node_items:
            return node
        shown = self.blocks.shown_for(node)
        if shown is not None and shown in self.build.node_items:
            return shown
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
    @Slot(str)
    def _on_search_changed(self, text: str) -> None:
        needle = text.strip()
        self._match_at = -1
        self._matches = drawing.matching(self.graph, self.document, needle) \
            if self.graph is not None else []
        self.toolbar.set_matches(f"{len(self._matches)} found" if needle else "")

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
        self.toolbar.set_matches(f"{self._match_at + 1} of {len(self._matches)}")

    # ------------------------------------------------------------ menu, tips
    @Slot(int, QPoint)
    def _on_menu_requested(self, node: int, where: QPoint) -> None:
        if node < 0:
            return
        if node not in self.selection.nodes:
            self._on_clicked(node, False)
        nodes = list(self.selection.nodes)
        menu = node_menu(self, self.document, nodes, self.blocks.key_of(node),
                         self.blocks.open_block_of(nodes[0]) if nodes else None,
                         self.mark_mirror, self.open_block, self.close_block)
        menu.popup(where)
        self._menu = menu

    # ------------------------------------------------------------ blocks
    @Slot(int)
    def _on_double_clicked(self, node: int) -> None:
        key = self.blocks.key_of(node)
        if key is not None:
            self.open_block(key)

    def open_block(self, key: str) -> None:
        """Draw what block ``key`` holds in place of its node (a new layout of the
        overview: only the opened part is laid out in detail)."""
        self.blocks.open(key)
        self.refresh()

    def close_block(self, key: str) -> None:
        self.blocks.close(key)
        self.refresh()

    @Slot(bool)
    def _on_blocks_toggled(self, on: bool) -> None:
        graph = drawing.visible_graph(self.document, self.show_params)
        if not on and not self.blocks.confirm_all(self.host, len(graph.nodes),
                                                  self.layouter.time_limit):
            self.toolbar.set_blocks(True)
            return
        self.blocks.set_wanted(on)
        self.refresh()

    def mark_mirror(self, nodes: list[int], on: bool) -> None:
        refused = self.session.mark_mirror(nodes, on)
        if refused:
            self.host.show_status(refused, 5000)

    def tooltip(self, node_id: int) -> str:
        if self.blocks.key_of(node_id) is not None:
            fresh = self.session.analysis.fresh_shapes() is not None
            analysis = self.session.analysis.result if fresh else None
            return self.blocks.tooltip(node_id, analysis,
                                       self.graph.edges if self.graph else ())
        result = self.session.analysis.fresh_shapes()
        return node_tooltip(self.document, node_id,
                            result.by_entry if result is not None else None)

    @Slot(object)
    def _on_theme_changed(self, theme: Theme) -> None:
        """New colours: the same layout drawn again (no new dot run)."""
        self.styles = SceneStyles(theme)
        self.view.setBackgroundBrush(QColor(theme.canvas))
        self.legend.restyle()
        self.layouter.styles = self.styles
        self.layouter.rebuild()

    # ------------------------------------------------------------ toggles
    @Slot(bool)
    def _on_params_toggled(self, on: bool) -> None:
        self.show_params = on
        self.refresh()

    @Slot(object)
    def _on_document_changed(self, change: Change) -> None:
        if isinstance(change, Saved):
            return
        if isinstance(change, AttrsChanged) and change.tags_only and self.build is not None:
            if self._styled != self.document.revision:    # (a plan's preview did it)
                self.refresh()           # tags: new pens now (the layout stays)
            return
        self._relayout_timer.start()

    # ------------------------------------------------------------ export
    def export_source(self, dpi: int = 0) -> str:
        """The picture's DOT source: what is shown, with shapes when they are fresh."""
        return picture_source(self.session, self.show_params,
                              self.legend_button.isChecked(), dpi)

    def export_dialog(self) -> None:
        self.exporter.ask(self.document.path)

    def export_to(self, path: str) -> None:
        """Write the picture in a worker; ``exported`` or a dialog tells the outcome."""
        self.exporter.export_to(path)

    # ------------------------------------------------------------ lifetime
    def stop(self) -> None:
        self._relayout_timer.stop()
        self.cancel_layout(quiet=True)
        self.exporter.stop()

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        self.stop()
        build, self.build = self.build, None
        if build is not None:
            self.view.setScene(None)
            build.close()
            build.scene.deleteLater()
        disconnect_quietly((self.session.document_changed, self._on_document_changed),
                             (self.session.analysis.changed, self._on_analysis_changed),
                             (self.session.plans.preview_changed, self._on_preview_changed),
                             (self.session.insight.colours_changed, self._on_colours_changed),
                             (self.selection.changed, self._on_selection_changed),
                           (themes().changed, self._on_theme_changed))
        super().closeEvent(event)
