"""Progress reporting and cancellation shared by the CLI and the GUI workers.

Core functions take ``progress(done, total, message)`` and a ``CancelToken``; the CLI
passes a terminal printer, the GUI a signal's ``emit``.  No Qt here.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Protocol

from mxexplorer.core.runtime.errors import Cancelled


class Progress(Protocol):
    def __call__(self, done: int, total: int, message: str) -> None: ...


def no_progress(done: int, total: int, message: str) -> None:
    """A progress callback that ignores everything."""


class CancelToken:
    """A thread-safe cancel flag; ``check()`` raises :class:`Cancelled` once set."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled()


class Throttled:
    """Wrap a progress callback so it fires at most ``rate`` times a second.

    The first and the final (``done == total``) calls always pass.
    """

    def __init__(self, callback: Callable[[int, int, str], None], rate: float = 15.0):
        self._callback = callback
        self._interval = 1.0 / rate
        self._last = 0.0

    def __call__(self, done: int, total: int, message: str) -> None:
        now = time.monotonic()
        if done >= total or now - self._last >= self._interval:
            self._last = now
            self._callback(done, total, message)
