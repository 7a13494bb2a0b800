"""The upgrade MXNet applies when it loads an older file (``src/nnvm/legacy_json_util.cc``):
hidden keys moved to their ``__key__`` form, aux states added (before 0.9), initialisers
set on compose (before 0.9.4), argmin/argmax's ``axis=-1`` dropped (before 0.9.5), pre-NNVM
ops renamed, and the nodes renumbered in MXNet's DFS order.  No Qt, no MXNet.
"""
from __future__ import annotations

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.model import CURRENT_VERSION, Node, ParsedGraph
from mxexplorer.core.graph.traversal import dfs_order


def _fix_hidden_keys(nodes: list[Node], order: list[int]) -> None:
    for i in order:
        node = nodes[i]
        moved: list[tuple[str, str]] = []
        for key in list(node.attrs):
            for hidden in opinfo.HIDDEN_KEYS:
                pos = key.rfind(hidden)
                if pos == 0 or (pos != -1 and pos == len(key) - len(hidden)):
                    moved.append((key, node.attrs.pop(key)))
                    break
        for key, value in moved:
            placed = False
            for hidden in opinfo.HIDDEN_KEYS:
                pos = key.rfind(hidden)
                if pos == 0 and len(key) == len(hidden):
                    node.attrs[f"__{hidden}__"] = value
                    placed = True
                    break
                if pos > 1 and pos == len(key) - len(hidden):
                    if node.is_variable:
                        break
                    slots = opinfo.input_slots(node.op, node.attrs, len(node.inputs),
                                               node.extra.get("subgraphs"))
                    arg = key[:pos - 1]
                    if arg in slots:
                        src = nodes[node.inputs[slots.index(arg)][0]]
                        if src.is_variable:
                            src.attrs[f"__{hidden}__"] = value
                            placed = True
                    break
            if not placed:
                node.attrs[key] = value


_INIT_ON_COMPOSE = {
    "moving_mean": '["zero", {}]',
    "moving_var": '["one", {}]',
    "moving_avg": '["zero", {}]',
}


def upgrade(graph: ParsedGraph) -> None:
    """Upgrade an older file in place as MXNet's loader does."""
    nodes = graph.nodes
    order = dfs_order(nodes, graph.heads)
    _fix_hidden_keys(nodes, order)
    if graph.version < 900:
        # Aux states were not stored before 0.9: MXNet adds variables named
        # "<node>_<slot>" carrying a copy of the node's attributes.
        for i in order:
            node = nodes[i]
            if node.is_variable:
                continue
            expected = opinfo.expected_inputs(node.op, node.attrs,
                                              node.extra.get("subgraphs"))
            if expected is None or len(node.inputs) >= len(expected):
                continue
            for slot in expected[len(node.inputs):]:
                var_name = f"{node.name}_{slot}" if node.name else slot
                nodes.append(Node("null", var_name, dict(node.attrs), [], {}))
                node.inputs.append((len(nodes) - 1, 0, 0))
    if graph.version < 904:
        for i in order:
            node = nodes[i]
            if node.is_variable:
                continue
            canon = opinfo.canonical_op(node.op)
            slots = opinfo.input_slots(node.op, node.attrs, len(node.inputs),
                                       node.extra.get("subgraphs"))
            for slot, entry in zip(slots, node.inputs):
                src = nodes[entry[0]]
                init = _INIT_ON_COMPOSE.get(slot)
                if canon == "LeakyReLU" and slot == "gamma":
                    init = '["Constant", {"value": 0.25}]'
                if init and src.is_variable and "__init__" not in src.attrs:
                    src.attrs["__init__"] = init
    if graph.version < 905:
        for i in order:
            node = nodes[i]
            if opinfo.canonical_op(node.op) in ("argmin", "argmax") and \
                    node.attrs.get("axis") == "-1":
                del node.attrs["axis"]
    if graph.generation == "legacy":
        for node in nodes:
            node.op = opinfo.canonical_op(node.op) if not node.is_variable else "null"
            node.extra.pop("backward_source_id", None)
    # MXNet writes the upgraded graph in DFS order, without unreachable nodes.
    if graph.generation == "legacy" or graph.version < 900:
        _reindex(graph)
    graph.upgraded = "mxexplorer"
    graph.graph_attrs["mxnet_version"] = ["int", CURRENT_VERSION]


def _reindex(graph: ParsedGraph) -> None:
    order = dfs_order(graph.nodes, graph.heads)
    new_index = {old: new for new, old in enumerate(order)}
    nodes = []
    for old in order:
        node = graph.nodes[old]
        node.inputs = [(new_index[s], k, v) for s, k, v in node.inputs]
        deps = node.extra.get("control_deps")
        if isinstance(deps, list):
            node.extra["control_deps"] = [new_index[d] for d in deps if d in new_index]
        nodes.append(node)
    graph.nodes = nodes
    graph.heads = [(new_index[s], k, v) for s, k, v in graph.heads]
    if graph.row_hints is not None:
        graph.row_hints = [graph.row_hints[old] if old < len(graph.row_hints) else 1
                           for old in order]
