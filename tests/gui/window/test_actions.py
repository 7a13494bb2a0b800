"""The action table is the one source: the menus are built from it, the command palette
and the shortcut list read it, and every row's slot is a callable of the window (a
typo would only show on a click)."""
from __future__ import annotations

from PySide6.QtWidgets import QMenu

from mxexplorer.gui.window.actions import TABLE, clean, resolve
from mxexplorer.gui.window.help import window_actions
from tests.conftest import EXAMPLES


def test_menus_palette_and_slots_come_from_the_table(make_window) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    menus = {clean(m.title()): m for m in window.menuBar().findChildren(QMenu)}
    named = {path for path, _ in window.commands.named()}
    palette = {a.path for a in window_actions(window)}
    for spec in TABLE:
        if not spec.slot:
            continue                    # a submenu or the docks' toggles
        assert callable(resolve(window, spec.slot)), spec
        texts = [clean(a.text()) for a in menus[clean(spec.menu)].actions()]
        assert clean(spec.text) in texts or spec.key in ("undo", "redo"), spec
        path = f"{clean(spec.menu)} > {clean(spec.text)}"
        assert path in named and path in palette, path
    # the docks' toggles and the themes are in the palette too
    assert "View > Internals" in palette and "View > Theme > Dark" in palette


def test_document_actions_wait_for_a_document(make_window, settings) -> None:
    from mxexplorer.gui.window.main_window import MainWindow

    empty = MainWindow(settings)
    try:
        for spec in TABLE:
            if spec.slot and spec.key in empty.commands.by_key:
                assert empty.commands[spec.key].isEnabled() == (not spec.document), spec
        window = make_window(EXAMPLES / "mlp-symbol.json")
        assert all(window.commands[s.key].isEnabled() for s in TABLE if s.document)
    finally:
        empty.close()
