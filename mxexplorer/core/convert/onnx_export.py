"""ONNX export through MXNet 1.9.1's own converters, with what they get wrong fixed on
the way in, and a check of the result against MXNet before anyone trusts it.

* Pre-flight: every operator whose op has no converter (MXNet 1.9.1 converts about 150
  op names) is listed by node before anything is converted.
* Faults fixed, each named in the report (:mod:`onnx_fixes`): training heads exported
  as their inference meaning, labels dropped; a loss head replaced by what feeds it;
  heads only training has (SSD's loss and MultiBoxTarget's targets) dropped;
  ``fix_gamma=True`` BatchNorm gammas exported as ones (what MXNet computes with);
  MultiBoxPrior anchors as constants; RNNs without state outputs asked for them (read
  by nothing); every input typed, labels included; PReLU slopes per rank;
  SliceChannels of more than 100 outputs in two levels; the opset the one asked for.
  Ops MXNet lacks get our converters
  (:mod:`onnx_ops`).
* Check (:mod:`onnx_check`): MXNet's forward of the *original* graph and onnxruntime
  run the same inputs (random, a ``.npy`` or an image); every output is compared and
  the verdict is one line, naming the first node that differs when an output does;
  detection rows of scores equal within the tolerance may come in another order
  (:mod:`onnx_rows`), said in the verdict.

Runs in a child process (:func:`export_snapshot`); must not import Qt.
"""
from __future__ import annotations

import dataclasses
import json
import os
import warnings
from typing import Any, Mapping, Sequence

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.convert import onnx_check, onnx_fixes, onnx_ops, onnx_rows
from mxexplorer.core.convert.onnx import export as own
from mxexplorer.core.convert.onnx_check import CheckReport as CheckReport
from mxexplorer.core.convert.onnx_check import NodeDifference as NodeDifference
from mxexplorer.core.convert.onnx_check import OutputCheck as OutputCheck
from mxexplorer.core.convert.onnx_ops import DEFAULT_OPSET as DEFAULT_OPSET
from mxexplorer.core.convert.onnx_ops import MIN_OPSET as MIN_OPSET
from mxexplorer.core.convert.onnx_ops import ONNX_PINS as ONNX_PINS
from mxexplorer.core.convert.onnx_ops import load_onnx as load_onnx
from mxexplorer.core.convert.onnx_ops import supported_ops as supported_ops
from mxexplorer.core.convert.onnx_ops import unsupported as unsupported
from mxexplorer.core.convert.onnx_report import ExportReport as ExportReport
from mxexplorer.core.convert.onnx_report import UnsupportedOps as UnsupportedOps
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.runtime import isolated
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.files import write_atomic
from mxexplorer.core.runtime.mxnet_env import failure, import_mxnet, mxnet_errors
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

TOLERANCE = 1e-4


def _params(mx: Any, sym: Any, shapes: Mapping[str, Shape], path: str | None,
            renames: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """The weights: the checkpoint's (keys following renames), or random ones that
    look trained (gammas and moving statistics away from 1 and 0, so a converter that
    mishandles them shows)."""
    if path:
        loaded = mx.nd.load(path)
        out = {renames.get(k.split(":", 1)[-1], k.split(":", 1)[-1]): v
               for k, v in loaded.items()}
        return out, f"weights of {os.path.basename(path)}"
    arg_shapes, _, aux_shapes = sym.infer_shape(**{k: v for k, v in shapes.items()
                                                   if k in sym.list_arguments()})
    rng = mx.random
    mx.random.seed(7)
    out = {}
    scales, shifts = _norm_roles(sym)
    for name, shape in list(zip(sym.list_arguments(), arg_shapes)) + \
            list(zip(sym.list_auxiliary_states(), aux_shapes)):
        if name in shapes:             # inputs (data and labels)
            continue
        if name in scales or name.endswith(("gamma", "moving_var", "running_var")):
            out[name] = rng.uniform(0.5, 1.5, shape)
        elif name in shifts or name.endswith(("beta", "moving_mean", "running_mean")):
            out[name] = rng.uniform(-0.2, 0.2, shape)
        elif len(shape) >= 2:          # a weight: scaled by its fan-in, as training keeps it
            fan_in = max(1, int(__import__("numpy").prod(shape[1:])))
            out[name] = rng.normal(0, (1.0 / fan_in) ** 0.5, shape)
        else:
            out[name] = rng.uniform(-0.1, 0.1, shape)
    return out, "random trained-looking weights (no checkpoint)"


#: normalisations' inputs by position: (data, gamma, beta, moving mean, moving var)
NORMS = frozenset({"BatchNorm", "BatchNorm_v1", "SyncBatchNorm", "_contrib_SyncBatchNorm"})


def _norm_roles(sym: Any) -> tuple[set[str], set[str]]:
    """The weights a BatchNorm reads as gammas and variances (kept positive), and as
    betas and means, by their place among its inputs, whatever their names
    (``bn_data_moving__tree_0_var``)."""
    nodes = json.loads(sym.tojson())["nodes"]
    scales, shifts = set(), set()
    for node in nodes:
        if node.get("op") not in NORMS:
            continue
        names = [nodes[i[0]]["name"] for i in node.get("inputs", [])]
        scales.update(names[1:2] + names[4:5])
        shifts.update(names[2:4])
    return scales, shifts


def export(graph_json: str, shapes: Mapping[str, Shape], out_path: str,
           op_nodes: Sequence[tuple[int, str, str]], params_path: str | None = None,
           renames: Mapping[str, str] | None = None, opset: int = DEFAULT_OPSET,
           check: bool = False, inputs: str | None = None, tolerance: float = TOLERANCE,
           progress: Progress = no_progress, token: CancelToken | None = None,
           fix_gamma: bool = True) -> ExportReport:
    """Convert ``graph_json`` (with the checkpoint at ``params_path``, else random
    weights) to ONNX at ``out_path``; with ``check``, compare it with MXNet's forward of
    the original graph, and name the first node that differs when an output does.

    Raises
    ------
    UnsupportedOps : some operator has no converter (nothing is written).
    UserError : the conversion or the check cannot run.
    """
    token = token or CancelToken()
    if opset < MIN_OPSET:
        raise UserError(f"opset {opset}: MXNet's converters start at opset {MIN_OPSET}")
    progress(0, 4, "checking operators")
    graph = json.loads(graph_json)
    fixes = onnx_fixes.drop_training_heads(graph)         # their ops need no converter
    exported = onnx_fixes.exported_names(graph)
    missing = unsupported([n for n in op_nodes if n[1] in exported], opset)
    if missing:
        raise UnsupportedOps(list(missing))
    onnx = load_onnx()
    mx = import_mxnet()
    shapes = {k: tuple(v) for k, v in shapes.items()}
    with mxnet_errors("MXNet cannot load the graph"):
        original = mx.sym.load_json(graph_json)
        arg_shapes = dict(zip(original.list_arguments(),
                              original.infer_shape_partial(**shapes)[0]))
    inferred = onnx_fixes.InputRanks(original, shapes)     # one inference, read by both
    fixes += onnx_fixes.fix_training_heads(graph, inferred)
    fixes += onnx_fixes.fix_loss_heads(graph)
    fixes += onnx_fixes.fix_flatten(graph) + onnx_fixes.fix_duplicate_heads(graph)
    fixes += onnx_fixes.fix_special_reshapes(graph, inferred)
    fixes += onnx_fixes.fix_rnn_state_outputs(graph)
    renamed: dict[str, str] = {}                # outputs the passes renamed: the original's
    fixes += onnx_fixes.split_wide_slices(graph, renamed)
    with mxnet_errors("MXNet cannot load the graph"):
        sym = mx.sym.load_json(json.dumps(graph))
    labels = {n: tuple(arg_shapes[n]) for n in sym.list_arguments()
              if n not in shapes and n.endswith("label") and arg_shapes.get(n)}
    with mxnet_errors("the weights cannot be read"):
        params, weights = _params(mx, sym, {**shapes, **labels}, params_path, renames or {})
        if fix_gamma:                     # off only to show the fault (a test does)
            fixes += onnx_fixes.fix_gamma(graph, params, mx)
        fixes += onnx_fixes.fold_priors(graph, original, shapes, params, mx)
    # the graph's inputs: every argument the weights do not hold, labels included
    names = [n for n in sym.list_inputs() if n not in params]
    unknown = [n for n in names if n not in shapes and not arg_shapes.get(n)]
    if unknown:
        raise UserError(f"no shape for input(s) {', '.join(unknown)}: give them with "
                        "--shape NAME=D1,D2,...")
    given = {n: tuple(shapes.get(n) or arg_shapes[n]) for n in names}
    known = {**shapes, **labels, **given}     # every shape MXNet's run of the original needs
    internals = sym.get_internals()
    last_label = internals[len(internals.list_outputs()) - 1].name + "_label"
    onnx_names = {n: (n + "_in" if n == last_label else n) for n in names}
    if last_label in names:
        fixes += onnx_fixes.rename_input(graph, last_label, onnx_names[last_label])
    with mxnet_errors("MXNet cannot load the graph"):
        sym = mx.sym.load_json(json.dumps(graph))
    token.check()
    progress(1, 4, "converting")
    # an input only folded anchors read (for its shape) is in the graph no more
    kept = set(sym.list_inputs())
    model = _convert(onnx, sym, params, [given[n] for n in names if onnx_names[n] in kept],
                     opset, shapes, fixes)
    blob = model.SerializeToString()
    write_atomic(out_path, blob)
    report = ExportReport(out_path, opset, weights, tuple(fixes), None, len(blob))
    if not check:
        return report
    token.check()
    progress(2, 4, "running MXNet")
    feed, where = onnx_check.make_inputs(mx, given, inputs, labels=list(labels),
                                         indices=onnx_check.index_inputs(graph_json,
                                                                        inferred.input_shape))
    onnx_feed = {onnx_names[n]: v for n, v in feed.items()}
    outputs = sym.list_outputs()
    listed = set(original.get_internals().list_outputs())
    entries = [renamed.get(n) or (n if n in listed else f"{n}_output")   # folded constants
               for n in outputs]
    with mxnet_errors("MXNet cannot run the graph"):
        values = onnx_check.forward_entries(mx, original, entries, known, feed, params)
        mx_out = [values[n] for n in entries]
    progress(3, 4, "running onnxruntime")
    rows = onnx_rows.sorted_rows(original.tojson())      # detections: ties in any order
    result = onnx_check.compare(outputs, mx_out, onnx_check.run_onnx(blob, onnx_feed),
                                tolerance, where,
                                {n: rows[e] for n, e in zip(outputs, entries) if e in rows})
    if not result.agree:
        token.check()
        progress(3, 4, "finding the first node that differs")
        ops = {n["name"]: n["op"] for n in json.loads(graph_json)["nodes"]
               if n.get("op") != "null"}
        with mxnet_errors("the search for the first differing node failed"):
            first = onnx_check.first_difference(mx, onnx, model, original, known, feed,
                                                onnx_feed, params, ops, tolerance)
        result = dataclasses.replace(result, first=first)
    return ExportReport(out_path, opset, weights, tuple(fixes), result, len(blob))


def _convert(onnx: Any, sym: Any, params: Mapping[str, Any], in_shapes: list[Shape],
             opset: int, shapes: Mapping[str, Shape], fixes: list[str]) -> Any:
    """MXNet's converter (with ours installed) at ``opset``, the PReLU fix after it, the
    whole model checked at its own opset."""
    from mxnet.onnx.mx2onnx._export_onnx import MXNetGraph

    ranks = onnx_fixes.InputRanks(sym, shapes)        # one inference, read by both
    onnx_ops.fast_weights()
    onnx_ops.install(ranks)
    try:
        with warnings.catch_warnings(), onnx_fixes.no_inner_check(onnx), \
                onnx_ops.named_failures():
            warnings.simplefilter("ignore", DeprecationWarning)   # its onnx.mapping
            proto = MXNetGraph().create_onnx_graph_proto(
                sym, dict(params), in_shapes, [onnx.TensorProto.FLOAT for _ in in_shapes],
                opset_version=opset, dynamic=False)
        model = onnx.helper.make_model(proto, opset_imports=[
            onnx.helper.make_opsetid("", opset)], producer_name="mxexplorer")
        fixes += onnx_fixes.fix_prelu(onnx, model, ranks)
        onnx.checker.check_model(model)
    except UserError:
        raise
    except onnx_ops.ConverterFailure as exc:
        raise UserError(f"MXNet's ONNX converter failed at '{exc.name}' ({exc.op}): "
                        f"{type(exc.cause).__name__}: {failure(exc.cause)}") from None
    except Exception as exc:  # noqa: BLE001 - the converter's own errors, in one line
        raise UserError(f"MXNet's ONNX converter failed: {type(exc).__name__}: "
                        f"{failure(exc)}") from None
    return model


#: the converters a user can choose: ours (the default, no MXNet needed) or MXNet's
VIAS = ("mxexplorer", "mx2onnx")


def export_snapshot(snap: Any, shapes: Mapping[str, Shape], out_path: str,
                    opset: int | None = None, check: bool = False,
                    inputs: str | None = None, progress: Progress = no_progress,
                    token: CancelToken | None = None, via: str = "mxexplorer",
                    reference: bool | None = None) -> ExportReport:
    """:func:`export` of a document snapshot (its checkpoint, renames followed) in a
    child process: with our converters (``via="mxexplorer"``, no MXNet needed; the
    check compares with MXNet where it is installed, unless ``reference`` is False),
    or with MXNet's (``via="mx2onnx"``, needs MXNet).

    Raises
    ------
    UserError : also when the checkpoint lacks arrays the graph reads (it belongs to
        another graph: its names, not ``--shape`` for the weights it lacks).
    """
    if via not in VIAS:
        raise UserError(f"--via {via!r}: choose {' or '.join(VIAS)}")
    doc = GraphDocument.from_snapshot(snap)
    mismatch = doc.checkpoint_mismatch()
    if mismatch is not None and mismatch.lacking:
        raise UserError(f"{mismatch.words()}: export the graph with its own checkpoint, or "
                        f"move {os.path.basename(mismatch.params_file)} away to export "
                        "with random weights")
    if via == "mxexplorer":
        mine: ExportReport = isolated.call(
            own.export, snap.json, dict(shapes), out_path, snap.params_path,
            dict(snap.param_renames), opset, check, inputs, progress=progress,
            token=token, reference=reference, path=doc.path, what="the ONNX export")
        return mine
    nodes = doc.operators()
    report: ExportReport = isolated.call(
        export, snap.json, dict(shapes), out_path, nodes, snap.params_path,
        dict(snap.param_renames), opset or DEFAULT_OPSET, check, inputs,
        progress=progress, token=token, what="the ONNX export")
    return dataclasses.replace(report, via="mx2onnx")
