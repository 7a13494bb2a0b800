"""Rules for MXNet 1.9.1's ``_linalg_*`` ops (``src/operator/tensor/la_op.h``) but the
products ``_linalg_gemm``/``_linalg_gemm2`` (in the broadcast family): the
factorizations (``potrf``, ``potri``, ``gelqf``, ``syevd``), ``inverse``, ``det`` and
``slogdet`` (with their hidden LU and pivot outputs), ``sumlogdiag``, ``syrk``, the
triangular products ``trmm``/``trsm``, and the diagonal and triangle makers and
extractors.

MXNet's checks compare sizes as given (an unknown size is -1 there), so several ops
refuse a matrix whose last sizes are not known (``extractdiag``, ``syevd``, a 2-d
``det``), and ``makediag``/``maketrian`` do arithmetic on an unknown last size; only
``potrf``/``potri``, ``gelqf``, ``syevd`` and ``trmm``/``trsm`` learn their input from
their outputs.  Must not import MXNet or Qt.
"""
from __future__ import annotations

import math

from mxexplorer.core.ops.base import Call, Conflict, MaybeShape, Rule, Shape, fmt, merge
from mxexplorer.core.ops.image_linalg.helpers import (
    INT_MAX,
    count,
    counted,
    dim,
    fail,
    int32,
    put_out,
    rules,
    short,
    size_of,
)


def _large(*dims: int) -> None:
    """``check_large_dim``."""
    for d in dims:
        if d > INT_MAX:
            fail(f"a matrix size {d} is larger than {INT_MAX}, which linalg supports")


def _outs(c: Call, n: int) -> None:
    if len(c.outs) != n:
        fail(f"has {len(c.outs)} outputs, but this layer makes {n}")


def _square_stack(c: Call, a: Shape) -> None:
    """Input 0 (``a``) is a stack of square matrices: 2 or more dimensions, the last two
    equal."""
    if len(a) < 2:
        fail(f"{c.input_label(0)} has shape {fmt(a)}, but {short(c.op)} needs matrices (2 or "
             f"more dimensions)", input=0)
    _square(c, 0, a)


def _square(c: Call, i: int, s: Shape, what: str = "square matrices") -> None:
    """The last two sizes equal, as given (unknown counts as -1)."""
    if s[-2] != s[-1]:
        fail(f"{c.input_label(i)} has shape {fmt(s)}, but {short(c.op)} needs {what}: its last "
             f"two dimensions must be equal (both known, or both unknown)", input=i)


# ================================================================== one-input shapes
def elemwise_shape(c: Call) -> None:
    """``ElemwiseShape<1, 1>`` (``potrf``, ``potri``): the output has the input's shape,
    each filling the other."""
    count(c, ("A",))
    _outs(c, 1)
    s: MaybeShape = None
    try:
        s = merge(merge(s, c.ins[0]), c.outs[0])
    except Conflict:
        fail(f"{c.input_label(0)} has shape {fmt(c.ins[0])}, but the output has "
             f"{fmt(c.outs[0])}: {short(c.op)} keeps its input's shape", input=0)
    c.set_in(0, s)
    c.set_out(0, s)


def inverse_shape(c: Call) -> None:
    """``InverseShape``: a stack of square matrices (rank 2 or more), kept as it is."""
    count(c, ("A",))
    a = c.ins[0]
    if a is None:
        return
    _square_stack(c, a)
    c.set_out(0, a)


def det_shape(c: Call) -> None:
    """``DetShape``: a stack of square matrices gives one value per matrix (a single
    matrix, whose shape must be known, gives (1,)); the hidden LU output has the input's
    shape, the pivots the input's shape but the last."""
    count(c, ("A",))
    n = 1 if c.op == "_linalg_det" else 2
    _outs(c, n + 2)
    a = c.ins[0]
    if a is None:
        return
    _square_stack(c, a)
    if len(a) == 2:
        out: Shape = (1,) if size_of(c, 0, f"{short(c.op)} of one matrix") else ()
    else:
        out = a[:-2]
    for i in range(n):
        c.set_out(i, out)
    c.set_out(n, a)
    c.set_out(n + 1, a[:-1])


def det_type(c: Call) -> None:
    """``DetType``: float32 or float64 (once known) for the values and the LU output,
    int32 for the pivots; nothing passed back."""
    count(c, ("A",))
    n = 1 if c.op == "_linalg_det" else 2
    _outs(c, n + 2)
    t = c.ins[0]
    if t is None:
        return
    if t not in ("float32", "float64"):
        fail(f"{c.input_label(0)} has type {t}, but {short(c.op)} works on float32 and float64 "
             f"only", input=0)
    for i in range(n + 1):
        c.set_out(i, t)
    c.set_out(n + 1, "int32")


def sumlogdiag_shape(c: Call) -> None:
    """``LaReduceShape<2>``: each matrix of a stack (rank 2 or more) gives one value;
    (1,) for a single matrix.  Nothing until the rank is known and 2 or more."""
    count(c, ("A",))
    a = c.ins[0]
    if a is None or len(a) < 2:
        return
    c.set_out(0, a[:-2] if len(a) > 2 else (1,))


def _diag_n(c: Call, a: Shape, offset: int, trian: bool) -> int:
    d = a[-1] - abs(offset)
    if int32(d) <= 0:
        what = "the triangle" if trian else "the diagonal"
        fail(f"{c.input_label(0)} has shape {fmt(a)}: {what} at offset {offset} of "
             f"{dim(a[-1])} x {dim(a[-1])} matrices is empty or not known (the size must "
             f"be known and larger than |offset|)", attr="offset")
    return int32(d)


def diag_trian_shape(c: Call) -> None:
    """``LaDiagTrianShape``: ``extractdiag``/``extracttrian`` take the diagonal (or
    triangle, packed) at ``offset`` of square matrices of known size; ``makediag`` and
    ``maketrian`` build square matrices from it (sizes computed as C++ does, an unknown
    size counting as -1).  Forward only."""
    count(c, ("A",))
    a = c.ins[0]
    if a is not None and len(a) == 0:
        return
    extract = c.op in ("_linalg_extractdiag", "_linalg_extracttrian")
    diag = c.op in ("_linalg_extractdiag", "_linalg_makediag")
    if a is None:
        fail(f"{c.input_label(0)} has an unknown shape, but {short(c.op)} needs its rank",
             input=0)
    assert a is not None
    offset = int(c.p["offset"])
    if extract:
        _square_stack(c, a)
        n = _diag_n(c, a, offset, not diag)
        put_out(c, 0, a[:-2] + ((n if diag else int32(n * (n + 1)) // 2),))
        return
    last = a[-1]
    if diag:
        side = int32(last + abs(offset))
    else:
        m = _trian_side(last)
        if m is None or int32(m * (m + 1)) // 2 != last:
            fail(f"{c.input_label(0)} has shape {fmt(a)}, but maketrian needs a last "
                 f"dimension that is a triangular number (1, 3, 6, 10 ...), known",
                 input=0)
        assert m is not None
        side = int32(m + abs(offset))
    put_out(c, 0, a[:-1] + (side, side), "(from an unknown size)")


def _trian_side(n: int) -> int | None:
    """``m`` with m (m + 1) / 2 == n as MXNet rounds it; None where its square root
    fails (a negative size)."""
    x = int32(8 * int32(n) + 1)
    if x < 0:
        return None
    return int(math.floor(0.5 + (math.sqrt(x) - 1.0) * 0.5))


def syrk_shape(c: Call) -> None:
    """``LaSyrkShape``: A times its transpose (``transpose``: the transpose times A):
    square matrices of A's rows (columns).  Forward only."""
    count(c, ("A",))
    a = c.ins[0]
    if a is None or len(a) < 2:
        return
    _large(a[-1], a[-2])
    k = a[-1] if c.p["transpose"] else a[-2]
    c.set_out(0, a[:-2] + (k, k))


def gelqf_shape(c: Call) -> None:
    """``LaLQFactShape``: A (rows <= columns, as given) gives Q of A's shape and L square
    of A's rows; from Q and L of one rank, A is Q."""
    count(c, ("A",))
    _outs(c, 2)
    a = c.ins[0]
    q, lo = c.outs
    if a is not None and len(a) >= 2:
        if not a[-2] <= a[-1]:
            fail(f"{c.input_label(0)} has shape {fmt(a)}, but gelqf needs at most as many "
                 f"rows as columns (compared as given, unknown counting as -1)", input=0)
        _large(a[-1])
        c.set_out(0, a)
        c.set_out(1, a[:-1] + (a[-2],))
        return
    if q is not None and lo is not None and len(q) >= 2 and len(q) == len(lo):
        if q[:-1] != lo[:-1]:
            fail(f"output Q {fmt(q)} and output L {fmt(lo)} must agree on every dimension "
                 f"but the last (as given)")
        if not q[-2] <= q[-1] or lo[-2] != lo[-1]:
            fail(f"output Q {fmt(q)} needs at most as many rows as columns and output L "
                 f"{fmt(lo)} square matrices (as given)")
        c.set_in(0, q, "output Q has")


def syevd_shape(c: Call) -> None:
    """``LaEigFactShape``: A's full shape must be known (MXNet counts its elements
    first); square matrices give U of A's shape and the eigenvalues L (A's shape but
    the last)."""
    count(c, ("A",))
    _outs(c, 2)
    if size_of(c, 0, "syevd") > INT_MAX:
        fail(f"{c.input_label(0)} has more than {INT_MAX} elements, which syevd does not "
             f"support", input=0)
    a = c.ins[0]
    assert a is not None
    u, lo = c.outs
    if len(a) >= 2:
        _square(c, 0, a)
        c.set_out(0, a)
        c.set_out(1, a[:-1])
        return
    if u is not None and lo is not None and len(u) >= 2 and len(u) == len(lo) + 1:
        if u[:-1] != lo or u[-2] != u[-1]:
            fail(f"output U {fmt(u)} must be square matrices and output L {fmt(lo)} U's "
                 f"shape but the last (as given)")
        c.set_in(0, u, "output U has")


def triangular_shape(c: Call) -> None:
    """``LaTriangMatrixMultOpShape`` (``trmm``, ``trsm``): square triangular A times B
    (B times A with ``rightside``; A transposed with ``transpose``), both of one rank,
    other dimensions equal (as given); without the inputs' ranks, both are learnt from
    the output."""
    count(c, ("A", "B"))
    a, b = c.ins
    right, trans = bool(c.p["rightside"]), bool(c.p["transpose"])
    if a is not None and b is not None and len(a) >= 2 and len(a) == len(b):
        _square(c, 0, a, "square (triangular) matrices")
        if a[:-2] != b[:-2]:
            fail(f"{c.input_label(0)} {fmt(a)} and {c.input_label(1)} {fmt(b)} differ "
                 f"before their last two dimensions: they must be equal there (as given)",
                 input=1)
        _large(b[-1], b[-2])
        if right:
            if a[-2] != b[-1]:
                fail(f"{c.input_label(1)} {fmt(b)} times {c.input_label(0)} {fmt(a)} "
                     f"(rightside): B's columns must equal A's size (as given)", input=1)
            out = a[:-2] + (b[-2], a[-2] if trans else a[-1])
        else:
            if b[-2] != a[-1]:
                fail(f"{c.input_label(0)} {fmt(a)} times {c.input_label(1)} {fmt(b)}: B's "
                     f"rows must equal A's size (as given)", input=1)
            out = a[:-2] + (a[-1] if trans else a[-2], b[-1])
        c.set_out(0, out)
        return
    o = c.outs[0]
    if o is not None and len(o) >= 2:
        batch = o[:-2]
        if right:
            a_back, b_back = batch + (o[-1], o[-1]), batch + (o[-2], o[-1])
        else:
            a_back, b_back = batch + (o[-2], o[-2]), batch + (o[-2], o[-1])
        c.set_in(0, a_back, "the output needs")
        c.set_in(1, b_back, "the output needs")


RULES: dict[str, Rule] = {
    **rules(["_linalg_potrf", "_linalg_potri"], elemwise_shape, counted(("A",), 1)),
    **rules(["_linalg_inverse"], inverse_shape, counted(("A",), 1)),
    **rules(["_linalg_det", "_linalg_slogdet"], det_shape, det_type),
    **rules(["_linalg_sumlogdiag"], sumlogdiag_shape, counted(("A",), 1)),
    **rules(["_linalg_extractdiag", "_linalg_makediag", "_linalg_extracttrian",
             "_linalg_maketrian"], diag_trian_shape, counted(("A",), 1)),
    **rules(["_linalg_syrk"], syrk_shape, counted(("A",), 1)),
    **rules(["_linalg_gelqf"], gelqf_shape, counted(("A",), 2)),
    **rules(["_linalg_syevd"], syevd_shape, counted(("A",), 2)),
    **rules(["_linalg_trmm", "_linalg_trsm"], triangular_shape, counted(("A", "B"), 1)),
}
