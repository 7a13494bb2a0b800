"""Several documents: drag-and-drop (a checkpoint finds its symbol file), one window
per file, the same file brought forward, a second ``mxexplorer FILE`` handing its file
to the running process, and every broken file of the corpus in the real window (a
dialog in plain words, the open document untouched)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent

from mxexplorer.gui import instance
from mxexplorer.gui.app import open_requested
from mxexplorer.gui.window.windows import all_windows
from tests.conftest import DATA, EXAMPLES, REPO, WAIT_MS, WAIT_S


def _close_others(keep, qtbot) -> None:
    for window in all_windows():
        if window is not keep:
            pane = window.graph_pane
            if pane is not None:
                qtbot.waitUntil(lambda p=pane: not p.busy_now, timeout=WAIT_MS)
            if window.session is not None:
                window.session.undo_stack.setClean()
            window.close()
    qtbot.wait(50)


def _drop(window, paths) -> bool:
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    enter = QDragEnterEvent(window.rect().center(), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    if not enter.isAccepted():
        return False
    drop = QDropEvent(QPointF(window.rect().center()), Qt.DropAction.CopyAction, mime,
                      Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    return True


def test_drop_a_checkpoint_then_the_same_file_again(make_window, mlp_copy, qtbot,
                                                    tmp_path) -> None:
    window = make_window(EXAMPLES / "resnet18_v1-symbol.json")
    try:
        (tmp_path / "notes.txt").write_text("hello")
        assert not _drop(window, [tmp_path / "notes.txt"])      # not ours: refused
        params = mlp_copy.parent / "mlp-0000.params"
        assert _drop(window, [params])                          # a window of its own
        qtbot.waitUntil(lambda: len(all_windows()) == 2 and not any(
            w.files.opening for w in all_windows()), timeout=WAIT_MS)
        other = next(w for w in all_windows() if w is not window)
        assert other.document.path == str(mlp_copy)             # found its symbol file
        assert other.document.params_path == str(params)
        # the same file again (by its symbol file this time): that window comes forward
        document = other.document
        assert _drop(window, [mlp_copy])
        assert window.files.open_anywhere(str(mlp_copy)) is other
        assert len(all_windows()) == 2 and other.document is document
        assert window.document.path.endswith("resnet18_v1-symbol.json")   # untouched
    finally:
        _close_others(window, qtbot)


def test_a_window_made_for_a_broken_file_goes_away(make_window, qtbot, dialogs) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    try:
        other = window.files.open_anywhere(str(DATA / "broken" / "empty-symbol.json"))
        assert other is not window
        qtbot.waitUntil(lambda: bool(dialogs.unexpected), timeout=WAIT_MS)
        (title, _), = dialogs.take_closed()
        assert title == "Cannot open the file"
        qtbot.waitUntil(lambda: all_windows() == [window], timeout=WAIT_MS)
    finally:
        _close_others(window, qtbot)


def test_a_second_start_hands_its_file_to_the_running_process(make_window, qtbot,
                                                              tmp_path) -> None:
    window = make_window(EXAMPLES / "resnet18_v1-symbol.json")
    server = instance.InstanceServer()
    assert server.listening
    server.open_requested.connect(
        lambda files, shapes: open_requested(window.settings, files, shapes))
    target = tmp_path / "mlp-symbol.json"
    shutil.copy(EXAMPLES / "mlp-symbol.json", target)
    env = dict(os.environ, PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen")
    proc = subprocess.Popen([sys.executable, "-m", "mxexplorer", str(target)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with qtbot.waitSignal(server.open_requested, timeout=WAIT_MS) as blocker:
            pass
        assert blocker.args[0] == [str(target)]
        assert proc.wait(timeout=WAIT_S) == 0                     # it handed over and left
        qtbot.waitUntil(lambda: any(w.document is not None and w.document.path == str(target)
                                    for w in all_windows()), timeout=WAIT_MS)
        assert window.document.path.endswith("resnet18_v1-symbol.json")
        # the same file from a third start: no new window
        count = len(all_windows())
        open_requested(window.settings, [str(target)], {})
        assert len(all_windows()) == count
        # a start without a file: an empty window of this process comes forward
        open_requested(window.settings, [], {})
        assert len(all_windows()) == count + 1
        assert sum(w.document is None for w in all_windows()) == 1
    finally:
        if proc.poll() is None:
            proc.kill()
        server.close()
        server.deleteLater()
        _close_others(window, qtbot)


BROKEN = sorted((DATA / "broken").iterdir()) + [DATA / "unknown_op-symbol.json"]


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.name)
def test_every_broken_file_says_what_is_wrong(make_window, qtbot, dialogs, path,
                                              tmp_path) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    before = window.document
    window.files.open_file(str(path))
    qtbot.waitUntil(lambda: not window.files.opening, timeout=WAIT_MS)
    if path.name == "unknown_op-symbol.json":
        # opens: the graph shows and the status bar names the op
        assert window.document is not before and "unknown" in \
            window.statusBar().currentMessage().lower()
        return
    qtbot.waitUntil(lambda: bool(dialogs.unexpected), timeout=WAIT_MS)
    (title, text), = dialogs.take_closed()
    assert title == "Cannot open the file"
    assert "\n" not in text and "Traceback" not in text and len(text) < 300
    assert window.document is before                           # nothing lost
    assert window.isVisible()


def test_a_params_file_without_its_symbol_file(make_window, qtbot, dialogs,
                                               tmp_path) -> None:
    window = make_window(EXAMPLES / "mlp-symbol.json")
    lone = tmp_path / "lonely-0000.params"
    shutil.copy(EXAMPLES / "mlp-0000.params", lone)
    window.files.open_file(str(lone))
    qtbot.waitUntil(lambda: bool(dialogs.unexpected), timeout=WAIT_MS)
    (title, text), = dialogs.take_closed()
    assert "without its -symbol.json" in text


def test_open_recent_keeps_ten_and_drops_a_missing_file_with_a_word(
        make_window, settings, qtbot, dialogs, tmp_path) -> None:
    files = []
    for k in range(12):
        path = tmp_path / f"m{k}-symbol.json"
        shutil.copy(EXAMPLES / "mlp-symbol.json", path)
        settings.add_recent_file(str(path))
        files.append(str(path.resolve()))
    assert settings.recent_files() == files[::-1][:10]       # newest first, ten kept
    window = make_window(EXAMPLES / "mlp-symbol.json")
    window.files.fill_recent_menu()                                 # its own file comes first
    shown = [a.text() for a in window.commands.recent_menu.actions()]
    assert shown == [str((EXAMPLES / "mlp-symbol.json").resolve())] + files[::-1][:9]
    os.unlink(files[-1])
    window.files.open_recent(files[-1])
    (title, text), = dialogs.take_closed()
    assert title == "File not found" and "removed from the list" in text
    assert files[-1] not in settings.recent_files()
    assert len(settings.recent_files()) == 9
    window.files.open_recent(files[-2])                             # opens in a new window
    qtbot.waitUntil(lambda: any(w.document is not None and w.document.path == files[-2]
                                for w in all_windows()), timeout=WAIT_MS)
    _close_others(window, qtbot)


def test_the_last_shapes_of_a_file_come_back(make_window, settings, qtbot) -> None:
    window = make_window(EXAMPLES / "resnet18_v1-symbol.json")
    window.shape_form.set_shapes({"data": (3, 3, 96, 96)})
    window.infer_blocking({"data": (3, 3, 96, 96)})
    path = str(EXAMPLES / "resnet18_v1-symbol.json")
    assert settings.last_shapes(path) == {"data": (3, 3, 96, 96)}
    other = make_window(EXAMPLES / "resnet18_v1-symbol.json")
    assert other.shape_form.shapes() == {"data": (3, 3, 96, 96)}


def test_gio_open_on_a_symbol_file_reaches_mxexplorer(qtbot, tmp_path) -> None:
    """After --install-desktop (temporary HOME), the desktop's own launcher starts
    mxexplorer on the file, which hands it to the running process (this one)."""
    if not shutil.which("gio"):
        pytest.skip("gio is not installed (the install test covers the files)")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run([sys.executable, "-m", "mxexplorer", "--install-desktop"], env=env,
                          capture_output=True, text=True, timeout=WAIT_S)
    assert done.returncode == 0, done.stderr
    target = tmp_path / "renamed.json"                 # recognised by its content
    shutil.copy(EXAMPLES / "mlp-symbol.json", target)
    server = instance.InstanceServer()
    try:
        assert server.listening
        with qtbot.waitSignal(server.open_requested, timeout=WAIT_MS) as blocker:
            subprocess.run(["gio", "open", str(target)], env=env, timeout=WAIT_S, check=True)
        assert blocker.args[0] == [str(target)]
        if shutil.which("xdg-open"):          # xdg-utils: where installed
            # without a desktop session xdg-open asks xdg-mime only when it sees a display
            xenv = dict(env, DISPLAY=env.get("DISPLAY") or ":99")
            with qtbot.waitSignal(server.open_requested, timeout=WAIT_MS) as blocker:
                subprocess.Popen(["xdg-open", str(target)], env=xenv,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            assert blocker.args[0] == [str(target)]
    finally:
        server.close()
        server.deleteLater()


def test_a_long_status_line_is_elided_before_the_labels_on_the_right(make_window) -> None:
    """An ONNX verdict naming its first differing node was cut mid-word where the
    totals label starts ("... (10" then "9 nodes")."""
    window = make_window(EXAMPLES / "mlp-symbol.json")
    window.resize(900, 600)
    window.host.show_status("first difference at 'fc1' " + "x" * 400)
    shown = window.statusBar().currentMessage()
    assert shown.startswith("first difference at 'fc1' ") and shown.endswith("\u2026")
    totals = window.totals.geometry().left()
    assert window.statusBar().fontMetrics().horizontalAdvance(shown) < totals
    window.host.show_status("short")
    assert window.statusBar().currentMessage() == "short"


def test_a_checkpoint_of_another_graph_is_said_at_open_and_stays_said(
        make_window, mlp_copy, qtbot, tmp_path) -> None:
    """Issue 37: the window opened a pair whose names do not belong together without a
    word.  Now a line beside the totals says so as it opens and stays (status messages
    come and go over it); its tooltip names the arrays; the pair that belongs clears it."""
    from tests.core.graph.test_checkpoint_match import mismatched_pair

    window = make_window(mlp_copy)
    note = window.checkpoint_note
    assert note.isHidden()
    (tmp_path / "other").mkdir()
    path = mismatched_pair(tmp_path / "other")
    window.files.open_file(str(path))
    qtbot.waitUntil(lambda: window.document is not None
                    and window.document.path == str(path), timeout=WAIT_MS)
    assert note.isVisible()
    assert note.text() == ("net-0000.params does not match the graph: it lacks 102 of "
                           "the graph's arrays and holds 10 arrays the graph does not use")
    assert "resnetv10_conv0_weight" in note.toolTip() and "+59 more" in note.toolTip()
    window.statusBar().showMessage("something else")
    assert note.isVisible()
    window.files.open_file(str(mlp_copy))
    qtbot.waitUntil(lambda: window.document.path == str(mlp_copy), timeout=WAIT_MS)
    assert note.isHidden()
