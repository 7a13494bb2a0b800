"""Run a core function on a QThread: the worker shape of STYLE.md section 3.

A :class:`FunctionWorker` calls ``fn(progress, token)`` in ``run()`` and reports through
four signals; :func:`start` wires it to a thread owned by a GUI-thread parent.
The worker never touches widgets or the document: it returns data.
"""
from __future__ import annotations

import atexit
import os
import sys
import time
import traceback
from typing import Any, Callable, NoReturn

import shiboken6
from PySide6.QtCore import QObject, Qt, QThread, QTimer, Signal, Slot

from mxexplorer.core.runtime import children
from mxexplorer.core.runtime.errors import Cancelled, UserError
from mxexplorer.core.runtime.progress import CancelToken, Throttled


class FunctionWorker(QObject):
    """Signals
    -------
    progress(int, int, str): done, total, message (throttled to ~15 a second)
    finished(object): the function's result
    failed(str): one line for a UserError, else the formatted traceback
    cancelled(): the CancelToken was set
    partial(object): an intermediate result the function reports (``worker.partial.emit``)
    """

    progress = Signal(int, int, str)
    partial = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, fn: Callable[..., Any], partial: bool = False):
        super().__init__()
        #: ``fn(progress, token, partial)``: the function reports intermediate results
        #: through ``partial`` (this worker's signal, known before the thread starts)
        self._wants_partial = partial
        self._fn: Callable[[Callable[[int, int, str], None], CancelToken], Any] | None = fn
        self.token = CancelToken()

    def request_cancel(self) -> None:
        self.token.cancel()

    @Slot()
    def run(self) -> None:
        try:
            assert self._fn is not None, "a worker runs once"
            args: tuple[Any, ...] = (Throttled(self.progress.emit), self.token)
            if self._wants_partial:
                args += (self.partial.emit,)
            result = self._fn(*args)
        except Cancelled:
            self.cancelled.emit()
        except UserError as exc:
            self.failed.emit(str(exc))
        except Exception:  # noqa: BLE001 - reported to the GUI thread, never swallowed
            self.failed.emit(traceback.format_exc())
        else:
            self.finished.emit(result)
        finally:
            self._release()

    def _release(self) -> None:
        """Drop the job: its closure may point back here, a cycle only the garbage
        collector would break, on whatever thread it happens to run, where deleting a
        QObject aborts.  The worker's last reference goes on the GUI thread, after its
        thread has finished (the registry holds it until then).

        It is not moved back to the GUI thread: ``moveToThread`` here ran with Python's
        lock held and waited for a Qt signal-slot mutex, while the GUI thread, holding
        that mutex in an object's destructor, waited for Python's lock to ask a
        PySide override (``disconnectNotify``): a deadlock seen in a test run (py-spy:
        ``QObject::moveToThread`` / ``QBasicMutex::lockInternal`` on the worker,
        ``~QObject`` / ``Shiboken::GilState::acquire`` on the GUI thread).  A worker
        thread makes no Qt call here beyond its signals.
        """
        self._fn = None


class _Registry(QObject):
    """Holds every started thread until it has finished.

    Threads have no Qt parent (unlike STYLE.md's advice): a window deleted while one
    of its threads still ran made Qt abort the process ("QThread: Destroyed while
    thread is still running"), which a test run hit now and then.  Here a thread
    lives until its own ``finished``, whatever happens to the window.
    """

    def __init__(self) -> None:
        super().__init__()
        self.running: dict[int, tuple[QThread, FunctionWorker]] = {}

    def add(self, thread: QThread, worker: FunctionWorker) -> None:
        self.running[id(thread)] = (thread, worker)
        thread.finished.connect(self._on_thread_finished)

    @Slot()
    def _on_thread_finished(self) -> None:
        # release on the next turn of the event loop, never inside the thread's own
        # finished() emission (the last reference may be this one)
        QTimer.singleShot(0, self._sweep)

    @Slot()
    def _sweep(self) -> None:
        for key, (thread, _) in list(self.running.items()):
            if thread.isFinished():
                del self.running[key]


_registry: _Registry | None = None
#: the process is ending (:func:`shutdown` ran): no thread starts any more
_closing = False


def start(parent: QObject, worker: FunctionWorker) -> QThread:
    """Move ``worker`` to a new thread and start it; ``parent`` is the GUI object the
    job belongs to (its owner cancels and waits for it on close).

    Once the process is ending (:func:`shutdown`) the thread is made but never
    started and the job never runs: a thread started after the last wait (a queued
    result whose slot starts the next job, while the last events are processed) was
    still running when Python's exit destroyed it, and Qt aborted the process."""
    global _registry
    if _registry is None:
        _registry = _Registry()
        # after PySide's own exit handler (registered as QtCore loaded), so it runs
        # before it: PySide deletes every QObject Python owns, running threads too
        atexit.register(_at_exit)
    thread = QThread()
    if _closing:
        worker.request_cancel()
        return thread                    # not started: deleting it is safe
    _registry.add(thread, worker)
    worker.moveToThread(thread)
    thread.started.connect(worker.run)
    # quit() straight from the worker thread (it is thread-safe): a queued quit waited
    # for the GUI thread's event loop, so a GUI thread blocked in wait() on this thread
    # waited for a quit it was itself holding up
    direct = Qt.ConnectionType.DirectConnection
    worker.finished.connect(thread.quit, direct)
    worker.failed.connect(thread.quit, direct)
    worker.cancelled.connect(thread.quit, direct)
    # no worker.deleteLater: the worker is Python's object and dies with its last
    # reference, on the GUI thread, after the thread has finished
    thread.start()
    return thread


def wait_all(timeout_ms: int = 10000, cancel: bool = False) -> list[FunctionWorker]:
    """Wait for every started thread to end (asking their jobs to stop first when
    ``cancel``); returns the workers still running after ``timeout_ms``.  The process
    must not exit before: Qt aborts when a running QThread is destroyed."""
    if _registry is None:
        return []
    running = list(_registry.running.values())
    if cancel:
        for _, worker in running:
            worker.request_cancel()
    deadline = time.monotonic() + timeout_ms / 1000
    left = []
    for thread, worker in running:
        remaining = max(0, int((deadline - time.monotonic()) * 1000))
        if not thread.wait(remaining):
            left.append(worker)
    return left


def shutdown(wait_ms: int = 15000, kill_wait_ms: int = 10000) -> list[FunctionWorker]:
    """End every background job before the process exits; returns the workers still
    running at the end (none, unless a job neither stops nor ends).

    From now on no thread starts.  The running jobs are asked to stop and waited for up
    to ``wait_ms``; then the child processes they may wait on (an isolated plan or
    benchmark, graphviz dot) are killed, which ends such a wait at once, and they are
    waited for up to ``kill_wait_ms`` more.  A job that still runs then (Python code
    that ignores its token, MXNet's import) cannot be stopped from outside: the caller
    leaves with :func:`leave_now` rather than let Qt abort on its running thread."""
    global _closing
    _closing = True
    left = wait_all(wait_ms, cancel=True)
    if left:
        sys.stderr.write(f"mxexplorer: waiting for {len(left)} background job(s) to end\n")
        sys.stderr.flush()
        children.kill_all()
        left = wait_all(kill_wait_ms)
    return left


def leave_now(left: list[FunctionWorker], code: int) -> NoReturn:
    """End the process at once with ``code`` while ``left`` still run: no destructor
    runs, so none destroys their running threads (Qt aborts on that, SIGABRT).  What
    this process printed is flushed first, and its children are killed; settings and
    files were written as the windows closed."""
    children.kill_all()
    sys.stderr.write(f"mxexplorer: {len(left)} background job(s) did not end; "
                     "leaving them\n")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _at_exit() -> None:
    """The last guard, for exits that skipped the app's own (an exception out of the
    window's run, a script's ``sys.exit``): the same shutdown, before PySide deletes
    the threads.  Its exit status is not known here: a job that cannot be stopped
    ends the process with 1."""
    global _closing
    _closing = True
    if _registry is None or not any(t.isRunning() for t, _ in _registry.running.values()):
        return
    left = shutdown()
    if left:
        leave_now(left, 1)


class JobSlot(QObject):
    """One kind of job for one owner: a new job supersedes (cancels) the one before,
    and only the current job's signals come through.

    Owners (the session, a panel) keep one slot per kind of work; views connect to
    the slot's signals, which carry what :class:`FunctionWorker` reports, plus
    ``ended`` after any outcome.

    Signals
    -------
    started(): a job began
    progress(int, int, str): done, total, message
    partial(object): an intermediate result (a planner probe)
    finished(object): the job's result
    failed(str): one line for a UserError, else a traceback
    cancelled(): the job was cancelled (``cancel``)
    ended(): after finished, failed or cancelled
    """

    started = Signal()
    progress = Signal(int, int, str)
    partial = Signal(object)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    ended = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._worker: FunctionWorker | None = None

    @property
    def busy(self) -> bool:
        return self._worker is not None

    @property
    def worker(self) -> FunctionWorker | None:
        return self._worker

    def start(self, fn: Callable[..., Any], partial: bool = False) -> FunctionWorker:
        """Run ``fn(progress, token)`` on a thread, superseding the current job
        (``partial``: ``fn(progress, token, partial)``, which reports through ``partial``)."""
        self.cancel(quiet=True)
        worker = FunctionWorker(fn, partial)
        worker.progress.connect(self._on_progress)
        worker.partial.connect(self._on_partial)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        self._worker = worker
        start(self, worker)
        self.started.emit()
        return worker

    def cancel(self, quiet: bool = False) -> None:
        """Stop the current job (its late signals are dropped); ``cancelled`` and
        ``ended`` follow at once unless ``quiet``."""
        worker, self._worker = self._worker, None
        if worker is None:
            return
        worker.request_cancel()
        if not quiet:
            self.cancelled.emit()
            self.ended.emit()

    def _current(self) -> bool:
        return self._worker is not None and self.sender() is self._worker

    @Slot(int, int, str)
    def _on_progress(self, done: int, total: int, message: str) -> None:
        if self._current():
            self.progress.emit(done, total, message)

    @Slot(object)
    def _on_partial(self, value: object) -> None:
        if self._current():
            self.partial.emit(value)

    @Slot(object)
    def _on_finished(self, result: object) -> None:
        if self._current():
            self._worker = None
            self.finished.emit(result)
            self._ended()

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        if self._current():
            self._worker = None
            self.failed.emit(message)
            self._ended()

    def _ended(self) -> None:
        # a handler may have shown a dialog, in whose loop the window closed and this
        # slot went with it: nothing is left to tell then
        if shiboken6.isValid(self):
            self.ended.emit()
