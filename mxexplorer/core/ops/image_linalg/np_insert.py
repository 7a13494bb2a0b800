"""Rules for MXNet 1.9.1's ``_npi_insert_scalar``, ``_npi_insert_slice`` and
``_npi_insert_tensor`` (numpy's ``insert`` at an int, a slice, or an index array).

Their shape functions rewrite their inputs as MXNet does: without ``axis`` the array
(whose full shape is then needed) becomes a vector of its size, and the values take the
array's rank (their leading sizes beyond it must be 1; a missing leading size is 1, so
values of unknown shape become all ones).  The output is replaced, not checked: the
array's size along ``axis`` grows by the values' size (along the first axis for an
int, along ``axis`` for a one-element slice or index array, else by the count of
indices), arithmetic on an unknown size included.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, Shape, fmt
from mxexplorer.core.ops.image_linalg.helpers import (
    count,
    fail,
    int32,
    rank,
    rules,
    size_of,
)

_NAMES = {"_npi_insert_scalar": "int", "_npi_insert_slice": "slice",
          "_npi_insert_tensor": "tensor"}


def _inputs(c: Call) -> tuple[str, ...]:
    names: tuple[str, ...] = ("arr",) if c.p["val"] is not None else ("arr", "values")
    return names + (("obj",) if c.op == "_npi_insert_tensor" else ())


def _slice_count(c: Call, n: int) -> int:
    """How many positions ``start:stop:step`` picks along an axis of size ``n``."""
    step = c.p["step"]
    if step is None:
        fail("step is not set, but inserting at a slice needs it", attr="step")
    step = int(step)

    def clip(v: int) -> int:
        v += n if v < 0 else 0
        v = (-1 if step < 0 else 0) if v < 0 else v
        return (n - 1 if step < 0 else n) if v >= n else v
    stop = clip(int(c.p["stop"])) if c.p["stop"] is not None else (n if step > 0 else -1)
    start = clip(int(c.p["start"])) if c.p["start"] is not None else (
        0 if step > 0 else n - 1)
    if step > 0 and stop >= start:
        return int32((stop - start + step - 1) // step)
    if step < 0 and stop <= start:
        return int32((stop - start + step + 1) // step)
    return 0


def insert_shape(c: Call) -> None:
    """``NumpyInsert{Scalar,Slice,Tensor}Shape``."""
    names = _inputs(c)
    count(c, names)
    has_values = "values" in names
    if c.op == "_npi_insert_tensor":
        obj = c.ins[len(names) - 1]
        if obj is None or len(obj) > 1:
            fail(f"{c.input_label(len(names) - 1)} has {rank(obj)}, but the indices obj "
                 f"must be a scalar or a vector (of known rank)", input=len(names) - 1)
    arr = c.ins[0]
    values = c.ins[1] if has_values else ()
    axis = c.p["axis"]
    if axis is None:
        arr = (size_of(c, 0, "insert without axis"),)
        c.ins[0] = arr
        axis = 0
    else:
        axis = int(axis)
        if arr is not None and len(arr) == 0:
            if values is None or len(values) != 0:
                fail(f"{c.input_label(0)} is a scalar (0-d), to which values of "
                     f"{rank(values)} cannot be assigned", input=1)
            c.outs[0] = ()
            return
        nd = -1 if arr is None else len(arr)
        if not -nd <= axis < nd:
            fail(f"axis {axis} does not exist in {c.input_label(0)} of {rank(arr)}: use "
                 f"an axis from {-nd} to {nd - 1}" if nd > 0 else
                 f"{c.input_label(0)} has an unknown shape, but insert along an axis needs "
                 f"its rank", attr="axis" if nd > 0 else None, input=None if nd > 0 else 0)
        axis += nd if axis < 0 else 0
    assert arr is not None
    vals = _fit_values(c, arr, values)
    if has_values:
        c.ins[1] = vals
    if c.op == "_npi_insert_scalar":
        grow = vals[0]
    else:
        if c.op == "_npi_insert_slice":
            picked = _slice_count(c, arr[axis])
        else:
            picked = size_of(c, len(names) - 1, "insert at an index array")
        grow = vals[axis] if picked == 1 else picked
    out = list(arr)
    out[axis] += grow
    if out[axis] < -1:
        fail(f"the output would have size {out[axis]} along axis {axis}: the array's size "
             f"{arr[axis]} plus an unknown count (-1) of inserted values, and a size cannot "
             f"be negative", input=1 if has_values else 0)
    c.outs[0] = tuple(out)


def _fit_values(c: Call, arr: Shape, values: Shape | None) -> Shape:
    """The values reshaped to the array's rank (right-aligned; leading sizes beyond it
    must be 1, missing ones become 1; unknown values are all ones)."""
    vals = values if values is not None else ()
    fitted = [-1] * len(arr)
    i, j = len(vals) - 1, len(arr) - 1
    while i >= 0 or j >= 0:
        if i >= 0 and j >= 0:
            fitted[j] = vals[i]
        elif i >= 0:
            if vals[i] != 1:
                fail(f"{c.input_label(1)} has shape {fmt(values)}, more dimensions than "
                     f"the array {fmt(arr)}: the extra leading sizes must be 1", input=1)
        else:
            fitted[j] = 1
        i, j = i - 1, j - 1
    return tuple(fitted)


def insert_type(c: Call) -> None:
    """``NumpyInsert*Type``: output and array share a type; an index array (``obj``)
    must be int64."""
    names = _inputs(c)
    count(c, names)
    if c.op == "_npi_insert_tensor":
        k = len(names) - 1
        if c.ins[k] != "int64":
            what = f"type {c.ins[k]}" if c.ins[k] else "an unknown type"
            fail(f"{c.input_label(k)} has {what}, but the indices obj must be int64 "
                 f"(known)", input=k)
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0], "the output has")


RULES: dict[str, Rule] = {
    **rules(list(_NAMES), insert_shape, insert_type),
}
