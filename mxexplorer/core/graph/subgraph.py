"""Cut a graph at chosen outputs (the feature-extractor job) without MXNet.

Must not import Qt or MXNet.
"""
from __future__ import annotations

from mxexplorer.core.graph.model import Entry, Node
from mxexplorer.core.graph.traversal import dfs_order


def cut(nodes: list[Node], heads: list[Entry]) -> tuple[list[Node], list[Entry], list[int]]:
    """The part of the graph the ``heads`` depend on, re-indexed in DFS order.

    Returns the new nodes (copies), the new heads and, for each new node, its old id.
    """
    order = dfs_order(nodes, heads)
    new_id = {old: new for new, old in enumerate(order)}
    out = []
    for old in order:
        node = nodes[old].copy()
        node.inputs = [(new_id[s], k, v) for s, k, v in node.inputs]
        deps = node.extra.get("control_deps")
        if isinstance(deps, list):
            node.extra["control_deps"] = [new_id[d] for d in deps if d in new_id]
        out.append(node)
    return out, [(new_id[s], k, v) for s, k, v in heads], order
