"""Converters of the one-input elementwise ops (activations, exp/log, rounding,
trigonometry), the identities of inference (``_copy``, ``BlockGrad``, ``MakeLoss``),
and ``clip``, ``Cast``, ``where``, ``smooth_l1``, ``ones_like``/``zeros_like``,
``add_n``, ``softmin``, ``_contrib_div_sqrt_dim``.

MXNet computes a math function of an integer tensor in float and converts the answer
back to the integer dtype (truncating); the ONNX forms cast to float, compute and cast
back the same way.  Registered on import by :mod:`elementwise`.  Must not import MXNet
or Qt.
"""
from __future__ import annotations

import math
from typing import Callable

from mxexplorer.core.convert.onnx.context import Ctx, OpNode, onnx_type
from mxexplorer.core.convert.onnx.elementwise import finish, is_float, typed
from mxexplorer.core.convert.onnx.registry import converts

Out = list[str | None]
Math = Callable[[Ctx, str, str], str]      # (cx, x, dtype) -> y


def _one(op_type: str) -> Math:
    return lambda cx, x, dt: cx.one(op_type, [x])


def _scaled(op_type: str | None, factor: float) -> Math:
    def build(cx: Ctx, x: str, dt: str) -> str:
        y = cx.one(op_type, [x]) if op_type else x
        return cx.one("Mul", [y, typed(cx, factor, dt)])
    return build


def _trunc(cx: Ctx, x: str, dt: str) -> str:
    """Toward zero: ``sign(x) * floor(|x|)``."""
    return cx.one("Mul", [cx.one("Sign", [x]), cx.one("Floor", [cx.one("Abs", [x])])])


def _round(cx: Ctx, x: str, dt: str) -> str:
    """MXNet's ``round`` (C's ``round``): halves away from zero, where ONNX ``Round``
    takes them to even.  The whole part plus the sign where the dropped fraction is
    at least one half."""
    t = _trunc(cx, x, dt)
    frac = cx.one("Abs", [cx.one("Sub", [x, t])])
    up = cx.one("GreaterOrEqual", [frac, typed(cx, 0.5, dt)])
    step = cx.one("Where", [up, cx.one("Sign", [x]), typed(cx, 0, dt)])
    return cx.one("Add", [t, step])


def _rint(cx: Ctx, x: str, dt: str) -> str:
    """MXNet's ``rint``: ``floor`` unless ``x`` is nearer ``ceil`` (ties go DOWN, to
    ``floor``: rint(2.5) = 2, rint(-2.5) = -3), not IEEE's half to even."""
    f = cx.one("Floor", [x])
    up = cx.one("Greater", [cx.one("Sub", [x, f]), typed(cx, 0.5, dt)])
    return cx.one("Where", [up, cx.one("Ceil", [x]), f])


def _cbrt(cx: Ctx, x: str, dt: str) -> str:
    """The real cube root of negative numbers too: ``sign(x) * |x|^(1/3)``."""
    r = cx.one("Pow", [cx.one("Abs", [x]), typed(cx, 1.0 / 3.0, dt)])
    return cx.one("Mul", [cx.one("Sign", [x]), r])


def _after(first: Math, op_type: str) -> Math:
    return lambda cx, x, dt: cx.one(op_type, [first(cx, x, dt)])


def _plus_one_log(cx: Ctx, x: str, dt: str) -> str:
    return cx.one("Log", [cx.one("Add", [x, typed(cx, 1, dt)])])


def _exp_minus_one(cx: Ctx, x: str, dt: str) -> str:
    return cx.one("Sub", [cx.one("Exp", [x]), typed(cx, 1, dt)])


#: functions MXNet computes in float (an integer input is cast and the answer cast back)
FLOAT_MATH: dict[str, Math] = {
    "sigmoid": _one("Sigmoid"), "tanh": _one("Tanh"), "exp": _one("Exp"),
    "log": _one("Log"), "log2": _scaled("Log", 1 / math.log(2.0)),
    "log10": _scaled("Log", 1 / math.log(10.0)), "log1p": _plus_one_log,
    "expm1": _exp_minus_one, "sqrt": _one("Sqrt"),
    "rsqrt": _after(_one("Sqrt"), "Reciprocal"), "cbrt": _cbrt,
    "rcbrt": _after(_cbrt, "Reciprocal"), "sin": _one("Sin"), "cos": _one("Cos"),
    "tan": _one("Tan"), "arcsin": _one("Asin"), "arccos": _one("Acos"),
    "arctan": _one("Atan"), "sinh": _one("Sinh"), "cosh": _one("Cosh"),
    "arcsinh": _one("Asinh"), "arccosh": _one("Acosh"), "arctanh": _one("Atanh"),
    "degrees": _scaled(None, 180 / math.pi), "radians": _scaled(None, math.pi / 180),
    "erf": _one("Erf"), "softsign": _one("Softsign"),
}
#: rounding: the identity on integers
ROUNDING: dict[str, Math] = {
    "floor": _one("Floor"), "ceil": _one("Ceil"), "round": _round, "rint": _rint,
    "fix": _trunc, "trunc": _trunc,
}
#: exact on every dtype
ANY_DTYPE: dict[str, Math] = {
    "relu": _one("Relu"), "abs": _one("Abs"), "sign": _one("Sign"),
    "negative": _one("Neg"), "square": lambda cx, x, dt: cx.one("Mul", [x, x]),
}


@converts(*FLOAT_MATH, *ROUNDING, *ANY_DTYPE, "reciprocal")
def unary(cx: Ctx, node: OpNode) -> Out:
    x, dt, out = node.inputs[0], node.in_dtypes[0], node.outputs[0]
    want = node.out_dtypes[0]
    if node.op in ROUNDING and not is_float(dt):
        return [finish(cx, x, dt, want, out)]
    if node.op in ANY_DTYPE:
        return [finish(cx, ANY_DTYPE[node.op](cx, x, dt), dt, want, out)]
    if not is_float(dt):        # MXNet: computed in float, converted back
        work = "float64" if dt in ("int64", "uint64", "int32", "uint32") else "float32"
        x, dt = cx.cast(x, work), work
    if node.op == "reciprocal":
        y = cx.one("Reciprocal", [x])
    else:
        y = {**FLOAT_MATH, **ROUNDING}[node.op](cx, x, dt)
    return [finish(cx, y, dt, want, out)]


@converts("erfinv", "gamma", "gammaln")
def no_form(cx: Ctx, node: OpNode) -> Out:
    raise node.refuse(f"{node.op} has no ONNX operator (nor an exact composition of "
                      "ONNX operators)")


@converts("hard_sigmoid")
def hard_sigmoid(cx: Ctx, node: OpNode) -> Out:
    """``max(0, min(1, alpha*x + beta))``: ONNX ``HardSigmoid``."""
    return [cx.one("HardSigmoid", node.inputs[:1], node.outputs[0],
                   alpha=float(node.p.get("alpha", 0.2)),
                   beta=float(node.p.get("beta", 0.5)))]


@converts("logical_not")
def logical_not(cx: Ctx, node: OpNode) -> Out:
    """``!x``: 1 where x is 0, else 0, in the output dtype."""
    b = cx.one("Cast", node.inputs[:1], to=onnx_type("bool"))
    return [cx.one("Cast", [cx.one("Not", [b])], node.outputs[0],
                   to=onnx_type(node.out_dtypes[0]))]


@converts("_copy", "BlockGrad", "MakeLoss", "make_loss")
def identity(cx: Ctx, node: OpNode) -> Out:
    """The identity at inference (``MakeLoss``'s ``grad_scale`` and ``BlockGrad`` act
    on the gradient only)."""
    return [cx.identity(node.inputs[0], node.outputs[0])]


@converts("clip")
def clip(cx: Ctx, node: OpNode) -> Out:
    """``x > a_max ? a_max : (x < a_min ? a_min : x)`` with the bounds in x's dtype:
    ONNX ``Clip`` when ``a_min <= a_max``; else MXNet's order of tests, built."""
    dt = node.in_dtypes[0]
    lo, hi = float(node.p["a_min"]), float(node.p["a_max"])
    x = node.inputs[0]
    a_min, a_max = typed(cx, lo, dt), typed(cx, hi, dt)
    if lo <= hi:
        return [cx.one("Clip", [x, a_min, a_max], node.outputs[0])]
    above = cx.one("Greater", [x, a_max])
    return [cx.one("Where", [above, a_max, cx.one("Max", [x, a_min])], node.outputs[0])]


@converts("Cast", "amp_cast")
def cast(cx: Ctx, node: OpNode) -> Out:
    """A static cast (floats to integers truncate toward zero in both)."""
    return [finish(cx, node.inputs[0], node.in_dtypes[0], node.out_dtypes[0],
                   node.outputs[0])]


@converts("amp_multicast")
def amp_multicast(cx: Ctx, node: OpNode) -> Out:
    """Each input cast to the common dtype MXNet chose (the engine's output dtypes)."""
    return [finish(cx, x, have, want, out) for x, have, want, out in
            zip(node.inputs, node.in_dtypes, node.out_dtypes, node.outputs)]


@converts("where")
def where(cx: Ctx, node: OpNode) -> Out:
    """``cond != 0 ? x : y``; a 1-D condition picks whole rows (along axis 0)."""
    cond, x, y = node.inputs[:3]
    c = cx.one("Cast", [cond], to=onnx_type("bool"))
    rank = node.rank(1)
    if node.rank(0) == 1 and rank > 1:
        c = cx.unsqueeze(c, list(range(1, rank)))
    return [cx.one("Where", [c, x, y], node.outputs[0])]


@converts("smooth_l1")
def smooth_l1(cx: Ctx, node: OpNode) -> Out:
    """With ``s = scalar`` (sigma): ``|x| - 0.5/s^2`` where ``|x| > 1/s^2``, else
    ``0.5 * (s*x)^2``."""
    dt = node.in_dtypes[0]
    sigma = float(node.p.get("scalar", 1.0))
    x = node.inputs[0]
    inv = 1.0 / (sigma * sigma)
    ax = cx.one("Abs", [x])
    linear = cx.one("Sub", [ax, typed(cx, 0.5 * inv, dt)])
    square = cx.one("Mul", [cx.one("Mul", [x, x]), typed(cx, 0.5 * sigma * sigma, dt)])
    far = cx.one("Greater", [ax, typed(cx, inv, dt)])
    return [cx.one("Where", [far, linear, square], node.outputs[0])]


@converts("_contrib_div_sqrt_dim")
def div_sqrt_dim(cx: Ctx, node: OpNode) -> Out:
    """``x / sqrt(x.shape[-1])``."""
    d = node.in_shapes[0][-1]
    return [cx.one("Div", [node.inputs[0], typed(cx, math.sqrt(d), node.in_dtypes[0])],
                   node.outputs[0])]


@converts("ones_like", "zeros_like")
def filled_like(cx: Ctx, node: OpNode) -> Out:
    """A constant of the input's (static) shape and dtype, as an ``Expand`` of one
    value (NaNs and infinities in the input do not matter)."""
    value = 1 if node.op == "ones_like" else 0
    return [cx.one("Expand", [typed(cx, value, node.out_dtypes[0]),
                              cx.ints(node.out_shapes[0])], node.outputs[0])]


@converts("add_n", "_grad_add")
def add_n(cx: Ctx, node: OpNode) -> Out:
    """The sum of all inputs (same shapes): ONNX ``Sum``."""
    if len(node.inputs) == 1:
        return [cx.identity(node.inputs[0], node.outputs[0])]
    return [cx.one("Sum", node.inputs, node.outputs[0])]


@converts("softmin", reads=1)
def softmin(cx: Ctx, node: OpNode) -> Out:
    """``softmax(-x / temperature)`` along ``axis``, in ``dtype`` when given."""
    p = node.p
    if p.get("use_length"):
        raise node.refuse("softmin with use_length (a per-row length) has no ONNX "
                          "form here")
    x, dt = node.inputs[0], node.in_dtypes[0]
    want = p.get("dtype") or dt
    if want != dt:
        x, dt = cx.cast(x, want), want
    t = p.get("temperature")
    scale = -1.0 / float(t) if t not in (None, 0) else -1.0
    neg = cx.one("Mul", [x, typed(cx, scale, dt)])
    return [cx.one("Softmax", [neg], node.outputs[0], axis=int(p.get("axis", -1)))]
