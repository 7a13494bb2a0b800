"""The mirroring tags of a graph: memonger's tagging by threshold, a kept set as tags,
tags written into symbol JSON, and the graph's identity with every tag left out.

Pure functions of a document (no MXNet, no Qt).
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.analysis.stats import float32_bytes
from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.tags import FORCE_MIRRORING, MIRROR_STAGE


def _is_param_name(name: str) -> bool:
    """The original's test for "parameter" outputs, by name."""
    if name == "data":
        return False
    return name.endswith(("weight", "bias", "beta", "gamma"))


def tagging_walk(doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape]
                 ) -> list[tuple[int, int]]:
    """What the original's tagging reads of a graph, whatever the threshold: the
    ``get_internals()`` outputs it walks, in order, as (node, float32 bytes)."""
    return [(entry.node, float32_bytes(by_entry.get((entry.node, entry.index))))
            for entry in doc.internals() if not _is_param_name(entry.name)]


def original_tags(doc: GraphDocument, by_entry: Mapping[tuple[int, int], Shape],
                  stages: Mapping[int, str], threshold_mb: int,
                  walk: list[tuple[int, int]] | None = None
                  ) -> tuple[dict[int, str], dict[str, int]]:
    """The original ``make_mirror_plan``'s tagging for an integer threshold in MB.

    Walks ``get_internals()`` outputs in order, sizes as float32; returns the
    ``force_mirroring`` value of every tagged node and ``{"max_size", "save_size"}``.
    ``walk``: :func:`tagging_walk` of the same graph, when made already (a search tags
    at some thirty thresholds)."""
    threshold = int(threshold_mb) << 20
    tags: dict[int, str] = {}
    local = save = max_size = 0
    last_stage = ""
    decision = ""
    for node, size in (walk if walk is not None else tagging_walk(doc, by_entry)):
        local += size
        tags[node] = "True"
        stage = stages.get(node)
        if stage is None:
            continue
        if stage == "True" or stage != last_stage:
            if local > threshold:
                save += size
                max_size = max(max_size, local)
                local = 0
                decision = "False"
                tags[node] = "False"
            else:
                decision = "True"
            last_stage = stage
        elif decision == "False":
            save += size
            tags[node] = "False"
    return tags, {"max_size": max_size, "save_size": save}


def tags_for_kept(doc: GraphDocument, kept: Iterable[int]) -> dict[int, str]:
    """Every non-parameter output recomputed, except the kept stage nodes."""
    tags = {e.node: "True" for e in doc.internals() if not _is_param_name(e.name)}
    for k in kept:
        tags[k] = "False"
    return tags


def retag(data: dict[str, Any], tags: Mapping[int, str],
          stages: Mapping[int, str] | None = None) -> dict[str, Any]:
    """Symbol JSON data (as a document writes it) with exactly these
    ``__force_mirroring__`` tags on its operators (any others removed) and, when
    given, these ``__mirror_stage__`` tags added; changed in place and returned."""
    for i, node in enumerate(data["nodes"]):
        attrs = node.get("attrs")
        if attrs is not None:
            attrs.pop(FORCE_MIRRORING, None)
            attrs.pop("force_mirroring", None)
        if node.get("op") == "null":
            continue
        value = tags.get(i)
        if value is not None:
            node.setdefault("attrs", {})[FORCE_MIRRORING] = value
        if stages and i in stages:
            node.setdefault("attrs", {})[MIRROR_STAGE] = stages[i]
    return data


def tagged_dict(doc: GraphDocument, tags: Mapping[int, str],
                stages: Mapping[int, str] | None = None) -> dict[str, Any]:
    """The document as JSON data with exactly these ``__force_mirroring__`` tags (any
    others removed) and, when given, these ``__mirror_stage__`` tags added."""
    return retag(doc.to_dict(), tags, stages)


def recompute_macs(doc: GraphDocument, node_macs: Mapping[int, int],
                   tags: Mapping[int, str]) -> int:
    """Forward MACs done again in backward: every op tagged True (Dropout never is)."""
    total = 0
    for i, value in tags.items():
        node = doc.nodes[i]
        if value == "True" and not node.is_variable \
                and opinfo.canonical_op(node.op) != "Dropout":
            total += node_macs.get(i, 0)
    return total


def applied_tags(doc: GraphDocument) -> dict[int, str]:
    """The ``__force_mirroring__`` tags operator nodes carry now."""
    return {i: n.attrs[FORCE_MIRRORING] for i, n in enumerate(doc.nodes)
            if not n.is_variable and FORCE_MIRRORING in n.attrs}
