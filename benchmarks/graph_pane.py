"""Graph pane: time from opening a file to the drawn graph, event-loop stalls meanwhile,
and the cost of one repaint when scrolling and zooming.

Targets (2-core machine): ResNet-152 export drawn within 1.5 s of opening; a
1001-layer ResNet (about 8,300 internals) within 8 s, the GUI never blocked for more
than 100 ms at a time while it happens.

Run: ``python benchmarks/graph_pane.py [resnet152_v1 resnet1001 ...]`` (offscreen
unless a display is set).  Each network runs in a fresh process started as
``mxexplorer FILE`` starts: the window is built, the file opens in the background
(``MainWindow.open_file``) and the window shows; "drawn" counts from the window's
construction, stalls from the first turn of the event loop to the drawn graph.
MXNet's import is left until the graph is drawn (see ``MainWindow._mxnet_timer``).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(path: str) -> None:
    import tempfile

    from PySide6.QtCore import QTimer

    from mxexplorer.core.render import drawing
    from mxexplorer.gui.app import _flush_deletes, ensure_app
    from mxexplorer.gui.settings import Settings
    from mxexplorer.gui.window.main_window import MainWindow

    app = ensure_app()
    params = path.endswith("#params")
    path = path.removesuffix("#params")
    gaps: list[float] = []
    result: dict[str, float] = {}
    t0 = time.perf_counter()
    last = [t0]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    def drawn() -> None:
        result["drawn"] = time.perf_counter() - t0
        app.exit(0)

    # as `mxexplorer FILE` does: the window, the file opening in the background, shown
    window = MainWindow(Settings(os.path.join(tempfile.mkdtemp(), "s.ini")))
    window.resize(1400, 860)
    window.files.open_file(path)
    window.show()
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()

    def connect() -> None:
        pane = window.graph_pane
        if pane is None:
            QTimer.singleShot(5, connect)
            return
        if params:
            pane.params_button.click()        # parameters shown from the start
        pane.drawn.connect(drawn)
        pane.layout_failed.connect(lambda m: app.exit(1))

    connect()
    last[0] = time.perf_counter()   # stalls are counted once the event loop runs
    app.exec()
    timer.stop()
    pane = window.graph_pane
    stalls = [g - 0.005 for g in gaps]
    result["max_stall"] = max(stalls)
    result["stalls_over_100ms"] = sum(1 for s in stalls if s > 0.1)
    result["nodes"] = len(pane.graph.nodes) if pane.graph else 0
    result["graph_nodes"] = len(drawing.visible_graph(window.document, params).nodes)
    result["layout"] = pane.layout.method if pane.layout else "?"
    result["items"] = len(pane.view.scene().items()) if pane.view.scene() else 0

    # repaint cost: the user scrolls at 100 %, then looks at the whole graph
    view = pane.view
    for label, zoom in (("paint_100", 1.0), ("paint_40", 0.4), ("paint_fit", None)):
        if zoom is None:
            view.fit()
        else:
            view.set_zoom(zoom)
        times = []
        bar = view.verticalScrollBar()
        for k in range(12):
            bar.setValue(bar.minimum() + (bar.maximum() - bar.minimum()) * k // 12)
            start = time.perf_counter()
            view.viewport().repaint()
            times.append(time.perf_counter() - start)
        result[label] = statistics.median(times)
    sys.stdout.write(json.dumps(result) + "\n")
    window.undo_stack.setClean()
    window.close()
    _flush_deletes()


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    sys.path.insert(0, ROOT)
    from benchmarks.nets import child_result

    names = sys.argv[1:] or ["resnet152_v1", "resnet1001", "resnet1001#params", "lstm6000",
                             "seq2seq22k"]
    print(f"{'network':<18} {'graph':>6} {'drawn':>6} {'items':>7} {'first s':>8} "
          f"{'max stall ms':>13} {'>100ms':>7} {'paint@100% ms':>14} {'@40%':>6} {'@fit':>6}")
    for name in names:
        r = child_result(__file__, name)
        print(f"{name:<18} {r['graph_nodes']:>6} {r['nodes']:>6} {r['items']:>7} "
              f"{r['drawn']:>8.2f} "
              f"{r['max_stall'] * 1000:>13.0f} {r['stalls_over_100ms']:>7} "
              f"{r['paint_100'] * 1000:>14.1f} {r['paint_40'] * 1000:>6.1f} "
              f"{r['paint_fit'] * 1000:>6.1f}")


if __name__ == "__main__":
    main()
