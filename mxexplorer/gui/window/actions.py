"""The window's actions, declared once: the table below builds the menus, and the
command palette and the shortcut list read it (with the actions panels add to their
own widgets, see :func:`named_actions`), so none of them can go stale.

A row names its menu, its text, its keys and the slot it calls: a dotted path from the
window (``"files.save_as"``).  Rows with ``document=True`` are off until a document
is open.  Submenus with their own life (Open Recent, Theme) and the docks' toggles are
made here too, from the same places.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtCore import Slot
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget

from mxexplorer.gui.theme import themes
from mxexplorer.gui.window.windows import all_windows, standard_keys

Keys = tuple[Any, ...]      # QKeySequence.StandardKey or "Ctrl+E", first wins in a clash

#: the themes offered, by preference
THEMES = (("system", "Follow &System"), ("light", "&Light"), ("dark", "&Dark"))


@dataclass(frozen=True)
class ActionSpec:
    key: str                  # the QAction's name in :attr:`Actions.by_key`
    menu: str                 # "&File"
    text: str
    slot: str                 # dotted path from the window, or "" for a submenu
    keys: Keys = ()
    document: bool = False    # enabled only while a document is open
    separator: bool = False   # a separator before it


TABLE: tuple[ActionSpec, ...] = (
    ActionSpec("open", "&File", "&Open...", "files.open_dialog",
               (QKeySequence.StandardKey.Open,)),
    ActionSpec("recent", "&File", "Open &Recent", ""),
    ActionSpec("save", "&File", "&Save", "files.save", (QKeySequence.StandardKey.Save,),
               document=True),
    ActionSpec("save_as", "&File", "Save &As...", "files.save_as",
               (QKeySequence.StandardKey.SaveAs,), document=True),
    ActionSpec("reload", "&File", "Re&load from Disk", "files.reload", document=True,
               separator=True),
    ActionSpec("restore", "&File", "Restore &Unsaved Edits...", "files.restore_edits"),
    ActionSpec("export_graph", "&File", "&Export Graph Picture...", "exports.graph_picture",
               ("Ctrl+E",), document=True),
    ActionSpec("export_onnx", "&File", "Export &ONNX...", "exports.export_onnx",
               document=True),
    ActionSpec("compare", "&File", "Compare &With...", "exports.compare_with",
               document=True),
    ActionSpec("close", "&File", "&Close Window", "close",
               (QKeySequence.StandardKey.Close, "Ctrl+W"), separator=True),
    ActionSpec("quit", "&File", "&Quit", "quit", (QKeySequence.StandardKey.Quit, "Ctrl+Q")),
    # Ctrl+Y redoes as well, as on other desktops (Qt's Linux binding is Ctrl+Shift+Z)
    ActionSpec("undo", "&Edit", "&Undo", "undo", (QKeySequence.StandardKey.Undo,)),
    ActionSpec("redo", "&Edit", "&Redo", "redo",
               (QKeySequence.StandardKey.Redo, "Ctrl+Shift+Z", "Ctrl+Y")),
    ActionSpec("prefix", "&Edit", "&Prefix All Names...", "prefix_all_names",
               document=True, separator=True),
    ActionSpec("mirror", "&Edit", "Toggle &Mirror Stage", "toggle_mirror_stage",
               ("Ctrl+M",), document=True),
    ActionSpec("docks", "&View", "", ""),
    ActionSpec("theme", "&View", "&Theme", "", separator=True),
    ActionSpec("palette", "&Help", "&Command Palette...", "show_command_palette",
               ("Ctrl+Shift+P",)),
    ActionSpec("shortcuts", "&Help", "&Keyboard Shortcuts", "show_shortcuts",
               (QKeySequence.StandardKey.HelpContents,)),
    ActionSpec("about", "&Help", "&About mxexplorer", "show_about"),
)


def _keys(keys: Keys) -> list[QKeySequence]:
    """The sequences of ``keys``: a standard key (or, where the platform binds none,
    the next string as its stand-in), then any further strings not already in."""
    out: list[QKeySequence] = []
    rest = list(keys)
    while rest:
        key = rest.pop(0)
        if isinstance(key, QKeySequence.StandardKey):
            fallback = rest.pop(0) if rest and isinstance(rest[0], str) else ""
            found = standard_keys(key, fallback) if fallback else [QKeySequence(key)]
            out += [k for k in found if k not in out and not k.isEmpty()]
        elif QKeySequence(key) not in out:
            out.append(QKeySequence(key))
    return out


def clean(text: str) -> str:
    """A menu text as read: no mnemonic ampersands, no trailing dots."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip(".\u2026 ")


def resolve(window: QWidget, slot: str) -> Callable[[], Any]:
    target: Any = window
    for part in slot.split("."):
        target = getattr(target, part)
    return target  # type: ignore[no-any-return]


class Actions:
    """The menus of ``window`` built from :data:`TABLE`; ``by_key`` holds the QActions.

    ``docks``: the dock widgets whose show/hide toggles go in the View menu.
    """

    def __init__(self, window: QMainWindow, docks: list[Any]) -> None:
        self.window = window
        self.docks = list(docks)
        self.by_key: dict[str, QAction] = {}
        self.menus: dict[str, QMenu] = {}
        self.theme_actions: dict[str, QAction] = {}
        bar = window.menuBar()
        for spec in TABLE:
            menu = self.menus.get(spec.menu)
            if menu is None:
                menu = self.menus[spec.menu] = bar.addMenu(spec.menu)
            if spec.separator:
                menu.addSeparator()
            if spec.key == "recent":
                self.recent_menu = menu.addMenu(spec.text)
                self.recent_menu.aboutToShow.connect(
                    lambda: resolve(window, "files.fill_recent_menu")())
            elif spec.key == "docks":
                for dock in docks:
                    menu.addAction(dock.toggleViewAction())
            elif spec.key == "theme":
                self._add_themes(menu.addMenu(spec.text))
            else:
                action = menu.addAction(spec.text)
                action.setObjectName(f"action_{spec.key}")
                action.setShortcuts(_keys(spec.keys))
                action.triggered.connect(
                    lambda _=False, slot=spec.slot: resolve(window, slot)())
                self.by_key[spec.key] = action
        self.set_document(False)

    def __getitem__(self, key: str) -> QAction:
        return self.by_key[key]

    def named(self) -> list[tuple[str, QAction]]:
        """Every action by the path a user knows it by ("File > Save As"), in menu
        order: what the command palette offers and the shortcut list shows."""
        out: list[tuple[str, QAction]] = []
        for spec in TABLE:
            menu = clean(spec.menu)
            if spec.key == "docks":
                out += [(f"{menu} > {clean(dock.toggleViewAction().text())}",
                         dock.toggleViewAction()) for dock in self.docks]
            elif spec.key == "theme":
                out += [(f"{menu} > {clean(spec.text)} > {clean(action.text())}", action)
                        for action in self.theme_actions.values()]
            elif spec.key in self.by_key:
                out.append((f"{menu} > {clean(spec.text)}", self.by_key[spec.key]))
        return out

    def _add_themes(self, menu: QMenu) -> None:
        group = QActionGroup(menu)
        for pref, text in THEMES:
            action = menu.addAction(text)
            action.setCheckable(True)
            action.setData(pref)
            group.addAction(action)
            self.theme_actions[pref] = action
        self.theme_actions[themes().preference].setChecked(True)
        group.triggered.connect(self._on_theme_chosen)

    @Slot(QAction)
    def _on_theme_chosen(self, action: QAction) -> None:
        """Every window shows the choice; the next start keeps it."""
        preference = str(action.data())
        settings = getattr(self.window, "settings", None)
        if settings is not None:
            settings.set_theme(preference)
        themes().set_preference(preference)
        for window in all_windows():
            actions = getattr(window, "commands", None)
            if isinstance(actions, Actions):
                actions.theme_actions[preference].setChecked(True)

    def set_document(self, on: bool) -> None:
        """The document's actions on (a document is open) or off."""
        for spec in TABLE:
            if spec.document:
                self.by_key[spec.key].setEnabled(on)

    def set_undo(self, can_undo: bool, undo_text: str, can_redo: bool, redo_text: str
                 ) -> None:
        for key, can, text, word in (("undo", can_undo, undo_text, "&Undo"),
                                     ("redo", can_redo, redo_text, "&Redo")):
            self.by_key[key].setEnabled(can)
            self.by_key[key].setText(f"{word} {text}" if can and text else word)

