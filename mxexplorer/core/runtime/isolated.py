"""Run MXNet work that can crash in a child process.

MXNet ends the whole process on some graphs (``simple_bind`` on a node input naming an
output its producer lacks: ``Segmentation fault``, see ../shared/NOTES.md).  The loader
refuses the graphs it knows of; binding, planning and benchmarking run here as well, so
a crash it does not know of costs a child process and one error line, not the window.

:func:`call` runs a module-level function in a child Python started so that the folder
it runs in is never on ``sys.path`` (``python -m`` and ``-c`` put it first: a
``mxnet.py`` in a downloaded model folder ran in every job):
the function and its arguments go over stdin as a pickle; progress, callbacks, the
result or the error come back over a private pipe as length-prefixed pickles.  Cancel
kills the child (at once, whatever it is doing).  The child's stderr (MXNet's messages)
goes to a file whose telling line becomes the error of a crash.
"""
from __future__ import annotations

import os
import pathlib
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from typing import IO, Any, Callable

from mxexplorer.core.runtime import children
from mxexplorer.core.runtime.errors import Cancelled, UserError
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

_HEADER = struct.Struct("!Q")

#: the child's first statements: ``python -c`` puts the working folder ("") first on
#: ``sys.path``; it goes before any import can look there (the stdlib and ``site`` were
#: imported before it was added).  Not ``-I``: that also drops the user's site-packages,
#: where MXNet may be installed.
CHILD_BOOT = ("import sys\n"
              "if sys.path and sys.path[0] == '':\n"
              "    del sys.path[0]\n"
              "from mxexplorer.core.runtime.isolated import _child\n"
              "sys.exit(_child())\n")


def live_children() -> set[int]:
    """Pids of the child processes running now (a closed window leaves none)."""
    return children.live("isolated")


class NativeCrash(UserError):
    """The child died in native code (a signal or MXNet's own crash handler)."""


def _send(stream: IO[bytes], message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exact(fd: int, size: int, token: CancelToken) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if token.cancelled:
            raise Cancelled()
        if not ready:
            continue
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _crash_line(stderr_path: str) -> str:
    """The telling line of a crashed child's stderr (MXNet prints a stack after it)."""
    try:
        with open(stderr_path, encoding="utf-8", errors="replace") as f:
            lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
    except OSError:
        return ""
    for marks in (("Segmentation fault", "Aborted", "terminate called", "Floating point"),
                  ("Check failed", "Error")):
        for line in lines:
            if any(m in line for m in marks):
                return line[:200]
    return lines[-1][:200] if lines else ""


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


def call(fn: Callable[..., Any], *args: Any, what: str = "this work",
         progress: Progress = no_progress, token: CancelToken | None = None,
         callbacks: dict[str, Callable[[Any], None]] | None = None, **kwargs: Any) -> Any:
    """``fn(*args, progress=..., token=..., **callbacks, **kwargs)`` in a child process.

    ``fn`` must be importable by name (a module-level function).  ``callbacks`` name
    keyword arguments of ``fn`` that it calls with one picklable value (``on_probe``);
    each call arrives here in order.  Raises what ``fn`` raised if it is a
    :class:`UserError`, :class:`NativeCrash` when the child dies, :class:`Cancelled`
    when ``token`` is set (the child is killed).
    """
    token = token or CancelToken()
    callbacks = dict(callbacks or {})
    read_fd, write_fd = os.pipe()
    err = tempfile.NamedTemporaryFile(prefix="mxexplorer-child-", suffix=".log", delete=False)
    env = dict(os.environ, MXEXPLORER_RESULT_FD=str(write_fd))
    # the folder that holds the mxexplorer package (whatever this module's depth in it)
    root = str(pathlib.Path(__file__).resolve().parents[__name__.count(".")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.Popen([sys.executable, "-c", CHILD_BOOT],
                                stdin=subprocess.PIPE, stdout=err, stderr=err,
                                pass_fds=(write_fd,), env=env)
    finally:
        os.close(write_fd)
    children.track(proc.pid, "isolated")
    try:
        assert proc.stdin is not None
        try:
            _send(proc.stdin, (fn, args, kwargs, sorted(callbacks)))
            proc.stdin.close()
        except BrokenPipeError:
            pass                             # it died at once: reported below
        while True:
            try:
                size, = _HEADER.unpack(_read_exact(read_fd, _HEADER.size, token))
                kind, *payload = pickle.loads(_read_exact(read_fd, size, token))
            except EOFError:
                break
            if kind == "progress":
                progress(*payload)
            elif kind == "callback":
                callbacks[payload[0]](payload[1])
            elif kind == "result":
                return payload[0]
            elif kind == "error":
                exc = payload[0]
                if isinstance(exc, UserError):
                    raise exc
                raise UserError(f"{what} failed: {payload[1]}")
        code = proc.wait()
        line = _crash_line(err.name)
        raise NativeCrash(f"MXNet crashed ({_describe_exit(code)}) during {what}"
                          + (f": {line}" if line else "")
                          + "; the window and your document are unaffected")
    finally:
        os.close(read_fd)
        if proc.poll() is None:
            proc.kill()
        _reap(proc)
        children.untrack(proc.pid)
        err.close()
        try:
            os.unlink(err.name)
        except OSError:
            pass


def _reap(proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 5.0
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


def _die_with_parent() -> None:
    """On Linux the kernel kills this child when its parent dies (a CLI killed with
    SIGKILL left its export computing for good).  The signal follows the thread that
    started the child; :func:`call` waits in that thread until the child is done."""
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)      # PR_SET_PDEATHSIG
        except (OSError, AttributeError):                   # pragma: no cover
            pass
    if os.getppid() != parent:          # it died between the two calls
        os._exit(1)


def _child() -> int:
    """The child's side: read the call, run it, report over the result pipe."""
    _die_with_parent()
    out = os.fdopen(int(os.environ["MXEXPLORER_RESULT_FD"]), "wb")
    size, = _HEADER.unpack(sys.stdin.buffer.read(_HEADER.size))
    fn, args, kwargs, names = pickle.loads(sys.stdin.buffer.read(size))

    def progress(done: int, total: int, message: str) -> None:
        _send(out, ("progress", done, total, message))

    def callback(name: str) -> Callable[[Any], None]:
        return lambda value: _send(out, ("callback", name, value))

    for name in names:
        kwargs[name] = callback(name)
    try:
        result = fn(*args, progress=progress, token=CancelToken(), **kwargs)
    except UserError as exc:
        _send(out, ("error", exc, str(exc)))
    except Exception as exc:  # noqa: BLE001 - reported to the parent as one line
        message = str(exc).strip().splitlines()
        _send(out, ("error", None, f"{type(exc).__name__}: "
                    + (message[-1] if message else "")))
    else:
        _send(out, ("result", result))
    out.close()
    return 0


if __name__ == "__main__":
    sys.exit(_child())
