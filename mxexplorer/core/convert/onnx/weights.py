"""The weights an export writes as initializers, read without MXNet: a checkpoint's
arrays (the NDArray list format, read by :mod:`params_file`, keys following the
document's renames), or random ones that look trained when there is no checkpoint
(normalisations' scales and variances positive, weights uniform with the spread of
their fan-in, as Xavier's), the same each time.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Mapping

from mxexplorer.core.graph import params_file
from mxexplorer.core.graph.document import GraphDocument

Shape = tuple[int, ...]

#: normalisations whose inputs 1 and (for BatchNorm) 4 are scales and variances
#: (kept positive) and 2, 3 shifts and means
NORMS = frozenset({"BatchNorm", "BatchNorm_v1", "SyncBatchNorm", "_contrib_SyncBatchNorm",
                   "InstanceNorm", "LayerNorm", "GroupNorm"})


def checkpoint(path: str, renames: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every dense array of the ``.params`` at ``path`` by name (``arg:``/``aux:``
    dropped, renamed as the document renamed its nodes)."""
    renames = renames or {}
    out = {}
    for info in params_file.read_params_index(path):
        out[renames.get(info.name, info.name)] = params_file.read_array(path, info)
    return out


def _roles(doc: GraphDocument) -> tuple[set[int], set[int]]:
    scales: set[int] = set()
    shifts: set[int] = set()
    for node in doc.nodes:
        if node.op in NORMS:
            ids = [src for src, _, _ in node.inputs]
            scales.update(ids[1:2] + ids[4:5])
            shifts.update(ids[2:4])
    return scales, shifts


def random(doc: GraphDocument, shapes: Mapping[int, Shape],
           dtypes: Mapping[int, str]) -> dict[str, Any]:
    """Trained-looking values for the variables ``shapes`` gives (by node id)."""
    import numpy as np

    rng: Any = np.random.default_rng(7)
    scales, shifts = _roles(doc)
    out: dict[str, Any] = {}
    for nid, shape in shapes.items():
        name = doc.nodes[nid].name
        dtype = dtypes.get(nid) or "float32"
        made = dtype if dtype in ("float32", "float64") else "float32"
        if nid in scales or name.endswith(("gamma", "moving_var", "running_var")):
            value = 0.5 + rng.random(shape, dtype=made)
        elif nid in shifts or name.endswith(("beta", "moving_mean", "running_mean")):
            value = rng.random(shape, dtype=made) * 0.4 - 0.2
        elif len(shape) >= 2:       # uniform with the fan-in's spread, drawn in place
            fan_in = max(1, int(np.prod(shape[1:])))   # (10x faster than normal draws)
            value = rng.random(shape, dtype=made)
            value -= np.asarray(0.5, made)
            value *= np.asarray(2 * (3.0 / fan_in) ** 0.5, made)
        else:
            value = rng.random(shape, dtype=made) * 0.2 - 0.1
        out[name] = value if dtype == made or dtype == "bfloat16" else value.astype(dtype)
    return out
