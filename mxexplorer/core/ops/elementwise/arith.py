"""Rules for the element-wise math: the unary ops (``exp``, ``relu``, ``clip`` ...), the
binary ops of one shape (``elemwise_add``, the legacy comparisons, which keep their
inputs' dtype ...), the ops with a scalar (``_plus_scalar``, ``_greater_scalar`` ...
with ``NumpyBinaryScalarType``'s dtype rule), ``add_n``, ``Cast``, ``amp_cast``,
``amp_multicast`` and ``_copyto``.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, elemwise_type
from mxexplorer.core.ops.elementwise.helpers import (
    BINARY_SHAPE,
    BINARY_TYPE,
    UNARY_SHAPE,
    UNARY_TYPE,
    _count,
    _outs_count,
    _rules,
    same_shape,
)

#: the dtypes MXNet's ``common::is_int`` calls integers (``bool`` is apart)
INTEGERS = ("uint8", "int8", "int32", "int64")
#: the dtypes ``amp_cast``/``amp_multicast`` cast (others pass through)
FLOATS = ("float32", "float16", "bfloat16")


# ================================================================ scalars, casts
def scalar_type(c: Call) -> None:
    """``NumpyBinaryScalarType``: an integer input with a non-integer scalar
    (``is_int=False``) gives float64; a bool input gives int64 (or float64 with a
    non-integer scalar); otherwise the output has the input's dtype, both ways."""
    _count(c, 1, "data")
    t = c.ins[0]
    is_int = bool(c.p.get("is_int", True))
    if t in INTEGERS and not is_int:
        c.set_out(0, "float64", f"(a {t} input with a non-integer scalar, is_int=False)")
    elif t == "bool":
        c.set_out(0, "int64" if is_int else "float64", "(a bool input)")
    else:
        if t is not None:
            c.set_out(0, t)
        if c.outs[0] is not None:
            c.set_in(0, c.outs[0], "the output is")


def cast_type(c: Call) -> None:
    """``CastType``: the output has ``dtype``; the input is free."""
    _count(c, 1, "data")
    c.set_out(0, c.p["dtype"], "(attribute dtype)")


def amp_cast_type(c: Call) -> None:
    """``AMPCastType``: a float32/float16/bfloat16 input becomes ``dtype``, another keeps
    its dtype; nothing flows back."""
    _count(c, 1, "data")
    t = c.ins[0]
    if t in FLOATS:
        c.set_out(0, c.p["dtype"], "(attribute dtype)")
    elif t is not None:
        c.set_out(0, t, "(amp_cast keeps a non-float dtype)")


def _multicast_count(c: Call) -> int:
    n = int(c.p["num_outputs"])
    if len(c.ins) != n:
        c.fail(f"amp_multicast has {len(c.ins)} inputs, but num_outputs={n}: give as many "
               f"inputs as num_outputs", attr="num_outputs")
    _outs_count(c, n, "num_outputs")
    return n


def amp_multicast_shape(c: Call) -> None:
    """``AMPMultiCastShape``: output ``i`` has input ``i``'s shape, both ways."""
    n = _multicast_count(c)
    for i in range(n):
        c.set_out(i, c.ins[i])
        c.set_in(i, c.outs[i], f"output {i} has")


def amp_multicast_type(c: Call) -> None:
    """``AMPMultiCastType``: the float inputs (float32/float16/bfloat16) are cast to the
    widest float among the inputs and outputs (with ``cast_narrow``, the narrowest);
    other inputs keep their dtype.  Without ``cast_narrow`` and without any float32, the
    widest is the first input's dtype, as MXNet has it."""
    n = _multicast_count(c)
    narrow = bool(c.p["cast_narrow"])
    target: str | None = "float32" if narrow else c.ins[0] if n else None
    for i in range(n):
        pair = (c.ins[i], c.outs[i])
        if not narrow and "float32" in pair:
            target = "float32"
        elif narrow and "float16" in pair:
            target = "float16"
        elif narrow and "bfloat16" in pair:
            target = "bfloat16"
    for i in range(n):
        t = c.ins[i]
        if t in FLOATS:
            c.set_out(i, target, "(the float inputs' common dtype)")
        elif t is not None:
            c.set_out(i, t)


def copyto_type(c: Call) -> None:
    """``_copyto``: its type rule infers nothing."""


# ====================================================================== tables
#: ``ElemwiseShape<1, 1>`` and ``ElemwiseType<1, 1>``
UNARY = (
    "Activation", "SoftmaxActivation", "relu", "sigmoid", "hard_sigmoid", "softsign",
    "_copy", "BlockGrad", "make_loss", "negative", "abs", "sign", "round", "rint", "ceil",
    "floor", "trunc", "fix", "erf", "erfinv", "gamma", "gammaln", "logical_not", "exp",
    "log", "log10", "log2", "log1p", "expm1", "reciprocal", "square", "sqrt", "rsqrt",
    "cbrt", "rcbrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "degrees",
    "radians", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "clip",
    "zeros_like", "ones_like", "_contrib_div_sqrt_dim", "smooth_l1",
    "_contrib_gradientmultiplier", "_contrib_round_ste", "_contrib_sign_ste",
    "_contrib_quadratic",
)

#: ``ElemwiseShape<2, 1>`` and ``ElemwiseType<2, 1>`` (the legacy comparisons keep their
#: inputs' dtype)
BINARY = (
    "elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_grad_add", "_mod",
    "_power", "_hypot", "_maximum", "_minimum", "_equal", "_not_equal", "_greater",
    "_greater_equal", "_lesser", "_lesser_equal", "_logical_and", "_logical_or",
    "_logical_xor", "_scatter_elemwise_div", "_identity_with_attr_like_rhs",
)

#: ``ElemwiseShape<1, 1>`` and ``NumpyBinaryScalarType``
SCALAR = (
    "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar", "_div_scalar",
    "_rdiv_scalar", "_mod_scalar", "_rmod_scalar", "_maximum_scalar", "_minimum_scalar",
    "_power_scalar", "_rpower_scalar", "_hypot_scalar", "_equal_scalar",
    "_not_equal_scalar", "_greater_scalar", "_greater_equal_scalar", "_lesser_scalar",
    "_lesser_equal_scalar", "_logical_and_scalar", "_logical_or_scalar",
    "_logical_xor_scalar", "_scatter_plus_scalar", "_scatter_minus_scalar",
)


RULES: dict[str, Rule] = {
    **_rules(UNARY, UNARY_SHAPE, UNARY_TYPE),
    **_rules(BINARY, BINARY_SHAPE, BINARY_TYPE),
    **_rules(SCALAR, UNARY_SHAPE, scalar_type),
    **_rules(("add_n",), same_shape, elemwise_type),
    **_rules(("Cast",), UNARY_SHAPE, cast_type),
    **_rules(("amp_cast",), UNARY_SHAPE, amp_cast_type),
    **_rules(("amp_multicast",), amp_multicast_shape, amp_multicast_type),
    **_rules(("_copyto",), UNARY_SHAPE, copyto_type),
}
