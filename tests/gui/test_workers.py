"""Workers end in a state the garbage collector cannot turn into a crash."""
from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, Slot

from mxexplorer.gui import workers
from tests.conftest import WAIT_MS, WAIT_S


class _Sink(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.results: list[object] = []

    @Slot(object)
    def take(self, value: object) -> None:
        self.results.append(value)


def test_a_finished_worker_drops_its_job_and_makes_no_qt_call_after(qtbot) -> None:
    """The job is dropped (no cycle for the collector); the worker stays on its own,
    finished thread: moving it back to the GUI thread from the worker deadlocked once
    against the GUI thread (see ``FunctionWorker._release``)."""
    holder: dict[str, object] = {}

    def job(progress, token) -> int:
        holder["emit"]  # the closure refers to the worker: a reference cycle
        return 42

    sink = _Sink()
    worker = workers.FunctionWorker(job)
    holder["emit"] = worker.partial.emit
    worker.finished.connect(sink.take)
    thread = workers.start(sink, worker)
    qtbot.waitUntil(lambda: sink.results == [42], timeout=WAIT_MS)
    assert thread.wait(10000)
    assert worker._fn is None                      # the cycle is broken
    assert worker.thread() is thread and thread.isFinished()


def test_a_thread_ends_while_the_gui_thread_waits_without_an_event_loop(qtbot) -> None:
    """A closing window waits for its threads without turning the event loop: the
    thread must quit by itself when its job ends (a queued quit never came)."""
    import threading

    started = threading.Event()

    def job(progress, token) -> int:
        started.set()
        return 1

    sink = _Sink()
    worker = workers.FunctionWorker(job)
    thread = workers.start(sink, worker)
    assert started.wait(10)
    assert thread.wait(5000)                       # no processEvents in between
    qtbot.waitUntil(lambda: not workers._registry.running, timeout=WAIT_MS)


def test_garbage_is_collected_on_the_gui_thread_only(qapp) -> None:
    """A worker allocating many objects must not run the collector (it would free a
    closed window's Qt objects on its own thread)."""
    import gc
    import threading
    import time

    assert not gc.isenabled()
    seen: list[str] = []

    def note(phase, info) -> None:
        if phase == "start":
            seen.append(threading.current_thread().name)

    gc.callbacks.append(note)
    try:
        kept: list = []
        worker = threading.Thread(target=lambda: kept.extend([i] for i in range(300000)),
                                  name="w")
        worker.start()
        worker.join()
        QCoreApplication.processEvents()
        deadline = time.monotonic() + WAIT_S
        while not seen and time.monotonic() < deadline:
            QCoreApplication.processEvents()
            time.sleep(0.05)
    finally:
        gc.callbacks.remove(note)
    assert seen and set(seen) == {threading.main_thread().name}


def test_a_job_slot_passes_only_the_newest_job_and_partials_from_the_first_moment(
        qtbot) -> None:
    """A job reporting at once gets its ``partial`` before the thread starts (the
    planner's first probe once raced the assignment of its callback: KeyError)."""
    import threading

    slot = workers.JobSlot()
    partials, results, ended = _Sink(), _Sink(), _Sink()
    slot.partial.connect(partials.take)
    slot.finished.connect(results.take)
    slot.ended.connect(lambda: ended.results.append("ended"))
    gate = threading.Event()

    def slow(progress, token, partial) -> str:
        partial("slow")
        gate.wait(10)
        return "slow"

    def fast(progress, token, partial) -> str:
        partial("fast")
        return "fast"

    slot.start(slow, partial=True)
    slot.start(fast, partial=True)          # supersedes the slow one
    gate.set()
    qtbot.waitUntil(lambda: results.results == ["fast"], timeout=WAIT_MS)
    qtbot.wait(100)
    assert results.results == ["fast"] and "fast" in partials.results
    assert ended.results == ["ended"] and not slot.busy
    slot.start(slow, partial=True)
    slot.cancel()                           # cancelled and ended at once
    assert not slot.busy and ended.results == ["ended", "ended"]
    gate.set()
    from tests.gui.conftest import wait_for_workers

    wait_for_workers()
    assert results.results == ["fast"]       # the cancelled job's result never came


def test_an_owner_deleted_while_a_failure_is_shown_is_no_error(qtbot) -> None:
    """The window closes while its error dialog is up (the failure's handler runs a
    modal loop, where the closed window's objects are deleted): the slot then said
    "Signal source has been deleted" from ``ended.emit()`` (issue 37)."""
    from PySide6.QtCore import QEvent

    from mxexplorer.core.runtime.errors import UserError

    owner = QObject()
    slot = workers.JobSlot(owner)
    shown: list[str] = []

    def dialog_while_the_window_closes(message: str) -> None:
        shown.append(message)
        owner.deleteLater()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)

    def fails(progress, token):
        raise UserError("no such file")

    slot.failed.connect(dialog_while_the_window_closes)
    slot.start(fails)
    qtbot.waitUntil(lambda: shown == ["no such file"], timeout=WAIT_MS)
    workers.wait_all(WAIT_MS)
