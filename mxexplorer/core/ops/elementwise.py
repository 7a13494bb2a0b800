"""Rules for element-wise ops: every input and output of one shape (and, mostly, one
dtype), MXNet's ``ElemwiseShape``/``ElemwiseType``.

One rule serves the unary math ops, the same-shape binary ops (``elemwise_add`` and its
aliases ``_Plus``, ``_add`` ...), the ops with a scalar (``_plus_scalar``,
``_MulScalar`` ...), ``add_n``, activations and the identity-like ops.  Must not import
MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, table


def same_shape(c: Call) -> None:
    """Every input and output has one shape, known from any of them."""
    shape = None
    for i, s in enumerate(c.ins):
        if s is not None:
            if shape is None:
                shape = s
            else:
                c.set_in(i, shape, "the other inputs have shape")
                shape = c.ins[i]
    for s in c.outs:
        if s is not None:
            if shape is None:
                shape = s
            else:
                from mxexplorer.core.ops.base import Conflict, merge
                try:
                    shape = merge(shape, s)
                except Conflict:
                    c.set_out(0, shape)
    if shape is None:
        return
    for i in range(len(c.ins)):
        c.set_in(i, shape, "the other inputs have shape")
    for i in range(len(c.outs)):
        c.set_out(i, shape)


UNARY = (
    "relu", "sigmoid", "hard_sigmoid", "softsign", "_copy", "BlockGrad", "make_loss",
    "negative", "abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "erf",
    "erfinv", "gamma", "gammaln", "logical_not", "exp", "log", "log10", "log2", "log1p",
    "expm1", "reciprocal", "square", "sqrt", "rsqrt", "cbrt", "rcbrt", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "degrees", "radians", "sinh", "cosh", "tanh", "arcsinh",
    "arccosh", "arctanh",
)

RULES: dict[str, Rule] = {
    **table("elementwise", UNARY, same_shape),
}
