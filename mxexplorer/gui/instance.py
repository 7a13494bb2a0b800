"""One process per user: a second ``mxexplorer FILE`` hands its files to the running
one and exits; the running process opens each in a window, bringing forward a window
that already shows it.

The channel is a local socket in a folder only this user can reach (checked before
use): ``$XDG_RUNTIME_DIR/mxexplorer/``, else ``~/.cache/mxexplorer/run/``, else
``<tmp>/mxexplorer-run-<uid>/`` -- each used only when it is a real folder owned by this
user that nobody else can enter or write (``MXEXPLORER_INSTANCE`` names the socket
itself: tests).  A name in /tmp that another user could take first would have handed
them every path opened.  The server answers every line ("ok", or "bad request: why"),
reads at most :data:`MAX_REQUEST` bytes from a client, forgets a client when it leaves,
and a start that fails to hand over never removes a server that is alive.
"""
from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QLocalServer, QLocalSocket

ENV = "MXEXPLORER_INSTANCE"
SOCKET = "instance"
#: the longest request line (a few thousand paths); a longer one is refused
MAX_REQUEST = 1 << 20
MAX_FILES = 1000
MAX_DIM = 2**31 - 1              # MXNet's element limit: no dimension beyond it
#: a Unix socket's path has room for 107 bytes; the kernel refuses longer ones
_MAX_PATH = 100


def _private(folder: str) -> bool:
    """``folder`` is (made, if missing) a real folder of this user's that nobody else
    can enter, list or write, under folders nobody else can rename things in (each
    ancestor this user's or root's, and not writable by others unless sticky)."""
    uid = os.getuid()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
            return False
        if info.st_mode & 0o077:
            os.chmod(folder, 0o700)          # ours, too open (an old umask): close it
            info = os.lstat(folder)
        if info.st_mode & 0o077:
            return False
        parent = os.path.dirname(os.path.realpath(folder))
        while True:
            up = os.stat(parent)
            if up.st_uid not in (uid, 0):
                return False
            if up.st_mode & 0o022 and not up.st_mode & stat.S_ISVTX:
                return False
            if parent == os.path.dirname(parent):
                return True
            parent = os.path.dirname(parent)
    except OSError:
        return False


def channel_path() -> str | None:
    """The socket's path, in the first private folder of the list; None when none is
    private (the window then runs alone: never a channel others could reach)."""
    given = os.environ.get(ENV)
    if given:
        return given if _private(os.path.dirname(os.path.abspath(given))) else None
    if not hasattr(os, "getuid"):
        return None
    candidates = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        candidates.append(os.path.join(runtime, "mxexplorer"))
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                               ".cache")
    candidates.append(os.path.join(cache, "mxexplorer", "run"))
    candidates.append(os.path.join(tempfile.gettempdir(), f"mxexplorer-run-{os.getuid()}"))
    for folder in candidates:
        path = os.path.join(folder, SOCKET)
        if len(os.fsencode(path)) <= _MAX_PATH and _private(folder):
            return path
    return None


def send_to_running(files: list[str], shapes: dict[str, Any] | None = None,
                    timeout_ms: int = 10000) -> bool:
    """Hand ``files`` to a running mxexplorer; False when none takes them."""
    path = channel_path()
    if path is None or not _is_our_socket(path):
        return False
    sock = QLocalSocket()
    sock.connectToServer(path)
    if not sock.waitForConnected(timeout_ms):
        return False
    payload = {"files": [os.path.abspath(f) for f in files],
               "shapes": {k: list(v) for k, v in (shapes or {}).items()}}
    sock.write((json.dumps(payload) + "\n").encode())
    sock.flush()
    if sock.bytesToWrite():
        sock.waitForBytesWritten(timeout_ms)
    reply = b""
    while b"\n" not in reply and sock.waitForReadyRead(timeout_ms):
        reply += bytes(sock.readAll().data())
    sock.disconnectFromServer()
    return reply.startswith(b"ok")


def _is_our_socket(path: str) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == os.getuid()


def _alive(path: str) -> bool:
    """Someone listens on ``path`` (a Unix socket connects at once when one does)."""
    probe = QLocalSocket()
    probe.connectToServer(path)
    live = probe.waitForConnected(2000)
    probe.abort()
    return live


def parse_request(line: bytes) -> tuple[list[str], dict[str, tuple[int, ...]]]:
    """Files and shapes of one request line.

    Raises
    ------
    ValueError : what is wrong with it, in a few words (the answer to the client).
    """
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError("not JSON") from None
    if not isinstance(message, dict):
        raise ValueError("not an object")
    files = message.get("files", [])
    shapes = message.get("shapes", {})
    if not isinstance(files, list) or len(files) > MAX_FILES or \
            not all(isinstance(f, str) and 0 < len(f) <= 4096 and "\0" not in f
                    for f in files):
        raise ValueError("files: a list of paths")
    if not isinstance(shapes, dict) or len(shapes) > 1000:
        raise ValueError("shapes: an object of name -> dimensions")
    out: dict[str, tuple[int, ...]] = {}
    for name, dims in shapes.items():
        if not isinstance(dims, list) or len(dims) > 32 or not all(
                isinstance(d, int) and not isinstance(d, bool) and 0 <= d <= MAX_DIM
                or isinstance(d, float) and math.isfinite(d) and d.is_integer()
                and 0 <= d <= MAX_DIM for d in dims):
            raise ValueError(f"shapes: {str(name)[:40]!r} is not a list of dimensions "
                             f"0..{MAX_DIM}")
        out[str(name)] = tuple(int(d) for d in dims)
    return [str(f) for f in files], out


class InstanceServer(QObject):
    """Signals
    -------
    open_requested(list, dict): files and shapes from another ``mxexplorer`` start
    """

    open_requested = Signal(list, dict)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # no socket options: with them Qt binds a temporary name and renames it over
        # the channel, replacing a live server's socket; the folder is private anyway
        self.server = QLocalServer(self)
        self.server.newConnection.connect(self._on_new_connection)
        self._buffers: dict[QLocalSocket, bytes] = {}
        #: why this process listens to no one (None while it listens)
        self.why_not = self._listen(channel_path())

    def _listen(self, path: str | None) -> str | None:
        if path is None:
            return "no private folder for the channel"
        if os.path.lexists(path):
            if _is_our_socket(path) and _alive(path):
                return "another mxexplorer of this user listens there"   # never removed
            try:
                info = os.lstat(path)
            except OSError:
                return "cannot look at the channel"
            if info.st_uid != os.getuid():
                return "the channel's name is taken by another user"
            try:
                os.unlink(path)                # ours and dead: a crash left it
            except OSError:
                return "cannot remove a stale channel"
        return None if self.server.listen(path) else self.server.errorString()

    @property
    def listening(self) -> bool:
        return self.server.isListening()

    @property
    def path(self) -> str:
        return str(self.server.fullServerName())

    @Slot()
    def _on_new_connection(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            self._buffers[sock] = b""
            sock.readyRead.connect(self._on_ready_read)
            sock.disconnected.connect(self._on_disconnected)

    @Slot()
    def _on_disconnected(self) -> None:
        sock = self.sender()
        if isinstance(sock, QLocalSocket):
            self._buffers.pop(sock, None)
            sock.deleteLater()

    def _answer(self, sock: QLocalSocket, words: bytes) -> None:
        sock.write(words + b"\n")
        sock.flush()

    @Slot()
    def _on_ready_read(self) -> None:
        sock = self.sender()
        if not isinstance(sock, QLocalSocket) or sock not in self._buffers:
            return
        data = self._buffers[sock] + bytes(sock.readAll().data())
        if b"\n" not in data:
            if len(data) > MAX_REQUEST:
                self._buffers[sock] = b""
                self._answer(sock, b"bad request: longer than 1 MiB")
                sock.disconnectFromServer()
            else:
                self._buffers[sock] = data
            return
        line, rest = data.split(b"\n", 1)
        self._buffers[sock] = rest[:MAX_REQUEST]
        try:
            files, shapes = parse_request(line)
        except ValueError as exc:
            self._answer(sock, f"bad request: {exc}".encode())
            return
        self._answer(sock, b"ok")
        self.open_requested.emit(files, shapes)

    def close(self) -> None:
        self.server.close()
        for sock in list(self._buffers):
            sock.abort()
        self._buffers.clear()
