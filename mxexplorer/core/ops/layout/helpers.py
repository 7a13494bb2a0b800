"""The pieces the layout rules share: the family name, C++ integer arithmetic, shapes in
messages, the input count check, axis checks, filling an input or output (refusing a
dimension below -1, as MXNet's shape checks do) and the readers of shape and
``Tuple<optional<int>>`` attributes.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from mxexplorer.core.ops.base import Call, MaybeShape, fmt

FAMILY = "layout"


# =================================================================== small helpers
def _cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _cmod(a: int, b: int) -> int:
    """C++ ``%`` (the sign of the dividend)."""
    return a - b * _cdiv(a, b)


def _show(shape: Sequence[Any] | None) -> str:
    """A shape as the user wrote it (negative codes shown as they are)."""
    if shape is None:
        return "None"
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _ndim(shape: Sequence[Any] | None) -> int:
    """MXNet's ``ndim()``: -1 for an unknown rank."""
    return -1 if shape is None else len(shape)


def _need_inputs(c: Call, n: int) -> None:
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} input{'s' if len(c.ins) != 1 else ''}, but this layer "
               f"takes {n}")


def _size(c: Call, shape: MaybeShape, what: str, input: int | None = None) -> int:
    """Number of elements; refused when any dimension is unknown (MXNet's ``Size()``)."""
    if shape is None:
        c.fail(f"{what} has an unknown shape, but this layer needs its number of elements",
               input=input)
    assert shape is not None
    n = 1
    for d in shape:
        if d < 0:
            c.fail(f"{what} has shape {fmt(shape)} with an unknown dimension, but this layer "
                   f"needs its number of elements", input=input)
        n *= d
    return n


def _axis(c: Call, axis: int, ndim: int, attr: str, what: str = "axis",
          of: str = "input") -> int:
    """MXNet's ``CheckAxis``: ``axis`` in ``[-ndim, ndim)``, counted from the end when
    negative."""
    if ndim == 0:
        if axis not in (0, -1):
            c.fail(f"{what} {axis} does not exist: the {of} is a scalar (0-d)", attr=attr)
        return 0
    if not -ndim <= axis < ndim:
        c.fail(f"{what} {axis} is out of range for a {ndim}-d {of}: use an axis from "
               f"{-ndim} to {ndim - 1}", attr=attr)
    return (axis + ndim) % ndim


def _put(c: Call, side: str, i: int, shape: Sequence[int] | None, why: str = "",
         attr: str | None = None) -> None:
    """``SHAPE_ASSIGN_CHECK``: merge ``shape`` into input or output ``i``.  A dimension
    below -1 (a negative size an op computed) is refused where it would be stored, and
    ignored where the entry already knows that dimension, as MXNet does."""
    if shape is None:
        return
    old = c.ins[i] if side == "in" else c.outs[i]
    dims = list(shape)
    for k, d in enumerate(dims):
        if d < -1:
            if old is None or len(old) != len(dims) or old[k] < 0:
                where = (c.input_label(i) if side == "in" else
                         "the output" if len(c.outs) == 1 else f"output {i}")
                c.fail(f"{where} would have size {d} in dimension {k} "
                       f"({_show(shape)}){' ' + why if why else ''}: a size cannot be "
                       f"negative", attr=attr)
            dims[k] = -1
    if side == "in":
        c.set_in(i, tuple(dims), why)
    else:
        c.set_out(i, tuple(dims), why)


def _put_in(c: Call, i: int, shape: Sequence[int] | None, why: str = "",
            attr: str | None = None) -> None:
    _put(c, "in", i, shape, why, attr)


def _put_out(c: Call, i: int, shape: Sequence[int] | None, why: str = "",
             attr: str | None = None) -> None:
    _put(c, "out", i, shape, why, attr)


def _replace_out(c: Call, i: int, shape: Sequence[int], attr: str | None = None) -> None:
    """The output becomes ``shape`` whatever it was (ops that clear their outputs:
    ``take``, ``Crop``, ``SwapAxis``)."""
    for k, d in enumerate(shape):
        if d < -1:
            c.fail(f"the output would have size {d} in dimension {k} ({_show(shape)}): a "
                   f"size cannot be negative", attr=attr)
    c.outs[i] = tuple(shape)


def _assign_partial(y: MaybeShape, x: MaybeShape) -> MaybeShape:
    """MXNet's ``shape_assign`` when its verdict is ignored: ``y`` takes ``x`` if ``y``'s
    rank is unknown; with equal ranks, ``y``'s unknown dimensions are filled from ``x`` in
    order until the first disagreement."""
    if y is None:
        return x
    if x is None or len(x) != len(y):
        return y
    out = list(y)
    for k, (a, b) in enumerate(zip(y, x)):
        if a == -1:
            out[k] = b
        elif a != b and b >= 0:
            break
    return tuple(out)


def _legacy_shape(shape: Sequence[int] | None) -> MaybeShape:
    """A shape attribute as MXNet reads it with numpy semantics off
    (``ConvertToNumpyShape``): ``()`` unknown, each 0 an unknown dimension."""
    if shape is None or len(shape) == 0:
        return None
    return tuple(-1 if d == 0 else d for d in shape)


def _walk_known(c: Call, shape: Sequence[int], attr: str | None = None) -> bool:
    """MXNet's ``shape_is_known`` on a computed shape: stops at the first unknown
    dimension, refuses a negative size before it."""
    for d in shape:
        if d < -1:
            c.fail(f"shape {_show(shape)} has the negative size {d}", attr=attr)
        if d == -1:
            return False
    return True


def _opt(value: Any) -> tuple[Optional[int], ...] | None:
    """A ``Tuple<optional<int>>`` attribute as parsed (``None`` entries allowed); None when
    the whole attribute is ``None`` (MXNet's unknown tuple, rank -1)."""
    if value is None:
        return None
    return tuple(None if v is None else int(v) for v in value)
