"""Our exporter's elementwise ops (two-input arithmetic, comparisons and logic,
tensor-with-scalar ops, one-input math, clip/Cast/where ...), judged by MXNet's
inference forward."""
from __future__ import annotations

import mxnet as mx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.convert.onnx.context import NoOnnxMeaning
from tests.core.convert.own.harness import agree, export

A, B = mx.sym.var("a"), mx.sym.var("b")
DATA = mx.sym.var("data")


def op_fn(name: str):
    """``mx.sym.<name>``, or the internal op of that name (``_plus``, ``_Mul``)."""
    found = getattr(mx.sym, name, None)
    if found is None and name.startswith("_contrib_"):
        found = getattr(mx.sym.contrib, name[len("_contrib_"):], None)
    return found if found is not None else getattr(mx.sym._internal, name)


def _grid(shape: tuple[int, ...], seed: int, zero: bool = False) -> np.ndarray:
    """Small whole and half numbers (equal pairs, ties, negative divisors happen)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-6, 7, shape).astype("float32") / 2
    if not zero:
        x[x == 0] = 1.5
    return x


ARITH = ["elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div", "_plus", "_minus",
         "_mul", "_div", "_sub", "_Plus", "_Minus", "_Mul", "_Div", "_Maximum",
         "_Minimum", "_maximum", "_minimum", "_power", "_Power", "_mod", "_Mod",
         "_hypot", "_Hypot", "_grad_add"]
COMPARE = ["equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
           "logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("op", ARITH + [f"_{k}" for k in COMPARE])
def test_same_shape_binary(op) -> None:
    net = op_fn(op)(A, B, name="y")
    shape = (3, 4, 5)
    feed = {"a": _grid(shape, 1, zero=True), "b": _grid(shape, 2, zero="mod" in op.lower())}
    if "power" in op.lower():
        feed["a"] = np.abs(feed["a"]) + 0.5
    agree(net, {"a": shape, "b": shape}, feed=feed)


BROADCAST = ["add", "plus", "sub", "minus", "mul", "div", "mod", "power", "maximum",
             "minimum", "hypot"] + COMPARE


@pytest.mark.parametrize("kind", BROADCAST)
@pytest.mark.parametrize("shapes", [((2, 3, 4), (1, 3, 1)), ((2, 1, 4), (2, 3, 1)),
                                    ((5, 4), (1, 1))])
def test_broadcast(kind, shapes) -> None:
    sa, sb = shapes
    net = getattr(mx.sym, f"broadcast_{kind}")(A, B, name="y")
    feed = {"a": _grid(sa, 3, zero=True), "b": _grid(sb, 4, zero=kind != "div")}
    if kind == "power":
        feed["a"] = np.abs(feed["a"]) + 0.5
    agree(net, {"a": sa, "b": sb}, feed=feed)


def test_mod_by_zero_and_signs() -> None:
    a = np.array([5.5, -5.5, 5.5, -5.5, 3.0, -3.0, 0.0, 2.0], "float32")
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, -1.5, 0.0], "float32")
    agree(mx.sym.broadcast_mod(A, B, name="y"), {"a": (8,), "b": (8,)},
          feed={"a": a, "b": b})


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.booleans(), st.booleans()), min_size=1,
                max_size=4), st.sampled_from(["add", "mul", "maximum", "greater", "mod"]))
def test_broadcast_shapes_property(dims, kind) -> None:
    sa = tuple(1 if ones_a else d for d, ones_a, _ in dims)
    sb = tuple(1 if ones_b else d for d, _, ones_b in dims)
    net = getattr(mx.sym, f"broadcast_{kind}")(A, B, name="y")
    agree(net, {"a": sa, "b": sb}, feed={"a": _grid(sa, 5, True), "b": _grid(sb, 6)})


SCALAR = ["plus", "minus", "rminus", "mul", "div", "rdiv", "power", "rpower", "maximum",
          "minimum", "mod", "rmod", "equal", "not_equal", "greater", "greater_equal",
          "lesser", "lesser_equal", "logical_and", "logical_or", "logical_xor", "hypot"]


@pytest.mark.parametrize("kind", SCALAR)
@pytest.mark.parametrize("scalar", [1.5, -2.0, 0.0])
def test_scalar_ops(kind, scalar) -> None:
    if scalar == 0.0 and kind in ("div", "rpower", "rdiv"):
        pytest.skip("infinities")
    if kind == "power" and scalar != 0.0:
        scalar = abs(scalar)
    if kind == "rpower":
        scalar = abs(scalar)
    shape = (4, 5)
    op = op_fn(f"_{kind}_scalar")
    sym = op(DATA, scalar=scalar, name="y")
    x = _grid(shape, 7, zero=kind not in ("rdiv", "rmod"))
    if kind == "power":
        x = np.abs(x) + 0.5
    agree(sym, {"data": shape}, feed={"data": x})


@pytest.mark.parametrize("op,dtype,scalar", [("_plus_scalar", "int32", 2.7),
                                             ("_mul_scalar", "int32", -1.9),
                                             ("_div_scalar", "float64", 3.0),
                                             ("_minus_scalar", "float16", 0.25)])
def test_scalar_dtypes(op, dtype, scalar) -> None:
    sym = op_fn(op)(DATA, scalar=scalar, name="y")
    agree(sym, {"data": (3, 4)}, dtypes={"data": dtype}, low=-20, high=20,
          tolerance=1e-3 if dtype == "float16" else 1e-4)


def test_legacy_scalar_names() -> None:
    net = mx.sym.var("data") * 2 + 1 - 3
    net = 2 / (net + 5) + mx.sym.maximum(net, 0.5)
    agree(net, {"data": (3, 4)})


UNARY = {"relu": None, "sigmoid": None, "tanh": None, "exp": None, "log": (0.1, 4),
         "log2": (0.1, 4), "log10": (0.1, 4), "log1p": (-0.5, 3), "expm1": None,
         "sqrt": (0, 4), "rsqrt": (0.1, 4), "cbrt": (-3, 3), "rcbrt": (0.2, 3),
         "square": None, "reciprocal": (0.2, 2), "abs": None, "sign": None,
         "negative": None, "floor": (-3, 3), "ceil": (-3, 3), "trunc": (-3, 3),
         "fix": (-3, 3), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1, 1),
         "arcsin": None, "arccos": None, "arctan": (-3, 3), "sinh": None, "cosh": None,
         "arcsinh": (-3, 3), "arccosh": (1, 4), "arctanh": (-0.9, 0.9),
         "degrees": None, "radians": (-180, 180), "erf": (-2, 2), "softsign": (-3, 3),
         "hard_sigmoid": (-4, 4), "logical_not": None, "_copy": None,
         "identity": None, "BlockGrad": None, "stop_gradient": None, "MakeLoss": None,
         "make_loss": None, "_contrib_div_sqrt_dim": None, "ones_like": None,
         "zeros_like": None}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op) -> None:
    low, high = UNARY[op] or (-1, 1)
    sym = op_fn(op)(DATA, name="y")
    agree(sym, {"data": (2, 3, 4)}, low=low, high=high)


def test_logical_not_zeros() -> None:
    agree(mx.sym.logical_not(DATA, name="y"), {"data": (6,)},
          feed={"data": np.array([0, 1, -2, 0, 0.5, 0], "float32")})


@pytest.mark.parametrize("op", ["round", "rint", "fix", "trunc", "floor", "ceil"])
def test_rounding_ties(op) -> None:
    x = np.array([-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 0.49, -0.51, 2.6, -2.4],
                 "float32")
    agree(op_fn(op)(DATA, name="y"), {"data": x.shape}, feed={"data": x})


@pytest.mark.parametrize("op", ["sqrt", "exp", "round", "abs", "square"])
def test_unary_int(op) -> None:
    agree(op_fn(op)(DATA, name="y"), {"data": (3, 4)},
          dtypes={"data": "int32"}, low=0, high=6)


@pytest.mark.parametrize("op", ["erfinv", "gamma", "gammaln"])
def test_refused(op) -> None:
    with pytest.raises(NoOnnxMeaning, match=op):
        export(op_fn(op)(DATA, name="y"), {"data": (2, 3)})


@pytest.mark.parametrize("alpha,beta", [(0.2, 0.5), (1.0, 0.0), (0.3, -0.2)])
def test_hard_sigmoid(alpha, beta) -> None:
    agree(mx.sym.hard_sigmoid(DATA, alpha=alpha, beta=beta, name="y"), {"data": (4, 5)},
          low=-5, high=5)


@pytest.mark.parametrize("bounds", [(-0.5, 0.5), (0.0, 6.0), (0.3, -0.2), (-2, -1)])
def test_clip(bounds) -> None:
    agree(mx.sym.clip(DATA, a_min=bounds[0], a_max=bounds[1], name="y"),
          {"data": (4, 5)}, low=-3, high=3)


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32", "int8", "uint8",
                                   "int64"])
@pytest.mark.parametrize("op", ["Cast", "amp_cast"])
def test_cast(op, dtype) -> None:
    if op == "amp_cast" and dtype not in ("float16", "float32"):
        # MXNet's CPU amp_cast runs through MKL-DNN: float64/int64 are refused there,
        # and float32 -> int32 rounds to nearest instead of truncating
        pytest.skip("amp_cast is a float16/float32 cast")
    agree(op_fn(op)(DATA, dtype=dtype, name="y"), {"data": (4, 5)}, low=0,
          high=100)


def test_amp_multicast() -> None:
    """Float32 only: MXNet's CPU amp_multicast (MKL-DNN) refuses float16/float64."""
    outs = mx.sym.amp_multicast(A, B, num_outputs=2, name="y")
    agree(outs, {"a": (3, 4), "b": (3, 4)})


def test_amp_multicast_mixed_exports() -> None:
    """The mixed case widens to float32 (what MXNet's type rule says)."""
    outs = mx.sym.amp_multicast(A, B, num_outputs=2, name="y")
    built, _ = export(outs, {"a": (3, 4), "b": (3, 4)},
                      dtypes={"a": "float16", "b": "float32"})
    casts = [n for n in built.model.graph.node if n.op_type == "Cast"]
    assert len(casts) == 1 and casts[0].attribute[0].i == 1


@pytest.mark.parametrize("cond_shape", [(4, 3, 2), (4,)])
def test_where(cond_shape) -> None:
    cond = mx.sym.var("cond")
    rng = np.random.default_rng(0)
    c = rng.integers(0, 2, cond_shape).astype("float32") * rng.choice([1, -2], cond_shape)
    net = mx.sym.where(cond, A, B, name="y")
    agree(net, {"cond": cond_shape, "a": (4, 3, 2), "b": (4, 3, 2)},
          feed={"cond": c.astype("float32")})


@pytest.mark.parametrize("sigma", [1.0, 0.5, 3.0])
def test_smooth_l1(sigma) -> None:
    agree(mx.sym.smooth_l1(DATA, scalar=sigma, name="y"), {"data": (5, 6)}, low=-3,
          high=3)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("op", ["add_n", "ElementWiseSum"])
def test_add_n(op, n) -> None:
    ins = [mx.sym.var(f"x{i}") for i in range(n)]
    agree(op_fn(op)(*ins, name="y"), {f"x{i}": (3, 4) for i in range(n)})


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("temperature", [None, 2.0])
def test_softmin(axis, temperature) -> None:
    agree(mx.sym.softmin(DATA, axis=axis, temperature=temperature, name="y"),
          {"data": (3, 4, 5)}, low=-3, high=3)
