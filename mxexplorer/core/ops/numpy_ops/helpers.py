"""The pieces the numpy-style rules share: the family name, the dtype groups, the small
shape helpers (a shape attribute read with numpy semantics off, axis checks, the
``_extra`` attribute reader) and the rules several sub-families use (``same_shape``,
``same_in_out_type``, ``bool_out_type``).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from mxexplorer.core.ops.base import Call, MaybeShape, Shape, merge, size
from mxexplorer.core.ops.params import parse_int

FAMILY = "numpy_ops"

INTS = ("uint8", "int8", "int32", "int64")
FLOATS = ("float16", "float32", "float64")
_MAX_ELEMENTS = 2**31 - 1   # MXNet 1.9.1's pip builds lack 64-bit tensor sizes


# ------------------------------------------------------------------ small helpers
def _is_int(t: str | None) -> bool:
    return t in INTS


def _is_float(t: str | None) -> bool:
    return t in FLOATS


def _legacy(shape: Sequence[int] | None) -> MaybeShape:
    """A shape attribute as MXNet reads it with numpy semantics off: ``()`` unknown, 0
    dims unknown."""
    if shape is None or len(shape) == 0:
        return None
    return tuple(-1 if d == 0 else d for d in shape)


def _count(shape: Shape) -> int:
    return size(shape)


def _label(c: Call, i: int) -> str:
    return c.input_label(i)


def _norm_axis(c: Call, axis: int, ndim: int, attr: str, what: str = "axis") -> int:
    """``axis`` counted from the end when negative; refused outside ``[-ndim, ndim)``."""
    if not -ndim <= axis < ndim:
        if ndim == 0:
            c.fail(f"{what} {axis} does not exist: the input is a scalar (0-d)", attr=attr)
        c.fail(f"{what} {axis} is out of range for a {ndim}-d input: use an axis from "
               f"{-ndim} to {ndim - 1}", attr=attr)
    return axis + ndim if axis < 0 else axis


def _set_all_outs(c: Call, shape: MaybeShape) -> None:
    for i in range(len(c.outs)):
        c.set_out(i, shape)


def _show_axes(axis: Sequence[int]) -> str:
    return "(" + ", ".join(str(a) for a in axis) + ("," if len(axis) == 1 else "") + ")"


def _extra(c: Call, name: str, parse: Callable[[str], Any], default: Any) -> Any:
    """A parameter MXNet's parser reads that the op table does not declare (``axis`` of
    ``_npi_concatenate``...): from ``c.p`` once declared, else from the attribute text."""
    value = c.p.get(name)
    if name in c.p and not isinstance(value, str):
        return value
    # declared without a type MXNet names (``M : , optional``): read the text here
    text = value if isinstance(value, str) else c.attrs.get(name)
    if text is None:
        return default
    try:
        return parse(text)
    except ValueError:
        c.fail(f"attribute {name}={text!r} is not valid", attr=name)
    return default


def _optional_int(text: str) -> int | None:
    return None if text == "None" else parse_int(text)


def _check_axis(c: Call, axis: int, ndim: int, attr: str = "axis") -> int:
    """MXNet's CheckAxis: a scalar takes 0 or -1."""
    if ndim == 0:
        if axis not in (0, -1):
            c.fail(f"axis {axis} does not exist on a scalar (0-d) input", attr=attr)
        return 0
    return _norm_axis(c, axis, ndim, attr)


# ================================================================= shared rules
def same_shape(c: Call) -> None:
    """ElemwiseShape: every input and output of one shape, known from any of them."""
    shape: MaybeShape = None
    for i, s in enumerate(c.ins):
        if s is None:
            continue
        try:
            shape = merge(shape, s)
        except Exception:
            c.set_in(i, shape, "the other inputs have shape")
    for i, s in enumerate(c.outs):
        if s is None:
            continue
        try:
            shape = merge(shape, s)
        except Exception:
            c.set_out(i, shape)
    if shape is None:
        return
    for i in range(len(c.ins)):
        c.set_in(i, shape, "the other inputs have shape")
    for i in range(len(c.outs)):
        c.set_out(i, shape)


def same_in_out_type(c: Call) -> None:
    """The output of the input's type, both ways (no check of the kind)."""
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])


def bool_out_type(c: Call) -> None:
    c.set_out(0, "bool")
