"""The broadcast family against MXNet 1.9.1 (the judge): for each rule, attributes and
input shapes (partly unknown, missing, or wrong) drawn by hypothesis, on which the engine
and MXNet infer the same shapes and dtypes or both refuse; the same with the outputs
known (read by a layer that fixes them); and the plain-words messages.

Shapes are given in MXNet's legacy convention (0 an unknown dimension, None not given).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops import registry
from tests.core.ops.judge import agree, agree_pinned, message, varied
from tests.core.ops.judge import shapes as judge_shapes

FEW = settings(max_examples=40, deadline=None)
SOME = settings(max_examples=80, deadline=None)
MANY = settings(max_examples=130, deadline=None)

DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64"]
Legacy = Optional[tuple[int, ...]]

DIMS = (0, 1, 2, 3, 4, 1, 2, 3, 1)
dims = st.sampled_from(list(DIMS))
dtypes = st.one_of(st.none(), st.sampled_from(DTYPES))



def shapes(min_ndim: int = 1, max_ndim: int = 4, none: bool = True
           ) -> st.SearchStrategy[Legacy]:
    return judge_shapes(min_ndim, max_ndim, none, DIMS)


def tup(values: Sequence[Any]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"



# ========================================================== binary broadcast ops
BINARY = ["broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
          "broadcast_mod", "broadcast_power", "broadcast_maximum", "broadcast_minimum",
          "broadcast_hypot", "broadcast_equal", "broadcast_not_equal", "broadcast_greater",
          "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal",
          "broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor",
          "broadcast_plus", "broadcast_minus", "_npi_maximum", "_npi_minimum"]


@st.composite
def broadcastable(draw: st.DrawFn) -> tuple[Legacy, Legacy]:
    """Two shapes that mostly broadcast: a common base, each side a suffix of it with some
    sizes turned to 1 (or unknown, or wrong)."""
    base = draw(st.lists(st.sampled_from([2, 3, 4, 5]), min_size=1, max_size=4))

    def side() -> Legacy:
        if draw(st.integers(0, 9)) == 0:
            return None
        start = draw(st.integers(0, len(base) - 1))
        out = []
        for d in base[start:]:
            r = draw(st.integers(0, 9))
            out.append(1 if r < 3 else 0 if r == 3 else d + 1 if r == 4 else d)
        return tuple(out)
    return side(), side()


@MANY
@given(st.sampled_from(BINARY), st.one_of(broadcastable(), st.tuples(shapes(), shapes())))
def test_broadcast_binary(op: str, pair: tuple[Legacy, Legacy]) -> None:
    agree(op, {}, list(pair))


@SOME
@given(st.sampled_from(BINARY[:3] + BINARY[9:12]), broadcastable(),
       st.one_of(st.none(), shapes(1, 4, none=False), st.sampled_from([(2, 3), (3,)])))
def test_broadcast_binary_output_known(op: str, pair: tuple[Legacy, Legacy], pin: Legacy
                                       ) -> None:
    agree_pinned(op, {}, list(pair), [pin])


@SOME
@given(st.sampled_from(BINARY + ["dot", "batch_dot", "_linalg_gemm2",
                                 "_contrib_interleaved_matmul_encdec_qk",
                                 "_contrib_interleaved_matmul_selfatt_valatt",
                                 "_contrib_interleaved_matmul_encdec_valatt"]),
       dtypes, dtypes)
def test_binary_dtypes(op: str, a: Any, b: Any) -> None:
    attrs = {"heads": "2"} if op.startswith("_contrib") else {}
    agree(op, attrs, [a, b], "dtype")


@FEW
@given(st.sampled_from(BINARY[9:12] + ["dot", "_linalg_gemm"]), dtypes, dtypes, dtypes)
def test_binary_dtypes_output_known(op: str, a: Any, b: Any, pin: Any) -> None:
    values = [a, b, a] if op == "_linalg_gemm" else [a, b]
    agree_pinned(op, {}, values, [pin], "dtype")


# ==================================================================== where
@st.composite
def where_inputs(draw: st.DrawFn) -> list[Legacy]:
    base = tuple(draw(st.lists(st.sampled_from([2, 3, 4]), min_size=1, max_size=3)))
    kind = draw(st.sampled_from(["same", "rows", "other"]))
    if kind == "same":
        cond = draw(varied(base))
    elif kind == "rows":
        cond = draw(varied(base[:1]))
    else:
        cond = draw(shapes())
    return [cond, draw(varied(base, keep=3)), draw(varied(base, keep=3))]


@MANY
@given(where_inputs())
def test_where(values: list[Legacy]) -> None:
    agree("where", {}, values)


@SOME
@given(where_inputs(), st.one_of(st.none(), shapes(1, 3, none=False),
                                 st.sampled_from([(2, 3), (3,), (2,), (4, 2)])))
def test_where_output_known(values: list[Legacy], pin: Legacy) -> None:
    agree_pinned("where", {}, values, [pin])


@SOME
@given(dtypes, dtypes, dtypes, dtypes)
def test_where_dtypes(cond: Any, x: Any, y: Any, pin: Any) -> None:
    agree("where", {}, [cond, x, y], "dtype")
    agree_pinned("where", {}, [cond, x, y], [pin], "dtype")


# ============================================================= broadcasters
@SOME
@given(st.sampled_from(["broadcast_axis", "broadcast_axes"]),
       st.lists(st.integers(-1, 3), max_size=3), st.lists(st.integers(-2, 5), max_size=3),
       st.one_of(shapes(), st.sampled_from([(1, 3, 1), (2, 1), (1,), (1, 1, 1, 4)])))
def test_broadcast_axis(op: str, axis: list[int], size: list[int], shape: Legacy) -> None:
    if len(size) > len(axis) and size and size[-1] % 2:
        size = size[:len(axis)]
    agree(op, {"axis": tup(axis), "size": tup(size)}, [shape])


@SOME
@given(st.lists(st.integers(-2, 4), min_size=1, max_size=4),
       st.one_of(shapes(), st.sampled_from([(1, 3, 1), (2, 1), (1,), (1, 0, 4)])))
def test_broadcast_to(target: list[int], shape: Legacy) -> None:
    if shape is not None and len(target) != len(shape) and target[0] != 4:
        target = (target * 4)[:len(shape)]
    agree("broadcast_to", {"shape": tup(target)}, [shape])


@SOME
@given(st.one_of(st.none(), st.lists(st.integers(-3, 3), max_size=3)),
       st.one_of(st.none(), st.lists(st.integers(-3, 3), max_size=3)),
       st.one_of(shapes(), st.sampled_from([(1, 3, 1), (2, 1), (1,), (1, 1)])),
       st.one_of(shapes(), st.sampled_from([(4, 3, 2), (2, 5), (6,), (0, 5)])))
def test_broadcast_like(la: Any, ra: Any, lhs: Legacy, rhs: Legacy) -> None:
    if la is not None and ra is not None and len(ra) != len(la) and len(la) % 2:
        ra = (ra + [0, 1, 2])[:len(la)]
    attrs = {}
    if la is not None:
        attrs["lhs_axes"] = tup(la)
    if ra is not None:
        attrs["rhs_axes"] = tup(ra)
    agree("broadcast_like", attrs, [lhs, rhs])


@FEW
@given(st.sampled_from(["broadcast_axis", "broadcast_to", "broadcast_like"]), dtypes, dtypes,
       dtypes)
def test_broadcasters_dtypes(op: str, a: Any, b: Any, pin: Any) -> None:
    attrs = {"broadcast_to": {"shape": "(2,)"}}.get(op, {})
    values = [a, b] if op == "broadcast_like" else [a]
    agree(op, attrs, values, "dtype")
    agree_pinned(op, attrs, values, [pin], "dtype")


# =============================================================== reductions
REDUCE = ["sum", "mean", "prod", "nansum", "nanprod", "_square_sum", "max", "min",
          "sum_axis", "max_axis", "min_axis"]
axes = st.one_of(st.none(), st.lists(st.integers(-4, 3), max_size=3))


def _axis_attr(axis: Any, single: bool) -> dict[str, str]:
    if axis is None:
        return {} if single else {"axis": "None"}
    if single and len(axis) == 1:
        return {"axis": str(axis[0])}
    return {"axis": tup(axis)}


@MANY
@given(st.sampled_from(REDUCE), axes, st.booleans(), st.booleans(), st.booleans(),
       shapes())
def test_reduce_axes(op: str, axis: Any, keepdims: bool, exclude: bool, single: bool,
                     shape: Legacy) -> None:
    attrs = {**_axis_attr(axis, single), "keepdims": str(keepdims),
             "exclude": str(exclude)}
    agree(op, attrs, [shape])


@SOME
@given(axes, st.booleans(), st.sampled_from([1, 2]),
       st.sampled_from([None, "float16", "float32", "float64", "int32", "int64", "int8"]),
       shapes())
def test_norm(axis: Any, keepdims: bool, ord_: int, out_dtype: Any, shape: Legacy) -> None:
    attrs = {**_axis_attr(axis, False), "keepdims": str(keepdims), "ord": str(ord_)}
    if out_dtype is not None:
        attrs["out_dtype"] = out_dtype
    agree("norm", attrs, [shape])


@SOME
@given(st.one_of(st.none(), st.lists(st.integers(-4, 3), max_size=3),
                 st.lists(st.integers(-2, 2), min_size=1, max_size=2, unique=True)),
       st.booleans(), st.one_of(shapes(1, 4, none=False), shapes(2, 4, none=False), shapes()))
def test_moments(axis: Any, keepdims: bool, shape: Legacy) -> None:
    attrs = {"keepdims": str(keepdims)}
    if axis is not None:
        attrs["axes"] = tup(axis)
    agree("moments", attrs, [shape])


@FEW
@given(st.sampled_from(REDUCE + ["norm", "moments"]), dtypes, dtypes, dtypes)
def test_reduce_dtypes(op: str, t: Any, pin0: Any, pin1: Any) -> None:
    attrs = {"moments": {"axes": "(0,)"}}.get(op, {})
    agree(op, attrs, [t], "dtype")
    agree_pinned(op, attrs, [t], [pin0, pin1][:len(opinfo.outputs(op, attrs)[1])], "dtype")


@FEW
@given(st.sampled_from(["float16", "float32", "float64", "int32", "int64", "int8"]),
       dtypes, dtypes)
def test_norm_out_dtype(out_dtype: str, t: Any, pin: Any) -> None:
    agree("norm", {"out_dtype": out_dtype}, [t], "dtype")
    agree_pinned("norm", {"out_dtype": out_dtype}, [t], [pin], "dtype")


@SOME
@given(st.sampled_from(["argmax", "argmin", "argmax_channel"]),
       st.one_of(st.none(), st.integers(-4, 3)), st.booleans(), shapes())
def test_reduce_axis(op: str, axis: Any, keepdims: bool, shape: Legacy) -> None:
    attrs = {} if op == "argmax_channel" else {"keepdims": str(keepdims)}
    if axis is not None and op != "argmax_channel":
        attrs["axis"] = str(axis)
    agree(op, attrs, [shape])


@SOME
@given(st.sampled_from(["pick", "choose_element_0index", "_npx_pick"]),
       st.one_of(st.none(), st.integers(-4, 3)), st.booleans(),
       st.sampled_from(["clip", "wrap"]), shapes(), shapes(),
       st.one_of(st.none(), shapes(1, 3, none=False)))
def test_pick(op: str, axis: Any, keepdims: bool, mode: str, data: Legacy, index: Legacy,
              pin: Legacy) -> None:
    attrs = {"keepdims": str(keepdims), "mode": mode,
             "axis": "None" if axis is None else str(axis)}
    agree(op, attrs, [data, index])
    agree_pinned(op, attrs, [data, index], [pin])


@FEW
@given(dtypes, dtypes, dtypes)
def test_pick_dtypes(data: Any, index: Any, pin: Any) -> None:
    agree("pick", {}, [data, index], "dtype")
    agree_pinned("pick", {}, [data, index], [pin], "dtype")


# ================================================================ orderings
@MANY
@given(st.sampled_from(["topk", "sort", "argsort", "_npx_topk", "_npi_sort"]),
       st.one_of(st.none(), st.integers(-4, 3)), st.integers(-1, 5),
       st.sampled_from(["indices", "value", "mask", "both"]), st.booleans(),
       st.one_of(shapes(), st.sampled_from([(2, 3), (4,), (3, 1, 2)])))
def test_orderings(op: str, axis: Any, k: int, ret: str, ascend: bool, shape: Legacy
                   ) -> None:
    attrs = {"axis": "None" if axis is None else str(axis), "is_ascend": str(ascend)}
    if "topk" in op:
        attrs.update(k=str(k), ret_typ=ret)
    agree(op, attrs, [shape])


@SOME
@given(st.sampled_from(["topk", "sort", "argsort"]),
       st.sampled_from(["indices", "value", "mask", "both"]),
       st.sampled_from(["float32", "int32", "int64", "float16", "uint8", "float64"]),
       dtypes, dtypes, dtypes)
def test_ordering_dtypes(op: str, ret: str, dtype: str, t: Any, pin0: Any, pin1: Any
                         ) -> None:
    attrs = {} if op == "sort" else {"dtype": dtype}
    if op == "topk":
        attrs["ret_typ"] = ret
    agree(op, attrs, [t], "dtype")
    n = len(opinfo.outputs(op, attrs)[1])
    agree_pinned(op, attrs, [t], [pin0, pin1][:n], "dtype")


# ================================================================= products
@MANY
@given(st.sampled_from(["dot", "batch_dot", "_npx_batch_dot"]), st.booleans(), st.booleans(),
       st.lists(st.sampled_from([2, 3, 4]), min_size=2, max_size=5), st.data())
def test_dot(op: str, ta: bool, tb: bool, base: list[int], data: st.DataObject) -> None:
    kind = data.draw(st.integers(0, 4))
    if kind == 0:
        lhs, rhs = data.draw(shapes()), data.draw(shapes())
    elif op == "dot":
        cut = data.draw(st.integers(1, len(base) - 1))
        left, right = base[:cut], base[cut - 1:]
        left = left[::-1] if ta and data.draw(st.booleans()) else left
        right = right[::-1] if tb and data.draw(st.booleans()) else right
        lhs, rhs = data.draw(varied(left)), data.draw(varied(right))
    else:
        batch = base[:-2] or [2]
        m, k, n = data.draw(st.lists(st.sampled_from([2, 3, 4]), min_size=3, max_size=3))
        left = batch + ([k, m] if ta else [m, k])
        right = batch + ([n, k] if tb else [k, n])
        lhs, rhs = data.draw(varied(left)), data.draw(varied(right))
    agree(op, {"transpose_a": str(ta), "transpose_b": str(tb)}, [lhs, rhs])


@SOME
@given(st.sampled_from(["_linalg_gemm", "_linalg_gemm2", "linalg_gemm2"]), st.booleans(),
       st.booleans(), st.integers(-4, 3), st.lists(st.sampled_from([2, 3, 4]), min_size=2,
                                                   max_size=4), st.data())
def test_gemm(op: str, ta: bool, tb: bool, axis: int, base: list[int],
              data: st.DataObject) -> None:
    n = len(base)
    row = axis + n if axis < 0 else axis
    left, right = list(base), list(base)
    if 0 <= row < n - 1:
        m, k, cols = data.draw(st.lists(st.sampled_from([2, 3, 5]), min_size=3, max_size=3))
        left[row], left[-1] = (k, m) if ta else (m, k)
        right[row], right[-1] = (cols, k) if tb else (k, cols)
    values = [data.draw(st.one_of(varied(left), shapes())),
              data.draw(st.one_of(varied(right), shapes()))]
    if op == "_linalg_gemm":
        values.append(data.draw(shapes()))
    attrs = {"transpose_a": str(ta), "transpose_b": str(tb), "axis": str(axis)}
    agree(op, attrs, values)


@SOME
@given(st.integers(1, 3), st.data())
def test_khatri_rao(n: int, data: st.DataObject) -> None:
    cols = data.draw(st.sampled_from([2, 3]))
    values = [data.draw(st.one_of(varied((data.draw(st.sampled_from([1, 2, 3])), cols)),
                                  shapes(1, 3))) for _ in range(n)]
    agree("khatri_rao", {"num_args": str(n)}, values)


@FEW
@given(st.integers(1, 3), st.data())
def test_khatri_rao_dtypes(n: int, data: st.DataObject) -> None:
    agree("khatri_rao", {"num_args": str(n)}, [data.draw(dtypes) for _ in range(n)], "dtype")


@MANY
@given(st.sampled_from(["_contrib_interleaved_matmul_selfatt_qk",
                        "_contrib_interleaved_matmul_selfatt_valatt",
                        "_contrib_interleaved_matmul_encdec_qk",
                        "_contrib_interleaved_matmul_encdec_valatt"]),
       st.sampled_from([1, 2, 3]), st.sampled_from([2, 3]), st.sampled_from([2, 3]),
       st.sampled_from([2, 4]), st.sampled_from([2, 3]), st.data())
def test_interleaved(op: str, heads: int, seq: int, batch: int, head_size: int, kv_seq: int,
                     data: st.DataObject) -> None:
    proj = heads * head_size
    wanted = {
        "_contrib_interleaved_matmul_selfatt_qk": [(seq, batch, 3 * proj)],
        "_contrib_interleaved_matmul_selfatt_valatt": [(seq, batch, 3 * proj),
                                                       (batch * heads, seq, seq)],
        "_contrib_interleaved_matmul_encdec_qk": [(seq, batch, proj),
                                                  (kv_seq, batch, 2 * proj)],
        "_contrib_interleaved_matmul_encdec_valatt": [(kv_seq, batch, 2 * proj),
                                                      (batch * heads, seq, kv_seq)],
    }[op]
    values = [data.draw(st.one_of(varied(s, keep=12), shapes(2, 4))) for s in wanted]
    agree(op, {"heads": str(heads)}, values)


@FEW
@given(shapes(), shapes(), dtypes, dtypes)
def test_allclose(a: Legacy, b: Legacy, ta: Any, tb: Any) -> None:
    agree("_contrib_allclose", {}, [a, b])
    agree("_contrib_allclose", {}, [ta, tb], "dtype")


@FEW
@given(st.sampled_from(["_contrib_interleaved_matmul_selfatt_qk", "argmax", "argmax_channel",
                        "_linalg_gemm"]), dtypes, dtypes, dtypes)
def test_other_dtypes(op: str, a: Any, b: Any, c: Any) -> None:
    attrs = {"heads": "2"} if op.startswith("_contrib") else {}
    n = {"_linalg_gemm": 3}.get(op, 1)
    agree(op, attrs, [a, b, c][:n], "dtype")


# ============================================= outputs known, from their readers
PINNED = [
    ("sum", {"axis": "1"}, [(2, 3)]), ("sum", {}, [(2, 0)]), ("max", {"axis": "0"}, [(2, 3)]),
    ("norm", {}, [(2, 3)]), ("moments", {"axes": "(0,)"}, [(2, 3)]),
    ("argmax", {"axis": "1"}, [(2, 3)]), ("broadcast_to", {"shape": "(2, 0)"}, [(1, 0)]),
    ("broadcast_axis", {"axis": "(0,)", "size": "(2,)"}, [(1, 3)]),
    ("broadcast_like", {}, [(1, 3), (2, 0)]), ("dot", {}, [(2, 3), (3, 0)]),
    ("batch_dot", {}, [(2, 0, 3), (2, 3, 4)]), ("_linalg_gemm2", {}, [(2, 3), (3, 0)]),
    ("_linalg_gemm", {}, [(2, 3), (3, 4), None]), ("khatri_rao", {"num_args": "2"},
                                                    [(0, 3), (0, 3)]),
    ("topk", {"ret_typ": "both", "k": "2"}, [(2, 3)]), ("sort", {}, [(2, 3)]),
    ("argsort", {"axis": "None"}, [(2, 3)]), ("_contrib_allclose", {}, [(2, 3), (2, 3)]),
    ("_contrib_interleaved_matmul_selfatt_qk", {"heads": "2"}, [(4, 3, 12)]),
]


@SOME
@given(st.sampled_from(PINNED), st.data())
def test_outputs_known(case: tuple[str, dict[str, str], list[Legacy]], data: st.DataObject
                       ) -> None:
    op, attrs, values = case
    values = [data.draw(st.one_of(st.just(v), varied(v, keep=6))) if v else v
              for v in values]
    n = len(opinfo.outputs(op, attrs)[1])
    pins = [data.draw(st.one_of(st.none(), shapes(1, 3, none=False),
                                st.sampled_from([(2,), (1,), (2, 3), (3,), (2, 2), (2, 4),
                                                 (9, 3), (6, 4, 4)])))
            for _ in range(n)]
    agree_pinned(op, attrs, values, pins)


# ============================================================ plain examples
def test_every_op_of_the_family_has_a_rule() -> None:
    for op in BINARY + REDUCE + ["where", "broadcast_axis", "broadcast_axes", "broadcast_to",
                                 "broadcast_like", "norm", "moments", "argmax", "argmin",
                                 "argmax_channel", "pick", "topk", "sort", "argsort", "dot",
                                 "batch_dot", "_linalg_gemm", "_linalg_gemm2", "khatri_rao",
                                 "_contrib_allclose",
                                 "_contrib_interleaved_matmul_selfatt_qk",
                                 "_contrib_interleaved_matmul_selfatt_valatt",
                                 "_contrib_interleaved_matmul_encdec_qk",
                                 "_contrib_interleaved_matmul_encdec_valatt"]:
        assert registry.family_of(op) == "broadcast", op


def test_examples() -> None:
    assert agree("broadcast_add", {}, [(2, 1, 3), (4, 1)]).outs == ((2, 4, 3),)
    assert agree("broadcast_mul", {}, [(0, 3), (2, 1)]).outs == ((0, 3),)
    assert agree("broadcast_mul", {}, [(0, 3), (1, 3)]).outs == ((0, 3),)
    assert agree("sum", {}, [(2, 3)]).outs == ((1,),)
    assert agree("sum", {"axis": "1", "keepdims": "1"}, [(2, 3)]).outs == ((2, 1),)
    assert agree("mean", {"axis": "(0,)", "exclude": "1"}, [(2, 0, 4)]).outs == ((2,),)
    assert agree("max", {"axis": "1"}, [(2, 0)]).outs == (None,)
    assert agree("broadcast_to", {"shape": "(4, 0)"}, [(1, 0)]).outs == ((4, 0),)
    assert agree("broadcast_axis", {"axis": "(0,)", "size": "(5,)"}, [(1, 3)]).outs == (
        (5, 3),)
    assert agree("broadcast_like", {"lhs_axes": "(0,)", "rhs_axes": "(-1,)"},
                 [(1, 2), (3, 7)]).outs == ((7, 2),)
    assert agree("dot", {"transpose_b": "1"}, [(0, 8), (5, 8)]).outs == ((0, 5),)
    assert agree("dot", {}, [(2, 3, 4), (4, 5, 6)]).outs == ((2, 3, 5, 6),)
    assert agree("batch_dot", {"transpose_b": "1"}, [(2, 3, 4), (2, 5, 4)]).outs == (
        (2, 3, 5),)
    assert agree("where", {}, [(3,), (3, 2), None]).ins[2] == (3, 2)
    assert agree("pick", {"axis": "1"}, [(2, 3), None]).ins[1] == (2,)
    assert agree("topk", {"k": "2", "ret_typ": "both"}, [(4, 5)]).outs == ((4, 2), (4, 2))
    assert agree("topk", {"axis": "None", "k": "3"}, [(4, 5)]).outs == ((3,),)
    assert agree("argsort", {"dtype": "int32"}, ["float16"], "dtype").outs == ("int32",)
    assert agree("broadcast_greater", {}, ["int8", "int8"], "dtype").outs == ("int8",)
    assert agree("moments", {"axes": "(0, 2)"}, [(2, 3, 4)]).outs == ((3,), (3,))
    assert agree("_linalg_gemm", {"axis": "0"}, [(3, 5, 4), (4, 5, 2), None]).ins[2] == (
        3, 5, 2)
    assert agree("khatri_rao", {"num_args": "2"}, [(2, 3), (4, 3)]).outs == ((8, 3),)
    assert agree("_contrib_interleaved_matmul_selfatt_qk", {"heads": "4"},
                 [(7, 2, 96)]).outs == ((8, 7, 7),)
    assert agree("_contrib_interleaved_matmul_selfatt_valatt", {"heads": "4"},
                 [(7, 2, 96), (8, 7, 7)]).outs == ((7, 2, 32),)


def test_messages_name_the_input_or_attribute() -> None:
    text = message("broadcast_add", {}, [(2, 3), (4, 3)])
    assert "'in0' (lhs)" in text and "'in1' (rhs)" in text and "cannot be broadcast" in text
    text = message("sum", {"axis": "(1, 1)"}, [(2, 3)])
    assert "axis (1, 1)" in text and "twice" in text
    text = message("mean", {"axis": "5"}, [(2, 3)])
    assert "axis (5,)" in text
    assert "axis" in message("argmax", {"axis": "2"}, [(2, 3)])
    text = message("broadcast_to", {"shape": "(4, 5)"}, [(2, 3)])
    assert "shape (4, 5)" in text and "neither 4 nor 1" in text
    assert "size" in message("broadcast_axis", {"axis": "(0,)", "size": "(2, 3)"}, [(1, 3)])
    text = message("broadcast_axis", {"axis": "(1,)", "size": "(2,)"}, [(1, 3)])
    assert "size 3" in text and "size 1" in text
    assert "rhs_axes" in message("broadcast_like", {"lhs_axes": "(0,)", "rhs_axes": "(5,)"},
                                 [(1, 3), (2, 3)])
    text = message("dot", {}, [(2, 3), (4, 5)])
    assert "'in0' (lhs)" in text and "3" in text and "4" in text
    assert "transpose_a" in message("dot", {"transpose_a": "1"}, [(3,), (3,)])
    text = message("dot", {}, [(2, 0), (0, 3)])
    assert "contracted dimension is unknown" in text
    assert "batch dimensions" in message("batch_dot", {}, [(2, 3, 4), (3, 4, 5)])
    assert "rank of 3 or more" in message("batch_dot", {}, [(3, 4), (4, 5)])
    assert "axis" in message("_linalg_gemm2", {"axis": "1"}, [(3, 4), (4, 5)])
    assert "k=9" in message("topk", {"k": "9"}, [(2, 3)])
    assert "full shape" in message("topk", {}, [(0, 3)])
    assert "axis=None" in message("pick", {"axis": "None"}, [(2, 3), (2,)])
    text = message("pick", {}, ["float32", None], "dtype")
    assert "'in1' (index)" in text and "dtype" in text
    assert "out_dtype" in message("norm", {"out_dtype": "float16"}, [None], "dtype")
    assert "axes" in message("moments", {}, [(2, 3)])
    text = message("where", {}, [(3,), (4, 2), None])
    assert "'in0' (condition)" in text and "one element per row" in text
    text = message("khatri_rao", {"num_args": "2"}, [(2, 3), (2, 4)])
    assert "'in1'" in text and "columns" in text
    assert "heads" in message("_contrib_interleaved_matmul_encdec_valatt", {"heads": "3"},
                              [(4, 2, 8), (2, 5, 4)])
    assert "multiple of 3" in message("_contrib_interleaved_matmul_selfatt_valatt",
                                      {"heads": "1"}, [(4, 2, 8), (2, 4, 4)])
