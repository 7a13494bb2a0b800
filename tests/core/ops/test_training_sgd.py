"""The training family's many-weight SGD updates, their preloaded twins (learning rates
and weight decays as inputs), ``multi_sum_sq`` and ``reset_arrays`` against MXNet 1.9.1
(the judge), with attributes and input shapes or dtypes (partly unknown, missing, or
wrong) drawn by hypothesis, on which the engine and MXNet infer the same or both refuse;
and the plain-words messages.  The single-weight SGD updates (``sgd_update``,
``mp_sgd_update``, ``rmsprop_update`` ...) and ``multi_lars`` share the tests of
:mod:`tests.core.ops.test_training`.

The helpers of :mod:`tests.core.ops.test_training` build the one-node graph, give the
engine's node MXNet's output count (``num_weights``) and may pin output 0.
"""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mxexplorer.core.graph.model import Node
from mxexplorer.core.ops import engine, registry
from tests.core.ops.test_training import (
    FEW,
    SOME,
    Legacy,
    check,
    count_off,
    dtypes,
    message,
    shapes,
    some_pin,
    tup,
    types_like,
    varied,
)

#: each op's group of inputs per weight
GROUP = {
    "multi_sgd_update": ("weight", "grad"),
    "multi_sgd_mom_update": ("weight", "grad", "mom"),
    "multi_mp_sgd_update": ("weight", "grad", "weight32"),
    "multi_mp_sgd_mom_update": ("weight", "grad", "mom", "weight32"),
}
GROUP.update({f"preloaded_{op}": g for op, g in list(GROUP.items())})
MULTI = sorted(GROUP)


def test_every_op_has_its_rule() -> None:
    for op in [*MULTI, "sgd_update", "sgd_mom_update", "mp_sgd_update", "nag_mom_update",
               "signsgd_update", "signum_update", "rmsprop_update", "rmspropalex_update",
               "multi_lars", "multi_sum_sq", "reset_arrays", "_sparse_sgd_update",
               "_sparse_sgd_mom_update"]:
        assert registry.family_of(op) == "training", op


# ===================================================================== multi SGD
@st.composite
def sgd_attrs(draw: st.DrawFn, op: str, n: int) -> dict[str, str]:
    """``num_weights`` (left to its default 1 now and then); the plain ones' ``lrs`` and
    ``wds``, mostly one value per weight."""
    attrs: dict[str, str] = {}
    if not op.startswith("preloaded_"):
        for key in ("lrs", "wds"):
            k = n if draw(st.integers(0, 8)) else draw(st.integers(0, 3))
            attrs[key] = tup(["0.1"] * k)
    if "mom" in op and draw(st.booleans()):
        attrs["momentum"] = "0.9"
    if n != 1 or draw(st.booleans()):
        attrs["num_weights"] = str(n)
    return attrs


def per_weight(n: int) -> st.SearchStrategy[Legacy]:
    """The shape of a preloaded update's ``lrs``/``wds`` input: mostly ``n`` values."""
    good = st.sampled_from([(n,), (n, 1), (1, n)])
    bad = st.sampled_from([(0,), None, (n + 1,), (2, 2), (n, 0), (0, 1)])
    return st.one_of(good, good, good, good, good, bad)


def stride(op: str) -> int:
    return len(GROUP[op])


def tail(op: str) -> int:
    return 2 if op.startswith("preloaded_") else 0


@pytest.mark.parametrize("op", MULTI)
@FEW
@given(n=st.integers(1, 3), base=shapes(), data=st.data())
def test_multi_sgd_shapes(op: str, n: int, base: tuple[int, ...], data: st.DataObject
                          ) -> None:
    values = [data.draw(varied(base, 8, 60)) for _ in range(stride(op) * n)]
    values += [data.draw(per_weight(n)) for _ in range(tail(op))]
    values = count_off(data.draw, values)
    check(op, data.draw(sgd_attrs(op, n)), values, n_out=n, pin=some_pin(data.draw, base))


@pytest.mark.parametrize("op", MULTI)
@FEW
@given(n=st.integers(1, 3), data=st.data())
def test_multi_sgd_dtypes(op: str, n: int, data: st.DataObject) -> None:
    k = stride(op)
    fp32 = [k * i + j for i in range(n) for j in range(2, k)] if "_mp_" in op else []
    fp32 += [k * n + j for j in range(tail(op))]
    values = data.draw(types_like(k * n + tail(op), fp32))
    if "_mp_" in op or op.startswith("preloaded_"):
        # the plain ones check no count in their dtype rule (see test_training)
        values = count_off(data.draw, values)
    pin = data.draw(dtypes) if data.draw(st.integers(0, 2)) == 0 else None
    check(op, data.draw(sgd_attrs(op, n)), values, "dtype", n_out=n, pin=pin)


# ================================================================== multi_sum_sq
@SOME
@given(st.integers(0, 3), st.data())
def test_multi_sum_sq(n: int, data: st.DataObject) -> None:
    attrs = {"num_arrays": str(n)}
    values = [data.draw(st.one_of(st.none(), shapes())) for _ in range(n)]
    values = count_off(data.draw, values) if n else values
    check("multi_sum_sq", attrs, values,
          pin=data.draw(st.sampled_from([None, None, (n,), (0,), (n + 1,), (n, 1)])))
    if n == 0:
        return                       # MXNet reads the first array's dtype regardless
    base = data.draw(st.sampled_from(["float32", "float16", "float64", "int32"]))
    pick = st.one_of(st.just(base), st.just(base), st.none(), dtypes)
    types = count_off(data.draw, [data.draw(pick) for _ in range(n)])
    check("multi_sum_sq", attrs, types, "dtype", pin=data.draw(dtypes))


@FEW
@given(st.sampled_from(["-1", "-2"]), st.integers(0, 2))
def test_multi_sum_sq_negative_count(num: str, n: int) -> None:
    check("multi_sum_sq", {"num_arrays": num}, [(2, 3)] * n)


# ================================================================== reset_arrays
def _reset(n_inputs: int, num_arrays: int, kind: str) -> engine.Inferred:
    """``reset_arrays`` has no output, so MXNet cannot hold it in a symbol (a symbol of
    it crashes MXNet; a file's node that nothing reads is dropped): the engine alone."""
    nodes = [Node("null", f"in{i}", {}, [], {}) for i in range(n_inputs)]
    nodes.append(Node("reset_arrays", "r", {"num_arrays": str(num_arrays)},
                      [(i, 0, 0) for i in range(n_inputs)], {}))
    g = engine.graph_of(nodes, list(range(len(nodes))), lambda nid: 0)
    if kind == "shape":
        return engine.infer_shapes(g, {0: (2, 3)})
    return engine.infer_dtypes(g, {0: "float16"})


@pytest.mark.parametrize("kind", ["shape", "dtype"])
def test_reset_arrays(kind: str) -> None:
    got = _reset(2, 2, kind)
    assert got.failure is None
    assert got.values[(0, 0)] == ((2, 3) if kind == "shape" else "float16")
    assert got.values[(1, 0)] is None                  # nothing goes from one to another
    got = _reset(2, 3, kind)
    assert got.failure is not None
    text = got.failure.error.message
    assert "has 2 inputs" in text and "num_arrays=3" in text
    assert got.failure.error.attr == "num_arrays"


# ========================================================== plain-words messages
def test_multi_sgd_messages() -> None:
    attrs = {"lrs": "(0.1,)", "wds": "(0, 0)", "num_weights": "2"}
    text = message("multi_sgd_mom_update", attrs, [(2, 3)] * 6, n_out=2)
    assert text.startswith("lrs has 1 value") and "num_weights=2" in text
    attrs["lrs"] = "(0.1, 0.2)"
    text = message("multi_sgd_mom_update", attrs, [(2, 3)] * 5, n_out=2)
    assert "num_weights=2 needs 6" in text and "weight, grad, mom for each" in text
    values: list[Any] = [(2, 3)] * 6
    values[4] = (4,)
    text = message("multi_sgd_mom_update", attrs, values, n_out=2)
    assert "(grad_1) has shape (4,)" in text and "(weight_1) has shape (2, 3)" in text
    text = message("multi_mp_sgd_mom_update", attrs,
                   ["float16", "float16", "float16", None] * 2, "dtype", n_out=2)
    assert "(mom_0) has dtype float16" in text and "float32" in text


def test_preloaded_messages() -> None:
    op = "preloaded_multi_sgd_update"
    text = message(op, {"num_weights": "2"}, [(2, 3)] * 4 + [None, (2,)], n_out=2)
    assert "(lrs) has an unknown shape" in text and "num_weights=2" in text
    text = message(op, {"num_weights": "2"}, [(2, 3)] * 4 + [(2,), (3, 1)], n_out=2)
    assert "(wds) has shape (3, 1), 3 values" in text and "one weight decay" in text
    text = message(op, {"num_weights": "2"}, [(2, 3)] * 4, n_out=2)
    assert "needs 6" in text and "then lrs and wds" in text
    text = message("preloaded_multi_mp_sgd_update", {},
                   ["float16", "float16", "float32", None, "float16"], "dtype")
    assert "(wds) has dtype float16" in text


def test_sum_sq_messages() -> None:
    text = message("multi_sum_sq", {"num_arrays": "2"}, [None, "float32"], "dtype")
    assert "(array_0) has an unknown dtype" in text and "first array" in text
    text = message("multi_sum_sq", {"num_arrays": "2"}, ["float32", "float16"], "dtype")
    assert "(array_1) has dtype float16" in text and "float32" in text
    text = message("multi_sum_sq", {"num_arrays": "3"}, [(2, 3), (4,)])
    assert "has 2 inputs" in text and "num_arrays=3" in text
