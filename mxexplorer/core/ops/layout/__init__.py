"""Rules for the layout family: the ops that move, slice, join, reshape and create data.

Owns the shape and dtype rules of MXNet 1.9.1's ``SliceChannel`` (``split``), ``Concat``
and its variant ``_rnn_param_concat``, ``stack``, ``_split_v2``, ``Reshape`` (its codes 0,
-1, -2, -3, -4, ``reverse`` and the deprecated ``target_shape``/``keep_highest``),
``reshape_like``, ``Flatten``, ``expand_dims``, ``squeeze``, ``transpose``, ``SwapAxis``,
``depth_to_space``, ``space_to_depth``, the slicers (``slice``, ``slice_axis``,
``slice_like``, ``Crop``, ``_slice_assign``, ``_slice_assign_scalar``), ``repeat``,
``tile``, ``reverse``, the gatherers (``take``, ``batch_take``, ``gather_nd``,
``scatter_nd``, ``one_hot``, ``_contrib_index_copy``, ``_ravel_multi_index``,
``_unravel_index``, ``diag``), the shape readers (``shape_array``, ``size_array``,
``_contrib_index_array``), the array makers (``_zeros``, ``_ones``, ``_full``, ``_eye``,
``_arange``, ``_linspace``, ``_zeros_without_dtype``, ``_contrib_arange_like``),
``_histogram`` and the two legacy NDArray functions without a shape rule
(``_onehot_encode``, ``fill_element_0index``).

Each rule follows its op's ``FInferShape``/``FInferType`` in MXNet 1.9.1, including its
quirks, because MXNet is the judge: ``Reshape`` does not compare element counts (MXNet
disabled that check), ``Concat`` sums only the inputs whose rank is known, a split along an
unknown axis is refused, ``take`` refuses an unknown data shape.  Integer arithmetic is
C++'s (division truncates toward zero), and a dimension below -1 that an op computes is
refused, as MXNet's shape checks refuse it.  The array makers read their ``shape`` as
MXNet does with numpy semantics off: ``()`` is an unknown shape, a 0 an unknown dimension.
Must not import MXNet or Qt.

The rules live in sub-families: :mod:`.split_join`, :mod:`.reshape`, :mod:`.slicing`,
:mod:`.indexing` and :mod:`.makers` hold the shape rules, :mod:`.dtypes` the dtype rules
and :mod:`.helpers` what they share.  This module merges their ``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule, RuleError
from mxexplorer.core.ops.layout import indexing, makers, reshape, slicing, split_join
from mxexplorer.core.ops.layout.indexing import histogram_shape
from mxexplorer.core.ops.layout.makers import linspace_shape
from mxexplorer.core.ops.layout.reshape import reshape_shape
from mxexplorer.core.ops.layout.slicing import slice_shape
from mxexplorer.core.ops.layout.split_join import slice_channel_shape

RULES: dict[str, Rule] = {
    **split_join.RULES,
    **reshape.RULES,
    **slicing.RULES,
    **indexing.RULES,
    **makers.RULES,
}

__all__ = ["RULES", "RuleError", "histogram_shape", "linspace_shape", "reshape_shape",
           "slice_channel_shape", "slice_shape"]
