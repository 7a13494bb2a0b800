"""Tree filter on the 22,747-internal seq2seq of the corpus: time from the filter being
applied (after the typing pause) to the tree laid out again, per query.

Run: ``python benchmarks/tree_filter.py [symbol.json]`` (offscreen unless a display is
set); without an argument it uses ../shared/corpus's ParaBank rewriter.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = os.path.join(os.path.dirname(ROOT), "shared", "corpus",
                       "decompositional-semantics-initiative__ParaBank-rewriter__symbol.json")
QUERIES = ["e", "en", "enc", "encoder_rnn_l1_t9", "activation1", "_plus", "t96", ""]


def main() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QWidget

    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.gui.app import ensure_app
    from mxexplorer.gui.host import WidgetHost
    from mxexplorer.gui.panels.tree.panel import InternalsPanel
    from mxexplorer.gui.session import DocumentSession
    from mxexplorer.gui.settings import Settings

    app = ensure_app()
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    doc = GraphDocument.open(path)
    holder = QWidget()
    session = DocumentSession(doc, Settings(os.path.join(tempfile.mkdtemp(), "s.ini")), holder)
    tree = InternalsPanel(session, session.settings, WidgetHost(holder))
    tree.resize(520, 800)
    tree.show()
    for _ in range(50):
        app.processEvents()  # type: ignore[attr-defined]
    print(f"{os.path.basename(path)}: {len(doc.internals()):,} internals")
    print(f"{'query':22} {'ms':>6} {'rows shown':>11}")
    worst = 0.0
    for query in QUERIES:
        times = []
        for _ in range(3):
            tree.filter_edit.setText(query)
            start = time.perf_counter()
            tree._apply_filter()                       # what the typing pause triggers
            app.processEvents()  # type: ignore[attr-defined]
            times.append(time.perf_counter() - start)
            tree.filter_edit.setText("\u0000")         # a different query in between
            tree._apply_filter()
            app.processEvents()  # type: ignore[attr-defined]
        tree.filter_edit.setText(query)
        tree._apply_filter()
        ms = sorted(times)[1] * 1000
        worst = max(worst, ms)
        print(f"{query or '(cleared)':22} {ms:6.0f} {len(tree.model.rows):11,}")
    print(f"worst median {worst:.0f} ms; keystrokes themselves cost nothing (the filter "
          f"waits for a {150} ms pause)")


if __name__ == "__main__":
    main()
