"""GraphDocument: the open symbol graph, the one source of truth.

Owns the nodes, heads and graph attributes of one symbol file (plus the checkpoint
``.params`` beside it), a revision counter, change callbacks, and everything derived
from the graph alone: MXNet's internals list, node kinds, arguments and auxiliary
states in MXNet's order, consumers.  Loading needs no MXNet.  Must not import Qt.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from mxexplorer.core.graph import (
    checkpoint_match,
    kinds,
    opinfo,
    params_file,
    saving,
    symbol_io,
    tags,
    traversal,
)
from mxexplorer.core.graph.changes import AttrsChanged, Change, KindsChanged, NamesChanged, Saved
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.core.graph.model import Entry, Node, ParsedGraph
from mxexplorer.core.graph.snapshot import SHARED_DERIVED, GraphSnapshot, copy_nodes
from mxexplorer.core.runtime import files
from mxexplorer.core.runtime.errors import SymbolFileError


@dataclass(frozen=True)
class InternalEntry:
    """One output of ``sym.get_internals().list_outputs()``."""

    __slots__ = ("name", "node", "index")     # one per output of a 264,000-node graph

    name: str
    node: int
    index: int


Listener = Callable[["GraphDocument", Change], None]


class GraphDocument:
    """An MXNet symbol graph, editable through :mod:`mxexplorer.core.graph.edits`.

    Parameters
    ----------
    graph : the parsed file.
    path : where it was read from (None for a new graph).
    params_path : the checkpoint ``.params`` that goes with it, if any.
    """

    def __init__(self, graph: ParsedGraph, path: str | None = None,
                 params_path: str | None = None):
        self.nodes: list[Node] = graph.nodes
        self.heads: list[Entry] = graph.heads
        self.graph_attrs: dict[str, Any] = graph.graph_attrs
        self.extra: dict[str, Any] = graph.extra
        self.generation = graph.generation
        self.file_version = graph.version
        self.upgraded = graph.upgraded
        self._row_hints = graph.row_hints
        self.path = path
        self.params_path = params_path
        self.params_epoch: int | None = None
        #: each file read or written (abs path -> identity then; None: absent)
        self.params_error: str | None = None  # see params_index()
        self.disk: dict[str, files.FileIdentity | None] = {}
        self._params_index: list[params_file.ParamInfo] | None = None
        #: checkpoint key (as in the .params file) -> the variable's current name
        self.param_renames: dict[str, str] = {}
        #: the user's word on a variable: a data input or a parameter (see kinds())
        self.kind_overrides: dict[int, NodeKind] = {}
        self.revision = 0
        self._listeners: list[Listener] = []
        self._cache: dict[str, Any] = {}
        self._cache_rev = -1

    # ---------------------------------------------------------------- loading
    @classmethod
    def open(cls, path: str, use_mxnet: bool | None = None) -> GraphDocument:
        """Open a symbol file, or a checkpoint pair from either of its files."""
        symbol_path = path
        params_path: str | None = None
        epoch: int | None = None
        if path.endswith(".params"):
            found = params_file.symbol_for_params(path)
            if found is None:
                raise SymbolFileError(
                    "is a .params file without its -symbol.json beside it "
                    "(expected PREFIX-symbol.json for PREFIX-NNNN.params)", path)
            symbol_path, params_path = found, path
            epoch = int(os.path.basename(path).rsplit("-", 1)[1].split(".")[0])
        else:
            params_path, epoch = params_file.find_checkpoint(path)
        # identified before they are read: a write in between is seen as a change
        disk = {os.path.abspath(p): files.identify(p) for p in (symbol_path, params_path) if p}
        graph = symbol_io.read_graph(symbol_path, use_mxnet=use_mxnet)
        doc = cls(graph, symbol_path, params_path)
        doc.params_epoch = epoch
        doc.disk = disk
        return doc

    @classmethod
    def from_json(cls, text: str, path: str | None = None) -> GraphDocument:
        graph = symbol_io.parse_graph(symbol_io.parse_json_text(text))
        return cls(graph, path)

    # -------------------------------------------------------------- listeners
    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _emit(self, change: Change) -> None:
        """Bump the revision (graph changes only) and tell every listener."""
        if not isinstance(change, Saved):
            self.revision += 1
        for listener in list(self._listeners):
            listener(self, change)

    # --------------------------------------------------------------- changing
    # The document changes only through these; each bumps the revision once and hands
    # every listener one typed change (:mod:`mxexplorer.core.graph.changes`).
    def set_attrs(self, changes: Mapping[int, Mapping[str, str | None]]
                  ) -> dict[int, dict[str, str | None]]:
        """Set attributes (a value) or remove them (None) on nodes; returns the values
        they had (None: absent), which undo them."""
        old: dict[int, dict[str, str | None]] = {}
        keys: set[str] = set()
        for node, values in changes.items():
            attrs = self.nodes[node].attrs
            old[node] = {k: attrs.get(k) for k in values}
            for k, v in values.items():
                if v is None:
                    attrs.pop(k, None)
                else:
                    attrs[k] = v
            keys.update(values)
        self._emit(AttrsChanged(tuple(changes), frozenset(keys)))
        return old

    def rename(self, names: Mapping[int, str]) -> dict[int, str]:
        """Give nodes new names (a renamed variable's checkpoint array follows it);
        returns the old names."""
        old = {i: self.nodes[i].name for i in names}
        current_to_original = {cur: orig for orig, cur in self.param_renames.items()}
        for i, new in names.items():
            self.nodes[i].name = new
            if self.nodes[i].is_variable:
                self.param_renames[current_to_original.get(old[i], old[i])] = new
        for orig in [o for o, c in self.param_renames.items() if o == c]:
            del self.param_renames[orig]
        self._emit(NamesChanged(tuple(names)))
        return old

    def set_kinds(self, kinds: Mapping[int, NodeKind | None]) -> dict[int, NodeKind | None]:
        """Say what variables are (None: as the graph says); returns what was said."""
        old = {i: self.kind_overrides.get(i) for i in kinds}
        for i, kind in kinds.items():
            if kind is None:
                self.kind_overrides.pop(i, None)
            else:
                self.kind_overrides[i] = kind
        self._emit(KindsChanged(tuple(kinds)))
        return old

    # ---------------------------------------------------------------- derived
    def cached(self, key: str, build: Callable[[], Any]) -> Any:
        """``build()``, computed once per revision (what is derived from the graph)."""
        return self._cached(key, build)

    def structure_key(self) -> int:
        """A fingerprint of the graph with every mirroring tag left out: shapes, a plan
        or a layout made for one graph hold for another with the same key."""
        def build() -> int:
            parts = []
            for node in self.nodes:
                attrs = tuple(sorted((k, v) for k, v in node.attrs.items()
                                     if k not in tags.TAG_KEYS))
                parts.append((node.op, node.name, tuple(node.inputs), attrs))
            return hash((tuple(parts), tuple(self.heads)))
        key: int = self._cached("structure_key", build)
        return key

    def restore_kinds(self, said: dict[str, NodeKind]) -> None:
        """What the user said of variables (by name) in an earlier session: the file is
        read that way from the start (no edit, no new revision)."""
        for i, node in enumerate(self.nodes):
            if node.is_variable and node.name in said:
                self.kind_overrides[i] = said[node.name]
        self._cache_rev = -1              # derived data follows

    def _cached(self, key: str, build: Callable[[], Any]) -> Any:
        if self._cache_rev != self.revision:
            self._cache.clear()
            self._cache_rev = self.revision
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def row_hint(self, node_id: int) -> int | None:
        if self._row_hints is None or node_id >= len(self._row_hints):
            return None
        return self._row_hints[node_id]

    def order(self) -> list[int]:
        """Node ids in MXNet's DFS order from the heads (unreachable nodes left out)."""
        result: list[int] = self._cached(
            "order", lambda: traversal.dfs_order(self.nodes, self.heads))
        return result

    def output_names(self, node_id: int) -> list[str]:
        """Visible output names of a node, as MXNet lists them in the internals."""
        node = self.nodes[node_id]
        if node.is_variable:
            return [node.name]
        _, names = opinfo.outputs(node.op, node.attrs, self.row_hint(node_id))
        prefix = f"{node.name}_" if node.name else ""
        return [prefix + n for n in names]

    def output_count(self, node_id: int) -> int:
        return traversal.output_count(self.nodes[node_id], self.row_hint(node_id))

    def internals(self) -> list[InternalEntry]:
        """Exactly ``sym.get_internals().list_outputs()``, with the node of each."""
        def build() -> list[InternalEntry]:
            out = []
            for i in self.order():
                for k, name in enumerate(self.output_names(i)):
                    out.append(InternalEntry(name, i, k))
            return out
        result: list[InternalEntry] = self._cached("internals", build)
        return result

    def internal_names(self) -> list[str]:
        return [e.name for e in self.internals()]

    def consumers(self) -> list[list[tuple[int, int]]]:
        """For each node, the (consumer node, input position) pairs that read it."""
        def build() -> list[list[tuple[int, int]]]:
            out: list[list[tuple[int, int]]] = [[] for _ in self.nodes]
            for i in self.order():
                for k, (src, _, _) in enumerate(self.nodes[i].inputs):
                    out[src].append((i, k))
            return out
        result: list[list[tuple[int, int]]] = self._cached("consumers", build)
        return result

    def input_slots(self, node_id: int) -> list[str]:
        """A node's input names, as MXNet's ``list_arguments`` names them."""
        node = self.nodes[node_id]
        return opinfo.input_slots(node.op, node.attrs, len(node.inputs),
                                  node.extra.get("subgraphs"))

    def input_roles(self, node_id: int) -> list[str]:
        """What each input is to a node (``weight``, ``moving_mean`` ...; a fused node's
        by the graph it fuses): see :func:`opinfo.input_roles`."""
        node = self.nodes[node_id]
        return opinfo.input_roles(node.op, node.attrs, len(node.inputs),
                                  node.extra.get("subgraphs"))

    def kinds(self) -> list[NodeKind]:
        """Kind of every node: data input, parameter, auxiliary state or operator (see
        :func:`mxexplorer.core.graph.kinds.infer_kinds`; the user's word wins)."""
        def build() -> list[NodeKind]:
            checkpoint = {self.param_renames.get(p.name, p.name): p.kind
                          for p in self.params_index()}
            return kinds.infer_kinds(self.nodes, self.order(), self.consumers(),
                                     self.input_roles, checkpoint, self.kind_overrides)
        result: list[NodeKind] = self._cached("kinds", build)
        return result

    def _variables(self, aux: bool) -> list[int]:
        kinds = self.kinds()
        return [i for i in self.order() if self.nodes[i].is_variable
                and (kinds[i] == NodeKind.AUX) == aux]

    def arguments(self) -> list[int]:
        """Variables in ``list_arguments()`` order."""
        result: list[int] = self._cached("arguments", lambda: self._variables(False))
        return result

    def aux_states(self) -> list[int]:
        """Variables in ``list_auxiliary_states()`` order."""
        result: list[int] = self._cached("aux", lambda: self._variables(True))
        return result

    def data_inputs(self) -> list[int]:
        def build() -> list[int]:
            kinds = self.kinds()
            return [i for i in self.arguments() if kinds[i] == NodeKind.DATA]
        result: list[int] = self._cached("data_inputs", build)
        return result

    def parameters(self) -> list[int]:
        def build() -> list[int]:
            kinds = self.kinds()
            return [i for i in self.arguments() if kinds[i] == NodeKind.PARAM]
        result: list[int] = self._cached("parameters", build)
        return result

    def output_entries(self) -> list[InternalEntry]:
        """The graph outputs, as MXNet's ``list_outputs()`` names them."""
        out = []
        for src, index, _ in self.heads:
            names = self.output_names(src)
            name = names[index] if index < len(names) else f"{self.nodes[src].name}_output{index}"
            out.append(InternalEntry(name, src, index))
        return out

    def head_nodes(self) -> set[int]:
        return {h[0] for h in self.heads}

    def unknown_nodes(self) -> list[int]:
        """Operator nodes MXNet 1.9.1 cannot run, in graph order: ops it does not
        register (plug-ins, forks, newer MXNet) and ``Custom`` ops, whose ``op_type`` the
        training code registered in Python (``mx.operator.register``), not MXNet."""
        def build() -> list[int]:
            return [i for i in self.order() if not self.nodes[i].is_variable
                    and self.unknown_op_name(i) is not None]
        result: list[int] = self._cached("unknown_nodes", build)
        return result

    def unknown_op_name(self, node_id: int) -> str | None:
        """How a node's unknown op is named ("Proposal", "Custom:proposal"), or None."""
        node = self.nodes[node_id]
        if not opinfo.is_registered(node.op):
            return node.op
        if opinfo.canonical_op(node.op) == "Custom":
            return f"Custom:{node.attrs.get('op_type', '?')}"
        return None

    def unreadable_text(self) -> tuple[int, str] | None:
        """The first node whose name or an attribute holds text MXNet cannot read (a
        lone UTF-16 surrogate, which JSON allows and UTF-8 cannot hold): (node, what)."""
        pattern = symbol_io._SURROGATE
        for i in self.order():
            node = self.nodes[i]
            if pattern.search(node.name):
                return i, "its name"
            for key, value in node.attrs.items():
                if pattern.search(key) or pattern.search(str(value)):
                    return i, f"attribute {symbol_io.dumps(key)}"
        return None

    def unknown_ops(self) -> list[str]:
        """Ops MXNet 1.9.1 cannot run (see :meth:`unknown_nodes`), by name."""
        return sorted({name for i in self.unknown_nodes()
                       if (name := self.unknown_op_name(i)) is not None})

    def op_histogram(self) -> Counter[str]:
        return Counter(opinfo.canonical_op(self.nodes[i].op) for i in self.order()
                       if not self.nodes[i].is_variable)

    def duplicate_names(self) -> list[str]:
        counts = Counter(self.nodes[i].name for i in self.order())
        return sorted(n for n, c in counts.items() if c > 1)

    def node_named(self, name: str) -> int | None:
        """The first node of that name in graph order (how MXNet's messages name nodes)."""
        def build() -> dict[str, int]:
            first: dict[str, int] = {}
            for i in self.order():
                first.setdefault(self.nodes[i].name, i)
            return first
        found: dict[str, int] = self._cached("by_name", build)
        return found.get(name)

    def operators(self) -> list[tuple[int, str, str]]:
        """(node, name, op as MXNet names it) of every operator in graph order: what
        MXNet's profiler and its ONNX converter know the nodes by."""
        return [(i, self.nodes[i].name, opinfo.canonical_op(self.nodes[i].op))
                for i in self.order() if not self.nodes[i].is_variable]

    def file_key(self, name: str) -> str:
        """The checkpoint's key for the parameter now called ``name`` (unsaved renames
        followed back)."""
        back = {new: old for old, new in self.param_renames.items()}
        return back.get(name, name)

    def find(self, name: str) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.name == name]

    def shape_hints(self) -> dict[str, tuple[int, ...]]:
        """Shapes written in the file (``__shape__`` on variables), by variable name."""
        hints = {}
        for i in self.arguments():
            raw = self.nodes[i].attrs.get("__shape__")
            if raw:
                parsed = opinfo.tuple_attr({"s": raw}, "s")
                if parsed and all(d is not None and d > 0 for d in parsed):
                    hints[self.nodes[i].name] = tuple(int(d) for d in parsed if d is not None)
        return hints

    # -------------------------------------------------------------- checkpoint
    def params_index(self) -> list[params_file.ParamInfo]:
        """The checkpoint's arrays (read once, again after :meth:`accept_disk`).  When a
        checkpoint read before can no longer be read, the last index stays and
        ``params_error`` says why (the window goes on; a save copying it fails)."""
        if self.params_path is None:
            return []
        if self._params_index is None or self.params_error == "":
            try:
                self._params_index = params_file.read_params_index(self.params_path)
                self.params_error = None
            except SymbolFileError as exc:
                if self._params_index is None:
                    raise
                self.params_error = str(exc)
        return self._params_index

    def param_shapes(self) -> dict[str, tuple[int, ...]]:
        """Checkpoint shapes under the variables' current names (renames followed)."""
        return {self.param_renames.get(p.name, p.name): p.shape for p in self.params_index()}

    def checkpoint_mismatch(self) -> checkpoint_match.CheckpointMismatch | None:
        """What the open checkpoint and the graph disagree on: the parameters and
        auxiliary states it lacks, the arrays it holds that no variable reads (its keys
        following renames); None without a checkpoint or when they belong together."""
        if self.params_path is None:
            return None
        names = [n.name for n in self.nodes]
        aux = [names[i] for i in self.aux_states()]
        return checkpoint_match.compare(
            self.params_path, self.params_index(), self.param_renames,
            [names[i] for i in self.parameters()], aux,
            [names[i] for i in self.arguments()] + aux)

    # ----------------------------------------------------------------- writing
    def to_dict(self) -> dict[str, Any]:
        return symbol_io.graph_to_dict(self.nodes, self.heads, self.graph_attrs,
                                       self._row_hints, self.extra)

    def to_json(self, indent: int | None = 2) -> str:
        return symbol_io.dumps(self.to_dict(), indent=indent)

    def snapshot(self) -> GraphSnapshot:
        """An immutable copy for work on another thread (taken on the GUI thread): the
        nodes copied (their JSON is written only when a worker asks for it, on its own
        thread), with what this revision's structure already gave (order, internals,
        kinds ...), which the copy's documents then need not work out again."""
        derived = {key: self._cache[key] for key in SHARED_DERIVED
                   if self._cache_rev == self.revision and key in self._cache}
        graph = ParsedGraph(copy_nodes(self.nodes), list(self.heads), dict(self.graph_attrs),
                            self.generation, self.file_version, self.upgraded,
                            list(self._row_hints) if self._row_hints is not None else None,
                            dict(self.extra))
        return GraphSnapshot(graph, self.revision, self.params_path, dict(self.param_renames),
                             self.param_shapes(),
                             {i: k.value for i, k in self.kind_overrides.items()}, derived)

    @classmethod
    def from_snapshot(cls, snap: GraphSnapshot) -> GraphDocument:
        """A private copy of the document a snapshot was taken from (same node ids)."""
        graph = snap.graph()
        doc = cls(graph, params_path=snap.params_path)
        doc.param_renames = dict(snap.param_renames)
        doc.kind_overrides = {i: NodeKind(k) for i, k in snap.kind_overrides.items()}
        doc.revision = snap.revision
        doc._cache = dict(snap.derived)
        doc._cache_rev = snap.revision
        return doc

    # ------------------------------------------------------------ on the disk
    def changed_on_disk(self) -> list[str]:
        """The files read or written here that another program wrote (or removed) since."""
        return [p for p, was in self.disk.items() if not files.same_file(was, p)]

    def accept_disk(self) -> None:
        """The files as they are now are this document's: the next save goes over them."""
        self.disk = {p: files.identify(p) for p in self.disk}
        self.reread_params()

    def reread_params(self) -> None:
        """Read the checkpoint's index again at the next look (the last one stays if
        that fails: see :meth:`params_index`)."""
        self.params_error = ""

    def save(self, path: str, journal_dir: str | None = None, force: bool = False) -> None:
        """Write the symbol and, with a checkpoint open and ``path`` named
        ``prefix-symbol.json``, the ``prefix-NNNN.params`` beside it, as one unit
        (:func:`saving.write_pair`: what it raises, and ``force``)."""
        params_path = saving.write_pair(self, path, journal_dir, force)
        if params_path:
            self.params_path = params_path
            self.reread_params()
            self.param_renames = {}
        self.path = path
        self.disk = {os.path.abspath(p): files.identify(p) for p in (path, self.params_path) if p}
        self._emit(Saved())
