"""The cyclic garbage collector, run from the GUI thread's timer and kept to a share of
the time.

Automatic collection is off in the window's process: left on, it ran on whichever
thread allocated, and a worker then freed a closed window's Qt objects (see
:func:`mxexplorer.gui.app.configure_threads`).  pyqtgraph's ``GarbageCollector`` did
the same from a timer but ran a full collection whenever the oldest generation's count
passed its threshold, which a worker reading a large graph passes every few ticks: a
full pass walks every object the process holds, and even a young pass walks every
object allocated since the last (a worker reading the 261,001-node graph makes millions):
opening that graph spent 2 s of its GUI thread in the collector.  Here every pass, of
any generation, waits until the time since the last is ``1 / share`` times what the
last took, so collection takes at most that share of the GUI thread whatever the heap
(cycles wait a little longer to be freed; everything else is freed by reference counts
at once).
"""
from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer


class Collector(QObject):
    """Collect garbage every ``interval`` seconds from the calling (GUI) thread, taking
    at most ``share`` of the time: after a pass that took t seconds the next waits
    t / share seconds."""

    def __init__(self, interval: float = 0.5, share: float = 0.05,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.share = share
        self.threshold = gc.get_threshold()
        #: when the next pass may run (time.monotonic())
        self.next_pass = 0.0
        self.full_collections = 0
        gc.disable()
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.check)
        self.timer.start(int(interval * 1000))

    def check(self) -> None:
        if time.monotonic() < self.next_pass:
            return
        young, middle, old = gc.get_count()
        if young <= self.threshold[0]:
            return
        started = time.perf_counter()
        generation = 0
        if middle > self.threshold[1]:
            generation = 2 if old > self.threshold[2] else 1
        gc.collect(generation)
        took = time.perf_counter() - started
        if generation == 2:
            self.full_collections += 1
        self.next_pass = time.monotonic() + took / self.share
