"""Rules for the output and loss layers: ``SoftmaxOutput``, ``SVMOutput``, the regression
outputs (which need the data's full shape), ``MakeLoss``, ``_CrossDeviceCopy``,
``IdentityAttachKLSparseReg``, ``CTCLoss`` and ``softmax_cross_entropy``.  Several of
them replace what was known of their outputs instead of checking it, as MXNet does.
Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, fmt, known
from mxexplorer.core.ops.elementwise.helpers import (
    BINARY_TYPE,
    _count,
    _dim,
    _input,
    _known_input_type,
    _rank_text,
    _replace_outs,
    _rules,
)


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


#: the regression outputs: ``RegressionOpShape`` and ``ElemwiseType<2, 1>``
REGRESSION = ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput")


RULES: dict[str, Rule] = {
    **_rules(("SoftmaxOutput",), softmax_output_shape, softmax_output_type),
    **_rules(("SVMOutput",), svm_output_shape, svm_output_type),
    **_rules(REGRESSION, regression_shape, BINARY_TYPE),
    **_rules(("MakeLoss",), pass_shape, make_loss_type),
    **_rules(("_CrossDeviceCopy",), pass_shape, cross_device_type),
    **_rules(("IdentityAttachKLSparseReg",), kl_sparse_shape, kl_sparse_type),
    **_rules(("CTCLoss",), ctc_shape, ctc_type),
    **_rules(("softmax_cross_entropy",), softmax_ce_shape, BINARY_TYPE),
}
