"""Rules for the nn family: the layers with weights and the sliding-window ops that go
with them, as MXNet 1.9.1 infers their shapes and dtypes.

Owns ``Convolution`` (1-D, 2-D, 3-D, every layout), ``Deconvolution``,
``FullyConnected``, ``Embedding`` and ``_contrib_SparseEmbedding``, the legacy
``Convolution_v1``, ``_contrib_DeformableConvolution`` and
``_contrib_ModulatedDeformableConvolution``, ``im2col``/``col2im`` and ``Correlation``.

Each rule follows its op's ``FInferShape``/``FInferType`` step by step: what it fills in
either direction (weight and bias from the data, the data's batch and, at stride 1, its
spatial size from the output), when it waits (data not known yet) and what it refuses,
with the same integer arithmetic (C truncation, the 32-bit unsigned sums some of these
ops do on an unknown ``-1``) so that odd inputs come out as MXNet has them.  Messages
name the attribute or input at fault and what would fit.  Must not import MXNet or Qt.

The rules live in sub-families: :mod:`.conv` (Convolution, Deconvolution,
FullyConnected, Embedding), :mod:`.conv_legacy` (Convolution_v1 and the deformable
convolutions) and :mod:`.windows` (im2col, col2im, Correlation); :mod:`.helpers` holds
what they share.  This module merges their ``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule
from mxexplorer.core.ops.nn import conv, conv_legacy, windows
from mxexplorer.core.ops.nn.conv import (
    convolution_shape,
    deconvolution_shape,
    embedding_shape,
    embedding_type,
    fully_connected_shape,
    weighted_type,
)
from mxexplorer.core.ops.nn.conv_legacy import legacy_type

RULES: dict[str, Rule] = {
    **conv.RULES,
    **conv_legacy.RULES,
    **windows.RULES,
}

__all__ = ["RULES", "convolution_shape", "deconvolution_shape", "fully_connected_shape",
           "embedding_shape", "embedding_type", "weighted_type", "legacy_type"]
