"""--install-desktop / --uninstall-desktop in a temporary HOME: the files written, the
answers of the desktop's own tools (gio, xdg-mime) where present, and an uninstall
that leaves HOME as it was (the user's other defaults kept)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.conftest import EXAMPLES, REPO, WAIT_S

MIME = "application/x-mxnet-symbol+json"


def _env(home) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO))
    return env


def _cli(home, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mxexplorer", *args], env=_env(home),
                          capture_output=True, text=True, timeout=WAIT_S)


def _tree(root) -> dict:
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = fh.read()
    return out


def test_install_registers_the_type_and_uninstall_removes_exactly_that(tmp_path) -> None:
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    (home / ".config" / "mimeapps.list").write_text(
        "[Default Applications]\ntext/plain=gedit.desktop;\n")
    before = _tree(home)

    done = _cli(home, "--install-desktop")
    assert done.returncode == 0, done.stderr
    share = home / ".local" / "share"
    entry = (share / "applications" / "mxexplorer.desktop").read_text()
    assert f"MimeType={MIME};" in entry
    # the installed command (no PATH needed; never python -m: see test_working_folder)
    assert f"Exec={os.path.join(os.path.dirname(sys.executable), 'mxexplorer')} %F" in entry
    assert (share / "mime" / "packages" / "mxexplorer.xml").exists()
    assert (share / "icons" / "hicolor" / "scalable" / "apps" / "mxexplorer.svg").exists()
    mimeapps = (home / ".config" / "mimeapps.list").read_text()
    assert "text/plain=gedit.desktop;" in mimeapps
    assert f"{MIME}=mxexplorer.desktop;" in mimeapps
    assert _cli(home, "--install-desktop").returncode == 0       # again: harmless

    files = tmp_path / "files"
    files.mkdir()
    shutil.copy(EXAMPLES / "mlp-symbol.json", files / "mlp-symbol.json")
    shutil.copy(EXAMPLES / "resnet18_v1-symbol.json", files / "renamed.json")
    (files / "plain.json").write_text('{"a": 1}\n')
    if shutil.which("update-mime-database") and shutil.which("gio"):
        def content_type(name: str) -> str:
            out = subprocess.run(["gio", "info", "-a", "standard::content-type",
                                  str(files / name)], env=_env(home), capture_output=True,
                                 text=True, check=True).stdout
            return out.rsplit(":", 1)[1].strip()

        assert content_type("mlp-symbol.json") == MIME        # by name
        assert content_type("renamed.json") == MIME           # by content
        assert content_type("plain.json") == "application/json"
        default = subprocess.run(["gio", "mime", MIME], env=_env(home),
                                 capture_output=True, text=True).stdout
        assert "mxexplorer.desktop" in default
    if shutil.which("xdg-mime"):
        def xdg(*args: str) -> str:
            return subprocess.run(["xdg-mime", "query", *args], env=_env(home),
                                  capture_output=True, text=True).stdout.strip()

        assert xdg("filetype", str(files / "mlp-symbol.json")) == MIME
        assert xdg("default", MIME) == "mxexplorer.desktop"

    done = _cli(home, "--uninstall-desktop")
    assert done.returncode == 0, done.stderr
    assert _tree(home) == before                               # exactly as it was
    assert {p for p in home.rglob("*")} == {home / ".config",
                                            home / ".config" / "mimeapps.list"}


def test_uninstall_without_install_is_one_line(tmp_path) -> None:
    done = _cli(tmp_path, "--uninstall-desktop")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not installed" in done.stderr


def test_the_desktop_entry_is_valid() -> None:
    name = "mxexplorer.desktop"
    text = (REPO / "mxexplorer" / "resources" / "desktop" / name).read_text()
    assert text.startswith("[Desktop Entry]\n")
    keys = dict(line.split("=", 1) for line in text.splitlines()[1:] if "=" in line)
    assert keys["Type"] == "Application" and keys["Icon"] == "mxexplorer"
    assert keys["Exec"].endswith("%F") and keys["MimeType"] == f"{MIME};"
    if shutil.which("desktop-file-validate"):
        entry = REPO / "mxexplorer" / "resources" / "desktop" / name
        subprocess.run(["desktop-file-validate", str(entry)], check=True)
