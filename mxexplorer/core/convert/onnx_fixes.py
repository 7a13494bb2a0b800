"""The faults of MXNet 1.9.1's ONNX converters, fixed on the way in: passes over the
graph's JSON before conversion (training heads, FullyConnected's flatten, heads listed
twice, fix_gamma BatchNorms) and over the ONNX model after it (PReLU slopes).  Each
returns the report's sentences for what it fixed."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Mapping

from mxexplorer.core.analysis.shapes import Shape
from mxexplorer.core.graph import opinfo
from mxexplorer.core.runtime.errors import UserError


def fixed_note(names: list[str], what: str) -> list[str]:
    """The report's sentence for one kind of fix: how many, the first names, what."""
    if not names:
        return []
    more = ", ..." if len(names) > 3 else ""
    return [f"{len(names)} {what.format(names=', '.join(names[:3]) + more)}"]


def fix_flatten(graph: dict[str, Any]) -> list[str]:
    """FullyConnected without a ``flatten`` attribute given ``flatten=True``, MXNet's
    default: the converter reads a missing attribute as False and multiplies a 4-D
    input without flattening it (onnxruntime then refuses the Gemm)."""
    fixed = []
    for node in graph["nodes"]:
        if node.get("op") == "FullyConnected":
            attrs = node.setdefault("attrs", {})
            if "flatten" not in attrs:
                attrs["flatten"] = "True"
                fixed.append(node["name"])
    return fixed_note(fixed, "FullyConnected node(s) ({names}) given flatten=True, MXNet's "
                         "default (the converter reads the missing attribute as False)")


def fix_softmax_heads(graph: dict[str, Any], rank: Callable[[str], int | None]
                       ) -> list[str]:
    """A ``SoftmaxOutput`` head with its label input (``softmax_label``) becomes its
    inference meaning, ``softmax``: MXNet's converter skips the label without recording
    it, then looks it up by position (IndexError, apache/mxnet#13407).  2-D data,
    ``multi_output`` (axis 1) or ``preserve_shape`` (last axis); ``rank(node name)``:
    the rank of that node's data input."""
    nodes = graph["nodes"]
    notes = []
    for node in nodes:
        if node.get("op") != "SoftmaxOutput" or len(node.get("inputs", [])) < 2:
            continue
        attrs = node.get("attrs", node.get("param", {})) or {}
        flag = {k: opinfo.flag(attrs, k) for k in ("multi_output", "preserve_shape")}
        if not any(flag.values()) and rank(node["name"]) != 2:
            raise UserError(f"SoftmaxOutput '{node['name']}' takes its softmax over every "
                            "axis but the batch here, which has no ONNX export yet: export "
                            "the graph before it (Cut here), or give it multi_output")
        label = nodes[node["inputs"][1][0]]
        node["op"] = "softmax"
        node["attrs"] = {"axis": "1" if flag["multi_output"] else "-1"}
        node.pop("param", None)
        node["inputs"] = node["inputs"][:1]
        notes.append(f"SoftmaxOutput '{node['name']}' exported as softmax (its inference "
                     f"meaning); its label input '{label.get('name')}' dropped")
    return notes


def fix_duplicate_heads(graph: dict[str, Any]) -> list[str]:
    """A graph that lists the same output twice among its heads: ONNX has one output
    per name, so the converter wrote it once and the check found no second."""
    seen, heads, twice = set(), [], []
    for head in graph.get("heads", []):
        key = (head[0], head[1])
        if key in seen:
            twice.append(graph["nodes"][head[0]].get("name", str(head[0])))
            continue
        seen.add(key)
        heads.append(head)
    graph["heads"] = heads
    return fixed_note(twice, "output(s) of ({names}) listed again among the heads, exported "
                         "once (ONNX names each output once)")


def input_rank(sym: Any, shapes: Mapping[str, Shape], name: str) -> int | None:
    """The rank of the first input of node ``name`` at ``shapes`` (None: unknown)."""
    try:
        node = sym.get_internals()[f"{name}_output"]
        data = node.get_children()[0]
        _, out, _ = data.infer_shape_partial(**shapes)
    except Exception:  # noqa: BLE001 - unknown: the fix is not made
        return None
    return len(out[0]) if out and out[0] else None


def fix_gamma(graph: dict[str, Any], params: dict[str, Any], mx: Any) -> list[str]:
    """Gammas of ``fix_gamma=True`` BatchNorms set to 1 (what MXNet computes with)."""
    nodes = graph["nodes"]
    fixed = []
    for node in nodes:
        if node.get("op") != "BatchNorm":
            continue
        attrs = node.get("attrs", node.get("attr", node.get("param", {}))) or {}
        if str(attrs.get("fix_gamma", "True")).lower() not in ("true", "1"):
            continue
        gamma = nodes[node["inputs"][1][0]]["name"] if len(node["inputs"]) > 1 else None
        if gamma in params and float(mx.nd.abs(params[gamma] - 1).max().asscalar()) > 0:
            params[gamma] = mx.nd.ones_like(params[gamma])
            fixed.append(node["name"])
    return fixed_note(fixed, "BatchNorm node(s) with fix_gamma=True ({names}) exported with "
                         "gamma 1, the value MXNet computes with (the converter would "
                         "export the stored gamma)")


def fix_prelu(onnx: Any, model: Any, rank: Callable[[str], int | None]) -> list[str]:
    """PRelu slopes of shape (C,) reshaped to (C, 1, ...) for their input's rank (4 when
    unknown): ONNX broadcasts from the last axis, so a per-channel slope on NCHW data
    fails in onnxruntime; on (N, C) data (C,) is right as it is."""
    from onnx import numpy_helper

    inits = {t.name: t for t in model.graph.initializer}
    fixed = []
    for node in model.graph.node:
        if node.op_type != "PRelu" or len(node.input) < 2 or node.input[1] not in inits:
            continue
        tensor, ndim = inits[node.input[1]], rank(node.name) or 4
        if len(tensor.dims) == 1 and tensor.dims[0] > 1 and ndim > 2:
            value = numpy_helper.to_array(tensor).reshape((-1,) + (1,) * (ndim - 2))
            tensor.CopyFrom(numpy_helper.from_array(value, tensor.name))
            for given in model.graph.input:        # the converter lists it as an input too
                if given.name == tensor.name:
                    dims = given.type.tensor_type.shape.dim
                    del dims[:]
                    for d in value.shape:
                        dims.add().dim_value = int(d)
            fixed.append(node.name)
    return fixed_note(fixed, "PRelu slope(s) ({names}) reshaped from (C,) to (C, 1, ...), the "
                         "per-channel broadcast MXNet does (onnxruntime refused them)")


@contextlib.contextmanager
def no_inner_check(onnx: Any) -> Iterator[None]:
    """MXNet's converter checks the graph it made against the onnx package's newest
    opset, whatever opset it was asked for (a ``mean`` with ``axis`` failed: ReduceMean
    took ``axes`` as an input from opset 18).  Its check is skipped while it converts;
    the model is checked whole, at its own opset, right after."""
    checker = onnx.checker
    inner = checker.check_graph
    checker.check_graph = lambda *args, **kwargs: None
    try:
        yield
    finally:
        checker.check_graph = inner
