"""Rules for the numpy-style products and linear algebra: ``_np_dot``, ``_npi_matmul``,
``_npi_tensordot`` (and ``_int_axes``), ``_npi_einsum``, ``_npi_solve``,
``_npi_cholesky``, ``_npi_eig``/``_npi_eigh`` and ``_npi_eigvals``/``_npi_eigvalsh``.
Where MXNet's behaviour is undefined (``_npi_tensordot`` with repeated or out-of-range
axes) the engine refuses in plain words.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, MaybeShape, Rule, Shape, fmt, known, table
from mxexplorer.core.ops.numpy_ops.helpers import _MAX_ELEMENTS, FAMILY, _count, _label, same_shape


# ======================================================================== products
def _in(c: Call, i: int) -> Shape:
    s: MaybeShape = c.ins[i]
    assert s is not None
    return s


def dot_shape(c: Call) -> None:
    """_np_dot: numpy dot (vector inner product, matrix product, scaling by a scalar,
    sum over a's last axis and b's second-to-last), both ways where MXNet does."""
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None:
        return
    if len(a) == 1 and len(b) == 1:
        c.set_in(0, b, "the other vector has shape")
        c.set_in(1, c.ins[0], "the other vector has shape")
        c.set_out(0, ())
    elif len(a) == 2 and len(b) == 2:
        c.set_in(0, (-1, b[0]), "b's first dimension is")
        c.set_in(1, (_in(c, 0)[1], -1), "a's last dimension is")
        c.set_out(0, (_in(c, 0)[0], _in(c, 1)[1]))
    elif len(a) == 0 or len(b) == 0:
        c.set_out(0, b if len(a) == 0 else a)
    elif len(b) == 1:
        c.set_in(0, (-1,) * (len(a) - 1) + (b[0],), "b's length is")
        a = _in(c, 0)
        c.set_in(1, (a[-1],), "a's last dimension is")
        c.set_out(0, a[:-1])
    else:
        c.set_in(0, (-1,) * (len(a) - 1) + (b[-2],), "b's second-to-last dimension is")
        a = _in(c, 0)
        c.set_in(1, (-1,) * (len(b) - 2) + (a[-1], -1), "a's last dimension is")
        a, b = _in(c, 0), _in(c, 1)
        c.set_out(0, a[:-1] + b[:-2] + (b[-1],))


def matmul_shape(c: Call) -> None:
    """_npi_matmul: numpy matmul (no scalars; 1-d operands promoted; stacks of matrices
    broadcast, an unknown batch dimension against a known one other than 1 refused, as
    in MXNet)."""
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None:
        return
    if len(a) == 0 or len(b) == 0:
        c.fail(f"{_label(c, 0 if len(a) == 0 else 1)} is a scalar: matmul multiplies "
               f"arrays of 1 or more dimensions (use multiply for scalars)",
               input=0 if len(a) == 0 else 1)
    if len(a) == 1 and len(b) == 1:
        c.set_in(0, b, "the other vector has shape")
        c.set_in(1, c.ins[0], "the other vector has shape")
        c.set_out(0, ())
    elif len(a) == 2 and len(b) == 2:
        c.set_in(0, (-1, b[0]), "b's first dimension is")
        c.set_in(1, (_in(c, 0)[1], -1), "a's last dimension is")
        c.set_out(0, (_in(c, 0)[0], _in(c, 1)[1]))
    elif len(b) == 1:
        c.set_in(0, (-1,) * (len(a) - 1) + (b[0],), "b's length is")
        a = _in(c, 0)
        c.set_in(1, (a[-1],), "a's last dimension is")
        c.set_out(0, a[:-1])
    elif len(a) == 1:
        c.set_in(1, (-1,) * (len(b) - 2) + (a[0], -1), "a's length is")
        b = _in(c, 1)
        c.set_in(0, (b[-2],), "b's second-to-last dimension is")
        c.set_out(0, b[:-2] + (b[-1],))
    else:
        c.set_in(0, (-1,) * (len(a) - 1) + (b[-2],), "b's second-to-last dimension is")
        a = _in(c, 0)
        c.set_in(1, (-1,) * (len(b) - 2) + (a[-1], -1), "a's last dimension is")
        a, b = _in(c, 0), _in(c, 1)
        n = max(len(a), len(b))
        out = [-1] * n
        out[-1], out[-2] = b[-1], a[-2]
        for p in range(n - 3, -1, -1):
            pa, pb = p - (n - len(a)), p - (n - len(b))
            if pa >= 0 and pb >= 0:
                if a[pa] == 1:
                    out[p] = b[pb]
                elif b[pb] == 1:
                    out[p] = a[pa]
                else:
                    if a[pa] != b[pb]:
                        c.fail(f"the stacks of matrices {fmt(a)} and {fmt(b)} cannot be "
                               f"broadcast together: {fmt((a[pa],))[1:-2]} against "
                               f"{fmt((b[pb],))[1:-2]} (each pair of batch dimensions must be "
                               f"equal, or one of them 1, and known)")
                    out[p] = b[pb]
            elif pa >= 0:
                out[p] = a[pa]
            elif pb >= 0:
                out[p] = b[pb]
        c.set_out(0, tuple(out))


def _tensordot(c: Call, a_sum: list[int], b_sum: list[int]) -> None:
    a, b = _in(c, 0), _in(c, 1)
    for axes, nd, attr in ((a_sum, len(a), "a_axes_summed"), (b_sum, len(b),
                                                                 "b_axes_summed")):
        if len(set(axes)) != len(axes) or any(not 0 <= x < nd for x in axes):
            c.fail(f"{attr} must name distinct axes of a {nd}-d input", attr=attr)
    a_rem = [i for i in range(len(a)) if i not in a_sum]
    b_rem = [i for i in range(len(b)) if i not in b_sum]
    if len(a_sum) != len(b_sum):
        c.fail(f"{len(a_sum)} axes of a are summed against {len(b_sum)} of b: give as many "
               f"of each", attr="b_axes_summed")
    out = tuple(a[i] for i in a_rem) + tuple(b[i] for i in b_rem)
    c.set_out(0, out)
    out = c.outs[0]
    assert out is not None
    t1 = [-1] * len(a)
    for k, i in enumerate(a_rem):
        t1[i] = out[k]
    for i, j in zip(a_sum, b_sum):
        t1[i] = b[j]
    c.set_in(0, tuple(t1), "the summed axes of b and the output give")
    a = _in(c, 0)
    t2 = [-1] * len(b)
    for k, i in enumerate(b_rem):
        t2[i] = out[len(a_rem) + k]
    for i, j in zip(a_sum, b_sum):
        t2[j] = a[i]
    c.set_in(1, tuple(t2), "the summed axes of a and the output give")


def _tensordot_scalar(c: Call) -> bool:
    a, b = c.ins[0], c.ins[1]
    if a is None or b is None:
        return True
    if len(a) == 0:
        c.set_out(0, b)
        c.set_in(1, c.outs[0])
        return True
    if len(b) == 0:
        c.set_out(0, a)
        c.set_in(0, c.outs[0])
        return True
    return False


def tensordot_shape(c: Call) -> None:
    """_npi_tensordot: sum over ``a_axes_summed`` of a against ``b_axes_summed`` of b."""
    if _tensordot_scalar(c):
        return
    na, nb = len(_in(c, 0)), len(_in(c, 1))
    # MXNet wraps an axis modulo the rank ((axis + ndim) % ndim)
    a_sum = [(x + na) % na if x >= -na else x for x in c.p["a_axes_summed"] or ()]
    b_sum = [(x + nb) % nb if x >= -nb else x for x in c.p["b_axes_summed"] or ()]
    _tensordot(c, a_sum, b_sum)


def tensordot_int_shape(c: Call) -> None:
    """_npi_tensordot_int_axes: the last ``axes`` axes of a against the first of b."""
    if _tensordot_scalar(c):
        return
    n = c.p["axes"]
    na, nb = len(_in(c, 0)), len(_in(c, 1))
    if n > na or n > nb:
        c.fail(f"axes={n} is more than the inputs' dimensions ({na} and {nb})", attr="axes")
    _tensordot(c, [na - n + i for i in range(max(n, 0))], list(range(max(n, 0))))


# ========================================================================== einsum
_EINSUM_SYMBOLS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _einsum_parse(c: Call, subscripts: str, shapes: list[Shape]) -> tuple[list[str], str]:
    """MXNet's ``_parse_einsum_input``: the input terms and the output term, ellipses
    expanded."""
    def refuse(why: str) -> None:
        c.fail(f"subscripts={subscripts!r}: {why}", attr="subscripts")
    if not shapes:
        refuse("einsum needs at least one operand")
    text = subscripts.replace(" ", "")
    for ch in text:
        if ch not in ".,->" and ch not in _EINSUM_SYMBOLS:
            refuse(f"{ch!r} is not a letter")
    if "-" in text or ">" in text:
        if text.count("-") > 1 or text.count(">") > 1 or text.count("->") != 1:
            refuse("it may contain one '->' only")
    if "." in text:
        used = {ch for ch in text if ch not in ".,->"}
        free = "".join(ch for ch in _EINSUM_SYMBOLS if ch not in used)
        longest = 0
        if "->" in text:
            inputs, output = text.split("->")
            terms = inputs.split(",")
        else:
            terms, output = text.split(","), None
        for i, term in enumerate(terms):
            if "." in term:
                if term.count(".") != 3 or term.count("...") != 1:
                    refuse("an ellipsis is written '...'")
                if i >= len(shapes):
                    refuse("it has more terms than there are operands")
                n = 0 if len(shapes[i]) == 0 else max(len(shapes[i]), 1) - (len(term) - 3)
                longest = max(longest, n)
                if n < 0:
                    refuse(f"operand {i} has fewer dimensions than term {term!r} names")
                terms[i] = term.replace("...", free[len(free) - n:] if n else "")
        out_ellipsis = free[len(free) - longest:] if longest else ""
        text = ",".join(terms)
        if output is not None:
            if "..." not in output:
                refuse("the output needs '...' when the inputs have one")
            text += "->" + output.replace("...", out_ellipsis, 1)
        else:
            letters = sorted(ch for ch in text if ch != ",")
            single = [ch for ch in letters if letters.count(ch) == 1 and ch not in out_ellipsis]
            text += "->" + out_ellipsis + "".join(single)
    if "->" in text:
        left, right = text.split("->")
    else:
        left = text
        letters = sorted(ch for ch in text if ch != ",")
        right = "".join(ch for ch in letters if letters.count(ch) == 1)
    for ch in right:
        if ch not in left:
            refuse(f"the output letter {ch!r} does not appear in the inputs")
    if left.count(",") + 1 != len(shapes):
        refuse(f"it has {left.count(',') + 1} terms for {len(shapes)} operands (num_args)")
    return left.split(","), right


def einsum_shape(c: Call) -> None:
    """_npi_einsum: the output's letters' sizes, once every operand is fully known."""
    if len(c.ins) != c.p["num_args"]:
        c.fail(f"has {len(c.ins)} inputs, but num_args={c.p['num_args']}", attr="num_args")
    if not all(known(s) for s in c.ins):
        return
    shapes = [s for s in c.ins if s is not None]
    terms, output = _einsum_parse(c, c.p["subscripts"], shapes)
    sizes: dict[str, int] = {}
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        if len(shape) != len(term):
            c.fail(f"term {term!r} names {len(term)} axes, but {_label(c, i)} has shape "
                   f"{fmt(shape)}", attr="subscripts")
        for ch, d in zip(term, shape):
            if ch in sizes:
                if sizes[ch] == 1:
                    sizes[ch] = d
                if d != 1 and d != sizes[ch]:
                    c.fail(f"subscripts={c.p['subscripts']!r}: letter {ch!r} is {sizes[ch]} "
                           f"in one place and {d} in {_label(c, i)}; the sizes of one "
                           f"letter must match (or be 1)",
                           attr="subscripts")
            else:
                sizes[ch] = d
    out = tuple(sizes[ch] for ch in output)
    c.set_out(0, out)
    for i, shape in enumerate(shapes):
        if _count(shape) > _MAX_ELEMENTS:
            c.fail(f"{_label(c, i)} has more than 2**31 elements", input=i)
    if _count(out) > _MAX_ELEMENTS:
        c.fail("the output would have more than 2**31 elements", attr="subscripts")


# ========================================================================== linalg
def _square_check(c: Call, s: Shape, what: str) -> None:
    if len(s) < 2:
        c.fail(f"{what} has shape {fmt(s)}; it must be 2-d or more", input=0)
    if s[-2] != s[-1]:
        c.fail(f"{what} has shape {fmt(s)}; its last two dimensions must be equal (square "
               f"matrices, and known)", input=0)


def solve_shape(c: Call) -> None:
    """_npi_solve: A (..., n, n) and B (..., n) or (..., n, k); the output is B's shape
    (unknown sizes must agree as unknown, as in MXNet)."""
    a, b = c.ins[0], c.ins[1]
    if a is None:
        return
    _square_check(c, a, _label(c, 0))
    nb = len(b) if b is not None else -1
    if len(a) == nb + 1:
        assert b is not None
        if a[-1] != b[-1]:
            c.fail(f"{_label(c, 0)} {fmt(a)} and {_label(c, 1)} {fmt(b)} disagree on the "
                   f"last dimension", input=1)
    elif len(a) == nb:
        assert b is not None
        if a[-1] != b[-2]:
            c.fail(f"{_label(c, 0)} {fmt(a)} and {_label(c, 1)} {fmt(b)} disagree on the "
                   f"matrix size", input=1)
    else:
        c.fail(f"{_label(c, 1)} must have the rank of A or one less (A is {fmt(a)}, B "
               f"{fmt(b)})", input=1)
    assert b is not None
    for i in range(len(a) - 2):
        if a[i] != b[i]:
            c.fail(f"{_label(c, 0)} {fmt(a)} and {_label(c, 1)} {fmt(b)} disagree on the "
                   f"batch dimensions", input=1)
    c.set_out(0, b)


def linalg_type(c: Call) -> None:
    """float16 refused; float32 inputs stay float32, anything else gives float64."""
    for i, t in enumerate(c.ins):
        if t == "float16":
            c.fail(f"{_label(c, i)} is float16, which linalg does not support: use float32 "
                   f"or float64", input=i)
    out = c.ins[-1] if all(t == "float32" for t in c.ins) else "float64"
    for i in range(len(c.outs)):
        c.set_out(i, out)


def cholesky_shape(c: Call) -> None:
    s = c.ins[0]
    if s is None or len(s) < 2:
        c.fail(f"{_label(c, 0)} must be known to be 2-d or more", input=0)
    same_shape(c)


def eig_shape(c: Call) -> None:
    """_npi_eig, _npi_eigh: eigenvalues (A's shape less its last axis) and eigenvectors
    (A's shape); backwards from the outputs when A is not fully known."""
    a = c.ins[0]
    w, v = c.outs[0], c.outs[1]
    if known(a):
        assert a is not None
        _square_check(c, a, _label(c, 0))
        c.set_out(0, a[:-1])
        c.set_out(1, a)
        return
    if known(w) and known(v):
        assert w is not None and v is not None
        if len(v) < 2 or v[-2] != v[-1] or len(w) + 1 != len(v) or w != v[:-1]:
            c.fail(f"the outputs' shapes {fmt(w)} and {fmt(v)} do not fit eigenvalues and "
                   f"eigenvectors")
        c.set_in(0, v, "the eigenvectors have shape")
    elif known(w):
        assert w is not None
        if len(w) < 1:
            c.fail("the eigenvalues must be 1-d or more")
        full = w + (w[-1],)
        c.set_in(0, full, "the eigenvalues give")
        c.set_out(1, full)
    else:
        if v is None or len(v) < 2 or v[-2] != v[-1]:
            c.fail(f"{_label(c, 0)} must be known (square matrices) for eig", input=0)
        assert v is not None
        c.set_in(0, v, "the eigenvectors have shape")
        c.set_out(0, v[:-1])


def eigvals_shape(c: Call) -> None:
    a, w = c.ins[0], c.outs[0]
    if known(a):
        assert a is not None
        _square_check(c, a, _label(c, 0))
        c.set_out(0, a[:-1])
    elif known(w):
        assert w is not None
        if len(w) < 1:
            c.fail("the eigenvalues must be 1-d or more")
        c.set_in(0, w + (w[-1],), "the eigenvalues give")


RULES: dict[str, Rule] = {
    **table(FAMILY, ("_np_dot",), dot_shape),
    **table(FAMILY, ("_npi_matmul",), matmul_shape),
    **table(FAMILY, ("_npi_tensordot",), tensordot_shape),
    **table(FAMILY, ("_npi_tensordot_int_axes",), tensordot_int_shape),
    **table(FAMILY, ("_npi_einsum",), einsum_shape),
    **table(FAMILY, ("_npi_solve",), solve_shape, linalg_type),
    **table(FAMILY, ("_npi_cholesky",), cholesky_shape),
    **table(FAMILY, ("_npi_eig", "_npi_eigh"), eig_shape, linalg_type),
    **table(FAMILY, ("_npi_eigvals", "_npi_eigvalsh"), eigvals_shape, linalg_type),
}
