"""Guard against the PySide6 build that over-releases None (6.12.0 with Python 3.11).

Each void call there dropped one reference to None; after a few thousand tree rows
Python aborted ("none_dealloc").  pyproject pins a good version; this keeps it so.
"""
from __future__ import annotations

import gc
import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel


def test_void_calls_keep_none_alive(qapp) -> None:
    from tests.gui.conftest import wait_for_workers

    wait_for_workers()  # other threads would move None's count while we measure
    model = QStandardItemModel()
    items = [QStandardItem("x") for _ in range(2000)]
    gc.collect()
    enabled = gc.isenabled()   # off in the GUI process: collected on the GUI thread
    gc.disable()  # a collection mid-loop frees others' references to None
    try:
        before = sys.getrefcount(None)
        for i, item in enumerate(items):
            item.setData(i, Qt.ItemDataRole.UserRole + 1)
            item.setText("y")
            model.appendRow(item)
        after = sys.getrefcount(None)
    finally:
        if enabled:
            gc.enable()
    assert after - before > -100
