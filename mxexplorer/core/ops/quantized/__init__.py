"""Rules for MXNet 1.9.1's int8 ops: ``_contrib_quantize`` (and ``_v2``, ``_asym``),
``_contrib_dequantize``, ``_contrib_requantize``, every ``_contrib_quantized_*`` op (each
carries its data's min/max as extra inputs and outputs), ``_contrib_calibrate_entropy``,
and the fused MKL-DNN subgraph ops ``_sg_mkldnn_conv``, ``_sg_mkldnn_fully_connected``,
``_sg_mkldnn_selfatt_qk`` and ``_sg_mkldnn_selfatt_valatt``.

A fused op infers its shapes the way MXNet does: by inferring the small graph it fuses
(the node's ``subgraphs`` field: Convolution, BatchNorm, Activation, the sum ...) with
the engine's own rules (an inner op without one is asked of the pass's oracle,
``Call.oracle``), then adding the min/max entries of the quantized form.  How many
outputs these ops have, their names, their inputs' names and which inputs are auxiliary
states are the graph layer's (:mod:`mxexplorer.core.graph.fused`, which also reads the
fusion flags and the fused graph these rules build on).

C++ arithmetic is kept where MXNet computes a shape from unknown dimensions (-1): a
result below -1 is what MXNet then refuses.  Must not import MXNet or Qt.

The rules live in sub-families: :mod:`.convert` (quantize, dequantize, requantize,
calibrate), :mod:`.windows` (quantized conv, fully connected, pooling), :mod:`.layers`
(the other quantized layers) and :mod:`.mkldnn` (the fused subgraph ops);
:mod:`.helpers` holds what they share.  This module merges their ``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule
from mxexplorer.core.ops.quantized import convert, layers, mkldnn, windows

RULES: dict[str, Rule] = {
    **convert.RULES,
    **windows.RULES,
    **layers.RULES,
    **mkldnn.RULES,
}

__all__ = ["RULES"]
