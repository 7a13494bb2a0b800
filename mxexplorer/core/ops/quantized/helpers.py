"""The pieces the int8 rules share: the family name, the ``(1,)`` shape of a min/max entry,
the dtype names, C++ division, the input count check, filling the min/max entries,
overwriting outputs as MXNet does (``out_attrs->clear(); push_back(...)``) and the
checks of an input's dtype and of the calibration attributes.  Must not import MXNet or
Qt.
"""
from __future__ import annotations

from typing import Any, Sequence

from mxexplorer.core.ops.base import Call, MaybeShape, RuleError, Shape
from mxexplorer.core.ops.params import parse_float

FAMILY = "quantized"
ONE: Shape = (1,)
F32 = "float32"
QUANT = ("int8", "uint8")


# ------------------------------------------------------------------ small helpers
def _cdiv(a: int, b: int) -> int:
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _bad_dims(shape: MaybeShape) -> bool:
    return shape is not None and any(d < -1 for d in shape)


def _put_out(c: Call, i: int, shape: Any, why: str = "") -> None:
    if i < len(c.outs):
        c.set_out(i, shape, why)


def _overwrite_outs(c: Call, values: Sequence[Any]) -> None:
    """MXNet's ``out_attrs->clear(); push_back(...)``: the outputs are replaced, unchecked."""
    for i, v in enumerate(values):
        if i < len(c.outs):
            c.outs[i] = v


def _ranges(c: Call, first: int, last: int, value: Any = ONE) -> None:
    """Inputs ``first``..``last - 1`` are the (1,)-shaped min/max scalars (or float32)."""
    for i in range(first, min(last, len(c.ins))):
        c.set_in(i, value, "a min/max range input is")


def _count(c: Call, n: int, names: str) -> None:
    if len(c.ins) != n:
        c.fail(f"has {len(c.ins)} inputs, but this layer takes {n} ({names})")


def _need_type(c: Call, i: int, allowed: Sequence[str], what: str) -> None:
    """MXNet's ``CHECK(type == ...)``: the type must be known already and be one of these."""
    t = c.ins[i] if i < len(c.ins) else None
    if t not in allowed:
        label = c.input_label(i)
        shown = " or ".join(allowed)
        if t is None:
            c.fail(f"{label} has no known type, but {what} needs {shown} there: give the "
                   f"input's dtype", input=i)
        c.fail(f"{label} has type {t}, but {what} takes {shown}", input=i)


def _opt_float(c: Call, key: str) -> float | None:
    text = c.attrs.get(key)
    if text is None or text == "None":
        return None
    try:
        return parse_float(str(text))
    except ValueError:
        raise RuleError(f"attribute {key}={text!r} is not a number", attr=key) from None


def _calibrated(c: Call) -> bool:
    return c.p.get("min_calib_range") is not None and c.p.get("max_calib_range") is not None


def _out_type(c: Call) -> str:
    """``GetQuantizeOutputType``: ``auto`` is uint8 when the calibrated minimum is 0 or
    more, int8 otherwise."""
    kind = c.p.get("out_type") or "int8"
    if kind == "auto":
        low = c.p.get("min_calib_range")
        if low is not None and c.p.get("max_calib_range") is not None and low >= 0.0:
            return "uint8"
        return "int8"
    return str(kind)
