"""The single-instance channel (issue 24): private, checked before use, answering every
line, bounded, and a failed hand-off never removes a live server."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import stat
import tempfile

import pytest
from PySide6.QtNetwork import QLocalSocket

from mxexplorer.gui import instance
from tests.conftest import WAIT_MS


@pytest.fixture
def channel(tmp_path, monkeypatch):
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    path = folder / "instance"
    monkeypatch.setenv(instance.ENV, str(path))
    servers = []
    yield path, servers
    for server in servers:
        server.close()
        server.deleteLater()


def _server(servers: list) -> instance.InstanceServer:
    server = instance.InstanceServer()
    servers.append(server)
    return server


def _ask(qtbot, path, data: bytes, wait_reply: bool = True) -> bytes:
    """Send raw ``data`` to the server at ``path`` and read its answer line."""
    sock = QLocalSocket()
    sock.connectToServer(str(path))
    assert sock.waitForConnected(5000)
    sock.write(data)
    sock.flush()
    reply = b""

    def got() -> bool:
        nonlocal reply
        reply += bytes(sock.readAll().data())
        return b"\n" in reply or sock.state() != QLocalSocket.LocalSocketState.ConnectedState
    if wait_reply:
        qtbot.waitUntil(got, timeout=WAIT_MS)
    sock.abort()
    return reply


@pytest.fixture
def short_tmp():
    """A folder with a short path: a socket's path must fit in 107 bytes, and pytest's
    own folders (deeper still under xdist) can pass that, which sends the channel on to
    the next candidate for a reason the test does not mean to check."""
    folder = tempfile.mkdtemp(prefix="mxi-", dir="/tmp")
    yield pathlib.Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


def test_the_channel_lives_in_a_private_folder(short_tmp, monkeypatch) -> None:
    tmp_path = short_tmp
    monkeypatch.delenv(instance.ENV)
    uid = os.getuid()
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    path = instance.channel_path()
    assert path == str(runtime / "mxexplorer" / "instance")
    info = os.lstat(os.path.dirname(path))
    assert info.st_uid == uid and not info.st_mode & 0o077
    # a folder another user made (or one anyone may write) is never used
    other = tmp_path / "other"
    (other / "mxexplorer").mkdir(parents=True)
    os.chown(other / "mxexplorer", uid + 4242, uid + 4242)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(other))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = instance.channel_path()
    assert path == str(tmp_path / "cache" / "mxexplorer" / "run" / "instance")
    # a symlink planted where the folder goes, into a folder anyone may write: refused
    (tmp_path / "cache2").mkdir()
    (tmp_path / "open").mkdir()
    os.chmod(tmp_path / "open", 0o777)
    os.symlink(tmp_path / "open", tmp_path / "cache2" / "mxexplorer")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache2"))
    path = instance.channel_path()
    assert path is not None and "cache2" not in path


def test_every_line_is_answered_and_the_server_goes_on(qtbot, channel) -> None:
    path, servers = channel
    server = _server(servers)
    assert server.listening
    info = os.lstat(path)
    assert stat.S_ISSOCK(info.st_mode)
    seen: list = []
    server.open_requested.connect(lambda files, shapes: seen.append((files, shapes)))
    for line in (b'{"files": [], "shapes": {"data": [Infinity]}}',
                 b'{"files": [], "shapes": {"data": [1e400]}}',
                 b'{"files": [], "shapes": {"data": [-1]}}',
                 b'{"files": [], "shapes": {"data": [3000000000]}}',
                 b"[" * 100000, b"\xff\xfe garbage", b"[1, 2]",
                 b'{"files": "not a list"}', b'{"files": [1]}',
                 b'{"files": [], "shapes": {"data": "1,2"}}'):
        reply = _ask(qtbot, path, line + b"\n")
        assert reply.startswith(b"bad request"), (line[:40], reply)
    assert not seen
    reply = _ask(qtbot, path, json.dumps({"files": ["/x/a-symbol.json"],
                                          "shapes": {"data": [1, 3, 8, 8]}}).encode() + b"\n")
    assert reply == b"ok\n"
    assert seen == [(["/x/a-symbol.json"], {"data": (1, 3, 8, 8)})]


def test_a_line_without_end_is_bounded_and_forgotten(qtbot, channel) -> None:
    path, servers = channel
    server = _server(servers)
    reply = _ask(qtbot, path, b"x" * (instance.MAX_REQUEST + 4096))
    assert reply.startswith(b"bad request: longer than")
    qtbot.waitUntil(lambda: not server._buffers, timeout=WAIT_MS)     # nothing kept
    # a client that sends a little and leaves is forgotten too
    _ask(qtbot, path, b'{"files": [', wait_reply=False)
    qtbot.waitUntil(lambda: not server._buffers, timeout=WAIT_MS)


def test_a_failed_hand_off_never_removes_a_live_server(qtbot, channel) -> None:
    path, servers = channel
    first = _server(servers)
    assert first.listening
    before = os.lstat(path).st_ino
    # a second start whose request was refused starts its own server: it must leave
    # the live one alone (it used to delete its socket)
    assert _ask(qtbot, path, b'{"shapes": {"data": [Infinity]}}\n').startswith(b"bad")
    second = _server(servers)
    assert not second.listening and "another mxexplorer" in second.why_not
    assert os.lstat(path).st_ino == before
    assert _ask(qtbot, path, b'{"files": []}\n') == b"ok\n"


def test_a_stale_socket_or_a_squatting_file_of_ours_is_replaced(qtbot, channel) -> None:
    path, servers = channel
    path.write_text("squatter")                      # a plain file where the socket goes
    server = _server(servers)
    assert server.listening and stat.S_ISSOCK(os.lstat(path).st_mode)
    server.close()
    # a crash leaves the socket file with nobody behind it: the next start takes over
    import socket

    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.lexists(path):
        os.unlink(path)
    stale.bind(str(path))
    stale.close()
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    again = _server(servers)
    assert again.listening
