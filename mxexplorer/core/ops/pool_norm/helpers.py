"""The pieces the pool_norm rules share: the family name, C arithmetic (truncating
division, 32- and 16-bit sizes, float32 products), attributes and shapes in words, the
input count check, filling inputs and outputs as MXNet overwrites them (unknown sizes
counted as -1), the rank and axis checks, the ``pooled_size`` pair check and the dtype
rule of the ops whose data's type must be known (``data_type``).  Must not import MXNet
or Qt.
"""
from __future__ import annotations

import math
import struct
from typing import Any, Sequence

from mxexplorer.core.ops.base import Call, MaybeShape, Shape, fmt

FAMILY = "pool_norm"


# ------------------------------------------------------------------ C arithmetic
def _cdiv(a: int, b: int) -> int:
    """C's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _cmod(a: int, b: int) -> int:
    """C's remainder (takes the dividend's sign)."""
    return a - _cdiv(a, b) * b


def _i32(x: int) -> int:
    """A value stored into a C ``int``."""
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def _i16(x: int) -> int:
    """A value stored into an ``int16_t`` (BilinearResize2D keeps its sizes in one)."""
    x &= 0xFFFF
    return x - (1 << 16) if x >= 1 << 15 else x


def _f32(x: float) -> float:
    """The nearest float32 (MXNet computes these sizes in single precision)."""
    try:
        return float(struct.unpack("f", struct.pack("f", x))[0])
    except OverflowError:
        return math.copysign(math.inf, x)


def _trunc(x: float) -> int:
    """C's conversion of a float to a 32-bit integer (toward zero); what x86 gives for a
    value out of range (and MXNet keeps): -2**31."""
    if math.isnan(x) or not -2.0**31 < x < 2.0**31:
        return -(1 << 31)
    return int(x)


# ---------------------------------------------------------------------- words
def _dim(d: int) -> str:
    return "?" if d < 0 else str(d)


def _tup(values: Sequence[Any]) -> str:
    """An attribute tuple as written: ``(3, 3)``, ``(3,)``."""
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def _raw(shape: Sequence[int]) -> str:
    """A shape with its sizes as MXNet computed them (-1 for unknown, below that wrong)."""
    return _tup(shape)


def _shape_text(shape: MaybeShape) -> str:
    return "an unknown shape" if shape is None else f"shape {fmt(shape)}"


def _label(c: Call, i: int, slot: str) -> str:
    """``input 'x' (slot)``; ``slot`` names an input the op table does not name."""
    label = c.input_label(i)
    generic = c.slot(i)
    if generic.startswith(("arg", "input ")):
        label = label.replace(f"({generic})", f"({slot})") if f"({generic})" in label \
            else slot
    return label


def _count(c: Call, n: int, names: str, why: str = "") -> None:
    """MXNet checks the number of inputs."""
    if len(c.ins) != n:
        got = len(c.ins)
        c.fail(f"{c.op} has {got} input{'s' if got != 1 else ''}, but it takes {n} "
               f"({names}){' with ' + why if why else ''}")


# -------------------------------------------------------------------- filling
def _sizes(c: Call, shape: Sequence[int], what: str, why: str = "",
           attr: str | None = None) -> None:
    """MXNet refuses a size below -1 wherever it ends up."""
    if any(d < -1 for d in shape):
        c.fail(f"{what} would have the sizes {_raw(shape)}, and a size cannot be "
               f"negative{': ' + why if why else ''}", attr=attr)


_FROM_UNKNOWN = ("MXNet 1.9.1 computes it from the data's unknown sizes as if they were -1; "
                 "give the data's full shape")


def _put(c: Call, i: int, shape: Sequence[int], why: str = _FROM_UNKNOWN,
         attr: str | None = None) -> None:
    """Output ``i`` is ``shape``, replacing what was known of it (MXNet's
    ``out_shape->clear()``); ``attr``: the attribute to blame for a negative size."""
    name = "the output" if i == 0 else f"hidden output {i}"
    _sizes(c, shape, name, why, attr)
    if i < len(c.outs):
        c.outs[i] = tuple(shape)


def _put_in(c: Call, i: int, shape: Sequence[int], why: str = _FROM_UNKNOWN,
            attr: str | None = None) -> None:
    """Input ``i`` is ``shape``, replacing what was known of it (no check: MXNet assigns)."""
    _sizes(c, shape, c.input_label(i), why, attr)
    if i < len(c.ins):
        c.ins[i] = tuple(shape)


def _need_rank(c: Call, i: int, ranks: Sequence[int], slot: str, layout: str) -> Shape:
    """Input ``i`` must have one of ``ranks`` dimensions (an unknown shape is refused, as
    MXNet's check compares its rank -1)."""
    s: MaybeShape = c.ins[i]
    if s is None or len(s) not in ranks:
        want = " or ".join(str(r) for r in ranks)
        c.fail(f"{_label(c, i, slot)} has {_shape_text(s)}, but {c.op} needs it {want}-D "
               f"{layout}" + ("; give it a shape" if s is None else ""), input=i)
    assert s is not None
    return s


def _need_axis(c: Call, i: int, axis: int, slot: str, why: str) -> Shape:
    """MXNet reads axis ``axis`` of input ``i`` (its bounds-checked ``TShape[]``): the
    shape must be known and have that axis."""
    s: MaybeShape = c.ins[i]
    if s is None or axis >= len(s):
        c.fail(f"{_label(c, i, slot)} has {_shape_text(s)}, but {c.op} reads its axis "
               f"{axis} {why}: give it " + ("a shape" if s is None else
                                             f"at least {axis + 1} dimensions"), input=i)
    assert s is not None
    return s


def _nonzero(c: Call, attr: str, value: tuple[int, ...] | None) -> None:
    """The parser's ``enforce_nonzero``."""
    if value and any(v == 0 for v in value):
        c.fail(f"{attr} {_tup(value)} has a 0: every value must be nonzero", attr=attr)


def _pair(c: Call, attr: str = "pooled_size") -> tuple[int, int]:
    """The parser's ``set_expect_ndim(2).enforce_nonzero()``."""
    value = c.p[attr]
    if value is None or len(value) != 2:
        c.fail(f"{attr} {'None' if value is None else _tup(value)} must have two values "
               "(height, width)", attr=attr)
    _nonzero(c, attr, value)
    return int(value[0]), int(value[1])


# ====================================================================== types
def _data_type(c: Call) -> str:
    dtype = c.ins[0] if c.ins else None
    if dtype is None:
        c.fail(f"the type of {c.input_label(0) if c.ins else 'the data'} is not known "
               f"here, and {c.op} needs it: give the input a dtype", input=0)
    assert dtype is not None
    return str(dtype)


def data_type(c: Call) -> None:
    """The data's type must be known; every other input is of it (filled or checked);
    every output is of it (replaced): ``LRN``, ``UpSampling``, ``Pooling_v1``."""
    dtype = _data_type(c)
    for i in range(1, len(c.ins)):
        if c.ins[i] is not None and c.ins[i] != dtype:
            c.fail(f"{c.input_label(i)} is {c.ins[i]}, but {c.op} needs every input of "
                   f"the data's type {dtype}", input=i)
        c.ins[i] = dtype
    c.outs[:] = [dtype] * len(c.outs)
