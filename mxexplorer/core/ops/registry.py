"""The table of rules: op name -> :class:`~mxexplorer.core.ops.base.Rule`, gathered from
the family modules, and which ops of MXNet 1.9.1 have none.

Each family module (:mod:`elementwise`, :mod:`broadcast`, :mod:`nn`, :mod:`pool_norm`,
:mod:`layout`, :mod:`sequence`, :mod:`detection`, :mod:`quantized`, :mod:`numpy_ops`,
:mod:`sampling`, :mod:`image_linalg`, :mod:`training`, :mod:`plugins`) holds one
``RULES`` dict (a family that is a package merges its sub-modules' tables in its
``__init__``); a name may appear in one family only. Aliases (``_Plus``, ``_MulScalar``
...) resolve through the op table to the op they name.  Must
not import MXNet or Qt.
"""
from __future__ import annotations

import functools
import importlib

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops.base import Rule

#: the family modules, in the order their tables are merged
FAMILIES = ("elementwise", "broadcast", "nn", "pool_norm", "layout", "sequence",
            "detection", "quantized", "numpy_ops", "sampling", "image_linalg",
            "training", "plugins")


@functools.lru_cache(maxsize=1)
def rules() -> dict[str, Rule]:
    """Every rule by op name (canonical names and plug-in names)."""
    merged: dict[str, Rule] = {}
    owner: dict[str, str] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"mxexplorer.core.ops.{family}")
        for name, rule in module.RULES.items():
            if name in merged:
                raise RuntimeError(f"op {name} has rules in {owner[name]} and {family}")
            merged[name] = rule
            owner[name] = family
    return merged


def rule_for(op: str) -> Rule | None:
    """The rule for ``op`` as a file names it (an alias finds its op's rule)."""
    table = rules()
    found = table.get(op)
    if found is None:
        canon = opinfo.canonical_op(op)
        if canon != op:
            found = table.get(canon)
    return found


def family_of(op: str) -> str | None:
    rule = rule_for(op)
    return rule.family if rule is not None else None


def ops_without_rule(names: list[str]) -> list[str]:
    """Those of ``names`` the engine cannot answer for."""
    return sorted({n for n in names if rule_for(n) is None})
