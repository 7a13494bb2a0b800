"""The graph pane in a real window: real dot, real clicks, real files."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest

from mxexplorer.core.graph import edits, tags
from mxexplorer.core.render import drawing
from mxexplorer.gui.panels.graph.pane import GraphPane
from tests.conftest import EXAMPLES, WAIT_MS

R18 = EXAMPLES / "resnet18_v1-symbol.json"


@pytest.fixture
def drawn(make_window, qtbot):
    """``drawn(path)`` -> a window whose graph pane has drawn its first layout."""
    def make(path=R18):
        window = make_window(path)
        pane = window.graph_pane
        qtbot.waitUntil(lambda: pane.build is not None and not pane.busy_now, timeout=WAIT_MS)
        return window, pane
    return make


def _click(pane: GraphPane, node: int, ctrl: bool = False) -> None:
    item = pane.build.node_items[node]
    pane.center_on(node)
    pos = pane.view.mapFromScene(item.boundingRect().center())
    modifier = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    QTest.mouseClick(pane.view.viewport(), Qt.MouseButton.LeftButton, modifier, pos)


def test_one_item_per_visible_node_and_parameters_toggle(drawn, qtbot) -> None:
    window, pane = drawn()
    doc = window.document
    graph = drawing.visible_graph(doc)
    assert set(pane.build.node_items) == {n.id for n in graph.nodes}
    assert len(pane.build.edge_items) == len(graph.edges)
    with qtbot.waitSignal(pane.drawn, timeout=WAIT_MS):
        pane.params_button.click()
    assert set(pane.build.node_items) == set(doc.order())
    assert pane.view.scene() is pane.build.scene


def test_click_and_tree_selection_stay_in_sync(drawn, qtbot) -> None:
    window, pane = drawn()
    doc = window.document
    convs = [i for i in doc.order() if doc.nodes[i].op == "Convolution"]
    _click(pane, convs[3])
    assert window.selection.nodes == [convs[3]]
    assert window.tree.selected_nodes() == [convs[3]]
    assert window.inspector.name_edit.text() == doc.nodes[convs[3]].name
    assert pane.build.node_items[convs[3]].pen().color() == QColor("#1769e0")
    _click(pane, convs[5], ctrl=True)
    assert window.selection.nodes == [convs[3], convs[5]]
    # selecting in the tree centres the node in the graph and highlights it
    pane.view.centerOn(0, 0)
    window.tree._select_nodes([convs[10]])
    window.tree._on_view_selection_changed()
    assert window.selection.nodes == [convs[10]]
    item = pane.build.node_items[convs[10]]
    visible = pane.view.mapToScene(pane.view.viewport().rect()).boundingRect()
    assert visible.contains(item.boundingRect().center())
    assert item.pen().color() == QColor("#1769e0")
    assert pane.build.node_items[convs[3]].pen().color() != QColor("#1769e0")
    # clicking the background clears the selection
    QTest.mouseClick(pane.view.viewport(), Qt.MouseButton.LeftButton,
                     Qt.KeyboardModifier.NoModifier, QPoint(3, 3))
    assert window.selection.nodes == []


def test_edges_carry_shapes_after_inference_and_tooltips_tell_them(drawn, qtbot) -> None:
    window, pane = drawn()
    assert pane.build.label_items == []
    window.infer_blocking({"data": (2, 3, 224, 224)})
    texts = {item.text() for item in pane.build.label_items}
    assert "2\u00d73\u00d7224\u00d7224" in texts and "2\u00d764\u00d756\u00d756" in texts
    assert len(pane.build.label_items) == len(pane.build.edge_items)
    conv = next(i for i in window.document.order()
                if window.document.nodes[i].op == "Convolution")
    tip = pane.tooltip(conv)
    assert window.document.nodes[conv].name in tip and "(2, 64, 112, 112)" in tip
    assert "kernel" in tip


def test_tags_restyle_without_a_new_layout(drawn, qtbot) -> None:
    window, pane = drawn()
    doc = window.document
    ops = [i for i in doc.order() if not doc.nodes[i].is_variable]
    conv, bn = ops[0], ops[1]
    layout = pane.layout
    window.push_edit(edits.mirror_stage_edit(doc, (conv,), True))
    # a tag is an AttrsChanged of tag keys only: new pens at once, no layout asked for
    assert pane.build.node_items[conv].pen().color() == QColor(drawing.MIRROR_COLOUR)
    assert not pane._relayout_timer.isActive() and not pane.busy_now
    window.push_edit(edits.set_attr((bn,), tags.FORCE_MIRRORING, "True"))
    qtbot.waitUntil(lambda: pane.build.node_items[bn].pen().style()
                    == Qt.PenStyle.DashLine, timeout=WAIT_MS)
    assert pane.layout is layout
    assert "mirror stage" in pane.legend.text()
    window.undo_stack.undo()
    window.undo_stack.undo()
    qtbot.waitUntil(lambda: pane.build.node_items[conv].pen().color()
                    == QColor(drawing.FAMILY_COLOURS["convolution"][1]), timeout=WAIT_MS)


def test_context_menu_toggles_a_mirror_stage(drawn, qtbot) -> None:
    window, pane = drawn()
    doc = window.document
    conv = next(i for i in doc.order() if doc.nodes[i].op == "Convolution")
    pane._on_menu_requested(conv, QPoint(10, 10))
    menu = pane._menu
    action = next(a for a in menu.actions() if a.text().startswith("Mirror stage"))
    assert not action.isChecked()
    action.trigger()
    menu.close()
    assert tags.is_mirror_stage(doc.nodes[conv].attrs)
    assert window.selection.nodes == [conv]


def test_edits_relayout_and_keep_the_view(drawn, qtbot) -> None:
    window, pane = drawn()
    doc = window.document
    convs = [i for i in doc.order() if doc.nodes[i].op == "Convolution"]
    target = convs[8]
    pane.view.set_zoom(1.0)
    pane.center_on(target)
    before = pane.view.mapFromScene(pane.build.node_items[target].boundingRect().center())
    layout = pane.layout
    window.push_edit(edits.RenameNodeEdit(target, "renamed"))   # names: no new layout
    qtbot.wait(300)
    assert pane.layout is layout
    with qtbot.waitSignal(pane.drawn, timeout=WAIT_MS):
        window.push_edit(edits.set_attr((convs[0],), "kernel", "(5, 5)"))
    assert pane.layout is not layout
    assert "5\u00d75" in pane.graph.nodes[[n.id for n in pane.graph.nodes].index(convs[0])].detail
    after = pane.view.mapFromScene(pane.build.node_items[target].boundingRect().center())
    assert (after - before).manhattanLength() < 40
    assert pane.view.scale_factor == pytest.approx(1.0)


def test_search_jumps_to_matches(drawn, qtbot) -> None:
    window, pane = drawn()
    doc = window.document
    pane.search.setText("stage3_conv")
    shown = {n.id for n in pane.graph.nodes}
    matches = [i for i in doc.order() if "stage3_conv" in doc.nodes[i].name and i in shown]
    assert pane.toolbar.match_label.text() == f"{len(matches)} found"
    QTest.keyClick(pane.search, Qt.Key.Key_Return)
    QTest.keyClick(pane.search, Qt.Key.Key_Return)
    assert window.selection.nodes == [matches[1]]
    assert pane.toolbar.match_label.text() == f"2 of {len(matches)}"


def test_zoom_keys_wheel_and_fit(drawn, qtbot) -> None:
    window, pane = drawn()
    view = pane.view
    view.set_zoom(1.0)
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_Plus)
    assert view.scale_factor == pytest.approx(1.25)
    QTest.keyClick(view, Qt.Key.Key_Minus)
    assert view.scale_factor == pytest.approx(1.0)
    # Fit: a graph too tall to read whole shows its top, readable (it was 0 % for a
    # 1001-layer ResNet), and the minimap the rest
    QTest.keyClick(view, Qt.Key.Key_0)
    rect = view.mapToScene(view.viewport().rect()).boundingRect()
    assert view.scale_factor >= 0.42 and pane.build.text_layer.isVisible()
    data = window.document.find("data")[0]
    assert rect.contains(pane.build.node_items[data].boundingRect())
    assert pane.minimap.isVisible()
    # zoomed far out, text is not drawn; zoomed in it is
    view.set_zoom(0.1)
    assert not pane.build.text_layer.isVisible()
    view.set_zoom(1.0)
    assert pane.build.text_layer.isVisible()
    assert pane.toolbar.zoom_label.text() == "100%"


@pytest.mark.parametrize("ext, magic", [("svg", b"<?xml"), ("png", b"\x89PNG"),
                                        ("pdf", b"%PDF")])
def test_export_from_the_pane(drawn, qtbot, tmp_path, ext, magic) -> None:
    window, pane = drawn()
    window.infer_blocking({"data": (1, 3, 224, 224)})
    out = tmp_path / f"graph.{ext}"
    with qtbot.waitSignal(pane.exported, timeout=WAIT_MS):
        pane.export_to(str(out))
    data = out.read_bytes()
    assert data.startswith(magic)
    if ext == "svg":
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
        assert "1\u00d764\u00d756\u00d756" in data.decode()


def test_a_layout_can_be_cancelled_and_a_newer_one_wins(drawn, qtbot) -> None:
    window, pane = drawn()
    layout = pane.layout
    pane.relayout()
    assert pane.busy_now and pane.toolbar.busy.isVisibleTo(pane)
    pane.cancel_button.click()
    assert not pane.busy_now and not pane.toolbar.busy.isVisibleTo(pane)
    with qtbot.assertNotEmitted(pane.drawn, wait=800):
        pass
    assert pane.layout.nodes == layout.nodes     # the old picture stays
    # two quick requests: only the last is drawn
    pane.params_button.setChecked(True)
    pane.params_button.setChecked(False)
    qtbot.waitUntil(lambda: not pane.busy_now, timeout=WAIT_MS)
    qtbot.wait(300)
    assert not pane.graph.show_params
    assert set(pane.build.node_items) == {n.id for n in drawing.visible_graph(
        window.document).nodes}


def test_without_dot_the_pane_says_how_to_install_it(make_window, qtbot, monkeypatch) -> None:
    monkeypatch.setenv("MXEXPLORER_DOT", "/nonexistent/dot")
    window = make_window(R18)
    pane = window.graph_pane
    qtbot.waitUntil(lambda: pane.stack.currentWidget() is pane.message, timeout=WAIT_MS)
    assert "install it with" in pane.message.text() and "graphviz" in pane.message.text()
    # everything else keeps working
    window.infer_blocking({"data": (1, 3, 224, 224)})
    assert window.shape_result is not None and window.shape_result.complete


@pytest.mark.parametrize("net, size", [("resnet18_v1", 224), ("inceptionv3", 299)])
def test_edge_labels_overlap_neither_each_other_nor_nodes(make_window, qtbot, zoo,
                                                          net, size) -> None:
    """Where branches split, the shapes of the edges used to sit on top of each other."""
    window = make_window(zoo(net, size))
    pane = window.graph_pane
    qtbot.waitUntil(lambda: pane.build is not None and not pane.busy_now, timeout=WAIT_MS)
    window.infer_blocking({"data": (1, 3, size, size)})
    labels = [item.sceneBoundingRect() for item in pane.build.label_items]
    assert len(labels) == len(pane.build.edge_items)
    nodes = [item.sceneBoundingRect() for item in pane.build.node_items.values()]
    clash = [(a, b) for k, a in enumerate(labels) for b in labels[k + 1:]
             if a.intersects(b)]
    on_nodes = [a for a in labels for n in nodes if a.intersects(n)]
    assert not clash and not on_nodes, (len(clash), len(on_nodes))


def test_the_legend_covers_no_node_and_folds(drawn, qtbot) -> None:
    window, pane = drawn()
    legend = pane.legend
    assert legend.isVisible() and "convolution" in legend.text()
    view_rect = pane.view.geometry()
    assert not view_rect.intersects(legend.geometry())     # a strip under the graph
    pane.legend_button.click()
    assert not legend.isVisible()


def test_dark_theme_recolours_graph_plots_and_words(drawn, qtbot) -> None:
    from mxexplorer.gui.theme import DARK, LIGHT, themes

    window, pane = drawn()
    qtbot.waitUntil(lambda: window.memory is not None, timeout=WAIT_MS)
    plot = window.memory.plan_plot.plot
    try:
        window.commands.theme_actions["dark"].trigger()
        assert themes().current is DARK
        assert pane.view.backgroundBrush().color() == QColor(DARK.canvas)
        assert plot.backgroundBrush().color() == QColor(DARK.plot_bg)
        qtbot.waitUntil(lambda: not pane.busy_now, timeout=WAIT_MS)
        assert pane.build.edge_items[0].pen().color() == QColor(DARK.edge)
        assert window.palette().window().color().lightness() < 80
        assert window.settings.theme() == "dark"
        window.shape_form.set_message("oops", error=True)
        assert DARK.error in window.shape_form.message.styleSheet()
    finally:
        window.commands.theme_actions["light"].trigger()
    assert themes().current is LIGHT
    assert LIGHT.error in window.shape_form.message.styleSheet()   # kept through changes
    assert plot.backgroundBrush().color() == QColor(LIGHT.plot_bg)


@pytest.fixture(scope="module")
def resnet1001(tmp_path_factory):
    """The 1001-layer ResNet of the memonger paper (3,342 visible nodes)."""
    import sys

    from tests.conftest import REPO

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import nets
    finally:
        sys.path.pop(0)
    path = tmp_path_factory.mktemp("r1001") / "resnet1001-symbol.json"
    nets.resnet_cifar(1001).save(str(path))
    return path


def test_a_big_graph_opens_as_blocks_that_open_in_place(make_window, qtbot,
                                                        resnet1001) -> None:
    from mxexplorer.core.render import blocks

    window = make_window(resnet1001)
    pane = window.graph_pane
    qtbot.waitUntil(lambda: pane.build is not None and not pane.busy_now, timeout=WAIT_MS)
    assert len(drawing.visible_graph(window.document).nodes) > blocks.COLLAPSE_ABOVE
    shown = pane.build.node_items
    block_ids = [i for i in shown if blocks.is_block(i)]
    assert len(shown) <= blocks.BUDGET and block_ids
    assert pane.toolbar.blocks_button.isChecked()
    tree = pane.blocks.tree
    closed = next(i for i in block_ids if tree.blocks[tree.by_id[i]].children == ()
                  and tree.blocks[tree.by_id[i]].size > 3)
    key = tree.by_id[closed]
    assert "operators" in pane.tooltip(closed)
    # a node inside the closed block: the graph centres the block for it
    member = tree.members(key)[0]
    assert pane.visible_node_for(member) == closed
    # double-click opens the block in place: its nodes are drawn, the rest stays
    item = shown[closed]
    pane.center_on(closed)
    pos = pane.view.mapFromScene(item.boundingRect().center())
    with qtbot.waitSignal(pane.drawn, timeout=WAIT_MS):
        QTest.mouseDClick(pane.view.viewport(), Qt.MouseButton.LeftButton,
                          Qt.KeyboardModifier.NoModifier, pos)
    assert member in pane.build.node_items and closed not in pane.build.node_items
    assert len(pane.build.node_items) <= blocks.BUDGET + blocks.SEGMENT_MAX
    # and closes again
    with qtbot.waitSignal(pane.drawn, timeout=WAIT_MS):
        pane.close_block(key)
    assert closed in pane.build.node_items


SLOW_DOT = "time.sleep(120)"


def test_a_dot_over_its_time_limit_gives_way_to_the_layered_layout(make_window, qtbot,
                                                                   tmp_path,
                                                                   monkeypatch) -> None:
    from tests.core.render.test_drawing import _stand_in

    monkeypatch.setenv("MXEXPLORER_DOT", _stand_in(tmp_path, SLOW_DOT))
    window = make_window(EXAMPLES / "mlp-symbol.json")
    pane = window.graph_pane
    assert pane.busy_now                      # dot (the slow stand-in) is running
    # cancel stops it at once
    pane.cancel_button.click()
    assert not pane.busy_now and "cancelled" in pane.message.text()
    # with a time limit, the layered layout is drawn and the pane says so
    pane.layouter.time_limit = 1.0
    with qtbot.waitSignal(pane.drawn, timeout=WAIT_MS):
        pane.relayout()
    assert pane.layout.method == "layered"
    assert "layered layout (dot took over 1 s)" == pane.toolbar.layout_label.text()
    assert set(pane.build.node_items) == {n.id for n in
                                          drawing.visible_graph(window.document).nodes}


def test_the_minimap_keeps_to_the_corner_of_the_view(drawn, qtbot) -> None:
    """The legend coming or going changes the view's height, not the pane's: the
    minimap moved only with the pane and was left above (or under) the corner."""
    window, pane = drawn()
    window.resize(1100, 700)
    mini = pane.minimap
    qtbot.waitUntil(lambda: mini.isVisible(), timeout=WAIT_MS)

    def off_corner() -> tuple[int, int]:
        area = pane.view.viewport().geometry()
        return (mini.x() - (area.right() - mini.width() - 8),
                mini.y() - (area.bottom() - mini.height() - 8))

    qtbot.waitUntil(lambda: off_corner() == (0, 0), timeout=WAIT_MS)
    for _ in range(2):
        height = pane.view.viewport().height()
        pane.legend_button.click()
        qtbot.waitUntil(lambda h=height: pane.view.viewport().height() != h, timeout=WAIT_MS)
        assert off_corner() == (0, 0)
