"""Rules for the nn family (see :mod:`mxexplorer.core.ops.registry`).  Must not import
MXNet or Qt."""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule

RULES: dict[str, Rule] = {}
