"""Recovery files: the unsaved state of every open document, written shortly after each
change, so a crash or a kill loses nothing.

One JSON file per document in a folder (``Settings.recovery_dir()``): the graph as it
is now, where it came from (symbol file, checkpoint, renamed parameters) and which
process wrote it.  A file whose process is gone is an orphan: the next start offers it
back.  A document saved, or closed with its edits discarded, removes its file.
"""
from __future__ import annotations

import itertools
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime import files

FORMAT = 1
_counter = itertools.count(1)


@dataclass(frozen=True)
class Orphan:
    """A recovery file left by a process that is gone."""

    file: str
    path: str | None       # the symbol file the edits belong to (None: never saved)
    saved_at: float
    data: dict[str, Any]

    @property
    def label(self) -> str:
        name = os.path.basename(self.path) if self.path else "untitled"
        return f"{name} (edited {time.strftime('%Y-%m-%d %H:%M', time.localtime(self.saved_at))})"


class RecoveryStore:
    """The recovery folder of one user (tests pass a temporary one)."""

    def __init__(self, folder: str):
        self.folder = folder

    def new_key(self) -> str:
        return f"{os.getpid()}-{next(_counter)}"

    def _file(self, key: str) -> str:
        return os.path.join(self.folder, f"{key}.recovery.json")

    def write(self, key: str, doc: GraphDocument) -> str:
        """Write ``doc``'s state now (atomically); returns the file."""
        os.makedirs(self.folder, exist_ok=True)
        record = {
            "format": FORMAT, "pid": os.getpid(), "started": files.start_time(os.getpid()),
            "saved_at": time.time(), "path": doc.path, "params_path": doc.params_path,
            "params_epoch": doc.params_epoch, "param_renames": dict(doc.param_renames),
            "upgraded": doc.upgraded or "", "graph": doc.to_dict(),
            "disk": {p: (w.to_json() if w else None) for p, w in doc.disk.items()},
        }
        target = self._file(key)
        files.write_atomic(target, json.dumps(record))
        return target

    def keep(self, doc: GraphDocument) -> str:
        """Write ``doc``'s edits as an orphan at once (no live process owns it): what a
        reload from disk leaves behind, offered back like a crashed run's edits."""
        target = self.write(f"kept-{self.new_key()}", doc)
        with open(target, encoding="utf-8") as fh:
            record = json.load(fh)
        record["pid"], record["started"] = 0, None
        files.write_atomic(target, json.dumps(record))
        return target

    def remove(self, key: str) -> None:
        try:
            os.unlink(self._file(key))
        except FileNotFoundError:
            pass

    def orphans(self) -> list[Orphan]:
        """Recovery files whose process is gone, newest first (unreadable ones are
        skipped, and left where they are)."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        found = []
        for name in names:
            if not name.endswith(".recovery.json"):
                continue
            file = os.path.join(self.folder, name)
            try:
                with open(file, encoding="utf-8") as f:
                    data = json.load(f)
                if data.get("format") != FORMAT or \
                        files.process_alive(int(data["pid"]), data.get("started")):
                    continue
                found.append(Orphan(file, data.get("path"), float(data["saved_at"]), data))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return sorted(found, key=lambda o: -o.saved_at)

    @staticmethod
    def restore(orphan: Orphan) -> GraphDocument:
        """The document as it was when the file was written (raises UserError if the
        file is damaged)."""
        data = orphan.data
        graph = symbol_io.parse_graph(data["graph"], upgrade=False)
        graph.upgraded = str(data.get("upgraded") or "")
        doc = GraphDocument(graph, data.get("path"), data.get("params_path"))
        doc.params_epoch = data.get("params_epoch")
        renames = dict(data.get("param_renames") or {})
        doc.param_renames = {str(k): str(v) for k, v in renames.items()}
        disk = data.get("disk")
        if isinstance(disk, dict):       # what the edits were made over
            doc.disk = {str(p): files.FileIdentity.from_json(w) for p, w in disk.items()}
        return doc

    @staticmethod
    def discard(orphan: Orphan) -> None:
        try:
            os.unlink(orphan.file)
        except FileNotFoundError:
            pass


class RecoveryFile:
    """The recovery file of one open document (named once, on its first write)."""

    def __init__(self, store: RecoveryStore) -> None:
        self.store = store
        self.key: str | None = None

    def write(self, doc: GraphDocument) -> str:
        if self.key is None:
            self.key = self.store.new_key()
        return self.store.write(self.key, doc)

    def remove(self) -> None:
        if self.key is not None:
            self.store.remove(self.key)
            self.key = None
