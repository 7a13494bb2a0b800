"""One process per user: a second ``mxexplorer FILE`` hands its files to the running
one (a QLocalServer per user) and exits; the running process opens each in a window,
bringing forward a window that already shows it.

The server name is ``mxexplorer-<uid>`` (``MXEXPLORER_INSTANCE`` overrides it: tests).
"""
from __future__ import annotations

import json
import os
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QLocalServer, QLocalSocket

ENV = "MXEXPLORER_INSTANCE"


def server_name() -> str:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.environ.get(ENV) or f"mxexplorer-{uid}"


def send_to_running(files: list[str], shapes: dict[str, Any] | None = None,
                    timeout_ms: int = 1500) -> bool:
    """Hand ``files`` to a running mxexplorer; False when none answers."""
    sock = QLocalSocket()
    sock.connectToServer(server_name())
    if not sock.waitForConnected(timeout_ms):
        return False
    payload = {"files": [os.path.abspath(f) for f in files],
               "shapes": {k: list(v) for k, v in (shapes or {}).items()}}
    sock.write((json.dumps(payload) + "\n").encode())
    sock.flush()
    if sock.bytesToWrite():
        sock.waitForBytesWritten(timeout_ms)
    reply = b""
    while b"\n" not in reply and sock.waitForReadyRead(timeout_ms * 2):
        reply += bytes(sock.readAll().data())
    sock.disconnectFromServer()
    return reply.startswith(b"ok")


class InstanceServer(QObject):
    """Signals
    -------
    open_requested(list, dict): files and shapes from another ``mxexplorer`` start
    """

    open_requested = Signal(list, dict)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.server = QLocalServer(self)
        self.server.newConnection.connect(self._on_new_connection)
        name = server_name()
        if not self.server.listen(name):
            QLocalServer.removeServer(name)      # a stale socket left by a crash
            self.server.listen(name)
        self._buffers: dict[int, bytes] = {}

    @property
    def listening(self) -> bool:
        return self.server.isListening()

    @Slot()
    def _on_new_connection(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            sock.readyRead.connect(self._on_ready_read)
            sock.disconnected.connect(sock.deleteLater)

    @Slot()
    def _on_ready_read(self) -> None:
        sock = self.sender()
        if not isinstance(sock, QLocalSocket):
            return
        data = self._buffers.get(id(sock), b"") + bytes(sock.readAll().data())
        if b"\n" not in data:
            self._buffers[id(sock)] = data
            return
        self._buffers.pop(id(sock), None)
        line = data.split(b"\n", 1)[0]
        try:
            message = json.loads(line)
            files = [str(f) for f in message.get("files", [])]
            shapes = {str(k): tuple(int(d) for d in v)
                      for k, v in dict(message.get("shapes", {})).items()}
        except (ValueError, TypeError, AttributeError):
            sock.write(b"bad request\n")
            return
        sock.write(b"ok\n")
        sock.flush()
        self.open_requested.emit(files, shapes)

    def close(self) -> None:
        self.server.close()
