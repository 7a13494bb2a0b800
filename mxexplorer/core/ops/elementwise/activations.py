"""Rules for ``Dropout``, ``LeakyReLU`` and the softmax family (``softmax``, with its
``length`` input, ``log_softmax``, ``softmin``).  ``softmax`` does not pass its output's
shape back to its data, as MXNet does not.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Conflict, Rule, elemwise_type, fmt, merge
from mxexplorer.core.ops.elementwise.helpers import (
    UNARY_SHAPE,
    _count,
    _input,
    _known_input_type,
    _name,
    _ndim,
    _replace_outs,
    _rules,
)


# ===================================================================== Dropout
def dropout_shape(c: Call) -> None:
    """The output has the data's shape; the mask too, with size 1 along ``axes``.  Both
    are replaced; nothing flows back to the data."""
    _count(c, 1, "data")
    data = c.ins[0]
    if data is None:
        return
    mask = list(data)
    for a in c.p.get("axes") or ():
        if not 0 <= a < len(data):
            c.fail(f"axes {tuple(c.p['axes'])} has axis {a}, but the data {fmt(data)} has "
                   f"{len(data)} dimensions: use axes from 0 to {len(data) - 1}", attr="axes")
        mask[a] = 1
    c.outs[0] = data
    if len(c.outs) > 1:
        c.outs[1] = tuple(mask)


def dropout_type(c: Call) -> None:
    """The outputs (and mask) have the data's dtype, which must be known."""
    _count(c, 1, "data")
    _replace_outs(c, _known_input_type(c))


# ================================================================= activations
def leaky_relu_shape(c: Call) -> None:
    """``LeakyReLUShape``: the output (and rrelu's mask) has the data's shape, replaced;
    prelu's gamma, when unknown, has shape ``(channels,)`` from the data's axis 1."""
    prelu = c.p["act_type"] == "prelu"
    if prelu:
        _count(c, 2, "data, gamma", "act_type='prelu'")
    else:
        _count(c, 1, "data", f"act_type={c.p['act_type']!r} (only prelu takes a gamma)")
    data = c.ins[0]
    if data is None:
        return
    if prelu:
        if c.ins[1] is None:
            if len(data) < 2:
                c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but prelu reads the "
                       f"gamma's size from the data's axis 1: give data of 2 or more "
                       f"dimensions, or the gamma's shape", input=0)
            c.ins[1] = (data[1],)
        if c.ins[1] == data:
            c.set_out(0, data)
    _replace_outs(c, data)


def softmax_shape(c: Call) -> None:
    """``SoftmaxOpShape``: the output has the data's shape (nothing flows back to the
    data); with ``use_length``, the length has the data's shape without ``axis``."""
    use_length = c.p.get("use_length")
    if use_length is None:
        c.fail("use_length=None: softmax needs use_length True or False", attr="use_length")
    _count(c, 2 if use_length else 1, "data, length" if use_length else "data",
           f"use_length={bool(use_length)}")
    data = c.ins[0]
    if use_length:
        nd = _ndim(data)
        if nd < 0:
            c.fail(f"{c.input_label(0)} has an unknown shape, but softmax with use_length "
                   f"needs its rank to shape the length", input=0)
        assert data is not None
        axis = c.p["axis"] if c.p["axis"] != -1 else nd - 1
        if nd > 0:
            size = 1 if nd == 1 else nd - 1
            length = [1] * size
            j = 0
            for i in range(nd):
                if i != axis:
                    if j >= size:
                        c.fail(f"axis {c.p['axis']} is out of range for the {nd}-d data "
                               f"{fmt(data)} with use_length: use an axis from 0 to "
                               f"{nd - 1}, or -1", attr="axis")
                    length[j] = data[i]
                    j += 1
            length_shape = tuple(length)
            try:
                merge(c.ins[1], length_shape)
            except Conflict:
                c.fail(f"{_input(c, 1, 'length')} has shape {fmt(c.ins[1])}, but the data "
                       f"{fmt(data)} without axis {axis} gives {fmt(length_shape)}",
                       input=1)
            c.set_in(1, length_shape)
    try:
        out = merge(data, c.outs[0])
    except Conflict:
        c.fail(f"the output would have the data's shape {fmt(data)}, but the layers that "
               f"read it need {fmt(c.outs[0])}")
    c.outs[0] = out


def _softmax_use_length(c: Call) -> bool:
    use_length = c.p.get("use_length")
    if use_length is None:
        c.fail(f"use_length=None: {_name(c)} needs use_length True or False",
               attr="use_length")
    return bool(use_length)


def softmax_type(c: Call) -> None:
    """``SoftmaxOpType``: the output has ``dtype`` when given (and an unknown data takes
    it), else the data's dtype, with nothing flowing back to the data; the length is
    free.  ``log_softmax`` and ``softmin`` take a length here too, though their shape rule
    refuses one."""
    use_length = _softmax_use_length(c)
    _count(c, 2 if use_length else 1, "data, length" if use_length else "data",
           f"use_length={use_length}")
    dtype = c.p.get("dtype")
    if dtype is not None:
        c.set_out(0, dtype, "(attribute dtype)")
        if c.ins[0] is None:
            c.ins[0] = c.outs[0]
        return
    t = c.ins[0] if c.ins[0] is not None else c.outs[0]
    if t is None:
        return
    if c.outs[0] is not None and c.ins[0] is not None and c.outs[0] != c.ins[0]:
        c.fail(f"{c.input_label(0)} has dtype {c.ins[0]}, but the layers that read the "
               f"output need {c.outs[0]}: give dtype={c.outs[0]!r} or cast the data",
               input=0)
    c.outs[0] = t


RULES: dict[str, Rule] = {
    **_rules(("Dropout",), dropout_shape, dropout_type),
    **_rules(("LeakyReLU",), leaky_relu_shape, elemwise_type),
    **_rules(("softmax",), softmax_shape, softmax_type),
    **_rules(("log_softmax", "softmin"), UNARY_SHAPE, softmax_type),
}
