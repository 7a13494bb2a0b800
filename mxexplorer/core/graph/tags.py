"""The mirroring vocabulary: the attribute keys memonger and MXNet's memory planner
read, and what counts as a mirror stage.  Part of the graph layer: drawing, planning
and editing all speak it, and none of them owns it."""
from __future__ import annotations

from typing import Mapping

from mxexplorer.core.graph import opinfo

#: the planner's block boundary (memonger's ``mirror_stage``), hidden form first
MIRROR_STAGE = "__mirror_stage__"
#: MXNet's per-node mirroring decision (``MXNET_BACKWARD_DO_MIRROR``)
FORCE_MIRRORING = "__force_mirroring__"
#: every spelling of the two: what a graph's structural identity leaves out
TAG_KEYS = frozenset({MIRROR_STAGE, "mirror_stage", FORCE_MIRRORING, "force_mirroring"})


def is_mirror_stage(attrs: Mapping[str, str]) -> bool:
    """The node is marked as a mirror stage (either spelling)."""
    return opinfo.flag(attrs, MIRROR_STAGE) or opinfo.flag(attrs, "mirror_stage")
