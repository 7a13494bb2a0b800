"""Writing new files from a document: the sub-graph up to an output ("cut here").

Must not import Qt or MXNet.
"""
from __future__ import annotations

from mxexplorer.core import subgraph, symbol_io
from mxexplorer.core.document import GraphDocument


def cut_json(doc: GraphDocument, node: int, index: int = 0) -> str:
    """Symbol JSON of everything the output ``(node, index)`` depends on, with that
    output as the only head: the feature extractor up to that layer."""
    nodes, heads, _ = subgraph.cut(doc.nodes, [(node, index, 0)])
    return symbol_io.dumps(symbol_io.graph_to_dict(nodes, heads, dict(doc.graph_attrs)),
                           indent=2)


def export_cut(doc: GraphDocument, node: int, index: int, symbol_path: str) -> str | None:
    """Write the cut graph; with a checkpoint open, put its ``.params`` beside it under
    the matching name (``prefix-NNNN.params``), so the pair loads with
    ``mx.model.load_checkpoint``.  Returns the params path written, if any."""
    symbol_io.write_atomic(symbol_path, cut_json(doc, node, index))
    target = doc.params_target(symbol_path)
    if target:
        doc.write_params(target)
    return target
