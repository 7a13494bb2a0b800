"""The graph's context menu on a node: mirror stage, copy names, open or close a block."""
from __future__ import annotations

from typing import Callable

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from mxexplorer.core.graph import tags
from mxexplorer.core.graph.document import GraphDocument


def node_menu(parent: QWidget, doc: GraphDocument, nodes: list[int], block: str | None,
              inside: str | None, mark_mirror: Callable[[list[int], bool], None],
              open_block: Callable[[str], None], close_block: Callable[[str], None]
              ) -> QMenu:
    """The menu for the selected ``nodes`` (the clicked one first in the selection);
    ``block``: the clicked node is a folded block; ``inside``: the open block the
    first selected node is in."""
    ops = [n for n in nodes if not doc.nodes[n].is_variable]
    menu = QMenu(parent)
    if ops:
        tagged = all(tags.is_mirror_stage(doc.nodes[n].attrs) for n in ops)
        act = menu.addAction("Mirror stage" if len(ops) == 1
                             else f"Mirror stage ({len(ops)} nodes)")
        act.setCheckable(True)
        act.setChecked(tagged)
        act.triggered.connect(lambda on: mark_mirror(ops, on))
    names = "\n".join(doc.nodes[n].name for n in nodes)
    menu.addAction("Copy name" if len(nodes) == 1 else "Copy names",
                   lambda: QGuiApplication.clipboard().setText(names))
    if block is not None:
        menu.addAction(f"Open block {block}", lambda: open_block(block))
    elif inside is not None:
        menu.addAction(f"Close block {inside}", lambda: close_block(inside))
    return menu
