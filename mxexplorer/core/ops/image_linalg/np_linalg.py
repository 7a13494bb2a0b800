"""Rules for numpy-style linear algebra of MXNet 1.9.1 left to this family
(``src/operator/numpy/linalg/``): ``_npi_pinv`` (with an ``rcond`` array that must
broadcast against the singular values) and ``_npi_pinv_scalar_rcond``, ``_npi_svd``,
``_npi_tensorinv`` and ``_npi_tensorsolve``.  Their dtype rules refuse float16 and give
float64 unless the inputs are float32 (an unknown type counts as "not float32").  Must
not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, fmt
from mxexplorer.core.ops.image_linalg.helpers import (
    count,
    counted,
    fail,
    rules,
    size_of,
)


def _full(s: MaybeShape) -> bool:
    return s is not None and all(d >= 0 for d in s)


# ============================================================================= pinv
def _broadcast(lhs: Shape, rhs: Shape) -> Shape | None:
    """``BinaryBroadcastShape`` of two shapes of known rank (unknown sizes stay
    unknown); None where they do not broadcast."""
    if lhs == rhs:
        return lhs
    n = max(len(lhs), len(rhs))
    out = [-1] * n
    for i in range(n):
        li = i - (n - len(lhs))
        ri = i - (n - len(rhs))
        a = lhs[li] if li >= 0 else 1
        b = rhs[ri] if ri >= 0 else 1
        if a < 0 or b < 0:
            continue
        if a != b and a != 1 and b != 1:
            return None
        out[i] = b if a == 1 else a
    return tuple(out)


def _check_rcond(c: Call, a: Shape) -> None:
    """``GetOrCheckCutoffAndLargeShape``: ``rcond`` (one more axis of 1 added) times the
    largest singular values must broadcast to the singular values' shape."""
    r = c.ins[1]
    new_rcond = (tuple(r) if r is not None else ()) + (1,)
    batch = a[:-2]
    s_shape = batch + (min(a[-2], a[-1]),)
    cutoff = _broadcast(new_rcond, batch + (1,))
    large = None if cutoff is None else _broadcast(s_shape, cutoff)
    if large != s_shape:
        fail(f"{c.input_label(1)} has shape {fmt(r)}, which does not broadcast against "
             f"the singular values {fmt(s_shape)} of A {fmt(a)}: rcond must be a scalar or "
             f"fit A's batch dimensions (known)", input=1)


def pinv_shape(c: Call) -> None:
    """``PinvOpShape``/``PinvScalarRcondOpShape``: A (full shape, 2 or more dimensions)
    gives its matrices transposed; from a full output A is learnt back; ``rcond`` (the
    second input of ``_npi_pinv``) is checked once A is known."""
    array = c.op == "_npi_pinv"
    count(c, ("A", "rcond") if array else ("A",))
    a, out = c.ins[0], c.outs[0]
    if _full(a):
        assert a is not None
    elif _full(out):
        assert out is not None
        a = out
    else:
        return
    if len(a) < 2:
        fail(f"{c.input_label(0) if a is c.ins[0] else 'the output'} has shape {fmt(a)}, "
             f"but pinv needs matrices (2 or more dimensions)", input=0)
    swapped = a[:-2] + (a[-1], a[-2])
    if a is c.ins[0]:
        c.set_out(0, swapped)
    else:
        c.set_in(0, swapped, "the output needs")
    full = c.ins[0]
    if array and _full(full):
        assert full is not None
        _check_rcond(c, full)


def pinv_type(c: Call) -> None:
    """``PinvOpType``: A not float16, ``rcond`` float32 or float64 (known); float32 A
    gives float32, anything else float64."""
    array = c.op == "_npi_pinv"
    count(c, ("A", "rcond") if array else ("A",))
    if c.ins[0] == "float16":
        fail(f"{c.input_label(0)} has type float16, which numpy linear algebra does not "
             f"support: use float32 or float64", input=0)
    if array and c.ins[1] not in ("float32", "float64"):
        what = f"type {c.ins[1]}" if c.ins[1] else "an unknown type"
        fail(f"{c.input_label(1)} has {what}, but rcond must be float32 or float64 "
             f"(known)", input=1)
    c.set_out(0, "float32" if c.ins[0] == "float32" else "float64")


# ============================================================================== svd
def svd_shape(c: Call) -> None:
    """``NumpyLaGesvdShape``: A (rows <= columns, as given) gives UT (square of A's
    rows), L (A's shape but the last) and V (A's shape); from UT, L and V of matching
    ranks, A is V."""
    count(c, ("A",))
    a = c.ins[0]
    ut, lo, v = c.outs
    if a is not None and len(a) >= 2:
        if not a[-2] <= a[-1]:
            fail(f"{c.input_label(0)} has shape {fmt(a)}, but svd needs at most as many "
                 f"rows as columns (compared as given, unknown counting as -1)", input=0)
        c.set_out(2, a)
        c.set_out(1, a[:-1])
        c.set_out(0, a[:-1] + (a[-2],))
        return
    if (ut is not None and lo is not None and v is not None and len(ut) >= 2
            and len(ut) == len(lo) + 1 and len(v) == len(ut)):
        if ut[:-1] != lo or v[:-1] != lo or ut[-2] != ut[-1] or not v[-2] <= v[-1]:
            fail(f"outputs UT {fmt(ut)}, L {fmt(lo)} and V {fmt(v)} do not fit one svd: UT "
                 f"square, L their shape but the last, V at most as many rows as columns "
                 f"(as given)")
        c.set_in(0, v, "output V has")


# ======================================================================== tensorinv
def tensorinv_shape(c: Call) -> None:
    """``TensorinvOpShape``: A's first ``ind`` dimensions move to the end; the product of
    the first ``ind`` sizes must equal the product of the rest (computed as given, an
    unknown size counting as -1)."""
    count(c, ("a",))
    a = c.ins[0]
    if a is None:
        return
    ind = int(c.p["ind"])
    if ind <= 0:
        fail(f"ind={ind}: the number of first indices must be greater than 0", attr="ind")
    nd = len(a)
    inv = a[ind:] + a[:ind] if 0 < nd and ind < nd else a
    c.set_out(0, inv)
    if nd == 0:
        fail(f"{c.input_label(0)} is a scalar, which tensorinv cannot invert", input=0)
    front = back = 1
    for d in a[:ind]:
        front *= d
    for d in a[ind:]:
        back *= d
    if ind < nd and back <= 0:
        fail(f"{c.input_label(0)} has shape {fmt(a)}: the sizes after the first ind={ind} "
             f"must be known and not 0", input=0)
    if front != back:
        fail(f"{c.input_label(0)} has shape {fmt(a)}, which is not square for ind={ind}: "
             f"the product of the first {ind} sizes ({front}) must equal the product of "
             f"the rest ({back}) (unknown sizes counting as -1)", attr="ind")


# ======================================================================= tensorsolve
def _a_axes(c: Call, nd: int) -> list[int]:
    """A's axes with ``a_axes`` moved to the end (each read modulo A's rank)."""
    given = [(int(x) + nd) % nd if int(x) + nd >= 0 else -((-(int(x) + nd)) % nd)
             for x in (c.p["a_axes"] or ())]
    if len(set(given)) != len(given) or any(not 0 <= x < nd for x in given):
        fail(f"a_axes {fmt(tuple(c.p['a_axes']))} repeats an axis or names one below "
             f"{-nd}: give distinct axes of A's {nd} dimensions", attr="a_axes")
    return [x for x in range(nd) if x not in given] + given


def tensorsolve_shape(c: Call) -> None:
    """``TensorsolveOpShape``: A (its ``a_axes`` moved to the end) splits into B's
    dimensions and the solution's; the two products must agree (as given) and equal B's
    number of elements (B fully known)."""
    count(c, ("a", "b"))
    a, b = c.ins
    if a is None or b is None:
        return
    if not a and not b:
        c.set_out(0, b)
    elif not a or not b:
        big = 1 if not a else 0
        if size_of(c, big, "tensorsolve of a scalar") != 1:
            fail(f"{c.input_label(big)} has shape {fmt(c.ins[big])}, but with a scalar "
                 f"{'a' if big else 'b'} it must have exactly one element", input=big)
        c.set_out(0, a)
    else:
        order = _a_axes(c, len(a))
        at = [a[x] for x in order]
        temp = len(b) if len(a) > len(b) else len(b) - len(a)
        front = back = 1
        for i, d in enumerate(at):
            if i < temp:
                front *= d
            else:
                back *= d
        if front != back:
            fail(f"{c.input_label(0)} has shape {fmt(a)}, which is not square: the product "
                 f"of the sizes matching b ({front}) must equal the product of the rest "
                 f"({back}) (unknown sizes counting as -1)", input=0)
        if back != size_of(c, 1, "tensorsolve"):
            fail(f"{c.input_label(1)} has shape {fmt(b)}, whose {size_of(c, 1, '')} "
                 f"elements do not match a {fmt(a)} ({back})", input=1)
        c.set_out(0, tuple(at[temp:]))


def tensorsolve_type(c: Call) -> None:
    """``TensorsolveOpType``: neither float16; float32 and float32 give float32,
    anything else float64."""
    count(c, ("a", "b"))
    for i in range(2):
        if c.ins[i] == "float16":
            fail(f"{c.input_label(i)} has type float16, which numpy linear algebra does "
                 f"not support: use float32 or float64", input=i)
    both = c.ins[0] == "float32" and c.ins[1] == "float32"
    c.set_out(0, "float32" if both else "float64")


def tensorinv_type(c: Call) -> None:
    """``TensorinvOpType``: not float16; float32 gives float32, anything else float64."""
    count(c, ("a",))
    if c.ins[0] == "float16":
        fail(f"{c.input_label(0)} has type float16, which numpy linear algebra does not "
             f"support: use float32 or float64", input=0)
    c.set_out(0, "float32" if c.ins[0] == "float32" else "float64")


RULES: dict[str, Rule] = {
    **rules(["_npi_pinv", "_npi_pinv_scalar_rcond"], pinv_shape, pinv_type),
    **rules(["_npi_svd"], svd_shape, counted(("A",), 3)),
    **rules(["_npi_tensorinv"], tensorinv_shape, tensorinv_type),
    **rules(["_npi_tensorsolve"], tensorsolve_shape, tensorsolve_type),
}
