"""Running graphviz ``dot``: where it is, how to install it, and a run that never
deadlocks, can be cancelled and has a time limit.  Must not import Qt.
"""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import tempfile
import time

from mxexplorer.core.runtime import children
from mxexplorer.core.runtime.errors import Cancelled, UserError
from mxexplorer.core.runtime.progress import CancelToken


class GraphvizMissing(UserError):
    """``dot`` is not installed."""


def install_hint() -> str:
    system = platform.system()
    if system == "Darwin":
        return "brew install graphviz"
    if system == "Windows":
        return "winget install graphviz (or choco install graphviz)"
    if shutil.which("dnf"):
        return "sudo dnf install graphviz"
    if shutil.which("pacman"):
        return "sudo pacman -S graphviz"
    return "sudo apt-get install graphviz"


def dot_program() -> str | None:
    """Path of ``dot`` (``MXEXPLORER_DOT`` overrides the search), or None."""
    override = os.environ.get("MXEXPLORER_DOT")
    if override is not None:
        return override if os.path.isfile(override) and os.access(override, os.X_OK) else None
    return shutil.which("dot")


def missing_message() -> str:
    return f"graphviz 'dot' is not installed; install it with: {install_hint()}"


class DotTimeout(UserError):
    """dot ran past its time limit and was stopped."""


def run_dot(source: str, fmt: str, token: CancelToken | None = None,
            poll: float = 0.05, time_limit: float | None = None,
            pinned: bool = False) -> bytes:
    """Run ``dot -T<fmt>`` on ``source``; kill it and raise :class:`Cancelled` as soon as
    ``token`` is set, :class:`DotTimeout` after ``time_limit`` seconds.  Errors become
    one-line :class:`UserError`s.  ``pinned``: every node has its ``pos`` already and
    graphviz only draws (``-Kneato -n2``: no layout).

    The source, the picture and dot's messages go through files, not pipes: a pipe
    holds 64 KiB, and feeding it while waiting (``communicate`` with a timeout, then
    again without the input) left a dot that read late waiting on its input for good.
    """
    program = dot_program()
    if program is None:
        raise GraphvizMissing(missing_message())
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mxexplorer-dot-") as folder:
        src, out, err = (os.path.join(folder, n) for n in ("graph.dot", "out", "err"))
        # a name may hold a lone surrogate (JSON allows "\ud800"): written escaped
        with open(src, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(source)
        try:
            with open(err, "wb") as err_fh:
                mode = ["-Kneato", "-n2"] if pinned else []
                proc = subprocess.Popen([program, *mode, f"-T{fmt}", f"-o{out}", src],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=err_fh)
        except OSError as exc:
            raise GraphvizMissing(f"cannot run graphviz 'dot' ({exc.strerror}); "
                                  f"install it with: {install_hint()}") from None
        children.track(proc.pid, "dot")     # an exiting window kills it if need be
        try:
            while True:
                try:
                    proc.wait(timeout=poll)
                    break
                except subprocess.TimeoutExpired:
                    if token is not None and token.cancelled:
                        raise Cancelled() from None
                    if time_limit is not None and time.monotonic() - started > time_limit:
                        raise DotTimeout(f"graphviz dot did not finish within "
                                         f"{time_limit:.0f} s") from None
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            children.untrack(proc.pid)
        if proc.returncode != 0:
            with open(err, encoding="utf-8", errors="replace") as fh:
                lines = [ln for ln in fh.read().splitlines() if ln.strip()]
            why = lines[-1] if lines else f"exit status {proc.returncode}"
            raise UserError(f"graphviz dot failed: {why}")
        try:
            with open(out, "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            raise UserError("graphviz dot wrote nothing") from None
