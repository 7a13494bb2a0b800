"""Writing new files from a document: the sub-graph up to an output ("cut here").

Must not import Qt or MXNet.
"""
from __future__ import annotations

from mxexplorer.core.graph import saving, subgraph, symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime import files


def file_stem(name: str, fallback: str = "cut") -> str:
    """A node name made into a file name that stays in its folder: separators, NULs
    and control characters become ``_``, leading dots go (``../../x`` or an absolute
    name would have left the folder), at most 120 characters."""
    stem = "".join("_" if ch in "/\\\0" or not ch.isprintable() else ch for ch in name)
    stem = stem.lstrip(". ")[:120].rstrip(". ")
    return stem or fallback


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
    text = cut_json(doc, node, index).encode("utf-8")
    target = saving.params_target(doc, symbol_path)
    writer = saving.params_writer(doc, target) if target else None
    items = [(target, writer)] if target and writer is not None else []
    files.save_together(items + [(symbol_path, lambda tmp: files.write_bytes_to(tmp, text))])
    return target
