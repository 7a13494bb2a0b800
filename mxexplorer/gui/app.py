"""QApplication setup and the ``run()`` entry point used by the CLI.

Owns organisation/application names, the icon and the ``--screenshot`` path.
"""
from __future__ import annotations

import os
import sys
from typing import Mapping, Sequence

from mxexplorer.core.runtime.errors import UserError

ORG = "mxexplorer"
APP = "mxexplorer"


def _has_display() -> bool:
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def ensure_app() -> object:
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        app = QApplication(sys.argv[:1])
        app.setOrganizationName(ORG)
        app.setApplicationName(APP)
        app.setApplicationDisplayName("mxexplorer")
        configure_threads(app)
    return app


_collector: object | None = None


def configure_threads(app: object) -> None:
    """How the GUI process shares Python with its worker threads (tests call it too).

    - The garbage collector runs only on the GUI thread, from a timer
      (:class:`~mxexplorer.gui.collector.Collector`): left automatic, it ran on whichever
      thread allocated, and a worker then freed a closed window's Qt objects,
      deadlocking or crashing (seen in gdb: a worker in QObject::~QObject while the GUI
      thread deleted a menu).  Its full passes are kept to a twentieth of the time.
    - A 1 ms switch interval instead of 5: Qt calls back into Python from the GUI
      thread thousands of times a second, each call waiting for the GIL up to the
      interval; opening a 1001-layer ResNet stalled the window 270 ms at 5 ms.
    """
    global _collector
    sys.setswitchinterval(0.001)
    if _collector is None:
        from mxexplorer.gui.collector import Collector

        _collector = Collector(interval=0.5)


#: the screen a screenshot pictures the first window on, unless told
SCREENSHOT_SCREEN = (1400, 860)


def run(files: Sequence[str], shapes: Mapping[str, tuple[int, ...]] | None = None,
        screenshot: str | None = None, theme: str | None = None,
        screen: tuple[int, int] | None = None) -> int:
    """Open the main window on ``files``; with ``screenshot``, save a PNG and exit.
    ``theme`` ("system", "light", "dark") overrides the remembered choice for this run;
    ``screen`` (width, height): the screen a screenshot's first window is made for."""
    if screenshot and not os.environ.get("QT_QPA_PLATFORM") and not _has_display():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if not _has_display():
        raise UserError("no display to open a window on (DISPLAY and WAYLAND_DISPLAY are "
                        "unset); the subcommands info and infer work without one")
    from PySide6.QtCore import QTimer

    from mxexplorer.core.graph.document import GraphDocument
    from mxexplorer.gui.window.main_window import MainWindow

    app = ensure_app()
    server = None
    if not screenshot:
        from mxexplorer.gui.instance import InstanceServer, send_to_running

        if send_to_running(list(files), dict(shapes or {})):
            return 0                       # the running mxexplorer opens them
        server = InstanceServer()
    settings = None
    if screenshot:
        # pictures use the default layout and leave the user's settings alone
        import tempfile

        from mxexplorer.gui.settings import Settings

        settings = Settings(os.path.join(tempfile.mkdtemp(prefix="mxexplorer-"), "shot.ini"))
    from mxexplorer.gui.settings import Settings
    from mxexplorer.gui.theme import themes

    settings = settings or Settings()
    themes().set_preference(theme or settings.theme())
    window = MainWindow(settings)
    if screenshot:
        from PySide6.QtCore import QRect

        # the first window a user gets on a screen of this size (unmaximised: the
        # picture is the window's own area, whatever the screen Qt runs on here)
        window.place_first(QRect(0, 0, *(screen or SCREENSHOT_SCREEN)), maximise=False)
    else:
        window.restore_layout()
    if server is not None:
        # saves a kill cut short are finished or undone, and leftover temporaries
        # removed, before anything is opened; then the edits a crashed run left
        # behind are offered once the window is up
        from mxexplorer.core.runtime import tidying as core_tidying

        tidied = core_tidying.tidy(settings.saves_dir(), [settings.recovery_dir()] + [
            os.path.dirname(p) for p in settings.recent_files()])
        window.files.report_tidied(tidied)
        QTimer.singleShot(300, window, window.files.offer_recovery)
        for path in files:                 # in the background, one window each
            window.files.open_anywhere(path, dict(shapes or {}))
        server.open_requested.connect(
            lambda more, given, s=window.settings: open_requested(s, more, given))
    for path in files if screenshot else ():
        try:
            doc = GraphDocument.open(path)
        except UserError:
            window.close()  # ends the window's threads before the error leaves
            _flush_deletes(code=2)
            raise
        window.set_document(doc)
        if shapes:
            window.infer_blocking(dict(shapes))
        break
    window.show()
    if screenshot:
        from PySide6.QtWidgets import QApplication

        QApplication.processEvents()
        _wait_for_graph(window)
        if not window.grab().save(screenshot):
            # its jobs (MXNet's import, the step chart) may still run: ended first
            if window.undo_stack is not None:
                window.undo_stack.setClean()
            window.close()
            _flush_deletes(code=2)
            raise UserError(f"cannot write the screenshot to {screenshot}")
        window.undo_stack.setClean()
        window.close()
        _flush_deletes()
        return 0
    code = int(app.exec())  # type: ignore[attr-defined]
    if server is not None:
        server.close()
    _flush_deletes(code=code)
    return code


def open_requested(settings: object, files: list, shapes: dict) -> None:
    """Files handed over by another ``mxexplorer`` start: each in its window (a window
    showing it comes forward); no files: an empty window comes forward."""
    from mxexplorer.gui.window.main_window import MainWindow
    from mxexplorer.gui.window.windows import all_windows

    windows = all_windows()
    window = windows[0] if windows else None
    if window is None:                     # the first window was closed meanwhile
        window = MainWindow(settings)  # type: ignore[arg-type]
        window.restore_layout()
        window.show()
    if not files:
        fresh = window.files.new_window() if window.document is not None else window
        fresh.files.bring_forward()
    for path in files:
        window.files.open_anywhere(path, shapes or None).files.bring_forward()


def _wait_for_graph(window: object, timeout: float = 120.0) -> None:
    """Let the graph pane finish its layout (or fail) before a screenshot."""
    import time

    from PySide6.QtWidgets import QApplication

    pane = getattr(window, "graph_pane", None)
    deadline = time.monotonic() + timeout
    while pane is not None and pane.busy_now and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.005)
    QApplication.processEvents()


def _flush_deletes(wait_ms: int = 15000, kill_wait_ms: int = 10000, code: int = 0) -> None:
    """End the background jobs, then run pending deleteLater()s so no window is left
    for the interpreter's finalizer.  The app is ending: no job starts after this.

    No running QThread may outlive the app (Qt aborts the process: SIGABRT, exit 134).
    Jobs are asked to stop and waited for up to ``wait_ms``; then the child processes
    they wait on are killed and they get ``kill_wait_ms`` more (said on stderr).  One
    that still runs cannot be stopped (Python code deaf to its token, MXNet's import):
    the process then ends at once with ``code`` (:func:`workers.leave_now`), never
    waiting for good nor destroying the thread."""
    import gc

    from PySide6.QtCore import QCoreApplication, QEvent

    from mxexplorer.gui import workers

    left = workers.shutdown(wait_ms, kill_wait_ms)
    if left:
        workers.leave_now(left, code)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
    gc.collect()
