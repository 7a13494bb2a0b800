"""The sequence family against MXNet 1.9.1 (the judge): RNN, SequenceMask, SequenceLast,
and SequenceReverse, with attributes and input shapes or dtypes
(partly unknown, missing, or wrong) drawn by hypothesis, on which the engine and MXNet
infer the same or both refuse; and the plain-words messages.

Shapes are given in MXNet's legacy convention (0 an unknown dim, None not given).
:func:`check` can "pin" the op's visible outputs: output ``j`` then feeds
``elemwise_add(pin_j, out_j)``, so what the readers need meets what the op gives.
"""
from __future__ import annotations

import json
import warnings
from typing import Any, Optional, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.engine import legacy_to_shape, shape_to_legacy
from mxexplorer.core.ops.sequence import rnn_param_size
from tests.core.ops.judge import Verdict, agree, message

FEW = settings(max_examples=40, deadline=None)
SOME = settings(max_examples=80, deadline=None)
MANY = settings(max_examples=150, deadline=None)

Legacy = Optional[tuple[int, ...]]
DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]


# ------------------------------------------------------------------------ the judge
def check(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape",
          pins: Sequence[Any] = ()) -> Verdict:
    """The engine and MXNet agree (or both refuse), with the outputs pinned or not:
    visible output ``j`` feeds ``elemwise_add(pin_j, out_j)`` where ``pins[j]`` is given."""
    return agree(op, attrs, values, kind, pins, pin_with="elemwise_add")



# ----------------------------------------------------------------------- strategies
dims = st.sampled_from([0, 1, 2, 3, 4, 5, 2, 3])
dtypes = st.one_of(st.none(), st.sampled_from(DTYPES))


def shapes(min_ndim: int = 1, max_ndim: int = 4, none: bool = True
           ) -> st.SearchStrategy[Legacy]:
    s = st.lists(dims, min_size=min_ndim, max_size=max_ndim).map(tuple)
    return st.one_of(st.none(), s) if none else s


@st.composite
def varied(draw: st.DrawFn, shape: Legacy, odds: int = 4) -> Legacy:
    """``shape`` as it is, with some dims unknown (0), or (1 in ``odds``) another one."""
    if shape is None:
        return None
    k = draw(st.integers(0, odds))
    if k == 1:
        return draw(shapes())
    if k == 2:
        return tuple(0 if draw(st.booleans()) else d for d in shape)
    if k == 3:
        return None
    return shape


def mostly(value: Any, other: st.SearchStrategy[Any], odds: int = 4) -> Any:
    """``value`` ``odds`` times in ``odds + 1``, else a draw of ``other``."""
    return st.integers(0, odds).flatmap(lambda k: other if k == 1 else st.just(value))


# ============================================================================ RNN
@st.composite
def rnn_case(draw: st.DrawFn) -> tuple[dict[str, str], list[Legacy], list[Legacy]]:
    mode = draw(st.sampled_from(["rnn_relu", "rnn_tanh", "lstm", "gru"]))
    layers = draw(st.sampled_from([1, 1, 2, 3, 0]))
    hidden = draw(st.sampled_from([1, 2, 3, 4, 0]))
    bidir = draw(st.booleans())
    outs = draw(st.booleans())
    seq = draw(st.integers(0, 4)) == 1
    proj = draw(st.sampled_from([None] * 6 + [2, 3, 0, -1, -2]))
    attrs = {"mode": mode, "num_layers": str(layers), "state_size": str(hidden),
             "bidirectional": str(bidir), "state_outputs": str(outs)}
    if draw(st.integers(0, 4)) == 1:
        attrs["p"] = draw(st.sampled_from(["0.5", "1", "0", "-0.1", "2", "nan"]))
    if proj is not None:
        attrs["projection_size"] = str(proj)
    if seq:
        attrs["use_sequence_length"] = "True"
    t, n, i = draw(st.tuples(dims, dims, dims))
    data: Legacy = draw(mostly((t, n, i), st.sampled_from([None, (t, n), (t, n, i, 2)])))
    dirs = 2 if bidir else 1
    layer = proj if proj is not None else hidden
    total = dirs * layers
    vals: list[Legacy] = [data]
    size = rnn_param_size(layers, i or 3, hidden, dirs, mode, proj)
    vals.append(draw(varied((max(size, 1),), 8)))
    vals.append(draw(varied((total, n, max(layer, 0)), 8)))
    if mode == "lstm":
        vals.append(draw(varied((total, n, hidden), 8)))
    if seq:
        vals.append(draw(varied((n,), 8)))
    if draw(st.integers(0, 12)) == 1:
        vals = vals[:-1] if draw(st.booleans()) else vals + [(3,)]
    expected = [(t, n, dirs * max(layer, 0)), (total, n, max(layer, 0)), (total, n, hidden)]
    pins = [draw(st.one_of(st.none(), varied(shape, 8))) for shape in expected]
    return attrs, vals, pins


@MANY
@given(rnn_case())
def test_rnn_shapes(case: tuple[dict[str, str], list[Legacy], list[Legacy]]) -> None:
    attrs, values, pins = case
    check("RNN", attrs, values, pins=pins)


@SOME
@given(st.sampled_from(["rnn_relu", "lstm", "gru"]), st.booleans(), st.booleans(),
       st.data())
def test_rnn_dtypes(mode: str, seq: bool, outs: bool, data: st.DataObject) -> None:
    attrs = {"mode": mode, "num_layers": "1", "state_size": "4",
             "use_sequence_length": str(seq), "state_outputs": str(outs)}
    n = 3 + (mode == "lstm") + seq
    if data.draw(st.integers(0, 10)) == 1:
        n += data.draw(st.sampled_from([-1, 1]))
    first = data.draw(st.sampled_from(["float32", "float16", "float64", None]))
    types = [first] + [data.draw(st.one_of(st.none(), st.just(first), st.sampled_from(
        DTYPES))) for _ in range(n - 1)]
    pins = [data.draw(st.one_of(st.none(), st.just(first), dtypes)) for _ in range(3)]
    check("RNN", attrs, types, "dtype", pins=pins)


# ===================================================== SequenceMask/Last/Reverse
SEQUENCE_OPS = ["SequenceMask", "SequenceLast", "SequenceReverse"]


@MANY
@given(st.sampled_from(SEQUENCE_OPS), st.booleans(),
       st.sampled_from([0, 0, 0, 1, 1, 1, 2, -1]), shapes(2, 4, none=False), st.data())
def test_sequence_shapes(op: str, seq: bool, axis: int, shape: Legacy,
                         data: st.DataObject) -> None:
    attrs = {"use_sequence_length": str(seq)}
    if axis or data.draw(st.booleans()):
        attrs["axis"] = str(axis)
    shape = data.draw(mostly(shape, st.one_of(st.none(), shapes(1, 1)), 8))
    values: list[Legacy] = [shape]
    batch = 2
    if shape and len(shape) > 1:
        batch = shape[0] if axis == 1 else shape[1]
    if seq:
        values.append(data.draw(varied((batch,), 8)))
    if data.draw(st.integers(0, 10)) == 1:
        values = values[:-1] if len(values) == 2 else values + [(2,)]
    out = shape
    if op == "SequenceLast" and shape is not None and len(shape) > 1:
        out = (batch, *shape[2:])
    pin = data.draw(st.one_of(st.none(), varied(out, 8)))
    check(op, attrs, values, pins=[pin])


@SOME
@given(st.sampled_from(SEQUENCE_OPS), st.booleans(), st.data())
def test_sequence_dtypes(op: str, seq: bool, data: st.DataObject) -> None:
    n = 2 if seq else 1
    if data.draw(st.integers(0, 10)) == 1:
        n = 3 - n
    types = [data.draw(dtypes) for _ in range(n)]
    check(op, {"use_sequence_length": str(seq)}, types, "dtype", pins=[data.draw(dtypes)])


# ============================================================== chosen examples
def test_rnn_lstm_example() -> None:
    attrs = {"mode": "lstm", "num_layers": "2", "state_size": "4", "bidirectional": "1",
             "state_outputs": "1", "projection_size": "3"}
    verdict = check("RNN", attrs, [(5, 2, 3), None, None, None])
    assert verdict.ins == ((5, 2, 3), (656,), (4, 2, 3), (4, 2, 4))
    assert verdict.outs == ((5, 2, 6), (4, 2, 3), (4, 2, 4))


def test_rnn_unknown_input_size_counts_as_minus_one() -> None:
    """MXNet computes the parameter count with the unknown input size as -1."""
    attrs = {"mode": "lstm", "num_layers": "2", "state_size": "4"}
    verdict = check("RNN", attrs, [(5, 2, 0), None, None, None])
    assert verdict.ins[1] == (240,)


def test_sequence_last_drops_the_sequence_axis() -> None:
    verdict = check("SequenceLast", {"axis": "1", "use_sequence_length": "1"},
                    [(5, 2, 3, 4), None])
    assert verdict.ins == ((5, 2, 3, 4), (5,)) and verdict.outs == ((5, 3, 4),)


# ====================================================================== messages
def test_rnn_count_message() -> None:
    text = message("RNN", {"mode": "lstm", "num_layers": "1", "state_size": "4"},
                   [(5, 2, 3), None, None])
    assert "state_cell" in text and "mode='lstm'" in text


def test_rnn_rank_message() -> None:
    text = message("RNN", {"mode": "gru", "num_layers": "1", "state_size": "4"},
                   [(5, 2), None, None])
    assert "'in0' (data)" in text and "3-d" in text


def test_rnn_parameters_message() -> None:
    text = message("RNN", {"mode": "gru", "num_layers": "1", "state_size": "4"},
                   [(5, 2, 3), (10,), None])
    assert "parameters" in text and "(108,)" in text and "state_size=4" in text


def test_rnn_negative_message() -> None:
    text = message("RNN", {"mode": "gru", "num_layers": "0", "state_size": "4"},
                   [(5, 2, 3), None, None])
    assert "num_layers" in text and "negative" in text


def test_rnn_dropout_range_message() -> None:
    attrs = {"mode": "gru", "num_layers": "1", "state_size": "4", "p": "2"}
    # the parser's bound (in the op table, found from MXNet): "p='2' is above its
    # largest value 1"
    assert "p='2' is above its largest value 1" in message("RNN", attrs, [None, None, None])
    assert "p='2'" in message("RNN", attrs, ["float32", None, None], "dtype")


def test_rnn_dtype_messages() -> None:
    attrs = {"mode": "gru", "num_layers": "1", "state_size": "4"}
    assert "'in0' (data)" in message("RNN", attrs, [None, None, None], "dtype")
    text = message("RNN", attrs, ["float16", None, "float32"], "dtype")
    assert "'in2' (state)" in text and "float16" in text


def test_sequence_messages() -> None:
    assert "axis=2" in message("SequenceMask", {"axis": "2"}, [(5, 2, 3)])
    assert "axis=1" in message("SequenceReverse", {"axis": "1"}, [(5, 2, 3)])
    assert "rank" in message("SequenceLast", {}, [(5,)])
    assert "unknown" in message("SequenceMask", {}, [None])
    text = message("SequenceMask", {"use_sequence_length": "1"}, [(5, 2, 3), (3,)])
    assert "'in1' (sequence_length)" in text and "(2,)" in text
    assert "use_sequence_length" in message("SequenceLast", {}, [(5, 2), (2,)])


# ================================================ _foreach, _while_loop, _cond
def flow_verdicts(sym: Any, values: dict[str, Any], kind: str = "shape"
                  ) -> tuple[Verdict, Verdict]:
    """MXNet's and the engine's answers for a graph built with MXNet's control-flow API
    (nodes with a ``subgraphs`` field): every argument's value and every head's."""
    import mxnet as mx
    import numpy as np

    text = sym.tojson()
    raw = json.loads(text)
    loaded = mx.sym.load_json(text)
    args = loaded.list_arguments()
    given = {k: v for k, v in values.items() if v is not None and k in args}

    def legacy(v: Any) -> Any:
        if kind == "dtype":
            return None if v is None else np.dtype(v).name
        return tuple(int(d) for d in v) if v is not None and len(v) else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "shape":
                a, o, _ = loaded.infer_shape_partial(**given)
            else:
                a, o, _ = loaded.infer_type_partial(
                    **{k: np.dtype(v) for k, v in given.items()})
        theirs = Verdict(None, tuple(legacy(v) for v in a), tuple(legacy(v) for v in o))
    except mx.base.MXNetError as exc:
        theirs = Verdict(str(exc).split("\n")[0][:300] or "refused")
    nodes = [Node(nd["op"], nd["name"], dict(nd.get("attrs", {})),
                  [tuple(e) for e in nd["inputs"]],
                  {k: v for k, v in nd.items() if k not in ("op", "name", "attrs", "inputs")})
             for nd in raw["nodes"]]
    g = engine.graph_of(nodes, list(range(len(nodes))))
    index = {nd.name: k for k, nd in enumerate(nodes) if nd.op == "null"}
    if kind == "shape":
        got = engine.infer_shapes(g, {index[k]: legacy_to_shape(v) for k, v in given.items()})
        show: Any = shape_to_legacy
    else:
        got = engine.infer_dtypes(g, {index[k]: v for k, v in given.items()})
        show = lambda v: v  # noqa: E731
    if got.failure is not None:
        ours = Verdict(got.failure.error.message)
    else:
        ours = Verdict(None, tuple(show(got.values[(index[k], 0)]) for k in args),
                       tuple(show(got.values[(h[0], h[1])]) for h in raw["heads"]))
    return theirs, ours


def flow_check(sym: Any, values: dict[str, Any], kind: str = "shape") -> Verdict:
    theirs, ours = flow_verdicts(sym, values, kind)
    assert ours.same_as(theirs), (
        f"{kind}s {values}:\n  MXNet:  {theirs}\n  engine: {ours}")
    return theirs


def _foreach_graph(body: int, n_data: int, pinned: bool = False) -> Any:
    """One of a few loop bodies over ``n_data`` sequences, one state and a weight; with
    ``pinned``, each output read by ``elemwise_add(pin_j, out_j)``."""
    import mxnet as mx

    data = [mx.sym.var(f"x{i}") for i in range(n_data)]
    state, weight = mx.sym.var("s"), mx.sym.var("w")

    def step(xs: Any, states: Any) -> Any:
        x = xs[0] if isinstance(xs, list) else xs
        for extra in (xs[1:] if isinstance(xs, list) else []):
            x = x + extra
        if body == 0:
            h = mx.sym.tanh(x + states[0]) * weight
            return [h, h * 2], [h]
        if body == 1:
            h = mx.sym.FullyConnected(x, weight, num_hidden=3, no_bias=True) + states[0]
            return [mx.sym.tanh(h)], [h]
        return [x * 2], [states[0]]                  # the state passes through
    outs, states = mx.sym.contrib.foreach(step, data if n_data > 1 else data[0], [state])
    heads = list(outs) + list(states)
    if pinned:
        heads = [mx.sym.elemwise_add(mx.sym.var(f"pin{j}"), h) for j, h in enumerate(heads)]
    return mx.sym.Group(heads)


@SOME
@given(st.sampled_from([0, 1, 2]), st.sampled_from([1, 1, 2]), st.booleans(), st.data())
def test_foreach_shapes(body: int, n_data: int, pinned: bool, data: st.DataObject) -> None:
    t, n, k = data.draw(st.tuples(dims, dims, dims))
    values: dict[str, Any] = {f"x{i}": data.draw(varied((t, n, k), 6))
                              for i in range(n_data)}
    state = (n, 3) if body == 1 else (n, k)
    values["s"] = data.draw(varied(state, 6))
    values["w"] = data.draw(varied((3, k) if body == 1 else (n, k), 6))
    if pinned:
        outs = [(t, n, k), (t, n, k), state] if body == 0 else [(t, *state), state]
        for j, shape in enumerate(outs):
            values[f"pin{j}"] = data.draw(varied(shape, 6))
    flow_check(_foreach_graph(body, n_data, pinned), values)


@SOME
@given(st.sampled_from([0, 1, 2]), st.sampled_from([1, 2]), st.data())
def test_foreach_dtypes(body: int, n_data: int, data: st.DataObject) -> None:
    first = data.draw(st.sampled_from(["float32", "float16", "float64"]))
    names = [f"x{i}" for i in range(n_data)] + ["s", "w"]
    values = {k: data.draw(mostly(first, dtypes, 3)) for k in names}
    flow_check(_foreach_graph(body, n_data), values, "dtype")


def _while_graph(body: int) -> Any:
    import mxnet as mx

    i, s = mx.sym.var("i"), mx.sym.var("s")

    def cond(i: Any, s: Any) -> Any:
        return i < 5

    def func(i: Any, s: Any) -> Any:
        if body == 0:
            return [s * 2], [i + 1, s + i]
        return [], [i + 1, mx.sym.Cast(s, dtype="float16")]
    outs, states = mx.sym.contrib.while_loop(cond, func, [i, s], max_iterations=7)
    return mx.sym.Group(list(outs) + list(states))


def _cond_graph(body: int) -> Any:
    import mxnet as mx

    p, i, s = mx.sym.var("p"), mx.sym.var("i"), mx.sym.var("s")
    if body == 0:
        outs = mx.sym.contrib.cond(p > 0, lambda: [i * 2, s], lambda: [i - 1, s + 1])
    else:
        outs = mx.sym.contrib.cond(p, lambda: [i + s], lambda: [mx.sym.Cast(i, "int32")])
    return mx.sym.Group(list(outs) if isinstance(outs, list) else [outs])


@SOME
@given(st.sampled_from(["while", "cond"]), st.sampled_from([0, 1]), st.data())
def test_while_and_cond(op: str, body: int, data: st.DataObject) -> None:
    sym = _while_graph(body) if op == "while" else _cond_graph(body)
    names = ["i", "s"] + (["p"] if op == "cond" else [])
    types = {k: data.draw(st.one_of(st.none(), st.sampled_from(
        ["float32", "float16", "int32"]))) for k in names}
    flow_check(sym, types, "dtype")
    shape = data.draw(shapes(1, 2))
    flow_check(sym, {k: shape for k in names})


def test_foreach_example() -> None:
    verdict = flow_check(_foreach_graph(0, 1), {"x0": (5, 2, 3), "s": (2, 3)})
    assert verdict.ins == ((5, 2, 3), (2, 3), (2, 3))
    assert verdict.outs == ((5, 2, 3), (5, 2, 3), (2, 3))


def test_foreach_messages() -> None:
    theirs, ours = flow_verdicts(_foreach_graph(0, 1), {"x0": (5, 2, 3), "s": (2, 4)})
    assert theirs.refused is not None and ours.refused is not None
    assert "loop body" in ours.refused and "'s-0'" in ours.refused
    theirs, ours = flow_verdicts(_foreach_graph(0, 1), {"s": (2, 3)})
    assert theirs.refused is not None and ours.refused is not None
    assert "'x0'" in ours.refused and "unknown" in ours.refused
