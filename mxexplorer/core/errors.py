"""Exceptions the core raises for the user to read; no Qt, no MXNet."""
from __future__ import annotations


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
        return " ".join(parts)


class MXNetMissingError(UserError):
    """MXNet is needed for this and is not installed (or cannot be loaded)."""


class Cancelled(Exception):
    """A long job stopped because its CancelToken was set."""
