"""Rules for the optimizer updates that take one weight (and ``cast_storage``), as MXNet
1.9.1 infers their shapes and dtypes.

Most are ``ElemwiseShape``/``ElemwiseType``: every input and the output of one shape and
dtype, in both directions (``sgd_update``, ``sgd_mom_update``, ``nag_mom_update``,
``signsgd_update``, ``signum_update``, ``rmsprop_update``, ``rmspropalex_update``,
``adam_update``, ``ftml_update``, ``ftrl_update``, ``_sparse_adagrad_update``,
``lamb_update_phase1``, ``cast_storage``, and ``multi_lars``, which takes the learning
rates, the sums of squares and the weight decays of many weights).  The
mixed-precision ones share the shape of every input but keep their state in float32:
``mp_sgd_update`` (weight, grad and output of one dtype; weight32 float32),
``mp_sgd_mom_update`` and ``mp_nag_mom_update`` (weight, grad and output of one dtype;
mom and weight32 float32), ``mp_lamb_update_phase1`` (weight and grad float16, the rest
and the output float32).  ``_adamw_update`` shares one shape among its first four inputs
and the output (``rescale_grad`` is free, float32); ``_mp_adamw_update`` only between
weight, grad and the output (mean, var, weight32 and rescale_grad are free in shape,
float32).  ``lamb_update_phase2`` and ``mp_lamb_update_phase2`` need g (and weight32)
exactly as the weight, dimension by dimension (unknown where the weight's is), and r1, r2
of a known shape starting with 1; the output is the weight's shape, nothing goes back.
``_contrib_group_adagrad_update`` shares weight, grad and output; once the output is
known it reads the history's first dimension, so an unknown history is refused then.
Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Sequence

from mxexplorer.core.ops.base import Call, DtypeFn, Rule, ShapeFn, fmt, known
from mxexplorer.core.ops.training.helpers import (
    count,
    fail,
    force_in,
    label,
    name,
    ndim,
    put,
    rules,
    show,
    unify,
)

#: the inputs of each op, as MXNet's registration names them
SLOTS: dict[str, tuple[str, ...]] = {
    "sgd_update": ("weight", "grad"),
    "signsgd_update": ("weight", "grad"),
    "sgd_mom_update": ("weight", "grad", "mom"),
    "nag_mom_update": ("weight", "grad", "mom"),
    "signum_update": ("weight", "grad", "mom"),
    "rmsprop_update": ("weight", "grad", "n"),
    "rmspropalex_update": ("weight", "grad", "n", "g", "delta"),
    "mp_sgd_update": ("weight", "grad", "weight32"),
    "multi_lars": ("lrs", "weights_sum_sq", "grads_sum_sq", "wds"),
    "adam_update": ("weight", "grad", "mean", "var"),
    "ftml_update": ("weight", "grad", "d", "v", "z"),
    "ftrl_update": ("weight", "grad", "z", "n"),
    "_sparse_adagrad_update": ("weight", "grad", "history"),
    "lamb_update_phase1": ("weight", "grad", "mean", "var"),
    "mp_lamb_update_phase1": ("weight", "grad", "mean", "var", "weight32"),
    "mp_nag_mom_update": ("weight", "grad", "mom", "weight32"),
    "mp_sgd_mom_update": ("weight", "grad", "mom", "weight32"),
    "_adamw_update": ("weight", "grad", "mean", "var", "rescale_grad"),
    "_mp_adamw_update": ("weight", "grad", "mean", "var", "weight32", "rescale_grad"),
    "lamb_update_phase2": ("weight", "g", "r1", "r2"),
    "mp_lamb_update_phase2": ("weight", "g", "r1", "r2", "weight32"),
    "_contrib_group_adagrad_update": ("weight", "grad", "history"),
    "cast_storage": ("data",),
}


def _slots(c: Call) -> tuple[str, ...]:
    return SLOTS[name(c)]


# ======================================================================== shapes
def shared_shape(shared: int | None = None) -> ShapeFn:
    """``ElemwiseShape<n, 1>`` (``shared`` None: every input) or ``MPUpdateInferShape``
    (the first ``shared`` inputs): those inputs and the output have one shape."""
    def rule(c: Call) -> None:
        slots = _slots(c)
        count(c, slots)
        n = len(slots) if shared is None else shared
        unify(c, range(n), [0], slots)
    rule.__name__ = rule.__qualname__ = f"shared_shape_{shared or 'all'}"
    return rule


def lamb_phase2_shape(c: Call) -> None:
    """``LambUpdatePhaseTwoShape`` and its mixed-precision twin: g (and weight32) equal
    to the weight dimension by dimension (their ranks compared even when unknown), r1
    and r2 of a known shape with first dimension 1; the output is the weight's shape."""
    slots = _slots(c)
    count(c, slots)
    w = c.ins[0]
    same = [1] + ([4] if len(slots) == 5 else [])
    for k in same:
        if ndim(c.ins[k]) != ndim(w):
            fail(f"{label(c, k, slots[k])} has {show(c, c.ins[k])}, but "
                 f"{label(c, 0, 'weight')} has {show(c, w)}: {name(c)} needs "
                 f"{slots[k]} of the weight's rank", input=k)
    if w is not None:
        for d in range(len(w)):
            for k in same:
                other = c.ins[k]
                assert other is not None
                if other[d] != w[d]:
                    fail(f"{label(c, k, slots[k])} has shape {fmt(other)}, but "
                         f"{label(c, 0, 'weight')} has {fmt(w)}: {name(c)} needs "
                         f"{slots[k]} equal to the weight in every dimension (one unknown "
                         f"where the other is)", input=k)
    for k in (2, 3):
        s = c.ins[k]
        if s is None or len(s) == 0:
            fail(f"{label(c, k, slots[k])} has {show(c, s)}, but {name(c)} reads its "
                 f"first dimension (which must be 1) when it is reached: give "
                 f"{slots[k]} a shape such as (1,)", input=k)
        if s[0] != 1:
            fail(f"{label(c, k, slots[k])} has shape {fmt(s)}, but {name(c)} needs "
                 f"{slots[k]} (a norm) with first dimension 1", input=k)
    if w is not None:
        put(c, 0, w, "(the weight's shape)")


def group_adagrad_shape(c: Call) -> None:
    """``GroupAdagradShape``: weight, grad and output of one shape; once that shape is
    known MXNet reads the first dimension of the weight and the history."""
    slots = _slots(c)
    count(c, slots)
    unify(c, (0, 1), [0], slots)
    out = c.outs[0]
    if known(out):
        assert out is not None
        if len(out) == 0:
            fail(f"{label(c, 0, 'weight')} is a scalar, but {name(c)} updates rows: give "
                 f"the weight at least one dimension", input=0)
        h = c.ins[2]
        if h is None or len(h) == 0:
            fail(f"{label(c, 2, 'history')} has {show(c, h)}, but {name(c)} reads its "
                 f"first dimension (one row per weight row) once the weight's shape "
                 f"{fmt(out)} is known: give the history a shape", input=2)


# ======================================================================== dtypes
def shared_dtype(shared: int | None = None, fp32: Sequence[int] = ()) -> DtypeFn:
    """``ElemwiseType<n, 1>`` (``shared`` None), ``MP_InferType`` and
    ``MPUpdateInferType``: inputs ``fp32`` float32, the first ``shared`` inputs and the
    output of one dtype."""
    def rule(c: Call) -> None:
        slots = _slots(c)
        count(c, slots)
        for i in fp32:
            force_in(c, i, "float32", slots[i], "(the optimizer keeps it in single "
                                                "precision)")
        n = len(slots) if shared is None else shared
        unify(c, range(n), [0], slots)
    rule.__name__ = rule.__qualname__ = f"shared_dtype_{shared or 'all'}"
    return rule


def mp_lamb_phase1_dtype(c: Call) -> None:
    """``MPLambPhaseOneType``: weight and grad float16, mean, var and weight32 float32,
    the output float32."""
    slots = _slots(c)
    count(c, slots)
    for i in (0, 1):
        force_in(c, i, "float16", slots[i], "(the half-precision weight and gradient)")
    for i in (2, 3, 4):
        force_in(c, i, "float32", slots[i], "(the single-precision state)")
    put(c, 0, "float32", "(the single-precision update)")


ALL_SHAPE = shared_shape()
ALL_DTYPE = shared_dtype()
MP_DTYPE = shared_dtype(2, (2, 3))

RULES: dict[str, Rule] = {
    **rules(["sgd_update", "signsgd_update", "sgd_mom_update", "nag_mom_update",
             "signum_update", "rmsprop_update", "rmspropalex_update", "adam_update",
             "ftml_update", "ftrl_update", "_sparse_adagrad_update", "lamb_update_phase1",
             "cast_storage", "multi_lars"], ALL_SHAPE, ALL_DTYPE),
    **rules(["mp_sgd_update"], ALL_SHAPE, shared_dtype(2, (2,))),
    **rules(["mp_sgd_mom_update", "mp_nag_mom_update"], ALL_SHAPE, MP_DTYPE),
    **rules(["mp_lamb_update_phase1"], ALL_SHAPE, mp_lamb_phase1_dtype),
    **rules(["_adamw_update"], shared_shape(4), shared_dtype(4, (4,))),
    **rules(["_mp_adamw_update"], shared_shape(2), shared_dtype(2, (2, 3, 4, 5))),
    **rules(["lamb_update_phase2"], lamb_phase2_shape, ALL_DTYPE),
    **rules(["mp_lamb_update_phase2"], lamb_phase2_shape, shared_dtype(1, (1, 2, 3, 4))),
    **rules(["_contrib_group_adagrad_update"], group_adagrad_shape, ALL_DTYPE),
}
