"""Rules for the optimizer updates that take many weights at once, the finiteness checks
of mixed-precision training and the helpers of LARS, as MXNet 1.9.1 infers their shapes
and dtypes.

Each multi-tensor update takes ``num_weights`` (``num_tensors``) groups of inputs, then
a tail: ``_multi_adamw_update``/``_multi_mp_adamw_update`` groups of (weight, grad, mean,
var[, weight32]) and ``rescale_grad``; ``_multi_lamb_update``/``_multi_mp_lamb_update``
the same groups (at most 45) and nothing after; ``multi_sgd_update``,
``multi_sgd_mom_update``, ``multi_mp_sgd_update`` and ``multi_mp_sgd_mom_update`` groups
of (weight, grad[, mom][, weight32]) and nothing after; the ``preloaded_multi_*sgd*``
twins the same groups, then ``lrs`` and ``wds`` as inputs.  Their shape rules check the
input count and that ``lrs``/``wds``/``etas`` (``learning_rates``/``wds``/``step_count``)
have one value per weight (the preloaded ones: that the ``lrs`` and ``wds`` inputs have a
known shape of that many elements), then check each group and its output for one shape
on a copy: nothing is written, so these ops infer no shape at all, and the check stops
after the first group whose shape is not fully known (MXNet's ``all_inferred && ...``).
``multi_sgd_update`` and the other plain non-preloaded ones give every input and output
one dtype; the mixed-precision and preloaded ones check the weight and grad (the whole
group, for the plain preloaded ones) of each group with its output on a copy, as the
shapes, and set the mixed-precision state (mean, var, mom, weight32) and the tail
(``rescale_grad``, ``lrs``, ``wds``) to float32.

``all_finite`` and ``multi_all_finite`` write a ``(1,)`` float32 output whatever was
known of it and leave their inputs alone.  ``multi_sum_sq`` takes ``num_arrays`` arrays
of any shape and gives ``(num_arrays,)`` float32 (the dtype written over what was known);
the first array's dtype must be known when it is reached, the others take it.
``reset_arrays`` (no output) only checks its input count.

The node's outputs are counted by the op table; an output the engine's node lacks is
read as unknown.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any

from mxexplorer.core.ops.base import Call, Rule, fmt, known, size
from mxexplorer.core.ops.training.helpers import (
    fail,
    force_in,
    label,
    name,
    overwrite,
    plural,
    put,
    rules,
    show,
    unify,
)

_SGD = ("weight", "grad")
_SGD_MOM = ("weight", "grad", "mom")
_MP_SGD = ("weight", "grad", "weight32")
_MP_SGD_MOM = ("weight", "grad", "mom", "weight32")
#: each group's inputs
_GROUP = {
    "_multi_adamw_update": ("weight", "grad", "mean", "var"),
    "_multi_mp_adamw_update": ("weight", "grad", "mean", "var", "weight32"),
    "_multi_lamb_update": ("weight", "grad", "mean", "var"),
    "_multi_mp_lamb_update": ("weight", "grad", "mean", "var", "weight32"),
    "multi_sgd_update": _SGD,
    "multi_sgd_mom_update": _SGD_MOM,
    "multi_mp_sgd_update": _MP_SGD,
    "multi_mp_sgd_mom_update": _MP_SGD_MOM,
    "preloaded_multi_sgd_update": _SGD,
    "preloaded_multi_sgd_mom_update": _SGD_MOM,
    "preloaded_multi_mp_sgd_update": _MP_SGD,
    "preloaded_multi_mp_sgd_mom_update": _MP_SGD_MOM,
}
#: the ops counted by ``num_tensors`` (the others by ``num_weights``)
_LAMB = ("_multi_lamb_update", "_multi_mp_lamb_update")
#: the inputs after the groups
_TAIL = {
    "_multi_adamw_update": ("rescale_grad",),
    "_multi_mp_adamw_update": ("rescale_grad",),
    **{op: ("lrs", "wds") for op in _GROUP if op.startswith("preloaded_")},
}
#: the attributes that must have one value per weight
_PER_WEIGHT = {
    "_multi_adamw_update": (("lrs", "learning rate"), ("wds", "weight decay"),
                            ("etas", "learning rate multiplier")),
    "_multi_lamb_update": (("learning_rates", "learning rate"), ("wds", "weight decay"),
                           ("step_count", "step count")),
    "multi_sgd_update": (("lrs", "learning rate"), ("wds", "weight decay")),
}
_PER_WEIGHT["_multi_mp_adamw_update"] = _PER_WEIGHT["_multi_adamw_update"]
_PER_WEIGHT["_multi_mp_lamb_update"] = _PER_WEIGHT["_multi_lamb_update"]
for _op in ("multi_sgd_mom_update", "multi_mp_sgd_update", "multi_mp_sgd_mom_update"):
    _PER_WEIGHT[_op] = _PER_WEIGHT["multi_sgd_update"]
#: the group positions of the mixed-precision state (float32), in MXNet's order of
#: assignment (one tuple per pass over the groups)
_FP32 = {
    "_multi_mp_adamw_update": ((2, 3), (4,)),
    "_multi_mp_lamb_update": ((2, 3, 4),),
    "multi_mp_sgd_update": ((2,),),
    "multi_mp_sgd_mom_update": ((3, 2),),
    "preloaded_multi_mp_sgd_update": ((2,),),
    "preloaded_multi_mp_sgd_mom_update": ((3, 2),),
}


def _key(op: str) -> str:
    return "num_tensors" if op in _LAMB else "num_weights"


def _names(c: Call) -> list[str]:
    """``weight0, grad0, mean0, var0, weight1 ... rescale_grad`` (the SGD ones
    ``weight_0, grad_0 ... lrs, wds``, as MXNet names them), one per input."""
    op = name(c)
    group = _GROUP[op]
    tail = _TAIL.get(op, ())
    sep = "_" if "sgd" in op else ""
    start = len(group) * int(c.p[_key(op)])
    out = []
    for p in range(len(c.ins)):
        w, j = divmod(p, len(group))
        out.append(tail[p - start] if 0 <= p - start < len(tail) else f"{group[j]}{sep}{w}")
    return out


def _count(c: Call) -> int:
    """The input count MXNet checks: ``stride * n`` and the tail (``rescale_grad``;
    ``lrs``, ``wds``)."""
    op = name(c)
    key = _key(op)
    n = int(c.p[key])
    group = _GROUP[op]
    tail = _TAIL.get(op, ())
    if n < 0:
        fail(f"{key}={n}, but {op} needs a count of weights (0 or more)", attr=key)
    want = len(group) * n + len(tail)
    if len(c.ins) != want:
        then = f", then {' and '.join(tail)}" if tail else ""
        fail(f"{op} has {plural(len(c.ins), 'input')}, but {key}={n} needs {want} "
             f"({', '.join(group)} for each weight{then})", attr=key)
    return n


def _length(value: Any) -> int:
    """A tuple attribute's length as MXNet sees it (``None``: -1)."""
    return -1 if value is None else len(value)


def _check_groups(c: Call, n: int, width: int) -> None:
    """Each weight's first ``width`` inputs and its output checked for one shape (or
    dtype) on a copy, stopping after the first group not fully known."""
    op = name(c)
    stride = len(_GROUP[op])
    names = _names(c)
    for i in range(n):
        value = unify(c, [i * stride + j for j in range(width)], [i], names, write=False)
        if not (known(value) if c.kind == "shape" else value is not None):
            return


def _preloaded(c: Call, n: int) -> None:
    """The ``lrs`` and ``wds`` inputs of a preloaded update: a known shape of ``n``
    elements each (MXNet reads their sizes when the op is reached)."""
    op = name(c)
    start = len(_GROUP[op]) * n
    for k, (slot, what) in enumerate((("lrs", "learning rate"), ("wds", "weight decay"))):
        s = c.ins[start + k]
        if not known(s):
            fail(f"{label(c, start + k, slot)} has {show(c, s)}, but {op} counts its "
                 f"values when it is reached: give {slot} a known shape of num_weights={n} "
                 f"values", input=start + k)
        assert s is not None
        if size(s) != n:
            fail(f"{label(c, start + k, slot)} has shape {fmt(s)}, {plural(size(s), 'value')}"
                 f", but num_weights={n} needs one {what} per weight: give {n}",
                 input=start + k)


# ======================================================================== shapes
def multi_shape(c: Call) -> None:
    """``MP_MultiAdamW_InferShape``, ``MultiLAMBInferShape``, ``MultiSGDShape`` and
    ``PreloadedMultiSGDShape``: counts and per-weight attributes (or inputs) checked,
    each group checked on a copy; nothing inferred."""
    op = name(c)
    key = _key(op)
    n = _count(c)
    if op in _LAMB and n > 45:
        fail(f"num_tensors={n}, but {op} updates at most 45 tensors at once: split the "
             f"update", attr="num_tensors")
    for attr, what in _PER_WEIGHT.get(op, ()):
        got = _length(c.p[attr])
        if got != n:
            has = "no values" if got < 0 else plural(got, "value")
            fail(f"{attr} has {has}, but {key}={n} needs one {what} per weight: give "
                 f"{n}", attr=attr)
    if op.startswith("preloaded_"):
        _preloaded(c, n)
    _check_groups(c, n, len(_GROUP[op]))


# ======================================================================== dtypes
def all_one_dtype(c: Call) -> None:
    """``ElemwiseType<-1, -1>``: every input and output of one dtype (no count check)."""
    unify(c, range(len(c.ins)), range(len(c.outs)), _names(c))


def multi_mp_dtype(c: Call) -> None:
    """``MP_MultiAdamW_InferType``, ``MPMultiLAMBInferType``, ``MP_MultiSGD_InferType``
    and ``MP_PreloadedMultiSGD_InferType``: each group's weight and grad (a plain
    preloaded update's whole group) checked with its output for one dtype on a copy;
    the mixed-precision state (mean, var, mom, weight32) and the tail (rescale_grad,
    lrs, wds) float32."""
    op = name(c)
    n = _count(c)
    phases = _FP32.get(op, ())
    _check_groups(c, n, 2 if phases else len(_GROUP[op]))
    names = _names(c)
    stride = len(_GROUP[op])
    why = "(the optimizer keeps it in single precision)"
    for phase in phases:
        for i in range(n):
            for j in phase:
                force_in(c, stride * i + j, "float32", names[stride * i + j], why)
    for k in range(len(_TAIL.get(op, ()))):
        force_in(c, stride * n + k, "float32", names[stride * n + k], why)


# ==================================================================== all_finite
def finite_shape(c: Call) -> None:
    """``all_finite``/``multi_all_finite``: the output is ``(1,)``, written over what was
    known; the inputs are not looked at."""
    overwrite(c, 0, (1,))


def finite_dtype(c: Call) -> None:
    """The output is float32, written over what was known; the inputs are free."""
    overwrite(c, 0, "float32")


# ================================================================== multi_sum_sq
def _arrays(c: Call) -> int:
    """``CHECK_EQ(in_attrs->size(), num_arrays)``."""
    n = int(c.p["num_arrays"])
    if n < 0 or len(c.ins) != n:
        fail(f"{name(c)} has {plural(len(c.ins), 'input')}, but num_arrays={n}: give one "
             f"array per input (num_arrays={len(c.ins)})", attr="num_arrays")
    return n


def sum_sq_shape(c: Call) -> None:
    """``MultiSumSqShape``: the output is ``(num_arrays,)``; the arrays are free."""
    n = int(c.p["num_arrays"])
    if n >= 0:
        put(c, 0, (n,), "(one sum of squares per array)")
    _arrays(c)


def sum_sq_dtype(c: Call) -> None:
    """``MultiSumSqType``: the first array's dtype known when the op is reached, the
    others of that dtype (unknown ones take it); the output float32, written over what
    was known."""
    n = _arrays(c)
    first = c.ins[0] if n else None
    if first is None:
        fail(f"{label(c, 0, 'array_0') if n else 'the first array'} has an unknown dtype, "
             f"but {name(c)} takes every array's dtype from the first one when it is "
             f"reached: give the first array a dtype", input=0 if n else None)
    for i in range(1, n):
        if c.ins[i] is None:
            c.ins[i] = first
        elif c.ins[i] != first:
            fail(f"{label(c, i, f'array_{i}')} has dtype {c.ins[i]}, but the first array "
                 f"has {first}: every array of {name(c)} must have one dtype", input=i)
    overwrite(c, 0, "float32")


# ================================================================== reset_arrays
def reset_attr(c: Call) -> None:
    """``ResetArraysShape``/``ResetArraysType``: the input count only (no output)."""
    _arrays(c)


RULES: dict[str, Rule] = {
    **rules(["_multi_adamw_update", "_multi_lamb_update", "multi_sgd_update",
             "multi_sgd_mom_update"], multi_shape, all_one_dtype),
    **rules(["_multi_mp_adamw_update", "_multi_mp_lamb_update", "multi_mp_sgd_update",
             "multi_mp_sgd_mom_update", "preloaded_multi_sgd_update",
             "preloaded_multi_sgd_mom_update", "preloaded_multi_mp_sgd_update",
             "preloaded_multi_mp_sgd_mom_update"], multi_shape, multi_mp_dtype),
    **rules(["all_finite", "multi_all_finite"], finite_shape, finite_dtype),
    **rules(["multi_sum_sq"], sum_sq_shape, sum_sq_dtype),
    **rules(["reset_arrays"], reset_attr, reset_attr),
}
