"""Reading files that may not be files, and telling whether a file changed since.

* :func:`open_regular` / :func:`read_regular` / :func:`read_errors`: a path opened only
  when it is a regular file (a FIFO or a device named like a checkpoint never blocks),
  its failures as one line.
* :class:`FileIdentity` / :func:`identify` / :func:`same_file`: what the editor records
  of each file it opened or saved, to notice another program's writes
  (:class:`ChangedOnDisk`) and refuse to save over them unasked.

No Qt, no MXNet.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from dataclasses import dataclass
from typing import BinaryIO, Iterator, Sequence

from mxexplorer.core.runtime.errors import SymbolFileError


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


#: files up to this size are hashed whole; bigger ones by their size, head and tail
HASH_WHOLE = 64 << 20
_SAMPLE = 1 << 20


@dataclass(frozen=True)
class FileIdentity:
    """What a file was when it was read or written: enough to tell whether another
    program has written it since (a replace changes the inode, a write in place the
    size or the modification time; the hash tells a touch from a change)."""

    dev: int
    ino: int
    size: int
    mtime_ns: int
    digest: str

    def to_json(self) -> list[int | str]:
        return [self.dev, self.ino, self.size, self.mtime_ns, self.digest]

    @classmethod
    def from_json(cls, raw: object) -> FileIdentity | None:
        if not isinstance(raw, list) or len(raw) != 5:
            return None
        try:
            return cls(int(raw[0]), int(raw[1]), int(raw[2]), int(raw[3]), str(raw[4]))
        except (TypeError, ValueError):
            return None

    def stamp(self) -> str:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.mtime_ns / 1e9))


def _digest(fh: BinaryIO, size: int) -> str:
    h = hashlib.blake2b(digest_size=16)
    if size <= HASH_WHOLE:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    else:
        h.update(fh.read(_SAMPLE))
        fh.seek(max(size - _SAMPLE, 0))
        h.update(fh.read(_SAMPLE))
        h.update(str(size).encode())
    return h.hexdigest()


def identify(path: str, digest: bool = True) -> FileIdentity | None:
    """The identity of the file at ``path`` now; None when there is none (missing, or
    not a regular file).  Without ``digest`` the hash is left empty (stat alone)."""
    try:
        with open_regular(path) as fh:
            st = os.fstat(fh.fileno())
            return FileIdentity(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns,
                                _digest(fh, st.st_size) if digest else "")
    except OSError:
        return None


def same_file(was: FileIdentity | None, path: str) -> bool:
    """The file at ``path`` is still ``was`` (None: still absent).  Same inode, size and
    modification time; or, when only the stat moved, the same size and content (a touch,
    or a copy of the same bytes)."""
    now = identify(path, digest=False)
    if was is None or now is None:
        return was is None and now is None
    if (now.dev, now.ino, now.size, now.mtime_ns) == (was.dev, was.ino, was.size, was.mtime_ns):
        return True
    if now.size != was.size or not was.digest:
        return False
    again = identify(path)
    return again is not None and again.digest == was.digest


class ChangedOnDisk(OSError):
    """Files another program wrote since the editor read them (``paths``): a save over
    them needs the user's word."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = list(paths)
        names = ", ".join(os.path.basename(p) for p in self.paths)
        super().__init__(0, f"{names} changed on disk since it was opened")
