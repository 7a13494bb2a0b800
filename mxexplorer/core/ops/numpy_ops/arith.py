"""Rules for the numpy-style arithmetic: broadcasting binary ops and comparisons
(``_npi_add``, ``_npi_equal`` ...), the ``*_scalar`` ops, unary math, ``_npi_around``
and ``_npi_where`` with its scalar forms, with numpy's dtype rules (mixed precision,
true division, integer-only and float-only ops, comparisons giving ``bool``).  Must not
import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, elemwise_type, fmt, table
from mxexplorer.core.ops.numpy_ops.helpers import (
    FAMILY,
    INTS,
    _is_float,
    _is_int,
    _label,
    same_shape,
)


# ======================================================================= broadcasting
def broadcast_shape(c: Call) -> None:
    """numpy broadcasting of two inputs (BinaryBroadcastShape): dims aligned from the
    end, each pair equal or one of them 1; unknown dims stay unknown; nothing is learnt
    backwards."""
    lhs, rhs = c.ins[0], c.ins[1]
    if lhs is None or rhs is None:
        return
    if lhs == rhs:
        c.set_out(0, lhs)
        return
    n = max(len(lhs), len(rhs))
    out = [-1] * n
    for i in range(n):
        j, k = i - (n - len(lhs)), i - (n - len(rhs))
        left = lhs[j] if j >= 0 else 1
        right = rhs[k] if k >= 0 else 1
        if left < 0 or right < 0:
            continue
        if left != right and left != 1 and right != 1:
            c.fail(f"{_label(c, 0)} of shape {fmt(lhs)} and {_label(c, 1)} of shape "
                   f"{fmt(rhs)} cannot be broadcast together: {left} against {right}; "
                   f"aligned from the last axis, each pair of dimensions must be equal "
                   f"or one of them 1")
        out[i] = right if left == 1 else left
    c.set_out(0, tuple(out))


# ================================================================= dtypes: elementwise
def _more_precise(a: str, b: str) -> str:
    """MXNet's ``get_more_precise_type``."""
    if a == b:
        return a
    if _is_float(a) and _is_float(b):
        for t in ("float64", "float32"):
            if t in (a, b):
                return t
        return "float16"
    if _is_float(a) or _is_float(b):
        return a if _is_float(a) else b
    for t in ("int64", "int32", "uint8"):
        if t in (a, b):
            return t
    return "int8"


def _np_binary_out(a: str, b: str) -> str:
    if {a, b} == {"uint8", "int8"}:
        return "int32"
    return _more_precise(a, b)


def mixed_precision_type(c: Call) -> None:
    """``_npi_add``...: two known, different input types give the more precise one
    (uint8 with int8 gives int32); otherwise every type the same."""
    lt, rt = c.ins[0], c.ins[1]
    if lt is not None and rt is not None and lt != rt:
        c.set_out(0, _np_binary_out(lt, rt), f"from {lt} with {rt}")
        return
    elemwise_type(c)


def _true_divide_out(lt: str, rt: str) -> str:
    if _is_float(lt) and _is_float(rt):
        return _more_precise(lt, rt)
    if _is_float(lt) or _is_float(rt):
        return lt if _is_float(lt) else rt
    return "float32"


def true_divide_type(c: Call) -> None:
    """Division: the float input's type (the more precise of two), float32 for integers;
    every input must be known."""
    if any(t is None for t in c.ins):
        return
    lt = c.ins[0]
    assert lt is not None
    rt = c.ins[1] if len(c.ins) == 2 else (lt if _is_float(lt) else "float32")
    assert rt is not None
    c.set_out(0, _true_divide_out(lt, rt))


def scalar_type(c: Call) -> None:
    """NumpyBinaryScalarType: an integer array with a non-integer scalar (is_int=False)
    gives float64; a bool array gives int64 (float64 with a non-integer scalar); else the
    input's type, both ways."""
    t = c.ins[0]
    is_int = bool(c.p.get("is_int", True))
    if _is_int(t) and not is_int:
        c.set_out(0, "float64", f"({t} with a non-integer scalar)")
    elif t == "bool":
        c.set_out(0, "int64" if is_int else "float64", "(bool with a scalar)")
    else:
        c.set_out(0, t)
        c.set_in(0, c.outs[0])


def logic_type(c: Call) -> None:
    """Comparisons of two arrays: both inputs of one type, a bool output."""
    if c.ins[0] is None and c.ins[1] is None:
        return
    c.set_in(0, c.ins[1], "the other input is")
    c.set_in(1, c.ins[0], "the other input is")
    c.set_out(0, "bool")


def scalar_logic_type(c: Call) -> None:
    """Comparisons with a scalar, and isnan/isinf...: a bool output once the input's
    type is known."""
    if c.ins[0] is None:
        return
    c.set_out(0, "bool")


def int_type(c: Call) -> None:
    """ElemwiseIntType: the first input must be an integer (or bool) array, known."""
    t = c.ins[0]
    if t not in INTS + ("bool",):
        c.fail(f"{_label(c, 0)} has type {t or 'unknown'}, but this operator takes integer "
               f"or bool arrays only", input=0)
    elemwise_type(c)


def float_pair_type(c: Call) -> None:
    """arctan2, hypot: one type for both inputs and the output, a float type, known
    from the first input (or the output)."""
    for t in (c.ins[0], c.ins[1]):
        if t is not None:
            c.set_out(0, t)
    c.set_in(0, c.outs[0])
    c.set_in(1, c.outs[0])
    if not _is_float(c.ins[0]):
        c.fail(f"{_label(c, 0)} has type {c.ins[0] or 'unknown'}, but this operator takes "
               f"float16, float32 or float64 arrays", input=0)


def around_type(c: Call) -> None:
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])
    if c.ins[0] == "float16":
        c.fail(f"{_label(c, 0)} is float16, which around does not support: use float32 "
               f"or float64", input=0)


# =========================================================================== where
def where_shape(c: Call) -> None:
    """_npi_where: condition, x and y broadcast together (an operand of unknown rank
    counts as a scalar, as in MXNet)."""
    ops = [c.ins[0], c.ins[1], c.ins[2]]
    if ops[0] == ops[1] == ops[2]:
        c.set_out(0, ops[0])
        return
    n = max(len(s) if s is not None else -1 for s in ops)
    out = []
    for i in range(n):
        vals = []
        for s in ops:
            k = i - (n - len(s)) if s is not None else -1
            vals.append(s[k] if s is not None and k >= 0 else 1)
        s1, s2, s3 = vals
        if not s1 == s2 == s3:
            if not ((s1 == 1 and s2 == 1) or (s1 == 1 and s3 == 1) or (s2 == 1 and s3 == 1)
                    or (s1 == 1 and s2 == s3) or (s2 == 1 and s1 == s3)
                    or (s3 == 1 and s1 == s2)):
                c.fail(f"condition {fmt(ops[0])}, x {fmt(ops[1])} and y {fmt(ops[2])} cannot "
                       f"be broadcast together (each dimension must be equal or 1, and "
                       f"known)")
            out.append(max(vals))
        else:
            out.append(s1)
    c.set_out(0, tuple(out))


def where_type(c: Call) -> None:
    """x, y and the output of one type, checked; only the output is filled (MXNet works
    on a copy of x's and y's types); the condition free."""
    sub = Call(c.op, c.p, c.attrs, list(c.ins[1:]), c.outs, c.slots[1:], c.kind)
    elemwise_type(sub)


def where_scalar2_type(c: Call) -> None:
    c.set_out(0, "float32")


# ======================================================================== the table
BROADCAST_MIXED = ("_npi_add", "_npi_subtract", "_npi_multiply", "_npi_mod", "_npi_power")
BROADCAST_SAME = ("_npi_copysign", "_npi_ldexp")
BROADCAST_INT = ("_npi_lcm", "_npi_bitwise_and", "_npi_bitwise_or", "_npi_bitwise_xor")
BROADCAST_FLOAT = ("_npi_arctan2", "_npi_hypot")
BROADCAST_LOGIC = ("_npi_equal", "_npi_not_equal", "_npi_greater", "_npi_less",
                   "_npi_greater_equal", "_npi_less_equal")
SCALAR = ("_npi_add_scalar", "_npi_subtract_scalar", "_npi_rsubtract_scalar",
          "_npi_multiply_scalar", "_npi_mod_scalar", "_npi_rmod_scalar", "_npi_power_scalar",
          "_npi_rpower_scalar", "_npi_copysign_scalar", "_npi_rcopysign_scalar",
          "_npi_arctan2_scalar", "_npi_rarctan2_scalar", "_npi_ldexp_scalar",
          "_npi_rldexp_scalar")
SCALAR_INT = ("_npi_lcm_scalar", "_npi_bitwise_and_scalar", "_npi_bitwise_or_scalar",
              "_npi_bitwise_xor_scalar")
SCALAR_DIVIDE = ("_npi_true_divide_scalar", "_npi_rtrue_divide_scalar")
SCALAR_LOGIC = ("_npi_equal_scalar", "_npi_not_equal_scalar", "_npi_greater_scalar",
                "_npi_less_scalar", "_npi_greater_equal_scalar", "_npi_less_equal_scalar")
UNARY = ("_npx_relu", "_npx_sigmoid", "_np_copy", "_npi_negative", "_npi_reciprocal",
         "_npi_absolute", "_npi_sign", "_npi_rint", "_npi_ceil", "_npi_floor",
         "_npi_bitwise_not", "_npi_trunc", "_npi_fix", "_npi_square", "_npi_sqrt",
         "_npi_cbrt", "_npi_exp", "_npi_log", "_npi_log10", "_npi_log2", "_npi_log1p",
         "_npi_expm1", "_npi_sin", "_npi_cos", "_npi_tan", "_npi_arcsin", "_npi_arccos",
         "_npi_arctan", "_npi_degrees", "_npi_radians", "_npi_sinh", "_npi_cosh",
         "_npi_tanh", "_npi_arcsinh", "_npi_arccosh", "_npi_arctanh", "_npi_nan_to_num")
UNARY_BOOL = ("_npi_logical_not", "_npi_isnan", "_npi_isinf", "_npi_isposinf",
              "_npi_isneginf", "_npi_isfinite")


RULES: dict[str, Rule] = {
    **table(FAMILY, BROADCAST_MIXED, broadcast_shape, mixed_precision_type),
    **table(FAMILY, BROADCAST_SAME, broadcast_shape, elemwise_type),
    **table(FAMILY, BROADCAST_INT, broadcast_shape, int_type),
    **table(FAMILY, BROADCAST_FLOAT, broadcast_shape, float_pair_type),
    **table(FAMILY, BROADCAST_LOGIC, broadcast_shape, logic_type),
    **table(FAMILY, ("_npi_true_divide",), broadcast_shape, true_divide_type),
    **table(FAMILY, SCALAR, same_shape, scalar_type),
    **table(FAMILY, SCALAR_INT, same_shape, int_type),
    **table(FAMILY, SCALAR_DIVIDE, same_shape, true_divide_type),
    **table(FAMILY, SCALAR_LOGIC + UNARY_BOOL, same_shape, scalar_logic_type),
    **table(FAMILY, UNARY, same_shape, elemwise_type),
    **table(FAMILY, ("_npi_around",), same_shape, around_type),
    **table(FAMILY, ("_npi_where",), where_shape, where_type),
    **table(FAMILY, ("_npi_where_lscalar", "_npi_where_rscalar"), broadcast_shape,
            where_type),
    **table(FAMILY, ("_npi_where_scalar2",), same_shape, where_scalar2_type),
}
