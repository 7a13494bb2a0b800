"""Rules for the sequence family: the recurrent layer, the ops that walk a sequence and
the control-flow ops, as MXNet 1.9.1 infers their shapes and dtypes.

Owns ``RNN`` (modes ``rnn_relu``, ``rnn_tanh``, ``lstm``, ``gru``; stacked, bidirectional,
with a projection, the state outputs and the ``sequence_length`` input; the flat
``parameters`` vector's length computed from the data as MXNet's ``GetRnnParamSize``
does, 32-bit arithmetic and an unknown input size of -1 included), ``SequenceMask``,
``SequenceLast`` and ``SequenceReverse``: they infer forward only (nothing comes back
from the outputs), refill their outputs rather than merge them, wait for (or, the
sequence ops, refuse) a data of unknown shape, and refuse a data of unknown dtype.
``_rnn_param_concat`` belongs to the layout family, with ``Concat``.

Also owns ``_foreach``, ``_while_loop`` and ``_cond``, whose rules run the engine's pass
over the graphs in the node's ``subgraphs`` field (MXNet's ``InferSubgraphShape`` and
``InferSubgraphDataType``; an inner op without a rule is asked of the pass's oracle):
``_foreach`` infers its shapes (one step of each sequence through the body, the outputs
stacked again, both ways) and dtypes; ``_while_loop`` and ``_cond`` have no shape rule
in MXNet (their outputs' shapes depend on the data, so they stay unknown) and infer
dtypes through their condition, body and branch graphs.  Messages name the attribute or
input at fault.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Sequence

from mxexplorer.core.graph import fused
from mxexplorer.core.ops import engine
from mxexplorer.core.ops.base import (
    Call,
    Conflict,
    Rule,
    RuleError,
    Shape,
    fmt,
    merge,
    no_shape,
    table,
)

_U32 = 1 << 32
_U64 = 1 << 64


# ------------------------------------------------------------------ C arithmetic
def _i32(x: int) -> int:
    """A value stored into a C ``int``."""
    x %= _U32
    return x - _U32 if x >= 1 << 31 else x


def _i64(x: int) -> int:
    """A value stored into a C ``int64_t`` (``index_t``)."""
    x %= _U64
    return x - _U64 if x >= 1 << 63 else x


# ------------------------------------------------------------------ shared steps
def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def count_inputs(c: Call, names: Sequence[str], why: str = "") -> None:
    """The node has exactly the inputs ``names`` (MXNet checks the count)."""
    if len(c.ins) != len(names):
        listed = ", ".join(names)
        raise RuleError(f"has {_plural(len(c.ins), 'input')}, but this layer takes "
                        f"{len(names)} ({listed}){why}")


def put_out(c: Call, i: int, value: Any, why: str = "") -> None:
    """Output ``i`` becomes ``value``: MXNet's rule clears its outputs and pushes the new
    ones, so a known output is replaced, not merged.  A known output that disagrees is
    refused here (in MXNet the layer that reads it refuses)."""
    old = c.outs[i]
    if old is not None and value is not None:
        try:
            if c.kind == "shape":
                merge(old, value)
            elif old != value:
                raise Conflict()
        except Conflict:
            c.set_out(i, value, why)
    c.outs[i] = value


def no_negative(c: Call, blame: str) -> None:
    """MXNet refuses a shape with a size below -1 wherever a rule wrote one (-1 itself
    reads as unknown); ``blame`` says which attributes made it."""
    for i, s in enumerate(c.ins):
        if s is not None and any(d < -1 for d in s):
            raise RuleError(f"{c.input_label(i)} would have shape "
                            f"({', '.join(str(d) for d in s)}), with a negative size: "
                            f"{blame}", input=i)
    for i, s in enumerate(c.outs):
        if s is not None and any(d < -1 for d in s):
            name = "the output" if len(c.outs) == 1 else f"output {i}"
            raise RuleError(f"{name} would have shape ({', '.join(str(d) for d in s)}), "
                            f"with a negative size: {blame}", output=i)


def _data_type(c: Call) -> str:
    """The data's dtype, which these ops need known when their dtype rule runs."""
    t = c.ins[0] if c.ins else None
    if t is None:
        c.fail(f"the type of {c.input_label(0)} is unknown: {c.op} needs the data's dtype "
               f"known (give the input a dtype)", input=0)
    assert t is not None
    return str(t)


# ============================================================================ RNN
_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def rnn_inputs(p: dict[str, Any]) -> list[str]:
    """The inputs an RNN node takes, in order (MXNet's ``ListRnnInputNames``)."""
    names = ["data", "parameters", "state"]
    if p["mode"] == "lstm":
        names.append("state_cell")
    if p["use_sequence_length"]:
        names.append("sequence_length")
    return names


def _rnn_count(c: Call) -> list[str]:
    p = float(c.p["p"])
    if p < 0 or p > 1:          # MXNet's parser checks the range (the op table lacks it)
        c.fail(f"p={c.attrs.get('p', p)} is not a dropout rate: use 0 to 1", attr="p")
    names = rnn_inputs(c.p)
    extra = []
    if c.p["mode"] == "lstm":
        extra.append("mode='lstm' adds state_cell")
    if c.p["use_sequence_length"]:
        extra.append("use_sequence_length=True adds sequence_length")
    count_inputs(c, names, f": {' and '.join(extra)}" if extra else "")
    c.slots = names             # the op table's slots miss sequence_length
    return names


def rnn_param_size(num_layers: int, input_size: int, state_size: int, directions: int,
                   mode: str, projection_size: int | None) -> int:
    """The length of the flat ``parameters`` vector (MXNet's ``GetRnnParamSize``, with
    its C integer types: an unknown input size of -1 enters the sum as it is)."""
    size = _i32(_i32(state_size * directions) * _GATES[mode])
    if projection_size is None:
        first = _i64((input_size + state_size + 2) * size)
        other = _i64(_i32(_i32(_i32(state_size * directions) + state_size + 2) * size))
    else:
        first = _i64((input_size + projection_size + 2) * size)
        other = _i64((projection_size * directions + projection_size + 2) * size)
    total = _i64(first + _i64((num_layers - 1) * other))
    if projection_size is not None:
        total = _i64(total + _i32(_i32(_i32(projection_size * state_size) * num_layers)
                                  * directions))
    return total


def rnn_shape(c: Call) -> None:
    """``RNNShape``: data ``(T, N, I)`` (layout TNC); state ``(L*D, N, P or H)``, the
    LSTM cell ``(L*D, N, H)``, ``parameters`` ``(GetRnnParamSize,)``, ``sequence_length``
    ``(N,)``; output ``(T, N, D*(P or H))`` and the state outputs.  Waits for the data's
    rank; nothing comes back from the outputs."""
    names = _rnn_count(c)
    data = c.ins[0]
    if data is None:
        return
    if len(data) != 3:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but RNN needs 3-d data "
               f"(sequence length, batch, input size)", input=0)
    p = c.p
    mode = str(p["mode"])
    layers = int(p["num_layers"])
    hidden = int(p["state_size"])
    proj = p["projection_size"]
    dirs = 2 if p["bidirectional"] else 1
    steps, batch, width = data[0], _i32(data[1]), _i32(data[2])
    total = _i32(dirs * layers)
    layer = _i32(proj) if proj is not None else _i32(hidden)
    what = (f"num_layers={layers}" + (", bidirectional" if dirs == 2 else "")
            + (f", projection_size={proj}" if proj is not None else ""))
    c.set_in(2, (total, batch, layer), f"{what} and state_size={hidden} need")
    if mode == "lstm":
        c.set_in(3, (total, batch, hidden),
                 f"{what} and state_size={hidden} need a cell state")
    size = _i32(rnn_param_size(layers, width, hidden, dirs, mode, proj))
    c.set_in(1, (size,), f"mode={mode!r}, {what}, state_size={hidden} and the data's input "
                         f"size {'(unknown)' if width < 0 else width} need")
    if p["use_sequence_length"]:
        c.set_in(len(names) - 1, (batch,), "one length per batch item needs")
    width_out = _i32(dirs * proj) if proj is not None else (dirs * hidden) % _U32
    put_out(c, 0, (steps, batch, width_out))
    if p["state_outputs"]:
        put_out(c, 1, (total, batch, proj if proj is not None else hidden))
        if mode == "lstm":
            put_out(c, 2, (total, batch, hidden))
    no_negative(c, "check num_layers, state_size and projection_size")


def rnn_type(c: Call) -> None:
    """``RNNType``: the data's dtype must be known; it is every input's (the
    ``sequence_length`` input may have its own) and every output's."""
    names = _rnn_count(c)
    t = _data_type(c)
    lengths = len(names) - 1 if c.p["use_sequence_length"] else -1
    for i in range(1, len(c.ins)):
        if c.ins[i] is None:
            c.ins[i] = t
        elif i != lengths and c.ins[i] != t:
            c.fail(f"{c.input_label(i)} has type {c.ins[i]}, but RNN needs every input of "
                   f"the data's type {t}" + (" (sequence_length may differ)"
                                              if lengths > 0 else ""), input=i)
    for i in range(len(c.outs)):
        put_out(c, i, t)


# ===================================================== SequenceMask/Last/Reverse
def _sequence_count(c: Call) -> list[str]:
    names = ["data", "sequence_length"] if c.p["use_sequence_length"] else ["data"]
    count_inputs(c, names, ": use_sequence_length=True adds sequence_length"
           if c.p["use_sequence_length"] else ": sequence_length only with "
           "use_sequence_length=True")
    c.slots = names
    return names


def _axis_01(c: Call) -> int:
    axis = int(c.p["axis"])
    if axis not in (0, 1):
        c.fail(f"axis={axis} is not supported by {c.op}: use 0 (time first) or 1 "
               f"(batch first)", attr="axis")
    return axis


def _rank_2(c: Call) -> None:
    data = c.ins[0]
    if data is not None and len(data) < 2:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but {c.op} needs data of rank "
               f"2 or more (sequence and batch axes)", input=0)


def _batch(c: Call, axis: int) -> int:
    """The batch size: the data's axis 1 (axis=0) or 0 (axis=1); MXNet reads it even
    when the data's shape is unknown, and refuses."""
    data = c.ins[0]
    if data is None:
        c.fail(f"the shape of {c.input_label(0)} is unknown: {c.op} needs the data's "
               f"shape (at least its rank) when it is reached", input=0)
    assert data is not None
    return int(data[0 if axis else 1])


def sequence_mask_shape(c: Call) -> None:
    """``SequenceMask``: output like the data; ``sequence_length`` ``(batch,)``."""
    _sequence_count(c)
    _rank_2(c)
    axis = _axis_01(c)
    batch = _batch(c, axis)
    if c.p["use_sequence_length"]:
        c.set_in(1, (batch,), "one length per batch item needs")
    put_out(c, 0, c.ins[0])


def sequence_last_shape(c: Call) -> None:
    """``SequenceLast``: output ``(batch, *data[2:])``; ``sequence_length``
    ``(batch,)``."""
    _sequence_count(c)
    axis = _axis_01(c)
    _rank_2(c)
    batch = _batch(c, axis)
    if c.p["use_sequence_length"]:
        c.set_in(1, (batch,), "one length per batch item needs")
    data = c.ins[0]
    assert data is not None
    put_out(c, 0, (batch, *data[2:]))


def sequence_reverse_shape(c: Call) -> None:
    """``SequenceReverse`` (axis 0 only): output like the data, even unknown;
    ``sequence_length`` ``(data[1],)``."""
    _sequence_count(c)
    if int(c.p["axis"]) != 0:
        c.fail(f"axis={c.p['axis']} is not supported by SequenceReverse: only 0 (time "
               f"first)", attr="axis")
    _rank_2(c)
    if c.p["use_sequence_length"]:
        batch = _batch(c, 0)
        c.set_in(1, (batch,), "one length per batch item needs")
    put_out(c, 0, c.ins[0])


def sequence_type(c: Call) -> None:
    """The sequence ops' ``InferType``: the data's dtype must be known; inputs of unknown
    dtype take it (``sequence_length`` may have another); the output has it."""
    _sequence_count(c)
    t = _data_type(c)
    for i in range(1, len(c.ins)):
        if c.ins[i] is None:
            c.ins[i] = t
    put_out(c, 0, t)


# ================================================ _foreach, _while_loop, _cond
def _graphs(c: Call, n: int) -> list[fused.Subgraph]:
    """The node's ``subgraphs`` field: ``n`` symbol graphs (MXNet checks the count)."""
    raw = c.extra.get("subgraphs")
    if not isinstance(raw, list) or not all(isinstance(g, dict) for g in raw):
        c.fail(f"{c.op} runs graphs of its own, but this node has no 'subgraphs' field "
               f"with them")
    assert isinstance(raw, list)
    if len(raw) != n:
        c.fail(f"{c.op} runs {n} graph{'s' if n > 1 else ''}, but this node's 'subgraphs' "
               f"field has {len(raw)}")
    try:
        return [fused.Subgraph(g) for g in raw]
    except fused.FusedError:
        raise RuleError(f"{c.op}'s 'subgraphs' field is not a list of symbol graphs "
                        f"(nodes with op, name and inputs; heads)") from None


def _known(kind: str, value: Any) -> bool:
    if kind == "shape":
        return value is not None and all(d >= 0 for d in value)
    return value is not None


def _refine(c: Call, old: Any, new: Any, what: str) -> Any:
    """``SHAPE_ASSIGN_CHECK``/``TYPE_ASSIGN_CHECK`` on a value of the op's own."""
    try:
        if c.kind == "shape":
            return merge(old, new)
        if old is None or new is None or old == new:
            return old if new is None else new
        raise Conflict()
    except Conflict:
        raise RuleError(f"{what} is {old if c.kind != 'shape' else fmt(old)}, but the graph "
                        f"it runs gives {new if c.kind != 'shape' else fmt(new)}") from None


def _run(c: Call, graph: fused.Subgraph, name: str, ins: list[Any], outs: list[Any]
         ) -> tuple[list[Any], list[Any], bool]:
    """MXNet's ``InferSubgraphShape``/``InferSubgraphDataType``: the graph inferred (by
    the engine's rules; an op without one asked of ``c.oracle``) from its inputs' values
    and its heads' (a head's value replaces its input's when the head is an input); the
    refined inputs and heads, and whether every entry of the graph came out known."""
    if len(ins) != len(graph.variables):
        c.fail(f"{c.op}'s {name} takes {_plural(len(graph.variables), 'input')} "
               f"({graph.names()}), but it is given {len(ins)}")
    if len(outs) != len(graph.heads):
        c.fail(f"{c.op}'s {name} gives {_plural(len(graph.heads), 'output')}, but {c.op} "
               f"needs {len(outs)} from it")
    hints = graph.row_hints
    g = engine.graph_of(graph.nodes, graph.order,
                        (lambda nid: hints[nid]) if hints is not None else None)
    given: dict[int, Any] = {nid: v for nid, v in zip(graph.variables, ins) if v is not None}
    for (nid, idx), v in zip(graph.heads, outs):
        if idx != 0:
            continue                # the engine takes values for first outputs only
        if v is None:
            given.pop(nid, None)
        else:
            given[nid] = v
    run = engine.infer_shapes if c.kind == "shape" else engine.infer_dtypes
    got = run(g, given, c.oracle)
    if got.failure is not None:
        bad = graph.nodes[got.failure.node]
        raise RuleError(f"inside {c.op}'s {name}, {bad.op} {bad.name!r}: "
                        f"{got.failure.error.message}")
    if got.unruled:
        bad = graph.nodes[got.unruled[0]]
        raise RuleError(f"mxexplorer has no {c.kind} rule for {bad.op} (inside {c.op}'s "
                        f"{name}, {bad.name!r}), and MXNet, which could answer, is not "
                        f"available")
    new_ins = [_refine(c, v, got.values.get((nid, 0)), f"{name} input {graph.nodes[nid].name!r}")
               for nid, v in zip(graph.variables, ins)]
    new_outs = [_refine(c, v, got.values.get(h), f"{name} output {k}")
                for k, (h, v) in enumerate(zip(graph.heads, outs))]
    done = all(_known(c.kind, v) for v in got.values.values())
    return new_ins, new_outs, done


def _locs(c: Call, key: str, size: int) -> list[int]:
    """A tuple of positions, each below ``size`` (MXNet reads past the end)."""
    locs = [int(v) for v in (c.p[key] or ())]
    for v in locs:
        if not 0 <= v < size:
            c.fail(f"{key}={c.attrs.get(key)} names position {v}, but there are {size}: use "
                   f"0 to {size - 1}", attr=key)
    return locs


def _slice_first(shape: Any) -> Any:
    """``SliceFirstDim``: one step of a sequence (a 1-d or unknown one reads as (1,))."""
    return tuple(shape[1:]) if shape is not None and len(shape) > 1 else (1,)


def foreach_shape(c: Call) -> None:
    """``ForeachShape``: the body inferred on one step (the data without its first axis,
    the states and the other inputs as they are); the outputs' data stacked along the
    data's first axis."""
    (body,) = _graphs(c, 1)
    n = len(c.ins)
    data = _locs(c, "in_data_locs", n)
    states = _locs(c, "in_state_locs", n)
    rest = _locs(c, "remain_locs", n)
    if len(data) + len(states) + len(rest) > n:
        c.fail(f"in_data_locs, in_state_locs and remain_locs name "
               f"{len(data) + len(states) + len(rest)} inputs, but the node has {n}",
               attr="in_data_locs")
    n_data = len(data)
    out_data = int(c.p["num_out_data"])
    sub_in: list[Any] = [None] * n
    flat = [False] * n_data
    for i, loc in enumerate(data):
        shape = c.ins[i]
        flat[i] = shape is not None and len(shape) == 1
        sub_in[loc] = _slice_first(shape)
    for k, loc in enumerate(states):
        sub_in[loc] = c.ins[n_data + k]
    for k, loc in enumerate(rest):
        sub_in[loc] = c.ins[n_data + len(states) + k]
    sub_out = [_slice_first(s) if i < out_data and s is not None else s
               for i, s in enumerate(c.outs)]
    first = c.ins[0] if c.ins else None
    if first is None or len(first) == 0:     # MXNet reads its length after the body's pass
        c.fail(f"the shape of {c.input_label(0)} is unknown: _foreach needs the data's "
               f"length (its first axis) when it is reached", input=0)
    assert first is not None
    length = first[0]
    new_in, new_out, done = _run(c, body, "loop body", sub_in, sub_out)
    for i in range(min(out_data, len(c.outs))):
        if new_out[i] is not None:
            c.set_out(i, (length, *new_out[i]), "(the loop body's output, stacked)")
    for i in range(out_data, len(c.outs)):
        c.set_out(i, new_out[i], "(the loop body's state)")
    for i, loc in enumerate(data):
        step = new_in[loc]
        if step is not None:
            c.set_in(i, (length,) if flat[i] else (length, *step), "the loop body needs")
    for k, loc in enumerate(states):
        c.set_in(n_data + k, new_in[loc], "the loop body needs")
    for k, loc in enumerate(rest):
        c.set_in(n_data + len(states) + k, new_in[loc], "the loop body needs")
    if done:
        for k in range(len(c.outs) - out_data):
            out, state = c.outs[out_data + k], c.ins[n_data + k]
            if out != state:
                c.fail(f"the loop body turns state {k} of shape {fmt(state)} into "
                       f"{fmt(out)}: a state must keep its shape")


def foreach_type(c: Call) -> None:
    """``ForeachType``: the body's dtypes, inputs and outputs both ways."""
    (body,) = _graphs(c, 1)
    n = len(c.ins)
    data = _locs(c, "in_data_locs", n)
    states = _locs(c, "in_state_locs", n)
    rest = _locs(c, "remain_locs", n)
    sub_in: list[Any] = ["float32"] * n
    order = [(loc, i) for i, loc in enumerate(data)]
    order += [(loc, len(data) + k) for k, loc in enumerate(states)]
    order += [(loc, len(data) + len(states) + k) for k, loc in enumerate(rest)]
    for loc, i in order:
        if i >= n:
            c.fail(f"in_data_locs, in_state_locs and remain_locs name more inputs than the "
                   f"node's {n}", attr="in_data_locs")
        sub_in[loc] = c.ins[i]
    new_in, new_out, _ = _run(c, body, "loop body", sub_in, list(c.outs))
    for i, v in enumerate(new_out):
        c.set_out(i, v, "(from the loop body)")
    for loc, i in order:
        c.set_in(i, new_in[loc], "the loop body needs")


def _fill(values: list[Any], i: int, other: list[Any], j: int) -> None:
    """``fill_value``: an unknown one of the two takes the other (a disagreement is let
    be, as MXNet does)."""
    x, y = values[i], other[j]
    if x is None and y is not None:
        values[i] = y
    elif y is None and x is not None:
        other[j] = x


def while_loop_type(c: Call) -> None:
    """``WhileLoopType``: the condition graph, then the body, inferred in turn, the loop
    variables' dtypes kept equal to the body outputs they become."""
    graphs = _graphs(c, 2)
    n = len(c.ins)
    if n + 2 != int(c.p["num_args"]):
        c.fail(f"has {_plural(n, 'input')}, but num_args={c.p['num_args']} means "
               f"{int(c.p['num_args']) - 2}", attr="num_args")
    if len(graphs[0].heads) != 1:
        c.fail(f"_while_loop's condition graph gives {len(graphs[0].heads)} outputs, not 1")
    cond_locs = _locs(c, "cond_input_locs", n)
    func_locs = _locs(c, "func_input_locs", n)
    var_locs = [int(v) for v in (c.p["func_var_locs"] or ())]
    out_data, n_out = int(c.p["num_out_data"]), len(c.outs)
    for k in range(n_out - out_data):
        if k >= len(var_locs) or not 0 <= var_locs[k] < len(func_locs):
            c.fail(f"func_var_locs={c.attrs.get('func_var_locs')} must name, for each of "
                   f"the {n_out - out_data} loop variables, one of the body's "
                   f"{len(func_locs)} inputs", attr="func_var_locs")
    ins, outs = list(c.ins), list(c.outs)

    def sync() -> None:
        for k in range(out_data, n_out):
            _fill(ins, func_locs[var_locs[k - out_data]], outs, k)

    cond_in = [ins[loc] for loc in cond_locs]
    func_in = [ins[loc] for loc in func_locs]
    sync()
    cond_in, _, _ = _run(c, graphs[0], "condition graph", cond_in, [None])
    sync()
    for k, loc in enumerate(cond_locs):
        _fill(ins, loc, cond_in, k)
    func_in, outs, _ = _run(c, graphs[1], "loop body", func_in, outs)
    sync()
    for k, loc in enumerate(func_locs):
        _fill(ins, loc, func_in, k)
    c.ins[:] = ins
    c.outs[:] = outs


def cond_type(c: Call) -> None:
    """``CondType``: the condition graph (its output float32), then the then- and
    else-graphs, inferred in turn; both branches give the outputs."""
    graphs = _graphs(c, 3)
    n = len(c.ins)
    if n + 3 != int(c.p["num_args"]):
        c.fail(f"has {_plural(n, 'input')}, but num_args={c.p['num_args']} means "
               f"{int(c.p['num_args']) - 3}", attr="num_args")
    if len(graphs[0].heads) != 1:
        c.fail(f"_cond's condition graph gives {len(graphs[0].heads)} outputs, not 1")
    if len(graphs[1].heads) != len(graphs[2].heads):
        c.fail(f"_cond's then-graph gives {len(graphs[1].heads)} outputs and its "
               f"else-graph {len(graphs[2].heads)}: both branches need the same outputs")
    ins, outs = list(c.ins), list(c.outs)
    parts = [(graphs[0], "condition graph", _locs(c, "cond_input_locs", n)),
             (graphs[1], "then-graph", _locs(c, "then_input_locs", n)),
             (graphs[2], "else-graph", _locs(c, "else_input_locs", n))]
    sub_ins = [[ins[loc] for loc in locs] for _, _, locs in parts]
    for k, (graph, name, locs) in enumerate(parts):
        if k == 0:
            sub_ins[0], _, _ = _run(c, graph, name, sub_ins[0], ["float32"])
        else:
            sub_ins[k], outs, _ = _run(c, graph, name, sub_ins[k], outs)
        for j, loc in enumerate(locs):
            _fill(ins, loc, sub_ins[k], j)
    c.ins[:] = ins
    c.outs[:] = outs



RULES: dict[str, Rule] = {
    **table("sequence", ["RNN"], rnn_shape, rnn_type),
    **table("sequence", ["SequenceMask"], sequence_mask_shape, sequence_type),
    **table("sequence", ["SequenceLast"], sequence_last_shape, sequence_type),
    **table("sequence", ["SequenceReverse"], sequence_reverse_shape, sequence_type),
    **table("sequence", ["_foreach"], foreach_shape, foreach_type),
    **table("sequence", ["_while_loop"], no_shape, while_loop_type),
    **table("sequence", ["_cond"], no_shape, cond_type),
}

__all__ = ["RULES", "Shape", "count_inputs", "no_negative", "put_out", "rnn_inputs",
           "rnn_param_size"]
