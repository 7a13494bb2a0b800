"""The child processes this process runs now (an isolated job's Python, graphviz ``dot``),
so that an exit can kill what a worker thread still waits on.

A worker waiting on a child stops when its token is set (it polls it); a process
that must end and finds a worker still waiting kills the children here, which ends
the wait at once (the worker sees the child gone).  No Qt.
"""
from __future__ import annotations

import os
import signal
import threading

_lock = threading.Lock()
#: pid -> what it is ("isolated", "dot")
_LIVE: dict[int, str] = {}


def track(pid: int, kind: str) -> None:
    with _lock:
        _LIVE[pid] = kind


def untrack(pid: int) -> None:
    with _lock:
        _LIVE.pop(pid, None)


def live(kind: str | None = None) -> set[int]:
    """Pids of the children running now (of ``kind`` when given)."""
    with _lock:
        return {pid for pid, k in _LIVE.items() if kind is None or k == kind}


def kill_all() -> int:
    """SIGKILL every child still running; returns how many were signalled.  Their
    owners reap them (each waits on its own child)."""
    killed = 0
    for pid in live():
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except (ProcessLookupError, PermissionError):
            pass
    return killed
