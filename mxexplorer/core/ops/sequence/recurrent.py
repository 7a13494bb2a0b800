"""Rules for ``RNN`` (modes ``rnn_relu``, ``rnn_tanh``, ``lstm``, ``gru``; stacked,
bidirectional, with a projection, the state outputs and the ``sequence_length`` input;
the flat ``parameters`` vector's length computed from the data as MXNet's
``GetRnnParamSize`` does, 32-bit arithmetic and an unknown input size of -1 included),
``SequenceMask``, ``SequenceLast`` and ``SequenceReverse``: they infer forward only
(nothing comes back from the outputs), refill their outputs rather than merge them, wait
for (or, the sequence ops, refuse) a data of unknown shape, and refuse a data of unknown
dtype.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any

from mxexplorer.core.ops.base import Call, Rule, fmt, table
from mxexplorer.core.ops.sequence.helpers import (
    _U32,
    _data_type,
    _i32,
    _i64,
    count_inputs,
    no_negative,
    put_out,
)

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


RULES: dict[str, Rule] = {
    **table("sequence", ["RNN"], rnn_shape, rnn_type),
    **table("sequence", ["SequenceMask"], sequence_mask_shape, sequence_type),
    **table("sequence", ["SequenceLast"], sequence_last_shape, sequence_type),
    **table("sequence", ["SequenceReverse"], sequence_reverse_shape, sequence_type),
}
