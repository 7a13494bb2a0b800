"""What a change to a :class:`~mxexplorer.core.graph.document.GraphDocument` touched: one
typed value per mutation, handed to every listener, so each redoes only what it shows
of those nodes and keys.

- :class:`AttrsChanged`: attributes of ``nodes`` set or removed, ``keys`` the keys;
  :attr:`AttrsChanged.tags_only` when only mirroring tags moved (shapes, statistics
  and a plan made for the graph still hold);
- :class:`NamesChanged`: ``nodes`` renamed (their parameters' checkpoint keys follow);
- :class:`KindsChanged`: variables said to be data inputs or parameters;
- :class:`Saved`: written to a file (no new revision).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mxexplorer.core.graph.tags import TAG_KEYS


@dataclass(frozen=True)
class Change:
    """Base of the typed changes; ``kind`` names the type for logs and old callers."""

    nodes: tuple[int, ...] = ()
    kind: ClassVar[str] = ""

    @property
    def shapes_may_change(self) -> bool:
        """Inference could answer differently after this change."""
        return False


@dataclass(frozen=True)
class AttrsChanged(Change):
    keys: frozenset[str] = frozenset()
    kind: ClassVar[str] = "attrs"

    @property
    def tags_only(self) -> bool:
        return bool(self.keys) and self.keys <= TAG_KEYS

    @property
    def shapes_may_change(self) -> bool:
        return not self.tags_only


@dataclass(frozen=True)
class NamesChanged(Change):
    kind: ClassVar[str] = "names"


@dataclass(frozen=True)
class KindsChanged(Change):
    kind: ClassVar[str] = "kinds"

    @property
    def shapes_may_change(self) -> bool:
        return True


@dataclass(frozen=True)
class Saved(Change):
    kind: ClassVar[str] = "saved"
