"""Rules for the element-wise family: ops whose output has their input's shape, and the
loss and activation layers built on that.

Owns the shape and dtype rules of MXNet 1.9.1's unary math ops (``exp``, ``relu``,
``sigmoid``, ``_copy`` ...), the same-shape binary ops (``elemwise_add`` and its aliases
``_Plus``, ``_add`` ..., ``_maximum``, the comparisons, ``_grad_add`` ...), the ops with a
scalar (``_plus_scalar``, ``_greater_scalar`` ... with ``NumpyBinaryScalarType``'s dtype
rule), ``add_n``, ``clip``, ``Cast``, ``amp_cast``, ``amp_multicast``, ``Activation``,
``LeakyReLU`` (every ``act_type``: prelu's gamma, rrelu's mask), ``Dropout`` (and its mask),
``softmax``/``log_softmax``/``softmin`` (``dtype``, ``use_length``), ``SoftmaxActivation``,
the output layers (``SoftmaxOutput``, ``SVMOutput``, the regression outputs, ``MakeLoss``,
``CTCLoss``, ``softmax_cross_entropy``), ``IdentityAttachKLSparseReg`` and the copies
(``_copyto``, ``_CrossDeviceCopy``).

Each rule follows its op's ``FInferShape``/``FInferType`` in MXNet 1.9.1, quirks included,
because MXNet is the judge: several output layers replace what was known of their outputs
instead of checking it, ``softmax`` does not pass its output's shape back to its data,
``Dropout``/``MakeLoss``/``SVMOutput``/``CTCLoss`` refuse an input of unknown dtype, the
legacy comparisons keep their input's dtype, and the regression outputs need the data's
full shape.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops.base import (
    Call,
    Conflict,
    DtypeFn,
    MaybeShape,
    Rule,
    ShapeFn,
    elemwise_type,
    fmt,
    known,
    merge,
    table,
)

FAMILY = "elementwise"

#: the dtypes MXNet's ``common::is_int`` calls integers (``bool`` is apart)
INTEGERS = ("uint8", "int8", "int32", "int64")
#: the dtypes ``amp_cast``/``amp_multicast`` cast (others pass through)
FLOATS = ("float32", "float16", "bfloat16")


# =================================================================== small helpers
def _name(c: Call) -> str:
    """The op's canonical name (a file may use an alias)."""
    return opinfo.canonical_op(c.op)


def _count(c: Call, n: int, names: str, why: str = "") -> None:
    """MXNet checks the input count: ``n`` inputs named ``names`` (``why``: the attribute
    that decides it)."""
    if len(c.ins) != n:
        got = len(c.ins)
        c.fail(f"{_name(c)} has {got} input{'s' if got != 1 else ''}, but it takes {n} "
               f"({names}){' with ' + why if why else ''}")


def _input(c: Call, i: int, slot: str) -> str:
    """``input 'x' (slot)``; ``slot`` names an input the op table does not (``softmax``'s
    length, ``CTCLoss``'s lengths)."""
    label = c.input_label(i)
    generic = c.slot(i)
    if generic.startswith("arg") or generic.startswith("input "):
        label = label.replace(f"({generic})", f"({slot})") if f"({generic})" in label \
            else slot
    return label


def _outs_count(c: Call, n: int, attr: str) -> None:
    if len(c.outs) != n:
        c.fail(f"{_name(c)} has {len(c.outs)} outputs, but {attr}={n} needs {n}", attr=attr)


def _ndim(shape: MaybeShape) -> int:
    """MXNet's ``ndim()``: -1 for an unknown rank."""
    return -1 if shape is None else len(shape)


def _dim(d: int) -> str:
    return "?" if d < 0 else str(d)


def _rank_text(shape: MaybeShape) -> str:
    return "an unknown shape" if shape is None else f"shape {fmt(shape)}"


def _replace_outs(c: Call, value: Any) -> None:
    """The op clears its outputs and writes ``value`` to each (no check against what was
    known of them, as MXNet's ``out_shape->clear()``)."""
    for i in range(len(c.outs)):
        c.outs[i] = value


def _merge_all(c: Call) -> MaybeShape:
    """``ElemwiseShape``: the one shape every input and output describes; refuses the first
    input or output that disagrees with those before it."""
    shape: MaybeShape = None
    first = -1
    for i, s in enumerate(c.ins):
        try:
            shape = merge(shape, s)
        except Conflict:
            before = (f"{c.input_label(first)} has" if shape == c.ins[first]
                      else "the inputs before it have")
            c.fail(f"{c.input_label(i)} has shape {fmt(s)}, but {before} shape {fmt(shape)}: "
                   f"the inputs of {_name(c)} must have one shape", input=i)
        if s is not None and first < 0:
            first = i
    for i, s in enumerate(c.outs):
        try:
            shape = merge(shape, s)
        except Conflict:
            name = "the output" if len(c.outs) == 1 else f"output {i}"
            c.fail(f"the inputs of {_name(c)} have shape {fmt(shape)}, but the layers that "
                   f"read {name} need {fmt(s)}")
    return shape


def _fill_all(c: Call, shape: MaybeShape) -> None:
    if shape is None:
        return
    for i in range(len(c.ins)):
        c.set_in(i, shape)
    for i in range(len(c.outs)):
        c.set_out(i, shape)


# ==================================================== element-wise shape and dtype
def same_shape(c: Call) -> None:
    """Every input and output has one shape, known from any of them (``ElemwiseShape``,
    ``add_n``'s ``ElementWiseSumShape``): no input count checked."""
    _fill_all(c, _merge_all(c))


def _slots(n: int) -> str:
    return {1: "data", 2: "lhs, rhs"}.get(n, f"{n} arrays")


def elemwise_shape(n: int) -> ShapeFn:
    """``ElemwiseShape<n, 1>``: ``n`` inputs, all of one shape with the output."""
    def rule(c: Call) -> None:
        _count(c, n, _slots(n))
        same_shape(c)
    rule.__name__ = rule.__qualname__ = f"elemwise_shape_{n}"
    rule.__doc__ = f"``ElemwiseShape<{n}, 1>``: {n} input(s) of the output's shape."
    return rule


def elemwise_dtype(n: int) -> DtypeFn:
    """``ElemwiseType<n, 1>``: ``n`` inputs, all of one dtype with the output."""
    def rule(c: Call) -> None:
        _count(c, n, _slots(n))
        elemwise_type(c)
    rule.__name__ = rule.__qualname__ = f"elemwise_dtype_{n}"
    rule.__doc__ = f"``ElemwiseType<{n}, 1>``: {n} input(s) of the output's dtype."
    return rule


UNARY_SHAPE = elemwise_shape(1)
UNARY_TYPE = elemwise_dtype(1)
BINARY_SHAPE = elemwise_shape(2)
BINARY_TYPE = elemwise_dtype(2)


def scalar_type(c: Call) -> None:
    """``NumpyBinaryScalarType``: an integer input with a non-integer scalar
    (``is_int=False``) gives float64; a bool input gives int64 (or float64 with a
    non-integer scalar); otherwise the output has the input's dtype, both ways."""
    _count(c, 1, "data")
    t = c.ins[0]
    is_int = bool(c.p.get("is_int", True))
    if t in INTEGERS and not is_int:
        c.set_out(0, "float64", f"(a {t} input with a non-integer scalar, is_int=False)")
    elif t == "bool":
        c.set_out(0, "int64" if is_int else "float64", "(a bool input)")
    else:
        if t is not None:
            c.set_out(0, t)
        if c.outs[0] is not None:
            c.set_in(0, c.outs[0], "the output is")


def cast_type(c: Call) -> None:
    """``CastType``: the output has ``dtype``; the input is free."""
    _count(c, 1, "data")
    c.set_out(0, c.p["dtype"], "(attribute dtype)")


def amp_cast_type(c: Call) -> None:
    """``AMPCastType``: a float32/float16/bfloat16 input becomes ``dtype``, another keeps
    its dtype; nothing flows back."""
    _count(c, 1, "data")
    t = c.ins[0]
    if t in FLOATS:
        c.set_out(0, c.p["dtype"], "(attribute dtype)")
    elif t is not None:
        c.set_out(0, t, "(amp_cast keeps a non-float dtype)")


def _multicast_count(c: Call) -> int:
    n = int(c.p["num_outputs"])
    if len(c.ins) != n:
        c.fail(f"amp_multicast has {len(c.ins)} inputs, but num_outputs={n}: give as many "
               f"inputs as num_outputs", attr="num_outputs")
    _outs_count(c, n, "num_outputs")
    return n


def amp_multicast_shape(c: Call) -> None:
    """``AMPMultiCastShape``: output ``i`` has input ``i``'s shape, both ways."""
    n = _multicast_count(c)
    for i in range(n):
        c.set_out(i, c.ins[i])
        c.set_in(i, c.outs[i], f"output {i} has")


def amp_multicast_type(c: Call) -> None:
    """``AMPMultiCastType``: the float inputs (float32/float16/bfloat16) are cast to the
    widest float among the inputs and outputs (with ``cast_narrow``, the narrowest);
    other inputs keep their dtype.  Without ``cast_narrow`` and without any float32, the
    widest is the first input's dtype, as MXNet has it."""
    n = _multicast_count(c)
    narrow = bool(c.p["cast_narrow"])
    target: str | None = "float32" if narrow else c.ins[0] if n else None
    for i in range(n):
        pair = (c.ins[i], c.outs[i])
        if not narrow and "float32" in pair:
            target = "float32"
        elif narrow and "float16" in pair:
            target = "float16"
        elif narrow and "bfloat16" in pair:
            target = "bfloat16"
    for i in range(n):
        t = c.ins[i]
        if t in FLOATS:
            c.set_out(i, target, "(the float inputs' common dtype)")
        elif t is not None:
            c.set_out(i, t)


def copyto_type(c: Call) -> None:
    """``_copyto``: its type rule infers nothing."""


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


def _known_input_type(c: Call, i: int = 0) -> str:
    t = c.ins[i]
    if t is None:
        c.fail(f"{c.input_label(i)} has no known dtype, but {_name(c)} needs it: give "
               f"the input a dtype", input=i)
    assert t is not None
    return str(t)


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


# ============================================================== output layers
def softmax_output_shape(c: Call) -> None:
    """``SoftmaxOutputShape``: the output has the data's shape (replaced).  A label that is
    not the data's shape is the data's shape without its last axis, or with
    ``multi_output`` one of ``(n, size / n / c)``, ``(n, *spatial)``, ``(n, 1, *spatial)``
    (the first when unknown, which needs the data's full shape)."""
    _count(c, 2, "data, label")
    data = c.ins[0]
    if data is None:
        return
    label = c.ins[1]
    if data != label:
        if c.p["multi_output"]:
            if len(data) < 2:
                c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but multi_output needs "
                       f"data of 2 or more dimensions (batch, classes, ...)", input=0)
            if not known(data) or 0 in data[:2]:
                c.fail(f"{c.input_label(0)} has shape {fmt(data)}, but multi_output needs "
                       f"the data's full shape to check the label", input=0)
            size = 1
            for d in data:
                size *= d
            flat = (data[0], size // data[0] // data[1])
            spatial = (data[0], *data[2:])
            single = (data[0], 1, *data[2:])
            if label is None:
                c.ins[1] = flat
            elif label not in (flat, spatial, single):
                fits = " or ".join(dict.fromkeys(fmt(s) for s in (flat, spatial, single)))
                c.fail(f"{c.input_label(1)} has shape {fmt(label)}, but with multi_output "
                       f"the label of data {fmt(data)} has shape {fits} (or the data's own "
                       f"shape)", input=1)
        elif data:
            c.set_in(1, data[:-1], f"the data {fmt(data)} without its last axis gives")
    c.outs[0] = data


def softmax_output_type(c: Call) -> None:
    """``SoftmaxOutputType``: the label has the data's dtype; the output takes it
    (replaced), or gives it to an unknown data."""
    _count(c, 2, "data, label")
    t = c.ins[0]
    if t is None:
        if c.outs[0] is None:
            return
        t = c.outs[0]
    else:
        c.outs[0] = t
    for i in range(len(c.ins)):
        c.set_in(i, t, "the data is" if i else "the output is")


def svm_output_shape(c: Call) -> None:
    """``SVMOutput``: the label is the data's shape without its last axis; the output has
    the data's shape (replaced)."""
    _count(c, 2, "data, label")
    data = c.ins[0]
    if data is None:
        return
    if data:
        c.set_in(1, data[:-1], f"the data {fmt(data)} without its last axis gives")
    c.outs[0] = data


def svm_output_type(c: Call) -> None:
    """``SVMOutput``: the data's dtype must be known; the label has it, the output takes it
    (replaced)."""
    _count(c, 2, "data, label")
    t = _known_input_type(c)
    c.set_in(1, t, "the data is")
    _replace_outs(c, t)


def regression_shape(c: Call) -> None:
    """``RegressionOpShape``: needs the data's full shape; an unknown label takes it (or
    ``(n,)`` for ``(n, 1)`` data); a given label must be fully known with the data's first
    dimension and number of elements.  The output has the data's shape (replaced)."""
    _count(c, 2, "data, label")
    data = c.ins[0]
    if data is None or not known(data):
        return
    label = c.ins[1]
    if label is None:
        c.ins[1] = (data[0],) if len(data) == 2 and data[1] == 1 else data
    else:
        if not label or not data:
            c.fail(f"{c.input_label(1)} has shape {fmt(label)} and the data {fmt(data)}: "
                   f"a regression output needs both to have a first dimension", input=1)
        if not known(label):
            c.fail(f"{c.input_label(1)} has shape {fmt(label)} with an unknown dimension: "
                   f"a regression output needs the label's full shape (or none)", input=1)
        n_label = n_data = 1
        for d in label:
            n_label *= d
        for d in data:
            n_data *= d
        if label[0] != data[0] or n_label != n_data:
            c.fail(f"{c.input_label(1)} has shape {fmt(label)}, but the data {fmt(data)} "
                   f"needs a label of {data[0]} rows and {n_data} elements "
                   f"(such as {fmt(data)})", input=1)
    c.outs[0] = data


def pass_shape(c: Call) -> None:
    """The legacy ``MakeLoss``/``_CrossDeviceCopy``: the output is the data's shape as it
    is (replaced, even when unknown); nothing flows back."""
    _count(c, 1, "data")
    data = c.ins[0]
    if data is not None and len(data) == 0:
        return
    c.outs[0] = data


def make_loss_type(c: Call) -> None:
    """``MakeLoss``: the data's dtype must be known; the output takes it (replaced)."""
    _count(c, 1, "data")
    _replace_outs(c, _known_input_type(c))


def cross_device_type(c: Call) -> None:
    """``_CrossDeviceCopy``: the output takes the data's dtype (replaced) once known."""
    _count(c, 1, "data")
    if c.ins[0] is not None:
        _replace_outs(c, c.ins[0])


def kl_sparse_shape(c: Call) -> None:
    """``IdentityAttachKLSparseReg``: the output has the data's shape and ``moving_avg``
    the shape ``(channels,)`` from the data's axis 1, both replaced."""
    _count(c, 2, "data, moving_avg")
    data = c.ins[0]
    if data is not None and len(data) == 0:
        return
    if data is None or len(data) < 2:
        c.fail(f"{c.input_label(0)} has {_rank_text(data)}, but "
               "IdentityAttachKLSparseReg reads the size of moving_avg from the data's "
               "axis 1: give the data's shape, with 2 or more dimensions", input=0)
    assert data is not None
    c.outs[0] = data
    c.ins[1] = (data[1],)


def kl_sparse_type(c: Call) -> None:
    """The legacy default type rule: the data must be float32 (or unknown); every input
    and output becomes float32."""
    _count(c, 2, "data, moving_avg")
    if c.ins[0] not in (None, "float32"):
        c.fail(f"{c.input_label(0)} has dtype {c.ins[0]}, but IdentityAttachKLSparseReg "
               f"takes float32 only", input=0)
    c.ins[:] = ["float32"] * len(c.ins)
    _replace_outs(c, "float32")


def ctc_shape(c: Call) -> None:
    """``CTCLossOpShape``: data (sequence, batch, alphabet) and label (batch, labels) of
    known rank with equal batch sizes (compared as given, unknown sizes too); the lengths
    are vectors of the batch size; the loss is ``(batch,)``, the hidden gradient the
    data's shape."""
    udl = bool(c.p["use_data_lengths"])
    ull = bool(c.p["use_label_lengths"])
    names = ", ".join(["data", "label"] + ["data_lengths"] * udl + ["label_lengths"] * ull)
    _count(c, 2 + udl + ull, names, f"use_data_lengths={udl}, use_label_lengths={ull}")
    data, label = c.ins[0], c.ins[1]
    if data is None or len(data) != 3:
        c.fail(f"{c.input_label(0)} has {_rank_text(data)}, but CTCLoss needs 3-d data "
               f"(sequence length, batch, alphabet size)", input=0)
    if label is None or len(label) != 2:
        c.fail(f"{c.input_label(1)} has {_rank_text(label)}, but CTCLoss needs a 2-d label "
               f"(batch, label length)", input=1)
    assert data is not None and label is not None
    if data[1] != label[0]:
        c.fail(f"{c.input_label(1)} has shape {fmt(label)}, but the data {fmt(data)} has "
               f"batch size {_dim(data[1])}: the label's first dimension must be the same "
               f"(both known or both unknown)", input=1)
    if udl:
        lengths = c.ins[2]
        if lengths is None or len(lengths) != 1 or lengths[0] != data[1]:
            c.fail(f"{_input(c, 2, 'data_lengths')} has {_rank_text(lengths)}, but with "
                   f"use_data_lengths it is a vector of the batch size, shape "
                   f"({_dim(data[1])},)", input=2)
    if ull:
        k = 2 + udl
        lengths = c.ins[k]
        if lengths is None or len(lengths) != 1 or lengths[0] != label[0]:
            c.fail(f"{_input(c, k, 'label_lengths')} has {_rank_text(lengths)}, but with "
                   f"use_label_lengths it is a vector of the batch size, shape "
                   f"({_dim(label[0])},)", input=k)
    if data[0] < label[1]:
        c.fail(f"{c.input_label(1)} has shape {fmt(label)}: its {_dim(label[1])} "
               f"labels exceed the data's sequence length {_dim(data[0])}", input=1)
    c.set_out(0, (data[1],))
    if len(c.outs) > 1:
        c.set_out(1, data)


def ctc_type(c: Call) -> None:
    """``CTCLossOpType``: the data's dtype must be known; the loss and its gradient have
    it; labels and lengths are free."""
    if len(c.ins) < 2:
        c.fail(f"CTCLoss has {len(c.ins)} inputs, but it takes at least 2 (data, label)")
    t = _known_input_type(c)
    for i in range(len(c.outs)):
        c.set_out(i, t)


def softmax_ce_shape(c: Call) -> None:
    """``SoftmaxCrossEntropyShape``: 2-d data and a 1-d label of the same batch size
    (compared as given); the output is ``(1,)``."""
    _count(c, 2, "data, label")
    data, label = c.ins
    if data is None or len(data) != 2:
        c.fail(f"{c.input_label(0)} has {_rank_text(data)}, but softmax_cross_entropy "
               f"needs 2-d data (batch, classes)", input=0)
    if label is None or len(label) != 1:
        c.fail(f"{c.input_label(1)} has {_rank_text(label)}, but softmax_cross_entropy "
               f"needs a 1-d label (batch,)", input=1)
    assert data is not None and label is not None
    if data[0] != label[0]:
        c.fail(f"{c.input_label(1)} has shape {fmt(label)}, but the data {fmt(data)} needs "
               f"a label of its batch size, shape {fmt(data[:1])} (both known or both "
               f"unknown)", input=1)
    c.set_out(0, (1,))


# ====================================================================== tables
#: ``ElemwiseShape<1, 1>`` and ``ElemwiseType<1, 1>``
UNARY = (
    "Activation", "SoftmaxActivation", "relu", "sigmoid", "hard_sigmoid", "softsign",
    "_copy", "BlockGrad", "make_loss", "negative", "abs", "sign", "round", "rint", "ceil",
    "floor", "trunc", "fix", "erf", "erfinv", "gamma", "gammaln", "logical_not", "exp",
    "log", "log10", "log2", "log1p", "expm1", "reciprocal", "square", "sqrt", "rsqrt",
    "cbrt", "rcbrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "degrees",
    "radians", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "clip",
    "zeros_like", "ones_like", "_contrib_div_sqrt_dim", "smooth_l1",
    "_contrib_gradientmultiplier", "_contrib_round_ste", "_contrib_sign_ste",
    "_contrib_quadratic",
)

#: ``ElemwiseShape<2, 1>`` and ``ElemwiseType<2, 1>`` (the legacy comparisons keep their
#: inputs' dtype)
BINARY = (
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_grad_add", "_mod",
    "_power", "_hypot", "_maximum", "_minimum", "_equal", "_not_equal", "_greater",
    "_greater_equal", "_lesser", "_lesser_equal", "_logical_and", "_logical_or",
    "_logical_xor", "_scatter_elemwise_div", "_identity_with_attr_like_rhs",
)

#: ``ElemwiseShape<1, 1>`` and ``NumpyBinaryScalarType``
SCALAR = (
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
    "_rdiv_scalar", "_mod_scalar", "_rmod_scalar", "_maximum_scalar", "_minimum_scalar",
    "_power_scalar", "_rpower_scalar", "_hypot_scalar", "_equal_scalar",
    "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar", "_lesser_scalar",
    "_lesser_equal_scalar", "_logical_and_scalar", "_logical_or_scalar",
    "_logical_xor_scalar", "_scatter_plus_scalar", "_scatter_minus_scalar",
)

#: the regression outputs: ``RegressionOpShape`` and ``ElemwiseType<2, 1>``
REGRESSION = ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput")


def _rules(names: Sequence[str], shape: ShapeFn, dtype: DtypeFn) -> dict[str, Rule]:
    return table(FAMILY, names, shape, dtype)


RULES: dict[str, Rule] = {
    **_rules(UNARY, UNARY_SHAPE, UNARY_TYPE),
    **_rules(BINARY, BINARY_SHAPE, BINARY_TYPE),
    **_rules(SCALAR, UNARY_SHAPE, scalar_type),
    **_rules(("add_n",), same_shape, elemwise_type),
    **_rules(("Cast",), UNARY_SHAPE, cast_type),
    **_rules(("amp_cast",), UNARY_SHAPE, amp_cast_type),
    **_rules(("amp_multicast",), amp_multicast_shape, amp_multicast_type),
    **_rules(("_copyto",), UNARY_SHAPE, copyto_type),
    **_rules(("Dropout",), dropout_shape, dropout_type),
    **_rules(("LeakyReLU",), leaky_relu_shape, elemwise_type),
    **_rules(("softmax",), softmax_shape, softmax_type),
    **_rules(("log_softmax", "softmin"), UNARY_SHAPE, softmax_type),
    **_rules(("SoftmaxOutput",), softmax_output_shape, softmax_output_type),
    **_rules(("SVMOutput",), svm_output_shape, svm_output_type),
    **_rules(REGRESSION, regression_shape, BINARY_TYPE),
    **_rules(("MakeLoss",), pass_shape, make_loss_type),
    **_rules(("_CrossDeviceCopy",), pass_shape, cross_device_type),
    **_rules(("IdentityAttachKLSparseReg",), kl_sparse_shape, kl_sparse_type),
    **_rules(("CTCLoss",), ctc_shape, ctc_type),
    **_rules(("softmax_cross_entropy",), softmax_ce_shape, BINARY_TYPE),
}
