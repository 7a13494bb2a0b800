"""The only module that touches QSettings: typed helpers, grouped keys.

Tests pass an INI path so the user's real settings are never read or written.
"""
from __future__ import annotations

import json
import os

from PySide6.QtCore import QByteArray, QSettings

WINDOW_STATE_VERSION = 1
MAX_RECENT = 10


class Settings:
    def __init__(self, ini_path: str | None = None):
        if ini_path:
            self._s = QSettings(ini_path, QSettings.Format.IniFormat)
            self._state = os.path.join(os.path.dirname(os.path.abspath(ini_path)), "state")
        else:
            self._s = QSettings()
            base = os.environ.get("XDG_STATE_HOME") or os.path.join(
                os.path.expanduser("~"), ".local", "state")
            self._state = os.path.join(base, "mxexplorer")

    def recovery_dir(self) -> str:
        """Where unsaved edits are kept between a crash and the next start (beside the
        INI file for tests, else $XDG_STATE_HOME/mxexplorer/recovery)."""
        return os.path.join(self._state, "recovery")

    def saves_dir(self) -> str:
        """Where a save of several files keeps its journal until it is whole (a kill
        mid-save is finished or undone at the next start)."""
        return os.path.join(self._state, "saves")

    def sync(self) -> None:
        self._s.sync()

    # recent files
    def recent_files(self) -> list[str]:
        value = self._s.value("recent/files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent_file(self, path: str) -> None:
        path = os.path.realpath(path)
        files = [f for f in self.recent_files() if f != path]
        self._s.setValue("recent/files", ([path] + files)[:MAX_RECENT])

    def remove_recent_file(self, path: str) -> None:
        self._s.setValue("recent/files", [f for f in self.recent_files() if f != path])

    def last_open_dir(self) -> str:
        return str(self._s.value("paths/last_open_dir", os.path.expanduser("~")))

    def set_last_open_dir(self, folder: str) -> None:
        self._s.setValue("paths/last_open_dir", folder)

    # window
    def window_geometry(self) -> QByteArray | None:
        value = self._s.value("window/geometry")
        return value if isinstance(value, QByteArray) else None

    def window_state(self) -> QByteArray | None:
        if self._s.value("window/state_version") != str(WINDOW_STATE_VERSION) and \
                self._s.value("window/state_version") != WINDOW_STATE_VERSION:
            return None
        value = self._s.value("window/state")
        return value if isinstance(value, QByteArray) else None

    def save_window(self, geometry: QByteArray, state: QByteArray) -> None:
        self._s.setValue("window/geometry", geometry)
        self._s.setValue("window/state", state)
        self._s.setValue("window/state_version", WINDOW_STATE_VERSION)

    # the colour scheme: "system", "light" or "dark"
    def theme(self) -> str:
        value = str(self._s.value("view/theme", "system"))
        return value if value in ("system", "light", "dark") else "system"

    def set_theme(self, preference: str) -> None:
        self._s.setValue("view/theme", preference)

    # the planner panel's device, search mode, threshold and budget
    def planner_choices(self) -> dict:
        try:
            value = json.loads(str(self._s.value("planner/choices", "{}")))
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def set_planner_choices(self, choices: dict) -> None:
        self._s.setValue("planner/choices", json.dumps(choices))

    # what the user said a variable is, per file: {name: "data" | "param"}
    def variable_kinds(self, path: str) -> dict[str, str]:
        raw = self._s.value("kinds/" + _key(path))
        try:
            value = json.loads(str(raw)) if raw else {}
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}

    def set_variable_kinds(self, path: str, kinds: dict[str, str]) -> None:
        self._s.setValue("kinds/" + _key(path), json.dumps(kinds))

    # shapes used per file
    def last_shapes(self, path: str) -> dict[str, tuple[int, ...]]:
        raw = self._s.value("shapes/" + _key(path))
        if not raw:
            return {}
        try:
            return {k: tuple(int(d) for d in v) for k, v in json.loads(str(raw)).items()}
        except (ValueError, TypeError, AttributeError):
            return {}

    def set_last_shapes(self, path: str, shapes: dict[str, tuple[int, ...]]) -> None:
        text = json.dumps({k: list(v) for k, v in shapes.items()})
        self._s.setValue("shapes/" + _key(path), text)


def _key(path: str) -> str:
    return os.path.realpath(path).replace("/", "|")
