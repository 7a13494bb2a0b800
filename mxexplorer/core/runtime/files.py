"""Writing files so that a kill at any moment loses nothing and leaves nothing behind.

* :func:`write_atomic`: one file through a temporary beside it and a rename: the old
  file or the whole new one, never a part.
* :func:`save_together`: several files as one unit (a symbol file and its ``.params``):
  each written to a temporary, then a journal says "committed", then the renames.  A
  kill before the commit leaves the old files (the next start removes the temporaries);
  after it, the next start finishes the renames (:func:`tidying.finish_interrupted`):
  the old pair or the new pair, never one of each.
* Temporaries are named ``.<name>.mxexplorer-<pid>-<random>.tmp`` and held under an
  exclusive lock (``flock``) while their save runs: one that nobody holds and whose
  process is gone is a leftover, removed by :func:`clean_stray_temps` (each write cleans
  its own folder; the window cleans the folders it knows at start).  The lock is what
  counts: another instance that cannot see this process (another host on a shared
  folder, another pid namespace) still finds the temporary locked.  A save whose
  temporaries vanished all the same fails (:class:`SaveLost`), before any rename.
* The journal records each target's identity (:class:`FileIdentity`) as the save found
  it: a committed save is finished at the next start only over those same files.  When
  another program wrote one in between, the save's result is kept as a copy beside them
  (``PREFIX-recovered-STAMP-symbol.json``) and the files stay as the other program left
  them (:class:`tidying.Tidied`).
* ``expected`` identities (:mod:`reading`): files the editor read and will not save
  over unasked once another program wrote them (:class:`ChangedOnDisk`).

No Qt, no MXNet.
"""
from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import time
from typing import Callable, Iterable, Sequence

# what callers have always found here (reading, and identities since issue 37)
from mxexplorer.core.runtime.reading import ChangedOnDisk as ChangedOnDisk
from mxexplorer.core.runtime.reading import FileIdentity as FileIdentity
from mxexplorer.core.runtime.reading import NotARegularFile as NotARegularFile
from mxexplorer.core.runtime.reading import identify as identify
from mxexplorer.core.runtime.reading import open_regular as open_regular
from mxexplorer.core.runtime.reading import read_errors as read_errors
from mxexplorer.core.runtime.reading import read_regular as read_regular
from mxexplorer.core.runtime.reading import same_file as same_file

try:
    import fcntl
except ImportError:                        # Windows: the pid test alone
    fcntl = None  # type: ignore[assignment]

#: what a temporary of ours looks like: its process id is the second group
TEMP_RE = re.compile(r"^\.(.+)\.mxexplorer-(\d+)-[0-9a-f]{8}\.tmp$")
JOURNAL_SUFFIX = ".save.json"
_counter = itertools.count(1)

#: writes ``path`` (a temporary) with the content of one file of a unit
Writer = Callable[[str], None]


def _umask() -> int:
    """The process umask, read without changing it (os.umask sets it, racing threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (tells a reused pid apart), None if gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def process_alive(pid: int, started: str | None = None) -> bool:
    """``pid`` runs (and, given its start time, is the same process)."""
    if pid <= 0:                          # no process: a record nobody owns
        return False
    if pid == os.getpid():
        return True
    now = start_time(pid)
    if now is None:
        if os.path.isdir("/proc/self"):
            return False
        try:                               # no /proc: the pid alone tells
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return started is None or now == started


class SaveLost(OSError):
    """A save's temporaries vanished before they were renamed into place (another
    program removed them): nothing was written."""


def _lock(fd: int, wait: bool) -> bool:
    """An exclusive lock on ``fd``; False when another holds it (and not ``wait``)."""
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        return True
    except OSError:
        return False


def _claim(path: str) -> int:
    """Create ``path`` (it must not exist) and hold it under an exclusive lock; returns
    the open descriptor (closing it releases the lock).  A cleaner that removed it
    between the create and the lock is seen (the name no longer leads to it) and the
    claim fails with FileExistsError, for a fresh name to be tried."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                 0o600)
    try:
        _lock(fd, wait=True)
        st, now = os.fstat(fd), os.stat(path)
        if (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino):
            raise FileExistsError(path)
        return fd
    except BaseException:
        os.close(fd)
        raise


def temp_path(path: str) -> str:
    """A fresh temporary's name beside ``path`` (not created)."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.mxexplorer-{os.getpid()}-{secrets.token_hex(4)}.tmp")


def _mode_for(path: str) -> int:
    """The old file's mode, or what a plain ``open()`` would give."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _keep_attributes(target: str, tmp: str) -> None:
    """What the file being replaced carries beyond its mode, onto its replacement: its
    group (a shared folder's pair stays the group's) and its extended attributes (ACLs
    among them).  What the system refuses is left as the new file has it."""
    try:
        st = os.stat(target)
    except OSError:
        return                             # a new file: the folder's defaults
    try:
        if os.stat(tmp).st_gid != st.st_gid:
            os.chown(tmp, -1, st.st_gid)
    except (OSError, AttributeError):
        pass
    try:
        names = os.listxattr(target)
    except (OSError, AttributeError):
        return
    for name in names:
        try:
            os.setxattr(tmp, name, os.getxattr(target, name))
        except OSError:
            pass


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def open_temp(tmp: str) -> int:
    """``tmp`` opened for writing: the temporary :func:`save_together` claimed (empty),
    or a new file when it is not one of ours (it must not exist then)."""
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    if os.fstat(fd).st_size or tmp not in _claimed:
        os.close(fd)
        raise FileExistsError(tmp)
    return fd


#: temporaries this process holds now (claimed, not yet renamed or removed)
_claimed: set[str] = set()


def write_bytes_to(tmp: str, data: bytes) -> None:
    """Fill ``tmp`` (see :func:`open_temp`) with ``data``, synced to the disk."""
    fd = open_temp(tmp)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_atomic(path: str, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary in the same folder + rename.

    The file at ``path`` is either the old one or the complete new one, never a part.
    Raises ``OSError`` (with the original untouched and no temporary left behind) when
    the folder is not writable or the disk is full.
    """
    save_together([(path, lambda tmp: write_bytes_to(
        tmp, data.encode("utf-8") if isinstance(data, str) else data))])


def save_together(items: Sequence[tuple[str, Writer]], journal_dir: str | None = None,
                  expected: dict[str, FileIdentity | None] | None = None) -> None:
    """Write every ``(target, writer)`` as one unit: all the new files or all the old.

    Each writer fills a temporary beside its target, claimed under a lock.  With
    ``journal_dir`` (and more than one file), a journal there records the temporaries
    and the targets' identities before they exist and "committed" once all are
    written, so that :func:`finish_interrupted` can complete or undo a save a kill cut
    short.  ``expected`` (path -> identity, None for absent) are files the caller read
    and will not overwrite if another program wrote them since: checked before anything
    is written and again just before the renames.

    Raises
    ------
    ChangedOnDisk : a file of ``expected`` changed (nothing written).
    SaveLost : a temporary vanished before its rename (nothing written).
    OSError : a write failed; every target untouched and no temporary left.
    """
    expected = {os.path.abspath(p): w for p, w in (expected or {}).items()}
    check_unchanged(expected)
    targets = [os.path.abspath(target) for target, _ in items]
    for target in targets:
        clean_stray_temps(os.path.dirname(target))
    held: list[tuple[int, str]] = []
    journal = _journal_name(journal_dir) if journal_dir and len(targets) > 1 else None
    journal_fd = None
    try:
        before = {t: identify(t, digest=False) for t in targets} if journal else {}
        if journal:
            journal_fd = _claim(journal + ".lock")
            _write_journal(journal, "writing", _temps_for(targets, held), before)
        else:
            _temps_for(targets, held)
        pairs = [(tmp, target) for (_, tmp), target in zip(held, targets)]
        for (tmp, target), (_, writer) in zip(pairs, items):
            writer(tmp)
            try:
                os.chmod(tmp, _mode_for(target))
            except OSError:
                pass
            _keep_attributes(target, tmp)
        if journal:
            _write_journal(journal, "committed", pairs, before)
        lost = [tmp for tmp, _ in pairs if not _still_ours(tmp, held)]
        if lost:
            raise SaveLost(0, "another program removed this save's temporary files ("
                           + ", ".join(os.path.basename(t) for t in lost)
                           + "): nothing was written")
        check_unchanged(expected)
    except BaseException:
        for _, tmp in held:
            _unlink(tmp)
        if journal:
            _unlink(journal)
        _release(held)
        _unlock_journal(journal, journal_fd)
        raise
    try:
        _rename_all(pairs)          # a failure here leaves the journal: the next start
        if journal:                 # finishes the renames
            _unlink(journal)
    finally:
        _release(held)
        _unlock_journal(journal, journal_fd)


def _unlock_journal(journal: str | None, fd: int | None) -> None:
    if journal is not None and fd is not None:
        _unlink(journal + ".lock")
        os.close(fd)


def check_unchanged(expected: dict[str, FileIdentity | None]) -> None:
    """Raises :class:`ChangedOnDisk` naming the files that are no longer as recorded."""
    changed = [p for p, was in expected.items() if not same_file(was, p)]
    if changed:
        raise ChangedOnDisk(changed)


def _temps_for(targets: Sequence[str], held: list[tuple[int, str]]
               ) -> list[tuple[str, str]]:
    """A claimed temporary beside each target, appended to ``held``."""
    for target in targets:
        for _ in range(20):
            tmp = temp_path(target)
            try:
                fd = _claim(tmp)
            except FileExistsError:
                continue
            held.append((fd, tmp))
            _claimed.add(tmp)
            break
        else:
            raise OSError(17, f"cannot claim a temporary file beside {target}")
    return [(tmp, target) for (_, tmp), target in zip(held, targets)]


def _still_ours(tmp: str, held: list[tuple[int, str]]) -> bool:
    fd = next(fd for fd, t in held if t == tmp)
    try:
        st, now = os.fstat(fd), os.stat(tmp)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (now.st_dev, now.st_ino)


def _release(held: list[tuple[int, str]]) -> None:
    for fd, tmp in held:
        _claimed.discard(tmp)
        try:
            os.close(fd)
        except OSError:
            pass
    held.clear()


def _rename_all(pairs: Iterable[tuple[str, str]]) -> None:
    folders = set()
    for tmp, target in pairs:
        if os.path.exists(tmp):
            os.replace(tmp, target)
            folders.add(os.path.dirname(target))
    for folder in folders:
        _fsync_folder(folder)


def _journal_name(folder: str) -> str:
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, f"{os.getpid()}-{next(_counter)}-{int(time.time())}"
                                f"{JOURNAL_SUFFIX}")


def _write_journal(path: str, state: str, pairs: Sequence[tuple[str, str]],
                   before: dict[str, FileIdentity | None]) -> None:
    record = {"state": state, "pid": os.getpid(), "started": start_time(os.getpid()),
              "pairs": [list(p) for p in pairs],
              "before": {t: (w.to_json() if w else None) for t, w in before.items()}}
    tmp = temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(json.dumps(record).encode())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    _fsync_folder(os.path.dirname(path))


def clean_stray_temps(folder: str) -> list[str]:
    """Remove the temporaries of ours in ``folder`` that no save holds (their lock is
    free) and whose process is gone (a kill while writing); returns their names."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    removed = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        match = TEMP_RE.match(entry.name)
        if match is None or entry.path in _claimed:
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or \
                    (uid is not None and entry.stat(follow_symlinks=False).st_uid != uid):
                continue
        except OSError:
            continue
        if process_alive(int(match.group(2))):
            continue
        if _remove_unheld(entry.path):
            removed.append(entry.name)
    return removed


def _remove_unheld(path: str) -> bool:
    """Remove ``path`` if no save holds its lock (taken while it is removed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        if not _lock(fd, wait=False):
            return False
        try:
            st, now = os.fstat(fd), os.stat(path)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != (now.st_dev, now.st_ino):
            return False
        _unlink(path)
        return True
    finally:
        os.close(fd)
