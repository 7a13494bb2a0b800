"""Rules for the other numpy-style ops: ``_np_cumsum``, the diagonal ops (``_npi_tril``,
``_np_diag``, ``_np_diagonal``, ``_np_diagflat``, ``_np_trace``,
``_npi_diag_indices_from``), ``_npi_diff``, ``_npi_pad``, ``_npi_polyval``, the ops that
end in a scalar (``_npx_constraint_check``, ``_npi_share_memory``) and those whose
output shape depends on the data (``_npx_nonzero``, ``_npi_unique``, ``_npi_delete``,
``_npi_bincount``).  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, Shape, elemwise_type, fmt, known, table
from mxexplorer.core.ops.numpy_ops.helpers import (
    FAMILY,
    _check_axis,
    _count,
    _label,
    bool_out_type,
    same_in_out_type,
    same_shape,
)
from mxexplorer.core.ops.params import parse_tuple


# ==================================================================== one-input misc
def cumsum_shape(c: Call) -> None:
    """_np_cumsum: the input's shape, flattened when ``axis`` is None (which needs the
    input fully known)."""
    if c.p["axis"] is not None:
        same_shape(c)
        return
    s = c.ins[0]
    if not known(s):
        c.fail(f"{_label(c, 0)} must have a known shape to be flattened (axis=None)", input=0)
    assert s is not None
    c.set_out(0, (_count(s),))


def cumsum_type(c: Call) -> None:
    dtype = c.p.get("dtype")
    if dtype is not None:
        c.set_out(0, dtype)
        return
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])
    if c.outs[0] == "bool":
        c.outs[0] = "int64"


def _diagonal_missing(c: Call, what: str = "Diagonal") -> None:
    c.fail(f"{_label(c, 0)} needs a fully known shape here ({what.lower()} of a partly "
           f"known shape is refused by MXNet 1.9.1)", input=0)


def tril_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None:
        return
    out = (s[0], s[0]) if len(s) == 1 else s
    if not known(out):
        _diagonal_missing(c)
    c.set_out(0, out)


def diag_shape(c: Call) -> None:
    """_np_diag: a 1-d input makes a square matrix (n + |k|), a 2-d one gives its k-th
    diagonal.  MXNet's arithmetic on unknown sizes is kept (an unknown diagonal length
    reads as 0)."""
    s = c.ins[0]
    if s is None:
        return
    k = c.p["k"]
    if len(s) > 2:
        c.fail(f"{_label(c, 0)} has {len(s)} dimensions; diag takes a 1-d or 2-d array",
               input=0)
    if len(s) == 0:
        c.fail(f"{_label(c, 0)} is a scalar; diag takes a 1-d or 2-d array", input=0)
    if len(s) == 1:
        n = s[0] + abs(k)
        out: Shape = (n, n)
    else:
        h, w = s
        if k > 0:
            w -= k
        elif k < 0:
            h += k
        out = (max(min(h, w), 0),)
    if not known(out):
        _diagonal_missing(c)
    c.set_out(0, out)


def diagonal_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None or len(s) < 2:
        c.fail(f"{_label(c, 0)} must be known to be 2-d or more for diagonal", input=0)
    assert s is not None
    x1 = _check_axis(c, c.p["axis1"], len(s), "axis1")
    x2 = _check_axis(c, c.p["axis2"], len(s), "axis2")
    if x1 == x2:
        c.fail(f"axis1 and axis2 both name axis {x1}: give two different axes", attr="axis2")
    h, w = s[x1], s[x2]
    k = c.p["offset"]
    if k > 0:
        w -= k
    elif k < 0:
        h += k
    n = max(min(h, w), 0)
    out = tuple(d for i, d in enumerate(s) if i not in (x1, x2)) + (n,)
    if not known(out):
        _diagonal_missing(c)
    c.set_out(0, out)


def diagflat_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None:
        return
    k = c.p["k"]
    if len(s) == 0:
        c.fail(f"{_label(c, 0)} is a scalar; diagflat takes an array", input=0)
    if len(s) == 1:
        n = s[0] + abs(k)
    else:
        n = 1
        for d in s:
            if d >= 2:
                n *= d
        n += abs(k)
    if n < 0:
        _diagonal_missing(c)
    c.set_out(0, (n, n))


def trace_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None or len(s) < 2:
        return
    x1 = _check_axis(c, c.p["axis1"], len(s), "axis1")
    x2 = _check_axis(c, c.p["axis2"], len(s), "axis2")
    if x1 == x2:
        c.fail(f"axis1 and axis2 both name axis {x1}: give two different axes", attr="axis2")
    c.set_out(0, tuple(d for i, d in enumerate(s) if i not in (x1, x2)))


def diff_shape(c: Call) -> None:
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    n = c.p["n"]
    if n < 0:
        c.fail(f"n={n} is negative: the number of differences must be 0 or more", attr="n")
    if len(s) == 0:
        c.fail(f"{_label(c, 0)} is a scalar: diff needs an axis to take differences along",
               input=0)
    ax = _check_axis(c, c.p["axis"], len(s))
    out = list(s)
    out[ax] = 0 if n >= s[ax] else s[ax] - n
    c.set_out(0, tuple(out))


def _pad_widths(c: Call) -> list[tuple[int, ...]]:
    """``pad_width`` (a tuple of tuples; a lone number inside counts as a 1-tuple)."""
    text = c.attrs.get("pad_width", "").strip()
    if len(text) < 2 or text[0] not in "([" or text[-1] not in ")]":
        c.fail(f"pad_width={text!r} is not a tuple of (before, after) pairs",
               attr="pad_width")
    body = text[1:-1].strip()
    out: list[tuple[int, ...]] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch in " ,":
            i += 1
            continue
        if ch in "([":
            close = body.find(")" if ch == "(" else "]", i)
            if close < 0:
                break
            item = parse_tuple(body[i:close + 1])
            i = close + 1
        else:
            j = i
            while j < len(body) and body[j] not in " ,":
                j += 1
            item = parse_tuple(body[i:j])
            i = j
        if item is None:
            c.fail(f"pad_width={text!r} is not a tuple of (before, after) pairs",
                   attr="pad_width")
        assert item is not None
        out.append(tuple(item))
    return out


def pad_shape(c: Call) -> None:
    """_npi_pad: each dim grows by its (before, after) pair; MXNet's arithmetic on an
    unknown dim is kept (it adds to -1)."""
    s = c.ins[0]
    if s is None:
        return
    try:
        widths = _pad_widths(c)
    except ValueError:
        c.fail("pad_width is not a tuple of (before, after) pairs", attr="pad_width")
        return

    def width(i: int, j: int) -> int:
        if i >= len(widths) or j >= len(widths[i]):
            c.fail(f"pad_width has no entry [{i}][{j}]: give a (before, after) pair for each "
                   f"of the {len(s)} axes", attr="pad_width")
        return widths[i][j]
    if len(s) == 1:
        out: Shape = (s[0] + width(0, 0) + width(1, 0),)
    elif len(s) >= 2:
        dims = [0] * len(s)
        for i in range(len(s) - 1, -1, -1):
            dims[i] = s[i] + width(i, 0) + width(i, 1)
        out = tuple(dims)
    else:
        out = (-1, -1)
    if not known(out):
        c.fail(f"padding {_label(c, 0)} of shape {fmt(s)} by pad_width gives no valid shape",
               attr="pad_width")
    c.set_out(0, out)


def scalar_out_when_known(c: Call) -> None:
    """_npx_constraint_check: a scalar output once the input is known."""
    if known(c.ins[0]):
        c.set_out(0, ())


def scalar_out(c: Call) -> None:
    c.set_out(0, ())


def constraint_type(c: Call) -> None:
    if c.ins[0] != "bool":
        c.fail(f"{_label(c, 0)} has type {c.ins[0] or 'unknown'}, but a constraint check "
               f"takes a bool array", input=0)
    c.set_out(0, "bool")


def int64_out(c: Call) -> None:
    c.set_out(0, "int64")


def no_shape(c: Call) -> None:
    """An op whose output shape depends on the data (MXNet has no shape rule for it)."""


# ====================================================================== a few more
def diag_indices_from_shape(c: Call) -> None:
    """_npi_diag_indices_from: (ndim, n) for an input with every side n."""
    s = c.ins[0]
    if not known(s):
        return
    assert s is not None
    if len(s) < 2:
        c.fail(f"{_label(c, 0)} has {len(s)} dimension(s); it must be 2-d or more", input=0)
    if any(d != s[0] for d in s):
        c.fail(f"{_label(c, 0)} has shape {fmt(s)}; all its sides must be equal", input=0)
    c.set_out(0, (len(s), s[0]))


def polyval_shape(c: Call) -> None:
    """_npi_polyval: p a 1-d array (known); the output has x's shape, both ways."""
    p = c.ins[0]
    if p is None or len(p) != 1:
        c.fail(f"{_label(c, 0)} must be known to be a 1-d array of coefficients", input=0)
    c.set_out(0, c.ins[1])
    c.set_in(1, c.outs[0], "the output has shape")


def unique_type(c: Call) -> None:
    c.set_out(0, c.ins[0])
    c.set_in(0, c.outs[0])
    for i in range(1, len(c.outs)):
        c.set_out(i, "int64")


def delete_type(c: Call) -> None:
    wanted = 1 if c.p["step"] is not None or c.p["int_ind"] is not None else 2
    if len(c.ins) != wanted:
        c.fail(f"has {len(c.ins)} inputs, but with these attributes delete takes {wanted}")
    same_in_out_type(c)


def bincount_type(c: Call) -> None:
    if not c.p["has_weights"]:
        elemwise_type(c)
        return
    if len(c.ins) != 2:
        c.fail(f"has {len(c.ins)} inputs, but with has_weights=True bincount takes 2")
    c.set_out(0, c.ins[1])
    c.set_in(1, c.outs[0])


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_np_cumsum",), cumsum_shape, cumsum_type),
    **table(FAMILY, ("_npi_tril",), tril_shape),
    **table(FAMILY, ("_np_diag",), diag_shape, same_in_out_type),
    **table(FAMILY, ("_np_diagonal",), diagonal_shape, same_in_out_type),
    **table(FAMILY, ("_np_diagflat",), diagflat_shape, same_in_out_type),
    **table(FAMILY, ("_np_trace",), trace_shape),
    **table(FAMILY, ("_npi_diff",), diff_shape, same_in_out_type),
    **table(FAMILY, ("_npi_pad",), pad_shape, same_in_out_type),
    **table(FAMILY, ("_npx_constraint_check",), scalar_out_when_known, constraint_type),
    **table(FAMILY, ("_npi_share_memory",), scalar_out, bool_out_type),
    **table(FAMILY, ("_npx_nonzero",), no_shape, int64_out),
    **table(FAMILY, ("_npi_diag_indices_from",), diag_indices_from_shape, int64_out),
    **table(FAMILY, ("_npi_polyval",), polyval_shape),
    **table(FAMILY, ("_npi_unique",), no_shape, unique_type),
    **table(FAMILY, ("_npi_delete",), no_shape, delete_type),
    **table(FAMILY, ("_npi_bincount",), no_shape, bincount_type),
}
