"""Rules for the binary broadcast ops (``broadcast_add`` ... and the comparisons, which
keep their inputs' dtype), ``where`` (which infers only among ``x``, ``y`` and the
output), the broadcasters (``broadcast_axis``, ``broadcast_to``, ``broadcast_like``) and
``_contrib_allclose``.  A binary broadcast leaves a dimension unknown when either side
does and infers nothing backwards, as MXNet does.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from typing import Optional

from mxexplorer.core.ops.base import Call, Conflict, Rule, fmt, known, merge
from mxexplorer.core.ops.broadcast.helpers import (
    BINARY_TYPE,
    UNARY_TYPE,
    _count,
    _fail,
    _full_data,
    _put_out,
    _rank,
    _rules,
)


# ======================================================================== dtype rules
def broadcast_like_type(c: Call) -> None:
    """``broadcast_like``: nothing until ``rhs``'s dtype is known; then ``lhs`` and the
    output have one dtype (``rhs`` keeps its own)."""
    _count(c, ("lhs", "rhs"))
    if c.ins[1] is None:
        return
    t = c.ins[0] if c.ins[0] is not None else c.outs[0]
    if t is None:
        return
    c.set_in(0, t, "the output is")
    c.set_out(0, t)


def where_type(c: Call) -> None:
    """``WhereOpType``: ``x``, ``y`` and the output share one dtype (when any is known and
    they agree; a disagreement is left alone); the condition's dtype is free."""
    _count(c, ("condition", "x", "y"))
    t: Optional[str] = None
    for v in (c.ins[1], c.ins[2], c.outs[0]):
        if v is None:
            continue
        if t is None:
            t = v
        elif t != v:
            return
    if t is None:
        return
    c.set_in(1, t)
    c.set_in(2, t)
    c.set_out(0, t)


def allclose_type(c: Call) -> None:
    """``AllCloseType``: the output is uint8; the inputs' dtypes are free."""
    _count(c, ("a", "b"))
    c.set_out(0, "uint8", "(allclose's verdict)")


# ================================================================ binary broadcast
def broadcast_binary_shape(c: Call) -> None:
    """``BinaryBroadcastShape``: once both ranks are known, the output has the larger
    rank, each dimension (aligned from the right, missing ones read as 1) the one that is
    not 1; a dimension either side does not know stays unknown; two known sizes that
    differ and are both not 1 are refused.  Equal input shapes give the output that shape.
    Nothing is inferred backwards."""
    _count(c, ("lhs", "rhs"))
    lhs, rhs = c.ins
    if lhs is None or rhs is None:
        return
    if lhs == rhs:
        c.set_out(0, lhs)
        return
    n = max(len(lhs), len(rhs))
    bl, br = n - len(lhs), n - len(rhs)
    out = []
    for i in range(n):
        left = lhs[i - bl] if i >= bl else 1
        right = rhs[i - br] if i >= br else 1
        if left < 0 or right < 0:
            out.append(-1)
        elif left != right:
            if left != 1 and right != 1:
                _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} "
                      f"cannot be broadcast together: sizes {left} and {right} differ "
                      f"(aligned from the right, dimension {i} of the result) and neither "
                      f"is 1", input=1)
            out.append(right if left == 1 else left)
        else:
            out.append(left)
    c.set_out(0, tuple(out), f"(broadcasting {fmt(lhs)} with {fmt(rhs)})")


# ============================================================================ where
def where_shape(c: Call) -> None:
    """``WhereOpShape``: with the condition's full shape known, ``x``, ``y`` and the output
    share one shape (a disagreement among them is left alone).  A condition of their rank
    is only compared with it (silently); a 1-d condition must have as many elements as
    their first dimension, which must be known."""
    _count(c, ("condition", "x", "y"))
    cond = c.ins[0]
    if not known(cond):
        return
    assert cond is not None
    try:
        t = merge(merge(c.ins[1], c.ins[2]), c.outs[0])
    except Conflict:
        return
    c.set_in(1, t)
    c.set_in(2, t)
    c.set_out(0, t)
    if t is not None and len(cond) == len(t):
        return
    if len(cond) == 1:
        if t is None or t[0] < 0:
            _fail(f"{c.input_label(0)} has shape {fmt(cond)}: a 1-d condition picks rows, "
                  f"and x and y have {_rank(t)}, whose first dimension is not known; give "
                  f"x or y a shape", input=0)
        assert t is not None
        if cond[0] != t[0]:
            _fail(f"{c.input_label(0)} has shape {fmt(cond)}, but x and y have shape "
                  f"{fmt(t)}: a 1-d condition needs one element per row ({t[0]})",
                  input=0)


# ===================================================================== broadcasters
def broadcast_axis_shape(c: Call) -> None:
    """``BroadcastAxesShape``: needs the data's full shape; each axis of ``axis`` (from 0
    to ndim - 1; no negative axes) must have size 1 and takes the size of ``size``."""
    _count(c, ("data",))
    data = _full_data(c)
    if data is None:
        return
    axes, sizes = tuple(c.p["axis"] or ()), tuple(c.p["size"] or ())
    if len(axes) != len(sizes):
        _fail(f"axis {axes} names {len(axes)} axes but size {sizes} gives {len(sizes)} "
              f"sizes: give one size per axis", attr="size")
    out = list(data)
    for a, s in zip(axes, sizes):
        if not 0 <= a < len(data):
            _fail(f"axis {a} (in axis {axes}) does not exist in {c.input_label(0)} "
                  f"{fmt(data)}: use axes from 0 to {len(data) - 1} (negative axes are not "
                  f"accepted here)", attr="axis")
        if out[a] != 1:
            _fail(f"axis {a} of {c.input_label(0)} {fmt(tuple(out))} has size {out[a]}, but "
                  f"broadcast_axis can only broadcast axes of size 1", attr="axis")
        out[a] = s
    _put_out(c, 0, out, f"from size {sizes}", attr="size")


def broadcast_to_shape(c: Call) -> None:
    """``BroadcastToShape``: ``shape`` has the data's rank; each of its sizes must equal
    the data's or the data's must be 1; a 0 keeps the data's size (known or not)."""
    _count(c, ("data",))
    data = c.ins[0]
    if data is None:
        return
    target = c.p["shape"]
    if target is None or len(target) != len(data):
        what = "None" if target is None else f"{tuple(target)}"
        _fail(f"shape {what} does not have the rank of {c.input_label(0)} {fmt(data)}: "
              f"give a shape of {len(data)} dimensions (0 keeps the data's size)",
              attr="shape")
    assert target is not None
    out = list(target)
    for i, (d, s) in enumerate(zip(data, target)):
        if s != 0:
            if d != s and d != 1:
                _fail(f"{c.input_label(0)} {fmt(data)} cannot be broadcast to shape "
                      f"{tuple(target)}: dimension {i} has size "
                      f"{'unknown' if d < 0 else d}, which is neither {s} nor 1",
                      attr="shape")
        else:
            out[i] = d
    _put_out(c, 0, out, f"from shape {tuple(target)}", attr="shape")


def broadcast_like_shape(c: Call) -> None:
    """``BroadcastLikeShape``: without ``lhs_axes``/``rhs_axes``, ``lhs`` has ``rhs``'s
    rank and each of its sizes equals ``rhs``'s or is 1 (an unknown ``rhs`` size keeps
    ``lhs``'s); with them, each ``lhs`` axis (of size 1) takes the size of the matching
    ``rhs`` axis."""
    _count(c, ("lhs", "rhs"))
    lhs, rhs = c.ins
    if lhs is None or rhs is None:
        return
    la, ra = c.p.get("lhs_axes"), c.p.get("rhs_axes")
    if la is None or ra is None:
        if len(lhs) != len(rhs):
            _fail(f"{c.input_label(0)} {fmt(lhs)} cannot be broadcast like "
                  f"{c.input_label(1)} {fmt(rhs)}: without lhs_axes and rhs_axes both need "
                  f"the same rank", input=0)
        out = list(rhs)
        for i, (left, right) in enumerate(zip(lhs, rhs)):
            if right != -1:
                if left != right and left != 1:
                    _fail(f"{c.input_label(0)} {fmt(lhs)} cannot be broadcast like "
                          f"{c.input_label(1)} {fmt(rhs)}: dimension {i} has size "
                          f"{'unknown' if left < 0 else left}, which is neither {right} "
                          f"nor 1", input=0)
            else:
                out[i] = left
        _put_out(c, 0, out)
        return
    la, ra = tuple(la), tuple(ra)
    if len(la) != len(ra):
        _fail(f"lhs_axes {la} and rhs_axes {ra} have different lengths: give one rhs axis "
              f"per lhs axis", attr="rhs_axes")
    if not la:
        _fail("lhs_axes and rhs_axes are empty: name at least one axis (or leave both "
              "out)", attr="lhs_axes")
    out = list(lhs)
    for a, b in zip(la, ra):
        src = a + len(lhs) if a < 0 else a
        if not 0 <= src < len(lhs):
            _fail(f"lhs_axes has axis {a}, which does not exist in {c.input_label(0)} "
                  f"{fmt(lhs)}", attr="lhs_axes")
        dst = b + len(rhs) if b < 0 else b
        if not 0 <= dst < len(rhs):
            _fail(f"rhs_axes has axis {b}, which does not exist in {c.input_label(1)} "
                  f"{fmt(rhs)}", attr="rhs_axes")
        if lhs[src] != 1:
            _fail(f"axis {a} of {c.input_label(0)} {fmt(lhs)} has size "
                  f"{'unknown' if lhs[src] < 0 else lhs[src]}, but only axes of size 1 can "
                  f"be broadcast (lhs_axes)", attr="lhs_axes")
        out[src] = rhs[dst]
    _put_out(c, 0, out)


def allclose_shape(c: Call) -> None:
    """``AllCloseShape``: the verdict is a scalar (0-d); the inputs are free."""
    _count(c, ("a", "b"))
    c.set_out(0, ())


# ============================================================================= tables
#: ``BinaryBroadcastShape`` and ``ElemwiseType<2, 1>`` (comparisons keep the dtype)
BINARY = (
    "broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_mod",
    "broadcast_power", "broadcast_maximum", "broadcast_minimum", "broadcast_hypot",
    "broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
    "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
    "broadcast_logical_or", "broadcast_logical_xor",
)


RULES: dict[str, Rule] = {
    **_rules(BINARY, broadcast_binary_shape, BINARY_TYPE),
    **_rules(("where",), where_shape, where_type),
    **_rules(("broadcast_axis",), broadcast_axis_shape, UNARY_TYPE),
    **_rules(("broadcast_to",), broadcast_to_shape, UNARY_TYPE),
    **_rules(("broadcast_like",), broadcast_like_shape, broadcast_like_type),
    **_rules(("_contrib_allclose",), allclose_shape, allclose_type),
}
