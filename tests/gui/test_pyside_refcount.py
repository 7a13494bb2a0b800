"""Guard against the PySide6 build that over-releases None (6.12.0 with Python 3.11).

Each void call there dropped one reference to None; after a few thousand tree rows
Python aborted ("none_dealloc").  pyproject pins a good version; this keeps it so.
"""
from __future__ import annotations

import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel


def test_void_calls_keep_none_alive(qapp) -> None:
    model = QStandardItemModel()
    items = [QStandardItem("x") for _ in range(2000)]
    before = sys.getrefcount(None)
    for i, item in enumerate(items):
        item.setData(i, Qt.ItemDataRole.UserRole + 1)
        item.setText("y")
        model.appendRow(item)
    assert sys.getrefcount(None) - before > -100
