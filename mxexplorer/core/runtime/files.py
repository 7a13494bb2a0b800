"""Writing files so that a kill at any moment loses nothing and leaves nothing behind.

* :func:`write_atomic`: one file through a temporary beside it and a rename: the old
  file or the whole new one, never a part.
* :func:`save_together`: several files as one unit (a symbol file and its ``.params``):
  each written to a temporary, then a journal says "committed", then the renames.  A
  kill before the commit leaves the old files (the next start removes the temporaries);
  after it, the next start finishes the renames (:func:`finish_interrupted`): the old
  pair or the new pair, never one of each.
* Temporaries are named ``.<name>.mxexplorer-<pid>-<random>.tmp``: one whose process is
  gone is a leftover, removed by :func:`clean_stray_temps` (each write cleans its own
  folder; the window cleans the folders it knows at start).

No Qt, no MXNet.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import secrets
import stat
import time
from typing import BinaryIO, Callable, Iterable, Iterator, Sequence

from mxexplorer.core.runtime.errors import SymbolFileError

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


class NotARegularFile(OSError):
    """A FIFO, a folder, a device or a socket where a file was expected."""


_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


def open_regular(path: str) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file (through symlinks).  Never
    blocks: a FIFO named like a checkpoint made every command wait for good, and
    ``/dev/zero`` would be read without end.

    Raises
    ------
    NotARegularFile : what it is instead, in its ``strerror``.
    OSError : it cannot be opened (missing, a symlink loop, no permission).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((w for test, w in _KINDS if test(mode)), "not a regular file")
            raise NotARegularFile(0, f"is {kind}, not a file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


@contextlib.contextmanager
def read_errors(path: str) -> Iterator[None]:
    """A failure to read ``path`` as one :class:`SymbolFileError` line: missing, a
    folder, not a regular file (a FIFO, a device), or the system's reason."""
    try:
        yield
    except FileNotFoundError:
        raise SymbolFileError("no such file", path) from None
    except IsADirectoryError:
        raise SymbolFileError("is a folder, not a file", path) from None
    except NotARegularFile as exc:
        raise SymbolFileError(str(exc.strerror), path) from None
    except OSError as exc:
        raise SymbolFileError(f"cannot be read: {exc.strerror}", path) from None


def read_regular(path: str, limit: int) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes (:func:`open_regular`).

    Raises
    ------
    OSError : as :func:`open_regular`; ``EFBIG`` when it is bigger than ``limit``.
    """
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise OSError(27, f"is {size:,} bytes, over the {limit:,} read here")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(27, f"grew past {limit:,} bytes while it was read")
    return data


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


def write_bytes_to(tmp: str, data: bytes) -> None:
    """Create ``tmp`` (it must not exist) with ``data``, synced to the disk."""
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
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


def save_together(items: Sequence[tuple[str, Writer]], journal_dir: str | None = None
                  ) -> None:
    """Write every ``(target, writer)`` as one unit: all the new files or all the old.

    Each writer fills a temporary beside its target.  With ``journal_dir`` (and more
    than one file), a journal there records the temporaries before they exist and
    "committed" once all are written, so that :func:`finish_interrupted` can complete
    or undo a save a kill cut short.  Raises ``OSError`` with every target untouched
    and no temporary left when a write fails.
    """
    pairs = [(temp_path(target), os.path.abspath(target)) for target, _ in items]
    for _, target in pairs:
        clean_stray_temps(os.path.dirname(target))
    journal = _journal_name(journal_dir) if journal_dir and len(pairs) > 1 else None
    try:
        if journal:
            _write_journal(journal, "writing", pairs)
        for (tmp, target), (_, writer) in zip(pairs, items):
            writer(tmp)
            try:
                os.chmod(tmp, _mode_for(target))
            except OSError:
                pass
        if journal:
            _write_journal(journal, "committed", pairs)
    except BaseException:
        for tmp, _ in pairs:
            _unlink(tmp)
        if journal:
            _unlink(journal)
        raise
    _rename_all(pairs)
    if journal:
        _unlink(journal)


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


def _write_journal(path: str, state: str, pairs: Sequence[tuple[str, str]]) -> None:
    record = {"state": state, "pid": os.getpid(), "started": start_time(os.getpid()),
              "pairs": [list(p) for p in pairs]}
    tmp = temp_path(path)
    try:
        write_bytes_to(tmp, json.dumps(record).encode())
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    _fsync_folder(os.path.dirname(path))


def finish_interrupted(journal_dir: str) -> list[str]:
    """Complete the saves a kill cut short (their process gone): a committed one is
    finished (every temporary renamed over its target), any other undone (its
    temporaries removed).  Returns one sentence per save dealt with."""
    try:
        names = sorted(os.listdir(journal_dir))
    except OSError:
        return []
    done = []
    for name in names:
        if not name.endswith(JOURNAL_SUFFIX):
            continue
        path = os.path.join(journal_dir, name)
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
            pid, state = int(record["pid"]), str(record["state"])
            pairs = [(str(t), str(p)) for t, p in record["pairs"]]
        except (OSError, ValueError, KeyError, TypeError):
            _unlink(path)                  # a journal cut short: its save never began
            continue
        if process_alive(pid, record.get("started")):
            continue
        targets = ", ".join(os.path.basename(p) for _, p in pairs)
        if state == "committed":
            _rename_all(pairs)
            done.append(f"finished an interrupted save of {targets}")
        else:
            for tmp, _ in pairs:
                _unlink(tmp)
            done.append(f"undid an interrupted save of {targets} (the files are as before)")
        _unlink(path)
    return done


def clean_stray_temps(folder: str) -> list[str]:
    """Remove the temporaries of ours in ``folder`` whose process is gone (a kill while
    writing); returns their names."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    removed = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    for entry in entries:
        match = TEMP_RE.match(entry.name)
        if match is None:
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or \
                    (uid is not None and entry.stat(follow_symlinks=False).st_uid != uid):
                continue
        except OSError:
            continue
        if process_alive(int(match.group(2))):
            continue
        _unlink(entry.path)
        removed.append(entry.name)
    return removed


def tidy(journal_dir: str, folders: Iterable[str]) -> list[str]:
    """What a start does after a crash or a kill: saves cut short finished or undone
    (:func:`finish_interrupted`), leftover temporaries removed from ``folders``.
    Returns one sentence per thing done."""
    done = finish_interrupted(journal_dir)
    removed = 0
    for folder in dict.fromkeys(folders):
        removed += len(clean_stray_temps(folder))
    if removed:
        done.append(f"removed {removed} temporary file{'s' if removed > 1 else ''} a "
                    "killed save left")
    return done
