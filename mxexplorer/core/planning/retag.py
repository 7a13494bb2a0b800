"""A plan put into a graph: the planned JSON ready to train, the edits that apply a plan
to a document, and whether a document carries one."""
from __future__ import annotations

import json
from typing import Any

from mxexplorer.core.graph import symbol_io
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.graph.snapshot import GraphSnapshot
from mxexplorer.core.graph.tags import FORCE_MIRRORING, MIRROR_STAGE
from mxexplorer.core.planning.model import Plan, PlanResult
from mxexplorer.core.planning.plantags import applied_tags, retag, tagged_dict


def retagged_json(snap: GraphSnapshot, plan: Plan | None,
                  result: PlanResult | None = None) -> str:
    """A snapshot's graph with ``plan``'s tags (None: with no ``force_mirroring`` tag
    at all), from its JSON alone: the document it came from was checked already."""
    data = json.loads(snap.json)
    if plan is None or result is None:
        return symbol_io.dumps(retag(data, {}))
    return symbol_io.dumps(retag(data, plan.tags, result.stage_tags()))


def is_applied(doc: GraphDocument, plan: Plan) -> bool:
    """The document carries exactly this plan's tags on its operators."""
    want = {i: v for i, v in plan.tags.items() if not doc.nodes[i].is_variable}
    return applied_tags(doc) == want


def planned_dict(doc: GraphDocument, plan: Plan | None, result: PlanResult) -> dict[str, Any]:
    """The document's graph with a plan's tags (and automatic stages), ready to train;
    ``plan=None``: the graph without any ``force_mirroring`` tag."""
    if plan is None:
        return tagged_dict(doc, {})
    return tagged_dict(doc, plan.tags, result.stage_tags())


def planned_json(snap: GraphSnapshot, result: PlanResult, indent: int | None = 2,
                 plan: Plan | None = None) -> str:
    """The snapshot's graph with ``plan``'s tags (by default the best), ready to train."""
    doc = GraphDocument.from_snapshot(snap)
    return symbol_io.dumps(planned_dict(doc, plan or result.best, result), indent=indent)


def plan_edits(doc: GraphDocument, plan: Plan, result: PlanResult
               ) -> list[tuple[int, dict[str, str | None]]]:
    """Per node, the attribute changes that put ``plan`` into a document."""
    changes = []
    stages = result.stage_tags() or {}
    for i, node in enumerate(doc.nodes):
        if node.is_variable:
            continue
        want: dict[str, str | None] = {}
        value = plan.tags.get(i)
        if node.attrs.get(FORCE_MIRRORING) != value:
            want[FORCE_MIRRORING] = value
        if i in stages and node.attrs.get(MIRROR_STAGE) != "True":
            want[MIRROR_STAGE] = "True"
        if want:
            changes.append((i, want))
    return changes
