"""The pieces the broadcast rules share: the family name, C++ integer arithmetic, the
refusal in plain words, the input count check, filling an output (refusing a negative
size), axis checks, the data's full shape, and the dtype rule of one type for every
input and output after the input count check (``UNARY_TYPE``, ``BINARY_TYPE``).  Must
not import MXNet or Qt.
"""
from __future__ import annotations

from typing import NoReturn, Sequence

from mxexplorer.core.ops.base import (
    Call,
    DtypeFn,
    MaybeShape,
    Rule,
    RuleError,
    Shape,
    ShapeFn,
    elemwise_type,
    fmt,
    known,
    table,
)

FAMILY = "broadcast"


# =================================================================== small helpers
def _fail(message: str, attr: str | None = None, input: int | None = None) -> NoReturn:
    raise RuleError(message, attr=attr, input=input)


def _cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _cmod(a: int, b: int) -> int:
    """C++ ``%`` (the sign of the dividend)."""
    return a - _cdiv(a, b) * b


def _rank(shape: MaybeShape) -> str:
    return "an unknown shape" if shape is None else f"shape {fmt(shape)}"


def _count(c: Call, names: Sequence[str]) -> None:
    """MXNet checks the number of inputs."""
    if len(c.ins) != len(names):
        n = len(c.ins)
        _fail(f"has {n} input{'s' if n != 1 else ''}, but this layer takes {len(names)} "
              f"({', '.join(names)})")


def _put_out(c: Call, i: int, shape: Sequence[int], why: str = "",
             attr: str | None = None) -> None:
    """``SHAPE_ASSIGN_CHECK`` of a computed shape into output ``i``.  A size below -1
    (arithmetic on an unknown size) is refused where it would be stored, and ignored
    where the output already knows that dimension, as MXNet does."""
    if i >= len(c.outs):
        return
    old = c.outs[i]
    dims = list(shape)
    for k, d in enumerate(dims):
        if d < -1:
            if old is None or len(old) != len(dims) or old[k] < 0:
                name = "the output" if len(c.outs) == 1 else f"output {i}"
                shown = ", ".join("?" if x == -1 else str(x) for x in shape)
                _fail(f"{name} would have size {d} in dimension {k}: ({shown})"
                      f"{' ' + why if why else ''}, and a size cannot be negative",
                      attr=attr)
            dims[k] = -1
    c.set_out(i, tuple(dims), why)


def _norm_axis(c: Call, axis: int, ndim: int, attr: str, what: str = "the data") -> int:
    """MXNet's ``CheckAxis``: ``axis`` in ``[-ndim, ndim)``, counted from the end when
    negative."""
    if not -ndim <= axis < ndim:
        _fail(f"axis {axis} does not exist in {what}, which has {ndim} dimension"
              f"{'s' if ndim != 1 else ''}: use an axis from {-ndim} to {ndim - 1}",
              attr=attr)
    return axis % ndim


def _full_data(c: Call, i: int = 0) -> Shape | None:
    """The input's shape when fully known (the ops that wait for it), else None."""
    s = c.ins[i]
    return s if known(s) else None


# ============================================================ dtype rules
def _counted(names: Sequence[str], rule: DtypeFn = elemwise_type) -> DtypeFn:
    """A dtype rule after MXNet's check of the input count."""
    def counted(c: Call) -> None:
        _count(c, names)
        rule(c)
    counted.__name__ = counted.__qualname__ = f"{rule.__name__}_{len(names)}"
    counted.__doc__ = f"{rule.__doc__} ({len(names)} inputs: {', '.join(names)})"
    return counted


UNARY_TYPE = _counted(("data",))
BINARY_TYPE = _counted(("lhs", "rhs"))


# ============================================================================= tables
def _rules(names: Sequence[str], shape: ShapeFn, dtype: DtypeFn) -> dict[str, Rule]:
    return table(FAMILY, names, shape, dtype)
