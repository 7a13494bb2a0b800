"""Plain-data reports of a document (what ``info`` and ``infer`` print).

Shared by the CLI (text and ``--json``) and the GUI status bar.  No Qt, and MXNet
only through :mod:`mxexplorer.core.analysis.shapes`.
"""
from __future__ import annotations

from typing import Any, Mapping

from mxexplorer.core.analysis import stats
from mxexplorer.core.analysis.shapes import ShapeResult
from mxexplorer.core.graph import model, opinfo
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.ops import registry


def info(doc: GraphDocument) -> dict[str, Any]:
    """Format, counts, inputs, outputs, parameters, aux states and op histogram."""
    n = doc.nodes
    mismatch = doc.checkpoint_mismatch()
    return {
        "file": doc.path,
        "params_file": doc.params_path,
        #: what the checkpoint lacks and holds for nothing (None: they belong together)
        "checkpoint_mismatch": mismatch.to_dict() if mismatch is not None else None,
        "format": model.GENERATION_LABELS[doc.generation],
        "generation": doc.generation,
        "mxnet_version": doc.file_version,
        "upgraded_by": doc.upgraded or None,
        "nodes": len(doc.nodes),
        "operators": sum(1 for i in doc.order() if not n[i].is_variable),
        "internals_count": len(doc.internals()),
        "inputs": [n[i].name for i in doc.data_inputs()],
        "outputs": [e.name for e in doc.output_entries()],
        "parameters": [n[i].name for i in doc.parameters()],
        "aux": [n[i].name for i in doc.aux_states()],
        "ops": dict(sorted(doc.op_histogram().items(), key=lambda kv: (-kv[1], kv[0]))),
        "unknown_ops": doc.unknown_ops(),
        "duplicate_names": doc.duplicate_names(),
        "shape_hints": {k: list(v) for k, v in doc.shape_hints().items()},
        "internals": doc.internal_names(),
    }


def unknown_ops_words(doc: GraphDocument) -> str:
    """What the ops MXNet 1.9.1 does not know mean for inference ("" when there are
    none): where it stops, or that the engine infers them all the same."""
    unknown = doc.unknown_ops()
    if not unknown:
        return ""
    unruled = [op for op in unknown if registry.rule_for(op) is None]
    then = (f"shape inference stops at {', '.join(unruled)}" if unruled else
            "mxexplorer's engine infers them; MXNet itself cannot run this file")
    return f"{', '.join(unknown)} (not in MXNet 1.9.1; {then})"


def inference(doc: GraphDocument, result: ShapeResult, st: stats.GraphStats
              ) -> dict[str, Any]:
    """Every internal with its shape, argument/aux/output shapes and totals."""
    internals = []
    for entry, shape, dtype in zip(doc.internals(), result.internal_shapes,
                                   result.internal_dtypes):
        node = doc.nodes[entry.node]
        ns = st.per_node.get(entry.node)
        internals.append({
            "name": entry.name,
            "op": node.op,
            "shape": list(shape) if shape is not None else None,
            "dtype": dtype,
            "bytes": st.per_entry_bytes.get((entry.node, entry.index), 0),
            "params": ns.params if ns and entry.index == 0 else 0,
            "macs": ns.macs if ns and entry.index == 0 else 0,
        })

    def shp(s: Any) -> Any:
        return list(s) if s is not None else None

    err = result.error
    return {
        "file": doc.path,
        "inputs": {k: list(v) for k, v in result.inputs_used.items()},
        "internals": internals,
        "arguments": {k: shp(v) for k, v in result.arg_shapes.items()},
        "aux": {k: shp(v) for k, v in result.aux_shapes.items()},
        "outputs": [{"name": e.name, "shape": shp(s)}
                    for e, s in zip(doc.output_entries(), result.output_shapes)],
        "complete": result.complete,
        "inferred_by": result.inferred_by,
        "ops_without_rule": list(result.unruled_ops),
        "missing_inputs": list(result.missing_inputs),
        "params": st.params,
        "aux_values": st.aux_values,
        "macs": st.macs,
        "flops": st.flops,
        "activation_bytes": st.activation_bytes,
        "uncounted_ops": list(st.uncounted_ops),
        "by_op": by_op(doc, st),
        "error": None if err is None else {
            "node": err.node, "op": err.op, "message": err.message, "detail": err.detail},
        "dtype_error": None if result.dtype_error is None else result.dtype_error.one_line(),
    }


def by_op(doc: GraphDocument, st: stats.GraphStats,
          times: Mapping[int, float] | None = None) -> list[dict[str, Any]]:
    """One row per op type: how many nodes, their parameters, MACs, output memory and
    (with ``times``, ms per node) measured time, each with its share of the graph's
    total; the largest MACs first."""
    rows: dict[str, dict[str, Any]] = {}
    for i in doc.order():
        node = doc.nodes[i]
        if node.is_variable:
            continue
        ns = st.per_node.get(i, stats.NodeStats())
        row = rows.setdefault(opinfo.canonical_op(node.op), {
            "op": opinfo.canonical_op(node.op), "count": 0, "nodes": [], "params": 0,
            "macs": 0, "activation_bytes": 0, "time_ms": 0.0})
        row["count"] += 1
        row["nodes"].append(i)
        row["params"] += ns.params
        row["macs"] += ns.macs
        row["activation_bytes"] += ns.activation_bytes
        row["time_ms"] += (times or {}).get(i, 0.0)
    totals = {k: sum(r[k] for r in rows.values()) for k in ("params", "macs",
                                                            "activation_bytes", "time_ms")}
    for row in rows.values():
        for k, total in totals.items():
            row[f"{k}_share"] = row[k] / total if total else 0.0
        if times is None:                 # not measured: no column of zeros
            del row["time_ms"], row["time_ms_share"]
    return sorted(rows.values(), key=lambda r: (-r["macs"], -r["activation_bytes"], r["op"]))
