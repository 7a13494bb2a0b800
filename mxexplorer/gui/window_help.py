"""WindowHelp: View > Theme and the Help menu of a main window (command palette,
keyboard shortcuts, About).  Mixed into :class:`MainWindow`, whose settings it uses.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QMenuBar

from mxexplorer.gui.command_palette import CommandPalette
from mxexplorer.gui.help import AboutDialog, ShortcutsDialog
from mxexplorer.gui.theme import themes

THEMES = (("system", "Follow the &System"), ("light", "&Light"), ("dark", "&Dark"))


class WindowHelp:
    """Theme and help menus of :class:`MainWindow` (a mixin)."""

    settings: Any

    def add_theme_and_help_menus(self, bar: QMenuBar, view_menu: QMenu) -> None:
        view_menu.addSeparator()
        theme_menu = view_menu.addMenu("&Theme")
        self.theme_group = QActionGroup(bar)
        self.theme_actions: dict[str, QAction] = {}
        for pref, text in THEMES:
            action = theme_menu.addAction(text)
            action.setCheckable(True)
            action.setData(pref)
            self.theme_group.addAction(action)
            self.theme_actions[pref] = action
        self.theme_actions[themes().preference].setChecked(True)
        self.theme_group.triggered.connect(self._on_theme_chosen)
        help_menu = bar.addMenu("&Help")
        self.palette_action = help_menu.addAction("&Command Palette...",
                                                  QKeySequence("Ctrl+Shift+P"),
                                                  self.show_command_palette)
        help_menu.addAction("&Keyboard Shortcuts", QKeySequence.StandardKey.HelpContents,
                            self._on_shortcuts_triggered)
        help_menu.addAction("&About mxexplorer", self._on_about_triggered)

    def show_command_palette(self) -> CommandPalette:
        palette = CommandPalette(self)  # type: ignore[arg-type]
        palette.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        palette.show()
        palette.query.setFocus()
        return palette

    def _on_shortcuts_triggered(self) -> None:
        ShortcutsDialog(self).exec()  # type: ignore[arg-type]

    def _on_about_triggered(self) -> None:
        AboutDialog(self).exec()  # type: ignore[arg-type]

    @Slot(QAction)
    def _on_theme_chosen(self, action: QAction) -> None:
        """Every window shows the choice; the next start keeps it."""
        from mxexplorer.gui.windows import all_windows

        preference = str(action.data())
        self.settings.set_theme(preference)
        themes().set_preference(preference)
        for window in all_windows():
            window.theme_actions[preference].setChecked(True)
