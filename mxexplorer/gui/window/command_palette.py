"""CommandPalette (Ctrl+Shift+P): every action of the window found by typing part of its
name, as in the editors users know; Enter runs the highlighted one."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Slot
from PySide6.QtWidgets import (
    QDialog,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from mxexplorer.gui.window.help import NamedAction, window_actions


def matches(query: str, path: str) -> bool:
    """Every word of ``query`` in ``path`` (any case, any order): "save as" finds
    "File > Save As", "zoom graph" finds "Graph > Zoom In"."""
    text = path.lower()
    return all(word in text for word in query.lower().split())


class CommandPalette(QDialog):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setWindowTitle("Command Palette")
        self.setWindowFlag(Qt.WindowType.FramelessWindowHint, True)
        self.actions_found: list[NamedAction] = [
            a for a in window_actions(window) if a.action.isEnabled()]
        self.query = QLineEdit(placeholderText="Type a command (e.g. save as, fit, dark)")
        self.list = QListWidget()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.query)
        layout.addWidget(self.list)
        self.query.textChanged.connect(self._on_query_changed)
        self.query.returnPressed.connect(self.run_current)
        self.list.itemActivated.connect(self._on_item_activated)
        self.query.installEventFilter(self)
        self._on_query_changed("")
        self.resize(520, 360)
        if window.isVisible():
            top = window.mapToGlobal(window.rect().topLeft())
            self.move(top.x() + (window.width() - self.width()) // 2, top.y() + 60)

    def shown(self) -> list[str]:
        return [self.list.item(r).text() for r in range(self.list.count())]

    @Slot(str)
    def _on_query_changed(self, text: str) -> None:
        self.list.clear()
        for named in self.actions_found:
            if matches(text, named.path):
                label = named.path + (f"    {named.keys}" if named.keys else "")
                item = QListWidgetItem(label)
                item.setData(Qt.ItemDataRole.UserRole, named)
                self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """Up and Down in the text move through the list."""
        if watched is self.query and event.type() == QEvent.Type.KeyPress:
            key = event.key()  # type: ignore[attr-defined]
            if key in (Qt.Key.Key_Down, Qt.Key.Key_Up):
                row = self.list.currentRow() + (1 if key == Qt.Key.Key_Down else -1)
                if 0 <= row < self.list.count():
                    self.list.setCurrentRow(row)
                return True
        return super().eventFilter(watched, event)

    @Slot()
    def run_current(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self._on_item_activated(item)

    @Slot(QListWidgetItem)
    def _on_item_activated(self, item: QListWidgetItem) -> None:
        named: NamedAction = item.data(Qt.ItemDataRole.UserRole)
        self.accept()
        named.action.trigger()
