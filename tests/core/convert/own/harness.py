"""Our ONNX exporter judged by MXNet: a symbol (or its JSON) exported without MXNet,
run in onnxruntime, and compared output by output with MXNet's inference forward of
the same graph on the same inputs and weights."""
from __future__ import annotations

import os
from typing import Any, Mapping

import numpy as np

from mxexplorer.core.convert.onnx import build, weights
from mxexplorer.core.graph.document import GraphDocument


def export(graph: Any, shapes: Mapping[str, tuple[int, ...]],
           values: Mapping[str, Any] | None = None, opset: int | None = None,
           dtypes: Mapping[str, str] | None = None) -> tuple[build.Built, dict[str, Any]]:
    """(the built model, the weights it holds): ``values`` named are used as given,
    every other parameter and auxiliary state gets random trained-looking values."""
    text = graph if isinstance(graph, str) else graph.tojson()
    doc = GraphDocument.from_json(text)
    given = {k: tuple(v) for k, v in shapes.items()}
    fixed = dict(values or {})
    result = build.shape_analysis.infer_document(
        doc, given, dtypes=dtypes, param_shapes={k: tuple(np.shape(v)) for k, v in
                                                 fixed.items()}, use_mxnet=False)
    assert result.error is None, result.error.one_line()
    entries = doc.internals()
    shape = {e.node: s for e, s in zip(entries, result.internal_shapes) if e.index == 0}
    dtype = {e.node: d for e, d in zip(entries, result.internal_dtypes) if e.index == 0}
    names = {doc.nodes[i].name for i in doc.arguments()}
    params = [i for i in doc.arguments() + doc.aux_states()
              if doc.nodes[i].name not in given and doc.nodes[i].name not in fixed
              and not doc.nodes[i].name.endswith("label") and shape.get(i)]
    made = weights.random(doc, {i: shape[i] for i in params}, dtype)
    made.update({k: np.asarray(v) for k, v in fixed.items()})
    assert names | {doc.nodes[i].name for i in doc.aux_states()}
    built = build.build(doc, given, made, opset=opset, inferred=result)
    return built, made


def run_onnx(built: build.Built, feed: Mapping[str, Any]) -> dict[str, Any]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("session.disable_prepacking", "1")
    session = ort.InferenceSession(built.model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    wanted = {i.name for i in session.get_inputs()}
    return dict(zip(names, session.run(None, {k: v for k, v in feed.items()
                                              if k in wanted})))


def run_mxnet(graph: Any, feed: Mapping[str, Any], params: Mapping[str, Any]
              ) -> dict[str, Any]:
    import mxnet as mx

    sym = mx.sym.load_json(graph if isinstance(graph, str) else graph.tojson())
    before = os.environ.get("MXNET_SUBGRAPH_BACKEND")
    os.environ["MXNET_SUBGRAPH_BACKEND"] = "NONE"     # every node keeps its own kernel
    try:
        shapes = {k: np.shape(v) for k, v in {**feed, **params}.items()
                  if k in sym.list_arguments()}
        types = {k: np.asarray(v).dtype for k, v in {**feed, **params}.items()
                 if k in sym.list_arguments()}
        exe = sym.simple_bind(mx.cpu(), grad_req="null", type_dict=types, **shapes)
        for name, arr in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
            if name in feed:
                arr[:] = feed[name]
            elif name in params:
                arr[:] = params[name]
            else:
                arr[:] = 0
        outs = exe.forward(is_train=False)
    finally:
        if before is None:
            os.environ.pop("MXNET_SUBGRAPH_BACKEND", None)
        else:
            os.environ["MXNET_SUBGRAPH_BACKEND"] = before
    return {n: o.asnumpy() for n, o in zip(sym.list_outputs(), outs)}


def agree(graph: Any, shapes: Mapping[str, tuple[int, ...]], *,
          values: Mapping[str, Any] | None = None, feed: Mapping[str, Any] | None = None,
          opset: int | None = None, tolerance: float = 1e-4, low: float = -1.0,
          high: float = 1.0, dtypes: Mapping[str, str] | None = None) -> build.Built:
    """Export ``graph`` at ``shapes``, run both, assert every output agrees (absolute,
    or relative to the output's largest value, within ``tolerance``); the built model
    is returned for further looks."""
    built, params = export(graph, shapes, values, opset, dtypes)
    rng = np.random.default_rng(3)
    inputs = {k: rng.uniform(low, high, v).astype((dtypes or {}).get(k, "float32"))
              for k, v in shapes.items()}
    inputs.update(feed or {})
    got = run_onnx(built, inputs)
    want = run_mxnet(graph, inputs, params)
    for entry, name in built.outputs:
        ref, out = want[entry], got[name]
        assert out.shape == ref.shape, (entry, out.shape, ref.shape)
        diff = float(np.max(np.abs(out.astype("float64") - ref.astype("float64")))) \
            if ref.size else 0.0
        scale = float(np.max(np.abs(ref))) if ref.size else 0.0
        assert diff <= tolerance or diff <= tolerance * scale, \
            f"{entry}: max abs {diff:.3g} (largest value {scale:.3g})"
    return built
