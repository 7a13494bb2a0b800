"""Rules for pooling, normalisation, resizing, sampling and region ops, as MXNet 1.9.1
(CPU, MKL-DNN build) infers their shapes and dtypes.

Owns ``Pooling`` (1-3-D, every convention and layout, global, with MKL-DNN's hidden
workspace output for max pooling) and the legacy ``Pooling_v1``; ``BatchNorm``,
``_contrib_BatchNormWithReLU``, ``BatchNorm_v1`` and ``_contrib_SyncBatchNorm``;
``LayerNorm``, ``GroupNorm``, ``InstanceNorm``, ``L2Normalization`` and ``LRN``;
``UpSampling`` (nearest over several inputs, bilinear with its weight),
``_contrib_AdaptiveAvgPooling2D``, ``_contrib_BilinearResize2D`` and ``Pad``;
``ROIPooling``, ``_contrib_ROIAlign``, ``_contrib_RROIAlign``, ``_contrib_PSROIPooling``
and ``_contrib_DeformablePSROIPooling``; ``BilinearSampler``, ``GridGenerator`` and
``SpatialTransformer``.

Each rule follows its op's ``FInferShape``/``FInferType`` (or the legacy operator's
``InferShape``/``InferType``) step by step: when it waits (the data's rank, or its whole
shape, not known yet), what it fills in, what it overwrites without a check (most of
these ops replace what was known of their outputs, several of their parameters'
shapes), what it refuses, and the arithmetic it does, unknown sizes counted as -1,
C's truncating division, float32 products and 16-bit sizes included, so that odd
inputs come out as MXNet has them.  Checks MXNet's parameter parser makes that the op
table does not describe (a kernel or stride with a 0, a pooled_size of other than two
values) are made here whether or not shapes are known.  Messages name the attribute or
input at fault and what would fit.  Must not import MXNet or Qt.

The rules live in sub-families: :mod:`.norm` (the normalisations), :mod:`.pool`
(Pooling, Pooling_v1), :mod:`.resize` (UpSampling, the resizers, Pad) and
:mod:`.regions` (the region and sampling ops); :mod:`.helpers` holds what they share.
This module merges their ``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule
from mxexplorer.core.ops.pool_norm import norm, pool, regions, resize
from mxexplorer.core.ops.pool_norm.helpers import FAMILY

RULES: dict[str, Rule] = {
    **norm.RULES,
    **pool.RULES,
    **resize.RULES,
    **regions.RULES,
}

__all__ = ["FAMILY", "RULES"]
