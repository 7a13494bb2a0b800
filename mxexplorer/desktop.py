"""Desktop integration for the current user: the .desktop entry, the MIME type of
MXNet symbol files, the icons, and mxexplorer as the type's default application.

``install()`` writes into the user's data directory (``$XDG_DATA_HOME``, else
``~/.local/share``) and config directory (``$XDG_CONFIG_HOME``, else ``~/.config``),
no root needed, then refreshes the MIME and desktop databases when their tools exist.
It records what it wrote in ``DATA/mxexplorer/installed.json``; ``uninstall()``
removes exactly that.  No Qt here.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import resources

from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.files import write_atomic

MIME_TYPE = "application/x-mxnet-symbol+json"
DESKTOP_ID = "mxexplorer.desktop"
_MIME_ICON = MIME_TYPE.replace("/", "-")
#: (resource inside mxexplorer.resources, destination under the data directory)
_FILES = [
    ("desktop/mxexplorer.desktop", f"applications/{DESKTOP_ID}"),
    ("mime/mxexplorer.xml", "mime/packages/mxexplorer.xml"),
    ("icons/hicolor/scalable/apps/mxexplorer.svg", "icons/hicolor/scalable/apps/mxexplorer.svg"),
    (f"icons/hicolor/scalable/mimetypes/{_MIME_ICON}.svg",
     f"icons/hicolor/scalable/mimetypes/{_MIME_ICON}.svg"),
]


@dataclass
class Report:
    """What an install or uninstall did, line by line for the terminal."""

    files: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [*self.files, *self.steps]


def data_home() -> str:
    return os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"),
                                                           ".local", "share")


def config_home() -> str:
    return os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"),
                                                             ".config")


def _manifest_path() -> str:
    return os.path.join(data_home(), "mxexplorer", "installed.json")


def _console_script() -> str | None:
    """The ``mxexplorer`` command pip installed for this very interpreter: beside it
    (a virtual environment), in its scripts folder, or the user's (``pip --user``); its
    first line names the interpreter."""
    import sysconfig

    folders = [os.path.dirname(sys.executable), sysconfig.get_path("scripts")]
    try:
        folders.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:
        pass
    real = os.path.realpath(sys.executable)
    for folder in folders:
        script = os.path.join(folder, "mxexplorer")
        try:
            with open(script, "rb") as fh:
                first = fh.readline(4096).decode("utf-8", "replace")
        except OSError:
            continue
        shebang = first[2:].strip().split()[0] if first.startswith("#!") and \
            first[2:].strip() else ""
        if shebang and os.path.realpath(shebang) == real and os.access(script, os.X_OK):
            return script
    return None


def launch_command() -> str:
    """How the desktop starts this very installation (absolute, no PATH needed).

    The installed command, whose ``sys.path`` starts with its own folder: a file
    manager starts it in the folder of the file opened, and ``python -m mxexplorer``
    would import a ``mxnet.py`` lying there.  Without one (a checkout run in place),
    ``python -I -m mxexplorer``: isolated mode leaves the working folder out."""
    script = _console_script()
    if script is not None:
        return shlex.quote(script)
    return f"{shlex.quote(sys.executable)} -I -m mxexplorer"


def _resource_text(name: str) -> bytes:
    """A file of the package's ``resources/`` folder."""
    return resources.files("mxexplorer.resources").joinpath(name).read_bytes()


def _desktop_entry() -> bytes:
    lines = []
    for line in _resource_text("desktop/mxexplorer.desktop").decode().splitlines():
        if line.startswith("TryExec="):
            continue
        if line.startswith("Exec="):
            line = f"Exec={launch_command()} %F"
        lines.append(line)
    return ("\n".join(lines) + "\n").encode()


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomic(path, data)


def _run(report: Report, *argv: str) -> bool:
    """Run a desktop tool if it exists; a missing tool is a note, not an error."""
    if shutil.which(argv[0]) is None:
        report.steps.append(f"skipped {argv[0]} (not installed)")
        return False
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        report.steps.append(f"{argv[0]} failed: {why[-1] if why else done.returncode}")
        return False
    report.steps.append("ran " + " ".join(argv[:2]))
    return True


# --------------------------------------------------------- default application
def _mimeapps_path() -> str:
    return os.path.join(config_home(), "mimeapps.list")


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().splitlines()
    except FileNotFoundError:
        return []


def _set_default(report: Report) -> str | None:
    """Make our entry the default for the type in mimeapps.list (what ``xdg-mime
    default`` writes); returns the previous default line's value, if any."""
    path = _mimeapps_path()
    lines = _read_lines(path)
    previous = None
    out: list[str] = []
    section = None
    placed = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            if section == "[Default Applications]" and not placed:
                out.append(f"{MIME_TYPE}={DESKTOP_ID};")
                placed = True
            section = stripped
        elif section == "[Default Applications]" and stripped.startswith(MIME_TYPE + "="):
            previous = stripped.split("=", 1)[1]
            continue
        out.append(line)
    if not placed:
        if section != "[Default Applications]":
            if out and out[-1].strip():
                out.append("")
            out.append("[Default Applications]")
        out.append(f"{MIME_TYPE}={DESKTOP_ID};")
    _write(path, ("\n".join(out) + "\n").encode())
    report.steps.append(f"default for {MIME_TYPE}: {DESKTOP_ID} ({path})")
    return previous


def _unset_default(report: Report, previous: str | None) -> None:
    """Remove our default (only if it is still ours), restoring what was there."""
    path = _mimeapps_path()
    lines = _read_lines(path)
    if not lines:
        return
    out = []
    section = None
    changed = False
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("[") and stripped.endswith("]"):
            section = stripped
        elif section == "[Default Applications]" and stripped.startswith(MIME_TYPE + "=") \
                and stripped.split("=", 1)[1].strip(";") == DESKTOP_ID:
            changed = True
            if previous:
                out.append(f"{MIME_TYPE}={previous}")
            continue
        out.append(line)
    if changed:
        # drop a [Default Applications] section we left empty
        cleaned: list[str] = []
        for i, line in enumerate(out):
            nxt = out[i + 1].strip() if i + 1 < len(out) else ""
            if line.strip() == "[Default Applications]" and (not nxt or nxt.startswith("[")):
                continue
            cleaned.append(line)
        while cleaned and not cleaned[-1].strip():
            cleaned.pop()
        if cleaned:
            _write(path, ("\n".join(cleaned) + "\n").encode())
        else:
            os.remove(path)
        report.steps.append(f"removed the default for {MIME_TYPE} ({path})")


# ------------------------------------------------------------------ install
def install() -> Report:
    """Register mxexplorer for the current user; safe to run again."""
    report = Report()
    base = data_home()
    old = _read_manifest()
    targets = [os.path.join(base, dest) for _, dest in _FILES] + [_manifest_path(),
                                                                    _mimeapps_path()]
    created_dirs = _missing_dirs(targets) if old is None else old.get("created_dirs", [])
    written = []
    for resource, dest in _FILES:
        path = os.path.join(base, dest)
        data = _desktop_entry() if dest.endswith(".desktop") else _resource_text(resource)
        _write(path, data)
        written.append(path)
        report.files.append(f"wrote {path}")
    previous = _set_default(report)
    if old is not None:                # installed before: keep the first previous default
        previous = old.get("previous_default")
    _write(_manifest_path(), json.dumps(
        {"files": written, "previous_default": previous, "created_dirs": created_dirs},
        indent=1).encode())
    _refresh(report)
    return report


def uninstall() -> Report:
    """Remove what :func:`install` added (and nothing else)."""
    report = Report()
    manifest = _read_manifest()
    if manifest is None:
        raise UserError(f"mxexplorer is not installed for this user (no {_manifest_path()})")
    for path in manifest.get("files", []):
        try:
            os.remove(path)
            report.files.append(f"removed {path}")
        except FileNotFoundError:
            report.files.append(f"already gone: {path}")
    _unset_default(report, manifest.get("previous_default"))
    os.remove(_manifest_path())
    created = manifest.get("created_dirs", [])
    mime_dir = os.path.join(data_home(), "mime")
    packages = os.path.join(mime_dir, "packages")
    if os.path.abspath(mime_dir) in created and not (os.path.isdir(packages)
                                                     and os.listdir(packages)):
        # the MIME database was ours alone: its generated files go with it
        shutil.rmtree(mime_dir, ignore_errors=True)
        report.files.append(f"removed {mime_dir} (created by the install)")
        _refresh(report, mime=False)
    else:
        _refresh(report)
    for folder in sorted(created, key=len, reverse=True):
        try:
            os.rmdir(folder)                  # only when empty: nothing of others goes
        except OSError:
            pass
    return report


def _missing_dirs(paths: list[str]) -> list[str]:
    """The folders on the way to ``paths`` that do not exist yet."""
    missing: set[str] = set()
    for path in paths:
        folder = os.path.dirname(os.path.abspath(path))
        while not os.path.isdir(folder):
            missing.add(folder)
            folder = os.path.dirname(folder)
    return sorted(missing)


def _read_manifest() -> dict | None:
    try:
        with open(_manifest_path(), encoding="utf-8") as fh:
            value = json.load(fh)
    except (FileNotFoundError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _refresh(report: Report, mime: bool = True) -> None:
    base = data_home()
    if mime:
        _run(report, "update-mime-database", os.path.join(base, "mime"))
    _run(report, "update-desktop-database", os.path.join(base, "applications"))
    icons = os.path.join(base, "icons", "hicolor")
    if os.path.exists(os.path.join(icons, "index.theme")):
        _run(report, "gtk-update-icon-cache", "-q", "-t", icons)
