"""Rules for the normalisations: ``BatchNorm``, ``_contrib_BatchNormWithReLU``,
``BatchNorm_v1``, ``_contrib_SyncBatchNorm``, ``LayerNorm``, ``GroupNorm``,
``InstanceNorm``, ``L2Normalization`` and ``LRN``, with their dtypes (float16 data with
float32 parameters, InstanceNorm's float32 only).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, Shape, elemwise_type, fmt, known, table
from mxexplorer.core.ops.pool_norm.helpers import (
    FAMILY,
    _cmod,
    _count,
    _data_type,
    _dim,
    _label,
    _need_axis,
    _put,
    _put_in,
    _shape_text,
    data_type,
)

# ================================================================ batch norms
_BN_SLOTS = "data, gamma, beta, moving_mean, moving_var"


def _data_axis(c: Call, data: Shape, axis: int) -> int:
    """The norm's ``axis`` of ``data`` counted from the start (negative: from the end),
    or a plain refusal naming the range that would fit."""
    rank = len(data)
    real = axis + rank if axis < 0 else axis
    if not 0 <= real < rank:
        c.fail(f"axis {axis} is out of range for data of {rank} dimension"
               f"{'s' if rank != 1 else ''} {fmt(data)}: use an axis from {-rank} to "
               f"{rank - 1}", attr="axis")
    return real


def batch_norm_shape(c: Call) -> None:
    """``BatchNorm`` and ``_contrib_BatchNormWithReLU``: once the data's rank is known,
    gamma, beta and the moving mean and variance become ``(channels,)`` of the data's
    ``axis`` (replaced, even with an unknown size); outputs: the data's shape and two
    ``(channels,)`` (the ReLU form adds a workspace of the data's shape)."""
    _count(c, 5, _BN_SLOTS)
    data = c.ins[0]
    if data is None:
        return
    axis = c.p["axis"]
    real = _data_axis(c, data, axis)
    channels = (data[real],)
    for i in range(1, 5):
        _put_in(c, i, channels)
    _put(c, 0, data)
    _put(c, 1, channels)
    _put(c, 2, channels)
    if len(c.outs) > 3:
        _put(c, 3, data)


def _accumulation_type(c: Call, dtype: str) -> str:
    """The type BatchNorm keeps its parameters in (``MSHADOW_REAL_TYPE_SWITCH_EX``)."""
    if dtype in ("float16", "bfloat16"):
        return "float32"
    if dtype not in ("float32", "float64"):
        c.fail(f"{c.input_label(0)} is {dtype}, but {c.op} works on floating-point data "
               "only: float16, bfloat16, float32 or float64", input=0)
    return dtype


def batch_norm_type(c: Call) -> None:
    """``BatchNormType``: the parameters of float16/bfloat16 data are float32, else of the
    data's type; forward, the outputs are replaced (data type, then the parameters');
    backward, only the data takes the output's type."""
    dtype = c.ins[0]
    if dtype is None:
        if not c.outs or c.outs[0] is None:
            return
        dtype = c.outs[0]
        c.ins[0] = dtype
        param = _accumulation_type(c, dtype)
    else:
        param = _accumulation_type(c, dtype)
        c.outs[:] = [dtype] + [param] * (len(c.outs) - 1)
    names = _BN_SLOTS.split(", ")
    for i in range(1, len(c.ins)):
        if c.ins[i] is None:
            c.ins[i] = param
        elif c.ins[i] != param:
            c.fail(f"{_label(c, i, names[i] if i < 5 else 'input')} is {c.ins[i]}, but "
                   f"with {dtype} data {c.op} keeps its parameters in {param}: give it "
                   f"{param}", input=i)


def legacy_norm_shape(c: Call) -> None:
    """``BatchNorm_v1`` (waits for the data's rank) and ``_contrib_SyncBatchNorm`` (waits
    for the whole shape): parameters and the two hidden outputs are ``(channels,)`` of
    axis 1, replaced."""
    _count(c, 5, _BN_SLOTS)
    data = c.ins[0]
    if data is None or (c.op == "_contrib_SyncBatchNorm" and not known(data)):
        return
    _need_axis(c, 0, 1, "data", "as the channels")
    channels = (data[1],)
    for i in range(1, 5):
        _put_in(c, i, channels)
    _put(c, 0, data)
    _put(c, 1, channels)
    _put(c, 2, channels)


def legacy_norm_type(c: Call) -> None:
    """The legacy batch norms: the data's type must be known; float16 data keeps its
    parameters in float32, other data in its own type (any type)."""
    dtype = _data_type(c)
    param = "float32" if dtype == "float16" else dtype
    names = _BN_SLOTS.split(", ")
    for i in range(1, len(c.ins)):
        if c.ins[i] is not None and c.ins[i] != param:
            c.fail(f"{_label(c, i, names[i] if i < 5 else 'input')} is {c.ins[i]}, but "
                   f"with {dtype} data {c.op} keeps its parameters in {param}: give it "
                   f"{param}", input=i)
        c.ins[i] = param
    c.outs[:] = [dtype] + [param] * (len(c.outs) - 1)


# ====================================================== layer / group / instance
def layer_norm_shape(c: Call) -> None:
    """``LayerNorm``: gamma and beta are ``(size of axis,)`` (checked against what is
    known); outputs the data's shape and mean and std of the data's shape with the axis
    1 (replaced)."""
    _count(c, 3, "data, gamma, beta")
    data = c.ins[0]
    if data is None:
        return
    axis = c.p["axis"]
    real = _data_axis(c, data, axis)
    size = (data[real],)
    why = f"the data's axis {axis} ({_dim(data[real])} values) needs"
    c.set_in(1, size, why)
    c.set_in(2, size, why)
    moments = tuple(1 if k == real else d for k, d in enumerate(data))
    _put(c, 0, data)
    _put(c, 1, moments)
    _put(c, 2, moments)


def group_norm_shape(c: Call) -> None:
    """``GroupNorm``: data of 3 or more dimensions whose channels (axis 1) divide into
    ``num_groups`` (an unknown count is -1 there); gamma and beta ``(num_groups,)``,
    mean and std ``(batch, num_groups)``, all replaced."""
    _count(c, 3, "data, gamma, beta")
    data = c.ins[0]
    if data is None:
        return
    groups = c.p["num_groups"]
    if len(data) < 3:
        c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but GroupNorm needs 3 or more "
               "dimensions (batch, channel, ...)", input=0)
    if groups == 0:      # MXNet divides by it (and crashes)
        c.fail("num_groups 0 cannot divide the channels: use a num_groups that divides "
               "them", attr="num_groups")
    channels = data[1]
    if _cmod(channels, groups) != 0:
        if channels < 0:
            c.fail(f"the data's channels (axis 1) are not known here, and MXNet 1.9.1 "
                   f"refuses to split an unknown count into {groups} groups (num_groups): "
                   "give the data's channels", attr="num_groups")
        fits = [k for k in range(1, channels + 1) if channels % k == 0]
        c.fail(f"{channels} channels do not divide into {groups} groups (num_groups): "
               f"use a num_groups that divides {channels} ({', '.join(map(str, fits))})",
               attr="num_groups")
    why = f"num_groups {groups} gives a negative size: use a positive num_groups"
    _put_in(c, 1, (groups,), why, "num_groups")
    _put_in(c, 2, (groups,), why, "num_groups")
    _put(c, 0, data)
    _put(c, 1, (data[0], groups), why, "num_groups")
    _put(c, 2, (data[0], groups), why, "num_groups")


def instance_norm_shape(c: Call) -> None:
    """The legacy ``InstanceNorm``: reads the data's channels (axis 1) at once (an unknown
    shape is refused); gamma and beta ``(channels,)``, mean and var ``(batch,
    channels)``, all replaced."""
    _count(c, 3, "data, gamma, beta")
    data = _need_axis(c, 0, 1, "data", "as the channels")
    channels = (data[1],)
    _put_in(c, 1, channels)
    _put_in(c, 2, channels)
    _put(c, 0, data)
    _put(c, 1, (data[0], data[1]))
    _put(c, 2, (data[0], data[1]))


def l2_norm_shape(c: Call) -> None:
    """The legacy ``L2Normalization``: the output has the data's shape; the hidden norm
    is ``(batch,)`` (instance), the data's shape with 1 channel (channel) or ``(batch,
    channel)`` (spatial); an unknown data shape is refused."""
    _count(c, 1, "data")
    mode = c.p["mode"]
    data = c.ins[0]
    if mode == "instance":
        data = _need_axis(c, 0, 0, "data", "as the batch size (mode 'instance')")
        norm: Shape = (data[0],)
    else:
        if data is None or len(data) < 3:
            c.fail(f"{c.input_label(0)} has {_shape_text(data)}, but mode {mode!r} needs "
                   "data of 3 or more dimensions (batch, channel, ...)", attr="mode")
        assert data is not None
        norm = tuple(1 if k == 1 else d for k, d in enumerate(data)) if mode == "channel" \
            else (data[0], data[1])
    _put(c, 0, data)
    _put(c, 1, norm)


def lrn_shape(c: Call) -> None:
    """``LRN``: waits for the whole data shape; the output and the hidden scale have it."""
    _count(c, 1, "data")
    data = c.ins[0]
    if not known(data):
        return
    assert data is not None
    _put(c, 0, data)
    _put(c, 1, data)


# ====================================================================== types
def float32_type(c: Call) -> None:
    """A legacy operator without a type rule of its own (``InstanceNorm``): float32 only;
    every input and output becomes float32."""
    for i, t in enumerate(c.ins):
        if t is not None and t != "float32":
            c.fail(f"{c.input_label(i)} is {t}, but {c.op} works on float32 only",
                   input=i)
    c.ins[:] = ["float32"] * len(c.ins)
    c.outs[:] = ["float32"] * len(c.outs)


def l2_norm_type(c: Call) -> None:
    """``L2Normalization``: data, output and norm of one type, from whichever is known."""
    dtype = c.ins[0]
    for v in c.outs[:2]:
        if dtype is None:
            dtype = v
    if dtype is None:
        return
    c.set_in(0, dtype, "its output is")
    for i in range(min(2, len(c.outs))):
        c.set_out(i, dtype)


RULES: dict[str, Rule] = {
    **table(FAMILY, ("BatchNorm", "_contrib_BatchNormWithReLU"), batch_norm_shape,
            batch_norm_type),
    **table(FAMILY, ("BatchNorm_v1", "_contrib_SyncBatchNorm"), legacy_norm_shape,
            legacy_norm_type),
    **table(FAMILY, ("LayerNorm",), layer_norm_shape, elemwise_type),
    **table(FAMILY, ("GroupNorm",), group_norm_shape, elemwise_type),
    **table(FAMILY, ("InstanceNorm",), instance_norm_shape, float32_type),
    **table(FAMILY, ("L2Normalization",), l2_norm_shape, l2_norm_type),
    **table(FAMILY, ("LRN",), lrn_shape, data_type),
}
