"""Converters of the elementwise family: two-input arithmetic (``elemwise_*``, the
legacy ``_Plus``/``_Mul`` names reach these through the op table, ``broadcast_*``),
comparisons and logic (MXNet answers 0/1 in the output dtype, never bool), and the
tensor-with-scalar ops (``_plus_scalar`` ...).  The unary ops live in
:mod:`elementwise_unary`, the reductions, sorts and products in
:mod:`elementwise_reduce`; both register on import below.

MXNet's scalar ops compute in their output dtype (the input's, or float64 when an
integer input meets a non-integer scalar: ``is_int=False``) with the scalar converted
to that dtype (``DType(scalar)``: truncated for integers); the ONNX forms do the same
with a typed constant.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Callable

from mxexplorer.core.convert.onnx.context import Ctx, OpNode, onnx_type
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]

FLOATS = ("float16", "float32", "float64", "bfloat16")


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def typed(cx: Ctx, value: float, dtype: str) -> str:
    """``value`` as MXNet's ``DType(value)``: a 0-D constant of ``dtype`` (integers
    truncated toward zero)."""
    import numpy as np

    if dtype == "bfloat16":
        dtype = "float32"
    return cx.const(np.asarray(np.float64(value)).astype(dtype), dtype, "scalar")


def as_dtype(cx: Ctx, name: str, have: str, want: str) -> str:
    """``name`` cast to ``want`` unless it already is."""
    return name if have == want else cx.cast(name, want)


def finish(cx: Ctx, name: str, have: str, want: str, out: str) -> str:
    """The last node: a Cast to ``want`` (or an Identity) named ``out``."""
    if have == want:
        return cx.identity(name, out)
    return cx.one("Cast", [name], out, to=_onnx_type(want))


def _onnx_type(dtype: str) -> int:
    return onnx_type(dtype)


# ---------------------------------------------------------------- builders
Build = Callable[[Ctx, str, str, str, "str | None"], str]


def mxnet_mod(cx: Ctx, a: str, b: str, dtype: str, out: str | None = None) -> str:
    """MXNet's ``mod``: the remainder taking the divisor's sign (Python's ``%``), and
    0 where the divisor is 0.  Integers: ONNX ``Mod`` (fmod=0) is that already;
    floats: ``fmod`` plus the divisor where the signs of remainder and divisor differ."""
    zero, one = typed(cx, 0, dtype), typed(cx, 1, dtype)
    b_zero = cx.one("Equal", [b, zero])
    safe = cx.one("Where", [b_zero, one, b])
    if not is_float(dtype):
        r = cx.one("Mod", [a, safe], fmod=0)
        return cx.one("Where", [b_zero, zero, r], out)
    r = cx.one("Mod", [a, safe], fmod=1)
    differ = cx.one("Xor", [cx.one("Less", [r, zero]), cx.one("Less", [safe, zero])])
    fix = cx.one("And", [differ, cx.one("Not", [cx.one("Equal", [r, zero])])])
    r = cx.one("Where", [fix, cx.one("Add", [r, safe]), r])
    return cx.one("Where", [b_zero, zero, r], out)


def hypot(cx: Ctx, a: str, b: str, dtype: str, out: str | None = None) -> str:
    """``sqrt(a*a + b*b)``."""
    s = cx.one("Add", [cx.one("Mul", [a, a]), cx.one("Mul", [b, b])])
    return cx.one("Sqrt", [s], out)


def _plain(op_type: str) -> Build:
    def build(cx: Ctx, a: str, b: str, dtype: str, out: str | None = None) -> str:
        return cx.one(op_type, [a, b], out)
    return build


ARITH: dict[str, Build] = {
    "add": _plain("Add"), "plus": _plain("Add"), "sub": _plain("Sub"),
    "minus": _plain("Sub"), "mul": _plain("Mul"), "div": _plain("Div"),
    "power": _plain("Pow"), "maximum": _plain("Max"), "minimum": _plain("Min"),
    "mod": mxnet_mod, "hypot": hypot,
}

#: comparisons: the ONNX op and whether its answer is negated
COMPARE = {"equal": ("Equal", False), "not_equal": ("Equal", True),
           "greater": ("Greater", False), "greater_equal": ("GreaterOrEqual", False),
           "lesser": ("Less", False), "lesser_equal": ("LessOrEqual", False)}
LOGIC = {"logical_and": "And", "logical_or": "Or", "logical_xor": "Xor"}


def compare(cx: Ctx, kind: str, a: str, b: str, dtype: str, out: str) -> str:
    """MXNet's comparison: 1 or 0 in ``dtype``."""
    op_type, negate = COMPARE[kind]
    y = cx.one(op_type, [a, b])
    if negate:
        y = cx.one("Not", [y])
    return cx.one("Cast", [y], out, to=_onnx_type(dtype))


def logic(cx: Ctx, kind: str, a: str, b: str, dtype: str, out: str) -> str:
    """MXNet's logical ops read nonzero as true and answer 1 or 0 in ``dtype``."""
    bool_type = _onnx_type("bool")
    ab = [cx.one("Cast", [t], to=bool_type) for t in (a, b)]
    y = cx.one(LOGIC[kind], ab)
    return cx.one("Cast", [y], out, to=_onnx_type(dtype))


def binary(cx: Ctx, kind: str, a: str, b: str, dtype: str, out: str) -> str:
    if kind in COMPARE:
        return compare(cx, kind, a, b, dtype, out)
    if kind in LOGIC:
        return logic(cx, kind, a, b, dtype, out)
    return ARITH[kind](cx, a, b, dtype, out)


# ---------------------------------------------------------------- two inputs
KINDS = tuple(ARITH) + tuple(COMPARE) + tuple(LOGIC)
ELEMWISE = [f"elemwise_{k}" for k in ("add", "sub", "mul", "div")]
BROADCAST = [f"broadcast_{k}" for k in KINDS if k not in ("plus", "minus")]
UNDERSCORE = [f"_{k}" for k in ("maximum", "minimum", "power", "mod", "hypot")
              + tuple(COMPARE) + tuple(LOGIC)]


def _kind(op: str) -> str:
    for prefix in ("elemwise_", "broadcast_", "_"):
        if op.startswith(prefix):
            return op[len(prefix):]
    return op


@converts(*ELEMWISE, *BROADCAST, *UNDERSCORE)
def two_inputs(cx: Ctx, node: OpNode) -> Out:
    """Elementwise (same shapes) and broadcasting (NumPy's rule, which ONNX shares)
    binary ops, computed in the output dtype."""
    dtype = node.out_dtypes[0]
    kind = _kind(node.op)
    work = dtype if kind not in COMPARE and kind not in LOGIC else node.in_dtypes[0]
    a = as_dtype(cx, node.inputs[0], node.in_dtypes[0], work)
    b = as_dtype(cx, node.inputs[1], node.in_dtypes[1], work)
    return [binary(cx, kind, a, b, dtype, node.outputs[0])]


# ---------------------------------------------------------------- with a scalar
SCALAR_KINDS = ("plus", "minus", "mul", "div", "power", "maximum", "minimum", "mod",
                "hypot") + tuple(COMPARE) + tuple(LOGIC)
REVERSED = ("rminus", "rdiv", "rpower", "rmod")


@converts(*[f"_{k}_scalar" for k in SCALAR_KINDS + REVERSED])
def with_scalar(cx: Ctx, node: OpNode) -> Out:
    """``x (op) scalar`` (``scalar (op) x`` for the ``_r*`` ops) in the output dtype,
    the scalar converted to it as MXNet's ``DType(scalar)`` does."""
    dtype = node.out_dtypes[0]
    kind = node.op[1:-len("_scalar")]
    x = as_dtype(cx, node.inputs[0], node.in_dtypes[0], dtype)
    s = typed(cx, float(node.p.get("scalar", 1.0)), dtype)
    a, b = (s, x) if kind in REVERSED else (x, s)
    return [binary(cx, kind[1:] if kind in REVERSED else kind, a, b, dtype,
                   node.outputs[0])]

