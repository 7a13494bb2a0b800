"""Rules for the products: ``dot`` (which refuses an unknown contracted dimension),
``batch_dot``, ``_linalg_gemm``, ``_linalg_gemm2``, ``khatri_rao`` and the interleaved
attention matmuls (``_contrib_interleaved_matmul_selfatt_qk`` ...).  The linear-algebra
ops refuse matrix sizes past a C++ int (``check_large_dim``).  Must not import MXNet or
Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, elemwise_type, fmt
from mxexplorer.core.ops.broadcast.helpers import (
    BINARY_TYPE,
    UNARY_TYPE,
    _cdiv,
    _cmod,
    _count,
    _counted,
    _fail,
    _put_out,
    _rank,
    _rules,
)

#: ``check_large_dim``: the linear-algebra ops refuse matrix sizes past a C++ int
INT_MAX = (1 << 31) - 1


# ======================================================================== dtype rules
def khatri_rao_type(c: Call) -> None:
    """Every input and the output of one dtype (no count check)."""
    elemwise_type(c)


# =========================================================================== products
def dot_shape(c: Call) -> None:
    """``DotShape``: once both ranks are known, the contracted sizes (``lhs``'s last, or
    first with ``transpose_a``; ``rhs``'s first, or last with ``transpose_b``) must be known
    and equal; the output is ``lhs`` without it followed by ``rhs`` without it (two
    vectors give ``(1,)`` and cannot be transposed)."""
    _count(c, ("lhs", "rhs"))
    lhs, rhs = c.ins
    if lhs is None or rhs is None:
        return
    ta, tb = bool(c.p["transpose_a"]), bool(c.p["transpose_b"])
    for i, s in enumerate((lhs, rhs)):
        if not s:
            _fail(f"{c.input_label(i)} is a scalar (0-d), which dot does not take",
                  input=i)
    if len(lhs) == 1 and len(rhs) == 1:
        if ta or tb:
            _fail("dot of two vectors cannot transpose them: set transpose_a and "
                  "transpose_b to false", attr="transpose_a" if ta else "transpose_b")
        if lhs[0] != rhs[0]:
            _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} have "
                  f"different lengths: the dot of two vectors needs equal lengths", input=1)
        c.set_out(0, (1,))
        return
    lk = lhs[0] if ta else lhs[-1]
    rk = rhs[-1] if tb else rhs[0]
    for k, side, i in ((lk, "lhs", 0), (rk, "rhs", 1)):
        if k < 0:
            _fail(f"{c.input_label(i)} has shape {fmt(c.ins[i])}, whose contracted "
                  f"dimension is unknown: dot needs the size it sums over ({side})",
                  input=i)
        if k == 0:
            break
    else:
        if lk != rk:
            _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} cannot "
                  f"be multiplied: the lhs sums over {lk} elements "
                  f"({'first' if ta else 'last'} dimension{', transpose_a' if ta else ''}) "
                  f"but the rhs over {rk} ({'last' if tb else 'first'} dimension"
                  f"{', transpose_b' if tb else ''})", input=1)
    out: tuple[int, ...] = ()
    if len(lhs) > 1:
        out += lhs[1:] if ta else lhs[:-1]
    if len(rhs) > 1:
        out += rhs[:-1] if tb else rhs[1:]
    c.set_out(0, out)


def batch_dot_shape(c: Call) -> None:
    """``BatchDotShape``: both of one rank of 3 or more, with equal batch dimensions
    (compared as given); nothing until ``lhs``'s last and ``rhs``'s second-to-last sizes
    are known; the contracted sizes (per ``transpose_a``/``transpose_b``) equal."""
    _count(c, ("lhs", "rhs"))
    lhs, rhs = c.ins
    if lhs is None or rhs is None:
        return
    if not (len(lhs) >= 3 and len(rhs) >= 3 and len(lhs) == len(rhs)):
        _fail(f"batch_dot multiplies two arrays of one rank of 3 or more (batch, rows, "
              f"columns), but {c.input_label(0)} has shape {fmt(lhs)} and "
              f"{c.input_label(1)} {fmt(rhs)}", input=0 if len(lhs) < 3 else 1)
    n = len(lhs)
    if lhs[-1] < 0 or rhs[-2] < 0:
        return
    if lhs[:-2] != rhs[:-2]:
        _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} have "
              f"different batch dimensions {fmt(lhs[:-2])} and {fmt(rhs[:-2])}: batch_dot "
              f"needs them equal (both known or both unknown)", input=1)
    ta, tb = bool(c.p["transpose_a"]), bool(c.p["transpose_b"])
    m, lk = (lhs[n - 1], lhs[n - 2]) if ta else (lhs[n - 2], lhs[n - 1])
    cols, rk = (rhs[n - 2], rhs[n - 1]) if tb else (rhs[n - 1], rhs[n - 2])
    if lk != rk:
        _fail(f"{c.input_label(0)} {fmt(lhs)} and {c.input_label(1)} {fmt(rhs)} cannot be "
              f"multiplied: the lhs matrices sum over {'?' if lk < 0 else lk} elements"
              f"{' (transpose_a)' if ta else ''} but the rhs matrices over "
              f"{'?' if rk < 0 else rk}{' (transpose_b)' if tb else ''}", input=1)
    c.set_out(0, lhs[:-2] + (m, cols))


def _gemm(c: Call, three: bool) -> None:
    """``LaMatrixMultMacOpShape`` (``_linalg_gemm``, ``_linalg_gemm2``): once A and B have
    one rank of 2 or more, the matrices lie on ``axis`` (rows) and the last axis; the
    other dimensions must be equal (as given), the contracted sizes too; the output (and
    gemm's C) is the product's shape.  Otherwise nothing (no backward inference)."""
    _count(c, ("A", "B", "C") if three else ("A", "B"))
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None or len(a) < 2 or len(a) != len(b):
        return
    n = len(a)
    param = int(c.p["axis"])
    axis = n + param if param < 0 else param
    if not 0 <= axis < n - 1:
        _fail(f"axis {param} cannot be the row axis of {n}-d matrices: use an axis from "
              f"{-n} to -2 or from 0 to {n - 2}", attr="axis")
    for d in (a[axis], a[n - 1], b[axis], b[n - 1]):
        if d > INT_MAX:
            _fail(f"a matrix size {d} is larger than {INT_MAX}, which linalg supports")
    ta, tb = bool(c.p["transpose_a"]), bool(c.p["transpose_b"])
    out = list(a)
    for i in range(n - 1):
        if i != axis and a[i] != b[i]:
            _fail(f"{c.input_label(0)} {fmt(a)} and {c.input_label(1)} {fmt(b)} differ in "
                  f"dimension {i}: apart from the matrix axes ({axis} and {n - 1}) they "
                  f"must be equal (both known or both unknown)", input=1)
    lk = a[axis] if ta else a[n - 1]
    rk = b[n - 1] if tb else b[axis]
    if lk != rk:
        _fail(f"{c.input_label(0)} {fmt(a)} and {c.input_label(1)} {fmt(b)} cannot be "
              f"multiplied: A's matrices sum over {'?' if lk < 0 else lk} elements"
              f"{' (transpose_a)' if ta else ''}, B's over {'?' if rk < 0 else rk}"
              f"{' (transpose_b)' if tb else ''}", input=1)
    out[axis] = a[n - 1] if ta else a[axis]
    out[n - 1] = b[axis] if tb else b[n - 1]
    c.set_out(0, tuple(out))
    if three:
        c.set_in(2, tuple(out), "A times B gives")


def gemm_shape(c: Call) -> None:
    """``_linalg_gemm``: A times B (per ``transpose_a``/``transpose_b``, rows on
    ``axis``), and C of the product's shape."""
    _gemm(c, True)


def gemm2_shape(c: Call) -> None:
    """``_linalg_gemm2``: A times B (per ``transpose_a``/``transpose_b``, rows on
    ``axis``)."""
    _gemm(c, False)


def khatri_rao_shape(c: Call) -> None:
    """``KhatriRaoShape``: every input needs a known rank of 2 or more (only the first two
    dimensions count); all have one number of columns (as given, unknown or not); the
    output is (product of the row counts, columns), computed as C++ does (an unknown row
    count is -1)."""
    if not c.ins:
        _fail("khatri_rao needs at least one input matrix", attr="num_args")
    n_args = c.p.get("num_args")
    if n_args is not None and n_args != len(c.ins):
        _fail(f"khatri_rao has {len(c.ins)} inputs, but num_args={n_args}: give as many "
              f"inputs as num_args", attr="num_args")
    rows = 1
    cols = None
    for i, s in enumerate(c.ins):
        if s is None or len(s) < 2:
            _fail(f"{c.input_label(i)} has {_rank(s)}, but khatri_rao needs matrices "
                  f"(2-d) of known shape", input=i)
        assert s is not None
        if cols is None:
            cols = s[1]
        if s[1] != cols:
            _fail(f"{c.input_label(i)} has shape {fmt(s)}, but the first matrix has "
                  f"{'?' if cols < 0 else cols} columns: khatri_rao needs the same number "
                  f"of columns in every matrix", input=i)
        rows *= s[0]
    assert cols is not None
    if rows > INT_MAX or rows < -INT_MAX - 1:
        _fail(f"khatri_rao's {rows} rows overflow a C++ int")
    _put_out(c, 0, (rows, cols), "= (product of the row counts, columns), an "
             "unknown row count counting as -1")


def _three_d(c: Call, i: int, layout: str) -> Shape:
    s: MaybeShape = c.ins[i]
    if s is None or len(s) != 3:
        _fail(f"{c.input_label(i)} has {_rank(s)}, but {c.op} needs a 3-d input "
              f"({layout})", input=i)
    assert s is not None
    return s


def _heads(c: Call) -> int:
    return int(c.p["heads"])


def selfatt_qk_shape(c: Call) -> None:
    """``_contrib_interleaved_matmul_selfatt_qk``: 3-d (sequence, batch, 3 * heads *
    head size) gives (batch * heads, sequence, sequence)."""
    _count(c, ("queries_keys_values",))
    qkv = _three_d(c, 0, "sequence, batch, 3 * projection")
    _put_out(c, 0, (_heads(c) * qkv[1], qkv[0], qkv[0]), f"= (batch * heads, sequence, "
             f"sequence) with heads={_heads(c)} (an unknown batch counts as -1)", attr="heads")


def selfatt_valatt_shape(c: Call) -> None:
    """``_contrib_interleaved_matmul_selfatt_valatt``: the attention (batch * heads,
    sequence, sequence) over the 3-d interleaved projections (sequence, batch, 3 * proj)
    gives (sequence, batch, proj)."""
    _count(c, ("queries_keys_values", "attention"))
    qkv = _three_d(c, 0, "sequence, batch, 3 * projection")
    att = _three_d(c, 1, "batch * heads, sequence, sequence")
    if qkv[0] != att[1] or qkv[0] != att[2]:
        _fail(f"{c.input_label(1)} has shape {fmt(att)}, but the sequence length of "
              f"{c.input_label(0)} {fmt(qkv)} is {fmt(qkv[:1])[1:-2]}: the attention's "
              f"last two dimensions must both be it (as given, known or not)", input=1)
    if _cmod(qkv[2], 3) != 0:
        _fail(f"{c.input_label(0)} has shape {fmt(qkv)}: its last dimension "
              f"({'unknown' if qkv[2] < 0 else qkv[2]}) must be a known multiple of 3 "
              f"(queries, keys and values)", input=0)
    _put_out(c, 0, (qkv[0], qkv[1], _cdiv(qkv[2], 3)))


def encdec_qk_shape(c: Call) -> None:
    """``_contrib_interleaved_matmul_encdec_qk``: queries (sequence, batch, proj) and
    interleaved keys/values (kv sequence, batch, 2 * proj) give (batch * heads,
    sequence, kv sequence)."""
    _count(c, ("queries", "keys_values"))
    q = _three_d(c, 0, "sequence, batch, projection")
    kv = _three_d(c, 1, "sequence, batch, 2 * projection")
    if q[2] * 2 != kv[2]:
        _fail(f"{c.input_label(1)} has shape {fmt(kv)}, but the queries {fmt(q)} need "
              f"keys and values of twice their last dimension (known)", input=1)
    if q[1] != kv[1]:
        _fail(f"{c.input_label(1)} has shape {fmt(kv)}, but the queries {fmt(q)} have "
              f"batch size {fmt(q[1:2])[1:-2]}: both need one batch size (as given, known "
              f"or not)", input=1)
    _put_out(c, 0, (q[1] * _heads(c), q[0], kv[0]), f"= (batch * heads, sequence, kv "
             f"sequence) with heads={_heads(c)} (an unknown batch counts as -1)", attr="heads")


def encdec_valatt_shape(c: Call) -> None:
    """``_contrib_interleaved_matmul_encdec_valatt``: the attention (batch * heads,
    sequence, kv sequence) over the interleaved keys/values (kv sequence, batch,
    2 * proj) gives (sequence, batch, proj)."""
    _count(c, ("keys_values", "attention"))
    kv = _three_d(c, 0, "sequence, batch, 2 * projection")
    att = _three_d(c, 1, "batch * heads, sequence, kv sequence")
    if kv[0] != att[2]:
        _fail(f"{c.input_label(1)} has shape {fmt(att)}, but the keys and values {fmt(kv)} "
              f"have sequence length {fmt(kv[:1])[1:-2]}: the attention's last dimension "
              f"must be it (as given, known or not)", input=1)
    if kv[1] * _heads(c) != att[0]:
        _fail(f"{c.input_label(1)} has shape {fmt(att)}, but the keys and values {fmt(kv)} "
              f"with heads={_heads(c)} need an attention of batch * heads = "
              f"{'?' if kv[1] < 0 else kv[1] * _heads(c)} in its first dimension",
              attr="heads", input=1)
    _put_out(c, 0, (att[1], kv[1], _cdiv(kv[2], 2)))


RULES: dict[str, Rule] = {
    **_rules(("dot",), dot_shape, BINARY_TYPE),
    **_rules(("batch_dot",), batch_dot_shape, BINARY_TYPE),
    **_rules(("_linalg_gemm",), gemm_shape, _counted(("A", "B", "C"))),
    **_rules(("_linalg_gemm2",), gemm2_shape, _counted(("A", "B"))),
    **_rules(("khatri_rao",), khatri_rao_shape, khatri_rao_type),
    **_rules(("_contrib_interleaved_matmul_selfatt_qk",), selfatt_qk_shape, UNARY_TYPE),
    **_rules(("_contrib_interleaved_matmul_selfatt_valatt",), selfatt_valatt_shape,
             _counted(("queries_keys_values", "attention"))),
    **_rules(("_contrib_interleaved_matmul_encdec_qk",), encdec_qk_shape,
             _counted(("queries", "keys_values"))),
    **_rules(("_contrib_interleaved_matmul_encdec_valatt",), encdec_valatt_shape,
             _counted(("keys_values", "attention"))),
}
