"""Exceptions the core raises for the user to read, and the one cleaner of MXNet's
error texts; no Qt, no MXNet."""
from __future__ import annotations

import re

_LOG_PREFIX = re.compile(r"\[\d\d:\d\d:\d\d\] \S+:\d+: ")
_LISTINGS = re.compile(r",?\s*(Possible Arguments:|Candidate arguments:|Possible enum "
                       r"values:).*", re.S)


def escape_controls(text: str) -> str:
    """``text`` with control characters written as escapes (``\\n``): a node name with a
    newline in it leaves a one-line error one line."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def telling_line(text: str, limit: int = 300) -> str:
    """The line of an error text that says what is wrong, as one line.

    MXNet's texts start with "Traceback (most recent call last):" and C++ frames; what
    matters follows ``MXNetError:``.  Without that marker, the last line that is not a
    traceback's.  Log prefixes (``[12:00:00] ../src/x.cc:73: ``), the C++ stack and the
    listings MXNet appends ("Possible Arguments: ..." with every parameter) are left
    out; control characters are escaped.
    """
    text = str(text).split("Stack trace", 1)[0]
    marker = text.find("MXNetError:")
    if marker >= 0:
        body = text[marker + len("MXNetError:"):]
    else:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        lines = [ln for ln in lines if not ln.startswith(("Traceback (most recent call",
                                                          'File "', "[bt]"))]
        body = lines[-1] if lines else text
    listing = _LISTINGS.search(body)
    if listing is not None:
        body = body[:listing.start()] + " (MXNet lists what it accepts)"
    body = body.split(", in operator ")[0]
    body = _LOG_PREFIX.sub("", body)
    line = " ".join(escape_controls(part) for part in body.split()) if body.strip() else ""
    line = line or "(MXNet gave no reason)"
    return line if len(line) <= limit else line[:limit - 1] + "\u2026"


class UserError(Exception):
    """A problem with the user's input, told in one line (the CLI exits 2 on it)."""


class SymbolFileError(UserError):
    """A file that cannot be read as an MXNet symbol graph.

    Parameters
    ----------
    message : what is wrong, in plain words.
    path : the file, when known.
    where : the part of the file at fault (``node 12 'conv1'``), when known.
    """

    def __init__(self, message: str, path: str | None = None, where: str | None = None):
        self.message = message
        self.path = path
        self.where = where
        super().__init__(self.one_line())

    def one_line(self) -> str:
        parts = []
        if self.path:
            parts.append(f"{self.path}:")
        if self.where:
            parts.append(f"{self.where}:")
        parts.append(self.message)
        return escape_controls(" ".join(parts))


class MXNetMissingError(UserError):
    """MXNet is needed for this and is not installed (or cannot be loaded)."""


class Cancelled(Exception):
    """A long job stopped because its CancelToken was set."""
