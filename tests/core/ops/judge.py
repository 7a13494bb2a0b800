"""MXNet as the judge of one rule: a one-node graph inferred by MXNet 1.9.1 and by the
engine, with the same attributes and input shapes (or dtypes).

``verdicts(op, attrs, values)`` returns what each says, in MXNet's legacy convention (0
for an unknown dimension, None for an unknown shape), on the one-node graph or with the
op's outputs read by "pins" (the op then learns from its outputs, as in a real graph);
``agree(...)`` asserts they say the same, or that both refuse.  The property tests of
every family use them with hypothesis.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from typing import Any, Literal, Optional, Sequence

from hypothesis import strategies as st

from mxexplorer.core.graph import opinfo
from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.engine import legacy_to_shape, shape_to_legacy

Shape = tuple[int, ...]
#: the op that reads a pinned output: ``_slice_assign(pin, out, begin=(), end=())`` or
#: ``elemwise_add(pin, out)``; either gives ``out`` the shape and dtype of ``pin``
PinWith = Literal["slice_assign", "elemwise_add"]


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


def _one_node(op: str, attrs: dict[str, str], n_inputs: int, name: str = "n"
              ) -> list[dict[str, Any]]:
    """Nodes of ``op`` over ``n_inputs`` variables ``in0``, ``in1`` ..."""
    nodes: list[dict[str, Any]] = [{"op": "null", "name": f"in{i}", "inputs": []}
                                   for i in range(n_inputs)]
    nodes.append({"op": op, "name": name, "attrs": dict(attrs),
                  "inputs": [[i, 0, 0] for i in range(n_inputs)]})
    return nodes


def _symbol_json(nodes: list[dict[str, Any]], heads: list[list[int]]) -> str:
    return json.dumps({"nodes": nodes, "arg_nodes": [k for k, nd in enumerate(nodes)
                                                     if nd["op"] == "null"],
                       "heads": heads, "attrs": {"mxnet_version": ["int", 10901]}})


def graph_json(op: str, attrs: dict[str, str], n_inputs: int, name: str = "n") -> str:
    """Symbol JSON of ``op`` over ``n_inputs`` variables ``in0``, ``in1`` ..."""
    return _symbol_json(_one_node(op, attrs, n_inputs, name), [[n_inputs, 0, 0]])


def _visible(op: str, attrs: dict[str, str]) -> int:
    return len(opinfo.outputs(op, attrs)[1])


def _engine_graph(nodes: list[dict[str, Any]], n_in: int, total: int | None
                  ) -> engine.Graph:
    """The engine's graph of ``nodes``; the op (node ``n_in``) has ``total`` outputs if
    the op table leaves its count to the file."""
    graph_nodes = [Node(nd["op"], nd["name"], dict(nd.get("attrs", {})),
                        [tuple(e) for e in nd["inputs"]], {}) for nd in nodes]
    hint = None if total is None else (lambda nid: total if nid == n_in else None)
    return engine.graph_of(graph_nodes, list(range(len(graph_nodes))), hint)


def _mxnet_side(nodes: list[dict[str, Any]], heads: list[list[int]],
                given: dict[str, Any], n_in: int, kind: str) -> Verdict:
    """MXNet's answer on the graph of ``nodes``: the inputs ``in0`` ... and the outputs
    of the op named ``n``."""
    import mxnet as mx
    import numpy as np

    try:
        internals = mx.sym.load_json(_symbol_json(nodes, heads)).get_internals()
        args = internals.list_arguments()
        aux = internals.list_auxiliary_states()
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
    ins = tuple(show(by_name.get(f"in{i}")) for i in range(n_in))
    names = internals.list_outputs()
    outs = tuple(show(v) for n, v in zip(names, o or [None] * len(names))
                 if n.startswith("n_") or n == "n")
    return Verdict(None, ins, outs)


def _engine_side(nodes: list[dict[str, Any]], given: dict[str, Any], n_in: int,
                 kind: str, count: int, total: int | None) -> Verdict:
    """The engine's answer on the graph of ``nodes``, in the form of :func:`_mxnet_side`:
    the inputs and the op's first ``count`` outputs."""
    g = _engine_graph(nodes, n_in, total)
    index = {nd["name"]: k for k, nd in enumerate(nodes)}
    if kind == "shape":
        got = engine.infer_shapes(g, {index[k]: legacy_to_shape(v)
                                      for k, v in given.items()})
        show: Any = shape_to_legacy
    else:
        got = engine.infer_dtypes(g, {index[k]: v for k, v in given.items()})
        show = lambda v: v  # noqa: E731
    if got.failure is not None:
        return Verdict(got.failure.error.message)
    if got.unruled:
        return Verdict("no rule")
    ins = tuple(show(got.values[(i, 0)]) for i in range(n_in))
    outs = tuple(show(got.values[(n_in, j)]) for j in range(count))
    return Verdict(None, ins, outs)


def _given(values: Sequence[Any]) -> dict[str, Any]:
    return {f"in{i}": v for i, v in enumerate(values) if v is not None}


def verdicts(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape",
             pins: Sequence[Any] | None = None, total: int | None = None,
             pin_with: PinWith = "slice_assign") -> tuple[Verdict, Verdict]:
    """MXNet's and the engine's answers (in that order) for ``op`` over variables ``in0``,
    ``in1`` ... given ``values``: per input a shape (legacy convention) or a dtype name
    (``kind="dtype"``), None for "not given".

    ``pins``: None, the one-node graph.  Otherwise the op's outputs are read by pins, so the
    op also learns from them: with ``pin_with="slice_assign"`` every output compared feeds
    ``_slice_assign(pin_j, out_j, begin=(), end=())`` (``pins[j]`` None or missing: a
    variable not given); with ``"elemwise_add"`` output ``j`` feeds
    ``elemwise_add(pin_j, out_j)`` only where ``pins[j]`` is given.

    ``total``: the node's output count as a file gives it (``node_row_ptr``), which the
    engine uses for an op the table does not count; all the outputs the engine then counts
    are compared, else the visible outputs of the op table."""
    n_in = len(values)
    nodes = _one_node(op, attrs, n_in)
    if total is None:
        count = _visible(op, attrs)
    else:
        g = _engine_graph(nodes, n_in, total)
        count = g.counts[g.position[n_in]]
    heads = [[n_in, 0, 0]]
    given = _given(values)
    for j in range(count if pins is not None else 0):
        pin = pins[j] if pins is not None and j < len(pins) else None
        if pin is None and pin_with == "elemwise_add":
            continue
        nodes.append({"op": "null", "name": f"pin{j}", "inputs": []})
        reads = [[len(nodes) - 1, 0, 0], [n_in, j, 0]]
        if pin_with == "slice_assign":
            nodes.append({"op": "_slice_assign", "name": f"fix{j}",
                          "attrs": {"begin": "()", "end": "()"}, "inputs": reads})
        else:
            nodes.append({"op": "elemwise_add", "name": f"fix{j}", "attrs": {},
                          "inputs": reads})
        heads.append([len(nodes) - 1, 0, 0])
        if pin is not None:
            given[f"pin{j}"] = pin
    return (_mxnet_side(nodes, heads, given, n_in, kind),
            _engine_side(nodes, given, n_in, kind, count, total))


def mxnet_verdict(op: str, attrs: dict[str, str], values: Sequence[Any],
                  kind: str = "shape") -> Verdict:
    """MXNet's answer on the one-node graph (see :func:`verdicts`)."""
    n_in = len(values)
    return _mxnet_side(_one_node(op, attrs, n_in), [[n_in, 0, 0]], _given(values), n_in,
                       kind)


def engine_verdict(op: str, attrs: dict[str, str], values: Sequence[Any],
                   kind: str = "shape") -> Verdict:
    """The engine's answer on the one-node graph, in the same form as
    :func:`mxnet_verdict`."""
    n_in = len(values)
    return _engine_side(_one_node(op, attrs, n_in), _given(values), n_in, kind,
                        _visible(op, attrs), None)


def agree(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape",
          pins: Sequence[Any] | None = None, total: int | None = None,
          pin_with: PinWith = "slice_assign") -> Verdict:
    """Assert the engine and MXNet agree (or both refuse) on :func:`verdicts`' graph;
    returns MXNet's verdict."""
    theirs, ours = verdicts(op, attrs, values, kind, pins, total, pin_with)
    pinned = "" if pins is None else f" pinned ({pin_with}) to {list(pins)}"
    assert ours.same_as(theirs), (
        f"{op} {attrs} {kind}s {list(values)}{pinned}:\n  MXNet:  {theirs}\n"
        f"  engine: {ours}")
    return theirs


def agree_pinned(op: str, attrs: dict[str, str], values: Sequence[Any],
                 pins: Sequence[Any], kind: str = "shape") -> None:
    """:func:`agree` with every output read by ``_slice_assign`` from its pin."""
    agree(op, attrs, values, kind, pins)



def message(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape"
            ) -> str:
    """The engine's refusal, in its words (MXNet refuses too)."""
    got = engine_verdict(op, attrs, values, kind)
    assert got.refused is not None, got
    assert mxnet_verdict(op, attrs, values, kind).refused is not None
    return got.refused


# ------------------------------------------------------------ hypothesis strategies
#: legacy-convention shapes (0 an unknown dim; None not given): the families' draws
Legacy = Optional[tuple[int, ...]]


def shapes(min_ndim: int = 1, max_ndim: int = 4, none: bool = True,
           dims: Sequence[int] = (0, 1, 2, 3, 4, 1, 2, 3)) -> st.SearchStrategy[Legacy]:
    """Legacy-convention shapes of sizes drawn from ``dims``: 0 an unknown dim; None
    (sometimes) not given."""
    s = st.lists(st.sampled_from(list(dims)), min_size=min_ndim, max_size=max_ndim).map(tuple)
    return st.one_of(st.none(), s) if none else s


@st.composite
def varied(draw: st.DrawFn, base: Sequence[int], keep: int = 8) -> Legacy:
    """``base`` with some dims unknown, changed, or the whole shape missing."""
    if draw(st.integers(0, keep)) == 0:
        return None
    out = []
    for d in base:
        r = draw(st.integers(0, 11))
        out.append(0 if r < 2 else d + 1 if r == 2 else d)
    return tuple(out)
