"""Rules for the broadcast family: the ops that broadcast, reduce, contract and order.

Owns the shape and dtype rules of MXNet 1.9.1's binary broadcast ops (``broadcast_add``
... ``broadcast_logical_xor``, with the aliases ``broadcast_plus``, ``_npi_maximum`` ...),
``where``, the broadcasters (``broadcast_axis``/``broadcast_axes``, ``broadcast_to``,
``broadcast_like``), the reductions over axes (``sum``, ``mean``, ``prod``, ``nansum``,
``nanprod``, ``max``, ``min``, ``_square_sum``, ``norm``, ``moments``), the reductions
along one axis (``argmax``, ``argmin``, ``argmax_channel``, ``pick``), the orderings
(``sort``, ``argsort``, ``topk``), the products (``dot``, ``batch_dot``, ``_linalg_gemm``,
``_linalg_gemm2``, ``khatri_rao``, BERT's ``_contrib_interleaved_matmul_*``) and
``_contrib_allclose``.

Each rule follows its op's ``FInferShape``/``FInferType`` in MXNet 1.9.1, quirks included,
because MXNet is the judge: a binary broadcast leaves a dimension unknown when either side
does and infers nothing backwards, the legacy comparisons keep their inputs' dtype, a
full reduction gives ``(1,)``, ``max``/``min``/``norm``/``argmax``/``broadcast_axis`` and
the orderings wait for (or refuse without) the data's full shape, ``dot`` refuses an
unknown contracted dimension, ``where`` infers only among ``x``, ``y`` and the output,
``khatri_rao`` and the attention products compute with unknown sizes as C++ does (a
negative size is refused).  Must not import MXNet or Qt.

The rules live in sub-families: :mod:`.binary` (binary broadcast, where, the
broadcasters, allclose), :mod:`.reduce` (reductions, picks, orderings) and
:mod:`.products` (dot, batch_dot, gemm, khatri_rao, the attention matmuls);
:mod:`.helpers` holds what they share.  This module merges their ``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule
from mxexplorer.core.ops.broadcast import binary, products, reduce

RULES: dict[str, Rule] = {
    **binary.RULES,
    **reduce.RULES,
    **products.RULES,
}

__all__ = ["RULES"]
