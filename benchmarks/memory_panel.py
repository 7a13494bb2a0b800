"""Memory panel: event-loop stalls while a search runs (its probes plotted live), how
long Cancel takes, and how long closing the window mid-search takes.

Targets: no stall over 100 ms while searching; Cancel within 1 s; closing the window
mid-search ends cleanly.

Run: ``python benchmarks/memory_panel.py [resnet152_v1 ...]`` (offscreen unless a
display is set).  Each network runs in a fresh process: the window opens the file,
MXNet loads, the shape form gets batch 32 at 224x224 (299 for Inception), the panel
plans with automatic stages in "best" mode; stalls are gaps of a 5 ms timer from the
click on Plan until ``search_s`` later, then Cancel is clicked; a second search is
started and the window is closed under it.
"""
from __future__ import annotations

import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(path: str, search_s: float = 6.0) -> None:
    import tempfile

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from mxexplorer.gui.app import _flush_deletes, ensure_app
    from mxexplorer.gui.settings import Settings
    from mxexplorer.gui.window.main_window import MainWindow

    app = ensure_app()
    window = MainWindow(Settings(os.path.join(tempfile.mkdtemp(), "s.ini")))
    window.resize(1400, 860)
    window.files.open_path(path)
    window.show()

    def wait(cond, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not cond() and time.monotonic() < deadline:
            QApplication.processEvents()
            time.sleep(0.002)
        if not cond():
            raise SystemExit("timed out")

    wait(lambda: window.mxnet_ready and window.memory is not None
         and not window.graph_pane.busy_now)
    size = 299 if "inception" in path else 224
    window.shape_form.set_shapes({"data": (32, 3, size, size)})
    panel = window.memory
    panel.stages.setCurrentIndex(panel.stages.findData("auto"))
    panel.search.setCurrentIndex(panel.search.findData("best"))

    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    result: dict[str, float] = {}
    ended: list[float] = []
    panel.finished.connect(lambda: ended.append(time.perf_counter()))

    panel.start_button.click()
    last[0] = time.perf_counter()
    timer.start()
    stop_at = time.perf_counter() + search_s
    # exit(), not quit(): Qt 6's quit() closes (and so deletes) the windows first
    QTimer.singleShot(int(search_s * 1000), lambda: app.exit(0))
    app.exec()
    timer.stop()
    result["probes_seen"] = len(panel.probes)
    stalls = [g - 0.005 for g in gaps]
    result["max_stall"] = max(stalls) if stalls else 0.0
    result["stalls_over_100ms"] = sum(1 for s in stalls if s > 0.1)
    result["finished_early"] = bool(ended) and ended[0] < stop_at

    clicked = time.perf_counter()
    panel.cancel_button.click()
    wait(lambda: not panel.busy and panel.start_button.isEnabled())
    result["cancel_s"] = time.perf_counter() - clicked

    panel.start_button.click()
    wait(lambda: len(panel.probes) >= 3)
    window.undo_stack.setClean()
    clicked = time.perf_counter()
    window.close()
    _flush_deletes()
    result["close_s"] = time.perf_counter() - clicked
    sys.stdout.write(json.dumps(result) + "\n")


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    sys.path.insert(0, ROOT)
    from benchmarks.nets import child_result

    names = sys.argv[1:] or ["resnet152_v1", "resnet18_v1"]
    print(f"{'network':<16} {'probes in 6 s':>13} {'max stall ms':>13} {'>100ms':>7} "
          f"{'cancel s':>9} {'close s':>8}")
    for name in names:
        r = child_result(__file__, name)
        print(f"{name:<16} {r['probes_seen']:>13} {r['max_stall'] * 1000:>13.0f} "
              f"{r['stalls_over_100ms']:>7} {r['cancel_s']:>9.3f} {r['close_s']:>8.3f}"
              + ("  (search ended before 6 s)" if r["finished_early"] else ""))


if __name__ == "__main__":
    main()
