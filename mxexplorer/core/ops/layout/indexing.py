"""Shape rules for the layout ops that gather by index and read shapes: ``take`` (which
refuses an unknown data shape), ``batch_take``, ``one_hot``, ``gather_nd``,
``scatter_nd``, ``_contrib_index_copy``, ``diag``, ``_ravel_multi_index``,
``_unravel_index``, the shape readers (``shape_array``, ``size_array``,
``_contrib_index_array``, ``_contrib_arange_like``), ``_histogram`` and the two legacy
NDArray functions without a shape rule (``_onehot_encode``, ``fill_element_0index``).
Must not import MXNet or Qt.
"""
from __future__ import annotations

from mxexplorer.core.ops.base import Call, Rule, first_input_type, fmt, known, same_type, table
from mxexplorer.core.ops.layout.dtypes import (
    _counted,
    batch_take_type,
    histogram_type,
    int64_out,
    one_hot_type,
    one_input_type,
    take_type,
)
from mxexplorer.core.ops.layout.helpers import (
    FAMILY,
    _axis,
    _ndim,
    _need_inputs,
    _put_in,
    _put_out,
    _replace_out,
    _show,
    _size,
)


# ================================================================== no shape rule
def no_shape(c: Call) -> None:
    """Legacy NDArray functions with no shape rule (``_onehot_encode``,
    ``fill_element_0index``): MXNet learns nothing from them."""


# ====================================================================== gatherers
def take_shape(c: Call) -> None:
    """``take``: the indices' shape in place of ``axis`` of the data.  The indices must be
    fully known, and MXNet refuses a data shape of unknown rank."""
    _need_inputs(c, 2)
    arr, idx = c.ins[0], c.ins[1]
    if not known(idx):
        return
    assert idx is not None
    an = _ndim(arr)
    axis = int(c.p["axis"])
    if not -an <= axis < an:
        if arr is None:
            c.fail(f"the shape of {c.input_label(0)} is not known, so axis {axis} cannot be "
                   f"checked (MXNet refuses it): give the data's shape", input=0)
        c.fail(f"axis {axis} is out of range for the {an}-d {c.input_label(0)}: use an "
               f"axis from {-an} to {an - 1}", attr="axis")
    assert arr is not None
    real = axis + an if axis < 0 else axis
    _replace_out(c, 0, arr[:real] + idx + arr[real + 1:])


def batch_take_shape(c: Call) -> None:
    """``batch_take``: the output has the indices' shape; the data (at least 2-d) and the
    output must be fully known and the data hold one row per index."""
    _need_inputs(c, 2)
    a, idx = c.ins[0], c.ins[1]
    if idx is not None and len(idx) != 0:
        _put_out(c, 0, idx)
    elif idx is not None and c.outs[0] is not None and len(c.outs[0]) != 0:
        _put_in(c, 1, c.outs[0])
    if a is not None and len(a) == 0:
        return
    if _ndim(a) < 2:
        what = "an unknown shape" if a is None else f"shape {fmt(a)}"
        c.fail(f"{c.input_label(0)} has {what}, but batch_take needs a known data shape of "
               f"at least 2 dimensions", input=0)
    o = c.outs[0]
    if o is not None and len(o) == 0:
        return
    assert a is not None
    have = _size(c, a, c.input_label(0), 0)
    if a[-1] == 0:
        c.fail(f"{c.input_label(0)} {fmt(a)} has a last dimension of size 0", input=0)
    want = _size(c, o, "the indices (the output)")
    if have // a[-1] != want:
        c.fail(f"{c.input_label(1)} has {want} entries, but {c.input_label(0)} {fmt(a)} has "
               f"{have // a[-1]} rows: one index per row", input=1)


def one_hot_shape(c: Call) -> None:
    """``one_hot``: the indices' shape with a last dimension of size ``depth``."""
    _need_inputs(c, 1)
    i = c.ins[0]
    if not known(i):
        return
    assert i is not None
    depth = int(c.p["depth"])
    if depth < 0:
        c.fail(f"depth={depth}: the depth must be 0 or more", attr="depth")
    _put_out(c, 0, i + (depth,))


def gather_nd_shape(c: Call) -> None:
    """``gather_nd``: indices ``(M, Y...)`` into data ``(X0..XM-1, Z...)`` give
    ``(Y..., Z...)``; both must be fully known."""
    _need_inputs(c, 2)
    d, i = c.ins[0], c.ins[1]
    if not known(d) or not known(i):
        return
    assert d is not None and i is not None
    if not len(i) > 1:
        c.fail(f"{c.input_label(1)} has shape {fmt(i)}, but gather_nd needs indices of at "
               f"least 2 dimensions (M, ...)", input=1)
    if not i[0] <= len(d):
        c.fail(f"{c.input_label(1)} {fmt(i)} indexes {i[0]} axes, but {c.input_label(0)} "
               f"{fmt(d)} has {len(d)}", input=1)
    if not i[0] <= 10:
        c.fail(f"{c.input_label(1)} {fmt(i)} indexes {i[0]} axes, but gather_nd handles at "
               f"most 10", input=1)
    _put_out(c, 0, i[1:] + d[i[0]:])


def scatter_nd_shape(c: Call) -> None:
    """``scatter_nd``: the output is ``shape`` (read as written: a 0 is a size 0); data,
    indices and output must then fit together as in ``gather_nd``."""
    _need_inputs(c, 2)
    shape = c.p["shape"]
    if shape is not None:
        _put_out(c, 0, tuple(int(v) for v in shape), "(its shape attribute)", attr="shape")
    d, i, o = c.ins[0], c.ins[1], c.outs[0]
    if not (known(d) and known(i) and known(o)):
        return
    assert d is not None and i is not None and o is not None
    if not len(i) > 1:
        c.fail(f"{c.input_label(1)} has shape {fmt(i)}, but scatter_nd needs indices of at "
               f"least 2 dimensions (M, ...)", input=1)
    if not i[0] <= len(o):
        c.fail(f"{c.input_label(1)} {fmt(i)} indexes {i[0]} axes, but the output "
               f"shape={fmt(o)} has {len(o)}", attr="shape")
    if not i[0] <= 10:
        c.fail(f"{c.input_label(1)} {fmt(i)} indexes {i[0]} axes, but scatter_nd handles at "
               f"most 10", input=1)
    want = i[1:] + o[i[0]:]
    if d != want:
        c.fail(f"{c.input_label(0)} has shape {fmt(d)}, but indices {fmt(i)} into "
               f"shape={fmt(o)} need data of shape {fmt(want)}", input=0)


def index_copy_shape(c: Call) -> None:
    """``_contrib_index_copy``: the output is the old tensor's shape; the new tensor has
    one row per index and the old tensor's other dimensions."""
    _need_inputs(c, 3)
    old, idx, new = c.ins
    if _ndim(idx) != 1:
        what = "an unknown shape" if idx is None else f"shape {fmt(idx)}"
        c.fail(f"{c.input_label(1)} has {what}, but index_copy needs a known 1-d index "
               f"vector", input=1)
    assert idx is not None
    if _ndim(old) != _ndim(new):
        c.fail(f"{c.input_label(0)} ({fmt(old)}) and {c.input_label(2)} ({fmt(new)}) must "
               f"have the same rank", input=2)
    if old is not None and new is not None:
        for k in range(len(old)):
            if (k == 0 and not old[0] >= new[0]) or (k > 0 and old[k] != new[k]):
                c.fail(f"{c.input_label(2)} {fmt(new)} does not fit {c.input_label(0)} "
                       f"{fmt(old)}: the same dimensions but the first, which can be no "
                       f"larger (unknown dimensions must be unknown in both)", input=2)
    if new is None or len(new) == 0:
        c.fail(f"{c.input_label(2)} has an unknown shape, but index_copy needs it", input=2)
    assert new is not None
    if idx[0] != new[0]:
        c.fail(f"{c.input_label(1)} has {idx[0] if idx[0] >= 0 else 'an unknown number of'} "
               f"entries, but {c.input_label(2)} {fmt(new)} has "
               f"{new[0] if new[0] >= 0 else 'an unknown number of'} rows", input=1)
    _put_out(c, 0, old)
    _put_in(c, 0, c.outs[0])


def diag_shape(c: Call) -> None:
    """``diag``: a 1-d input gives the ``(n+|k|, n+|k|)`` matrix; otherwise the ``k``-th
    diagonal of axes ``axis1``/``axis2`` becomes the last axis.  MXNet refuses a result
    with an unknown or empty diagonal."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    k = int(c.p["k"])
    if len(d) == 1:
        s = d[0] + abs(k)
        out = [s, s]
    else:
        nd = len(d)
        x1 = _axis(c, int(c.p["axis1"]), nd, "axis1")
        x2 = _axis(c, int(c.p["axis2"]), nd, "axis2")
        if x1 == x2:
            c.fail(f"axis1 and axis2 both name axis {x1}: use two different axes",
                   attr="axis2")
        h, w = d[x1], d[x2]
        if k > 0:
            w -= k
        elif k < 0:
            h += k
        s = min(h, w)
        if s < 0:
            s = -1
        out = [d[i] for i in range(nd) if i not in (x1, x2)] + [s]
    if any(v < 0 for v in out):
        c.fail(f"the diagonal k={k} of {c.input_label(0)} {fmt(d)} does not exist or its "
               f"size is not known", attr="k")
    _put_out(c, 0, out)


def ravel_shape(c: Call) -> None:
    """``_ravel_multi_index``: ``(len(shape), N)`` indices -> ``(N,)``, both ways."""
    _need_inputs(c, 1)
    shape = c.p["shape"]
    sn = _ndim(shape)
    if not sn > 0:
        c.fail("shape is empty: give the shape of the array the indices address",
               attr="shape")
    i, o = c.ins[0], c.outs[0]
    if i is not None and len(i) > 0:
        if len(i) != 2:
            c.fail(f"{c.input_label(0)} has shape {fmt(i)}, but ravel_multi_index needs a "
                   f"2-d input ({sn}, N)", input=0)
        if i[0] != sn:
            c.fail(f"{c.input_label(0)} has shape {fmt(i)}, but shape={_show(shape)} needs "
                   f"{sn} rows", input=0)
        _put_out(c, 0, (i[1],))
        return
    if o is not None and len(o) > 0:
        _put_in(c, 0, (sn, o[0]))


def unravel_shape(c: Call) -> None:
    """``_unravel_index``: ``(N,)`` flat indices -> ``(len(shape), N)``, both ways."""
    _need_inputs(c, 1)
    shape = c.p["shape"]
    sn = _ndim(shape)
    if not sn > 0:
        c.fail("shape is empty: give the shape of the array the indices address",
               attr="shape")
    i, o = c.ins[0], c.outs[0]
    if i is not None and len(i) > 0:
        _put_out(c, 0, (sn, i[0]))
        return
    if o is not None and len(o) > 0:
        if len(o) != 2 or o[0] != sn:
            c.fail(f"the output has shape {fmt(o)}, but shape={_show(shape)} gives ({sn}, N)")
        _put_in(c, 0, (o[1],))


# ================================================================== shape readers
def shape_array_shape(c: Call) -> None:
    """``shape_array``: ``(ndim,)``."""
    _need_inputs(c, 1)
    _put_out(c, 0, (_ndim(c.ins[0]),))


def size_array_shape(c: Call) -> None:
    """``size_array``: ``(1,)``."""
    _need_inputs(c, 1)
    _put_out(c, 0, (1,))


def index_array_shape(c: Call) -> None:
    """``_contrib_index_array``: the input's shape plus a last axis of ``len(axes)`` (or
    ndim)."""
    _need_inputs(c, 1)
    d = c.ins[0]
    if d is None:
        return
    axes = c.p["axes"]
    _put_out(c, 0, d + (len(axes) if axes is not None else len(d),))


def arange_like_shape(c: Call) -> None:
    """``_contrib_arange_like``: the input's shape, or ``(size of axis,)``."""
    _need_inputs(c, 1)
    d = c.ins[0]
    axis = c.p["axis"]
    if axis is None:
        _put_out(c, 0, d)
        return
    nd = _ndim(d)
    real = int(axis) + nd if int(axis) < 0 else int(axis)
    if not 0 <= real < nd:
        if d is None:
            c.fail(f"the shape of {c.input_label(0)} is not known, so axis {axis} cannot be "
                   f"read (MXNet refuses it)", input=0)
        c.fail(f"axis {axis} is out of range for the {nd}-d input {fmt(d)}", attr="axis")
    assert d is not None
    _put_out(c, 0, (d[real],))


def histogram_shape(c: Call) -> None:
    """``_histogram``: ``(bin_cnt,)`` counts and ``(bin_cnt+1,)`` edges, or from given
    bin edges ``(n,)``: ``(n-1,)`` and ``(n,)``."""
    has_cnt = c.p.get("bin_cnt") is not None
    has_range = str(c.attrs.get("range", "None")).strip() != "None"
    _need_inputs(c, 1 if has_cnt else 2)
    if has_cnt != has_range:
        c.fail("bin_cnt and range go together: give both or neither",
               attr="range" if has_cnt else "bin_cnt")
    if has_cnt:
        n = int(c.p["bin_cnt"])
        _put_out(c, 0, (n,), "(bin_cnt)", attr="bin_cnt")
        _put_out(c, 1, (n + 1,), "(bin_cnt + 1 edges)", attr="bin_cnt")
        return
    b = c.ins[1]
    if _ndim(b) != 1:
        what = "an unknown shape" if b is None else f"shape {fmt(b)}"
        c.fail(f"{c.input_label(1)} has {what}, but the bin edges must be a known 1-d "
               f"vector", input=1)
    assert b is not None
    count = _size(c, b, c.input_label(1), 1)
    if count < 2:
        c.fail(f"{c.input_label(1)} has {count} bin edge{'s' if count != 1 else ''}, but a "
               f"histogram needs at least 2", input=1)
    _put_out(c, 0, (b[0] - 1,))
    _put_out(c, 1, b)


RULES: dict[str, Rule] = {
    **table(FAMILY, ["take"], take_shape, take_type),
    **table(FAMILY, ["batch_take"], batch_take_shape, batch_take_type),
    **table(FAMILY, ["one_hot"], one_hot_shape, one_hot_type),
    **table(FAMILY, ["gather_nd"], gather_nd_shape, _counted(2, first_input_type)),
    **table(FAMILY, ["scatter_nd"], scatter_nd_shape, _counted(2, first_input_type)),
    **table(FAMILY, ["_contrib_index_copy"], index_copy_shape, _counted(3, first_input_type)),
    **table(FAMILY, ["diag"], diag_shape, one_input_type),
    **table(FAMILY, ["_ravel_multi_index"], ravel_shape, one_input_type),
    **table(FAMILY, ["_unravel_index"], unravel_shape, one_input_type),
    **table(FAMILY, ["shape_array"], shape_array_shape, int64_out),
    **table(FAMILY, ["size_array"], size_array_shape, int64_out),
    **table(FAMILY, ["_contrib_index_array"], index_array_shape, int64_out),
    **table(FAMILY, ["_contrib_arange_like"], arange_like_shape, one_input_type),
    **table(FAMILY, ["_histogram"], histogram_shape, histogram_type),
    **table(FAMILY, ["_onehot_encode", "fill_element_0index"], no_shape, same_type),
}
