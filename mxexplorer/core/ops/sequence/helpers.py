"""The pieces the sequence rules share (and the detection family uses): C's 32- and 64-bit
arithmetic, the input count check, refilling an output, the refusal of a negative size
and of a data of unknown dtype.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Sequence

from mxexplorer.core.ops.base import Call, Conflict, RuleError, merge

_U32 = 1 << 32
_U64 = 1 << 64


# ------------------------------------------------------------------ C arithmetic
def _i32(x: int) -> int:
    """A value stored into a C ``int``."""
    x %= _U32
    return x - _U32 if x >= 1 << 31 else x


def _i64(x: int) -> int:
    """A value stored into a C ``int64_t`` (``index_t``)."""
    x %= _U64
    return x - _U64 if x >= 1 << 63 else x


# ------------------------------------------------------------------ shared steps
def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def count_inputs(c: Call, names: Sequence[str], why: str = "") -> None:
    """The node has exactly the inputs ``names`` (MXNet checks the count)."""
    if len(c.ins) != len(names):
        listed = ", ".join(names)
        raise RuleError(f"has {_plural(len(c.ins), 'input')}, but this layer takes "
                        f"{len(names)} ({listed}){why}")


def put_out(c: Call, i: int, value: Any, why: str = "") -> None:
    """Output ``i`` becomes ``value``: MXNet's rule clears its outputs and pushes the new
    ones, so a known output is replaced, not merged.  A known output that disagrees is
    refused here (in MXNet the layer that reads it refuses)."""
    old = c.outs[i]
    if old is not None and value is not None:
        try:
            if c.kind == "shape":
                merge(old, value)
            elif old != value:
                raise Conflict()
        except Conflict:
            c.set_out(i, value, why)
    c.outs[i] = value


def no_negative(c: Call, blame: str) -> None:
    """MXNet refuses a shape with a size below -1 wherever a rule wrote one (-1 itself
    reads as unknown); ``blame`` says which attributes made it."""
    for i, s in enumerate(c.ins):
        if s is not None and any(d < -1 for d in s):
            raise RuleError(f"{c.input_label(i)} would have shape "
                            f"({', '.join(str(d) for d in s)}), with a negative size: "
                            f"{blame}", input=i)
    for i, s in enumerate(c.outs):
        if s is not None and any(d < -1 for d in s):
            name = "the output" if len(c.outs) == 1 else f"output {i}"
            raise RuleError(f"{name} would have shape ({', '.join(str(d) for d in s)}), "
                            f"with a negative size: {blame}", output=i)


def _data_type(c: Call) -> str:
    """The data's dtype, which these ops need known when their dtype rule runs."""
    t = c.ins[0] if c.ins else None
    if t is None:
        c.fail(f"the type of {c.input_label(0)} is unknown: {c.op} needs the data's dtype "
               f"known (give the input a dtype)", input=0)
    assert t is not None
    return str(t)
