"""The pieces the element-wise rules share: the family name, the input and output count
checks, names and shapes in messages, replacing outputs as MXNet does, and the
element-wise rules themselves (``ElemwiseShape<n, 1>``, ``ElemwiseType<n, 1>``: every
input and output of one shape, and of one dtype).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops.base import (
    Call,
    Conflict,
    DtypeFn,
    MaybeShape,
    Rule,
    ShapeFn,
    elemwise_type,
    fmt,
    merge,
    table,
)

FAMILY = "elementwise"


# =================================================================== small helpers
def _name(c: Call) -> str:
    """The op's canonical name (a file may use an alias)."""
    return opinfo.canonical_op(c.op)


def _count(c: Call, n: int, names: str, why: str = "") -> None:
    """MXNet checks the input count: ``n`` inputs named ``names`` (``why``: the attribute
    that decides it)."""
    if len(c.ins) != n:
        got = len(c.ins)
        c.fail(f"{_name(c)} has {got} input{'s' if got != 1 else ''}, but it takes {n} "
               f"({names}){' with ' + why if why else ''}")


def _input(c: Call, i: int, slot: str) -> str:
    """``input 'x' (slot)``; ``slot`` names an input the op table does not (``softmax``'s
    length, ``CTCLoss``'s lengths)."""
    label = c.input_label(i)
    generic = c.slot(i)
    if generic.startswith("arg") or generic.startswith("input "):
        label = label.replace(f"({generic})", f"({slot})") if f"({generic})" in label \
            else slot
    return label


def _outs_count(c: Call, n: int, attr: str) -> None:
    if len(c.outs) != n:
        c.fail(f"{_name(c)} has {len(c.outs)} outputs, but {attr}={n} needs {n}", attr=attr)


def _ndim(shape: MaybeShape) -> int:
    """MXNet's ``ndim()``: -1 for an unknown rank."""
    return -1 if shape is None else len(shape)


def _dim(d: int) -> str:
    return "?" if d < 0 else str(d)


def _rank_text(shape: MaybeShape) -> str:
    return "an unknown shape" if shape is None else f"shape {fmt(shape)}"


def _replace_outs(c: Call, value: Any) -> None:
    """The op clears its outputs and writes ``value`` to each (no check against what was
    known of them, as MXNet's ``out_shape->clear()``)."""
    for i in range(len(c.outs)):
        c.outs[i] = value


def _merge_all(c: Call) -> MaybeShape:
    """``ElemwiseShape``: the one shape every input and output describes; refuses the first
    input or output that disagrees with those before it."""
    shape: MaybeShape = None
    first = -1
    for i, s in enumerate(c.ins):
        try:
            shape = merge(shape, s)
        except Conflict:
            before = (f"{c.input_label(first)} has" if shape == c.ins[first]
                      else "the inputs before it have")
            c.fail(f"{c.input_label(i)} has shape {fmt(s)}, but {before} shape {fmt(shape)}: "
                   f"the inputs of {_name(c)} must have one shape", input=i)
        if s is not None and first < 0:
            first = i
    for i, s in enumerate(c.outs):
        try:
            shape = merge(shape, s)
        except Conflict:
            name = "the output" if len(c.outs) == 1 else f"output {i}"
            c.fail(f"the inputs of {_name(c)} have shape {fmt(shape)}, but the layers that "
                   f"read {name} need {fmt(s)}")
    return shape


def _fill_all(c: Call, shape: MaybeShape) -> None:
    if shape is None:
        return
    for i in range(len(c.ins)):
        c.set_in(i, shape)
    for i in range(len(c.outs)):
        c.set_out(i, shape)


# ==================================================== element-wise shape and dtype
def same_shape(c: Call) -> None:
    """Every input and output has one shape, known from any of them (``ElemwiseShape``,
    ``add_n``'s ``ElementWiseSumShape``): no input count checked."""
    _fill_all(c, _merge_all(c))


def _slots(n: int) -> str:
    return {1: "data", 2: "lhs, rhs"}.get(n, f"{n} arrays")


def elemwise_shape(n: int) -> ShapeFn:
    """``ElemwiseShape<n, 1>``: ``n`` inputs, all of one shape with the output."""
    def rule(c: Call) -> None:
        _count(c, n, _slots(n))
        same_shape(c)
    rule.__name__ = rule.__qualname__ = f"elemwise_shape_{n}"
    rule.__doc__ = f"``ElemwiseShape<{n}, 1>``: {n} input(s) of the output's shape."
    return rule


def elemwise_dtype(n: int) -> DtypeFn:
    """``ElemwiseType<n, 1>``: ``n`` inputs, all of one dtype with the output."""
    def rule(c: Call) -> None:
        _count(c, n, _slots(n))
        elemwise_type(c)
    rule.__name__ = rule.__qualname__ = f"elemwise_dtype_{n}"
    rule.__doc__ = f"``ElemwiseType<{n}, 1>``: {n} input(s) of the output's dtype."
    return rule


UNARY_SHAPE = elemwise_shape(1)
UNARY_TYPE = elemwise_dtype(1)
BINARY_SHAPE = elemwise_shape(2)
BINARY_TYPE = elemwise_dtype(2)


def _known_input_type(c: Call, i: int = 0) -> str:
    t = c.ins[i]
    if t is None:
        c.fail(f"{c.input_label(i)} has no known dtype, but {_name(c)} needs it: give "
               f"the input a dtype", input=i)
    assert t is not None
    return str(t)


# ========================================================================= tables
def _rules(names: Sequence[str], shape: ShapeFn, dtype: DtypeFn) -> dict[str, Rule]:
    return table(FAMILY, names, shape, dtype)
