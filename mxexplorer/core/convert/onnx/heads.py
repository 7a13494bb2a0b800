"""Converters of the training heads: each exported as its inference meaning, its label
input not read (``reads=1``: labels do not become graph inputs), said in the export
report in one sentence.

MXNet's inference forward of each head, from its kernel:

* ``SoftmaxOutput`` (``Softmax``): a softmax over axis 1 with ``multi_output`` (the data
  seen as (n, k, rest)); over the last axis with ``preserve_shape`` (FlatTo2D) or on
  2-D data; otherwise over every axis but the batch, flattened (the data seen as
  (n, size / n)), as MXNet documents it and computes it on GPU.  Its CPU build's oneDNN
  kernel (float32 4-D data, not ``multi_output``) takes the last axis instead, so a
  check on CPU differs on 4-D data there; the export follows the documented meaning.
* ``LinearRegressionOutput``, ``MAERegressionOutput``, ``SVMOutput``: their data.
* ``LogisticRegressionOutput``: the sigmoid of its data.
* ``WarpCTC`` (the warp-ctc plugin): its forward is a softmax of the data flattened to
  2-D (the first axis kept), so over the last axis of its (steps x batch, alphabet)
  data; the CTC loss is its backward only.
* ``IdentityAttachKLSparseReg``: its data (the KL penalty is its backward only).
* ``CTCLoss``: a loss, no inference meaning (refused; the driver exports what feeds a
  loss that is a head).

Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.convert.onnx.context import Ctx, OpNode
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]


def _said(cx: Ctx, node: OpNode, meaning: str) -> None:
    labels = ", ".join(f"'{name}'" for name in node.unread)
    dropped = f"; its label input {labels} dropped" if labels else ""
    cx.note(f"{node.op} '{node.name}' exported as {meaning} (its inference "
            f"meaning){dropped}")


def _flat_softmax(cx: Ctx, node: OpNode) -> str:
    """Softmax over every axis but the first: Flatten, Softmax, Reshape back."""
    x = node.inputs[0]
    if node.rank() == 2:
        return cx.one("Softmax", [x], node.outputs[0], axis=1)
    flat = cx.one("Flatten", [x], hint=node.name, axis=1)
    soft = cx.one("Softmax", [flat], hint=node.name, axis=1)
    return cx.reshape(soft, node.in_shapes[0], node.outputs[0])


@converts("SoftmaxOutput", reads=1)
def softmax_output(cx: Ctx, node: OpNode) -> Out:
    """Softmax over axis 1 (``multi_output``), the last axis (``preserve_shape``, 2-D
    data), or every axis but the batch (see the module's note on CPU oneDNN)."""
    p, x, rank = node.p, node.inputs[0], node.rank()
    if p.get("multi_output"):
        if rank < 2:
            raise node.refuse(f"multi_output on {rank}-D data (MXNet needs an axis 1)")
        _said(cx, node, "softmax over axis 1")
        return [cx.one("Softmax", [x], node.outputs[0], axis=1)]
    if p.get("preserve_shape") or rank == 2:
        _said(cx, node, "softmax over the last axis")
        return [cx.one("Softmax", [x], node.outputs[0], axis=-1)]
    meaning = "softmax over every axis but the batch, flattened"
    if rank == 4:
        meaning += (", as MXNet documents it and computes it on GPU; its CPU oneDNN "
                    "kernel takes the last axis of 4-D data, so a check on CPU differs")
    _said(cx, node, meaning)
    return [_flat_softmax(cx, node)]


@converts("LinearRegressionOutput", "MAERegressionOutput", "SVMOutput", reads=1)
def regression_output(cx: Ctx, node: OpNode) -> Out:
    """The data itself (the loss is the backward's)."""
    _said(cx, node, "its data (identity)")
    return [cx.identity(node.inputs[0], node.outputs[0])]


@converts("LogisticRegressionOutput", reads=1)
def logistic_output(cx: Ctx, node: OpNode) -> Out:
    _said(cx, node, "the sigmoid of its data")
    return [cx.one("Sigmoid", node.inputs[:1], node.outputs[0])]


@converts("WarpCTC", reads=1)
def warp_ctc(cx: Ctx, node: OpNode) -> Out:
    """The plugin's forward: softmax of the data flattened to (first axis, rest)."""
    _said(cx, node, "softmax over its data flattened to 2-D (the last axis of its "
                    "(steps x batch, alphabet) data)")
    return [_flat_softmax(cx, node)]


@converts("IdentityAttachKLSparseReg", reads=1)
def identity_kl(cx: Ctx, node: OpNode) -> Out:
    cx.note(f"{node.op} '{node.name}' exported as its data (identity; its sparseness "
            "penalty acts in training only)")
    return [cx.identity(node.inputs[0], node.outputs[0])]


@converts("CTCLoss", reads=1)
def ctc_loss(cx: Ctx, node: OpNode) -> Out:
    raise node.refuse("a training loss (CTC) has no inference meaning; export the "
                      "graph up to the output that feeds it")
