"""Export with our converters, and the check.

:func:`export` builds the model without MXNet (:mod:`build`), from the checkpoint beside
the file (read by :mod:`weights`) or random trained-looking weights, writes it
atomically, and with ``check``:

* where MXNet runs: MXNet's inference forward of the *original* graph and onnxruntime
  run the same inputs and weights, every output is compared, and when one differs the
  first node that differs is named (:mod:`onnx_check`, as for the mx2onnx route);
* where it does not (Python 3.12+, Windows, Apple silicon): the model runs in
  onnxruntime on the same inputs, and the verdict says plainly that no MXNet
  reference was available.

Runs in a child process (:func:`export_snapshot`); imports MXNet only for the check.
Must not import Qt.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.convert import onnx_check, onnx_rows
from mxexplorer.core.convert.onnx import build, weights
from mxexplorer.core.convert.onnx_report import ExportReport
from mxexplorer.core.graph.document import GraphDocument
from mxexplorer.core.ops import plugins as plugin_rules
from mxexplorer.core.runtime.errors import UserError
from mxexplorer.core.runtime.files import write_atomic
from mxexplorer.core.runtime.mxnet_env import import_mxnet, mxnet_available, mxnet_errors
from mxexplorer.core.runtime.progress import CancelToken, Progress, no_progress

TOLERANCE = 1e-4


def load_onnx() -> Any:
    try:
        import onnx
    except ImportError:
        raise UserError("ONNX export needs the onnx package: pip install "
                        "'mxexplorer[onnx]' (see the README)") from None
    return onnx


def model_weights(doc: GraphDocument, shapes: Mapping[str, Shape],
                  params_path: str | None, renames: Mapping[str, str]
                  ) -> tuple[dict[str, Any], str, Any]:
    """(weights by name, where they came from, the engine's inference)."""
    if params_path:
        values = weights.checkpoint(params_path, renames)
        result = build.infer(doc, shapes, {k: tuple(v.shape) for k, v in values.items()})
        return values, f"weights of {os.path.basename(params_path)}", result
    result = build.infer(doc, shapes, {})
    entries = doc.internals()
    shape = {e.node: s for e, s in zip(entries, result.internal_shapes) if e.index == 0}
    dtype = {e.node: d for e, d in zip(entries, result.internal_dtypes) if e.index == 0}
    wanted = {i: s for i in doc.parameters() + doc.aux_states()
              if doc.nodes[i].name not in shapes and (s := shape.get(i))}
    types = {i: d for i, d in dtype.items() if d is not None}
    return (weights.random(doc, wanted, types),
            "random trained-looking weights (no checkpoint)", result)


def _data_shape(doc: GraphDocument, built: build.Built) -> Any:
    def shape(name: str) -> Shape | None:
        k = doc.node_named(name)
        if k is None or not doc.nodes[k].inputs:
            return None
        src, index, _ = doc.nodes[k].inputs[0]
        return built.shapes.get((src, index))
    return shape


def _read_input(path: str, want: Shape) -> Any:
    """A ``.npy``, or an image (MXNet's reader, where MXNet is installed)."""
    import numpy as np

    if path.endswith(".npy"):
        try:
            value = np.load(path, allow_pickle=False).astype("float32")
        except (OSError, ValueError) as exc:
            raise UserError(f"{path}: not a readable .npy ({exc})") from None
    elif not mxnet_available():
        raise UserError(f"{path}: reading an image needs MXNet, which is not installed "
                        "here; give the input as a .npy (numpy.save) instead")
    else:
        mx = import_mxnet()
        if len(want) != 4:
            raise UserError(f"an image fills an NCHW input; this one is {want}")
        try:
            image = mx.image.imread(path)
        except Exception as exc:  # noqa: BLE001
            raise UserError(f"{path}: not an image MXNet can read ({exc})") from None
        image = mx.image.imresize(image, want[3], want[2]).asnumpy()
        value = np.broadcast_to(image.transpose(2, 0, 1)[None].astype("float32"), want)
    if tuple(value.shape) != tuple(want):
        raise UserError(f"{path} holds shape {tuple(value.shape)}, but the input is {want}")
    return np.ascontiguousarray(value)


def make_feed(doc: GraphDocument, built: build.Built, graph_json: str,
              given: str | None) -> tuple[dict[str, Any], str]:
    """The check's inputs for every graph input: uniform in [-1, 1], whole numbers
    where an input is read as indices, the first from ``given``."""
    import numpy as np

    shapes = {k: s for k, (s, _) in built.inputs.items()}
    indices = onnx_check.index_inputs(graph_json, _data_shape(doc, built))
    rng = np.random.default_rng(11)
    feed = {}
    for name, (shape, dtype) in built.inputs.items():
        value: Any = rng.integers(indices[name][0], indices[name][1], shape,
                                  endpoint=True) if name in indices else \
            rng.uniform(-1, 1, shape)
        feed[name] = value.astype(dtype if dtype != "bfloat16" else "float32")
    kinds: dict[str, list[str]] = {}
    for name, (low, high) in indices.items():
        if name in shapes:
            kind = f"token ids below {high + 1}" if low == 0 else f"lengths {low} to {high}"
            kinds.setdefault(kind, []).append(name)
    said = [f"{kind} for '{names[0]}'" if len(names) == 1 else
            f"{kind} for '{names[0]}'" + (f" and '{names[1]}'" if len(names) == 2 else
                                          f" ... '{names[-1]}' ({len(names)} inputs)")
            for kind, names in kinds.items()]
    where = "random inputs" + (f" ({', '.join(said)})" if said else "")
    if given and shapes:
        first = next(iter(shapes))
        feed[first] = _read_input(given, shapes[first]).astype(feed[first].dtype)
        where = f"inputs from {os.path.basename(given)}"
    return feed, where


def export(graph_json: str, shapes: Mapping[str, Shape], out_path: str,
           params_path: str | None = None, renames: Mapping[str, str] | None = None,
           opset: int | None = None, check: bool = False, inputs: str | None = None,
           tolerance: float = TOLERANCE, progress: Progress = no_progress,
           token: CancelToken | None = None, reference: bool | None = None,
           path: str | None = None) -> ExportReport:
    """Convert ``graph_json`` with our converters and write it to ``out_path``; with
    ``check``, run it (against MXNet when ``reference`` is True or None and MXNet is
    installed).

    Raises
    ------
    build.UnsupportedOps : ops without a converter (nothing is written).
    NoOnnxMeaning : a node ONNX cannot express (named; nothing is written).
    UserError : shapes unknown, weights unreadable, the check cannot run.
    """
    token = token or CancelToken()
    onnx = load_onnx()
    progress(0, 4, "inferring shapes")
    doc = GraphDocument.from_json(graph_json, path)
    build.refuse_unsupported(doc)          # before inference: an unknown op stops it
    shapes = {k: tuple(v) for k, v in shapes.items()}
    values, said, inferred = model_weights(doc, shapes, params_path, renames or {})
    token.check()
    progress(1, 4, "converting")
    built = build.build(doc, shapes, values, opset, inferred)
    blob = built.blob
    write_atomic(out_path, blob)
    report = ExportReport(out_path, built.opset, said, tuple(built.notes), None, len(blob),
                          via="mxexplorer")
    if not check:
        return report
    token.check()
    feed, where = make_feed(doc, built, graph_json, inputs)
    progress(2, 4, "running onnxruntime")
    got = onnx_check.run_onnx(blob, feed)
    names = _labels([entry for entry, _ in built.outputs])
    by_entry = {label: got[name] for label, (_, name) in zip(names, built.outputs)}
    use_mxnet = mxnet_available() if reference is None else reference
    why = "MXNet is not installed here" if reference is None else "not asked for"
    lacking = sorted({n.op for n in doc.nodes if not n.is_variable and
                      n.op in plugin_rules.RULES}) if use_mxnet else []
    if lacking:
        use_mxnet, why = False, (f"this MXNet lacks {', '.join(lacking)}: "
                                 f"{'a plug-in op' if len(lacking) == 1 else 'plug-in ops'}"
                                 " or an older MXNet's")
    if not use_mxnet:
        outs = tuple(_alone_output(n, by_entry[n]) for n in names)
        result = onnx_check.CheckReport(outs, tolerance, where, compared=False,
                                        no_reference=why)
        return dataclasses.replace(report, check=result)
    token.check()
    progress(3, 4, "running MXNet")
    mx = import_mxnet()
    known = {doc.nodes[i].name: s for i in doc.arguments()
             if (s := built.shapes.get((i, 0))) is not None and
             doc.nodes[i].name not in values}
    with mxnet_errors("MXNet cannot load the graph"):
        original = mx.sym.load_json(graph_json)
    with mxnet_errors("MXNet cannot run the graph"):
        if [list(h[:2]) for h in doc.heads] == [list(h) for h in built.heads]:
            want = dict(zip(names, _forward_heads(mx, original, known, feed, values)))
        else:
            want = onnx_check.forward_entries(mx, original, [e for e, _ in built.outputs],
                                              known, feed, values)
            want = {label: want[e] for label, (e, _) in zip(names, built.outputs)}
    rows = {label: r for label, (e, _) in zip(names, built.outputs)
            if (r := onnx_rows.sorted_rows(graph_json).get(e)) is not None}
    result = onnx_check.compare(names, [want[n] for n in names], by_entry, tolerance,
                                where, {n: rows[n] for n in names if n in rows})
    if not result.agree:
        token.check()
        progress(3, 4, "finding the first node that differs")
        ops = {n.name: n.op for n in doc.nodes if not n.is_variable}
        with mxnet_errors("the search for the first differing node failed"):
            first = onnx_check.first_difference(
                mx, onnx, built.model, original, known, feed, feed, values, ops,
                tolerance, naming=built.entries.get, graph_json=graph_json)
        result = dataclasses.replace(result, first=first)
    return dataclasses.replace(report, check=result)


def _labels(entries: list[str]) -> list[str]:
    """The outputs' names in the report: MXNet's entry names, a repeated one numbered
    (a head that is an input named like another node's output)."""
    seen: dict[str, int] = {}
    out = []
    for entry in entries:
        seen[entry] = seen.get(entry, 0) + 1
        out.append(entry if seen[entry] == 1 else f"{entry} ({seen[entry]})")
    return out


def _forward_heads(mx: Any, original: Any, known: Mapping[str, Shape],
                   feed: Mapping[str, Any], values: Mapping[str, Any]) -> list[Any]:
    """MXNet's inference forward of ``original``'s own heads, in order (two heads of
    one name stay two)."""
    with onnx_check.unfused():
        exe = onnx_check.bind(mx, original, known)
    for name, arr in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
        arr[:] = feed[name] if name in feed else \
            values[name].astype(arr.dtype) if name in values else 0
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def _alone_output(name: str, value: Any) -> onnx_check.OutputCheck:
    import numpy as np

    finite = bool(np.all(np.isfinite(value))) if value.dtype.kind == "f" else True
    largest = float(np.max(np.abs(value))) if value.size and finite else \
        (float("nan") if not finite else 0.0)
    return onnx_check.OutputCheck(name, tuple(value.shape), largest, 0.0, (), None)
