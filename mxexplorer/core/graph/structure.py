"""Where a graph can be cut into stages: the nodes the file tags ``mirror_stage``, and
the cut vertices every path from the data to the outputs passes through (the
planner's automatic stages, the drawing's blocks)."""
from __future__ import annotations

from mxexplorer.core.graph import opinfo, oplabels
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.kinds import NodeKind
from mxexplorer.core.graph.tags import MIRROR_STAGE


def file_stages(doc: GraphDocument) -> dict[int, str]:
    """Nodes the file tags ``mirror_stage``, with the tag's value (a group name or True)."""
    out = {}
    for i in doc.order():
        attrs = doc.nodes[i].attrs
        value = attrs.get(MIRROR_STAGE, attrs.get("mirror_stage"))
        if value is not None:
            out[i] = value
    return out


def cut_vertices(doc: GraphDocument) -> list[int]:
    """Operator nodes every path from the data inputs to the outputs passes through.

    Parameter and auxiliary variables are not inputs here, nor are inputs read only by
    a loss (labels).  In topological order, a node is on every path exactly when no
    edge between a node reachable from the inputs and a node that reaches an output
    jumps over it.
    """
    order = doc.order()
    pos = {n: k for k, n in enumerate(order)}
    kinds = doc.kinds()
    users = doc.consumers()
    sources = [i for i in doc.data_inputs()
               if any(oplabels.op_family(doc.nodes[c].op) != "output" for c, _ in users[i])]
    if not sources:
        sources = list(doc.data_inputs())
    reach = [False] * len(doc.nodes)
    for s in sources:
        reach[s] = True
    for i in order:
        if not reach[i] and any(reach[s] for s, _, _ in doc.nodes[i].inputs
                                if kinds[s] == NodeKind.OP or reach[s]):
            reach[i] = True
    to_out = [False] * len(doc.nodes)
    for h in doc.heads:
        to_out[h[0]] = True
    for i in reversed(order):
        if to_out[i]:
            for s, _, _ in doc.nodes[i].inputs:
                to_out[s] = True
    # sweep: the farthest position any relevant edge starting before p reaches
    span_end = [0] * (len(order) + 1)
    for i in order:
        if not (reach[i] and to_out[i]):
            continue
        for s, _, _ in doc.nodes[i].inputs:
            if reach[s] and to_out[s]:
                a, b = pos[s], pos[i]
                span_end[a] = max(span_end[a], b)
    out = []
    furthest = -1
    for k, i in enumerate(order):
        node = doc.nodes[i]
        if (not node.is_variable and reach[i] and to_out[i] and furthest <= k
                and opinfo.canonical_op(node.op) != "Dropout"):
            out.append(i)
        furthest = max(furthest, span_end[k])
    return out
