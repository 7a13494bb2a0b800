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

The rules live in sub-families: :mod:`.arith` (unary, binary and scalar math, casts),
:mod:`.activations` (Dropout, LeakyReLU, softmax) and :mod:`.outputs` (the output and
loss layers); :mod:`.helpers` holds what they share.  This module merges their
``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule
from mxexplorer.core.ops.elementwise import activations, arith, outputs
from mxexplorer.core.ops.elementwise.arith import BINARY, SCALAR, UNARY, scalar_type
from mxexplorer.core.ops.elementwise.outputs import REGRESSION

RULES: dict[str, Rule] = {
    **arith.RULES,
    **activations.RULES,
    **outputs.RULES,
}

__all__ = ["BINARY", "REGRESSION", "RULES", "SCALAR", "UNARY", "scalar_type"]
