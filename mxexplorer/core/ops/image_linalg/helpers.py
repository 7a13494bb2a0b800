"""What the image_linalg rules share: the family name, the refusal in plain words, the
input count checks, filling an output as ``SHAPE_ASSIGN_CHECK`` does (a size below -1,
from arithmetic on an unknown size, refused where it would be stored), C++ integer
arithmetic, and the dtype rules MXNet's image, linear-algebra and legacy contrib ops use
(``ElemwiseType`` after a count check, the legacy layers' "first input's type for
everything").  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import NoReturn, Sequence

from mxexplorer.core.ops.base import (
    Call,
    DtypeFn,
    MaybeShape,
    Rule,
    RuleError,
    ShapeFn,
    elemwise_type,
    fmt,
    table,
)
from mxexplorer.core.ops.broadcast import helpers as broadcast_helpers

FAMILY = "image_linalg"
#: ``check_large_dim``: the linear-algebra ops refuse matrix sizes past a C++ int
INT_MAX = (1 << 31) - 1


def fail(message: str, attr: str | None = None, input: int | None = None) -> NoReturn:
    raise RuleError(message, attr=attr, input=input)


def short(op: str) -> str:
    """The op's name as a user knows it: ``_image_flip_left_right`` -> ``flip_left_right``,
    ``_linalg_det`` -> ``det``."""
    for prefix in ("_image_", "_linalg_", "_contrib_", "_npi_"):
        if op.startswith(prefix):
            return op[len(prefix):]
    return op


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def rank(shape: MaybeShape) -> str:
    """``an unknown shape`` or ``shape (2, 3)``, for messages."""
    return "an unknown shape" if shape is None else f"shape {fmt(shape)}"


def dim(d: int) -> str:
    return "?" if d < 0 else str(d)


def count(c: Call, names: Sequence[str]) -> None:
    """MXNet checks the number of inputs (``CHECK_EQ(in_attrs->size(), n)``)."""
    if len(c.ins) != len(names):
        fail(f"has {plural(len(c.ins), 'input')}, but this layer takes {len(names)} "
             f"({', '.join(names) or 'none'})")


def need_input(c: Call, what: str) -> None:
    """An op that reads its first input without checking the count (MXNet would read
    past the end: the engine refuses)."""
    if not c.ins:
        fail(f"has no input, but this layer needs {what}")


def cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def int32(v: int) -> int:
    """The value a C++ ``int`` holds (arithmetic wraps around)."""
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


#: ``SHAPE_ASSIGN_CHECK`` of a computed shape into an output (the broadcast family's)
put_out = broadcast_helpers._put_out


def size_of(c: Call, i: int, what: str) -> int:
    """``TShape::Size()``, which MXNet refuses for a shape not fully known."""
    s = c.ins[i]
    if s is None or any(d < 0 for d in s):
        fail(f"{c.input_label(i)} has {rank(s)}, but {what} needs its full shape "
             f"(every dimension known)", input=i)
    n = 1
    for d in s:
        n *= d
    return n


# ====================================================================== dtype rules
def counted(names: Sequence[str], n_out: int | None = None,
            rule: DtypeFn = elemwise_type) -> DtypeFn:
    """``ElemwiseType<n_in, n_out>``: the input count checked, then one type for
    every input and output."""
    def dtype(c: Call) -> None:
        count(c, names)
        if n_out is not None and len(c.outs) != n_out:
            fail(f"has {plural(len(c.outs), 'output')}, but this layer makes {n_out}")
        rule(c)
    dtype.__name__ = dtype.__qualname__ = f"elemwise_type_{len(names)}"
    dtype.__doc__ = f"One type for the {len(names)} inputs ({', '.join(names)}) and outputs."
    return dtype


def legacy_first_type(c: Call) -> None:
    """A legacy layer's ``InferType`` (``_contrib_fft``, ``_contrib_count_sketch``): the
    first input's type must be known; the other inputs take it (or must have it); the
    output is replaced by it."""
    need_input(c, "its data")
    t = c.ins[0]
    if t is None:
        fail(f"the type of {c.input_label(0)} is not known, and this layer needs it "
             f"(give the input a dtype)", input=0)
    for i in range(1, len(c.ins)):
        if c.ins[i] is not None and c.ins[i] != t:
            fail(f"{c.input_label(i)} has type {c.ins[i]}, but {c.input_label(0)} has "
                 f"type {t}: every input of this layer needs one type", input=i)
        c.ins[i] = t
    c.outs[:] = [t] * len(c.outs)


def rules(names: Sequence[str], shape: ShapeFn, dtype: DtypeFn) -> dict[str, Rule]:
    return table(FAMILY, names, shape, dtype)
