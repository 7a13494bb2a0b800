"""Rules for the other quantized layers: ``_contrib_quantized_act``, ``_flatten``,
``_concat``, ``_elemwise_add``, ``_elemwise_mul``, ``_embedding``, ``_batch_norm`` and
``_rnn``; each carries its data's min/max as extra inputs and outputs.  Must not import
MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, fmt, table
from mxexplorer.core.ops.quantized.helpers import (
    F32,
    FAMILY,
    ONE,
    QUANT,
    _calibrated,
    _count,
    _need_type,
    _overwrite_outs,
    _put_out,
    _ranges,
)


# --------------------------------------------------- quantized activation and flatten
def quantized_act_shape(c: Call) -> None:
    _count(c, 3, "data, min_data, max_data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    _ranges(c, 1, 3)
    _overwrite_outs(c, [data, ONE, ONE])


def quantized_act_type(c: Call) -> None:
    _count(c, 3, "data, min_data, max_data")
    if c.p["act_type"] != "relu":
        c.fail(f"act_type={c.p['act_type']}: a quantized activation does relu only",
               attr="act_type")
    c.set_out(0, "int8")
    _ranges(c, 1, 3, F32)
    c.set_out(1, F32)
    c.set_out(2, F32)


def quantized_flatten_shape(c: Call) -> None:
    _count(c, 3, "data, min_data, max_data")
    data = c.ins[0]
    if data is None or any(d < 0 for d in data):
        return
    if len(data) == 0:
        c.fail(f"{c.input_label(0)} is a scalar (0-d): flatten needs at least one "
               "dimension", input=0)
    rest = 1
    for d in data[1:]:
        rest *= d
    _ranges(c, 1, 3)
    c.set_out(0, (data[0], rest))
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_flatten_type(c: Call) -> None:
    _count(c, 3, "data, min_data, max_data")
    _ranges(c, 1, 3, F32)
    if c.ins[0] is not None:
        c.set_out(0, c.ins[0])
    c.set_out(1, F32)
    c.set_out(2, F32)


# ------------------------------------------------------------------- quantized concat
def _assign_loose(y: MaybeShape, x: MaybeShape) -> MaybeShape:
    """MXNet's ``shape_assign`` with its answer ignored: unknown parts of ``y`` filled
    from ``x`` up to the first disagreement."""
    if y is None:
        return x
    if x is None or len(y) != len(x):
        return y
    out = list(y)
    for i, (a, b) in enumerate(zip(y, x)):
        if a == -1:
            out[i] = b
        elif a != b and b >= 0:
            break
    return tuple(out)


def _axis(c: Call, ndim: int) -> int:
    dim = int(c.p["dim"])
    if not -ndim <= dim < ndim:
        c.fail(f"dim {dim} is out of range for {ndim}-d inputs: use a dim from {-ndim} to "
               f"{ndim - 1}", attr="dim")
    return dim + ndim if dim < 0 else dim


def quantized_concat_shape(c: Call) -> None:
    """``QuantizedConcatShape``: the float Concat's rule on the first ``num_args`` inputs
    (forward, and the output back into unknown inputs), then (1,) for every min/max."""
    n = int(c.p["num_args"])
    _count(c, 3 * n, f"{n} data inputs, then a min and a max for each")
    dshape: MaybeShape = None
    size = 0
    unknown = False
    axis = -1
    for i in range(n):
        s = c.ins[i]
        if s is not None and len(s) > 0:
            axis = _axis(c, len(s))
            unknown = unknown or s[axis] == -1
            size += s[axis]
            dshape = _assign_loose(dshape, s[:axis] + (-1,) + s[axis + 1:])
    out = c.outs[0]
    if out is not None and len(out) > 0:
        axis = _axis(c, len(out))
        dshape = _assign_loose(dshape, out[:axis] + (-1,) + out[axis + 1:])
    if dshape is None:
        return
    for i in range(n):
        c.set_in(i, dshape, "the other inputs have (outside the dim axis)")
    if not unknown:
        dshape = dshape[:axis] + (size,) + dshape[axis + 1:]
    c.set_out(0, dshape, "(the inputs joined along dim)")
    _ranges(c, n, 3 * n)
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_concat_type(c: Call) -> None:
    n = int(c.p["num_args"])
    _count(c, 3 * n, f"{n} data inputs, then a min and a max for each")
    dtype = "uint8"
    for i in range(min(n, len(c.ins))):
        if c.ins[i] == "int8":
            dtype = "int8"
        else:
            c.set_in(i, "uint8", "a quantized concat takes int8, else")
    c.set_out(0, dtype)
    c.set_out(1, F32)
    c.set_out(2, F32)


# ----------------------------------------------------- quantized elementwise add / mul
def quantized_add_shape(c: Call) -> None:
    """``_contrib_quantized_elemwise_add``: both operands exactly the same (unknown parts
    included: MXNet compares them as they stand, no filling, and two shapes of unknown
    rank differ); the output follows the first."""
    _count(c, 6, "lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max")
    if c.ins[0] is None or c.ins[0] != c.ins[1]:
        c.fail(f"{c.input_label(0)} has shape {fmt(c.ins[0])} and {c.input_label(1)} "
               f"{fmt(c.ins[1])}: a quantized add needs both the same when it is reached "
               "(MXNet compares them as they stand, unknown parts included, and refuses "
               "two unknown shapes)", input=1)
    _ranges(c, 2, 6)
    c.set_out(0, c.ins[0])
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_add_type(c: Call) -> None:
    _count(c, 6, "lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max")
    for i in range(2):
        if c.ins[i] != "int8":
            c.set_in(i, "uint8", "a quantized add takes int8, else")
    dtype = "int32"
    if _calibrated(c):
        dtype = c.ins[0] if c.ins[0] == c.ins[1] else "int8"
    c.set_out(0, dtype)
    c.set_out(1, F32)
    c.set_out(2, F32)


def quantized_mul_shape(c: Call) -> None:
    _count(c, 6, "lhs, rhs, lhs_min, lhs_max, rhs_min, rhs_max")
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None:
        return
    if len(a) != len(b):
        c.fail(f"{c.input_label(0)} has shape {fmt(a)} and {c.input_label(1)} {fmt(b)}: a "
               "quantized multiply does not broadcast; give both the same shape", input=1)
    if a != b:
        c.fail(f"{c.input_label(0)} has shape {fmt(a)} and {c.input_label(1)} {fmt(b)}: a "
               "quantized multiply needs both the same (and both known as far as either "
               "is)", input=1)
    _ranges(c, 2, 6)
    c.set_out(0, a)
    if not c.p["enable_float_output"]:
        _put_out(c, 1, ONE)
        _put_out(c, 2, ONE)


def quantized_mul_type(c: Call) -> None:
    _ranges(c, 2, 6, F32)
    if c.p["enable_float_output"]:
        c.set_out(0, F32)
        return
    c.set_out(0, "int8" if _calibrated(c) else "int32")
    _put_out(c, 1, F32)
    _put_out(c, 2, F32)


# ------------------------------------------------------------- quantized embedding
def quantized_embedding_shape(c: Call) -> None:
    _count(c, 4, "data, weight, min_weight, max_weight")
    data = c.ins[0]
    if data is None:
        return
    c.set_in(1, (c.p["input_dim"], c.p["output_dim"]), "input_dim and output_dim make")
    _ranges(c, 2, 4)
    _overwrite_outs(c, [tuple(data) + (c.p["output_dim"],), ONE, ONE])


def quantized_embedding_type(c: Call) -> None:
    _count(c, 4, "data, weight, min_weight, max_weight")
    if c.ins[0] is None:
        c.fail(f"{c.input_label(0)} has no known type, but a quantized embedding needs "
               "it: give the input's dtype", input=0)
    c.set_in(1, "int8", "a quantized embedding takes")
    _ranges(c, 2, 4, F32)
    _overwrite_outs(c, ["int8", F32, F32])


# ------------------------------------------------------------ quantized batch norm
def quantized_bn_shape(c: Call) -> None:
    _count(c, 7, "data, gamma, beta, moving_mean, moving_var, min_data, max_data")
    data = c.ins[0]
    if data is None:
        return
    axis = int(c.p["axis"])
    channel = axis + len(data) if axis < 0 else axis
    if channel >= len(data) or channel < 0:
        c.fail(f"axis {axis} is out of range for the {len(data)}-d data: use an axis from "
               f"{-len(data)} to {len(data) - 1}", attr="axis")
    ch = (data[channel],)
    for i in range(1, 5):
        c.set_in(i, ch, "the data's channels make")
    _ranges(c, 5, 7)
    c.set_out(0, data)
    c.set_out(1, ONE)
    c.set_out(2, ONE)


def quantized_bn_type(c: Call) -> None:
    _count(c, 7, "data, gamma, beta, moving_mean, moving_var, min_data, max_data")
    _need_type(c, 0, QUANT, "a quantized batch norm")
    for i in range(1, 7):
        c.set_in(i, F32, "a quantized batch norm takes")
    c.set_out(0, "int8")
    c.set_out(1, F32)
    c.set_out(2, F32)


# ------------------------------------------------------------------- quantized rnn
def _rnn_param_size(layers: int, inp: int, state: int, dirs: int,
                    proj: int | None) -> int:
    """``GetRnnParamSize`` for an LSTM, with C++'s arithmetic on unknown (-1) sizes."""
    size = state * dirs * 4
    if proj is None:
        first = (inp + state + 2) * size
        other = (state * dirs + state + 2) * size
        return first + (layers - 1) * other
    first = (inp + proj + 2) * size
    other = (proj * dirs + proj + 2) * size
    return first + (layers - 1) * other + proj * state * layers * dirs


def _rnn_lstm(c: Call) -> None:
    if c.p["mode"] != "lstm":
        c.fail(f"mode={c.p['mode']}: the quantized RNN is an LSTM only (mode='lstm')",
               attr="mode")


def quantized_rnn_shape(c: Call) -> None:
    """``QuantizedRnnShape``: an LSTM over (steps, batch, features) uint8 data; states
    (layers x directions, batch, state_size), the flat float parameters; outputs
    replaced.  MXNet computes the parameter count from an unknown feature size as -1."""
    _rnn_lstm(c)
    p = c.p
    _count(c, 6, "data, parameters, state, state_cell, min_data, max_data")
    data = c.ins[0]
    if data is None:
        return
    if len(data) != 3:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but an RNN takes 3-d data "
               "(steps, batch, features)", input=0)
    dirs = 2 if p["bidirectional"] else 1
    layers = int(p["num_layers"])
    state = int(p["state_size"])
    batch = data[1]
    c.set_in(2, (dirs * layers, batch, state), "the layers, batch and state_size make")
    c.set_in(3, (dirs * layers, batch, state), "the layers, batch and state_size make")
    n_params = _rnn_param_size(layers, data[2], state, dirs, p.get("projection_size"))
    if n_params < -1:
        c.fail(f"the parameters would have {n_params} values: num_layers={layers}, "
               f"state_size={state} and {data[2]} features make no LSTM", attr="num_layers")
    c.set_in(1, (n_params,), "the layers and sizes make")
    base = 5 if p["use_sequence_length"] else 4
    _ranges(c, base, 6)
    outs: list[Shape] = [(data[0], batch, dirs * state)]
    if p["state_outputs"]:
        outs += [(dirs * layers, batch, state)] * 2
    _overwrite_outs(c, outs)


def quantized_rnn_type(c: Call) -> None:
    _rnn_lstm(c)
    _count(c, 6, "data, parameters, state, state_cell, min_data, max_data")
    _need_type(c, 0, ("uint8",), "a quantized RNN")
    for i in (1, 2, 3):
        c.set_in(i, F32, "a quantized RNN takes")
    base = 5 if c.p["use_sequence_length"] else 4
    _ranges(c, base, 6, F32)
    for i in range(len(c.outs)):
        c.set_out(i, F32)


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_contrib_quantized_act",), quantized_act_shape, quantized_act_type),
    **table(FAMILY, ("_contrib_quantized_flatten",), quantized_flatten_shape,
            quantized_flatten_type),
    **table(FAMILY, ("_contrib_quantized_concat",), quantized_concat_shape,
            quantized_concat_type),
    **table(FAMILY, ("_contrib_quantized_elemwise_add",), quantized_add_shape,
            quantized_add_type),
    **table(FAMILY, ("_contrib_quantized_elemwise_mul",), quantized_mul_shape,
            quantized_mul_type),
    **table(FAMILY, ("_contrib_quantized_embedding",), quantized_embedding_shape,
            quantized_embedding_type),
    **table(FAMILY, ("_contrib_quantized_batch_norm",), quantized_bn_shape, quantized_bn_type),
    **table(FAMILY, ("_contrib_quantized_rnn",), quantized_rnn_shape, quantized_rnn_type),
}
