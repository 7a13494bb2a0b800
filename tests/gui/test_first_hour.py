"""The first hour (issue 16): a window that fits the work at 1400x860, every shortcut
listed from the actions, About with the versions, a command palette."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from mxexplorer.gui.window.command_palette import CommandPalette, matches
from mxexplorer.gui.window.help import AboutDialog, ShortcutsDialog, shortcut_rows, versions
from tests.conftest import EXAMPLES

R18 = EXAMPLES / "resnet18_v1-symbol.json"


def test_the_tree_shows_name_op_and_shape_at_1400x860(make_window, qtbot) -> None:
    window = make_window(R18)
    window.resize(1400, 860)
    qtbot.wait(50)
    view = window.tree.view
    header = view.header()
    needed = sum(header.sectionSize(c) for c in range(3))
    assert view.viewport().width() >= needed, (view.viewport().width(), needed)


def test_every_shortcut_is_listed_from_the_actions(make_window, qtbot) -> None:
    window = make_window(R18)
    rows = shortcut_rows(window)
    listed = {path for _, path in rows}
    assert {"File > Save", "Edit > Toggle Mirror Stage", "Help > Command Palette",
            "Graph > Zoom In", "Graph > Fit the Graph", "Graph > Find Node"} <= listed
    assert ("Ctrl+Shift+P", "Help > Command Palette") in rows
    # nothing with a shortcut is left out (menus and the panels' own actions)
    keyed = {a for a in window.findChildren(QAction) if a.shortcuts() and a.text()}
    assert len(keyed) == len(rows)
    dialog = ShortcutsDialog(window)
    qtbot.addWidget(dialog)
    assert dialog.table.rowCount() == len(rows)


def test_about_names_mxnet_qt_and_graphviz(make_window) -> None:
    found = dict(versions())
    assert found["MXNet"].startswith("1.9.1")
    assert found["Qt"].startswith("6.") and "PySide6" in found["Qt"]
    assert found["graphviz dot"][0].isdigit()
    window = make_window(EXAMPLES / "mlp-symbol.json")
    dialog = AboutDialog(window)
    assert "1.9.1" in dialog.label.text() and "graphviz" in dialog.label.text()
    dialog.deleteLater()


def test_command_palette_finds_and_runs_an_action(make_window, qtbot) -> None:
    from mxexplorer.gui.theme import LIGHT, themes

    assert matches("save as", "File > Save As") and matches("zoom graph", "Graph > Zoom In")
    assert not matches("save x", "File > Save As")
    window = make_window(R18)
    assert QKeySequence("Ctrl+Shift+P") == window.commands['palette'].shortcut()
    window.commands['palette'].trigger()        # (its key needs window focus: not offscreen)
    palette = next(w for w in QApplication.topLevelWidgets()
                   if isinstance(w, CommandPalette) and w.isVisible())
    assert len(palette.shown()) > 20
    QTest.keyClicks(palette.query, "theme dark")
    assert palette.shown() == ["View > Theme > Dark"]
    try:
        QTest.keyClick(palette.query, Qt.Key.Key_Return)
        assert themes().current.dark and not palette.isVisible()
    finally:
        window.commands.theme_actions["light"].trigger()
    assert themes().current is LIGHT
