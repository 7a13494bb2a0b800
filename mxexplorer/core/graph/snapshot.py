"""A snapshot of a document: what a worker on another thread or process needs of it
(a private copy of the graph, its revision and checkpoint), taken on the GUI thread
by :meth:`GraphDocument.snapshot <mxexplorer.core.graph.document.GraphDocument.snapshot>`
and made a document again by ``GraphDocument.from_snapshot``."""
from __future__ import annotations

import json
from typing import Any

from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.model import Node, ParsedGraph

#: what a document derives from its structure alone, handed to its snapshots' copies
SHARED_DERIVED = ("order", "internals", "consumers", "kinds", "arguments", "aux",
                  "data_inputs", "parameters", "structure_key")


def copy_nodes(nodes: list[Node]) -> list[Node]:
    """Private copies of ``nodes`` (their attributes are what edits change in place);
    inputs are lists of tuples and ``extra`` is read-only, so both are shared."""
    return [Node(n.op, n.name, dict(n.attrs), n.inputs, n.extra) for n in nodes]


class GraphSnapshot:
    """What a worker needs of a document: a private copy of its graph, revision and
    checkpoint, and what that revision's structure already gave.  ``json`` (the
    symbol file's text) is written the first time it is asked for; a snapshot sent to
    another process travels as that text."""

    def __init__(self, graph: ParsedGraph, revision: int, params_path: str | None,
                 param_renames: dict[str, str], param_shapes: dict[str, tuple[int, ...]],
                 kind_overrides: dict[int, str] | None = None,
                 derived: dict[str, Any] | None = None) -> None:
        self._graph: ParsedGraph | None = graph
        self._json: str | None = None
        self.revision = revision
        self.params_path = params_path
        self.param_renames = param_renames
        self.param_shapes = param_shapes
        self.kind_overrides = kind_overrides or {}
        self.derived = derived or {}

    @property
    def json(self) -> str:
        """The graph as symbol JSON (one line)."""
        if self._json is None:
            graph = self._graph
            assert graph is not None
            self._json = symbol_io.dumps(symbol_io.graph_to_dict(
                graph.nodes, graph.heads, graph.graph_attrs, graph.row_hints, graph.extra),
                indent=None)
        return self._json

    def graph(self) -> ParsedGraph:
        """A private copy of the graph (each caller gets its own nodes)."""
        graph = self._graph
        if graph is None:                   # arrived from another process as text
            return symbol_io.parse_graph(json.loads(self.json), upgrade=False)
        return ParsedGraph(copy_nodes(graph.nodes), list(graph.heads),
                           dict(graph.graph_attrs), graph.generation, graph.version,
                           graph.upgraded, graph.row_hints, dict(graph.extra))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_json"], state["_graph"], state["derived"] = self.json, None, {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
