"""The training family against MXNet 1.9.1 (the judge): the optimizer updates, the
finiteness checks, the sparse helpers, the boolean mask and the DGL graph ops, with
attributes and input shapes or dtypes (partly unknown, missing, or wrong) drawn by
hypothesis, on which the engine and MXNet infer the same or both refuse; and the
plain-words messages.

Shapes are given in MXNet's legacy convention (0 an unknown dim, None not given).
:func:`check` builds the one-node graph of :mod:`tests.core.ops.judge`, gives the
engine's node the output count MXNet gives it (the op table does not count the outputs
of the multi-tensor updates and the DGL ops: a file's ``node_row_ptr`` does), and may
"pin" output 0: it then feeds ``elemwise_add(pin, out0)``, so the op also learns from
its output, as in a real graph.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mxexplorer.core.ops import registry
from mxexplorer.core.ops.training import updates
from tests.core.ops.judge import Verdict, agree, verdicts

FEW = settings(max_examples=40, deadline=None)
SOME = settings(max_examples=70, deadline=None)

Legacy = Optional[tuple[int, ...]]
#: ``data.draw`` or a composite's ``draw``
Draw = Callable[[st.SearchStrategy[Any]], Any]
DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]
dtypes = st.one_of(st.none(), st.sampled_from(DTYPES))
dims = st.sampled_from([0, 1, 2, 3, 4, 2, 3])


# ------------------------------------------------------------------------ the judge
def check(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape",
          n_out: int = 1, pin: Any = None) -> Verdict:
    """The engine and MXNet agree (or both refuse); one-output ops without a pin go
    through the shared judge's one-node graph, the others with the engine told the node
    has ``n_out`` outputs and output 0 read by ``elemwise_add(pin, out0)``."""
    if n_out == 1 and pin is None:
        return agree(op, attrs, values, kind)
    return agree(op, attrs, values, kind, [pin], total=n_out, pin_with="elemwise_add")


def message(op: str, attrs: dict[str, str], values: Sequence[Any], kind: str = "shape",
            n_out: int = 1) -> str:
    """The engine's refusal (MXNet refuses too), the engine told the node has ``n_out``
    outputs."""
    theirs, ours = verdicts(op, attrs, values, kind, total=n_out)
    assert theirs.refused is not None, theirs
    assert ours.refused is not None, ours
    return ours.refused


# ----------------------------------------------------------------------- strategies
def shapes(min_ndim: int = 1, max_ndim: int = 3) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(dims, min_size=min_ndim, max_size=max_ndim).map(tuple)


@st.composite
def varied(draw: st.DrawFn, base: tuple[int, ...], keep: int = 5, wild: int = 14) -> Legacy:
    """``base`` with some dims unknown or changed, or the whole shape missing (one time
    in ``keep + 1``), or any shape (one time in ``wild + 1``)."""
    if draw(st.integers(0, keep)) == 0:
        return None
    r = draw(st.integers(0, wild))
    if r == 0:
        return draw(shapes())                        # anything
    out = []
    for d in base:
        k = draw(st.integers(0, 9))
        out.append(0 if k < 3 else d + 1 if k == 3 else d)
    return tuple(out)


def count_off(draw: Draw, values: list[Any]) -> list[Any]:
    """Now and then one input too few or too many."""
    if draw(st.integers(0, 14)) == 1:
        return values[:-1] if draw(st.booleans()) else values + [values[0]]
    return values


def some_pin(draw: Draw, base: tuple[int, ...]) -> Legacy:
    return draw(varied(base, 1)) if draw(st.integers(0, 2)) == 0 else None


def tup(values: Sequence[Any]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


#: attributes each op requires
NEEDS: dict[str, dict[str, str]] = {
    "adam_update": {"lr": "0.1"}, "ftml_update": {"lr": "0.1", "t": "1"},
    "ftrl_update": {"lr": "0.1"}, "_sparse_adagrad_update": {"lr": "0.1"},
    "lamb_update_phase1": {"t": "1", "wd": "0"}, "mp_lamb_update_phase1": {"t": "1", "wd": "0"},
    "mp_nag_mom_update": {"lr": "0.1"}, "mp_sgd_mom_update": {"lr": "0.1"},
    "_adamw_update": {"lr": "0.1", "eta": "1"}, "_mp_adamw_update": {"lr": "0.1", "eta": "1"},
    "lamb_update_phase2": {"lr": "0.1"}, "mp_lamb_update_phase2": {"lr": "0.1"},
    "_contrib_group_adagrad_update": {"lr": "0.1"}, "cast_storage": {"stype": "csr"},
    **{op: {"lr": "0.1"} for op in ("sgd_update", "signsgd_update", "sgd_mom_update",
                                    "nag_mom_update", "signum_update", "rmsprop_update",
                                    "rmspropalex_update", "mp_sgd_update")},
    "multi_lars": {"eta": "0.001", "eps": "1e-8"},
}
SINGLE = sorted(updates.SLOTS)
SHARED = [op for op in SINGLE if op not in (
    "lamb_update_phase2", "mp_lamb_update_phase2", "_contrib_group_adagrad_update")]


# ====================================================================== the tables
def test_every_op_has_its_rule() -> None:
    ops = [*SINGLE, "_multi_adamw_update", "_multi_mp_adamw_update", "_multi_lamb_update",
           "_multi_mp_lamb_update", "all_finite", "multi_all_finite", "_sparse_retain",
           "_contrib_getnnz", "_scatter_set_nd", "_contrib_boolean_mask", "_set_value",
           "_contrib_edge_id", "_contrib_dgl_adjacency",
           "_contrib_dgl_csr_neighbor_uniform_sample",
           "_contrib_dgl_csr_neighbor_non_uniform_sample", "_contrib_dgl_subgraph",
           "_contrib_dgl_graph_compact"]
    for op in ops:
        assert registry.family_of(op) == "training", op
    for alias in ("_sparse_adam_update", "_sparse_ftrl_update", "_npi_boolean_mask",
                  "_sparse_cast_storage", "_npi_scatter_set_nd"):
        assert registry.family_of(alias) == "training", alias


# ================================================================= single updates
@st.composite
def types_like(draw: st.DrawFn, n: int, fp32: Sequence[int] = (),
               fp16: Sequence[int] = ()) -> list[Any]:
    """``n`` dtypes, mostly one of them, some missing, now and then anything; inputs
    ``fp32`` (the mixed-precision optimizers' state) mostly float32, ``fp16`` mostly
    float16."""
    base = draw(st.sampled_from(["float32", "float16", "float64", "int32"]))
    pick = st.one_of(st.just(base), st.just(base), st.just(base), st.none(), dtypes)
    out = [draw(pick) for _ in range(n)]
    for positions, kind in ((fp32, "float32"), (fp16, "float16")):
        for i in positions:
            if i < n and draw(st.integers(0, 5)):
                out[i] = kind if draw(st.integers(0, 4)) else None
    return out


#: the inputs the mixed-precision updates keep in float32 (and float16)
FP32 = {"mp_sgd_update": (2,), "mp_sgd_mom_update": (2, 3), "mp_nag_mom_update": (2, 3),
        "mp_lamb_update_phase1": (2, 3, 4), "_adamw_update": (4,),
        "_mp_adamw_update": (2, 3, 4, 5), "mp_lamb_update_phase2": (1, 2, 3, 4)}
FP16 = {"mp_lamb_update_phase1": (0, 1)}


@pytest.mark.parametrize("op", SHARED)
@FEW
@given(base=shapes(), data=st.data())
def test_single_update_shapes(op: str, base: tuple[int, ...], data: st.DataObject) -> None:
    n = len(updates.SLOTS[op])
    values = count_off(data.draw, [data.draw(varied(base)) for _ in range(n)])
    check(op, NEEDS[op], values, pin=some_pin(data.draw, base))


@pytest.mark.parametrize("op", SINGLE)
@FEW
@given(data=st.data())
def test_single_update_dtypes(op: str, data: st.DataObject) -> None:
    n = len(updates.SLOTS[op])
    values = count_off(data.draw, data.draw(types_like(n, FP32.get(op, ()),
                                                       FP16.get(op, ()))))
    pin = data.draw(dtypes) if data.draw(st.integers(0, 2)) == 0 else None
    check(op, NEEDS[op], values, "dtype", pin=pin)


@SOME
@given(st.sampled_from(["lamb_update_phase2", "mp_lamb_update_phase2"]), shapes(),
       st.data())
def test_lamb_phase2_shapes(op: str, base: tuple[int, ...], data: st.DataObject) -> None:
    norms = st.sampled_from([None, (1,), (1,), (1,), (1,), (1,), (2,), (1, 3), (0,)])
    values: list[Any] = [data.draw(varied(base)), data.draw(varied(base)),
                         data.draw(norms), data.draw(norms)]
    if data.draw(st.integers(0, 2)):
        values[1] = values[0]                        # g exactly the weight
    if op == "mp_lamb_update_phase2":
        values.append(values[0] if data.draw(st.booleans()) else data.draw(varied(base)))
    values = count_off(data.draw, values)
    check(op, NEEDS[op], values, pin=some_pin(data.draw, base))


@SOME
@given(shapes(), st.data())
def test_group_adagrad_shapes(base: tuple[int, ...], data: st.DataObject) -> None:
    values = [data.draw(varied(base)), data.draw(varied(base)),
              data.draw(st.one_of(st.none(), shapes()))]
    values = count_off(data.draw, values)
    check("_contrib_group_adagrad_update", NEEDS["_contrib_group_adagrad_update"], values,
          pin=some_pin(data.draw, base))


# ================================================================== multi updates
MULTI = ["_multi_adamw_update", "_multi_mp_adamw_update", "_multi_lamb_update",
         "_multi_mp_lamb_update"]


@st.composite
def multi_attrs(draw: st.DrawFn, op: str, n: int) -> dict[str, str]:
    def values(kind: str) -> str:
        k = n if draw(st.integers(0, 8)) else draw(st.integers(0, 3))
        return tup(["1" if kind == "int" else "0.1"] * k)
    if "adamw" in op:
        attrs = {"lrs": values("float"), "wds": values("float"), "etas": values("float")}
        key = "num_weights"
    else:
        attrs = {"learning_rates": values("float"), "wds": values("float"),
                 "step_count": values("int")}
        key = "num_tensors"
    if n != 1 or draw(st.booleans()):
        attrs[key] = str(n)
    return attrs


@pytest.mark.parametrize("op", MULTI)
@FEW
@given(n=st.integers(1, 3), base=shapes(), data=st.data())
def test_multi_update_shapes(op: str, n: int, base: tuple[int, ...],
                             data: st.DataObject) -> None:
    stride = 5 if "_mp_" in op else 4
    count = stride * n + (1 if "adamw" in op else 0)
    values = count_off(data.draw, [data.draw(varied(base, 8, 60)) for _ in range(count)])
    check(op, data.draw(multi_attrs(op, n)), values, n_out=n, pin=some_pin(data.draw, base))


@pytest.mark.parametrize("op", MULTI)
@FEW
@given(n=st.integers(1, 3), data=st.data())
def test_multi_update_dtypes(op: str, n: int, data: st.DataObject) -> None:
    stride = 5 if "_mp_" in op else 4
    count = stride * n + (1 if "adamw" in op else 0)
    fp32 = [5 * i + j for i in range(n) for j in (2, 3, 4)] + [5 * n] if "_mp_" in op \
        else []
    values = data.draw(types_like(count, fp32))
    if "_mp_" in op:
        # the plain ones check no count in their dtype rule, and MXNet's Python API
        # then misreports a node with too few inputs for the ones it mutates
        values = count_off(data.draw, values)
    pin = data.draw(dtypes) if data.draw(st.integers(0, 2)) == 0 else None
    check(op, data.draw(multi_attrs(op, n)), values, "dtype", n_out=n, pin=pin)


@FEW
@given(st.sampled_from(["all_finite", "multi_all_finite"]), st.integers(1, 3), shapes(),
       st.data())
def test_all_finite(op: str, n: int, base: tuple[int, ...], data: st.DataObject) -> None:
    attrs = {"num_arrays": str(n)} if op == "multi_all_finite" else {}
    count = n if op == "multi_all_finite" else 1
    check(op, attrs, [data.draw(varied(base)) for _ in range(count)],
          pin=data.draw(st.sampled_from([None, (1,), (0,), (2,), (1, 1)])))
    check(op, attrs, [data.draw(dtypes) for _ in range(count)], "dtype",
          pin=data.draw(dtypes))


# ========================================================= sparse helpers and mask
@SOME
@given(shapes(), st.data())
def test_sparse_retain(base: tuple[int, ...], data: st.DataObject) -> None:
    values = count_off(data.draw, [data.draw(varied(base)),
                                   data.draw(st.one_of(st.none(), shapes()))])
    check("_sparse_retain", {}, values, pin=some_pin(data.draw, base))
    types = count_off(data.draw, [data.draw(dtypes), data.draw(dtypes)])
    check("_sparse_retain", {}, types, "dtype", pin=data.draw(dtypes))


@SOME
@given(st.sampled_from([None, "None", "0", "1", "0", "1", "2", "-1"]),
       st.one_of(st.none(), shapes(1, 3), shapes(2, 2), shapes(2, 2)), st.data())
def test_getnnz(axis: Optional[str], shape: Legacy, data: st.DataObject) -> None:
    attrs = {} if axis is None else {"axis": axis}
    values = count_off(data.draw, [shape])
    check("_contrib_getnnz", attrs, values,
          pin=data.draw(st.sampled_from([None, None, (1,), (0,), (3,)])))
    types = count_off(data.draw, [data.draw(dtypes)])
    check("_contrib_getnnz", attrs, types, "dtype",
          pin=data.draw(st.sampled_from([None, "int64", "float32"])))


@st.composite
def scatter_case(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...],
                                           tuple[int, ...]]:
    """A fitting (rhs, indices, output) triple: indices (M, Y...), output (X..., Z...),
    rhs (Y..., Z...)."""
    out = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    m = draw(st.integers(1, len(out)))
    ys = draw(st.lists(st.integers(1, 3), min_size=1, max_size=2).map(tuple))
    return ys + out[m:], (m,) + ys, out


@SOME
@given(scatter_case(), st.data())
def test_scatter_set_nd(case: tuple[tuple[int, ...], ...], data: st.DataObject) -> None:
    rhs, idx, out = case
    shape = out if data.draw(st.integers(0, 5)) else data.draw(shapes(1, 3))
    text = tup(shape) if data.draw(st.integers(0, 7)) else \
        data.draw(st.sampled_from(["()", "None", "(-1, 2)", "(2, -2)"]))
    attrs = {"shape": text}
    values = [data.draw(varied(out)), data.draw(varied(rhs)), data.draw(varied(idx))]
    values = count_off(data.draw, values)
    check("_scatter_set_nd", attrs, values, pin=some_pin(data.draw, out))
    types = count_off(data.draw, [data.draw(dtypes) for _ in range(3)])
    check("_scatter_set_nd", attrs, types, "dtype", pin=data.draw(dtypes))


@FEW
@given(shapes(), st.data())
def test_boolean_mask(base: tuple[int, ...], data: st.DataObject) -> None:
    """No shape rule in MXNet: the output and its reader stay unknown."""
    values = count_off(data.draw, [data.draw(varied(base)), data.draw(varied(base[:1]))])
    check("_contrib_boolean_mask", {}, values, pin=some_pin(data.draw, base))
    types = count_off(data.draw, [data.draw(dtypes), data.draw(dtypes)])
    check("_contrib_boolean_mask", {"axis": "0"}, types, "dtype", pin=data.draw(dtypes))


@FEW
@given(st.integers(0, 2), shapes(), st.data())
def test_set_value(n: int, base: tuple[int, ...], data: st.DataObject) -> None:
    check("_set_value", {"src": "1.5"}, [data.draw(varied(base)) for _ in range(n)],
          pin=some_pin(data.draw, base))
    check("_set_value", {"src": "1.5"}, [data.draw(dtypes) for _ in range(n)], "dtype",
          pin=data.draw(dtypes))


# ======================================================================= DGL graphs
@SOME
@given(st.integers(0, 4), st.data())
def test_edge_id_and_adjacency(length: int, data: st.DataObject) -> None:
    vec = st.one_of(st.none(), st.just((length,)), st.just((0,)), shapes(1, 2))
    u = data.draw(vec)
    v = u if data.draw(st.booleans()) else data.draw(vec)
    values = count_off(data.draw, [data.draw(st.one_of(st.none(), shapes(2, 2))), u, v])
    check("_contrib_edge_id", {}, values,
          pin=data.draw(st.sampled_from([None, (length,), (0,), (5,)])))
    types = count_off(data.draw, [data.draw(dtypes) for _ in range(3)])
    check("_contrib_edge_id", {}, types, "dtype", pin=data.draw(dtypes))
    adj = count_off(data.draw, [data.draw(st.one_of(st.none(), shapes()))])
    check("_contrib_dgl_adjacency", {}, adj, pin=data.draw(st.one_of(st.none(), shapes())))
    kinds = st.one_of(st.just("int64"), dtypes)
    check("_contrib_dgl_adjacency", {}, count_off(data.draw, [data.draw(kinds)]), "dtype",
          pin=data.draw(dtypes))


def mostly(draw: Draw, good: Any, other: st.SearchStrategy[Any]) -> Any:
    """``good`` seven times in eight, else something from ``other``."""
    return good if draw(st.integers(0, 7)) else draw(other)


@SOME
@given(st.booleans(), st.integers(1, 3), st.data())
def test_neighbor_sample(uniform: bool, n: int, data: st.DataObject) -> None:
    op = "_contrib_dgl_csr_neighbor_" + ("uniform" if uniform else "non_uniform") + "_sample"
    first = 1 if uniform else 2
    attrs = {"num_args": str(n + first)}
    most = 100
    if data.draw(st.booleans()):
        most = data.draw(st.sampled_from([0, 3, 7, -1, -2]))
        attrs["max_num_vertices"] = str(most)
    side = data.draw(st.integers(0, 5))
    anything = st.one_of(st.none(), shapes(1, 3))
    values = [mostly(data.draw, (side, side), anything)]
    values += [mostly(data.draw, (data.draw(st.integers(0, 5)),), anything)
               for _ in range(n + first - 1)]
    n_out = (3 if uniform else 4) * n
    check(op, attrs, count_off(data.draw, values), n_out=n_out,
          pin=data.draw(st.sampled_from([None, None, (most + 1,), (0,), (8,)])))
    types = [data.draw(dtypes) for _ in range(n + first)]
    check(op, attrs, count_off(data.draw, types), "dtype", n_out=n_out,
          pin=data.draw(dtypes))


@SOME
@given(st.integers(1, 3), st.booleans(), st.data())
def test_subgraph(n: int, mapping: bool, data: st.DataObject) -> None:
    attrs = {"num_args": str(n + 1), "return_mapping": str(mapping)}
    anything = st.one_of(st.none(), shapes(1, 3))
    values = [mostly(data.draw, data.draw(shapes(2, 2)), anything)]
    values += [mostly(data.draw, data.draw(shapes(1, 1)), anything) for _ in range(n)]
    n_out = n * (2 if mapping else 1)
    check("_contrib_dgl_subgraph", attrs, count_off(data.draw, values), n_out=n_out,
          pin=data.draw(st.one_of(st.none(), shapes(2, 2))))
    kinds = st.one_of(st.just("int64"), st.just("int64"), dtypes)
    types = [data.draw(dtypes)] + [data.draw(kinds) for _ in range(n)]
    check("_contrib_dgl_subgraph", attrs, count_off(data.draw, types), "dtype",
          n_out=n_out, pin=data.draw(dtypes))


@SOME
@given(st.integers(1, 2), st.booleans(), st.data())
def test_graph_compact(n: int, mapping: bool, data: st.DataObject) -> None:
    sizes = [data.draw(st.integers(0, 4)) for _ in range(n)]
    spare = st.integers(0, 2)
    anything = st.one_of(st.none(), shapes(1, 3))
    values: list[Any] = [mostly(data.draw, (s + data.draw(spare), s + data.draw(spare)),
                                anything) for s in sizes]
    values += [mostly(data.draw, (s + data.draw(spare),), anything) for s in sizes]
    if data.draw(st.integers(0, 6)) == 0:
        sizes = sizes[:-1] if data.draw(st.booleans()) else sizes + [-1]
    attrs = {"num_args": str(2 * n + data.draw(st.sampled_from([0] * 7 + [1]))),
             "return_mapping": str(mapping), "graph_sizes": tup(sizes)}
    n_out = (int(attrs["num_args"]) // 2) * (2 if mapping else 1)
    check("_contrib_dgl_graph_compact", attrs, count_off(data.draw, values), n_out=n_out,
          pin=data.draw(st.sampled_from([None, None, (sizes[0],) * 2 if sizes else None,
                                         (0, 0), (2, 2)])))
    kinds = st.one_of(st.just("int64"), st.just("int64"), st.just("int64"), dtypes)
    types = [data.draw(kinds) for _ in range(2 * n)]
    check("_contrib_dgl_graph_compact", attrs, count_off(data.draw, types), "dtype",
          n_out=n_out, pin=data.draw(dtypes))


# ========================================================== plain-words messages
def test_update_messages() -> None:
    text = message("adam_update", NEEDS["adam_update"], [(2, 3), (2, 3), (2, 3)])
    assert "adam_update has 3 inputs, but it takes 4" in text and "var" in text
    text = message("adam_update", NEEDS["adam_update"], [(2, 3), (2, 4), None, None])
    assert "(grad) has shape (2, 4)" in text and "(weight) has shape (2, 3)" in text
    text = message("mp_sgd_mom_update", NEEDS["mp_sgd_mom_update"],
                   ["float16", "float16", "float16", None], "dtype")
    assert "(mom) has dtype float16" in text and "float32" in text
    text = message("mp_lamb_update_phase1", NEEDS["mp_lamb_update_phase1"],
                   ["float32", None, None, None, None], "dtype")
    assert "(weight) has dtype float32" in text and "float16" in text


def test_lamb_phase2_messages() -> None:
    attrs = NEEDS["lamb_update_phase2"]
    text = message("lamb_update_phase2", attrs, [(2, 3), None, (1,), (1,)])
    assert "(g) has an unknown shape" in text and "weight's rank" in text
    text = message("lamb_update_phase2", attrs, [(2, 0), (2, 3), (1,), (1,)])
    assert "(g) has shape (2, 3)" in text and "every dimension" in text
    text = message("lamb_update_phase2", attrs, [(2, 3), (2, 3), (2,), (1,)])
    assert "(r1) has shape (2,)" in text and "first dimension 1" in text
    text = message("lamb_update_phase2", attrs, [(2, 3), (2, 3), (1,), None])
    assert "(r2) has an unknown shape" in text


def test_group_adagrad_message() -> None:
    text = message("_contrib_group_adagrad_update", NEEDS["_contrib_group_adagrad_update"],
                   [(4, 3), None, None])
    assert "(history) has an unknown shape" in text and "(4, 3)" in text


def test_multi_update_messages() -> None:
    attrs = {"lrs": "(0.1,)", "wds": "(0, 0)", "etas": "(1, 1)", "num_weights": "2"}
    text = message("_multi_adamw_update", attrs, [(2, 3)] * 9, n_out=2)
    assert text.startswith("lrs has 1 value") and "num_weights=2" in text
    attrs["lrs"] = "(0.1, 0.2)"
    text = message("_multi_adamw_update", attrs, [(2, 3)] * 8, n_out=2)
    assert "num_weights=2 needs 9" in text and "rescale_grad" in text
    values: list[Any] = [(2, 3)] * 9
    values[5] = (4,)
    text = message("_multi_adamw_update", attrs, values, n_out=2)
    assert "(grad1) has shape (4,)" in text
    lamb = {"learning_rates": "(0.1,)", "wds": "(0,)", "step_count": "(1, 2)"}
    text = message("_multi_lamb_update", lamb, [(2, 3)] * 4)
    assert text.startswith("step_count has 2 values")
    n = 46
    lamb = {"learning_rates": tup(["0.1"] * n), "wds": tup(["0"] * n),
            "step_count": tup(["1"] * n), "num_tensors": str(n)}
    text = message("_multi_lamb_update", lamb, [(2,)] * (4 * n), n_out=n)
    assert "num_tensors=46" in text and "at most 45" in text
    text = message("_multi_mp_adamw_update",
                   {"lrs": "(0.1,)", "wds": "(0,)", "etas": "(1,)"},
                   ["float16", None, None, None, None, "float16"], "dtype")
    assert "(rescale_grad) has dtype float16" in text


def test_sparse_messages() -> None:
    text = message("_sparse_retain", {}, ["float32", None], "dtype")
    assert "(indices) has an unknown dtype" in text
    text = message("_contrib_getnnz", {}, [(2, 3, 4)])
    assert "(data) has shape (2, 3, 4)" in text and "2-d" in text
    text = message("_contrib_getnnz", {"axis": "2"}, [(2, 3)])
    assert text.startswith("axis=2")
    text = message("_scatter_set_nd", {"shape": "(2, 3)"}, [None, (3,), (1, 2)])
    assert "(rhs) has shape (3,)" in text and "values of shape (2, 3)" in text
    text = message("_scatter_set_nd", {"shape": "(2, -3)"}, [None, None, None])
    assert "shape=(2, -3)" in text


def test_graph_messages() -> None:
    text = message("_contrib_edge_id", {}, [(5, 5), (3,), (0,)])
    assert "(u) has shape (3,)" in text and "(v) (?,)" in text
    text = message("_contrib_dgl_adjacency", {}, ["int32"], "dtype")
    assert "(data) has dtype int32" in text and "int64" in text
    text = message("_contrib_dgl_csr_neighbor_uniform_sample", {"num_args": "2"},
                   [(5, 4), (3,)], n_out=3)
    assert "(csr_matrix) has shape (5, 4)" in text and "square" in text
    text = message("_contrib_dgl_csr_neighbor_uniform_sample",
                   {"num_args": "2", "max_num_vertices": "-3"}, [(5, 5), (3,)], n_out=3)
    assert text.startswith("max_num_vertices=-3")
    text = message("_contrib_dgl_subgraph", {"num_args": "2", "return_mapping": "0"},
                   ["float32", "int32"], "dtype")
    assert "(varray0) has dtype int32" in text
    text = message("_contrib_dgl_graph_compact",
                   {"num_args": "2", "return_mapping": "0", "graph_sizes": "(4,)"},
                   [(3, 3), (5,)])
    assert "(graph0) has shape (3, 3)" in text and "4 vertices" in text
    text = message("_contrib_dgl_graph_compact",
                   {"num_args": "4", "return_mapping": "0", "graph_sizes": "(2,)"},
                   [(3, 3), (3, 3), (5,), (5,)], n_out=2)
    assert text.startswith("graph_sizes=(2,) has 1 value,")
