"""The GUI thread's garbage collector: cycles are freed, and a pass that took t seconds
holds the next back t / share seconds (found opening a 261,001-node graph: pyqtgraph's
collector ran a full pass whenever the oldest generation's count passed its threshold,
2 s of the GUI thread in the collector)."""
from __future__ import annotations

import gc
import time
import weakref

from mxexplorer.gui.collector import Collector


class _Cyclic:
    def __init__(self) -> None:
        self.me = self


def _garbage(n: int = 50_000) -> weakref.ref:
    """Enough cycles to pass every generation's threshold; a reference to one."""
    keep = None
    for _ in range(n):
        keep = _Cyclic()
    ref = weakref.ref(keep)
    del keep
    return ref


def test_a_pass_frees_cycles_and_holds_the_next_back(qapp) -> None:
    collector = Collector(interval=3600, share=0.05)     # no tick of its own here
    passes: list[int] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "stop":
            passes.append(info["generation"])
    gc.callbacks.append(seen)
    try:
        collector.next_pass = 0.0
        ref = _garbage()
        assert ref() is not None and not gc.isenabled()
        collector.check()
        assert ref() is None and len(passes) == 1           # the cycle is gone
        waits = collector.next_pass - time.monotonic()
        assert waits > 0
        ref = _garbage()
        collector.check()                                   # too soon: nothing runs
        assert len(passes) == 1 and ref() is not None
        collector.next_pass = 0.0
        collector.check()
        assert len(passes) == 2 and ref() is None
    finally:
        gc.callbacks.remove(seen)
        collector.timer.stop()


def test_the_window_process_collects_with_it(qapp) -> None:
    from mxexplorer.gui import app

    app.configure_threads(qapp)
    assert isinstance(app._collector, Collector) and not gc.isenabled()
