"""The parsed graph: nodes, entries and the graph as read from a symbol file."""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Mapping

from mxexplorer.core.runtime.errors import SymbolFileError

#: The version MXNet 1.9.1 writes into ``attrs.mxnet_version``.
CURRENT_VERSION = 10901

Entry = tuple[int, int, int]


@dataclass
class Node:
    """One node of the graph: a variable (``op == "null"``) or an operator."""

    __slots__ = ("op", "name", "attrs", "inputs", "extra")     # 264,000 of them: 40 MB less

    op: str
    name: str
    attrs: dict[str, str]
    inputs: list[Entry]
    extra: dict[str, Any]

    @property
    def is_variable(self) -> bool:
        return self.op == "null"

    def copy(self) -> Node:
        return Node(self.op, self.name, dict(self.attrs), list(self.inputs),
                    copy.deepcopy(self.extra))


@dataclass
class ParsedGraph:
    nodes: list[Node]
    heads: list[Entry]
    graph_attrs: dict[str, Any]
    generation: str
    version: int
    upgraded: str = ""  # "", "mxexplorer" or "mxnet"
    row_hints: list[int] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


GENERATION_LABELS = {
    "nnvm": 'NNVM JSON ("attrs")',
    "nnvm-attr": 'NNVM JSON, older ("attr")',
    "legacy": 'pre-NNVM JSON (MXNet 0.8, "param")',
}


def file_error(message: str, where: str | None = None) -> SymbolFileError:
    return SymbolFileError(message, where=where)


def node_attrs(node: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON node's attributes, whatever its file's generation calls them (``attrs``,
    ``attr``, or ``param`` in MXNet's older files)."""
    found = node.get("attrs") or node.get("attr") or node.get("param") or {}
    return found if isinstance(found, dict) else {}


def as_str_attrs(attrs: Any) -> dict[str, str]:
    """Coerce an attribute object from a file into ``{str: str}``."""
    if not isinstance(attrs, dict):
        return {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in attrs.items()}
