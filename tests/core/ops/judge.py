"""MXNet as the judge of one rule: a one-node graph inferred by MXNet 1.9.1 and by the
engine, with the same attributes and input shapes (or dtypes).

``verdict(op, attrs, shapes)`` returns what each says, in MXNet's legacy convention (0 for
an unknown dimension, None for an unknown shape); ``agree(...)`` asserts they say the
same, or that both refuse.  The property tests of every family use it with hypothesis.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.engine import legacy_to_shape, shape_to_legacy

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Verdict:
    """What one side says: ``refused`` (with why), or the inputs' and visible outputs'
    values."""

    refused: str | None
    ins: tuple[Any, ...] = ()
    outs: tuple[Any, ...] = ()

    def same_as(self, other: Verdict) -> bool:
        if self.refused is not None or other.refused is not None:
            return self.refused is not None and other.refused is not None
        return self.ins == other.ins and self.outs == other.outs


def graph_json(op: str, attrs: dict[str, str], n_inputs: int, name: str = "n") -> str:
    """Symbol JSON of ``op`` over ``n_inputs`` variables ``in0``, ``in1`` ..."""
    nodes: list[dict[str, Any]] = [{"op": "null", "name": f"in{i}", "inputs": []}
                                   for i in range(n_inputs)]
    nodes.append({"op": op, "name": name, "attrs": dict(attrs),
                  "inputs": [[i, 0, 0] for i in range(n_inputs)]})
    return json.dumps({"nodes": nodes, "arg_nodes": list(range(n_inputs)),
                       "heads": [[n_inputs, 0, 0]],
                       "attrs": {"mxnet_version": ["int", 10901]}})


def _visible(op: str, attrs: dict[str, str]) -> int:
    return len(opinfo.outputs(op, attrs)[1])


def mxnet_verdict(op: str, attrs: dict[str, str], values: Sequence[Any],
                  kind: str = "shape") -> Verdict:
    """MXNet's answer; ``values`` per input: a shape (legacy convention) or a dtype
    name, None for "not given"."""
    import mxnet as mx
    import numpy as np

    try:
        sym = mx.sym.load_json(graph_json(op, attrs, len(values)))
        internals = sym.get_internals()
        args = internals.list_arguments()
        aux = internals.list_auxiliary_states()
        given = {f"in{i}": v for i, v in enumerate(values) if v is not None}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "shape":
                a, o, x = internals.infer_shape_partial(**given)
            else:
                a, o, x = internals.infer_type_partial(
                    **{k: np.dtype(v) for k, v in given.items()})
    except mx.base.MXNetError as exc:
        return Verdict(str(exc).split("\n")[0][:300] or "refused")

    def show(v: Any) -> Any:
        if kind == "shape":
            return tuple(int(d) for d in v) if v is not None and len(v) else None
        if v is None:
            return None
        name = np.dtype(v).name
        return "bfloat16" if name == "void16" else name    # MXNet's numpy has no bfloat16
    by_name = dict(zip(args, a or [None] * len(args)))
    by_name.update(zip(aux, x or [None] * len(aux)))
    ins = tuple(show(by_name.get(f"in{i}")) for i in range(len(values)))
    names = internals.list_outputs()
    outs = tuple(show(v) for n, v in zip(names, o or [None] * len(names))
                 if n.startswith("n_") or n == "n")
    return Verdict(None, ins, outs)


def engine_verdict(op: str, attrs: dict[str, str], values: Sequence[Any],
                   kind: str = "shape") -> Verdict:
    """The engine's answer, in the same form as :func:`mxnet_verdict`."""
    nodes = [Node("null", f"in{i}", {}, [], {}) for i in range(len(values))]
    nodes.append(Node(op, "n", dict(attrs), [(i, 0, 0) for i in range(len(values))], {}))
    order = list(range(len(nodes)))
    g = engine.graph_of(nodes, order)
    if kind == "shape":
        shapes = {i: legacy_to_shape(v) for i, v in enumerate(values) if v is not None}
        got = engine.infer_shapes(g, shapes)
        show: Any = shape_to_legacy
    else:
        types = {i: v for i, v in enumerate(values) if v is not None}
        got = engine.infer_dtypes(g, types)
        show = lambda v: v  # noqa: E731
    if got.failure is not None:
        return Verdict(got.failure.error.message)
    if got.unruled:
        return Verdict("no rule")
    n = len(values)
    ins = tuple(show(got.values[(i, 0)]) for i in range(n))
    outs = tuple(show(got.values[(n, k)]) for k in range(_visible(op, attrs)))
    return Verdict(None, ins, outs)


def agree(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape"
          ) -> Verdict:
    """Assert the engine and MXNet agree (or both refuse); returns MXNet's verdict."""
    theirs = mxnet_verdict(op, attrs, values, kind)
    ours = engine_verdict(op, attrs, values, kind)
    assert ours.same_as(theirs), (
        f"{op} {attrs} {kind}s {list(values)}:\n  MXNet:  {theirs}\n  engine: {ours}")
    return theirs


def _pinned_verdicts(op: str, attrs: dict[str, str], values: Sequence[Any],
                     pins: Sequence[Any], kind: str = "shape") -> tuple[Verdict, Verdict]:
    """MXNet's and the engine's answers for ``op`` whose visible output ``j`` feeds
    ``_slice_assign(pin_j, out_j, begin=(), end=())``, which gives ``out_j`` the shape (and
    dtype) of the variable ``pin_j``: the op learns from its outputs, as in a real graph."""
    import mxnet as mx
    import numpy as np

    n_in = len(values)
    visible = len(opinfo.outputs(op, attrs)[1])
    nodes: list[dict[str, Any]] = [{"op": "null", "name": f"in{i}", "inputs": []}
                                   for i in range(n_in)]
    nodes.append({"op": op, "name": "n", "attrs": dict(attrs),
                  "inputs": [[i, 0, 0] for i in range(n_in)]})
    heads = [[n_in, j, 0] for j in range(visible)]
    for j in range(visible):
        nodes.append({"op": "null", "name": f"pin{j}", "inputs": []})
        nodes.append({"op": "_slice_assign", "name": f"fix{j}",
                      "attrs": {"begin": "()", "end": "()"},
                      "inputs": [[len(nodes) - 1, 0, 0], [n_in, j, 0]]})
        heads.append([len(nodes) - 1, 0, 0])
    text = json.dumps({"nodes": nodes, "arg_nodes": [k for k, nd in enumerate(nodes)
                                                     if nd["op"] == "null"],
                       "heads": heads, "attrs": {"mxnet_version": ["int", 10901]}})
    given_values = {f"in{i}": v for i, v in enumerate(values) if v is not None}
    given_values.update({f"pin{j}": v for j, v in enumerate(pins) if v is not None})

    def legacy(v: Any) -> Any:
        if kind == "dtype":
            return None if v is None else np.dtype(v).name
        return tuple(int(d) for d in v) if v is not None and len(v) else None
    try:
        internals = mx.sym.load_json(text).get_internals()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "shape":
                a, o, _ = internals.infer_shape_partial(**given_values)
            else:
                a, o, _ = internals.infer_type_partial(
                    **{k: np.dtype(v) for k, v in given_values.items()})
        by_arg = dict(zip(internals.list_arguments(), a))
        by_out = dict(zip(internals.list_outputs(), o))
        outs = [by_out[k] for k in internals.list_outputs() if k == "n" or
                k.startswith("n_")]
        theirs = Verdict(None, tuple(legacy(by_arg[f"in{i}"]) for i in range(n_in)),
                         tuple(legacy(v) for v in outs))
    except mx.base.MXNetError as exc:
        theirs = Verdict(str(exc).split("\n")[0][:300] or "refused")
    graph_nodes = [Node(nd["op"], nd["name"], dict(nd.get("attrs", {})),
                        [tuple(e) for e in nd["inputs"]], {}) for nd in nodes]
    g = engine.graph_of(graph_nodes, list(range(len(graph_nodes))))
    index = {nd["name"]: k for k, nd in enumerate(nodes)}
    show: Any = shape_to_legacy
    if kind == "shape":
        got = engine.infer_shapes(g, {index[k]: legacy_to_shape(v)
                                      for k, v in given_values.items()})
    else:
        got = engine.infer_dtypes(g, {index[k]: v for k, v in given_values.items()})
        show = lambda v: v  # noqa: E731
    if got.failure is not None:
        ours = Verdict(got.failure.error.message)
    else:
        ours = Verdict(None, tuple(show(got.values[(i, 0)]) for i in range(n_in)),
                       tuple(show(got.values[(n_in, j)]) for j in range(visible)))
    return theirs, ours


def agree_pinned(op: str, attrs: dict[str, str], values: Sequence[Any],
                 pins: Sequence[Any], kind: str = "shape") -> None:
    theirs, ours = _pinned_verdicts(op, attrs, values, pins, kind)
    assert ours.same_as(theirs), (
        f"{op} {attrs} {kind}s {list(values)} pinned to {list(pins)}:\n  MXNet:  {theirs}\n"
        f"  engine: {ours}")
