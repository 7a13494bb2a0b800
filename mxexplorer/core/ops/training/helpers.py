"""What the training rules share: the family name, the op's own input names (MXNet's
optimizer ops name theirs only in the C++ registration), the count checks, and the
attribute steps MXNet's optimizer rules are made of: one shape (or dtype) for a chosen
group of inputs and outputs (``ElemwiseAttr``, written back or only checked), a dtype
forced on an input or output (``TYPE_ASSIGN_CHECK``), an output overwritten, and the
refusal of a size below -1.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, NoReturn, Sequence

from mxexplorer.core.graph import opinfo
from mxexplorer.core.ops.base import (
    Call,
    Conflict,
    DtypeFn,
    MaybeShape,
    Rule,
    RuleError,
    ShapeFn,
    fmt,
    merge,
    table,
)

FAMILY = "training"


def name(c: Call) -> str:
    """The op's canonical name (a file may use an alias such as ``_sparse_adam_update``)."""
    return opinfo.canonical_op(c.op)


def fail(message: str, attr: str | None = None, input: int | None = None) -> NoReturn:
    raise RuleError(message, attr=attr, input=input)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def label(c: Call, i: int, slot: str) -> str:
    """``input 'w' (weight)``: the input's source and ``slot``, the name MXNet gives the
    input (the op table names the inputs of these ops ``arg0``, ``arg1`` ...)."""
    text = c.input_label(i)
    generic = c.slot(i)
    if f"({generic})" in text:
        return text.replace(f"({generic})", f"({slot})")
    return slot


def show(c: Call, value: Any) -> str:
    """A shape or dtype, for messages."""
    if c.kind == "shape":
        return "an unknown shape" if value is None else f"shape {fmt(value)}"
    return "an unknown dtype" if value is None else f"dtype {value}"


def count(c: Call, names: Sequence[str], why: str = "") -> None:
    """MXNet checks the number of inputs (``CHECK_EQ(in_attrs->size(), n)``)."""
    if len(c.ins) != len(names):
        listed = ", ".join(names) if len(names) <= 8 else \
            ", ".join(names[:6]) + f" ... {names[-1]}"
        fail(f"{name(c)} has {plural(len(c.ins), 'input')}, but it takes {len(names)} "
             f"({listed}){why}")


def need(c: Call, i: int, what: str) -> None:
    """The op reads input ``i`` without checking the count (MXNet's ``at()`` throws)."""
    if i >= len(c.ins):
        fail(f"{name(c)} has {plural(len(c.ins), 'input')}, but it reads {what} from "
             f"input {i + 1}")


def meet(kind: str, a: Any, b: Any) -> Any:
    """What two descriptions of one entry both say (``shape_assign``/``type_assign``);
    :class:`Conflict` when they disagree."""
    if kind == "shape":
        return merge(a, b)
    if b is None:
        return a
    if a is None or a == b:
        return b
    raise Conflict()


def unify(c: Call, ins: Sequence[int], outs: Sequence[int], slots: Sequence[str],
          write: bool = True) -> Any:
    """``ElemwiseAttr`` over inputs ``ins`` and outputs ``outs``: the one shape (or
    dtype) they all describe, refused at the first that disagrees with those before it;
    written back to each when ``write`` (else only checked, as the multi-tensor updates
    do on copies).  An output position past ``c.outs`` reads as unknown."""
    value: Any = None
    first = -1
    group = ", ".join(slots[i] for i in ins)
    for i in ins:
        try:
            value = meet(c.kind, value, c.ins[i])
        except Conflict:
            before = label(c, first, slots[first]) + " has" if c.ins[first] == value \
                else "the inputs before it have"
            fail(f"{label(c, i, slots[i])} has {show(c, c.ins[i])}, but {before} "
                 f"{show(c, value)}: {group} of {name(c)} must have one "
                 f"{'shape' if c.kind == 'shape' else 'dtype'}", input=i)
        if c.ins[i] is not None and first < 0:
            first = i
    for j in outs:
        old = c.outs[j] if j < len(c.outs) else None
        try:
            value = meet(c.kind, value, old)
        except Conflict:
            what = "the output" if len(c.outs) == 1 else f"output {j}"
            raise RuleError(f"{group} of {name(c)} have {show(c, value)}, but the layers "
                            f"that read {what} need {show(c, old)}", output=j,
                            provided=value, expected=old) from None
    if write and value is not None:
        for i in ins:
            c.ins[i] = meet(c.kind, c.ins[i], value)
        for j in outs:
            if j < len(c.outs):
                c.outs[j] = meet(c.kind, c.outs[j], value)
    return value


def force_in(c: Call, i: int, dtype: str, slot: str, why: str) -> None:
    """``TYPE_ASSIGN_CHECK`` on input ``i``: it is ``dtype`` (refused when it is known
    otherwise)."""
    if c.ins[i] is not None and c.ins[i] != dtype:
        fail(f"{label(c, i, slot)} has dtype {c.ins[i]}, but {name(c)} needs {dtype} "
             f"{why}", input=i)
    c.ins[i] = dtype


def put(c: Call, j: int, value: Any, why: str = "") -> None:
    """``SHAPE_ASSIGN_CHECK``/``TYPE_ASSIGN_CHECK`` on output ``j`` (when the engine's
    node has it): merged with what is known, a disagreement refused."""
    if j < len(c.outs):
        c.set_out(j, value, why)


def overwrite(c: Call, j: int, value: Any) -> None:
    """The op writes output ``j`` without looking at what was known of it (MXNet's
    ``(*out_attrs)[j] = ...``); the layers that read it then check it."""
    if j < len(c.outs):
        c.outs[j] = value


def no_negative(c: Call, blame: str, attr: str | None = None) -> None:
    """MXNet refuses a shape with a size below -1 wherever a rule stored one (-1 itself
    reads as unknown); ``blame`` says what made it."""
    for i, s in enumerate(c.ins):
        if s is not None and any(d < -1 for d in s):
            fail(f"{c.input_label(i)} would have shape "
                 f"({', '.join(str(d) for d in s)}), with a negative size: {blame}",
                 attr=attr, input=i)
    for j, s in enumerate(c.outs):
        if s is not None and any(d < -1 for d in s):
            what = "the output" if len(c.outs) == 1 else f"output {j}"
            fail(f"{what} would have shape ({', '.join(str(d) for d in s)}), with a "
                 f"negative size: {blame}", attr=attr)


def ndim(shape: MaybeShape) -> int:
    """MXNet's ``ndim()``: -1 for an unknown rank."""
    return -1 if shape is None else len(shape)


def rank(c: Call, i: int, n: int, slot: str, what: str) -> None:
    """``CHECK_EQ(in_attrs->at(i).ndim(), n)``: input ``i`` has rank ``n`` (an unknown
    rank is refused, as MXNet's check compares -1)."""
    s = c.ins[i]
    if ndim(s) != n:
        has = "an unknown shape" if s is None else f"shape {fmt(s)}"
        fail(f"{label(c, i, slot)} has {has}, but {name(c)} needs {what} (a known "
             f"{n}-d shape) when it is reached", input=i)


def rules(names: Sequence[str], shape: ShapeFn, dtype: DtypeFn) -> dict[str, Rule]:
    return table(FAMILY, names, shape, dtype)
