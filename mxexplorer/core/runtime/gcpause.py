"""Long computations that make many small objects and keep few: the cyclic garbage
collector's full passes walk every object the process holds (a graph, MXNet's modules),
again and again.  :func:`frozen_heap` moves what exists into the permanent generation
for the duration, so those passes walk only what the computation makes.

The memory model (:mod:`mxexplorer.core.planning.liveness`) makes some ten thousand
tuples a call: a plan of a 1001-layer ResNet spends a fifth of its model time in the
collector without this, a ResNet-152 a seventh.  No Qt, no MXNet.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_depth = [0]


@contextmanager
def frozen_heap() -> Iterator[None]:
    """``gc.freeze()`` on entry, ``gc.unfreeze()`` when the outermost such block ends
    (nested blocks and other threads' blocks share one freeze).  Cycles made before the
    block are collected after it, not during it; nothing else changes."""
    with _lock:
        if _depth[0] == 0:
            gc.freeze()
        _depth[0] += 1
    try:
        yield
    finally:
        with _lock:
            _depth[0] -= 1
            if _depth[0] == 0:
                gc.unfreeze()
