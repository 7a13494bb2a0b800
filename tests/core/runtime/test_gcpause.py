"""The collector's full passes skip what existed before a long computation."""
from __future__ import annotations

import gc
import time

from mxexplorer.core.runtime.gcpause import frozen_heap
from tests.conftest import WAIT_S


def _no_freeze_left() -> None:
    """A GUI test in this process may have left a job ending inside its own block (its
    window closed, the thread finishing): its freeze ends with it."""
    deadline = time.monotonic() + WAIT_S
    while gc.get_freeze_count() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert gc.get_freeze_count() == 0


def test_the_heap_is_frozen_inside_and_released_after_the_outermost_block() -> None:
    _no_freeze_left()
    keep = [object() for _ in range(1000)]
    with frozen_heap():
        frozen = gc.get_freeze_count()
        assert frozen >= len(keep)
        with frozen_heap():          # nested: the same freeze, not a second one
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
    assert gc.get_freeze_count() == 0


def test_cycles_made_inside_are_still_collected_and_the_block_ends_on_errors() -> None:
    class Node:
        pass

    try:
        with frozen_heap():
            a, b = Node(), Node()
            a.other, b.other = b, a          # type: ignore[attr-defined]
            del a, b
            assert gc.collect() >= 2
            raise ValueError("stop")
    except ValueError:
        pass
    assert gc.get_freeze_count() == 0
