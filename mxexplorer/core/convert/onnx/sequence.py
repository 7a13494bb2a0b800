"""Converters of the sequence family: ``SequenceMask``, ``SequenceLast``,
``SequenceReverse`` here, the fused ``RNN`` in :mod:`sequence_rnn`.

MXNet reads a sequence length as its integer part (``static_cast`` of the value), as
ONNX's Cast to int64 does; without ``use_sequence_length`` every sequence is whole.
Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]


def _axis(node: OpNode) -> int:
    axis = int(node.p.get("axis", 0))
    if axis not in (0, 1):
        raise node.refuse(f"axis {axis} (MXNet takes 0 or 1)")
    if node.rank() < 2:
        raise node.refuse(f"{node.rank()}-D data (MXNet reads a sequence and a batch axis)")
    return axis


def _lengths(cx: Ctx, node: OpNode) -> str:
    """The lengths as int64 (the integer part, as MXNet reads them)."""
    if node.in_dtypes[1] == "int64":
        return node.inputs[1]
    return cx.cast(node.inputs[1], "int64", hint=f"{node.name}__lengths")


@converts("SequenceMask")
def sequence_mask(cx: Ctx, node: OpNode) -> Out:
    """Steps at or past each batch entry's length set to ``value``: Where(step <
    length, data, value), the step along ``axis`` and the batch along the other."""
    import numpy as np

    axis = _axis(node)
    x, out = node.inputs[0], node.outputs[0]
    if not node.p.get("use_sequence_length"):
        return [cx.identity(x, out)]
    shape = node.in_shapes[0]
    steps = np.arange(shape[axis], dtype="int64")
    lengths = _lengths(cx, node)
    ones = [1] * (len(shape) - 2)
    if axis == 0:
        mask = cx.one("Less", [cx.const(steps.reshape(-1, 1)),
                               cx.reshape(lengths, [1, -1])], hint=f"{node.name}__mask")
    else:
        mask = cx.one("Less", [cx.const(steps.reshape(1, -1)),
                               cx.reshape(lengths, [-1, 1])], hint=f"{node.name}__mask")
    if ones:
        mask = cx.reshape(mask, [shape[0], shape[1]] + ones)
    value = cx.const(np.array([float(node.p.get("value", 0.0))],
                              dtype=node.in_dtypes[0] or "float32"))
    return [cx.one("Where", [mask, x, value], out)]


@converts("SequenceLast")
def sequence_last(cx: Ctx, node: OpNode) -> Out:
    """``data[len[b] - 1, b]`` (axis 0) or ``data[b, len[b] - 1]`` (axis 1); without
    lengths, the last step."""
    axis = _axis(node)
    x, out = node.inputs[0], node.outputs[0]
    if not node.p.get("use_sequence_length"):
        last = cx.one("Gather", [x, cx.ints([-1])], hint=f"{node.name}__last", axis=axis)
        return [cx.squeeze(last, [axis], out)]
    if axis == 0:                  # batch first, then the steps
        rank = node.rank()
        x = cx.one("Transpose", [x], hint=f"{node.name}__batch_first",
                   perm=[1, 0, *range(2, rank)])
    step = cx.one("Sub", [_lengths(cx, node), cx.ints([1])], hint=f"{node.name}__step")
    index = cx.reshape(step, [-1, 1])
    return [cx.one("GatherND", [x, index], out, batch_dims=1)]


@converts("SequenceReverse")
def sequence_reverse(cx: Ctx, node: OpNode) -> Out:
    """The first ``len[b]`` steps of each batch entry reversed, the rest kept
    (ReverseSequence, time axis 0, batch axis 1); without lengths, all steps reversed.
    MXNet takes axis 0 only."""
    axis = int(node.p.get("axis", 0))
    if axis != 0:
        raise node.refuse(f"axis {axis} (MXNet's kernel takes axis 0 only)")
    if node.rank() < 2:
        raise node.refuse(f"{node.rank()}-D data (MXNet reads steps and a batch axis)")
    x, out = node.inputs[0], node.outputs[0]
    if not node.p.get("use_sequence_length"):
        return [cx.one("Slice", [x, cx.ints([-1]), cx.ints([-2 ** 62]), cx.ints([0]),
                                 cx.ints([-1])], out)]
    return [cx.one("ReverseSequence", [x, _lengths(cx, node)], out, batch_axis=1,
                   time_axis=0)]
