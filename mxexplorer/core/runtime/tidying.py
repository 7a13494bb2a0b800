"""What a start does after a kill: saves cut short finished or undone, and the
temporaries a killed save left removed (:func:`tidy`).

A committed save (its journal says so, see :func:`files.save_together`) is finished only
over the files it started from: when another program wrote one of them in between, the
save's result is kept beside them (:func:`recovered_name`) and said (:class:`Tidied`).
A journal or temporary whose lock another process holds (any host, any pid namespace)
belongs to a save still running and is left alone.

No Qt, no MXNet.
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Iterable, Sequence

from mxexplorer.core.runtime.files import (
    JOURNAL_SUFFIX,
    _lock,
    _rename_all,
    _unlink,
    clean_stray_temps,
    process_alive,
)
from mxexplorer.core.runtime.reading import FileIdentity, same_file


class Tidied(str):
    """One sentence on what a start did about a save a kill cut short, or its
    leftovers; ``kept``: copies of a save's result kept beside files another program
    wrote since (those deserve a dialog, not a status line)."""

    kept: tuple[str, ...]

    def __new__(cls, sentence: str, kept: Sequence[str] = ()) -> Tidied:
        made = super().__new__(cls, sentence)
        made.kept = tuple(kept)
        return made


def recovered_name(target: str, stamp: str) -> str:
    """Where a save's result goes when ``target`` is no longer the file it started
    from: beside it, a pair's two files under one new prefix (they load together)."""
    folder, name = os.path.split(target)
    for suffix in ("-symbol.json",):
        if name.endswith(suffix):
            return os.path.join(folder, f"{name[:-len(suffix)]}-recovered-{stamp}{suffix}")
    match = re.match(r"^(.*)-(\d{4,}\.params)$", name)
    if match:
        return os.path.join(folder, f"{match.group(1)}-recovered-{stamp}-{match.group(2)}")
    return os.path.join(folder, f"{name}.recovered-{stamp}")


def _held_by_someone(path: str) -> bool:
    """Another live save holds ``path`` under its lock (any host, any pid namespace)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        return not _lock(fd, wait=False)
    finally:
        os.close(fd)


def finish_interrupted(journal_dir: str) -> list[Tidied]:
    """Complete the saves a kill cut short (their process gone, their lock free): a
    committed one is finished (every temporary renamed over its target) when its
    targets are still the files it started from; when another program wrote one of
    them since, its result is kept beside them (:func:`recovered_name`) and the files
    stay as they are.  Any other is undone (its temporaries removed)."""
    try:
        names = sorted(os.listdir(journal_dir))
    except OSError:
        return []
    done = []
    clean_stray_temps(journal_dir)         # a journal's own temporary, cut short
    for name in names:
        lock = os.path.join(journal_dir, name)
        if name.endswith(JOURNAL_SUFFIX + ".lock") and not os.path.exists(lock[:-5]) \
                and not _held_by_someone(lock):
            _unlink(lock)                  # its save ended between the two removals
        if not name.endswith(JOURNAL_SUFFIX):
            continue
        path = os.path.join(journal_dir, name)
        if _held_by_someone(path + ".lock"):
            continue
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
            pid, state = int(record["pid"]), str(record["state"])
            pairs = [(str(t), str(p)) for t, p in record["pairs"]]
            before = record.get("before")
        except (OSError, ValueError, KeyError, TypeError):
            _unlink(path)                  # a journal cut short: its save never began
            _unlink(path + ".lock")
            continue
        if not os.path.exists(path + ".lock") and process_alive(pid, record.get("started")):
            continue                       # an older version's save, still running
        targets = ", ".join(os.path.basename(p) for _, p in pairs)
        if state == "committed":
            left = [(tmp, target) for tmp, target in pairs if os.path.exists(tmp)]
            moved = [target for tmp, target in left if isinstance(before, dict)
                     and target in before
                     and not same_file(FileIdentity.from_json(before[target]), target)]
            if moved:
                stamp = time.strftime("%Y%m%d-%H%M%S")
                kept = []
                for tmp, target in left:
                    copy = recovered_name(target, stamp)
                    os.replace(tmp, copy)
                    kept.append(copy)
                done.append(Tidied(
                    f"an interrupted save of {targets} was not finished: another program "
                    f"wrote {', '.join(os.path.basename(t) for t in moved)} since; the "
                    "save's result is kept beside them as "
                    + ", ".join(os.path.basename(k) for k in kept), tuple(kept)))
            else:
                _rename_all(pairs)
                done.append(Tidied(f"finished an interrupted save of {targets}"))
        else:
            for tmp, _ in pairs:
                _unlink(tmp)
            done.append(Tidied(f"undid an interrupted save of {targets} "
                               "(the files are as before)"))
        _unlink(path)
        _unlink(path + ".lock")
    return done


def tidy(journal_dir: str, folders: Iterable[str]) -> list[Tidied]:
    """What a start does after a crash or a kill: saves cut short finished or undone
    (:func:`finish_interrupted`), leftover temporaries removed from ``folders``.
    Returns one :class:`Tidied` per thing done (``str()`` of each is its sentence)."""
    done = finish_interrupted(journal_dir)
    removed = 0
    for folder in dict.fromkeys(folders):
        removed += len(clean_stray_temps(folder))
    if removed:
        done.append(Tidied(f"removed {removed} temporary file{'s' if removed > 1 else ''} "
                           "a killed save left"))
    return done
