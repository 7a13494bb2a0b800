"""MXNetLoader: MXNet's import, once per process, in the background.

MXNet takes about a second to import and holds the GIL meanwhile, so windows start
it when they are idle (after the first graph is drawn) or when a job needs it.  Its
state is the process's, not a window's: every window and session reads this one.
"""
from __future__ import annotations

import sys
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from mxexplorer.core.runtime.mxnet_env import import_mxnet
from mxexplorer.gui import workers

IDLE, LOADING, READY, UNAVAILABLE = "idle", "loading", "ready", "unavailable"


def _import_job(progress: Any, token: Any) -> bool:
    import_mxnet()
    return True


class MXNetLoader(QObject):
    """Signals
    -------
    state_changed(str): "idle", "loading", "ready" or "unavailable"
    """

    state_changed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.state = READY if "mxnet" in sys.modules else IDLE
        self.message = ""                 # why MXNet is unavailable
        self._job = workers.JobSlot(self)
        self._job.finished.connect(self._on_loaded)
        self._job.failed.connect(self._on_failed)

    @property
    def ready(self) -> bool:
        return self.state == READY

    @property
    def started(self) -> bool:
        return self.state != IDLE

    def ensure(self) -> None:
        """Start the import unless it has started (or MXNet is in already)."""
        if self.state == IDLE and "mxnet" in sys.modules:
            self._set(READY)
        elif self.state == IDLE:
            self._set(LOADING)
            self._job.start(_import_job)

    def mark_imported(self) -> None:
        """MXNet was imported on this thread (the --screenshot path)."""
        if "mxnet" in sys.modules and self.state != READY:
            self._job.cancel(quiet=True)
            self._set(READY)

    def _set(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_changed.emit(state)

    @Slot(object)
    def _on_loaded(self, _: object) -> None:
        self._set(READY)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.message = message.strip().splitlines()[-1] if message.strip() else ""
        self._set(UNAVAILABLE)


_loader: MXNetLoader | None = None


def loader() -> MXNetLoader:
    """The process's loader (made on first use, on the GUI thread)."""
    global _loader
    if _loader is None:
        _loader = MXNetLoader()
    return _loader
