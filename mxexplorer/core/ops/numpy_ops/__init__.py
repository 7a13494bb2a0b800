"""Rules for MXNet 1.9.1's numpy-style operators registered under their own names
(``_npi_*``, ``_np_*``, ``_npx_*``): numpy broadcasting arithmetic and comparisons, the
``*_scalar`` ops and their numpy dtype rules, unary math, reductions and moments, the
layout ops (``_np_reshape``, ``_npx_reshape`` and its codes, transpose, concatenate,
stack ...), the array makers (``_npi_zeros``, ``_npi_arange``, ``_npi_eye`` ...), the
products (``_np_dot``, ``_npi_matmul``, ``_npi_tensordot``, ``_npi_einsum``), ``where``
and the random samplers.  The numpy names that are aliases of legacy ops
(``_npx_convolution`` -> ``Convolution``) resolve to those ops' rules by themselves.

Shapes follow MXNet's numpy-style convention inside the pass: ``()`` is a real scalar
shape (a global reduction's output), ``0`` a real zero-size dimension.  A graph loaded
with numpy semantics off (the product's way, and MXNet's default) has its given 0 dims
and ``()`` shapes turned into "unknown" before the rules see them; the ops that read a
shape attribute (``_npi_zeros``'s ``shape``) do the same to it, as MXNet does.  The ops
that end in a scalar (a global reduction, ``_np_dot`` of two vectors, ``_np_trace`` of a
matrix, ``_npx_constraint_check``, ``_npi_share_memory``, a sampler without ``size``,
``_npi_einsum`` with an empty output, ``_np_squeeze`` of all ones, ``_npi_norm`` of a
vector) give ``()``, which MXNet's Python API reports as an unknown shape in that mode.

MXNet 1.9.1's own quirks are kept, since the engine must say what MXNet says: hstack and
dstack leave their inputs' joined dimension unknown afterwards, column_stack writes a 1-d
input back as ``(1,)``, vstack and column_stack add an output size known beforehand to
the total, ``_npi_where`` and the samplers count an operand of unknown rank as a scalar,
``_np_diag``/``_npi_pad`` do arithmetic on unknown sizes, ``_np_atleast_*`` of an input
of unknown rank is all ones, and several ops refuse an input partly known or of unknown
rank (``_np_diagonal``, ``_npi_tril``, ``_np_roll`` with an axis, ``_npi_rot90``,
``_npi_cholesky``, ``_npi_matmul`` with an unknown batch dimension).  Where MXNet's
behaviour is undefined (``_npi_tensordot`` with repeated or out-of-range axes,
``_np_moveaxis`` with an axis below -ndim, ``_npx_reshape``'s -6 followed by a 0) the
engine refuses in plain words.  Must not import MXNet or Qt.

The rules live in sub-families: :mod:`.arith` (broadcasting arithmetic, scalars, unary
math, where), :mod:`.reduce` (reductions, moments, norms), :mod:`.reshape` (reshape,
transpose and the axis movers), :mod:`.join` (concatenate and the stacks),
:mod:`.makers` (array makers, samplers), :mod:`.linalg` (products, einsum, linear
algebra) and :mod:`.misc` (the rest); :mod:`.helpers` holds what they share.  This
module merges their ``RULES``.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Rule
from mxexplorer.core.ops.numpy_ops import arith, join, linalg, makers, misc, reduce, reshape
from mxexplorer.core.ops.numpy_ops.arith import (
    BROADCAST_FLOAT,
    BROADCAST_INT,
    BROADCAST_LOGIC,
    BROADCAST_MIXED,
    BROADCAST_SAME,
    SCALAR,
    SCALAR_DIVIDE,
    SCALAR_INT,
    SCALAR_LOGIC,
    UNARY,
    UNARY_BOOL,
)

RULES: dict[str, Rule] = {
    **arith.RULES,
    **reduce.RULES,
    **reshape.RULES,
    **join.RULES,
    **makers.RULES,
    **linalg.RULES,
    **misc.RULES,
}

__all__ = ["BROADCAST_FLOAT", "BROADCAST_INT", "BROADCAST_LOGIC", "BROADCAST_MIXED",
           "BROADCAST_SAME", "RULES", "SCALAR", "SCALAR_DIVIDE", "SCALAR_INT", "SCALAR_LOGIC",
           "UNARY", "UNARY_BOOL"]
