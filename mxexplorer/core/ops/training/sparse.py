"""Rules for the sparse-storage helpers and the data-dependent mask, as MXNet 1.9.1
infers their shapes and dtypes.

``_sparse_retain``: the output is the data's shape, both ways (the indices' shape is
free); the indices' dtype must be known when the op is reached, the output has the
data's dtype, both ways.  ``_contrib_getnnz``: a 2-d input (an unknown rank is refused);
the output is ``(1,)``, ``(columns,)`` or ``(rows,)`` for ``axis`` None, 0 or 1, int64.
``_scatter_set_nd``: lhs and output of one shape; the output is the ``shape``
attribute; once rhs, indices and output are fully known they must fit as for
``scatter_nd`` (rhs = indices' trailing dims + the output's dims past the indexed
ones); dtypes: lhs, output and rhs alike (rhs learns the output's only when the indices'
dtype is known).  ``_contrib_boolean_mask`` has no shape rule in MXNet (its output's
first dimension counts the mask's true values): its output stays unknown and so do
the layers that read it, as in MXNet; its dtype is the data's, both ways.
``_set_value`` (a legacy NDArray function that a symbol file may hold) has no shape
rule either, and MXNet's default dtype rule.  Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, fmt, known, no_shape, same_type
from mxexplorer.core.ops.training.helpers import (
    count,
    fail,
    label,
    name,
    ndim,
    no_negative,
    put,
    rules,
    show,
    unify,
)

_RETAIN = ("data", "indices")
_SCATTER = ("lhs", "rhs", "indices")


# ================================================================= sparse_retain
def retain_shape(c: Call) -> None:
    """``SparseRetainOpShape``: data and output of one shape."""
    count(c, _RETAIN)
    unify(c, [0], [0], _RETAIN)


def retain_dtype(c: Call) -> None:
    """``SparseRetainOpType``: the indices' dtype known; output = data, both ways."""
    count(c, _RETAIN)
    if c.ins[1] is None:
        fail(f"{label(c, 1, 'indices')} has an unknown dtype, but {name(c)} needs the "
             f"indices' dtype when it is reached: give the indices a dtype", input=1)
    unify(c, [0], [0], _RETAIN)


# ======================================================================= getnnz
def getnnz_shape(c: Call) -> None:
    """``NNZShape``: a 2-d (CSR) input; one count, or one per column or row."""
    count(c, ("data",))
    data = c.ins[0]
    if ndim(data) != 2:
        fail(f"{label(c, 0, 'data')} has {show(c, data)}, but {name(c)} counts the stored "
             f"values of a CSR matrix: it needs a known 2-d shape when it is reached",
             input=0)
    assert data is not None
    axis = c.p["axis"]
    if axis is None:
        put(c, 0, (1,), "(one count)")
    elif axis == 0:
        put(c, 0, (data[1],), "(one count per column)")
    elif axis == 1:
        put(c, 0, (data[0],), "(one count per row)")
    else:
        fail(f"axis={axis}, but {name(c)} counts over the whole matrix (None), per column "
             f"(0) or per row (1)", attr="axis")


def getnnz_dtype(c: Call) -> None:
    """``NNZType``: the counts are int64; the input is free."""
    count(c, ("data",))
    put(c, 0, "int64", "(counts)")


# ================================================================ scatter_set_nd
def scatter_set_shape(c: Call) -> None:
    """``_scatter_set_nd``'s shape rule: lhs = output; output = ``shape``; rhs,
    indices and output checked as ``scatter_nd`` does once all three are known."""
    count(c, _SCATTER)
    unify(c, [0], [0], _SCATTER)
    shape = c.p["shape"]
    if shape is not None:
        put(c, 0, tuple(int(d) for d in shape), "(its shape attribute)")
        no_negative(c, f"shape={c.attrs.get('shape')} has a size below -1", attr="shape")
    d, i, o = c.ins[1], c.ins[2], c.outs[0]
    if not (known(d) and known(i) and known(o)):
        return
    assert d is not None and i is not None and o is not None
    if len(i) <= 1:
        fail(f"{label(c, 2, 'indices')} has shape {fmt(i)}, but {name(c)} needs indices "
             f"of at least 2 dimensions (indexed axes, positions...)", input=2)
    if i[0] > len(o):
        fail(f"{label(c, 2, 'indices')} {fmt(i)} indexes {i[0]} axes, but the output "
             f"{fmt(o)} has {len(o)}", input=2)
    if i[0] > 10:
        fail(f"{label(c, 2, 'indices')} {fmt(i)} indexes {i[0]} axes, but {name(c)} "
             f"handles at most 10", input=2)
    want = tuple(i[1:]) + tuple(o[i[0]:])
    if tuple(d) != want:
        fail(f"{label(c, 1, 'rhs')} has shape {fmt(d)}, but indices {fmt(i)} into an "
             f"output {fmt(o)} need values of shape {fmt(want)}", input=1)
    unify(c, [0], [0], _SCATTER)


def scatter_set_dtype(c: Call) -> None:
    """lhs = output, both ways; output = rhs; rhs (and lhs) learn the output's dtype
    once rhs or output and the indices are known."""
    count(c, _SCATTER)
    unify(c, [0], [0], _SCATTER)
    put(c, 0, c.ins[1], "(the values written, rhs)")
    if c.outs[0] is None or c.ins[2] is None:
        return
    c.ins[1] = c.outs[0]
    c.ins[0] = c.outs[0]


# ================================================================= boolean_mask
def mask_dtype(c: Call) -> None:
    """``BooleanMaskType``: output = data, both ways; the mask is free."""
    count(c, ("data", "index"))
    unify(c, [0], [0], ("data", "index"))


RULES: dict[str, Rule] = {
    **rules(["_sparse_retain"], retain_shape, retain_dtype),
    **rules(["_contrib_getnnz"], getnnz_shape, getnnz_dtype),
    **rules(["_scatter_set_nd"], scatter_set_shape, scatter_set_dtype),
    **rules(["_contrib_boolean_mask"], no_shape, mask_dtype),
    **rules(["_set_value"], no_shape, same_type),
}
