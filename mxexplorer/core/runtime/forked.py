"""Work run beside the caller in a forked copy of this process, on a second core.

The planner's "best" search is two searches that never wait for each other (the fast
one and the thorough one); one after the other they took the sum of their times.  In
two threads they took longer still (the GIL: DenseNet-201 16.5 s against 14.0), so
the fast one runs in a fork: the copy has MXNet, the graph and the memory model
already, starts in milliseconds and shares their pages until it writes.

:class:`Beside` forks, runs ``work(send)`` in the copy, and reads back what ``send``
streamed and what ``work`` returned (pickles over a pipe, framed as :mod:`isolated`
frames its child's, read without blocking while the caller goes on).  The copy dies
with its parent (Linux), is killed when the caller stops early, and never runs the
caller's exit handlers.  Only where forking is known to be safe: Linux, two cores or
more, and work that touches no GPU (a CUDA context cannot cross a fork); elsewhere the
caller runs the work itself.  No Qt here.
"""
from __future__ import annotations

import os
import pickle
import select
import signal
import sys
from typing import Any, Callable

from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.isolated import _HEADER, _describe_exit, _die_with_parent, _send
from mxexplorer.core.runtime.progress import CancelToken


def available() -> bool:
    """Whether :class:`Beside` may fork here: Linux, and two cores this process may use."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except OSError:                     # pragma: no cover - no affinity call
        return (os.cpu_count() or 1) >= 2


class Beside:
    """``work(send)`` in a forked copy of this process; ``send(value)`` streams a
    picklable value back (:meth:`messages`), and what ``work`` returns is
    :meth:`result`'s.  An exception in the copy is raised by :meth:`result`: a
    :class:`UserError` as it is, anything else as one line naming it."""

    def __init__(self, work: Callable[[Callable[[Any], None]], Any]):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:                                    # the copy
            os.close(read_fd)
            code = 0
            try:
                _die_with_parent()
                out = os.fdopen(write_fd, "wb")

                def send(value: Any) -> None:
                    _send(out, ("message", value))

                try:
                    outcome: tuple[Any, ...] = ("result", work(send))
                except UserError as exc:
                    outcome = ("error", exc, str(exc))
                except BaseException as exc:  # noqa: BLE001 - reported as one line
                    lines = str(exc).strip().splitlines()
                    outcome = ("error", None,
                               f"{type(exc).__name__}: {lines[-1] if lines else ''}")
                _send(out, outcome)
            except BaseException:  # noqa: BLE001 - the parent sees the pipe close
                code = 1
            finally:
                os._exit(code)       # never the parent's atexit handlers, nor its tests
        os.close(write_fd)
        self.pid = pid
        self._fd = read_fd
        self._buffer = b""
        self._pending: list[Any] = []
        self._outcome: tuple[Any, ...] | None = None
        self._closed = False

    def _read(self, timeout: float) -> bool:
        """Take in what the pipe holds, waiting up to ``timeout`` seconds for the first
        of it; False once the copy has closed its end (or when nothing came)."""
        if self._closed:
            return False
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if not ready:
            return False
        chunk = os.read(self._fd, 1 << 20)
        if not chunk:
            self._closed = True
            return False
        self._buffer += chunk
        while len(self._buffer) >= _HEADER.size:
            size, = _HEADER.unpack_from(self._buffer)
            if len(self._buffer) < _HEADER.size + size:
                break
            kind, *payload = pickle.loads(self._buffer[_HEADER.size:_HEADER.size + size])
            self._buffer = self._buffer[_HEADER.size + size:]
            if kind == "message":
                self._pending.append(payload[0])
            else:
                self._outcome = (kind, *payload)
        return True

    def messages(self) -> list[Any]:
        """What ``send`` has streamed since the last call, without waiting."""
        while self._read(0.0):
            pass
        out, self._pending = self._pending, []
        return out

    def result(self, token: CancelToken, on_message: Callable[[Any], None]) -> Any:
        """Wait for ``work``'s result (each streamed value to ``on_message`` as it
        comes); :class:`Cancelled` (the copy killed) once ``token`` is set."""
        try:
            while True:
                for value in self.messages():
                    on_message(value)
                if self._outcome is not None:
                    break
                if self._closed:
                    raise UserError("the search beside this one stopped without an answer "
                                    f"({self._exit_words()})")
                token.check()
                self._read(0.1)
        finally:
            self.stop()
        kind, *payload = self._outcome
        if kind == "result":
            return payload[0]
        if isinstance(payload[0], UserError):
            raise payload[0]
        raise UserError(f"the search beside this one failed: {payload[1]}")

    def _exit_words(self) -> str:
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return "its exit was not seen"
        self.pid = 0
        return _describe_exit(os.waitstatus_to_exitcode(status))

    def stop(self) -> None:
        """Kill the copy if it still works, reap it, close the pipe (again: nothing).
        A copy that has answered is left to end by itself (it exits as it sends)."""
        if self.pid:
            if self._outcome is None:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            self._closed = True
